// mechanics::Proliferation over the ranks of a decomposition: growth, division and mechanics give a single
// rank's agents: the same ids and diameters exactly, the same positions to round-off, every agent once.
#include <morula/core/Box.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/Proliferation.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

namespace morula_test_distributed_proliferation
{
using namespace morula;

struct AgentState
{
    double x[3];
    double diameter;
};

// Every rank's agents [0, n) gathered on every rank, by id (an id seen twice fails the test).
template <class Agents>
std::map<std::int64_t, AgentState> gather_by_id( const Agents& a, std::size_t n, bool& duplicate )
{
    auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.positions() );
    auto d = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.diameters() );
    auto id = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.ids() );
    std::vector<double> mine;
    for ( std::size_t i = 0; i < n; ++i )
        mine.insert( mine.end(), { double( id( i ) ), double( x( i, 0 ) ), double( x( i, 1 ) ), double( x( i, 2 ) ),
                                   double( d( i ) ) } );
    int size = 1;
    MPI_Comm_size( MPI_COMM_WORLD, &size );
    int count = int( mine.size() );
    std::vector<int> counts( size ), displs( size, 0 );
    MPI_Allgather( &count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD );
    for ( int r = 1; r < size; ++r )
        displs[r] = displs[r - 1] + counts[r - 1];
    std::vector<double> all( std::size_t( displs.back() + counts.back() ) );
    MPI_Allgatherv( mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE,
                    MPI_COMM_WORLD );
    std::map<std::int64_t, AgentState> out;
    duplicate = false;
    for ( std::size_t k = 0; k < all.size(); k += 5 )
    {
        const auto key = std::int64_t( all[k] );
        duplicate = duplicate || out.count( key );
        out[key] = { { all[k + 1], all[k + 2], all[k + 3] }, all[k + 4] };
    }
    return out;
}

// BioDynaMo's benchmark A at a small size: a cube of cells that grow and divide; rank 0 starts with
// all of them, the first migration hands them out.
void check_division_against_single_rank( core::Boundary boundary, int sort_every = 1 )
{
    TEST_EXECSPACE exec;
    using Agents = mechanics::SphereAgents<double, TEST_MEMSPACE>;
    const int per_axis = 6;
    const double spacing = 20;
    mechanics::AgentProperties<double> props;
    mechanics::MechanicsParameters<double> mp;
    mp.max_displacement = 3;
    mp.sort_every = sort_every;
    mechanics::GrowthParameters<double> gp;
    gp.growth_rate = 60000; // divisions from the second step on
    const double extent = spacing * ( per_axis - 1 );
    const core::Box<double> box( { -10, -10, -10 }, { extent + 10, extent + 10, extent + 10 }, boundary );

    Agents single_agents = mechanics::lattice_agents<double, TEST_MEMSPACE>( exec, per_axis, spacing, props );
    mechanics::Proliferation<double, TEST_MEMSPACE> single( single_agents, box, mp, gp );

    int rank = 0;
    MPI_Comm_rank( MPI_COMM_WORLD, &rank );
    Agents agents = mechanics::lattice_agents<double, TEST_MEMSPACE>( exec, per_axis, spacing, props );
    if ( rank != 0 )
        agents.resize( 0 );
    // halo: the largest diameter reached before division (about 30.05) plus two radius extensions
    const parallel::CartesianDecomposition<double> dec( MPI_COMM_WORLD, box, 36.0 );
    mechanics::Proliferation<double, TEST_MEMSPACE> dist( agents, dec, mp, gp );
    static_assert( core::is_driver_v<decltype( dist ), TEST_EXECSPACE> );
    int size = 1;
    MPI_Comm_size( MPI_COMM_WORLD, &size );
    ASSERT_EQ( dist.size(), size );
    ASSERT_EQ( dist.rank(), rank );
    // One rank is the one-rank driver; several ranks run the distributed mechanics.
    ASSERT_EQ( dist.distributed_mechanics() == nullptr, size == 1 );
    // One phase table on one rank and many: a report reads the same indices whatever the rank count.
    ASSERT_EQ( dist.times().num_phases(), single.times().num_phases() );
    for ( int p = 0; p < single.times().num_phases(); ++p )
        ASSERT_EQ( dist.times().phase_name( p ), single.times().phase_name( p ) );
    static_assert( core::is_driver_v<decltype( single ), TEST_EXECSPACE> );
    single.set_count_interactions( true );
    dist.set_count_interactions( true );

    long long divisions = 0;
    int sorts = 0;
    const int steps = 12;
    for ( int s = 0; s < steps; ++s )
    {
        const auto r = single.step( exec );
        const auto d = dist.step( exec, s % 2 == 1 ); // timed or not, the same result
        ASSERT_EQ( r.step, s );
        ASSERT_EQ( d.step, s );
        ASSERT_EQ( d.sorted, r.sorted ) << "step " << s; // the same sort cadence, reported alike
        // Each rank counts its owned agents' pairs, ghosts included: the sum is the single rank's count.
        long long all_interactions = 0;
        MPI_Allreduce( &d.interactions, &all_interactions, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD );
        ASSERT_EQ( all_interactions, r.interactions ) << "step " << s;
        ASSERT_GT( r.interactions, 0 ) << "step " << s;
        sorts += r.sorted;
        divisions += r.divisions;
        ASSERT_EQ( dist.all_divisions(), r.divisions ) << "step " << s;
        ASSERT_EQ( dist.all_agents(), (long long)single.agents().size() ) << "step " << s;
    }
    ASSERT_GT( divisions, 100 ) << "the case did not exercise division";
    EXPECT_EQ( sorts, ( steps + sort_every - 1 ) / sort_every ) << "steps that sorted";
    bool dup_single = false, dup_dist = false;
    const auto expected = gather_by_id( single.agents(), single.agents().size(), dup_single );
    const auto got = gather_by_id( dist.agents(), dist.num_owned(), dup_dist );
    ASSERT_FALSE( dup_dist ) << "an agent is owned by two ranks";
    ASSERT_EQ( got.size(), expected.size() );
    double worst = 0;
    for ( const auto& [id, e] : expected )
    {
        const auto it = got.find( id );
        ASSERT_NE( it, got.end() ) << "agent " << id << " is missing";
        EXPECT_EQ( it->second.diameter, e.diameter ) << "agent " << id;
        for ( int a = 0; a < 3; ++a )
            worst = std::max( worst, std::abs( it->second.x[a] - e.x[a] ) );
    }
    // Round-off only: forces are summed in another order on each rank's grid.
    EXPECT_LT( worst, 1e-8 ) << "largest position difference";
    // Every other step was timed, division included.
    EXPECT_EQ( dist.steps_done(), steps );
    EXPECT_EQ( dist.times().steps(), steps / 2 );
    using Phase = mechanics::ProliferationPhase;
    EXPECT_GT( dist.times().seconds( Phase::division ), 0.0 );
    EXPECT_GT( dist.times().seconds( "forces" ), 0.0 );
    if ( size > 1 )
        // The exchange is timed into the driver's own table (not its operator's).
        EXPECT_GT( Phase::communication( dist.times() ), 0.0 );
    else
        EXPECT_EQ( Phase::communication( dist.times() ), 0.0 );
}

TEST( TEST_CATEGORY, distributed_proliferation_matches_single_rank_open_box )
{
    check_division_against_single_rank( core::Boundary::open );
}

TEST( TEST_CATEGORY, distributed_proliferation_matches_single_rank_closed_box )
{
    check_division_against_single_rank( core::Boundary::closed );
}

// Sorting every third step: the steps that sort, and the report's `sorted`, are the single rank's.
TEST( TEST_CATEGORY, distributed_proliferation_sorts_when_single_rank_does )
{
    check_division_against_single_rank( core::Boundary::closed, 3 );
}

} // namespace morula_test_distributed_proliferation
