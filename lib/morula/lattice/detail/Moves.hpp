/*!
  \file detail/Moves.hpp
  \brief A particle's move of one step, one byte per move (-1, 0 or +1 per axis): how it is encoded, a
  coordinate one move on, and the site a move came from.
*/
#ifndef MORULA_LATTICE_DETAIL_MOVES_HPP
#define MORULA_LATTICE_DETAIL_MOVES_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::lattice::detail
{

//! The move that brought a particle to a site, one byte: (ox + 1) + 3 (oy + 1) + 9 (oz + 1), each
//! component -1, 0 or +1.
KOKKOS_FORCEINLINE_FUNCTION std::uint8_t encode_move( int ox, int oy, int oz )
{
    return std::uint8_t( ( ox + 1 ) + 3 * ( oy + 1 ) + 9 * ( oz + 1 ) );
}
KOKKOS_FORCEINLINE_FUNCTION int move_component( std::uint8_t move, int axis )
{
    const int m = axis == 0 ? move % 3 : ( axis == 1 ? ( move / 3 ) % 3 : move / 9 );
    return m - 1;
}
//! A unit move along one axis (the split passes).
template <int Axis>
KOKKOS_FORCEINLINE_FUNCTION std::uint8_t axis_move( int m )
{
    return encode_move( Axis == 0 ? m : 0, Axis == 1 ? m : 0, Axis == 2 ? m : 0 );
}

//! One coordinate of a move target: the new coordinate, or -1 if a reflecting face refuses the move.
KOKKOS_FORCEINLINE_FUNCTION int step_coordinate( int c, int m, int n, bool periodic )
{
    const int t = c + m;
    if ( t >= 0 && t < n )
        return t;
    return periodic ? ( t < 0 ? t + n : t - n ) : -1;
}

/*!
  \brief The global site one move (encoded as by encode_move) before global site gd: the site the
  particle came from. The move was made, so the site exists (on a reflecting axis no wrap is needed).
*/
KOKKOS_INLINE_FUNCTION std::uint64_t move_origin( std::uint64_t gd, std::uint8_t move, int nx, int ny, int nz )
{
    const std::uint64_t plane = std::uint64_t( nx ) * std::uint64_t( ny );
    const int n[3] = { nx, ny, nz };
    int c[3] = { int( gd % std::uint64_t( nx ) ), int( ( gd / std::uint64_t( nx ) ) % std::uint64_t( ny ) ),
                 int( gd / plane ) };
    for ( int a = 0; a < 3; ++a )
    {
        c[a] -= move_component( move, a );
        c[a] = c[a] < 0 ? c[a] + n[a] : ( c[a] >= n[a] ? c[a] - n[a] : c[a] );
    }
    return std::uint64_t( c[0] ) + std::uint64_t( nx ) * std::uint64_t( c[1] ) + plane * std::uint64_t( c[2] );
}

} // namespace morula::lattice::detail

#endif
