// The C++ side of the Python module's overhead measurement (step_overhead.py, issue #47): a model made
// from an `epidermis` configuration exactly as `morula epidermis` and morula.Epidermis make it, stepped
// `--steps` times with step() after `--warmup` steps, a fresh model per run; prints JSON with the seconds
// of each run and the machine.
#include "common/BenchmarkUtils.hpp"

#include <EpidermisSetup.hpp>

#include <morula/sem/Epidermis.hpp>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace
{
template <class Scalar>
std::vector<double> time_steps( const morula::app::EpidermisSettings& s, int warmup, int steps, int runs )
{
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    exec space;
    const auto p = morula::app::epidermis_parameters( s );
    const auto layer = morula::sem::monolayer<Scalar>( morula::app::monolayer_spec( s ), p.mechanics );
    std::vector<double> seconds;
    for ( int r = 0; r < runs; ++r )
    {
        morula::sem::Epidermis<Scalar, mem> model( morula::sem::Tissue<Scalar, mem>( layer.tissue ), layer.box, p );
        for ( int i = 0; i < warmup; ++i )
            model.step( space, false );
        space.fence();
        const auto t0 = std::chrono::steady_clock::now();
        for ( int i = 0; i < steps; ++i )
            model.step( space, false );
        space.fence();
        seconds.push_back( std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count() );
    }
    return seconds;
}
} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "epidermis_steps: C++ step() loop of an epidermis configuration" );
    std::string config;
    int warmup = 200, steps = 2000, runs = 1;
    app.add_option( "--config", config, "epidermis JSON configuration" )->required();
    app.add_option( "--warmup", warmup, "untimed steps first" );
    app.add_option( "--steps", steps, "timed steps" );
    app.add_option( "--runs", runs, "fresh models, one after the other" );
    CLI11_PARSE( app, argc, argv );
    morula::app::EpidermisSettings s;
    morula::app::read_epidermis_config( config, s );
    const auto seconds = s.precision == "float" ? time_steps<float>( s, warmup, steps, runs )
                                                : time_steps<double>( s, warmup, steps, runs );
    nlohmann::json out;
    out["machine"] = morula::bench::machine_info( Kokkos::DefaultExecutionSpace() );
    out["seconds"] = seconds;
    std::printf( "%s\n", out.dump().c_str() );
    return 0;
}
