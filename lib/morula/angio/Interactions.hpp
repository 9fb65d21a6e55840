/*!
  \file Interactions.hpp
  \brief Pair laws of the tumour model: the semi-harmonic contact force (Wcisło et al. 2009), the contact
  weight that scales adhesion range and exchange, and the geometry of tubes (closest points on segments).
*/
#ifndef MORULA_ANGIO_INTERACTIONS_HPP
#define MORULA_ANGIO_INTERACTIONS_HPP

#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

namespace morula::angio
{

/*!
  \brief Contact weight of two bodies whose surfaces are s = d - sum apart (sum = r_i + r_j): 1 when they
  touch or overlap (s <= 0), falling linearly to 0 at s = range x sum, 0 beyond.
*/
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar contact_weight( Scalar d, Scalar sum, Scalar range )
{
    const Scalar s = d - sum;
    if ( s <= Scalar( 0 ) )
        return Scalar( 1 );
    const Scalar reach = range * sum;
    return s < reach ? Scalar( 1 ) - s / reach : Scalar( 0 );
}

/*!
  \brief Semi-harmonic central force between two cells at centre distance d with radii summing to `sum`:
  the magnitude along x_i - x_j (positive pushes the cells apart).

  Overlap (s = d - sum < 0): repulsion x (-s), a stiff spring. Within the adhesion range (0 <= s < range x
  sum): an attractive tent, -adhesion x min(s, range x sum - s), zero at both ends so the force is
  continuous. Beyond: zero.
*/
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar contact_force( Scalar d, Scalar sum, Scalar repulsion, Scalar adhesion, Scalar range )
{
    const Scalar s = d - sum;
    if ( s < Scalar( 0 ) )
        return -repulsion * s;
    const Scalar reach = range * sum;
    if ( s >= reach )
        return Scalar( 0 );
    const Scalar t = s < reach - s ? s : reach - s;
    return -adhesion * t;
}

/*!
  \brief Exchange conductance of a contact without the diffusion coefficient, in μm: sqrt(2) rho w with
  rho = r_i r_j / (r_i + r_j). Symmetric to the last bit in (r_i, r_j) (products commute), so the two
  sides of a pair exchange exactly opposite amounts.
*/
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar contact_conductance( Scalar ri, Scalar rj, Scalar weight )
{
    return Scalar( 1.4142135623730950488 ) * ( ri * rj ) / ( ri + rj ) * weight;
}

//! Volume of a sphere of radius r.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar sphere_volume_of_radius( Scalar r )
{
    return Scalar( 4.1887902047863909846 ) * r * r * r; // 4 pi / 3
}

//! Radius of a sphere of volume v.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar sphere_radius_of_volume( Scalar v )
{
    return compat::cbrt( v * Scalar( 0.23873241463784300365 ) ); // 3 / (4 pi)
}

//! Parameter t in [0, 1] of the point of segment a-b closest to p (0 for a degenerate segment).
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar closest_parameter( const Scalar a[3], const Scalar b[3], const Scalar p[3] )
{
    Scalar ab2 = 0, ap_ab = 0;
    for ( int d = 0; d < 3; ++d )
    {
        const Scalar ab = b[d] - a[d];
        ab2 += ab * ab;
        ap_ab += ( p[d] - a[d] ) * ab;
    }
    if ( !( ab2 > Scalar( 0 ) ) )
        return Scalar( 0 );
    const Scalar t = ap_ab / ab2;
    return t < Scalar( 0 ) ? Scalar( 0 ) : ( t > Scalar( 1 ) ? Scalar( 1 ) : t );
}

/*!
  \brief Closest points of segments a0-b0 and a1-b1: parameters s (on the first) and t (on the second) in
  [0, 1]; returns the squared distance between the two points. Minimises |a0 + s d0 - a1 - t d1|^2 over
  the unit square: the unconstrained minimum clamped to s, then t from s, then s again from a clamped t.
*/
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar segment_distance2( const Scalar a0[3], const Scalar b0[3], const Scalar a1[3],
                                                 const Scalar b1[3], Scalar& s, Scalar& t )
{
    Scalar d0[3], d1[3], r[3];
    for ( int d = 0; d < 3; ++d )
    {
        d0[d] = b0[d] - a0[d];
        d1[d] = b1[d] - a1[d];
        r[d] = a0[d] - a1[d];
    }
    auto dot = []( const Scalar* u, const Scalar* v ) { return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]; };
    auto clamp01 = []( Scalar x ) { return x < Scalar( 0 ) ? Scalar( 0 ) : ( x > Scalar( 1 ) ? Scalar( 1 ) : x ); };
    const Scalar l0 = dot( d0, d0 ), l1 = dot( d1, d1 ), f = dot( d1, r );
    if ( !( l0 > Scalar( 0 ) ) && !( l1 > Scalar( 0 ) ) )
        s = t = Scalar( 0 );
    else if ( !( l0 > Scalar( 0 ) ) )
    {
        s = Scalar( 0 );
        t = clamp01( f / l1 );
    }
    else
    {
        const Scalar c = dot( d0, r );
        if ( !( l1 > Scalar( 0 ) ) )
        {
            t = Scalar( 0 );
            s = clamp01( -c / l0 );
        }
        else
        {
            const Scalar b = dot( d0, d1 );
            const Scalar denom = l0 * l1 - b * b; // >= 0; 0 for parallel segments
            s = denom > Scalar( 0 ) ? clamp01( ( b * f - c * l1 ) / denom ) : Scalar( 0 );
            t = ( b * s + f ) / l1;
            if ( t < Scalar( 0 ) )
            {
                t = Scalar( 0 );
                s = clamp01( -c / l0 );
            }
            else if ( t > Scalar( 1 ) )
            {
                t = Scalar( 1 );
                s = clamp01( ( b - c ) / l0 );
            }
        }
    }
    Scalar d2 = 0;
    for ( int d = 0; d < 3; ++d )
    {
        const Scalar g = a0[d] + s * d0[d] - a1[d] - t * d1[d];
        d2 += g * g;
    }
    return d2;
}

} // namespace morula::angio

#endif
