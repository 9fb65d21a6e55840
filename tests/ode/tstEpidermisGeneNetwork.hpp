// The epidermis gene network (Christley et al. 2010) as a general (non-mass-action) model of OdeSolver.
#include <morula/core/Error.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/ode/OdeSolver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace
{
using namespace morula;
using Gene = ode::EpidermisGeneNetwork<TEST_MEMSPACE>;
using HostGene = ode::EpidermisGeneNetwork<Kokkos::HostSpace>;
constexpr int n_species = ode::gene_species_count;

void host_rhs( const HostGene& g, const std::vector<double>& in, const std::vector<double>& x, double f[n_species],
               double J[n_species][n_species] = nullptr )
{
    g.evaluate( { in.data(), 1 }, { x.data(), 1 }, f, J );
}

TEST( TEST_CATEGORY, ode_gene_network_jacobian_matches_finite_differences )
{
    HostGene g;
    std::mt19937_64 rng( 3 );
    std::uniform_real_distribution<double> u( 0.0, 2.0 );
    for ( int trial = 0; trial < 20; ++trial )
    {
        std::vector<double> x( n_species ), in( ode::input_count );
        for ( auto& v : x )
            v = u( rng );
        for ( auto& v : in )
            v = u( rng );
        if ( trial == 0 )
            x.assign( n_species, 0.0 ); // every Hill term at X = 0, including the activating one (h < 0)
        double f[n_species], J[n_species][n_species];
        host_rhs( g, in, x, f, J );
        for ( int q = 0; q < n_species; ++q )
        {
            const double h = trial == 0 ? 1e-8 : 1e-6; // one-sided at x = 0: error ~ f'' h
            auto xp = x, xm = x;
            xp[q] += h;
            xm[q] = std::max( 0.0, xm[q] - h );
            double fp[n_species], fm[n_species];
            host_rhs( g, in, xp, fp );
            host_rhs( g, in, xm, fm );
            for ( int i = 0; i < n_species; ++i )
                EXPECT_NEAR( J[i][q], ( fp[i] - fm[i] ) / ( xp[q] - xm[q] ), 1e-5 * ( 1.0 + std::fabs( J[i][q] ) ) )
                    << "trial " << trial << " d f" << i << " / d x" << q;
        }
    }
}

// Adhesion to the basement membrane represses Ovol1, so an adhering (basal) cell settles with Ovol2 above
// Ovol1 and a suprabasal cell (no adhesion, TGF-beta 0.4) the other way round - the toggle the paper
// describes. Both end at a steady state (f = 0).
TEST( TEST_CATEGORY, ode_gene_network_basal_and_suprabasal_states )
{
    Gene model;
    ode::SolverOptions o;
    o.relative_tolerance = 1e-8;
    o.absolute_tolerance = { 1e-12 };
    o.mode = ode::ExecutionMode::batched;
    ode::OdeSolver<TEST_EXECSPACE, TEST_MEMSPACE, Gene> solver( model, o );
    Kokkos::View<double**, Kokkos::LayoutLeft, TEST_MEMSPACE> x0( "x0", 2, n_species ), in( "in", 2, ode::input_count );
    auto hx = Kokkos::create_mirror_view( x0 );
    auto hin = Kokkos::create_mirror_view( in );
    for ( int s = 0; s < 2; ++s )
    {
        for ( int i = 0; i < n_species; ++i )
            hx( s, i ) = 0.1;
        hin( s, ode::input_mean_N ) = 0.2;
        hin( s, ode::input_mean_D ) = 0.2;
        hin( s, ode::input_mean_B ) = 0.05;
        hin( s, ode::input_tgf_beta ) = 0.4;
    }
    hin( 0, ode::input_adhesion ) = 20.0; // basal
    hin( 1, ode::input_adhesion ) = 0.0;  // suprabasal
    Kokkos::deep_copy( x0, hx );
    Kokkos::deep_copy( in, hin );
    TEST_EXECSPACE exec;
    auto r = solver.solve( exec, x0, in, { 0.0, 10.0, 2000.0 } );
    auto hs = Kokkos::create_mirror_view( r.samples );
    auto st = Kokkos::create_mirror_view( r.statistics );
    Kokkos::deep_copy( hs, r.samples );
    Kokkos::deep_copy( st, r.statistics );
    HostGene g;
    for ( int s = 0; s < 2; ++s )
    {
        ASSERT_EQ( st( s, ode::stat_status ), 0 ) << s;
        std::vector<double> x( n_species ), inputs( ode::input_count );
        for ( int i = 0; i < n_species; ++i )
            x[i] = hs( s, 2, i );
        for ( int j = 0; j < ode::input_count; ++j )
            inputs[j] = hin( s, j );
        double f[n_species];
        host_rhs( g, inputs, x, f );
        for ( int i = 0; i < n_species; ++i )
            EXPECT_LT( std::fabs( f[i] ), 1e-5 ) << "system " << s << " species " << i << " not at steady state";
    }
    EXPECT_GT( hs( 0, 2, ode::gene_O2 ), 2.0 * hs( 0, 2, ode::gene_O1 ) ) << "basal: Ovol2 high, Ovol1 low";
    EXPECT_GT( hs( 1, 2, ode::gene_O1 ), 2.0 * hs( 1, 2, ode::gene_O2 ) ) << "suprabasal: Ovol1 high, Ovol2 low";
    // c-Myc follows Ovol2's repression: higher in the suprabasal cell (low Ovol2).
    EXPECT_GT( hs( 1, 2, ode::gene_M ), hs( 0, 2, ode::gene_M ) );
}

TEST( TEST_CATEGORY, ode_gene_network_batched_equals_fine_grained )
{
    Gene model;
    const int cells = 64;
    Kokkos::View<double**, Kokkos::LayoutLeft, TEST_MEMSPACE> x0( "x0", cells, n_species ), in( "in", cells, ode::input_count );
    auto hx = Kokkos::create_mirror_view( x0 );
    auto hin = Kokkos::create_mirror_view( in );
    std::mt19937_64 rng( 11 );
    std::uniform_real_distribution<double> u( 0.0, 1.0 );
    for ( int s = 0; s < cells; ++s )
    {
        for ( int i = 0; i < n_species; ++i )
            hx( s, i ) = u( rng );
        for ( int j = 0; j < ode::input_count; ++j )
            hin( s, j ) = j == ode::input_adhesion ? 10.0 * u( rng ) : u( rng );
    }
    Kokkos::deep_copy( x0, hx );
    Kokkos::deep_copy( in, hin );
    const std::vector<double> times{ 0.0, 1.0, 10.0, 100.0 };
    TEST_EXECSPACE exec;
    ode::SolverOptions o;
    o.relative_tolerance = 1e-7;
    o.mode = ode::ExecutionMode::batched;
    ode::OdeSolver<TEST_EXECSPACE, TEST_MEMSPACE, Gene> batched( model, o );
    auto a = batched.solve( exec, x0, in, times );
    o.mode = ode::ExecutionMode::fine_grained;
    ode::OdeSolver<TEST_EXECSPACE, TEST_MEMSPACE, Gene> fine( model, o );
    auto b = fine.solve( exec, x0, in, times );
    auto ha = Kokkos::create_mirror_view( a.samples );
    auto hb = Kokkos::create_mirror_view( b.samples );
    Kokkos::deep_copy( ha, a.samples );
    Kokkos::deep_copy( hb, b.samples );
    // Same algorithm, but the two kernels are compiled separately: on CUDA their floating-point
    // contractions differ in the last bits, which can flip a borderline step decision and give another,
    // equally valid step sequence (measured up to 1e-8 relative apart at rtol 1e-7). Both must agree to the
    // requested tolerance.
    for ( int s = 0; s < cells; ++s )
        for ( std::size_t t = 0; t < times.size(); ++t )
            for ( int i = 0; i < n_species; ++i )
                EXPECT_NEAR( ha( s, t, i ), hb( s, t, i ), 1e-12 + o.relative_tolerance * std::fabs( ha( s, t, i ) ) ) << s;
    auto sa = Kokkos::create_mirror_view( a.statistics );
    auto sb = Kokkos::create_mirror_view( b.statistics );
    Kokkos::deep_copy( sa, a.statistics );
    Kokkos::deep_copy( sb, b.statistics );
    for ( int s = 0; s < cells; ++s )
    {
        EXPECT_EQ( sa( s, ode::stat_status ), 0 );
        EXPECT_EQ( sb( s, ode::stat_status ), 0 );
    }
    o.mode = ode::ExecutionMode::device_wide;
    ode::OdeSolver<TEST_EXECSPACE, TEST_MEMSPACE, Gene> device( model, o );
    auto one = Kokkos::subview( x0, std::make_pair( 0, 1 ), Kokkos::ALL );
    auto one_in = Kokkos::subview( in, std::make_pair( 0, 1 ), Kokkos::ALL );
    EXPECT_THROW( device.solve( exec, one, one_in, times ), core::InputError );
}

} // namespace
