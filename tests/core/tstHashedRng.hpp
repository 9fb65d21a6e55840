#include <morula/core/HashedRng.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>

namespace morula_test_rng
{
using morula::core::HashedRng;

// Key of draw k in a test stream: it walks index fastest, then sub, then step, so that consecutive
// draws differ in the index (lag along particles), unless `along` says otherwise.
enum class Along
{
    index,
    sub,
    step
};

KOKKOS_INLINE_FUNCTION void key_of( std::int64_t k, Along along, std::uint64_t& index,
                                    std::uint32_t& sub, std::uint32_t& step )
{
    const std::uint64_t u = static_cast<std::uint64_t>( k );
    switch ( along )
    {
    case Along::index:
        index = u;
        sub = 3;
        step = 11;
        break;
    case Along::sub:
        index = 12345;
        sub = static_cast<std::uint32_t>( u );
        step = 17;
        break;
    default:
        index = 987654321;
        sub = 1;
        step = static_cast<std::uint32_t>( u );
        break;
    }
}

void check_device_stream_equals_host()
{
    const int n = 1 << 20;
    const HashedRng rng( 2026 );
    Kokkos::View<std::uint64_t*, TEST_MEMSPACE> bits( "bits", n );
    Kokkos::View<float*, TEST_MEMSPACE> uf( "uf", n );
    Kokkos::View<double*, TEST_MEMSPACE> ud( "ud", n );
    Kokkos::View<double*, TEST_MEMSPACE> nd( "nd", n );
    Kokkos::View<float*, TEST_MEMSPACE> nf( "nf", n );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int k ) {
            // Mix all three counters so that the whole key is exercised.
            const std::uint64_t index = std::uint64_t( k ) * 2654435761ULL;
            const std::uint32_t sub = static_cast<std::uint32_t>( k % 7 );
            const std::uint32_t step = static_cast<std::uint32_t>( k / 5 );
            bits( k ) = rng.bits( index, sub, step );
            uf( k ) = rng.uniform<float>( index, sub, step );
            ud( k ) = rng.uniform<double>( index, sub, step );
            nd( k ) = rng.normal<double>( index, sub, step );
            nf( k ) = rng.normal<float>( index, sub, step );
        } );
    auto hb = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), bits );
    auto huf = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), uf );
    auto hud = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), ud );
    auto hnd = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), nd );
    auto hnf = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), nf );
    for ( int k = 0; k < n; ++k )
    {
        const std::uint64_t index = std::uint64_t( k ) * 2654435761ULL;
        const std::uint32_t sub = static_cast<std::uint32_t>( k % 7 );
        const std::uint32_t step = static_cast<std::uint32_t>( k / 5 );
        ASSERT_EQ( hb( k ), rng.bits( index, sub, step ) ) << "draw " << k;
        ASSERT_EQ( huf( k ), rng.uniform<float>( index, sub, step ) ) << "draw " << k;
        ASSERT_EQ( hud( k ), rng.uniform<double>( index, sub, step ) ) << "draw " << k;
        ASSERT_GE( huf( k ), 0.0f );
        ASSERT_LT( huf( k ), 1.0f );
        ASSERT_GE( hud( k ), 0.0 );
        ASSERT_LT( hud( k ), 1.0 );
        // Normals pass through log/cos/sqrt: equal to a few ulp across backends, not bit for bit.
        const double ref = rng.normal<double>( index, sub, step );
        ASSERT_NEAR( hnd( k ), ref, 1e-13 * ( 1.0 + std::abs( ref ) ) ) << "draw " << k;
        const float reff = rng.normal<float>( index, sub, step );
        ASSERT_NEAR( hnf( k ), reff, 2e-5f * ( 1.0f + std::abs( reff ) ) ) << "draw " << k;
    }
}

TEST( TEST_CATEGORY, rng_device_stream_equals_host_bit_for_bit )
{
    check_device_stream_equals_host();
}

TEST( TEST_CATEGORY, rng_is_a_pure_function_of_its_key )
{
    const HashedRng a( 42 ), b( 42 ), c( 43 );
    EXPECT_EQ( a.bits( 5, 1, 9 ), b.bits( 5, 1, 9 ) );
    EXPECT_EQ( a.seed(), 42u );
    // Changing any one component of the key changes the bits.
    const std::uint64_t base = a.bits( 5, 1, 9 );
    EXPECT_NE( base, c.bits( 5, 1, 9 ) );
    EXPECT_NE( base, a.bits( 6, 1, 9 ) );
    EXPECT_NE( base, a.bits( 5, 2, 9 ) );
    EXPECT_NE( base, a.bits( 5, 1, 10 ) );
    // No collisions among 10^5 keys that differ in one counter only.
    std::set<std::uint64_t> seen;
    for ( std::uint32_t k = 0; k < 100000; ++k )
    {
        seen.insert( a.bits( k, 0, 0 ) );
        seen.insert( a.bits( 0, k + 1, 0 ) );
        seen.insert( a.bits( 0, 0, k + 1 ) );
    }
    EXPECT_EQ( seen.size(), 300000u );
}

// Chi-square of 10^7 uniforms in 1000 equal bins, computed on the device; the statistic is turned
// into a standard normal by the Wilson-Hilferty transform.
template <class Scalar>
void check_chi_square( Along along )
{
    const std::int64_t n = 10000000;
    const int bins = 1000;
    const HashedRng rng( 777 );
    Kokkos::View<std::int64_t*, TEST_MEMSPACE> hist( "hist", bins );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE, Kokkos::IndexType<std::int64_t>>( 0, n ),
        KOKKOS_LAMBDA( const std::int64_t k ) {
            std::uint64_t index;
            std::uint32_t sub, step;
            key_of( k, along, index, sub, step );
            const Scalar u = rng.uniform<Scalar>( index, sub, step );
            int b = static_cast<int>( u * bins );
            b = b < bins ? b : bins - 1;
            Kokkos::atomic_add( &hist( b ), std::int64_t( 1 ) );
        } );
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), hist );
    const double expected = double( n ) / bins;
    double chi2 = 0;
    std::int64_t total = 0;
    for ( int b = 0; b < bins; ++b )
    {
        chi2 += ( h( b ) - expected ) * ( h( b ) - expected ) / expected;
        total += h( b );
    }
    ASSERT_EQ( total, n );
    const double dof = bins - 1;
    const double z = ( std::cbrt( chi2 / dof ) - ( 1.0 - 2.0 / ( 9.0 * dof ) ) ) /
                     std::sqrt( 2.0 / ( 9.0 * dof ) );
    // |z| < 4.5: two-sided p > 7e-6; a biased generator lands far outside.
    EXPECT_LT( std::abs( z ), 4.5 ) << "chi2 = " << chi2 << " for " << dof << " dof";
}

TEST( TEST_CATEGORY, rng_chi_square_uniform_double_along_index )
{
    check_chi_square<double>( Along::index );
}
TEST( TEST_CATEGORY, rng_chi_square_uniform_float_along_step )
{
    check_chi_square<float>( Along::step );
}
TEST( TEST_CATEGORY, rng_chi_square_uniform_double_along_sub )
{
    check_chi_square<double>( Along::sub );
}

// Lag-1 serial correlation of 10^7 consecutive uniforms: |r| < 5 / sqrt(n).
void check_serial_correlation( Along along )
{
    const std::int64_t n = 10000000;
    const HashedRng rng( 31337 );
    double s1 = 0, s2 = 0, s11 = 0;
    Kokkos::parallel_reduce(
        Kokkos::RangePolicy<TEST_EXECSPACE, Kokkos::IndexType<std::int64_t>>( 0, n ),
        KOKKOS_LAMBDA( const std::int64_t k, double& a, double& aa, double& ab ) {
            std::uint64_t index;
            std::uint32_t sub, step;
            key_of( k, along, index, sub, step );
            const double u = rng.uniform<double>( index, sub, step );
            key_of( k + 1, along, index, sub, step );
            const double v = rng.uniform<double>( index, sub, step );
            a += u;
            aa += u * u;
            ab += u * v;
        },
        s1, s2, s11 );
    const double mean = s1 / n;
    const double var = s2 / n - mean * mean;
    const double r = ( s11 / n - mean * mean ) / var;
    EXPECT_NEAR( mean, 0.5, 5.0 * std::sqrt( 1.0 / 12.0 / n ) );
    EXPECT_NEAR( var, 1.0 / 12.0, 1e-3 );
    EXPECT_LT( std::abs( r ), 5.0 / std::sqrt( double( n ) ) ) << "lag-1 correlation " << r;
}

TEST( TEST_CATEGORY, rng_lag1_correlation_along_index ) { check_serial_correlation( Along::index ); }
TEST( TEST_CATEGORY, rng_lag1_correlation_along_step ) { check_serial_correlation( Along::step ); }
TEST( TEST_CATEGORY, rng_lag1_correlation_along_sub ) { check_serial_correlation( Along::sub ); }

// First four moments of 10^7 normal variates, each within 5 standard errors.
template <class Scalar>
void check_normal_moments()
{
    const std::int64_t n = 10000000;
    const HashedRng rng( 99 );
    double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
    Kokkos::parallel_reduce(
        Kokkos::RangePolicy<TEST_EXECSPACE, Kokkos::IndexType<std::int64_t>>( 0, n ),
        KOKKOS_LAMBDA( const std::int64_t k, double& a, double& b, double& c, double& d ) {
            const double z = rng.normal<Scalar>( static_cast<std::uint64_t>( k ), 0, 5 );
            a += z;
            b += z * z;
            c += z * z * z;
            d += z * z * z * z;
        },
        m1, m2, m3, m4 );
    m1 /= n;
    m2 /= n;
    m3 /= n;
    m4 /= n;
    EXPECT_NEAR( m1, 0.0, 5.0 * std::sqrt( 1.0 / n ) );
    EXPECT_NEAR( m2, 1.0, 5.0 * std::sqrt( 2.0 / n ) );
    EXPECT_NEAR( m3, 0.0, 5.0 * std::sqrt( 15.0 / n ) );
    EXPECT_NEAR( m4, 3.0, 5.0 * std::sqrt( 96.0 / n ) );
}

TEST( TEST_CATEGORY, rng_normal_moments_double ) { check_normal_moments<double>(); }
TEST( TEST_CATEGORY, rng_normal_moments_float ) { check_normal_moments<float>(); }

} // namespace morula_test_rng
