// Checkpoint and restart of the tumour/angiogenesis model: a run of 2N steps and a run of N steps,
// checkpoint, restart of a fresh model and N more steps are the same run, bit for bit, while cells
// divide, die, lyse and are sorted and vessels sprout, grow, split and fuse on both sides of the restart.
#include "AngioTestUtils.hpp"

#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/StepGraph.hpp>
#include <morula/io/Checkpoint.hpp>

#include <gtest/gtest.h>

#include "ExpectError.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace morula_test_angio_checkpoint
{
using morula::angio::AngioParameters;
using morula::angio::HostCells;
using morula::angio::HostTubes;
using morula::io::CheckpointReader;
using morula::io::CheckpointWriter;
using morula_test_angio::centred_cluster;

template <class Scalar>
using ModelOf = morula::angio::TumourAngiogenesis<Scalar, TEST_MEMSPACE>;
static_assert( morula::io::is_checkpointable_v<ModelOf<double>> && morula::io::is_checkpointable_v<ModelOf<float>>,
               "the angiogenesis driver has the checkpoint shape" );

template <class Scalar>
ModelOf<Scalar> make( const HostCells& c, const HostTubes& t, double edge, const AngioParameters& p )
{
    const auto box = morula::core::Box<Scalar>::cube( static_cast<Scalar>( edge ), morula::core::Boundary::closed );
    return ModelOf<Scalar>( morula::angio::TumourCells<Scalar, TEST_MEMSPACE>( c ),
                            morula::angio::VesselTubes<Scalar, TEST_MEMSPACE>( t ), box, p );
}

std::string file_for( const std::string& what )
{
    return "morula_angio_checkpoint_" + what + "_" + TEST_EXECSPACE::name() + ".h5";
}

using morula_test::expect_input_error;

// A dense tumour between vessels where every kind of event keeps coming for some 70 steps:
// - a third of the cells Mature, radii spread just below the division radius (divisions over ~60 steps),
//   growth whatever the crowding;
// - old cells close to the largest age (deaths, staggered), a strong uptake that makes the core hypoxic
//   (TAF production), and dead cells a little above the lysis radius (lysis, staggered);
// - two vessels beside the tumour whose tubes sprout at a low rate (sprouts keep coming), tips that grow
//   whatever TAF they sense;
// - a vessel far from the tumour and tips aimed at it from staggered distances (anastomoses at steps
//   ~4, ~18, ~44 and ~60), straight because they follow their own direction only;
// - sorting every 7 steps, so a restart at step 31 falls between two sorts and on the other buffer.
struct Scene
{
    HostCells cells;
    HostTubes tubes;
    AngioParameters params;
    double edge = 160;
};

Scene dense_scene()
{
    Scene s;
    AngioParameters& p = s.params;
    p.exchange.sweeps = 9; // odd: the exchange ends with a copy back into the cells
    p.exchange.oxygen_uptake = 5;
    p.sort_every = 7;
    p.life.max_pressure = 1e9;
    p.life.max_age = 20;
    p.vessels.sprout_taf = 0;
    p.vessels.sprout_rate = 0.25;
    p.vessels.tip_taf = 0;
    p.vessels.tip_persistence = 1;
    s.cells = centred_cluster( s.edge, 26 );
    int dead = 0;
    for ( std::size_t i = 0; i < s.cells.size(); ++i )
    {
        const double k = static_cast<double>( i % 60 );
        // TAF falling from the centre: the vessels sense a gradient (and sprout) from the first step.
        double r2 = 0;
        for ( int d = 0; d < 3; ++d )
            r2 += ( s.cells.position[3 * i + d] - 0.5 * s.edge ) * ( s.cells.position[3 * i + d] - 0.5 * s.edge );
        s.cells.taf[i] = 0.3 * std::max( 0.0, 1 - std::sqrt( r2 ) / 30 );
        if ( i % 3 == 0 )
        {
            s.cells.radius[i] = p.life.division_radius * ( 0.999 - 0.06 * k / 59 );
            s.cells.age[i] = p.life.maturation_age + 1;
            s.cells.state[i] = morula::angio::cell_mature;
        }
        else if ( i % 7 == 1 )
        {
            // Old cells: they die of age over the first 60 steps (before they could grow to divide).
            s.cells.age[i] = p.life.max_age - 0.1 * ( 0.5 + k );
            s.cells.state[i] = morula::angio::cell_mature;
        }
        else if ( i % 8 == 5 )
        {
            // Lysis spread over the first 60 steps (a dead cell loses lysis_rate dt of volume per step).
            s.cells.radius[i] = p.life.lysis_radius * ( 1.05 + 0.12 * dead++ );
            s.cells.state[i] = morula::angio::cell_dead;
        }
        else if ( i % 5 == 2 )
        {
            s.cells.state[i] = morula::angio::cell_hypoxic;
            s.cells.oxygen[i] = 0.01;
        }
    }
    const double c = 0.5 * s.edge;
    s.tubes.add_vessel( { c, 0, c - 31, c, s.edge, c - 31 }, 5, 20, "below" );
    s.tubes.add_vessel( { 0, c, c + 31, s.edge, c, c + 31 }, 5, 20, "above" );
    // The far vessel along x at y = 15, z = 130; tips 5 um long pointing up at it from below, their front
    // ends 8 um (the sum of radii) plus 0.5 um per step of growth away from its axis.
    const double far_y = 15, far_z = 130;
    s.tubes.add_vessel( { 0, far_y, far_z, s.edge, far_y, far_z }, 5, 20, "far" );
    const int arrive[] = { 4, 18, 44, 60 };
    for ( int k = 0; k < 4; ++k )
    {
        const double front = far_z - 8 - 0.5 * arrive[k] - 0.2;
        const double a[3] = { 20.0 + 35 * k, far_y, front - 5 }, b[3] = { 20.0 + 35 * k, far_y, front };
        s.tubes.add( a, b, 3, 3, -1, 1.0, morula::angio::tube_tip );
    }
    return s;
}

// Another start of the same parameters: a small tumour, no vessels (so another tube grid reach and
// smaller capacities), which a restart must replace entirely.
HostCells other_cells() { return centred_cluster( 160, 9, 7 ); }

template <class Model>
void expect_same_state( const Model& a, const Model& b )
{
    const auto ca = a.cells().to_host(), cb = b.cells().to_host();
    ASSERT_EQ( ca.size(), cb.size() );
    EXPECT_EQ( ca.id, cb.id );
    EXPECT_EQ( ca.state, cb.state );
    EXPECT_EQ( ca.position, cb.position );
    EXPECT_EQ( ca.velocity, cb.velocity );
    EXPECT_EQ( ca.force, cb.force );
    EXPECT_EQ( ca.radius, cb.radius );
    EXPECT_EQ( ca.age, cb.age );
    EXPECT_EQ( ca.hypoxic_time, cb.hypoxic_time );
    EXPECT_EQ( ca.oxygen, cb.oxygen );
    EXPECT_EQ( ca.taf, cb.taf );
    EXPECT_EQ( ca.pressure, cb.pressure );
    const auto ta = a.tubes().to_host(), tb = b.tubes().to_host();
    ASSERT_EQ( ta.size(), tb.size() );
    EXPECT_EQ( ta.id, tb.id );
    EXPECT_EQ( ta.end_a, tb.end_a );
    EXPECT_EQ( ta.end_b, tb.end_b );
    EXPECT_EQ( ta.radius_a, tb.radius_a );
    EXPECT_EQ( ta.parent, tb.parent );
    EXPECT_EQ( ta.flags, tb.flags );
    EXPECT_EQ( ta.flow, tb.flow );
    EXPECT_EQ( ta.blood_oxygen, tb.blood_oxygen );
    EXPECT_EQ( ta.taf, tb.taf );
    EXPECT_EQ( ta.delivered, tb.delivered );
    EXPECT_EQ( ta.last_sprout, tb.last_sprout );
    EXPECT_EQ( a.divisions(), b.divisions() );
    EXPECT_EQ( a.sprouts(), b.sprouts() );
    EXPECT_EQ( a.anastomoses(), b.anastomoses() );
    EXPECT_EQ( a.steps_done(), b.steps_done() );
    EXPECT_EQ( a.time(), b.time() );
    EXPECT_EQ( a.cells().next_id(), b.cells().next_id() );
    EXPECT_EQ( a.tubes().next_id(), b.tubes().next_id() );
}

// The whole state as a checkpoint holds it (compared entry by entry with io::first_difference).
template <class Model>
morula::io::CheckpointEntries entries_of( const Model& m )
{
    CheckpointWriter out( Model::checkpoint_model );
    m.checkpoint( out );
    return out.entries();
}

// What happened over some steps: every kind of event the restart must carry across.
struct Events
{
    long long divisions = 0, removed = 0, sprouts = 0, anastomoses = 0, new_tubes = 0, deaths = 0, sorts = 0;
};

template <class Model>
std::set<long long> dead_ids( const Model& m )
{
    const auto h = m.cells().to_host();
    std::set<long long> dead;
    for ( std::size_t i = 0; i < h.size(); ++i )
        if ( h.state[i] == morula::angio::cell_dead )
            dead.insert( h.id[i] );
    return dead;
}

// n steps one by one, or through advance(); counts the events (deaths: cells dead at the end that were
// not dead at the start and did not lyse in between, a lower bound).
template <class Model>
Events run( Model& m, int n, bool advance )
{
    TEST_EXECSPACE exec;
    Events e;
    const auto dead_before = dead_ids( m );
    if ( advance )
    {
        const auto r = m.advance( exec, n );
        e.divisions = r.divisions;
        e.removed = r.removed;
        e.sprouts = r.sprouts;
        e.anastomoses = r.anastomoses;
        e.new_tubes = r.new_tubes;
        e.sorts = r.sorted ? 1 : 0;
    }
    else
        for ( int k = 0; k < n; ++k )
        {
            const auto r = m.step( exec );
            e.divisions += r.divisions;
            e.removed += r.removed;
            e.sprouts += r.sprouts;
            e.anastomoses += r.anastomoses;
            e.new_tubes += r.new_tubes;
            e.sorts += r.sorted ? 1 : 0;
        }
    for ( const auto id : dead_ids( m ) )
        e.deaths += dead_before.count( id ) ? 0 : 1;
    return e;
}

void expect_busy( const Events& e, const char* half )
{
    EXPECT_GT( e.divisions, 0 ) << half;
    EXPECT_GT( e.removed, 0 ) << half;
    EXPECT_GT( e.deaths, 0 ) << half;
    EXPECT_GT( e.sprouts, 0 ) << half;
    EXPECT_GT( e.anastomoses, 0 ) << half;
    EXPECT_GT( e.sorts, 0 ) << half;
}

#if MORULA_HAVE_HDF5

/*
  Uninterrupted: 2N plain steps. Resumed: N steps (plain or advance()), a checkpoint file, a fresh model of
  the same parameters from another start restarted from it, N more steps (plain or advance()). Both end in
  the same state, entry for entry of their checkpoints and field for field. N = 31: between two sorts, on
  the second buffer, mid-way through the cells' divisions and the tips' growth; the restarted model
  captures its exchange graphs anew.
*/
template <class Scalar>
void check_resumed_run_is_the_same_run( bool advance_first, bool advance_second, const std::string& name )
{
    constexpr int N = 31;
    const Scene s = dense_scene();
    auto whole = make<Scalar>( s.cells, s.tubes, s.edge, s.params );
    auto first = make<Scalar>( s.cells, s.tubes, s.edge, s.params );
    const Events before = run( whole, N, false );
    const Events after = run( whole, N, false );
    expect_busy( before, "before the restart" );
    expect_busy( after, "after the restart" );

    run( first, N, advance_first );
    const std::string path = file_for( name );
    morula::io::write_checkpoint( first, path );
    auto resumed = make<Scalar>( other_cells(), HostTubes{}, s.edge, s.params );
    ASSERT_NE( resumed.num_cells(), first.num_cells() );
    ASSERT_NE( resumed.tube_reach(), first.tube_reach() );
    morula::io::restart_from_checkpoint( resumed, path );
    EXPECT_EQ( morula::io::first_difference( entries_of( resumed ), entries_of( first ) ), "" );
    EXPECT_EQ( resumed.steps_done(), N );
    EXPECT_EQ( resumed.cells().capacity(), first.cells().capacity() );
    EXPECT_EQ( resumed.tube_reach(), first.tube_reach() );
    expect_same_state( resumed, first );

    const Events second = run( resumed, N, advance_second );
    EXPECT_EQ( second.divisions, after.divisions );
    EXPECT_EQ( second.removed, after.removed );
    EXPECT_EQ( second.sprouts, after.sprouts );
    EXPECT_EQ( second.anastomoses, after.anastomoses );
    EXPECT_EQ( second.new_tubes, after.new_tubes );
    EXPECT_EQ( morula::io::first_difference( entries_of( resumed ), entries_of( whole ) ), "" );
    expect_same_state( resumed, whole );
    if constexpr ( morula::core::StepGraph<TEST_EXECSPACE>::uses_device_graph() )
        EXPECT_GE( resumed.graph_captures(), 1 ); // captured anew after the restart
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, angio_checkpoint_resumed_run_is_the_same_run_double_steps )
{
    check_resumed_run_is_the_same_run<double>( false, false, "double_steps" );
}
TEST( TEST_CATEGORY, angio_checkpoint_resumed_run_is_the_same_run_double_advance )
{
    check_resumed_run_is_the_same_run<double>( true, true, "double_advance" );
}
TEST( TEST_CATEGORY, angio_checkpoint_resumed_run_is_the_same_run_float_steps )
{
    check_resumed_run_is_the_same_run<float>( false, true, "float_steps" );
}
TEST( TEST_CATEGORY, angio_checkpoint_resumed_run_is_the_same_run_float_advance )
{
    check_resumed_run_is_the_same_run<float>( true, false, "float_advance" );
}

// The cell-cell pairs once with atomics: the same on one thread (Serial); on parallel backends the atomic
// sums take another order in each run, so a resumed run equals an uninterrupted one to round-off only, like
// two uninterrupted runs. Here: the restart itself changes nothing (the checkpoint of the restarted model is
// the checkpointed model's), and on Serial the continuation is bit for bit.
TEST( TEST_CATEGORY, angio_checkpoint_restart_with_atomic_cell_cell )
{
    constexpr int N = 12;
    Scene s = dense_scene();
    s.params.atomic_cell_cell = true;
    auto whole = make<double>( s.cells, s.tubes, s.edge, s.params );
    auto first = make<double>( s.cells, s.tubes, s.edge, s.params );
    run( whole, 2 * N, false );
    run( first, N, true );
    const std::string path = file_for( "atomic" );
    morula::io::write_checkpoint( first, path );
    auto resumed = make<double>( other_cells(), HostTubes{}, s.edge, s.params );
    morula::io::restart_from_checkpoint( resumed, path );
    EXPECT_EQ( morula::io::first_difference( entries_of( resumed ), entries_of( first ) ), "" );
    run( resumed, N, true );
    ASSERT_EQ( resumed.steps_done(), whole.steps_done() );
    if ( TEST_EXECSPACE().concurrency() == 1 )
        EXPECT_EQ( morula::io::first_difference( entries_of( resumed ), entries_of( whole ) ), "" );
    std::remove( path.c_str() );
}

// Writing a checkpoint does not disturb the run; a checkpoint before the first step resumes to the same run;
// the list widths, which decide whether a step fits and not what it computes, may change on restart; a model
// that has run can go back to an earlier checkpoint.
TEST( TEST_CATEGORY, angio_checkpoint_at_step_zero_and_wider_lists )
{
    const Scene s = dense_scene();
    auto whole = make<double>( s.cells, s.tubes, s.edge, s.params );
    const std::string path = file_for( "step_zero" );
    morula::io::write_checkpoint( whole, path );
    AngioParameters wider = s.params;
    wider.exchange.max_contacts = 48;
    wider.max_tubes_per_cell = 40;
    auto resumed = make<double>( other_cells(), HostTubes{}, s.edge, wider );
    morula::io::restart_from_checkpoint( resumed, path );
    EXPECT_EQ( resumed.steps_done(), 0 );
    TEST_EXECSPACE exec;
    for ( int k = 0; k < 10; ++k )
    {
        whole.step( exec );
        if ( k == 4 )
            morula::io::write_checkpoint( whole, path ); // mid-run: changes nothing
    }
    resumed.advance( exec, 10 );
    expect_same_state( resumed, whole );
    const auto a = entries_of( resumed ), b = entries_of( whole );
    // Only the widths differ.
    EXPECT_EQ( morula::io::first_difference( a, b ), "parameters/exchange.max_contacts" );
    auto a2 = a, b2 = b;
    a2.erase( "parameters/exchange.max_contacts" );
    b2.erase( "parameters/exchange.max_contacts" );
    EXPECT_EQ( morula::io::first_difference( a2, b2 ), "parameters/max_tubes_per_cell" );
    a2.erase( "parameters/max_tubes_per_cell" );
    b2.erase( "parameters/max_tubes_per_cell" );
    EXPECT_EQ( morula::io::first_difference( a2, b2 ), "" );
    // Back to step 5 in a model that has run (its exchange graphs recorded on the arrays it drops) and on
    // again: the same step 10.
    morula::io::restart_from_checkpoint( whole, path );
    EXPECT_EQ( whole.steps_done(), 5 );
    whole.advance( exec, 5 );
    expect_same_state( resumed, whole );
    std::remove( path.c_str() );
}

// The angiogenic switch is state: sprouting turned on during the run stays on in the resumed run, whose
// model was made (as the app makes it) with sprouting still off.
TEST( TEST_CATEGORY, angio_checkpoint_keeps_the_angiogenic_switch )
{
    Scene s = dense_scene();
    s.params.vessels.sprouting = false;
    auto whole = make<double>( s.cells, s.tubes, s.edge, s.params );
    auto first = make<double>( s.cells, s.tubes, s.edge, s.params );
    TEST_EXECSPACE exec;
    whole.advance( exec, 3 );
    first.advance( exec, 3 );
    whole.set_sprouting( true );
    first.set_sprouting( true );
    whole.advance( exec, 20 );
    first.advance( exec, 10 );
    const std::string path = file_for( "switch" );
    morula::io::write_checkpoint( first, path );
    auto resumed = make<double>( s.cells, s.tubes, s.edge, s.params );
    EXPECT_FALSE( resumed.parameters().vessels.sprouting );
    morula::io::restart_from_checkpoint( resumed, path );
    EXPECT_TRUE( resumed.parameters().vessels.sprouting );
    resumed.advance( exec, 10 );
    EXPECT_GT( whole.sprouts(), 0 );
    expect_same_state( resumed, whole );
    EXPECT_EQ( morula::io::first_difference( entries_of( resumed ), entries_of( whole ) ), "" );
    std::remove( path.c_str() );
}

// Refused: another model's checkpoint, other parameters (the message names the parameter and both values),
// another seed, another box, the other precision, a broken entry; a refused restart changes nothing.
TEST( TEST_CATEGORY, angio_checkpoint_refuses_another_run )
{
    const Scene s = dense_scene();
    auto model = make<double>( s.cells, s.tubes, s.edge, s.params );
    TEST_EXECSPACE exec;
    model.advance( exec, 3 );
    const std::string path = file_for( "refusals" );
    morula::io::write_checkpoint( model, path );
    const auto fresh_entries = [&] {
        auto m = make<double>( s.cells, s.tubes, s.edge, s.params );
        return entries_of( m );
    }();

    {
        const std::string other = file_for( "other_model" );
        CheckpointWriter out( "epidermis" );
        out.put_scalar( "step", 3LL );
        out.write( other );
        auto m = make<double>( s.cells, s.tubes, s.edge, s.params );
        expect_input_error( [&] { morula::io::restart_from_checkpoint( m, other ); },
                            { other, "epidermis", "angiogenesis" } );
        std::remove( other.c_str() );
    }
    {
        AngioParameters p = s.params;
        p.time_step = 0.05;
        auto m = make<double>( s.cells, s.tubes, s.edge, p );
        expect_input_error( [&] { morula::io::restart_from_checkpoint( m, path ); },
                            { path, "parameter time_step = 0.10000000000000001 in the checkpoint but 0.050000000000000003" } );
        EXPECT_EQ( m.steps_done(), 0 );
    }
    {
        AngioParameters p = s.params;
        p.exchange.sweeps = 10;
        auto m = make<double>( s.cells, s.tubes, s.edge, p );
        expect_input_error( [&] { morula::io::restart_from_checkpoint( m, path ); },
                            { path, "parameter exchange.sweeps = 9 in the checkpoint but 10" } );
    }
    {
        AngioParameters p = s.params;
        p.seed = 2;
        auto m = make<double>( s.cells, s.tubes, s.edge, p );
        expect_input_error( [&] { morula::io::restart_from_checkpoint( m, path ); },
                            { path, "parameter seed = 1 in the checkpoint but 2" } );
    }
    {
        auto m = make<double>( s.cells, s.tubes, 170, s.params );
        expect_input_error( [&] { morula::io::restart_from_checkpoint( m, path ); },
                            { path, "the box along x is [0, 160] in the checkpoint but [0, 170]" } );
    }
    {
        auto m = make<float>( s.cells, s.tubes, s.edge, s.params );
        expect_input_error( [&] { morula::io::restart_from_checkpoint( m, path ); },
                            { path, "holds a double run; this model is float" } );
        EXPECT_EQ( m.steps_done(), 0 );
    }
    {
        // A float array where the model keeps doubles: the reader names the file, the entry and both types,
        // and the model, whose restart reads everything before it changes anything, is left as it was.
        auto entries = morula::io::detail::read_checkpoint_file( path );
        auto& oxygen = entries.at( "cells/oxygen" );
        const std::vector<float> halves( oxygen.dims[0], 0.5f );
        oxygen.type = morula::io::CheckpointType::float32;
        oxygen.bytes.assign( reinterpret_cast<const unsigned char*>( halves.data() ),
                             reinterpret_cast<const unsigned char*>( halves.data() + halves.size() ) );
        const std::string bad = file_for( "broken" );
        morula::io::detail::write_checkpoint_file( bad, entries );
        auto m = make<double>( s.cells, s.tubes, s.edge, s.params );
        expect_input_error( [&] { morula::io::restart_from_checkpoint( m, bad ); },
                            { bad, "'cells/oxygen' holds float32, expected float64" } );
        EXPECT_EQ( morula::io::first_difference( entries_of( m ), fresh_entries ), "" );
        std::remove( bad.c_str() );
    }
    std::remove( path.c_str() );
}

#endif

} // namespace morula_test_angio_checkpoint
