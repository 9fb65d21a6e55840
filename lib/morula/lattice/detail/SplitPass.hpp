/*!
  \file detail/SplitPass.hpp
  \brief The gather split pass, which defines the model's split passes (the compacted and tiled
  kernels give its result bit for bit).

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
*/
#ifndef MORULA_LATTICE_DETAIL_SPLITPASS_HPP
#define MORULA_LATTICE_DETAIL_SPLITPASS_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>
#include <morula/lattice/detail/SiteBuilder.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

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
    static constexpr int axis = Axis;
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
    KOKKOS_INLINE_FUNCTION void operator()( const int x, const int y, const int p ) const { site( x, y, p, overflow ); }

    //! Destination (x, y) on local plane p, its overflow entries to `sink` (the list, or a team's buffer of
    //! it: TeamOverflowBuffer).
    template <class Overflow>
    KOKKOS_INLINE_FUNCTION void site( const int x, const int y, const int p, const Overflow& sink ) const
    {
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        const std::size_t column = std::size_t( x ) + std::size_t( nx ) * std::size_t( y );
        const std::size_t d = column + plane * std::size_t( p );
        // One rank (the whole lattice): local and global indices coincide, and the arithmetic below is
        // that of a single lattice; the branch is uniform over the launch.
        const std::size_t offset = window.whole ? 0 : global_offset( window, p, plane );
        const site_word wd = in( d );
        const std::uint32_t td = layout::type( wd );
        SiteBuilder<Slots, MemorySpace> builder{ layout::empty_site( td ) };
        if ( rules.blocked( td ) ) // obstacles hold no particles and let none in
        {
            out( d ) = builder.word;
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
        out( d ) = assemble_split_site<Axis>( builder, stay, up, down, gd, rng, step, sink );
    }
};

} // namespace morula::lattice::detail

#endif
