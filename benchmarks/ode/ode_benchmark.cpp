// ODE benchmarks (issue #4): the LASSIE paper's Table 1 protocol (synthetic M x N networks, t_max = 50,
// 10 and 1000 samples, the paper's settings and modern tolerances) in the fine-grained mode; batched
// Robertson systems; batched 8x8 LU factor-and-solve layouts; the dense-vs-sparse Newton solver
// crossover. Every case prints one JSON object per configuration and the whole run goes to --out.
#include <common/BenchmarkUtils.hpp>

#include <morula/Config.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/SyntheticNetwork.hpp>
#include <morula/ode/detail/DenseLu.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#if MORULA_HAVE_KOKKOSKERNELS
#include <KokkosBatched_LU_Decl.hpp>
#include <KokkosBatched_LU_Serial_Impl.hpp>
#include <KokkosBatched_Trsv_Decl.hpp>
#include <KokkosBatched_Trsv_Serial_Impl.hpp>
#endif

using namespace morula;

namespace
{

struct Settings
{
    int warmup = 1;
    int runs = 3;
    int team_size = 0;
    std::string mode = "fine"; // table1: fine (one team) or device (one kernel per stage)
};

std::vector<double> even_times( double t_end, int samples )
{
    std::vector<double> t;
    for ( int i = 0; i < samples; ++i )
        t.push_back( t_end * i / ( samples - 1 ) );
    return t;
}

template <class Mem>
nlohmann::json statistics_json( const ode::OdeResult<Mem>& r )
{
    auto h = Kokkos::create_mirror_view( r.statistics );
    Kokkos::deep_copy( h, r.statistics );
    const char* names[ode::stat_count] = { "status", "steps", "rejected", "rkf_steps", "bdf_steps", "switches_to_bdf",
                                           "switches_to_rkf", "newton_iterations", "jacobians", "factorizations",
                                           "rhs_evaluations", "linear_iterations" };
    nlohmann::json j;
    const long systems = static_cast<long>( h.extent( 0 ) );
    for ( int c = 0; c < ode::stat_count; ++c )
    {
        std::vector<long> v( systems );
        for ( long s = 0; s < systems; ++s )
            v[s] = h( s, c );
        std::sort( v.begin(), v.end() );
        if ( systems == 1 )
            j[names[c]] = v[0];
        else
            j[names[c]] = { { "min", v.front() }, { "median", v[systems / 2] }, { "max", v.back() } };
    }
    long failed = 0;
    for ( long s = 0; s < systems; ++s )
        failed += h( s, ode::stat_status ) != 0;
    j["failed_systems"] = failed;
    return j;
}

ode::SolverOptions named_settings( const std::string& name )
{
    if ( name == "paper" )
        return ode::SolverOptions::paper();
    ode::SolverOptions o; // "modern": mixed norm, rtol 1e-6, atol 1e-12, adaptive BDF 1-5
    if ( name == "modern" )
        return o;
    throw std::invalid_argument( "unknown settings '" + name + "' (paper, modern)" );
}

// --- Table 1 protocol -------------------------------------------------------------------------------
template <class Exec>
nlohmann::json table1( const Settings& cfg, const std::vector<int>& sizes, const std::vector<int>& sample_counts,
                       const std::vector<std::string>& settings, int models, const std::string& write_models )
{
    using Mem = typename Exec::memory_space;
    nlohmann::json out = nlohmann::json::array();
    Exec exec;
    for ( int n : sizes )
        for ( int model = 0; model < models; ++model )
        {
            const std::uint64_t seed = 1000 * n + model;
            auto net = ode::generate_synthetic_network( n, n, seed );
            if ( !write_models.empty() )
            {
                auto copy = net;
                copy.settings.sample_times = even_times( 50.0, 10 );
                ode::write_folder_model( copy, write_models + "/synthetic_" + std::to_string( n ) + "_" + std::to_string( model ) );
            }
            ode::MassActionSystem<Mem> system( net );
            for ( const auto& name : settings )
                for ( int samples : sample_counts )
                {
                    auto options = named_settings( name );
                    options.mode = cfg.mode == "device" ? ode::ExecutionMode::device_wide : ode::ExecutionMode::fine_grained;
                    options.team_size = cfg.team_size;
                    ode::OdeSolver<Exec> solver( system, options );
                    const auto times = even_times( 50.0, samples );
                    ode::OdeResult<Mem> result;
                    auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [] {}, [&] { result = solver.solve( exec, times ); } );
                    nlohmann::json j{ { "case", "table1" },   { "species", n },      { "reactions", n },
                                      { "model", model },     { "seed", seed },      { "samples", samples },
                                      { "settings", name },   { "time", stats.to_json() },
                                      { "mode", cfg.mode },
                                      { "linear_solver", static_cast<int>( solver.linear_solver() ) },
                                      { "statistics", statistics_json( result ) } };
                    std::cout << j.dump() << std::endl;
                    out.push_back( j );
                }
        }
    return out;
}

// --- batched Robertson --------------------------------------------------------------------------------
template <class Exec>
nlohmann::json robertson( const Settings& cfg, const std::vector<long>& system_counts, double t_end )
{
    using Mem = typename Exec::memory_space;
    nlohmann::json out = nlohmann::json::array();
    ode::ReactionNetwork net;
    net.species_names = { "A", "B", "C" };
    net.initial_state = { 1.0, 0.0, 0.0 };
    net.reactions.resize( 3 );
    net.reactions[0].reactants = { { 0, 1 } };
    net.reactions[0].products = { { 1, 1 } };
    net.reactions[0].rate_constant = 0.04;
    net.reactions[1].reactants = { { 1, 2 } };
    net.reactions[1].products = { { 1, 1 }, { 2, 1 } };
    net.reactions[1].rate_constant = 3e7;
    net.reactions[2].reactants = { { 1, 1 }, { 2, 1 } };
    net.reactions[2].products = { { 0, 1 }, { 2, 1 } };
    net.reactions[2].rate_constant = 1e4;
    net.source = "robertson";
    ode::MassActionSystem<Mem> system( net );
    Exec exec;
    const std::vector<double> times{ 0.0, 0.4, 4.0, 40.0, 400.0, 4e3, 4e4, t_end };
    for ( long systems : system_counts )
        for ( auto method : { ode::Method::automatic, ode::Method::bdf } )
        {
            Kokkos::View<double**, Kokkos::LayoutLeft, Mem> x0( "x0", systems, 3 ), k( "k", systems, 3 );
            auto hx = Kokkos::create_mirror_view( x0 );
            auto hk = Kokkos::create_mirror_view( k );
            std::mt19937_64 rng( 7 );
            for ( long s = 0; s < systems; ++s )
            {
                hx( s, 0 ) = 1.0;
                for ( int r = 0; r < 3; ++r )
                    hk( s, r ) = net.reactions[r].rate_constant * ( 0.9 + 0.2 * ( ( rng() >> 11 ) * 0x1.0p-53 ) );
            }
            Kokkos::deep_copy( x0, hx );
            Kokkos::deep_copy( k, hk );
            ode::SolverOptions options;
            options.method = method;
            options.relative_tolerance = 1e-6;
            options.absolute_tolerance = { 1e-12 };
            options.mode = ode::ExecutionMode::batched;
            ode::OdeSolver<Exec> solver( system, options );
            ode::OdeResult<Mem> result;
            auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [] {}, [&] { result = solver.solve( exec, x0, k, times ); } );
            auto hs = Kokkos::create_mirror_view( result.samples );
            Kokkos::deep_copy( hs, result.samples );
            double mass_error = 0.0;
            for ( long s = 0; s < systems; ++s )
                mass_error = std::max( mass_error, std::fabs( hs( s, times.size() - 1, 0 ) + hs( s, times.size() - 1, 1 ) +
                                                              hs( s, times.size() - 1, 2 ) - 1.0 ) );
            nlohmann::json j{ { "case", "robertson_batched" },
                              { "systems", systems },
                              { "method", method == ode::Method::bdf ? "bdf" : "automatic" },
                              { "t_end", t_end },
                              { "rtol", 1e-6 },
                              { "atol", 1e-12 },
                              { "time", stats.to_json() },
                              { "max_mass_error", mass_error },
                              { "statistics", statistics_json( result ) } };
            std::cout << j.dump() << std::endl;
            out.push_back( j );
        }
    return out;
}

// --- batched epidermis gene network ---------------------------------------------------------------------
// Copies of seed 000's gene network (6 species, Hill regulation), one per cell, each with its own inputs
// (neighbour averages, adhesion uniform in [0, 20), TGF-beta 0.4) and initial state, t = 0 to t_end.
template <class Exec>
nlohmann::json gene_network( const Settings& cfg, const std::vector<long>& system_counts, double t_end )
{
    using Mem = typename Exec::memory_space;
    using Gene = ode::EpidermisGeneNetwork<Mem>;
    nlohmann::json out = nlohmann::json::array();
    Exec exec;
    Gene model;
    const int n = ode::gene_species_count, m = ode::input_count;
    const std::vector<double> times{ 0.0, 0.1 * t_end, t_end };
    for ( long systems : system_counts )
        for ( auto method : { ode::Method::automatic, ode::Method::bdf } )
        {
            Kokkos::View<double**, Kokkos::LayoutLeft, Mem> x0( "x0", systems, n ), in( "in", systems, m );
            auto hx = Kokkos::create_mirror_view( x0 );
            auto hin = Kokkos::create_mirror_view( in );
            std::mt19937_64 rng( 5 );
            auto u = [&]() { return ( rng() >> 11 ) * 0x1.0p-53; };
            for ( long s = 0; s < systems; ++s )
            {
                for ( int i = 0; i < n; ++i )
                    hx( s, i ) = u();
                hin( s, ode::input_mean_N ) = u();
                hin( s, ode::input_mean_D ) = u();
                hin( s, ode::input_mean_B ) = 0.2 * u();
                hin( s, ode::input_adhesion ) = 20.0 * u();
                hin( s, ode::input_tgf_beta ) = 0.4;
            }
            Kokkos::deep_copy( x0, hx );
            Kokkos::deep_copy( in, hin );
            ode::SolverOptions options;
            options.method = method;
            options.relative_tolerance = 1e-6;
            options.absolute_tolerance = { 1e-10 };
            options.mode = ode::ExecutionMode::batched;
            ode::OdeSolver<Exec, Mem, Gene> solver( model, options );
            ode::OdeResult<Mem> result;
            auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [] {}, [&] { result = solver.solve( exec, x0, in, times ); } );
            nlohmann::json j{ { "case", "gene_network_batched" },
                              { "systems", systems },
                              { "method", method == ode::Method::bdf ? "bdf" : "automatic" },
                              { "t_end", t_end },
                              { "rtol", 1e-6 },
                              { "atol", 1e-10 },
                              { "time", stats.to_json() },
                              { "statistics", statistics_json( result ) } };
            std::cout << j.dump() << std::endl;
            out.push_back( j );
        }
    return out;
}

// --- batched LU --------------------------------------------------------------------------------------
// A diagonally dominant random matrix per system (so LU without pivoting is stable) and b = A 1, so
// x = 1 is the exact answer and every variant is checked.
KOKKOS_INLINE_FUNCTION double matrix_entry( long s, int i, int j, int n )
{
    const unsigned long h = ( static_cast<unsigned long>( s ) * 0x9E3779B97F4A7C15ul ) ^ ( i * 131ul + j * 7919ul );
    const double u = static_cast<double>( ( h * 0xBF58476D1CE4E5B9ul ) >> 11 ) * 0x1.0p-53 - 0.5;
    return i == j ? n + u : u;
}

#if MORULA_HAVE_KOKKOSKERNELS
// KokkosBatched SerialLU + SerialTrsv on View<double***>: with LayoutRight the system index is slowest
// (the plain loop of the issue), with LayoutLeft it is fastest (interleaved).
template <class Exec, class Layout>
bench::Stats kokkos_batched_lu( const Settings& cfg, long systems, int n, double& error )
{
    using Mem = typename Exec::memory_space;
    Exec exec;
    Kokkos::View<double***, Layout, Mem> A0( "A0", systems, n, n ), A( "A", systems, n, n );
    Kokkos::View<double**, Layout, Mem> b( "b", systems, n );
    const int N = n;
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, systems ), KOKKOS_LAMBDA( const long s ) {
            for ( int i = 0; i < N; ++i )
                for ( int j = 0; j < N; ++j )
                    A0( s, i, j ) = matrix_entry( s, i, j, N );
        } );
    auto stats = bench::time_phase(
        exec, cfg.warmup, cfg.runs,
        [&] {
            Kokkos::deep_copy( exec, A, A0 );
            Kokkos::parallel_for(
                "rhs", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, systems ), KOKKOS_LAMBDA( const long s ) {
                    for ( int i = 0; i < N; ++i )
                    {
                        double v = 0.0;
                        for ( int j = 0; j < N; ++j )
                            v += matrix_entry( s, i, j, N );
                        b( s, i ) = v;
                    }
                } );
        },
        [&] {
            Kokkos::parallel_for(
                "kokkos_batched_lu", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, systems ),
                KOKKOS_LAMBDA( const long s ) {
                    using namespace KokkosBatched;
                    auto a = Kokkos::subview( A, s, Kokkos::ALL, Kokkos::ALL );
                    auto x = Kokkos::subview( b, s, Kokkos::ALL );
                    SerialLU<Algo::LU::Unblocked>::invoke( a );
                    SerialTrsv<Uplo::Lower, Trans::NoTranspose, Diag::Unit, Algo::Trsv::Unblocked>::invoke( 1.0, a, x );
                    SerialTrsv<Uplo::Upper, Trans::NoTranspose, Diag::NonUnit, Algo::Trsv::Unblocked>::invoke( 1.0, a, x );
                } );
        } );
    double e = 0.0;
    Kokkos::parallel_reduce(
        "err", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, systems ),
        KOKKOS_LAMBDA( const long s, double& m ) {
            for ( int i = 0; i < N; ++i )
            {
                const double d = morula::compat::fabs( b( s, i ) - 1.0 );
                m = d > m ? d : m;
            }
        },
        Kokkos::Max<double>( e ) );
    error = e;
    return stats;
}
#endif

template <class Exec>
nlohmann::json batched_lu( const Settings& cfg, long systems, int n )
{
    using Mem = typename Exec::memory_space;
    nlohmann::json out = nlohmann::json::array();
    Exec exec;
    auto report = [&]( const std::string& variant, const bench::Stats& stats, double error ) {
        const double bytes = double( systems ) * ( 2.0 * n * n + 3.0 * n ) * 8.0; // A read + LU written, b read/written
        nlohmann::json j{ { "case", "batched_lu" }, { "variant", variant }, { "systems", systems }, { "n", n },
                          { "time", stats.to_json() }, { "max_error", error },
                          { "effective_bandwidth_GBps", bytes / stats.median() / 1e9 } };
        std::cout << j.dump() << std::endl;
        out.push_back( j );
    };

    // Morula: row-major per system, systems interleaved (element (s, i, j) at s + systems (i n + j)).
    {
        Kokkos::View<double*, Mem> A0( "A0", systems * n * n ), A( "A", systems * n * n ), b( "b", systems * n );
        Kokkos::View<int*, Mem> piv( "piv", systems * n );
        const long S = systems;
        const int N = n;
        Kokkos::parallel_for(
            "fill", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, S ), KOKKOS_LAMBDA( const long s ) {
                for ( int i = 0; i < N; ++i )
                    for ( int j = 0; j < N; ++j )
                        A0( s + S * ( i * N + j ) ) = matrix_entry( s, i, j, N );
            } );
        auto stats = bench::time_phase(
            exec, cfg.warmup, cfg.runs,
            [&] {
                Kokkos::deep_copy( exec, A, A0 );
                Kokkos::parallel_for(
                    "rhs", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, S ), KOKKOS_LAMBDA( const long s ) {
                        for ( int i = 0; i < N; ++i )
                        {
                            double v = 0.0;
                            for ( int j = 0; j < N; ++j )
                                v += matrix_entry( s, i, j, N );
                            b( s + S * i ) = v;
                        }
                    } );
            },
            [&] {
                Kokkos::parallel_for(
                    "morula_lu", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, S ), KOKKOS_LAMBDA( const long s ) {
                        const ode::detail::ThreadOps ops;
                        const ode::detail::Strided<double> a{ A.data() + s, S };
                        const ode::detail::Strided<int> p{ piv.data() + s, S };
                        const ode::detail::Strided<double> x{ b.data() + s, S };
                        ode::detail::lu_factor_pivoted( ops, N, a, p );
                        ode::detail::lu_solve_pivoted( ops, N, a, p, x );
                    } );
            } );
        double e = 0.0;
        Kokkos::parallel_reduce(
            "err", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, S ),
            KOKKOS_LAMBDA( const long s, double& m ) {
                for ( int i = 0; i < N; ++i )
                {
                    const double d = morula::compat::fabs( b( s + S * i ) - 1.0 );
                    m = d > m ? d : m;
                }
            },
            Kokkos::Max<double>( e ) );
        report( "morula_pivoted_interleaved", stats, e );
    }
#if MORULA_HAVE_KOKKOSKERNELS
    // KokkosBatched SerialLU + SerialTrsv on View<double***> with the system index slowest (LayoutRight)
    // - the plain loop of the issue - and on the same routines with LayoutLeft (system index fastest).
    {
        double e = 0.0;
        auto stats = kokkos_batched_lu<Exec, Kokkos::LayoutRight>( cfg, systems, n, e );
        report( "kokkos_batched_system_slowest", stats, e );
        stats = kokkos_batched_lu<Exec, Kokkos::LayoutLeft>( cfg, systems, n, e );
        report( "kokkos_batched_interleaved", stats, e );
    }
#endif
    return out;
}

// --- dense vs sparse Newton solver ---------------------------------------------------------------------
template <class Exec>
nlohmann::json crossover( const Settings& cfg, const std::vector<int>& sizes )
{
    using Mem = typename Exec::memory_space;
    nlohmann::json out = nlohmann::json::array();
    Exec exec;
    for ( int n : sizes )
    {
        auto net = ode::generate_synthetic_network( n, n, 77 + n );
        ode::MassActionSystem<Mem> system( net );
        for ( auto ls : { ode::LinearSolver::dense_lu, ode::LinearSolver::sparse_iterative } )
        {
            ode::SolverOptions options;
            options.method = ode::Method::bdf;
            options.mode = ode::ExecutionMode::fine_grained;
            options.linear_solver = ls;
            options.team_size = cfg.team_size;
            ode::OdeSolver<Exec> solver( system, options );
            const auto times = even_times( 50.0, 10 );
            ode::OdeResult<Mem> result;
            auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [] {}, [&] { result = solver.solve( exec, times ); } );
            nlohmann::json j{ { "case", "crossover" }, { "species", n },
                              { "linear_solver", ls == ode::LinearSolver::dense_lu ? "dense_lu" : "sparse_bicgstab" },
                              { "time", stats.to_json() }, { "statistics", statistics_json( result ) } };
            std::cout << j.dump() << std::endl;
            out.push_back( j );
        }
    }
    return out;
}

template <class Exec>
nlohmann::json run( const std::string& which, const Settings& cfg, const std::vector<int>& sizes,
                    const std::vector<int>& sample_counts, const std::vector<std::string>& settings, int models,
                    const std::string& write_models, const std::vector<long>& systems, double t_end, long lu_systems,
                    int lu_n )
{
    Exec exec;
    nlohmann::json results{ { "benchmark", "ode_benchmark" }, { "case", which }, { "machine", bench::machine_info( exec ) } };
    if ( !write_models.empty() )
        std::filesystem::create_directories( write_models );
    if ( which == "table1" )
        results["results"] = table1<Exec>( cfg, sizes, sample_counts, settings, models, write_models );
    else if ( which == "robertson" )
        results["results"] = robertson<Exec>( cfg, systems, t_end );
    else if ( which == "genes" )
        results["results"] = gene_network<Exec>( cfg, systems, t_end );
    else if ( which == "lu" )
        results["results"] = batched_lu<Exec>( cfg, lu_systems, lu_n );
    else if ( which == "crossover" )
        results["results"] = crossover<Exec>( cfg, sizes );
    else
    {
        std::fprintf( stderr, "unknown --case '%s'\n", which.c_str() );
        return nullptr;
    }
    return results;
}

} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "Morula ODE benchmarks (issue #4)" );
    Settings cfg;
    std::string which = "table1", out_path, write_models;
    std::vector<int> sizes{ 64, 128, 256, 512, 1024, 2048, 4096, 8192 };
    std::vector<int> sample_counts{ 10, 1000 };
    std::vector<std::string> settings{ "paper", "modern" };
    std::vector<long> systems{ 100000, 1000000 };
    int models = 1, lu_n = 8;
    long lu_systems = 1000000;
    double t_end = 1e5;
    app.add_option( "--case", which, "table1 | robertson | genes | lu | crossover" )->required();
    app.add_option( "--sizes", sizes, "table1/crossover: species = reactions" )->delimiter( ',' );
    app.add_option( "--samples", sample_counts, "table1: sample counts" )->delimiter( ',' );
    app.add_option( "--settings", settings, "table1: paper and/or modern" )->delimiter( ',' );
    app.add_option( "--models", models, "table1: random models per size" );
    app.add_option( "--write-models", write_models, "table1: also write each model in the folder format here" );
    app.add_option( "--systems", systems, "robertson, genes: batch sizes" )->delimiter( ',' );
    app.add_option( "--t-end", t_end, "robertson, genes: end time" );
    app.add_option( "--lu-systems", lu_systems, "lu: number of systems" );
    app.add_option( "--lu-n", lu_n, "lu: matrix size" );
    app.add_option( "--warmup", cfg.warmup );
    app.add_option( "--runs", cfg.runs );
    app.add_option( "--team-size", cfg.team_size, "fine-grained team size (0: automatic)" );
    app.add_option( "--mode", cfg.mode, "table1: fine (one team per system) or device (one kernel per RKF45 stage)" )
        ->check( CLI::IsMember( { "fine", "device" } ) );
    app.add_option( "--out", out_path, "JSON results file" );
    std::string space = "device";
    app.add_option( "--space", space, "device (default execution space) or host (default host execution space)" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    CLI11_PARSE( app, argc, argv );

    nlohmann::json results = space == "host" ? run<Kokkos::DefaultHostExecutionSpace>( which, cfg, sizes, sample_counts, settings, models,
                                                                                   write_models, systems, t_end, lu_systems, lu_n )
                                             : run<Kokkos::DefaultExecutionSpace>( which, cfg, sizes, sample_counts, settings, models,
                                                                               write_models, systems, t_end, lu_systems, lu_n );
    if ( results.is_null() )
        return 2;
    if ( !out_path.empty() )
        bench::write_json( out_path, results );
    return 0;
}
