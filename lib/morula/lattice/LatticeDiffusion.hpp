/*!
  \file LatticeDiffusion.hpp
  \brief The multiparticle lattice diffusion model of seed 002 (Roberts et al. 2009) on any backend.

  A time step moves every particle independently along x, then y, then z (three split passes), or
  along all three in one fused pass. Each pass reads one lattice and writes the other; the random move
  of a particle is the hashed RNG of (site, slot, step, axis, seed), so a pass is a pure function of
  the old lattice and the results are bit for bit the same on Serial, OpenMP, CUDA and HIP, for any
  thread count or block size. Particles arriving at a full site go to an overflow list and are then
  placed, on the device and in a deterministic order: no particle is ever lost.

  Particle codes are species numbers (1..species), tracer ids (1..n, each code on exactly one
  particle), or both (CodeMap: species codes for the crowd, then one id per tracer); the unwrapped
  displacement of every tracer is kept for mean square displacements (the paper's MSD runs used 2
  particles per site and tracer ids up to 16383).

  An overflow rejects a move: the particle goes back to the site it came from, or, if that site has
  filled meanwhile, to the nearest site of its type with room, in a random symmetric order
  (docs/models/lattice.md says how this shapes crowded dynamics).
*/
#ifndef MORULA_LATTICE_LATTICEDIFFUSION_HPP
#define MORULA_LATTICE_LATTICEDIFFUSION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/detail/CompactedKernels.hpp>
#include <morula/lattice/detail/DiffusionKernels.hpp>
#include <morula/lattice/detail/TiledKernels.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::lattice
{

//! How a time step is split into kernels.
enum class PassScheme
{
    split, //!< three passes, x then y then z (the paper's operator split)
    fused  //!< one pass over all three axes (same statistics, a different random stream)
};

inline const char* to_string( PassScheme s ) { return s == PassScheme::split ? "split" : "fused"; }

//! Which kernels run the passes. All give bit for bit the same lattice, overflow entries and
//! displacements (the gather defines the model); they differ in speed only (docs/performance.md).
enum class PassKernels
{
    automatic, //!< the fastest measured: compacted split passes where they fit (tiled with 8 slots on a host
               //!< backend), tiled fused pass
    compacted, //!< split passes: quiet sites copied 4 at a time, busy ones compacted per team and gathered
               //!< (detail/CompactedKernels.hpp; needs nx a multiple of 4); the fused pass runs tiled
    tiled,     //!< each word loaded and each particle hashed once per pass and tile (detail/TiledKernels.hpp;
               //!< the whole lattice only)
    gather     //!< each destination recomputes its neighbours' moves (detail/DiffusionKernels.hpp)
};

inline const char* to_string( PassKernels k )
{
    switch ( k )
    {
    case PassKernels::automatic:
        return "automatic";
    case PassKernels::compacted:
        return "compacted";
    case PassKernels::tiled:
        return "tiled";
    default:
        return "gather";
    }
}

struct DiffusionOptions
{
    PassScheme scheme = PassScheme::split;
    std::uint64_t seed = 1;
    //! A choice that cannot run on this lattice falls back: compacted to the gather where nx is not a
    //! multiple of 4, tiled to the gather on a slab of a distributed lattice; split_kernels() and
    //! fused_kernels() tell what runs.
    PassKernels kernels = PassKernels::automatic;
};

//! Mean square displacement of the tracers of one species, per axis, in lattice units squared.
struct MsdSample
{
    std::size_t tracers = 0;
    std::array<double, 3> per_axis{ 0, 0, 0 };
    double total() const { return per_axis[0] + per_axis[1] + per_axis[2]; }
};

/*!
  \brief Mean square displacement of the tracers of `species` from host displacements (row = code; the
  tracers' codes and species from `codes`). Shared by the single-rank and the distributed models.
*/
template <class HostDisplacements>
MsdSample msd_of_tracers( const HostDisplacements& h, const CodeMap& codes, int species )
{
    MsdSample m;
    const std::size_t first = codes.first_tracer_code();
    for ( std::size_t t = 0; t < codes.species_of_tracer.size(); ++t )
        if ( codes.species_of_tracer[t] == species )
        {
            ++m.tracers;
            for ( int a = 0; a < 3; ++a )
                m.per_axis[a] += double( h( first + t, a ) ) * double( h( first + t, a ) );
        }
    if ( m.tracers )
        for ( auto& v : m.per_axis )
            v /= double( m.tracers );
    return m;
}

namespace detail
{
//! The offsets searched for a free site around the origin of a rejected move: the 125 sites of the
//! 5^3 cube, the origin itself first, nearest first (squared distance, then z, y, x; the placement
//! applies a random symmetry of the cube to this order). Two sites around an origin at most one plane
//! from the overflowing site stay within a slab's three ghost planes.
inline std::vector<std::array<int, 3>> overflow_search_offsets()
{
    std::vector<std::array<int, 3>> o;
    for ( int z = -2; z <= 2; ++z )
        for ( int y = -2; y <= 2; ++y )
            for ( int x = -2; x <= 2; ++x )
                o.push_back( { x, y, z } );
    std::stable_sort( o.begin(), o.end(), []( const auto& a, const auto& b ) {
        const int da = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
        const int db = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
        return da < db;
    } );
    return o;
}

//! Per-site check of the lattice invariants; counts particles and violations.
template <int Slots, class MemorySpace>
struct LatticeCheck
{
    using layout = SiteLayout<Slots>;
    Kokkos::View<const site_word*, MemorySpace> sites;
    std::uint32_t blocked_types;
    std::uint32_t max_code;

    struct value_type
    {
        unsigned long long particles;
        unsigned long long bad;
        unsigned long long room; // free slots on open sites
    };
    KOKKOS_INLINE_FUNCTION void init( value_type& v ) const { v = { 0, 0, 0 }; }
    KOKKOS_INLINE_FUNCTION void join( value_type& a, const value_type& b ) const
    {
        a.particles += b.particles;
        a.bad += b.bad;
        a.room += b.room;
    }
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i, value_type& v ) const
    {
        const site_word w = sites( i );
        const bool blocked = ( blocked_types >> layout::type( w ) ) & 1u;
        const int n = layout::count( w );
        for ( int k = n; k < Slots; ++k ) // no particle after the first empty slot
            v.bad += layout::code( w, k ) != 0;
        for ( int k = 0; k < n; ++k )
        {
            const std::uint32_t c = layout::code( w, k );
            v.bad += c > max_code;
        }
        // no particle on an obstacle; no bits outside the type and the slots (bits 24-27 with 8 slots)
        v.bad += ( blocked && n > 0 ) || ( w & ~layout::particle_bits & ~layout::empty_site( 15 ) ) != 0;
        v.particles += n;
        v.room += blocked ? 0 : Slots - n;
    }
};
/*!
  \brief Particles per code (counts(c), c in [1, max_code]; codes above are left to LatticeCheck). A
  team takes `sites_per_team` sites and counts the codes below `bins` in team scratch, then adds each
  non-zero bin to `counts` once: one global atomic per team and species instead of one per particle.
  (One atomic per particle on a single address took 10-17 us per particle on the H100, 30 s for 1.7M
  particles: the "setup" of issue #3's 8-slot benchmark that never finished.) Codes from `bins` on
  (tracer ids, one particle each) go to `counts` directly.
*/
template <int Slots, class ExecutionSpace>
struct CodeHistogram
{
    using layout = SiteLayout<Slots>;
    using memory_space = typename ExecutionSpace::memory_space;
    using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
    using bins_view = Kokkos::View<unsigned int*, typename ExecutionSpace::scratch_memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::View<const site_word*, memory_space> sites;
    Kokkos::View<unsigned long long*, memory_space> counts;
    std::uint32_t max_code;
    int bins;
    int sites_per_team;

    int league() const
    {
        return int( ( sites.extent( 0 ) + std::size_t( sites_per_team ) - 1 ) / std::size_t( sites_per_team ) );
    }

    KOKKOS_INLINE_FUNCTION void operator()( const member_type& team ) const
    {
        bins_view h( team.team_scratch( 0 ), bins );
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, bins ), [&]( const int b ) { h( b ) = 0u; } );
        team.team_barrier();
        const std::size_t begin = std::size_t( team.league_rank() ) * std::size_t( sites_per_team );
        const std::size_t n = sites.extent( 0 ) - begin < std::size_t( sites_per_team ) ? sites.extent( 0 ) - begin
                                                                                        : std::size_t( sites_per_team );
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, int( n ) ), [&]( const int k ) {
            const site_word w = sites( begin + std::size_t( k ) );
            for ( int slot = 0; slot < Slots; ++slot )
            {
                const std::uint32_t c = layout::code( w, slot );
                if ( c == 0 )
                    break;
                if ( c < std::uint32_t( bins ) )
                    Kokkos::atomic_add( &h( int( c ) ), 1u );
                else if ( c <= max_code )
                    Kokkos::atomic_add( &counts( c ), 1ull );
            }
        } );
        team.team_barrier();
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, bins ), [&]( const int b ) {
            if ( h( b ) )
                Kokkos::atomic_add( &counts( b ), (unsigned long long)h( b ) );
        } );
    }
};
} // namespace detail

/*!
  \brief Steps a lattice of `Slots`-particle sites under DiffusionRules on `ExecutionSpace`.

  Holds two lattices (the current one and the one the next pass writes), the overflow list and, for
  tracer codes, the unwrapped displacement of every tracer. No allocation happens while stepping.
*/
template <int Slots, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class LatticeDiffusion
{
  public:
    using execution_space = ExecutionSpace;
    using memory_space = typename ExecutionSpace::memory_space;
    using layout = SiteLayout<Slots>;
    using lattice_type = Lattice<Slots, memory_space>;
    using displacement_view = detail::DisplacementView<memory_space>;

    /*!
      Species codes: a particle's code c in 1..rules.species() is its species c - 1.
      \throws core::InputError if a site holds a code beyond rules.species(), a particle sits on a
      blocked site, or a site's slots have a gap
    */
    LatticeDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                      const DiffusionOptions& options = {} )
        : LatticeDiffusion( exec, lattice, rules, CodeMap::species( rules.species() ), options )
    {
    }

    /*!
      Tracer codes: code t (1..n) is one particle of species species_of_tracer[t - 1]; every code
      must appear exactly once on the lattice. Displacements are tracked.
    */
    LatticeDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                      const std::vector<int>& species_of_tracer, const DiffusionOptions& options = {} )
        : LatticeDiffusion( exec, lattice, rules, CodeMap::tracers( species_of_tracer ), options )
    {
    }

    /*!
      Any code map: species codes 1..codes.species_codes for particles without ids, then one code per
      tracer (each must appear exactly once on the lattice; their displacements are tracked).
    */
    LatticeDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                      const CodeMap& codes, const DiffusionOptions& options )
        : LatticeDiffusion( exec, lattice, rules, options, checked_codes( rules, codes ), whole_lattice( lattice.shape() ),
                            lattice.shape(), 0, true )
    {
    }

    /*!
      \brief A slab of a larger lattice, for DistributedLatticeDiffusion: `slab` holds window.planes
      planes of the lattice `whole` (same x and y extents), of which the passes update
      [window.owned_begin, window.owned_end); the caller keeps the other (ghost) planes current. Only the
      owned planes are checked, and tracer ids are not checked for uniqueness (the caller does it over all
      slabs). One pass may overflow at most `overflow_capacity` particles on this slab.
    */
    LatticeDiffusion( const ExecutionSpace& exec, const lattice_type& slab, const LatticeShape& whole,
                      const detail::SlabWindow& window, const DiffusionRules& rules, const CodeMap& codes,
                      const DiffusionOptions& options, std::size_t overflow_capacity )
        : LatticeDiffusion( exec, slab, rules, options, checked_codes( rules, codes ), window, whole, overflow_capacity,
                            false )
    {
    }

    //! Advances `steps` time steps.
    void step( const ExecutionSpace& exec, int steps = 1 )
    {
        // A placement launch after every pass. (Placement by the last team of each pass, through a
        // grid-wide completion counter, was measured: 10-30% slower per step on the H100 and on 16 CPU
        // cores than the launch, which costs at most 0.3% of a step from 33.5M sites; issue #22.)
        for ( int s = 0; s < steps; ++s )
        {
            if ( m_options.scheme == PassScheme::split )
                for ( int axis = 0; axis < 3; ++axis )
                {
                    split_pass( exec, axis );
                    place_overflow( exec );
                }
            else
            {
                fused_pass( exec );
                place_overflow( exec );
            }
            complete_step();
        }
    }

    //! @{ The building blocks of step(), public for benchmarks and for callers that interleave other
    //! operators (reactions) between passes. A pass leaves overflowed particles in the list until
    //! place_overflow() runs; step() always runs it after every pass. complete_step() advances the
    //! step number that keys the random moves (step() calls it after the last pass of a step).
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
        run_fused( exec );
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
        const detail::SlabWindow owned = m_window;
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
                run_fused( exec );
        }
        catch ( ... )
        {
            m_window = owned;
            throw;
        }
        m_window = owned;
    }
    void end_pass( int axis ) { finish_pass( axis ); }

    //! @{ Hooks of DistributedLatticeDiffusion's placement pipeline.
    /*!
      Places the overflow entries from `first` on (sorting the list first when 0) and returns the list's
      size, or, on a slab, the index of the first entry the nearest-site table could not place (which
      then needs first_free_after() over all slabs; resume with first = that index + 1). Fences.
    */
    std::size_t place_overflow_from( const ExecutionSpace& exec, std::size_t first )
    {
        run_placement( exec, first );
        std::size_t next = 0;
        Kokkos::deep_copy( exec, next, m_next_entry );
        exec.fence();
        return next;
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
        detail::FirstFreeAfter<Slots, memory_space> f{ m_current.sites(), m_shape.nx, m_shape.ny, m_window, site,
                                                       std::uint64_t( m_shape.sites() ), type, any_open,
                                                       m_rules.blocked_types, placement_descending() };
        std::uint64_t best = ~std::uint64_t( 0 );
        const std::size_t plane = std::size_t( m_shape.nx ) * std::size_t( m_shape.ny );
        Kokkos::parallel_reduce(
            "morula::lattice::first_free_after",
            Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::size_t>>(
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
        Kokkos::parallel_for( "morula::lattice::add_displacement", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, 1 ),
                              detail::AddDisplacement<memory_space>{ m_displacement, code, delta[0], delta[1], delta[2] } );
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
        detail::ReplayPlacements<Slots, memory_space> replay{ m_current.sites(), sites, codes, begin, end,
                                                              m_shape.nx, m_shape.ny, m_window, first_plane,
                                                              last_plane, conflicts };
        Kokkos::parallel_for( "morula::lattice::replay_placements", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, 1 ),
                              replay );
        unsigned long long n = 0;
        Kokkos::deep_copy( exec, n, conflicts );
        exec.fence();
        if ( n )
            throw core::CapacityError( core::detail::concat( "LatticeDiffusion: ", n,
                                                             " replayed placement(s) found their site full" ) );
    }
    //! Overflowed particles the nearest-site table could not place (a slab has no global scan).
    unsigned long long unplaced() const
    {
        unsigned long long n = 0;
        Kokkos::deep_copy( n, m_unplaced );
        return n;
    }
    const detail::SlabWindow& window() const { return m_window; }
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

    //! Mean square displacement of the tracers of `species` (tracer codes only).
    MsdSample msd( int species ) const
    {
        if ( !m_tracking )
            throw core::InputError( "LatticeDiffusion::msd: needs tracer codes (construct with species_of_tracer)" );
        auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_displacement );
        return msd_of_tracers( h, m_codes, species );
    }

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
    struct Codes
    {
        CodeMap map;
        std::vector<std::uint16_t> class_of_code; //!< the species of each code (0 unused)
    };

    static Codes checked_codes( const DiffusionRules& rules, const CodeMap& map )
    {
        using core::detail::concat;
        if ( map.species_codes < 0 || map.species_codes > rules.species() )
            throw core::InputError( concat( "LatticeDiffusion: ", map.species_codes, " species codes for ",
                                            rules.species(), " species" ) );
        if ( map.max_code() == 0 || map.max_code() > layout::max_code )
            throw core::InputError( concat( "LatticeDiffusion: ", map.species_codes, " species code(s) and ",
                                            map.species_of_tracer.size(), " tracer(s); a site with ", Slots,
                                            " slots holds codes 1..", layout::max_code ) );
        Codes c{ map, std::vector<std::uint16_t>( map.max_code() + 1 ) };
        for ( int s = 0; s < map.species_codes; ++s )
            c.class_of_code[s + 1] = std::uint16_t( s );
        for ( std::size_t t = 0; t < map.species_of_tracer.size(); ++t )
        {
            if ( map.species_of_tracer[t] < 0 || map.species_of_tracer[t] >= rules.species() )
                throw core::InputError( concat( "LatticeDiffusion: tracer ", t + 1, " has species ",
                                                map.species_of_tracer[t], "; expected 0..", rules.species() - 1 ) );
            c.class_of_code[map.first_tracer_code() + t] = std::uint16_t( map.species_of_tracer[t] );
        }
        return c;
    }

    static detail::SlabWindow whole_lattice( const LatticeShape& s )
    {
        return detail::SlabWindow::whole_axis( s.nz, s.boundary[2] == LatticeBoundary::periodic );
    }

    LatticeDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                      const DiffusionOptions& options, const Codes& codes, const detail::SlabWindow& window, const LatticeShape& whole, std::size_t overflow_capacity,
                      bool check_tracer_ids )
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
        m_split_kernels = resolve_split_kernels( options.kernels );
        m_fused_kernels = resolve_fused_kernels( options.kernels );
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
        const auto offsets = detail::overflow_search_offsets();
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
        detail::LatticeCheck<Slots, memory_space> f{ owned, m_rules.blocked_types, std::uint32_t( m_max_code ) };
        typename detail::LatticeCheck<Slots, memory_space>::value_type v;
        Kokkos::parallel_reduce( "morula::lattice::check",
                                 Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, owned.extent( 0 ) ),
                                 f, v );
        if ( counts.extent( 0 ) > 0 )
        {
            constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
            const int team = host ? 1 : 256;
            detail::CodeHistogram<Slots, ExecutionSpace> h{ owned, counts, std::uint32_t( m_max_code ),
                                                            int( std::min<std::size_t>( counts.extent( 0 ), 256 ) ),
                                                            host ? 65536 : 4096 };
            Kokkos::TeamPolicy<ExecutionSpace> policy( exec, h.league(), team );
            policy.set_scratch_size( 0, Kokkos::PerTeam( detail::CodeHistogram<Slots, ExecutionSpace>::bins_view::shmem_size( h.bins ) ) );
            Kokkos::parallel_for( "morula::lattice::code_counts", policy, h );
        }
        exec.fence();
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

    // The kernels that run here for a requested choice (see DiffusionOptions::kernels).
    PassKernels resolve_split_kernels( PassKernels k ) const
    {
        // Measured (docs/performance.md, issue #22): compacted fastest on the H100 at every capacity and on
        // CPU cores with 2 and 4 slots; tiled fastest on CPU cores with 8 slots (1.45x the gather there).
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        if ( k == PassKernels::automatic && host && Slots == 8 && m_window.whole )
            return PassKernels::tiled;
        if ( k == PassKernels::automatic || k == PassKernels::compacted )
            return detail::quads_fit( m_shape.nx, m_current.sites(), m_next.sites() ) ? PassKernels::compacted
                                                                                        : PassKernels::gather;
        return k == PassKernels::tiled && !m_window.whole ? PassKernels::gather : k;
    }
    PassKernels resolve_fused_kernels( PassKernels k ) const
    {
        return k != PassKernels::gather && m_window.whole ? PassKernels::tiled : PassKernels::gather;
    }

    void run_fused( const ExecutionSpace& exec )
    {
        if ( m_fused_kernels == PassKernels::tiled )
        {
            run_tiled_fused( exec );
            return;
        }
        const auto& s = m_shape;
        detail::FusedPass<Slots, memory_space> pass{ m_current.sites(), m_next.sites(), m_rules, m_rng, m_step,
                                                     s.nx, s.ny, m_window,
                                                     s.boundary[0] == LatticeBoundary::periodic,
                                                     s.boundary[1] == LatticeBoundary::periodic,
                                                     tracers(), m_overflow };
        launch( exec, "morula::lattice::fused_pass", pass );
    }

    template <int Axis>
    detail::SplitPass<Slots, Axis, memory_space> gather_split() const
    {
        const auto& s = m_shape;
        return { m_current.sites(), m_next.sites(), m_rules, m_rng, m_step, s.nx, s.ny, m_window,
                 s.boundary[Axis] == LatticeBoundary::periodic, tracers(), m_overflow };
    }

    template <int Axis>
    void run_split( const ExecutionSpace& exec )
    {
        if ( m_split_kernels == PassKernels::tiled )
            run_tiled_split<Axis>( exec );
        else if ( m_split_kernels == PassKernels::compacted )
            run_compacted_split<Axis>( exec );
        else
            launch( exec,
                    Axis == 0 ? "morula::lattice::split_pass_x"
                              : Axis == 1 ? "morula::lattice::split_pass_y" : "morula::lattice::split_pass_z",
                    gather_split<Axis>() );
    }

    // GPU: teams of 256 work items, 4 quads each (4096 sites per team, 16 KB of queue); host: one work
    // item per team and 256 quads (1024 sites) per team.
    template <int Axis>
    void run_compacted_split( const ExecutionSpace& exec )
    {
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        const int team = host ? 1 : 256;
        detail::CompactedSplitPass<Slots, Axis, ExecutionSpace> pass{ gather_split<Axis>(), host ? 256 : 4 };
        Kokkos::TeamPolicy<ExecutionSpace> policy( exec, pass.league( team ), team );
        policy.set_scratch_size( 0, Kokkos::PerTeam( pass.scratch_bytes( team ) ) );
        Kokkos::parallel_for( Axis == 0   ? "morula::lattice::compacted_split_pass_x"
                              : Axis == 1 ? "morula::lattice::compacted_split_pass_y"
                                          : "morula::lattice::compacted_split_pass_z",
                              policy, pass );
    }

    // Tiles: along x, row segments of up to 256 sites (one GPU thread each) on 8 rows, 16.5 KB of
    // scratch per team; along y and z, runs of 8 sites per work item (8 independent loads in flight per
    // thread, 2 apron sites per 8: 25% extra loads, mostly from L2, and hashes), 256 work items per team.
    template <int Axis>
    void run_tiled_split( const ExecutionSpace& exec )
    {
        const auto& s = m_shape;
        const bool periodic = s.boundary[Axis] == LatticeBoundary::periodic;
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        if constexpr ( Axis == 0 )
        {
            detail::TiledSplitPassRow<Slots, ExecutionSpace> pass{ m_current.sites(), m_next.sites(), m_rules, m_rng,
                                                                   m_step, s.nx, s.ny, s.nz, periodic, tracers(),
                                                                   m_overflow, host ? s.nx : std::min( s.nx, 256 ),
                                                                   8 };
            const int team = host ? 1 : std::min( 256, ( pass.width + 31 ) / 32 * 32 );
            Kokkos::TeamPolicy<ExecutionSpace> policy( exec, pass.league(), team );
            policy.set_scratch_size( 0, Kokkos::PerTeam( pass.scratch_bytes() ) );
            Kokkos::parallel_for( "morula::lattice::tiled_split_pass_x", policy, pass );
        }
        else
        {
            detail::TiledSplitPassColumn<Slots, Axis, 8, ExecutionSpace> pass{
                m_current.sites(), m_next.sites(), m_rules, m_rng, m_step, s.nx, s.ny, s.nz, periodic,
                tracers(), m_overflow, 256 };
            Kokkos::TeamPolicy<ExecutionSpace> policy( exec, pass.league(), host ? 1 : 256 );
            Kokkos::parallel_for( Axis == 1 ? "morula::lattice::tiled_split_pass_y" : "morula::lattice::tiled_split_pass_z",
                                  policy, pass );
        }
    }

    // Boxes of 32 x 8 x 4 destinations (a GPU team of 256 threads: 4 destinations and 8 scratch sites
    // each; 16 KB of scratch with up to 4 slots, 24 KB with 8), on the host 62 x 8 x 4 per team of one.
    void run_tiled_fused( const ExecutionSpace& exec )
    {
        const auto& s = m_shape;
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        detail::TiledFusedPass<Slots, ExecutionSpace> pass{
            m_current.sites(),
            m_next.sites(),
            m_rules,
            m_rng,
            m_step,
            { s.nx, s.ny, s.nz },
            { s.boundary[0] == LatticeBoundary::periodic, s.boundary[1] == LatticeBoundary::periodic,
              s.boundary[2] == LatticeBoundary::periodic },
            tracers(),
            m_overflow,
            { std::min( s.nx, host ? 62 : 32 ), std::min( s.ny, 8 ), std::min( s.nz, 4 ) } };
        Kokkos::TeamPolicy<ExecutionSpace> policy( exec, pass.league(), host ? 1 : 256 );
        policy.set_scratch_size( 0, Kokkos::PerTeam( pass.scratch_bytes() ) );
        Kokkos::parallel_for( "morula::lattice::tiled_fused_pass", policy, pass );
    }

    void run_placement( const ExecutionSpace& exec, std::size_t first )
    {
        const auto& s = m_shape;
        const detail::PlaceOverflow<Slots, memory_space> place{
            m_current.sites(), m_overflow, m_offsets, m_total_overflows, m_unplaced, m_rules.blocked_types,
            s.nx, s.ny, m_window,
            { s.boundary[0] == LatticeBoundary::periodic, s.boundary[1] == LatticeBoundary::periodic,
              s.boundary[2] == LatticeBoundary::periodic },
            tracers(), m_rng, m_step, m_last_pass, placement_descending(), m_placed, first, m_next_entry };
        Kokkos::parallel_for( "morula::lattice::place_overflow", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, 1 ),
                              place );
    }

    // One flat index per owned site (x fastest: consecutive threads read consecutive words) when they
    // fit an int; a 3D range beyond. On the H100 the flat launch measured 20% faster (split) and 32%
    // faster (fused) than a 3D range with 64x4x1 tiles at 4.2M sites, 16% slower for the split
    // passes at 0.5M sites (docs/performance.md).
    template <class Pass>
    void launch( const ExecutionSpace& exec, const char* label, const Pass& pass ) const
    {
        const std::size_t n = std::size_t( m_shape.nx ) * std::size_t( m_shape.ny ) * std::size_t( m_window.owned_planes() );
        if ( n < ( std::size_t( 1 ) << 31 ) )
            Kokkos::parallel_for( label, Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<int>>( exec, 0, int( n ) ),
                                  pass );
        else
            Kokkos::parallel_for( label, policy( exec ), pass );
    }

    // x fastest; tiles wide along x so that consecutive threads read consecutive words.
    Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
                          Kokkos::IndexType<int>>
    policy( const ExecutionSpace& exec ) const
    {
        const auto& s = m_shape;
        using P = Kokkos::MDRangePolicy<ExecutionSpace, Kokkos::Rank<3, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
                                        Kokkos::IndexType<int>>;
        const bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        const int tx = host ? std::min( s.nx, 256 ) : std::min( s.nx, 64 );
        const int ty = host ? 1 : std::max( 1, std::min( s.ny, 256 / tx ) );
        return P( exec, { 0, 0, m_window.owned_begin }, { s.nx, s.ny, m_window.owned_end }, { tx, ty, 1 } );
    }

    void swap() { std::swap( m_current, m_next ); }
    void finish_pass( int axis )
    {
        m_last_pass = std::uint32_t( axis );
        swap();
    }

    detail::TracerDisplacements<memory_space> tracers() const
    {
        return { m_displacement, m_codes.first_tracer_code() };
    }

    DiffusionOptions m_options;
    PassKernels m_split_kernels = PassKernels::gather; //!< what runs, resolved from m_options.kernels
    PassKernels m_fused_kernels = PassKernels::gather;
    DeviceRules<memory_space> m_rules;
    core::HashedRng m_rng;
    bool m_tracking;
    CodeMap m_codes;
    std::size_t m_max_code;
    LatticeShape m_shape;
    detail::SlabWindow m_window;
    lattice_type m_current, m_next;
    std::size_t m_particles = 0;
    std::uint32_t m_step = 0;
    std::uint32_t m_last_pass = 0; //!< the pass whose overflows place_overflow() places: axis, or 3 (fused)
    displacement_view m_displacement;
    detail::OverflowList<memory_space> m_overflow;
    Kokkos::View<const int* [3], memory_space> m_offsets;
    Kokkos::View<unsigned long long, memory_space> m_total_overflows, m_unplaced;
    Kokkos::View<std::uint64_t*, memory_space> m_placed; // empty unless record_placements()
    Kokkos::View<std::size_t, memory_space> m_next_entry{ "lattice_overflow_next_entry" };
    Kokkos::View<unsigned long long, memory_space> m_replay_conflicts{ "lattice_replay_conflicts" };
};

} // namespace morula::lattice

#endif
