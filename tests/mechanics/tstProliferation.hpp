#include "MechanicsTestUtils.hpp"

#include <morula/core/Box.hpp>
#include <morula/core/Driver.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/Proliferation.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <type_traits>
#include <utility>

namespace morula_test_proliferation
{
namespace mechanics = morula::mechanics;
using morula::core::Boundary;
using morula::core::Box;

static_assert( morula::core::is_driver_v<mechanics::Proliferation<double, TEST_MEMSPACE>, TEST_EXECSPACE> );
static_assert( morula::core::is_driver_v<mechanics::Proliferation<float, TEST_MEMSPACE>, TEST_EXECSPACE> );

// A cube of 6^3 cells in a closed box that divide from the second step on.
inline mechanics::Proliferation<double, TEST_MEMSPACE> dividing_cube( const TEST_EXECSPACE& exec, int sort_every )
{
    mechanics::AgentProperties<double> props;
    props.diameter = 29.5; // divides after a few steps of growth
    mechanics::MechanicsParameters<double> mp;
    mp.sort_every = sort_every;
    mechanics::GrowthParameters<double> gp;
    gp.growth_rate = 60000;
    const Box<double> box( { -10, -10, -10 }, { 110, 110, 110 }, Boundary::closed );
    return mechanics::Proliferation<double, TEST_MEMSPACE>(
        mechanics::lattice_agents<double, TEST_MEMSPACE>( exec, 6, 20.0, props ), box, mp, gp );
}

// Timing is a measurement, not part of the model: timed and untimed runs agree bit for bit, and only
// the timed steps are counted and fill every phase of times().
TEST( TEST_CATEGORY, proliferation_timed_steps_fill_every_phase_and_change_nothing )
{
    TEST_EXECSPACE exec;
    auto plain = dividing_cube( exec, 1 );
    auto timed = dividing_cube( exec, 1 );
    using Phase = mechanics::ProliferationPhase;
    long long divisions = 0;
    for ( int s = 0; s < 6; ++s )
    {
        const auto a = plain.step( exec );
        const auto b = timed.step( exec, s >= 2 );
        EXPECT_EQ( a.step, s );
        EXPECT_EQ( b.step, s );
        EXPECT_EQ( a.divisions, b.divisions );
        divisions += a.divisions;
        if ( s == 1 )
        {
            EXPECT_EQ( timed.times().steps(), 0 );
            EXPECT_EQ( timed.times().total(), 0.0 );
        }
    }
    ASSERT_GT( divisions, 0 ) << "the case did not exercise division";
    EXPECT_EQ( plain.steps_done(), 6 );
    EXPECT_EQ( plain.times().steps(), 0 );
    EXPECT_EQ( plain.times().total(), 0.0 );
    const auto& t = timed.times();
    EXPECT_EQ( t.steps(), 4 );
    for ( int p : { Phase::division, Phase::grid, Phase::sort, Phase::forces, Phase::move } )
        EXPECT_GT( t.seconds( p ), 0.0 ) << t.phase_name( p );
    EXPECT_EQ( t.seconds( "forces" ), t.seconds( Phase::forces ) );
    // One phase table on one rank and many (the old names are aliases): the communication phases and
    // counts of a distributed step stay 0 here.
    EXPECT_EQ( Phase::grid_build, Phase::grid );
    EXPECT_EQ( Phase::displacement, Phase::move );
    EXPECT_EQ( t.num_phases(), 8 );
    EXPECT_EQ( t.phase_name( Phase::grid ), "grid" );
    EXPECT_EQ( t.phase_name( Phase::move ), "move" );
    EXPECT_EQ( t.phase_name( Phase::division ), "division" );
    for ( int p : { Phase::migration, Phase::halo_build, Phase::halo_update } )
        EXPECT_EQ( t.seconds( p ), 0.0 ) << t.phase_name( p );
    EXPECT_EQ( Phase::communication( t ), 0.0 );
    // The one-rank answers of the calls a distributed run makes.
    EXPECT_EQ( timed.rank(), 0 );
    EXPECT_EQ( timed.size(), 1 );
    EXPECT_EQ( timed.num_owned(), timed.agents().size() );
    EXPECT_EQ( timed.all_agents(), (long long)timed.agents().size() );
    const auto ha = morula_test_mechanics::to_host( plain.agents() );
    const auto hb = morula_test_mechanics::to_host( timed.agents() );
    ASSERT_EQ( ha.size(), hb.size() );
    for ( std::size_t i = 0; i < ha.size(); ++i )
    {
        EXPECT_EQ( ha[i].id, hb[i].id ) << i;
        EXPECT_EQ( ha[i].diameter, hb[i].diameter ) << i;
        for ( int d = 0; d < 3; ++d )
            ASSERT_EQ( ha[i].x[d], hb[i].x[d] ) << "agent " << i;
    }
    timed.reset_times();
    EXPECT_EQ( timed.times().steps(), 0 );
    EXPECT_EQ( timed.times().total(), 0.0 );
}

// The driver owns its state and moves with it: a driver moved mid-run (construction, assignment)
// continues the run bit for bit; copies are refused (they would share the agents' Views).
TEST( TEST_CATEGORY, proliferation_driver_moves_mid_run )
{
    static_assert( !std::is_copy_constructible_v<mechanics::Proliferation<double, TEST_MEMSPACE>> );
    static_assert( !std::is_copy_assignable_v<mechanics::Proliferation<double, TEST_MEMSPACE>> );
    static_assert( std::is_move_constructible_v<mechanics::Proliferation<double, TEST_MEMSPACE>> );
    TEST_EXECSPACE exec;
    auto straight = dividing_cube( exec, 2 );
    auto first = dividing_cube( exec, 2 );
    long long divisions = 0, last = 0;
    for ( int s = 0; s < 3; ++s )
    {
        divisions += straight.step( exec ).divisions;
        first.step( exec );
    }
    mechanics::Proliferation<double, TEST_MEMSPACE> second( std::move( first ) );
    auto third = dividing_cube( exec, 2 );
    third.step( exec ); // another state, replaced whole by the assignment
    for ( int s = 3; s < 5; ++s )
    {
        divisions += straight.step( exec ).divisions;
        second.step( exec );
    }
    third = std::move( second );
    EXPECT_EQ( third.steps_done(), 5 );
    for ( int s = 5; s < 7; ++s )
    {
        const auto r = straight.step( exec );
        divisions += r.divisions;
        last = r.divisions;
        EXPECT_EQ( third.step( exec ).divisions, r.divisions ) << "step " << s;
    }
    ASSERT_GT( divisions, 0 ) << "the case did not exercise division";
    EXPECT_EQ( third.all_divisions(), last );
    const auto ha = morula_test_mechanics::to_host( straight.agents() );
    const auto hb = morula_test_mechanics::to_host( third.agents() );
    ASSERT_EQ( ha.size(), hb.size() );
    for ( std::size_t i = 0; i < ha.size(); ++i )
    {
        ASSERT_EQ( ha[i].id, hb[i].id ) << i;
        ASSERT_EQ( ha[i].diameter, hb[i].diameter ) << i;
        for ( int d = 0; d < 3; ++d )
            ASSERT_EQ( ha[i].x[d], hb[i].x[d] ) << "agent " << i;
    }
}

} // namespace morula_test_proliferation
