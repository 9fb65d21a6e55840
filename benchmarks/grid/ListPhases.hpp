// The neighbour-list phases shared by grid_benchmark and grid_vs_cabana: CSR and ELL list builds, the
// one-pass CSR build (ELL build + NeighborList::assign), and sweeps over each list with the op of
// Cabana's benchmark (an atomic add of j per entry) and with the sum kept in a register.
#ifndef MORULA_BENCHMARKS_LISTPHASES_HPP
#define MORULA_BENCHMARKS_LISTPHASES_HPP

#include "../common/BenchmarkUtils.hpp"

#include <morula/grid/EllNeighborList.hpp>
#include <morula/grid/NeighborList.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace morula::bench
{

struct ListTimings
{
    Stats csr_build, csr_sweep_atomic, csr_sweep_register;
    Stats ell_build, ell_sweep_atomic, ell_sweep_register;
    Stats csr_one_pass; //!< ELL build + NeighborList::assign
    // The fills alone (same binary, same call): CSR; ELL with direct stores from the sweep and staged
    // in scratch memory then written together (what the ELL list uses on GPUs).
    Stats csr_fill, ell_fill_direct, ell_fill_staged;
    int ell_capacity = 0;
    int largest_count = 0;
    double ell_bytes = 0, csr_bytes = 0;

    nlohmann::json to_json() const
    {
        return { { "csr_build", csr_build.to_json() },
                 { "csr_sweep_atomic", csr_sweep_atomic.to_json() },
                 { "csr_sweep_register", csr_sweep_register.to_json() },
                 { "ell_build", ell_build.to_json() },
                 { "ell_sweep_atomic", ell_sweep_atomic.to_json() },
                 { "ell_sweep_register", ell_sweep_register.to_json() },
                 { "csr_one_pass_build", csr_one_pass.to_json() },
                 { "csr_fill", csr_fill.to_json() },
                 { "ell_fill_direct", ell_fill_direct.to_json() },
                 { "ell_fill_staged", ell_fill_staged.to_json() },
                 { "ell_capacity", ell_capacity },
                 { "largest_count", largest_count },
                 { "ell_index_bytes", ell_bytes },
                 { "csr_index_bytes", csr_bytes } };
    }

    void print() const
    {
        std::printf( "    lists: CSR build %.3f ms, ELL build %.3f ms (capacity %d, largest %d), CSR "
                     "one pass %.3f ms\n",
                     1e3 * csr_build.median(), 1e3 * ell_build.median(), ell_capacity, largest_count,
                     1e3 * csr_one_pass.median() );
        std::printf( "    list sweeps (atomic / register): CSR %.3f / %.3f ms, ELL %.3f / %.3f ms\n",
                     1e3 * csr_sweep_atomic.median(), 1e3 * csr_sweep_register.median(),
                     1e3 * ell_sweep_atomic.median(), 1e3 * ell_sweep_register.median() );
        std::printf( "    fills alone: CSR %.3f ms, ELL direct / staged %.3f / %.3f ms\n",
                     1e3 * csr_fill.median(), 1e3 * ell_fill_direct.median(),
                     1e3 * ell_fill_staged.median() );
    }
};

/*!
  The staged ELL fill at other team sizes, staging depths and register caps (GPU spaces only; an empty
  array elsewhere): the evidence behind staged_fill_team_size and staged_fill_depth. `ell` is a list
  built from `query` at `cutoff`; its storage is overwritten with the same entries.
*/
template <class Scalar, class ExecutionSpace, class Query, class MemorySpace>
nlohmann::json time_staged_fill_variants( const ExecutionSpace& exec, int warmup, int runs,
                                          const Query& query, Scalar cutoff, int n,
                                          const morula::grid::EllNeighborList<Scalar, MemorySpace>& ell )
{
    namespace gd = morula::grid::detail;
    nlohmann::json out = nlohmann::json::array();
    if constexpr ( gd::stages_list_fill<ExecutionSpace>() )
    {
        const auto counts = ell.counts();
        const auto entries = ell.indices();
        const int shift = ell.slice_shift();
        const std::int64_t capacity = ell.capacity();
        auto variant = [&]( auto bounds, int team, int depth, const char* bound_name ) {
            using bounds_type = decltype( bounds );
            const Stats e = time_phase( exec, warmup, runs, [&] {
                gd::fill_ell_list_staged<bounds_type>( exec, query, n, cutoff, capacity, shift, counts,
                                                       entries, team, depth );
            } );
            std::printf( "    staged ELL fill team %3d depth %2d %-16s %.3f ms\n", team, depth, bound_name,
                         1e3 * e.median() );
            out.push_back( { { "team_size", team },
                             { "depth", depth },
                             { "launch_bounds", bound_name },
                             { "ell_fill", e.to_json() } } );
        };
        for ( int depth : { 16, 24, 32, 48 } )
            variant( Kokkos::LaunchBounds<>(), 128, depth, "none" );
        variant( Kokkos::LaunchBounds<>(), 32, 32, "none" );
        variant( Kokkos::LaunchBounds<>(), 32, 24, "none" );
        variant( Kokkos::LaunchBounds<>(), 64, 32, "none" );
        variant( Kokkos::LaunchBounds<>(), 256, 32, "none" );
        for ( int depth : { 24, 32 } )
            variant( Kokkos::LaunchBounds<128, 8>(), 128, depth, "<128, 8>" );
        variant( Kokkos::LaunchBounds<256, 4>(), 256, 24, "<256, 4>" );
    }
    return out;
}

/*!
  Times the list builds and sweeps for the n particles of `query` at `cutoff`, and checks that every
  list holds `expected_pairs` entries and that the sweeps over the CSR and ELL lists agree.
*/
template <class Scalar, class ExecutionSpace, class Query>
ListTimings time_neighbor_lists( const ExecutionSpace& exec, int warmup, int runs, const Query& query,
                                 Scalar cutoff, int n, long long expected_pairs,
                                 nlohmann::json* fill_variants = nullptr )
{
    using memory_space = typename ExecutionSpace::memory_space;
    ListTimings t;
    auto check_pairs = [&]( const char* what, long long pairs ) {
        if ( pairs != expected_pairs )
            throw std::runtime_error( std::string( what ) + " holds " + std::to_string( pairs ) +
                                      " pairs, expected " + std::to_string( expected_pairs ) );
    };
    Kokkos::View<int*, memory_space> sum( "list_sum", n );
    auto checksum = [&] {
        long long s = 0;
        Kokkos::parallel_reduce(
            "morula::bench::list_checksum", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i, long long& a ) { a += sum( i ); }, s );
        return s;
    };

    // CSR: count, scan, fill.
    morula::grid::NeighborList<Scalar, memory_space> csr;
    t.csr_build = time_phase( exec, warmup, runs, [&] { csr.build( exec, query, cutoff ); } );
    profile_once( exec, "list_build_csr", [&] { csr.build( exec, query, cutoff ); } );
    check_pairs( "the CSR list", csr.num_pairs() );
    t.csr_bytes = 4.0 * double( csr.num_pairs() );
    using csr_neighbors = morula::grid::ListedNeighbors<memory_space, ExecutionSpace>;
    auto csr_atomic = [&] {
        morula::grid::for_each_listed_particle(
            exec, csr.view(), n, KOKKOS_LAMBDA( const int i, const csr_neighbors& nb ) {
                nb.for_each( [&]( const int j ) { Kokkos::atomic_add( &sum( i ), j ); } );
            } );
    };
    t.csr_sweep_atomic = time_phase( exec, warmup, runs, [&] { Kokkos::deep_copy( exec, sum, 0 ); }, csr_atomic );
    profile_once( exec, "list_sweep_csr", csr_atomic );
    t.csr_sweep_register = time_phase( exec, warmup, runs, [&] {
        morula::grid::for_each_listed_particle(
            exec, csr.view(), n, KOKKOS_LAMBDA( const int i, const csr_neighbors& nb ) {
                int s = 0;
                nb.for_each( [&]( const int j ) { s += j; } );
                sum( i ) = s;
            } );
    } );
    const long long csr_sum = checksum();

    // ELL: one sweep per rebuild (the first build also counts, to size the capacity).
    morula::grid::EllNeighborList<Scalar, memory_space> ell;
    t.ell_build = time_phase( exec, warmup, runs, [&] { ell.build( exec, query, cutoff ); } );
    profile_once( exec, "list_build_ell", [&] { ell.build( exec, query, cutoff ); } );
    t.ell_capacity = ell.capacity();
    t.largest_count = ell.largest_count();
    t.ell_bytes = 4.0 * double( ell.indices().extent( 0 ) );
    using ell_neighbors = morula::grid::EllListedNeighbors<memory_space, ExecutionSpace>;
    auto ell_atomic = [&] {
        morula::grid::for_each_listed_particle(
            exec, ell.view(), n, KOKKOS_LAMBDA( const int i, const ell_neighbors& nb ) {
                nb.for_each( [&]( const int j ) { Kokkos::atomic_add( &sum( i ), j ); } );
            } );
    };
    t.ell_sweep_atomic = time_phase( exec, warmup, runs, [&] { Kokkos::deep_copy( exec, sum, 0 ); }, ell_atomic );
    profile_once( exec, "list_sweep_ell", ell_atomic );
    t.ell_sweep_register = time_phase( exec, warmup, runs, [&] {
        morula::grid::for_each_listed_particle(
            exec, ell.view(), n, KOKKOS_LAMBDA( const int i, const ell_neighbors& nb ) {
                int s = 0;
                nb.for_each( [&]( const int j ) { s += j; } );
                sum( i ) = s;
            } );
    } );
    if ( checksum() != csr_sum )
        throw std::runtime_error( "the sweeps over the CSR and ELL lists disagree" );

    // The fills alone (the ELL one direct and staged), into the lists' own storage.
    {
        namespace gd = morula::grid::detail;
        const auto offsets = csr.offsets();
        const auto indices = csr.indices();
        const auto counts = ell.counts();
        const auto entries = ell.indices();
        const int shift = ell.slice_shift();
        const std::int64_t capacity = ell.capacity();
        t.csr_fill = time_phase( exec, warmup, runs, [&] {
            gd::fill_neighbor_list( exec, query, n, cutoff, offsets, indices );
        } );
        t.ell_fill_direct = time_phase( exec, warmup, runs, [&] {
            gd::fill_ell_list( exec, query, n, cutoff, capacity, shift, counts, entries );
        } );
        t.ell_fill_staged = time_phase( exec, warmup, runs, [&] {
            gd::fill_ell_list_staged( exec, query, n, cutoff, capacity, shift, counts, entries );
        } );
    }

    if ( fill_variants != nullptr )
        *fill_variants = time_staged_fill_variants( exec, warmup, runs, query, cutoff, n, ell );

    // One-pass CSR: the ELL build and a copy into CSR.
    morula::grid::NeighborList<Scalar, memory_space> csr_copy;
    t.csr_one_pass = time_phase( exec, warmup, runs, [&] {
        ell.build( exec, query, cutoff );
        csr_copy.assign( exec, ell );
    } );
    check_pairs( "the one-pass CSR list", csr_copy.num_pairs() );
    return t;
}

} // namespace morula::bench

#endif
