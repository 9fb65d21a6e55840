// The register-resident LU of the batched Rosenbrock kernels (detail/SmallMassAction.hpp: small_lu_factor,
// small_lu_solve) against a reference solve, on matrices that need row interchanges after the first
// column. Until the work-precision study of issue #45 the factorisation swapped whole rows while the solve
// applied each interchange just before its column's elimination: wrong solutions whenever a swap came after
// the first column (mass-conserving networks give column diagonally dominant W and never swap; the
// Oregonator did, and Rodas5P took 3410 steps and 1326 rejections where 899 and 27 were due).
#include <morula/ode/detail/SmallMassAction.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace morula_test_small_lu
{

// Gaussian elimination with partial pivoting on the host, written out plainly: the reference.
template <int N>
void reference_solve( double ( &a )[N][N], double ( &b )[N] )
{
    for ( int k = 0; k < N; ++k )
    {
        int p = k;
        for ( int i = k + 1; i < N; ++i )
            if ( std::fabs( a[i][k] ) > std::fabs( a[p][k] ) )
                p = i;
        for ( int j = 0; j < N; ++j )
            std::swap( a[k][j], a[p][j] );
        std::swap( b[k], b[p] );
        for ( int i = k + 1; i < N; ++i )
        {
            const double l = a[i][k] / a[k][k];
            for ( int j = k; j < N; ++j )
                a[i][j] -= l * a[k][j];
            b[i] -= l * b[k];
        }
    }
    for ( int k = N - 1; k >= 0; --k )
    {
        double s = b[k];
        for ( int j = k + 1; j < N; ++j )
            s -= a[k][j] * b[j];
        b[k] = s / a[k][k];
    }
}

template <int N>
double worst_relative_error( int trials, unsigned seed )
{
    std::mt19937_64 rng( seed );
    std::normal_distribution<double> normal;
    double worst = 0;
    for ( int t = 0; t < trials; ++t )
    {
        double a[N][N], lu[N][N], ref[N][N], b[N], x[N], expected[N];
        int pivot[N];
        for ( int i = 0; i < N; ++i )
        {
            for ( int j = 0; j < N; ++j )
                a[i][j] = lu[i][j] = ref[i][j] = normal( rng );
            b[i] = x[i] = expected[i] = normal( rng );
        }
        EXPECT_TRUE( morula::ode::detail::small_lu_factor( lu, pivot ) );
        morula::ode::detail::small_lu_solve( lu, pivot, x );
        reference_solve( ref, expected );
        double scale = 0, error = 0;
        for ( int i = 0; i < N; ++i )
        {
            scale = std::fmax( scale, std::fabs( expected[i] ) );
            error = std::fmax( error, std::fabs( x[i] - expected[i] ) );
        }
        worst = std::fmax( worst, error / scale );
    }
    return worst;
}

TEST( TEST_CATEGORY, small_lu_solves_with_interchanges_after_the_first_column )
{
    // No swap in column 0, rows 1 and 2 swapped in column 1: the case the whole-row swap got wrong.
    double a[3][3] = { { 1.0, 0.0, 0.0 }, { 0.5, 0.1, 1.0 }, { 0.2, 1.0, 0.3 } };
    double b[3] = { 1.0, 2.0, 3.0 };
    int pivot[3];
    ASSERT_TRUE( morula::ode::detail::small_lu_factor( a, pivot ) );
    EXPECT_EQ( pivot[1], 2 );
    morula::ode::detail::small_lu_solve( a, pivot, b );
    // A x = b by hand: x0 = 1; 0.1 x1 + x2 = 1.5; x1 + 0.3 x2 = 2.8  =>  x1 = 2.35 / 0.97, x2 = 1.5 - 0.1 x1
    const double x1 = 2.35 / 0.97;
    EXPECT_NEAR( b[0], 1.0, 1e-14 );
    EXPECT_NEAR( b[1], x1, 1e-14 );
    EXPECT_NEAR( b[2], 1.5 - 0.1 * x1, 1e-14 );
}

TEST( TEST_CATEGORY, small_lu_matches_gaussian_elimination_on_random_matrices )
{
    EXPECT_LT( worst_relative_error<3>( 500, 1 ), 1e-9 );
    EXPECT_LT( worst_relative_error<4>( 500, 2 ), 1e-9 );
    EXPECT_LT( worst_relative_error<8>( 500, 3 ), 1e-9 );
}

} // namespace morula_test_small_lu
