// An experiment (issue #25, sixth pass): the neighbour-count sweep with each stencil row cut to the
// sphere's chord. With the points of every cell sorted along x (row-major cells), a row of three cells is
// one run of slots sorted along x, so the candidates within [x_i - h, x_i + h], h the chord's half length
// through the row, are one sub-run: found by a binary search, then scanned to its end. That tests 12.5
// cell volumes of candidates per particle instead of the 27-cell walk's 20.6 (search_volumes.py walks).
// The library's build orders a cell's points by index, so the experiment re-sorts each cell's points
// along x first (not timed). Closed or open boxes, row-major cells, data in cell order; one particle per
// thread, or K consecutive points of a cell per thread (adjacent along x after the sort: each row is cut
// to the union of their chords, and each candidate is tested against all K; the groups of
// CellGroups.hpp). `grid_experiments` times it and checks its counts.
#ifndef MORULA_BENCHMARKS_CHORDSWEEP_HPP
#define MORULA_BENCHMARKS_CHORDSWEEP_HPP

#include "CellGroups.hpp"
#include "HalfCellSweep.hpp"

#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace morula::bench
{

/*!
  out(k) = x(order(k)) where order sorts each cell's slots [offsets(c), offsets(c + 1)) along x (one
  thread per cell, insertion sort: about 7 points per cell).
*/
template <class ExecutionSpace, class OffsetView, class InView, class IndexView, class OutView>
void sort_cells_along_x( const ExecutionSpace& exec, const OffsetView& offsets, int ncells, const InView& x,
                         const IndexView& order, const OutView& out )
{
    Kokkos::parallel_for(
        "morula::bench::sort_cells_along_x", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int c ) {
            const int b = offsets( c );
            const int e = offsets( c + 1 );
            for ( int k = b; k < e; ++k )
            {
                int j = k - 1;
                while ( j >= b && x( order( j ), 0 ) > x( k, 0 ) )
                {
                    order( j + 1 ) = order( j );
                    --j;
                }
                order( j + 1 ) = k;
            }
            for ( int k = b; k < e; ++k )
                for ( int d = 0; d < 3; ++d )
                    out( k, d ) = x( order( k ), d );
        } );
}

/*!
  Counts neighbours within `radius` for a group of K points of one cell (K = 1 and Grouped false: one
  particle per thread, thread i = particle i).
*/
template <int K, bool Grouped, class Query, class CountView>
struct ChordCount
{
    using Scalar = typename Query::scalar_type;
    Query q;
    CountView count;
    Scalar radius;
    Scalar margin; // a few ulp of the coordinates: chords are rounded outwards, the pair test is exact
    Kokkos::View<int*, typename Query::memory_space> group_start;
    Kokkos::View<int*, typename Query::memory_space> group_cell;

    KOKKOS_INLINE_FUNCTION CellGroup<K, Scalar> group( int t ) const
    {
        if constexpr ( Grouped )
            return CellGroup<K, Scalar>( q, group_start, group_cell, t );
        else
            return CellGroup<K, Scalar>( q, t );
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int t ) const
    {
        const CellGroup<K, Scalar> grp = group( t );
        const auto& geom = q.geometry();
        const auto& offsets = q.cell_offsets();
        const int nx = geom.ncell[0];
        const Scalar r2max = radius * radius;
        // the group's points are consecutive in the cell's order along x
        const Scalar x_lo = grp.x[0][0];
        const Scalar x_hi = grp.x[grp.members - 1][0];
        int c[K];
        for ( int k = 0; k < K; ++k )
            c[k] = 0;
        for ( int oz = -1; oz <= 1; ++oz )
        {
            const int cz = grp.iz + oz;
            if ( cz < 0 || cz >= geom.ncell[2] )
                continue;
            const Scalar dz = oz < 0 ? grp.below[2] : ( oz > 0 ? grp.above[2] : Scalar( 0 ) );
            for ( int oy = -1; oy <= 1; ++oy )
            {
                const int cy = grp.iy + oy;
                if ( cy < 0 || cy >= geom.ncell[1] )
                    continue;
                const Scalar dy = oy < 0 ? grp.below[1] : ( oy > 0 ? grp.above[1] : Scalar( 0 ) );
                const Scalar row_d2 = dy * dy + dz * dz;
                if ( row_d2 > r2max )
                    continue;
                const Scalar half = half_chord_bound( r2max, row_d2, margin );
                const Scalar lo_x = x_lo - half;
                const Scalar hi_x = x_hi + half;
                const int row = nx * ( cy + geom.ncell[1] * cz );
                int b = offsets( row + ( grp.ix > 0 ? grp.ix - 1 : 0 ) );
                const int e = offsets( row + ( grp.ix + 1 < nx ? grp.ix + 2 : nx ) );
                // the first slot with x >= lo_x: the row's run is sorted along x
                int len = e - b;
                while ( len > 0 )
                {
                    const int step = len >> 1;
                    const bool before = q.position( b + step, 0 ) < lo_x;
                    b = before ? b + step + 1 : b;
                    len = before ? len - step - 1 : step;
                }
                for ( int j = b; j < e; ++j )
                {
                    const Scalar xj = q.position( j, 0 );
                    if ( xj > hi_x )
                        break;
                    const Scalar yj = q.position( j, 1 );
                    const Scalar zj = q.position( j, 2 );
                    for ( int k = 0; k < K; ++k )
                    {
                        const Scalar r2 =
                            grid::detail::distance_squared( grp.x[k][0] - xj, grp.x[k][1] - yj, grp.x[k][2] - zj );
                        c[k] += ( k < grp.members && r2 <= r2max && j != grp.first + k ) ? 1 : 0;
                    }
                }
            }
        }
        for ( int k = 0; k < grp.members; ++k )
            count( grp.first + k ) = c[k];
    }
};

/*!
  Counts, for every particle of `q` (row-major cells, data in cell order with each cell's points sorted
  along x, no periodic axis), its neighbours within `radius` (<= the grid's cutoff), with K points of a
  cell per thread (K = 1: one particle per thread, no group mapping).
*/
template <int K, class ExecutionSpace, class Query, class CountView>
void chord_count_sweep( const ExecutionSpace& exec, const Query& q, CellGroupWork<typename Query::memory_space>& work,
                        typename Query::scalar_type radius, const CountView& count )
{
    const auto margin = row_cut_margin( q, "chord_count_sweep" );
    const std::string label = "morula::bench::chord_count_" + std::to_string( K );
    if constexpr ( K == 1 )
        Kokkos::parallel_for( label, core::LaunchRange<ExecutionSpace>( exec, 0, q.num_particles() ),
                              ChordCount<1, false, Query, CountView>{ q, count, radius, margin, {}, {} } );
    else
    {
        const int groups = build_cell_groups<K>( exec, q, work );
        Kokkos::parallel_for( label, core::LaunchRange<ExecutionSpace>( exec, 0, groups ),
                              ChordCount<K, true, Query, CountView>{ q, count, radius, margin, work.group_start,
                                                                     work.group_cell } );
    }
}

} // namespace morula::bench

#endif
