// Morula's pivoted dense LU (the BDF Newton matrix's default solver) on its own: random systems whose
// first pivot is zero (pivoting needed), a permutation matrix, 1 x 1, and a singular matrix refused.
#include <morula/ode/detail/DenseLu.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace morula_test_dense_lu
{
using morula::ode::detail::Strided;

struct Solved
{
    bool factored = false;
    std::vector<double> x;
};

// Factors a copy of A (row-major n x n) and solves A x = b on the device, single-threaded.
Solved solve( int n, const std::vector<double>& a_host, const std::vector<double>& b_host )
{
    using mem = TEST_MEMSPACE;
    Kokkos::View<double*, mem> a( "A", n * n ), b( "b", n );
    Kokkos::View<int*, mem> pivot( "pivot", n ), ok( "ok", 1 );
    auto ah = Kokkos::create_mirror_view( a );
    auto bh = Kokkos::create_mirror_view( b );
    for ( int i = 0; i < n * n; ++i )
        ah( i ) = a_host[std::size_t( i )];
    for ( int i = 0; i < n; ++i )
        bh( i ) = b_host[std::size_t( i )];
    Kokkos::deep_copy( a, ah );
    Kokkos::deep_copy( b, bh );
    Kokkos::parallel_for(
        "dense_lu_test", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 1 ), KOKKOS_LAMBDA( const int ) {
            const morula::ode::detail::ThreadOps ops;
            const Strided<double> A{ a.data(), 1 }, B{ b.data(), 1 };
            const Strided<int> P{ pivot.data(), 1 };
            ok( 0 ) = morula::ode::detail::lu_factor_pivoted( ops, n, A, P ) ? 1 : 0;
            if ( ok( 0 ) )
                morula::ode::detail::lu_solve_pivoted( ops, n, A, P, B );
        } );
    auto okh = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), ok );
    Kokkos::deep_copy( bh, b );
    Solved s;
    s.factored = okh( 0 ) == 1;
    s.x.assign( bh.data(), bh.data() + n );
    return s;
}

// max |A x - b| / (max |A| max |x|): a backward-stable solve keeps it near machine epsilon.
double relative_residual( int n, const std::vector<double>& a, const std::vector<double>& x, const std::vector<double>& b )
{
    double r = 0, amax = 0, xmax = 0;
    for ( int i = 0; i < n; ++i )
    {
        double s = -b[std::size_t( i )];
        for ( int j = 0; j < n; ++j )
        {
            s += a[std::size_t( i ) * n + j] * x[std::size_t( j )];
            amax = std::max( amax, std::abs( a[std::size_t( i ) * n + j] ) );
        }
        r = std::max( r, std::abs( s ) );
        xmax = std::max( xmax, std::abs( x[std::size_t( i )] ) );
    }
    return r / ( amax * xmax );
}

TEST( TEST_CATEGORY, dense_lu_pivoted_solves )
{
    std::mt19937_64 rng( 5 );
    std::uniform_real_distribution<double> u( -1.0, 1.0 );
    for ( int n : { 1, 2, 5, 17, 40 } )
    {
        std::vector<double> a( static_cast<std::size_t>( n * n ) ), b( static_cast<std::size_t>( n ) );
        for ( auto& v : a )
            v = u( rng );
        for ( auto& v : b )
            v = u( rng );
        if ( n > 1 )
            a[0] = 0.0; // the first pivot must come from another row
        const Solved s = solve( n, a, b );
        ASSERT_TRUE( s.factored ) << "n = " << n;
        EXPECT_LE( relative_residual( n, a, s.x, b ), 1e-13 ) << "n = " << n;
    }
    // A permutation matrix (row i has its 1 in column (i + 3) mod n): no row is its own pivot; x is b
    // permuted back, exactly.
    const int n = 7;
    std::vector<double> p( static_cast<std::size_t>( n * n ), 0.0 ), b( static_cast<std::size_t>( n ) );
    for ( int i = 0; i < n; ++i )
    {
        p[std::size_t( i ) * n + ( i + 3 ) % n] = 1.0;
        b[std::size_t( i )] = 10.0 + i;
    }
    const Solved s = solve( n, p, b );
    ASSERT_TRUE( s.factored );
    for ( int i = 0; i < n; ++i )
        EXPECT_EQ( s.x[std::size_t( ( i + 3 ) % n )], b[std::size_t( i )] ) << "row " << i;
}

TEST( TEST_CATEGORY, dense_lu_refuses_singular )
{
    // Column 2 is zero: no pivot there.
    const int n = 4;
    std::vector<double> a = { 1, 2, 0, 4, 3, 1, 0, 2, 5, 7, 0, 1, 2, 2, 0, 9 };
    EXPECT_FALSE( solve( n, a, { 1, 1, 1, 1 } ).factored );
}

} // namespace morula_test_dense_lu
