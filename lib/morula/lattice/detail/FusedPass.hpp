/*!
  \file detail/FusedPass.hpp
  \brief The gather fused pass, which defines the model's fused pass (the tiled kernel gives its result
  bit for bit): a particle's whole move of one step, and a destination's arrival order.
*/
#ifndef MORULA_LATTICE_DETAIL_FUSEDPASS_HPP
#define MORULA_LATTICE_DETAIL_FUSEDPASS_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/CubeSymmetry.hpp>
#include <morula/lattice/detail/Moves.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>
#include <morula/lattice/detail/SiteBuilder.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

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
        const site_word ws = in( index( sx, sy, sz ) );
        if ( !layout::empty( ws ) )
            gather_from_word( sx, sy, sz, ws, ox, oy, oz, gd, site, spill );
    }

    //! gather_from() with the source's word `ws` (not empty) loaded by the caller.
    KOKKOS_INLINE_FUNCTION void gather_from_word( int sx, int sy, int sz, const site_word ws, int ox, int oy, int oz,
                                                  std::size_t gd, SiteBuilder<Slots, MemorySpace>& site, bool spill ) const
    {
        const std::size_t s = index( sx, sy, sz );
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

} // namespace morula::lattice::detail

#endif
