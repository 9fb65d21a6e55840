// An experiment (issue #25, sixth pass): the neighbour-count sweep through cells of half the cutoff,
// the one idea of the list not measured before. A particle walks the 5 x 5 rows of half-cells
// along x around it; each row whose nearest point is within the cutoff is one run of sorted slots
// (row-major cells), cut to the cells that the sphere's chord through the row reaches. That tests about
// half the candidates of the 27-cell walk (10.5 against 20.6 cell volumes per particle, uniform points)
// in 21.6 runs instead of 8.1. Closed or open boxes, row-major cells, data in cell order, one particle
// per thread; `grid_experiments` times it and checks its counts against for_each_particle's
// on a grid of full cells over the same data.
#ifndef MORULA_BENCHMARKS_HALFCELLSWEEP_HPP
#define MORULA_BENCHMARKS_HALFCELLSWEEP_HPP

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
  The margin by which the row-cutting experiments (this file, ChordSweep.hpp) widen their bounds: a few
  ulp of the largest coordinate, so that rounding never cuts a neighbour off (the pair test is exact).
  Throws for a query these experiments do not handle (periodic axes, the per-pair minimum image,
  unsorted data, cells other than row-major).
*/
template <class Query>
typename Query::scalar_type row_cut_margin( const Query& q, const char* who )
{
    using Scalar = typename Query::scalar_type;
    const auto& g = q.geometry();
    if ( !q.data_sorted() || !q.row_major() || q.per_pair_minimum_image() )
        throw std::runtime_error( std::string( who ) + ": row-major cells and data in cell order only" );
    Scalar margin = 0;
    for ( int d = 0; d < 3; ++d )
    {
        if ( g.is_periodic( d ) )
            throw std::runtime_error( std::string( who ) + ": no periodic axis" );
        margin = std::max( margin, Scalar( 16 ) * std::numeric_limits<Scalar>::epsilon() *
                                       ( std::fabs( g.box.lo[d] ) + g.box.length( d ) + g.cell_size[d] ) );
    }
    return margin;
}

//! Half the chord of the sphere of radius sqrt(r2max) through a row at squared distance row_d2, in
//! float (a bound: widened by 1e-4 relative and by `margin`). The pair test sums three rounded squares
//! in another order than row_d2's, so an accepted pair's dx^2 may exceed r2max - row_d2 by a few eps
//! r2max: that slack goes inside the root, where it matters for rows at the sphere's edge.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar half_chord_bound( Scalar r2max, Scalar row_d2, Scalar margin )
{
    const Scalar room = r2max - row_d2 + Scalar( 4 ) * std::numeric_limits<Scalar>::epsilon() * r2max;
    return static_cast<Scalar>( compat::sqrt( static_cast<float>( room ) ) * 1.0001f ) + margin;
}

template <class Query, class CountView>
struct HalfCellCount
{
    using Scalar = typename Query::scalar_type;
    Query q;
    CountView count;
    Scalar radius;
    Scalar margin;   // a few ulp of the coordinates: bounds are rounded outwards, the pair test is exact
    int reach[3];    // cells per radius along each axis (2 when cells are at least radius / 2 wide)

    // Distance from x to the slab of cell c along axis d (0 inside), shrunk by a rounding margin.
    KOKKOS_INLINE_FUNCTION Scalar slab_distance( int d, int c, Scalar x ) const
    {
        const auto& g = q.geometry();
        const Scalar lo = g.box.lo[d] + static_cast<Scalar>( c ) * g.cell_size[d];
        const Scalar hi = lo + g.cell_size[d];
        const Scalar below = lo - x - margin;
        const Scalar above = x - hi - margin;
        return below > Scalar( 0 ) ? below : ( above > Scalar( 0 ) ? above : Scalar( 0 ) );
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        const auto& g = q.geometry();
        const auto& offsets = q.cell_offsets();
        const Scalar xi = q.position( i, 0 );
        const Scalar yi = q.position( i, 1 );
        const Scalar zi = q.position( i, 2 );
        const Scalar r2max = radius * radius;
        const int iy = g.cell_coordinate( 1, yi );
        const int iz = g.cell_coordinate( 2, zi );
        int c = 0;
        for ( int oz = -reach[2]; oz <= reach[2]; ++oz )
        {
            const int cz = iz + oz;
            if ( cz < 0 || cz >= g.ncell[2] )
                continue;
            const Scalar dz = slab_distance( 2, cz, zi );
            for ( int oy = -reach[1]; oy <= reach[1]; ++oy )
            {
                const int cy = iy + oy;
                if ( cy < 0 || cy >= g.ncell[1] )
                    continue;
                const Scalar dy = slab_distance( 1, cy, yi );
                const Scalar row_d2 = dy * dy + dz * dz;
                if ( row_d2 > r2max )
                    continue;
                const Scalar ext = half_chord_bound( r2max, row_d2, margin );
                const int lo = g.cell_coordinate( 0, xi - ext );
                const int hi = g.cell_coordinate( 0, xi + ext );
                const int row = g.ncell[0] * ( cy + g.ncell[1] * cz );
                const int end = offsets( row + hi + 1 );
                for ( int j = offsets( row + lo ); j < end; ++j )
                {
                    const Scalar r2 = grid::detail::distance_squared( xi - q.position( j, 0 ), yi - q.position( j, 1 ),
                                                                      zi - q.position( j, 2 ) );
                    c += ( r2 <= r2max && j != i ) ? 1 : 0;
                }
            }
        }
        count( i ) = c;
    }
};

/*!
  Counts, for every particle of `q` (a row-major grid whose cells are at least radius / 2 wide, over
  data in its cell order, no periodic axis), its neighbours within `radius`.
*/
template <class ExecutionSpace, class Query, class CountView>
void half_cell_count_sweep( const ExecutionSpace& exec, const Query& q, typename Query::scalar_type radius,
                            const CountView& count )
{
    const auto& g = q.geometry();
    HalfCellCount<Query, CountView> f{ q, count, radius, row_cut_margin( q, "half_cell_count_sweep" ), { 0, 0, 0 } };
    for ( int d = 0; d < 3; ++d )
    {
        if ( 2 * g.cell_size[d] < radius )
            throw std::runtime_error( "half_cell_count_sweep: cells at least radius / 2 wide only" );
        f.reach[d] = static_cast<int>( std::ceil( radius * g.inv_cell_size[d] ) );
    }
    Kokkos::parallel_for( "morula::bench::half_cell_count", core::LaunchRange<ExecutionSpace>( exec, 0, q.num_particles() ),
                          f );
}

} // namespace morula::bench

#endif
