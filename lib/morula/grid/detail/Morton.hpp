/*!
  \file Morton.hpp
  \brief Z-order (Morton) codes of 3D cell coordinates, up to 1024 cells per axis.
*/
#ifndef MORULA_GRID_DETAIL_MORTON_HPP
#define MORULA_GRID_DETAIL_MORTON_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::grid::detail
{

//! Spreads the low 10 bits of v so that bit k moves to bit 3k.
KOKKOS_INLINE_FUNCTION std::uint32_t spread_bits_3( std::uint32_t v )
{
    v &= 0x000003ffu;
    v = ( v | ( v << 16 ) ) & 0xff0000ffu;
    v = ( v | ( v << 8 ) ) & 0x0300f00fu;
    v = ( v | ( v << 4 ) ) & 0x030c30c3u;
    v = ( v | ( v << 2 ) ) & 0x09249249u;
    return v;
}

//! 30-bit Morton code of (ix, iy, iz), each < 1024; x takes the lowest bit of each triple.
KOKKOS_INLINE_FUNCTION std::uint32_t morton_code( int ix, int iy, int iz )
{
    return spread_bits_3( static_cast<std::uint32_t>( ix ) ) |
           ( spread_bits_3( static_cast<std::uint32_t>( iy ) ) << 1 ) |
           ( spread_bits_3( static_cast<std::uint32_t>( iz ) ) << 2 );
}

//! Largest number of cells per axis morton_code() supports.
constexpr int max_morton_cells_per_axis = 1024;

} // namespace morula::grid::detail

#endif
