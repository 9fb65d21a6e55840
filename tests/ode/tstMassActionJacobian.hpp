// The analytic Jacobian of MassActionSystem (sparse values and dense form) against central finite
// differences of the right-hand side, on the device: a hand-made network with every reaction order up
// to 3 and a species that is its own reactant twice over, and generated LASSIE-style networks.
#include <OdeTestUtils.hpp>

#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/SyntheticNetwork.hpp>
#include <morula/ode/detail/MassActionKernels.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace morula_test_ode_jacobian
{
using morula::ode::MassActionSystem;
using morula::ode::ReactionNetwork;
using morula::ode::detail::Strided;

struct Evaluated
{
    std::vector<double> dense;      // analytic, row-major n x n
    std::vector<double> sparse;     // analytic, CSR values
    std::vector<double> difference; // central differences, row-major n x n
    std::vector<int> row_offsets, columns;
};

// Everything on the device in one single-threaded kernel (the kernels take one system at a time):
// f(x + h e_q) - f(x - h e_q) over 2h for every q, and the analytic Jacobian at x.
Evaluated evaluate( const ReactionNetwork& net, const std::vector<double>& x_host )
{
    using mem = TEST_MEMSPACE;
    const MassActionSystem<mem> sys( net );
    const int n = sys.species, m = sys.reactions, nnz = sys.jacobian_nonzeros_count;
    Kokkos::View<double*, mem> x( "x", n ), xp( "x_shifted", n ), k( "k", std::max( m, 1 ) ), rates( "rates", std::max( m, 1 ) ),
        fp( "f_plus", n ), fm( "f_minus", n ), dense( "dense", n * n ), sparse( "sparse", std::max( nnz, 1 ) ),
        difference( "difference", n * n );
    auto xh = Kokkos::create_mirror_view( x );
    for ( int i = 0; i < n; ++i )
        xh( i ) = x_host[std::size_t( i )];
    Kokkos::deep_copy( x, xh );
    Kokkos::deep_copy( Kokkos::subview( k, std::make_pair( 0, m ) ), sys.rate_constants );
    Kokkos::parallel_for(
        "jacobian_test", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 1 ), KOKKOS_LAMBDA( const int ) {
            const morula::ode::detail::ThreadOps ops;
            const Strided<const double> kc{ k.data(), 1 }, xc{ x.data(), 1 }, xpc{ xp.data(), 1 };
            morula::ode::detail::evaluate_dense_jacobian( ops, sys, kc, xc, Strided<double>{ dense.data(), 1 } );
            morula::ode::detail::evaluate_jacobian_values( ops, sys, kc, xc, Strided<double>{ sparse.data(), 1 } );
            for ( int q = 0; q < n; ++q )
            {
                const double ax = x( q ) < 0 ? -x( q ) : x( q );
                const double h = 1e-6 * ( ax > 1.0 ? ax : 1.0 );
                for ( int i = 0; i < n; ++i )
                    xp( i ) = x( i );
                xp( q ) = x( q ) + h;
                morula::ode::detail::evaluate_rhs( ops, sys, kc, xpc, Strided<double>{ rates.data(), 1 },
                                                   Strided<double>{ fp.data(), 1 } );
                xp( q ) = x( q ) - h;
                morula::ode::detail::evaluate_rhs( ops, sys, kc, xpc, Strided<double>{ rates.data(), 1 },
                                                   Strided<double>{ fm.data(), 1 } );
                for ( int i = 0; i < n; ++i )
                    difference( i * n + q ) = ( fp( i ) - fm( i ) ) / ( 2 * h );
            }
        } );
    Evaluated e;
    auto copy = []( const auto& v, std::size_t count ) {
        auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), v );
        return std::vector<double>( h.data(), h.data() + count );
    };
    e.dense = copy( dense, std::size_t( n ) * n );
    e.sparse = copy( sparse, std::size_t( nnz ) );
    e.difference = copy( difference, std::size_t( n ) * n );
    auto ro = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sys.jacobian_row_offsets );
    auto co = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sys.jacobian_columns );
    e.row_offsets.assign( ro.data(), ro.data() + n + 1 );
    e.columns.assign( co.data(), co.data() + nnz );
    return e;
}

// Analytic against differences to 1e-6 relative (central differences: h^2 f''' and eps f / h, both far
// below), the sparse values equal to the dense entries they name, and zero wherever the pattern has none.
void check( const ReactionNetwork& net, unsigned seed )
{
    const int n = static_cast<int>( net.species_names.size() );
    std::mt19937_64 rng( seed );
    std::vector<double> x( static_cast<std::size_t>( n ) );
    for ( auto& v : x )
        v = std::uniform_real_distribution<double>( 0.1, 2.0 )( rng );
    x[0] = 0.0; // exact at a zero concentration too (the derivative of x^a needs no division by x)
    const Evaluated e = evaluate( net, x );
    double worst = 0;
    int mismatched = 0, outside_pattern = 0;
    std::vector<char> in_pattern( std::size_t( n ) * n, 0 );
    for ( int i = 0; i < n; ++i )
        for ( int z = e.row_offsets[std::size_t( i )]; z < e.row_offsets[std::size_t( i ) + 1]; ++z )
        {
            const int q = e.columns[std::size_t( z )];
            in_pattern[std::size_t( i ) * n + q] = 1;
            mismatched += e.sparse[std::size_t( z )] != e.dense[std::size_t( i ) * n + q];
        }
    for ( std::size_t a = 0; a < e.dense.size(); ++a )
    {
        const double err = std::abs( e.dense[a] - e.difference[a] ) / ( 1.0 + std::abs( e.difference[a] ) );
        worst = std::max( worst, err );
        outside_pattern += !in_pattern[a] && e.dense[a] != 0.0;
    }
    EXPECT_LE( worst, 1e-6 ) << net.source << ": analytic Jacobian against central differences";
    EXPECT_EQ( mismatched, 0 ) << net.source << ": sparse values differ from the dense Jacobian";
    EXPECT_EQ( outside_pattern, 0 ) << net.source << ": dense entries outside the sparsity pattern";
    // The differences see every dependence: an entry the pattern leaves out must be zero there too.
    double largest_outside = 0;
    for ( std::size_t a = 0; a < e.difference.size(); ++a )
        if ( !in_pattern[a] )
            largest_outside = std::max( largest_outside, std::abs( e.difference[a] ) );
    EXPECT_LE( largest_outside, 1e-8 ) << net.source << ": a dependence the sparsity pattern misses";
}

TEST( TEST_CATEGORY, mass_action_jacobian_matches_finite_differences )
{
    using morula::test::reaction;
    // Orders 0 to 3: a source, A -> B, 2A -> C, A + B + C -> D, 3D -> A, B + 2C -> A + D.
    auto net = morula::test::network( { "A", "B", "C", "D" },
                                      { reaction( {}, { { 0, 1 } }, 0.3 ), reaction( { { 0, 1 } }, { { 1, 1 } }, 1.5 ),
                                        reaction( { { 0, 2 } }, { { 2, 1 } }, 0.7 ),
                                        reaction( { { 0, 1 }, { 1, 1 }, { 2, 1 } }, { { 3, 1 } }, 2.0 ),
                                        reaction( { { 3, 3 } }, { { 0, 1 } }, 0.05 ),
                                        reaction( { { 1, 1 }, { 2, 2 } }, { { 0, 1 }, { 3, 1 } }, 4.0 ) },
                                      { 1, 1, 1, 1 } );
    net.source = "orders 0 to 3";
    check( net, 1 );
    for ( unsigned seed : { 3u, 11u } )
    {
        auto generated = morula::ode::generate_synthetic_network( 25, 60, seed );
        generated.source = "synthetic network, seed " + std::to_string( seed );
        check( generated, seed );
    }
}

} // namespace morula_test_ode_jacobian
