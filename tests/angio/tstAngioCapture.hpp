#include "AngioTestUtils.hpp"

#include <morula/core/HostCopy.hpp>
#include <morula/core/StepGraph.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace morula_test_angio_capture
{
using morula::angio::detail::PhaseAccess;
using morula::angio::AngioParameters;
using morula::angio::HostCells;
using morula::angio::HostTubes;
using morula_test_angio::centred_cluster;

template <class Scalar>
using ModelOf = morula::angio::TumourAngiogenesis<Scalar, TEST_MEMSPACE>;

template <class Scalar>
ModelOf<Scalar> make( const HostCells& c, const HostTubes& t, double edge, const AngioParameters& p )
{
    const auto box = morula::core::Box<Scalar>::cube( static_cast<Scalar>( edge ), morula::core::Boundary::closed );
    return ModelOf<Scalar>( morula::angio::TumourCells<Scalar, TEST_MEMSPACE>( c ),
                            morula::angio::VesselTubes<Scalar, TEST_MEMSPACE>( t ), box, p );
}

// A seed beside a vessel where things happen from the first steps: a third of the cells Mature near the
// division radius (they divide), some dead ones near the lysis radius (they are removed), sorting every 3 steps
// (the cell arrays move between two buffers), sprouting on.
struct Scene
{
    HostCells cells;
    HostTubes tubes;
    AngioParameters params;
    double edge = 150;
};

Scene busy_scene( int sweeps )
{
    Scene s;
    s.cells = centred_cluster( s.edge, 20 );
    s.params.exchange.sweeps = sweeps;
    s.params.sort_every = 3;
    s.params.life.max_pressure = 1e9; // grow whatever the crowding, so that divisions keep coming
    s.params.vessels.sprout_taf = 0;  // sprout as soon as any TAF is sensed
    s.params.vessels.sprout_rate = 5;
    for ( std::size_t i = 0; i < s.cells.size(); ++i )
    {
        if ( i % 3 == 0 )
        {
            // Radii 0.970-0.999 of the division radius: divisions spread over some 30 steps.
            s.cells.radius[i] = s.params.life.division_radius * ( 0.999 - 0.029 * static_cast<double>( ( i / 3 ) % 10 ) / 9 );
            s.cells.age[i] = s.params.life.maturation_age + 1;
            s.cells.state[i] = morula::angio::cell_mature;
        }
        else if ( i % 11 == 5 )
        {
            s.cells.radius[i] = s.params.life.lysis_radius * ( 1.02 + 0.04 * static_cast<double>( i % 7 ) ); // lyse over ~10 steps
            s.cells.state[i] = morula::angio::cell_dead;
        }
    }
    s.tubes.add_vessel( { 75, 0, 45, 75, 150, 45 }, 5, 20, "test" );
    return s;
}

template <class Model>
void expect_same_state( const Model& a, const Model& b )
{
    const auto ca = a.cells().to_host(), cb = b.cells().to_host();
    ASSERT_EQ( ca.size(), cb.size() );
    EXPECT_EQ( ca.id, cb.id );
    EXPECT_EQ( ca.state, cb.state );
    EXPECT_EQ( ca.position, cb.position );
    EXPECT_EQ( ca.velocity, cb.velocity );
    EXPECT_EQ( ca.radius, cb.radius );
    EXPECT_EQ( ca.age, cb.age );
    EXPECT_EQ( ca.oxygen, cb.oxygen );
    EXPECT_EQ( ca.taf, cb.taf );
    EXPECT_EQ( ca.pressure, cb.pressure );
    const auto ta = a.tubes().to_host(), tb = b.tubes().to_host();
    ASSERT_EQ( ta.size(), tb.size() );
    EXPECT_EQ( ta.end_a, tb.end_a );
    EXPECT_EQ( ta.end_b, tb.end_b );
    EXPECT_EQ( ta.flags, tb.flags );
    EXPECT_EQ( ta.taf, tb.taf );
    EXPECT_EQ( ta.delivered, tb.delivered );
    EXPECT_EQ( a.divisions(), b.divisions() );
    EXPECT_EQ( a.sprouts(), b.sprouts() );
    EXPECT_EQ( a.steps_done(), b.steps_done() );
    EXPECT_EQ( a.time(), b.time() );
}

// advance(n) with the exchange replayed from captured graphs equals n plain steps with every kernel
// launched one by one, bit for bit, while cells divide, lyse and are sorted (the cell count changes at
// nearly every step and the arrays move): the graphs read the cell count from the device and are keyed on
// the arrays they froze. Even and odd sweep counts (an odd count ends with a copy back into the cells).
template <class Scalar>
void check_advance_equals_plain_steps( int sweeps )
{
    const Scene s = busy_scene( sweeps );
    auto replayed = make<Scalar>( s.cells, s.tubes, s.edge, s.params );
    auto plain = make<Scalar>( s.cells, s.tubes, s.edge, s.params );
    plain.set_step_graphs( false );
    EXPECT_TRUE( replayed.step_graphs() );
    EXPECT_FALSE( plain.step_graphs() );
    TEST_EXECSPACE exec;
    const int chunks[] = { 1, 2, 7, 20 };
    int sizes_seen = 0, last_size = -1;
    long long divisions = 0, removed = 0;
    for ( const int k : chunks )
    {
        const auto r = replayed.advance( exec, k );
        for ( int q = 0; q < k; ++q )
        {
            const auto p = plain.step( exec );
            divisions += p.divisions;
            removed += p.removed;
            sizes_seen += plain.num_cells() != last_size ? 1 : 0;
            last_size = plain.num_cells();
        }
        EXPECT_EQ( r.step, plain.steps_done() - 1 );
        ASSERT_EQ( replayed.num_cells(), plain.num_cells() ) << "after " << plain.steps_done() << " steps";
        ASSERT_EQ( replayed.num_tubes(), plain.num_tubes() );
    }
    expect_same_state( replayed, plain );
    // The scene did what it is for: divisions and removals inside the replayed chunks, many cell counts.
    EXPECT_GT( divisions, 10 );
    EXPECT_GT( removed, 0 );
    EXPECT_GE( sizes_seen, 5 );
    EXPECT_EQ( replayed.divisions(), divisions );
    EXPECT_EQ( plain.graph_captures(), 0 );
    if constexpr ( morula::core::StepGraph<TEST_EXECSPACE>::uses_device_graph() )
    {
        // Captured at least once per set of arrays, and replayed far more often than captured.
        EXPECT_GE( replayed.graph_captures(), 1 );
        EXPECT_LE( replayed.graph_captures(), 20 );
    }
    else
        EXPECT_EQ( replayed.graph_captures(), 0 );
    // The reports of advance() sum those of the steps.
    const auto before = replayed.divisions();
    const auto r = replayed.advance( exec, 3 );
    long long d3 = 0;
    for ( int q = 0; q < 3; ++q )
        d3 += plain.step( exec ).divisions;
    EXPECT_EQ( r.divisions, d3 );
    EXPECT_EQ( replayed.divisions() - before, d3 );
    expect_same_state( replayed, plain );
    EXPECT_EQ( replayed.advance( exec, 0 ).step, replayed.steps_done() - 1 );
}

TEST( TEST_CATEGORY, angio_advance_equals_plain_steps_double_even_sweeps ) { check_advance_equals_plain_steps<double>( 8 ); }
TEST( TEST_CATEGORY, angio_advance_equals_plain_steps_double_odd_sweeps ) { check_advance_equals_plain_steps<double>( 7 ); }
TEST( TEST_CATEGORY, angio_advance_equals_plain_steps_float_even_sweeps ) { check_advance_equals_plain_steps<float>( 8 ); }
TEST( TEST_CATEGORY, angio_advance_equals_plain_steps_float_odd_sweeps ) { check_advance_equals_plain_steps<float>( 7 ); }

// A timed step fences and times every phase but runs the same kernels: a timed run with graphs equals an
// untimed run without, and advance() rejects a negative count, naming it.
TEST( TEST_CATEGORY, angio_timed_replayed_steps_equal_plain_steps )
{
    const Scene s = busy_scene( 6 );
    auto timed = make<double>( s.cells, s.tubes, s.edge, s.params );
    auto plain = make<double>( s.cells, s.tubes, s.edge, s.params );
    plain.set_step_graphs( false );
    TEST_EXECSPACE exec;
    for ( int k = 0; k < 12; ++k )
    {
        timed.step( exec, true );
        plain.step( exec );
    }
    EXPECT_EQ( timed.times().steps(), 12 );
    expect_same_state( timed, plain );
    try
    {
        timed.advance( exec, -2 );
        FAIL() << "advance(-2) did not throw";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "n = -2" ), std::string::npos ) << e.what();
    }
}

} // namespace morula_test_angio_capture

namespace morula_test_angio_capture
{
// The all-pairs tube-tube kernel (few tubes on a device) finds the contacts and anastomoses the grid
// query finds, on the same tubes; its reported forces are the same sums in another order.
TEST( TEST_CATEGORY, angio_tube_tube_all_pairs_matches_the_grid_query )
{
    Scene s = busy_scene( 4 );
    // Extra vessels crossing the first and each other, so that there are contacts and tips to fuse.
    s.tubes.add_vessel( { 0, 75, 45, 150, 75, 45 }, 5, 20, "cross" );
    s.tubes.add_vessel( { 75, 0, 48, 75, 150, 48 }, 4, 20, "parallel" );
    // Two tips whose front ends reach the first vessel (they fuse), one that stops short (it does not).
    const double tip_a[3][3] = { { 75, 30, 30 }, { 74, 100, 62 }, { 60, 120, 20 } };
    const double tip_b[3][3] = { { 75, 30, 45.5 }, { 75, 100, 47 }, { 65, 120, 25 } };
    for ( int k = 0; k < 3; ++k )
        s.tubes.add( tip_a[k], tip_b[k], 3, 3, -1, 1.0, morula::angio::tube_tip );
    auto a = make<double>( s.cells, s.tubes, s.edge, s.params );
    auto b = make<double>( s.cells, s.tubes, s.edge, s.params );
    TEST_EXECSPACE exec;
    PhaseAccess::prepare_step( a, exec ); // sizes the scratch arrays
    PhaseAccess::prepare_step( b, exec );
    ASSERT_EQ( a.num_tubes(), 27 );
    const int m = a.num_tubes();
    using morula::angio::detail::tube_midpoints;
    using morula::angio::detail::tube_tube;
    using morula::angio::detail::tube_tube_all_pairs;
    const auto constants = morula::angio::detail::Constants<double>::make( s.params, a.box(), s.params.exchange.max_contacts );
    tube_midpoints( exec, a.tubes_view(), m, a.workspace() );
    morula::grid::UniformGrid<double, TEST_MEMSPACE> grid( a.box(), a.tube_reach() );
    grid.build( exec, a.workspace().midpoints, m );
    tube_tube( exec, grid.query( a.workspace().midpoints ), a.tubes_view(), m, a.tube_reach(), constants, a.workspace() );
    tube_tube_all_pairs( exec, b.tubes_view(), m, b.tube_reach(), constants, b.workspace() );
    std::vector<int> ca, cb, fa, fb;
    std::vector<double> pa, pb;
    morula::core::copy_to_host( a.tubes().contacts(), m, ca );
    morula::core::copy_to_host( b.tubes().contacts(), m, cb );
    morula::core::copy_to_host( a.tubes().flags(), m, fa );
    morula::core::copy_to_host( b.tubes().flags(), m, fb );
    morula::core::copy_to_host( a.tubes().forces(), m, pa );
    morula::core::copy_to_host( b.tubes().forces(), m, pb );
    EXPECT_EQ( ca, cb );
    EXPECT_EQ( fa, fb );
    ASSERT_EQ( pa.size(), pb.size() );
    int touching = 0, fused = 0;
    for ( int i = 0; i < m; ++i )
    {
        touching += ca[i] > 0 ? 1 : 0;
        fused += ( fa[i] & morula::angio::tube_anastomosed ) ? 1 : 0;
    }
    for ( std::size_t k = 0; k < pa.size(); ++k )
        EXPECT_NEAR( pa[k], pb[k], 1e-9 * ( 1 + std::abs( pa[k] ) ) ) << k;
    EXPECT_GT( touching, 4 );
    EXPECT_EQ( fused, 2 ) << touching << " tubes touching";
}
} // namespace morula_test_angio_capture
