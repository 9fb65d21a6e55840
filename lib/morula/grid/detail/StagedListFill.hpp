/*!
  \file StagedListFill.hpp
  \brief Neighbour-list writes for GPUs that stage entries in team scratch memory and write them out
  coalesced: the ELL fill, and the copy from an ELL list into CSR storage.

  A thread finds its neighbours at its own pace, so while the sweep runs the 32 lanes of a warp store
  to 32 unrelated places: every entry costs its own memory transaction (a 4-byte write to a 32-byte
  sector), and the list build took far longer than the sweep that finds the entries.
  Staging the entries and writing them after the sweep turns those stores into whole lines:
  - ELL fill: lane t writes its q-th entry when the other lanes write theirs, to adjacent slots
    (faster than direct stores);
  - copy to CSR: a team's particles own one contiguous range of the list, which the team writes
    together, each thread taking every T-th entry and finding whose entry it is by a binary search over
    the team's T offsets (much faster than one thread copying each particle's entries).
  Entries past the staging depth go to memory directly. The CSR fill itself is not staged: it needs the
  team to wait for its slowest sweep before writing, which made it slower in double and on the epidermis
  model's lists, faster only in float (docs/performance.md,
  "Neighbour kernels at the hardware limit (issue #25): second pass" and
  "Design choices measured (moved from source comments, issue #46)").

  `LaunchBounds` (a Kokkos::LaunchBounds<threads, blocks>) lets a caller cap the registers; the team size
  must then not exceed its thread count.
*/
#ifndef MORULA_GRID_DETAIL_STAGEDLISTFILL_HPP
#define MORULA_GRID_DETAIL_STAGEDLISTFILL_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::grid::detail
{

//! Particles per team of the staged fills on GPUs (a multiple of the warp width); host spaces, where
//! the fills are staged only when called directly (tests, benchmarks), take teams of one.
constexpr int staged_fill_team_size = 128;
//! Entries per particle staged in scratch: with 128 threads a team holds 128 x 33 ints (16.5 KB). The
//! ELL fill takes 72 registers, so seven teams fit an SM, and their 116 KB leave the rest of the L1 to
//! the sweep's candidate positions. Lists longer than this write their tail directly. This depth and
//! staged_fill_team_size were the fastest tried with `grid_benchmark --list-variants`
//! (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): second pass").
constexpr int staged_fill_depth = 32;

template <class T, class ExecutionSpace>
using scratch_array = Kokkos::View<T*, typename ExecutionSpace::scratch_memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

//! Whether list fills on ExecutionSpace stage their writes: on GPUs. Host threads write their own
//! particle's entries contiguously already.
template <class ExecutionSpace>
constexpr bool stages_list_fill()
{
    return !Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;
}

//! The team size of the staged fills for a team_size argument of 0.
template <class ExecutionSpace>
int staged_team_size( int team_size )
{
    return team_size > 0 ? team_size : ( stages_list_fill<ExecutionSpace>() ? staged_fill_team_size : 1 );
}

//! fill_ell_list_staged() through the walk Order / Access (NeighborQuery::for_each_neighbor_as).
template <StencilOrder Order, DataAccess Access, class LaunchBounds, class ExecutionSpace, class Query,
          class CountView, class IndexView, class Scalar>
int fill_ell_list_staged_as( const ExecutionSpace& exec, const Query& query, int n, Scalar radius,
                             std::int64_t capacity, int slice_shift, const CountView& counts,
                             const IndexView& indices, int team_size, int depth )
{
    using index_type = std::int64_t;
    team_size = staged_team_size<ExecutionSpace>( team_size );
    using policy_type = core::LaunchTeam<ExecutionSpace, LaunchBounds>;
    using member_type = typename policy_type::member_type;
    using scratch_type = scratch_array<int, ExecutionSpace>;
    if ( depth > capacity )
        depth = static_cast<int>( capacity );
    const int row = depth + 1;
    const int teams = ( n + team_size - 1 ) / team_size;
    policy_type policy( exec, teams > 0 ? teams : 1, team_size );
    policy.set_scratch_size( 0, Kokkos::PerTeam( scratch_type::shmem_size( std::size_t( row ) * team_size ) ) );
    int largest = 0;
    Kokkos::parallel_reduce(
        "morula::grid::neighbor_fill_ell_staged", policy,
        KOKKOS_LAMBDA( const member_type& team, int& max_count ) {
            const int t = team.team_rank();
            const int i = team.league_rank() * team_size + t;
            if ( i >= n )
                return; // no team barrier below: every thread works on its own row
            const scratch_type stage( team.team_scratch( 0 ), std::size_t( row ) * team_size );
            const index_type stride = index_type( 1 ) << slice_shift;
            const index_type first = ( ( index_type( i >> slice_shift ) * capacity ) << slice_shift ) +
                                     ( i & ( int( stride ) - 1 ) );
            int k = 0;
            query.template for_each_neighbor_as<Order, Access>(
                i, radius, [&]( const int j, Scalar, Scalar, Scalar, Scalar ) {
                    if ( k < depth )
                        stage( t * row + k ) = j;
                    else if ( k < capacity )
                        indices( first + k * stride ) = j;
                    ++k;
                } );
            counts( i ) = k;
            const int staged = k < depth ? k : depth;
            for ( int q = 0; q < staged; ++q )
                indices( first + q * stride ) = stage( t * row + q );
            if ( k > max_count )
                max_count = k;
        },
        Kokkos::Max<int>( largest ) );
    return n > 0 ? largest : 0;
}

/*!
  Staged ELL fill: as fill_ell_list (same entries, counts and return value), with the first `depth`
  entries of each particle staged (row t of a (depth + 1)-wide table: the odd width keeps lanes on
  distinct banks) and written after its sweep. On GPUs one kernel per walk (with_stencil_walk).
*/
template <class LaunchBounds = Kokkos::LaunchBounds<>, class ExecutionSpace, class Query,
          class CountView, class IndexView, class Scalar>
int fill_ell_list_staged( const ExecutionSpace& exec, const Query& query, int n, Scalar radius,
                          std::int64_t capacity, int slice_shift, const CountView& counts,
                          const IndexView& indices, int team_size = 0,
                          int depth = staged_fill_depth )
{
    int largest = 0;
    with_stencil_walk( exec, query, [&]( auto order, auto access ) {
        largest = fill_ell_list_staged_as<decltype( order )::value, decltype( access )::value, LaunchBounds>(
            exec, query, n, radius, capacity, slice_shift, counts, indices, team_size, depth );
    } );
    return largest;
}

/*!
  Copies a list with random access (`source.neighbor(i, k)`, such as an EllNeighborListView) into CSR
  storage whose offsets are already set, each team writing its particles' contiguous range together.
*/
template <class LaunchBounds = Kokkos::LaunchBounds<>, class ExecutionSpace, class SourceView,
          class OffsetView, class IndexView>
void copy_list_to_csr_staged( const ExecutionSpace& exec, const SourceView& source, int n,
                              const OffsetView& offsets, const IndexView& indices,
                              int team_size = 0 )
{
    using offset_type = typename OffsetView::non_const_value_type;
    team_size = staged_team_size<ExecutionSpace>( team_size );
    using policy_type = core::LaunchTeam<ExecutionSpace, LaunchBounds>;
    using member_type = typename policy_type::member_type;
    using local_type = scratch_array<offset_type, ExecutionSpace>;
    const int teams = ( n + team_size - 1 ) / team_size;
    if ( teams == 0 )
        return;
    policy_type policy( exec, teams, team_size );
    policy.set_scratch_size( 0, Kokkos::PerTeam( local_type::shmem_size( std::size_t( team_size ) + 1 ) ) );
    Kokkos::parallel_for(
        "morula::grid::neighbor_copy_to_csr", policy, KOKKOS_LAMBDA( const member_type& team ) {
            const int t = team.team_rank();
            const int base = team.league_rank() * team_size;
            const int members = n - base < team_size ? n - base : team_size;
            const local_type local( team.team_scratch( 0 ), std::size_t( team_size ) + 1 );
            const offset_type begin = offsets( base );
            for ( int q = t; q <= members; q += team_size )
                local( q ) = offsets( base + q ) - begin;
            team.team_barrier();
            const offset_type length = local( members );
            for ( offset_type e = t; e < length; e += team_size )
            {
                int lo = 0, hi = members - 1;
                while ( lo < hi )
                {
                    const int mid = ( lo + hi + 1 ) / 2;
                    if ( local( mid ) <= e )
                        lo = mid;
                    else
                        hi = mid - 1;
                }
                indices( begin + e ) = source.neighbor( base + lo, static_cast<int>( e - local( lo ) ) );
            }
        } );
}

} // namespace morula::grid::detail

#endif
