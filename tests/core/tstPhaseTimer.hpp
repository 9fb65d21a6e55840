#include <morula/core/Driver.hpp>
#include <morula/core/PhaseTimer.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace morula_test_phase_timer
{
using morula::core::PhaseTimer;

struct Phase
{
    enum : int
    {
        first,
        second
    };
};

TEST( TEST_CATEGORY, phase_timer_times_only_timed_phases_and_synchronises_around_them )
{
    PhaseTimer timer( "test::Model", { "first", "second" }, { "rows" } );
    int syncs = 0;
    const auto sync = [&] { ++syncs; };
    const auto sleep = [] { std::this_thread::sleep_for( std::chrono::milliseconds( 20 ) ); };

    timer.run_synced( false, Phase::first, sync, sleep );
    EXPECT_EQ( syncs, 0 );
    EXPECT_EQ( timer.seconds( Phase::first ), 0.0 );

    timer.run_synced( true, Phase::first, sync, sleep );
    EXPECT_EQ( syncs, 2 ); // before and after
    EXPECT_GE( timer.seconds( Phase::first ), 0.019 );
    EXPECT_LT( timer.seconds( Phase::first ), 5.0 );
    EXPECT_EQ( timer.seconds( Phase::second ), 0.0 );
    EXPECT_EQ( timer.seconds( "first" ), timer.seconds( Phase::first ) );
    EXPECT_EQ( timer.total(), timer.seconds( Phase::first ) );

    // A phase's value passes through, timed or not.
    EXPECT_EQ( timer.run( true, Phase::second, TEST_EXECSPACE(), [] { return 7; } ), 7 );
    EXPECT_EQ( timer.run( false, Phase::second, TEST_EXECSPACE(), [] { return 8; } ), 8 );

    timer.add( 0, 5 );
    timer.add( 0, 6 );
    timer.count_step();
    EXPECT_EQ( timer.count( "rows" ), 11 );
    EXPECT_EQ( timer.steps(), 1 );
    EXPECT_EQ( timer.phase_name( Phase::second ), "second" );

    timer.reset();
    EXPECT_EQ( timer.total(), 0.0 );
    EXPECT_EQ( timer.count( 0 ), 0 );
    EXPECT_EQ( timer.steps(), 0 );
    EXPECT_EQ( timer.num_phases(), 2 ); // the names stay
}

TEST( TEST_CATEGORY, phase_timer_names_the_unknown_phase_and_the_known_ones )
{
    PhaseTimer timer( "test::Model", { "grid", "forces" } );
    try
    {
        (void)timer.seconds( "force" );
        FAIL() << "expected an InputError";
    }
    catch ( const morula::core::InputError& e )
    {
        const std::string what = e.what();
        EXPECT_NE( what.find( "test::Model" ), std::string::npos ) << what;
        EXPECT_NE( what.find( "'force'" ), std::string::npos ) << what;
        EXPECT_NE( what.find( "grid, forces" ), std::string::npos ) << what;
    }
    EXPECT_THROW( (void)timer.seconds( 2 ), morula::core::InputError );
    EXPECT_THROW( timer.add( 0, 1 ), morula::core::InputError ); // no counts were named
}

TEST( TEST_CATEGORY, phase_timer_adds_nothing_when_the_phase_throws )
{
    PhaseTimer timer( "test::Model", { "only" } );
    EXPECT_THROW( timer.run( true, 0, TEST_EXECSPACE(), [] { throw std::runtime_error( "x" ); } ),
                  std::runtime_error );
    EXPECT_EQ( timer.seconds( 0 ), 0.0 );
}

// The shape check rejects what is not a driver.
struct NotADriver
{
    void step( const TEST_EXECSPACE&, bool ) {}
};
static_assert( !morula::core::is_driver_v<NotADriver, TEST_EXECSPACE> );

struct MinimalDriver
{
    morula::core::StepReport step( const TEST_EXECSPACE&, bool ) { return {}; }
    long long steps_done() const { return 0; }
    const PhaseTimer& times() const { return m_times; }
    void reset_times() {}
    PhaseTimer m_times;
};
static_assert( morula::core::is_driver_v<MinimalDriver, TEST_EXECSPACE> );

} // namespace morula_test_phase_timer
