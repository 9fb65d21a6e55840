/*!
  \file NeighborListFill.hpp
  \brief Writing the CSR neighbour list: coalesced on GPUs through a staging buffer in team scratch.
*/
#ifndef MORULA_GRID_DETAIL_NEIGHBORLISTFILL_HPP
#define MORULA_GRID_DETAIL_NEIGHBORLISTFILL_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::grid::detail
{

//! Entries of a team's staging buffer (32 KiB of scratch memory).
constexpr int fill_staging_entries = 8192;

/*!
  Writes every particle's neighbours at indices(offsets(i)) onwards. On a GPU the neighbours of
  consecutive particles are adjacent in the list, but one thread per particle would store to as many
  different places as the warp has threads; the team therefore collects its particles' lists in
  scratch memory and copies the whole run out with consecutive threads on consecutive entries
  (entries past the buffer's capacity, rare, are stored directly). CPU backends store directly.
*/
template <class ExecutionSpace, class Query, class OffsetView, class IndexView, class Scalar>
void fill_neighbor_list( const ExecutionSpace& exec, const Query& query, int n, Scalar radius,
                         const OffsetView& offsets, const IndexView& indices )
{
    using offset_type = typename OffsetView::non_const_value_type;
    constexpr bool host_backend =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                   typename ExecutionSpace::memory_space>::accessible;
    if constexpr ( host_backend )
    {
        Kokkos::parallel_for(
            "morula::grid::neighbor_fill", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i ) {
                offset_type k = offsets( i );
                query.for_each_neighbor( i, radius, [&]( const int j, Scalar, Scalar, Scalar,
                                                         Scalar ) { indices( k++ ) = j; } );
            } );
    }
    else
    {
        using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
        using member_type = typename policy_type::member_type;
        using scratch_view = Kokkos::View<int*, typename ExecutionSpace::scratch_memory_space,
                                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
        constexpr int particles_per_team = 128;
        const int teams = ( n + particles_per_team - 1 ) / particles_per_team;
        policy_type policy( exec, teams, particles_per_team );
        policy.set_scratch_size(
            0, Kokkos::PerTeam( scratch_view::shmem_size( fill_staging_entries ) ) );
        Kokkos::parallel_for(
            "morula::grid::neighbor_fill_staged", policy, KOKKOS_LAMBDA( const member_type& team ) {
                const int first = team.league_rank() * particles_per_team;
                const int last = first + particles_per_team < n ? first + particles_per_team : n;
                const offset_type run_begin = offsets( first );
                const offset_type run_end = offsets( last );
                scratch_view staged( team.team_scratch( 0 ), fill_staging_entries );
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, first, last ), [&]( const int i ) {
                    offset_type k = offsets( i ) - run_begin;
                    query.for_each_neighbor( i, radius, [&]( const int j, Scalar, Scalar, Scalar,
                                                             Scalar ) {
                        if ( k < fill_staging_entries )
                            staged( static_cast<int>( k ) ) = j;
                        else
                            indices( run_begin + k ) = j;
                        ++k;
                    } );
                } );
                team.team_barrier();
                const offset_type staged_count = run_end - run_begin < fill_staging_entries
                                                     ? run_end - run_begin
                                                     : offset_type( fill_staging_entries );
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, static_cast<int>( staged_count ) ),
                                      [&]( const int k ) { indices( run_begin + k ) = staged( k ); } );
            } );
    }
}

} // namespace morula::grid::detail

#endif
