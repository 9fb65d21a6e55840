/*!
  \file detail/PlaceOverflow.hpp
  \brief The placement of overflowed particles after a pass: back to their origin, else to the nearest
  site with room, in a deterministic order.
*/
#ifndef MORULA_LATTICE_DETAIL_PLACEOVERFLOW_HPP
#define MORULA_LATTICE_DETAIL_PLACEOVERFLOW_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/CubeSymmetry.hpp>
#include <morula/lattice/detail/Moves.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace morula::lattice::detail
{

//! The offsets searched for a free site around the origin of a rejected move: the 125 sites of the
//! 5^3 cube, the origin itself first, nearest first (squared distance, then z, y, x; the placement
//! applies a random symmetry of the cube to this order). Two sites around an origin at most one plane
//! from the overflowing site stay within a slab's three ghost planes.
inline std::vector<std::array<int, 3>> overflow_search_offsets()
{
    std::vector<std::array<int, 3>> o;
    for ( int z = -2; z <= 2; ++z )
        for ( int y = -2; y <= 2; ++y )
            for ( int x = -2; x <= 2; ++x )
                o.push_back( { x, y, z } );
    std::stable_sort( o.begin(), o.end(), []( const auto& a, const auto& b ) {
        const int da = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
        const int db = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
        return da < db;
    } );
    return o;
}

//! Whether the placement after `pass` (0-2 split, 3 fused) of `step` runs in descending key order: a coin
//! from the hash, the same on every rank and backend.
KOKKOS_INLINE_FUNCTION bool placement_descending( const core::HashedRng& rng, std::uint32_t step, std::uint32_t pass )
{
    return ( rng.bits( 0x5A17ull, 56u + pass, step ) >> 40 ) & 1u;
}

/*!
  \brief Places the particles of the overflow list, on the device, in the order of their keys (site,
  arrival rank). An overflowed particle's move is rejected: it goes back to the site it came from (its
  origin), with its displacement corrected. If the origin has filled meanwhile, it goes to the nearest
  site of the origin's type with a free slot: the table `offsets` (the 5^3 cube around the origin, by
  distance) in an order transformed by a symmetry of the cube drawn from the entry's hash, so that no
  direction is preferred; if none is within the table, the next such site in index order, and failing
  that any open site with room. Runs as a single work item: overflows are the rare exception (Roberts et al. 2009,
  section 2.2), and one item makes the order, and so the result, independent of the backend. A heap
  sort brings the list (filled by atomics) into key order, ascending or, when `descending` (a coin per
  pass, placement_descending()), descending, and the index-order scan runs the same way: entries placed
  earlier take the free slots near them, so a fixed order would push later relocations towards higher
  indices (+x, +y, +z), a drift that was measurable on crowded lattices before the coin
  (docs/performance.md, "Design choices measured (moved from source comments, issue #46)"). Alternating
  at random makes the order a point reflection of itself.

  On a slab (window.whole false) the table's reach (one plane to the origin, two more around it) stays
  inside the slab's three ghost planes; the index-order scan needs every slab, so the kernel stops at an
  entry whose table has no room and reports it in next_entry; LatticeDiffusion on slabs runs that
  scan over all ranks, places the entry and resumes the kernel at first_entry = next_entry + 1. With
  `placed` non-empty, entry i's global destination is recorded in placed(i), in key order, for the
  placement log.
*/
template <int Slots, class MemorySpace>
struct PlaceOverflow
{
    using layout = SiteLayout<Slots>;
    Kokkos::View<site_word*, MemorySpace> sites;
    OverflowList<MemorySpace> overflow;
    Kokkos::View<const int* [3], MemorySpace> offsets;
    Kokkos::View<unsigned long long, MemorySpace> total_overflows;
    Kokkos::View<unsigned long long, MemorySpace> unplaced;
    std::uint32_t blocked_types;
    int nx, ny;
    SlabWindow window;
    bool periodic[3]; //!< periodic[2] equals window.periodic
    TracerDisplacements<MemorySpace> tracers;
    core::HashedRng rng;
    std::uint32_t step;
    std::uint32_t pass;                                //!< 0, 1, 2: the split pass's axis; 3: fused
    bool descending;                                   //!< entries and the scan in descending index order
    Kokkos::View<std::uint64_t*, MemorySpace> placed; // may be empty
    std::size_t first_entry = 0;                       //!< resume here (the list is sorted when 0)
    Kokkos::View<std::size_t, MemorySpace> next_entry; //!< the list's size, or the entry that stopped
    //! Set by the parallel placement (OverflowSweeps.hpp), which sorts the list itself and hands single
    //! entries, or the rest, to this kernel: entries [first_entry, last_entry) only.
    bool presorted = false;
    std::size_t last_entry = ~std::size_t( 0 );

    static constexpr std::uint64_t not_placed = ~std::uint64_t( 0 );

    KOKKOS_INLINE_FUNCTION void swap_entries( std::size_t i, std::size_t j ) const
    {
        const std::uint64_t k = overflow.keys( i );
        overflow.keys( i ) = overflow.keys( j );
        overflow.keys( j ) = k;
        const std::uint32_t c = overflow.codes( i );
        overflow.codes( i ) = overflow.codes( j );
        overflow.codes( j ) = c;
        const std::uint8_t m = overflow.moves( i );
        overflow.moves( i ) = overflow.moves( j );
        overflow.moves( j ) = m;
    }

    //! Whether entry i comes before entry j: by key, and, for one key twice (a list gathered over several
    //! passes without placement), by code and move, the order the parallel sort gives such ties.
    KOKKOS_INLINE_FUNCTION bool before( std::size_t i, std::size_t j ) const
    {
        const std::uint64_t a = overflow.keys( i ), b = overflow.keys( j );
        if ( a != b )
            return a < b;
        return ( ( std::uint64_t( overflow.codes( i ) ) << 8 ) | overflow.moves( i ) ) <
               ( ( std::uint64_t( overflow.codes( j ) ) << 8 ) | overflow.moves( j ) );
    }

    KOKKOS_INLINE_FUNCTION void sift_down( std::size_t root, std::size_t n ) const
    {
        while ( 2 * root + 1 < n )
        {
            std::size_t child = 2 * root + 1;
            if ( child + 1 < n && before( child, child + 1 ) )
                ++child;
            if ( !before( root, child ) )
                return;
            swap_entries( root, child );
            root = child;
        }
    }

    KOKKOS_INLINE_FUNCTION bool try_site( std::size_t s, std::uint32_t type, bool any_open,
                                          std::uint32_t code ) const
    {
        const site_word w = sites( s );
        const std::uint32_t t = layout::type( w );
        if ( ( any_open ? ( ( blocked_types >> t ) & 1u ) != 0 : t != type ) )
            return false;
        const int n = layout::count( w );
        if ( n == Slots )
            return false;
        sites( s ) = layout::with_code( w, n, code );
        return true;
    }

    KOKKOS_INLINE_FUNCTION int minimum_image( int delta, int n, bool wrap ) const
    {
        if ( wrap )
        {
            if ( 2 * delta > n )
                delta -= n;
            else if ( 2 * delta < -n )
                delta += n;
        }
        return delta;
    }

    //! Where the particle of an entry came from: global coordinates, its local site and that site's type.
    struct Origin
    {
        int c[3];
        std::size_t local;
        std::uint32_t type;
    };

    //! A free slot found by the nearest-site table: its place in the table, the local and global site, its
    //! global coordinates and its offset from the origin.
    struct Room
    {
        int table;
        std::size_t local;
        std::uint64_t global;
        int c[3];
        int off[3];
    };

    KOKKOS_INLINE_FUNCTION Origin origin_of( std::size_t i ) const
    {
        const std::uint64_t origin = move_origin( overflow.keys( i ) >> 8, overflow.moves( i ), nx, ny, window.nz );
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        Origin o;
        o.c[0] = int( origin % std::uint64_t( nx ) );
        o.c[1] = int( ( origin / std::uint64_t( nx ) ) % std::uint64_t( ny ) );
        o.c[2] = int( origin / plane );
        o.local = std::size_t( o.c[0] ) + std::size_t( nx ) * std::size_t( o.c[1] ) +
                  plane * std::size_t( window.local_of_global( o.c[2] ) );
        o.type = layout::type( sites( o.local ) );
        return o;
    }

    //! Every free slot counts (the sequential kernel's view: the sites hold every earlier placement).
    struct AnyFreeSlot
    {
        KOKKOS_INLINE_FUNCTION bool operator()( std::size_t, int ) const { return true; }
    };

    /*!
      The first site of the nearest-site table of entry i (its origin o) that has o's type and a free slot
      now, and that `has_room( local site, free slots )` accepts; false if none. Reads only: the parallel
      placement (OverflowSweeps.hpp) passes a predicate that counts the slots earlier entries claim.
    */
    template <class HasRoom>
    KOKKOS_INLINE_FUNCTION bool find_room_if( std::size_t i, const Origin& o, Room& room, const HasRoom& has_room ) const
    {
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        const int n[3] = { nx, ny, window.nz };
        const CubeSymmetry g( rng.bits( overflow.keys( i ), 48u + pass, step ) );
        for ( std::size_t t = 0; t < offsets.extent( 0 ); ++t )
        {
            const int base[3] = { offsets( t, 0 ), offsets( t, 1 ), offsets( t, 2 ) };
            int off[3];
            g.apply( base, off );
            int c[3] = { o.c[0], o.c[1], o.c[2] };
            bool inside = true;
            for ( int a = 0; a < 3; ++a )
            {
                c[a] = step_coordinate( c[a], off[a], n[a], periodic[a] );
                // an offset may exceed a short periodic extent: wrap once more
                while ( periodic[a] && ( c[a] < 0 || c[a] >= n[a] ) )
                    c[a] = c[a] < 0 ? c[a] + n[a] : c[a] - n[a];
                inside = inside && c[a] >= 0;
            }
            const int lz = inside ? window.local_of_global( c[2] ) : -1;
            if ( lz < 0 )
                continue;
            const std::size_t local = std::size_t( c[0] ) + std::size_t( nx ) * std::size_t( c[1] ) + plane * std::size_t( lz );
            const site_word w = sites( local );
            if ( layout::type( w ) != o.type || layout::count( w ) == Slots || !has_room( local, Slots - layout::count( w ) ) )
                continue;
            room.table = int( t );
            room.local = local;
            room.global = std::size_t( c[0] ) + std::size_t( nx ) * std::size_t( c[1] ) + plane * std::size_t( c[2] );
            for ( int a = 0; a < 3; ++a )
            {
                room.c[a] = c[a];
                room.off[a] = off[a];
            }
            return true;
        }
        return false;
    }

    KOKKOS_INLINE_FUNCTION bool find_room( std::size_t i, const Origin& o, Room& room ) const
    {
        return find_room_if( i, o, room, AnyFreeSlot{} );
    }

    //! The offset from the origin of entry i's table position `table` (its symmetry of the cube applied).
    KOKKOS_INLINE_FUNCTION void table_offset( std::size_t i, int table, int* off ) const
    {
        const CubeSymmetry g( rng.bits( overflow.keys( i ), 48u + pass, step ) );
        const int base[3] = { offsets( table, 0 ), offsets( table, 1 ), offsets( table, 2 ) };
        g.apply( base, off );
    }

    //! Places entry i (its particle overflowed at a global site); returns the global destination.
    KOKKOS_INLINE_FUNCTION std::uint64_t place( std::size_t i ) const
    {
        const std::uint32_t code = overflow.codes( i );
        const std::uint8_t move = overflow.moves( i );
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        const int n[3] = { nx, ny, window.nz };
        // The move is undone first; a placement elsewhere adds its offset from the origin.
        tracers.add( code, -move_component( move, 0 ), -move_component( move, 1 ), -move_component( move, 2 ) );
        const Origin o = origin_of( i );
        const int x = o.c[0], y = o.c[1], z = o.c[2];
        const std::size_t s = o.local;
        const std::uint32_t type = o.type;
        Room room;
        if ( find_room( i, o, room ) )
        {
            try_site( room.local, type, false, code );
            tracers.add( code, room.off[0], room.off[1], room.off[2] );
            return room.global;
        }
        if ( !window.whole )
            return not_placed; // the caller runs the index-order scan over all slabs
        // Nothing near: scan in index order, first for the same type, then for any open site.
        const std::size_t total = sites.extent( 0 );
        for ( int scan = 0; scan < 2; ++scan )
            for ( std::size_t k = 1; k < total; ++k )
            {
                const std::size_t t = descending ? ( s + total - k ) % total : ( s + k ) % total;
                if ( try_site( t, type, scan == 1, code ) )
                {
                    const int tc[3] = { int( t % std::size_t( nx ) ), int( ( t / std::size_t( nx ) ) % std::size_t( ny ) ),
                                        int( t / plane ) };
                    tracers.add( code, minimum_image( tc[0] - x, n[0], periodic[0] ),
                                 minimum_image( tc[1] - y, n[1], periodic[1] ),
                                 minimum_image( tc[2] - z, n[2], periodic[2] ) );
                    return t;
                }
            }
        unplaced() += 1; // the lattice is full: cannot happen when the driver's capacity check holds
        return not_placed;
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int ) const
    {
        const std::size_t n = std::size_t( overflow.count() );
        if ( n == 0 )
        {
            next_entry() = 0;
            return;
        }
        if ( first_entry == 0 && !presorted )
            sort( n );
        const bool record = placed.extent( 0 ) > 0;
        const std::size_t end = last_entry < n ? last_entry : n;
        for ( std::size_t i = first_entry; i < end; ++i )
        {
            const std::uint64_t to = place( i );
            if ( to == not_placed && !window.whole )
            {
                next_entry() = i; // stop: entry i needs the scan over all slabs
                return;
            }
            if ( record )
                placed( i ) = to;
        }
        if ( end < n )
        {
            next_entry() = end;
            return;
        }
        next_entry() = n;
        total_overflows() += n;
        overflow.count() = 0u;
    }

    KOKKOS_INLINE_FUNCTION void sort( const std::size_t n ) const
    {
        for ( std::size_t i = n / 2; i-- > 0; )
            sift_down( i, n );
        for ( std::size_t end = n; end-- > 1; )
        {
            swap_entries( 0, end );
            sift_down( 0, end );
        }
        if ( descending )
            for ( std::size_t i = 0; i < n / 2; ++i )
                swap_entries( i, n - 1 - i );
    }
};

} // namespace morula::lattice::detail

#endif
