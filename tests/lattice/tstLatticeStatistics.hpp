// The physics of the lattice: free diffusion gives MSD = 6 D t, anisotropic probabilities the
// matching per-axis MSDs, the fused pass the same statistics as the split passes, and obstacles slow
// long-time diffusion with a sub-diffusive crossover (Roberts et al. 2009, section 3).
#include "LatticeTestUtils.hpp"

#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace morula_test_lattice_statistics
{
using namespace morula::lattice;

// Mean and standard error of x^2 for x a sum of T independent steps in {-1, 0, +1} with P(+1) =
// P(-1) = q: E x^2 = T s, E x^4 = T s + 3 T (T - 1) s^2 with s = 2 q.
struct Expected
{
    double mean, sigma;
};
inline Expected expected_axis_msd( double q, double steps, double tracers )
{
    const double s = 2 * q;
    const double m2 = steps * s;
    const double m4 = steps * s + 3 * steps * ( steps - 1 ) * s * s;
    return { m2, std::sqrt( ( m4 - m2 * m2 ) / tracers ) };
}

// Several diffusion coefficients in one periodic lattice (one species each), sampled over time.
void check_free_diffusion( PassScheme scheme )
{
    const double q[] = { 0.5, 0.125, 0.025, 2.5e-3 };
    const int species = 4;
    const std::size_t per_species = 1200;
    DiffusionRules rules( species );
    for ( int s = 0; s < species; ++s )
        rules.set_isotropic( s, q[s] );
    Lattice<2, TEST_MEMSPACE> lattice( LatticeShape( 48, 48, 48 ) );
    const auto tracers = place_particles( lattice, std::vector<std::size_t>( species, per_species ), rules, 12,
                                          ParticleCodes::tracers );
    DiffusionOptions opt;
    opt.scheme = scheme;
    opt.seed = 99;
    LatticeDiffusion<2, TEST_EXECSPACE> model( TEST_EXECSPACE(), lattice, rules, tracers, opt );
    int done = 0;
    for ( int t : { 20, 80, 160 } )
    {
        model.advance( TEST_EXECSPACE(), t - done );
        done = t;
        for ( int s = 0; s < species; ++s )
        {
            const auto m = model.msd( s );
            ASSERT_EQ( m.tracers, per_species );
            const auto e = expected_axis_msd( q[s], t, double( per_species ) );
            for ( int a = 0; a < 3; ++a )
                EXPECT_NEAR( m.per_axis[a], e.mean, 5 * e.sigma )
                    << to_string( scheme ) << " p " << q[s] << " t " << t << " axis " << a;
            // MSD = 6 D t with D = lambda^2 (1 - p0) / (2 tau), in lattice units: 6 q t.
            EXPECT_NEAR( m.total(), 6 * q[s] * t, 5 * std::sqrt( 3.0 ) * e.sigma );
        }
    }
    // At 0.04 particles per site, 2 slots: overflows are rare events.
    EXPECT_LT( double( model.overflows() ), 0.01 * double( model.particles() ) * done );
}

TEST( TEST_CATEGORY, lattice_free_diffusion_gives_msd_6Dt )
{
    check_free_diffusion( PassScheme::split );
}

TEST( TEST_CATEGORY, lattice_fused_pass_gives_the_same_statistics )
{
    check_free_diffusion( PassScheme::fused );
}

TEST( TEST_CATEGORY, lattice_anisotropic_probabilities_give_per_axis_msd )
{
    DiffusionRules rules( 1 );
    const double q[3] = { 0.3, 0.1, 0.02 };
    for ( int a = 0; a < 3; ++a )
        rules.set( 0, a, { q[a], 1 - 2 * q[a], q[a] } );
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
    {
        Lattice<2, TEST_MEMSPACE> lattice( LatticeShape( 40, 40, 40 ) );
        const std::size_t n = 3000;
        const auto tracers = place_particles( lattice, { n }, rules, 5, ParticleCodes::tracers );
        DiffusionOptions opt;
        opt.scheme = scheme;
        LatticeDiffusion<2, TEST_EXECSPACE> model( TEST_EXECSPACE(), lattice, rules, tracers, opt );
        model.advance( TEST_EXECSPACE(), 100 );
        const auto m = model.msd( 0 );
        for ( int a = 0; a < 3; ++a )
        {
            const auto e = expected_axis_msd( q[a], 100, double( n ) );
            EXPECT_NEAR( m.per_axis[a], e.mean, 5 * e.sigma ) << to_string( scheme ) << " axis " << a;
        }
    }
}

// Obstacles at 10, 20 and 30% volume: the long-time diffusion coefficient falls with the fraction,
// and MSD/t falls from its short-time value (sub-diffusive crossover) towards a lower plateau.
TEST( TEST_CATEGORY, lattice_crowding_slows_long_time_diffusion )
{
    const double q = 0.5;
    double previous_long = 1;
    for ( double fraction : { 0.1, 0.2, 0.3 } )
    {
        DiffusionRules rules( 1 );
        rules.set_isotropic( 0, q );
        rules.block( 1 );
        Lattice<2, TEST_MEMSPACE> lattice( LatticeShape( 48, 48, 48 ) );
        place_sphere_obstacles( TEST_EXECSPACE(), lattice, 1.5, fraction, 1, 31 );
        const auto tracers = place_particles( lattice, { 6000 }, rules, 6, ParticleCodes::tracers );
        LatticeDiffusion<2, TEST_EXECSPACE> model( TEST_EXECSPACE(), lattice, rules, tracers );
        std::vector<double> d_ratio; // (MSD / 6 t) / D0 at t = 2, 250, 300
        int done = 0;
        for ( int t : { 2, 250, 300 } )
        {
            model.advance( TEST_EXECSPACE(), t - done );
            done = t;
            d_ratio.push_back( model.msd( 0 ).total() / ( 6 * q * t ) );
        }
        std::printf( "obstacles %.0f%%: D(t)/D0 = %.3f (t = 2), %.3f (t = 250), %.3f (t = 300)\n", 100 * fraction,
                     d_ratio[0], d_ratio[1], d_ratio[2] );
        // The crossover: clear (many standard errors of ~0.01) from 20% on; at 10% it is within noise.
        if ( fraction > 0.15 )
            EXPECT_LT( d_ratio[2], d_ratio[0] - 0.04 ) << "no crossover at " << fraction;
        EXPECT_LT( d_ratio[2], previous_long ) << "D(long) did not fall from the previous fraction";
        // Near the plateau: the last two samples agree within noise.
        EXPECT_NEAR( d_ratio[1], d_ratio[2], 0.05 );
        previous_long = d_ratio[2];
    }
}

} // namespace morula_test_lattice_statistics
