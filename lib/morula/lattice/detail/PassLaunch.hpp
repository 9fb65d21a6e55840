/*!
  \file detail/PassLaunch.hpp
  \brief Which kernels run a lattice's passes (DiffusionOptions::kernels resolved for this lattice and
  backend) and how each is launched: team sizes, tiles, scratch, flat or 3D ranges.
*/
#ifndef MORULA_LATTICE_DETAIL_PASSLAUNCH_HPP
#define MORULA_LATTICE_DETAIL_PASSLAUNCH_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/lattice/DiffusionOptions.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/CompactedKernels.hpp>
#include <morula/lattice/detail/FusedPass.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>
#include <morula/lattice/detail/SplitPass.hpp>
#include <morula/lattice/detail/TiledFusedPass.hpp>
#include <morula/lattice/detail/TiledSplitPasses.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

//! The kernels that run the split passes for a requested choice (see DiffusionOptions::kernels).
template <int Slots, class MemorySpace, class View>
PassKernels resolve_split_kernels( PassKernels k, const LatticeShape& shape, const SlabWindow& window,
                                   const View& current, const View& next )
{
    // Compacted is the fastest on the GPU and on CPU cores with 2 and 4 slots, tiled on CPU cores with
    // 8 slots (docs/performance.md, "Lattice passes at the memory roof (issue #22)").
    constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
    if ( k == PassKernels::automatic && host && Slots == 8 && window.whole )
        return PassKernels::tiled;
    if ( k == PassKernels::automatic || k == PassKernels::compacted )
        return quads_fit( shape.nx, current, next ) ? PassKernels::compacted : PassKernels::gather;
    return k == PassKernels::tiled && !window.whole ? PassKernels::gather : k;
}

/*!
  The kernels that run the fused pass for a requested choice on a lattice with `particles_per_site`:
  compacted where asked and rows hold whole quads; tiled where asked on the whole lattice. Automatic:
  compacted below `compacted_max_density` particles per site (most destinations quiet), else tiled on
  the whole lattice and the gather on a slab, which has no tiled kernel (on an H200 a crowded slab's
  compacted fused pass took 3x the gather's time: its busy kernel is the gather at a quarter of the
  occupancy).
*/
template <class View>
PassKernels resolve_fused_kernels( PassKernels k, const LatticeShape& shape, const SlabWindow& window,
                                   const View& current, const View& next, double particles_per_site,
                                   double compacted_max_density )
{
    const bool quads = quads_fit( shape.nx, current, next );
    if ( k == PassKernels::gather )
        return k;
    if ( k == PassKernels::compacted && quads )
        return k;
    if ( k == PassKernels::automatic && quads && particles_per_site < compacted_max_density )
        return PassKernels::compacted;
    return window.whole ? PassKernels::tiled : PassKernels::gather;
}

//! Team shapes of the compacted passes: quads per work item of the split passes and queue places per work
//! item of the fused pass's marked sites (0: PassLaunch's defaults), and overflow entries a team of the
//! split passes gathers in scratch (-1: SlabDiffusion's choice by crowding). Tests shrink them to put
//! team edges and a full buffer everywhere; benchmarks measure them. The results do not depend on them.
struct TeamShapes
{
    int quads_per_thread = 0;
    int overflow_entries = -1;
    int marks_quads = 0;   //!< quads per work item of the compacted fused pass's marks (0: the default)
    int marked_chunks = 0; //!< chunks of marks per work item of its gathers (TeamMarkedQueue; 0: the default)
};

/*!
  \brief One pass as launched: the lattice it reads (`current`) and writes (`next`), what keys its
  random moves, where its overflows and displacements go. Built for each launch by SlabDiffusion; the
  kernels copy what they need at launch.
*/
template <int Slots, class ExecutionSpace>
struct PassLaunch
{
    using memory_space = typename ExecutionSpace::memory_space;
    using sites_view = Kokkos::View<site_word*, memory_space>;

    const sites_view& current;
    const sites_view& next;
    const DeviceRules<memory_space>& rules;
    const core::HashedRng& rng;
    std::uint32_t step;
    const LatticeShape& shape; //!< the whole lattice's
    const SlabWindow& window;  //!< the planes the arrays hold, and those the pass updates
    TracerDisplacements<memory_space> tracers;
    const OverflowList<memory_space>& overflow;
    TeamShapes teams = {};
    //! The compacted fused pass's marked destinations, one bit per site of the owned planes (allocated by
    //! SlabDiffusion where that pass runs).
    Kokkos::View<std::uint32_t*, memory_space> fused_marks = {};

    template <int Axis>
    void split( const ExecutionSpace& exec, PassKernels kernels ) const
    {
        if ( kernels == PassKernels::tiled )
            tiled_split<Axis>( exec );
        else if ( kernels == PassKernels::compacted )
            compacted_split<Axis>( exec );
        else
            launch( exec,
                    Axis == 0 ? "morula::lattice::split_pass_x"
                              : Axis == 1 ? "morula::lattice::split_pass_y" : "morula::lattice::split_pass_z",
                    gather_split<Axis>() );
    }

    void fused( const ExecutionSpace& exec, PassKernels kernels ) const
    {
        if ( kernels == PassKernels::tiled )
            tiled_fused( exec );
        else if ( kernels == PassKernels::compacted )
            compacted_fused( exec );
        else
            launch( exec, "morula::lattice::fused_pass", gather_fused() );
    }

    FusedPass<Slots, memory_space> gather_fused() const
    {
        const auto& s = shape;
        return { current, next, rules, rng, step,
                 s.nx, s.ny, window,
                 s.boundary[0] == LatticeBoundary::periodic,
                 s.boundary[1] == LatticeBoundary::periodic,
                 tracers, overflow };
    }

    // The marks cleared, the source quads (on a GPU 4 per work item, consecutive work items on consecutive
    // quads; on the host 1; teams.marks_quads, where given, sets it), then the marked destinations in teams
    // (TeamMarkedQueue): on a GPU 256 work items of teams.marked_chunks x 128 sites each (SlabDiffusion
    // chooses 4 or 1 by the density), 8 queue places per work item per round (16 KB of queue), on the host
    // one work item of 8 x 128 sites and 128 places. teams.quads_per_thread, where given, sets the places
    // per work item (tests: 1 forces rounds).
    void compacted_fused( const ExecutionSpace& exec ) const
    {
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        const std::size_t words = CompactedFusedMarks<Slots, memory_space>::mark_words( shape.nx, shape.ny, window );
        if ( fused_marks.extent( 0 ) < words )
            throw core::CapacityError( "LatticeDiffusion: the compacted fused pass has no room for its marks" );
        Kokkos::deep_copy( exec, Kokkos::subview( fused_marks, std::make_pair( std::size_t( 0 ), words ) ), std::uint32_t( 0 ) );
        const int quads = teams.marks_quads > 0 ? teams.marks_quads : ( host ? 1 : 4 );
        if ( quads == 1 )
            launch_marks<1>( exec );
        else if ( quads == 2 )
            launch_marks<2>( exec );
        else if ( quads == 4 )
            launch_marks<4>( exec );
        else
            throw core::InputError( core::detail::concat( "LatticeDiffusion: quads per work item of the fused pass's marks = ",
                                                           quads, ", expected 1, 2 or 4" ) );
        const int team = host ? 1 : 256;
        const int places = teams.quads_per_thread > 0 ? teams.quads_per_thread : ( host ? 128 : 8 );
        const CompactedFusedBusy<Slots, ExecutionSpace> busy_pass{ gather_fused(), fused_marks, words,
                                                                   teams.marked_chunks > 0 ? teams.marked_chunks : ( host ? 8 : 1 ), places,
                                                                   owned_sites_index() };
        core::LaunchTeam<ExecutionSpace> policy( exec, busy_pass.league( team ), team );
        policy.set_scratch_size( 0, Kokkos::PerTeam( busy_pass.scratch_bytes( team ) ) );
        Kokkos::parallel_for( "morula::lattice::compacted_fused_busy", policy, busy_pass );
    }

    template <int QuadsPerItem>
    void launch_marks( const ExecutionSpace& exec ) const
    {
        CompactedFusedMarks<Slots, memory_space, QuadsPerItem> marks_pass{ gather_fused(), fused_marks };
        CompactedFusedMarks<Slots, memory_space, QuadsPerItem>::find_extra_planes( window, marks_pass.extra_plane );
        marks_pass.quad_index = RowMajorIndex::of( shape.nx / 4, shape.ny, marks_pass.quads() );
        const std::size_t items = marks_pass.set_sizes();
        Kokkos::parallel_for( "morula::lattice::compacted_fused_marks",
                              core::LaunchRange<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, items ), marks_pass );
    }

    template <int Axis>
    SplitPass<Slots, Axis, memory_space> gather_split() const
    {
        const auto& s = shape;
        return { current, next, rules, rng, step, s.nx, s.ny, window,
                 s.boundary[Axis] == LatticeBoundary::periodic, tracers, overflow };
    }

    // GPU: teams of 256 work items, 4 quads each (4096 sites per team, 16 KB of queue); host: one work
    // item per team and 256 quads (1024 sites) per team. Overflow entries gathered per team in scratch:
    // teams.overflow_entries (SlabDiffusion chooses 512, 6.6 KB, on crowded lattices, else none).
    template <int Axis>
    void compacted_split( const ExecutionSpace& exec ) const
    {
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        const int team = host ? 1 : 256;
        const int quads = teams.quads_per_thread > 0 ? teams.quads_per_thread : ( host ? 256 : 4 );
        const unsigned int entries = team_overflow_entries();
        if ( entries > 0 )
            launch_compacted( exec, CompactedSplitPass<Slots, Axis, ExecutionSpace, true>{ gather_split<Axis>(), quads, entries,
                                                                                     owned_sites_index() },
                              team );
        else
            launch_compacted( exec, CompactedSplitPass<Slots, Axis, ExecutionSpace, false>{ gather_split<Axis>(), quads, 0,
                                                                                      owned_sites_index() },
                              team );
    }

    template <class Pass>
    void launch_compacted( const ExecutionSpace& exec, const Pass& pass, int team ) const
    {
        constexpr int axis = decltype( pass.gather )::axis;
        core::LaunchTeam<ExecutionSpace> policy( exec, pass.league( team ), team );
        policy.set_scratch_size( 0, Kokkos::PerTeam( pass.scratch_bytes( team ) ) );
        Kokkos::parallel_for( axis == 0   ? "morula::lattice::compacted_split_pass_x"
                              : axis == 1 ? "morula::lattice::compacted_split_pass_y"
                                          : "morula::lattice::compacted_split_pass_z",
                              policy, pass );
    }

    //! Coordinates of the owned planes' site indices.
    RowMajorIndex owned_sites_index() const
    {
        return RowMajorIndex::of( shape.nx, shape.ny, std::size_t( shape.nx ) * std::size_t( shape.ny ) * std::size_t( window.owned_planes() ) );
    }

    unsigned int team_overflow_entries() const
    {
        return teams.overflow_entries > 0 ? unsigned( teams.overflow_entries ) : 0u;
    }

    // Tiles: along x, row segments of up to 256 sites (one GPU thread each) on 8 rows, 16.5 KB of
    // scratch per team; along y and z, runs of 8 sites per work item (8 independent loads in flight per
    // thread, 2 apron sites per 8: 25% extra loads, mostly from L2, and hashes), 256 work items per team.
    template <int Axis>
    void tiled_split( const ExecutionSpace& exec ) const
    {
        const auto& s = shape;
        const bool periodic = s.boundary[Axis] == LatticeBoundary::periodic;
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        if constexpr ( Axis == 0 )
        {
            TiledSplitPassRow<Slots, ExecutionSpace> pass{ current, next, rules, rng,
                                                           step, s.nx, s.ny, s.nz, periodic, tracers,
                                                           overflow, host ? s.nx : std::min( s.nx, 256 ),
                                                           8 };
            const int team = host ? 1 : std::min( 256, ( pass.width + 31 ) / 32 * 32 );
            core::LaunchTeam<ExecutionSpace> policy( exec, pass.league(), team );
            policy.set_scratch_size( 0, Kokkos::PerTeam( pass.scratch_bytes() ) );
            Kokkos::parallel_for( "morula::lattice::tiled_split_pass_x", policy, pass );
        }
        else
        {
            TiledSplitPassColumn<Slots, Axis, 8, ExecutionSpace> pass{
                current, next, rules, rng, step, s.nx, s.ny, s.nz, periodic,
                tracers, overflow, 256 };
            core::LaunchTeam<ExecutionSpace> policy( exec, pass.league(), host ? 1 : 256 );
            Kokkos::parallel_for( Axis == 1 ? "morula::lattice::tiled_split_pass_y" : "morula::lattice::tiled_split_pass_z",
                                  policy, pass );
        }
    }

    // Boxes of 32 x 8 x 4 destinations (a GPU team of 256 threads: 4 destinations and 8 scratch sites
    // each; 16 KB of scratch with up to 4 slots, 24 KB with 8), on the host 62 x 8 x 4 per team of one.
    void tiled_fused( const ExecutionSpace& exec ) const
    {
        const auto& s = shape;
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        TiledFusedPass<Slots, ExecutionSpace> pass{
            current,
            next,
            rules,
            rng,
            step,
            { s.nx, s.ny, s.nz },
            { s.boundary[0] == LatticeBoundary::periodic, s.boundary[1] == LatticeBoundary::periodic,
              s.boundary[2] == LatticeBoundary::periodic },
            tracers,
            overflow,
            { std::min( s.nx, host ? 62 : 32 ), std::min( s.ny, 8 ), std::min( s.nz, 4 ) } };
        core::LaunchTeam<ExecutionSpace> policy( exec, pass.league(), host ? 1 : 256 );
        policy.set_scratch_size( 0, Kokkos::PerTeam( pass.scratch_bytes() ) );
        Kokkos::parallel_for( "morula::lattice::tiled_fused_pass", policy, pass );
    }

    // One flat index per owned site (x fastest: consecutive threads read consecutive words) when they
    // fit an int; a 3D range beyond. The flat launch is faster than a 3D range with 64x4x1 tiles on
    // large lattices, slower for the split passes on small ones
    // (docs/performance.md, "Multiparticle lattice diffusion (issue #3)").
    template <class Pass>
    void launch( const ExecutionSpace& exec, const char* label, const Pass& pass ) const
    {
        const std::size_t n = std::size_t( shape.nx ) * std::size_t( shape.ny ) * std::size_t( window.owned_planes() );
        if ( n < ( std::size_t( 1 ) << 31 ) )
            Kokkos::parallel_for( label, core::LaunchRange<ExecutionSpace, Kokkos::IndexType<int>>( exec, 0, int( n ) ),
                                  pass );
        else
            Kokkos::parallel_for( label, policy( exec ), pass );
    }

    // x fastest; tiles wide along x so that consecutive threads read consecutive words.
    core::LaunchMDRange<ExecutionSpace, Kokkos::Rank<3, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
                          Kokkos::IndexType<int>>
    policy( const ExecutionSpace& exec ) const
    {
        const auto& s = shape;
        using P = core::LaunchMDRange<ExecutionSpace, Kokkos::Rank<3, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
                                        Kokkos::IndexType<int>>;
        const bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        const int tx = host ? std::min( s.nx, 256 ) : std::min( s.nx, 64 );
        const int ty = host ? 1 : std::max( 1, std::min( s.ny, 256 / tx ) );
        return P( exec, { 0, 0, window.owned_begin }, { s.nx, s.ny, window.owned_end }, { tx, ty, 1 } );
    }
};

} // namespace morula::lattice::detail

#endif
