// Grid benchmark (issue #2): build, permute and neighbour sweep of Morula's sorted uniform grid for
// 1M, 4M and 16M uniformly random points in 256^3 cells, next to Kokkos::BinSort's
// create_permute_vector for the same points and bins, in the same run. Writes one JSON file, with a
// roofline record (issue #8: analytic bytes and flops, docs/roofline/grid-and-mechanics.md) for each
// timed Morula kernel in its top-level "kernels" array.
//
//   grid_benchmark [--sizes 1000000,4000000,16777216] [--cells 256] [--runs 10] [--warmup 3]
//                  [--scalar float|double|both] [--neighbors 30] [--out results.json]
//                  [--roofline-suite]
//
// --roofline-suite: the roofline suite's case, 4M points, both precisions, 3 runs after 1 warm-up
// (options given explicitly still win; the CI smoke test adds --sizes 100000 --cells 32 --runs 2).
#include "../common/BenchmarkUtils.hpp"
#include "../common/Roofline.hpp"
#include "GridBenchmarkCommon.hpp"
#include "ListPhases.hpp"
#include "ReductionSweeps.hpp"

#include <morula/core/SoA.hpp>
#include <morula/grid/NeighborSweep.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace grid_bench
{
using morula::bench::Stats;

struct Settings
{
    std::vector<long> sizes = { 1000000, 4000000, 16777216 };
    int cells = 256;
    int runs = 10;
    int warmup = 3;
    double neighbors = 30;
    std::string scalar = "both";
    std::string space = "device";
    std::string out = "grid_benchmark.json";
    bool verbose = false;
    bool roofline_suite = false;
    bool list_variants = false;
};

nlohmann::json phase( const Stats& s, double bytes, double items, const char* item_name )
{
    nlohmann::json j = s.to_json();
    if ( bytes > 0 )
    {
        j["bytes"] = bytes;
        j["gbytes_per_s_median"] = bytes / s.median() / 1e9;
    }
    if ( items > 0 )
        j[std::string( item_name ) + "_per_s_median"] = items / s.median();
    return j;
}

/*!
  Density-like sweep with floating-point work per neighbour: out(i) = sum over neighbours j of
  (h^2 - r_ij^2)^3 (4 flops per neighbour: subtract, two multiplies, add).
*/
template <class ExecutionSpace, class Query, class OutView>
void density_sweep( const ExecutionSpace& exec, const Query& query,
                    typename Query::scalar_type radius, const OutView& out )
{
    using Scalar = typename Query::scalar_type;
    using neighbors_type = morula::grid::ParticleNeighbors<Query, ExecutionSpace>;
    const Scalar h2 = radius * radius;
    morula::grid::for_each_particle(
        exec, query,
        KOKKOS_LAMBDA( const int i, const neighbors_type& nb ) {
            Scalar s = 0;
            nb.for_each( [&]( int, Scalar, Scalar, Scalar, Scalar r2 ) {
                const Scalar w = h2 - r2;
                s += w * w * w;
            } );
            out( i ) = s;
        },
        radius, "morula::bench::density_sweep" );
}

template <class Scalar, class ExecutionSpace>
nlohmann::json run_case( const ExecutionSpace& exec, const Settings& set, int n,
                         nlohmann::json& kernels )
{
    using memory_space = typename ExecutionSpace::memory_space;
    using positions_type = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, memory_space>;
    namespace mg = morula::grid;

    // Cells of edge 1 + 4e-4 (>= cutoff 1 with the float rounding margin): exactly `cells` per axis.
    const Scalar cutoff = 1;
    const Scalar edge = static_cast<Scalar>( set.cells * 1.0004 );
    const auto box = morula::core::Box<Scalar>::cube( edge, morula::core::Boundary::closed );
    positions_type original( "original", n );
    morula::bench::fill_uniform( exec, original, n, Scalar( 0 ), edge, 20260101 );
    morula::core::Particles<Scalar, memory_space> particles( "particles", n );

    nlohmann::json result = { { "n", n }, { "scalar", sizeof( Scalar ) == 4 ? "float" : "double" } };
    auto progress = [&]( const char* phase ) {
        if ( set.verbose )
        {
            std::printf( "  [%s n=%d] %s\n", sizeof( Scalar ) == 4 ? "float" : "double", n, phase );
            std::fflush( stdout );
        }
    };
    progress( "build" );

    // 1. Build: cells of edge >= 1 in the 256^3 layout.
    mg::UniformGrid<Scalar, memory_space> grid( box, cutoff );
    const int ncells = grid.num_cells();
    result["cells"] = ncells;
    result["cells_per_axis"] = grid.geometry().ncell[0];
    const Stats build = morula::bench::time_phase( exec, set.warmup, set.runs,
                                                   [&] { grid.build( exec, original, n ); } );
    morula::bench::profile_once( exec, "grid_build", [&] { grid.build( exec, original, n ); } );
    result["build"] = phase( build, morula::bench::build_bytes( n, ncells, sizeof( Scalar ) ),
                             n, "particles" );
    const char* precision = morula::bench::precision_name<Scalar>();
    const nlohmann::json build_parameters = { { "n", n },
                                              { "scalar", precision },
                                              { "cells", ncells },
                                              { "cells_per_axis", grid.geometry().ncell[0] },
                                              { "ordering", "row_major" },
                                              { "boundary", "closed" } };
    kernels.push_back( morula::bench::kernel_record(
        "grid", "grid_build",
        { morula::bench::build_bytes( n, ncells, sizeof( Scalar ) ), 6.0 * n, precision,
          "positions 3Sn read; cell keys 4n written, read; (cell, particle) pairs 8n written, read; "
          "permutation 4n, offsets 4C written. 6 flops/particle: cell coordinate (x - lo) * inv_h "
          "per axis" },
        build, build_parameters ) );
    progress( "binsort" );
    // 2. Kokkos::BinSort with the same bins: create_permute_vector only.
    {
        using op_type = Kokkos::BinOp3D<positions_type>;
        int nb[3] = { grid.geometry().ncell[0], grid.geometry().ncell[1],
                            grid.geometry().ncell[2] };
        const Scalar lo[3] = { 0, 0, 0 };
        const Scalar hi[3] = { edge, edge, edge };
        // create_permute_vector accumulates into counts it zeroes only when the BinSort is
        // constructed, so each timed run gets a fresh object (constructed outside the timing).
        using binsort_type = morula::compat::BinSort<positions_type, op_type>;
        std::unique_ptr<binsort_type> binsort;
        const Stats bs = morula::bench::time_phase(
            exec, set.warmup, set.runs,
            [&] {
                binsort.reset();
                binsort = std::make_unique<binsort_type>( exec, original, op_type( nb, lo, hi ) );
            },
            [&] { binsort->create_permute_vector( exec ); } );
        result["kokkos_binsort_create_permute_vector"] = phase( bs, 0, n, "particles" );
        result["build_speedup_vs_binsort"] = bs.median() / build.median();
    }

    progress( "permute" );
    // 3. Permute the positions into cell order (gather into the spare buffer, swap).
    const Stats permute = morula::bench::time_phase(
        exec, set.warmup, set.runs,
        [&] { Kokkos::deep_copy( exec, particles.positions(), original ); },
        [&] { grid.permute( exec, particles ); } );
    result["permute"] = phase( permute, 2.0 * 3 * sizeof( Scalar ) * n + 4.0 * n, n, "particles" );
    kernels.push_back( morula::bench::kernel_record(
        "grid", "grid_permute",
        { 2.0 * 3 * sizeof( Scalar ) * n + 4.0 * n, 0, "none",
          "positions 3Sn gathered (read), 3Sn written to the spare buffer; permutation 4n read" },
        permute, build_parameters ) );

    // 3b. Rebuilds from the data in cell order, as a simulation does every step after it permutes: the
    //     sorted input itself (no particle changed cell: the build's sorted-input path, and permute has
    //     nothing to do), and the same positions each moved by up to 0.02 cell edges per axis (about 4%
    //     of the particles change cell: the full sort, on nearly sorted input).
    progress( "build, sorted input" );
    // at least order_probe_interval warm-up builds: the grid finds the order within that many
    const int order_warmup = std::max( set.warmup, mg::UniformGrid<Scalar, memory_space>::order_probe_interval );
    const Stats build_sorted = morula::bench::time_phase(
        exec, order_warmup, set.runs, [&] { grid.build( exec, particles.positions(), n ); } );
    result["build_sorted_input"] = phase( build_sorted, 0, n, "particles" );
    morula::bench::profile_once( exec, "grid_build_sorted_input",
                                 [&] { grid.build( exec, particles.positions(), n ); } );
    const Stats permute_sorted = morula::bench::time_phase(
        exec, set.warmup, set.runs, [&] { grid.build( exec, particles.positions(), n ); },
        [&] { grid.permute( exec, particles ); } );
    result["permute_sorted_input"] = phase( permute_sorted, 0, n, "particles" );
    progress( "build, nearly sorted input" );
    positions_type moved( "moved", n );
    {
        const auto sorted_x = particles.positions();
        const Scalar step = Scalar( 0.02 ) * grid.geometry().cell_size[0];
        const Scalar top = edge * ( 1 - 4 * std::numeric_limits<Scalar>::epsilon() );
        Kokkos::parallel_for(
            "morula::bench::nudge", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i ) {
                for ( int d = 0; d < 3; ++d )
                {
                    // splitmix64 of (i, d): a displacement in [-step, step]
                    std::uint64_t z = std::uint64_t( i ) * 3 + d + 0x9e3779b97f4a7c15ull;
                    z = ( z ^ ( z >> 30 ) ) * 0xbf58476d1ce4e5b9ull;
                    z = ( z ^ ( z >> 27 ) ) * 0x94d049bb133111ebull;
                    z ^= z >> 31;
                    const Scalar u = Scalar( double( z >> 11 ) * 0x1.0p-53 );
                    Scalar v = sorted_x( i, d ) + step * ( 2 * u - 1 );
                    v = v < Scalar( 0 ) ? Scalar( 0 ) : ( v > top ? top : v );
                    moved( i, d ) = v;
                }
            } );
    }
    Kokkos::View<int*, memory_space> sorted_cells( "sorted_cells", n ); // cell keys of the sorted input
    Kokkos::deep_copy( exec, sorted_cells, Kokkos::subview( grid.particle_cells(), std::make_pair( 0, n ) ) );
    // (the grid checks the order of the first of these builds, then of one in order_probe_interval)
    const Stats build_nearly = morula::bench::time_phase(
        exec, set.warmup, set.runs, [&] { grid.build( exec, moved, n ); } );
    result["build_nearly_sorted_input"] = phase( build_nearly, 0, n, "particles" );
    morula::bench::profile_once( exec, "grid_build_nearly_sorted_input", [&] { grid.build( exec, moved, n ); } );
    {
        // how many particles changed cell, for the record
        const auto cells = grid.particle_cells();
        int changed = 0;
        Kokkos::parallel_reduce(
            "morula::bench::changed_cells", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i, int& c ) { c += cells( i ) != sorted_cells( i ); }, changed );
        result["build_nearly_sorted_input"]["particles_changing_cell"] = changed;
    }

    progress( "sweep" );
    // 4. Neighbour sweep at ~`neighbors` per particle: radius from the density, cells of edge >=
    //    radius, data permuted into cell order, each particle counts its neighbours.
    const double density = n / std::pow( double( edge ), 3 );
    const Scalar radius =
        static_cast<Scalar>( std::cbrt( 3.0 * set.neighbors / ( 4.0 * M_PI * density ) ) );
    mg::UniformGrid<Scalar, memory_space> sweep_grid( box, radius );
    Kokkos::deep_copy( exec, particles.positions(), original );
    sweep_grid.build( exec, original, n );
    sweep_grid.permute( exec, particles );
    const auto query = sweep_grid.query( particles.positions() );
    Kokkos::View<int*, memory_space> counts( "counts", n );
    using neighbors_type = mg::ParticleNeighbors<decltype( query ), ExecutionSpace>;
    const Stats sweep = morula::bench::time_phase( exec, set.warmup, set.runs, [&] {
        mg::for_each_particle(
            exec, query,
            KOKKOS_LAMBDA( const int i, const neighbors_type& nb ) { counts( i ) = nb.count(); } );
    } );
    long long pairs = 0;
    Kokkos::parallel_reduce(
        "morula::bench::sum", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, long long& s ) { s += counts( i ); }, pairs );
    auto offsets =
        Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sweep_grid.cell_offsets() );
    std::vector<int> off( offsets.data(), offsets.data() + offsets.extent( 0 ) );
    const auto& g = sweep_grid.geometry();
    const double candidates =
        morula::bench::stencil_candidates( off, g.ncell[0], g.ncell[1], g.ncell[2] );
    nlohmann::json sj = phase( sweep, 0, candidates, "candidate_pairs" );
    sj["radius"] = radius;
    sj["cells_per_axis"] = g.ncell[0];
    sj["neighbors_per_particle"] = double( pairs ) / n;
    sj["candidate_pairs"] = candidates;
    sj["pairs_within_radius"] = pairs;
    // Reads positions of every candidate (mostly from cache); DRAM traffic is the positions once,
    // the offsets and the counts written.
    sj["bytes"] = 3.0 * sizeof( Scalar ) * n + 4.0 * n + 4.0 * g.num_cells();
    result["sweep"] = sj;

    result["sweep"]["neighbor_reduction"] =
        morula::bench::time_reduction_sweeps( exec, set.warmup, set.runs, query, radius, counts );

    // 5. The same sweep with floating-point work per neighbour (a density sum).
    progress( "density sweep" );
    Kokkos::View<Scalar*, memory_space> density_out( "density", n );
    const Stats density_stats = morula::bench::time_phase(
        exec, set.warmup, set.runs, [&] { density_sweep( exec, query, radius, density_out ); } );
    nlohmann::json dj = phase( density_stats, 0, candidates, "candidate_pairs" );
    result["density_sweep"] = dj;

    // 6. Neighbour lists at the sweep's radius: CSR, ELL, one-pass CSR, and sweeps over them.
    progress( "neighbour lists" );
    nlohmann::json fill_variants;
    const morula::bench::ListTimings lists = morula::bench::time_neighbor_lists<Scalar>(
        exec, set.warmup, set.runs, query, radius, n, pairs, set.list_variants ? &fill_variants : nullptr );
    result["lists"] = lists.to_json();
    if ( set.list_variants )
        result["lists"]["staged_fill_variants"] = fill_variants;

    // Roofline records of the two sweeps: the stencil walk counted by walking it again (untimed).
    const morula::bench::StencilTally tally = morula::bench::stencil_tally( exec, query, radius );
    const double walk_flops = morula::bench::stencil_flops( tally, query );
    const double sweep_read = 3.0 * sizeof( Scalar ) * n + 4.0 * ( g.num_cells() + 1 );
    const nlohmann::json sweep_parameters = {
        { "scalar", precision },
        { "n", n },
        { "radius", radius },
        { "cells", g.num_cells() },
        { "cells_per_axis", g.ncell[0] },
        { "ordering", "row_major" },
        { "boundary", "closed" },
        { "data_sorted", true },
        { "neighbors_per_particle", double( pairs ) / n },
        { "pairs_within_radius", pairs },
        { "candidates_tested", tally.candidates },
        { "candidates_27_cells", candidates },
        { "rows_tested", tally.rows_tested },
        { "rows_passed", tally.rows_passed } };
    kernels.push_back( morula::bench::kernel_record(
        "grid", "grid_sweep_count",
        { sweep_read + 4.0 * n, walk_flops, precision,
          "positions 3Sn, offsets 4(C+1) read once (neighbour re-reads from cache), counts 4n "
          "written. Flops: 28/particle + 3/row tested + 4/row scanned + 8/candidate tested "
          "(counted by walking the stencil)" },
        sweep, sweep_parameters ) );
    kernels.push_back( morula::bench::kernel_record(
        "grid", "grid_sweep_density",
        { sweep_read + double( sizeof( Scalar ) ) * n, walk_flops + 4.0 * double( pairs ),
          precision,
          "as grid_sweep_count, sums Sn written instead of counts; + 4 flops per neighbour within "
          "the radius ((h^2 - r^2)^3 summed)" },
        density_stats, sweep_parameters ) );

    std::printf( "%-6s n=%9d cells=%d^3: build %.3f ms (BinSort %.3f), permute %.3f "
                 "ms, sweep %.3f ms (%.1f nbrs, %.3g candidates/s), density sweep %.3f ms\n",
                 sizeof( Scalar ) == 4 ? "float" : "double", n, set.cells, 1e3 * build.median(),
                 1e3 * result["kokkos_binsort_create_permute_vector"]["median_s"].get<double>(),
                 1e3 * permute.median(), 1e3 * sweep.median(), double( pairs ) / n,
                 candidates / sweep.median(), 1e3 * density_stats.median() );
    lists.print();
    if ( set.roofline_suite || set.verbose )
        for ( std::size_t k = kernels.size() - 4; k < kernels.size(); ++k )
        {
            const auto& r = kernels[k];
            std::printf( "  %-20s %10.3f ms  AI %7.3f flop/B  %8.2f GB/s  %8.2f GFLOP/s\n",
                         r["kernel"].get<std::string>().c_str(),
                         1e3 * r["time"]["median_s"].get<double>(),
                         r["arithmetic_intensity"].get<double>(),
                         r["gbytes_per_s"].get<double>(), r["gflops_per_s"].get<double>() );
        }
    std::fflush( stdout );
    return result;
}

template <class ExecutionSpace>
void run_all( const ExecutionSpace& exec, const Settings& set )
{
    nlohmann::json machine = morula::bench::machine_info( exec );
    if ( Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                    typename ExecutionSpace::memory_space>::accessible )
        machine["device"] = morula::bench::cpu_model();
    nlohmann::json results = { { "benchmark", "grid" },
                               { "machine", machine },
                               { "settings",
                                 { { "runs", set.runs },
                                   { "warmup", set.warmup },
                                   { "cells_per_axis", set.cells },
                                   { "sweep_neighbors", set.neighbors },
                                   { "roofline_suite", set.roofline_suite } } },
                               { "cases", nlohmann::json::array() },
                               { "kernels", nlohmann::json::array() } };
    std::printf( "%s\n%s on %s\n", morula::core::build_summary().c_str(), ExecutionSpace::name(),
                 machine["device"].get<std::string>().c_str() );
    for ( long n : set.sizes )
    {
        if ( set.scalar != "double" )
            results["cases"].push_back(
                run_case<float>( exec, set, static_cast<int>( n ), results["kernels"] ) );
        if ( set.scalar != "float" )
            results["cases"].push_back(
                run_case<double>( exec, set, static_cast<int>( n ), results["kernels"] ) );
    }
    morula::bench::write_json( set.out, results );
    std::printf( "wrote %s\n", set.out.c_str() );
}

} // namespace grid_bench

int main( int argc, char* argv[] )
{
    grid_bench::Settings set;
    CLI::App app( "Morula grid benchmark: build, permute and neighbour sweep vs Kokkos::BinSort" );
    app.add_option( "--sizes", set.sizes, "Numbers of particles" )->delimiter( ',' );
    app.add_option( "--cells", set.cells, "Cells per axis of the build cases" )->check( CLI::Range( 1, 1024 ) );
    app.add_option( "--runs", set.runs, "Timed runs per phase" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--warmup", set.warmup, "Untimed runs before timing" )->check( CLI::Range( 0, 100 ) );
    app.add_option( "--neighbors", set.neighbors, "Mean neighbours per particle in the sweep" )
        ->check( CLI::PositiveNumber );
    app.add_option( "--scalar", set.scalar, "float, double or both" )
        ->check( CLI::IsMember( { "float", "double", "both" } ) );
    app.add_option( "--space", set.space, "device (default execution space) or host" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    app.add_option( "--out", set.out, "JSON result file" );
    app.add_flag( "--verbose", set.verbose, "Print each phase as it starts" );
    app.add_flag( "--list-variants", set.list_variants,
                  "Also time the staged list fills at other team sizes, depths and register caps (GPU)" );
    app.add_flag( "--roofline-suite", set.roofline_suite,
                  "Roofline suite case: --sizes 4000000 --runs 3 --warmup 1 --scalar both unless "
                  "given" );
    CLI11_PARSE( app, argc, argv );
    if ( set.roofline_suite )
    {
        if ( app.count( "--sizes" ) == 0 )
            set.sizes = { 4000000 };
        if ( app.count( "--runs" ) == 0 )
            set.runs = 3;
        if ( app.count( "--warmup" ) == 0 )
            set.warmup = 1;
        if ( app.count( "--scalar" ) == 0 )
            set.scalar = "both";
    }

    Kokkos::ScopeGuard guard( argc, argv );
    if ( set.space == "device" )
        grid_bench::run_all( Kokkos::DefaultExecutionSpace(), set );
    else
        grid_bench::run_all( Kokkos::DefaultHostExecutionSpace(), set );
    return 0;
}
