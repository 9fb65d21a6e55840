/*!
  \file detail/CompactedKernels.hpp
  \brief Compacted split passes (issue #22): the gather SplitPass (SplitPass.hpp), which defines
  the model, run only at the sites where something can happen.

  A destination whose own word and whose two neighbours' words along the axis hold no particle keeps
  its word: nobody leaves, nobody arrives (an obstacle holds no particle, so this covers obstacles too).
  At the occupancies the seed paper recommends (0.0015-0.41 particles per site) most sites are such
  quiet sites. The gather still pays for them what it pays for a busy site: three loads and the tests,
  one 4-byte load in flight per thread, too few bytes in flight to reach the memory roof of a GPU, and a
  warp that holds one busy site runs the whole particle path while its other lanes wait.

  Here a work item takes a quad: 4 consecutive sites of one row (x0 a multiple of 4, so a quad is one
  aligned 16-byte load). It loads its own quad and the quads (or the two apron words along x) of its
  neighbours, writes its quiet sites at once (one 16-byte store when all four are quiet), and appends its
  busy sites to a queue in team scratch (a scratch counter gives each its place). After a barrier
  the team's threads take the queued sites one each, converged, and run the gather's own code for them.
  The lattice, the overflow entries and the tracer displacements are therefore those of the gather by
  construction (the overflow list's order is free; displacements are integer sums).

  Crowded lattices (issue #48): a team gathers its overflow entries in scratch and appends them to the
  list with one atomic add (TeamOverflowBuffer, PassOutputs.hpp; when: SlabDiffusion::team_buffer_min_fill,
  with its measurements). On an H200 at 60% of 2 slots (12M overflow entries per step on 33.5M sites): 11.1
  against 14.3-14.4 ms per step. Drawing each quad's moves once into scratch on 2D tiles of quads (so that
  a busy site reads its neighbours' moves instead of drawing them) was measured too and dropped: at most
  1% faster than the buffer alone at 60% of 2 and 4 slots, 8% slower at 60% of 8, 1.5-1.7x slower on
  sparse lattices (docs/performance.md, "Crowded split passes").

  Needs nx a multiple of 4 and 16-byte aligned arrays (LatticeDiffusion checks, and keeps the gather
  otherwise). Works on a slab of a distributed lattice as well (the gather's window arithmetic).
*/
#ifndef MORULA_LATTICE_DETAIL_COMPACTEDKERNELS_HPP
#define MORULA_LATTICE_DETAIL_COMPACTEDKERNELS_HPP

#include <morula/core/FastDivisor.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/lattice/detail/FusedPass.hpp>
#include <morula/lattice/detail/SplitPass.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::lattice::detail
{

//! Four consecutive site words, loaded and stored as one 16-byte access.
struct alignas( 16 ) SiteQuad
{
    site_word w[4];
};

KOKKOS_FORCEINLINE_FUNCTION SiteQuad load_quad( const site_word* p ) { return *reinterpret_cast<const SiteQuad*>( p ); }
KOKKOS_FORCEINLINE_FUNCTION void store_quad( site_word* p, const SiteQuad& q ) { *reinterpret_cast<SiteQuad*>( p ) = q; }

//! Whether the compacted kernels can run on these arrays: rows of whole quads, 16-byte aligned.
template <class View>
bool quads_fit( int nx, const View& a, const View& b )
{
    return nx % 4 == 0 && reinterpret_cast<std::uintptr_t>( a.data() ) % 16 == 0 &&
           reinterpret_cast<std::uintptr_t>( b.data() ) % 16 == 0;
}

//! Quads (4 sites of a row, x0 a multiple of 4) of a window's owned planes.
KOKKOS_FORCEINLINE_FUNCTION std::size_t quads_of( int nx, int ny, const SlabWindow& window )
{
    return std::size_t( nx / 4 ) * std::size_t( ny ) * std::size_t( window.owned_planes() );
}

/*!
  \brief Coordinates of a flat index over planes of rows (x fastest): x, y and the plane's rank. The
  compacted kernels decompose an index per quad and per busy site; a 64-bit division is a subroutine of
  dozens of instructions on a GPU, so while the indices fit 32 bits (every rank below 2^32 sites) the
  quotients come from core::FastDivisor, beyond it from the division.
*/
struct RowMajorIndex
{
    core::FastDivisor row_length; //!< nx (sites), or nx / 4 (quads)
    core::FastDivisor rows;       //!< ny
    bool fits_32_bits = true;     //!< every index < 2^32

    static RowMajorIndex of( int row_length, int ny, std::size_t count )
    {
        return { core::FastDivisor( std::uint32_t( row_length ) ), core::FastDivisor( std::uint32_t( ny ) ),
                 count <= ( std::size_t( 1 ) << 32 ) };
    }

    KOKKOS_FORCEINLINE_FUNCTION void coordinates( const std::size_t i, int& x, int& y, int& plane ) const
    {
        if ( fits_32_bits )
        {
            const std::uint32_t n = std::uint32_t( i );
            const std::uint32_t row = row_length.quotient( n );
            const std::uint32_t z = rows.quotient( row );
            x = int( row_length.remainder( n, row ) );
            y = int( rows.remainder( row, z ) );
            plane = int( z );
        }
        else
        {
            const std::size_t row = i / row_length.divisor();
            x = int( i - row * row_length.divisor() );
            y = int( row % rows.divisor() );
            plane = int( row / rows.divisor() );
        }
    }
};

/*!
  \brief The busy sites of a team's quads, run converged: quads [first, first + count) with first =
  league rank x team size x quads_per_thread; busy_of( q ) returns quad q's busy sites as bits 0-3 (and
  may write its quiet ones), consecutive quads on consecutive threads so that every load and store of a
  warp is contiguous; the busy sites are queued in team scratch (a scratch counter hands out the places:
  the queue's order is free, every site's result being a function of the lattice before the pass), then
  run( d ) takes them one per thread, d the site's owned-plane index. Scratch: scratch_bytes().
*/
template <class ExecutionSpace>
struct TeamBusyQueue
{
    using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
    using queue_view = Kokkos::View<int*, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

    //! Teams for `quads` quads.
    static int league( int team_size, int quads_per_thread, std::size_t quads )
    {
        const std::size_t per_team = std::size_t( team_size ) * std::size_t( quads_per_thread );
        return int( ( quads + per_team - 1 ) / per_team );
    }
    static std::size_t scratch_bytes( int team_size, int quads_per_thread )
    {
        return queue_view::shmem_size( 4 * team_size * quads_per_thread ) + queue_view::shmem_size( 1 );
    }

    template <class BusyOf, class Run>
    KOKKOS_INLINE_FUNCTION static void run( const member_type& team, const int quads_per_thread, const std::size_t quads,
                                            const BusyOf& busy_of, const Run& run_site )
    {
        const int size = team.team_size();
        queue_view queue( team.team_scratch( 0 ), 4 * size * quads_per_thread );
        queue_view queued( team.team_scratch( 0 ), 1 );
        Kokkos::single( Kokkos::PerTeam( team ), [&]() { queued( 0 ) = 0; } );
        team.team_barrier();
        const std::size_t per_team = std::size_t( size ) * std::size_t( quads_per_thread );
        const std::size_t first = std::size_t( team.league_rank() ) * per_team;
        const int count = int( quads - first < per_team ? quads - first : per_team );
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, count ), [&]( const int k ) {
            const unsigned busy = busy_of( first + std::size_t( k ) );
            for ( int j = 0; j < 4; ++j )
                if ( ( busy >> j ) & 1u )
                    queue( Kokkos::atomic_fetch_add( &queued( 0 ), 1 ) ) = 4 * k + j;
        } );
        team.team_barrier();
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, queued( 0 ) ),
                              [&]( const int e ) { run_site( 4 * first + std::size_t( queue( e ) ) ); } );
    }
};

/*!
  \brief The compacted split pass along Axis. `Buffered`: overflow entries gathered per team in scratch
  (crowded lattices); a separate kernel, so that the sparse one keeps its registers and scratch (with the
  buffer's code in the sparse kernel too, sparse steps were 4-12% slower on an H200).
*/
template <int Slots, int Axis, class ExecutionSpace, bool Buffered = false>
struct CompactedSplitPass
{
    using memory_space = typename ExecutionSpace::memory_space;
    using layout = SiteLayout<Slots>;
    using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

    SplitPass<Slots, Axis, memory_space> gather; //!< defines every busy site's word
    int quads_per_thread;                        //!< quads per thread of a team
    unsigned int overflow_capacity;              //!< overflow entries a team gathers in scratch (Buffered)
    RowMajorIndex sites;                         //!< owned-plane site indices: RowMajorIndex::of( nx, ny, sites )

    KOKKOS_FORCEINLINE_FUNCTION std::size_t plane() const { return std::size_t( gather.nx ) * std::size_t( gather.ny ); }
    //! Quads of the owned planes.
    KOKKOS_FORCEINLINE_FUNCTION std::size_t quads() const
    {
        return quads_of( gather.nx, gather.ny, gather.window );
    }
    int league( int team_size ) const { return TeamBusyQueue<ExecutionSpace>::league( team_size, quads_per_thread, quads() ); }
    std::size_t scratch_bytes( int team_size ) const
    {
        return ( Buffered ? TeamOverflowBuffer<ExecutionSpace>::scratch_bytes( overflow_capacity ) : 0 ) +
               TeamBusyQueue<ExecutionSpace>::scratch_bytes( team_size, quads_per_thread );
    }

    KOKKOS_FORCEINLINE_FUNCTION static bool occupied( site_word w ) { return !layout::empty( w ); }

    /*!
      Quad q of the owned planes: writes its quiet sites and returns its busy ones as bits 0-3. The
      owned-plane index of site j of the quad is 4 q + j.
    */
    KOKKOS_INLINE_FUNCTION unsigned quad( const std::size_t q ) const
    {
        const int nx = gather.nx, ny = gather.ny;
        int x0, y, p; // of the quad's first site, owned-plane index 4 q
        sites.coordinates( 4 * q, x0, y, p );
        p += gather.window.owned_begin;
        const std::size_t base = std::size_t( x0 ) + std::size_t( nx ) * ( std::size_t( y ) + std::size_t( ny ) * std::size_t( p ) );
        const site_word* in = gather.in.data();
        const SiteQuad own = load_quad( in + base );
        // occupancy of each site and of its two neighbours along the axis
        unsigned busy = 0;
        if constexpr ( Axis == 0 )
        {
            const bool has_left = x0 > 0 || gather.periodic;
            const bool has_right = x0 + 4 < nx || gather.periodic;
            const bool left = has_left && occupied( in[x0 > 0 ? base - 1 : base + std::size_t( nx - 1 )] );
            const bool right = has_right && occupied( in[x0 + 4 < nx ? base + 4 : base - std::size_t( x0 )] );
            unsigned occ = 0; // bit j + 1: site x0 + j, j in [-1, 4]
            for ( int j = 0; j < 4; ++j )
                occ |= unsigned( occupied( own.w[j] ) ) << ( j + 1 );
            occ |= unsigned( left ) | ( unsigned( right ) << 5 );
            busy = ( occ | ( occ >> 1 ) | ( occ >> 2 ) ) & 0xFu;
        }
        else
        {
            std::size_t lower = 0, upper = 0;
            bool has_lower, has_upper;
            if constexpr ( Axis == 1 )
            {
                const std::size_t stride = std::size_t( nx );
                has_lower = y > 0 || gather.periodic;
                has_upper = y < ny - 1 || gather.periodic;
                lower = y > 0 ? base - stride : base + std::size_t( ny - 1 ) * stride;
                upper = y < ny - 1 ? base + stride : base - std::size_t( ny - 1 ) * stride;
            }
            else
            {
                const int pl = gather.window.neighbor( p, -1 );
                const int pu = gather.window.neighbor( p, 1 );
                has_lower = pl >= 0;
                has_upper = pu >= 0;
                const std::size_t column = base - plane() * std::size_t( p );
                lower = has_lower ? column + plane() * std::size_t( pl ) : base;
                upper = has_upper ? column + plane() * std::size_t( pu ) : base;
            }
            const SiteQuad lo = has_lower ? load_quad( in + lower ) : SiteQuad{ { 0, 0, 0, 0 } };
            const SiteQuad up = has_upper ? load_quad( in + upper ) : SiteQuad{ { 0, 0, 0, 0 } };
            for ( int j = 0; j < 4; ++j )
                busy |= unsigned( occupied( own.w[j] ) || occupied( lo.w[j] ) || occupied( up.w[j] ) ) << j;
        }
        site_word* out = gather.out.data();
        if ( busy == 0 )
            store_quad( out + base, own );
        else
            for ( int j = 0; j < 4; ++j )
                if ( !( ( busy >> j ) & 1u ) )
                    out[base + std::size_t( j )] = own.w[j];
        return busy;
    }

    //! Busy site with owned-plane index d: the gather, its overflow entries to `overflow` (the list, or
    //! the team's buffer of it).
    template <class Overflow>
    KOKKOS_INLINE_FUNCTION void busy_site( const std::size_t d, const Overflow& overflow ) const
    {
        int x, y, p;
        sites.coordinates( d, x, y, p );
        gather.site( x, y, gather.window.owned_begin + p, overflow );
    }

    KOKKOS_INLINE_FUNCTION void operator()( const member_type& team ) const
    {
        if constexpr ( Buffered )
        {
            // The overflow buffer first: its 8-byte keys at the start of the scratch.
            TeamOverflowBuffer<ExecutionSpace> overflow( team, gather.overflow, overflow_capacity );
            Kokkos::single( Kokkos::PerTeam( team ), [&]() { overflow.count( 0 ) = 0; } );
            run( team, overflow );
            team.team_barrier();
            overflow.flush( team );
        }
        else
            run( team, gather.overflow );
    }

    template <class Overflow>
    KOKKOS_INLINE_FUNCTION void run( const member_type& team, const Overflow& overflow ) const
    {
        TeamBusyQueue<ExecutionSpace>::run(
            team, quads_per_thread, quads(), [&]( const std::size_t q ) { return quad( q ); },
            [&]( const std::size_t d ) { busy_site( d, overflow ); } );
    }
};

/*!
  \brief The compacted fused pass (issue #48): the gather FusedPass run only at the destinations where
  something happens. A destination that holds no particle and on which no particle's move ends keeps
  its word (the gather appends nothing to it). At 0.0015 particles per site (seed 002's free diffusion)
  about 0.3% of the destinations are such marked sites.

  Two kernels, because the gather's registers would starve the streaming part of work items:
  - CompactedFusedMarks: a work item per QuadsPerItem quads (4 sites of a row, x0 a multiple of 4) of
    the source planes: it copies an owned quad to the next lattice (one aligned 16-byte load and store) and, for
    each particle on it, draws the particle's whole move once (fused_move, as the tiled pass does) and
    sets the bits of its own site and of the site the move ends on in `marks`, one bit per owned site
    (an atomic OR: moves cross quads; the bits are cleared before the kernel). On a slab, or over a
    range of planes, the plane on each side of the owned ones is a source plane too: its particles can
    end on an owned plane; it is read, not written.
  - CompactedFusedBusy: a team takes a range of mark words, queues their marked destinations in scratch
    (TeamMarkedQueue) and runs the gather's own code for them with the 27 source words loaded up front (independent loads
    instead of 27 in a row), so the lattice, the overflow entries and the displacements are the gather's
    by construction.
  The first version marked every destination with a particle among its 27 sources (27 times the density
  instead of about 2 times): 2.42 ms per step at 512^3, 2 slots, 0.0015 per site on an H200, of which the
  gathers 1.7 ms (docs/performance.md, "The fused pass compacted").
  Needs rows of whole quads and 16-byte aligned arrays (quads_fit); runs on slabs as well.
*/
template <int Slots, class MemorySpace, int QuadsPerItem = 1>
struct CompactedFusedMarks
{
    static_assert( QuadsPerItem >= 1 && QuadsPerItem <= 8, "quads per work item: 1 to 8" );
    using layout = SiteLayout<Slots>;
    FusedPass<Slots, MemorySpace> gather;
    Kokkos::View<std::uint32_t*, MemorySpace> marks; //!< bit d % 32 of word d / 32: owned-plane index d marked
    //! Source planes that are not owned: the local plane below and above the owned range where one exists
    //! outside it (a slab's ghost planes, or the wrapped neighbours of a plane range); -1 where none.
    int extra_plane[2] = { -1, -1 };
    RowMajorIndex quad_index; //!< quads of the source planes: RowMajorIndex::of( nx / 4, ny, quads() )
    std::size_t source_quads = 0; //!< quads() (set_sizes)
    std::size_t item_stride = 0;  //!< work items: quads() / QuadsPerItem, rounded up (set_sizes)

    //! The source planes' extra planes for a window.
    static void find_extra_planes( const SlabWindow& w, int extra[2] )
    {
        const auto outside = [&]( int p ) { return p >= 0 && ( p < w.owned_begin || p >= w.owned_end ); };
        const int below = w.neighbor( w.owned_begin, -1 );
        const int above = w.neighbor( w.owned_end - 1, 1 );
        extra[0] = outside( below ) ? below : -1;
        extra[1] = outside( above ) && above != extra[0] ? above : -1;
    }
    //! Words of `marks` for the owned planes, rounded up to whole 16-byte groups (TeamMarkedQueue loads 4).
    static std::size_t mark_words( int nx, int ny, const SlabWindow& w ) { return ( quads_of( nx, ny, w ) + 31 ) / 32 * 4; }

    KOKKOS_FORCEINLINE_FUNCTION std::size_t quads_per_plane() const { return std::size_t( gather.nx / 4 ) * std::size_t( gather.ny ); }
    //! Quads of the source planes: the owned ones, then the extra planes.
    std::size_t quads() const
    {
        return quads_per_plane() * std::size_t( gather.window.owned_planes() + ( extra_plane[0] >= 0 ) + ( extra_plane[1] >= 0 ) );
    }

    //! Marks local site (x, y, p) if it lies on an owned plane.
    KOKKOS_FORCEINLINE_FUNCTION void mark( const int x, const int y, const int p ) const
    {
        if ( p < gather.window.owned_begin || p >= gather.window.owned_end )
            return;
        const std::size_t d = std::size_t( x ) + std::size_t( gather.nx ) * ( std::size_t( y ) + std::size_t( gather.ny ) * std::size_t( p - gather.window.owned_begin ) );
        Kokkos::atomic_fetch_or( &marks( d >> 5 ), std::uint32_t( 1u ) << ( d & 31u ) );
    }

    //! The particles of source (sx, sy, local plane sz), word ws (not empty): its own site and each end.
    KOKKOS_INLINE_FUNCTION void mark_moves( const int sx, const int sy, const int sz, const site_word ws ) const
    {
        const FusedPass<Slots, MemorySpace>& g = gather;
        mark( sx, sy, sz );
        const std::size_t gs = g.index( sx, sy, sz ) + global_offset( g.window, sz, std::size_t( g.nx ) * std::size_t( g.ny ) );
        const std::uint32_t ts = layout::type( ws );
        for ( int k = 0; k < Slots; ++k )
        {
            const std::uint32_t code = layout::code( ws, k );
            if ( code == 0 )
                break;
            int o[3];
            fused_move( g.rules, g.rng.bits( gs, std::uint32_t( 16 + k ), g.step ), code, ts, g, sx, sy, sz, nullptr, o );
            if ( o[0] != 0 || o[1] != 0 || o[2] != 0 ) // refused components are 0, so the end exists
                mark( step_coordinate( sx, o[0], g.nx, g.periodic_x ), step_coordinate( sy, o[1], g.ny, g.periodic_y ),
                      g.window.neighbor( sz, o[2] ) );
        }
    }

    //! Local plane and base index of quad q of the source planes (x0 = 4 qx); whether the plane is owned.
    KOKKOS_FORCEINLINE_FUNCTION bool locate( const std::size_t q, int& x0, int& y, int& p ) const
    {
        int qx, plane_rank;
        quad_index.coordinates( q, qx, y, plane_rank );
        const int owned = gather.window.owned_planes();
        p = plane_rank < owned ? gather.window.owned_begin + plane_rank
                               : ( plane_rank == owned && extra_plane[0] >= 0 ? extra_plane[0] : extra_plane[1] );
        x0 = 4 * qx;
        return plane_rank < owned;
    }

    //! Sets the sizes the work items use (after extra_plane and quad_index) and returns the work items:
    //! each takes QuadsPerItem quads, item_stride apart (consecutive work items, consecutive quads).
    std::size_t set_sizes()
    {
        source_quads = quads();
        item_stride = ( source_quads + std::size_t( QuadsPerItem ) - 1 ) / std::size_t( QuadsPerItem );
        return item_stride;
    }

    /*!
      Work item w: quads w, w + item_stride, ... (QuadsPerItem of them, fewer at the end). Its quads' loads
      are issued before any of them is stored or looked at, so that a thread has several 16-byte loads in
      flight: with one quad per work item the kernel streamed at about half the copy roof on an H200 (0.55
      ms at 512^3, 43% of the warps active), with 4 at 0.39 ms (docs/performance.md, "More bytes in flight").
      The particles' moves come after the loops over the quads, their sites read again: indexing the
      quads by a loop variable there kept them out of registers (0.84 ms with one quad per work item on
      the GPU when the number of quads was a run-time value).
    */
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t w ) const
    {
        if constexpr ( QuadsPerItem == 1 )
        {
            // Host backends: the fewest instructions per quad (the general code below took 1.8 times as long
            // per step on one CPU core, where the lattice's quads come from the caches).
            int x0, y, p;
            const bool owned = locate( w, x0, y, p );
            const std::size_t base = gather.index( x0, y, p );
            const SiteQuad own = load_quad( gather.in.data() + base );
            if ( owned )
                store_quad( gather.out.data() + base, own );
            for ( int j = 0; j < 4; ++j )
                if ( !layout::empty( own.w[j] ) )
                    mark_moves( x0 + j, y, p, own.w[j] );
            return;
        }
        const std::size_t n = source_quads, stride = item_stride;
        SiteQuad own[QuadsPerItem];
        for ( int k = 0; k < QuadsPerItem; ++k )
        {
            const std::size_t q = w + std::size_t( k ) * stride;
            own[k] = SiteQuad{ { 0, 0, 0, 0 } };
            if ( q < n )
            {
                int x0, y, p;
                locate( q, x0, y, p );
                own[k] = load_quad( gather.in.data() + gather.index( x0, y, p ) );
            }
        }
        unsigned occupied = 0; // bit 4 k + j: site j of quad k holds particles
        for ( int k = 0; k < QuadsPerItem; ++k )
        {
            const std::size_t q = w + std::size_t( k ) * stride;
            if ( q >= n )
                break;
            int x0, y, p;
            if ( locate( q, x0, y, p ) )
                store_quad( gather.out.data() + gather.index( x0, y, p ), own[k] );
            for ( int j = 0; j < 4; ++j )
                occupied |= unsigned( !layout::empty( own[k].w[j] ) ) << ( 4 * k + j );
        }
        while ( occupied != 0 )
        {
            const int b = morula::compat::lowest_set_bit( occupied );
            occupied &= occupied - 1u;
            int x0, y, p;
            locate( w + std::size_t( b >> 2 ) * stride, x0, y, p );
            const int x = x0 + ( b & 3 );
            mark_moves( x, y, p, gather.in( gather.index( x, y, p ) ) );
        }
    }
};

/*!
  \brief The marked sites of a team's range of mark words (one bit per site), run converged. The team
  takes `chunks` chunks of team size x 4 words one after the other: each thread loads 4 consecutive words
  (128 sites) of a chunk with one 16-byte load and keeps them in registers; in rounds, each thread moves
  up to `places_per_thread` of its set bits into a queue in team scratch. The queue holds two rounds
  (2 x team size x places_per_thread sites), and the team's threads take its sites one each, after a
  barrier, only when it could not take another round or when the team's marks are all queued: so sparse
  marks of several chunks fill one run of the team's threads (with one chunk per run, about 100 of a
  GPU team's 256 threads had a site at 0.0015 particles per site). run( d ) gets the site's index d in
  the marks. `words` a multiple of 4, the array 16-byte aligned. Scratch: scratch_bytes().
*/
template <class ExecutionSpace>
struct TeamMarkedQueue
{
    using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
    using queue_view = Kokkos::View<int*, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    struct alignas( 16 ) Words
    {
        std::uint32_t w[4];
    };

    static int league( int team_size, int chunks, std::size_t words )
    {
        const std::size_t per_team = 4 * std::size_t( team_size ) * std::size_t( chunks );
        return int( ( words + per_team - 1 ) / per_team );
    }
    static std::size_t scratch_bytes( int team_size, int places_per_thread )
    {
        return queue_view::shmem_size( 2 * team_size * places_per_thread ) + queue_view::shmem_size( 2 );
    }

    template <class Run>
    KOKKOS_INLINE_FUNCTION static void run( const member_type& team, const std::uint32_t* marks, const std::size_t words,
                                            const int chunks, const int places_per_thread, const Run& run_site )
    {
        const int size = team.team_size();
        const int rank = team.team_rank();
        const int round = size * places_per_thread; // the most sites one round queues
        queue_view queue( team.team_scratch( 0 ), 2 * round );
        queue_view counters( team.team_scratch( 0 ), 2 ); // sites queued; whether a thread has marks left
        const std::size_t team_first = 4 * std::size_t( size ) * std::size_t( team.league_rank() ) * std::size_t( chunks );
        bool empty_queue = true;
        for ( int c = 0; c < chunks; ++c )
        {
            const int chunk_offset = 4 * size * c; // of the chunk's first word from the team's
            const std::size_t mine = team_first + std::size_t( chunk_offset + 4 * rank );
            Words m{ { 0, 0, 0, 0 } };
            if ( mine < words )
                m = *reinterpret_cast<const Words*>( marks + mine );
            for ( ;; )
            {
                Kokkos::single( Kokkos::PerTeam( team ), [&]() {
                    if ( empty_queue )
                        counters( 0 ) = 0;
                    counters( 1 ) = 0;
                } );
                team.team_barrier();
                int taken = 0;
                for ( int j = 0; j < 4; ++j )
                    while ( m.w[j] != 0 && taken < places_per_thread )
                    {
                        const int bit = morula::compat::lowest_set_bit( m.w[j] );
                        m.w[j] &= m.w[j] - 1u;
                        queue( Kokkos::atomic_fetch_add( &counters( 0 ), 1 ) ) = 32 * ( chunk_offset + 4 * rank + j ) + bit;
                        ++taken;
                    }
                if ( ( m.w[0] | m.w[1] | m.w[2] | m.w[3] ) != 0 )
                    counters( 1 ) = 1; // every writer writes 1
                team.team_barrier();
                const int queued = counters( 0 );
                const bool more = counters( 1 ) != 0;
                empty_queue = queued > round || ( c == chunks - 1 && !more ); // run it now
                if ( empty_queue )
                    Kokkos::parallel_for( Kokkos::TeamThreadRange( team, queued ), [&]( const int e ) {
                        run_site( 32 * team_first + std::size_t( queue( e ) ) );
                    } );
                // Every thread has read the counters (and run its queued sites) before they are reset
                team.team_barrier();
                if ( !more )
                    break;
            }
        }
    }
};

template <int Slots, class ExecutionSpace>
struct CompactedFusedBusy
{
    using memory_space = typename ExecutionSpace::memory_space;
    using layout = SiteLayout<Slots>;
    using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

    FusedPass<Slots, memory_space> gather;
    Kokkos::View<const std::uint32_t*, memory_space> marks; //!< CompactedFusedMarks::marks
    std::size_t words;                                       //!< of marks, a multiple of 4
    int chunks;                                              //!< TeamMarkedQueue's chunks per team
    int places_per_thread;                                   //!< and queue places per thread
    RowMajorIndex sites;                                     //!< owned-plane site indices: RowMajorIndex::of( nx, ny, sites )

    int league( int team_size ) const { return TeamMarkedQueue<ExecutionSpace>::league( team_size, chunks, words ); }
    std::size_t scratch_bytes( int team_size ) const
    {
        return TeamMarkedQueue<ExecutionSpace>::scratch_bytes( team_size, places_per_thread );
    }

    //! Marked destination (x, y, local plane p): FusedPass::operator() with the 27 source words loaded first.
    KOKKOS_INLINE_FUNCTION void destination( const int x, const int y, const int p ) const
    {
        const FusedPass<Slots, memory_space>& g = gather;
        site_word source[27]; // source one move (ox, oy, oz) before the destination: [9 (oz + 1) + 3 (oy + 1) + ox + 1]
        for ( int oz = -1; oz <= 1; ++oz )
        {
            const int sz = g.window.neighbor( p, -oz );
            for ( int oy = -1; oy <= 1; ++oy )
            {
                const int sy = step_coordinate( y, -oy, g.ny, g.periodic_y );
                for ( int ox = -1; ox <= 1; ++ox )
                {
                    const int sx = step_coordinate( x, -ox, g.nx, g.periodic_x );
                    source[9 * ( oz + 1 ) + 3 * ( oy + 1 ) + ox + 1] =
                        sz >= 0 && sy >= 0 && sx >= 0 ? g.in( g.index( sx, sy, sz ) ) : site_word( 0 );
                }
            }
        }
        const std::size_t d = g.index( x, y, p );
        const std::size_t gd = d + global_offset( g.window, p, std::size_t( g.nx ) * std::size_t( g.ny ) );
        g.out( d ) = fused_destination<Slots>(
            g.rules, g.rng, g.step, source[13], gd,
            [&]( int ox, int oy, int oz, SiteBuilder<Slots, memory_space>& site, bool spill ) {
                const site_word ws = source[9 * ( oz + 1 ) + 3 * ( oy + 1 ) + ox + 1];
                if ( !layout::empty( ws ) ) // a missing source is 0: empty
                    g.gather_from_word( step_coordinate( x, -ox, g.nx, g.periodic_x ),
                                        step_coordinate( y, -oy, g.ny, g.periodic_y ), g.window.neighbor( p, -oz ), ws,
                                        ox, oy, oz, gd, site, spill );
            } );
    }

    KOKKOS_INLINE_FUNCTION void operator()( const member_type& team ) const
    {
        TeamMarkedQueue<ExecutionSpace>::run( team, marks.data(), words, chunks, places_per_thread, [&]( const std::size_t d ) {
            int x, y, p;
            sites.coordinates( d, x, y, p );
            destination( x, y, gather.window.owned_begin + p );
        } );
    }
};

} // namespace morula::lattice::detail

#endif
