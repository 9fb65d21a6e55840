// The integrators against closed-form solutions: every method, error norm and execution mode.
#include <OdeTestUtils.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

namespace
{
using namespace morula;
using morula::test::network;
using morula::test::reaction;

struct Variant
{
    ode::Method method;
    ode::ErrorNorm norm;
    ode::ExecutionMode mode;
    int max_order;
    std::string name;
};

std::vector<Variant> variants()
{
    std::vector<Variant> v;
    for ( auto mode : { ode::ExecutionMode::batched, ode::ExecutionMode::fine_grained, ode::ExecutionMode::device_wide } )
    {
        const std::string m = mode == ode::ExecutionMode::batched ? "batched" : mode == ode::ExecutionMode::fine_grained ? "fine" : "device";
        v.push_back( { ode::Method::rkf45, ode::ErrorNorm::mixed, mode, 5, "rkf45-mixed-" + m } );
        v.push_back( { ode::Method::rkf45, ode::ErrorNorm::paper, mode, 5, "rkf45-paper-" + m } );
        v.push_back( { ode::Method::bdf, ode::ErrorNorm::mixed, mode, 5, "bdf5-" + m } );
        v.push_back( { ode::Method::bdf, ode::ErrorNorm::mixed, mode, 2, "bdf2-" + m } );
        v.push_back( { ode::Method::automatic, ode::ErrorNorm::mixed, mode, 5, "auto-" + m } );
    }
    return v;
}

ode::SolverOptions options_for( const Variant& v )
{
    ode::SolverOptions o;
    o.method = v.method;
    o.error_norm = v.norm;
    o.mode = v.mode;
    o.bdf_max_order = v.max_order;
    if ( v.norm == ode::ErrorNorm::paper )
        o.absolute_tolerance = { 1e-10 };
    else
    {
        o.absolute_tolerance = { 1e-12 };
        o.relative_tolerance = 1e-8;
    }
    return o;
}

// Allowed error for a variant: the tolerances above, with room for the global accumulation of local errors.
double allowed( const Variant& v ) { return v.method == ode::Method::bdf ? 2e-6 : 2e-7; }

std::vector<double> times_to( double t_end, int count )
{
    std::vector<double> t;
    for ( int i = 0; i <= count; ++i )
        t.push_back( t_end * i / count );
    return t;
}

TEST( TEST_CATEGORY, ode_first_order_chain_matches_bateman )
{
    // A -> B -> C with k1 = 0.7, k2 = 0.2: A = e^{-k1 t}, B = k1/(k2 - k1) (e^{-k1 t} - e^{-k2 t}).
    const double k1 = 0.7, k2 = 0.2;
    auto net = network( { "A", "B", "C" },
                        { reaction( { { 0, 1 } }, { { 1, 1 } }, k1 ), reaction( { { 1, 1 } }, { { 2, 1 } }, k2 ) },
                        { 1.0, 0.0, 0.0 } );
    const auto times = times_to( 10.0, 20 );
    for ( const Variant& v : variants() )
    {
        auto r = test::solve_one<TEST_EXECSPACE>( net, options_for( v ), times );
        ASSERT_EQ( r.status(), ode::SolverStatus::success ) << v.name;
        for ( std::size_t i = 0; i < times.size(); ++i )
        {
            const double t = times[i];
            const double a = std::exp( -k1 * t ), b = k1 / ( k2 - k1 ) * ( std::exp( -k1 * t ) - std::exp( -k2 * t ) );
            EXPECT_NEAR( r.samples( 0, i, 0 ), a, allowed( v ) ) << v.name << " t=" << t;
            EXPECT_NEAR( r.samples( 0, i, 1 ), b, allowed( v ) ) << v.name << " t=" << t;
            EXPECT_NEAR( r.samples( 0, i, 0 ) + r.samples( 0, i, 1 ) + r.samples( 0, i, 2 ), 1.0, 1e-9 ) << v.name;
        }
    }
}

TEST( TEST_CATEGORY, ode_reversible_isomerisation_reaches_equilibrium )
{
    // A <-> B, kf = 2, kr = 0.5, A0 = 1: A = (kr + kf e^{-(kf + kr) t}) / (kf + kr).
    const double kf = 2.0, kr = 0.5;
    auto net = network( { "A", "B" },
                        { reaction( { { 0, 1 } }, { { 1, 1 } }, kf ), reaction( { { 1, 1 } }, { { 0, 1 } }, kr ) },
                        { 1.0, 0.0 } );
    const auto times = times_to( 8.0, 16 );
    for ( const Variant& v : variants() )
    {
        auto r = test::solve_one<TEST_EXECSPACE>( net, options_for( v ), times );
        ASSERT_EQ( r.status(), ode::SolverStatus::success ) << v.name;
        for ( std::size_t i = 0; i < times.size(); ++i )
        {
            const double a = ( kr + kf * std::exp( -( kf + kr ) * times[i] ) ) / ( kf + kr );
            EXPECT_NEAR( r.samples( 0, i, 0 ), a, allowed( v ) ) << v.name << " t=" << times[i];
            EXPECT_NEAR( r.samples( 0, i, 1 ), 1.0 - a, allowed( v ) ) << v.name;
        }
    }
}

TEST( TEST_CATEGORY, ode_second_order_a_plus_b )
{
    // A + B -> C, k = 1.5, a0 = 1, b0 = 0.4: a(t) = (a0 - b0) a0 / (a0 - b0 e^{-(a0 - b0) k t}), b = a - (a0 - b0).
    const double k = 1.5, a0 = 1.0, b0 = 0.4;
    auto net = network( { "A", "B", "C" }, { reaction( { { 0, 1 }, { 1, 1 } }, { { 2, 1 } }, k ) }, { a0, b0, 0.0 } );
    const auto times = times_to( 6.0, 12 );
    for ( const Variant& v : variants() )
    {
        auto r = test::solve_one<TEST_EXECSPACE>( net, options_for( v ), times );
        ASSERT_EQ( r.status(), ode::SolverStatus::success ) << v.name;
        for ( std::size_t i = 0; i < times.size(); ++i )
        {
            const double a = ( a0 - b0 ) * a0 / ( a0 - b0 * std::exp( -( a0 - b0 ) * k * times[i] ) );
            EXPECT_NEAR( r.samples( 0, i, 0 ), a, allowed( v ) ) << v.name << " t=" << times[i];
            EXPECT_NEAR( r.samples( 0, i, 1 ), a - ( a0 - b0 ), allowed( v ) ) << v.name;
            EXPECT_NEAR( r.samples( 0, i, 2 ), a0 - a, allowed( v ) ) << v.name;
        }
    }
}

TEST( TEST_CATEGORY, ode_dimerisation_and_third_order )
{
    // 2A -> B (k): 1/a = 1/a0 + 2 k t. 3A -> C (any order is supported): da/dt = -3 k a^3, 1/a^2 = 1/a0^2 + 6 k t.
    const double k = 0.8, a0 = 1.0;
    auto net = network( { "A", "B", "X", "C" },
                        { reaction( { { 0, 2 } }, { { 1, 1 } }, k ), reaction( { { 2, 3 } }, { { 3, 1 } }, k ) },
                        { a0, 0.0, a0, 0.0 } );
    const auto times = times_to( 5.0, 10 );
    for ( const Variant& v : variants() )
    {
        auto r = test::solve_one<TEST_EXECSPACE>( net, options_for( v ), times );
        ASSERT_EQ( r.status(), ode::SolverStatus::success ) << v.name;
        for ( std::size_t i = 0; i < times.size(); ++i )
        {
            EXPECT_NEAR( r.samples( 0, i, 0 ), 1.0 / ( 1.0 / a0 + 2 * k * times[i] ), allowed( v ) ) << v.name;
            EXPECT_NEAR( r.samples( 0, i, 2 ), 1.0 / std::sqrt( 1.0 / ( a0 * a0 ) + 6 * k * times[i] ), allowed( v ) ) << v.name;
        }
    }
}

TEST( TEST_CATEGORY, ode_fixed_step_backward_euler_is_first_order )
{
    // The paper's BDF setting (order 1, fixed step, Newton to 1e-6... here 1e-13): on A -> B the global
    // error at t = 2 halves when the step halves.
    const double k = 1.0;
    auto net = network( { "A", "B" }, { reaction( { { 0, 1 } }, { { 1, 1 } }, k ) }, { 1.0, 0.0 } );
    double previous = 0.0;
    for ( double h : { 0.1, 0.05, 0.025 } )
    {
        ode::SolverOptions o = ode::SolverOptions::paper();
        o.method = ode::Method::bdf;
        o.bdf_fixed_step = h;
        o.newton_tolerance = 1e-13;
        auto r = test::solve_one<TEST_EXECSPACE>( net, o, { 0.0, 2.0 } );
        ASSERT_EQ( r.status(), ode::SolverStatus::success );
        const double exact_bdf1 = std::pow( 1.0 / ( 1.0 + k * h ), 2.0 / h ); // (1 + kh)^{-t/h}
        EXPECT_NEAR( r.samples( 0, 1, 0 ), exact_bdf1, 1e-12 ) << "h=" << h;
        const double error = std::fabs( r.samples( 0, 1, 0 ) - std::exp( -2.0 ) );
        if ( previous > 0.0 )
            EXPECT_NEAR( previous / error, 2.0, 0.15 ) << "h=" << h;
        previous = error;
    }
}

} // namespace
