/*!
  \file detail/SiteBuilder.hpp
  \brief A destination's new word, built from its arrivals in the one order of the model (shared by the
  gather, compacted and tiled kernels), and the random draw of a split-pass move.
*/
#ifndef MORULA_LATTICE_DETAIL_SITEBUILDER_HPP
#define MORULA_LATTICE_DETAIL_SITEBUILDER_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/Moves.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

/*!
  \brief Builds a site's new word: arrivals are appended in order. While `spill` is false, arrivals past
  the last slot are only counted (the first sweep of the fused pass); with `spill` they go to the
  overflow list with their arrival rank and move. The list is an OverflowList or anything with its
  push(site, rank, code, move) (TeamOverflowBuffer, a team's buffer in scratch).
*/
template <int Slots, class MemorySpace>
struct SiteBuilder
{
    using layout = SiteLayout<Slots>;
    site_word word;
    int count = 0;
    int arrivals = 0;

    template <class Overflow>
    KOKKOS_FORCEINLINE_FUNCTION void append( std::uint32_t code, std::size_t site, std::uint8_t move, bool spill,
                                             const Overflow& overflow )
    {
        if ( count < Slots )
            word = layout::with_code( word, count++, code );
        else if ( spill )
            overflow.push( site, arrivals, code, move );
        ++arrivals;
    }
};

//! Up to Slots codes of one group of arrivals (the particles of one source that move the same way).
template <int Slots>
struct ArrivalGroup
{
    using layout = SiteLayout<Slots>;
    site_word codes = 0;
    int n = 0;
    KOKKOS_FORCEINLINE_FUNCTION void add( std::uint32_t code ) { codes = layout::with_code( codes, n++, code ); }
    template <class MemorySpace, class Overflow>
    KOKKOS_FORCEINLINE_FUNCTION void append_to( SiteBuilder<Slots, MemorySpace>& site, std::size_t gd, std::uint8_t move,
                                                const Overflow& overflow ) const
    {
        for ( int k = 0; k < n; ++k )
            site.append( layout::code( codes, k ), gd, move, true, overflow );
    }
};

/*!
  \brief The new word of split-pass destination gd (global index) from its arrival groups: the stayers
  first (they always fit), then the up-movers and the down-movers in the order of a coin from gd's hash
  when they do not all fit, the extras to the overflow list. The one definition of a site's arrival
  order, shared by the gather and the tiled kernels.
*/
template <int Axis, int Slots, class MemorySpace, class Overflow>
KOKKOS_FORCEINLINE_FUNCTION site_word assemble_split_site( SiteBuilder<Slots, MemorySpace>& site,
                                                           const ArrivalGroup<Slots>& stay, const ArrivalGroup<Slots>& up,
                                                           const ArrivalGroup<Slots>& down, std::size_t gd,
                                                           const core::HashedRng& rng, std::uint32_t step,
                                                           const Overflow& overflow )
{
    stay.append_to( site, gd, axis_move<Axis>( 0 ), overflow );
    const bool down_first = stay.n + up.n + down.n > Slots && ( rng.bits( gd, std::uint32_t( 24 + Axis ), step ) & 1u );
    if ( down_first )
        down.append_to( site, gd, axis_move<Axis>( -1 ), overflow );
    up.append_to( site, gd, axis_move<Axis>( 1 ), overflow );
    if ( !down_first )
        down.append_to( site, gd, axis_move<Axis>( -1 ), overflow );
    return site.word;
}

//! The 32 random bits of the particle in `slot` of `site` for a split pass along `axis`: one 64-bit
//! hash serves the two slots of a pair.
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t split_draw( const core::HashedRng& rng, std::size_t site, int axis,
                                                      int slot, std::uint32_t step )
{
    const std::uint64_t b = rng.bits( site, std::uint32_t( axis * 4 + slot / 2 ), step );
    return ( slot & 1 ) ? std::uint32_t( b ) : std::uint32_t( b >> 32 );
}

} // namespace morula::lattice::detail

#endif
