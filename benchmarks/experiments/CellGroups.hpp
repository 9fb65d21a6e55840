// Groups of K consecutive particles of a cell, one group per thread: what ChordSweep.hpp's grouped sweep
// walks. They came from the cluster sweep experiment (issue #25, 27 Nov 2026: K particles of a cell per
// thread, the stencil walked once per group, each candidate tested against all K), which
// grid::NeighborReduction superseded in the library (docs/performance.md, issue #25's third pass); the
// sweep itself was deleted (issue #46), its groups kept for the chord experiment.
#ifndef MORULA_BENCHMARKS_CELLGROUPS_HPP
#define MORULA_BENCHMARKS_CELLGROUPS_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>

namespace morula::bench
{
// The neighbour query's stencil walk, internal to the library (experiments and checks look inside it).
using QueryAccess = morula::grid::detail::QueryAccess;

//! Per-sweep work arrays of a grouped sweep (grown, never shrunk).
template <class MemorySpace>
struct CellGroupWork
{
    Kokkos::View<int*, MemorySpace> group_start; // per cell, then the total
    Kokkos::View<int*, MemorySpace> group_cell;  // per group
};

/*!
  Group g of a cell-group mapping (build_cell_groups): its first slot, its members (K, or fewer in the
  cell's last group), its cell's coordinates, the members' positions (padded with the first member's)
  and the smallest distances of any member to the cell's lower and upper faces.
*/
template <int K, class Scalar>
struct CellGroup
{
    int first, members, ix, iy, iz;
    Scalar x[K][3];
    Scalar below[3], above[3];

    template <class Query, class IndexView>
    KOKKOS_INLINE_FUNCTION CellGroup( const Query& q, const IndexView& group_start, const IndexView& group_cell,
                                      int g )
    {
        const int cell = group_cell( g );
        first = q.cell_offsets()( cell ) + K * ( g - group_start( cell ) );
        const int end = q.cell_offsets()( cell + 1 );
        members = end - first < K ? end - first : K;
        const auto& geom = q.geometry();
        ix = cell % geom.ncell[0];
        iy = ( cell / geom.ncell[0] ) % geom.ncell[1];
        iz = cell / ( geom.ncell[0] * geom.ncell[1] );
        for ( int d = 0; d < 3; ++d )
            below[d] = above[d] = Scalar( 1e30 );
        for ( int k = 0; k < K; ++k )
        {
            const int s = first + ( k < members ? k : 0 );
            Scalar lo, hi;
            for ( int d = 0; d < 3; ++d )
            {
                x[k][d] = q.position( s, d );
                QueryAccess::face_distances( q, d, d == 0 ? ix : ( d == 1 ? iy : iz ), x[k][d], lo, hi );
                below[d] = lo < below[d] ? lo : below[d];
                above[d] = hi < above[d] ? hi : above[d];
            }
        }
    }

    //! Particle i alone (K = 1), with its own cell's coordinates.
    template <class Query>
    KOKKOS_INLINE_FUNCTION CellGroup( const Query& q, int i ) : first( i ), members( 1 )
    {
        static_assert( K == 1, "CellGroup: one particle is a group of one" );
        const auto& geom = q.geometry();
        for ( int d = 0; d < 3; ++d )
            x[0][d] = q.position( i, d );
        ix = geom.cell_coordinate( 0, x[0][0] );
        iy = geom.cell_coordinate( 1, x[0][1] );
        iz = geom.cell_coordinate( 2, x[0][2] );
        QueryAccess::face_distances( q, 0, ix, x[0][0], below[0], above[0] );
        QueryAccess::face_distances( q, 1, iy, x[0][1], below[1], above[1] );
        QueryAccess::face_distances( q, 2, iz, x[0][2], below[2], above[2] );
    }
};

/*!
  Maps threads to (cell, group of K consecutive particles of the cell): work.group_start(c) is cell c's
  first group (a scan of ceil(m_c / K) over the cells), work.group_cell(g) group g's cell. Returns the
  number of groups.
*/
template <int K, class ExecutionSpace, class Query>
int build_cell_groups( const ExecutionSpace& exec, const Query& q, CellGroupWork<typename Query::memory_space>& work )
{
    const int ncells = q.geometry().num_cells();
    if ( work.group_start.extent( 0 ) < std::size_t( ncells ) + 1 )
        work.group_start = Kokkos::View<int*, typename Query::memory_space>( "group_start", ncells + 1 );
    const auto offsets = q.cell_offsets();
    const auto start = work.group_start;
    int groups = 0;
    Kokkos::parallel_scan(
        "morula::bench::cell_groups", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells + 1 ),
        KOKKOS_LAMBDA( const int c, int& update, const bool final_pass ) {
            const int g = c < ncells ? ( offsets( c + 1 ) - offsets( c ) + K - 1 ) / K : 0;
            if ( final_pass )
                start( c ) = update;
            update += g;
        },
        groups );
    if ( work.group_cell.extent( 0 ) < std::size_t( groups ) )
        work.group_cell =
            Kokkos::View<int*, typename Query::memory_space>( "group_cell", groups + groups / 8 );
    const auto cell_of = work.group_cell;
    Kokkos::parallel_for(
        "morula::bench::cell_group_cells", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int c ) {
            for ( int g = start( c ); g < start( c + 1 ); ++g )
                cell_of( g ) = c;
        } );
    return groups;
}

} // namespace morula::bench

#endif
