// The cost of the driver framework (issue #46): wall time per step of the two drivers the framework
// must not slow down, mechanics::Proliferation and lattice::LatticeDiffusion, stepped one step() at a
// time as an application's loop steps them, untimed and timed (the PhaseTimer's fences), on a small
// case (where the host's work per step is a visible part of a step) and a large one.
//
//   driver_overhead [--space device|host] [--steps 20] [--warmup 3] [--runs 15] [--out results.json]
//
// Built from the same source before and after a change to core::ModelDriver and run in the same call,
// the ratio of the medians is the change's cost. Only step(exec) and step(exec, true) are called, the
// signature every Morula driver has had, so that this file also builds at commits before the framework.
// Proliferation runs with growth_rate = 0 (no division): every timed run does the same work.
#include <common/BenchmarkUtils.hpp>

#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/Proliferation.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace overhead_bench
{
using morula::bench::Stats;
using morula::bench::time_phase;

struct Settings
{
    std::string space = "device";
    int steps = 20;
    int warmup = 3;
    int runs = 15;
    std::vector<int> cells{ 12, 64 };      // Proliferation: agents per axis (1728 and 262144 agents)
    std::vector<int> lattice{ 32, 256 };   // LatticeDiffusion: sites per axis
    std::string out;
};

nlohmann::json record( const char* driver, const std::string& size, bool timed, const Stats& s, int steps )
{
    const double per_step = s.median() / steps;
    std::printf( "  %-16s %-14s %-7s %10.2f us per step (median of %zu runs; min %.2f, max %.2f)\n", driver,
                 size.c_str(), timed ? "timed" : "untimed", 1e6 * per_step, s.samples.size(),
                 1e6 * s.min() / steps, 1e6 * s.max() / steps );
    return { { "driver", driver }, { "size", size },       { "timed", timed },
             { "steps", steps },   { "seconds", s.to_json() }, { "median_seconds_per_step", per_step } };
}

template <class ExecutionSpace>
void proliferation( const ExecutionSpace& exec, const Settings& set, int per_axis, nlohmann::json& cases )
{
    namespace mech = morula::mechanics;
    using Scalar = double;
    using mem = typename ExecutionSpace::memory_space;
    const Scalar spacing = 20;
    const Scalar extent = spacing * Scalar( per_axis );
    const morula::core::Box<Scalar> box( { 0, 0, 0 }, { extent, extent, extent }, morula::core::Boundary::periodic );
    mech::GrowthParameters<Scalar> growth;
    growth.growth_rate = 0; // no division: every run the same work
    mech::Proliferation<Scalar, mem> model( mech::lattice_agents<Scalar, mem>( exec, per_axis, spacing, {} ), box,
                                            mech::MechanicsParameters<Scalar>{}, growth );
    const std::string size = std::to_string( per_axis * per_axis * per_axis ) + " agents";
    for ( const bool timed : { false, true } )
    {
        const Stats s = time_phase( exec, set.warmup, set.runs, [&] {
            for ( int k = 0; k < set.steps; ++k )
                model.step( exec, timed );
        } );
        cases.push_back( record( "Proliferation", size, timed, s, set.steps ) );
    }
}

template <class ExecutionSpace>
void lattice_diffusion( const ExecutionSpace& exec, const Settings& set, int n, nlohmann::json& cases )
{
    namespace lat = morula::lattice;
    using mem = typename ExecutionSpace::memory_space;
    const lat::LatticeShape shape( n, n, n );
    lat::DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.25 );
    lat::Lattice<4, mem> lattice( shape );
    lat::place_particles( lattice, { std::size_t( 0.5 * double( shape.sites() ) ) }, rules, 7,
                          lat::ParticleCodes::species );
    lat::LatticeDiffusion<4, ExecutionSpace> model( exec, lattice, rules, lat::DiffusionOptions{} );
    const std::string size = std::to_string( n ) + "^3 sites";
    for ( const bool timed : { false, true } )
    {
        const Stats s = time_phase( exec, set.warmup, set.runs, [&] {
            for ( int k = 0; k < set.steps; ++k )
                model.step( exec, timed );
        } );
        cases.push_back( record( "LatticeDiffusion", size, timed, s, set.steps ) );
    }
}

template <class ExecutionSpace>
void run_all( const ExecutionSpace& exec, const Settings& set )
{
    std::printf( "%s\n%s\n", morula::core::build_summary().c_str(), ExecutionSpace::name() );
    nlohmann::json cases = nlohmann::json::array();
    for ( int c : set.cells )
        proliferation( exec, set, c, cases );
    for ( int n : set.lattice )
        lattice_diffusion( exec, set, n, cases );
    if ( !set.out.empty() )
        morula::bench::write_json( set.out, { { "benchmark", "driver_overhead" },
                                              { "machine", morula::bench::machine_info( exec ) },
                                              { "settings",
                                                { { "steps", set.steps },
                                                  { "warmup", set.warmup },
                                                  { "runs", set.runs } } },
                                              { "cases", cases } } );
}

} // namespace overhead_bench

int main( int argc, char* argv[] )
{
    overhead_bench::Settings set;
    CLI::App app{ "Wall time per step of Proliferation and LatticeDiffusion (the driver framework's cost)" };
    app.add_option( "--space", set.space, "device (default execution space) or host" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    app.add_option( "--steps", set.steps, "steps per timed run" )->check( CLI::PositiveNumber );
    app.add_option( "--warmup", set.warmup, "untimed runs first" )->check( CLI::NonNegativeNumber );
    app.add_option( "--runs", set.runs, "timed runs (the median is reported)" )->check( CLI::PositiveNumber );
    app.add_option( "--cells", set.cells, "Proliferation: agents per axis" )->delimiter( ',' )->check( CLI::Range( 2, 400 ) );
    app.add_option( "--lattice", set.lattice, "LatticeDiffusion: sites per axis (multiples of 4)" )
        ->delimiter( ',' )
        ->check( CLI::Range( 8, 1024 ) );
    app.add_option( "--out", set.out, "JSON result file" );
    CLI11_PARSE( app, argc, argv );
    Kokkos::ScopeGuard guard( argc, argv );
    if ( set.space == "host" )
        overhead_bench::run_all( Kokkos::DefaultHostExecutionSpace(), set );
    else
        overhead_bench::run_all( Kokkos::DefaultExecutionSpace(), set );
    return 0;
}
