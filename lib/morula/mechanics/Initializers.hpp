/*!
  \file Initializers.hpp
  \brief Initial populations of spherical agents: a cubic lattice (BioDynaMo's Grid3D) and uniformly
  random positions, created on the device.
*/
#ifndef MORULA_MECHANICS_INITIALIZERS_HPP
#define MORULA_MECHANICS_INITIALIZERS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/mechanics/SphereAgents.hpp>

#include <Kokkos_Core.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>

namespace morula::mechanics
{

//! Properties every new agent of an initializer gets.
template <class Scalar>
struct AgentProperties
{
    Scalar diameter = 30;  //!< BioDynaMo's cell-division benchmark
    Scalar adherence = Scalar( 0.4 );
    Scalar mass = 1;       //!< the density is mass / volume of the initial sphere

    void validate( const std::string& where ) const
    {
        auto bad = []( Scalar v ) { return !std::isfinite( static_cast<double>( v ) ) || !( v > 0 ); };
        if ( bad( diameter ) )
            throw core::InputError( core::detail::concat( where, ": diameter = ", diameter,
                                                          " (expected a finite value > 0)" ) );
        if ( !std::isfinite( static_cast<double>( adherence ) ) || adherence < 0 )
            throw core::InputError( core::detail::concat( where, ": adherence = ", adherence,
                                                          " (expected a finite value >= 0)" ) );
        if ( bad( mass ) )
            throw core::InputError( core::detail::concat( where, ": mass = ", mass,
                                                          " (expected a finite value > 0)" ) );
    }
};

namespace detail
{
template <class ExecutionSpace, class Scalar, class MemorySpace>
void set_properties( const ExecutionSpace& exec, const SphereAgents<Scalar, MemorySpace>& a,
                     const AgentProperties<Scalar>& p )
{
    const auto diameter = a.diameters();
    const auto adherence = a.adherence();
    const auto density = a.densities();
    const auto id = a.ids();
    const Scalar rho = p.mass / sphere_volume( p.diameter );
    Kokkos::parallel_for(
        "morula::mechanics::set_properties",
        core::LaunchRange<ExecutionSpace>( exec, 0, static_cast<int>( a.size() ) ),
        KOKKOS_LAMBDA( const int i ) {
            diameter( i ) = p.diameter;
            adherence( i ) = p.adherence;
            density( i ) = rho;
            id( i ) = i;
        } );
}
} // namespace detail

/*!
  \brief per_axis^3 agents at (i, j, k) x spacing, x fastest (BioDynaMo's ModelInitializer::Grid3D);
  ids 0, 1, ... in that order.
*/
template <class Scalar, class MemorySpace, class ExecutionSpace>
SphereAgents<Scalar, MemorySpace> lattice_agents( const ExecutionSpace& exec, int per_axis,
                                                  Scalar spacing, const AgentProperties<Scalar>& p )
{
    p.validate( "lattice_agents" );
    if ( per_axis < 0 || per_axis > 1290 ) // 1290^3 < INT_MAX
        throw core::InputError( core::detail::concat( "lattice_agents: per_axis = ", per_axis,
                                                      " (expected 0 to 1290)" ) );
    if ( !std::isfinite( static_cast<double>( spacing ) ) || !( spacing > 0 ) )
        throw core::InputError( core::detail::concat( "lattice_agents: spacing = ", spacing,
                                                      " (expected a finite value > 0)" ) );
    const int n = per_axis * per_axis * per_axis;
    SphereAgents<Scalar, MemorySpace> a( "morula::mechanics::agents", n );
    const auto x = a.positions();
    Kokkos::parallel_for(
        "morula::mechanics::lattice_agents", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            x( i, 0 ) = spacing * ( i % per_axis );
            x( i, 1 ) = spacing * ( i / per_axis % per_axis );
            x( i, 2 ) = spacing * ( i / per_axis / per_axis );
        } );
    detail::set_properties( exec, a, p );
    a.set_next_id( n );
    return a;
}

//! n agents uniformly random in the box (hashed RNG of the seed: the same on every backend).
template <class Scalar, class MemorySpace, class ExecutionSpace>
SphereAgents<Scalar, MemorySpace> random_agents( const ExecutionSpace& exec, int n,
                                                 const core::Box<Scalar>& box,
                                                 const AgentProperties<Scalar>& p,
                                                 std::uint64_t seed )
{
    p.validate( "random_agents" );
    box.validate( "random_agents" );
    if ( n < 0 )
        throw core::InputError( core::detail::concat( "random_agents: n = ", n, " (expected >= 0)" ) );
    SphereAgents<Scalar, MemorySpace> a( "morula::mechanics::agents", n );
    const auto x = a.positions();
    const core::HashedRng rng( seed );
    Kokkos::parallel_for(
        "morula::mechanics::random_agents", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            for ( int d = 0; d < 3; ++d )
            {
                const Scalar v = box.lo[d] + box.length( d ) * rng.uniform<Scalar>( i, d, 0 );
                x( i, d ) = v < box.hi[d] ? v : box.lo[d]; // float rounding can reach hi
            }
        } );
    detail::set_properties( exec, a, p );
    a.set_next_id( n );
    return a;
}

/*!
  \brief Edge of the cube in which n agents at uniform density have on average `neighbors` others
  within `distance` (benchmark B of Hesam et al. (2021) chooses the box this way): n (4/3) pi distance^3 / L^3.
*/
inline double box_edge_for_neighbors( long long n, double neighbors, double distance )
{
    if ( n < 1 || !( neighbors > 0 ) || !( distance > 0 ) )
        throw core::InputError( core::detail::concat( "box_edge_for_neighbors: n = ", n,
                                                      ", neighbors = ", neighbors, ", distance = ",
                                                      distance, " (expected all > 0)" ) );
    return std::cbrt( double( n ) * 4.18879020478639098461685784437 * distance * distance * distance /
                      neighbors );
}

} // namespace morula::mechanics

#endif
