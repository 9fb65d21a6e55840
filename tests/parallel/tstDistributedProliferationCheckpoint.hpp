// mechanics::Proliferation over the ranks: checkpoint and restart: one file, written by rank 0 in a single rank's
// layout. On the same ranks a resumed run is the uninterrupted one bit for bit; on another rank count
// (one rank, other ranks per axis) and between one rank and several it continues to round-off, with the
// same ids and diameters; bad checkpoints are refused on every rank alike.
#include <morula/Config.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/Proliferation.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace morula_test_distributed_proliferation_checkpoint
{
using namespace morula;

static_assert( io::is_checkpointable_v<mechanics::Proliferation<double, TEST_MEMSPACE>> );
static_assert( io::is_checkpointable_v<mechanics::Proliferation<float, TEST_MEMSPACE>> );

#if MORULA_HAVE_HDF5

int world_rank()
{
    int rank = 0;
    MPI_Comm_rank( MPI_COMM_WORLD, &rank );
    return rank;
}

int world_size()
{
    int size = 1;
    MPI_Comm_size( MPI_COMM_WORLD, &size );
    return size;
}

// One name for every rank of this run, unique per backend, rank count and transport (ctest may run
// those side by side).
std::string file_for( const std::string& test )
{
    const char* transport = std::getenv( "MORULA_TRANSPORT" );
    return "morula_distributed_proliferation_checkpoint_" + test + "_" + TEST_EXECSPACE::name() + "_np" +
           std::to_string( world_size() ) + "_" + ( transport ? transport : "automatic" ) + ".h5";
}

// Whether `f` throws core::InputError containing every part, on this rank.
template <class F>
void expect_input_error( F&& f, const std::vector<std::string>& parts )
{
    try
    {
        f();
        ADD_FAILURE() << "no exception";
    }
    catch ( const core::InputError& e )
    {
        for ( const auto& p : parts )
            EXPECT_NE( std::string( e.what() ).find( p ), std::string::npos ) << e.what() << "\n  lacks: " << p;
    }
}

using Agents = mechanics::SphereAgents<double, TEST_MEMSPACE>;

struct Scenario
{
    core::Box<double> box;
    mechanics::MechanicsParameters<double> mp;
    std::optional<mechanics::GrowthParameters<double>> gp;
    double halo = 36; // the largest diameter before division (about 30.05) plus two radius extensions

    explicit Scenario( core::Boundary boundary )
        : box( { -10, -10, -10 }, { 110, 110, 110 }, boundary )
    {
        mp.sort_every = 3; // the checkpoint after 7 steps falls between two sorts
        mechanics::GrowthParameters<double> g;
        g.growth_rate = 60000;
        g.seed = 99;
        gp = g;
    }

    // A crowded lattice with diameters spread so that agents divide at many different steps; with
    // all_on_rank0, ranks other than 0 start empty (the first step hands the agents out).
    Agents agents( int per_axis, double first_diameter, bool all_on_rank0 ) const
    {
        TEST_EXECSPACE exec;
        mechanics::AgentProperties<double> props;
        Agents a = mechanics::lattice_agents<double, TEST_MEMSPACE>( exec, per_axis, 20.0, props );
        auto d = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.diameters() );
        for ( std::size_t i = 0; i < a.size(); ++i )
            d( i ) = first_diameter + 0.25 * double( ( i * 7 ) % 13 );
        Kokkos::deep_copy( a.diameters(), d );
        if ( all_on_rank0 && world_rank() != 0 )
            a.resize( 0 );
        return a;
    }

    mechanics::Proliferation<double, TEST_MEMSPACE>
    distributed( MPI_Comm comm, std::array<int, 3> dims = { 0, 0, 0 }, int per_axis = 6,
                 double first_diameter = 27 ) const
    {
        const parallel::CartesianDecomposition<double> dec( comm, box, halo, dims );
        int rank = 0;
        MPI_Comm_rank( comm, &rank );
        Agents a = agents( per_axis, first_diameter, false );
        if ( rank != 0 )
            a.resize( 0 );
        return mechanics::Proliferation<double, TEST_MEMSPACE>( a, dec, mp, gp );
    }

    mechanics::Proliferation<double, TEST_MEMSPACE> single( int per_axis = 6, double first_diameter = 27 ) const
    {
        return mechanics::Proliferation<double, TEST_MEMSPACE>( agents( per_axis, first_diameter, false ), box, mp, gp );
    }
};

struct AgentState
{
    double x[3];
    double diameter;
};

// The owned agents of every rank of `comm` by id, on every rank (an id seen twice fails the test).
std::map<std::int64_t, AgentState> gather_by_id( MPI_Comm comm, const Agents& a, std::size_t n )
{
    auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.positions() );
    auto d = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.diameters() );
    auto id = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.ids() );
    std::vector<double> mine;
    for ( std::size_t i = 0; i < n; ++i )
        mine.insert( mine.end(), { double( id( i ) ), x( i, 0 ), x( i, 1 ), x( i, 2 ), d( i ) } );
    int size = 1;
    MPI_Comm_size( comm, &size );
    int count = int( mine.size() );
    std::vector<int> counts( size ), displs( size, 0 );
    MPI_Allgather( &count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm );
    for ( int r = 1; r < size; ++r )
        displs[r] = displs[r - 1] + counts[r - 1];
    std::vector<double> all( std::size_t( displs.back() + counts.back() ) );
    MPI_Allgatherv( mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, comm );
    std::map<std::int64_t, AgentState> out;
    for ( std::size_t k = 0; k < all.size(); k += 5 )
    {
        const auto key = std::int64_t( all[k] );
        EXPECT_EQ( out.count( key ), 0u ) << "agent " << key << " is owned twice";
        out[key] = { { all[k + 1], all[k + 2], all[k + 3] }, all[k + 4] };
    }
    return out;
}

// Same ids and diameters; positions to `tolerance` along closed and open axes, and across a periodic
// one by the minimum image (a distributed run leaves periodic positions unwrapped until it migrates).
void expect_same_agents( const std::map<std::int64_t, AgentState>& expected,
                         const std::map<std::int64_t, AgentState>& got, const core::Box<double>& box,
                         double tolerance )
{
    ASSERT_EQ( got.size(), expected.size() );
    double worst = 0;
    for ( const auto& [id, e] : expected )
    {
        const auto it = got.find( id );
        ASSERT_NE( it, got.end() ) << "agent " << id << " is missing";
        EXPECT_EQ( it->second.diameter, e.diameter ) << "agent " << id;
        for ( int a = 0; a < 3; ++a )
        {
            double dx = it->second.x[a] - e.x[a];
            if ( box.is_periodic( a ) )
                dx -= box.length( a ) * std::round( dx / box.length( a ) );
            worst = std::max( worst, std::abs( dx ) );
        }
    }
    EXPECT_LE( worst, tolerance ) << "largest position difference";
}

// Rank 0's checkpoint entries of a distributed run (the other ranks' are empty).
io::CheckpointEntries entries_of( const mechanics::Proliferation<double, TEST_MEMSPACE>& model )
{
    io::CheckpointWriter out( model.checkpoint_model );
    model.checkpoint( out );
    return out.entries();
}

constexpr int half = 7;

template <class Model>
void run( Model& model, int steps )
{
    TEST_EXECSPACE exec;
    for ( int s = 0; s < steps; ++s )
        model.step( exec );
}

// On the same ranks the resumed run is the uninterrupted one: every entry of the checkpoint (every
// rank's agents in their order, grids, counters) bit for bit.
void check_same_ranks( core::Boundary boundary, const std::string& name )
{
    const Scenario setup( boundary );
    const std::string path = file_for( name );
    auto full = setup.distributed( MPI_COMM_WORLD );
    TEST_EXECSPACE exec;
    long long divisions[2] = { 0, 0 };
    for ( int s = 0; s < 2 * half; ++s )
    {
        full.step( exec );
        divisions[s / half] += full.all_divisions();
    }
    ASSERT_GT( divisions[0], 0 ) << "no division before the checkpoint";
    ASSERT_GT( divisions[1], 0 ) << "no division after the checkpoint";

    auto first = setup.distributed( MPI_COMM_WORLD );
    run( first, half );
    first.write_checkpoint( path );
    const auto at_checkpoint = entries_of( first );

    // Another initial state (fewer agents, other diameters), stepped once: the file decides everything.
    auto resumed = setup.distributed( MPI_COMM_WORLD, { 0, 0, 0 }, 4, 25 );
    run( resumed, 1 );
    io::restart_from_checkpoint( resumed, path );
    EXPECT_EQ( resumed.steps_done(), half );
    EXPECT_EQ( io::first_difference( at_checkpoint, entries_of( resumed ) ), "" ) << "the restart changed the state";
    EXPECT_EQ( resumed.all_agents(), first.all_agents() );
    run( resumed, half );
    EXPECT_EQ( resumed.steps_done(), full.steps_done() );
    EXPECT_EQ( io::first_difference( entries_of( full ), entries_of( resumed ) ), "" );
    const auto a = gather_by_id( MPI_COMM_WORLD, full.agents(), full.num_owned() );
    const auto b = gather_by_id( MPI_COMM_WORLD, resumed.agents(), resumed.num_owned() );
    expect_same_agents( a, b, setup.box, 0.0 );
    MPI_Barrier( MPI_COMM_WORLD );
    if ( world_rank() == 0 )
        std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, distributed_proliferation_resumed_on_the_same_ranks_is_bit_identical_open )
{
    check_same_ranks( core::Boundary::open, "same_open" );
}

TEST( TEST_CATEGORY, distributed_proliferation_resumed_on_the_same_ranks_is_bit_identical_periodic )
{
    check_same_ranks( core::Boundary::periodic, "same_periodic" );
}

// The static benchmark's shape (no growth; ghosts stay in the agents between steps), checkpointed
// before the first step and after a few.
TEST( TEST_CATEGORY, distributed_proliferation_resumed_without_growth_is_bit_identical )
{
    Scenario setup( core::Boundary::periodic );
    setup.gp.reset();
    setup.mp.sort_every = 2;
    const std::string path = file_for( "static" );
    auto full = setup.distributed( MPI_COMM_WORLD );
    auto first = setup.distributed( MPI_COMM_WORLD );
    first.write_checkpoint( path );
    auto resumed = setup.distributed( MPI_COMM_WORLD, { 0, 0, 0 }, 3 );
    io::restart_from_checkpoint( resumed, path );
    run( full, 3 );
    run( resumed, 3 );
    EXPECT_EQ( io::first_difference( entries_of( full ), entries_of( resumed ) ), "" );
    resumed.write_checkpoint( path );
    auto again = setup.distributed( MPI_COMM_WORLD );
    io::restart_from_checkpoint( again, path );
    run( full, 2 );
    run( again, 2 );
    EXPECT_EQ( io::first_difference( entries_of( full ), entries_of( again ) ), "" );
    MPI_Barrier( MPI_COMM_WORLD );
    if ( world_rank() == 0 )
        std::remove( path.c_str() );
}

// Another rank count: the checkpoint of this run restarted on one rank (each rank alone, over
// MPI_COMM_SELF: distributed and single-rank drivers), on other ranks per axis, and a single rank's
// checkpoint restarted on these ranks. Ids and diameters exact, positions to round-off.
TEST( TEST_CATEGORY, distributed_proliferation_restarts_on_other_rank_counts_to_round_off )
{
    const Scenario setup( core::Boundary::open );
    const std::string path = file_for( "other_ranks" );
    const double tolerance = 1e-8; // as distributed_proliferation_matches_single_rank
    auto full = setup.distributed( MPI_COMM_WORLD );
    run( full, 2 * half );
    const auto expected = gather_by_id( MPI_COMM_WORLD, full.agents(), full.num_owned() );

    auto first = setup.distributed( MPI_COMM_WORLD );
    run( first, half );
    first.write_checkpoint( path );

    {
        SCOPED_TRACE( "on one rank, distributed" );
        auto alone = setup.distributed( MPI_COMM_SELF, { 0, 0, 0 }, 3 );
        io::restart_from_checkpoint( alone, path );
        run( alone, half );
        expect_same_agents( expected, gather_by_id( MPI_COMM_SELF, alone.agents(), alone.num_owned() ), setup.box,
                            tolerance );
    }
    {
        SCOPED_TRACE( "on one rank, mechanics::Proliferation" );
        auto single = setup.single( 3 );
        io::restart_from_checkpoint( single, path );
        EXPECT_EQ( single.steps_done(), half );
        run( single, half );
        expect_same_agents( expected, gather_by_id( MPI_COMM_SELF, single.agents(), single.agents().size() ),
                            setup.box, tolerance );
    }
    if ( world_size() > 1 )
    {
        SCOPED_TRACE( "on other ranks per axis" );
        const parallel::CartesianDecomposition<double> probe( MPI_COMM_WORLD, setup.box, setup.halo );
        const auto d = probe.dims();
        const std::array<int, 3> other{ d[2], d[0], d[1] }; // 2 x 1 x 1 -> 1 x 2 x 1, 2 x 2 x 1 -> 1 x 2 x 2
        auto moved = setup.distributed( MPI_COMM_WORLD, other, 3 );
        io::restart_from_checkpoint( moved, path );
        run( moved, half );
        expect_same_agents( expected, gather_by_id( MPI_COMM_WORLD, moved.agents(), moved.num_owned() ), setup.box,
                            tolerance );
    }
    MPI_Barrier( MPI_COMM_WORLD );
    {
        SCOPED_TRACE( "a single rank's checkpoint on these ranks" );
        const std::string single_path = file_for( "other_ranks_single" );
        auto single = setup.single();
        run( single, half );
        if ( world_rank() == 0 )
            io::write_checkpoint( single, single_path );
        MPI_Barrier( MPI_COMM_WORLD );
        auto resumed = setup.distributed( MPI_COMM_WORLD, { 0, 0, 0 }, 3 );
        io::restart_from_checkpoint( resumed, single_path );
        run( resumed, half );
        run( single, half );
        expect_same_agents( gather_by_id( MPI_COMM_SELF, single.agents(), single.agents().size() ),
                            gather_by_id( MPI_COMM_WORLD, resumed.agents(), resumed.num_owned() ), setup.box,
                            tolerance );
        MPI_Barrier( MPI_COMM_WORLD );
        if ( world_rank() == 0 )
            std::remove( single_path.c_str() );
    }
    if ( world_rank() == 0 )
        std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, distributed_proliferation_restart_refuses_other_parameters_on_every_rank )
{
    const Scenario setup( core::Boundary::closed );
    const std::string path = file_for( "refusals" );
    auto model = setup.distributed( MPI_COMM_WORLD, { 0, 0, 0 }, 3 );
    run( model, 2 );
    model.write_checkpoint( path );
    Scenario changed = setup;
    changed.gp->division_diameter = 31;
    auto other = changed.distributed( MPI_COMM_WORLD, { 0, 0, 0 }, 3 );
    expect_input_error( [&] { io::restart_from_checkpoint( other, path ); },
                        { path, "parameter 'division_diameter' is 30.050000000000001 in the checkpoint but 31 in this run" } );
    EXPECT_EQ( other.steps_done(), 0 );
    // A write that fails on rank 0 fails on every rank.
    EXPECT_THROW( model.write_checkpoint( "/nonexistent_folder_for_morula_tests/run.h5" ), core::IoError );
    MPI_Barrier( MPI_COMM_WORLD );
    if ( world_rank() == 0 )
        std::remove( path.c_str() );
}

#endif // MORULA_HAVE_HDF5

} // namespace morula_test_distributed_proliferation_checkpoint
