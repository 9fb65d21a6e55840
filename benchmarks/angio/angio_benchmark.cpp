// The tumour growth and angiogenesis model of Worecki and Wcisło (2012) timed as in its section 4,
// phase by phase, on Kokkos::DefaultExecutionSpace and its memory space.
//
//   angio_benchmark --case cellcell [--cells 1e4,1e5,1e6] [--volume-fraction 0.5] [--sweeps 64]
//     The paper's random input without tubes: N Mature cells of radius 5 um at uniform random positions
//     in a closed cube sized for the volume fraction, oxygen 1, uptake, TAF production and decay off,
//     sort_every 1. Timed: grid build + sort, grid build alone, cell-cell from both sides, cell-cell with
//     atomics, one exchange (1 sweep) and the exchange with --sweeps sweeps (seconds per sweep), motion.
//     Cell-cell also as interacting pairs per second (pairs counted once, outside timing, from the
//     contact counts) and the speed-up of both sides over atomics.
//   angio_benchmark --case tubecell [--cells 1e5] [--tubes 1000,2500,5000,9996] [--max-tubes-per-cell 64]
//     The paper's dense random tubes: the cells above plus M random inlet tubes (length 10-20 um, radius
//     3-5 um, inside the box). Timed: blood flow, tube grid + tube-tube, tube-cell + cell-tube
//     (Algorithms 5 and 6); the share of tube-tube in their sum (29% at 9996 tubes in the paper).
//   angio_benchmark --case whole [--cluster-radius 150] [--edge 800] [--steps 200] [--warmup-steps 20]
//     The whole simulation: a tumour cluster beside two straight vessels in a closed cube, default
//     parameters; per run the model is rebuilt from the same initial state, advanced --warmup-steps
//     untimed steps, then --steps steps with every phase fenced and timed (seconds per step per phase).
//   --case all runs the three. Common: [--precision float|double|both] [--runs 5] [--warmup 1]
//     [--seed 1] [--out results.json]. Phase timings: medians (and min, max) over --runs runs after
//     --warmup untimed runs, each between two fences of the execution space.
//   --roofline-suite: the roofline cases (issue #8): cellcell and tubecell at 1e6 cells and 1e5 tubes, float
//     and double, 16 exchange sweeps, 1 warm-up and 5 timed runs; options given explicitly override the preset.
//
// Roofline records (top-level "kernels" array): every timed phase of cellcell and tubecell with its bytes
// and flops counted from the algorithm (docs/roofline/lattice-and-angio.md). The data-dependent counts
// (stencil rows and candidates, pairs within reach, overlapping pairs, contacts, cells a tube visits) come
// from census kernels that walk the same stencils as the timed kernels, run outside the timed region.
//
// Sources: Common.hpp (shared types and settings), Inputs.hpp, Census.hpp and WorkCounts.hpp (roofline
// counts), Output.hpp, and one file per case (CellCellCase.cpp, TubeCellCase.cpp, WholeCase.cpp).
#include "Common.hpp"
#include "Output.hpp"

#include <common/BenchmarkUtils.hpp>

#include <morula/core/BuildInfo.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

using namespace angio_bench;

namespace
{
//! A comma-separated list of counts ("1e4,1e5").
std::vector<int> parse_sizes( const std::string& list, const char* option )
{
    std::vector<int> out;
    std::stringstream ss( list );
    for ( std::string item; std::getline( ss, item, ',' ); )
    {
        double v = 0;
        try
        {
            v = std::stod( item ); // accepts 1e5
        }
        catch ( const std::exception& )
        {
            throw CLI::ValidationError( option, "'" + item + "' is not a number" );
        }
        if ( !( v >= 1 && v <= 2e9 ) )
            throw CLI::ValidationError( option, "'" + item + "' is not a count in [1, 2e9]" );
        out.push_back( static_cast<int>( std::lround( v ) ) );
    }
    return out;
}

} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "Tumour growth and angiogenesis benchmarks (Worecki and Wcisło 2012, section 4)" );
    Settings s;
    std::string cells, tubes;
    app.add_option( "--case", s.which, "cellcell, tubecell, whole or all" )
        ->check( CLI::IsMember( { "cellcell", "tubecell", "whole", "all" } ) );
    app.add_option( "--cells", cells, "comma-separated cell counts (cellcell: 1e4,1e5,1e6; tubecell: 1e5)" );
    app.add_option( "--tubes", tubes, "comma-separated tube counts (tubecell: 1000,2500,5000,9996)" );
    app.add_option( "--steps", s.steps, "whole: timed steps per run" )->check( CLI::Range( 1, 10000000 ) );
    app.add_option( "--warmup-steps", s.warmup_steps, "whole: untimed steps before the timed ones" )
        ->check( CLI::Range( 0, 10000000 ) );
    app.add_option( "--runs", s.runs, "timed runs" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--warmup", s.warmup, "untimed runs before the timed ones (cellcell, tubecell)" )
        ->check( CLI::Range( 0, 1000 ) );
    app.add_option( "--sweeps", s.sweeps, "cellcell: exchange sweeps of the per-sweep measurement" )
        ->check( CLI::Range( 1, 10000 ) );
    app.add_option( "--precision", s.precision, "float, double or both" )
        ->check( CLI::IsMember( { "float", "double", "both" } ) );
    app.add_option( "--volume-fraction", s.volume_fraction, "cellcell, tubecell: cell volume / box volume" )
        ->check( CLI::Range( 0.01, 2.0 ) );
    app.add_option( "--max-tubes-per-cell", s.max_tubes_per_cell, "tubecell: first list width (doubled on overflow)" )
        ->check( CLI::Range( 1, 1024 ) );
    app.add_option( "--cluster-radius", s.cluster_radius, "whole: tumour radius in um" )->check( CLI::Range( 10.0, 1e4 ) );
    app.add_option( "--edge", s.edge, "whole: cube edge in um" )->check( CLI::Range( 50.0, 1e5 ) );
    app.add_option( "--seed", s.seed, "of the random inputs and of the model" );
    app.add_option( "--out", s.out, "JSON results file" );
    bool suite = false;
    app.add_flag( "--roofline-suite", suite,
                  "roofline cases (issue #8): cellcell and tubecell at --cells 1e6 --tubes 1e5, float and double, "
                  "--sweeps 16 --warmup 1 --runs 5; options given explicitly override these" );
    CLI11_PARSE( app, argc, argv );
    if ( suite )
    {
        if ( app.count( "--case" ) )
        {
            std::fprintf( stderr, "--roofline-suite runs cellcell and tubecell; leave out --case\n" );
            return 1;
        }
        s.which = "roofline";
        if ( cells.empty() )
            cells = "1e6";
        if ( tubes.empty() )
            tubes = "1e5";
        if ( !app.count( "--precision" ) )
            s.precision = "both";
        if ( !app.count( "--runs" ) )
            s.runs = 5;
        if ( !app.count( "--warmup" ) )
            s.warmup = 1;
        if ( !app.count( "--sweeps" ) )
            s.sweeps = 16;
    }
    try
    {
        if ( !cells.empty() )
            s.cells = parse_sizes( cells, "--cells" );
        s.tubes = parse_sizes( tubes.empty() ? "1000,2500,5000,9996" : tubes, "--tubes" );
    }
    catch ( const CLI::Error& e )
    {
        return app.exit( e );
    }
    if ( s.which == "whole" || s.which == "all" )
        if ( !( s.edge >= 2 * ( s.cluster_radius + 10 ) ) )
        {
            std::fprintf( stderr, "--edge %g is too small for --cluster-radius %g\n", s.edge, s.cluster_radius );
            return 1;
        }

    exec_space exec;
    std::printf( "%s\n", morula::core::build_summary().c_str() );
    print_header();
    nlohmann::json results = nlohmann::json::array();
    nlohmann::json kernels = nlohmann::json::array();
    const bool all = s.which == "all";
    const bool roofline = s.which == "roofline";
    try
    {
        auto run = [&]( auto tag, const char* name ) {
            using Scalar = decltype( tag );
            if ( all || roofline || s.which == "cellcell" )
            {
                Settings c = s;
                if ( c.cells.empty() )
                    c.cells = { 10000, 100000, 1000000 };
                cellcell<Scalar>( exec, c, name, results, kernels );
            }
            if ( all || roofline || s.which == "tubecell" )
            {
                Settings c = s;
                if ( c.cells.empty() )
                    c.cells = { 100000 };
                tubecell<Scalar>( exec, c, name, results, kernels );
            }
            if ( all || s.which == "whole" )
                whole<Scalar>( exec, s, name, results );
        };
        if ( s.precision != "double" )
            run( float{}, "float" );
        if ( s.precision != "float" )
            run( double{}, "double" );
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "angio_benchmark: %s\n", e.what() );
        return 1;
    }
    if ( !s.out.empty() )
    {
        nlohmann::json settings = { { "case", s.which },
                                    { "cells", cells.empty() ? "default (cellcell 1e4,1e5,1e6; tubecell 1e5)" : cells },
                                    { "tubes", s.tubes },
                                    { "runs", s.runs },
                                    { "warmup_runs", s.warmup },
                                    { "steps", s.steps },
                                    { "warmup_steps", s.warmup_steps },
                                    { "sweeps", s.sweeps },
                                    { "precision", s.precision },
                                    { "cell_radius_um", s.cell_radius },
                                    { "volume_fraction", s.volume_fraction },
                                    { "max_tubes_per_cell", s.max_tubes_per_cell },
                                    { "cluster_radius_um", s.cluster_radius },
                                    { "edge_um", s.edge },
                                    { "vessel_radius_um", s.vessel_radius },
                                    { "seed", s.seed } };
        nlohmann::json j = { { "benchmark", "angio_benchmark" },
                             { "case", s.which },
                             { "machine", morula::bench::machine_info( exec ) },
                             { "settings", settings },
                             { "definition",
                               "phase times in seconds (median, min, max over runs, fenced); cellcell and tubecell: "
                               "one call of the phase per run; whole: seconds per step. pairs = interacting cell "
                               "pairs (exchange contacts / 2), counted once outside timing" },
                             { "results", results },
                             { "kernels", kernels } };
        morula::bench::write_json( s.out, j );
    }
    return 0;
}
