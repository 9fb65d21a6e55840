// Sample times with a row per system (per-system end times, issue #45): every system of a batch with its
// own times gives, bit for bit, what a batch of that one system with those times as the shared list gives,
// on every path (the register-resident Rosenbrock kernels, the RKF45 <-> Rodas5P switching kernel, the
// general batched and team integrators with RKF45, BDF and the switch between them); the last samples of
// systems ending at Robertson's decade times match the reference table there, mass conserved; a paused
// and resumed run equals the uninterrupted one; bad rows are refused naming the system.
#include <OdeTestUtils.hpp>
#include <RobertsonReference.hpp>

#include <morula/core/Error.hpp>
#include <morula/ode/OdeIntegration.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace
{
using namespace morula;
using Exec = TEST_EXECSPACE;
using Mem = TEST_MEMSPACE;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Mem>;
using Solver = ode::OdeSolver<Exec, Mem>;

// Per-system inputs on the host: states, rate constants and times, one row per system.
struct HostBatch
{
    std::vector<std::vector<double>> x0, k, times;
};

Matrix to_device( const std::vector<std::vector<double>>& rows, const char* label )
{
    const std::size_t columns = rows.empty() ? 0 : rows[0].size();
    Matrix m( std::string( label ), rows.size(), columns );
    auto h = Kokkos::create_mirror_view( m );
    for ( std::size_t s = 0; s < rows.size(); ++s )
        for ( std::size_t j = 0; j < columns; ++j )
            h( s, j ) = rows[s][j];
    Kokkos::deep_copy( m, h );
    return m;
}

// Robertson with every rate scaled per system (+-10%, a different factor per reaction) and system s's
// times: `samples` times from 0 to its own end, log-spaced ends over [1e-3, 1e5] (13 decades of end
// time within one batch, from the fast transient to the stiff tail).
HostBatch robertson_batch( const ode::ReactionNetwork& net, long systems, int samples, double first_end, double last_end )
{
    HostBatch b;
    for ( long s = 0; s < systems; ++s )
    {
        b.x0.push_back( net.initial_state );
        std::vector<double> k;
        for ( int r = 0; r < net.reaction_count(); ++r )
            k.push_back( net.reactions[r].rate_constant * ( 0.9 + 0.2 * double( ( s * ( 2 * r + 3 ) ) % systems ) / systems ) );
        b.k.push_back( k );
        const double end = systems > 1 ? first_end * std::pow( last_end / first_end, double( s ) / double( systems - 1 ) ) : last_end;
        std::vector<double> t;
        for ( int i = 0; i < samples; ++i )
            t.push_back( i + 1 == samples ? end : end * i / ( samples - 1 ) );
        b.times.push_back( t );
    }
    return b;
}

// The batch with per-system times, then each system alone with its row as the shared list: samples and
// statistics equal bit for bit.
void expect_rows_match_single_runs( const ode::ReactionNetwork& net, const ode::SolverOptions& options, const HostBatch& b,
                                    const std::string& what )
{
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    Solver solver( system, options );
    const auto batch = test::HostResult<Mem>( solver.solve( exec, to_device( b.x0, "x0" ), to_device( b.k, "k" ), to_device( b.times, "times" ) ) );
    for ( std::size_t s = 0; s < b.x0.size(); ++s )
    {
        const auto one = test::HostResult<Mem>(
            solver.solve( exec, to_device( { b.x0[s] }, "x0" ), to_device( { b.k[s] }, "k" ), b.times[s] ) );
        ASSERT_EQ( one.status(), ode::SolverStatus::success ) << what << ", system " << s;
        for ( std::size_t i = 0; i < b.times[s].size(); ++i )
            for ( int j = 0; j < net.species_count(); ++j )
                EXPECT_EQ( batch.samples( s, i, j ), one.samples( 0, i, j ) )
                    << what << ", system " << s << ", sample " << i << " (t = " << b.times[s][i] << "), species " << j;
        for ( int c = 0; c < ode::stat_count; ++c )
            EXPECT_EQ( batch.statistics( s, c ), one.statistics( 0, c ) ) << what << ", system " << s << ", statistic " << c;
    }
}

ode::SolverOptions options_of( ode::Method method, ode::ExecutionMode mode, double rtol, double atol )
{
    return test::options_with( method, mode, rtol, atol );
}

// Robertson, 12 systems ending from 1e-3 to 1e5, on every stiff path.
TEST( TEST_CATEGORY, per_system_times_equal_single_runs_on_every_stiff_path )
{
    const auto net = test::robertson_network();
    const HostBatch b = robertson_batch( net, 12, 6, 1e-3, 1e5 );
    using M = ode::Method;
    using X = ode::ExecutionMode;
    expect_rows_match_single_runs( net, options_of( M::rodas5p, X::batched, 1e-6, 1e-12 ), b, "rodas5p" );
    expect_rows_match_single_runs( net, options_of( M::rodas4, X::batched, 1e-6, 1e-12 ), b, "rodas4" );
    expect_rows_match_single_runs( net, options_of( M::rosenbrock23, X::batched, 1e-4, 1e-10 ), b, "rosenbrock23" );
    auto single = options_of( M::rodas5p, X::batched, 1e-3, 1e-6 );
    single.precision = ode::Precision::single_precision;
    expect_rows_match_single_runs( net, single, b, "rodas5p float" );
    expect_rows_match_single_runs( net, options_of( M::automatic, X::batched, 1e-6, 1e-12 ), b, "automatic (RKF45 <-> Rodas5P)" );
    auto general = options_of( M::automatic, X::batched, 1e-6, 1e-12 );
    general.stiff_method = M::bdf;
    expect_rows_match_single_runs( net, general, b, "automatic (RKF45 <-> BDF, batched)" );
    expect_rows_match_single_runs( net, options_of( M::bdf, X::batched, 1e-6, 1e-12 ), b, "bdf batched" );
    expect_rows_match_single_runs( net, options_of( M::bdf, X::fine_grained, 1e-6, 1e-12 ), b, "bdf fine-grained" );
}

// A non-stiff network (a reversible pair and a dimerisation) with RKF45, whose steps end on the samples.
TEST( TEST_CATEGORY, per_system_times_equal_single_runs_with_rkf45 )
{
    using test::reaction;
    const auto net = test::network( { "A", "B", "C" },
                                    { reaction( { { 0, 1 } }, { { 1, 1 } }, 1.0 ), reaction( { { 1, 1 } }, { { 0, 1 } }, 0.5 ),
                                      reaction( { { 1, 2 } }, { { 2, 1 } }, 0.3 ) },
                                    { 1.0, 0.2, 0.0 } );
    const HostBatch b = robertson_batch( net, 9, 5, 0.01, 40.0 );
    expect_rows_match_single_runs( net, options_of( ode::Method::rkf45, ode::ExecutionMode::batched, 1e-8, 1e-12 ), b, "rkf45 batched" );
    expect_rows_match_single_runs( net, options_of( ode::Method::rkf45, ode::ExecutionMode::fine_grained, 1e-8, 1e-12 ), b,
                                   "rkf45 fine-grained" );
    // The device-wide mode integrates one system: its row is taken as the list (a strided row of the
    // View, copied to the host through a contiguous one).
    for ( std::size_t s : { std::size_t( 0 ), std::size_t( 8 ) } )
    {
        const HostBatch one{ { b.x0[s] }, { b.k[s] }, { b.times[s] } };
        expect_rows_match_single_runs( net, options_of( ode::Method::automatic, ode::ExecutionMode::device_wide, 1e-8, 1e-12 ),
                                       one, "device-wide, system " + std::to_string( s ) );
    }
}

// Systems ending at Robertson's decade times 0.4, 4, ..., 4e10 and 1e11 in one batch, with the published
// rates: each system's last sample against the decade table (SciPy Radau at rtol 1e-13), A + B + C = 1 at
// every sample, and the earlier samples at their own fractions of the end.
TEST( TEST_CATEGORY, per_system_end_times_reach_the_decade_table )
{
    namespace rob = test::robertson;
    const auto net = test::robertson_network();
    const int samples = 5;
    HostBatch b;
    for ( int d = 0; d < rob::kDecadeCount; ++d )
    {
        b.x0.push_back( net.initial_state );
        b.k.push_back( { rob::kRate1, rob::kRate2, rob::kRate3 } );
        std::vector<double> t;
        for ( int i = 0; i < samples; ++i )
            t.push_back( i + 1 == samples ? rob::kDecadeTimes[d] : rob::kDecadeTimes[d] * i / ( samples - 1 ) );
        b.times.push_back( t );
    }
    for ( const auto method : { ode::Method::rodas5p, ode::Method::bdf } )
    {
        const double rtol = 1e-8;
        Exec exec;
        ode::MassActionSystem<Mem> system( net );
        Solver solver( system, options_of( method, ode::ExecutionMode::batched, rtol, 1e-20 ) );
        const auto r = test::HostResult<Mem>( solver.solve( exec, to_device( b.x0, "x0" ), to_device( b.k, "k" ), to_device( b.times, "t" ) ) );
        for ( int d = 0; d < rob::kDecadeCount; ++d )
        {
            ASSERT_EQ( r.status( d ), ode::SolverStatus::success ) << "system " << d;
            for ( int i = 0; i < 3; ++i )
            {
                const double want = rob::kDecadeStates[d][i];
                EXPECT_NEAR( r.samples( d, samples - 1, i ), want, 500 * rtol * want )
                    << "method " << static_cast<int>( method ) << ", system ending at " << rob::kDecadeTimes[d] << ", species " << i;
            }
            for ( int s = 0; s < samples; ++s )
                EXPECT_NEAR( r.samples( d, s, 0 ) + r.samples( d, s, 1 ) + r.samples( d, s, 2 ), 1.0, 1e-13 )
                    << "system " << d << ", sample " << s;
        }
    }
}

// OdeIntegration with per-system times, paused after every sample and resumed: the same samples and
// statistics as OdeSolver::solve, on the Rosenbrock kernel and the general batched path.
TEST( TEST_CATEGORY, per_system_times_resume_bit_for_bit )
{
    const auto net = test::robertson_network();
    const HostBatch b = robertson_batch( net, 7, 6, 1e-2, 1e4 );
    const Matrix x0 = to_device( b.x0, "x0" ), k = to_device( b.k, "k" ), times = to_device( b.times, "t" );
    for ( const auto method : { ode::Method::rodas5p, ode::Method::automatic, ode::Method::bdf } )
    {
        Exec exec;
        ode::MassActionSystem<Mem> system( net );
        auto options = options_of( method, ode::ExecutionMode::batched, 1e-6, 1e-12 );
        if ( method == ode::Method::automatic )
            options.stiff_method = ode::Method::bdf;
        Solver solver( system, options );
        const auto whole = test::HostResult<Mem>( solver.solve( exec, x0, k, times ) );
        ode::OdeIntegration<Exec, Mem> legs( solver, exec, x0, k, times );
        EXPECT_EQ( legs.sample_count(), 6 );
        for ( int stop = 0; stop <= legs.sample_count(); ++stop )
            legs.advance_to( exec, stop );
        const auto resumed = test::HostResult<Mem>( legs.result( exec ) );
        EXPECT_EQ( 0, std::memcmp( whole.samples.data(), resumed.samples.data(), whole.samples.size() * sizeof( double ) ) )
            << "method " << static_cast<int>( method );
        for ( std::size_t i = 0; i < whole.statistics.size(); ++i )
            EXPECT_EQ( whole.statistics.data()[i], resumed.statistics.data()[i] ) << "method " << static_cast<int>( method );
    }
}

// A row that decreases, holds NaN, starts before t_start, or a table with the wrong number of rows: refused
// before any work, naming the system (the lowest one with a bad row), the sample and the value.
TEST( TEST_CATEGORY, per_system_times_refuse_bad_rows )
{
    const auto net = test::robertson_network();
    HostBatch b = robertson_batch( net, 5, 4, 1.0, 10.0 );
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    for ( const auto method : { ode::Method::rodas5p, ode::Method::bdf } )
    {
        Solver solver( system, options_of( method, ode::ExecutionMode::batched, 1e-6, 1e-12 ) );
        auto message = [&]( const HostBatch& bad, double t_start = 0.0 ) -> std::string {
            try
            {
                solver.solve( exec, to_device( bad.x0, "x0" ), to_device( bad.k, "k" ), to_device( bad.times, "t" ), {}, t_start );
            }
            catch ( const core::InputError& e )
            {
                return e.what();
            }
            return "(nothing thrown)";
        };
        HostBatch decreasing = b;
        decreasing.times[3][2] = decreasing.times[3][1];
        decreasing.times[4][2] = 0.0;
        EXPECT_NE( message( decreasing ).find( "system 3: sample times must increase strictly; time 2" ), std::string::npos )
            << message( decreasing );
        HostBatch not_a_number = b;
        not_a_number.times[2][3] = std::numeric_limits<double>::quiet_NaN();
        EXPECT_NE( message( not_a_number ).find( "system 2: sample time 3 = nan" ), std::string::npos ) << message( not_a_number );
        EXPECT_NE( message( b, 0.5 ).find( "system 0: sample time 0 = 0; expected a finite time >= t_start (0.5)" ), std::string::npos )
            << message( b, 0.5 );
        HostBatch short_table = b;
        short_table.times.pop_back();
        EXPECT_NE( message( short_table ).find( "expected a row per system (5 rows)" ), std::string::npos ) << message( short_table );
    }
}

} // namespace
