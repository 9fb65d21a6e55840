/*!
  \file NeighborTile.hpp
  \brief Staging a block of cells' neighbourhood in team scratch memory for GPU sweeps.

  In a sweep with one thread per particle, the threads of a warp read candidates from a handful of
  overlapping runs of sorted slots; through the L1 cache every such load costs as many wavefronts as
  cache lines it touches (about three), which made the candidate loads, not the arithmetic, the limit
  (measured on an H100). A team therefore takes a block of consecutive cells of one x-row, copies the
  positions of every run its particles' stencils can touch (9 rows, plus the cells reached by wrapping
  around a periodic x axis) into scratch memory with coalesced loads, and its threads then read
  candidates from there, where lanes reading the same slot are served by one broadcast.
*/
#ifndef MORULA_GRID_DETAIL_NEIGHBORTILE_HPP
#define MORULA_GRID_DETAIL_NEIGHBORTILE_HPP

#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

namespace morula::grid::detail
{

//! Runs of a tile: 9 stencil rows x (wrapped below, unwrapped, wrapped above).
constexpr int tile_pieces = 27;
//! Bytes of team scratch memory for the staged positions (sweeps; the list fill stages less).
constexpr int tile_position_bytes = 40 * 1024;
//! Threads of a tile team, and the mean number of particles aimed at per tile.
constexpr int tile_team_size = 128;

/*!
  Cells of the tiles: blocks of `width` consecutive cells of one x-row, sized so that a block holds
  about tile_team_size particles on average.
*/
struct TileLayout
{
    int width = 1;
    int blocks_per_row = 1;
    int num_tiles = 0;
};

template <class Scalar>
TileLayout choose_tiles( const GridGeometry<Scalar>& g, int n )
{
    TileLayout t;
    const int nx = g.ncell[0];
    const double per_cell = g.num_cells() > 0 ? double( n ) / g.num_cells() : 0.0;
    int w = per_cell > 0 ? static_cast<int>( tile_team_size / per_cell ) : nx;
    w = w < 1 ? 1 : ( w > nx ? nx : w );
    t.width = w;
    t.blocks_per_row = ( nx + w - 1 ) / w;
    t.num_tiles = t.blocks_per_row * g.ncell[1] * g.ncell[2];
    return t;
}

/*!
  A block's neighbourhood in scratch memory, and the source through which the stencil walk reads it.
  `delta[piece]` maps a sorted slot of that run to its place in the arrays (slot + delta).
*/
template <class Scalar, class ScratchSpace, int PositionBytes = tile_position_bytes>
struct NeighborTile
{
    using scalar_scratch =
        Kokkos::View<Scalar*, ScratchSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using int_scratch = Kokkos::View<int*, ScratchSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

    scalar_scratch x, y, z;
    int_scratch delta; // tile_pieces entries
    int_scratch run;   // 2 * tile_pieces entries: slot range of each run; then the total

    static constexpr int capacity() { return PositionBytes / ( 3 * int( sizeof( Scalar ) ) ); }

    static std::size_t scratch_bytes()
    {
        return 3 * scalar_scratch::shmem_size( capacity() ) +
               int_scratch::shmem_size( tile_pieces ) +
               int_scratch::shmem_size( 2 * tile_pieces + 1 );
    }

    NeighborTile() = default;

    template <class Member>
    KOKKOS_INLINE_FUNCTION explicit NeighborTile( const Member& team )
        : x( team.team_scratch( 0 ), capacity() )
        , y( team.team_scratch( 0 ), capacity() )
        , z( team.team_scratch( 0 ), capacity() )
        , delta( team.team_scratch( 0 ), tile_pieces )
        , run( team.team_scratch( 0 ), 2 * tile_pieces + 1 )
    {
    }

    /*!
      Plans and loads the runs the stencils of cells [x0, x1) of row (cy, cz) can touch. Returns false
      (and loads nothing) when they do not fit, in which case the team reads global memory instead.
    */
    template <class Member, class Query>
    KOKKOS_INLINE_FUNCTION bool load( const Member& team, const Query& q, int x0, int x1, int cy,
                                      int cz ) const
    {
        const auto& g = q.geometry();
        const auto& offsets = q.cell_offsets();
        const int nx = g.ncell[0];
        const int ny = g.ncell[1];
        const bool periodic_x = g.is_periodic( 0 );
        // Each of the 27 runs is planned by its own thread (two offset loads each, in parallel);
        // one thread then turns the lengths into starts.
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, tile_pieces ), [&]( const int p ) {
            const int oz = p / 9 - 1;
            const int oy = ( p / 3 ) % 3 - 1;
            const int kind = p % 3;
            int nz, ny_;
            Scalar s;
            const bool exists =
                q.neighbor_cell( 2, cz, oz, nz, s ) && q.neighbor_cell( 1, cy, oy, ny_, s );
            const int row = nx * ( ny_ + ny * nz );
            int begin = 0, end = 0;
            if ( exists )
            {
                if ( kind == 1 )
                {
                    const int lo = x0 > 0 ? x0 - 1 : 0;
                    const int hi = x1 < nx ? x1 : nx - 1;
                    begin = offsets( row + lo );
                    end = offsets( row + hi + 1 );
                }
                else if ( periodic_x && nx >= 3 && kind == 0 && x0 == 0 )
                {
                    begin = offsets( row + nx - 1 );
                    end = offsets( row + nx );
                }
                else if ( periodic_x && nx >= 3 && kind == 2 && x1 == nx )
                {
                    begin = offsets( row );
                    end = offsets( row + 1 );
                }
            }
            run( 2 * p ) = begin;
            run( 2 * p + 1 ) = end - begin; // length for now
        } );
        team.team_barrier();
        Kokkos::single( Kokkos::PerTeam( team ), [&] {
            int total = 0;
            for ( int p = 0; p < tile_pieces; ++p )
            {
                const int length = run( 2 * p + 1 );
                run( 2 * p + 1 ) = total;
                delta( p ) = total - run( 2 * p );
                total += length;
            }
            run( 2 * tile_pieces ) = total;
        } );
        team.team_barrier();
        const int total = run( 2 * tile_pieces );
        if ( total > capacity() )
            return false;
        // Copy: entry t of the tile belongs to the last run starting at or before it.
        const auto& xg = q;
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, total ), [&]( const int t ) {
            // Binary search for the last run starting at or before t (empty runs share starts).
            int lo = 0, hi = tile_pieces; // start(lo) <= t < start(hi); start(27) is the total
            while ( hi - lo > 1 )
            {
                const int mid = ( lo + hi ) / 2;
                if ( run( 2 * mid + 1 ) <= t )
                    lo = mid;
                else
                    hi = mid;
            }
            const int slot = t - delta( lo );
            x( t ) = xg.position( slot, 0 );
            y( t ) = xg.position( slot, 1 );
            z( t ) = xg.position( slot, 2 );
        } );
        team.team_barrier();
        return true;
    }

    //! The stencil walk's source: runs read from the staged copy (data sorted, no minimum image).
    template <class F>
    KOKKOS_INLINE_FUNCTION void scan( int piece, int begin, int end, int self, Scalar xi,
                                      Scalar yi, Scalar zi, Scalar sx, Scalar sy, Scalar sz,
                                      Scalar r2max, F& f ) const
    {
        const int d = delta( piece );
        if ( sx == Scalar( 0 ) && sy == Scalar( 0 ) && sz == Scalar( 0 ) )
            run_loop<false>( begin + d, end + d, d, self, xi, yi, zi, sx, sy, sz, r2max, f );
        else
            run_loop<true>( begin + d, end + d, d, self, xi, yi, zi, sx, sy, sz, r2max, f );
    }

    template <bool Shifted, class F>
    KOKKOS_INLINE_FUNCTION void run_loop( int begin, int end, int d, int self, Scalar xi,
                                          Scalar yi, Scalar zi, Scalar sx, Scalar sy, Scalar sz,
                                          Scalar r2max, F& f ) const
    {
        for ( int t = begin; t < end; ++t )
        {
            const int j = t - d;
            if ( j == self )
                continue;
            Scalar dx = xi - x( t );
            Scalar dy = yi - y( t );
            Scalar dz = zi - z( t );
            if constexpr ( Shifted )
            {
                dx -= sx;
                dy -= sy;
                dz -= sz;
            }
            const Scalar r2 = distance_squared( dx, dy, dz );
            if ( r2 <= r2max )
                f( j, dx, dy, dz, r2 );
        }
    }
};

} // namespace morula::grid::detail

#endif
