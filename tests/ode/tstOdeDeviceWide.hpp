// The device-wide mode with the step decided on the device (issue #26): equal to the host-driven loop it
// replaced (DeviceWideReference.hpp) and equal to itself however its attempts are grouped between status
// reads and whether they are replayed as captured graphs.
#include "DeviceWideReference.hpp"
#include "OdeTestUtils.hpp"

#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/SyntheticNetwork.hpp>
#include <morula/ode/detail/DeviceWideDriver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace morula;

namespace
{

std::uint64_t bits( double v )
{
    std::uint64_t b;
    std::memcpy( &b, &v, sizeof b );
    return b;
}

// On host backends the two paths run the same arithmetic in the same order (sequential reductions, the
// same std::pow in the step control), so they must agree bit for bit. On a GPU they agree in every step
// decision but not in the last bits: the reductions' order, the device's pow (up to 2 ulp) in place of the
// host's, and where the compiler fuses multiply-adds in the fused kernels differ - and the paper norm's
// |w - u| cancels most digits, so an ulp there moves dt by ~1e-8 and a handover time by ~1e-6 (measured
// on the H100).
constexpr bool exact = Kokkos::SpaceAccessibility<Kokkos::HostSpace, TEST_MEMSPACE>::accessible;

void expect_same_value( double a, double b, const std::string& what )
{
    if ( exact )
        EXPECT_EQ( bits( a ), bits( b ) ) << what << ": " << a << " vs " << b;
    else if ( std::isnan( a ) || std::isnan( b ) )
        EXPECT_EQ( std::isnan( a ), std::isnan( b ) ) << what;
    else
        EXPECT_NEAR( a, b, 1e-5 * std::fabs( b ) + 1e-15 ) << what;
}

// A non-stiff chain with a reversible step and a second-order reaction.
ode::ReactionNetwork gentle_network()
{
    using test::reaction;
    return test::network( { "A", "B", "C", "D", "E", "F" },
                          { reaction( { { 0, 1 } }, { { 1, 1 } }, 0.7 ), reaction( { { 1, 1 } }, { { 0, 1 } }, 0.2 ),
                            reaction( { { 1, 1 } }, { { 2, 1 } }, 0.45 ), reaction( { { 2, 2 } }, { { 3, 1 } }, 0.9 ),
                            reaction( { { 3, 1 } }, { { 4, 1 }, { 5, 1 } }, 0.35 ), reaction( { { 5, 1 } }, {}, 0.1 ) },
                          { 1.0, 0.5, 0.0, 0.0, 0.2, 0.0 } );
}

// x' = x^2 (2A -> 3A): blows up at t = 1, so RKF45 alone ends with step_too_small before the sample at 2.
ode::ReactionNetwork blow_up_network()
{
    using test::reaction;
    return test::network( { "A" }, { reaction( { { 0, 2 } }, { { 0, 3 } }, 1.0 ) }, { 1.0 } );
}

// Many samples, unevenly spaced (steps get clipped to them), the first at t_start and two very close.
std::vector<double> clipping_times( double t_end, int count )
{
    std::vector<double> t{ 0.0 };
    for ( int i = 1; i < count; ++i )
        t.push_back( t_end * std::pow( static_cast<double>( i ) / ( count - 1 ), 1.7 ) );
    t.insert( t.begin() + 3, 0.5 * ( t[2] + t[3] ) );
    t.insert( t.begin() + 5, t[4] + 1e-9 );
    return t;
}

struct Case
{
    std::string name;
    ode::ReactionNetwork net;
    ode::SolverOptions options;
    std::vector<double> times;
    std::vector<int> saved;
};

std::vector<Case> cases()
{
    std::vector<Case> out;
    for ( auto norm : { ode::ErrorNorm::mixed, ode::ErrorNorm::paper } )
        for ( auto method : { ode::Method::automatic, ode::Method::rkf45 } )
        {
            ode::SolverOptions o;
            o.error_norm = norm;
            o.method = method;
            o.absolute_tolerance = { norm == ode::ErrorNorm::paper ? 1e-9 : 1e-12 };
            o.mode = ode::ExecutionMode::device_wide;
            const std::string tag = std::string( norm == ode::ErrorNorm::paper ? "paper" : "mixed" ) +
                                    ( method == ode::Method::rkf45 ? "/rkf45" : "/automatic" );
            out.push_back( { "gentle " + tag, gentle_network(), o, clipping_times( 12.0, 40 ), {} } );
            out.push_back( { "synthetic 64 " + tag, ode::generate_synthetic_network( 64, 64, 64000 ), o,
                             clipping_times( 50.0, 25 ), { 0, 5, 17, 63 } } );
        }
    // Stiff: RKF45 hands over to BDF (the stiffness estimates or the eps_s rule) after some steps.
    ode::SolverOptions stiff;
    stiff.mode = ode::ExecutionMode::device_wide;
    out.push_back( { "robertson mixed", test::robertson_network(), stiff, clipping_times( 40.0, 30 ), {} } );
    stiff.error_norm = ode::ErrorNorm::paper;
    stiff.absolute_tolerance = { 1e-9 };
    out.push_back( { "robertson paper", test::robertson_network(), stiff, clipping_times( 40.0, 30 ), { 1 } } );
    // Errors: max_steps on a non-stiff run, step_too_small on a blow-up with RKF45 only.
    ode::SolverOptions few;
    few.mode = ode::ExecutionMode::device_wide;
    few.max_steps = 37;
    out.push_back( { "max_steps", ode::generate_synthetic_network( 64, 64, 64001 ), few, clipping_times( 50.0, 10 ), {} } );
    ode::SolverOptions rk;
    rk.mode = ode::ExecutionMode::device_wide;
    rk.method = ode::Method::rkf45;
    out.push_back( { "step_too_small", blow_up_network(), rk, { 0.0, 0.5, 0.9, 2.0 }, {} } );
    return out;
}

std::vector<int> all_or( const std::vector<int>& saved, int n )
{
    if ( !saved.empty() )
        return saved;
    std::vector<int> all;
    for ( int i = 0; i < n; ++i )
        all.push_back( i );
    return all;
}

} // namespace

// The device-side control reproduces the host loop it replaced: the same steps, rejections, RHS
// evaluations, samples, final state and step, handover point and status.
TEST( TEST_CATEGORY, ode_device_wide_control_equals_host_loop )
{
    using Exec = TEST_EXECSPACE;
    using Mem = TEST_MEMSPACE;
    Exec exec;
    bool saw_handover = false, saw_max_steps = false, saw_too_small = false, saw_rejection = false;
    for ( const auto& c : cases() )
    {
        ode::MassActionSystem<Mem> system( c.net );
        const auto saved = all_or( c.saved, system.species );
        const auto ref = test::reference::device_wide<Exec>( system, c.options, c.times, saved );
        saw_handover |= ref.handover;
        saw_max_steps |= ref.status == ode::SolverStatus::max_steps;
        saw_too_small |= ref.status == ode::SolverStatus::step_too_small;
        saw_rejection |= ref.rejected > 0;
        // Lanes: one thread per species, or a species' terms over 4 or (0: the backend's choice) vector
        // lanes, a team kernel on every backend.
        for ( int per_sync : { 1, 0, 5 } )
            for ( bool graphs : { false, true } )
                for ( int lanes : { 1, 4, 0 } )
            {
                const std::string what = c.name + ", attempts per sync " + std::to_string( per_sync ) +
                                         ( graphs ? ", graphs" : ", launches" ) + ", lanes " + std::to_string( lanes );
                auto o = c.options;
                o.device_wide_attempts_per_sync = per_sync;
                o.device_wide_graphs = graphs;
                o.device_wide_lanes = lanes;
                Kokkos::View<double*, Mem> atol( "atol", o.absolute_tolerance.size() );
                Kokkos::deep_copy( atol, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                             o.absolute_tolerance.data(), o.absolute_tolerance.size() ) );
                ode::detail::DeviceWideDriver<Exec, Mem> driver( system, o, atol );
                // Twice: the second run replays the graphs the first one captured.
                for ( int run = 0; run < 2; ++run )
                {
                    const auto st = driver.run( exec, system.initial_state, system.rate_constants, c.times, saved, 0.0 );
                    exec.fence();
                    EXPECT_EQ( st.steps, ref.steps ) << what;
                    EXPECT_EQ( st.rejected, ref.rejected ) << what;
                    EXPECT_EQ( st.rhs_evaluations, ref.rhs_evaluations ) << what;
                    EXPECT_EQ( st.sample, ref.sample ) << what;
                    EXPECT_EQ( st.handover != 0, ref.handover ) << what;
                    EXPECT_EQ( static_cast<ode::SolverStatus>( st.status ), ref.status ) << what;
                    expect_same_value( st.t, ref.t, what + ": t" );
                    expect_same_value( st.dt, ref.dt, what + ": dt" );
                    auto x = Kokkos::create_mirror_view( driver.state( st ) );
                    Kokkos::deep_copy( x, driver.state( st ) );
                    for ( int i = 0; i < system.species; ++i )
                        expect_same_value( x( i ), ref.x[i], what + ": x" + std::to_string( i ) );
                    auto s = Kokkos::create_mirror_view( driver.samples() );
                    Kokkos::deep_copy( s, driver.samples() );
                    for ( std::size_t j = 0; j < saved.size(); ++j )
                        for ( std::size_t i = 0; i < c.times.size(); ++i )
                            expect_same_value( s( 0, i, j ), ref.samples[i + c.times.size() * j],
                                               what + ": sample " + std::to_string( i ) + " of " + std::to_string( j ) );
                    if ( graphs && per_sync != 1 && ode::detail::DeviceWideDriver<Exec, Mem>::max_attempts > 1 &&
                         core::StepGraph<Exec>::uses_device_graph() && run == 1 && ref.steps > 40 )
                        EXPECT_GT( driver.captures(), 0 ) << what;
                }
            }
    }
    // The cases reach every way the RKF45 phase can end.
    EXPECT_TRUE( saw_handover );
    EXPECT_TRUE( saw_max_steps );
    EXPECT_TRUE( saw_too_small );
    EXPECT_TRUE( saw_rejection );
}

// Through the solver (team BDF after a handover included): any grouping of attempts, with or without
// graph replay, and repeated solves on one solver give the step-by-step result bit for bit, on every
// backend (the same kernels on the same data).
TEST( TEST_CATEGORY, ode_device_wide_runs_equal_step_by_step )
{
    using Mem = TEST_MEMSPACE;
    using Exec = TEST_EXECSPACE;
    Exec exec;
    for ( const auto& c : cases() )
    {
        ode::MassActionSystem<Mem> system( c.net );
        auto o = c.options;
        o.device_wide_attempts_per_sync = 1;
        o.device_wide_graphs = false;
        ode::OdeSolver<Exec> plain( system, o );
        const test::HostResult<Mem> ref( plain.solve( exec, c.times, c.saved ) );
        for ( int per_sync : { 0, 2, 7 } )
        {
            o.device_wide_attempts_per_sync = per_sync;
            o.device_wide_graphs = true;
            ode::OdeSolver<Exec> solver( system, o );
            // A shorter list first (the captured graphs must be dropped when the sample count changes).
            std::vector<double> shorter( c.times.begin(), c.times.begin() + c.times.size() / 2 );
            solver.solve( exec, shorter, c.saved );
            for ( int run = 0; run < 2; ++run )
            {
                const std::string what = c.name + ", attempts per sync " + std::to_string( per_sync ) + ", run " +
                                         std::to_string( run );
                const test::HostResult<Mem> r( solver.solve( exec, c.times, c.saved ) );
                for ( int col = 0; col < ode::stat_count; ++col )
                    EXPECT_EQ( r.statistics( 0, col ), ref.statistics( 0, col ) ) << what << ", statistic " << col;
                for ( std::size_t i = 0; i < r.samples.extent( 1 ); ++i )
                    for ( std::size_t j = 0; j < r.samples.extent( 2 ); ++j )
                        EXPECT_EQ( bits( r.samples( 0, i, j ) ), bits( ref.samples( 0, i, j ) ) )
                            << what << ": sample " << i << " of " << j;
            }
        }
        if ( c.name == "max_steps" )
            EXPECT_EQ( ref.status(), ode::SolverStatus::max_steps );
        if ( c.name == "step_too_small" )
            EXPECT_EQ( ref.status(), ode::SolverStatus::step_too_small );
        if ( c.name.rfind( "robertson", 0 ) == 0 )
        {
            EXPECT_EQ( ref.status(), ode::SolverStatus::success ) << c.name;
            EXPECT_EQ( ref.stat( ode::stat_switches_to_bdf ), 1 ) << c.name;
            EXPECT_GT( ref.stat( ode::stat_bdf_steps ), 0 ) << c.name;
        }
    }
}

TEST( TEST_CATEGORY, ode_device_wide_rejects_bad_lane_counts )
{
    for ( int lanes : { -1, 3, 12, 64 } )
    {
        ode::SolverOptions o;
        o.mode = ode::ExecutionMode::device_wide;
        o.device_wide_lanes = lanes;
        try
        {
            o.validate( 3 );
            ADD_FAILURE() << "accepted device_wide_lanes = " << lanes;
        }
        catch ( const core::InputError& e )
        {
            EXPECT_NE( std::string( e.what() ).find( "device_wide_lanes = " + std::to_string( lanes ) ), std::string::npos )
                << e.what();
        }
    }
}

TEST( TEST_CATEGORY, ode_device_wide_rejects_a_negative_attempt_count )
{
    ode::SolverOptions o;
    o.mode = ode::ExecutionMode::device_wide;
    o.device_wide_attempts_per_sync = -2;
    try
    {
        o.validate( 3 );
        ADD_FAILURE() << "accepted device_wide_attempts_per_sync = -2";
    }
    catch ( const core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "device_wide_attempts_per_sync = -2" ), std::string::npos ) << e.what();
    }
}
