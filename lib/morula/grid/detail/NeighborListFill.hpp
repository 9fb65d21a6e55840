/*!
  \file NeighborListFill.hpp
  \brief Writing the CSR neighbour list: on GPUs through team scratch memory, both ways.
*/
#ifndef MORULA_GRID_DETAIL_NEIGHBORLISTFILL_HPP
#define MORULA_GRID_DETAIL_NEIGHBORLISTFILL_HPP

#include <morula/grid/detail/NeighborTile.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::grid::detail
{

//! Entries of a fill team's staging buffer (16 KiB), beside a 24 KiB tile of positions.
constexpr int fill_staging_entries = 4096;
constexpr int fill_tile_bytes = 24 * 1024;

/*!
  Writes every particle's neighbours at indices(offsets(i)) onwards, in the order of
  NeighborQuery::for_each_neighbor. On a GPU, with the data in cell order, a team takes a block of cells
  (as for_each_particle does), reads candidates from a staged tile, collects the block's lists in a
  staging buffer and copies the block's run of the list out with consecutive threads on consecutive
  entries: one thread per particle would otherwise store to as many places as a warp has threads.
  Entries beyond the buffer's capacity (dense blocks) are stored directly. CPU backends and other
  layouts store directly.
*/
template <class ExecutionSpace, class Query, class OffsetView, class IndexView, class Scalar>
void fill_neighbor_list( const ExecutionSpace& exec, const Query& query, int n, Scalar radius,
                         const OffsetView& offsets, const IndexView& indices,
                         bool stage_in_scratch = true )
{
    using offset_type = typename OffsetView::non_const_value_type;
    constexpr bool host_backend =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                   typename ExecutionSpace::memory_space>::accessible;
    const bool tiled = stage_in_scratch && !host_backend && query.data_sorted() &&
                       query.row_major() && !query.per_pair_minimum_image();
    if ( !tiled )
    {
        Kokkos::parallel_for(
            "morula::grid::neighbor_fill", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i ) {
                offset_type k = offsets( i );
                query.for_each_neighbor( i, radius, [&]( const int j, Scalar, Scalar, Scalar,
                                                         Scalar ) { indices( k++ ) = j; } );
            } );
        return;
    }
    using scratch_space = typename ExecutionSpace::scratch_memory_space;
    using tile_type = NeighborTile<Scalar, scratch_space, fill_tile_bytes>;
    using staging_view =
        Kokkos::View<int*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
    using member_type = typename policy_type::member_type;
    const auto& g = query.geometry();
    const TileLayout layout = choose_tiles( g, n );
    policy_type policy( exec, layout.num_tiles, tile_team_size );
    policy.set_scratch_size( 0, Kokkos::PerTeam( tile_type::scratch_bytes() +
                                                 staging_view::shmem_size( fill_staging_entries ) ) );
    const int nx = g.ncell[0];
    const int ny = g.ncell[1];
    const auto cell_offsets = query.cell_offsets();
    const Scalar r2max = radius * radius;
    Kokkos::parallel_for(
        "morula::grid::neighbor_fill_tiled", policy, KOKKOS_LAMBDA( const member_type& team ) {
            const int t = team.league_rank();
            const int xb = t % layout.blocks_per_row;
            const int row_index = t / layout.blocks_per_row;
            const int x0 = xb * layout.width;
            const int x1 = x0 + layout.width < nx ? x0 + layout.width : nx;
            const int first = cell_offsets( nx * row_index + x0 );
            const int last = cell_offsets( nx * row_index + x1 );
            if ( first == last )
                return;
            const tile_type tile( team );
            staging_view staged( team.team_scratch( 0 ), fill_staging_entries );
            const bool in_tile = tile.load( team, query, x0, x1, row_index % ny, row_index / ny );
            const offset_type run_begin = offsets( first );
            const offset_type run_end = offsets( last );
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, first, last ), [&]( const int i ) {
                offset_type k = offsets( i ) - run_begin;
                auto store = [&]( const int j, Scalar, Scalar, Scalar, Scalar ) {
                    if ( k < fill_staging_entries )
                        staged( static_cast<int>( k ) ) = j;
                    else
                        indices( run_begin + k ) = j;
                    ++k;
                };
                if ( in_tile )
                    query.template visit_stencil<false>( i, query.position( i, 0 ),
                                                         query.position( i, 1 ),
                                                         query.position( i, 2 ), r2max, tile, store );
                else
                    query.for_each_neighbor( i, radius, store );
            } );
            team.team_barrier();
            const int staged_count = run_end - run_begin < fill_staging_entries
                                         ? static_cast<int>( run_end - run_begin )
                                         : fill_staging_entries;
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, staged_count ),
                                  [&]( const int k ) { indices( run_begin + k ) = staged( k ); } );
        } );
}

} // namespace morula::grid::detail

#endif
