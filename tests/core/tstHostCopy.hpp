#include <morula/core/HostCopy.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace morula_test_hostcopy
{
using morula::core::CapacityError;
using morula::core::copy_from_host;
using morula::core::copy_to_host;
using morula::core::InputError;
using morula::core::next_free_id;

constexpr double untouched = -12345.5;

// Host values that are not exact in float, distinct per index.
std::vector<double> values( std::size_t count )
{
    std::vector<double> v( count );
    for ( std::size_t i = 0; i < count; ++i )
        v[i] = 0.1 * static_cast<double>( i ) + 1.0 / 3.0;
    return v;
}

TEST( TEST_CATEGORY, host_copy_rank1_round_trip_leaves_the_rest )
{
    Kokkos::View<double*, TEST_MEMSPACE> field( "field", 10 );
    Kokkos::deep_copy( field, untouched );
    const auto in = values( 6 );
    copy_from_host( in, 6, field );

    const auto all = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), field );
    for ( std::size_t i = 0; i < 6; ++i )
        EXPECT_EQ( all( i ), in[i] ) << "entry " << i;
    for ( std::size_t i = 6; i < 10; ++i )
        EXPECT_EQ( all( i ), untouched ) << "entry " << i << " beyond n was written";

    std::vector<double> out( 50, 7.0 ); // resized, not appended to
    copy_to_host( field, 6, out );
    EXPECT_EQ( out, in );
}

TEST( TEST_CATEGORY, host_copy_vector_field_float_from_double )
{
    // the layout of positions: x, y and z of consecutive entries contiguous, capacity above n
    Kokkos::View<float* [3], Kokkos::LayoutLeft, TEST_MEMSPACE> field( "positions", 9 );
    Kokkos::deep_copy( field, static_cast<float>( untouched ) );
    const std::size_t n = 5;
    const auto in = values( 3 * n );
    copy_from_host( in, n, field );

    const auto all = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), field );
    for ( std::size_t i = 0; i < 9; ++i )
        for ( int d = 0; d < 3; ++d )
        {
            const float want = i < n ? static_cast<float>( in[3 * i + d] ) : static_cast<float>( untouched );
            EXPECT_EQ( all( i, d ), want ) << "entry " << i << " component " << d;
        }

    std::vector<double> out;
    copy_to_host( field, n, out );
    ASSERT_EQ( out.size(), 3 * n );
    for ( std::size_t j = 0; j < 3 * n; ++j )
        EXPECT_EQ( out[j], static_cast<double>( static_cast<float>( in[j] ) ) ) << "value " << j;
}

TEST( TEST_CATEGORY, host_copy_rank2_layout_right_and_left )
{
    const std::size_t n = 4, k = 5, capacity = 7;
    Kokkos::View<std::int64_t**, Kokkos::LayoutRight, TEST_MEMSPACE> right( "right", capacity, k );
    Kokkos::View<double**, Kokkos::LayoutLeft, TEST_MEMSPACE> left( "left", capacity, k );
    Kokkos::deep_copy( right, -1 );
    Kokkos::deep_copy( left, untouched );
    std::vector<std::int64_t> in( n * k );
    for ( std::size_t j = 0; j < in.size(); ++j )
        in[j] = 1000 + 17 * static_cast<std::int64_t>( j );
    copy_from_host( in, n, right );
    copy_from_host( in, n, left ); // int64 -> double

    const auto r = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), right );
    const auto l = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), left );
    for ( std::size_t i = 0; i < capacity; ++i )
        for ( std::size_t j = 0; j < k; ++j )
        {
            EXPECT_EQ( r( i, j ), i < n ? in[k * i + j] : -1 ) << "LayoutRight entry " << i << ", " << j;
            EXPECT_EQ( l( i, j ), i < n ? static_cast<double>( in[k * i + j] ) : untouched )
                << "LayoutLeft entry " << i << ", " << j;
        }

    std::vector<std::int64_t> out_right, out_left;
    copy_to_host( right, n, out_right );
    copy_to_host( left, n, out_left ); // double -> int64
    EXPECT_EQ( out_right, in );
    EXPECT_EQ( out_left, in );
}

TEST( TEST_CATEGORY, host_copy_of_zero_entries )
{
    Kokkos::View<int*, TEST_MEMSPACE> field( "field", 4 );
    Kokkos::deep_copy( field, 9 );
    copy_from_host( std::vector<int>{}, 0, field );
    const auto all = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), field );
    for ( std::size_t i = 0; i < 4; ++i )
        EXPECT_EQ( all( i ), 9 );

    std::vector<int> out{ 1, 2, 3 };
    copy_to_host( field, 0, out );
    EXPECT_TRUE( out.empty() );

    // a field never allocated, as in a default-constructed container
    Kokkos::View<double* [3], Kokkos::LayoutLeft, TEST_MEMSPACE> none;
    std::vector<double> xyz{ 1.0 };
    copy_to_host( none, 0, xyz );
    EXPECT_TRUE( xyz.empty() );
    copy_from_host( xyz, 0, none );
}

TEST( TEST_CATEGORY, host_copy_refuses_too_many_entries )
{
    Kokkos::View<double* [3], Kokkos::LayoutLeft, TEST_MEMSPACE> field( "field", 4 );
    std::vector<double> out;
    EXPECT_THROW( copy_to_host( field, 5, out ), InputError );
    EXPECT_THROW( copy_from_host( values( 15 ), 5, field ), InputError );
    EXPECT_THROW( copy_from_host( values( 8 ), 3, field ), InputError ); // 3 values per entry
    EXPECT_NO_THROW( copy_from_host( values( 12 ), 4, field ) );
}

TEST( TEST_CATEGORY, next_free_id_is_above_every_id )
{
    EXPECT_EQ( next_free_id( {} ), 0 );
    EXPECT_EQ( next_free_id( { 0 } ), 1 );
    EXPECT_EQ( next_free_id( { 3, 41, 7, 1 } ), 42 );
    EXPECT_EQ( next_free_id( { -5, -2 } ), 0 );
    EXPECT_EQ( next_free_id( { std::int64_t( 1 ) << 40 } ), ( std::int64_t( 1 ) << 40 ) + 1 );
    EXPECT_THROW( next_free_id( { 2, std::numeric_limits<std::int64_t>::max() } ), CapacityError );
}

} // namespace morula_test_hostcopy
