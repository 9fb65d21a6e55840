// Site updates per second of the multiparticle lattice (seed 002, Table 2 sizes and 512^3) for every
// capacity (2, 4, 8 particles per site), split and fused passes, with the bytes moved per site update,
// the fraction of the measured copy bandwidth, and the cost of overflow handling at the paper's
// recommended occupancies (expected overflows < 0.01 per step on 256^3: 0.0015, 0.038, 0.41 per site).
//
// A "site update" is one site advanced by one whole time step (three split passes or one fused pass).
// Each split pass reads each word once and writes it once (neighbour words come from cache): 24 B
// per site update; the fused pass 8 B.
//
//   lattice_benchmark --out results.json [--sizes 64x64x128,...] [--capacities 2,4,8] [--schemes split,fused]
#include <common/BenchmarkUtils.hpp>

#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace lattice_bench
{
using morula::bench::Stats;
using morula::bench::time_phase;
namespace lat = morula::lattice;

struct Settings
{
    std::vector<std::string> sizes{ "64x64x128", "128x128x256", "256x256x512", "512x512x512" };
    std::vector<int> capacities{ 2, 4, 8 };
    std::vector<std::string> schemes{ "split", "fused" };
    std::vector<double> occupancy{ 0.0015, 0.038, 0.41 }; // per capacity 2, 4, 8
    double move_probability = 0.25;                       // p_-1 = p_+1: p_0 = 0.5
    int steps = 10;                                       // per timed run
    int warmup = 2;
    int runs = 10;
    std::string space = "device";
    std::string out;
};

lat::LatticeShape parse_size( const std::string& s )
{
    int x = 0, y = 0, z = 0;
    char a = 0, b = 0;
    std::istringstream in( s );
    if ( !( in >> x >> a >> y >> b >> z ) || a != 'x' || b != 'x' )
        throw std::invalid_argument( "size '" + s + "': expected NXxNYxNZ, e.g. 64x64x128" );
    return lat::LatticeShape( x, y, z );
}

template <int Slots, class ExecutionSpace>
nlohmann::json run_case( const ExecutionSpace& exec, const Settings& set, const lat::LatticeShape& shape,
                         lat::PassScheme scheme, double occupancy, double bandwidth )
{
    using mem = typename ExecutionSpace::memory_space;
    lat::DiffusionRules rules( 1 );
    rules.set_isotropic( 0, set.move_probability );
    lat::Lattice<Slots, mem> lattice( shape );
    const std::size_t particles = std::size_t( occupancy * double( shape.sites() ) );
    lat::place_particles( lattice, { particles }, rules, 7, lat::ParticleCodes::species );
    lat::DiffusionOptions opt;
    opt.scheme = scheme;
    lat::LatticeDiffusion<Slots, ExecutionSpace> model( exec, lattice, rules, opt );
    const double sites = double( shape.sites() );

    // Whole steps, as a simulation runs them: passes plus overflow placement after each.
    model.step( exec, 1 );
    const unsigned long long overflows_before = model.overflows();
    const Stats full = time_phase( exec, set.warmup, set.runs, [&] { model.step( exec, set.steps ); } );
    const unsigned long long overflows = model.overflows() - overflows_before;
    const double steps_timed = double( set.steps ) * ( set.warmup + set.runs );

    // The passes alone (no placement kernels): the cost of overflow handling is the difference.
    // Overflowed particles stay in the list meanwhile (rare at these occupancies); placement between
    // runs puts them back.
    const Stats passes = time_phase(
        exec, set.warmup, set.runs, [&] { model.place_overflow( exec ); },
        [&] {
            for ( int s = 0; s < set.steps; ++s )
            {
                if ( scheme == lat::PassScheme::split )
                    for ( int axis = 0; axis < 3; ++axis )
                        model.split_pass( exec, axis );
                else
                    model.fused_pass( exec );
                model.complete_step();
            }
        } );
    model.place_overflow( exec );
    const auto counts = model.code_counts( exec );
    if ( counts[1] != particles )
        throw std::runtime_error( "lattice_benchmark: particles were lost" );

    const double t_step = full.median() / set.steps;
    const double rate = sites / t_step;
    const double bytes = scheme == lat::PassScheme::split ? 24.0 : 8.0;
    const double overhead = full.median() / passes.median() - 1;
    std::printf( "%4dx%4dx%4d  %d slots  %-5s  occupancy %.4f: %8.3f ms/step  %.3e site updates/s  %5.1f%% of copy "
                 "bandwidth  overflow handling %+5.1f%%  (%.3g overflows/step)\n",
                 shape.nx, shape.ny, shape.nz, Slots, lat::to_string( scheme ), occupancy, 1e3 * t_step, rate,
                 100 * bytes * rate / bandwidth, 100 * overhead, double( overflows ) / steps_timed );
    std::fflush( stdout );
    return { { "nx", shape.nx },
             { "ny", shape.ny },
             { "nz", shape.nz },
             { "sites", shape.sites() },
             { "slots", Slots },
             { "scheme", lat::to_string( scheme ) },
             { "occupancy", occupancy },
             { "particles", particles },
             { "move_probability", set.move_probability },
             { "steps_per_run", set.steps },
             { "step_with_overflow_handling", full.to_json() },
             { "passes_only", passes.to_json() },
             { "seconds_per_step", t_step },
             { "site_updates_per_s", rate },
             { "bytes_per_site_update", bytes },
             { "fraction_of_copy_bandwidth", bytes * rate / bandwidth },
             { "overflow_handling_overhead", overhead },
             { "overflows_per_step", double( overflows ) / steps_timed } };
}

template <class ExecutionSpace>
void run_all( const ExecutionSpace& exec, const Settings& set )
{
    std::printf( "%s\n%s on %s\n", morula::core::build_summary().c_str(), ExecutionSpace::name(),
                 morula::bench::device_name().c_str() );
    const double bandwidth = morula::bench::copy_bandwidth( exec, set.runs );
    std::printf( "copy bandwidth: %.0f GB/s\n", bandwidth * 1e-9 );
    nlohmann::json cases = nlohmann::json::array();
    for ( const auto& size : set.sizes )
    {
        const auto shape = parse_size( size );
        for ( const auto& scheme_name : set.schemes )
        {
            const auto scheme = scheme_name == "fused" ? lat::PassScheme::fused : lat::PassScheme::split;
            for ( int slots : set.capacities )
            {
                const double occ = set.occupancy[slots == 2 ? 0 : slots == 4 ? 1 : 2];
                if ( slots == 2 )
                    cases.push_back( run_case<2>( exec, set, shape, scheme, occ, bandwidth ) );
                else if ( slots == 4 )
                    cases.push_back( run_case<4>( exec, set, shape, scheme, occ, bandwidth ) );
                else
                    cases.push_back( run_case<8>( exec, set, shape, scheme, occ, bandwidth ) );
            }
        }
    }
    if ( !set.out.empty() )
    {
        morula::bench::write_json(
            set.out, { { "benchmark", "lattice_benchmark" },
                       { "machine", morula::bench::machine_info( exec ) },
                       { "copy_bandwidth_bytes_per_s", bandwidth },
                       { "definition", "site updates/s = sites x time steps / s; a step = 3 split passes "
                                       "or 1 fused pass, each followed by overflow placement" },
                       { "settings", { { "runs", set.runs }, { "warmup", set.warmup }, { "steps_per_run", set.steps } } },
                       { "cases", cases } } );
        std::printf( "wrote %s\n", set.out.c_str() );
    }
}

} // namespace lattice_bench

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    lattice_bench::Settings set;
    CLI::App app( "Site updates per second of Morula's multiparticle lattice (seed 002)" );
    app.add_option( "--sizes", set.sizes, "lattice sizes NXxNYxNZ" )->delimiter( ',' );
    app.add_option( "--capacities", set.capacities, "particles per site: 2, 4, 8" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { 2, 4, 8 } ) );
    app.add_option( "--schemes", set.schemes, "split, fused" )->delimiter( ',' )->check( CLI::IsMember( { "split", "fused" } ) );
    app.add_option( "--occupancy", set.occupancy, "particles per site for capacities 2, 4, 8" )
        ->delimiter( ',' )
        ->expected( 3 );
    app.add_option( "--move-probability", set.move_probability, "p_-1 = p_+1 on every axis" )
        ->check( CLI::Range( 0.0, 0.5 ) );
    app.add_option( "--steps", set.steps, "time steps per timed run" )->check( CLI::PositiveNumber );
    app.add_option( "--warmup", set.warmup, "untimed runs first" )->check( CLI::NonNegativeNumber );
    app.add_option( "--runs", set.runs, "timed runs (the median is reported)" )->check( CLI::PositiveNumber );
    app.add_option( "--space", set.space, "device (default execution space) or host" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    app.add_option( "--out", set.out, "JSON result file" );
    try
    {
        app.parse( argc, argv );
        if ( set.space == "host" )
            lattice_bench::run_all( Kokkos::DefaultHostExecutionSpace(), set );
        else
            lattice_bench::run_all( Kokkos::DefaultExecutionSpace(), set );
    }
    catch ( const CLI::ParseError& e )
    {
        return app.exit( e );
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "lattice_benchmark: %s\n", e.what() );
        return 1;
    }
    return 0;
}
