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
    using queue_view = Kokkos::View<int*, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

    SplitPass<Slots, Axis, memory_space> gather; //!< defines every busy site's word
    int quads_per_thread;                        //!< quads per thread of a team
    unsigned int overflow_capacity;              //!< overflow entries a team gathers in scratch (Buffered)

    KOKKOS_FORCEINLINE_FUNCTION std::size_t plane() const { return std::size_t( gather.nx ) * std::size_t( gather.ny ); }
    //! Quads of the owned planes.
    KOKKOS_FORCEINLINE_FUNCTION std::size_t quads() const
    {
        return std::size_t( gather.nx / 4 ) * std::size_t( gather.ny ) * std::size_t( gather.window.owned_planes() );
    }
    int league( int team_size ) const
    {
        const std::size_t per_team = std::size_t( team_size ) * std::size_t( quads_per_thread );
        return int( ( quads() + per_team - 1 ) / per_team );
    }
    std::size_t scratch_bytes( int team_size ) const
    {
        return ( Buffered ? TeamOverflowBuffer<ExecutionSpace>::scratch_bytes( overflow_capacity ) : 0 ) +
               queue_view::shmem_size( 4 * team_size * quads_per_thread ) + queue_view::shmem_size( 1 );
    }

    KOKKOS_FORCEINLINE_FUNCTION static bool occupied( site_word w ) { return !layout::empty( w ); }

    /*!
      Quad q of the owned planes: writes its quiet sites and returns its busy ones as bits 0-3. The
      owned-plane index of site j of the quad is 4 q + j.
    */
    KOKKOS_INLINE_FUNCTION unsigned quad( const std::size_t q ) const
    {
        const int nx = gather.nx, ny = gather.ny;
        const std::size_t d0 = 4 * q; // owned-plane index of the quad's first site
        const std::size_t row = d0 / std::size_t( nx );
        const int x0 = int( d0 - row * std::size_t( nx ) );
        const int y = int( row % std::size_t( ny ) );
        const int p = gather.window.owned_begin + int( row / std::size_t( ny ) );
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
        const std::size_t nx = std::size_t( gather.nx );
        const std::size_t row = d / nx;
        gather.site( int( d - row * nx ), int( row % std::size_t( gather.ny ) ),
                     gather.window.owned_begin + int( row / std::size_t( gather.ny ) ), overflow );
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
        const int size = team.team_size();
        queue_view queue( team.team_scratch( 0 ), 4 * size * quads_per_thread );
        queue_view queued( team.team_scratch( 0 ), 1 );
        Kokkos::single( Kokkos::PerTeam( team ), [&]() { queued( 0 ) = 0; } );
        team.team_barrier();
        const std::size_t first = std::size_t( team.league_rank() ) * std::size_t( size ) * std::size_t( quads_per_thread );
        const std::size_t n = quads();
        const int count = int( n - first < std::size_t( size * quads_per_thread ) ? n - first : std::size_t( size * quads_per_thread ) );
        // Consecutive threads take consecutive quads: every load and store of a warp is contiguous. The
        // queue's order is free (see the file comment), so a scratch counter hands out its places.
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, count ), [&]( const int k ) {
            const unsigned busy = quad( first + std::size_t( k ) );
            for ( int j = 0; j < 4; ++j )
                if ( ( busy >> j ) & 1u )
                    queue( Kokkos::atomic_fetch_add( &queued( 0 ), 1 ) ) = 4 * k + j;
        } );
        team.team_barrier();
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, queued( 0 ) ),
                              [&]( const int e ) { busy_site( 4 * first + std::size_t( queue( e ) ), overflow ); } );
    }
};

} // namespace morula::lattice::detail

#endif
