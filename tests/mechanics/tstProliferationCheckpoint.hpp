// Proliferation's checkpoint and restart: a run of 2N steps and a run of N steps + checkpoint + restart
// into a fresh driver + N steps are the same run, bit for bit, with divisions, sorts and grid growth on
// both sides of the restart; checkpoints of other models, parameters or precision are refused.
#include "MechanicsTestUtils.hpp"

#include <morula/Config.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/Proliferation.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include "ExpectError.hpp"

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace morula_test_proliferation_checkpoint
{
namespace mechanics = morula::mechanics;
namespace io = morula::io;
using morula::core::Boundary;
using morula::core::Box;
using morula_test_mechanics::HostAgent;

std::string file_for( const std::string& test )
{
    return "morula_proliferation_checkpoint_" + test + "_" + TEST_EXECSPACE::name() + ".h5";
}

using morula_test::expect_input_error;

static_assert( io::is_checkpointable_v<mechanics::Proliferation<double, TEST_MEMSPACE>> );
static_assert( io::is_checkpointable_v<mechanics::Proliferation<float, TEST_MEMSPACE>> );

#if MORULA_HAVE_HDF5

// A crowded lattice (spacing 20, diameters 27 to 30: every agent overlaps its neighbours) whose
// diameters are spread so that agents divide at many different steps.
template <class Scalar>
mechanics::SphereAgents<Scalar, TEST_MEMSPACE> crowded_agents( int per_axis, Scalar first_diameter )
{
    TEST_EXECSPACE exec;
    mechanics::AgentProperties<Scalar> props;
    auto lattice = mechanics::lattice_agents<Scalar, TEST_MEMSPACE>( exec, per_axis, Scalar( 20 ), props );
    auto h = morula_test_mechanics::to_host( lattice );
    for ( std::size_t i = 0; i < h.size(); ++i )
        h[i].diameter = first_diameter + Scalar( 0.25 ) * Scalar( ( i * 7 ) % 13 );
    return morula_test_mechanics::from_host<Scalar, TEST_MEMSPACE>( h );
}

template <class Scalar>
struct Scenario
{
    Box<Scalar> box;
    mechanics::MechanicsParameters<Scalar> mp;
    std::optional<mechanics::GrowthParameters<Scalar>> gp;

    explicit Scenario( Boundary boundary )
        : box( { -10, -10, -10 }, { 110, 110, 110 }, boundary )
    {
        mp.sort_every = 3; // the checkpoint after 7 steps falls between two sorts
        mechanics::GrowthParameters<Scalar> g;
        g.growth_rate = Scalar( 60000 ); // a cell at 27 divides within a few steps
        g.seed = 12345;
        gp = g;
    }

    mechanics::Proliferation<Scalar, TEST_MEMSPACE> make( int per_axis = 6, Scalar first_diameter = Scalar( 27 ) ) const
    {
        return mechanics::Proliferation<Scalar, TEST_MEMSPACE>( crowded_agents<Scalar>( per_axis, first_diameter ),
                                                               box, mp, gp );
    }
};

template <class Scalar>
io::CheckpointEntries entries_of( const mechanics::Proliferation<Scalar, TEST_MEMSPACE>& model )
{
    io::CheckpointWriter out( model.checkpoint_model );
    model.checkpoint( out );
    return out.entries();
}

// Every bit of every agent, in memory order.
template <class Scalar>
void expect_same_agents( const std::vector<HostAgent<Scalar>>& a, const std::vector<HostAgent<Scalar>>& b )
{
    ASSERT_EQ( a.size(), b.size() );
    for ( std::size_t i = 0; i < a.size(); ++i )
    {
        ASSERT_EQ( a[i].id, b[i].id ) << "agent " << i;
        ASSERT_EQ( 0, std::memcmp( a[i].x, b[i].x, sizeof a[i].x ) ) << "agent " << a[i].id;
        ASSERT_EQ( 0, std::memcmp( &a[i].diameter, &b[i].diameter, sizeof( Scalar ) ) ) << "agent " << a[i].id;
        ASSERT_EQ( 0, std::memcmp( &a[i].adherence, &b[i].adherence, sizeof( Scalar ) ) ) << "agent " << a[i].id;
        ASSERT_EQ( 0, std::memcmp( &a[i].density, &b[i].density, sizeof( Scalar ) ) ) << "agent " << a[i].id;
    }
}

template <class Scalar>
void check_resumed_run_is_the_same_run( Boundary boundary, const std::string& name )
{
    TEST_EXECSPACE exec;
    const Scenario<Scalar> setup( boundary );
    const int half = 7;
    const std::string path = file_for( name );

    // Uninterrupted: 2N steps, with divisions and sorts in both halves.
    auto full = setup.make();
    int divisions[2] = { 0, 0 }, sorts[2] = { 0, 0 };
    for ( int s = 0; s < 2 * half; ++s )
    {
        const auto r = full.step( exec );
        divisions[s / half] += r.divisions;
        sorts[s / half] += r.sorted ? 1 : 0;
    }
    ASSERT_GT( divisions[0], 0 ) << "no division before the checkpoint";
    ASSERT_GT( divisions[1], 0 ) << "no division after the checkpoint";
    ASSERT_GT( sorts[1], 0 );

    // N steps and a checkpoint.
    io::CheckpointEntries at_checkpoint;
    {
        auto first = setup.make();
        for ( int s = 0; s < half; ++s )
            first.step( exec );
        io::write_checkpoint( first, path );
        at_checkpoint = entries_of( first );
        ASSERT_TRUE( first.mechanics().state().has_grid );
    }
    // A fresh driver of the same parameters with other agents (fewer, other diameters and capacity):
    // everything comes from the file.
    auto resumed = setup.make( 4, Scalar( 25 ) );
    resumed.step( exec );
    io::restart_from_checkpoint( resumed, path );
    EXPECT_EQ( resumed.steps_done(), half );
    EXPECT_EQ( io::first_difference( at_checkpoint, entries_of( resumed ) ), "" ) << "the restart changed the state";
    int divisions_after = 0;
    for ( int s = half; s < 2 * half; ++s )
    {
        const auto r = resumed.step( exec );
        EXPECT_EQ( r.step, s );
        divisions_after += r.divisions;
    }
    EXPECT_EQ( divisions_after, divisions[1] );
    EXPECT_EQ( resumed.steps_done(), full.steps_done() );
    EXPECT_EQ( io::first_difference( entries_of( full ), entries_of( resumed ) ), "" );
    EXPECT_EQ( resumed.agents().next_id(), full.agents().next_id() );
    expect_same_agents( morula_test_mechanics::to_host( full.agents() ),
                        morula_test_mechanics::to_host( resumed.agents() ) );
    std::remove( path.c_str() );
}

// The open box's grid follows the agents (its box and cells only grow): the restart must take them.
TEST( TEST_CATEGORY, proliferation_resumed_run_is_bit_identical_open_double )
{
    check_resumed_run_is_the_same_run<double>( Boundary::open, "open_double" );
}

TEST( TEST_CATEGORY, proliferation_resumed_run_is_bit_identical_open_float )
{
    check_resumed_run_is_the_same_run<float>( Boundary::open, "open_float" );
}

TEST( TEST_CATEGORY, proliferation_resumed_run_is_bit_identical_periodic_double )
{
    check_resumed_run_is_the_same_run<double>( Boundary::periodic, "periodic_double" );
}

TEST( TEST_CATEGORY, proliferation_resumed_run_is_bit_identical_closed_float )
{
    check_resumed_run_is_the_same_run<float>( Boundary::closed, "closed_float" );
}

// The static benchmark (no growth, locked agents) and a checkpoint before the first step.
TEST( TEST_CATEGORY, proliferation_checkpoint_before_the_first_step_and_without_growth )
{
    TEST_EXECSPACE exec;
    Scenario<double> setup( Boundary::periodic );
    setup.gp.reset();
    setup.mp.sort_every = 2;
    const std::string path = file_for( "static" );
    auto full = setup.make();
    auto first = setup.make();
    io::write_checkpoint( first, path );
    auto resumed = setup.make( 3 );
    io::restart_from_checkpoint( resumed, path );
    EXPECT_EQ( resumed.steps_done(), 0 );
    EXPECT_FALSE( resumed.mechanics().state().has_grid );
    for ( int s = 0; s < 5; ++s )
    {
        full.step( exec );
        resumed.step( exec );
    }
    EXPECT_EQ( io::first_difference( entries_of( full ), entries_of( resumed ) ), "" );
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, proliferation_restart_refuses_other_models_parameters_and_precision )
{
    TEST_EXECSPACE exec;
    const Scenario<double> setup( Boundary::open );
    const std::string path = file_for( "refusals" );
    auto model = setup.make( 3 );
    model.step( exec );
    model.step( exec );
    io::write_checkpoint( model, path );

    // Another model's checkpoint.
    const std::string other = file_for( "refusals_lattice" );
    io::CheckpointWriter lattice( "lattice" );
    lattice.put_scalar( "step", 2LL );
    lattice.write( other );
    auto fresh = setup.make( 3 );
    expect_input_error( [&] { io::restart_from_checkpoint( fresh, other ); }, { other, "'lattice'", "'proliferation'" } );

    // Other parameters, named with both values; the driver is left as it was.
    {
        Scenario<double> changed = setup;
        changed.mp.force.repulsion = 2.5;
        auto m = changed.make( 3 );
        expect_input_error( [&] { io::restart_from_checkpoint( m, path ); },
                            { path, "parameter 'repulsion' is 2 in the checkpoint but 2.5 in this run" } );
        EXPECT_EQ( m.steps_done(), 0 );
        EXPECT_EQ( m.agents().size(), 27u );
    }
    {
        Scenario<double> changed = setup;
        changed.gp->seed = 7;
        auto m = changed.make( 3 );
        expect_input_error( [&] { io::restart_from_checkpoint( m, path ); },
                            { path, "parameter 'seed' is 12345 in the checkpoint but 7 in this run" } );
    }
    {
        Scenario<double> changed = setup;
        changed.mp.sort_every = 1;
        auto m = changed.make( 3 );
        expect_input_error( [&] { io::restart_from_checkpoint( m, path ); },
                            { path, "parameter 'sort_every' is 3 in the checkpoint but 1 in this run" } );
    }
    {
        Scenario<double> changed( Boundary::closed );
        auto m = changed.make( 3 );
        expect_input_error( [&] { io::restart_from_checkpoint( m, path ); },
                            { path, "parameter 'boundary' is open,open,open in the checkpoint but closed,closed,closed" } );
    }
    {
        Scenario<double> changed = setup;
        changed.gp.reset();
        auto m = changed.make( 3 );
        expect_input_error( [&] { io::restart_from_checkpoint( m, path ); },
                            { path, "growth and division are on in the checkpoint but off in this run" } );
    }
    // Another precision.
    {
        const Scenario<float> single( Boundary::open );
        auto m = single.make( 3 );
        expect_input_error( [&] { io::restart_from_checkpoint( m, path ); },
                            { path, "float64", "precision is float32" } );
    }
    // A next id that new agents would reuse.
    {
        auto entries = io::detail::read_checkpoint_file( path ); // the header included
        const std::int64_t three = 3;
        std::memcpy( entries.at( "agents/next_id" ).bytes.data(), &three, sizeof three );
        const std::string bad_path = file_for( "refusals_next_id" );
        io::detail::write_checkpoint_file( bad_path, entries );
        auto m = setup.make( 3 );
        expect_input_error( [&] { io::restart_from_checkpoint( m, bad_path ); },
                            { bad_path, "agents/next_id = 3 is not above the largest id" } );
        std::remove( bad_path.c_str() );
    }
    std::remove( path.c_str() );
    std::remove( other.c_str() );
}

#endif // MORULA_HAVE_HDF5

} // namespace morula_test_proliferation_checkpoint
