/*!
  \file detail/DiffusionKernels.hpp
  \brief The kernels of LatticeDiffusion: split and fused passes, overflow placement, checks.

  Every pass is a gather: the thread of destination site d recomputes the moves of the particles on
  the sites that can reach d, and writes d's new word once. A particle's move is a pure function of
  (its site, slot, step, axis, seed) through the hashed RNG, so the thread of its old site and the
  threads of all its possible destinations compute the same move without talking to each other (the
  paper's apron recomputation), and the new lattice is a pure function of the old one.

  Arrivals are ordered (sources in a fixed order, then slots), so the slot a particle lands in is
  deterministic. When more particles arrive than the site holds, the extras are appended to an
  overflow list with a key (site, arrival rank) that makes them sortable into a deterministic order.
*/
#ifndef MORULA_LATTICE_DETAIL_DIFFUSIONKERNELS_HPP
#define MORULA_LATTICE_DETAIL_DIFFUSIONKERNELS_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::lattice::detail
{

//! Overflow list in device memory: (site << 8 | arrival rank) keys and particle codes. Its capacity is
//! the number of particles on the lattice, so even a pass in which every particle overflowed fits.
template <class MemorySpace>
struct OverflowList
{
    Kokkos::View<std::uint64_t*, MemorySpace> keys;
    Kokkos::View<std::uint32_t*, MemorySpace> codes;
    Kokkos::View<unsigned long long, MemorySpace> count;

    KOKKOS_INLINE_FUNCTION void push( std::size_t site, int rank, std::uint32_t code ) const
    {
        const unsigned long long i = Kokkos::atomic_fetch_add( &count(), 1ull );
        keys( i ) = ( std::uint64_t( site ) << 8 ) | std::uint64_t( rank );
        codes( i ) = code;
    }
};

//! Unwrapped displacement of every tracer in sites, indexed by tracer id; empty when not tracking.
template <class MemorySpace>
using DisplacementView = Kokkos::View<int* [3], MemorySpace>;

//! Builds a site's new word: arrivals are appended in order; extras go to the overflow list.
template <int Slots, class MemorySpace>
struct SiteBuilder
{
    using layout = SiteLayout<Slots>;
    site_word word;
    int count = 0;
    int rank = 0;

    KOKKOS_FORCEINLINE_FUNCTION void append( std::uint32_t code, std::size_t site,
                                             const OverflowList<MemorySpace>& overflow )
    {
        if ( count < Slots )
            word = layout::with_code( word, count++, code );
        else
            overflow.push( site, rank, code );
        ++rank;
    }
};

//! Calls pass(x, y, z) for flat site index i (x fastest), for the flat launch of a 3D pass.
template <class Pass>
KOKKOS_FORCEINLINE_FUNCTION void for_site_index( const Pass& pass, const int i, const int nx, const int ny )
{
    const int nxy = nx * ny;
    const int z = i / nxy;
    const int r = i - z * nxy;
    const int y = r / nx;
    pass( r - y * nx, y, z );
}

//! The 32 random bits of the particle in `slot` of `site` for a split pass along `axis`: one 64-bit
//! hash serves the two slots of a pair.
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t split_draw( const core::HashedRng& rng, std::size_t site, int axis,
                                                      int slot, std::uint32_t step )
{
    const std::uint64_t b = rng.bits( site, std::uint32_t( axis * 4 + slot / 2 ), step );
    return ( slot & 1 ) ? std::uint32_t( b ) : std::uint32_t( b >> 32 );
}

/*!
  \brief One split pass along Axis: every particle moves -1, 0 or +1 along Axis. Destination d gathers,
  in this order, the particles of its lower neighbour that move up, its own that stay (or whose move
  is refused by a wall or an obstacle), and those of its upper neighbour that move down.
*/
template <int Slots, int Axis, class MemorySpace>
struct SplitPass
{
    using layout = SiteLayout<Slots>;
    Kokkos::View<const site_word*, MemorySpace> in;
    Kokkos::View<site_word*, MemorySpace> out;
    DeviceRules<MemorySpace> rules;
    core::HashedRng rng;
    std::uint32_t step;
    int nx, ny, nz;
    bool periodic;
    bool tracking;
    DisplacementView<MemorySpace> displacement;
    OverflowList<MemorySpace> overflow;

    //! Flat launch (lattices below 2^31 sites): one index, decomposed x fastest.
    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const { for_site_index( *this, i, nx, ny ); }

    KOKKOS_INLINE_FUNCTION void operator()( const int x, const int y, const int z ) const
    {
        const int c = Axis == 0 ? x : Axis == 1 ? y : z;
        const int n = Axis == 0 ? nx : Axis == 1 ? ny : nz;
        const std::size_t stride = Axis == 0 ? 1 : Axis == 1 ? std::size_t( nx ) : std::size_t( nx ) * ny;
        const std::size_t d = std::size_t( x ) + std::size_t( nx ) * ( std::size_t( y ) + std::size_t( ny ) * z );
        const site_word wd = in( d );
        const std::uint32_t td = layout::type( wd );
        SiteBuilder<Slots, MemorySpace> site{ layout::empty_site( td ) };
        if ( rules.blocked( td ) ) // obstacles hold no particles and let none in
        {
            out( d ) = site.word;
            return;
        }
        const bool has_lower = c > 0 || periodic;
        const bool has_upper = c < n - 1 || periodic;
        const std::size_t lower = c > 0 ? d - stride : d + std::size_t( n - 1 ) * stride;
        const std::size_t upper = c < n - 1 ? d + stride : d - std::size_t( n - 1 ) * stride;
        const site_word wl = has_lower ? in( lower ) : layout::empty_site( 0 );
        const site_word wu = has_upper ? in( upper ) : layout::empty_site( 0 );

        // 1. Up-movers of the lower neighbour (d is open, so their moves succeed).
        if ( has_lower && !layout::empty( wl ) )
        {
            const std::uint32_t tl = layout::type( wl );
            for ( int k = 0; k < Slots; ++k )
            {
                const std::uint32_t code = layout::code( wl, k );
                if ( code == 0 )
                    break;
                if ( rules.move( code, tl, Axis, split_draw( rng, lower, Axis, k, step ) ) == 1 )
                {
                    site.append( code, d, overflow );
                    if ( tracking )
                        displacement( code, Axis ) += 1;
                }
            }
        }
        // 2. Own particles that stay, by choice or because the move is refused.
        if ( !layout::empty( wd ) )
        {
            const bool lower_open = has_lower && !rules.blocked( layout::type( wl ) );
            const bool upper_open = has_upper && !rules.blocked( layout::type( wu ) );
            for ( int k = 0; k < Slots; ++k )
            {
                const std::uint32_t code = layout::code( wd, k );
                if ( code == 0 )
                    break;
                const int m = rules.move( code, td, Axis, split_draw( rng, d, Axis, k, step ) );
                if ( m == 0 || ( m < 0 && !lower_open ) || ( m > 0 && !upper_open ) )
                    site.append( code, d, overflow );
            }
        }
        // 3. Down-movers of the upper neighbour.
        if ( has_upper && !layout::empty( wu ) )
        {
            const std::uint32_t tu = layout::type( wu );
            for ( int k = 0; k < Slots; ++k )
            {
                const std::uint32_t code = layout::code( wu, k );
                if ( code == 0 )
                    break;
                if ( rules.move( code, tu, Axis, split_draw( rng, upper, Axis, k, step ) ) == -1 )
                {
                    site.append( code, d, overflow );
                    if ( tracking )
                        displacement( code, Axis ) -= 1;
                }
            }
        }
        out( d ) = site.word;
    }
};

//! One coordinate of a move target: the new coordinate, or -1 if a reflecting face refuses the move.
KOKKOS_FORCEINLINE_FUNCTION int step_coordinate( int c, int m, int n, bool periodic )
{
    const int t = c + m;
    if ( t >= 0 && t < n )
        return t;
    return periodic ? ( t < 0 ? t + n : t - n ) : -1;
}

/*!
  \brief The fused pass: x, then y, then z moves of one time step in one sweep. Destination d visits
  the 27 sites around it in a fixed order and, for each of their particles, follows the three moves
  (each refused by a wall or an obstacle exactly as in the split passes, each drawn with the rules of
  the site the particle is on at that moment); a particle whose path ends at d is appended. The same
  Markov chain per particle as three split passes, with its own random stream (no intermediate
  overflows), so the statistics agree but the bits differ.
*/
template <int Slots, class MemorySpace>
struct FusedPass
{
    using layout = SiteLayout<Slots>;
    Kokkos::View<const site_word*, MemorySpace> in;
    Kokkos::View<site_word*, MemorySpace> out;
    DeviceRules<MemorySpace> rules;
    core::HashedRng rng;
    std::uint32_t step;
    int nx, ny, nz;
    bool periodic_x, periodic_y, periodic_z;
    bool tracking;
    DisplacementView<MemorySpace> displacement;
    OverflowList<MemorySpace> overflow;

    KOKKOS_FORCEINLINE_FUNCTION std::size_t index( int x, int y, int z ) const
    {
        return std::size_t( x ) + std::size_t( nx ) * ( std::size_t( y ) + std::size_t( ny ) * z );
    }

    // Is the move along an axis from a site to the neighbour `target` (an index, or -1 past a
    // reflecting face) allowed?
    KOKKOS_FORCEINLINE_FUNCTION bool open( int target_coordinate, std::size_t target ) const
    {
        return target_coordinate >= 0 && !rules.blocked( layout::type( in( target ) ) );
    }

    //! Flat launch (lattices below 2^31 sites): one index, decomposed x fastest.
    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const { for_site_index( *this, i, nx, ny ); }

    KOKKOS_INLINE_FUNCTION void operator()( const int x, const int y, const int z ) const
    {
        const std::size_t d = index( x, y, z );
        const site_word wd = in( d );
        const std::uint32_t td = layout::type( wd );
        SiteBuilder<Slots, MemorySpace> site{ layout::empty_site( td ) };
        if ( !rules.blocked( td ) )
        {
            for ( int oz = -1; oz <= 1; ++oz )
            {
                const int sz = step_coordinate( z, -oz, nz, periodic_z );
                if ( sz < 0 )
                    continue;
                for ( int oy = -1; oy <= 1; ++oy )
                {
                    const int sy = step_coordinate( y, -oy, ny, periodic_y );
                    if ( sy < 0 )
                        continue;
                    for ( int ox = -1; ox <= 1; ++ox )
                    {
                        const int sx = step_coordinate( x, -ox, nx, periodic_x );
                        if ( sx < 0 )
                            continue;
                        gather_from( sx, sy, sz, ox, oy, oz, x, y, z, d, site );
                    }
                }
            }
        }
        out( d ) = site.word;
    }

    // Appends the particles of source (sx, sy, sz) whose moves (ox, oy, oz) end at d = (x, y, z).
    KOKKOS_INLINE_FUNCTION void gather_from( int sx, int sy, int sz, int ox, int oy, int oz, int x, int y,
                                             int z, std::size_t d, SiteBuilder<Slots, MemorySpace>& site ) const
    {
        const std::size_t s = index( sx, sy, sz );
        const site_word ws = in( s );
        if ( layout::empty( ws ) )
            return;
        const std::uint32_t ts = layout::type( ws );
        for ( int k = 0; k < Slots; ++k )
        {
            const std::uint32_t code = layout::code( ws, k );
            if ( code == 0 )
                break;
            const std::uint64_t b = rng.bits( s, std::uint32_t( 16 + k ), step );
            // x: from (sx, sy, sz); the particle must end in column x.
            int m = rules.move( code, ts, 0, std::uint32_t( b >> 32 ) );
            if ( m != 0 )
            {
                const int tx = step_coordinate( sx, m, nx, periodic_x );
                if ( !open( tx, tx < 0 ? 0 : index( tx, sy, sz ) ) )
                    m = 0;
            }
            if ( m != ox )
                continue;
            // y: from (x, sy, sz).
            const std::uint32_t t1 = ox == 0 ? ts : layout::type( in( index( x, sy, sz ) ) );
            m = rules.move( code, t1, 1, std::uint32_t( b ) );
            if ( m != 0 )
            {
                const int ty = step_coordinate( sy, m, ny, periodic_y );
                if ( !open( ty, ty < 0 ? 0 : index( x, ty, sz ) ) )
                    m = 0;
            }
            if ( m != oy )
                continue;
            // z: from (x, y, sz), with 32 more bits from one more mixing round.
            const std::uint32_t t2 = oy == 0 ? t1 : layout::type( in( index( x, y, sz ) ) );
            m = rules.move( code, t2, 2, std::uint32_t( core::detail::ranhash64( b ^ 0x2545F4914F6CDD1DULL ) >> 32 ) );
            if ( m != 0 )
            {
                const int tz = step_coordinate( sz, m, nz, periodic_z );
                if ( !open( tz, tz < 0 ? 0 : index( x, y, tz ) ) )
                    m = 0;
            }
            if ( m != oz )
                continue;
            site.append( code, d, overflow );
            if ( tracking )
            {
                displacement( code, 0 ) += ox;
                displacement( code, 1 ) += oy;
                displacement( code, 2 ) += oz;
            }
        }
    }
};

/*!
  \brief Places the particles of the overflow list, on the device, in the order of their keys (site,
  arrival rank), each at the nearest site (the table `offsets`, sorted by distance and then by
  z, y, x) of the same type as its site with a free slot; if none is within the table, the next such
  site in index order, and failing that any open site with room. Runs as a single work item: overflows
  are the rare exception (seed 002, section 2.2), and one item makes the order, and so the result,
  independent of the backend. A heap sort brings the list (filled by atomics) into key order.
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
    int nx, ny, nz;
    bool periodic[3];
    bool tracking;
    DisplacementView<MemorySpace> displacement;

    KOKKOS_INLINE_FUNCTION void sift_down( std::size_t root, std::size_t n ) const
    {
        while ( 2 * root + 1 < n )
        {
            std::size_t child = 2 * root + 1;
            if ( child + 1 < n && overflow.keys( child + 1 ) > overflow.keys( child ) )
                ++child;
            if ( overflow.keys( root ) >= overflow.keys( child ) )
                return;
            const std::uint64_t k = overflow.keys( root );
            overflow.keys( root ) = overflow.keys( child );
            overflow.keys( child ) = k;
            const std::uint32_t c = overflow.codes( root );
            overflow.codes( root ) = overflow.codes( child );
            overflow.codes( child ) = c;
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

    KOKKOS_INLINE_FUNCTION void place( std::size_t d, std::uint32_t code ) const
    {
        const int x = int( d % std::size_t( nx ) );
        const int y = int( ( d / std::size_t( nx ) ) % std::size_t( ny ) );
        const int z = int( d / ( std::size_t( nx ) * ny ) );
        const std::uint32_t type = layout::type( sites( d ) );
        const int n[3] = { nx, ny, nz };
        for ( std::size_t o = 0; o < offsets.extent( 0 ); ++o )
        {
            int c[3] = { x, y, z };
            bool inside = true;
            for ( int a = 0; a < 3; ++a )
            {
                c[a] = step_coordinate( c[a], offsets( o, a ), n[a], periodic[a] );
                // an offset may exceed a short periodic extent: wrap once more
                while ( periodic[a] && ( c[a] < 0 || c[a] >= n[a] ) )
                    c[a] = c[a] < 0 ? c[a] + n[a] : c[a] - n[a];
                inside = inside && c[a] >= 0;
            }
            if ( inside && try_site( std::size_t( c[0] ) + std::size_t( nx ) * ( c[1] + std::size_t( ny ) * c[2] ),
                                     type, false, code ) )
            {
                if ( tracking )
                    for ( int a = 0; a < 3; ++a )
                        displacement( code, a ) += offsets( o, a );
                return;
            }
        }
        // Nothing near: scan in index order, first for the same type, then for any open site.
        const std::size_t total = sites.extent( 0 );
        for ( int pass = 0; pass < 2; ++pass )
            for ( std::size_t k = 1; k < total; ++k )
            {
                const std::size_t s = ( d + k ) % total;
                if ( try_site( s, type, pass == 1, code ) )
                {
                    if ( tracking )
                    {
                        const int sc[3] = { int( s % std::size_t( nx ) ), int( ( s / std::size_t( nx ) ) % std::size_t( ny ) ),
                                            int( s / ( std::size_t( nx ) * ny ) ) };
                        const int dc[3] = { x, y, z };
                        for ( int a = 0; a < 3; ++a )
                            displacement( code, a ) += minimum_image( sc[a] - dc[a], n[a], periodic[a] );
                    }
                    return;
                }
            }
        unplaced() += 1; // the lattice is full: cannot happen when the driver's capacity check holds
    }

    KOKKOS_INLINE_FUNCTION void operator()( const int ) const
    {
        const std::size_t n = std::size_t( overflow.count() );
        if ( n == 0 )
            return;
        for ( std::size_t i = n / 2; i-- > 0; )
            sift_down( i, n );
        for ( std::size_t end = n; end-- > 1; )
        {
            const std::uint64_t k = overflow.keys( 0 );
            overflow.keys( 0 ) = overflow.keys( end );
            overflow.keys( end ) = k;
            const std::uint32_t c = overflow.codes( 0 );
            overflow.codes( 0 ) = overflow.codes( end );
            overflow.codes( end ) = c;
            sift_down( 0, end );
        }
        for ( std::size_t i = 0; i < n; ++i )
            place( std::size_t( overflow.keys( i ) >> 8 ), overflow.codes( i ) );
        total_overflows() += n;
        overflow.count() = 0;
    }
};

} // namespace morula::lattice::detail

#endif
