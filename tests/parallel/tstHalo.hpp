#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/Halo.hpp>

#include <ParallelTestUtils.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace morula_test_halo
{
using morula::core::Boundary;
using morula::core::Box;
using morula::parallel::CartesianDecomposition;
using morula::parallel::Halo;
using namespace morula_test_parallel;

enum class Layout
{
    random,     // uniform in each subdomain
    faces,      // on subdomain faces, edges and corners, just below the high faces, at the box corners
    empty_rank0 // random, rank 0 has none
};

template <class Scalar>
std::vector<HostParticle<Scalar>> make_layout( const CartesianDecomposition<Scalar>& dec, Layout layout,
                                               int n )
{
    const int me = dec.rank();
    std::mt19937_64 rng( 1234 + 77 * me );
    std::vector<HostParticle<Scalar>> out;
    std::int64_t next = 100000LL * me;
    auto uniform = [&]( int a ) {
        std::uniform_real_distribution<double> u( dec.lo()[a], dec.hi()[a] );
        Scalar v = static_cast<Scalar>( u( rng ) );
        return v >= dec.hi()[a] ? dec.lo()[a] : v;
    };
    if ( layout == Layout::empty_rank0 && me == 0 )
        return out;
    for ( int i = 0; i < n; ++i )
        out.push_back( { next++, { uniform( 0 ), uniform( 1 ), uniform( 2 ) } } );
    if ( layout == Layout::faces )
    {
        // Per axis: exactly on the low face, just below the high face, or random.
        for ( int combo = 0; combo < 27; ++combo )
        {
            HostParticle<Scalar> p{ next++, {} };
            for ( int a = 0; a < 3; ++a )
            {
                const int k = combo / ( a == 0 ? 9 : a == 1 ? 3 : 1 ) % 3;
                p.x[a] = k == 0 ? dec.lo()[a]
                         : k == 1 ? std::nextafter( dec.hi()[a], dec.lo()[a] )
                                  : uniform( a );
            }
            out.push_back( p );
        }
        // The box corners, by whoever owns them.
        for ( int corner = 0; corner < 8; ++corner )
        {
            Scalar x[3];
            for ( int a = 0; a < 3; ++a )
                x[a] = ( corner >> a ) & 1 ? std::nextafter( dec.box().hi[a], dec.box().lo[a] ) : dec.box().lo[a];
            if ( dec.owner()( x[0], x[1], x[2] ) == me )
                out.push_back( { next++, { x[0], x[1], x[2] } } );
        }
    }
    return out;
}

// What this rank must see: every particle's periodic images inside the subdomain grown by the halo
// width, except its own particles unshifted; sorted (id, x, y, z).
template <class Scalar>
std::vector<std::tuple<std::int64_t, Scalar, Scalar, Scalar>>
brute_force( const CartesianDecomposition<Scalar>& dec,
             const std::vector<std::pair<int, HostParticle<Scalar>>>& all,
             morula::parallel::PeriodicImages images = morula::parallel::PeriodicImages::ghosts )
{
    const auto& box = dec.box();
    const Scalar h = dec.halo_width();
    std::vector<std::tuple<std::int64_t, Scalar, Scalar, Scalar>> out;
    for ( const auto& [owner, p] : all )
        for ( int kx = -1; kx <= 1; ++kx )
            for ( int ky = -1; ky <= 1; ++ky )
                for ( int kz = -1; kz <= 1; ++kz )
                {
                    const int k[3] = { kx, ky, kz };
                    if ( owner == dec.rank() && kx == 0 && ky == 0 && kz == 0 )
                        continue;
                    bool inside = true;
                    Scalar y[3];
                    for ( int a = 0; a < 3; ++a )
                    {
                        // Minimum images: the rank's grid wraps a periodic axis with one rank, so
                        // nothing crosses it and its whole length is inside.
                        const bool wrapped = images == morula::parallel::PeriodicImages::minimum_image &&
                                             dec.periodic_within_rank( a );
                        if ( k[a] != 0 && ( !box.is_periodic( a ) || wrapped ) )
                            inside = false;
                        const Scalar L = box.length( a );
                        y[a] = p.x[a] + ( k[a] == 0 ? Scalar( 0 ) : k[a] < 0 ? -L : L );
                        if ( !wrapped )
                            inside = inside && y[a] >= dec.lo()[a] - h && y[a] < dec.hi()[a] + h;
                    }
                    if ( inside )
                        out.emplace_back( p.id, y[0], y[1], y[2] );
                }
    std::sort( out.begin(), out.end() );
    return out;
}

template <class Scalar>
std::vector<std::tuple<std::int64_t, Scalar, Scalar, Scalar>>
sorted( const std::vector<HostParticle<Scalar>>& v )
{
    std::vector<std::tuple<std::int64_t, Scalar, Scalar, Scalar>> out;
    for ( const auto& p : v )
        out.emplace_back( p.id, p.x[0], p.x[1], p.x[2] );
    std::sort( out.begin(), out.end() );
    return out;
}

template <class Scalar>
void check_halo( const Box<Scalar>& box, Scalar h, std::array<int, 3> dims, Layout layout, int n,
                 morula::parallel::PeriodicImages images = morula::parallel::PeriodicImages::ghosts )
{
    SCOPED_TRACE( "dims " + std::to_string( dims[0] ) + "x" + std::to_string( dims[1] ) + "x" +
                  std::to_string( dims[2] ) + ", layout " + std::to_string( int( layout ) ) );
    CartesianDecomposition<Scalar> dec( MPI_COMM_WORLD, box, h, dims );
    const auto mine = make_layout( dec, layout, n );
    int not_owned = 0; // no ASSERT before collective calls: a rank returning early would hang the others
    for ( const auto& p : mine )
        not_owned += dec.owner()( p.x[0], p.x[1], p.x[2] ) != dec.rank();
    EXPECT_EQ( not_owned, 0 ) << "test layout: particles outside this rank's subdomain";
    TestParticles<Scalar> particles( "halo_test" );
    upload( particles, mine );
    const std::size_t n_owned = mine.size();

    TEST_EXECSPACE exec;
    Halo<TEST_MEMSPACE, Scalar> halo( exec, dec, particles, n_owned, images );
    EXPECT_EQ( particles.size(), n_owned + halo.num_ghosts() );
    EXPECT_EQ( halo.ghost_offset( morula::parallel::num_directions ), halo.num_ghosts() );
    EXPECT_EQ( std::string( to_string( halo.transport() ) ), expected_transport_name() );

    int bad = 0;
    const auto owned_after = download( particles, 0, n_owned, bad );
    const auto ghosts = download( particles, n_owned, particles.size(), bad );
    EXPECT_EQ( bad, 0 ) << "fields that do not match their id";
    EXPECT_EQ( sorted( owned_after ), sorted( mine ) ) << "owned particles changed";

    const auto all = allgather( MPI_COMM_WORLD, mine );
    const auto expected = brute_force( dec, all, images );
    const auto got = sorted( ghosts );
    EXPECT_EQ( got.size(), expected.size() );
    EXPECT_TRUE( got == expected ) << "ghosts differ from the brute force";
    if ( got != expected && std::getenv( "MORULA_TEST_VERBOSE" ) )
        for ( std::size_t i = 0; i < std::max( got.size(), expected.size() ); ++i )
            if ( i >= got.size() || i >= expected.size() || got[i] != expected[i] )
            {
                auto show = []( const auto& t ) {
                    return std::to_string( std::get<0>( t ) ) + " (" + std::to_string( std::get<1>( t ) ) + ", " +
                           std::to_string( std::get<2>( t ) ) + ", " + std::to_string( std::get<3>( t ) ) + ")";
                };
                std::printf( "rank %d first difference at %zu: got %s, expected %s\n", dec.rank(), i,
                             i < got.size() ? show( got[i] ).c_str() : "-",
                             i < expected.size() ? show( expected[i] ).c_str() : "-" );
                break;
            }
    // Collective on every rank alike (a rank without expected ghosts must still take part).
    const long long expected_anywhere = sum_all( static_cast<long long>( expected.size() ) );
    const long long ghosts_anywhere = sum_all( static_cast<long long>( halo.num_ghosts() ) );
    if ( expected_anywhere > 0 )
        EXPECT_GT( ghosts_anywhere, 0 ) << "no ghosts anywhere";

    // Ghost order: by the slot of the neighbour they come from, then the sender's order (its ids grow
    // with its storage order, so they increase within a slot's range).
    std::map<std::int64_t, int> owner_of;
    for ( const auto& q : all )
        owner_of[q.second.id] = q.first;
    int bad_order = 0;
    for ( int r = 0; r < morula::parallel::num_directions; ++r )
        for ( std::size_t g = halo.ghost_offset( r ); g < halo.ghost_offset( r + 1 ); ++g )
        {
            bad_order += owner_of[ghosts[g].id] != dec.neighbor_rank( r );
            if ( g > halo.ghost_offset( r ) )
                bad_order += !( ghosts[g - 1].id < ghosts[g].id );
        }
    EXPECT_EQ( bad_order, 0 ) << "ghosts not in (neighbour slot, sender order) order";
    if ( layout == Layout::empty_rank0 && dec.rank() == 0 )
        EXPECT_EQ( n_owned, 0u );

    // update(): move the owned particles a little, refresh the ghosts' positions, then a field.
    {
        auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), particles.template get<0>() );
        auto id = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), particles.template get<1>() );
        auto tag = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), particles.template get<2>() );
        std::vector<HostParticle<Scalar>> moved;
        for ( std::size_t i = 0; i < n_owned; ++i )
        {
            for ( int a = 0; a < 3; ++a )
                x( i, a ) += Scalar( 0.01 ) * Scalar( ( id( i ) + 3 * a ) % 11 - 5 ) * h;
            tag( i ) = -1.0 * id( i );
            moved.push_back( { id( i ), { x( i, 0 ), x( i, 1 ), x( i, 2 ) } } );
        }
        // Whole views back (only the owned rows changed): a row range of a LayoutLeft [n][3] View is not
        // contiguous, and Kokkos cannot copy that between host and device.
        Kokkos::deep_copy( particles.template get<0>(), x );
        Kokkos::deep_copy( particles.template get<2>(), tag );
        halo.update( exec, particles );
        const auto all_moved = allgather( MPI_COMM_WORLD, moved );
        std::map<std::int64_t, HostParticle<Scalar>> before, after;
        for ( const auto& q : all )
            before[q.second.id] = q.second;
        for ( const auto& q : all_moved )
            after[q.second.id] = q.second;
        int bad_update = 0;
        auto gx = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), particles.template get<0>() );
        for ( std::size_t g = 0; g < ghosts.size(); ++g )
            for ( int a = 0; a < 3; ++a )
            {
                const Scalar L = box.length( a );
                const double k = std::nearbyint( ( double( ghosts[g].x[a] ) - before[ghosts[g].id].x[a] ) / L );
                const Scalar want = after[ghosts[g].id].x[a] + ( k == 0 ? Scalar( 0 ) : k < 0 ? -L : L );
                bad_update += gx( n_owned + g, a ) != want;
            }
        EXPECT_EQ( bad_update, 0 ) << "ghost positions after update()";

        halo.template update<2>( exec, particles );
        auto gtag = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), particles.template get<2>() );
        int bad_tag = 0;
        for ( std::size_t g = 0; g < ghosts.size(); ++g )
            bad_tag += gtag( n_owned + g ) != -1.0 * ghosts[g].id;
        EXPECT_EQ( bad_tag, 0 ) << "ghost field 2 after update<2>()";
    }
}

template <class Scalar>
void run_all_layouts()
{
    const int s = comm_size();
    const Scalar h = Scalar( 0.3 );
    const Kokkos::Array<Scalar, 3> lo = { -1, 0, Scalar( 0.5 ) };
    const Kokkos::Array<Scalar, 3> hi = { 3, Scalar( 2.5 ), Scalar( 2.5 ) };
    const Box<Scalar> periodic( lo, hi, Boundary::periodic );
    const Box<Scalar> closed( lo, hi, Boundary::closed );
    const Box<Scalar> mixed( lo, hi, { Boundary::periodic, Boundary::closed, Boundary::periodic } );
    check_halo( periodic, h, { 0, 0, 0 }, Layout::random, 200 );
    check_halo( closed, h, { s, 1, 1 }, Layout::faces, 100 );
    check_halo( mixed, h, { 1, 1, s }, Layout::faces, 100 );
    check_halo( periodic, h, { 1, s, 1 }, Layout::empty_rank0, 150 );
    check_halo( mixed, h, morula_test_parallel::two_way_dims(), Layout::faces, 80 );
    // The widest halo the decomposition allows along z with one rank per other axis.
    check_halo( periodic, Scalar( 0.95 ) * Scalar( 2.0 ) / Scalar( s ), { 1, 1, s }, Layout::random, 100 );
    // A rank's own periodic images by the minimum image: ghosts only across axes with several ranks.
    const auto min_image = morula::parallel::PeriodicImages::minimum_image;
    check_halo( periodic, h, { s, 1, 1 }, Layout::faces, 100, min_image );
    check_halo( mixed, h, { 1, s, 1 }, Layout::faces, 100, min_image );
    check_halo( periodic, h, morula_test_parallel::two_way_dims(), Layout::faces, 80, min_image );
}

TEST( TEST_CATEGORY, halo_vs_brute_force_double ) { run_all_layouts<double>(); }

TEST( TEST_CATEGORY, halo_vs_brute_force_float ) { run_all_layouts<float>(); }

// Fills ghost rows [n_owned, size) of every field with garbage, so that an update must rewrite them.
template <class Scalar>
void clobber_ghosts( TestParticles<Scalar>& p, std::size_t n_owned )
{
    const auto ghosts = std::make_pair( n_owned, p.size() );
    Kokkos::deep_copy( Kokkos::subview( p.template get<0>(), ghosts, Kokkos::ALL ), Scalar( -7 ) );
    Kokkos::deep_copy( Kokkos::subview( p.template get<1>(), ghosts ), std::int64_t( -1 ) );
    Kokkos::deep_copy( Kokkos::subview( p.template get<2>(), ghosts ), -3.0 );
    Kokkos::deep_copy( Kokkos::subview( p.template get<3>(), ghosts, Kokkos::ALL ), -5 );
}

// Repeated update() calls reuse the halo's message storage (no allocation after the first) and give
// the ghosts a fresh Halo of the same owned particles gives, entry by entry.
template <class Scalar>
void check_buffer_reuse( const Box<Scalar>& box, std::array<int, 3> dims )
{
    const Scalar h = Scalar( 0.3 );
    CartesianDecomposition<Scalar> dec( MPI_COMM_WORLD, box, h, dims );
    const auto mine = make_layout( dec, Layout::faces, 120 );
    const std::size_t n_owned = mine.size();
    TestParticles<Scalar> particles( "halo_reuse" );
    upload( particles, mine );
    TEST_EXECSPACE exec;
    Halo<TEST_MEMSPACE, Scalar> halo( exec, dec, particles, n_owned );
    // A copy in every build (create_mirror_view would alias the field in host memory).
    auto x0 = Kokkos::create_mirror( particles.template get<0>() );
    Kokkos::deep_copy( x0, particles.template get<0>() );

    halo.update( exec, particles );
    const std::size_t bytes = halo.buffer_bytes();
    const void* send = halo.buffers().send_data();
    const void* recv = halo.buffers().recv_data();
    int changed = 0;
    for ( int round = 0; round < 5; ++round )
    {
        // Move the owned particles a little (the export lists stay), refresh positions and the rest.
        auto x = Kokkos::create_mirror_view( particles.template get<0>() );
        Kokkos::deep_copy( x, x0 );
        for ( std::size_t i = 0; i < n_owned; ++i )
            for ( int a = 0; a < 3; ++a )
                x( i, a ) += Scalar( 0.001 ) * Scalar( ( int( i ) + round + a ) % 5 - 2 ) * h;
        Kokkos::deep_copy( particles.template get<0>(), x );
        halo.update( exec, particles );
        halo.template update<1, 2, 3>( exec, particles );
        changed += halo.buffer_bytes() != bytes || halo.buffers().send_data() != send ||
                   halo.buffers().recv_data() != recv;
    }
    // Back to the original positions, ghosts clobbered: updates must restore everything.
    Kokkos::deep_copy( particles.template get<0>(), x0 );
    clobber_ghosts( particles, n_owned );
    halo.update( exec, particles );
    halo.template update<1, 2, 3>( exec, particles );
    changed += halo.buffer_bytes() != bytes || halo.buffers().send_data() != send ||
               halo.buffers().recv_data() != recv;
    EXPECT_EQ( changed, 0 ) << "update() reallocated its message buffers";
    EXPECT_GT( sum_all( static_cast<long long>( bytes ) ), 0 ) << "no buffers anywhere";

    TestParticles<Scalar> fresh_particles( "halo_fresh" );
    upload( fresh_particles, mine );
    Halo<TEST_MEMSPACE, Scalar> fresh( exec, dec, fresh_particles, n_owned );
    int bad = 0;
    const auto got = download( particles, 0, particles.size(), bad );
    const auto want = download( fresh_particles, 0, fresh_particles.size(), bad );
    EXPECT_EQ( bad, 0 ) << "fields that do not match their id";
    EXPECT_EQ( differences( got, want ), 0 ) << "ghosts after updates differ from a fresh Halo's";

    // A rebuild with the old halo's buffers needs no more than they hold: same storage, same ghosts.
    TestParticles<Scalar> rebuilt_particles( "halo_rebuilt" );
    upload( rebuilt_particles, mine );
    Halo<TEST_MEMSPACE, Scalar> rebuilt( exec, dec, rebuilt_particles, n_owned, halo.buffers() );
    EXPECT_EQ( rebuilt.buffers().send_data(), send ) << "a rebuild with the old buffers reallocated";
    EXPECT_EQ( rebuilt.buffers().recv_data(), recv ) << "a rebuild with the old buffers reallocated";
    EXPECT_EQ( differences( download( rebuilt_particles, 0, rebuilt_particles.size(), bad ), want ), 0 )
        << "ghosts of a rebuild with the old buffers differ from a fresh Halo's";
    EXPECT_EQ( bad, 0 ) << "fields that do not match their id";
}

/*
  build() and update() in halves, with work between the halves on another execution space instance
  (where the instance is a second stream, the exchange overlaps it): the same ghosts as a blocking
  build and update, field by field. Unpaired halves are refused.
*/
template <class Scalar>
void check_halves( const Box<Scalar>& box, std::array<int, 3> dims )
{
    const Scalar h = Scalar( 0.3 );
    CartesianDecomposition<Scalar> dec( MPI_COMM_WORLD, box, h, dims );
    const auto mine = make_layout( dec, Layout::faces, 120 );
    const std::size_t n_owned = mine.size();
    TEST_EXECSPACE exec;
    const auto other = morula::compat::concurrent_instance( exec );
    TestParticles<Scalar> blocking( "halo_blocking" ), halves( "halo_halves" );
    upload( blocking, mine );
    upload( halves, mine );
    Halo<TEST_MEMSPACE, Scalar> a( exec, dec, blocking, n_owned );
    Halo<TEST_MEMSPACE, Scalar> b( dec, morula::parallel::detail::MessageBuffers<TEST_MEMSPACE>() );
    EXPECT_EQ( b.num_ghosts(), 0u );
    EXPECT_THROW( b.finish_build( other, halves ), morula::core::InputError ) << "a finish without a start";
    exec.fence();
    b.start_build( other, halves, n_owned );
    EXPECT_THROW( b.start_build( other, halves, n_owned ), morula::core::InputError ) << "a second start";
    // Work on the owned rows meanwhile: a sum of the owned positions on exec.
    Scalar sum = 0;
    const auto x = halves.template get<0>();
    Kokkos::parallel_reduce(
        "halo_test_owned_sum", Kokkos::RangePolicy<TEST_EXECSPACE>( exec, 0, n_owned ),
        KOKKOS_LAMBDA( const std::size_t i, Scalar& acc ) { acc += x( i, 0 ); }, sum );
    b.finish_build( other, halves );
    other.fence();
    int bad = 0;
    EXPECT_EQ( differences( download( halves, 0, halves.size(), bad ), download( blocking, 0, blocking.size(), bad ) ),
               0 )
        << "a build in halves differs from a blocking build";
    EXPECT_EQ( b.num_boundary(), a.num_boundary() );
    // The export lists found first on exec (as DistributedSphereMechanics does before its forces), the
    // build then started on the other instance: the same ghosts. An export search for another count
    // of particles is not reused.
    {
        TestParticles<Scalar> found( "halo_found" );
        upload( found, mine );
        Halo<TEST_MEMSPACE, Scalar> c( dec, morula::parallel::detail::MessageBuffers<TEST_MEMSPACE>() );
        c.find_exports( exec, found, n_owned / 2 );
        c.find_exports( exec, found, n_owned );
        c.start_build( other, found, n_owned );
        c.finish_build( other, found );
        other.fence();
        int bad_found = 0;
        EXPECT_EQ( differences( download( found, 0, found.size(), bad_found ),
                                download( blocking, 0, blocking.size(), bad_found ) ),
                   0 )
            << "a build from found export lists differs from a blocking build";
        EXPECT_EQ( bad_found, 0 );
        EXPECT_EQ( c.num_boundary(), a.num_boundary() );
        TestParticles<Scalar> stale( "halo_stale" );
        upload( stale, mine );
        c.find_exports( exec, stale, n_owned / 2 );
        c.build( exec, stale, n_owned ); // searches again, for all n_owned
        EXPECT_EQ( differences( download( stale, 0, stale.size(), bad_found ),
                                download( blocking, 0, blocking.size(), bad_found ) ),
                   0 )
            << "a build after an export search for fewer particles differs from a blocking build";
    }
    // Updates: clobbered ghosts come back, positions and then every other field, in halves.
    clobber_ghosts( halves, n_owned );
    b.start_update( other, halves );
    b.finish_update( other, halves );
    b.template start_update<1, 2, 3>( other, halves );
    EXPECT_THROW( ( b.template start_update<1, 2, 3>( other, halves ) ), morula::core::InputError );
    b.template finish_update<1, 2, 3>( other, halves );
    other.fence();
    EXPECT_EQ( differences( download( halves, 0, halves.size(), bad ), download( blocking, 0, blocking.size(), bad ) ),
               0 )
        << "updates in halves differ from a blocking build";
    EXPECT_EQ( bad, 0 ) << "fields that do not match their id";
    EXPECT_TRUE( std::isfinite( double( sum ) ) );
    // The owned particles reversed, the halo renumbered: an update sends the same ghosts in the same
    // rows (ghosts carry their id: a wrong index shows as a field mismatch), and the boundary list
    // names the same particles.
    {
        // A copy (a host mirror of host memory would be the list itself, renumbered below).
        std::vector<int> before;
        {
            auto list = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), b.boundary_particles() );
            before.assign( list.data(), list.data() + list.extent( 0 ) );
        }
        Kokkos::View<int*, TEST_MEMSPACE> reverse( "halo_test_reverse", n_owned );
        Kokkos::parallel_for(
            "halo_test_reverse", Kokkos::RangePolicy<TEST_EXECSPACE>( exec, 0, n_owned ),
            KOKKOS_LAMBDA( const std::size_t i ) { reverse( i ) = static_cast<int>( n_owned - 1 - i ); } );
        halves.permute_leading( exec, reverse, n_owned );
        b.renumber_owned( exec, reverse );
        clobber_ghosts( halves, n_owned );
        b.template update<0, 1, 2, 3>( exec, halves );
        exec.fence();
        int bad_renumbered = 0;
        const auto got = download( halves, n_owned, halves.size(), bad_renumbered );
        const auto want = download( blocking, n_owned, blocking.size(), bad_renumbered );
        EXPECT_EQ( differences( got, want ), 0 ) << "ghosts after renumbering differ";
        EXPECT_EQ( bad_renumbered, 0 ) << "fields that do not match their id after renumbering";
        auto after = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), b.boundary_particles() );
        ASSERT_EQ( after.extent( 0 ), before.size() );
        int misnamed = 0;
        for ( std::size_t k = 0; k < before.size(); ++k )
            misnamed += after( k ) != static_cast<int>( n_owned ) - 1 - before[k];
        EXPECT_EQ( misnamed, 0 ) << "boundary particles not renumbered";
        // Back to the original order for the checks below.
        halves.permute_leading( exec, reverse, n_owned );
        b.renumber_owned( exec, reverse );
    }
    // Boundary particles: exactly the owned particles exported at least once.
    auto boundary = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), b.boundary_particles() );
    EXPECT_LE( b.num_boundary(), b.num_exports() );
    EXPECT_EQ( b.num_exports() == 0, b.num_boundary() == 0 );
    for ( std::size_t k = 1; k < boundary.extent( 0 ); ++k )
        EXPECT_LT( boundary( k - 1 ), boundary( k ) ) << "boundary particles out of particle order";
}

TEST( TEST_CATEGORY, halo_exchange_in_halves )
{
    const Kokkos::Array<double, 3> lo = { -1, 0, 0.5 };
    const Kokkos::Array<double, 3> hi = { 3, 2.5, 2.5 };
    check_halves( Box<double>( lo, hi, Boundary::periodic ), { 0, 0, 0 } );
    check_halves( Box<double>( lo, hi, { Boundary::periodic, Boundary::closed, Boundary::periodic } ),
                  { 1, 1, comm_size() } );
}

TEST( TEST_CATEGORY, halo_update_reuses_buffers )
{
    const int s = comm_size();
    const Kokkos::Array<double, 3> lo = { -1, 0, 0.5 };
    const Kokkos::Array<double, 3> hi = { 3, 2.5, 2.5 };
    check_buffer_reuse( Box<double>( lo, hi, Boundary::periodic ), { 0, 0, 0 } );
    check_buffer_reuse( Box<double>( lo, hi, { Boundary::periodic, Boundary::closed, Boundary::periodic } ),
                        { 1, 1, s } );
    const Kokkos::Array<float, 3> lof = { -1, 0, 0.5f };
    const Kokkos::Array<float, 3> hif = { 3, 2.5f, 2.5f };
    check_buffer_reuse( Box<float>( lof, hif, Boundary::periodic ), morula_test_parallel::two_way_dims() );
}

} // namespace morula_test_halo
