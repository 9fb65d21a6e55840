/*!
  \file detail/DiffusionKernels.hpp
  \brief The kernels of LatticeDiffusion: split and fused passes, overflow placement, checks.

  Every pass is a gather: the thread of destination site d recomputes the moves of the particles on
  the sites that can reach d, and writes d's new word once. A particle's move is a pure function of
  (its site, slot, step, axis, seed) through the hashed RNG, so the thread of its old site and the
  threads of all its possible destinations compute the same move without talking to each other (the
  paper's apron recomputation), and the new lattice is a pure function of the old one.

  Arrivals are ordered (sources in a fixed order, then slots), so the slot a particle lands in is
  deterministic. When more particles arrive than the site holds, the site's own particles that stay
  keep their slots and the incoming ones are taken in an order drawn from the site's hash (a random
  reflection of the axis in a split pass, one of the 48 symmetries of the cube in the fused pass), so
  no direction of arrival is favoured; the extras go to an overflow list with a key (site, arrival
  rank) that makes them sortable into a deterministic order, and with the move that brought them, so
  that the placement can send each back to the site it came from (the move is rejected, as in a
  lattice gas with exclusion).
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

//! Overflow list in device memory: (site << 8 | arrival rank) keys, particle codes and the move that
//! brought each particle to the site. Its capacity is the number of particles on the lattice, so even
//! a pass in which every particle overflowed fits. The counter is 32 bits: on the H100 a contended
//! 64-bit atomic add on one address took 5.8 us, a 32-bit one 2 ns (benchmarks/results/
//! lattice_h100_log_2026-11-25.txt); LatticeDiffusion refuses more than 2^32 - 1 particles.
template <class MemorySpace>
struct OverflowList
{
    Kokkos::View<std::uint64_t*, MemorySpace> keys;
    Kokkos::View<std::uint32_t*, MemorySpace> codes;
    Kokkos::View<std::uint8_t*, MemorySpace> moves;
    Kokkos::View<unsigned int, MemorySpace> count;

    KOKKOS_INLINE_FUNCTION void push( std::size_t site, int rank, std::uint32_t code, std::uint8_t move ) const
    {
        const unsigned int i = Kokkos::atomic_fetch_add( &count(), 1u );
        keys( i ) = ( std::uint64_t( site ) << 8 ) | std::uint64_t( rank );
        codes( i ) = code;
        moves( i ) = move;
    }
};

//! Unwrapped displacement of every tracer in sites, indexed by tracer id; empty when not tracking.
template <class MemorySpace>
using DisplacementView = Kokkos::View<int* [3], MemorySpace>;

/*!
  \brief The tracers of a lattice: codes from first_code on carry one particle each and have their
  unwrapped displacement kept; lower codes are species codes (particles without ids, which crowd but
  are not followed). Empty view: no tracers.
*/
template <class MemorySpace>
struct TracerDisplacements
{
    DisplacementView<MemorySpace> view;
    std::uint32_t first_code = 1;

    KOKKOS_FORCEINLINE_FUNCTION bool tracks( std::uint32_t code ) const
    {
        return code >= first_code && view.extent( 0 ) > 0;
    }
    KOKKOS_FORCEINLINE_FUNCTION void add( std::uint32_t code, int dx, int dy, int dz ) const
    {
        if ( tracks( code ) )
        {
            view( code, 0 ) += dx;
            view( code, 1 ) += dy;
            view( code, 2 ) += dz;
        }
    }
    template <int Axis>
    KOKKOS_FORCEINLINE_FUNCTION void add_along( std::uint32_t code, int m ) const
    {
        if ( tracks( code ) )
            view( code, Axis ) += m;
    }
};

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

/*!
  \brief Which z planes of a lattice one set of arrays holds: the whole lattice (one rank), or a slab with
  ghost planes on each side (DistributedLatticeDiffusion). Local plane p is global plane z_first + p,
  wrapped on a periodic axis; the passes write local planes [owned_begin, owned_end).

  Every kernel keys its random draws and overflow entries on global site indices, so a slab computes
  bit for bit what the whole lattice computes for the same sites.
*/
struct SlabWindow
{
    int nz = 0;          //!< planes of the whole lattice
    int z_first = 0;     //!< global z of local plane 0 (negative below the first slab of a periodic axis)
    int planes = 0;      //!< local planes stored
    int owned_begin = 0; //!< first local plane this rank updates
    int owned_end = 0;   //!< one past the last
    bool periodic = true;
    bool whole = true; //!< the arrays hold the whole axis: neighbours wrap locally

    static SlabWindow whole_axis( int nz, bool periodic ) { return { nz, 0, nz, 0, nz, periodic, true }; }

    KOKKOS_FORCEINLINE_FUNCTION int owned_planes() const { return owned_end - owned_begin; }

    //! Global z of local plane p (wrapped into [0, nz) on a periodic axis).
    KOKKOS_FORCEINLINE_FUNCTION int global_z( int p ) const
    {
        const int g = z_first + p;
        return g < 0 ? g + nz : ( g >= nz ? g - nz : g );
    }

    //! Local plane one step m (-1, 0 or +1) along z from local plane p, or -1 where a reflecting face
    //! refuses the move.
    KOKKOS_FORCEINLINE_FUNCTION int neighbor( int p, int m ) const
    {
        const int g = z_first + p + m;
        if ( !periodic && ( g < 0 || g >= nz ) )
            return -1;
        const int t = p + m;
        if ( !whole )
            return t; // a slab's ghost planes hold the neighbours
        return t < 0 ? t + nz : ( t >= nz ? t - nz : t );
    }

    //! Local plane that holds global plane gz (in [0, nz)), or -1 if these arrays do not hold it.
    KOKKOS_FORCEINLINE_FUNCTION int local_of_global( int gz ) const
    {
        int p = gz - z_first;
        if ( periodic && !whole )
            p = p < 0 ? p + nz : ( p >= nz ? p - nz : p );
        return p >= 0 && p < planes ? p : -1;
    }
};

/*!
  \brief Builds a site's new word: arrivals are appended in order. While `spill` is false, arrivals past
  the last slot are only counted (the first sweep of the fused pass); with `spill` they go to the
  overflow list with their arrival rank and move.
*/
template <int Slots, class MemorySpace>
struct SiteBuilder
{
    using layout = SiteLayout<Slots>;
    site_word word;
    int count = 0;
    int arrivals = 0;

    KOKKOS_FORCEINLINE_FUNCTION void append( std::uint32_t code, std::size_t site, std::uint8_t move, bool spill,
                                             const OverflowList<MemorySpace>& overflow )
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
    template <class MemorySpace>
    KOKKOS_FORCEINLINE_FUNCTION void append_to( SiteBuilder<Slots, MemorySpace>& site, std::size_t gd, std::uint8_t move,
                                                const OverflowList<MemorySpace>& overflow ) const
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
template <int Axis, int Slots, class MemorySpace>
KOKKOS_FORCEINLINE_FUNCTION site_word assemble_split_site( SiteBuilder<Slots, MemorySpace>& site,
                                                           const ArrivalGroup<Slots>& stay, const ArrivalGroup<Slots>& up,
                                                           const ArrivalGroup<Slots>& down, std::size_t gd,
                                                           const core::HashedRng& rng, std::uint32_t step,
                                                           const OverflowList<MemorySpace>& overflow )
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

//! Calls pass(x, y, p) for flat site index i over the owned planes (x fastest), p the local plane: the
//! flat launch of a 3D pass.
template <class Pass>
KOKKOS_FORCEINLINE_FUNCTION void for_site_index( const Pass& pass, const int i, const int nx, const int ny,
                                                 const int first_plane )
{
    const int nxy = nx * ny;
    const int z = i / nxy;
    const int r = i - z * nxy;
    const int y = r / nx;
    pass( r - y * nx, y, first_plane + z );
}

//! Added to a local site index of local plane p, gives its global index (modulo 2^64 arithmetic: the
//! offset is negative for the ghost planes below a periodic lattice's first slab).
KOKKOS_FORCEINLINE_FUNCTION std::size_t global_offset( const SlabWindow& w, int p, std::size_t plane )
{
    return std::size_t( std::int64_t( w.global_z( p ) - p ) * std::int64_t( plane ) );
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
  in this order, its own particles that stay (or whose move is refused by a wall or an obstacle), the
  particles of its lower neighbour that move up, and those of its upper neighbour that move down.
  When they do not all fit, a coin drawn from d's hash decides whether the up-movers or the
  down-movers come first: the ones that do not fit go to the overflow list, and neither direction of
  arrival is favoured. The stayers always fit (they were on d).
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
    int nx, ny;
    SlabWindow window;
    bool periodic; //!< along Axis (for z, window.periodic decides)
    TracerDisplacements<MemorySpace> tracers;
    OverflowList<MemorySpace> overflow;

    //! Flat launch (owned sites below 2^31): one index, decomposed x fastest.
    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        for_site_index( *this, i, nx, ny, window.owned_begin );
    }

    //! Destination (x, y) on local plane p.
    KOKKOS_INLINE_FUNCTION void operator()( const int x, const int y, const int p ) const
    {
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        const std::size_t column = std::size_t( x ) + std::size_t( nx ) * std::size_t( y );
        const std::size_t d = column + plane * std::size_t( p );
        // One rank (the whole lattice): local and global indices coincide, and the arithmetic below is
        // that of a single lattice; the branch is uniform over the launch.
        const std::size_t offset = window.whole ? 0 : global_offset( window, p, plane );
        const site_word wd = in( d );
        const std::uint32_t td = layout::type( wd );
        SiteBuilder<Slots, MemorySpace> site{ layout::empty_site( td ) };
        if ( rules.blocked( td ) ) // obstacles hold no particles and let none in
        {
            out( d ) = site.word;
            return;
        }
        // Local indices address the arrays; global ones key the random moves and the overflow list.
        bool has_lower, has_upper;
        std::size_t lower = d, upper = d, g_lower = 0, g_upper = 0;
        if constexpr ( Axis == 2 )
        {
            if ( window.whole )
            {
                const int n = window.nz;
                has_lower = p > 0 || window.periodic;
                has_upper = p < n - 1 || window.periodic;
                lower = p > 0 ? d - plane : d + std::size_t( n - 1 ) * plane;
                upper = p < n - 1 ? d + plane : d - std::size_t( n - 1 ) * plane;
                g_lower = lower;
                g_upper = upper;
            }
            else
            {
                const int pl = window.neighbor( p, -1 );
                const int pu = window.neighbor( p, 1 );
                has_lower = pl >= 0;
                has_upper = pu >= 0;
                if ( has_lower )
                {
                    lower = column + plane * std::size_t( pl );
                    g_lower = lower + global_offset( window, pl, plane );
                }
                if ( has_upper )
                {
                    upper = column + plane * std::size_t( pu );
                    g_upper = upper + global_offset( window, pu, plane );
                }
            }
        }
        else
        {
            const int c = Axis == 0 ? x : y;
            const int n = Axis == 0 ? nx : ny;
            const std::size_t stride = Axis == 0 ? 1 : std::size_t( nx );
            has_lower = c > 0 || periodic;
            has_upper = c < n - 1 || periodic;
            lower = c > 0 ? d - stride : d + std::size_t( n - 1 ) * stride;
            upper = c < n - 1 ? d + stride : d - std::size_t( n - 1 ) * stride;
            g_lower = lower + offset;
            g_upper = upper + offset;
        }
        const std::size_t gd = d + offset;
        const site_word wl = has_lower ? in( lower ) : layout::empty_site( 0 );
        const site_word wu = has_upper ? in( upper ) : layout::empty_site( 0 );

        // Up-movers of the lower neighbour (d is open, so their moves succeed), counted as moved.
        ArrivalGroup<Slots> up, stay, down;
        if ( has_lower && !layout::empty( wl ) )
        {
            const std::uint32_t tl = layout::type( wl );
            for ( int k = 0; k < Slots; ++k )
            {
                const std::uint32_t code = layout::code( wl, k );
                if ( code == 0 )
                    break;
                if ( rules.move( code, tl, Axis, split_draw( rng, g_lower, Axis, k, step ) ) == 1 )
                {
                    up.add( code );
                    tracers.template add_along<Axis>( code, 1 );
                }
            }
        }
        // Own particles that stay, by choice or because the move is refused.
        if ( !layout::empty( wd ) )
        {
            const bool lower_open = has_lower && !rules.blocked( layout::type( wl ) );
            const bool upper_open = has_upper && !rules.blocked( layout::type( wu ) );
            for ( int k = 0; k < Slots; ++k )
            {
                const std::uint32_t code = layout::code( wd, k );
                if ( code == 0 )
                    break;
                const int m = rules.move( code, td, Axis, split_draw( rng, gd, Axis, k, step ) );
                if ( m == 0 || ( m < 0 && !lower_open ) || ( m > 0 && !upper_open ) )
                    stay.add( code );
            }
        }
        // Down-movers of the upper neighbour.
        if ( has_upper && !layout::empty( wu ) )
        {
            const std::uint32_t tu = layout::type( wu );
            for ( int k = 0; k < Slots; ++k )
            {
                const std::uint32_t code = layout::code( wu, k );
                if ( code == 0 )
                    break;
                if ( rules.move( code, tu, Axis, split_draw( rng, g_upper, Axis, k, step ) ) == -1 )
                {
                    down.add( code );
                    tracers.template add_along<Axis>( code, -1 );
                }
            }
        }
        out( d ) = assemble_split_site<Axis>( site, stay, up, down, gd, rng, step, overflow );
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
  \brief The move (o[0], o[1], o[2]) of one particle of the fused pass, drawn from its 64-bit hash `b`:
  x, then y, then z, each with the rules of the site the particle is on at that moment (type `ts` at
  the source (sx, sy, sz)), each refused (0) where the target is past a reflecting face or blocked. The
  one definition shared by the gather (FusedPass, which gives `want` and stops as soon as a component
  differs from it: false) and the tiled pass (which draws every particle's whole move once). `nb` gives
  the sites around the source: nb.coordinate_after( axis, c, m ), the coordinate one move m from c
  along axis or -1 where there is none, and nb.type_at( x, y, z ).
*/
template <class Rules, class Neighbourhood>
KOKKOS_FORCEINLINE_FUNCTION bool fused_move( const Rules& rules, const std::uint64_t b, const std::uint32_t code,
                                            const std::uint32_t ts, const Neighbourhood& nb, const int sx,
                                            const int sy, const int sz, const int* want, int o[3] )
{
    // x: from (sx, sy, sz)
    int m = rules.move( code, ts, 0, std::uint32_t( b >> 32 ) );
    int x = sx;
    if ( m != 0 )
    {
        const int tx = nb.coordinate_after( 0, sx, m );
        if ( tx < 0 || rules.blocked( nb.type_at( tx, sy, sz ) ) )
            m = 0;
        else
            x = tx;
    }
    if ( want && m != want[0] )
        return false;
    o[0] = m;
    // y: from (x, sy, sz)
    const std::uint32_t t1 = m == 0 ? ts : nb.type_at( x, sy, sz );
    m = rules.move( code, t1, 1, std::uint32_t( b ) );
    int y = sy;
    if ( m != 0 )
    {
        const int ty = nb.coordinate_after( 1, sy, m );
        if ( ty < 0 || rules.blocked( nb.type_at( x, ty, sz ) ) )
            m = 0;
        else
            y = ty;
    }
    if ( want && m != want[1] )
        return false;
    o[1] = m;
    // z: from (x, y, sz), with 32 more bits from one more mixing round
    const std::uint32_t t2 = m == 0 ? t1 : nb.type_at( x, y, sz );
    m = rules.move( code, t2, 2, std::uint32_t( core::detail::ranhash64( b ^ 0x2545F4914F6CDD1DULL ) >> 32 ) );
    if ( m != 0 )
    {
        const int tz = nb.coordinate_after( 2, sz, m );
        if ( tz < 0 || rules.blocked( nb.type_at( x, y, tz ) ) )
            m = 0;
    }
    if ( want && m != want[2] )
        return false;
    o[2] = m;
    return true;
}

/*!
  \brief The new word of fused-pass destination gd (global index, word `wd`): the one definition of a
  site's arrival order, shared by the gather and the tiled kernels. `gather( ox, oy, oz, site, spill )`
  appends the particles of the source one move (ox, oy, oz) before the destination whose move is that
  move (and, with spill false, counts their displacements). First sweep: the 27 sources in a fixed
  order. If more arrive than fit, a second sweep: the site's own stayers first, then its 26 neighbours
  in the fixed order transformed by a symmetry of the cube drawn from the site's hash; the extras go
  to the overflow list.
*/
template <int Slots, class MemorySpace, class Gather>
KOKKOS_FORCEINLINE_FUNCTION site_word fused_destination( const DeviceRules<MemorySpace>& rules,
                                                         const core::HashedRng& rng, const std::uint32_t step,
                                                         const site_word wd, const std::size_t gd, const Gather& gather )
{
    using layout = SiteLayout<Slots>;
    const std::uint32_t td = layout::type( wd );
    SiteBuilder<Slots, MemorySpace> site{ layout::empty_site( td ) };
    if ( rules.blocked( td ) )
        return site.word;
    for ( int oz = -1; oz <= 1; ++oz )
        for ( int oy = -1; oy <= 1; ++oy )
            for ( int ox = -1; ox <= 1; ++ox )
                gather( ox, oy, oz, site, false );
    if ( site.arrivals > Slots )
    {
        site = SiteBuilder<Slots, MemorySpace>{ layout::empty_site( td ) };
        gather( 0, 0, 0, site, true );
        const CubeSymmetry g( rng.bits( gd, 40u, step ) );
        for ( int bz = -1; bz <= 1; ++bz )
            for ( int by = -1; by <= 1; ++by )
                for ( int bx = -1; bx <= 1; ++bx )
                {
                    if ( !bx && !by && !bz )
                        continue;
                    const int b[3] = { bx, by, bz };
                    int o[3];
                    g.apply( b, o );
                    gather( o[0], o[1], o[2], site, true );
                }
    }
    return site.word;
}

/*!
  \brief The fused pass: x, then y, then z moves of one time step in one sweep. Destination d visits
  the 27 sites around it in a fixed order and, for each of their particles, follows the three moves
  (each refused by a wall or an obstacle exactly as in the split passes, each drawn with the rules of
  the site the particle is on at that moment); a particle whose path ends at d is appended. The same
  Markov chain per particle as three split passes, with its own random stream (no intermediate
  overflows), so the statistics agree but the bits differ.

  A site that receives more particles than it holds is gathered a second time: its own particles that
  stay first, then its 26 neighbours in the fixed order transformed by a symmetry of the cube drawn
  from the site's hash, so that the particles that do not fit (and go to the overflow list) come from
  no preferred direction. Displacements are counted in the first sweep only.
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
    int nx, ny;
    SlabWindow window; //!< z: local planes, their global numbers, the z boundary
    bool periodic_x, periodic_y;
    TracerDisplacements<MemorySpace> tracers;
    OverflowList<MemorySpace> overflow;

    //! Local index of (x, y) on local plane p.
    KOKKOS_FORCEINLINE_FUNCTION std::size_t index( int x, int y, int p ) const
    {
        return std::size_t( x ) + std::size_t( nx ) * ( std::size_t( y ) + std::size_t( ny ) * p );
    }

    //! Flat launch (owned sites below 2^31): one index, decomposed x fastest.
    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const
    {
        for_site_index( *this, i, nx, ny, window.owned_begin );
    }

    //! Destination (x, y) on local plane p.
    KOKKOS_INLINE_FUNCTION void operator()( const int x, const int y, const int p ) const
    {
        const std::size_t d = index( x, y, p );
        const std::size_t gd = d + global_offset( window, p, std::size_t( nx ) * std::size_t( ny ) );
        out( d ) = fused_destination<Slots>(
            rules, rng, step, in( d ), gd,
            [&]( int ox, int oy, int oz, SiteBuilder<Slots, MemorySpace>& site, bool spill ) {
                gather_from_offset( ox, oy, oz, x, y, p, gd, site, spill );
            } );
    }

    //! @{ The neighbourhood of fused_move(): local coordinates, z as local planes.
    KOKKOS_FORCEINLINE_FUNCTION int coordinate_after( int axis, int c, int m ) const
    {
        return axis == 0 ? step_coordinate( c, m, nx, periodic_x )
                         : ( axis == 1 ? step_coordinate( c, m, ny, periodic_y ) : window.neighbor( c, m ) );
    }
    KOKKOS_FORCEINLINE_FUNCTION std::uint32_t type_at( int x, int y, int p ) const
    {
        return layout::type( in( index( x, y, p ) ) );
    }
    //! @}

    // The particles of the source one move (ox, oy, oz) before d = (x, y, local plane p), if that
    // source exists (not past a reflecting face).
    KOKKOS_FORCEINLINE_FUNCTION void gather_from_offset( int ox, int oy, int oz, int x, int y, int p, std::size_t gd,
                                                         SiteBuilder<Slots, MemorySpace>& site, bool spill ) const
    {
        const int sz = window.neighbor( p, -oz );
        const int sy = step_coordinate( y, -oy, ny, periodic_y );
        const int sx = step_coordinate( x, -ox, nx, periodic_x );
        if ( sz >= 0 && sy >= 0 && sx >= 0 )
            gather_from( sx, sy, sz, ox, oy, oz, gd, site, spill );
    }

    // Appends the particles of source (sx, sy, local plane sz) whose moves (ox, oy, oz) end at the
    // destination, global index gd. A source on a ghost plane may look one plane further out for its
    // z move: a slab keeps three ghost planes, whose site types are always valid. The first sweep
    // (spill false) counts the displacements.
    KOKKOS_INLINE_FUNCTION void gather_from( int sx, int sy, int sz, int ox, int oy, int oz, std::size_t gd,
                                             SiteBuilder<Slots, MemorySpace>& site, bool spill ) const
    {
        const std::size_t s = index( sx, sy, sz );
        const site_word ws = in( s );
        if ( layout::empty( ws ) )
            return;
        const std::size_t gs = s + global_offset( window, sz, std::size_t( nx ) * std::size_t( ny ) );
        const std::uint32_t ts = layout::type( ws );
        const int want[3] = { ox, oy, oz };
        for ( int k = 0; k < Slots; ++k )
        {
            const std::uint32_t code = layout::code( ws, k );
            if ( code == 0 )
                break;
            int o[3];
            if ( !fused_move( rules, rng.bits( gs, std::uint32_t( 16 + k ), step ), code, ts, *this, sx, sy, sz, want, o ) )
                continue;
            site.append( code, gd, encode_move( ox, oy, oz ), spill, overflow );
            if ( !spill )
                tracers.add( code, ox, oy, oz );
        }
    }
};

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
  that any open site with room. Runs as a single work item: overflows are the rare exception (seed 002,
  section 2.2), and one item makes the order, and so the result, independent of the backend. A heap
  sort brings the list (filled by atomics) into key order, ascending or, when `descending` (a coin per
  pass, placement_descending()), descending, and the index-order scan runs the same way: entries placed
  earlier take the free slots near them, so a fixed order would push later relocations towards higher
  indices (+x, +y, +z; measured before the coin: a drift of 0.009 sites per step along z at 1.6
  particles per site with 2 slots). Alternating at random makes the order a point reflection of itself.

  On a slab (window.whole false) the table's reach (one plane to the origin, two more around it) stays
  inside the slab's three ghost planes; the index-order scan needs every slab, so the kernel stops at an
  entry whose table has no room and reports it in next_entry; DistributedLatticeDiffusion runs that
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

    KOKKOS_INLINE_FUNCTION void sift_down( std::size_t root, std::size_t n ) const
    {
        while ( 2 * root + 1 < n )
        {
            std::size_t child = 2 * root + 1;
            if ( child + 1 < n && overflow.keys( child + 1 ) > overflow.keys( child ) )
                ++child;
            if ( overflow.keys( root ) >= overflow.keys( child ) )
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

    //! Places entry i (its particle overflowed at a global site); returns the global destination.
    KOKKOS_INLINE_FUNCTION std::uint64_t place( std::size_t i ) const
    {
        const std::uint64_t key = overflow.keys( i );
        const std::uint32_t code = overflow.codes( i );
        const std::uint8_t move = overflow.moves( i );
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        const int n[3] = { nx, ny, window.nz };
        // The move is undone first; a placement elsewhere adds its offset from the origin.
        tracers.add( code, -move_component( move, 0 ), -move_component( move, 1 ), -move_component( move, 2 ) );
        const std::uint64_t origin = move_origin( key >> 8, move, nx, ny, window.nz );
        const int x = int( origin % std::uint64_t( nx ) );
        const int y = int( ( origin / std::uint64_t( nx ) ) % std::uint64_t( ny ) );
        const int z = int( origin / plane );
        const std::size_t column = std::size_t( x ) + std::size_t( nx ) * std::size_t( y );
        const std::size_t s = column + plane * std::size_t( window.local_of_global( z ) );
        const std::uint32_t type = layout::type( sites( s ) );
        const CubeSymmetry g( rng.bits( key, 48u + pass, step ) );
        for ( std::size_t o = 0; o < offsets.extent( 0 ); ++o )
        {
            const int base[3] = { offsets( o, 0 ), offsets( o, 1 ), offsets( o, 2 ) };
            int off[3];
            g.apply( base, off );
            int c[3] = { x, y, z };
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
            const std::size_t local = std::size_t( c[0] ) + std::size_t( nx ) * std::size_t( c[1] ) + plane * std::size_t( lz );
            if ( lz >= 0 && try_site( local, type, false, code ) )
            {
                tracers.add( code, off[0], off[1], off[2] );
                return std::size_t( c[0] ) + std::size_t( nx ) * std::size_t( c[1] ) + plane * std::size_t( c[2] );
            }
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
        if ( first_entry == 0 )
            sort( n );
        const bool record = placed.extent( 0 ) > 0;
        for ( std::size_t i = first_entry; i < n; ++i )
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

/*!
  \brief Replays placements made elsewhere (global site, code), in order, on the sites of local planes
  [first_plane, last_plane): each code is appended to its site's first empty slot, exactly as
  PlaceOverflow wrote it. Entries elsewhere, or marked not placed, are skipped; an entry that finds its site full (impossible when every rank replays
  the same log in the same order) is counted in `conflicts`. A single work item keeps the order.
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

    KOKKOS_INLINE_FUNCTION void operator()( const int ) const
    {
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        for ( std::size_t i = begin; i < end; ++i )
        {
            const std::uint64_t g = site_of_entry( i );
            if ( g == ~std::uint64_t( 0 ) ) // an entry that could not be placed
                continue;
            const int lz = window.local_of_global( int( g / plane ) );
            if ( lz < first_plane || lz >= last_plane )
                continue;
            const std::size_t s = std::size_t( g % plane ) + plane * std::size_t( lz );
            const site_word w = sites( s );
            const int n = layout::count( w );
            if ( n == Slots )
                conflicts() += 1;
            else
                sites( s ) = layout::with_code( w, n, code_of_entry( i ) );
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
