// The Rosenbrock methods' dense output (SolverOptions::sample_output; RosenbrockTableau.hpp): samples inside
// steps from the step's stages, on every path that runs the methods - the register kernel, the general
// path one system per team (fine-grained), and the batched general path in both layouts. Checked where it
// is hard: an 11-decade stiff chain sampled 241 times (most samples inside steps) against Bateman's
// solution, Robertson sampled 161 times through 11 decades of time with mass conserved at every
// interpolated sample, steps that do not depend on the sampling (bit for bit), paused runs whose legs end
// inside steps, per-system end times, and the rule of SampleOutput::automatic.
#include <OdeTestUtils.hpp>
#include <RobertsonReference.hpp>

#include <morula/ode/OdeIntegration.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace
{
using namespace morula;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, TEST_MEMSPACE>;

std::string method_name( ode::Method m )
{
    return m == ode::Method::rodas5p ? "rodas5p" : m == ode::Method::rodas4 ? "rodas4" : "rosenbrock23";
}

// One way a Rosenbrock method runs: the register kernel (a batch of a network of at most 8 species), the
// general path per team, or the batched general path (larger networks) in a layout.
struct Path
{
    const char* name;
    ode::ExecutionMode mode;
    int chain_length;
    ode::BatchedLayout layout;
};

const Path kPaths[] = {
    { "register kernel", ode::ExecutionMode::batched, 8, ode::BatchedLayout::automatic },
    { "fine-grained", ode::ExecutionMode::fine_grained, 8, ode::BatchedLayout::automatic },
    { "batched interleaved", ode::ExecutionMode::batched, 12, ode::BatchedLayout::interleaved },
    { "batched on chip", ode::ExecutionMode::batched, 12, ode::BatchedLayout::on_chip },
};

ode::SolverOptions options_for( const Path& path, ode::Method method, ode::SampleOutput output )
{
    auto o = test::options_with( method, path.mode, method == ode::Method::rosenbrock23 ? 1e-6 : 1e-9,
                                 method == ode::Method::rosenbrock23 ? 1e-12 : 1e-15 );
    o.batched_layout = path.layout;
    o.sample_output = output;
    return o;
}

// t = 0 and `count` times evenly in log t from `first` to `last`.
std::vector<double> log_times( double first, double last, int count )
{
    std::vector<double> t{ 0.0 };
    for ( int i = 0; i < count; ++i )
        t.push_back( first * std::pow( last / first, double( i ) / ( count - 1 ) ) );
    t.back() = last;
    return t;
}

test::HostResult<TEST_MEMSPACE> solve( const ode::ReactionNetwork& net, const ode::SolverOptions& o, const std::vector<double>& times,
                                       long systems = 1 )
{
    return test::solve_batch<TEST_EXECSPACE>( net, o, times, systems );
}

// The stiff chain (rates 1e5 .. 1e-6) sampled 241 times from 1e-6 to 1e4: with dense output every sample
// is within the tolerance's reach of Bateman's solution, the chain's mass is conserved at every sample
// (the interpolant is a combination of stages that each conserve it), the run takes exactly the steps of
// a run sampled only at its end (bit for bit: the same statistics and end state), and fewer steps than
// ending a step on every sample.
TEST( TEST_CATEGORY, dense_output_chain_samples_against_bateman_on_every_path )
{
    const std::vector<double> times = log_times( 1e-6, 1e4, 241 );
    const std::vector<double> ends{ 0.0, times.back() };
    for ( const Path& path : kPaths )
    {
        std::vector<double> k;
        const auto net = test::stiff_chain( path.chain_length, k );
        const int n = path.chain_length;
        for ( auto method : { ode::Method::rodas5p, ode::Method::rodas4, ode::Method::rosenbrock23 } )
        {
            const std::string what = std::string( path.name ) + " " + method_name( method );
            const auto o = options_for( path, method, ode::SampleOutput::dense );
            const auto dense = solve( net, o, times, 2 );
            const auto end_only = solve( net, o, ends, 2 );
            const auto stepped = solve( net, options_for( path, method, ode::SampleOutput::step_to_sample ), times, 2 );
            ASSERT_EQ( dense.status( 1 ), ode::SolverStatus::success ) << what;
            ASSERT_EQ( stepped.status( 1 ), ode::SolverStatus::success ) << what;
            // Within 100 tolerances of Bateman's solution over the 11 decades (Rosenbrock23, second order: 1000;
            // its global error is the same whether samples end steps or not), plus the absolute tolerance.
            // Measured worst: 2e-8 (Rodas4 dense), 4e-4 (Rosenbrock23) relative.
            const double relative = ( method == ode::Method::rosenbrock23 ? 1000 : 100 ) * o.relative_tolerance;
            const double absolute = 100 * o.absolute_tolerance[0];
            double worst_dense = 0, worst_stepped = 0;
            for ( int s = 0; s < 2; ++s )
                for ( std::size_t t = 0; t < times.size(); ++t )
                {
                    const auto exact = test::bateman( k, times[t], n );
                    double total = 0;
                    for ( int i = 0; i < n; ++i )
                    {
                        const double bound = relative * std::fabs( exact[i] ) + absolute;
                        worst_dense = std::max( worst_dense, std::fabs( dense.samples( s, t, i ) - exact[i] ) / bound );
                        worst_stepped = std::max( worst_stepped, std::fabs( stepped.samples( s, t, i ) - exact[i] ) / bound );
                        total += dense.samples( s, t, i );
                    }
                    EXPECT_NEAR( total, 1.0, 1e-12 ) << what << " t=" << times[t];
                }
            EXPECT_LE( worst_dense, 1.0 ) << what;
            EXPECT_LE( worst_stepped, 1.0 ) << what;
            // The steps do not depend on the samples: the same statistics and end state as a run sampled at the end.
            for ( int c = 0; c < ode::stat_count; ++c )
                EXPECT_EQ( dense.stat( static_cast<ode::StatisticsColumn>( c ), 1 ), end_only.stat( static_cast<ode::StatisticsColumn>( c ), 1 ) )
                    << what << " column " << c;
            for ( int i = 0; i < n; ++i )
                EXPECT_EQ( dense.samples( 1, times.size() - 1, i ), end_only.samples( 1, 1, i ) ) << what << " species " << i;
            // Each sample inside a dense-output step ends one more step when steps end on samples (measured 121-129
            // more of 240 samples at these tolerances, whose steps outnumber the samples).
            EXPECT_GE( stepped.stat( ode::stat_steps, 1 ), dense.stat( ode::stat_steps, 1 ) + 100 ) << what;
        }
    }
}

// Robertson through 11 decades of time sampled 161 times, the decade table's times among them: every
// method on every path against the table (SciPy Radau at rtol 1e-13), and A + B + C = 1 to round-off at
// every sample, interpolated ones included - through the fast transient (t < 1e-3) where one step of
// the stiff method passes many samples.
TEST( TEST_CATEGORY, dense_output_robertson_conserves_mass_at_every_sample )
{
    namespace rob = test::robertson;
    const auto net = test::robertson_network();
    std::vector<double> times = log_times( 1e-6, rob::kDecadeTimes[rob::kDecadeCount - 1], 161 );
    for ( int d = 0; d < rob::kDecadeCount; ++d )
        times.push_back( rob::kDecadeTimes[d] );
    std::sort( times.begin(), times.end() );
    times.erase( std::unique( times.begin(), times.end() ), times.end() );
    for ( const Path& path : { kPaths[0], kPaths[1] } )
        for ( auto method : { ode::Method::rodas5p, ode::Method::rodas4, ode::Method::rosenbrock23 } )
        {
            const std::string what = std::string( path.name ) + " " + method_name( method );
            const double rtol = method == ode::Method::rosenbrock23 ? 1e-6 : 1e-8;
            auto o = test::options_with( method, path.mode, rtol, 1e-20 );
            o.sample_output = ode::SampleOutput::dense;
            const auto r = solve( net, o, times );
            ASSERT_EQ( r.status(), ode::SolverStatus::success ) << what;
            o.sample_output = ode::SampleOutput::step_to_sample;
            EXPECT_LT( r.stat( ode::stat_steps ), solve( net, o, times ).stat( ode::stat_steps ) ) << what;
            for ( std::size_t t = 0; t < times.size(); ++t )
            {
                EXPECT_NEAR( r.samples( 0, t, 0 ) + r.samples( 0, t, 1 ) + r.samples( 0, t, 2 ), 1.0, 1e-13 )
                    << what << " t=" << times[t];
                for ( int d = 0; d < rob::kDecadeCount; ++d )
                    if ( times[t] == rob::kDecadeTimes[d] )
                        for ( int i = 0; i < 3; ++i )
                        {
                            const double want = rob::kDecadeStates[d][i];
                            EXPECT_NEAR( r.samples( 0, t, i ), want, 500 * rtol * want ) << what << " t=" << times[t] << " species " << i;
                        }
            }
        }
}

// Legs that end inside a step (OdeIntegration advancing one sample at a time, with many samples inside
// each step): the step that passes a leg's last sample also fills the next legs' samples it passes, and
// the paused run equals the one-leg run bit for bit - samples and statistics - on every path.
TEST( TEST_CATEGORY, dense_output_paused_runs_equal_one_leg )
{
    const std::vector<double> times = log_times( 1e-5, 1e3, 200 );
    for ( const Path& path : kPaths )
    {
        std::vector<double> k;
        const auto net = test::stiff_chain( path.chain_length, k );
        const int n = path.chain_length;
        const long systems = 3;
        std::vector<std::vector<double>> rates;
        for ( long s = 0; s < systems; ++s )
        {
            rates.emplace_back();
            for ( double v : k )
                rates.back().push_back( v * ( 1.0 + 0.1 * s ) );
        }
        for ( auto method : { ode::Method::rodas5p, ode::Method::rosenbrock23 } )
        {
            const std::string what = std::string( path.name ) + " " + method_name( method );
            // Loose tolerances, so that steps (about 95 for Rodas5P) are fewer than samples: legs end inside steps.
            auto o = options_for( path, method, ode::SampleOutput::dense );
            o.relative_tolerance = 1e-4;
            o.absolute_tolerance = { 1e-10 };
            const auto whole = test::solve_batch<TEST_EXECSPACE>( net, o, times, systems, rates );

            ode::MassActionSystem<TEST_MEMSPACE> system( net );
            ode::OdeSolver<TEST_EXECSPACE> solver( system, o );
            Matrix x0( "x0", systems, n ), kk( "k", systems, n - 1 );
            auto hx = Kokkos::create_mirror_view( x0 );
            auto hk = Kokkos::create_mirror_view( kk );
            for ( long s = 0; s < systems; ++s )
            {
                for ( int i = 0; i < n; ++i )
                    hx( s, i ) = net.initial_state[i];
                for ( int r = 0; r + 1 < n; ++r )
                    hk( s, r ) = rates[s][r];
            }
            Kokkos::deep_copy( x0, hx );
            Kokkos::deep_copy( kk, hk );
            TEST_EXECSPACE exec;
            ode::OdeIntegration<TEST_EXECSPACE> run( solver, exec, x0, kk, times );
            // Legs after which the next leg's first sample is already filled (by the step that passed both).
            int filled_ahead = 0;
            while ( !run.finished() )
            {
                run.advance( exec, 1 );
                const int next = run.samples_done();
                if ( next < static_cast<int>( times.size() ) )
                {
                    const test::HostResult<TEST_MEMSPACE> now( run.result( exec ) );
                    filled_ahead += !std::isnan( now.samples( 0, next, 0 ) );
                }
            }
            exec.fence();
            // Rodas5P: more than 20 such legs of 200 on every path; Rosenbrock23 (second order, more steps) as few
            // as 1 on the 12-species chain.
            EXPECT_GT( filled_ahead, method == ode::Method::rodas5p ? 20 : 0 ) << what;
            const test::HostResult<TEST_MEMSPACE> paused( run.result( exec ) );
            for ( long s = 0; s < systems; ++s )
            {
                ASSERT_EQ( whole.status( s ), ode::SolverStatus::success ) << what;
                for ( int c = 0; c < ode::stat_count; ++c )
                    EXPECT_EQ( paused.stat( static_cast<ode::StatisticsColumn>( c ), s ), whole.stat( static_cast<ode::StatisticsColumn>( c ), s ) )
                        << what << " system " << s << " column " << c;
                for ( std::size_t t = 0; t < times.size(); ++t )
                    for ( int i = 0; i < n; ++i )
                        EXPECT_EQ( paused.samples( s, t, i ), whole.samples( s, t, i ) ) << what << " system " << s << " t=" << times[t];
            }
        }
    }
}

// Per-system end times with dense output: each system's samples are its own (a row of times per system)
// and its last time ends its last step - the same as solving it alone with its own list, bit for bit.
TEST( TEST_CATEGORY, dense_output_per_system_times_equal_single_runs )
{
    const auto net = test::robertson_network();
    const long systems = 3;
    const double ends[systems] = { 1.0, 40.0, 4e4 };
    const int count = 40;
    Matrix rows( "times", systems, count + 1 ), x0( "x0", systems, 3 ), none( "k", 0, 3 );
    auto hr = Kokkos::create_mirror_view( rows );
    auto hx = Kokkos::create_mirror_view( x0 );
    std::vector<std::vector<double>> lists;
    for ( long s = 0; s < systems; ++s )
    {
        lists.push_back( log_times( 1e-6, ends[s], count ) );
        for ( int i = 0; i <= count; ++i )
            hr( s, i ) = lists[s][i];
        hx( s, 0 ) = 1.0;
    }
    Kokkos::deep_copy( rows, hr );
    Kokkos::deep_copy( x0, hx );
    for ( const Path& path : { kPaths[0], kPaths[1] } )
        for ( auto method : { ode::Method::rodas5p, ode::Method::rodas4 } )
        {
            const std::string what = std::string( path.name ) + " " + method_name( method );
            auto o = test::options_with( method, path.mode, 1e-8, 1e-14 );
            o.sample_output = ode::SampleOutput::dense;
            ode::MassActionSystem<TEST_MEMSPACE> system( net );
            ode::OdeSolver<TEST_EXECSPACE> solver( system, o );
            TEST_EXECSPACE exec;
            const test::HostResult<TEST_MEMSPACE> together( solver.solve( exec, x0, none, rows ) );
            for ( long s = 0; s < systems; ++s )
            {
                const auto alone = solve( net, o, lists[s] );
                ASSERT_EQ( together.status( s ), ode::SolverStatus::success ) << what;
                EXPECT_EQ( together.stat( ode::stat_steps, s ), alone.stat( ode::stat_steps ) ) << what << " system " << s;
                for ( int i = 0; i <= count; ++i )
                    for ( int j = 0; j < 3; ++j )
                        EXPECT_EQ( together.samples( s, i, j ), alone.samples( 0, i, j ) ) << what << " system " << s << " sample " << i;
            }
        }
}

// SampleOutput::automatic: dense output, except in the register kernel on a GPU in double precision with few
// samples. Where nonnegativity is enforced (single precision by default) an interpolant below 0 is recorded
// as 0: Robertson with k3 = 0 in single precision, A = exp(-0.04 t) decays to 1e-70 by t = 4000, where the
// interpolant undershoots.
TEST( TEST_CATEGORY, dense_output_automatic_rule )
{
    ode::SolverOptions o;
    EXPECT_EQ( o.sample_output, ode::SampleOutput::automatic );
    EXPECT_TRUE( ode::samples_by_dense_output( o ) );
    o.precision = ode::Precision::single_precision;
    EXPECT_TRUE( ode::samples_by_dense_output( o ) );
    o.sample_output = ode::SampleOutput::step_to_sample;
    EXPECT_FALSE( ode::samples_by_dense_output( o ) );
    o.precision = ode::Precision::double_precision;
    o.sample_output = ode::SampleOutput::automatic;
    o.nonnegativity = ode::Nonnegativity::enforced;
    EXPECT_TRUE( ode::samples_by_dense_output( o ) );
    o.sample_output = ode::SampleOutput::step_to_sample;
    o.nonnegativity = ode::Nonnegativity::automatic;
    EXPECT_FALSE( ode::samples_by_dense_output( o ) );
    // The register kernel on a GPU: one method in double samples densely from
    // automatic_register_dense_min_samples (16) samples; in single precision and the switching kernel
    // (method automatic) always.
    o.sample_output = ode::SampleOutput::automatic;
    EXPECT_EQ( ode::automatic_register_dense_min_samples, 16 );
    for ( int samples : { 2, 8, 15, 16, 32, 64, 128, 1000 } )
    {
        o.method = ode::Method::rodas5p;
        o.precision = ode::Precision::double_precision;
        EXPECT_EQ( ode::samples_by_dense_output( o, true, samples ), samples >= 16 ) << samples;
        EXPECT_TRUE( ode::samples_by_dense_output( o, false, samples ) ) << samples;
        o.precision = ode::Precision::single_precision;
        EXPECT_TRUE( ode::samples_by_dense_output( o, true, samples ) ) << samples;
        o.precision = ode::Precision::double_precision;
        o.method = ode::Method::automatic;
        EXPECT_TRUE( ode::samples_by_dense_output( o, true, samples ) ) << samples;
    }

    const auto net = test::robertson_network();
    const std::vector<double> times = log_times( 1e-3, 1e4, 30 );
    auto single = test::options_with( ode::Method::rodas5p, ode::ExecutionMode::batched, 1e-3, 1e-6 );
    single.precision = ode::Precision::single_precision;
    const auto r = test::solve_batch<TEST_EXECSPACE>( net, single, times, 1, { { 0.04, 3e7, 0.0 } } );
    ASSERT_EQ( r.status(), ode::SolverStatus::success );
    for ( std::size_t t = 0; t < times.size(); ++t )
    {
        for ( int i = 0; i < 3; ++i )
            EXPECT_GE( r.samples( 0, t, i ), 0.0 ) << "t=" << times[t] << " species " << i;
        // A = exp(-0.04 t) within the tolerance, and mass conserved (float round-off).
        const double a = std::exp( -0.04 * times[t] );
        EXPECT_NEAR( r.samples( 0, t, 0 ), a, 1e-5 + 1e-2 * a ) << "t=" << times[t];
        EXPECT_NEAR( r.samples( 0, t, 0 ) + r.samples( 0, t, 1 ) + r.samples( 0, t, 2 ), 1.0, 1e-5 ) << "t=" << times[t];
    }
    // The samples inside steps were interpolated: fewer steps than samples ending steps would take.
    auto stepping = single;
    stepping.sample_output = ode::SampleOutput::step_to_sample;
    const auto e = test::solve_batch<TEST_EXECSPACE>( net, stepping, times, 1, { { 0.04, 3e7, 0.0 } } );
    ASSERT_EQ( e.status(), ode::SolverStatus::success );
    EXPECT_LT( r.stat( ode::stat_steps ), e.stat( ode::stat_steps ) );
}

} // namespace
