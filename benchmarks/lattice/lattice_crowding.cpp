// Tracer diffusion against occupancy: what the multiparticle lattice does when its sites fill.
//
// The model lets any number of particles share a site; a site word holds only 2, 4 or 8, and a particle
// arriving at a full site has its move rejected (it goes back where it came from, or, if that site has
// filled meanwhile, to the nearest site with room). Crowding therefore slows tracers down: this program
// measures D/D0 per axis at occupancies from 0.001 particles per site to most of the slots, for every
// capacity and both pass schemes, from the increments of marked tracers over windows of time (the crowd
// carries no ids, so every capacity can be measured), and writes a JSON file that
// benchmarks/lattice/plot_crowding.py draws next to the mean-field lattice-gas prediction
// (docs/models/lattice.md, "Crowded lattices").
//
//   lattice_crowding --out crowding.json [--capacities 2,4,8] [--schemes split,fused]
//                    [--fills 0.0005,0.005,...] (fractions of the slots filled)
//                    [--extent 24] [--windows 40] [--window-steps 20] [--replicas 4] [--space device|host]
#include <common/BenchmarkUtils.hpp>

#include <morula/lattice/DisplacementIncrements.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace lattice_crowding
{
namespace lat = morula::lattice;

struct Settings
{
    std::vector<int> capacities{ 2, 4, 8 };
    std::vector<std::string> schemes{ "split", "fused" };
    //! Fractions of the slots filled (occupancy = fill x capacity particles per site).
    std::vector<double> fills{ 0.0005, 0.005, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8 };
    std::vector<std::string> boundaries{ "periodic" };
    double move_probability = 0.25; // each way, every axis
    int extent = 24;
    int windows = 40;
    int window_steps = 20;
    int replicas = 4;
    std::string space = "device";
    std::string out;
};

template <int Slots, class ExecutionSpace>
nlohmann::json run_case( const ExecutionSpace& exec, const Settings& set, lat::PassScheme scheme, double fill,
                         lat::LatticeBoundary boundary )
{
    using layout = lat::SiteLayout<Slots>;
    lat::DiffusionRules rules( 1 );
    rules.set_isotropic( 0, set.move_probability );
    const lat::LatticeShape shape( set.extent, set.extent, set.extent, boundary );
    const std::size_t particles = std::size_t( std::llround( fill * Slots * double( shape.sites() ) ) );
    const std::size_t tracers = std::min<std::size_t>( particles, layout::max_code - 1 );
    lat::DisplacementIncrements inc( lat::CodeMap::marked( 1, std::vector<int>( tracers, 0 ) ) );
    unsigned long long overflows = 0;
    double seconds = 0;
    for ( int r = 0; r < set.replicas; ++r )
    {
        lat::Lattice<Slots, typename ExecutionSpace::memory_space> lattice( shape );
        const auto codes = lat::place_particles( lattice, { particles }, { tracers }, rules, 1000 + r );
        lat::DiffusionOptions opt;
        opt.scheme = scheme;
        opt.seed = 17 + std::uint64_t( r );
        lat::LatticeDiffusion<Slots, ExecutionSpace> model( exec, lattice, rules, codes, opt );
        model.advance( exec, set.window_steps ); // leave the placement's initial condition behind
        inc.restart();
        inc.sample( model.displacements() );
        const auto t0 = std::chrono::steady_clock::now();
        for ( int w = 0; w < set.windows; ++w )
        {
            model.advance( exec, set.window_steps );
            inc.sample( model.displacements() );
        }
        seconds += std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        overflows += model.overflows();
    }
    const double free_axis = 2 * set.move_probability * set.window_steps;
    nlohmann::json axes = nlohmann::json::array();
    for ( int a = 0; a < 3; ++a )
    {
        const auto x = inc.axis( a );
        axes.push_back( { { "d_over_d0", x.msd / free_axis },
                          { "se", x.se_msd / free_axis },
                          { "drift_per_window", x.mean },
                          { "drift_se", x.se_mean } } );
    }
    const auto total = inc.total();
    const double steps = double( set.replicas ) * double( set.windows + 1 ) * set.window_steps;
    const double d = total.msd / ( 3 * free_axis ), se = total.se_msd / ( 3 * free_axis );
    std::printf( "%d slots %-5s %-10s fill %.4f (%.4f per site): D/D0 = %.4f +- %.4f  (x %.4f y %.4f z %.4f)  "
                 "overflows %.3g per particle per step, %zu samples\n",
                 Slots, lat::to_string( scheme ), lat::to_string( boundary ), fill, fill * Slots, d, se,
                 axes[0]["d_over_d0"].get<double>(), axes[1]["d_over_d0"].get<double>(),
                 axes[2]["d_over_d0"].get<double>(), double( overflows ) / ( steps * double( particles ) ),
                 inc.samples() );
    return { { "capacity", Slots },
             { "scheme", lat::to_string( scheme ) },
             { "boundary", lat::to_string( boundary ) },
             { "fill", fill },
             { "occupancy_per_site", fill * Slots },
             { "particles", particles },
             { "tracers", tracers },
             { "samples", inc.samples() },
             { "d_over_d0", d },
             { "se", se },
             { "axes", axes },
             { "overflows_per_particle_per_step", double( overflows ) / ( steps * double( particles ) ) },
             { "seconds", seconds } };
}

template <class ExecutionSpace>
void run( const ExecutionSpace& exec, const Settings& set )
{
    std::printf( "%s\n%s on %s\n", morula::core::build_summary().c_str(), ExecutionSpace::name(),
                 morula::bench::device_name().c_str() );
    nlohmann::json cases = nlohmann::json::array();
    for ( const auto& b : set.boundaries )
        for ( const auto& scheme_name : set.schemes )
            for ( int slots : set.capacities )
                for ( double fill : set.fills )
                {
                    const auto scheme = scheme_name == "fused" ? lat::PassScheme::fused : lat::PassScheme::split;
                    const auto boundary = b == "reflecting" ? lat::LatticeBoundary::reflecting : lat::LatticeBoundary::periodic;
                    if ( slots == 2 )
                        cases.push_back( run_case<2>( exec, set, scheme, fill, boundary ) );
                    else if ( slots == 4 )
                        cases.push_back( run_case<4>( exec, set, scheme, fill, boundary ) );
                    else
                        cases.push_back( run_case<8>( exec, set, scheme, fill, boundary ) );
                }
    if ( !set.out.empty() )
    {
        morula::bench::write_json(
            set.out,
            { { "benchmark", "lattice_crowding" },
              { "machine", morula::bench::machine_info( exec ) },
              { "definition", "D/D0 = mean squared increment of marked tracers over windows / the free value "
                              "2 p window_steps per axis; se = its standard error; the crowd carries no ids" },
              { "settings",
                { { "extent", set.extent },
                  { "windows", set.windows },
                  { "window_steps", set.window_steps },
                  { "replicas", set.replicas },
                  { "move_probability", set.move_probability } } },
              { "cases", cases } } );
        std::printf( "wrote %s\n", set.out.c_str() );
    }
}

} // namespace lattice_crowding

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    lattice_crowding::Settings set;
    CLI::App app( "Tracer D/D0 against occupancy on Morula's multiparticle lattice (Roberts et al. 2009)" );
    app.add_option( "--out", set.out, "JSON results file" );
    app.add_option( "--capacities", set.capacities, "particles per site: 2, 4, 8" )->delimiter( ',' )->check( CLI::IsMember( { 2, 4, 8 } ) );
    app.add_option( "--schemes", set.schemes, "split, fused" )->delimiter( ',' )->check( CLI::IsMember( { "split", "fused" } ) );
    app.add_option( "--fills", set.fills, "fractions of the slots filled, in (0, 1)" )->delimiter( ',' )->check( CLI::Range( 1e-6, 0.95 ) );
    app.add_option( "--boundaries", set.boundaries, "periodic, reflecting" )->delimiter( ',' )->check( CLI::IsMember( { "periodic", "reflecting" } ) );
    app.add_option( "--extent", set.extent, "sites per axis" )->check( CLI::Range( 4, 1024 ) );
    app.add_option( "--windows", set.windows, "windows per replica" )->check( CLI::Range( 1, 1000000 ) );
    app.add_option( "--window-steps", set.window_steps, "steps per window" )->check( CLI::Range( 1, 1000000 ) );
    app.add_option( "--replicas", set.replicas, "independent lattices per case" )->check( CLI::Range( 1, 10000 ) );
    app.add_option( "--move-probability", set.move_probability, "p_-1 = p_+1 on every axis" )->check( CLI::Range( 1e-6, 0.5 ) );
    app.add_option( "--space", set.space, "device (Kokkos' default execution space) or host" )->check( CLI::IsMember( { "device", "host" } ) );
    CLI11_PARSE( app, argc, argv );
    if ( set.space == "host" )
        lattice_crowding::run( Kokkos::DefaultHostExecutionSpace(), set );
    else
        lattice_crowding::run( Kokkos::DefaultExecutionSpace(), set );
    return 0;
}
