// Stiff problems: the switch to BDF, the linear solvers, and batched mode against fine-grained mode.
#include <OdeTestUtils.hpp>

#include <morula/Config.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace
{
using namespace morula;
using morula::test::network;
using morula::test::reaction;

// A1 -> A2 -> ... -> A9, k_i = 10^(4 - i): rate constants from 1e4 to 1e-4 (8 orders of magnitude).
ode::ReactionNetwork stiff_chain( int length = 9 )
{
    std::vector<std::string> names;
    std::vector<ode::Reaction> reactions;
    std::vector<double> x0( length, 0.0 );
    x0[0] = 1.0;
    for ( int i = 0; i < length; ++i )
        names.push_back( "A" + std::to_string( i + 1 ) );
    for ( int i = 0; i + 1 < length; ++i )
        reactions.push_back( reaction( { { i, 1 } }, { { i + 1, 1 } }, std::pow( 10.0, 4 - i ) ) );
    return network( names, reactions, x0 );
}

TEST( TEST_CATEGORY, ode_stiff_chain_over_eight_decades )
{
    const int length = 9;
    auto net = stiff_chain( length );
    std::vector<double> k;
    for ( auto& r : net.reactions )
        k.push_back( r.rate_constant );
    const std::vector<double> times{ 0.0, 1e-3, 0.1, 1.0, 10.0, 100.0, 1000.0 };
    for ( auto mode : { ode::ExecutionMode::batched, ode::ExecutionMode::fine_grained, ode::ExecutionMode::device_wide } )
        for ( auto method : { ode::Method::automatic, ode::Method::bdf } )
        {
            ode::SolverOptions o;
            o.mode = mode;
            o.method = method;
            o.relative_tolerance = 1e-8;
            o.absolute_tolerance = { 1e-14 };
            auto r = test::solve_one<TEST_EXECSPACE>( net, o, times );
            ASSERT_EQ( r.status(), ode::SolverStatus::success );
            for ( std::size_t i = 0; i < times.size(); ++i )
            {
                const auto exact = test::bateman( k, times[i], length );
                double total = 0.0;
                for ( int s = 0; s < length; ++s )
                {
                    EXPECT_NEAR( r.samples( 0, i, s ), exact[s], 1e-6 * std::fabs( exact[s] ) + 1e-9 )
                        << "species " << s << " t=" << times[i];
                    total += r.samples( 0, i, s );
                }
                EXPECT_NEAR( total, 1.0, 1e-9 );
            }
            if ( method == ode::Method::automatic )
                EXPECT_GE( r.stat( ode::stat_switches_to_bdf ), 1 ) << "the 1e4 rate makes RKF45 stiff";
            EXPECT_GT( r.stat( ode::stat_bdf_steps ), 0 );
        }
}

TEST( TEST_CATEGORY, ode_rkf45_alone_is_held_back_by_stiffness )
{
    // The same chain with RKF45 only: a step budget that BDF meets easily is exhausted by RKF45's
    // stability-limited steps - the reason for switching.
    auto net = stiff_chain();
    ode::SolverOptions o;
    o.relative_tolerance = 1e-6;
    o.max_steps = 20000;
    o.method = ode::Method::rkf45;
    auto rk = test::solve_one<TEST_EXECSPACE>( net, o, { 0.0, 100.0 } );
    EXPECT_EQ( rk.status(), ode::SolverStatus::max_steps );
    o.method = ode::Method::automatic;
    auto au = test::solve_one<TEST_EXECSPACE>( net, o, { 0.0, 100.0 } );
    EXPECT_EQ( au.status(), ode::SolverStatus::success );
    EXPECT_LT( au.stat( ode::stat_steps ), 2000 );
}

TEST( TEST_CATEGORY, ode_switches_back_to_rkf45_when_stiffness_ends )
{
    // A fast pair (k = 1e5) consumed quickly, then a slow, non-stiff reaction network: after the fast
    // transient BDF hands back to RKF45 (Gershgorin bound of J times h below RKF45's stability limit).
    auto net = network( { "F", "G", "S", "P" },
                        { reaction( { { 0, 1 }, { 1, 1 } }, { { 2, 1 } }, 1e5 ), reaction( { { 2, 1 } }, { { 3, 1 } }, 0.5 ),
                          reaction( { { 3, 1 } }, { { 2, 1 } }, 0.25 ) },
                        { 1.0, 1.0, 0.0, 0.0 } );
    ode::SolverOptions o;
    o.stiff_method = ode::Method::bdf; // the general path (the register kernel: tstOdeRosenbrock.hpp)
    o.relative_tolerance = 1e-8;
    o.stiffness_check_interval = 5;
    auto r = test::solve_one<TEST_EXECSPACE>( net, o, { 0.0, 1e-3, 1.0, 40.0 } );
    ASSERT_EQ( r.status(), ode::SolverStatus::success );
    EXPECT_GE( r.stat( ode::stat_switches_to_bdf ), 1 );
    EXPECT_GE( r.stat( ode::stat_switches_to_rkf ), 1 );
    // S + P = 1 after the fast reaction; the slow pair relaxes to S:P = 1:2.
    EXPECT_NEAR( r.samples( 0, 3, 2 ) + r.samples( 0, 3, 3 ), 1.0, 1e-5 );
    EXPECT_NEAR( r.samples( 0, 3, 3 ) / r.samples( 0, 3, 2 ), 2.0, 1e-5 );
}

// Robertson's problem over many systems with rate constants varied by +-10%: batched (thread per system)
// and fine-grained (team per system) agree system by system.
TEST( TEST_CATEGORY, ode_batched_equals_fine_grained_on_varied_robertson )
{
    using Mem = TEST_MEMSPACE;
    auto net = test::robertson_network();
    ode::MassActionSystem<Mem> system( net );
    const int systems = 37;
    Kokkos::View<double**, Kokkos::LayoutLeft, Mem> x0( "x0", systems, 3 ), k( "k", systems, 3 );
    auto hx = Kokkos::create_mirror_view( x0 );
    auto hk = Kokkos::create_mirror_view( k );
    for ( int s = 0; s < systems; ++s )
    {
        hx( s, 0 ) = 1.0;
        for ( int r = 0; r < 3; ++r )
            hk( s, r ) = net.reactions[r].rate_constant * ( 0.9 + 0.2 * ( ( s * 7 + r * 3 ) % 11 ) / 10.0 );
    }
    Kokkos::deep_copy( x0, hx );
    Kokkos::deep_copy( k, hk );
    const std::vector<double> times{ 0.0, 0.4, 4.0, 40.0, 400.0, 4e3, 4e4, 1e5 };
    ode::SolverOptions o;
    o.stiff_method = ode::Method::bdf; // the same integrator in both layouts (RKF45 <-> BDF)
    o.relative_tolerance = 1e-6;
    o.absolute_tolerance = { 1e-12 };
    TEST_EXECSPACE exec;
    o.mode = ode::ExecutionMode::batched;
    ode::OdeSolver<TEST_EXECSPACE> batched( system, o );
    test::HostResult<Mem> a( batched.solve( exec, x0, k, times ) );
    o.mode = ode::ExecutionMode::fine_grained;
    ode::OdeSolver<TEST_EXECSPACE> fine( system, o );
    test::HostResult<Mem> b( fine.solve( exec, x0, k, times ) );
    for ( int s = 0; s < systems; ++s )
    {
        ASSERT_EQ( a.status( s ), ode::SolverStatus::success ) << s;
        ASSERT_EQ( b.status( s ), ode::SolverStatus::success ) << s;
        for ( std::size_t i = 0; i < times.size(); ++i )
            for ( int j = 0; j < 3; ++j )
            {
                const double x = a.samples( s, i, j ), y = b.samples( s, i, j );
                EXPECT_NEAR( x, y, 1e-9 * std::fabs( x ) + 1e-15 ) << "system " << s << " t=" << times[i] << " species " << j;
            }
        // Same algorithm, same decisions: identical step counts (sums in a team may round differently,
        // which could flip a borderline decision, so allow a little).
        EXPECT_NEAR( a.stat( ode::stat_steps, s ), b.stat( ode::stat_steps, s ), 3 ) << s;
        // Mass conservation: A + B + C = 1.
        EXPECT_NEAR( a.samples( s, 7, 0 ) + a.samples( s, 7, 1 ) + a.samples( s, 7, 2 ), 1.0, 1e-9 );
    }
}

// The Newton systems solved three ways give the same trajectories.
TEST( TEST_CATEGORY, ode_linear_solvers_agree )
{
    auto net = stiff_chain();
    const std::vector<double> times{ 0.0, 0.01, 1.0, 100.0 };
    std::vector<ode::LinearSolver> solvers{ ode::LinearSolver::dense_lu, ode::LinearSolver::sparse_iterative };
#if MORULA_HAVE_KOKKOSKERNELS
    solvers.push_back( ode::LinearSolver::kokkos_batched );
#endif
    std::vector<test::HostResult<TEST_MEMSPACE>> results;
    for ( auto ls : solvers )
    {
        ode::SolverOptions o;
        o.method = ode::Method::bdf;
        o.mode = ode::ExecutionMode::fine_grained;
        o.linear_solver = ls;
        o.relative_tolerance = 1e-8;
        o.absolute_tolerance = { 1e-14 };
        results.push_back( test::solve_one<TEST_EXECSPACE>( net, o, times ) );
        ASSERT_EQ( results.back().status(), ode::SolverStatus::success ) << static_cast<int>( ls );
    }
    for ( std::size_t v = 1; v < results.size(); ++v )
        for ( std::size_t i = 0; i < times.size(); ++i )
            for ( int j = 0; j < 9; ++j )
                EXPECT_NEAR( results[v].samples( 0, i, j ), results[0].samples( 0, i, j ),
                             1e-7 * std::fabs( results[0].samples( 0, i, j ) ) + 1e-12 )
                    << "solver " << v << " t=" << times[i] << " species " << j;
    EXPECT_GT( results[1].stat( ode::stat_linear_iterations ), 0 );
}

// The device-wide mode runs the same RKF45 as the team integrator, with kernels per stage instead of
// loops in one team: same steps, same values up to the order of floating-point sums.
TEST( TEST_CATEGORY, ode_device_wide_matches_fine_grained )
{
    auto net = stiff_chain( 6 );
    for ( auto& r : net.reactions )
        r.rate_constant = 0.3 + 0.1 * r.reactants[0].species; // not stiff: RKF45 throughout
    const std::vector<double> times{ 0.0, 0.5, 1.0, 2.5, 7.0 };
    for ( auto norm : { ode::ErrorNorm::mixed, ode::ErrorNorm::paper } )
    {
        ode::SolverOptions o;
        o.error_norm = norm;
        o.absolute_tolerance = { norm == ode::ErrorNorm::paper ? 1e-9 : 1e-12 };
        o.mode = ode::ExecutionMode::fine_grained;
        auto a = test::solve_one<TEST_EXECSPACE>( net, o, times );
        o.mode = ode::ExecutionMode::device_wide;
        auto b = test::solve_one<TEST_EXECSPACE>( net, o, times );
        ASSERT_EQ( a.status(), ode::SolverStatus::success );
        ASSERT_EQ( b.status(), ode::SolverStatus::success );
        EXPECT_EQ( a.stat( ode::stat_switches_to_bdf ), 0 );
        EXPECT_NEAR( a.stat( ode::stat_steps ), b.stat( ode::stat_steps ), 1 );
        EXPECT_NEAR( a.stat( ode::stat_rhs_evaluations ), b.stat( ode::stat_rhs_evaluations ), 8 );
        for ( std::size_t i = 0; i < times.size(); ++i )
            for ( int j = 0; j < 6; ++j )
                EXPECT_NEAR( a.samples( 0, i, j ), b.samples( 0, i, j ), 1e-12 + 1e-10 * std::fabs( a.samples( 0, i, j ) ) );
    }
    // One system only.
    using Mem = TEST_MEMSPACE;
    ode::MassActionSystem<Mem> system( net );
    ode::SolverOptions o;
    o.mode = ode::ExecutionMode::device_wide;
    ode::OdeSolver<TEST_EXECSPACE> solver( system, o );
    Kokkos::View<double**, Kokkos::LayoutLeft, Mem> x0( "x0", 2, 6 );
    TEST_EXECSPACE exec;
    EXPECT_THROW( solver.solve( exec, x0, {}, { 0.0, 1.0 } ), core::InputError );
}

TEST( TEST_CATEGORY, ode_rejects_bad_options_and_inputs )
{
    using Mem = TEST_MEMSPACE;
    auto net = test::robertson_network();
    ode::MassActionSystem<Mem> system( net );
    auto expect_message = [&]( const ode::SolverOptions& o, const std::string& needle ) {
        try
        {
            ode::OdeSolver<TEST_EXECSPACE> solver( system, o );
            ADD_FAILURE() << "accepted; expected an error naming " << needle;
        }
        catch ( const core::InputError& e )
        {
            EXPECT_NE( std::string( e.what() ).find( needle ), std::string::npos ) << e.what();
        }
    };
    ode::SolverOptions o;
    o.absolute_tolerance = { 1e-8, 1e-8 };
    expect_message( o, "absolute_tolerance" );
    o = {};
    o.relative_tolerance = -1;
    expect_message( o, "relative_tolerance" );
    o = {};
    o.bdf_max_order = 6;
    expect_message( o, "bdf_max_order" );
    o = {};
    o.initial_step = 0;
    expect_message( o, "initial_step" );
    o = {};
    o.bdf_fixed_step = 0.1;
    o.newton_tolerance = 0;
    expect_message( o, "newton_tolerance" );
    o = {};
    o.linear_solver = ode::LinearSolver::sparse_iterative;
    expect_message( o, "fine-grained" );

    ode::OdeSolver<TEST_EXECSPACE> solver( system, ode::SolverOptions{} );
    TEST_EXECSPACE exec;
    EXPECT_THROW( solver.solve( exec, { 0.0, 2.0, 1.0 } ), core::InputError );
    EXPECT_THROW( solver.solve( exec, { -1.0, 1.0 } ), core::InputError );
    EXPECT_THROW( solver.solve( exec, { 0.0, 1.0 }, { 3 } ), core::InputError );
    Kokkos::View<double**, Kokkos::LayoutLeft, Mem> x0( "x0", 2, 2 );
    EXPECT_THROW( solver.solve( exec, x0, {}, { 0.0, 1.0 } ), core::InputError );

    auto bad = net;
    bad.reactions[1].reactants[0].coefficient = 0;
    EXPECT_THROW( ode::MassActionSystem<Mem>{ bad }, core::InputError );
    bad = net;
    bad.initial_state[2] = -1.0;
    EXPECT_THROW( ode::MassActionSystem<Mem>{ bad }, core::InputError );
}

} // namespace
