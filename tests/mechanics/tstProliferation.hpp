#include "MechanicsTestUtils.hpp"

#include <morula/core/Box.hpp>
#include <morula/core/Driver.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/Proliferation.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <optional>

namespace morula_test_proliferation
{
namespace mechanics = morula::mechanics;
using morula::core::Boundary;
using morula::core::Box;

static_assert( morula::core::is_driver_v<mechanics::Proliferation<double, TEST_MEMSPACE>, TEST_EXECSPACE> );
static_assert( morula::core::is_driver_v<mechanics::Proliferation<float, TEST_MEMSPACE>, TEST_EXECSPACE> );

// Timing is a measurement, not part of the model: timed and untimed runs agree bit for bit, and only
// the timed steps are counted and fill every phase of times().
TEST( TEST_CATEGORY, proliferation_timed_steps_fill_every_phase_and_change_nothing )
{
    TEST_EXECSPACE exec;
    mechanics::AgentProperties<double> props;
    props.diameter = 29.5; // divides after a few steps of growth
    mechanics::MechanicsParameters<double> mp;
    mp.sort_every = 1;
    mechanics::GrowthParameters<double> gp;
    gp.growth_rate = 60000;
    const Box<double> box( { -10, -10, -10 }, { 110, 110, 110 }, Boundary::closed );
    auto make = [&] {
        return mechanics::Proliferation<double, TEST_MEMSPACE>(
            mechanics::lattice_agents<double, TEST_MEMSPACE>( exec, 6, 20.0, props ), box, mp, gp );
    };
    auto plain = make();
    auto timed = make();
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
    for ( int p : { Phase::division, Phase::grid_build, Phase::sort, Phase::forces, Phase::displacement } )
        EXPECT_GT( t.seconds( p ), 0.0 ) << t.phase_name( p );
    EXPECT_EQ( t.seconds( "forces" ), t.seconds( Phase::forces ) );
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

} // namespace morula_test_proliferation
