// An experiment (issue #25, 27 Nov 2026): the neighbour-count sweep with K particles of one cell per
// thread. The thread walks the stencil once for its K particles (rows and side cells pruned by the
// group's smallest face distances), loads each candidate once and tests it against all K, so a
// candidate's loads and the loop's overhead are paid once per K pair tests instead of once per test.
// Threads map to (cell, K-group) through a scan of ceil(m_c / K) over the cells, timed with the sweep.
// Row-major cells and queries without the per-pair minimum image only; `grid_vs_cabana
// --cluster-sweeps K,...` times it and checks its counts against for_each_particle's.
#ifndef MORULA_BENCHMARKS_CLUSTERSWEEP_HPP
#define MORULA_BENCHMARKS_CLUSTERSWEEP_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>

namespace morula::bench
{
// The neighbour query's stencil walk, internal to the library (experiments and checks look inside it).
using QueryAccess = morula::grid::detail::QueryAccess;

//! Per-sweep work arrays of the cluster sweep (grown, never shrunk).
template <class MemorySpace>
struct ClusterSweepWork
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

template <int K, class Query, class CountView>
struct ClusterCount
{
    using Scalar = typename Query::scalar_type;
    Query q;
    Kokkos::View<int*, typename Query::memory_space> group_start;
    Kokkos::View<int*, typename Query::memory_space> group_cell;
    CountView count;
    Scalar r2max;

    template <bool Shifted>
    KOKKOS_INLINE_FUNCTION void scan( int begin, int end, const int ( &self )[K], const Scalar ( &x )[K][3],
                                      int members, Scalar sx, Scalar sy, Scalar sz, int ( &c )[K] ) const
    {
        for ( int j = begin; j < end; ++j )
        {
            const Scalar xj = q.position( j, 0 );
            const Scalar yj = q.position( j, 1 );
            const Scalar zj = q.position( j, 2 );
            for ( int k = 0; k < K; ++k )
            {
                Scalar dx = x[k][0] - xj;
                Scalar dy = x[k][1] - yj;
                Scalar dz = x[k][2] - zj;
                if constexpr ( Shifted )
                {
                    dx -= sx;
                    dy -= sy;
                    dz -= sz;
                }
                const Scalar r2 = grid::detail::distance_squared( dx, dy, dz );
                c[k] += ( k < members && r2 <= r2max && j != self[k] ) ? 1 : 0;
            }
        }
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int g ) const
    {
        const CellGroup<K, Scalar> group( q, group_start, group_cell, g );
        const auto& geom = q.geometry();
        const int nx = geom.ncell[0];
        const int ny = geom.ncell[1];
        const int ix = group.ix, iy = group.iy, iz = group.iz;
        const int members = group.members;
        const auto& x = group.x;
        const auto& below = group.below;
        const auto& above = group.above;
        int self[K];
        int c[K];
        for ( int k = 0; k < K; ++k )
        {
            self[k] = group.first + ( k < members ? k : 0 );
            c[k] = 0;
        }
        const bool periodic_x = geom.is_periodic( 0 );
        const Scalar lx = geom.box.length( 0 );
        const Scalar zero = 0;
        for ( int oz = -1; oz <= 1; ++oz )
        {
            int cz;
            Scalar sz;
            if ( !QueryAccess::neighbor_cell( q, 2, iz, oz, cz, sz ) )
                continue;
            const Scalar dz = oz < 0 ? below[2] : ( oz > 0 ? above[2] : zero );
            for ( int oy = -1; oy <= 1; ++oy )
            {
                int cy;
                Scalar sy;
                if ( !QueryAccess::neighbor_cell( q, 1, iy, oy, cy, sy ) )
                    continue;
                const Scalar dy = oy < 0 ? below[1] : ( oy > 0 ? above[1] : zero );
                const Scalar row_d2 = dy * dy + dz * dz;
                if ( row_d2 > r2max )
                    continue;
                const int row = nx * ( cy + ny * cz );
                const bool left = below[0] * below[0] + row_d2 <= r2max;
                const bool right = above[0] * above[0] + row_d2 <= r2max;
                const int lo = left && ix > 0 ? ix - 1 : ix;
                const int hi = right && ix + 1 < nx ? ix + 1 : ix;
                const auto& off = q.cell_offsets();
                const bool shifted_row = sy != zero || sz != zero;
                if ( periodic_x && nx >= 3 && left && ix == 0 )
                    scan<true>( off( row + nx - 1 ), off( row + nx ), self, x, members, -lx, sy, sz, c );
                if ( shifted_row )
                    scan<true>( off( row + lo ), off( row + hi + 1 ), self, x, members, zero, sy, sz, c );
                else
                    scan<false>( off( row + lo ), off( row + hi + 1 ), self, x, members, zero, sy, sz, c );
                if ( periodic_x && nx >= 3 && right && ix == nx - 1 )
                    scan<true>( off( row ), off( row + 1 ), self, x, members, lx, sy, sz, c );
            }
        }
        for ( int k = 0; k < members; ++k )
            count( group.first + k ) = c[k];
    }
};

/*!
  Maps threads to (cell, group of K consecutive particles of the cell): work.group_start(c) is cell c's
  first group (a scan of ceil(m_c / K) over the cells), work.group_cell(g) group g's cell. Returns the
  number of groups.
*/
template <int K, class ExecutionSpace, class Query>
int build_cell_groups( const ExecutionSpace& exec, const Query& q, ClusterSweepWork<typename Query::memory_space>& work )
{
    const int ncells = q.geometry().num_cells();
    if ( work.group_start.extent( 0 ) < std::size_t( ncells ) + 1 )
        work.group_start = Kokkos::View<int*, typename Query::memory_space>( "group_start", ncells + 1 );
    const auto offsets = q.cell_offsets();
    const auto start = work.group_start;
    int groups = 0;
    Kokkos::parallel_scan(
        "cluster_groups", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells + 1 ),
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
        "cluster_group_cells", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int c ) {
            for ( int g = start( c ); g < start( c + 1 ); ++g )
                cell_of( g ) = c;
        } );
    return groups;
}

//! count(i) = neighbours of particle i within sqrt(r2max), for data in cell order (row-major cells).
template <int K, class ExecutionSpace, class Query, class CountView>
void cluster_count_sweep( const ExecutionSpace& exec, const Query& q,
                          ClusterSweepWork<typename Query::memory_space>& work,
                          typename Query::scalar_type r2max, const CountView& count )
{
    if ( !q.row_major() || q.per_pair_minimum_image() || !q.data_sorted() )
        throw std::runtime_error(
            "cluster sweep: needs row-major cells, sorted data and no per-pair minimum image" );
    const int groups = build_cell_groups<K>( exec, q, work );
    Kokkos::parallel_for( "cluster_count_sweep", core::LaunchRange<ExecutionSpace>( exec, 0, groups ),
                          ClusterCount<K, Query, CountView>{ q, work.group_start, work.group_cell, count, r2max } );
}

} // namespace morula::bench

#endif
