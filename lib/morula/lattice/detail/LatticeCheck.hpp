/*!
  \file detail/LatticeCheck.hpp
  \brief The checks of a lattice on the device: its invariants per site, and the particles per code.
*/
#ifndef MORULA_LATTICE_DETAIL_LATTICECHECK_HPP
#define MORULA_LATTICE_DETAIL_LATTICECHECK_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

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
  Those serialise on a single address: the "setup" of issue #3's 8-slot benchmark that never finished
  (docs/performance.md, "Lattice passes at the memory roof (issue #22)" and
  "Design choices measured (moved from source comments, issue #46)"). Codes from `bins` on (tracer ids,
  one particle each) go to `counts` directly.
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

/*!
  \brief Checks the sites `owned` (LatticeCheck) and, when `counts` is not empty, adds their particles
  per code to it (CodeHistogram); fences `exec`. Returns the particles, the sites that break the rules
  and the free slots.
*/
template <int Slots, class ExecutionSpace, class Sites>
typename LatticeCheck<Slots, typename ExecutionSpace::memory_space>::value_type
check_sites( const ExecutionSpace& exec, const Sites& owned, std::uint32_t blocked_types, std::uint32_t max_code,
             const Kokkos::View<unsigned long long*, typename ExecutionSpace::memory_space>& counts )
{
    using memory_space = typename ExecutionSpace::memory_space;
    LatticeCheck<Slots, memory_space> f{ owned, blocked_types, max_code };
    typename LatticeCheck<Slots, memory_space>::value_type v;
    Kokkos::parallel_reduce( "morula::lattice::check",
                             core::LaunchRange<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, owned.extent( 0 ) ),
                             f, v );
    if ( counts.extent( 0 ) > 0 )
    {
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        const int team = host ? 1 : 256;
        CodeHistogram<Slots, ExecutionSpace> h{ owned, counts, max_code,
                                                int( std::min<std::size_t>( counts.extent( 0 ), 256 ) ),
                                                host ? 65536 : 4096 };
        core::LaunchTeam<ExecutionSpace> policy( exec, h.league(), team );
        policy.set_scratch_size( 0, Kokkos::PerTeam( CodeHistogram<Slots, ExecutionSpace>::bins_view::shmem_size( h.bins ) ) );
        Kokkos::parallel_for( "morula::lattice::code_counts", policy, h );
    }
    exec.fence();
    return v;
}

} // namespace morula::lattice::detail

#endif
