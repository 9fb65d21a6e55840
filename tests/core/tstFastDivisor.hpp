#include <morula/core/FastDivisor.hpp>
#include <morula/core/HashedRng.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace morula_test_fast_divisor
{
using morula::core::FastDivisor;

// Quotients and remainders of `values` by f on the device. (Not in the test's body: nvcc refuses device
// lambdas in a gtest TestBody, a private member function.)
inline void divide_on_device( const FastDivisor& f, const Kokkos::View<std::uint32_t*, TEST_MEMSPACE>& values,
                              const Kokkos::View<std::uint32_t*, TEST_MEMSPACE>& q,
                              const Kokkos::View<std::uint32_t*, TEST_MEMSPACE>& r )
{
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, int( values.extent( 0 ) ) ), KOKKOS_LAMBDA( const int i ) {
            q( i ) = f.quotient( values( i ) );
            r( i ) = f.remainder( values( i ), q( i ) );
        } );
}

// Quotients and remainders against the hardware division, on the device: edge divisors (1, powers of
// two, 2^32 - 1, lattice extents) with edge dividends (0, d - 1, d, multiples and 2^32 - 1), and hashed
// random pairs over the whole 32-bit range.
TEST( TEST_CATEGORY, fast_divisor_equals_integer_division )
{
    const std::vector<std::uint32_t> divisors = { 1u,       2u,          3u,          4u,          7u,         12u,
                                                  64u,      100u,        256u,        641u,        65535u,     65536u,
                                                  65537u,   1u << 20,    1000003u,    1u << 31,    2147483647u,
                                                  4294967291u, 4294967295u };
    const int randoms = 4096;
    for ( std::uint32_t d : divisors )
    {
        const FastDivisor f( d );
        std::vector<std::uint32_t> n = { 0u, d - 1u, d, d + 1u, 2u * d - 1u, 4294967295u, 4294967294u, 2147483648u };
        const morula::core::HashedRng rng( d );
        for ( int k = 0; k < randoms; ++k )
            n.push_back( std::uint32_t( rng.bits( std::uint64_t( k ), 0, 0 ) >> ( k % 31 ) ) );
        Kokkos::View<std::uint32_t*, TEST_MEMSPACE> values( "values", n.size() );
        Kokkos::View<std::uint32_t*, TEST_MEMSPACE> q( "q", n.size() ), r( "r", n.size() );
        Kokkos::deep_copy( values, Kokkos::View<const std::uint32_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>( n.data(), n.size() ) );
        divide_on_device( f, values, q, r );
        const auto hq = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), q );
        const auto hr = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), r );
        for ( std::size_t i = 0; i < n.size(); ++i )
        {
            ASSERT_EQ( hq( i ), n[i] / d ) << n[i] << " / " << d;
            ASSERT_EQ( hr( i ), n[i] % d ) << n[i] << " % " << d;
        }
    }
}

} // namespace morula_test_fast_divisor
