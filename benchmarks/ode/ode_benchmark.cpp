// ODE benchmarks (issue #4): the LASSIE paper's Table 1 protocol (synthetic M x N networks, t_max = 50,
// 10 and 1000 samples, the paper's settings and modern tolerances) in the fine-grained mode; batched
// Robertson systems; batched 8x8 LU factor-and-solve layouts; the dense-vs-sparse Newton solver
// crossover; and the roofline kernels (issue #8): the mass-action and gene-network right-hand sides and the
// dense analytic Jacobian over a batch of systems, and the batched LU factor-and-solve, each with its bytes
// and flops counted analytically (docs/roofline/ode-and-sem.md). Every case prints one JSON object per
// configuration and the whole run goes to --out, with a top-level "kernels" array of roofline records.
//
//   ode_benchmark --roofline-suite [--quick] [--space host] [--out F]   the roofline kernels at suite size
//   ode_benchmark --case roofline --rhs-systems S --rhs-species N --lu-systems S --lu-n n
#include "../common/Roofline.hpp"
#include "RobertsonNetwork.hpp"

#include <morula/Config.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/SyntheticNetwork.hpp>
#include <morula/ode/detail/DenseLu.hpp>
#include <morula/ode/detail/MassActionKernels.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
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
    int dw_attempts = 0;       // table1 device: RKF45 attempts between status reads (0: automatic)
    bool dw_graphs = true;     // table1 device: replay runs of attempts as captured graphs
    int dw_lanes = 0;          // table1 device: vector lanes per species (0: automatic)
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
    // The modern tolerances with one method throughout (the Rosenbrock methods on the general path: a team
    // per system in the fine-grained mode).
    if ( name == "bdf" || name == "rkf45" || name == "rodas5p" || name == "rodas4" || name == "rosenbrock23" )
    {
        o.method = name == "bdf" ? ode::Method::bdf : name == "rkf45" ? ode::Method::rkf45 : name == "rodas5p" ? ode::Method::rodas5p
                   : name == "rodas4" ? ode::Method::rodas4 : ode::Method::rosenbrock23;
        return o;
    }
    throw std::invalid_argument( "unknown settings '" + name + "' (paper, modern, bdf, rkf45, rodas5p, rodas4, rosenbrock23)" );
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
                    options.device_wide_attempts_per_sync = cfg.dw_attempts;
                    options.device_wide_graphs = cfg.dw_graphs;
                    options.device_wide_lanes = cfg.dw_lanes;
                    ode::OdeSolver<Exec> solver( system, options );
                    const auto times = even_times( 50.0, samples );
                    ode::OdeResult<Mem> result;
                    auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [] {}, [&] { result = solver.solve( exec, times ); } );
                    nlohmann::json j{ { "case", "table1" },   { "species", n },      { "reactions", n },
                                      { "model", model },     { "seed", seed },      { "samples", samples },
                                      { "settings", name },   { "time", stats.to_json() },
                                      { "mode", cfg.mode },
                                      { "dw_attempts", cfg.dw_attempts },
                                      { "dw_graphs", cfg.dw_graphs },
                                      { "dw_lanes", cfg.dw_lanes },
                                      { "linear_solver", static_cast<int>( solver.linear_solver() ) },
                                      { "statistics", statistics_json( result ) } };
                    std::cout << j.dump() << std::endl;
                    out.push_back( j );
                }
        }
    return out;
}

// --- batched Robertson --------------------------------------------------------------------------------
// Issue #45's ensemble: Robertson's problem with per-system rates, either every rate varied +-10% (seed 7)
// or k3 swept evenly over [0, 1e4] as DiffEqGPU's benchmark does, integrated to t_end by each method.
struct RobertsonCase
{
    std::vector<std::string> methods{ "auto", "bdf" };
    std::string sweep = "rates"; // rates | k3
    double rtol = 1e-6;
    double atol = 1e-12;
    std::string precision = "double";
    long check_systems = 0; // write this many systems' rates and last samples (evenly spread) for a reference check
    // shared: one list of times for all systems; per-system: the same list as a row per system (the
    // solver's per-system times, for what reading a system's own times costs against the shared list)
    std::string times = "shared";
    // A model file (text, LASSIE folder, SBML) instead of Robertson: its network and sample times (the
    // rates sweep only), for the general path's methods on networks beyond the register kernel.
    std::string model;
    // The batched mode's layouts to run each method in (the general path; the register kernel ignores it):
    // auto, interleaved, on-chip; each later one reports its largest difference from the first.
    std::vector<std::string> layouts{ "auto" };
    int lanes = 0; // on-chip: vector lanes per system (0: automatic)
    // How the Rosenbrock methods fill samples inside steps, each run in turn: dense, steps (step_to_sample).
    std::vector<std::string> sample_outputs{ "auto" };
    // > 0: this many sample times spaced evenly in log t from 1e-5 to t_end (and t = 0) instead of the 8 default.
    int log_samples = 0;
    // Also time the solve into the previous run's result Views (OdeSolver::solve(..., result)): what a loop
    // of solves of one size costs once its results are allocated.
    bool reuse_results = false;
};

ode::Method method_named( const std::string& name )
{
    if ( name == "auto" || name == "auto-bdf" ) // auto-bdf: automatic with stiff_method bdf (RKF45 <-> BDF)
        return ode::Method::automatic;
    if ( name == "bdf" )
        return ode::Method::bdf;
    if ( name == "rkf45" )
        return ode::Method::rkf45;
    if ( name == "rodas5p" )
        return ode::Method::rodas5p;
    if ( name == "rodas4" )
        return ode::Method::rodas4;
    if ( name == "rosenbrock23" )
        return ode::Method::rosenbrock23;
    throw std::invalid_argument( "unknown method '" + name + "' (auto, auto-bdf, bdf, rkf45, rodas5p, rodas4, rosenbrock23)" );
}

template <class Exec>
nlohmann::json robertson( const Settings& cfg, const std::vector<long>& system_counts, double t_end, const RobertsonCase& rc )
{
    using Mem = typename Exec::memory_space;
    nlohmann::json out = nlohmann::json::array();
    ode::ReactionNetwork net;
    if ( !rc.model.empty() )
    {
        if ( rc.sweep != "rates" )
            throw std::invalid_argument( "--model takes --sweep rates only" );
        net = ode::read_model( rc.model );
    }
    else
        net = bench::robertson_network();
    const int n = net.species_count(), m = net.reaction_count();
    ode::MassActionSystem<Mem> system( net );
    Exec exec;
    std::vector<double> times = !rc.model.empty() && !net.settings.sample_times.empty()
                                    ? net.settings.sample_times
                                    : std::vector<double>{ 0.0, 0.4, 4.0, 40.0, 400.0, 4e3, 4e4, t_end };
    if ( rc.log_samples > 0 )
    {
        times = { 0.0 };
        const double first = std::min( 1e-5, t_end );
        for ( int i = 0; i < rc.log_samples; ++i )
            times.push_back( rc.log_samples > 1 ? first * std::pow( t_end / first, double( i ) / ( rc.log_samples - 1 ) ) : t_end );
        times.back() = t_end;
    }
    for ( long systems : system_counts )
    {
        Kokkos::View<double**, Kokkos::LayoutLeft, Mem> x0( "x0", systems, n ), k( "k", systems, m );
        auto hx = Kokkos::create_mirror_view( x0 );
        auto hk = Kokkos::create_mirror_view( k );
        std::mt19937_64 rng( 7 );
        for ( long s = 0; s < systems; ++s )
        {
            for ( int i = 0; i < n; ++i )
                hx( s, i ) = net.initial_state[std::size_t( i )];
            for ( int r = 0; r < m; ++r )
                hk( s, r ) = rc.sweep == "k3" ? net.reactions[r].rate_constant
                                              : net.reactions[r].rate_constant * ( 0.9 + 0.2 * ( ( rng() >> 11 ) * 0x1.0p-53 ) );
            if ( rc.sweep == "k3" )
                hk( s, 2 ) = systems > 1 ? 1e4 * static_cast<double>( s ) / static_cast<double>( systems - 1 ) : 1e4;
        }
        Kokkos::deep_copy( x0, hx );
        Kokkos::deep_copy( k, hk );
        Kokkos::View<double**, Kokkos::LayoutLeft, Mem> rows;
        if ( rc.times == "per-system" )
        {
            rows = Kokkos::View<double**, Kokkos::LayoutLeft, Mem>( "times", systems, times.size() );
            auto hr = Kokkos::create_mirror_view( rows );
            for ( long s = 0; s < systems; ++s )
                for ( std::size_t i = 0; i < times.size(); ++i )
                    hr( s, i ) = times[i];
            Kokkos::deep_copy( rows, hr );
        }
        for ( const auto& method_name : rc.methods )
        {
        Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace> first_samples;
        for ( const auto& layout : rc.layouts )
        for ( const auto& sample_output : rc.sample_outputs )
        {
            ode::SolverOptions options;
            options.sample_output = sample_output == "steps"   ? ode::SampleOutput::step_to_sample
                                    : sample_output == "dense" ? ode::SampleOutput::dense
                                                               : ode::SampleOutput::automatic;
            options.batched_layout = layout == "interleaved" ? ode::BatchedLayout::interleaved
                                     : layout == "on-chip"   ? ode::BatchedLayout::on_chip
                                                             : ode::BatchedLayout::automatic;
            options.batched_lanes = rc.lanes;
            options.method = method_named( method_name );
            if ( method_name == "auto-bdf" )
                options.stiff_method = ode::Method::bdf;
            options.relative_tolerance = rc.rtol;
            options.absolute_tolerance = { rc.atol };
            options.mode = ode::ExecutionMode::batched;
            options.precision = rc.precision == "float" ? ode::Precision::single_precision : ode::Precision::double_precision;
            ode::OdeSolver<Exec> solver( system, options );
            ode::OdeResult<Mem> result;
            auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [] {}, [&] {
                result = rows.extent( 0 ) > 0 ? solver.solve( exec, x0, k, rows ) : solver.solve( exec, x0, k, times );
            } );
            bench::Stats reused;
            if ( rc.reuse_results )
                reused = bench::time_phase( exec, cfg.warmup, cfg.runs, [] {}, [&] {
                    rows.extent( 0 ) > 0 ? solver.solve( exec, x0, k, rows, result ) : solver.solve( exec, x0, k, times, result );
                } );
            auto hs = Kokkos::create_mirror_view( result.samples );
            Kokkos::deep_copy( hs, result.samples );
            const std::size_t last = times.size() - 1;
            double mass_error = 0.0; // Robertson's A + B + C = 1 (a model file's network need not conserve)
            if ( rc.model.empty() )
                for ( long s = 0; s < systems; ++s )
                    mass_error = std::max( mass_error, std::fabs( hs( s, last, 0 ) + hs( s, last, 1 ) + hs( s, last, 2 ) - 1.0 ) );
            // The largest difference from the method's first run (the first layout and sample output), relative
            // to the sample's magnitude (above 1e-12).
            double layout_difference = 0.0;
            if ( first_samples.extent( 0 ) == 0 )
            {
                first_samples = Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace>( "first", hs.extent( 0 ), hs.extent( 1 ), hs.extent( 2 ) );
                Kokkos::deep_copy( first_samples, hs );
            }
            else
                for ( std::size_t e = 0; e < hs.size(); ++e )
                {
                    const double a = hs.data()[e], b = first_samples.data()[e];
                    layout_difference = std::max( layout_difference, std::fabs( a - b ) / std::max( std::fabs( b ), 1e-12 ) );
                }
            nlohmann::json j{ { "case", rc.model.empty() ? "robertson_batched" : "model_batched" },
                              { "model", rc.model.empty() ? std::string( "robertson" ) : rc.model },
                              { "systems", systems },
                              { "method", method_name },
                              { "layout", layout },
                              { "sample_output", sample_output },
                              { "samples", times.size() },
                              { "on_chip_lanes", solver.on_chip_lanes() },
                              { "difference_from_first_layout", layout_difference },
                              { "sweep", rc.sweep },
                              { "precision", rc.precision },
                              { "times", rc.times },
                              { "t_end", t_end },
                              { "rtol", rc.rtol },
                              { "atol", rc.atol },
                              { "time", stats.to_json() },
                              { "max_mass_error", mass_error },
                              // The smallest sample: an interpolant (dense output) may undershoot 0 within the tolerance.
                              { "min_sample", *std::min_element( hs.data(), hs.data() + hs.size() ) },
                              { "statistics", statistics_json( result ) } };
            if ( rc.reuse_results ) // this record's samples and statistics are then the last reused solve's
                j["time_into_results"] = reused.to_json();
            if ( rc.check_systems > 0 && rc.model.empty() )
            {
                // Evenly spread systems across the sweep, with their rates and every sample, for a
                // reference solver (benchmarks/ode/robertson_reference.py) to check.
                nlohmann::json check = nlohmann::json::array();
                const long count = std::min( rc.check_systems, systems );
                for ( long c = 0; c < count; ++c )
                {
                    const long s = count > 1 ? c * ( systems - 1 ) / ( count - 1 ) : 0;
                    nlohmann::json row{ { "system", s }, { "k", { hk( s, 0 ), hk( s, 1 ), hk( s, 2 ) } } };
                    nlohmann::json samples = nlohmann::json::array();
                    for ( std::size_t t = 0; t < times.size(); ++t )
                        samples.push_back( { hs( s, t, 0 ), hs( s, t, 1 ), hs( s, t, 2 ) } );
                    row["samples"] = samples;
                    check.push_back( row );
                }
                j["times"] = times;
                j["check"] = check;
            }
            nlohmann::json brief = j;
            brief.erase( "check" );
            std::cout << brief.dump() << std::endl;
            out.push_back( j );
        }
        }
    }
    return out;
}

// --- batched epidermis gene network ---------------------------------------------------------------------
// Copies of the gene network of Christley et al. (2010) (6 species, Hill regulation), one per cell, each with its own inputs
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

/*!
  Work of one batched LU factor-and-solve of `systems` n x n systems (docs/roofline/ode-and-sem.md):
  flops n(n-1)/2 multipliers + n(n-1)(2n-1)/3 for the trailing updates (one FMA = 2 per element per
  step) + 2n(n-1) + n for the two substitutions; bytes: A read (n^2) and written (n^2 - n: row 0 is
  never changed unless the first pivot swaps it, `first_row_swaps` systems), b read and written (2n),
  and for Morula's pivoted LU the pivot indices written (n ints).
*/
bench::WorkCount lu_work( long systems, int n, bool pivots, long first_row_swaps )
{
    const double N = n;
    bench::WorkCount w;
    w.precision = "double";
    const double per_system = N * ( N - 1 ) / 2 + N * ( N - 1 ) * ( 2 * N - 1 ) / 3 + 2 * N * ( N - 1 ) + N;
    w.flops = double( systems ) * per_system;
    w.bytes = double( systems ) * ( ( N * N + ( N * N - N ) + 2 * N ) * 8.0 + ( pivots ? 4.0 * N : 0.0 ) ) +
              double( first_row_swaps ) * N * 8.0;
    w.basis = "per system: A read n^2 + written n^2-n doubles, b read+written 2n" +
              std::string( pivots ? ", pivots n ints" : "" ) +
              "; flops n(n-1)/2 + n(n-1)(2n-1)/3 (factor) + 2n(n-1) + n (solves)";
    return w;
}

template <class Exec>
nlohmann::json batched_lu( const Settings& cfg, long systems, int n, nlohmann::json& kernels )
{
    using Mem = typename Exec::memory_space;
    nlohmann::json out = nlohmann::json::array();
    Exec exec;
    const nlohmann::json parameters{ { "systems", systems }, { "n", n } };
    auto report = [&]( const std::string& variant, const bench::Stats& stats, double error, long first_row_swaps ) {
        const auto work = lu_work( systems, n, variant == "morula_pivoted_interleaved", first_row_swaps );
        // effective_bandwidth_GBps keeps its earlier convention (2n^2 + 3n doubles per system) so that
        // older result files compare; the kernel record below has the compulsory-traffic count.
        const double legacy_bytes = double( systems ) * ( 2.0 * n * n + 3.0 * n ) * 8.0;
        nlohmann::json j{ { "case", "batched_lu" }, { "variant", variant }, { "systems", systems }, { "n", n },
                          { "time", stats.to_json() }, { "max_error", error },
                          { "effective_bandwidth_GBps", legacy_bytes / stats.median() / 1e9 } };
        std::cout << j.dump() << std::endl;
        out.push_back( j );
        kernels.push_back( bench::kernel_record( "ode", "lu_" + variant, work, stats, parameters ) );
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
        // Systems whose first pivot swapped row 0 (it is then written too); none for these matrices.
        long swaps = 0;
        Kokkos::parallel_reduce(
            "first_row_swaps", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, S ),
            KOKKOS_LAMBDA( const long s, long& c ) { c += piv( s ) != 0 ? 1 : 0; }, swaps );
        report( "morula_pivoted_interleaved", stats, e, swaps );
    }
#if MORULA_HAVE_KOKKOSKERNELS
    // KokkosBatched SerialLU + SerialTrsv on View<double***> with the system index slowest (LayoutRight)
    // - the plain loop of the issue - and on the same routines with LayoutLeft (system index fastest).
    {
        double e = 0.0;
        auto stats = kokkos_batched_lu<Exec, Kokkos::LayoutRight>( cfg, systems, n, e );
        report( "kokkos_batched_system_slowest", stats, e, 0 );
        stats = kokkos_batched_lu<Exec, Kokkos::LayoutLeft>( cfg, systems, n, e );
        report( "kokkos_batched_interleaved", stats, e, 0 );
    }
#endif
    return out;
}

// --- roofline kernels: right-hand sides and Jacobian over a batch -----------------------------------------
// One thread per system, the systems' vectors interleaved (element i of system s at s + S i), as the
// batched solver's workspace holds them; the device functions are the solver's own
// (ode::detail::evaluate_rhs, evaluate_dense_jacobian, EpidermisGeneNetwork::rhs).

//! Analytic work of the mass-action kernels per system and of their shared structure, from the compiled
//! network (docs/roofline/ode-and-sem.md, "Mass-action right-hand side" and "Dense Jacobian").
struct MassActionWork
{
    // right-hand side
    double rhs_flops = 0;           // sum_r A_r (rate products) + 2 T (one FMA per species term)
    double rhs_doubles = 0;         // k read M, x read (species that are reactants), rates written M, f written N
    double rhs_structure_bytes = 0; // CSR arrays, read once per launch
    // dense Jacobian
    double jac_flops = 0;           // sum over contributions (A_r - [a_p == 1] + 2)
    double jac_doubles = 0;         // k and x entries the contributions read, J written N^2
    double jac_structure_bytes = 0;
    long reactant_factors = 0, species_terms = 0, jacobian_nonzeros = 0, contributions = 0;
};

MassActionWork mass_action_work( const ode::MassActionStructure& s )
{
    MassActionWork w;
    const int n = s.species, m = s.reactions;
    std::vector<char> x_read( n, 0 ), x_jac( n, 0 ), k_jac( m, 0 );
    std::vector<int> order( m, 0 ); // A_r, the total reactant order
    for ( int r = 0; r < m; ++r )
        for ( int p = s.reactant_offsets[r]; p < s.reactant_offsets[r + 1]; ++p )
        {
            order[r] += s.reactant_order[p];
            x_read[s.reactant_species[p]] = 1;
        }
    for ( int r = 0; r < m; ++r )
        w.rhs_flops += order[r]; // k_r x^a ...: A_r multiplications
    w.reactant_factors = static_cast<long>( s.reactant_species.size() );
    w.species_terms = static_cast<long>( s.species_term_reaction.size() );
    w.rhs_flops += 2.0 * w.species_terms;
    long xr = 0;
    for ( char c : x_read )
        xr += c;
    w.rhs_doubles = m + xr + m + n;
    w.rhs_structure_bytes = 4.0 * ( m + 1 ) + 8.0 * w.reactant_factors + 4.0 * ( n + 1 ) + 12.0 * w.species_terms;

    w.jacobian_nonzeros = static_cast<long>( s.jacobian_columns.size() );
    w.contributions = static_cast<long>( s.contribution_reaction.size() );
    for ( long c = 0; c < w.contributions; ++c )
    {
        const int r = s.contribution_reaction[c], p = s.contribution_factor[c];
        w.jac_flops += order[r] - ( s.reactant_order[p] == 1 ? 1 : 0 ) + 2;
        k_jac[r] = 1;
        for ( int o = s.reactant_offsets[r]; o < s.reactant_offsets[r + 1]; ++o )
            x_jac[s.reactant_species[o]] = 1;
    }
    long kj = 0, xj = 0;
    for ( char c : k_jac )
        kj += c;
    for ( char c : x_jac )
        xj += c;
    w.jac_doubles = kj + xj + double( n ) * n;
    w.jac_structure_bytes = 4.0 * ( n + 1 ) + 4.0 * w.jacobian_nonzeros + 4.0 * ( w.jacobian_nonzeros + 1 ) +
                            16.0 * w.contributions + 4.0 * ( m + 1 ) + 8.0 * w.reactant_factors;
    return w;
}

//! Flops of one Hill value a + b / (1 + (c X)^h), |h| = m: c X, m - 1 products, 1 + q, then b / den and
//! a + (repression, h > 0) or b q / den and a + (activation): m + 3 or m + 4. The derivative the same
//! function computes is dead code when no Jacobian is asked for.
double hill_value_flops( const ode::HillTerm& t )
{
    const int m = t.h > 0 ? t.h : -t.h;
    return m + ( t.h > 0 ? 3.0 : 4.0 );
}

//! Flops of one evaluation of the epidermis gene network's f (EpidermisGeneNetwork::evaluate without J):
//! the eight Hill values plus 26 for the six rate expressions (f_B reuses k_a N <D> and k_d B of f_N).
double gene_rhs_flops( const ode::EpidermisGeneParameters& p )
{
    return hill_value_flops( p.BN ) + hill_value_flops( p.ON ) + hill_value_flops( p.ND ) + hill_value_flops( p.VO ) +
           hill_value_flops( p.GO ) + hill_value_flops( p.OV ) + hill_value_flops( p.AV ) + hill_value_flops( p.OM ) +
           26.0;
}

template <class Exec>
void launch_mass_action_rhs( const Exec& exec, const ode::MassActionSystem<typename Exec::memory_space>& sys,
                             const Kokkos::View<double*, typename Exec::memory_space>& k,
                             const Kokkos::View<double*, typename Exec::memory_space>& x,
                             const Kokkos::View<double*, typename Exec::memory_space>& rates,
                             const Kokkos::View<double*, typename Exec::memory_space>& f, long S )
{
    Kokkos::parallel_for(
        "ode::rhs_mass_action", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, S ),
        KOKKOS_LAMBDA( const long s ) {
            const ode::detail::ThreadOps ops;
            const ode::detail::Strided<const double> kk{ k.data() + s, S }, xx{ x.data() + s, S };
            const ode::detail::Strided<double> rr{ rates.data() + s, S }, ff{ f.data() + s, S };
            ode::detail::evaluate_rhs( ops, sys, kk, xx, rr, ff );
        } );
}

template <class Exec>
void launch_dense_jacobian( const Exec& exec, const ode::MassActionSystem<typename Exec::memory_space>& sys,
                            const Kokkos::View<double*, typename Exec::memory_space>& k,
                            const Kokkos::View<double*, typename Exec::memory_space>& x,
                            const Kokkos::View<double*, typename Exec::memory_space>& J, long S )
{
    Kokkos::parallel_for(
        "ode::jacobian_dense", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, S ),
        KOKKOS_LAMBDA( const long s ) {
            const ode::detail::ThreadOps ops;
            const ode::detail::Strided<const double> kk{ k.data() + s, S }, xx{ x.data() + s, S };
            const ode::detail::Strided<double> jj{ J.data() + s, S };
            ode::detail::evaluate_dense_jacobian( ops, sys, kk, xx, jj );
        } );
}

template <class Exec>
void launch_gene_rhs( const Exec& exec, const ode::EpidermisGeneNetwork<typename Exec::memory_space>& model,
                      const Kokkos::View<double*, typename Exec::memory_space>& in,
                      const Kokkos::View<double*, typename Exec::memory_space>& x,
                      const Kokkos::View<double*, typename Exec::memory_space>& f, long S )
{
    Kokkos::parallel_for(
        "ode::rhs_gene_network", Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>( exec, 0, S ),
        KOKKOS_LAMBDA( const long s ) {
            const ode::detail::ThreadOps ops;
            const ode::detail::Strided<const double> ii{ in.data() + s, S }, xx{ x.data() + s, S };
            const ode::detail::Strided<double> ff{ f.data() + s, S };
            model.rhs( ops, ii, xx, ff, ff );
        } );
}

//! Largest difference between the device results of systems 0, S/2 and S-1 and the same functions
//! evaluated on the host, relative to the largest entry of each system's vector (a check that the timed
//! kernel did the work).
template <class Mem, class HostEval>
double host_check( const Kokkos::View<double*, Mem>& device_out, long S, int len, const HostEval& eval )
{
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), device_out );
    double worst = 0.0;
    std::vector<double> ref( len );
    for ( long s : { 0L, S / 2, S - 1 } )
    {
        eval( s, ref.data() );
        double scale = 0.0, diff = 0.0;
        for ( int i = 0; i < len; ++i )
        {
            scale = std::max( scale, std::fabs( ref[i] ) );
            diff = std::max( diff, std::fabs( h( s + S * i ) - ref[i] ) );
        }
        worst = std::max( worst, scale > 0.0 ? diff / scale : diff );
    }
    return worst;
}

template <class Exec>
nlohmann::json roofline_kernels( const Settings& cfg, long S, int species, nlohmann::json& kernels )
{
    using Mem = typename Exec::memory_space;
    Exec exec;
    nlohmann::json out = nlohmann::json::array();
    const std::uint64_t seed = 1000 * species;
    const auto net = ode::generate_synthetic_network( species, species, seed );
    const auto structure = ode::compile_mass_action( net );
    const ode::MassActionSystem<Mem> sys( structure );
    const ode::MassActionSystem<Kokkos::HostSpace> host_sys( structure );
    const auto work = mass_action_work( structure );
    const int n = structure.species, m = structure.reactions;

    // Per-system state and rate constants: the network's, each scaled by a factor in [0.9, 1.1).
    Kokkos::View<double*, Mem> k( "k", S * m ), x( "x", S * n ), rates( "rates", S * m ), f( "f", S * n );
    auto hk = Kokkos::create_mirror_view( k );
    auto hx = Kokkos::create_mirror_view( x );
    std::mt19937_64 rng( 11 );
    auto u = [&]() { return ( rng() >> 11 ) * 0x1.0p-53; };
    for ( long s = 0; s < S; ++s )
    {
        for ( int r = 0; r < m; ++r )
            hk( s + S * r ) = structure.rate_constants[r] * ( 0.9 + 0.2 * u() );
        for ( int i = 0; i < n; ++i )
            hx( s + S * i ) = u();
    }
    Kokkos::deep_copy( k, hk );
    Kokkos::deep_copy( x, hx );
    auto host_k = [&]( long s ) { return ode::detail::Strided<const double>{ hk.data() + s, S }; };
    auto host_x = [&]( long s ) { return ode::detail::Strided<const double>{ hx.data() + s, S }; };

    const nlohmann::json network{ { "systems", S },
                                  { "network", "synthetic" },
                                  { "species", n },
                                  { "reactions", m },
                                  { "seed", seed },
                                  { "reactant_factors", work.reactant_factors },
                                  { "species_terms", work.species_terms },
                                  { "jacobian_nonzeros", work.jacobian_nonzeros },
                                  { "jacobian_contributions", work.contributions } };
    auto report = [&]( const std::string& kernel, const bench::WorkCount& w, const bench::Stats& stats, double error,
                       const nlohmann::json& parameters ) {
        nlohmann::json j{ { "case", "roofline" }, { "kernel", kernel }, { "parameters", parameters },
                          { "time", stats.to_json() }, { "max_relative_error", error },
                          { "bytes", w.bytes }, { "flops", w.flops } };
        std::cout << j.dump() << std::endl;
        out.push_back( j );
        kernels.push_back( bench::kernel_record( "ode", kernel, w, stats, parameters ) );
    };

    // Mass-action right-hand side.
    {
        const auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [&] { launch_mass_action_rhs( exec, sys, k, x, rates, f, S ); } );
        std::vector<double> scratch( m );
        const double error = host_check( f, S, n, [&]( long s, double* ref ) {
            const ode::detail::ThreadOps ops;
            ode::detail::evaluate_rhs( ops, host_sys, host_k( s ), host_x( s ), ode::detail::Strided<double>{ scratch.data(), 1 },
                                       ode::detail::Strided<double>{ ref, 1 } );
        } );
        bench::WorkCount w;
        w.precision = "double";
        w.flops = double( S ) * work.rhs_flops;
        w.bytes = double( S ) * work.rhs_doubles * 8.0 + work.rhs_structure_bytes;
        w.basis = "per system: k read M, x read (reactant species), rates written M, f written N doubles; "
                  "flops sum_r A_r (rate products) + 2 per species term (FMA); CSR structure once";
        report( "rhs_mass_action", w, stats, error, network );
    }

    // Dense analytic Jacobian (what the batched BDF factorises).
    {
        Kokkos::View<double*, Mem> J( "J", S * n * n );
        const auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [&] { launch_dense_jacobian( exec, sys, k, x, J, S ); } );
        const double error = host_check( J, S, n * n, [&]( long s, double* ref ) {
            const ode::detail::ThreadOps ops;
            ode::detail::evaluate_dense_jacobian( ops, host_sys, host_k( s ), host_x( s ), ode::detail::Strided<double>{ ref, 1 } );
        } );
        bench::WorkCount w;
        w.precision = "double";
        w.flops = double( S ) * work.jac_flops;
        w.bytes = double( S ) * work.jac_doubles * 8.0 + work.jac_structure_bytes;
        w.basis = "per system: k and x entries read by the contributions, J written N^2 doubles (zeros included); "
                  "flops per contribution A_r - [a_p = 1] products + 2 (FMA); structure once";
        report( "jacobian_dense_mass_action", w, stats, error, network );
    }

    // Epidermis gene network right-hand side (6 species, 5 inputs per system).
    {
        using Gene = ode::EpidermisGeneNetwork<Mem>;
        const int gn = ode::gene_species_count, gm = ode::input_count;
        const Gene model;
        const ode::EpidermisGeneNetwork<Kokkos::HostSpace> host_model;
        Kokkos::View<double*, Mem> in( "in", S * gm ), gx( "gx", S * gn ), gf( "gf", S * gn );
        auto hin = Kokkos::create_mirror_view( in );
        auto hgx = Kokkos::create_mirror_view( gx );
        for ( long s = 0; s < S; ++s )
        {
            for ( int i = 0; i < gn; ++i )
                hgx( s + S * i ) = u();
            hin( s + S * ode::input_mean_N ) = u();
            hin( s + S * ode::input_mean_D ) = u();
            hin( s + S * ode::input_mean_B ) = 0.2 * u();
            hin( s + S * ode::input_adhesion ) = 20.0 * u();
            hin( s + S * ode::input_tgf_beta ) = 0.4;
        }
        Kokkos::deep_copy( in, hin );
        Kokkos::deep_copy( gx, hgx );
        const auto stats = bench::time_phase( exec, cfg.warmup, cfg.runs, [&] { launch_gene_rhs( exec, model, in, gx, gf, S ); } );
        const double error = host_check( gf, S, gn, [&]( long s, double* ref ) {
            const ode::detail::ThreadOps ops;
            const ode::detail::Strided<double> r{ ref, 1 };
            host_model.rhs( ops, ode::detail::Strided<const double>{ hin.data() + s, S },
                            ode::detail::Strided<const double>{ hgx.data() + s, S }, r, r );
        } );
        bench::WorkCount w;
        w.precision = "double";
        w.flops = double( S ) * gene_rhs_flops( model.p );
        w.bytes = double( S ) * ( gm + gn + gn ) * 8.0;
        w.basis = "per system: 5 inputs + 6 species read, 6 rates written (doubles); flops 8 Hill values "
                  "(|h| + 3 repressing, |h| + 4 activating) + 26 for the rate expressions";
        report( "rhs_gene_network", w, stats, error,
                { { "systems", S }, { "network", "epidermis_gene" }, { "species", gn }, { "inputs", gm } } );
    }
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

//! Sizes of the cases that take them.
struct Sizes
{
    std::vector<int> sizes;
    std::vector<int> sample_counts;
    std::vector<std::string> settings;
    int models = 1;
    std::string write_models;
    std::vector<long> systems;
    double t_end = 1e5;
    long lu_systems = 1000000;
    int lu_n = 8;
    long rhs_systems = 100000;
    int rhs_species = 32;
    RobertsonCase robertson;
};

template <class Exec>
nlohmann::json run( const std::string& which, const Settings& cfg, const Sizes& z )
{
    Exec exec;
    nlohmann::json results{ { "benchmark", "ode_benchmark" }, { "case", which }, { "machine", bench::machine_info( exec ) } };
    nlohmann::json kernels = nlohmann::json::array();
    if ( !z.write_models.empty() )
        std::filesystem::create_directories( z.write_models );
    if ( which == "table1" )
        results["results"] = table1<Exec>( cfg, z.sizes, z.sample_counts, z.settings, z.models, z.write_models );
    else if ( which == "robertson" )
        results["results"] = robertson<Exec>( cfg, z.systems, z.t_end, z.robertson );
    else if ( which == "genes" )
        results["results"] = gene_network<Exec>( cfg, z.systems, z.t_end );
    else if ( which == "lu" )
        results["results"] = batched_lu<Exec>( cfg, z.lu_systems, z.lu_n, kernels );
    else if ( which == "roofline" )
    {
        auto r = roofline_kernels<Exec>( cfg, z.rhs_systems, z.rhs_species, kernels );
        for ( auto& j : batched_lu<Exec>( cfg, z.lu_systems, z.lu_n, kernels ) )
            r.push_back( j );
        results["results"] = r;
    }
    else if ( which == "crossover" )
        results["results"] = crossover<Exec>( cfg, z.sizes );
    else
    {
        std::fprintf( stderr, "unknown --case '%s'\n", which.c_str() );
        return nullptr;
    }
    // Roofline records (issue #8) of the kernels this case timed; empty for whole-solver cases.
    results["kernels"] = kernels;
    return results;
}

} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "Morula ODE benchmarks (issue #4) and roofline kernels (issue #8)" );
    Settings cfg;
    std::string which, out_path;
    Sizes z;
    z.sizes = { 64, 128, 256, 512, 1024, 2048, 4096, 8192 };
    z.sample_counts = { 10, 1000 };
    z.settings = { "paper", "modern" };
    z.systems = { 100000, 1000000 };
    bool suite = false, quick = false;
    app.add_option( "--case", which, "table1 | robertson | genes | lu | crossover | roofline" );
    app.add_flag( "--roofline-suite", suite,
                  "the roofline kernels at the suite's size (--case roofline, 10^5 systems of a 32 x 32 network, "
                  "10^6 8 x 8 LU systems, 5 runs); explicit size options still apply" );
    app.add_flag( "--quick", quick, "with --roofline-suite: smoke-test sizes (5000 systems, 20000 LU systems, 2 runs)" );
    app.add_option( "--sizes", z.sizes, "table1/crossover: species = reactions" )->delimiter( ',' );
    app.add_option( "--samples", z.sample_counts, "table1: sample counts" )->delimiter( ',' );
    app.add_option( "--settings", z.settings,
                    "table1: paper, modern (automatic), or modern tolerances with one method: bdf, rkf45, rodas5p, rodas4, "
                    "rosenbrock23" )
        ->delimiter( ',' );
    app.add_option( "--models", z.models, "table1: random models per size" );
    app.add_option( "--write-models", z.write_models, "table1: also write each model in the folder format here" );
    app.add_option( "--systems", z.systems, "robertson, genes: batch sizes" )->delimiter( ',' );
    app.add_option( "--t-end", z.t_end, "robertson, genes: end time" );
    app.add_option( "--methods", z.robertson.methods,
                    "robertson: auto, auto-bdf (automatic with stiff_method bdf), bdf, rkf45, rodas5p, rodas4, rosenbrock23" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { "auto", "auto-bdf", "bdf", "rkf45", "rodas5p", "rodas4", "rosenbrock23" } ) );
    app.add_option( "--sweep", z.robertson.sweep, "robertson: rates (every rate +-10%) or k3 (k3 evenly over [0, 1e4])" )
        ->check( CLI::IsMember( { "rates", "k3" } ) );
    app.add_option( "--rtol", z.robertson.rtol, "robertson: relative tolerance" );
    app.add_option( "--atol", z.robertson.atol, "robertson: absolute tolerance" );
    app.add_option( "--precision", z.robertson.precision, "robertson: double or float (Rosenbrock methods)" )
        ->check( CLI::IsMember( { "double", "float" } ) );
    app.add_option( "--times", z.robertson.times,
                    "robertson: shared (one list) or per-system (the same list as a row per system: the cost of "
                    "per-system times)" )
        ->check( CLI::IsMember( { "shared", "per-system" } ) );
    app.add_option( "--model", z.robertson.model,
                    "robertson: a model file instead of Robertson (its sample times; --sweep rates; no --check-systems)" );
    app.add_option( "--layouts", z.robertson.layouts,
                    "robertson: the batched mode's layouts of the general path to run each method in: auto, "
                    "interleaved, on-chip" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { "auto", "interleaved", "on-chip" } ) );
    app.add_option( "--lanes", z.robertson.lanes, "robertson: on-chip vector lanes per system (0: automatic)" );
    app.add_option( "--sample-outputs", z.robertson.sample_outputs,
                    "robertson: how the Rosenbrock methods fill samples inside steps, each run in turn: auto, dense, steps" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { "auto", "dense", "steps" } ) );
    app.add_option( "--log-samples", z.robertson.log_samples,
                    "robertson: this many sample times evenly in log t from 1e-5 to --t-end (and t = 0) instead of 8" )
        ->check( CLI::Range( 0, 1000000 ) );
    app.add_flag( "--reuse-results", z.robertson.reuse_results,
                  "robertson: also time solves into the previous result's Views (time_into_results)" );
    app.add_option( "--check-systems", z.robertson.check_systems,
                    "robertson: write this many systems' rates and samples to --out for robertson_reference.py" );
    app.add_option( "--lu-systems", z.lu_systems, "lu, roofline: number of systems" );
    app.add_option( "--lu-n", z.lu_n, "lu, roofline: matrix size" );
    app.add_option( "--rhs-systems", z.rhs_systems, "roofline: systems of the right-hand-side and Jacobian kernels" );
    app.add_option( "--rhs-species", z.rhs_species, "roofline: species = reactions of the synthetic network" )
        ->check( CLI::Range( 1, 4096 ) );
    app.add_option( "--warmup", cfg.warmup );
    app.add_option( "--runs", cfg.runs );
    app.add_option( "--team-size", cfg.team_size, "fine-grained team size (0: automatic)" );
    app.add_option( "--mode", cfg.mode, "table1: fine (one team per system) or device (one kernel per RKF45 stage)" )
        ->check( CLI::IsMember( { "fine", "device" } ) );
    app.add_option( "--dw-attempts", cfg.dw_attempts,
                    "table1 device: RKF45 attempts between two reads of the device status (0: automatic)" );
    app.add_option( "--dw-graphs", cfg.dw_graphs, "table1 device: 1 replays runs of attempts as captured graphs, 0 launches" );
    app.add_option( "--dw-lanes", cfg.dw_lanes, "table1 device: vector lanes per species, a power of two up to 32 (0: 8 on GPUs, 1 on hosts)" );
    app.add_option( "--out", out_path, "JSON results file" );
    std::string space = "device";
    app.add_option( "--space", space, "device (default execution space) or host (default host execution space)" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    CLI11_PARSE( app, argc, argv );
    if ( suite )
    {
        which = "roofline";
        if ( app.count( "--rhs-systems" ) == 0 )
            z.rhs_systems = quick ? 5000 : 100000;
        if ( app.count( "--lu-systems" ) == 0 )
            z.lu_systems = quick ? 20000 : 1000000;
        if ( app.count( "--runs" ) == 0 )
            cfg.runs = quick ? 2 : 5;
    }
    else if ( quick )
    {
        std::fprintf( stderr, "--quick goes with --roofline-suite\n" );
        return 2;
    }
    if ( which.empty() )
    {
        std::fprintf( stderr, "give --case or --roofline-suite\n%s", app.help().c_str() );
        return 2;
    }
    if ( which == "roofline" && ( z.rhs_systems < 1 || z.lu_systems < 1 || z.lu_n < 1 ) )
    {
        std::fprintf( stderr, "roofline: --rhs-systems, --lu-systems and --lu-n must be >= 1\n" );
        return 2;
    }

    nlohmann::json results = space == "host" ? run<Kokkos::DefaultHostExecutionSpace>( which, cfg, z )
                                             : run<Kokkos::DefaultExecutionSpace>( which, cfg, z );
    if ( results.is_null() )
        return 2;
    if ( !out_path.empty() )
        bench::write_json( out_path, results );
    return 0;
}
