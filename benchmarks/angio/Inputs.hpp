/*!
  \file Inputs.hpp
  \brief The inputs of angio_benchmark's cases: the paper's random cells and tubes in a closed cube
  (cellcell, tubecell) and a tumour cluster beside two vessels (whole).
*/
#ifndef MORULA_BENCHMARKS_ANGIO_INPUTS_HPP
#define MORULA_BENCHMARKS_ANGIO_INPUTS_HPP

#include "Common.hpp"

#include <morula/core/HashedRng.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace angio_bench
{

constexpr double pi = 3.14159265358979323846;

//! Edge of the cube in which n cells of radius r fill `fraction` of the volume.
inline double random_box_edge( int n, double r, double fraction )
{
    return std::cbrt( n * 4.0 / 3.0 * pi * r * r * r / fraction );
}

//! n Mature cells of radius r, oxygen 1, at uniform random positions in [0, edge)^3 (hashed RNG).
inline angio::HostCells random_cells( int n, double edge, double r, std::uint64_t seed )
{
    angio::HostCells h;
    const core::HashedRng rng( seed );
    for ( int i = 0; i < n; ++i )
    {
        const auto key = static_cast<std::uint64_t>( i );
        const double x[3] = { edge * rng.uniform<double>( key, 0, 0 ), edge * rng.uniform<double>( key, 1, 0 ),
                              edge * rng.uniform<double>( key, 2, 0 ) };
        h.add( x, r, 10.0, angio::cell_mature, 1.0, 0.0, i );
    }
    return h;
}

//! m inlet tubes: random direction, length 10-20 um, one radius 3-5 um, the midpoint at least 10 um from
//! every wall so that both ends lie inside the box.
inline angio::HostTubes random_tubes( int m, double edge, std::uint64_t seed )
{
    angio::HostTubes t;
    const core::HashedRng rng( seed ^ 0x7475626573ULL ); // other variates than the cells'
    for ( int i = 0; i < m; ++i )
    {
        const auto key = static_cast<std::uint64_t>( i );
        const double length = 10 + 10 * rng.uniform<double>( key, 0, 0 );
        const double radius = 3 + 2 * rng.uniform<double>( key, 1, 0 );
        const double z = 2 * rng.uniform<double>( key, 2, 0 ) - 1;
        const double phi = 2 * pi * rng.uniform<double>( key, 3, 0 );
        const double s = std::sqrt( std::max( 0.0, 1 - z * z ) );
        const double dir[3] = { s * std::cos( phi ), s * std::sin( phi ), z };
        double a[3], b[3];
        for ( int d = 0; d < 3; ++d )
        {
            const double mid = 10 + ( edge - 20 ) * rng.uniform<double>( key, 4 + d, 0 );
            a[d] = mid - 0.5 * length * dir[d];
            b[d] = mid + 0.5 * length * dir[d];
        }
        t.add( a, b, radius, radius, -1, 1.0, 0 );
    }
    return t;
}

//! The random-input parameters of the paper: no oxygen uptake (no hypoxia, no death), no TAF sources.
inline angio::AngioParameters random_input_parameters( const Settings& s )
{
    angio::AngioParameters p;
    p.exchange.oxygen_uptake = 0;
    p.exchange.taf_production = 0;
    p.exchange.taf_decay = 0;
    p.exchange.sweeps = 1;
    p.sort_every = 1;
    p.max_tubes_per_cell = s.max_tubes_per_cell;
    p.seed = s.seed;
    return p;
}

//! The initial state of the whole case; every run builds its model from it.
struct WholeInput
{
    angio::HostCells cells;
    angio::HostTubes tubes;
    angio::AngioParameters params;
    double vessel_offset;
};

//! A cluster at the centre of the cube; two vessels along y at x = centre -+ 0.75 R, z = centre, running
//! through the tumour's outer shell from wall to wall.
inline WholeInput whole_input( const Settings& s )
{
    WholeInput in;
    in.params.seed = s.seed;
    const double c = 0.5 * s.edge;
    angio::ClusterSpec spec;
    spec.centre[0] = spec.centre[1] = spec.centre[2] = c;
    spec.radius = s.cluster_radius;
    spec.seed = s.seed;
    angio::add_cluster( in.cells, spec );
    in.vessel_offset = 0.75 * s.cluster_radius;
    for ( const double x : { c - in.vessel_offset, c + in.vessel_offset } )
        in.tubes.add_vessel( { x, 0, c, x, s.edge, c }, s.vessel_radius, in.params.vessels.max_tube_length,
                             "angio_benchmark" );
    return in;
}

} // namespace angio_bench

#endif
