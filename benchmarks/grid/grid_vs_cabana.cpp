// Morula's grid and neighbour list next to Cabana's LinkedCellList and VerletList (issue #10): same
// particles, same process, same device. Before timing, both libraries must find the same number of
// neighbours for every particle; a mismatch stops the program.
//
//   grid_vs_cabana [--cases a,b,c,d] [--sizes 1000000,16000000] [--space device|host] [--runs 10]
//                  [--warmup 3] [--out results.json]
//
// Cases: (a) Cabana's own benchmark configuration: N points uniform in a cube of edge 1.3 N^(1/3),
// cutoff 2.5, cells of edge = cutoff, double; (b) the same in float (Cabana in float too; its
// VerletList does not compile with float positions, so (b) has no Cabana list phases);
// (c) strongly clustered points (Gaussian blobs, density varying ~100x); (d) 16M points in 256^3
// cells (issue #2's build case), cutoff 1.
//
// Phases, each library: build (bin, count, scan, permutation); permute of the particle data; sweep
// through the grid counting neighbours within the cutoff (sorted data; Morula's for_each_particle and
// NeighborReduction with its automatic particles per thread; the traversals measured and not kept are in
// benchmarks/experiments/, grid_experiments); CSR / Verlet list build;
// sweep over the list (Cabana's benchmark operation: atomic add of each neighbour index).
#include "../common/BenchmarkUtils.hpp"
#include "GridBenchmarkCommon.hpp"
#include "ListPhases.hpp"

#include <morula/core/SoA.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/NeighborReduction.hpp>
#include <morula/grid/NeighborSweep.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Cabana_Core.hpp>
#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace grid_vs_cabana
{
using morula::bench::Stats;
using morula::bench::time_phase;

struct Settings
{
    std::vector<std::string> cases = { "a", "b", "c", "d" };
    std::vector<long> sizes = { 1000000, 16000000 };
    std::string space = "device";
    int runs = 10;
    int warmup = 3;
    std::string out = "grid_vs_cabana.json";
};

//! The particle set and geometry of one case.
struct CaseSpec
{
    std::string name;
    int n;
    double edge;
    double cutoff;
    bool clustered;
};

nlohmann::json both( const Stats& morula, const Stats& cabana )
{
    return { { "morula", morula.to_json() },
             { "cabana", cabana.to_json() },
             { "speedup_median", cabana.median() / morula.median() },
             { "speedup_min", cabana.min() / morula.min() } };
}

void report( const char* phase, const Stats& m, const Stats& c )
{
    std::printf( "    %-26s morula %9.3f ms (min %9.3f)   cabana %9.3f ms (min %9.3f)   x%.2f\n",
                 phase, 1e3 * m.median(), 1e3 * m.min(), 1e3 * c.median(), 1e3 * c.min(),
                 c.median() / m.median() );
    std::fflush( stdout );
}

//! Throws unless found(i) == reference(i) for every i < n (the experiments' counts against
//! for_each_particle's).
template <class ExecutionSpace, class CountView>
void expect_same_counts( const ExecutionSpace& exec, int n, const CountView& found,
                         const CountView& reference, const std::string& what )
{
    int mismatches = 0;
    Kokkos::parallel_reduce(
        "count_check", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, int& bad ) { bad += found( i ) != reference( i ) ? 1 : 0; }, mismatches );
    if ( mismatches != 0 )
        throw std::runtime_error( what + " counts differ for " + std::to_string( mismatches ) +
                                  " particles" );
}

/*!
  Runs one case with positions of type MorulaScalar for Morula and CabanaScalar for Cabana (the same
  points: generated in MorulaScalar and converted, so float cases compare identical coordinates).
*/
template <class MorulaScalar, class CabanaScalar, class ExecutionSpace>
nlohmann::json run_case( const ExecutionSpace& exec, const Settings& set, const CaseSpec& spec )
{
    using memory_space = typename ExecutionSpace::memory_space;
    using positions_type = Kokkos::View<MorulaScalar* [3], Kokkos::LayoutLeft, memory_space>;
    using aosoa_type = Cabana::AoSoA<Cabana::MemberTypes<CabanaScalar[3]>, memory_space>;
    using verlet_type = Cabana::VerletList<memory_space, Cabana::FullNeighborTag,
                                           Cabana::VerletLayout2D, Cabana::TeamVectorOpTag>;
    const int n = spec.n;
    const MorulaScalar edge = static_cast<MorulaScalar>( spec.edge );
    const MorulaScalar cutoff = static_cast<MorulaScalar>( spec.cutoff );
    const CabanaScalar c_cutoff = static_cast<CabanaScalar>( spec.cutoff );

    std::printf( "case %s: n = %d, edge %.4g, cutoff %.3g, Morula %s, Cabana %s\n",
                 spec.name.c_str(), n, spec.edge, spec.cutoff,
                 sizeof( MorulaScalar ) == 4 ? "float" : "double",
                 sizeof( CabanaScalar ) == 4 ? "float" : "double" );
    std::fflush( stdout );

    // --- identical particles for both libraries ------------------------------------------------------
    positions_type original( "original", n );
    if ( spec.clustered )
        morula::bench::fill_clustered( exec, original, n, edge, 64,
                                       static_cast<MorulaScalar>( 0.0447 * spec.edge ), 0.1,
                                       424242 );
    else
        morula::bench::fill_uniform( exec, original, n, MorulaScalar( 0 ), edge, 424242 );
    aosoa_type c_original( "c_original", n );
    aosoa_type c_particles( "c_particles", n );
    {
        auto xs = Cabana::slice<0>( c_original );
        Kokkos::parallel_for(
            "copy_to_cabana", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i ) {
                for ( int d = 0; d < 3; ++d )
                    xs( i, d ) = static_cast<CabanaScalar>( original( i, d ) );
            } );
    }
    morula::core::Particles<MorulaScalar, memory_space> particles( "particles", n );
    const CabanaScalar c_min[3] = { 0, 0, 0 };
    const CabanaScalar c_max[3] = { CabanaScalar( spec.edge ), CabanaScalar( spec.edge ),
                                    CabanaScalar( spec.edge ) };
    const CabanaScalar c_delta[3] = { c_cutoff, c_cutoff, c_cutoff };
    const auto box = morula::core::Box<MorulaScalar>::cube( edge, morula::core::Boundary::closed );
    morula::grid::UniformGrid<MorulaScalar, memory_space> grid( box, cutoff );

    // --- correctness: the same neighbour count for every particle (original order) ------------------
    // Cabana's count: its linked cell list over the unsorted particles with the same distance test.
    long long pairs = 0;
    {
        grid.build( exec, original, n );
        const auto query = grid.query( original );
        Kokkos::View<int*, memory_space> m_count( "m_count", n );
        Kokkos::parallel_for(
            "morula_count", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i ) { m_count( i ) = query.count_neighbors( i ); } );
        Kokkos::View<int*, memory_space> c_count( "c_count", n );
        auto xs = Cabana::slice<0>( c_original );
        auto lcl = Cabana::createLinkedCellList( xs, c_delta, c_min, c_max );
        const CabanaScalar rc2 = c_cutoff * c_cutoff;
        auto op = KOKKOS_LAMBDA( const int i, const int j )
        {
            // The same distance arithmetic as Morula (x, y, z accumulated in this order), so that
            // float pairs at the cutoff round alike in both libraries.
            const CabanaScalar r2 = morula::grid::detail::distance_squared(
                xs( i, 0 ) - xs( j, 0 ), xs( i, 1 ) - xs( j, 1 ), xs( i, 2 ) - xs( j, 2 ) );
            if ( r2 <= rc2 )
                c_count( i ) += 1;
        };
        Cabana::neighbor_parallel_for( Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ), op, lcl,
                                       Cabana::FirstNeighborsTag(), Cabana::SerialOpTag(),
                                       "cabana_count" );
        auto hm = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_count );
        auto hc = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), c_count );
        int mismatches = 0, first = -1;
        for ( int i = 0; i < n; ++i )
        {
            pairs += hm( i );
            if ( hm( i ) != hc( i ) && mismatches++ == 0 )
                first = i;
        }
        if ( mismatches )
            throw std::runtime_error( "case " + spec.name + ": " + std::to_string( mismatches ) +
                                      " particles have different neighbour counts; particle " +
                                      std::to_string( first ) + ": Morula " +
                                      std::to_string( hm( first ) ) + ", Cabana " +
                                      std::to_string( hc( first ) ) );
        std::printf( "    check: Morula and Cabana agree on the neighbour count of all %d particles "
                     "(%.2f per particle)\n",
                     n, double( pairs ) / n );
    }

    nlohmann::json result = { { "case", spec.name },
                              { "n", n },
                              { "edge", spec.edge },
                              { "cutoff", spec.cutoff },
                              { "clustered", spec.clustered },
                              { "morula_scalar", sizeof( MorulaScalar ) == 4 ? "float" : "double" },
                              { "cabana_scalar", sizeof( CabanaScalar ) == 4 ? "float" : "double" },
                              { "cells", grid.num_cells() },
                              { "neighbors_per_particle", double( pairs ) / n },
                              { "pairs", pairs } };

    // --- 1. build -----------------------------------------------------------------------------------
    auto c_lcl = Cabana::createLinkedCellList( Cabana::slice<0>( c_original ), c_delta, c_min,
                                               c_max );
    const Stats m_build = time_phase( exec, set.warmup, set.runs,
                                      [&] { grid.build( exec, original, n ); } );
    const Stats c_build = time_phase( exec, set.warmup, set.runs,
                                      [&] { c_lcl.build( Cabana::slice<0>( c_original ) ); } );
    report( "build (random input)", m_build, c_build );
    result["build"] = both( m_build, c_build );
    result["build"]["morula"]["bytes"] =
        morula::bench::build_bytes( n, grid.num_cells(), sizeof( MorulaScalar ) );

    // --- 2. permute the particle data ---------------------------------------------------------------
    const Stats m_perm = time_phase(
        exec, set.warmup, set.runs,
        [&] {
            Kokkos::deep_copy( exec, particles.positions(), original );
            grid.build( exec, original, n );
        },
        [&] { grid.permute( exec, particles ); } );
    const Stats c_perm = time_phase(
        exec, set.warmup, set.runs,
        [&] {
            Cabana::deep_copy( c_particles, c_original );
            c_lcl.build( Cabana::slice<0>( c_particles ) );
        },
        [&] { Cabana::permute( c_lcl, c_particles ); } );
    report( "permute (random input)", m_perm, c_perm );
    result["permute"] = both( m_perm, c_perm );

    // Both data sets are now in their library's cell order. Cabana's own benchmark rebuilds and
    // permutes from there (its timing loop permutes in place); a simulation that rebuilds every step
    // sees the same nearly sorted input. Time that protocol too.
    const Stats m_build_sorted = time_phase(
        exec, set.warmup, set.runs, [&] { grid.build( exec, particles.positions(), n ); } );
    const Stats c_build_sorted = time_phase(
        exec, set.warmup, set.runs, [&] { c_lcl.build( Cabana::slice<0>( c_particles ) ); } );
    report( "build (sorted input)", m_build_sorted, c_build_sorted );
    result["build_sorted_input"] = both( m_build_sorted, c_build_sorted );
    const Stats m_perm_sorted = time_phase(
        exec, set.warmup, set.runs, [&] { grid.build( exec, particles.positions(), n ); },
        [&] { grid.permute( exec, particles ); } );
    const Stats c_perm_sorted = time_phase(
        exec, set.warmup, set.runs, [&] { c_lcl.build( Cabana::slice<0>( c_particles ) ); },
        [&] { Cabana::permute( c_lcl, c_particles ); } );
    report( "permute (sorted input)", m_perm_sorted, c_perm_sorted );
    result["permute_sorted_input"] = both( m_perm_sorted, c_perm_sorted );

    // The sweeps below read the data in cell order.
    const auto sorted_query = grid.query( particles.positions() );
    auto c_x = Cabana::slice<0>( c_particles );

    // --- 3. neighbour sweep through the grid (sorted data) ------------------------------------------
    Kokkos::View<int*, memory_space> m_count( "m_count", n );
    Kokkos::View<int*, memory_space> c_count( "c_count", n );
    using neighbors_type = morula::grid::ParticleNeighbors<decltype( sorted_query ), ExecutionSpace>;
    const Stats m_sweep = time_phase( exec, set.warmup, set.runs, [&] {
        morula::grid::for_each_particle(
            exec, sorted_query,
            KOKKOS_LAMBDA( const int i, const neighbors_type& nb ) { m_count( i ) = nb.count(); } );
    } );
    const CabanaScalar rc2 = c_cutoff * c_cutoff;
    auto c_count_op = KOKKOS_LAMBDA( const int i, const int j )
    {
        // One thread per i (SerialOpTag): a plain increment is safe.
        const CabanaScalar r2 = morula::grid::detail::distance_squared(
            c_x( i, 0 ) - c_x( j, 0 ), c_x( i, 1 ) - c_x( j, 1 ), c_x( i, 2 ) - c_x( j, 2 ) );
        if ( r2 <= rc2 )
            c_count( i ) += 1;
    };
    Kokkos::RangePolicy<ExecutionSpace> policy( exec, 0, n );
    const Stats c_sweep = time_phase(
        exec, set.warmup, set.runs, [&] { Kokkos::deep_copy( exec, c_count, 0 ); },
        [&] {
            Cabana::neighbor_parallel_for( policy, c_count_op, c_lcl, Cabana::FirstNeighborsTag(),
                                           Cabana::SerialOpTag(), "cabana_sweep" );
        } );
    // Cabana's own benchmark operation (no distance test, one atomic per candidate), for reference
    // against the published anchor.
    Kokkos::View<int*, memory_space> c_anchor( "c_anchor", n );
    auto c_anchor_op = KOKKOS_LAMBDA( const int i, const int j )
    {
        Kokkos::atomic_add( &c_anchor( i ), j );
    };
    const Stats c_sweep_anchor = time_phase( exec, set.warmup, set.runs, [&] {
        Cabana::neighbor_parallel_for( policy, c_anchor_op, c_lcl, Cabana::FirstNeighborsTag(),
                                       Cabana::SerialOpTag(), "cabana_sweep_anchor" );
    } );
    {
        long long m_total = 0, c_total = 0;
        Kokkos::parallel_reduce(
            "sweep_totals", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i, long long& a, long long& b ) {
                a += m_count( i );
                b += c_count( i );
            },
            m_total, c_total );
        if ( m_total != pairs || c_total != pairs )
            throw std::runtime_error( "case " + spec.name + ": sweep totals differ (Morula " +
                                      std::to_string( m_total ) + ", Cabana " +
                                      std::to_string( c_total ) + ", expected " +
                                      std::to_string( pairs ) + ")" );
    }
    auto offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.cell_offsets() );
    std::vector<int> off( offsets.data(), offsets.data() + offsets.extent( 0 ) );
    const auto& g = grid.geometry();
    const double candidates =
        morula::bench::stencil_candidates( off, g.ncell[0], g.ncell[1], g.ncell[2] );
    report( "sweep through grid", m_sweep, c_sweep );
    // The same count through grid::NeighborReduction with its automatic particles per thread: the
    // library's own counting path (NeighborList's count pass), which a user's per-pair sum also takes.
    // Its counts must equal for_each_particle's.
    Stats m_sweep_reduction;
    int reduction_per_thread = 0;
    {
        Kokkos::View<int*, memory_space> q_count( "q_count", n );
        const morula::grid::detail::NeighborCount<MorulaScalar, Kokkos::View<int*, memory_space>> kernel{ q_count };
        morula::grid::NeighborReduction<memory_space> reduction;
        reduction_per_thread = reduction.resolved_particles_per_thread( exec, sorted_query );
        Kokkos::deep_copy( exec, q_count, -1 );
        m_sweep_reduction = time_phase( exec, set.warmup, set.runs,
                                        [&] { reduction.run( exec, sorted_query, kernel, cutoff ); } );
        expect_same_counts( exec, n, q_count, m_count, "case " + spec.name + ": NeighborReduction" );
        const std::string label = "  NeighborReduction (K=" + std::to_string( reduction_per_thread ) + ")";
        report( label.c_str(), m_sweep_reduction, c_sweep );
    }
    std::printf( "    %-26s cabana %9.3f ms (its benchmark op: atomic per candidate, no distance)\n",
                 "", 1e3 * c_sweep_anchor.median() );
    result["sweep"] = both( m_sweep, c_sweep );
    result["sweep"]["candidate_pairs"] = candidates;
    result["sweep"]["morula_candidate_pairs_per_s"] = candidates / m_sweep.median();
    result["sweep_neighbor_reduction"] = both( m_sweep_reduction, c_sweep );
    result["sweep_neighbor_reduction"]["particles_per_thread"] = reduction_per_thread;
    result["sweep_cabana_benchmark_op"] = c_sweep_anchor.to_json();

    // --- 4. CSR / Verlet list build (and Morula's ELL list and one-pass CSR build) ------------------
    const morula::bench::ListTimings lists = morula::bench::time_neighbor_lists<MorulaScalar>(
        exec, set.warmup, set.runs, sorted_query, cutoff, n, pairs );
    lists.print();
    result["morula_lists"] = lists.to_json();
    const Stats& m_list = lists.csr_build;
    const Stats& m_iter = lists.csr_sweep_atomic;
    const Stats& m_iter_reg = lists.csr_sweep_register;
    if constexpr ( std::is_same<CabanaScalar, double>::value )
    {
        verlet_type verlet;
        Stats c_list;
        try
        {
            c_list = time_phase( exec, set.warmup, set.runs, [&] {
                verlet.build( c_x, 0, n, c_cutoff, CabanaScalar( 1 ), c_min, c_max );
            } );
        }
        catch ( const std::exception& e )
        {
            // Cabana's 2D layout holds n x (largest neighbour count) entries, which can exceed the
            // device's memory for clustered points.
            std::printf( "    %-26s morula %9.3f ms   cabana: failed (%s)\n", "neighbour list build",
                         1e3 * m_list.median(), e.what() );
            result["list_build"] = { { "morula", m_list.to_json() },
                                     { "cabana", std::string( "failed: " ) + e.what() } };
            result["list_sweep"] = { { "morula", m_iter.to_json() }, { "cabana", "not available" } };
            result["list_sweep_morula_register_sum"] = m_iter_reg.to_json();
            return result;
        }
        long long c_pairs = 0;
        Kokkos::parallel_reduce(
            "verlet_pairs", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i, long long& sum ) {
                sum += Cabana::NeighborList<verlet_type>::numNeighbor( verlet, i );
            },
            c_pairs );
        if ( c_pairs != pairs )
            throw std::runtime_error( "case " + spec.name + ": Cabana's Verlet list holds " +
                                      std::to_string( c_pairs ) + " pairs, expected " +
                                      std::to_string( pairs ) );
        report( "neighbour list build", m_list, c_list );
        result["list_build"] = both( m_list, c_list );

        // --- 5. sweep over the list: Cabana's benchmark op (atomic add of j) for both ------------
        Kokkos::View<int*, memory_space> c_sum( "c_sum", n );
        auto c_iter_op = KOKKOS_LAMBDA( const int i, const int j )
        {
            Kokkos::atomic_add( &c_sum( i ), j );
        };
        const Stats c_iter = time_phase( exec, set.warmup, set.runs, [&] {
            Cabana::neighbor_parallel_for( policy, c_iter_op, verlet, Cabana::FirstNeighborsTag(),
                                           Cabana::SerialOpTag(), "cabana_list_sweep" );
        } );
        report( "sweep over the list", m_iter, c_iter );
        result["list_sweep"] = both( m_iter, c_iter );
    }
    else
    {
        // Cabana's VerletList does not compile with float positions at this snapshot
        // (VerletListBuilder::neighbor_reduce/neighbor_for have no overload for them).
        std::printf( "    %-26s morula %9.3f ms   cabana: no float VerletList\n",
                     "neighbour list build", 1e3 * m_list.median() );
        std::printf( "    %-26s morula %9.3f ms   cabana: no float VerletList\n",
                     "sweep over the list", 1e3 * m_iter.median() );
        result["list_build"] = { { "morula", m_list.to_json() },
                                 { "cabana", "not available: VerletList with float positions does "
                                             "not compile in this Cabana snapshot" } };
        result["list_sweep"] = { { "morula", m_iter.to_json() },
                                 { "cabana", "not available" } };
    }
    std::printf( "    %-26s morula %9.3f ms (sum in a register, no atomics)\n", "",
                 1e3 * m_iter_reg.median() );
    result["list_sweep_morula_register_sum"] = m_iter_reg.to_json();
    return result;
}

template <class ExecutionSpace>
void run_all( const ExecutionSpace& exec, const Settings& set, nlohmann::json& out )
{
    for ( const auto& c : set.cases )
    {
        if ( c == "d" )
        {
            // Issue #2's build case: 16M points in 256^3 cells, cutoff 1.
            const int n = 16777216;
            CaseSpec spec{ "d", n, 256 * 1.0004, 1.0, false };
            out["cases"].push_back( run_case<double, double>( exec, set, spec ) );
            continue;
        }
        for ( long n : set.sizes )
        {
            const double edge = 1.3 * std::cbrt( double( n ) );
            CaseSpec spec{ c, static_cast<int>( n ), edge, 2.5, c == "c" };
            if ( c == "a" || c == "c" )
                out["cases"].push_back( run_case<double, double>( exec, set, spec ) );
            else if ( c == "b" )
                out["cases"].push_back( run_case<float, float>( exec, set, spec ) );
            else
                throw std::runtime_error( "unknown case '" + c + "' (expected a, b, c or d)" );
        }
    }
}

} // namespace grid_vs_cabana

int main( int argc, char* argv[] )
{
    grid_vs_cabana::Settings set;
    CLI::App app( "Morula's grid and neighbour list next to Cabana's, on identical particles" );
    app.add_option( "--cases", set.cases, "Cases a, b, c, d" )->delimiter( ',' );
    app.add_option( "--sizes", set.sizes, "Particle counts for cases a, b, c" )->delimiter( ',' );
    app.add_option( "--space", set.space, "device (default execution space) or host" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    app.add_option( "--runs", set.runs, "Timed runs per phase" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--warmup", set.warmup, "Untimed runs first" )->check( CLI::Range( 0, 100 ) );
    app.add_option( "--out", set.out, "JSON result file" );
    CLI11_PARSE( app, argc, argv );

    Kokkos::ScopeGuard guard( argc, argv );
    nlohmann::json out;
    out["benchmark"] = "grid_vs_cabana";
    out["cases"] = nlohmann::json::array();
    out["settings"] = { { "runs", set.runs }, { "warmup", set.warmup }, { "space", set.space } };
    try
    {
        if ( set.space == "device" )
        {
            Kokkos::DefaultExecutionSpace exec;
            out["machine"] = morula::bench::machine_info( exec );
            std::printf( "%s\n", out["machine"].dump().c_str() );
            grid_vs_cabana::run_all( exec, set, out );
        }
        else
        {
            Kokkos::DefaultHostExecutionSpace exec;
            out["machine"] = morula::bench::machine_info( exec );
            out["machine"]["device"] = morula::bench::cpu_model();
            std::printf( "%s\n", out["machine"].dump().c_str() );
            grid_vs_cabana::run_all( exec, set, out );
        }
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "grid_vs_cabana: %s\n", e.what() );
        morula::bench::write_json( set.out, out );
        return 1;
    }
    morula::bench::write_json( set.out, out );
    std::printf( "wrote %s\n", set.out.c_str() );
    return 0;
}
