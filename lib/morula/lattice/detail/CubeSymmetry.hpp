/*!
  \file detail/CubeSymmetry.hpp
  \brief One of the 48 symmetries of the cube, drawn from random bits: the order in which an
  overflowing site takes its arrivals and a placement tries its sites.
*/
#ifndef MORULA_LATTICE_DETAIL_CUBESYMMETRY_HPP
#define MORULA_LATTICE_DETAIL_CUBESYMMETRY_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::lattice::detail
{

/*!
  \brief One of the 48 symmetries of the cube: out[a] = sign[a] * in[axis[a]]. Drawn from random bits,
  it orders the incoming particles of an overflowing site and the sites tried by a placement, so that
  neither favours a direction: any fixed order would (the first placement tried, (0, 0, -1), made
  crowded tracers drift along -z before this existed).
*/
struct CubeSymmetry
{
    int axis[3];
    int sign[3];

    KOKKOS_FORCEINLINE_FUNCTION explicit CubeSymmetry( std::uint64_t bits )
    {
        const int k = int( ( bits >> 16 ) % 48u ); // high bits: the low ones also feed other draws
        const int p = k % 6;
        // the six permutations of (0, 1, 2)
        axis[0] = p / 2;
        axis[1] = p < 2 ? ( p == 0 ? 1 : 2 ) : ( p < 4 ? ( p == 2 ? 0 : 2 ) : ( p == 4 ? 0 : 1 ) );
        axis[2] = 3 - axis[0] - axis[1];
        const int s = k / 6;
        for ( int a = 0; a < 3; ++a )
            sign[a] = ( ( s >> a ) & 1 ) ? -1 : 1;
    }
    KOKKOS_FORCEINLINE_FUNCTION void apply( const int in[3], int out[3] ) const
    {
        for ( int a = 0; a < 3; ++a )
            out[a] = sign[a] * in[axis[a]];
    }
};

} // namespace morula::lattice::detail

#endif
