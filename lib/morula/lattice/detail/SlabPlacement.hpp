/*!
  \file detail/SlabPlacement.hpp
  \brief What the placement on a slab of a distributed lattice adds to the single-rank one: replaying
  the placements made on other slabs, the index-order scan over one slab, and a displacement made by a
  caller.
*/
#ifndef MORULA_LATTICE_DETAIL_SLABPLACEMENT_HPP
#define MORULA_LATTICE_DETAIL_SLABPLACEMENT_HPP

#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

/*!
  \brief Replays placements made elsewhere (global site, code), in order, on the sites of local planes
  [first_plane, last_plane): each code is appended to its site's first empty slot, exactly as
  PlaceOverflow wrote it. Entries elsewhere, or marked not placed, are skipped; an entry that finds its
  site full (impossible when every rank replays the same log in the same order) is counted in
  `conflicts`. Two launches: a parallel scan numbers the entries that land here, in log order
  (ReplayPlacements::Select), then a single work item appends them in that order, which keeps each
  site's slots in log order. Another rank's entries land here only within three planes of its faces, so
  the sequential part is a small share of the log (a single work item that walked the whole log of a
  crowded slab, hundreds of thousands of entries of dependent loads, took a large part of a step).
*/
template <int Slots, class MemorySpace>
struct ReplayPlacements
{
    using layout = SiteLayout<Slots>;
    Kokkos::View<site_word*, MemorySpace> sites;
    Kokkos::View<const std::uint64_t*, MemorySpace> site_of_entry;
    Kokkos::View<const std::uint32_t*, MemorySpace> code_of_entry;
    std::size_t begin, end;
    int nx, ny;
    SlabWindow window;
    int first_plane, last_plane; //!< local planes [first, last) that take replayed entries
    Kokkos::View<unsigned long long, MemorySpace> conflicts;
    Kokkos::View<std::size_t*, MemorySpace> selected; //!< log indices of the entries that land here, in order
    Kokkos::View<std::size_t, MemorySpace> count;     //!< how many

    //! The local site of log entry i, or ~0 when it lands elsewhere or was not placed.
    KOKKOS_INLINE_FUNCTION std::size_t local_site( const std::size_t i ) const
    {
        const std::uint64_t g = site_of_entry( i );
        if ( g == ~std::uint64_t( 0 ) ) // an entry that could not be placed
            return ~std::size_t( 0 );
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        const int lz = window.local_of_global( int( g / plane ) );
        if ( lz < first_plane || lz >= last_plane )
            return ~std::size_t( 0 );
        return std::size_t( g % plane ) + plane * std::size_t( lz );
    }

    //! The scan: entry begin + k is selected when it lands here.
    struct Select
    {
        ReplayPlacements r;
        KOKKOS_INLINE_FUNCTION void operator()( const std::size_t k, std::size_t& update, const bool final ) const
        {
            const std::size_t i = r.begin + k;
            const std::size_t flag = r.local_site( i ) != ~std::size_t( 0 ) ? 1 : 0;
            if ( final && flag )
                r.selected( update ) = i;
            update += flag;
            if ( final && i + 1 == r.end )
                r.count() = update;
        }
    };

    //! The appends, in log order (one work item).
    KOKKOS_INLINE_FUNCTION void operator()( const int ) const
    {
        const std::size_t n = count();
        for ( std::size_t k = 0; k < n; ++k )
        {
            const std::size_t i = selected( k );
            const std::size_t s = local_site( i );
            const site_word w = sites( s );
            const int c = layout::count( w );
            if ( c == Slots )
                conflicts() += 1;
            else
                sites( s ) = layout::with_code( w, c, code_of_entry( i ) );
        }
    }
};

/*!
  \brief Min-reduction over the owned sites of a lattice (local indices): the cyclic distance k >= 0 of the
  first global site (site + 1 + k) mod total (descending: (site - 1 - k) mod total) of `type` (or of any
  open type) with a free slot, as PlaceOverflow's index-order scan would meet it.
*/
template <int Slots, class MemorySpace>
struct FirstFreeAfter
{
    using layout = SiteLayout<Slots>;
    Kokkos::View<const site_word*, MemorySpace> sites;
    int nx, ny;
    SlabWindow window;
    std::uint64_t site;
    std::uint64_t total;
    std::uint32_t type;
    bool any_open;
    std::uint32_t blocked_types;
    bool descending; //!< the scan runs (site - 1 - k) mod total instead

    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i, std::uint64_t& best ) const
    {
        const site_word w = sites( i );
        const std::uint32_t t = layout::type( w );
        if ( ( any_open ? ( ( blocked_types >> t ) & 1u ) != 0 : t != type ) || layout::count( w ) == Slots )
            return;
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        const int p = int( i / plane );
        const std::uint64_t g = std::uint64_t( i % plane ) + std::uint64_t( plane ) * std::uint64_t( window.global_z( p ) );
        if ( g == site )
            return;
        const std::uint64_t k = descending ? ( site + total - g - 1 ) % total : ( g + total - site - 1 ) % total;
        if ( k < best )
            best = k;
    }
};

//! displacement(code, :) += (dx, dy, dz), one work item.
template <class MemorySpace>
struct AddDisplacement
{
    DisplacementView<MemorySpace> displacement;
    std::uint32_t code;
    int dx, dy, dz;
    KOKKOS_INLINE_FUNCTION void operator()( const int ) const
    {
        displacement( code, 0 ) += dx;
        displacement( code, 1 ) += dy;
        displacement( code, 2 ) += dz;
    }
};

} // namespace morula::lattice::detail

#endif
