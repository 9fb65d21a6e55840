/*!
  \file detail/SlabDiffusion.hpp
  \brief The state and the passes of a lattice, or of a z slab of one, under DiffusionRules: what both
  driver, LatticeDiffusion, steps (on one rank, or on each slab over MPI ranks).
*/
#ifndef MORULA_LATTICE_DETAIL_SLABDIFFUSION_HPP
#define MORULA_LATTICE_DETAIL_SLABDIFFUSION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionOptions.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/CodeClasses.hpp>
#include <morula/lattice/detail/LatticeCheck.hpp>
#include <morula/lattice/detail/OverflowSweeps.hpp>
#include <morula/lattice/detail/PassLaunch.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>
#include <morula/lattice/detail/PlaceOverflow.hpp>
#include <morula/lattice/detail/SlabPlacement.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <cstdint>
#include <utility>
#include <vector>

namespace morula::lattice::detail
{

/*!
  \brief Two lattices (the current one and the one the next pass writes), the overflow list and, for
  tracer codes, the unwrapped displacement of every tracer, for the whole lattice or for a slab of it
  (the planes of a SlabWindow); the passes, the overflow placement and the hooks the distributed
  placement needs. No allocation happens while stepping.

  The drivers compose the step from these blocks (passes, each followed by place_overflow(), then
  complete_step()) and time it; this class neither times nor loops.
*/
template <int Slots, class ExecutionSpace>
class SlabDiffusion
{
  public:
    using execution_space = ExecutionSpace;
    using memory_space = typename ExecutionSpace::memory_space;
    using layout = SiteLayout<Slots>;
    using lattice_type = Lattice<Slots, memory_space>;
    using displacement_view = DisplacementView<memory_space>;

    /*!
      The whole lattice; every tracer code must appear exactly once.
      \throws core::InputError if a site holds a code beyond `codes`, a particle sits on a blocked site,
      or a site's slots have a gap
    */
    SlabDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                   const CodeMap& codes, const DiffusionOptions& options )
        : SlabDiffusion( exec, lattice, rules, options, code_classes<Slots>( rules, codes ),
                         SlabWindow::whole_axis( lattice.shape().nz,
                                                 lattice.shape().boundary[2] == LatticeBoundary::periodic ),
                         lattice.shape(), 0, true )
    {
    }

    /*!
      \brief A slab of a larger lattice, for LatticeDiffusion on slabs: `slab` holds window.planes
      planes of the lattice `whole` (same x and y extents), of which the passes update
      [window.owned_begin, window.owned_end); the caller keeps the other (ghost) planes current. Only the
      owned planes are checked, and tracer ids are not checked for uniqueness (the caller does it over all
      slabs). One pass may overflow at most `overflow_capacity` particles on this slab.
    */
    SlabDiffusion( const ExecutionSpace& exec, const lattice_type& slab, const LatticeShape& whole,
                   const SlabWindow& window, const DiffusionRules& rules, const CodeMap& codes,
                   const DiffusionOptions& options, std::size_t overflow_capacity )
        : SlabDiffusion( exec, slab, rules, options, code_classes<Slots>( rules, codes ), window, whole,
                         overflow_capacity, false )
    {
    }

    //! @{ The blocks of a step. A pass leaves overflowed particles in the list until place_overflow()
    //! runs; a step runs it after every pass. complete_step() advances the step number that keys the
    //! random moves (after the last pass of a step).
    void complete_step() { ++m_step; }

    void split_pass( const ExecutionSpace& exec, int axis )
    {
        if ( axis == 0 )
            run_split<0>( exec );
        else if ( axis == 1 )
            run_split<1>( exec );
        else
            run_split<2>( exec );
        finish_pass( axis );
    }

    void fused_pass( const ExecutionSpace& exec )
    {
        passes().fused( exec, m_fused_kernels );
        finish_pass( 3 );
    }

    void place_overflow( const ExecutionSpace& exec ) { run_placement( exec, 0 ); }
    //! @}

    /*!
      \brief Pass `axis` (0, 1, 2: split; 3: fused) over local planes [first, last) of the owned planes
      only, without completing it: a slab runs the planes that need no ghost plane while the ghost
      planes travel, then the others. end_pass( axis ) completes the pass once every owned plane ran
      (the result is that of one launch over all of them: every site's update is a function of the
      lattice before the pass, and overflow entries are placed in key order).
    */
    void pass_planes( const ExecutionSpace& exec, int axis, int first, int last )
    {
        if ( axis < 0 || axis > 3 || first < m_window.owned_begin || last > m_window.owned_end || first > last )
            throw core::InputError( core::detail::concat( "LatticeDiffusion::pass_planes: axis ", axis, ", planes [",
                                                          first, ", ", last, ") outside the owned planes [",
                                                          m_window.owned_begin, ", ", m_window.owned_end, ")" ) );
        const bool tiled = ( axis < 3 ? m_split_kernels : m_fused_kernels ) == PassKernels::tiled;
        if ( tiled && ( first != m_window.owned_begin || last != m_window.owned_end ) )
            throw core::InputError( "LatticeDiffusion::pass_planes: the tiled kernels run whole lattices only "
                                    "(choose PassKernels::compacted or gather)" );
        if ( first == last )
            return;
        // The kernels copy the window at launch: narrow it for this launch only.
        const SlabWindow owned = m_window;
        m_window.owned_begin = first;
        m_window.owned_end = last;
        try
        {
            if ( axis == 0 )
                run_split<0>( exec );
            else if ( axis == 1 )
                run_split<1>( exec );
            else if ( axis == 2 )
                run_split<2>( exec );
            else
                passes().fused( exec, m_fused_kernels );
        }
        catch ( ... )
        {
            m_window = owned;
            throw;
        }
        m_window = owned;
    }
    void end_pass( int axis ) { finish_pass( axis ); }

    //! @{ Hooks of the placement pipeline on slabs (parallel::detail::OverflowTurns).
    /*!
      Places the overflow entries from `first` on (sorting the list first when 0) and returns the list's
      size, or, on a slab, the index of the first entry the nearest-site table could not place (which
      then needs first_free_after() over all slabs; resume with first = that index + 1). Fences.
    */
    std::size_t place_overflow_from( const ExecutionSpace& exec, std::size_t first )
    {
        run_placement( exec, first );
        return next_entry( exec );
    }

    /*!
      The single-rank last resort for an overflowed particle from global site `site`, restricted to this
      lattice's owned planes: the smallest k >= 0 such that global site (site + 1 + k) mod sites (with
      placement_descending(): (site - 1 - k) mod sites) is an owned site of type `type` (with any_open:
      of any open type) with a free slot; ~0 if there is none.
    */
    std::uint64_t first_free_after( const ExecutionSpace& exec, std::uint64_t site, std::uint32_t type,
                                    bool any_open ) const
    {
        FirstFreeAfter<Slots, memory_space> f{ m_current.sites(), m_shape.nx, m_shape.ny, m_window, site,
                                               std::uint64_t( m_shape.sites() ), type, any_open,
                                               m_rules.blocked_types, placement_descending() };
        std::uint64_t best = ~std::uint64_t( 0 );
        const std::size_t plane = std::size_t( m_shape.nx ) * std::size_t( m_shape.ny );
        Kokkos::parallel_reduce(
            "morula::lattice::first_free_after",
            core::LaunchRange<ExecutionSpace, Kokkos::IndexType<std::size_t>>(
                exec, plane * std::size_t( m_window.owned_begin ), plane * std::size_t( m_window.owned_end ) ),
            f, Kokkos::Min<std::uint64_t>( best ) );
        exec.fence();
        return best;
    }

    //! Whether the placement of the last pass's overflows runs in descending key order (then the
    //! slabs of a distributed lattice take their turns from the last), and its index-order scan too.
    bool placement_descending() const { return detail::placement_descending( m_rng, m_step, m_last_pass ); }

    //! Type of global site `site`, which this lattice must hold.
    std::uint32_t site_type( std::uint64_t site ) const
    {
        const std::size_t plane = std::size_t( m_shape.nx ) * std::size_t( m_shape.ny );
        const int lz = m_window.local_of_global( int( site / plane ) );
        if ( lz < 0 )
            throw core::InputError( core::detail::concat( "LatticeDiffusion::site_type: site ", site, " is not held here" ) );
        site_word w = 0;
        Kokkos::deep_copy( w, Kokkos::subview( m_current.sites(), std::size_t( site % plane ) + plane * std::size_t( lz ) ) );
        return layout::type( w );
    }

    //! Adds `delta` to the displacement of tracer `code` (placements made by a caller); nothing for a
    //! species code.
    void add_displacement( const ExecutionSpace& exec, std::uint32_t code, const std::array<int, 3>& delta )
    {
        if ( !m_tracking || code < m_codes.first_tracer_code() )
            return;
        Kokkos::parallel_for( "morula::lattice::add_displacement", core::LaunchRange<ExecutionSpace>( exec, 0, 1 ),
                              AddDisplacement<memory_space>{ m_displacement, code, delta[0], delta[1], delta[2] } );
        exec.fence();
    }

    //! Entries waiting in the overflow list (between a pass and place_overflow()); fences.
    std::size_t pending_overflows( const ExecutionSpace& exec ) const
    {
        unsigned int n = 0;
        exec.fence();
        Kokkos::deep_copy( n, m_overflow.count );
        return std::size_t( n );
    }
    //! From now on place_overflow() records each entry's global destination (placed_sites()).
    void record_placements()
    {
        if ( m_placed.extent( 0 ) != m_overflow.keys.extent( 0 ) )
            m_placed = Kokkos::View<std::uint64_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_placed" ), m_overflow.keys.extent( 0 ) );
    }
    //! After place_overflow(): entry i of the last list (in key order) put code placed_codes()(i) on
    //! global site placed_sites()(i).
    const Kokkos::View<std::uint64_t*, memory_space>& placed_sites() const { return m_placed; }
    const Kokkos::View<std::uint32_t*, memory_space>& placed_codes() const { return m_overflow.codes; }
    //! The overflow list's keys (site << 8 | arrival rank), sorted by the first place_overflow_from().
    const Kokkos::View<std::uint64_t*, memory_space>& overflow_keys() const { return m_overflow.keys; }
    //! The move (detail::encode_move) that brought each entry's particle to its site, in key order.
    const Kokkos::View<std::uint8_t*, memory_space>& overflow_moves() const { return m_overflow.moves; }
    //! Appends codes(i) to global site sites(i), i in [begin, end), where the site is on local planes
    //! [first_plane, last_plane) of this lattice (the owned planes, and the ghost planes that are current).
    //! \throws core::CapacityError if a site is full (the replayed log disagrees with this lattice)
    void replay_placements( const ExecutionSpace& exec, const Kokkos::View<const std::uint64_t*, memory_space>& sites,
                            const Kokkos::View<const std::uint32_t*, memory_space>& codes, std::size_t begin,
                            std::size_t end, int first_plane, int last_plane )
    {
        if ( begin >= end )
            return;
        const auto& conflicts = m_replay_conflicts;
        Kokkos::deep_copy( exec, conflicts, 0ull );
        if ( m_replay_selected.extent( 0 ) < end - begin )
            m_replay_selected = Kokkos::View<std::size_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_replay_selected" ),
                std::max( end - begin, 2 * m_replay_selected.extent( 0 ) ) );
        if ( !m_replay_count.data() )
            m_replay_count = Kokkos::View<std::size_t, memory_space>( "lattice_replay_count" );
        using replay_type = ReplayPlacements<Slots, memory_space>;
        const replay_type replay = replay_functor( sites, codes, begin, end, first_plane, last_plane );
        Kokkos::parallel_scan( "morula::lattice::replay_select",
                               core::LaunchRange<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, end - begin ),
                               typename replay_type::Select{ replay } );
        Kokkos::parallel_for( "morula::lattice::replay_placements", core::LaunchRange<ExecutionSpace>( exec, 0, 1 ),
                              replay );
        unsigned long long n = 0;
        Kokkos::deep_copy( exec, n, conflicts );
        exec.fence();
        if ( n )
            throw core::CapacityError( core::detail::concat( "LatticeDiffusion: ", n,
                                                             " replayed placement(s) found their site full" ) );
    }
    /*!
      @{ Slabs placing together (parallel::detail::OverflowTurns): speculate_placement() sorts the last
      pass's list (n entries) and sweeps it to its fixed point against the lattice as it is, placing
      nothing (OverflowSweeps::speculate); true when it did, false for lists the caller places with
      place_overflow_from() instead (short lists and the sequential placement, as place_overflow() would,
      and sweeps that did not settle). absorb_placements() appends particles that come before the whole
      list in key order (another slab's placements, as replay_placements()) and marks their sites;
      settle_speculation() finds the placement from the fixed point those change (the entries they
      displace only) and commit_speculation() writes it and returns what place_overflow_from( exec, 0 )
      would: the list's size, or the first entry that needs the scan over all slabs (those before it
      placed). Fence.
    */
    bool speculate_placement( const ExecutionSpace& exec, std::size_t n )
    {
        m_speculating = false;
        if ( n == 0 || overflow_placement() == OverflowPlacement::sequential ||
             ( m_options.placement == OverflowPlacement::automatic && n <= short_list ) )
            return false;
        m_speculating = m_sweeps.speculate( exec, sequential_placement( 0 ), n, overflow_key_bits(), max_overflow_sweeps( n ) );
        if ( !m_speculating )
            m_sweeps.abandon( exec );
        m_sweeps_run = m_sweeps.sweeps();
        exec.fence();
        return m_speculating;
    }
    void absorb_placements( const ExecutionSpace& exec, const Kokkos::View<const std::uint64_t*, memory_space>& sites,
                            const Kokkos::View<const std::uint32_t*, memory_space>& codes, std::size_t n,
                            int first_plane, int last_plane )
    {
        replay_placements( exec, sites, codes, 0, n, first_plane, last_plane );
        if ( m_speculating )
        {
            m_sweeps.stamp_sites( exec, replay_functor( sites, codes, 0, n, first_plane, last_plane ) );
            exec.fence();
        }
    }
    //! Sweeps again from the fixed point after absorb_placements(); returns the entries that
    //! commit_speculation() will place (the first entry that needs the scan over all slabs, or the list's
    //! size), or ~0 when the sweeps did not settle (commit_speculation() then places with the sequential
    //! kernel). Before the commit, speculated_sites() holds the global site of each of those entries.
    std::size_t settle_speculation( const ExecutionSpace& exec )
    {
        const bool settled = m_sweeps.settle( exec );
        m_sweeps_run = m_sweeps.sweeps();
        return settled ? m_sweeps.settled_stop() : ~std::size_t( 0 );
    }
    Kokkos::View<const std::uint64_t*, memory_space> speculated_sites() const { return m_sweeps.targets_global(); }
    std::size_t commit_speculation( const ExecutionSpace& exec )
    {
        m_sweeps.commit( exec );
        m_speculating = false;
        m_sweeps_run = m_sweeps.sweeps();
        return next_entry( exec );
    }
    //! Drops a speculation (the claims it holds); the list stays sorted for place_overflow_from().
    void abandon_speculation( const ExecutionSpace& exec )
    {
        m_sweeps.abandon( exec );
        m_speculating = false;
        exec.fence();
    }
    //! @}

    //! Overflowed particles the nearest-site table could not place (a slab has no global scan).
    unsigned long long unplaced() const
    {
        unsigned long long n = 0;
        Kokkos::deep_copy( n, m_unplaced );
        return n;
    }
    const SlabWindow& window() const { return m_window; }
    //! @}

    //! @{ Restart (LatticeCheckpoint.hpp), between steps only. restore_sites() writes `planes` planes of
    //! host words into local planes [first_plane, first_plane + planes) of the current lattice;
    //! restore_state() then completes the restart: the next lattice takes the current one (the site
    //! types it keeps), the step number that keys the random moves, this lattice's share of the overflow
    //! total and of the tracer displacements (`displacement`: (code, axis) row-major, max code + 1 rows;
    //! empty: zero) are set, and the owned planes are re-checked (core::InputError as the constructor).
    void restore_sites( const ExecutionSpace& exec, const site_word* host, int first_plane, int planes )
    {
        if ( first_plane < 0 || planes < 0 || first_plane + planes > m_window.planes )
            throw core::InputError( core::detail::concat( "LatticeDiffusion::restore_sites: planes [", first_plane, ", ",
                                                          first_plane + planes, ") outside the ", m_window.planes,
                                                          " planes held" ) );
        const std::size_t plane = std::size_t( m_shape.nx ) * std::size_t( m_shape.ny );
        Kokkos::View<const site_word*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> from(
            host, plane * std::size_t( planes ) );
        const auto to = Kokkos::subview(
            m_current.sites(), Kokkos::make_pair( plane * std::size_t( first_plane ), plane * std::size_t( first_plane + planes ) ) );
        Kokkos::deep_copy( exec, to, from );
        exec.fence();
    }

    void restore_state( const ExecutionSpace& exec, std::uint32_t step, unsigned long long overflows,
                        const std::vector<int>& displacement )
    {
        const std::size_t rows = m_tracking ? m_max_code + 1 : 0;
        if ( !displacement.empty() && displacement.size() != 3 * rows )
            throw core::InputError( core::detail::concat( "LatticeDiffusion::restore_state: ", displacement.size(),
                                                          " displacement values; expected 3 x ", rows ) );
        Kokkos::deep_copy( exec, m_next.sites(), m_current.sites() );
        Kokkos::deep_copy( exec, m_total_overflows, overflows );
        Kokkos::deep_copy( exec, m_unplaced, 0ull );
        Kokkos::deep_copy( exec, m_overflow.count, 0u );
        if ( rows )
        {
            if ( displacement.empty() )
                Kokkos::deep_copy( exec, m_displacement, 0 );
            else
            {
                exec.fence();
                core::copy_from_host( displacement, rows, m_displacement );
            }
        }
        exec.fence();
        m_step = step;
        Kokkos::View<unsigned long long*, memory_space> none( "lattice_code_counts", 0 );
        m_particles = check( exec, m_current, none );
        resolve_kernels();
    }

    //! The move thresholds and site rules the kernels read (what a checkpoint records of DiffusionRules).
    const DeviceRules<memory_space>& rules() const { return m_rules; }
    //! @}

    //! The current lattice (after the last pass); for a slab, its planes including the ghosts. Its View
    //! changes with every pass.
    const lattice_type& lattice() const { return m_current; }
    //! The whole lattice's shape (for a slab, not the shape of lattice()).
    const LatticeShape& shape() const { return m_shape; }
    const DiffusionOptions& options() const { return m_options; }
    //! The kernels that run the split passes and the fused pass (DiffusionOptions::kernels resolved).
    PassKernels split_kernels() const { return m_split_kernels; }
    PassKernels fused_kernels() const { return m_fused_kernels; }
    //! How overflow lists are placed (DiffusionOptions::placement resolved: parallel on a device backend
    //! and on a host backend with at least parallel_placement_min_threads threads, else sequential).
    OverflowPlacement overflow_placement() const
    {
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        if ( m_options.placement == OverflowPlacement::automatic )
            return host && ExecutionSpace().concurrency() < parallel_placement_min_threads ? OverflowPlacement::sequential
                                                                                            : OverflowPlacement::parallel;
        return m_options.placement;
    }
    /*!
      On one core the parallel placement costs about 3 times the sequential kernel (64 x 64 x 128 sites at
      60% of 2 slots, Serial: 45-50 against 14-17 ms per step); with OpenMP on 128 x 128 x 256 sites a step
      took 459 against 589 ms on 4 threads and 185 against 565 ms on 16 (split passes; docs/performance.md).
    */
    static constexpr int parallel_placement_min_threads = 4;
    //! Rounds run by the last placement (0: the sequential kernel placed the list alone).
    int overflow_sweeps() const { return m_sweeps_run; }
    //! The parallel placement's machinery (tests choose its sort with it).
    OverflowSweeps<Slots, ExecutionSpace>& overflow_sweeps_engine() { return m_sweeps; }
    //! Team shapes of the compacted split passes (tests and benchmarks; the results do not depend on them).
    void set_team_shapes( const TeamShapes& shapes ) { m_team_shapes = shapes; }
    /*!
      The compacted split passes gather overflow entries per team (TeamOverflowBuffer, a separate kernel)
      from this share of the slots filled: 45% with 2 slots, 55% with 4, never with 8. Measured on an H200
      (256 x 256 x 512 sites, ms per step, the unbuffered kernel / the buffered one, the same call): 2 slots
      6.21 / 6.21 at 40%, 9.78-9.80 / 8.20-8.23 at 50%, 14.3-14.4 / 11.1 at 60%; 4 slots 6.61 / 7.18 at 40%,
      8.60 / 9.15-9.28 at 50%, 13.5-13.6 / 12.1 at 60%; 8 slots 8.03 / 8.38, 9.93-9.95 / 10.16-10.29, 12.78-12.81
      / 12.82-12.84. Where it loses, the buffered kernel's registers and scratch cost more than the atomic
      adds it saves (docs/performance.md, "Crowded split passes"). The thresholds lie midway between
      measured points. Host backends take the same rule (OpenMP on the same machine: 60% of 2 slots 153
      against 210 ms per step on 16 threads; with 8 slots the buffer won 5-8% on 16 threads and lost
      11-14% on 4).
    */
    static constexpr double team_buffer_min_fill = Slots == 2 ? 0.45 : ( Slots == 4 ? 0.55 : 2.0 );
    /*!
      The automatic fused pass is the compacted one below this many particles per site, else the tiled
      one on the whole lattice and the gather on a slab. The compacted pass gathers only at the marked
      sites (a particle's own site and the end of its move, about twice the density when sparse).
      Measured (ms per step, compacted / tiled, the same call; docs/performance.md, "More bytes in
      flight"): on an H200 at 256 x 256 x 512 sites, 2 / 4 / 8 slots, 0.02 per site 0.90 / 1.91, 0.79 /
      1.69, 0.78 / 1.69; 0.04: 1.61 / 2.34, 1.50 / 2.07, 1.49 / 2.07; 0.06: 2.38 / 2.60, 2.24 / 2.32,
      2.23 / 2.32; 0.08: 3.16 / 2.80, 3.04 / 2.50, 3.03 / 2.50. On its 16 host cores (OpenMP, 128 x 128
      x 256; "Destinations marked by the moves"): 0.16: 46.1 / 57.7, 44.5 / 64.5, 45.9 / 75.6; 0.3: 106.9
      / 85.5, 96.8 / 91.0, 107.2 / 106.1. The thresholds lie between a win and a tie or loss.
    */
    static constexpr double compacted_fused_max_density =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible ? 0.2 : 0.07;
    //! The step number that keys the random moves: completed steps.
    std::uint32_t steps_done() const { return m_step; }
    std::size_t particles() const { return m_particles; }
    bool tracking() const { return m_tracking; }
    const CodeMap& codes() const { return m_codes; }

    //! Particles that went through the overflow list since construction.
    unsigned long long overflows() const
    {
        unsigned long long n = 0;
        Kokkos::deep_copy( n, m_total_overflows );
        return n;
    }

    //! Unwrapped displacement of each tracer (row = code, in lattice units); empty for species codes.
    const displacement_view& displacements() const { return m_displacement; }

    //! Number of particles with each code (index = code, 0 unused). Also re-checks the invariants.
    std::vector<unsigned long long> code_counts( const ExecutionSpace& exec ) const
    {
        Kokkos::View<unsigned long long*, memory_space> counts( "lattice_code_counts", m_max_code + 1 );
        check( exec, m_current, counts );
        std::vector<unsigned long long> out( m_max_code + 1 );
        auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), counts );
        for ( std::size_t c = 0; c <= m_max_code; ++c )
            out[c] = h( c );
        return out;
    }

  private:
    SlabDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                   const DiffusionOptions& options, const CodeClasses& codes, const SlabWindow& window,
                   const LatticeShape& whole, std::size_t overflow_capacity, bool check_tracer_ids )
        : m_options( options )
        , m_rules( make_device_rules<memory_space>( rules, codes.class_of_code ) )
        , m_rng( options.seed )
        , m_tracking( codes.map.tracking() )
        , m_codes( codes.map )
        , m_max_code( codes.class_of_code.size() - 1 )
        , m_shape( whole )
        , m_window( window )
        , m_current( lattice )
        , m_next( lattice.shape(), "lattice_sites_next" )
    {
        if ( lattice.shape().nx != whole.nx || lattice.shape().ny != whole.ny || lattice.shape().nz != window.planes ||
             window.owned_begin < 0 || window.owned_end > window.planes || window.owned_begin >= window.owned_end )
            throw core::InputError( core::detail::concat( "LatticeDiffusion: a slab of ", lattice.shape().nx, " x ",
                                                          lattice.shape().ny, " x ", lattice.shape().nz,
                                                          " sites does not fit the lattice ", whole.nx, " x ", whole.ny,
                                                          " x ", whole.nz, " with planes [", window.owned_begin, ", ",
                                                          window.owned_end, ") of ", window.planes ) );
        Kokkos::View<unsigned long long*, memory_space> counts( "lattice_code_counts",
                                                                 m_tracking ? m_max_code + 1 : 0 );
        m_particles = check( exec, m_current, counts );
        resolve_kernels();
        if ( m_tracking && check_tracer_ids )
        {
            auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), counts );
            for ( std::size_t c = m_codes.first_tracer_code(); c <= m_max_code; ++c )
                if ( h( c ) != 1 )
                    throw core::InputError( core::detail::concat( "LatticeDiffusion: tracer id ", c, " appears ",
                                                                  h( c ), " times on the lattice; expected once" ) );
        }
        if ( m_tracking )
            m_displacement = displacement_view( "lattice_tracer_displacement", m_max_code + 1 );
        const std::size_t capacity = overflow_capacity ? overflow_capacity : m_particles;
        if ( capacity > std::size_t( 0xFFFFFFFFu ) )
            throw core::CapacityError( core::detail::concat( "LatticeDiffusion: an overflow list of ", capacity,
                                                             " entries (one per particle); at most 4294967295" ) );
        // Site types are static: the next lattice starts as a copy so that the types are in place.
        Kokkos::deep_copy( exec, m_next.sites(), m_current.sites() );
        m_overflow.keys = Kokkos::View<std::uint64_t*, memory_space>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_keys" ), capacity );
        m_overflow.codes = Kokkos::View<std::uint32_t*, memory_space>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_codes" ), capacity );
        m_overflow.moves = Kokkos::View<std::uint8_t*, memory_space>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_moves" ), capacity );
        m_overflow.count = Kokkos::View<unsigned int, memory_space>( "lattice_overflow_count" );
        m_total_overflows = Kokkos::View<unsigned long long, memory_space>( "lattice_total_overflows" );
        m_unplaced = Kokkos::View<unsigned long long, memory_space>( "lattice_unplaced" );
        const auto offsets = overflow_search_offsets();
        Kokkos::View<int* [3], memory_space> off( "lattice_overflow_offsets", offsets.size() );
        auto h_off = Kokkos::create_mirror_view( off );
        for ( std::size_t i = 0; i < offsets.size(); ++i )
            for ( int a = 0; a < 3; ++a )
                h_off( i, a ) = offsets[i][a];
        Kokkos::deep_copy( off, h_off );
        m_offsets = off;
        exec.fence();
    }

    // Validates the lattice; returns the number of particles. Fills `counts` when it is not empty.
    std::size_t check( const ExecutionSpace& exec, const lattice_type& lat,
                       const Kokkos::View<unsigned long long*, memory_space>& counts ) const
    {
        // the owned planes only: a slab's ghost planes belong to its neighbours
        const std::size_t plane = std::size_t( m_shape.nx ) * std::size_t( m_shape.ny );
        const auto owned = Kokkos::subview( lat.sites(), Kokkos::make_pair( plane * std::size_t( m_window.owned_begin ),
                                                                             plane * std::size_t( m_window.owned_end ) ) );
        const auto v = check_sites<Slots, ExecutionSpace>( exec, owned, m_rules.blocked_types,
                                                           std::uint32_t( m_max_code ), counts );
        if ( v.bad )
            throw core::InputError( core::detail::concat(
                "LatticeDiffusion: ", v.bad, " site(s) break the lattice rules (a code above ", m_max_code,
                ", a particle on a blocked site, or a gap between slots)" ) );
        unsigned long long unplaced = 0;
        if ( m_unplaced.data() )
            Kokkos::deep_copy( unplaced, m_unplaced );
        if ( unplaced )
            throw core::CapacityError( core::detail::concat(
                "LatticeDiffusion: ", unplaced, " overflowed particle(s) found no free slot",
                m_window.whole ? "" : " within 3 sites (a slab of a distributed lattice has no global scan)" ) );
        return std::size_t( v.particles );
    }

    //! The kernels of the split passes and the fused pass, from the options and the particles per site.
    void resolve_kernels()
    {
        m_split_kernels = resolve_split_kernels<Slots, memory_space>( m_options.kernels, m_shape, m_window,
                                                                      m_current.sites(), m_next.sites() );
        const double density = double( m_particles ) / double( std::max<std::size_t>( 1, m_current.sites().extent( 0 ) ) );
        m_fused_kernels = resolve_fused_kernels( m_options.kernels, m_shape, m_window, m_current.sites(),
                                                 m_next.sites(), density, compacted_fused_max_density );
        // One bit per site of the owned planes, where the compacted fused pass can run: allocated here, not
        // while stepping.
        const std::size_t words = CompactedFusedMarks<Slots, memory_space>::mark_words( m_shape.nx, m_shape.ny, m_window );
        if ( m_fused_kernels == PassKernels::compacted && m_fused_marks.extent( 0 ) < words )
            m_fused_marks = Kokkos::View<std::uint32_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_fused_marks" ), words );
    }

    /*!
      Chunks of 128 x 256 sites per GPU team of the compacted fused pass's gathers (TeamMarkedQueue): 4 on
      sparse lattices, where one chunk leaves most of a team's threads without a marked site, else 1 (more
      chunks mean fewer teams). Measured on an H200 (ms per step, 1 / 4 chunks; 256 x 256 x 512, 2 slots,
      unless said): 512^3 at 0.0015 particles per site 0.667 / 0.576; 0.005: 0.304 / 0.289; 0.01: 0.448 /
      0.463 (3 chunks 0.569); 0.02: 0.834 / 0.902; 0.04: 1.607 / 1.671 (16 chunks 4.23: 64 teams on 132
      SMs). The threshold lies between the win at 0.005 and the loss at 0.01.
    */
    static int marked_chunks_on_a_gpu( double particles_per_site ) { return particles_per_site < 0.0075 ? 4 : 1; }

    //! The pass over the owned planes of m_window, reading the current lattice and writing the next.
    PassLaunch<Slots, ExecutionSpace> passes() const
    {
        TeamShapes teams = m_team_shapes;
        if ( teams.overflow_entries < 0 )
            teams.overflow_entries = double( m_particles ) >= team_buffer_min_fill * double( m_current.sites().extent( 0 ) ) * Slots
                                         ? 512
                                         : 0;
        if ( teams.marked_chunks <= 0 && !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible )
            teams.marked_chunks = marked_chunks_on_a_gpu(
                double( m_particles ) / double( std::max<std::size_t>( 1, m_current.sites().extent( 0 ) ) ) );
        return { m_current.sites(), m_next.sites(), m_rules, m_rng, m_step, m_shape, m_window, tracers(), m_overflow, teams,
                 m_fused_marks };
    }

    template <int Axis>
    void run_split( const ExecutionSpace& exec )
    {
        passes().template split<Axis>( exec, m_split_kernels );
    }

    //! The sequential kernel for the last pass's list from entry `first` (the parallel placement's
    //! definition and its fallback).
    PlaceOverflow<Slots, memory_space> sequential_placement( std::size_t first ) const
    {
        const auto& s = m_shape;
        return PlaceOverflow<Slots, memory_space>{
            m_current.sites(), m_overflow, m_offsets, m_total_overflows, m_unplaced, m_rules.blocked_types,
            s.nx, s.ny, m_window,
            { s.boundary[0] == LatticeBoundary::periodic, s.boundary[1] == LatticeBoundary::periodic,
              s.boundary[2] == LatticeBoundary::periodic },
            tracers(), m_rng, m_step, m_last_pass, placement_descending(), m_placed, first, m_next_entry };
    }

    //! Bits of the overflow keys (site << 8 | arrival rank) of this lattice's shape.
    int overflow_key_bits() const
    {
        int key_bits = 8;
        for ( std::uint64_t last = std::uint64_t( m_shape.sites() ) - 1; last; last >>= 1 )
            ++key_bits;
        return key_bits;
    }

    /*!
      Sweeps before the sequential kernel does the rest of a list of n entries: a sweep costs three
      launches and a read; the sequential kernel places one entry in about the time of a launch. Past
      n / 8 sweeps (never seen; the bound is for adversarial lists) it does the rest.
    */
    int max_overflow_sweeps( std::size_t n ) const
    {
        return m_options.placement == OverflowPlacement::automatic
                   ? int( std::min<std::size_t>( std::max<std::size_t>( 64, n / 8 ), 1u << 30 ) )
                   : std::numeric_limits<int>::max();
    }

    void run_placement( const ExecutionSpace& exec, std::size_t first )
    {
        const PlaceOverflow<Slots, memory_space> place = sequential_placement( first );
        const bool automatic = m_options.placement == OverflowPlacement::automatic;
        // A sparse lattice keeps the sequential kernel's single launch without reading the list's size
        // on the host (a device-to-host read per pass is a measurable share of a sparse GPU pass): after
        // quiet_passes passes in a row with short lists, the size is read once every probe_period passes.
        if ( overflow_placement() == OverflowPlacement::sequential ||
             ( automatic && first == 0 && m_quiet_passes >= quiet_passes && ++m_unread_passes % probe_period != 0 ) )
        {
            m_sweeps_run = 0;
            Kokkos::parallel_for( "morula::lattice::place_overflow", core::LaunchRange<ExecutionSpace>( exec, 0, 1 ),
                                  place );
            return;
        }
        const std::size_t n = pending_overflows( exec );
        if ( automatic )
            m_quiet_passes = n <= short_list ? m_quiet_passes + 1 : 0;
        if ( n <= first || ( automatic && n <= short_list ) )
        {
            m_sweeps_run = 0;
            Kokkos::parallel_for( "morula::lattice::place_overflow", core::LaunchRange<ExecutionSpace>( exec, 0, 1 ),
                                  place );
            return;
        }
        m_sweeps.place( exec, place, first, n, overflow_key_bits(), max_overflow_sweeps( n ) );
        m_sweeps_run = m_sweeps.sweeps();
    }

    ReplayPlacements<Slots, memory_space> replay_functor( const Kokkos::View<const std::uint64_t*, memory_space>& sites,
                                                          const Kokkos::View<const std::uint32_t*, memory_space>& codes,
                                                          std::size_t begin, std::size_t end, int first_plane,
                                                          int last_plane ) const
    {
        return { m_current.sites(), sites, codes, begin, end, m_shape.nx, m_shape.ny, m_window,
                 first_plane, last_plane, m_replay_conflicts, m_replay_selected, m_replay_count };
    }

    //! Where the last placement stopped (PlaceOverflow::next_entry); fences.
    std::size_t next_entry( const ExecutionSpace& exec ) const
    {
        std::size_t next = 0;
        Kokkos::deep_copy( exec, next, m_next_entry );
        exec.fence();
        return next;
    }

    void swap() { std::swap( m_current, m_next ); }
    void finish_pass( int axis )
    {
        m_last_pass = std::uint32_t( axis );
        swap();
    }

    TracerDisplacements<memory_space> tracers() const { return { m_displacement, m_codes.first_tracer_code() }; }

    DiffusionOptions m_options;
    PassKernels m_split_kernels = PassKernels::gather; //!< what runs, resolved from m_options.kernels
    PassKernels m_fused_kernels = PassKernels::gather;
    DeviceRules<memory_space> m_rules;
    core::HashedRng m_rng;
    bool m_tracking;
    CodeMap m_codes;
    std::size_t m_max_code;
    LatticeShape m_shape;
    SlabWindow m_window;
    lattice_type m_current, m_next;
    std::size_t m_particles = 0;
    std::uint32_t m_step = 0;
    std::uint32_t m_last_pass = 0; //!< the pass whose overflows place_overflow() places: axis, or 3 (fused)
    displacement_view m_displacement;
    OverflowList<memory_space> m_overflow;
    Kokkos::View<const int* [3], memory_space> m_offsets;
    Kokkos::View<unsigned long long, memory_space> m_total_overflows, m_unplaced;
    Kokkos::View<std::uint64_t*, memory_space> m_placed; // empty unless record_placements()
    Kokkos::View<std::size_t, memory_space> m_next_entry{ "lattice_overflow_next_entry" };
    Kokkos::View<unsigned long long, memory_space> m_replay_conflicts{ "lattice_replay_conflicts" };
    Kokkos::View<std::uint32_t*, memory_space> m_fused_marks; //!< the compacted fused pass's marked destinations
    Kokkos::View<std::size_t*, memory_space> m_replay_selected; //!< grows to the longest log replayed
    Kokkos::View<std::size_t, memory_space> m_replay_count;
    OverflowSweeps<Slots, ExecutionSpace> m_sweeps;
    int m_sweeps_run = 0;
    bool m_speculating = false; //!< between speculate_placement() and commit_speculation()
    TeamShapes m_team_shapes;
    // DiffusionOptions::placement automatic: lists this short are placed by the sequential kernel; after
    // quiet_passes such passes in a row the list's size is read only every probe_period passes.
    static constexpr std::size_t short_list = 256;
    static constexpr int quiet_passes = 8;
    static constexpr unsigned probe_period = 64;
    int m_quiet_passes = 0;
    unsigned m_unread_passes = 0;
};

} // namespace morula::lattice::detail

#endif
