// The neighbour-count sweep through grid::NeighborReduction with 1 to 4 particles of a cell per thread
// and the automatic choice (issue #25), timed in the same call as for_each_particle's count sweep, each
// checked against its counts. `grid_benchmark` and `mechanics_benchmark` report it.
#ifndef MORULA_BENCHMARKS_REDUCTIONSWEEPS_HPP
#define MORULA_BENCHMARKS_REDUCTIONSWEEPS_HPP

#include "../common/BenchmarkUtils.hpp"

#include <morula/grid/NeighborList.hpp>
#include <morula/grid/NeighborReduction.hpp>

#include <Kokkos_Core.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace morula::bench
{

/*!
  Times NeighborReduction's count sweep for particles_per_thread 0 (automatic), 1, 2, 3 and 4, pairs
  inline and batched, and checks each against `expected` (for_each_particle's counts). Returns
  [{particles_per_thread, resolved, pair_batching, time}, ...]; the group scan is inside the timing.
*/
template <class ExecutionSpace, class Query, class CountView>
nlohmann::json time_reduction_sweeps( const ExecutionSpace& exec, int warmup, int runs, const Query& query,
                                      typename Query::scalar_type radius, const CountView& expected )
{
    using scalar_type = typename Query::scalar_type;
    using memory_space = typename ExecutionSpace::memory_space;
    const int n = query.num_particles();
    Kokkos::View<int*, memory_space> got( "reduction_counts", n );
    const grid::detail::NeighborCount<scalar_type, Kokkos::View<int*, memory_space>> kernel{ got };
    nlohmann::json out = nlohmann::json::array();
    for ( const auto batching : { grid::PairBatching::inline_pairs, grid::PairBatching::batched } )
        for ( int k : { 0, 1, 2, 3, 4 } )
        {
            grid::NeighborReduction<memory_space> reduction( k, batching );
            const int resolved = reduction.resolved_particles_per_thread( exec, query );
            const bool batched = batching == grid::PairBatching::batched;
            Kokkos::deep_copy( exec, got, -1 );
            const Stats s = time_phase( exec, warmup, runs, [&] { reduction.run( exec, query, kernel, radius ); } );
            int wrong = 0;
            Kokkos::parallel_reduce(
                "morula::bench::reduction_check", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
                KOKKOS_LAMBDA( const int i, int& w ) { w += got( i ) != expected( i ) ? 1 : 0; }, wrong );
            if ( wrong != 0 )
                throw std::runtime_error( "time_reduction_sweeps: " + std::to_string( wrong ) + " counts with " +
                                          std::to_string( resolved ) + " per thread differ from for_each_particle's" );
            std::printf( "    NeighborReduction count sweep, %d per thread (asked %d), pairs %s: %.3f ms\n", resolved, k,
                         batched ? "batched" : "inline", 1e3 * s.median() );
            out.push_back( { { "particles_per_thread", k },
                             { "resolved", resolved },
                             { "pair_batching", batched ? "batched" : "inline" },
                             { "time", s.to_json() } } );
        }
    return out;
}

} // namespace morula::bench

#endif
