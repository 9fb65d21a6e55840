// An experiment (issue #25, sixth pass): the neighbour-count sweep with each stencil row cut to the
// sphere's chord. With the points of every cell sorted along x (row-major cells), a row of three cells is
// one run of slots sorted along x, so the candidates within [x_i - h, x_i + h], h the chord's half length
// through the row, are one sub-run: found by a binary search, then scanned to its end. That tests 12.5
// cell volumes of candidates per particle instead of the 27-cell walk's 20.6 (search_volumes.py walks).
// The library's build orders a cell's points by index, so the experiment re-sorts each cell's points
// along x first (not timed). Closed or open boxes, row-major cells, data in cell order, one particle per
// thread; `grid_vs_cabana --chord-rows` times it and checks its counts.
#ifndef MORULA_BENCHMARKS_CHORDSWEEP_HPP
#define MORULA_BENCHMARKS_CHORDSWEEP_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

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
                const int v = k;
                int j = k - 1;
                while ( j >= b && x( order( j ), 0 ) > x( v, 0 ) )
                {
                    order( j + 1 ) = order( j );
                    --j;
                }
                order( j + 1 ) = v;
            }
            for ( int k = b; k < e; ++k )
                for ( int d = 0; d < 3; ++d )
                    out( k, d ) = x( order( k ), d );
        } );
}

template <class Query, class CountView>
struct ChordCount
{
    using Scalar = typename Query::scalar_type;
    Query q;
    CountView count;
    Scalar radius;
    Scalar margin; // a few ulp of the coordinates: the chord is rounded outwards, the pair test is exact

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        const auto& g = q.geometry();
        const auto& offsets = q.cell_offsets();
        const Scalar xi = q.position( i, 0 );
        const Scalar yi = q.position( i, 1 );
        const Scalar zi = q.position( i, 2 );
        const Scalar r2max = radius * radius;
        const int ix = g.cell_coordinate( 0, xi );
        const int iy = g.cell_coordinate( 1, yi );
        const int iz = g.cell_coordinate( 2, zi );
        Scalar below[3], above[3];
        q.face_distances( 0, ix, xi, below[0], above[0] );
        q.face_distances( 1, iy, yi, below[1], above[1] );
        q.face_distances( 2, iz, zi, below[2], above[2] );
        int c = 0;
        for ( int oz = -1; oz <= 1; ++oz )
        {
            const int cz = iz + oz;
            if ( cz < 0 || cz >= g.ncell[2] )
                continue;
            const Scalar dz = oz < 0 ? below[2] : ( oz > 0 ? above[2] : Scalar( 0 ) );
            for ( int oy = -1; oy <= 1; ++oy )
            {
                const int cy = iy + oy;
                if ( cy < 0 || cy >= g.ncell[1] )
                    continue;
                const Scalar dy = oy < 0 ? below[1] : ( oy > 0 ? above[1] : Scalar( 0 ) );
                const Scalar row_d2 = dy * dy + dz * dz;
                if ( row_d2 > r2max )
                    continue;
                const Scalar half = static_cast<Scalar>( compat::sqrt( static_cast<float>( r2max - row_d2 ) ) * 1.0001f ) +
                                    margin;
                const Scalar lo_x = xi - half;
                const Scalar hi_x = xi + half;
                const int row = g.ncell[0] * ( cy + g.ncell[1] * cz );
                int b = offsets( row + ( ix > 0 ? ix - 1 : 0 ) );
                const int e = offsets( row + ( ix + 1 < g.ncell[0] ? ix + 2 : g.ncell[0] ) );
                // first slot with x >= lo_x (the run is sorted along x)
                int len = e - b;
                while ( len > 0 )
                {
                    const int step = len >> 1;
                    if ( q.position( b + step, 0 ) < lo_x )
                    {
                        b += step + 1;
                        len -= step + 1;
                    }
                    else
                        len = step;
                }
                for ( int j = b; j < e; ++j )
                {
                    const Scalar xj = q.position( j, 0 );
                    if ( xj > hi_x )
                        break;
                    const Scalar r2 = grid::detail::distance_squared( xi - xj, yi - q.position( j, 1 ), zi - q.position( j, 2 ) );
                    c += ( r2 <= r2max && j != i ) ? 1 : 0;
                }
            }
        }
        count( i ) = c;
    }
};

/*!
  Counts, for every particle of `q` (row-major cells, data in cell order with each cell's points sorted
  along x, no periodic axis), its neighbours within `radius` (<= the grid's cutoff).
*/
template <class ExecutionSpace, class Query, class CountView>
void chord_count_sweep( const ExecutionSpace& exec, const Query& q, typename Query::scalar_type radius,
                        const CountView& count )
{
    using Scalar = typename Query::scalar_type;
    const auto& g = q.geometry();
    if ( !q.data_sorted() || !q.row_major() || q.per_pair_minimum_image() )
        throw std::runtime_error( "chord_count_sweep: row-major cells and data in cell order only" );
    Scalar margin = 0;
    for ( int d = 0; d < 3; ++d )
    {
        if ( g.is_periodic( d ) )
            throw std::runtime_error( "chord_count_sweep: no periodic axis" );
        margin = std::max( margin, Scalar( 16 ) * std::numeric_limits<Scalar>::epsilon() *
                                       ( std::fabs( g.box.lo[d] ) + g.box.length( d ) + g.cell_size[d] ) );
    }
    Kokkos::parallel_for( "morula::bench::chord_count", core::LaunchRange<ExecutionSpace>( exec, 0, q.num_particles() ),
                          ChordCount<Query, CountView>{ q, count, radius, margin } );
}

} // namespace morula::bench

#endif
