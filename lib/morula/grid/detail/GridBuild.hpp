/*!
  \file GridBuild.hpp
  \brief The passes of UniformGrid::build: count, scan, scatter, and the in-cell ordering that makes
  the counting sort stable.

  Free functions (not private members) because nvcc does not allow extended lambdas inside private
  member functions.
*/
#ifndef MORULA_GRID_DETAIL_GRIDBUILD_HPP
#define MORULA_GRID_DETAIL_GRIDBUILD_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/grid/GridGeometry.hpp>
#include <morula/grid/detail/Morton.hpp>
#include <morula/grid/detail/SegmentSort.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>

#include <climits>
#include <cstdint>
#include <string>

namespace morula::grid::detail
{

//! Slots of the small status array a build reads back once.
enum BuildStatus : int
{
    first_bad_particle = 0, //!< smallest index of a non-finite or out-of-closed-box particle
    num_big_cells = 1,      //!< cells sorted by a team
    num_huge_cells = 2,     //!< cells sorted by a device-wide sort
    periodic_outside = 3,   //!< 1 if some position lies outside the box along a periodic axis
    status_size = 4
};

//! Reallocates v (without initialising) when it holds fewer than n entries; 1/8 headroom.
template <class View>
void ensure_extent( View& v, std::size_t n, const char* label )
{
    if ( v.extent( 0 ) < n )
        v = View( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ),
                  n + n / 8 );
}

//! Row-major cell index -> rank of the cell's Morton code (the cell key under Morton ordering).
template <class ExecutionSpace, class MemorySpace, class Scalar>
Kokkos::View<int*, MemorySpace> morton_cell_keys( const ExecutionSpace& exec,
                                                  const GridGeometry<Scalar>& g )
{
    const int ncells = g.num_cells();
    Kokkos::View<std::uint64_t*, MemorySpace> codes(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::grid::morton_codes" ), ncells );
    Kokkos::parallel_for(
        "morula::grid::morton_codes", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int lin ) {
            const int ix = lin % g.ncell[0];
            const int iy = ( lin / g.ncell[0] ) % g.ncell[1];
            const int iz = lin / ( g.ncell[0] * g.ncell[1] );
            // Code in the high word, cell in the low word: sorting orders cells by code.
            codes( lin ) = ( std::uint64_t( morton_code( ix, iy, iz ) ) << 32 ) |
                           std::uint64_t( lin );
        } );
    compat::sort( exec, codes );
    Kokkos::View<int*, MemorySpace> keys(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::grid::cell_keys" ), ncells );
    Kokkos::parallel_for(
        "morula::grid::morton_rank", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int rank ) {
            keys( static_cast<int>( codes( rank ) & 0xffffffffu ) ) = rank;
        } );
    return keys;
}

template <class ExecutionSpace, class StatusView>
void reset_status( const ExecutionSpace& exec, const StatusView& status )
{
    Kokkos::parallel_for(
        "morula::grid::reset_status", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, 1 ),
        KOKKOS_LAMBDA( const int ) {
            status( first_bad_particle ) = INT_MAX;
            status( num_big_cells ) = 0;
            status( num_huge_cells ) = 0;
            status( periodic_outside ) = 0;
        } );
}

/*!
  Pass 1: each particle's cell key and its arrival rank in that cell (an atomic increment of the
  cell's count, kept in `counts`, which must be zero), and the input checks, fused into one read of
  the positions.
*/
template <class ExecutionSpace, class Scalar, class PositionView, class IndexView>
void count_cells( const ExecutionSpace& exec, const GridGeometry<Scalar>& g,
                  const PositionView& x, int n, const IndexView& cell_key,
                  const IndexView& counts, const IndexView& cell_of, const IndexView& rank,
                  const IndexView& status )
{
    const bool morton = cell_key.extent( 0 ) > 0;
    Kokkos::parallel_for(
        "morula::grid::count_cells", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            const Scalar p[3] = { x( i, 0 ), x( i, 1 ), x( i, 2 ) };
            bool bad = false;
            bool outside_periodic = false;
            for ( int d = 0; d < 3; ++d )
            {
                const bool in_closed = p[d] >= g.box.lo[d] && p[d] <= g.box.hi[d];
                bad = bad || !compat::isfinite( p[d] ) ||
                      ( g.box.boundary[d] == Boundary::closed && !in_closed );
                outside_periodic =
                    outside_periodic || ( g.is_periodic( d ) && !g.inside( d, p[d] ) );
            }
            if ( bad )
                Kokkos::atomic_fetch_min( &status( first_bad_particle ), i );
            if ( outside_periodic )
                Kokkos::atomic_fetch_max( &status( periodic_outside ), 1 );
            int key = g.linear_index( g.cell_coordinate( 0, p[0] ), g.cell_coordinate( 1, p[1] ),
                                      g.cell_coordinate( 2, p[2] ) );
            if ( morton )
                key = cell_key( key );
            cell_of( i ) = key;
            rank( i ) = Kokkos::atomic_fetch_add( &counts( key ), 1 );
        } );
}

//! Pass 2: exclusive scan of v[0, m) in place; the caller's extra last entry (zero) receives the sum.
template <class ExecutionSpace, class IndexView>
void exclusive_scan_in_place( const ExecutionSpace& exec, const IndexView& v, int m )
{
    Kokkos::parallel_scan(
        "morula::grid::scan_cells", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, m ),
        KOKKOS_LAMBDA( const int c, int& update, const bool final_pass ) {
            const int count = v( c ); // read before the final pass overwrites it
            if ( final_pass )
                v( c ) = update;
            update += count;
        } );
}

//! Pass 3: every particle to its slot.
template <class ExecutionSpace, class IndexView>
void scatter_to_slots( const ExecutionSpace& exec, int n, const IndexView& offsets,
                       const IndexView& cell_of, const IndexView& rank, const IndexView& perm )
{
    Kokkos::parallel_for(
        "morula::grid::scatter", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) { perm( offsets( cell_of( i ) ) + rank( i ) ) = i; } );
}

/*!
  Pass 4 (stable builds on parallel backends): orders each short cell by particle index in place and
  lists the longer ones for sort_big_cells() and the device-wide sort.
*/
template <class ExecutionSpace, class IndexView>
void sort_short_cells( const ExecutionSpace& exec, int ncells, const IndexView& offsets,
                       const IndexView& perm, const IndexView& big, const IndexView& huge,
                       const IndexView& status )
{
    Kokkos::parallel_for(
        "morula::grid::sort_short_cells", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int c ) {
            const int begin = offsets( c );
            const int end = offsets( c + 1 );
            const int m = end - begin;
            if ( m <= 1 )
                return;
            if ( m <= thread_sort_max )
                insertion_sort( perm, begin, end );
            else if ( m <= team_sort_max )
                big( Kokkos::atomic_fetch_add( &status( num_big_cells ), 1 ) ) = c;
            else
                huge( Kokkos::atomic_fetch_add( &status( num_huge_cells ), 1 ) ) = c;
        } );
}

//! Orders the cells listed in big[0, nbig) by a team each, in scratch memory.
template <class ExecutionSpace, class IndexView>
void sort_big_cells( const ExecutionSpace& exec, int nbig, const IndexView& offsets,
                     const IndexView& perm, const IndexView& big )
{
    using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
    using member_type = typename policy_type::member_type;
    using scratch_view = Kokkos::View<int*, typename ExecutionSpace::scratch_memory_space,
                                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    policy_type policy( exec, nbig, Kokkos::AUTO );
    policy.set_scratch_size( 0, Kokkos::PerTeam( scratch_view::shmem_size( team_sort_max ) ) );
    Kokkos::parallel_for(
        "morula::grid::sort_big_cells", policy, KOKKOS_LAMBDA( const member_type& team ) {
            const int c = big( team.league_rank() );
            const int begin = offsets( c );
            const int m = offsets( c + 1 ) - begin;
            const int p = next_pow2( m );
            scratch_view s( team.team_scratch( 0 ), p );
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, p ), [&]( const int k ) {
                s( k ) = k < m ? perm( begin + k ) : INT_MAX;
            } );
            team.team_barrier();
            team_bitonic_sort( team, s, p );
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, m ),
                                  [&]( const int k ) { perm( begin + k ) = s( k ); } );
        } );
}

//! Orders the rare cells longer than team_sort_max with one device-wide sort each.
template <class ExecutionSpace, class IndexView>
void sort_huge_cells( const ExecutionSpace& exec, int nhuge, const IndexView& offsets,
                      const IndexView& perm, const IndexView& huge )
{
    auto huge_host = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview( huge, std::make_pair( 0, nhuge ) ) );
    auto offsets_host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), offsets );
    for ( int h = 0; h < nhuge; ++h )
    {
        const int c = huge_host( h );
        compat::sort( exec, Kokkos::subview( perm, std::make_pair( offsets_host( c ),
                                                                offsets_host( c + 1 ) ) ) );
    }
}

} // namespace morula::grid::detail

#endif
