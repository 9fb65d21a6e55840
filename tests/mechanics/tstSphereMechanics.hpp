#include "MechanicsTestUtils.hpp"

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace morula_test_mechanics
{
using morula::core::Boundary;
using morula::core::Box;
using morula::mechanics::AgentProperties;
using morula::mechanics::MechanicsParameters;
using morula::mechanics::SphereAgents;
using morula::mechanics::SphereMechanics;

template <class Scalar>
using Agents = SphereAgents<Scalar, TEST_MEMSPACE>;

// Equation (1) of Hesam et al. (2021) written out again, independently of the library, for the brute force.
double paper_force_factor( double distance, double d1, double d2, double extension )
{
    const double r1 = 0.5 * d1 + extension, r2 = 0.5 * d2 + extension;
    const double delta = r1 + r2 - distance;
    if ( delta <= 0 )
        return 0;
    const double r = r1 * r2 / ( r1 + r2 );
    return ( 2.0 * delta - 1.0 * std::sqrt( r * delta ) ) / distance;
}

template <class Scalar>
std::vector<std::array<double, 3>> forces_of( SphereMechanics<Scalar, TEST_MEMSPACE>& m, int n )
{
    auto f = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m.forces() );
    std::vector<std::array<double, 3>> out( n );
    for ( int i = 0; i < n; ++i )
        out[i] = { double( f( i, 0 ) ), double( f( i, 1 ) ), double( f( i, 2 ) ) };
    return out;
}

// Random agents of varied diameters in a periodic box: the device forces equal an O(N^2) minimum-image
// brute force of equation (1), and they sum to zero (Newton's third law).
template <class Scalar>
void check_forces_against_brute_force( double tolerance )
{
    const int n = 400;
    const double edge = 60;
    std::mt19937 gen( 7 );
    std::uniform_real_distribution<double> pos( 0, edge ), diam( 6, 12 );
    std::vector<HostAgent<Scalar>> h( n );
    for ( int i = 0; i < n; ++i )
        h[i] = { { Scalar( pos( gen ) ), Scalar( pos( gen ) ), Scalar( pos( gen ) ) },
                 Scalar( diam( gen ) ), Scalar( 0 ), Scalar( 1 ), 1000 + 3 * i };
    // sort_every 0 reads the grid through its permutation (one agent per thread); sorted agents take
    // every path of the force kernel: one agent per thread, two to four of a cell per thread.
    // Every cell ordering (Morton is the default).
    using morula::grid::CellOrdering;
    struct Path
    {
        int sort_every, per_thread;
        CellOrdering ordering;
    };
    for ( const auto& [sort_every, per_thread, ordering] :
          { Path{ 0, 0, CellOrdering::morton }, Path{ 1, 0, CellOrdering::morton }, Path{ 1, 1, CellOrdering::morton },
            Path{ 1, 2, CellOrdering::morton }, Path{ 1, 3, CellOrdering::morton }, Path{ 1, 4, CellOrdering::morton },
            Path{ 1, 0, CellOrdering::row_major }, Path{ 1, 0, CellOrdering::morton_rows },
            Path{ 0, 0, CellOrdering::morton_rows } } )
    {
        Agents<Scalar> agents = from_host<Scalar, TEST_MEMSPACE>( h );
        MechanicsParameters<Scalar> p;
        p.sort_every = sort_every;
        p.particles_per_thread = per_thread;
        p.ordering = ordering;
        SphereMechanics<Scalar, TEST_MEMSPACE> mech( Box<Scalar>::cube( Scalar( edge ), Boundary::periodic ), p );
        mech.update_grid( TEST_EXECSPACE(), agents );
        const long long pairs = mech.compute_displacements( TEST_EXECSPACE(), agents, true );
        const auto f = forces_of( mech, n );
        const auto now = to_host( agents ); // possibly permuted: match by id
        auto ref_agents = by_id( h );

        long long ref_pairs = 0;
        double total[3] = { 0, 0, 0 }, magnitude = 0;
        for ( int i = 0; i < n; ++i )
        {
            const auto& a = ref_agents.at( now[i].id );
            double ref[3] = { 0, 0, 0 }, scale = 0;
            for ( const auto& b : h )
            {
                if ( b.id == a.id )
                    continue;
                double d[3];
                for ( int k = 0; k < 3; ++k )
                {
                    d[k] = double( a.x[k] ) - double( b.x[k] );
                    d[k] -= edge * std::nearbyint( d[k] / edge );
                }
                const double dist = std::sqrt( d[0] * d[0] + d[1] * d[1] + d[2] * d[2] );
                const double k = paper_force_factor( dist, a.diameter, b.diameter, 1.5 );
                ref_pairs += k != 0 ? 1 : 0;
                for ( int c = 0; c < 3; ++c )
                {
                    ref[c] += k * d[c];
                    scale += std::abs( k * d[c] );
                }
            }
            for ( int c = 0; c < 3; ++c )
            {
                EXPECT_NEAR( f[i][c], ref[c], tolerance * ( 1 + scale ) )
                    << "agent id " << a.id << " component " << c << " sort_every " << sort_every
                    << " agents per thread " << per_thread << " " << morula::grid::to_string( ordering );
                total[c] += f[i][c];
                magnitude += std::abs( f[i][c] );
            }
        }
        EXPECT_EQ( pairs, ref_pairs );
        EXPECT_GT( ref_pairs, 2 * n ); // the test must exercise many overlaps
        for ( int c = 0; c < 3; ++c )
            EXPECT_LE( std::abs( total[c] ), tolerance * magnitude ) << "net force component " << c;
    }
}

/*
  A dense tissue: small and large agents, about 20 per grid cell, some centres coinciding (the second
  walk), in a periodic and an open box, both cell orders. The force kernel with two to four agents of a
  cell per thread (and the automatic choice), its pairs batched (the library's choice) or inline, gives
  the forces, displacements and pair counts of one agent per thread bit for bit: the same pairs in the
  same order with the same arithmetic.
*/
template <class Scalar>
void check_force_paths_agree_in_dense_tissue()
{
    const int n = 3000;
    const double edge = 30;
    std::mt19937 gen( 11 );
    std::uniform_real_distribution<double> pos( 0, edge ), diam( 1.5, 5 );
    std::vector<HostAgent<Scalar>> h( n );
    for ( int i = 0; i < n; ++i )
    {
        h[i] = { { Scalar( pos( gen ) ), Scalar( pos( gen ) ), Scalar( pos( gen ) ) },
                 Scalar( diam( gen ) ), Scalar( 0.01 ), Scalar( 1 ), 7 * i + 3 };
        if ( i % 50 == 49 )
            std::copy( h[i - 1].x, h[i - 1].x + 3, h[i].x ); // coincident centres
    }
    for ( const Boundary boundary : { Boundary::periodic, Boundary::open } )
        for ( const auto ordering : { morula::grid::CellOrdering::row_major, morula::grid::CellOrdering::morton,
                                      morula::grid::CellOrdering::morton_rows } )
        {
            struct Result
            {
                long long pairs;
                std::vector<std::array<double, 3>> f, m;
            };
            auto run = [&]( int per_thread ) {
                Agents<Scalar> agents = from_host<Scalar, TEST_MEMSPACE>( h );
                MechanicsParameters<Scalar> p;
                p.ordering = ordering;
                p.particles_per_thread = per_thread;
                SphereMechanics<Scalar, TEST_MEMSPACE> mech( Box<Scalar>::cube( Scalar( edge ), boundary ), p );
                mech.update_grid( TEST_EXECSPACE(), agents );
                Result r;
                r.pairs = mech.compute_displacements( TEST_EXECSPACE(), agents, true );
                r.f = forces_of( mech, n );
                auto m = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), mech.displacements() );
                for ( int i = 0; i < n; ++i )
                    r.m.push_back( { double( m( i, 0 ) ), double( m( i, 1 ) ), double( m( i, 2 ) ) } );
                if ( per_thread > 0 )
                    EXPECT_EQ( mech.particles_per_thread( TEST_EXECSPACE(), agents ), per_thread );
                // The force kernel with its pairs inline (the library batches them): the same forces.
                if ( per_thread == 1 || per_thread == 3 )
                {
                    morula::grid::NeighborReduction<TEST_MEMSPACE> inline_pairs( per_thread,
                                                                                 morula::grid::PairBatching::inline_pairs );
                    typename SphereMechanics<Scalar, TEST_MEMSPACE>::vector_view f( "f", n ), m( "m", n );
                    Kokkos::View<int*, TEST_MEMSPACE> counts( "counts", n );
                    const long long pairs = morula::mechanics::detail::compute_displacements(
                        TEST_EXECSPACE(), mech.grid().query( agents.positions() ), inline_pairs, agents, p, f, m, counts,
                        true, n );
                    EXPECT_EQ( pairs, r.pairs );
                    auto hf = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), f );
                    int differ = 0;
                    for ( int i = 0; i < n; ++i )
                        for ( int c = 0; c < 3; ++c )
                            if ( double( hf( i, c ) ) != r.f[i][c] && differ++ < 3 )
                                ADD_FAILURE() << "pairs inline, " << per_thread << " per thread: agent " << i
                                              << " component " << c << " force " << hf( i, c ) << " against "
                                              << r.f[i][c];
                }
                return r;
            };
            const Result one = run( 1 );
            EXPECT_GT( one.pairs, 20LL * n ); // dense: many overlaps per agent
            for ( int per_thread : { 0, 2, 3, 4 } )
            {
                const Result r = run( per_thread );
                const std::string what = std::string( boundary == Boundary::periodic ? "periodic" : "open" ) +
                                         ", " + morula::grid::to_string( ordering ) +
                                         ", " + std::to_string( per_thread ) + " per thread";
                EXPECT_EQ( r.pairs, one.pairs ) << what;
                int differ = 0;
                for ( int i = 0; i < n; ++i )
                    for ( int c = 0; c < 3; ++c )
                        if ( ( r.f[i][c] != one.f[i][c] || r.m[i][c] != one.m[i][c] ) && differ++ < 3 )
                            ADD_FAILURE() << what << ": agent " << i << " component " << c << " force " << r.f[i][c]
                                          << " against " << one.f[i][c];
            }
        }
}

TEST( TEST_CATEGORY, mechanics_force_paths_agree_in_dense_tissue_double )
{
    check_force_paths_agree_in_dense_tissue<double>();
}

TEST( TEST_CATEGORY, mechanics_force_paths_agree_in_dense_tissue_float )
{
    check_force_paths_agree_in_dense_tissue<float>();
}

TEST( TEST_CATEGORY, mechanics_particles_per_thread_is_checked )
{
    MechanicsParameters<double> p;
    p.particles_per_thread = 5;
    EXPECT_THROW( ( SphereMechanics<double, TEST_MEMSPACE>( Box<double>::cube( 10, Boundary::periodic ), p ) ),
                  morula::core::InputError );
}

TEST( TEST_CATEGORY, mechanics_forces_match_brute_force_double )
{
    check_forces_against_brute_force<double>( 1e-12 );
}

TEST( TEST_CATEGORY, mechanics_forces_match_brute_force_float )
{
    check_forces_against_brute_force<float>( 2e-5 );
}

// Runs `steps` mechanics steps and returns the agents on the host.
template <class Scalar>
std::vector<HostAgent<Scalar>> relax( Agents<Scalar>& agents, SphereMechanics<Scalar, TEST_MEMSPACE>& mech, int steps )
{
    for ( int s = 0; s < steps; ++s )
    {
        mech.update_grid( TEST_EXECSPACE(), agents );
        mech.compute_displacements( TEST_EXECSPACE(), agents );
        mech.apply_displacements( TEST_EXECSPACE(), agents );
    }
    return to_host( agents );
}

// Two overlapping spheres push apart and come to rest where equation (1) vanishes:
// delta = r (gamma / kappa)^2, i.e. distance = r1 + r2 - r / 4 with the defaults.
/*
  The inner-loop force factor (overlap_force_factor: reciprocal square roots, in double no division)
  against equation (1) in long double, evaluated on the test's execution space (so on a GPU its hardware
  reciprocal square roots), from radii of 1e-6 to 1e6 (a unit system of metres to one of nanometres),
  overlaps from 1e-6 of the radius sum to nearly all of it, and unequal radii (ratio up to 1e3).
*/
template <class Scalar>
void force_factor_matches_equation_across_scales()
{
    std::vector<std::array<double, 4>> cases; // distance^2, ra, rb, expected factor
    for ( const double scale : { 1e-6, 1e-3, 1.0, 30.0, 1e3, 1e6 } )
        for ( const double ratio : { 1.0, 0.37, 1e-3 } )
            for ( const double overlap : { 1e-6, 1e-3, 0.1, 0.5, 0.999 } )
            {
                const double ra = scale, rb = scale * ratio;
                const double distance = ( ra + rb ) * ( 1 - overlap );
                // Rounded to Scalar first, so that the reference sees the inputs the kernel sees.
                const long double d2 = static_cast<long double>( static_cast<Scalar>( distance * distance ) );
                const long double a = static_cast<Scalar>( ra ), b = static_cast<Scalar>( rb );
                const long double dist = std::sqrt( d2 );
                const long double delta = a + b - dist;
                const long double factor =
                    delta > 0 ? ( 2.0L * delta - 1.0L * std::sqrt( a * b / ( a + b ) * delta ) ) / dist : 0.0L;
                cases.push_back( { double( d2 ), double( a ), double( b ), double( factor ) } );
            }
    const int n = static_cast<int>( cases.size() );
    Kokkos::View<Scalar* [3], TEST_MEMSPACE> in( "in", n );
    Kokkos::View<Scalar*, TEST_MEMSPACE> out( "out", n );
    auto hin = Kokkos::create_mirror_view( in );
    for ( int k = 0; k < n; ++k )
        for ( int c = 0; c < 3; ++c )
            hin( k, c ) = static_cast<Scalar>( cases[k][c] );
    Kokkos::deep_copy( in, hin );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int k ) {
            out( k ) = morula::mechanics::overlap_force_factor( in( k, 0 ), in( k, 1 ), in( k, 2 ), Scalar( 2 ),
                                                               Scalar( 1 ) );
        } );
    auto hout = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    for ( int k = 0; k < n; ++k )
    {
        const double expected = cases[k][3];
        // The factor is a difference of two terms over the distance, and delta = ra + rb - distance
        // cancels: an ulp of the distance is sum / delta ulps of delta. So the bound is a few ulp
        // (16, for the GPUs' approximate reciprocals and roots in float) of the larger term, times
        // sum / delta.
        const double a = cases[k][1], b = cases[k][2], dist = std::sqrt( cases[k][0] );
        const double delta = a + b - dist;
        const double size = ( 2 * delta + std::sqrt( a * b / ( a + b ) * delta ) ) / dist;
        const double ulp = std::numeric_limits<Scalar>::epsilon();
        EXPECT_NEAR( double( hout( k ) ), expected, 16 * ulp * ( 1 + ( a + b ) / delta ) * size )
            << "distance^2 " << cases[k][0] << ", radii " << a << ", " << b;
        EXPECT_TRUE( std::isfinite( double( hout( k ) ) ) ) << "case " << k;
    }
}

TEST( TEST_CATEGORY, mechanics_force_factor_across_scales_double ) { force_factor_matches_equation_across_scales<double>(); }
TEST( TEST_CATEGORY, mechanics_force_factor_across_scales_float ) { force_factor_matches_equation_across_scales<float>(); }

TEST( TEST_CATEGORY, mechanics_two_spheres_separate_to_rest_distance )
{
    const double volume = 3.14159265358979323846 / 6 * 1000; // diameter 10, mass 1
    std::vector<HostAgent<double>> h = { { { 0, 0, 0 }, 10, 0, 1 / volume, 0 },
                                         { { 5, 0, 0 }, 10, 0, 1 / volume, 1 } };
    Agents<double> agents = from_host<double, TEST_MEMSPACE>( h );
    MechanicsParameters<double> p;
    p.time_step = 0.1;
    SphereMechanics<double, TEST_MEMSPACE> mech( Box<double>( { -50, -50, -50 }, { 50, 50, 50 }, Boundary::open ), p );
    const auto out = by_id( relax( agents, mech, 400 ) );
    const double r1 = 6.5, r = r1 * r1 / ( 2 * r1 );
    const double rest = 2 * r1 - r / 4;
    EXPECT_NEAR( out.at( 1 ).x[0] - out.at( 0 ).x[0], rest, 1e-8 );
    EXPECT_NEAR( 0.5 * ( out.at( 0 ).x[0] + out.at( 1 ).x[0] ), 2.5, 1e-12 ); // centre of mass kept
    for ( int id : { 0, 1 } )
    {
        EXPECT_EQ( out.at( id ).x[1], 0.0 );
        EXPECT_EQ( out.at( id ).x[2], 0.0 );
    }
}

// The adherence threshold stops a pair as soon as the force no longer exceeds it, and the bound on the
// displacement caps one step's move at max_displacement, keeping its direction.
TEST( TEST_CATEGORY, mechanics_adherence_and_bounded_displacement )
{
    const double volume = 3.14159265358979323846 / 6 * 1000;
    std::vector<HostAgent<double>> h = { { { 0, 0, 0 }, 10, 2.0, 1 / volume, 0 },
                                         { { 3, 4, 0 }, 10, 2.0, 1 / volume, 1 } };
    {
        Agents<double> agents = from_host<double, TEST_MEMSPACE>( h );
        MechanicsParameters<double> p;
        p.time_step = 0.1;
        p.max_displacement = 0.25;
        SphereMechanics<double, TEST_MEMSPACE> mech( Box<double>( { -50, -50, -50 }, { 50, 50, 50 }, Boundary::open ), p );
        mech.update_grid( TEST_EXECSPACE(), agents );
        mech.compute_displacements( TEST_EXECSPACE(), agents );
        auto m = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), mech.displacements() );
        auto ids = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), agents.ids() );
        for ( int i = 0; i < 2; ++i )
        {
            const double len = std::sqrt( m( i, 0 ) * m( i, 0 ) + m( i, 1 ) * m( i, 1 ) + m( i, 2 ) * m( i, 2 ) );
            EXPECT_NEAR( len, 0.25, 1e-14 );
            const double sign = ids( i ) == 0 ? -1 : 1; // pushed apart along (3, 4, 0) / 5
            EXPECT_NEAR( m( i, 0 ), sign * 0.25 * 0.6, 1e-14 );
            EXPECT_NEAR( m( i, 1 ), sign * 0.25 * 0.8, 1e-14 );
        }
    }
    Agents<double> agents = from_host<double, TEST_MEMSPACE>( h );
    MechanicsParameters<double> p;
    p.time_step = 0.1;
    SphereMechanics<double, TEST_MEMSPACE> mech( Box<double>( { -50, -50, -50 }, { 50, 50, 50 }, Boundary::open ), p );
    relax( agents, mech, 200 );
    mech.update_grid( TEST_EXECSPACE(), agents );
    mech.compute_displacements( TEST_EXECSPACE(), agents );
    const auto f = forces_of( mech, 2 );
    auto m = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), mech.displacements() );
    const double force = std::sqrt( f[0][0] * f[0][0] + f[0][1] * f[0][1] + f[0][2] * f[0][2] );
    EXPECT_LE( force, 2.0 );     // stopped by the adherence ...
    EXPECT_GT( force, 0.5 );     // ... before the force-free rest distance
    EXPECT_EQ( m( 0, 0 ), 0.0 ); // and no longer moving
    EXPECT_EQ( m( 1, 1 ), 0.0 );
}

// A compressed cubic lattice expands and relaxes: the forces fall by orders of magnitude, the centre
// of mass stays, and the lattice stays cubic (same extent along x, y and z).
TEST( TEST_CATEGORY, mechanics_compressed_lattice_relaxes )
{
    AgentProperties<double> props;
    props.diameter = 10;
    props.adherence = 0;
    Agents<double> agents =
        morula::mechanics::lattice_agents<double, TEST_MEMSPACE>( TEST_EXECSPACE(), 4, 8.0, props );
    MechanicsParameters<double> p;
    p.time_step = 0.02;
    SphereMechanics<double, TEST_MEMSPACE> mech( Box<double>( { 0, 0, 0 }, { 24, 24, 24 }, Boundary::open ), p );
    mech.update_grid( TEST_EXECSPACE(), agents );
    mech.compute_displacements( TEST_EXECSPACE(), agents );
    auto max_force = [&] {
        double m = 0;
        for ( const auto& f : forces_of( mech, 64 ) )
            m = std::max( m, std::sqrt( f[0] * f[0] + f[1] * f[1] + f[2] * f[2] ) );
        return m;
    };
    const double f0 = max_force();
    EXPECT_GT( f0, 10.0 );
    const auto out = relax( agents, mech, 1500 );
    mech.update_grid( TEST_EXECSPACE(), agents );
    mech.compute_displacements( TEST_EXECSPACE(), agents );
    EXPECT_LT( max_force(), 1e-3 * f0 );
    double com[3] = { 0, 0, 0 }, lo[3] = { 1e9, 1e9, 1e9 }, hi[3] = { -1e9, -1e9, -1e9 };
    for ( const auto& a : out )
        for ( int k = 0; k < 3; ++k )
        {
            com[k] += a.x[k] / 64;
            lo[k] = std::min( lo[k], a.x[k] );
            hi[k] = std::max( hi[k], a.x[k] );
        }
    for ( int k = 0; k < 3; ++k )
    {
        EXPECT_NEAR( com[k], 12.0, 1e-9 );
        EXPECT_NEAR( hi[k] - lo[k], hi[0] - lo[0], 1e-9 );
    }
    EXPECT_GT( hi[0] - lo[0], 3 * 8.0 + 1.0 ); // expanded
}

// The same lattice steps in float and in double agree to float precision.
TEST( TEST_CATEGORY, mechanics_float_and_double_agree )
{
    AgentProperties<double> pd;
    AgentProperties<float> pf;
    auto ad = morula::mechanics::lattice_agents<double, TEST_MEMSPACE>( TEST_EXECSPACE(), 3, 20.0, pd );
    auto af = morula::mechanics::lattice_agents<float, TEST_MEMSPACE>( TEST_EXECSPACE(), 3, 20.0f, pf );
    SphereMechanics<double, TEST_MEMSPACE> md( Box<double>( { 0, 0, 0 }, { 40, 40, 40 }, Boundary::open ), {} );
    SphereMechanics<float, TEST_MEMSPACE> mf( Box<float>( { 0, 0, 0 }, { 40, 40, 40 }, Boundary::open ), {} );
    const auto hd = by_id( relax( ad, md, 5 ) );
    const auto hf = by_id( relax( af, mf, 5 ) );
    ASSERT_EQ( hd.size(), hf.size() );
    double moved = 0;
    for ( const auto& [id, a] : hd )
        for ( int k = 0; k < 3; ++k )
        {
            EXPECT_NEAR( double( hf.at( id ).x[k] ), a.x[k], 2e-4 ) << "id " << id;
            moved = std::max( moved, std::abs( a.x[k] - 20.0 * std::round( a.x[k] / 20.0 ) ) );
        }
    EXPECT_GT( moved, 0.1 ); // the agents did move
}

// Agents whose centres coincide push apart along a direction fixed by their ids, with equal and
// opposite forces of the magnitude equation (1) gives at distance zero; the result does not depend
// on which of them comes first in memory.
TEST( TEST_CATEGORY, mechanics_coincident_centres_separate )
{
    const double volume = 3.14159265358979323846 / 6 * 1000;
    for ( bool swapped : { false, true } )
    {
        std::vector<HostAgent<double>> h = { { { 5, 5, 5 }, 10, 0, 1 / volume, 17 },
                                             { { 5, 5, 5 }, 10, 0, 1 / volume, 4 } };
        if ( swapped )
            std::swap( h[0], h[1] );
        Agents<double> agents = from_host<double, TEST_MEMSPACE>( h );
        SphereMechanics<double, TEST_MEMSPACE> mech( Box<double>( { 0, 0, 0 }, { 10, 10, 10 }, Boundary::open ), {} );
        mech.update_grid( TEST_EXECSPACE(), agents );
        EXPECT_EQ( mech.compute_displacements( TEST_EXECSPACE(), agents, true ), 2 );
        const auto f = forces_of( mech, 2 );
        const auto ids = to_host( agents );
        const int a = ids[0].id == 4 ? 0 : 1; // the agent with id 4
        const double r1 = 6.5, r = r1 / 2, expected = 2 * ( 2 * r1 ) - std::sqrt( r * 2 * r1 );
        double norm = 0;
        for ( int c = 0; c < 3; ++c )
        {
            EXPECT_NEAR( f[0][c] + f[1][c], 0.0, 1e-12 );
            norm += f[a][c] * f[a][c];
        }
        EXPECT_NEAR( std::sqrt( norm ), expected, 1e-12 );
        static double first_direction[3];
        if ( !swapped )
            for ( int c = 0; c < 3; ++c )
                first_direction[c] = f[a][c];
        else
            for ( int c = 0; c < 3; ++c )
                EXPECT_EQ( f[a][c], first_direction[c] ); // same direction for id 4 either way
        mech.apply_displacements( TEST_EXECSPACE(), agents );
        const auto moved = to_host( agents );
        double d2 = 0;
        for ( int c = 0; c < 3; ++c )
            d2 += ( moved[0].x[c] - moved[1].x[c] ) * ( moved[0].x[c] - moved[1].x[c] );
        EXPECT_GT( d2, 0.01 );
    }
}

// No agents at all is a valid state (a population that died out, a rank without agents).
TEST( TEST_CATEGORY, mechanics_no_agents )
{
    Agents<double> agents( "empty", 0 );
    SphereMechanics<double, TEST_MEMSPACE> mech( Box<double>( { 0, 0, 0 }, { 10, 10, 10 }, Boundary::open ), {} );
    EXPECT_TRUE( mech.update_grid( TEST_EXECSPACE(), agents ) );
    EXPECT_EQ( mech.compute_displacements( TEST_EXECSPACE(), agents, true ), 0 );
    mech.apply_displacements( TEST_EXECSPACE(), agents );
    EXPECT_EQ( agents.size(), 0u );
}

TEST( TEST_CATEGORY, mechanics_bad_input )
{
    std::vector<HostAgent<double>> h = { { { 0, 0, 0 }, 10, 0, 1, 0 },
                                         { { 1, 0, 0 }, 10, 0, 1, 1 },
                                         { { 2, 0, 0 }, std::nan( "" ), 0, 1, 2 } };
    Agents<double> agents = from_host<double, TEST_MEMSPACE>( h );
    SphereMechanics<double, TEST_MEMSPACE> mech( Box<double>::cube( 10, Boundary::periodic ), {} );
    try
    {
        mech.update_grid( TEST_EXECSPACE(), agents );
        FAIL() << "a NaN diameter was accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "agent 2 has diameter" ), std::string::npos ) << e.what();
    }
    // A zero density (mass 0) is rejected the same way, naming the agent and the value.
    h[2].diameter = 10;
    h[1].density = 0;
    Agents<double> zero_mass = from_host<double, TEST_MEMSPACE>( h );
    try
    {
        mech.update_grid( TEST_EXECSPACE(), zero_mass );
        FAIL() << "a zero density was accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "agent 1 has density 0" ), std::string::npos ) << e.what();
    }
    h[1].density = 1;
    MechanicsParameters<double> p;
    p.time_step = -1;
    try
    {
        SphereMechanics<double, TEST_MEMSPACE> bad( Box<double>::cube( 10 ), p );
        FAIL() << "a negative time step was accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "time_step = -1" ), std::string::npos ) << e.what();
    }
    // A grid that no longer matches the agents is an error, not a wrong answer.
    Agents<double> two = from_host<double, TEST_MEMSPACE>( { h[0], h[1] } );
    mech.update_grid( TEST_EXECSPACE(), two );
    two.resize( 1 );
    EXPECT_THROW( mech.compute_displacements( TEST_EXECSPACE(), two ), morula::core::InputError );
}

} // namespace morula_test_mechanics
