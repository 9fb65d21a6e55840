// An experiment kept as evidence (issue #25, 27 Nov 2026): a per-cell traversal for per-particle sums
// over neighbours. It was measured slower than for_each_particle on an H200 at every density tried
// (docs/performance.md) and is not in the library; `grid_experiments --cell-sweeps` times it and checks
// its counts against for_each_particle's.
//
// One warp per cell: the cell's stencil is walked once per warp and its candidates are staged once in
// scratch memory, coalesced; lane l serves particle k = l % m of an m-particle block of the cell and
// takes every S-th staged candidate from s = l / m (S = floor(32 / m) streams, lanes from S m on idle),
// so the S lanes of a stream read one scratch word together; each particle's S partial sums are added
// by a shuffle tree and the first stream's lane calls finish(i, sum). Cells of more than 32 particles
// go in blocks of 32, stencils of more candidates than the tile are staged tile by tile. Pairs and
// arithmetic ((x_i - x_j) - shift, then distance_squared) are the per-particle sweep's; the CUDA grid
// tests compared its pair sets with the brute force bit for bit before it was moved here.
//
// Why it lost: Nsight Compute (16M points, double, 7.1 per cell) shows it issue-bound (0.85 warp
// instructions per scheduler and cycle) at about 2,750 warp instructions per cell: the stencil walk,
// the run table and the staging cost as much as the ~50 scan iterations a cell needs, and the scan
// tests all 27 cells' candidates (192 per particle) where the per-particle walk prunes to 146.
// On host backends the vector is one lane wide (m = S = 1).
#ifndef MORULA_BENCHMARKS_CELLSWEEP_HPP
#define MORULA_BENCHMARKS_CELLSWEEP_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/GridGeometry.hpp>
#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace morula::bench
{
// The neighbour query's stencil walk, internal to the library (experiments and checks look inside it).
using QueryAccess = morula::grid::detail::QueryAccess;

//! Tunables of the per-cell traversal (settings measured on an H200: docs/performance.md).
struct CellSweepSettings
{
    int tile = 256;           //!< candidates staged per warp at a time
    int cells_per_warp = 4;   //!< consecutive cells a warp takes one after the other (L1 reuse)
    int warps_per_team = 4;   //!< warps (team members) per block
};

//! Lanes per team member of the per-cell traversal: a warp on CUDA, one lane on host backends.
template <class ExecutionSpace>
constexpr int cell_sweep_lanes()
{
#if defined( KOKKOS_ENABLE_CUDA )
    if constexpr ( std::is_same_v<ExecutionSpace, Kokkos::Cuda> )
        return 32;
#endif
    return 1;
}

//! Orders the lanes' scratch accesses of one team member (a warp on CUDA; nothing on the host, where
//! the member is one lane).
KOKKOS_FORCEINLINE_FUNCTION void lanes_sync()
{
#if defined( __CUDA_ARCH__ )
    __syncwarp();
#endif
}

//! The value of lane (own lane + delta) of the member's `width` lanes (own value past the end).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T lanes_shuffle_down( const T& value, int delta, int width )
{
#if defined( __CUDA_ARCH__ )
    return Kokkos::shfl_down( value, delta, width );
#else
    (void)delta;
    (void)width;
    return value;
#endif
}

//! Calls g(slot_begin, slot_end, shift_code) for every run of sorted slots in the 27-cell stencil of
//! cell (ix, iy, iz), unpruned: a stencil row with row-major cells (plus a wrapped cell at a periodic
//! end), each cell with Z-order cells. shift_code = (sx + 1) + 3 (sy + 1) + 9 (sz + 1) for the run's
//! image shift in box lengths (13: none). Queries without the per-pair minimum image only.
template <class Query, class G>
KOKKOS_INLINE_FUNCTION void for_each_stencil_run( const Query& q, int ix, int iy, int iz, G&& g )
{
    using Scalar = typename Query::scalar_type;
    const auto& geom = q.geometry();
    const auto& offsets = q.cell_offsets();
    const int nx = geom.ncell[0];
    const int ny = geom.ncell[1];
    const bool wrap_x = geom.is_periodic( 0 ) && nx >= 3;
    auto digit = []( Scalar shift ) { return shift < Scalar( 0 ) ? 0 : ( shift > Scalar( 0 ) ? 2 : 1 ); };
    for ( int oz = -1; oz <= 1; ++oz )
    {
        int cz;
        Scalar sz;
        if ( !QueryAccess::neighbor_cell( q, 2, iz, oz, cz, sz ) )
            continue;
        for ( int oy = -1; oy <= 1; ++oy )
        {
            int cy;
            Scalar sy;
            if ( !QueryAccess::neighbor_cell( q, 1, iy, oy, cy, sy ) )
                continue;
            const int code = 9 * digit( sz ) + 3 * digit( sy );
            if ( q.row_major() )
            {
                const int row = nx * ( cy + ny * cz );
                const int lo = ix > 0 ? ix - 1 : ix;
                const int hi = ix + 1 < nx ? ix + 1 : ix;
                if ( wrap_x && ix == 0 )
                    g( offsets( row + nx - 1 ), offsets( row + nx ), code );
                g( offsets( row + lo ), offsets( row + hi + 1 ), code + 1 );
                if ( wrap_x && ix == nx - 1 )
                    g( offsets( row ), offsets( row + 1 ), code + 2 );
            }
            else
                for ( int ox = -1; ox <= 1; ++ox )
                {
                    int cx;
                    Scalar sx;
                    if ( !QueryAccess::neighbor_cell( q, 0, ix, ox, cx, sx ) )
                        continue;
                    const int rank = q.cell_rank( geom.linear_index( cx, cy, cz ) );
                    g( offsets( rank ), offsets( rank + 1 ), code + digit( sx ) );
                }
        }
    }
}

template <class Accumulator, class Query, class PairOp, class FinishOp, class ExecutionSpace,
          class LaunchBounds>
struct CellSweep
{
    using scalar_type = typename Query::scalar_type;
    using policy_type = core::LaunchTeam<ExecutionSpace, LaunchBounds>;
    using member_type = typename policy_type::member_type;
    template <class T>
    using scratch_array = Kokkos::View<T*, typename ExecutionSpace::scratch_memory_space,
                                       Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

    //! Runs of a 27-cell stencil: 9 rows, each with up to two wrapped cells (row-major), or 27 cells.
    static constexpr int max_runs = 27;
    //! Run table entries: first slot, length, first candidate index, shift code.
    static constexpr int run_fields = 4;

    static_assert( std::is_trivially_copyable_v<Accumulator>,
                   "per-cell sweep: the accumulator must be trivially copyable (it is shuffled)" );
    static_assert( sizeof( Accumulator ) % 4 == 0,
                   "per-cell sweep: the accumulator's size must be a multiple of 4 bytes" );

    Query query;
    PairOp pair;
    FinishOp finish;
    scalar_type r2max;
    int lanes;
    int tile;
    int cells_per_warp;
    int warps_per_team;
    int num_cells;

    static std::size_t scratch_bytes( int tile )
    {
        return 3 * scratch_array<scalar_type>::shmem_size( tile ) +
               2 * scratch_array<int>::shmem_size( tile ) +
               scratch_array<int>::shmem_size( max_runs * run_fields );
    }

    template <bool Shifted>
    KOKKOS_INLINE_FUNCTION void scan_tile( const int i, const scalar_type xi, const scalar_type yi,
                                           const scalar_type zi, const int first, const int count,
                                           const int stride, const scratch_array<scalar_type>& xs,
                                           const scratch_array<scalar_type>& ys,
                                           const scratch_array<scalar_type>& zs,
                                           const scratch_array<int>& js,
                                           const scratch_array<int>& codes, Accumulator& sum ) const
    {
        const auto& box = query.geometry().box;
        for ( int c = first; c < count; c += stride )
        {
            const int j = js( c );
            scalar_type dx = xi - xs( c );
            scalar_type dy = yi - ys( c );
            scalar_type dz = zi - zs( c );
            if constexpr ( Shifted )
            {
                // Subtracting a zero shift leaves the difference bit for bit, so every run takes this
                // path in a cell with a wrapped run.
                const int code = codes( c );
                dx -= static_cast<scalar_type>( code % 3 - 1 ) * box.length( 0 );
                dy -= static_cast<scalar_type>( ( code / 3 ) % 3 - 1 ) * box.length( 1 );
                dz -= static_cast<scalar_type>( code / 9 - 1 ) * box.length( 2 );
            }
            const scalar_type r2 = grid::detail::distance_squared( dx, dy, dz );
            if ( r2 <= r2max && j != i )
                pair( i, j, dx, dy, dz, r2, sum );
        }
    }

    KOKKOS_INLINE_FUNCTION void operator()( const member_type& team ) const
    {
        const int warp = team.league_rank() * warps_per_team + team.team_rank();
        const long long first_cell = static_cast<long long>( warp ) * cells_per_warp;
        if ( first_cell >= num_cells )
            return;
        const int cell_end = static_cast<int>(
            first_cell + cells_per_warp < num_cells ? first_cell + cells_per_warp : num_cells );
        const scratch_array<scalar_type> xs( team.thread_scratch( 0 ), tile );
        const scratch_array<scalar_type> ys( team.thread_scratch( 0 ), tile );
        const scratch_array<scalar_type> zs( team.thread_scratch( 0 ), tile );
        const scratch_array<int> js( team.thread_scratch( 0 ), tile );
        const scratch_array<int> codes( team.thread_scratch( 0 ), tile );
        const scratch_array<int> runs( team.thread_scratch( 0 ), max_runs * run_fields );
        const auto& geom = query.geometry();
        const auto& offsets = query.cell_offsets();
        // One vector iteration per lane: the lanes keep their own particle and partial sum across the
        // staging and scanning below, ordered by lanes_sync().
        Kokkos::parallel_for( Kokkos::ThreadVectorRange( team, lanes ), [&]( const int lane ) {
            for ( int cell = static_cast<int>( first_cell ); cell < cell_end; ++cell )
            {
                const int ix = cell % geom.ncell[0];
                const int iy = ( cell / geom.ncell[0] ) % geom.ncell[1];
                const int iz = cell / ( geom.ncell[0] * geom.ncell[1] );
                const int rank = query.cell_rank( cell );
                const int begin = offsets( rank );
                const int members = offsets( rank + 1 ) - begin;
                if ( members == 0 )
                    continue;
                // The stencil's runs, identical in every lane; lane 0 keeps the table.
                lanes_sync(); // the previous cell's staging has read the table
                int num_runs = 0;
                int total = 0;
                bool shifted = false;
                for_each_stencil_run( query, ix, iy, iz, [&]( const int b, const int e, const int code ) {
                    if ( e <= b )
                        return;
                    if ( lane == 0 )
                    {
                        runs( run_fields * num_runs ) = b;
                        runs( run_fields * num_runs + 1 ) = e - b;
                        runs( run_fields * num_runs + 2 ) = total;
                        runs( run_fields * num_runs + 3 ) = code;
                    }
                    total += e - b;
                    shifted = shifted || code != 13;
                    ++num_runs;
                } );
                for ( int block = 0; block < members; block += lanes )
                {
                    const int m = members - block < lanes ? members - block : lanes;
                    const int streams = lanes / m;
                    const int k = lane % m;
                    const int s = lane / m;
                    const bool active = s < streams;
                    int i = -1;
                    scalar_type xi = 0, yi = 0, zi = 0;
                    if ( active )
                    {
                        i = query.particle( begin + block + k );
                        xi = query.position( i, 0 );
                        yi = query.position( i, 1 );
                        zi = query.position( i, 2 );
                    }
                    Accumulator sum{};
                    for ( int t0 = 0; t0 < total; t0 += tile )
                    {
                        const int count = total - t0 < tile ? total - t0 : tile;
                        lanes_sync(); // the table is written, the previous tile is scanned
                        for ( int r = 0; r < num_runs; ++r )
                        {
                            const int start = runs( run_fields * r + 2 );
                            const int length = runs( run_fields * r + 1 );
                            const int lo = start > t0 ? start : t0;
                            const int hi = start + length < t0 + count ? start + length : t0 + count;
                            if ( lo >= hi )
                                continue;
                            const int slot0 = runs( run_fields * r ) - start;
                            const int code = runs( run_fields * r + 3 );
                            for ( int c = lo + lane; c < hi; c += lanes )
                            {
                                const int j = query.particle( slot0 + c );
                                const int o = c - t0;
                                xs( o ) = query.position( j, 0 );
                                ys( o ) = query.position( j, 1 );
                                zs( o ) = query.position( j, 2 );
                                js( o ) = j;
                                codes( o ) = code;
                            }
                        }
                        lanes_sync();
                        if ( active )
                        {
                            if ( shifted )
                                scan_tile<true>( i, xi, yi, zi, s, count, streams, xs, ys, zs, js, codes,
                                                 sum );
                            else
                                scan_tile<false>( i, xi, yi, zi, s, count, streams, xs, ys, zs, js,
                                                  codes, sum );
                        }
                    }
                    // Add the streams' partial sums of each particle (stream s + step into s).
                    for ( int step = 1; step < streams; step *= 2 )
                    {
                        const Accumulator other = lanes_shuffle_down( sum, m * step, lanes );
                        if ( s % ( 2 * step ) == 0 && s + step < streams )
                            sum += other;
                    }
                    if ( active && s == 0 )
                        finish( i, static_cast<const Accumulator&>( sum ) );
                }
            }
        } );
    }
};

/*!
  Runs the per-cell traversal: pair(i, j, dx, dy, dz, r2, sum) for every pair within sqrt(r2max),
  then finish(i, sum) once per particle. The query must not use the per-pair minimum image.
*/
template <class Accumulator, class LaunchBounds, class ExecutionSpace, class Query, class PairOp,
          class FinishOp>
void reduce_neighbors_per_cell( const ExecutionSpace& exec, const Query& query, const PairOp& pair,
                                const FinishOp& finish, typename Query::scalar_type r2max,
                                const CellSweepSettings& settings, const std::string& label )
{
    using sweep_type = CellSweep<Accumulator, Query, PairOp, FinishOp, ExecutionSpace, LaunchBounds>;
    if ( query.per_pair_minimum_image() )
        throw std::runtime_error(
            "per-cell sweep: queries with the per-pair minimum image are not supported" );
    const int num_cells = query.geometry().num_cells();
    if ( query.num_particles() == 0 || num_cells == 0 )
        return;
    constexpr int lanes = cell_sweep_lanes<ExecutionSpace>();
    const int warps_per_team = lanes > 1 ? settings.warps_per_team : 1;
    const long long warps =
        ( static_cast<long long>( num_cells ) + settings.cells_per_warp - 1 ) / settings.cells_per_warp;
    const long long teams = ( warps + warps_per_team - 1 ) / warps_per_team;
    typename sweep_type::policy_type policy( exec, static_cast<int>( teams ), warps_per_team, lanes );
    policy.set_scratch_size( 0, Kokkos::PerThread( sweep_type::scratch_bytes( settings.tile ) ) );
    Kokkos::parallel_for( label, policy,
                          sweep_type{ query, pair, finish, r2max, lanes, settings.tile,
                                      settings.cells_per_warp, warps_per_team, num_cells } );
}

} // namespace morula::bench

#endif
