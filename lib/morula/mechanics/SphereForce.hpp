/*!
  \file SphereForce.hpp
  \brief The sphere-sphere collision force of BioDynaMo (Hesam et al. 2021, equation 1).
*/
#ifndef MORULA_MECHANICS_SPHEREFORCE_HPP
#define MORULA_MECHANICS_SPHEREFORCE_HPP

#include <morula/core/FastMath.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::mechanics
{

/*!
  \brief Parameters of equation (1) of Hesam et al. (2021), with BioDynaMo's defaults.

  delta = r1 + r2 - |p1 - p2|, r = r1 r2 / (r1 + r2),
  F = (repulsion delta - attraction sqrt(r delta)) (p1 - p2) / |p1 - p2|, for delta > 0.

  BioDynaMo takes "virtual bigger radii to have a distant interaction": each radius is the cell's
  radius plus 10 x 0.15 (its inter-object coefficient) = 1.5, so cells interact up to 3 length units
  apart; radius_extension = 0 gives the bare equation. Two spheres rest where the force vanishes,
  at delta = r (attraction / repulsion)^2 (a quarter of the reduced radius with the defaults).
*/
template <class Scalar>
struct ForceParameters
{
    Scalar repulsion = 2;          //!< kappa
    Scalar attraction = 1;         //!< gamma
    Scalar radius_extension = 1.5; //!< added to each radius
};

/*!
  \brief The force factor k such that the force on sphere a is k (p_a - p_b), from the squared distance
  of the centres (> 0) and the two radii already extended by radius_extension. Zero when they do not
  overlap. The inner-loop form: one reciprocal square root for the distance and its inverse, no
  division by the distance; in double no division at all (GPUs use the hardware approximations of
  core/FastMath.hpp: about 2 ulp in float, 1 ulp in double).
*/
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar overlap_force_factor( Scalar distance2, Scalar ra, Scalar rb,
                                                    Scalar repulsion, Scalar attraction )
{
    const Scalar inv_distance = core::fast_rsqrt( distance2 );
    const Scalar sum = ra + rb;
    const Scalar delta = sum - distance2 * inv_distance;
    if ( !( delta > Scalar( 0 ) ) )
        return Scalar( 0 );
    if constexpr ( sizeof( Scalar ) >= 8 )
    {
        // sqrt(r delta) = sqrt(t / sum) = t / sqrt(t sum) with t = ra rb delta > 0: one more reciprocal
        // square root instead of a division and a square root, which in double cost several times as
        // many instructions on GPUs. (t sum grows as the fourth power of the radii; in float that would
        // leave the range for radii beyond 1e9 or below 1e-9, so float keeps the form below.)
        const Scalar t = ra * rb * delta;
        return ( repulsion * delta - attraction * t * core::fast_rsqrt( t * sum ) ) * inv_distance;
    }
    else
    {
        const Scalar r_delta = ra * rb * delta * core::fast_reciprocal( sum ); // r delta, r = ra rb / sum
        return ( repulsion * delta - attraction * core::fast_sqrt_positive( r_delta ) ) * inv_distance;
    }
}

/*!
  \brief The force factor k such that the force on sphere 1 is k (p1 - p2), for spheres of diameters
  d1 and d2 whose centres are `distance` apart (distance > 0). Zero when they do not overlap.
*/
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar sphere_force_factor( Scalar distance, Scalar d1, Scalar d2,
                                                   const ForceParameters<Scalar>& p )
{
    return overlap_force_factor( distance * distance, Scalar( 0.5 ) * d1 + p.radius_extension,
                                 Scalar( 0.5 ) * d2 + p.radius_extension, p.repulsion,
                                 p.attraction );
}

/*!
  \brief Magnitude of the force between two spheres whose centres coincide (distance 0), where
  equation (1) has no direction.
*/
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar coincident_force( Scalar d1, Scalar d2, const ForceParameters<Scalar>& p )
{
    const Scalar r1 = Scalar( 0.5 ) * d1 + p.radius_extension;
    const Scalar r2 = Scalar( 0.5 ) * d2 + p.radius_extension;
    const Scalar delta = r1 + r2;
    const Scalar r = r1 * r2 / ( r1 + r2 );
    return p.repulsion * delta - p.attraction * compat::sqrt( r * delta );
}

/*!
  \brief Unit direction along which two agents with coincident centres push apart, as seen from agent
  `self`: a direction fixed by the pair of ids (a hash of the smaller and the larger), with opposite
  signs for the two agents, so Newton's third law holds and the result does not depend on memory order.
  (BioDynaMo adds a constant (42, 42, 42) here, which breaks the symmetry.)
*/
template <class Scalar>
KOKKOS_INLINE_FUNCTION void coincident_direction( std::int64_t self, std::int64_t other, Scalar e[3] )
{
    const std::uint64_t lo = static_cast<std::uint64_t>( self < other ? self : other );
    const std::uint64_t hi = static_cast<std::uint64_t>( self < other ? other : self );
    const std::uint64_t b1 = core::detail::ranhash64( lo * 0x9E3779B97F4A7C15ULL ^ hi );
    const std::uint64_t b2 = core::detail::ranhash64( b1 ^ 0xD1B54A32D192ED03ULL );
    const Scalar z = Scalar( 2 ) * core::HashedRng::to_uniform<Scalar>( b1 ) - Scalar( 1 );
    const Scalar phi = Scalar( 6.283185307179586476925286766559 ) * core::HashedRng::to_uniform<Scalar>( b2 );
    const Scalar s = compat::sqrt( compat::fmax( Scalar( 0 ), Scalar( 1 ) - z * z ) );
    const Scalar sign = self < other ? Scalar( 1 ) : Scalar( -1 );
    e[0] = sign * s * compat::cos( phi );
    e[1] = sign * s * compat::sin( phi );
    e[2] = sign * z;
}

} // namespace morula::mechanics

#endif
