// The Rosenbrock methods on the general path (detail/RosenbrockGeneral.hpp): networks beyond the
// register kernel (batched, one system per thread) and the fine-grained mode (one team per system, dense
// or sparse linear solves). Robertson through 13 decades against the reference table, a 12-species chain
// over 11 decades of rates against Bateman, agreement with the register kernel and with BDF, per-system
// rates against one-at-a-time solves, and a run paused after every sample equal to the uninterrupted one.
#include <OdeTestUtils.hpp>
#include <RobertsonReference.hpp>

#include <morula/ode/OdeIntegration.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace
{
using namespace morula;
using Exec = TEST_EXECSPACE;
using Mem = TEST_MEMSPACE;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Mem>;

const ode::Method kMethods[] = { ode::Method::rodas5p, ode::Method::rodas4, ode::Method::rosenbrock23 };

std::string name_of( ode::Method m )
{
    return m == ode::Method::rodas5p ? "rodas5p" : m == ode::Method::rodas4 ? "rodas4" : "rosenbrock23";
}

ode::SolverOptions general_options( ode::Method m, ode::ExecutionMode mode, double rtol, double atol )
{
    return test::options_with( m, mode, rtol, atol );
}

// Robertson from 0 to 1e11 on one team (the fine-grained mode), dense LU: every method against the decade
// table, A + B + C = 1; then against the register kernel's run of the same method (the same steps up to
// the controller's round-off: within a few tolerances).
TEST( TEST_CATEGORY, rosenbrock_general_robertson_through_eleven_decades )
{
    namespace rob = test::robertson;
    const auto net = test::robertson_network();
    const std::vector<double> times( rob::kDecadeTimes, rob::kDecadeTimes + rob::kDecadeCount );
    for ( auto method : kMethods )
    {
        const double rtol = method == ode::Method::rosenbrock23 ? 1e-6 : 1e-8;
        const auto r = test::solve_batch<Exec>( net, general_options( method, ode::ExecutionMode::fine_grained, rtol, 1e-20 ), times );
        ASSERT_EQ( r.status(), ode::SolverStatus::success ) << name_of( method );
        const auto batched = test::solve_batch<Exec>( net, general_options( method, ode::ExecutionMode::batched, rtol, 1e-20 ), times );
        for ( int t = 0; t < rob::kDecadeCount; ++t )
        {
            double total = 0;
            for ( int i = 0; i < 3; ++i )
            {
                const double want = rob::kDecadeStates[t][i];
                EXPECT_NEAR( r.samples( 0, t, i ), want, 500 * rtol * want ) << name_of( method ) << " t=" << times[t] << " species " << i;
                EXPECT_NEAR( r.samples( 0, t, i ), batched.samples( 0, t, i ), 50 * rtol * want )
                    << name_of( method ) << " against the register kernel, t=" << times[t] << " species " << i;
                total += r.samples( 0, t, i );
            }
            EXPECT_NEAR( total, 1.0, 1e-13 ) << name_of( method ) << " t=" << times[t];
        }
        // One factorisation per attempt, one Jacobian per state attempted from (a retry after a rejection
        // reuses it), no Newton iteration; steps close to the register kernel's.
        EXPECT_EQ( r.stat( ode::stat_factorizations ), r.stat( ode::stat_steps ) + r.stat( ode::stat_rejected ) );
        EXPECT_GE( r.stat( ode::stat_jacobians ), r.stat( ode::stat_steps ) );
        EXPECT_LE( r.stat( ode::stat_jacobians ), r.stat( ode::stat_steps ) + 1 );
        EXPECT_EQ( r.stat( ode::stat_newton_iterations ), 0 );
        EXPECT_NEAR( double( r.stat( ode::stat_steps ) ), double( batched.stat( ode::stat_steps ) ),
                     0.05 * double( batched.stat( ode::stat_steps ) ) + 2 )
            << name_of( method );
    }
}

// The 12-species chain over 11 decades of rates against Bateman's solution: batched (one thread per
// system, the general path: beyond the register kernel), fine-grained with dense LU and with BiCGStab.
TEST( TEST_CATEGORY, rosenbrock_general_stiff_chain_against_bateman )
{
    const int length = 12;
    std::vector<double> k;
    const auto net = test::stiff_chain( length, k );
    const std::vector<double> times{ 0.0, 1e-4, 1e-2, 1.0, 100.0, 1e4, 1e6 };
    struct Case
    {
        ode::ExecutionMode mode;
        ode::LinearSolver linear;
        const char* what;
    };
    for ( const Case c : { Case{ ode::ExecutionMode::batched, ode::LinearSolver::automatic, "batched" },
                           Case{ ode::ExecutionMode::fine_grained, ode::LinearSolver::dense_lu, "fine dense" },
                           Case{ ode::ExecutionMode::fine_grained, ode::LinearSolver::sparse_iterative, "fine BiCGStab" } } )
        for ( auto method : { ode::Method::rodas5p, ode::Method::rodas4 } )
        {
            auto o = general_options( method, c.mode, 1e-8, 1e-16 );
            o.linear_solver = c.linear;
            const auto r = test::solve_batch<Exec>( net, o, times );
            ASSERT_EQ( r.status(), ode::SolverStatus::success ) << c.what << " " << name_of( method );
            for ( std::size_t t = 0; t < times.size(); ++t )
            {
                const auto exact = test::bateman( k, times[t], length );
                double total = 0;
                for ( int i = 0; i < length; ++i )
                {
                    // Global error over 11 decades of rates: a few hundred local tolerances, and the
                    // absolute tolerance's floor for species near zero.
                    EXPECT_NEAR( r.samples( 0, t, i ), exact[i], 1e-6 * exact[i] + 1e-12 )
                        << c.what << " " << name_of( method ) << " t=" << times[t] << " A" << i + 1;
                    total += r.samples( 0, t, i );
                }
                // A Rosenbrock step conserves linear invariants when its linear systems are solved exactly;
                // BiCGStab stops at a relative residual of 1e-10 (NewtonSolve.hpp), and Rodas4's total
                // drifted by 1e-11 over the run with it.
                const double conserved = c.linear == ode::LinearSolver::sparse_iterative ? 1e-10 : 1e-12;
                EXPECT_NEAR( total, 1.0, conserved ) << c.what << " " << name_of( method ) << " t=" << times[t];
            }
            if ( c.linear == ode::LinearSolver::sparse_iterative )
                EXPECT_GT( r.stat( ode::stat_linear_iterations ), 0 ) << c.what;
        }
}

// 16 copies of the chain with their own rates (+-30% per reaction) in one batched run, each equal bit for bit
// to its own one-system run; and Rodas5P against BDF at a tight tolerance on every sample.
TEST( TEST_CATEGORY, rosenbrock_general_per_system_rates_match_single_solves_and_bdf )
{
    const int length = 10;
    std::vector<double> k0;
    const auto net = test::stiff_chain( length, k0 );
    const std::vector<double> times{ 0.0, 1e-3, 1.0, 1e3, 1e5 };
    const long systems = 16;
    std::vector<std::vector<double>> k( systems );
    for ( long s = 0; s < systems; ++s )
        for ( std::size_t r = 0; r < k0.size(); ++r )
            k[s].push_back( k0[r] * ( 0.7 + 0.6 * double( ( s * 7 + r * 3 ) % systems ) / systems ) );
    const auto o = general_options( ode::Method::rodas5p, ode::ExecutionMode::batched, 1e-9, 1e-16 );
    const auto batch = test::solve_batch<Exec>( net, o, times, systems, k );
    auto bdf_options = general_options( ode::Method::bdf, ode::ExecutionMode::batched, 1e-11, 1e-18 );
    const auto bdf = test::solve_batch<Exec>( net, bdf_options, times, systems, k );
    for ( long s = 0; s < systems; ++s )
    {
        ASSERT_EQ( batch.status( int( s ) ), ode::SolverStatus::success ) << "system " << s;
        const auto one = test::solve_batch<Exec>( net, o, times, 1, { k[s] } );
        for ( std::size_t t = 0; t < times.size(); ++t )
            for ( int i = 0; i < length; ++i )
            {
                EXPECT_EQ( batch.samples( s, t, i ), one.samples( 0, t, i ) ) << "system " << s << " t=" << times[t] << " A" << i + 1;
                EXPECT_NEAR( batch.samples( s, t, i ), bdf.samples( s, t, i ), 1e-6 * bdf.samples( s, t, i ) + 1e-13 )
                    << "against BDF, system " << s << " t=" << times[t] << " A" << i + 1;
            }
    }
}

// Paused after every sample (OdeIntegration's legs: each system's state, step, rejection flag and f(x) kept)
// and resumed: bit for bit the one-leg run, batched and fine-grained.
TEST( TEST_CATEGORY, rosenbrock_general_resumes_bit_for_bit )
{
    std::vector<double> k;
    const auto net = test::stiff_chain( 10, k );
    const std::vector<double> times{ 0.0, 1e-5, 1e-3, 0.1, 10.0, 1e3, 1e5 };
    Matrix x0( "x0", 3, net.species_count() );
    auto hx = Kokkos::create_mirror_view( x0 );
    for ( long s = 0; s < 3; ++s )
        for ( int i = 0; i < net.species_count(); ++i )
            hx( s, i ) = net.initial_state[i] * ( 1.0 + s ) + ( i == 3 ? 0.1 * s : 0.0 );
    Kokkos::deep_copy( x0, hx );
    for ( const auto mode : { ode::ExecutionMode::batched, ode::ExecutionMode::fine_grained } )
        for ( auto method : kMethods )
        {
            Exec exec;
            ode::MassActionSystem<Mem> system( net );
            ode::OdeSolver<Exec> solver( system, general_options( method, mode, 1e-7, 1e-14 ) );
            const auto whole = test::HostResult<Mem>( solver.solve( exec, x0, Matrix(), times ) );
            ode::OdeIntegration<Exec, Mem> legs( solver, exec, x0, Matrix(), times );
            for ( int stop = 0; stop <= static_cast<int>( times.size() ); ++stop )
                legs.advance_to( exec, stop );
            const auto resumed = test::HostResult<Mem>( legs.result( exec ) );
            const std::string what = name_of( method ) + ( mode == ode::ExecutionMode::batched ? " batched" : " fine" );
            EXPECT_EQ( 0, std::memcmp( whole.samples.data(), resumed.samples.data(), whole.samples.size() * sizeof( double ) ) ) << what;
            for ( std::size_t i = 0; i < whole.statistics.size(); ++i )
                EXPECT_EQ( whole.statistics.data()[i], resumed.statistics.data()[i] ) << what << ", statistic " << i;
        }
}

// Method::automatic beyond the register kernel: RKF45 until stiff, then Rodas5P on the general path (batched
// at rtol <= 1e-6 by the rule; fine-grained when stiff_method asks for it), and back when the stiffness ends:
// the 12-species chain against Bateman, no Newton iteration, and a paused run bit for bit the one-leg run.
TEST( TEST_CATEGORY, automatic_switches_to_general_rodas5p )
{
    const int length = 12;
    std::vector<double> k;
    const auto net = test::stiff_chain( length, k );
    const std::vector<double> times{ 0.0, 1e-4, 1e-2, 1.0, 100.0, 1e4, 1e6 };
    for ( const auto mode : { ode::ExecutionMode::batched, ode::ExecutionMode::fine_grained } )
    {
        auto o = general_options( ode::Method::automatic, mode, 1e-8, 1e-16 );
        if ( mode == ode::ExecutionMode::fine_grained )
            o.stiff_method = ode::Method::rodas5p; // the rule keeps BDF there; asked for explicitly
        EXPECT_EQ( ode::automatic_stiff_method( o, length, length - 1, true ), ode::Method::rodas5p );
        const std::string what = mode == ode::ExecutionMode::batched ? "batched" : "fine";
        const auto r = test::solve_batch<Exec>( net, o, times );
        ASSERT_EQ( r.status(), ode::SolverStatus::success ) << what;
        EXPECT_GE( r.stat( ode::stat_switches_to_bdf ), 1 ) << what;
        EXPECT_GT( r.stat( ode::stat_bdf_steps ), 0 ) << what;
        EXPECT_GT( r.stat( ode::stat_rkf_steps ), 0 ) << what;
        EXPECT_EQ( r.stat( ode::stat_newton_iterations ), 0 ) << what << ": Rodas5P, not BDF, took the stiff stretch";
        EXPECT_GE( r.stat( ode::stat_factorizations ), r.stat( ode::stat_bdf_steps ) ) << what << ": one per Rodas5P attempt";
        for ( std::size_t t = 0; t < times.size(); ++t )
        {
            const auto exact = test::bateman( k, times[t], length );
            for ( int i = 0; i < length; ++i )
                EXPECT_NEAR( r.samples( 0, t, i ), exact[i], 1e-6 * exact[i] + 1e-12 ) << what << " t=" << times[t] << " A" << i + 1;
        }
        // In legs: the stiff flag, Rodas5P's step and f(x) cross every pause.
        Exec exec;
        ode::MassActionSystem<Mem> system( net );
        ode::OdeSolver<Exec> solver( system, o );
        Matrix x0( "x0", 1, length );
        Kokkos::deep_copy( Kokkos::subview( x0, 0, 0 ), 1.0 );
        const auto whole = test::HostResult<Mem>( solver.solve( exec, x0, Matrix(), times ) );
        ode::OdeIntegration<Exec, Mem> legs( solver, exec, x0, Matrix(), times );
        for ( int stop = 0; stop <= static_cast<int>( times.size() ); ++stop )
            legs.advance_to( exec, stop );
        const auto resumed = test::HostResult<Mem>( legs.result( exec ) );
        EXPECT_EQ( 0, std::memcmp( whole.samples.data(), resumed.samples.data(), whole.samples.size() * sizeof( double ) ) ) << what;
        for ( std::size_t i = 0; i < whole.statistics.size(); ++i )
            EXPECT_EQ( whole.statistics.data()[i], resumed.statistics.data()[i] ) << what << ", statistic " << i;
    }
}

} // namespace
