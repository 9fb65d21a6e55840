// An experiment kept as evidence (issue #25): the neighbour-count sweep with V lanes per particle. Each
// lane walks the particle's stencil and takes every V-th candidate of each run, and the lanes' counts
// are reduced (Kokkos vector lanes, a TeamPolicy with vector length V). It gives the same counts as
// for_each_particle; `grid_experiments` times it against for_each_particle on GPUs.
#ifndef MORULA_BENCHMARKS_SWEEPLANES_HPP
#define MORULA_BENCHMARKS_SWEEPLANES_HPP

#include "../common/BenchmarkUtils.hpp"

#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <stdexcept>

namespace morula::bench
{
// The neighbour query's stencil walk, internal to the library (experiments and checks look inside it).
using QueryAccess = morula::grid::detail::QueryAccess;

//! Candidate runs taken by one of `lanes` lanes: slots begin + lane, begin + lane + lanes, ... (data in
//! cell order, so a slot is a particle).
template <class Query>
struct LaneStridedSource
{
    using scalar_type = typename Query::scalar_type;
    const Query& q;
    int lane, lanes;

    template <class F>
    KOKKOS_INLINE_FUNCTION void scan( int, int begin, int end, int self, scalar_type xi, scalar_type yi,
                                      scalar_type zi, scalar_type sx, scalar_type sy, scalar_type sz,
                                      scalar_type r2max, F& f ) const
    {
        for ( int k = begin + lane; k < end; k += lanes )
        {
            if ( k == self )
                continue;
            const scalar_type dx = xi - q.position( k, 0 ) - sx;
            const scalar_type dy = yi - q.position( k, 1 ) - sy;
            const scalar_type dz = zi - q.position( k, 2 ) - sz;
            const scalar_type r2 = morula::grid::detail::distance_squared( dx, dy, dz );
            if ( r2 <= r2max )
                f( k, dx, dy, dz, r2 );
        }
    }
};

/*!
  Times the lane-strided count sweep for lanes 1, 2, 4, 8 and 128 or 256 threads per team, checks its
  counts against `expected` (for_each_particle's), and returns the timings. Needs data in cell order and
  no per-pair minimum image; GPU spaces only (an empty array elsewhere).
*/
template <class ExecutionSpace, class Query, class CountView>
nlohmann::json time_lane_sweeps( const ExecutionSpace& exec, int warmup, int runs, const Query& query,
                                 typename Query::scalar_type radius, const CountView& expected )
{
    using scalar_type = typename Query::scalar_type;
    using memory_space = typename ExecutionSpace::memory_space;
    nlohmann::json out = nlohmann::json::array();
    if constexpr ( !Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible )
    {
        if ( !query.data_sorted() || query.per_pair_minimum_image() )
            throw std::runtime_error( "time_lane_sweeps: needs data in cell order and per-cell images" );
        const int n = query.num_particles();
        const scalar_type r2max = radius * radius;
        Kokkos::View<int*, memory_space> got( "lane_counts", n );
        using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
        using member_type = typename policy_type::member_type;
        for ( int lanes : { 1, 2, 4, 8 } )
            for ( int threads : { 128, 256 } )
            {
                const int team = threads / lanes;
                const int leagues = ( n + team - 1 ) / team;
                const Stats s = time_phase( exec, warmup, runs, [&] {
                    Kokkos::parallel_for(
                        "morula::bench::lane_sweep", policy_type( exec, leagues, team, lanes ),
                        KOKKOS_LAMBDA( const member_type& t ) {
                            const int i = t.league_rank() * team + t.team_rank();
                            if ( i >= n )
                                return;
                            const scalar_type xi = query.position( i, 0 );
                            const scalar_type yi = query.position( i, 1 );
                            const scalar_type zi = query.position( i, 2 );
                            int c = 0;
                            Kokkos::parallel_reduce(
                                Kokkos::ThreadVectorRange( t, lanes ),
                                [&]( const int lane, int& count ) {
                                    const LaneStridedSource<Query> source{ query, lane, lanes };
                                    auto f = [&]( int, scalar_type, scalar_type, scalar_type, scalar_type ) {
                                        ++count;
                                    };
                                    QueryAccess::visit_stencil<false>( query, i, xi, yi, zi, r2max, source, f );
                                },
                                c );
                            Kokkos::single( Kokkos::PerThread( t ), [&] { got( i ) = c; } );
                        } );
                } );
                int wrong = 0;
                Kokkos::parallel_reduce(
                    "morula::bench::lane_check", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
                    KOKKOS_LAMBDA( const int i, int& w ) { w += got( i ) != expected( i ) ? 1 : 0; }, wrong );
                if ( wrong != 0 )
                    throw std::runtime_error( "time_lane_sweeps: counts differ from for_each_particle's" );
                std::printf( "    lane sweep: %d lanes per particle, %3d threads per team: %.3f ms\n", lanes,
                             threads, 1e3 * s.median() );
                out.push_back( { { "lanes", lanes }, { "threads_per_team", threads }, { "time", s.to_json() } } );
            }
    }
    return out;
}

} // namespace morula::bench

#endif
