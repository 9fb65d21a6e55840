#include <mechanics/MechanicsTestUtils.hpp>

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/mechanics/SphereMechanics.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/DistributedSphereMechanics.hpp>

#include <ParallelTestUtils.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace morula_test_distributed_mechanics
{
using morula::core::Boundary;
using morula::core::Box;
using morula::mechanics::MechanicsParameters;
using morula::mechanics::SphereMechanics;
using morula::parallel::CartesianDecomposition;
using morula::parallel::DistributedSphereMechanics;
using morula_test_mechanics::HostAgent;
using namespace morula_test_parallel;

using Agents = morula::mechanics::SphereAgents<double, TEST_MEMSPACE>;

// Fields other than the position are functions of the id, so that a field that did not travel with
// its agent shows.
double diameter_of( std::int64_t id ) { return 1.5 + 0.15 * static_cast<double>( id % 7 ); }
double adherence_of( std::int64_t id ) { return 1e-3 * static_cast<double>( id % 5 ); }
double density_of( std::int64_t id ) { return 0.02 + 0.002 * static_cast<double>( id % 3 ); }

// Stiff enough that overlapping agents move ~0.1-1 per step (light agents), stable enough that
// round-off does not grow much over the run (the move per unit overlap stays well below 1).
MechanicsParameters<double> parameters( double max_displacement = 1.0 )
{
    MechanicsParameters<double> p;
    p.max_displacement = max_displacement;
    return p;
}

// Clusters of 8 overlapping agents, a third of them centred exactly on a plane where two ranks meet or
// on a periodic face of the box, so that agents cross both from the first steps.
std::vector<HostAgent<double>> clusters( const Box<double>& box, const std::vector<double> planes[3],
                                         int n_clusters, double spread, unsigned seed )
{
    std::mt19937_64 rng( seed );
    std::vector<HostAgent<double>> agents;
    for ( int c = 0; c < n_clusters; ++c )
    {
        double centre[3];
        for ( int a = 0; a < 3; ++a )
        {
            const double lo = box.lo[a] + spread, hi = box.hi[a] - spread;
            centre[a] = std::uniform_real_distribution<double>( lo, hi )( rng );
        }
        const int axis = c % 3;
        if ( c % 3 == 0 && !planes[axis].empty() )
            centre[axis] = planes[axis][rng() % planes[axis].size()];
        for ( int k = 0; k < 8; ++k )
        {
            HostAgent<double> h{};
            h.id = static_cast<std::int64_t>( agents.size() );
            for ( int a = 0; a < 3; ++a )
            {
                double v = centre[a] + std::uniform_real_distribution<double>( -spread, spread )( rng );
                if ( box.is_periodic( a ) )
                    v -= ( box.hi[a] - box.lo[a] ) * std::floor( ( v - box.lo[a] ) / ( box.hi[a] - box.lo[a] ) );
                else
                    v = std::clamp( v, box.lo[a], box.hi[a] );
                h.x[a] = v;
            }
            h.diameter = diameter_of( h.id );
            h.adherence = adherence_of( h.id );
            h.density = density_of( h.id );
            agents.push_back( h );
        }
    }
    return agents;
}

// The single-rank model: positions by id after `steps` steps.
std::map<std::int64_t, HostAgent<double>> single_rank( const Box<double>& box,
                                                       const MechanicsParameters<double>& params,
                                                       const std::vector<HostAgent<double>>& start,
                                                       int steps )
{
    TEST_EXECSPACE exec;
    auto agents = morula_test_mechanics::from_host<double, TEST_MEMSPACE>( start );
    SphereMechanics<double, TEST_MEMSPACE> mech( box, params );
    for ( int s = 0; s < steps; ++s )
    {
        mech.update_grid( exec, agents );
        mech.compute_displacements( exec, agents );
        mech.apply_displacements( exec, agents );
    }
    exec.fence();
    return morula_test_mechanics::by_id( morula_test_mechanics::to_host( agents ) );
}

// Owned agents of every rank, as (rank, agent).
std::vector<std::pair<int, HostAgent<double>>> gather_owned( const Agents& agents, std::size_t n_owned )
{
    auto host = morula_test_mechanics::to_host( agents );
    host.resize( n_owned );
    std::vector<HostParticle<double>> mine;
    for ( const auto& h : host )
        mine.push_back( { h.id, { h.x[0], h.x[1], h.x[2] } } );
    // Fields checked here, locally: every rank holds its own agents' fields.
    int bad = 0;
    for ( const auto& h : host )
        if ( h.diameter != diameter_of( h.id ) || h.adherence != adherence_of( h.id ) ||
             h.density != density_of( h.id ) )
            ++bad;
    EXPECT_EQ( bad, 0 ) << "fields that did not travel with their agent";
    std::vector<std::pair<int, HostAgent<double>>> out;
    for ( const auto& [r, p] : allgather( MPI_COMM_WORLD, mine ) )
    {
        HostAgent<double> h{};
        h.id = p.id;
        for ( int a = 0; a < 3; ++a )
            h.x[a] = p.x[a];
        out.push_back( { r, h } );
    }
    return out;
}

struct RunOptions
{
    int steps = 30;
    int rebuild_every = 1;
    double halo_width = 6.0;
    double max_displacement = 1.0;
    std::array<int, 3> dims{ 0, 0, 0 };
    // Give every agent to this rank at the start (-1: agent id % size), anywhere in the box: the first
    // rebuild migrates them.
    int start_rank = -1;
    // This rank must own no agent at any step (-1: none).
    int empty_rank = -1;
    // A rank's own periodic images across an axis with one rank: minimum image (default) or ghosts.
    morula::parallel::PeriodicImages images = morula::parallel::PeriodicImages::minimum_image;
    // Agents must have crossed a periodic face and changed rank.
    bool expect_crossings = true;
    // Cell-order sort every this many steps (rebuilds or not).
    int sort_every = 1;
    // Which of the ghost exchange and the owned forces a rebuild step starts first.
    morula::parallel::OverlapOrder order = morula::parallel::OverlapOrder::automatic;
};

/*
  Runs the distributed model and the single-rank one from the same agents and compares the positions
  per id. Not bitwise: each step's forces come from the same positions and the same neighbour sets in
  both runs, but the rank-local grids visit the neighbours in another order than the global grid
  (floating-point sums are not associative), and the global grid forms periodic differences by the
  minimum image of x_i - x_j where a ghost carries x_j + L rounded to a double. Each differs by a few
  ulps per step; the stable steps used here (move per unit overlap well below 1) keep the growth small,
  so 1e-10 absolute (box edges of 20-80: ~1e4-1e5 ulps of the largest coordinates) holds with a
  margin of 100 and more. Observed with 2 and 4 ranks: 1e-13 to 1e-12 (the printed maximum). A
  missing ghost or a wrong periodic image gives errors of the order of the box instead.
*/
void check_against_single_rank( const Box<double>& box, const std::vector<HostAgent<double>>& start,
                                const RunOptions& opt )
{
    const double tolerance = 1e-10;
    const int me = comm_rank(), size = comm_size();
    CartesianDecomposition<double> dec( MPI_COMM_WORLD, box, opt.halo_width, opt.dims );
    auto params = parameters( opt.max_displacement );
    params.sort_every = opt.sort_every;
    const auto reference = single_rank( box, params, start, opt.steps );

    std::vector<HostAgent<double>> mine;
    for ( const auto& h : start )
        if ( opt.start_rank >= 0 ? me == opt.start_rank : h.id % size == me )
            mine.push_back( h );
    auto agents = morula_test_mechanics::from_host<double, TEST_MEMSPACE>( mine );
    TEST_EXECSPACE exec;
    DistributedSphereMechanics<double, TEST_MEMSPACE> dm( dec, params, opt.rebuild_every, opt.images, opt.order );
    const long long n_total = static_cast<long long>( start.size() );
    const long long id_sum = n_total * ( n_total - 1 ) / 2;
    int errors = 0;
    for ( int s = 0; s <= opt.steps; ++s )
    {
        if ( s < opt.steps )
            dm.step( exec, agents );
        else
            dm.rebuild( exec, agents ); // every agent wrapped and on its owner
        // Conservation after every step: count and id checksum of the owned agents.
        auto ids = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), agents.ids() );
        long long local_sum = 0;
        for ( std::size_t i = 0; i < dm.num_owned(); ++i )
            local_sum += ids( i );
        const long long count = sum_all( static_cast<long long>( dm.num_owned() ) );
        const long long sum = sum_all( local_sum );
        if ( count != n_total || sum != id_sum )
            ++errors;
        EXPECT_EQ( count, n_total ) << "step " << s;
        EXPECT_EQ( sum, id_sum ) << "step " << s;
        EXPECT_EQ( agents.size(), dm.num_owned() + dm.halo().num_ghosts() ) << "step " << s;
        if ( me == opt.empty_rank )
            EXPECT_EQ( dm.num_owned(), 0u ) << "step " << s;
        if ( errors > 3 )
            break;
    }

    const auto all = gather_owned( agents, dm.num_owned() );
    ASSERT_EQ( static_cast<long long>( all.size() ), n_total );
    std::map<std::int64_t, int> seen;
    double max_error = 0;
    int outside = 0, rank_changes = 0, wraps = 0;
    for ( const auto& [r, h] : all )
    {
        ++seen[h.id];
        const auto ref = reference.find( h.id );
        ASSERT_NE( ref, reference.end() ) << "unknown id " << h.id;
        const auto& initial = start[h.id];
        for ( int a = 0; a < 3; ++a )
        {
            double d = h.x[a] - ref->second.x[a];
            const double length = box.hi[a] - box.lo[a];
            if ( box.is_periodic( a ) ) // a position within round-off of a face may wrap differently
                d -= length * std::round( d / length );
            max_error = std::max( max_error, std::abs( d ) );
            // Motion per run is far below half the box: a jump that large is a wrap.
            if ( box.is_periodic( a ) && std::abs( ref->second.x[a] - initial.x[a] ) > 0.5 * length )
                ++wraps;
        }
        // Every agent is owned by the rank whose subdomain holds it.
        if ( dec.owner()( h.x[0], h.x[1], h.x[2] ) != r )
            ++outside;
        if ( dec.owner()( initial.x[0], initial.x[1], initial.x[2] ) != r )
            ++rank_changes;
    }
    EXPECT_EQ( seen.size(), static_cast<std::size_t>( n_total ) ) << "ids lost or duplicated";
    EXPECT_EQ( outside, 0 ) << "agents held by a rank that does not own their position";
    EXPECT_LE( max_error, tolerance );
    if ( opt.expect_crossings )
    {
        EXPECT_GT( wraps, 0 ) << "no agent crossed a periodic face";
        if ( size > 1 )
            EXPECT_GT( rank_changes, 0 ) << "no agent changed rank";
    }
    if ( me == 0 )
        std::printf( "  [distributed mechanics] %d ranks (%d x %d x %d), %lld agents, %d steps, rebuild "
                     "every %d, own images as %s: max |x - x_single| = %.3g, %d periodic crossings, %d rank "
                     "changes\n",
                     size, dec.dims()[0], dec.dims()[1], dec.dims()[2], n_total, opt.steps,
                     opt.rebuild_every,
                     opt.images == morula::parallel::PeriodicImages::ghosts ? "ghosts" : "minimum image",
                     max_error, wraps, rank_changes );
}

// Planes where ranks meet, and the periodic faces, for clusters() to put agents on.
void rank_planes( const Box<double>& box, double halo_width, std::array<int, 3> dims,
                  std::vector<double> planes[3] )
{
    CartesianDecomposition<double> dec( MPI_COMM_WORLD, box, halo_width, dims );
    for ( int a = 0; a < 3; ++a )
    {
        planes[a].clear();
        for ( int i = 1; i < dec.dims()[a]; ++i )
            planes[a].push_back( dec.owner().bound( a, i ) );
        if ( box.is_periodic( a ) )
            planes[a].push_back( box.lo[a] );
    }
}

TEST( TEST_CATEGORY, distributed_mechanics_matches_single_rank_periodic )
{
    const Box<double> box( { 0, 0, 0 }, { 40, 40, 40 }, Boundary::periodic );
    for ( const std::array<int, 3> dims : { std::array<int, 3>{ 0, 0, 0 },
                                            std::array<int, 3>{ comm_size(), 1, 1 } } )
    {
        SCOPED_TRACE( "dims " + std::to_string( dims[0] ) + "x" + std::to_string( dims[1] ) + "x" +
                      std::to_string( dims[2] ) );
        for ( const auto images : { morula::parallel::PeriodicImages::minimum_image,
                                    morula::parallel::PeriodicImages::ghosts } )
        {
            RunOptions opt;
            opt.dims = dims;
            opt.images = images;
            std::vector<double> planes[3];
            rank_planes( box, opt.halo_width, dims, planes );
            check_against_single_rank( box, clusters( box, planes, 90, 0.9, 11 ), opt );
        }
    }
}

/*
  One rank in a periodic box (MPI_COMM_SELF on every rank): with minimum images the distributed step
  is the single-rank step, bit for bit (same grid, same sort, same kernels; no ghost, no message),
  and with ghosts it agrees to round-off while every neighbour is this rank's own periodic image (26
  self messages, one copy kernel). Dense clusters on the periodic faces.
*/
void check_one_rank()
{
    using morula::parallel::PeriodicImages;
    const Box<double> box( { 0, 0, 0 }, { 30, 30, 30 }, Boundary::periodic );
    std::vector<double> planes[3] = { { 0.0 }, { 0.0 }, { 0.0 } };
    const auto start = clusters( box, planes, 60, 0.9, 21 );
    const int steps = 25;
    const auto params = parameters();
    const auto reference = single_rank( box, params, start, steps );
    for ( const auto images : { PeriodicImages::minimum_image, PeriodicImages::ghosts } )
    {
        CartesianDecomposition<double> dec( MPI_COMM_SELF, box, 6.0 );
        auto agents = morula_test_mechanics::from_host<double, TEST_MEMSPACE>( start );
        TEST_EXECSPACE exec;
        DistributedSphereMechanics<double, TEST_MEMSPACE> dm( dec, params, 1, images );
        std::size_t ghosts = 0;
        for ( int s = 0; s < steps; ++s )
        {
            dm.step( exec, agents );
            ghosts = std::max( ghosts, dm.halo().num_ghosts() );
        }
        exec.fence();
        auto host = morula_test_mechanics::to_host( agents );
        host.resize( dm.num_owned() );
        ASSERT_EQ( host.size(), start.size() );
        double max_error = 0;
        int differing = 0;
        for ( const auto& h : host )
        {
            const auto& ref = reference.at( h.id );
            for ( int a = 0; a < 3; ++a )
            {
                double d = h.x[a] - ref.x[a];
                differing += d != 0;
                d -= 30.0 * std::round( d / 30.0 );
                max_error = std::max( max_error, std::abs( d ) );
            }
        }
        if ( images == PeriodicImages::minimum_image )
        {
            EXPECT_EQ( ghosts, 0u ) << "one rank with minimum images made ghosts";
            EXPECT_EQ( differing, 0 ) << "one rank with minimum images is not the single-rank step";
        }
        else
        {
            EXPECT_GT( ghosts, 0u ) << "one rank with ghost images made none";
            EXPECT_LE( max_error, 1e-10 ) << "one rank with ghost images";
        }
    }
}

TEST( TEST_CATEGORY, distributed_mechanics_one_rank_is_the_single_rank_step ) { check_one_rank(); }

// Closed walls on x and z (agents stop on them), periodic y.
TEST( TEST_CATEGORY, distributed_mechanics_matches_single_rank_mixed_boundaries )
{
    const Box<double> box( { 0, 0, 0 }, { 40, 20, 20 },
                           { Boundary::closed, Boundary::periodic, Boundary::closed } );
    RunOptions opt;
    opt.dims = { comm_size(), 1, 1 };
    opt.halo_width = 5.5;
    std::vector<double> planes[3];
    rank_planes( box, opt.halo_width, opt.dims, planes );
    planes[0].push_back( 0.0 ); // against a wall
    check_against_single_rank( box, clusters( box, planes, 60, 0.9, 12 ), opt );
}

// Halo::update between rebuilds: the halo is widened by the drift of the steps in between. The owned
// agents are sorted between rebuilds too (every step, and every 3 steps: out of phase with the
// rebuilds), the halo's lists renumbered.
TEST( TEST_CATEGORY, distributed_mechanics_rebuild_every_four_steps )
{
    const Box<double> box( { 0, 0, 0 }, { 40, 40, 40 }, Boundary::periodic );
    for ( const auto& [images, sort_every] :
          { std::pair{ morula::parallel::PeriodicImages::minimum_image, 1 },
            std::pair{ morula::parallel::PeriodicImages::ghosts, 1 },
            std::pair{ morula::parallel::PeriodicImages::minimum_image, 3 } } )
    {
        RunOptions opt;
        opt.sort_every = sort_every;
        opt.rebuild_every = 4;
        opt.max_displacement = 0.5;
        opt.halo_width = 8.5; // > largest diameter 2.4 + 2 x 1.5, + 2 x 3 steps x 0.5
        opt.steps = 40;
        opt.dims = { comm_size(), 1, 1 }; // y and z: one rank each, images by minimum image or ghosts
        opt.images = images;
        std::vector<double> planes[3];
        rank_planes( box, opt.halo_width, opt.dims, planes );
        check_against_single_rank( box, clusters( box, planes, 90, 0.9, 13 ), opt );
    }
}

/*
  A rebuild step may launch the owned agents' forces before it plans the halo (OverlapOrder::
  forces_first, automatic with NCCL) or after (exchange_first): the same kernels on the same data, so
  the same agents bit for bit, on every rank. The agents start in SoAs of exactly their size, so the
  first halo build must grow the SoA while the forces may be reading it (the halo waits for them then).
  Both orders also agree with the single-rank model, every step a rebuild.
*/
TEST( TEST_CATEGORY, distributed_mechanics_overlap_orders_agree )
{
    using morula::parallel::OverlapOrder;
    const Box<double> box( { 0, 0, 0 }, { 40, 40, 40 }, Boundary::periodic );
    const int me = comm_rank(), size = comm_size();
    std::vector<double> planes[3];
    rank_planes( box, 6.0, { 0, 0, 0 }, planes );
    const auto start = clusters( box, planes, 90, 0.9, 15 );
    std::vector<std::vector<std::pair<int, HostAgent<double>>>> results;
    for ( const auto order : { OverlapOrder::exchange_first, OverlapOrder::forces_first } )
    {
        CartesianDecomposition<double> dec( MPI_COMM_WORLD, box, 6.0 );
        std::vector<HostAgent<double>> mine;
        for ( const auto& h : start )
            if ( h.id % size == me )
                mine.push_back( h );
        auto agents = morula_test_mechanics::from_host<double, TEST_MEMSPACE>( mine );
        TEST_EXECSPACE exec;
        DistributedSphereMechanics<double, TEST_MEMSPACE> dm( dec, parameters(), 1,
                                                              morula::parallel::PeriodicImages::minimum_image, order );
        EXPECT_EQ( dm.overlap_order(), order );
        for ( int s = 0; s < 20; ++s )
            dm.step( exec, agents );
        exec.fence();
        auto owned = gather_owned( agents, dm.num_owned() );
        std::sort( owned.begin(), owned.end(),
                   []( const auto& a, const auto& b ) { return a.second.id < b.second.id; } );
        results.push_back( owned );
    }
    ASSERT_EQ( results[0].size(), start.size() );
    ASSERT_EQ( results[1].size(), start.size() );
    int differing = 0;
    for ( std::size_t k = 0; k < start.size(); ++k )
    {
        const auto& [ra, a] = results[0][k];
        const auto& [rb, b] = results[1][k];
        differing += ra != rb || a.id != b.id || a.x[0] != b.x[0] || a.x[1] != b.x[1] || a.x[2] != b.x[2];
    }
    EXPECT_EQ( differing, 0 ) << "the two overlap orders moved agents differently";
    RunOptions opt;
    opt.order = OverlapOrder::forces_first;
    check_against_single_rank( box, start, opt );
}

// step( exec, agents, true ) fences and times each phase: the same agents as untimed steps, bit for bit,
// and counters that add up (steps, rebuilds and updates; agents sent = agents received over the ranks).
TEST( TEST_CATEGORY, distributed_mechanics_phase_times )
{
    const Box<double> box( { 0, 0, 0 }, { 40, 40, 40 }, Boundary::periodic );
    const int me = comm_rank(), size = comm_size();
    const int rebuild_every = 3, steps = 10;
    CartesianDecomposition<double> dec( MPI_COMM_WORLD, box, 8.5 );
    std::vector<double> planes[3];
    rank_planes( box, 8.5, { 0, 0, 0 }, planes );
    std::vector<HostAgent<double>> mine;
    for ( const auto& h : clusters( box, planes, 60, 0.9, 14 ) )
        if ( h.id % size == me )
            mine.push_back( h );
    TEST_EXECSPACE exec;
    const auto params = parameters( 0.5 );
    auto plain = morula_test_mechanics::from_host<double, TEST_MEMSPACE>( mine );
    auto timed = morula_test_mechanics::from_host<double, TEST_MEMSPACE>( mine );
    DistributedSphereMechanics<double, TEST_MEMSPACE> a( dec, params, rebuild_every );
    DistributedSphereMechanics<double, TEST_MEMSPACE> b( dec, params, rebuild_every );
    a.step( exec, plain );
    b.step( exec, timed ); // untimed: not counted
    double timed_wall = 0; // seconds inside b's timed steps
    for ( int s = 1; s < steps; ++s )
    {
        a.step( exec, plain );
        const auto t0 = std::chrono::steady_clock::now();
        b.step( exec, timed, true );
        timed_wall += std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    }
    exec.fence();
    ASSERT_EQ( a.num_owned(), b.num_owned() );
    ASSERT_EQ( plain.size(), timed.size() );
    auto xa = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), plain.positions() );
    auto xb = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), timed.positions() );
    for ( std::size_t i = 0; i < plain.size(); ++i )
        for ( int d = 0; d < 3; ++d )
            ASSERT_EQ( xa( i, d ), xb( i, d ) ) << "agent " << i;
    using Phase = morula::parallel::DistributedMechanicsPhase;
    using Count = morula::parallel::DistributedMechanicsCount;
    const auto& t = b.times();
    EXPECT_EQ( t.steps(), steps - 1 );
    EXPECT_EQ( t.count( Count::rebuilds ), 3 ); // steps 3, 6, 9 of 0..9
    EXPECT_EQ( t.count( Count::updates ), 6 );
    EXPECT_EQ( a.times().steps(), 0 );
    // Every phase ran in these steps (each is timed between barriers even where it has nothing to do,
    // and sort_every = 1 sorts at every step), and the phases are disjoint parts of the steps: their sum
    // cannot exceed the time spent in the steps.
    for ( int p : { Phase::migration, Phase::sort, Phase::halo_build, Phase::halo_update, Phase::grid,
                    Phase::forces, Phase::move } )
        EXPECT_GT( t.seconds( p ), 0.0 ) << t.phase_name( p );
    EXPECT_EQ( t.seconds( Phase::division ), 0.0 ); // the mechanics alone: no growth or division
    EXPECT_LE( t.total(), timed_wall );
    EXPECT_EQ( sum_all( t.count( Count::migrated_sent ) ), sum_all( t.count( Count::migrated_received ) ) );
    if ( size > 1 ) // one rank in a periodic box reaches its images by the minimum image
        EXPECT_GT( sum_all( t.count( Count::ghosts ) ), 0 );
    EXPECT_GE( t.count( Count::halo_build_rows ), static_cast<long long>( b.halo().num_exports() ) );
    b.reset_times();
    EXPECT_EQ( b.times().steps(), 0 );
    EXPECT_EQ( b.times().total(), 0.0 );
}

// Every agent starts on the last rank, anywhere (the first rebuild sends them all to rank 0); the box is
// closed along x, and the agents stay well inside rank 0's subdomain: the last rank has no agent and
// no ghost at all, the others at most ghosts.
TEST( TEST_CATEGORY, distributed_mechanics_rank_without_agents )
{
    const Box<double> box( { 0, 0, 0 }, { 80, 20, 20 },
                           { Boundary::closed, Boundary::periodic, Boundary::periodic } );
    const int size = comm_size();
    if ( size == 1 )
        GTEST_SKIP() << "needs two ranks: one of them empty";
    RunOptions opt;
    opt.dims = { size, 1, 1 };
    opt.start_rank = size - 1;
    opt.empty_rank = size - 1;
    opt.expect_crossings = false;
    std::vector<double> planes[3];
    planes[0] = { 4.0 };
    const Box<double> region( { 0, 0, 0 }, { 8, 20, 20 },
                              { Boundary::closed, Boundary::periodic, Boundary::periodic } );
    check_against_single_rank( box, clusters( region, planes, 20, 0.9, 14 ), opt );
}

TEST( TEST_CATEGORY, distributed_mechanics_rejects_bad_input )
{
    const Box<double> box( { 0, 0, 0 }, { 40, 40, 40 }, Boundary::periodic );
    // Largest diameter 2.4 + 2 x 1.5 = 5.4 > 5.
    CartesianDecomposition<double> dec( MPI_COMM_WORLD, box, 5.0 );
    std::vector<double> planes[3];
    auto start = clusters( box, planes, 10, 0.9, 15 );
    std::vector<HostAgent<double>> mine;
    for ( const auto& h : start )
        if ( h.id % comm_size() == comm_rank() )
            mine.push_back( h );
    auto agents = morula_test_mechanics::from_host<double, TEST_MEMSPACE>( mine );
    TEST_EXECSPACE exec;
    DistributedSphereMechanics<double, TEST_MEMSPACE> dm( dec, parameters() );
    // Every rank throws, including those whose own agents are small enough.
    try
    {
        dm.step( exec, agents );
        ADD_FAILURE() << "no exception";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "halo width 5" ), std::string::npos ) << e.what();
    }
    // With the halo covering the drift between rebuilds only: 5.4 + 2 x 1 x 1 > 6.
    CartesianDecomposition<double> dec6( MPI_COMM_WORLD, box, 6.0 );
    DistributedSphereMechanics<double, TEST_MEMSPACE> dm2( dec6, parameters( 1.0 ), 2 );
    EXPECT_THROW( dm2.step( exec, agents ), morula::core::InputError );
    EXPECT_THROW( ( DistributedSphereMechanics<double, TEST_MEMSPACE>( dec6, parameters(), 0 ) ),
                  morula::core::InputError );
    auto bad = parameters();
    bad.time_step = -1;
    try
    {
        DistributedSphereMechanics<double, TEST_MEMSPACE> dm3( dec6, bad );
        ADD_FAILURE() << "no exception";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "DistributedSphereMechanics: time_step = -1" ),
                   std::string::npos )
            << e.what();
    }
}

} // namespace morula_test_distributed_mechanics
