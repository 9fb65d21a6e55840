/*!
  \file Initializers.hpp
  \brief Initial tissues: a relaxed single cell of M elements, and a single layer of such cells on the
  basement membrane (the starting condition of the paper's simulations, its Figure 3).
*/
#ifndef MORULA_SEM_INITIALIZERS_HPP
#define MORULA_SEM_INITIALIZERS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/sem/SemParameters.hpp>
#include <morula/sem/Tissue.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace morula::sem
{

/*!
  \brief Element positions of one cell relaxed under the intracellular potential alone, centred at the
  origin: M points on a Fibonacci spiral through a small ball, then Euler steps of the gradient flow on
  the host (M^2 work per step) until no element moves faster than `tolerance` (or `max_steps`): the
  shape then sits at a local minimum of the energy.
*/
inline std::vector<std::array<double, 3>> relaxed_cell( int elements, const MorsePotential& intra,
                                                        double tolerance = 1e-10, int max_steps = 400000,
                                                        double dt = 0.01 )
{
    if ( elements < 1 )
        throw core::InputError( core::detail::concat( "relaxed_cell: ", elements,
                                                      " elements per cell (expected >= 1)" ) );
    intra.validate( "relaxed_cell" );
    const int n = elements;
    std::vector<std::array<double, 3>> p( n );
    const double spacing = intra.minimum() > 0 ? intra.minimum() : 2 * intra.xi1;
    const double radius = 0.6 * spacing * std::cbrt( static_cast<double>( n ) );
    for ( int i = 0; i < n; ++i )
    {
        const double z = 1.0 - 2.0 * ( i + 0.5 ) / n;
        const double rho = std::sqrt( std::max( 0.0, 1.0 - z * z ) );
        const double phi = 2.399963229728653 * i; // golden angle
        const double r = radius * std::cbrt( ( i + 0.5 ) / n );
        p[i] = { r * rho * std::cos( phi ), r * rho * std::sin( phi ), r * z };
    }
    std::vector<std::array<double, 3>> v( n );
    for ( int s = 0; s < max_steps; ++s )
    {
        for ( auto& a : v )
            a = { 0, 0, 0 };
        for ( int i = 0; i < n; ++i )
            for ( int j = i + 1; j < n; ++j )
            {
                double d[3], r2 = 0;
                for ( int k = 0; k < 3; ++k )
                {
                    d[k] = p[i][k] - p[j][k];
                    r2 += d[k] * d[k];
                }
                const double r = std::sqrt( r2 );
                if ( !( r > 0 ) )
                    continue;
                const double f = -intra.derivative( r ) / r;
                for ( int k = 0; k < 3; ++k )
                {
                    v[i][k] += f * d[k];
                    v[j][k] -= f * d[k];
                }
            }
        double fastest = 0;
        for ( int i = 0; i < n; ++i )
            for ( int k = 0; k < 3; ++k )
            {
                p[i][k] += dt * v[i][k];
                fastest = std::max( fastest, std::fabs( v[i][k] ) );
            }
        if ( fastest < tolerance )
            break;
    }
    std::array<double, 3> c{ 0, 0, 0 };
    for ( const auto& a : p )
        for ( int k = 0; k < 3; ++k )
            c[k] += a[k] / n;
    for ( auto& a : p )
        for ( int k = 0; k < 3; ++k )
            a[k] -= c[k];
    return p;
}

//! How to lay out the initial single layer.
struct MonolayerSpec
{
    int cells = 100;             //!< number of cells
    int elements_per_cell = 20;  //!< the paper's 20
    int adhesive_elements = 5;   //!< the lowest elements of each cell get type 1
    bool periodic = true;        //!< periodic x and y (else the "no boundary" case: open axes)
    double box_x = 0, box_y = 0; //!< membrane extent; 0: the smallest square-ish layout that fits
    double gap = 0;              //!< extra space between neighbouring cells (negative: they overlap)
    std::uint64_t seed = 1;      //!< each cell is the relaxed template turned by a random angle about z
};

//! The initial tissue and its box.
template <class Scalar>
struct Monolayer
{
    HostTissue tissue;
    core::Box<Scalar> box;
    double footprint = 0; //!< lattice spacing of the cells
};

/*!
  \brief Cells of `elements_per_cell` relaxed elements on a square lattice over the membrane, their
  lowest elements at the membrane's equilibrium height and of type 1, all species zero.
  \throws core::InputError for non-positive counts, more adhesive elements than elements, or more cells
  than fit on a given membrane (the message says how many fit).
*/
template <class Scalar>
Monolayer<Scalar> monolayer( const MonolayerSpec& s, const SemParameters& params )
{
    using core::detail::concat;
    if ( s.cells < 1 )
        throw core::InputError( concat( "monolayer: cells = ", s.cells, " (expected >= 1)" ) );
    if ( s.elements_per_cell < 1 )
        throw core::InputError( concat( "monolayer: elements_per_cell = ", s.elements_per_cell,
                                        " (expected >= 1)" ) );
    if ( s.adhesive_elements < 0 || s.adhesive_elements > s.elements_per_cell )
        throw core::InputError( concat( "monolayer: adhesive_elements = ", s.adhesive_elements,
                                        " (expected 0 to elements_per_cell = ",
                                        s.elements_per_cell, ")" ) );
    if ( !std::isfinite( s.gap ) || !std::isfinite( s.box_x ) || s.box_x < 0 ||
         !std::isfinite( s.box_y ) || s.box_y < 0 )
        throw core::InputError( concat( "monolayer: gap = ", s.gap, ", box_x = ", s.box_x,
                                        ", box_y = ", s.box_y,
                                        " (expected a finite gap and box sizes >= 0)" ) );
    params.validate( "monolayer" );
    const auto cell = relaxed_cell( s.elements_per_cell, params.intra );
    // Footprint: the widest horizontal extent of the template under any rotation, plus the repulsive
    // range and the requested gap.
    double reach = 0;
    for ( const auto& a : cell )
        reach = std::max( reach, std::hypot( a[0], a[1] ) );
    const double footprint = 2 * reach + params.effective_inter_cutoff() + s.gap;
    if ( !( footprint > 0 ) )
        throw core::InputError( concat( "monolayer: gap = ", s.gap,
                                        " leaves no room for a cell (footprint ", footprint, ")" ) );
    int nx, ny;
    double lx, ly;
    if ( s.box_x > 0 || s.box_y > 0 )
    {
        if ( !( s.box_x > 0 && s.box_y > 0 ) )
            throw core::InputError( "monolayer: give both box_x and box_y, or neither" );
        nx = static_cast<int>( std::floor( s.box_x / footprint ) );
        ny = static_cast<int>( std::floor( s.box_y / footprint ) );
        if ( static_cast<long long>( nx ) * ny < s.cells )
            throw core::InputError( concat(
                "monolayer: ", s.cells, " cells do not fit on a ", s.box_x, " x ", s.box_y,
                " membrane: at most ", static_cast<long long>( nx ) * ny, " cells of footprint ",
                footprint, " fit (", nx, " x ", ny, ")" ) );
        lx = s.box_x;
        ly = s.box_y;
    }
    else
    {
        nx = static_cast<int>( std::ceil( std::sqrt( static_cast<double>( s.cells ) ) ) );
        ny = ( s.cells + nx - 1 ) / nx;
        lx = nx * footprint;
        ly = ny * footprint;
    }
    // Lowest elements of the template are the adhesive ones; lift the cell so they sit at the
    // membrane potential's minimum.
    std::vector<int> order( cell.size() );
    std::iota( order.begin(), order.end(), 0 );
    std::stable_sort( order.begin(), order.end(),
                      [&]( int a, int b ) { return cell[a][2] < cell[b][2]; } );
    std::vector<int> type( cell.size(), element_free );
    for ( int k = 0; k < s.adhesive_elements; ++k )
        type[order[k]] = element_membrane;
    const double lift = ( params.membrane.minimum() > 0 ? params.membrane.minimum() : params.intra.xi1 ) -
                        cell[order[0]][2];
    Monolayer<Scalar> out;
    out.footprint = footprint;
    std::mt19937_64 rng( s.seed );
    for ( int c = 0; c < s.cells; ++c )
    {
        const int ix = c % nx, iy = c / nx;
        const double cx = ( ix + 0.5 ) * lx / nx, cy = ( iy + 0.5 ) * ly / ny;
        // 53 random bits to [0, 1): the same on every standard library.
        const double u = static_cast<double>( rng() >> 11 ) * 0x1.0p-53;
        const double angle = 2 * 3.14159265358979323846 * u;
        const double ca = std::cos( angle ), sa = std::sin( angle );
        for ( std::size_t k = 0; k < cell.size(); ++k )
        {
            const auto& a = cell[k];
            out.tissue.positions.push_back( cx + ca * a[0] - sa * a[1] );
            out.tissue.positions.push_back( cy + sa * a[0] + ca * a[1] );
            out.tissue.positions.push_back( a[2] + lift );
            out.tissue.type.push_back( type[k] );
        }
        out.tissue.cell_elements.push_back( s.elements_per_cell );
    }
    const core::Boundary side = s.periodic ? core::Boundary::periodic : core::Boundary::open;
    const double height = 4 * footprint; // open axis: only a starting extent for the grids
    out.box = core::Box<Scalar>( { Scalar( 0 ), Scalar( 0 ), Scalar( 0 ) },
                                 { Scalar( lx ), Scalar( ly ), Scalar( height ) },
                                 { side, side, core::Boundary::open } );
    return out;
}

} // namespace morula::sem

#endif
