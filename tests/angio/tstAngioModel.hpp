#include "AngioTestUtils.hpp"

#include <morula/core/Driver.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace morula_test_angio
{
using morula::angio::detail::PhaseAccess;
using morula::angio::cell_dead;
using morula::angio::cell_hypoxic;
using morula::angio::cell_mature;
using morula::angio::cell_new;

double total_amount( const HostCells& h, const std::vector<double>& c )
{
    double s = 0;
    for ( std::size_t i = 0; i < h.size(); ++i )
        s += volume( h.radius[i] ) * c[i];
    return s;
}

double spread( const std::vector<double>& c )
{
    const auto [lo, hi] = std::minmax_element( c.begin(), c.end() );
    return *hi - *lo;
}

// Without sources and sinks the exchange only moves oxygen and TAF between touching cells: the amounts
// sum_i V_i c_i stay the same to rounding, while the concentrations even out.
TEST( TEST_CATEGORY, angio_exchange_conserves_oxygen_and_taf )
{
    const double edge = 200;
    HostCells h = centred_cluster( edge, 35 );
    for ( std::size_t i = 0; i < h.size(); ++i )
    {
        h.radius[i] = 5.0 + 0.6 * std::cos( 0.9 * i );
        h.oxygen[i] = 0.5 + 0.5 * std::sin( 2.3 * i );
        h.taf[i] = i % 7 == 0 ? 3.0 : 0.0;
    }
    AngioParameters p;
    p.exchange.oxygen_uptake = 0;
    p.exchange.taf_decay = 0;
    p.exchange.taf_production = 0;
    p.exchange.sweeps = 40;
    Model m = make_model( h, HostTubes{}, edge, p );
    TEST_EXECSPACE exec;
    PhaseAccess::prepare_step( m, exec );
    PhaseAccess::build_grid( m, exec );
    PhaseAccess::interact_cells( m, exec );
    PhaseAccess::interact_tubes_and_cells( m, exec );
    const auto before = m.cells().to_host();
    PhaseAccess::exchange( m, exec );
    const auto after = m.cells().to_host();
    const double o0 = total_amount( before, before.oxygen ), o1 = total_amount( after, after.oxygen );
    const double t0 = total_amount( before, before.taf ), t1 = total_amount( after, after.taf );
    EXPECT_NEAR( o1, o0, 1e-12 * o0 );
    EXPECT_NEAR( t1, t0, 1e-12 * t0 );
    EXPECT_LT( spread( after.oxygen ), 0.5 * spread( before.oxygen ) );
    EXPECT_LT( spread( after.taf ), 0.5 * spread( before.taf ) );
    for ( std::size_t i = 0; i < after.size(); ++i )
    {
        EXPECT_GE( after.oxygen[i], 0 );
        EXPECT_GE( after.taf[i], 0 );
    }
}

// With uptake on and a perfused vessel as the only source, oxygen falls away from the vessel.
TEST( TEST_CATEGORY, angio_oxygen_falls_with_distance_from_a_vessel )
{
    const double edge = 200;
    HostCells h = centred_cluster( edge, 45 );
    HostTubes t;
    t.add_vessel( { 100, 0, 100, 100, 200, 100 }, 5, 20, "test" ); // through the cluster's centre, along y
    AngioParameters p;
    p.exchange.sweeps = 400;
    p.exchange.oxygen_uptake = 5; // penetration sqrt(D / q) = 20 μm, well inside the cluster
    p.vessels.sprouting = false;
    // Cells overlapping the vessel are pushed out over a few steps; keep the exchange of the last one.
    Model m = make_model( h, t, edge, p );
    TEST_EXECSPACE exec;
    for ( int s = 0; s < 5; ++s )
        m.step( exec );
    const auto c = m.cells().to_host();
    double near = 0, far = 0;
    int n_near = 0, n_far = 0;
    for ( std::size_t i = 0; i < c.size(); ++i )
    {
        const double dx = c.position[3 * i] - 100, dz = c.position[3 * i + 2] - 100;
        const double r = std::sqrt( dx * dx + dz * dz );
        if ( r < 15 )
        {
            near += c.oxygen[i];
            ++n_near;
        }
        else if ( r > 35 )
        {
            far += c.oxygen[i];
            ++n_far;
        }
    }
    ASSERT_GT( n_near, 5 );
    ASSERT_GT( n_far, 5 );
    EXPECT_GT( near / n_near, 2 * far / n_far );
}

// The life-cycle rules at their thresholds, one cell per rule.
TEST( TEST_CATEGORY, angio_state_transitions_follow_the_rules )
{
    AngioParameters p;
    p.exchange.sweeps = 0; // keep the oxygen as set
    const double dt = p.time_step;
    const auto& L = p.life;
    const double eps = 1e-6;
    struct Case
    {
        double age, oxygen, hypoxic_time;
        int state;
        int expect;
        const char* what;
    };
    const std::vector<Case> cases = {
        { L.maturation_age - 0.5 * dt, 1, 0, cell_new, cell_mature, "New matures at maturation_age" },
        { L.maturation_age - 1.5 * dt, 1, 0, cell_new, cell_new, "New stays New before maturation_age" },
        { 10, L.hypoxia_threshold - eps, 0, cell_mature, cell_hypoxic, "below the hypoxia threshold" },
        { 10, L.hypoxia_threshold + eps, 0, cell_mature, cell_mature, "just above the hypoxia threshold" },
        { 10, L.recovery_threshold, 3, cell_hypoxic, cell_mature, "recovers at the recovery threshold" },
        { 10, L.recovery_threshold - eps, 3, cell_hypoxic, cell_hypoxic, "stays hypoxic below recovery" },
        { 10, 0.01, L.hypoxic_survival - 0.5 * dt, cell_hypoxic, cell_dead, "dies after hypoxic_survival" },
        { 10, 0.01, L.hypoxic_survival - 1.5 * dt, cell_hypoxic, cell_hypoxic, "survives before hypoxic_survival" },
        { L.max_age - 0.5 * dt, 1, 0, cell_mature, cell_dead, "dies at max_age" },
    };
    HostCells h;
    for ( std::size_t k = 0; k < cases.size(); ++k )
    {
        const double x[3] = { 20.0 + 30.0 * ( k % 5 ), 20.0 + 30.0 * ( k / 5 ), 50 }; // far apart
        h.add( x, 5, cases[k].age, cases[k].state, cases[k].oxygen, 0, static_cast<std::int64_t>( k ) );
        h.hypoxic_time[k] = cases[k].hypoxic_time;
    }
    Model m = make_model( h, HostTubes{}, 200, p );
    TEST_EXECSPACE exec;
    m.step( exec );
    const auto out = m.cells().to_host();
    ASSERT_EQ( out.size(), cases.size() );
    for ( std::size_t i = 0; i < out.size(); ++i )
    {
        const Case& c = cases[out.id[i]];
        EXPECT_EQ( out.state[i], c.expect ) << c.what;
    }
}

// Division at the division radius: two New cells of half the volume each, the same concentrations (so the
// amounts are kept), new ids; a dead cell shrinks, lyses below the lysis radius and is removed.
TEST( TEST_CATEGORY, angio_division_and_lysis )
{
    AngioParameters p;
    p.exchange.sweeps = 0;
    const double R = p.life.division_radius;
    HostCells h;
    const double x0[3] = { 50, 50, 50 }, x1[3] = { 150, 150, 150 };
    h.add( x0, R, 10, cell_mature, 0.7, 0.3, 0 );
    h.add( x1, p.life.lysis_radius * 1.01, 10, cell_dead, 0.2, 0.0, 1 );
    Model m = make_model( h, HostTubes{}, 200, p );
    TEST_EXECSPACE exec;
    const auto r1 = m.step( exec );
    EXPECT_EQ( r1.divisions, 1 );
    EXPECT_EQ( r1.removed, 1 );
    const auto a = m.cells().to_host();
    ASSERT_EQ( a.size(), 2u ); // mother and daughter; the lysed cell is gone
    std::map<std::int64_t, std::size_t> at;
    for ( std::size_t i = 0; i < a.size(); ++i )
        at[a.id[i]] = i;
    ASSERT_EQ( at.count( 0 ), 1u );
    ASSERT_EQ( at.count( 2 ), 1u ); // the daughter's id
    const std::size_t mo = at[0], da = at[2];
    EXPECT_NEAR( volume( a.radius[mo] ) + volume( a.radius[da] ), volume( R ), 1e-9 * volume( R ) );
    EXPECT_NEAR( a.radius[mo], a.radius[da], 1e-12 );
    EXPECT_EQ( a.state[mo], cell_new );
    EXPECT_EQ( a.state[da], cell_new );
    EXPECT_DOUBLE_EQ( a.oxygen[da], 0.7 );
    EXPECT_DOUBLE_EQ( a.taf[da], 0.3 );
    double sep2 = 0;
    for ( int d = 0; d < 3; ++d )
        sep2 += ( a.position[3 * mo + d] - a.position[3 * da + d] ) * ( a.position[3 * mo + d] - a.position[3 * da + d] );
    EXPECT_NEAR( std::sqrt( sep2 ), a.radius[mo], 1e-9 ); // placed a daughter radius apart
    EXPECT_EQ( m.divisions(), 1 );
}

// The driver shape every model shares (core/Driver.hpp), in both precisions.
static_assert( morula::core::is_driver_v<morula::angio::TumourAngiogenesis<double, TEST_MEMSPACE>, TEST_EXECSPACE> );
static_assert( morula::core::is_driver_v<morula::angio::TumourAngiogenesis<float, TEST_MEMSPACE>, TEST_EXECSPACE> );

// times() names every phase in TumourAngiogenesisPhase's order; a timed step gives each of them its
// seconds (every phase is fenced and timed even where it has nothing to do) and counts one step, an
// untimed one adds nothing; timing changes no result. steps_done() and the reports count every step.
TEST( TEST_CATEGORY, angio_timed_step_fills_every_phase_and_counts_one_step )
{
    using Phase = morula::angio::TumourAngiogenesisPhase;
    const double edge = 150;
    HostTubes t;
    t.add_vessel( { 75, 0, 45, 75, 150, 45 }, 5, 20, "test" );
    AngioParameters p;
    p.exchange.sweeps = 8;
    Model timed = make_model( centred_cluster( edge, 20 ), t, edge, p );
    Model plain = make_model( centred_cluster( edge, 20 ), t, edge, p );
    TEST_EXECSPACE exec;
    const auto& times = timed.times();
    const std::vector<std::string> names = { "removal", "grid",   "cell_cell",   "blood_flow", "tube_tube", "tube_cell",
                                             "exchange", "motion", "tube_growth", "life_cycle", "counters" };
    ASSERT_EQ( times.num_phases(), static_cast<int>( names.size() ) );
    for ( int k = 0; k < times.num_phases(); ++k )
        EXPECT_EQ( times.phase_name( k ), names[k] );
    EXPECT_EQ( times.phase_name( Phase::removal ), "removal" );
    EXPECT_EQ( times.phase_name( Phase::counters ), "counters" );

    const auto r0 = timed.step( exec );
    plain.step( exec );
    EXPECT_EQ( r0.step, 0 );
    EXPECT_EQ( timed.steps_done(), 1 );
    EXPECT_EQ( times.steps(), 0 );
    EXPECT_EQ( times.total(), 0.0 );

    const auto t0 = std::chrono::steady_clock::now();
    const auto r1 = timed.step( exec, true );
    const double wall = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    plain.step( exec );
    EXPECT_EQ( r1.step, 1 );
    EXPECT_EQ( timed.steps_done(), 2 );
    EXPECT_EQ( times.steps(), 1 );
    std::vector<double> seconds;
    for ( const auto& name : names )
    {
        seconds.push_back( times.seconds( name ) );
        EXPECT_GT( seconds.back(), 0.0 ) << name;
    }
    EXPECT_LE( times.total(), wall ); // disjoint parts of the step

    const auto r2 = timed.step( exec ); // untimed again: nothing added
    plain.step( exec );
    EXPECT_EQ( r2.step, 2 );
    EXPECT_EQ( timed.steps_done(), 3 );
    EXPECT_EQ( times.steps(), 1 );
    for ( int k = 0; k < times.num_phases(); ++k )
        EXPECT_EQ( times.seconds( k ), seconds[k] ) << names[k];

    const auto a = timed.cells().to_host(), b = plain.cells().to_host();
    ASSERT_EQ( a.size(), b.size() );
    EXPECT_EQ( a.position, b.position );
    EXPECT_EQ( a.oxygen, b.oxygen );
    EXPECT_EQ( a.taf, b.taf );

    timed.reset_times();
    EXPECT_EQ( times.steps(), 0 );
    EXPECT_EQ( times.total(), 0.0 );
    EXPECT_EQ( times.num_phases(), static_cast<int>( names.size() ) ); // the names stay
}

} // namespace morula_test_angio

namespace morula_test_angio
{
struct TumourCensus
{
    int cells = 0, hypoxic_or_dead = 0;
    double distance_normoxic = 0, distance_starved = 0; // mean distance from the vessel's axis
    double vessel_length = 0;
};

TumourCensus census( const Model& m, double axis_x, double axis_z )
{
    TumourCensus c;
    const auto h = m.cells().to_host();
    c.cells = static_cast<int>( h.size() );
    int normoxic = 0;
    for ( std::size_t i = 0; i < h.size(); ++i )
    {
        const double dx = h.position[3 * i] - axis_x, dz = h.position[3 * i + 2] - axis_z;
        const double r = std::sqrt( dx * dx + dz * dz );
        if ( h.state[i] >= cell_hypoxic )
        {
            ++c.hypoxic_or_dead;
            c.distance_starved += r;
        }
        else
        {
            ++normoxic;
            c.distance_normoxic += r;
        }
    }
    c.distance_starved /= std::max( 1, c.hypoxic_or_dead );
    c.distance_normoxic /= std::max( 1, normoxic );
    const auto t = m.tubes().to_host();
    for ( std::size_t i = 0; i < t.size(); ++i )
    {
        double l2 = 0;
        for ( int d = 0; d < 3; ++d )
            l2 += ( t.end_b[3 * i + d] - t.end_a[3 * i + d] ) * ( t.end_b[3 * i + d] - t.end_a[3 * i + d] );
        c.vessel_length += std::sqrt( l2 );
    }
    return c;
}

/*
  The avascular phase and the angiogenic switch. A seed of ~20 cells grows beside a 60 μm vessel, its only
  oxygen source (penetration 20 μm). Thresholds defined here (docs/models/angiogenesis.md, validation):
  - by 210 h a starving core has formed: at least 20% of the cells are hypoxic or dead, and they lie on
    average at least 8 μm farther from the vessel than the normoxic ones;
  - growth stops: from 210 h to 270 h the count stays within +-15% of its value at 210 h, and without
    sprouting it still does at 340 h;
  - with sprouting switched on at 270 h, vessels sprout into the tumour (at least one sprout, vessel length
    at least doubled) and by 340 h the tumour has grown to at least 1.5 times its largest dormant size.
*/
TEST( TEST_CATEGORY, angio_dormant_spheroid_grows_again_after_the_angiogenic_switch )
{
    const double edge = 150, axis_x = 69, axis_z = 75;
    HostCells h;
    morula::angio::ClusterSpec seed;
    seed.centre[0] = 90;
    seed.centre[1] = 75;
    seed.centre[2] = 75;
    seed.radius = 15;
    morula::angio::add_cluster( h, seed );
    HostTubes t;
    t.add_vessel( { axis_x, 45, axis_z, axis_x, 105, axis_z }, 5, 20, "test" );
    AngioParameters p;
    p.exchange.oxygen_uptake = 5;
    p.exchange.sweeps = 30;
    p.vessels.sprouting = false;
    Model dormant = make_model( h, t, edge, p );
    TEST_EXECSPACE exec;
    auto run = [&]( Model& m, int steps ) {
        for ( int s = 0; s < steps; ++s )
            m.step( exec );
    };
    run( dormant, 2100 );
    const TumourCensus at210 = census( dormant, axis_x, axis_z );
    EXPECT_GE( at210.hypoxic_or_dead, at210.cells / 5 ) << at210.cells << " cells";
    EXPECT_GE( at210.distance_starved, at210.distance_normoxic + 8 );
    int largest = at210.cells;
    for ( int k = 0; k < 6; ++k )
    {
        run( dormant, 100 );
        const int n = census( dormant, axis_x, axis_z ).cells;
        largest = std::max( largest, n );
        EXPECT_LE( std::abs( n - at210.cells ), 0.15 * at210.cells ) << "at " << dormant.time() << " h";
    }
    // From the same dormant state: one copy stays avascular, the other switches sprouting on.
    Model avascular = make_model( dormant.cells().to_host(), dormant.tubes().to_host(), edge, p );
    Model switched = make_model( dormant.cells().to_host(), dormant.tubes().to_host(), edge, p );
    switched.set_sprouting( true );
    run( avascular, 700 );
    run( switched, 700 );
    const TumourCensus still = census( avascular, axis_x, axis_z );
    const TumourCensus grown = census( switched, axis_x, axis_z );
    EXPECT_LE( std::abs( still.cells - at210.cells ), 0.15 * at210.cells );
    EXPECT_GE( switched.sprouts(), 1 );
    EXPECT_GE( grown.vessel_length, 2 * at210.vessel_length );
    EXPECT_GE( grown.cells, 1.5 * largest ) << "dormant at most " << largest;
}
} // namespace morula_test_angio
