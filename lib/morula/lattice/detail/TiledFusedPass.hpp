/*!
  \file detail/TiledFusedPass.hpp
  \brief The tiled fused pass (issue #22): each particle's move drawn once per 3D box of destinations;
  the result is bit for bit that of the gather FusedPass (FusedPass.hpp), which defines the model.

  Only the whole lattice (SlabWindow::whole): a slab of a distributed lattice keeps the gather.
*/
#ifndef MORULA_LATTICE_DETAIL_TILEDFUSEDPASS_HPP
#define MORULA_LATTICE_DETAIL_TILEDFUSEDPASS_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/FusedPass.hpp>
#include <morula/lattice/detail/Moves.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>
#include <morula/lattice/detail/SiteBuilder.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace morula::lattice::detail
{

/*!
  \brief The fused pass over the whole lattice in 3D tiles (issue #22): team t takes a box of up to
  tile[0] x tile[1] x tile[2] destinations, loads the box and its one-site apron (absent past a
  reflecting face) into team scratch once, draws the whole move of every particle in it once
  (fused_move, the gather's definition), and then assembles every destination from the 27 scratch
  entries around it in the gather's order (fused_destination). The gather hashes each particle up to 27
  times and loads 27 words per destination; here an apron site is loaded and hashed once per tile
  that touches it: (t0 + 2)(t1 + 2)(t2 + 2) / (t0 t1 t2) of the work, 2.0 for 32 x 8 x 4 tiles.

  A particle's move is kept as 5 bits per slot: encode_move() when the move ends inside the box, else
  `elsewhere` (its destination belongs to another team, or is not known from the box alone: an apron
  particle moving outwards along one axis is stopped at the box's edge by coordinate_after(), which
  changes nothing inside the box). An occupancy mask per scratch row (bit x set when site x holds a
  particle) lets a destination with no particle among its 27 sources (most of them at the paper's
  occupancies) write its empty word without reading its neighbours. The result is bit for bit the
  gather FusedPass.
*/
template <int Slots, class ExecutionSpace>
struct TiledFusedPass
{
    using memory_space = typename ExecutionSpace::memory_space;
    using layout = SiteLayout<Slots>;
    using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
    //! 5 bits per slot
    using move_word = typename std::conditional<( Slots > 6 ), std::uint64_t, std::uint32_t>::type;
    template <class T>
    using scratch = Kokkos::View<T*, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    static constexpr std::uint32_t elsewhere = 31u;
    static constexpr int max_box_x = 62; //!< tile[0] + 2 apron sites fit a 64-bit row mask

    Kokkos::View<const site_word*, memory_space> in;
    Kokkos::View<site_word*, memory_space> out;
    DeviceRules<memory_space> rules;
    core::HashedRng rng;
    std::uint32_t step;
    int n[3];
    bool periodic[3];
    TracerDisplacements<memory_space> tracers;
    OverflowList<memory_space> overflow;
    int tile[3];

    KOKKOS_FORCEINLINE_FUNCTION int tiles( int a ) const { return ( n[a] + tile[a] - 1 ) / tile[a]; }
    int league() const { return tiles( 0 ) * tiles( 1 ) * tiles( 2 ); }
    KOKKOS_INLINE_FUNCTION int scratch_sites() const { return ( tile[0] + 2 ) * ( tile[1] + 2 ) * ( tile[2] + 2 ); }
    std::size_t scratch_bytes() const
    {
        return scratch<site_word>::shmem_size( scratch_sites() ) + scratch<move_word>::shmem_size( scratch_sites() ) +
               scratch<std::uint64_t>::shmem_size( ( tile[1] + 2 ) * ( tile[2] + 2 ) );
    }

    //! One box of the launch: its origin (the global coordinates of box entry 1 on each axis) and extents.
    struct Box
    {
        int origin[3];
        int len[3];
        int h[3]; //!< len + 2: scratch entries per axis, the apron included

        //! Global coordinate of box entry l along axis a, or -1 past a reflecting face.
        KOKKOS_FORCEINLINE_FUNCTION int global( const TiledFusedPass& pass, int a, int l ) const
        {
            const int g = origin[a] + l - 1;
            if ( g >= 0 && g < pass.n[a] )
                return g;
            return pass.periodic[a] ? ( g < 0 ? g + pass.n[a] : g - pass.n[a] ) : -1;
        }
        KOKKOS_FORCEINLINE_FUNCTION int entry( int x, int y, int z ) const { return x + h[0] * ( y + h[1] * z ); }
    };

    //! The neighbourhood of fused_move() in box coordinates.
    struct BoxNeighbourhood
    {
        const TiledFusedPass& pass;
        const Box& box;
        const scratch<site_word>& words;
        KOKKOS_FORCEINLINE_FUNCTION int coordinate_after( int a, int c, int m ) const
        {
            const int t = c + m;
            return t >= 0 && t < box.h[a] && box.global( pass, a, t ) >= 0 ? t : -1;
        }
        KOKKOS_FORCEINLINE_FUNCTION std::uint32_t type_at( int x, int y, int z ) const
        {
            return layout::type( words( box.entry( x, y, z ) ) );
        }
    };

    KOKKOS_FORCEINLINE_FUNCTION std::size_t global_index( int gx, int gy, int gz ) const
    {
        return std::size_t( gx ) + std::size_t( n[0] ) * ( std::size_t( gy ) + std::size_t( n[1] ) * std::size_t( gz ) );
    }

    KOKKOS_INLINE_FUNCTION void operator()( const member_type& team ) const
    {
        Box box;
        int r = team.league_rank();
        for ( int a = 0; a < 3; ++a )
        {
            const int t = tiles( a );
            const int b = r % t;
            r /= t;
            box.origin[a] = b * tile[a];
            box.len[a] = n[a] - box.origin[a] < tile[a] ? n[a] - box.origin[a] : tile[a];
            box.h[a] = box.len[a] + 2;
        }
        const int sites = box.h[0] * box.h[1] * box.h[2];
        const int rows = box.h[1] * box.h[2];
        scratch<site_word> words( team.team_scratch( 0 ), scratch_sites() );
        scratch<move_word> moves( team.team_scratch( 0 ), scratch_sites() );
        scratch<std::uint64_t> occupied( team.team_scratch( 0 ), ( tile[1] + 2 ) * ( tile[2] + 2 ) );
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, rows ), [&]( const int row ) { occupied( row ) = 0; } );
        team.team_barrier();
        // The box and its apron: words (absent sites empty), row masks.
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, sites ), [&]( const int e ) {
            const int row = e / box.h[0];
            const int x = e - row * box.h[0];
            const int gx = box.global( *this, 0, x ), gy = box.global( *this, 1, row % box.h[1] ),
                      gz = box.global( *this, 2, row / box.h[1] );
            site_word w = layout::empty_site( 0 );
            if ( gx >= 0 && gy >= 0 && gz >= 0 )
            {
                w = in( global_index( gx, gy, gz ) );
                if ( !layout::empty( w ) )
                    Kokkos::atomic_fetch_or( &occupied( row ), std::uint64_t( 1 ) << x );
            }
            words( e ) = w;
        } );
        team.team_barrier();
        // Every particle's move, once.
        const BoxNeighbourhood nb{ *this, box, words };
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, sites ), [&]( const int e ) {
            const site_word w = words( e );
            move_word mw = 0;
            if ( !layout::empty( w ) )
            {
                const int row = e / box.h[0];
                const int x = e - row * box.h[0], y = row % box.h[1], z = row / box.h[1];
                const std::size_t gs = global_index( box.global( *this, 0, x ), box.global( *this, 1, y ),
                                                     box.global( *this, 2, z ) );
                const std::uint32_t ts = layout::type( w );
                for ( int k = 0; k < Slots; ++k )
                {
                    const std::uint32_t code = layout::code( w, k );
                    if ( code == 0 )
                        break;
                    int o[3];
                    fused_move( rules, rng.bits( gs, std::uint32_t( 16 + k ), step ), code, ts, nb, x, y, z, nullptr, o );
                    const int f[3] = { x + o[0], y + o[1], z + o[2] };
                    const bool inside = f[0] >= 1 && f[0] <= box.len[0] && f[1] >= 1 && f[1] <= box.len[1] &&
                                        f[2] >= 1 && f[2] <= box.len[2];
                    mw |= move_word( inside ? encode_move( o[0], o[1], o[2] ) : elsewhere ) << ( 5 * k );
                }
            }
            moves( e ) = mw;
        } );
        team.team_barrier();
        // Every destination of the box, x fastest.
        const int interior = box.len[0] * box.len[1] * box.len[2];
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, interior ), [&]( const int i ) {
            const int row = i / box.len[0];
            const int x = i - row * box.len[0] + 1, y = row % box.len[1] + 1, z = row / box.len[1] + 1;
            const site_word wd = words( box.entry( x, y, z ) );
            const std::size_t d = global_index( box.origin[0] + x - 1, box.origin[1] + y - 1, box.origin[2] + z - 1 );
            std::uint64_t near = 0;
            for ( int dz = -1; dz <= 1; ++dz )
                for ( int dy = -1; dy <= 1; ++dy )
                    near |= occupied( ( y + dy ) + box.h[1] * ( z + dz ) );
            if ( ( ( near >> ( x - 1 ) ) & 7u ) == 0 )
            {
                out( d ) = layout::empty_site( layout::type( wd ) );
                return;
            }
            out( d ) = fused_destination<Slots>(
                rules, rng, step, wd, d,
                [&]( int ox, int oy, int oz, SiteBuilder<Slots, memory_space>& site, bool spill ) {
                    const int e = box.entry( x - ox, y - oy, z - oz );
                    const site_word ws = words( e );
                    if ( layout::empty( ws ) )
                        return; // also a source past a reflecting face
                    const move_word mw = moves( e );
                    const std::uint32_t want = encode_move( ox, oy, oz );
                    for ( int k = 0; k < Slots; ++k )
                    {
                        const std::uint32_t code = layout::code( ws, k );
                        if ( code == 0 )
                            break;
                        if ( std::uint32_t( mw >> ( 5 * k ) ) % 32u != want )
                            continue;
                        site.append( code, d, std::uint8_t( want ), spill, overflow );
                        if ( !spill )
                            tracers.add( code, ox, oy, oz );
                    }
                } );
        } );
    }
};

} // namespace morula::lattice::detail

#endif
