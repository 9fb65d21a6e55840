/*!
  \file Initializers.hpp
  \brief Initial states of the tumour model on the host: a cluster of cells and straight vessels.
*/
#ifndef MORULA_ANGIO_INITIALIZERS_HPP
#define MORULA_ANGIO_INITIALIZERS_HPP

#include <morula/angio/AngioParameters.hpp>
#include <morula/angio/TumourCells.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace morula::angio
{

//! A ball of cells (a tumour seed or a spheroid).
struct ClusterSpec
{
    double centre[3] = { 0, 0, 0 };
    double radius = 30;       //!< μm: cells are placed with their centres inside this ball
    double cell_radius = 5;   //!< μm
    double spacing = 0.95;    //!< lattice spacing in cell diameters (below 1: cells start slightly pressed)
    double jitter = 0.05;     //!< random displacement in cell diameters
    double oxygen = 1;        //!< initial oxygen
    double max_age = 6;       //!< h: ages are uniform in [0, max_age)
    std::uint64_t seed = 1;
};

/*!
  \brief Cells on a face-centred cubic lattice (the densest packing) clipped to a ball, jittered by the
  hashed RNG, all New with uniform ages; appended to `cells` with ids following its largest id.
  \throws core::InputError for a non-positive radius or a spacing or jitter out of range
*/
inline void add_cluster( HostCells& cells, const ClusterSpec& s )
{
    if ( !( s.radius > 0 ) || !( s.cell_radius > 0 ) || !std::isfinite( s.radius ) || !std::isfinite( s.cell_radius ) )
        throw core::InputError( core::detail::concat( "cluster: radius = ", s.radius, " and cell_radius = ", s.cell_radius,
                                                      " (expected finite values > 0)" ) );
    if ( !( s.spacing > 0.5 && s.spacing <= 2 ) || !( s.jitter >= 0 && s.jitter < 0.5 ) )
        throw core::InputError( core::detail::concat( "cluster: spacing = ", s.spacing, ", jitter = ", s.jitter,
                                                      " (expected spacing in (0.5, 2] and jitter in [0, 0.5))" ) );
    std::int64_t next = 0;
    for ( auto v : cells.id )
        next = v + 1 > next ? v + 1 : next;
    const double a = 2 * s.cell_radius * s.spacing * std::sqrt( 2.0 ); // fcc cube edge: nearest neighbours a / sqrt(2)
    const int reach = static_cast<int>( std::ceil( s.radius / a ) ) + 1;
    const double basis[4][3] = { { 0, 0, 0 }, { 0.5, 0.5, 0 }, { 0.5, 0, 0.5 }, { 0, 0.5, 0.5 } };
    const core::HashedRng rng( s.seed );
    for ( int k = -reach; k <= reach; ++k )
        for ( int j = -reach; j <= reach; ++j )
            for ( int i = -reach; i <= reach; ++i )
                for ( const auto& b : basis )
                {
                    double x[3] = { ( i + b[0] ) * a, ( j + b[1] ) * a, ( k + b[2] ) * a };
                    if ( x[0] * x[0] + x[1] * x[1] + x[2] * x[2] > s.radius * s.radius )
                        continue;
                    const std::uint64_t key = static_cast<std::uint64_t>( next );
                    for ( int d = 0; d < 3; ++d )
                        x[d] = s.centre[d] + x[d] +
                               s.jitter * 2 * s.cell_radius * ( 2 * rng.uniform<double>( key, d, 0 ) - 1 );
                    cells.add( x, s.cell_radius, s.max_age * rng.uniform<double>( key, 3, 0 ), cell_new, s.oxygen, 0,
                               next++ );
                }
}

} // namespace morula::angio

#endif
