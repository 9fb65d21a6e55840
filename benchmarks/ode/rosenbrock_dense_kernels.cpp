// The register-resident Rosenbrock kernel with and without dense output (issue #45), launched directly: the
// kernel that ends steps on samples and the dense-output kernel, for Robertson's 3 species with every rate
// varied +-10% per system, at several sample counts, each pair in one process (double Rodas5P and the
// switching kernel at rtol 1e-6; float Rosenbrock23 and Rodas5P at rtol 1e-3 with nonnegativity
// enforced). What SampleOutput::automatic's rule on GPUs (automatic_register_dense_min_samples) rests on:
// the dense kernel holds its interpolant's vectors in registers (fewer warps per multiprocessor) and saves
// the steps that samples would cut short.
//
// Self-contained (headers and Kokkos only, no libmorula): it instantiates the few kernels it times instead of
// OdeSolver's dispatch over every method, capacity and precision, so that it compiles in a minute.
//
//   rosenbrock_dense_kernels [--systems N] [--samples 8,16,32,100] [--runs 5] [--out F.json]
#include "../common/BenchmarkUtils.hpp"
#include "RobertsonNetwork.hpp"

#include <morula/ode/detail/BatchIntegration.hpp>
#include <morula/ode/detail/RosenbrockBatch.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace
{
using namespace morula;
using namespace morula::ode::detail;
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Mem>;

// The 8 default times of ode_benchmark's Robertson case, or t = 0 and count - 1 times evenly in log t.
std::vector<double> sample_times( int count, double t_end )
{
    if ( count == 8 )
        return { 0.0, 0.4, 4.0, 40.0, 400.0, 4e3, 4e4, t_end };
    std::vector<double> t{ 0.0 };
    for ( int i = 0; i + 1 < count; ++i )
        t.push_back( 1e-5 * std::pow( t_end / 1e-5, double( i ) / ( count - 2 ) ) );
    t.back() = t_end;
    return t;
}

struct Inputs
{
    ode::MassActionSystem<Mem> system;
    Matrix x0, k;
    long systems;
};

template <class Real, class Step, bool Switching, bool Dense>
nlohmann::json time_kernel( const Inputs& in, const std::vector<double>& times, double rtol, double atol, bool nonnegative,
                            int warmup, int runs, const char* method )
{
    using Kernel = RosenbrockBatchKernel<Mem, Real, 3, 8, Step, Switching, Dense>;
    Exec exec;
    Kokkos::View<double***, Kokkos::LayoutLeft, Mem> samples( "samples", in.systems, times.size(), 3 );
    Kokkos::View<long**, Kokkos::LayoutLeft, Mem> statistics( "statistics", in.systems, ode::stat_count );
    Kokkos::View<double*, Mem> atol_view( "atol", 1 );
    Kokkos::deep_copy( atol_view, atol );
    Kernel kernel{ small_mass_action<3, 8>( in.system ), in.x0, in.k, in.system.rate_constants, shared_sample_times<Mem>( times ),
                   to_device<int, Mem>( "saved", { 0, 1, 2 } ), atol_view, rtol, 0.0, 10000000L, samples, statistics,
                   Kokkos::View<double**, Kokkos::LayoutLeft, Mem>() };
    kernel.inverse_species = 1.0 / 3;
    kernel.nonnegative = nonnegative;
    kernel.stiffness_threshold = 1e-6;
    kernel.stiffness_check_interval = 20;
    kernel.begin = 0;
    kernel.stop = static_cast<int>( times.size() );
    kernel.first = true;
    const auto stats = bench::time_phase( exec, warmup, runs, [&] {
        Kokkos::parallel_for( "morula::ode::rosenbrock_batch", Kokkos::RangePolicy<Exec>( exec, 0, in.systems ), kernel );
    } );
    auto hs = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), samples );
    auto hst = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), statistics );
    long steps = 0, failed = 0;
    double mass = 0, lowest = 0;
    for ( long s = 0; s < in.systems; ++s )
    {
        steps += hst( s, ode::stat_steps );
        failed += hst( s, ode::stat_status ) != 0;
        const std::size_t last = times.size() - 1;
        mass = std::max( mass, std::fabs( hs( s, last, 0 ) + hs( s, last, 1 ) + hs( s, last, 2 ) - 1.0 ) );
        for ( std::size_t t = 0; t < times.size(); ++t )
            for ( int i = 0; i < 3; ++i )
                lowest = std::min( lowest, hs( s, t, i ) );
    }
    nlohmann::json j{ { "method", method },
                      { "precision", sizeof( Real ) == 4 ? "float" : "double" },
                      { "sample_output", Dense ? "dense" : "steps" },
                      { "samples", times.size() },
                      { "systems", in.systems },
                      { "rtol", rtol },
                      { "atol", atol },
                      { "time", stats.to_json() },
                      { "mean_steps", double( steps ) / in.systems },
                      { "failed_systems", failed },
                      { "max_mass_error", mass },
                      { "min_sample", lowest } };
    std::cout << j.dump() << std::endl;
    return j;
}

} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "The register Rosenbrock kernel with and without dense output (issue #45)" );
    long systems = 1000000;
    std::vector<int> counts{ 8, 16, 32, 100 };
    int warmup = 1, runs = 5;
    double t_end = 1e5;
    std::string out_path;
    app.add_option( "--systems", systems )->check( CLI::Range( 1L, 100000000L ) );
    app.add_option( "--samples", counts, "sample counts (8: ode_benchmark's times; else t = 0 and the rest log-spaced)" )
        ->delimiter( ',' )
        ->check( CLI::Range( 2, 100000 ) );
    app.add_option( "--warmup", warmup );
    app.add_option( "--runs", runs )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--out", out_path, "JSON results file" );
    CLI11_PARSE( app, argc, argv );

    const auto net = bench::robertson_network();
    Inputs in{ ode::MassActionSystem<Mem>( net ), Matrix( "x0", systems, 3 ), Matrix( "k", systems, 3 ), systems };
    auto hx = Kokkos::create_mirror_view( in.x0 );
    auto hk = Kokkos::create_mirror_view( in.k );
    std::mt19937_64 rng( 7 );
    for ( long s = 0; s < systems; ++s )
    {
        hx( s, 0 ) = 1.0;
        for ( int r = 0; r < 3; ++r )
            hk( s, r ) = net.reactions[r].rate_constant * ( 0.9 + 0.2 * ( ( rng() >> 11 ) * 0x1.0p-53 ) );
    }
    Kokkos::deep_copy( in.x0, hx );
    Kokkos::deep_copy( in.k, hk );

    nlohmann::json cases = nlohmann::json::array();
    for ( int count : counts )
    {
        const auto times = sample_times( count, t_end );
        cases.push_back( time_kernel<double, RodasStep<Rodas5PTableau>, false, false>( in, times, 1e-6, 1e-12, false, warmup, runs, "rodas5p" ) );
        cases.push_back( time_kernel<double, RodasStep<Rodas5PTableau>, false, true>( in, times, 1e-6, 1e-12, false, warmup, runs, "rodas5p" ) );
        cases.push_back( time_kernel<double, RodasStep<Rodas5PTableau>, true, false>( in, times, 1e-6, 1e-12, false, warmup, runs, "auto" ) );
        cases.push_back( time_kernel<double, RodasStep<Rodas5PTableau>, true, true>( in, times, 1e-6, 1e-12, false, warmup, runs, "auto" ) );
        cases.push_back( time_kernel<float, Rosenbrock23Step, false, false>( in, times, 1e-3, 1e-6, true, warmup, runs, "rosenbrock23" ) );
        cases.push_back( time_kernel<float, Rosenbrock23Step, false, true>( in, times, 1e-3, 1e-6, true, warmup, runs, "rosenbrock23" ) );
        cases.push_back( time_kernel<float, RodasStep<Rodas5PTableau>, false, false>( in, times, 1e-3, 1e-6, true, warmup, runs, "rodas5p" ) );
        cases.push_back( time_kernel<float, RodasStep<Rodas5PTableau>, false, true>( in, times, 1e-3, 1e-6, true, warmup, runs, "rodas5p" ) );
    }
    nlohmann::json results{ { "benchmark", "rosenbrock_dense_kernels" },
                            { "machine",
                              { { "device", bench::device_name() },
                                { "backend", Exec::name() },
                                { "kokkos_version", KOKKOS_VERSION },
                                { "compiler", bench::compiler() },
                                { "date", bench::utc_now() } } },
                            { "model", "robertson, every rate +-10% per system (seed 7), t_end 1e5" },
                            { "cases", cases } };
    if ( !out_path.empty() )
        bench::write_json( out_path, results );
    return 0;
}
