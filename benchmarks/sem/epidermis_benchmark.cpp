// The epidermis model of seed 000 (Christley et al. 2010) timed as in its Table 3.
//
//   epidermis_benchmark --case table3 [--cells 128,250,500,1000,5000] [--iterations 3000]
//                       [--precision float|double|both] [--runs 3] [--out results.json]
//     For every cell count, model (movement; movement + gene network) and boundary (periodic; none):
//     a single layer of cells of 20 elements on the membrane, `iterations` RK2 steps, timed whole
//     (setup excluded), median over runs after one warm-up run.
//   epidermis_benchmark --case full [--cells 100,1000] [--iterations 130000]
//     The full model (growth and division) once per cell count and boundary, with the final cell count.
//   epidermis_benchmark --case force [--cells 5000] [--runs 20]
//     The force kernel alone (velocities of every element), with its arithmetic and memory traffic per
//     evaluation, for the roofline (see docs/performance.md for the counting rules).
#include <common/BenchmarkUtils.hpp>

#include <morula/core/BuildInfo.hpp>
#include <morula/sem/Epidermis.hpp>
#include <morula/sem/Initializers.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace
{
namespace sem = morula::sem;
using morula::bench::Stats;
using exec_space = Kokkos::DefaultExecutionSpace;
using mem_space = exec_space::memory_space;

struct Settings
{
    std::string which = "table3";
    std::vector<int> cells;
    long iterations = 0;
    std::string precision = "both";
    int runs = 3;
    std::string out;
};

template <class Scalar>
sem::Epidermis<Scalar, mem_space> make_model( int cells, bool periodic, sem::EpidermisModel model )
{
    sem::EpidermisParameters p;
    p.model = model;
    sem::MonolayerSpec spec;
    spec.cells = cells;
    spec.periodic = periodic;
    const auto layer = sem::monolayer<Scalar>( spec, p.mechanics );
    return sem::Epidermis<Scalar, mem_space>( sem::Tissue<Scalar, mem_space>( layer.tissue ), layer.box, p );
}

template <class Scalar>
nlohmann::json table3( const exec_space& exec, const Settings& s, const char* precision )
{
    nlohmann::json rows = nlohmann::json::array();
    for ( const int cells : s.cells )
        for ( const auto model : { sem::EpidermisModel::movement, sem::EpidermisModel::gene_network } )
            for ( const bool periodic : { false, true } )
            {
                std::optional<sem::Epidermis<Scalar, mem_space>> m;
                const Stats t = morula::bench::time_phase(
                    exec, 1, s.runs, [&] { m.emplace( make_model<Scalar>( cells, periodic, model ) ); },
                    [&] {
                        for ( long i = 0; i < s.iterations; ++i )
                            m->step( exec );
                    } );
                std::printf( "%-6s %5d cells %-12s %-8s %ld iterations: median %.3f s (min %.3f, max %.3f), "
                             "%.1f us/step, %lld list builds\n",
                             precision, cells, sem::to_string( model ), periodic ? "periodic" : "none",
                             s.iterations, t.median(), t.min(), t.max(), 1e6 * t.median() / s.iterations,
                             m->mechanics().list_builds() );
                std::fflush( stdout );
                nlohmann::json r = t.to_json();
                r["precision"] = precision;
                r["cells"] = cells;
                r["elements"] = cells * 20;
                r["model"] = sem::to_string( model );
                r["boundary"] = periodic ? "periodic" : "none";
                r["iterations"] = s.iterations;
                r["list_builds_last_run"] = m->mechanics().list_builds();
                rows.push_back( r );
            }
    return rows;
}

template <class Scalar>
nlohmann::json full( const exec_space& exec, const Settings& s, const char* precision )
{
    nlohmann::json rows = nlohmann::json::array();
    for ( const int cells : s.cells )
        for ( const bool periodic : { false, true } )
        {
            auto m = make_model<Scalar>( cells, periodic, sem::EpidermisModel::full );
            exec.fence();
            const auto t0 = std::chrono::steady_clock::now();
            for ( long i = 0; i < s.iterations; ++i )
            {
                m.step( exec );
                if ( ( i + 1 ) % 10000 == 0 )
                {
                    std::printf( "  %s %d cells %s: step %ld, %d cells\n", precision, cells,
                                 periodic ? "periodic" : "none", i + 1, m.tissue().num_cells() );
                    std::fflush( stdout );
                }
            }
            exec.fence();
            const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
            std::printf( "%-6s full model %5d cells %-8s %ld iterations: %.2f s, final %d cells (%d elements), "
                         "%lld divisions\n",
                         precision, cells, periodic ? "periodic" : "none", s.iterations, seconds,
                         m.tissue().num_cells(), m.tissue().num_elements(), m.divisions() );
            std::fflush( stdout );
            rows.push_back( { { "precision", precision },
                              { "cells", cells },
                              { "boundary", periodic ? "periodic" : "none" },
                              { "iterations", s.iterations },
                              { "seconds", seconds },
                              { "final_cells", m.tissue().num_cells() },
                              { "final_elements", m.tissue().num_elements() },
                              { "divisions", m.divisions() },
                              { "runs", 1 } } );
        }
    return rows;
}

// Pair counts of one force evaluation, for the arithmetic and traffic estimates.
template <class Scalar>
nlohmann::json force( const exec_space& exec, const Settings& s, const char* precision )
{
    nlohmann::json rows = nlohmann::json::array();
    for ( const int cells : s.cells )
        for ( const bool periodic : { false, true } )
        {
            auto m = make_model<Scalar>( cells, periodic, sem::EpidermisModel::movement );
            for ( int i = 0; i < 200; ++i ) // settle, so that the contacts are those of a run
                m.step( exec );
            auto& t = m.tissue();
            const int n = t.num_elements();
            Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, mem_space> v( "v", n );
            m.mechanics().velocities( exec, t, v ); // builds the list if due
            const Stats st = morula::bench::time_phase( exec, 3, s.runs, [&] { m.mechanics().velocities( exec, t, v ); } );
            // Intra pairs: every element visits the other 19 of its cell. Inter candidates: list entries.
            // Inter-cell candidates (list entries, a few per element) are left out of both counts.
            const double intra = double( n ) * 19.0;
            const double flops_per_pair = 32.0; // see docs/performance.md: min image 12, r 6, Morse 2 exp + 8, accumulate 6
            const double flops = intra * flops_per_pair;
            // Compulsory traffic: read positions, cell, type; write velocities (neighbours hit cache).
            const double bytes = double( n ) * ( 2 * 3 * sizeof( Scalar ) + 2 * sizeof( int ) );
            std::printf( "%-6s force kernel %5d cells %-8s: median %.1f us, %.1f GFLOP/s (intra pairs), "
                         "%.1f GB/s (compulsory traffic)\n",
                         precision, cells, periodic ? "periodic" : "none", 1e6 * st.median(),
                         1e-9 * flops / st.median(), 1e-9 * bytes / st.median() );
            nlohmann::json r = st.to_json();
            r["precision"] = precision;
            r["cells"] = cells;
            r["elements"] = n;
            r["boundary"] = periodic ? "periodic" : "none";
            r["intra_pairs"] = intra;
            r["flops_per_pair"] = flops_per_pair;
            r["flops"] = flops;
            r["compulsory_bytes"] = bytes;
            r["gflops"] = 1e-9 * flops / st.median();
            r["gbytes_per_s"] = 1e-9 * bytes / st.median();
            rows.push_back( r );
        }
    return rows;
}

} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "Epidermis model benchmarks (seed 000, Table 3)" );
    Settings s;
    std::string cells;
    app.add_option( "--case", s.which, "table3, full or force" )->check( CLI::IsMember( { "table3", "full", "force" } ) );
    app.add_option( "--cells", cells, "comma-separated starting cell counts" );
    app.add_option( "--iterations", s.iterations, "time steps (default 3000; full: 130000)" );
    app.add_option( "--precision", s.precision, "float, double or both" )->check( CLI::IsMember( { "float", "double", "both" } ) );
    app.add_option( "--runs", s.runs, "timed runs after one warm-up" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--out", s.out, "JSON results file" );
    CLI11_PARSE( app, argc, argv );
    if ( cells.empty() )
        cells = s.which == "full" ? "100,1000" : s.which == "force" ? "5000" : "128,250,500,1000,5000";
    std::stringstream ss( cells );
    for ( std::string item; std::getline( ss, item, ',' ); )
        s.cells.push_back( std::stoi( item ) );
    if ( s.iterations == 0 )
        s.iterations = s.which == "full" ? 130000 : 3000;
    exec_space exec;
    std::printf( "%s\n", morula::core::build_summary().c_str() );
    nlohmann::json results = nlohmann::json::array();
    auto run = [&]( auto tag, const char* name ) {
        using Scalar = decltype( tag );
        nlohmann::json r = s.which == "table3" ? table3<Scalar>( exec, s, name )
                           : s.which == "full" ? full<Scalar>( exec, s, name )
                                               : force<Scalar>( exec, s, name );
        for ( auto& x : r )
            results.push_back( x );
    };
    if ( s.precision != "double" )
        run( float{}, "float" );
    if ( s.precision != "float" )
        run( double{}, "double" );
    if ( !s.out.empty() )
    {
        nlohmann::json j = morula::bench::machine_info( exec );
        j["benchmark"] = "epidermis_" + s.which;
        j["results"] = results;
        morula::bench::write_json( s.out, j );
    }
    return 0;
}
