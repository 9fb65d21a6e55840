/*!
  \file SiteWord.hpp
  \brief One lattice site in one 32-bit word: a 4-bit site type and 2, 4 or 8 particle slots.

  The packing of Roberts et al. (2009, figure 1): bits 28-31 hold the site type (16 types),
  the low 28 bits are split evenly into the particle slots, 14, 7 or 3 bits each, so a slot holds a
  particle code of 1..16383, 1..127 or 1..7 (0 = empty). With 8 slots bits 24-27 are unused.

  Invariant kept by every kernel: the particles of a site fill slots 0..n-1 with no gap, so the count
  is the index of the first empty slot and appending writes slot n.
*/
#ifndef MORULA_LATTICE_SITEWORD_HPP
#define MORULA_LATTICE_SITEWORD_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::lattice
{

using site_word = std::uint32_t;

//! Number of site types a word can tell apart.
inline constexpr int max_site_types = 16;

/*!
  \brief Bit layout of a site with `Slots` particle slots (2, 4 or 8), a compile-time parameter:
  every kernel is instantiated for each capacity, so the slot loops unroll and the shifts are constants.
*/
template <int Slots>
struct SiteLayout
{
    static_assert( Slots == 2 || Slots == 4 || Slots == 8, "a site holds 2, 4 or 8 particles" );

    static constexpr int slots = Slots;
    static constexpr int bits_per_slot = 28 / Slots; // 14, 7, 3
    static constexpr std::uint32_t slot_mask = ( 1u << bits_per_slot ) - 1u;
    //! The largest particle code (species or tracer id): 16383, 127 or 7.
    static constexpr std::uint32_t max_code = slot_mask;
    static constexpr int type_shift = 28;
    static constexpr site_word particle_bits = ( Slots * bits_per_slot == 28 )
                                                   ? ( ( 1u << 28 ) - 1u )
                                                   : ( ( 1u << ( Slots * bits_per_slot ) ) - 1u );

    KOKKOS_FORCEINLINE_FUNCTION static constexpr std::uint32_t type( site_word w )
    {
        return w >> type_shift;
    }
    KOKKOS_FORCEINLINE_FUNCTION static constexpr site_word empty_site( std::uint32_t type )
    {
        return site_word( type ) << type_shift;
    }
    KOKKOS_FORCEINLINE_FUNCTION static constexpr std::uint32_t code( site_word w, int slot )
    {
        return ( w >> ( slot * bits_per_slot ) ) & slot_mask;
    }
    //! `w` with `code` written into `slot`, which must be empty.
    KOKKOS_FORCEINLINE_FUNCTION static constexpr site_word with_code( site_word w, int slot,
                                                                     std::uint32_t code )
    {
        return w | ( site_word( code ) << ( slot * bits_per_slot ) );
    }
    KOKKOS_FORCEINLINE_FUNCTION static constexpr bool empty( site_word w )
    {
        return ( w & particle_bits ) == 0;
    }
    //! Number of particles (slots are filled from 0 without gaps).
    KOKKOS_FORCEINLINE_FUNCTION static constexpr int count( site_word w )
    {
        int n = 0;
        while ( n < Slots && code( w, n ) != 0 )
            ++n;
        return n;
    }
};

} // namespace morula::lattice

#endif
