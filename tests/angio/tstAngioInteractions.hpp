#include "AngioTestUtils.hpp"

#include <morula/core/Error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace morula_test_angio
{
using morula::angio::detail::PhaseAccess;
using morula::angio::closest_parameter;
using morula::angio::contact_force;
using morula::angio::segment_distance2;

// Closest points on segments against a dense sampling of both segments.
TEST( TEST_CATEGORY, angio_segment_geometry_matches_sampling )
{
    std::mt19937 gen( 7 );
    std::uniform_real_distribution<double> u( -10, 10 );
    for ( int trial = 0; trial < 200; ++trial )
    {
        double a0[3], b0[3], a1[3], b1[3], p[3];
        for ( int d = 0; d < 3; ++d )
        {
            a0[d] = u( gen );
            b0[d] = u( gen );
            a1[d] = u( gen );
            b1[d] = trial % 10 == 0 ? a1[d] + 0.5 * ( b0[d] - a0[d] ) : u( gen ); // some parallel pairs
            p[d] = u( gen );
        }
        double s, t;
        const double d2 = segment_distance2( a0, b0, a1, b1, s, t );
        double best = 1e300, best_point = 1e300;
        const int K = 400;
        for ( int i = 0; i <= K; ++i )
        {
            double q[3];
            for ( int d = 0; d < 3; ++d )
                q[d] = a0[d] + ( b0[d] - a0[d] ) * i / K;
            double e2 = 0;
            for ( int d = 0; d < 3; ++d )
                e2 += ( q[d] - p[d] ) * ( q[d] - p[d] );
            best_point = std::min( best_point, e2 );
            for ( int j = 0; j <= K; ++j )
            {
                double g2 = 0;
                for ( int d = 0; d < 3; ++d )
                {
                    const double r = a1[d] + ( b1[d] - a1[d] ) * j / K;
                    g2 += ( q[d] - r ) * ( q[d] - r );
                }
                best = std::min( best, g2 );
            }
        }
        EXPECT_LE( d2, best + 1e-12 ) << "trial " << trial;
        EXPECT_NEAR( std::sqrt( d2 ), std::sqrt( best ), 0.06 ) << "trial " << trial;
        EXPECT_GE( s, 0 );
        EXPECT_LE( s, 1 );
        EXPECT_GE( t, 0 );
        EXPECT_LE( t, 1 );
        const double tp = closest_parameter( a0, b0, p );
        double e2 = 0;
        for ( int d = 0; d < 3; ++d )
        {
            const double q = a0[d] + tp * ( b0[d] - a0[d] ) - p[d];
            e2 += q * q;
        }
        EXPECT_LE( e2, best_point + 1e-12 ) << "trial " << trial;
        EXPECT_NEAR( std::sqrt( e2 ), std::sqrt( best_point ), 0.06 ) << "trial " << trial;
    }
}

// The semi-harmonic law: repulsive spring under overlap, continuous attractive tent, zero beyond.
TEST( TEST_CATEGORY, angio_contact_force_law )
{
    const double k = 10, a = 1, range = 0.2, sum = 10;
    EXPECT_DOUBLE_EQ( contact_force( 9.0, sum, k, a, range ), 10.0 ); // 1 μm overlap
    EXPECT_DOUBLE_EQ( contact_force( 10.0, sum, k, a, range ), 0.0 );
    EXPECT_DOUBLE_EQ( contact_force( 11.0, sum, k, a, range ), -1.0 ); // peak of the tent at s = 1
    EXPECT_DOUBLE_EQ( contact_force( 11.5, sum, k, a, range ), -0.5 );
    EXPECT_DOUBLE_EQ( contact_force( 12.0, sum, k, a, range ), 0.0 );
    EXPECT_DOUBLE_EQ( contact_force( 13.0, sum, k, a, range ), 0.0 );
}

// Forces, pressures and contacts of a pressed cluster: against a brute-force sum over all pairs, Newton's
// third law (zero net force), and the same result from the atomic variant.
TEST( TEST_CATEGORY, angio_cell_cell_forces_match_brute_force_and_balance )
{
    const double edge = 200;
    HostCells h = centred_cluster( edge, 40 );
    // Vary the radii so that pairs differ.
    for ( std::size_t i = 0; i < h.size(); ++i )
        h.radius[i] = 5.0 + 0.8 * std::sin( 1.7 * i );
    ASSERT_GT( h.size(), 200u );
    AngioParameters p;
    Model both = make_model( h, HostTubes{}, edge, p );
    // Never sorted: the cells stay in input order and the grid is read through its permutation.
    p.sort_every = 0;
    Model unsorted = make_model( h, HostTubes{}, edge, p );
    p.sort_every = AngioParameters{}.sort_every;
    p.atomic_cell_cell = true;
    Model atomic = make_model( h, HostTubes{}, edge, p );
    TEST_EXECSPACE exec;
    for ( Model* m : { &both, &unsorted, &atomic } )
    {
        PhaseAccess::prepare_step( *m, exec );
        PhaseAccess::build_grid( *m, exec );
        PhaseAccess::interact_cells( *m, exec );
    }
    ASSERT_FALSE( unsorted.grid().permutation_is_identity() ); // the unsorted path is taken
    const auto hb = both.cells().to_host();
    const auto hu = unsorted.cells().to_host();
    const auto ha = atomic.cells().to_host();
    const std::size_t n = h.size();
    // Cells were permuted into grid order: compare by id.
    std::vector<std::size_t> by_id_b( n ), by_id_a( n ), by_id_u( n );
    for ( std::size_t i = 0; i < n; ++i )
    {
        by_id_b[hb.id[i]] = i;
        by_id_a[ha.id[i]] = i;
        by_id_u[hu.id[i]] = i;
    }
    // Sorted and unsorted cells see the same pairs in the same order (grid slot order) with the same
    // arithmetic: the same forces, pressures and contact counts bit for bit.
    {
        const auto count_b = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), both.workspace().contact_count );
        const auto count_u =
            Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), unsorted.workspace().contact_count );
        for ( std::size_t c = 0; c < n; ++c )
        {
            const std::size_t ib = by_id_b[c], iu = by_id_u[c];
            for ( int d = 0; d < 3; ++d )
                ASSERT_EQ( hu.force[3 * iu + d], hb.force[3 * ib + d] ) << "cell " << c << ", unsorted against sorted";
            ASSERT_EQ( hu.pressure[iu], hb.pressure[ib] ) << "cell " << c;
            ASSERT_EQ( count_u( iu ), count_b( ib ) ) << "cell " << c;
        }
    }
    double net[3] = { 0, 0, 0 }, scale = 0;
    int pressed = 0;
    for ( std::size_t c = 0; c < n; ++c )
    {
        double F[3] = { 0, 0, 0 }, rep = 0;
        for ( std::size_t o = 0; o < n; ++o )
        {
            if ( o == c )
                continue;
            double dx[3], r2 = 0;
            for ( int d = 0; d < 3; ++d )
            {
                dx[d] = h.position[3 * c + d] - h.position[3 * o + d];
                r2 += dx[d] * dx[d];
            }
            const double dist = std::sqrt( r2 );
            const double f = contact_force( dist, h.radius[c] + h.radius[o], p.mechanics.repulsion, p.mechanics.adhesion,
                                            p.mechanics.adhesion_range );
            for ( int d = 0; d < 3; ++d )
                F[d] += f * dx[d] / dist;
            rep += std::max( f, 0.0 );
        }
        const std::size_t ib = by_id_b[c], ia = by_id_a[c];
        for ( int d = 0; d < 3; ++d )
        {
            EXPECT_NEAR( hb.force[3 * ib + d], F[d], 1e-9 * ( 1 + std::fabs( F[d] ) ) ) << "cell " << c;
            EXPECT_NEAR( ha.force[3 * ia + d], F[d], 1e-9 * ( 1 + std::fabs( F[d] ) ) ) << "cell " << c;
            net[d] += hb.force[3 * ib + d];
            scale += std::fabs( F[d] );
        }
        const double pressure = rep / ( 4 * M_PI * h.radius[c] * h.radius[c] );
        EXPECT_NEAR( hb.pressure[ib], pressure, 1e-12 * ( 1 + pressure ) );
        EXPECT_NEAR( ha.pressure[ia], pressure, 1e-12 * ( 1 + pressure ) );
        pressed += pressure > 0;
    }
    EXPECT_GT( pressed, static_cast<int>( n / 2 ) ); // the test exercises overlaps
    EXPECT_GT( scale, 100.0 );
    for ( int d = 0; d < 3; ++d )
        EXPECT_LT( std::fabs( net[d] ), 1e-10 * scale );
}

// A cell touching a straight tube: the closest-point distance, the overlap force on the cell along the
// perpendicular and the opposite reaction on the tube; beyond the tube's end the end point is closest.
TEST( TEST_CATEGORY, angio_tube_cell_force_at_known_geometry )
{
    const double edge = 100;
    AngioParameters p;
    p.vessels.sprouting = false;
    for ( const double x : { 50.0, 78.0 } ) // over the tube's middle; beyond its end at x = 70
    {
        HostTubes t;
        const double a[3] = { 30, 50, 50 }, b[3] = { 70, 50, 50 };
        t.add( a, b, 4, 4, -1, 1, 0 );
        HostCells c;
        const double at[3] = { x, 50 + 6, 50 + 3 }; // 3 μm of overlap at the middle (r 5 + 4, distance sqrt(45))
        c.add( at, 5, 0, morula::angio::cell_new, 1, 0, 0 );
        Model m = make_model( c, t, edge, p );
        TEST_EXECSPACE exec;
        PhaseAccess::prepare_step( m, exec );
        PhaseAccess::build_grid( m, exec );
        PhaseAccess::interact_cells( m, exec );
        PhaseAccess::update_blood_flow( m, exec );
        PhaseAccess::interact_tubes( m, exec );
        PhaseAccess::interact_tubes_and_cells( m, exec );
        const auto hc = m.cells().to_host();
        const auto ht = m.tubes().to_host();
        const double dx = std::max( 0.0, x - 70 );
        const double dist = std::sqrt( dx * dx + 36 + 9 );
        const double overlap = 9 - dist;
        const double f = overlap > 0 ? p.vessels.tube_repulsion * overlap : 0.0;
        const double dir[3] = { dx / dist, 6 / dist, 3 / dist };
        for ( int d = 0; d < 3; ++d )
        {
            EXPECT_NEAR( hc.force[d], f * dir[d], 1e-12 ) << "x = " << x;
            EXPECT_NEAR( ht.end_a.size(), 3u, 0 );
        }
        const auto tf = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m.tubes().forces() );
        for ( int d = 0; d < 3; ++d )
            EXPECT_NEAR( tf( 0, d ), -f * dir[d], 1e-12 ) << "x = " << x;
        EXPECT_NEAR( hc.pressure[0], f / ( 4 * M_PI * 25 ), 1e-12 );
        if ( x == 50.0 )
            EXPECT_GT( f, 0 );
        else
            EXPECT_NEAR( dist, std::sqrt( 64.0 + 45.0 ), 1e-12 );
    }
}

// Murray's law at a branch and blood oxygen along the path: a two-tube vessel with a sprout at the middle
// of its first tube.
TEST( TEST_CATEGORY, angio_blood_flow_splits_by_murray_law )
{
    HostTubes t;
    const double a[3] = { 10, 50, 50 }, b[3] = { 30, 50, 50 }, c[3] = { 50, 50, 50 };
    t.add( a, b, 5, 5, -1, 1, 0 );
    t.add( b, c, 5, 5, 0, 1, 0 );
    const double s0[3] = { 20, 50, 50 }, s1[3] = { 20, 60, 50 };
    t.add( s0, s1, 3, 3, 0, 0.5, morula::angio::tube_tip | morula::angio::tube_sprouted );
    AngioParameters p;
    Model m = make_model( HostCells{}, t, 100, p );
    TEST_EXECSPACE exec;
    PhaseAccess::prepare_step( m, exec );
    PhaseAccess::update_blood_flow( m, exec );
    const auto h = m.tubes().to_host();
    const double q = p.vessels.inflow, L = p.vessels.blood_oxygen_length;
    EXPECT_NEAR( h.flow[0], q, 1e-12 );
    EXPECT_NEAR( h.flow[1], q * 125.0 / 152.0, 1e-12 );
    EXPECT_NEAR( h.flow[2], q * 27.0 / 152.0, 1e-12 );
    EXPECT_NEAR( h.flow[1] + h.flow[2], h.flow[0], 1e-12 ); // flow is conserved at the branch
    EXPECT_NEAR( h.blood_oxygen[0], std::exp( -10 / L ), 1e-12 );
    EXPECT_NEAR( h.blood_oxygen[1], std::exp( -30 / L ), 1e-12 );
    EXPECT_NEAR( h.blood_oxygen[2], std::exp( -15 / L ), 1e-12 );
}

// Bad input is named.
TEST( TEST_CATEGORY, angio_bad_input_is_rejected )
{
    AngioParameters p;
    p.time_step = 10; // unstable overdamped motion
    EXPECT_THROW( make_model( HostCells{}, HostTubes{}, 100, p ), morula::core::InputError );
    p = AngioParameters{};
    HostCells c;
    const double x[3] = { 50, 50, 50 };
    c.add( x, 9, 0, morula::angio::cell_new, 1, 0, 0 ); // larger than the division radius
    try
    {
        make_model( c, HostTubes{}, 100, p );
        ADD_FAILURE() << "no error";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "cell 0 has radius 9" ), std::string::npos ) << e.what();
    }
    HostTubes t;
    const double a[3] = { 50, 50, 50 }, b[3] = { 50, 50, 120 };
    t.add( a, b, 4, 4, -1, 1, 0 );
    try
    {
        make_model( HostCells{}, t, 100, p );
        ADD_FAILURE() << "no error";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "tube 0 has an end outside the box along z" ), std::string::npos )
            << e.what();
    }
    HostTubes loop;
    loop.add( a, a, 4, 4, 0, 1, 0 ); // its own parent
    EXPECT_THROW( Tubes{ loop }, morula::core::InputError );
}

} // namespace morula_test_angio
