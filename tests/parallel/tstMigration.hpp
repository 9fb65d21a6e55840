#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/Migration.hpp>

#include <ParallelTestUtils.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace morula_test_migration
{
using morula::core::Boundary;
using morula::core::Box;
using morula::parallel::CartesianDecomposition;
using namespace morula_test_parallel;

// Random displacements (up to `step` per axis) of every owned particle; closed axes reflect at the walls.
template <class Scalar>
void displace( TestParticles<Scalar>& p, const Box<Scalar>& box, Scalar step, std::mt19937_64& rng )
{
    auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), p.template get<0>() );
    std::uniform_real_distribution<double> u( -1.0, 1.0 );
    for ( std::size_t i = 0; i < p.size(); ++i )
        for ( int a = 0; a < 3; ++a )
        {
            Scalar v = x( i, a ) + static_cast<Scalar>( step * u( rng ) );
            if ( !box.is_periodic( a ) )
            {
                if ( v < box.lo[a] )
                    v = box.lo[a] + ( box.lo[a] - v );
                if ( v >= box.hi[a] )
                    v = std::nextafter( box.hi[a] - ( v - box.hi[a] ), box.lo[a] );
            }
            x( i, a ) = v;
        }
    Kokkos::deep_copy( p.template get<0>(), x );
}

template <class Scalar>
void check_migration( const Box<Scalar>& box, std::array<int, 3> dims, int n_per_rank, int steps )
{
    SCOPED_TRACE( "dims " + std::to_string( dims[0] ) + "x" + std::to_string( dims[1] ) + "x" +
                  std::to_string( dims[2] ) );
    CartesianDecomposition<Scalar> dec( MPI_COMM_WORLD, box, Scalar( 0.3 ), dims );
    const int me = dec.rank();
    // Start anywhere in the box: the first migration moves particles across several ranks at once.
    std::mt19937_64 rng( 99 + me );
    std::vector<HostParticle<Scalar>> start;
    for ( int i = 0; i < n_per_rank; ++i )
    {
        HostParticle<Scalar> q{ std::int64_t( me ) * n_per_rank + i, {} };
        for ( int a = 0; a < 3; ++a )
        {
            std::uniform_real_distribution<double> u( box.lo[a], box.hi[a] );
            q.x[a] = std::min( static_cast<Scalar>( u( rng ) ), std::nextafter( box.hi[a], box.lo[a] ) );
        }
        start.push_back( q );
    }
    const long long n_total = static_cast<long long>( n_per_rank ) * dec.size();
    const long long id_sum = n_total * ( n_total - 1 ) / 2;
    long long id_sq_sum = 0;
    for ( long long i = 0; i < n_total; ++i )
        id_sq_sum += i * i;

    TestParticles<Scalar> particles( "migration_test" );
    upload( particles, start );
    TEST_EXECSPACE exec;
    int errors = 0, moved = 0;
    for ( int step = 0; step < steps; ++step )
    {
        if ( step > 0 )
            displace( particles, box, Scalar( 0.4 ), rng );
        int bad = 0;
        const auto before = download( particles, 0, particles.size(), bad );
        const auto r = morula::parallel::migrate( exec, dec, particles, particles.size() );
        const auto after = download( particles, 0, particles.size(), bad );
        errors += bad;
        errors += r.num_owned != particles.size();
        moved += static_cast<int>( r.num_sent );
        // Every particle here is owned here and lies in this subdomain.
        long long ids = 0, ids_sq = 0;
        for ( const auto& q : after )
        {
            errors += dec.owner()( q.x[0], q.x[1], q.x[2] ) != me;
            for ( int a = 0; a < 3; ++a )
                errors += !( q.x[a] >= dec.lo()[a] && q.x[a] < dec.hi()[a] );
            ids += q.id;
            ids_sq += q.id * q.id;
        }
        // Stayers come first, where they were, except that the last stayers close the places of the
        // leavers below them: the h-th such place in (owner, index) order takes the h-th of them.
        const std::size_t n_stay = r.num_owned - r.num_received;
        std::vector<int> owner_before( before.size() );
        std::vector<std::pair<int, std::size_t>> leaver_keys;
        for ( std::size_t i = 0; i < before.size(); ++i )
        {
            owner_before[i] = dec.owner()( before[i].x[0], before[i].x[1], before[i].x[2] );
            if ( owner_before[i] != me )
                leaver_keys.emplace_back( owner_before[i], i );
        }
        std::sort( leaver_keys.begin(), leaver_keys.end() );
        errors += before.size() - leaver_keys.size() != n_stay;
        std::vector<std::int64_t> want_ids;
        for ( std::size_t i = 0; i < std::min( n_stay, before.size() ); ++i )
            want_ids.push_back( before[i].id );
        std::vector<std::size_t> fillers;
        for ( std::size_t i = n_stay; i < before.size(); ++i )
            if ( owner_before[i] == me )
                fillers.push_back( i );
        std::size_t h = 0;
        for ( const auto& key : leaver_keys )
            if ( key.second < n_stay && h < fillers.size() )
                want_ids[key.second] = before[fillers[h++]].id;
        errors += h != fillers.size();
        for ( std::size_t i = 0; i < std::min( n_stay, want_ids.size() ); ++i )
            errors += after[i].id != want_ids[i];
        EXPECT_EQ( sum_all( static_cast<long long>( after.size() ) ), n_total ) << "step " << step;
        EXPECT_EQ( sum_all( ids ), id_sum ) << "step " << step;
        EXPECT_EQ( sum_all( ids_sq ), id_sq_sum ) << "step " << step;
    }
    EXPECT_EQ( errors, 0 ) << "particles misplaced, out of order or with wrong fields";
    if ( comm_size() > 1 ) // one rank only wraps
        EXPECT_GT( sum_all( moved ), 0 ) << "nothing ever moved: the test tests nothing";
    // No duplicates, nothing lost.
    int bad = 0;
    const auto all = allgather( MPI_COMM_WORLD, download( particles, 0, particles.size(), bad ) );
    std::vector<std::int64_t> ids;
    for ( const auto& q : all )
        ids.push_back( q.second.id );
    std::sort( ids.begin(), ids.end() );
    std::vector<std::int64_t> want( n_total );
    for ( long long i = 0; i < n_total; ++i )
        want[i] = i;
    EXPECT_TRUE( ids == want ) << "ids lost or duplicated";
}

TEST( TEST_CATEGORY, migration_conserves_particles )
{
    const int s = comm_size();
    const Box<double> periodic( { -1, 0, 0.5 }, { 3, 2.5, 2.5 }, Boundary::periodic );
    const Box<float> mixed( { -1, 0, 0.5 }, { 3, 2.5, 2.5 },
                            { Boundary::periodic, Boundary::closed, Boundary::periodic } );
    check_migration( periodic, { 0, 0, 0 }, 300, 50 );
    check_migration( mixed, morula_test_parallel::two_way_dims(), 200, 50 );
    check_migration( periodic, { 1, 1, s }, 100, 20 );
}

TEST( TEST_CATEGORY, migration_is_deterministic )
{
    // The same input twice gives the same output, entry by entry.
    const Box<double> periodic( { 0, 0, 0 }, { 2, 2, 2 }, Boundary::periodic );
    CartesianDecomposition<double> dec( MPI_COMM_WORLD, periodic, 0.25 );
    std::mt19937_64 rng( 5 + dec.rank() );
    std::uniform_real_distribution<double> u( -1.0, 3.0 ); // outside the box too: wrapped
    std::vector<HostParticle<double>> start;
    for ( int i = 0; i < 200; ++i )
        start.push_back( { 1000LL * dec.rank() + i, { u( rng ), u( rng ), u( rng ) } } );
    TEST_EXECSPACE exec;
    std::vector<std::vector<HostParticle<double>>> results;
    for ( int run = 0; run < 2; ++run )
    {
        TestParticles<double> p( "determinism" );
        upload( p, start );
        morula::parallel::migrate( exec, dec, p, p.size() );
        int bad = 0;
        results.push_back( download( p, 0, p.size(), bad ) );
        EXPECT_EQ( bad, 0 );
    }
    ASSERT_EQ( results[0].size(), results[1].size() );
    for ( std::size_t i = 0; i < results[0].size(); ++i )
    {
        EXPECT_EQ( results[0][i].id, results[1][i].id );
        for ( int a = 0; a < 3; ++a )
            EXPECT_EQ( results[0][i].x[a], results[1][i].x[a] );
    }
}

/*
  The neighbour-only count exchange gives the same result as MPI_Alltoall, step by step, with a kept
  workspace against a fresh one per call. At step `jump` rank 0 sends its first particle to the middle
  of the box along z (rank s / 2 along z): with `far_jump`, past its neighbours, which must make every
  rank fall back to MPI_Alltoall, and the particle must still arrive.
*/
template <class Scalar>
void check_neighbor_counts( const Box<Scalar>& box, std::array<int, 3> dims, bool far_jump, int steps )
{
    SCOPED_TRACE( "dims " + std::to_string( dims[0] ) + "x" + std::to_string( dims[1] ) + "x" +
                  std::to_string( dims[2] ) );
    CartesianDecomposition<Scalar> dec( MPI_COMM_WORLD, box, Scalar( 0.3 ), dims );
    const int me = dec.rank();
    // Start in this rank's subdomain, so that only the jump goes past the neighbours.
    std::mt19937_64 rng( 7 + me );
    std::vector<HostParticle<Scalar>> start;
    for ( int i = 0; i < 150; ++i )
    {
        HostParticle<Scalar> q{ std::int64_t( me ) * 1000 + i, {} };
        for ( int a = 0; a < 3; ++a )
        {
            std::uniform_real_distribution<double> u( dec.lo()[a], dec.hi()[a] );
            q.x[a] = std::min( static_cast<Scalar>( u( rng ) ), std::nextafter( dec.hi()[a], dec.lo()[a] ) );
        }
        start.push_back( q );
    }
    TestParticles<Scalar> neighbors( "migration_neighbors" ), alltoall( "migration_alltoall" );
    upload( neighbors, start );
    upload( alltoall, start );
    morula::parallel::MigrationWorkspace<TEST_MEMSPACE> workspace;
    std::mt19937_64 rng_n( 11 + me ), rng_a( 11 + me ); // the same displacements for both
    TEST_EXECSPACE exec;
    const int jump = steps / 2;
    int errors = 0, differ = 0, wrong_path = 0, neighbor_steps = 0;
    for ( int step = 0; step < steps; ++step )
    {
        if ( step > 0 )
        {
            displace( neighbors, box, Scalar( 0.2 ), rng_n );
            displace( alltoall, box, Scalar( 0.2 ), rng_a );
        }
        if ( step == jump && me == 0 && neighbors.size() > 0 )
            for ( auto* p : { &neighbors, &alltoall } )
            {
                auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), p->template get<0>() );
                const int target = dec.dims()[2] / 2;
                x( 0, 2 ) = box.lo[2] + box.length( 2 ) * ( Scalar( target ) + Scalar( 0.5 ) ) /
                                            Scalar( dec.dims()[2] );
                Kokkos::deep_copy( p->template get<0>(), x );
            }
        const auto rn = morula::parallel::migrate( exec, dec, neighbors, neighbors.size(), workspace );
        const auto ra = morula::parallel::migrate( exec, dec, alltoall, alltoall.size(),
                                                   morula::parallel::CountExchange::alltoall );
        errors += rn.num_owned != ra.num_owned || rn.num_sent != ra.num_sent ||
                  rn.num_received != ra.num_received;
        wrong_path += ra.neighbor_counts;
        if ( step == jump )
            wrong_path += rn.neighbor_counts == far_jump;
        neighbor_steps += rn.neighbor_counts;
        int bad = 0;
        differ += differences( download( neighbors, 0, neighbors.size(), bad ),
                               download( alltoall, 0, alltoall.size(), bad ) );
        errors += bad;
    }
    EXPECT_EQ( errors, 0 ) << "counts or fields differ";
    EXPECT_EQ( differ, 0 ) << "the neighbour path moved particles differently from MPI_Alltoall";
    EXPECT_EQ( wrong_path, 0 ) << "count exchange path not the expected one";
    EXPECT_GT( neighbor_steps, 0 ) << "the neighbour path never ran";
    // The jumper arrived: exactly one rank holds rank 0's first particle.
    int bad = 0;
    const auto all = allgather( MPI_COMM_WORLD, download( neighbors, 0, neighbors.size(), bad ) );
    int found = 0;
    for ( const auto& q : all )
        found += q.second.id == 0;
    EXPECT_EQ( found, 1 ) << "the particle that jumped is lost or duplicated";
}

TEST( TEST_CATEGORY, migration_neighbor_counts_match_alltoall )
{
    const int s = comm_size();
    // s ranks along z: rank s / 2 is a neighbour of rank 0 (closed: rank 1 only; periodic: ranks 1 and
    // s - 1) for s < 4 only.
    const Box<double> slab( { -1, 0, 0.5 }, { 3, 2.5, 2.5 },
                            { Boundary::periodic, Boundary::periodic, Boundary::closed } );
    check_neighbor_counts( slab, { 1, 1, s }, s >= 4, 30 );
    const Box<float> periodic( { -1, 0, 0.5 }, { 3, 2.5, 2.5 }, Boundary::periodic );
    check_neighbor_counts( periodic, { 1, 1, s }, s >= 4, 30 );
    const Box<double> mixed( { -1, 0, 0.5 }, { 3, 2.5, 2.5 },
                             { Boundary::periodic, Boundary::closed, Boundary::periodic } );
    check_neighbor_counts( mixed, morula_test_parallel::two_way_dims(), false, 30 );
}

} // namespace morula_test_migration
