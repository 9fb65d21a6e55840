#include <morula/core/SoA.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula_test_soa
{
using morula::core::InputError;
using morula::core::Particles;
using morula::core::SoA;

using Storage = SoA<TEST_MEMSPACE, double[3], int, float>;

// Fills entries [begin, end) of every field with values derived from the index.
void fill( const Storage& s, std::size_t begin, std::size_t end )
{
    auto x = s.get<0>();
    auto id = s.get<1>();
    auto r = s.get<2>();
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( begin, end ), KOKKOS_LAMBDA( const std::size_t i ) {
            x( i, 0 ) = 1.0 * i;
            x( i, 1 ) = 2.0 * i + 0.5;
            x( i, 2 ) = -3.0 * i;
            id( i ) = static_cast<int>( 7 * i + 1 );
            r( i ) = 0.25f * i;
        } );
}

// Checks entry i holds the values fill() wrote for index expected(i).
void expect_content( const Storage& s, const std::vector<std::size_t>& expected )
{
    auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<0>() );
    auto id = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<1>() );
    auto r = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<2>() );
    ASSERT_GE( x.extent( 0 ), expected.size() );
    for ( std::size_t i = 0; i < expected.size(); ++i )
    {
        const std::size_t k = expected[i];
        ASSERT_EQ( x( i, 0 ), 1.0 * k ) << "entry " << i;
        ASSERT_EQ( x( i, 1 ), 2.0 * k + 0.5 ) << "entry " << i;
        ASSERT_EQ( x( i, 2 ), -3.0 * k ) << "entry " << i;
        ASSERT_EQ( id( i ), static_cast<int>( 7 * k + 1 ) ) << "entry " << i;
        ASSERT_EQ( r( i ), 0.25f * k ) << "entry " << i;
    }
}

std::vector<std::size_t> iota( std::size_t n )
{
    std::vector<std::size_t> v( n );
    std::iota( v.begin(), v.end(), std::size_t( 0 ) );
    return v;
}

// A random permutation of [0, n), on the host and as a device View.
std::pair<std::vector<std::size_t>, Kokkos::View<int*, TEST_MEMSPACE>> shuffled( std::size_t n, unsigned seed )
{
    std::vector<std::size_t> perm = iota( n );
    std::mt19937 rng( seed );
    std::shuffle( perm.begin(), perm.end(), rng );
    Kokkos::View<int*, TEST_MEMSPACE> p( "perm", n );
    auto ph = Kokkos::create_mirror_view( p );
    for ( std::size_t i = 0; i < n; ++i )
        ph( i ) = static_cast<int>( perm[i] );
    Kokkos::deep_copy( p, ph );
    return { perm, p };
}

TEST( TEST_CATEGORY, soa_growth_keeps_every_entry )
{
    Storage s( "cells", 100 );
    EXPECT_EQ( s.size(), 100u );
    EXPECT_GE( s.capacity(), 100u );
    fill( s, 0, 100 );
    // Grow step by step past the capacity several times; every old entry must survive each growth.
    std::size_t n = 100;
    for ( int round = 0; round < 6; ++round )
    {
        const std::size_t old_capacity = s.capacity();
        const std::size_t new_n = old_capacity + 37;
        s.resize( new_n );
        EXPECT_GT( s.capacity(), old_capacity );
        EXPECT_EQ( s.size(), new_n );
        fill( s, n, new_n );
        n = new_n;
        expect_content( s, iota( n ) );
    }
    // reserve() grows without changing the size and keeps the content.
    s.reserve( 4 * s.capacity() );
    EXPECT_EQ( s.size(), n );
    expect_content( s, iota( n ) );
}

TEST( TEST_CATEGORY, soa_new_entries_are_zero_after_shrink_and_grow )
{
    Storage s( "cells", 50 );
    fill( s, 0, 50 );
    s.resize( 10 );
    EXPECT_EQ( s.size(), 10u );
    s.resize( 30 ); // within capacity: entries 10..29 were written before and must be zeroed
    auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<0>() );
    auto id = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<1>() );
    for ( int i = 10; i < 30; ++i )
    {
        EXPECT_EQ( x( i, 0 ), 0.0 );
        EXPECT_EQ( x( i, 2 ), 0.0 );
        EXPECT_EQ( id( i ), 0 );
    }
    EXPECT_EQ( id( 9 ), 7 * 9 + 1 );
}

TEST( TEST_CATEGORY, soa_permute_gathers_every_field )
{
    const std::size_t n = 1000;
    Storage s( "cells", n, 1500 );
    fill( s, 0, n );
    const auto [perm, p] = shuffled( n, 7 );
    s.permute( TEST_EXECSPACE(), p );
    expect_content( s, perm );
    EXPECT_EQ( s.capacity(), 1500u );
    // A second permute reuses the spare buffers and composes: entry i = original perm[perm[i]].
    s.permute( TEST_EXECSPACE(), p );
    std::vector<std::size_t> twice( n );
    for ( std::size_t i = 0; i < n; ++i )
        twice[i] = perm[perm[i]];
    expect_content( s, twice );
}

// Fields of 1, 2, 4 and 5 components are permuted row by row, every component with its row, in float,
// int and double.
using WideStorage = SoA<TEST_MEMSPACE, float[1], int[2], double[4], double[5]>;

// Row i: f1 = i / 2, i2 = 10 i + c, d4 = 100 i + c + 1/4, d5 = -1000 i - c. (A free function: nvcc does
// not take device lambdas in a test body.)
void fill_wide( WideStorage& s, std::size_t n )
{
    auto f1 = s.get<0>();
    auto i2 = s.get<1>();
    auto d4 = s.get<2>();
    auto d5 = s.get<3>();
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const std::size_t i ) {
            f1( i, 0 ) = 0.5f * i;
            for ( int c = 0; c < 2; ++c )
                i2( i, c ) = static_cast<int>( 10 * i + c );
            for ( int c = 0; c < 4; ++c )
                d4( i, c ) = 100.0 * i + c + 0.25;
            for ( int c = 0; c < 5; ++c )
                d5( i, c ) = -1000.0 * i - c;
        } );
}

TEST( TEST_CATEGORY, soa_permute_every_component_count )
{
    const std::size_t n = 777;
    WideStorage s( "wide", n );
    fill_wide( s, n );
    const auto [perm, p] = shuffled( n, 5 );
    s.permute( TEST_EXECSPACE(), p );
    auto h1 = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<0>() );
    auto h2 = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<1>() );
    auto h4 = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<2>() );
    auto h5 = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.get<3>() );
    for ( std::size_t i = 0; i < n; ++i )
    {
        const std::size_t k = perm[i];
        ASSERT_EQ( h1( i, 0 ), 0.5f * k ) << "entry " << i;
        for ( int c = 0; c < 2; ++c )
            ASSERT_EQ( h2( i, c ), static_cast<int>( 10 * k + c ) ) << "entry " << i;
        for ( int c = 0; c < 4; ++c )
            ASSERT_EQ( h4( i, c ), 100.0 * k + c + 0.25 ) << "entry " << i;
        for ( int c = 0; c < 5; ++c )
            ASSERT_EQ( h5( i, c ), -1000.0 * k - c ) << "entry " << i;
    }
}

// The first n entries are permuted, the ones behind them keep their rows (a distributed run's ghosts
// behind its owned agents), twice (the spare buffers swap), and bad sizes are refused.
TEST( TEST_CATEGORY, soa_permute_leading_keeps_the_rest )
{
    const std::size_t n = 700, size = 1000;
    Storage s( "cells", size, 1200 );
    fill( s, 0, size );
    const auto [perm, p] = shuffled( n, 11 );
    s.permute_leading( TEST_EXECSPACE(), p, n );
    std::vector<std::size_t> expected = iota( size );
    std::copy( perm.begin(), perm.end(), expected.begin() );
    expect_content( s, expected );
    s.permute_leading( TEST_EXECSPACE(), p, n );
    for ( std::size_t i = 0; i < n; ++i )
        expected[i] = perm[perm[i]];
    expect_content( s, expected );
    EXPECT_EQ( s.size(), size );
    EXPECT_THROW( s.permute_leading( TEST_EXECSPACE(), p, n + 1 ), InputError ) << "permutation too short";
    EXPECT_THROW( s.permute_leading( TEST_EXECSPACE(), p, size + 1 ), InputError ) << "more than stored";
}

TEST( TEST_CATEGORY, soa_permute_rejects_short_permutation )
{
    Storage s( "cells", 10 );
    Kokkos::View<int*, TEST_MEMSPACE> p( "perm", 9 );
    EXPECT_THROW( s.permute( TEST_EXECSPACE(), p ), InputError );
}

TEST( TEST_CATEGORY, particles_positions_are_structure_of_arrays )
{
    Particles<float, TEST_MEMSPACE, int> particles( "agents", 64 );
    auto x = particles.positions();
    EXPECT_EQ( x.extent( 0 ), particles.capacity() );
    EXPECT_EQ( x.extent( 1 ), 3u );
    // x of all particles is contiguous, then y, then z.
    EXPECT_EQ( x.stride( 0 ), 1u );
    EXPECT_EQ( x.stride( 1 ), particles.capacity() );
    particles.resize( 1000 );
    EXPECT_GE( particles.capacity(), 1000u );
    EXPECT_EQ( particles.positions().stride( 1 ), particles.capacity() );
}

// Every model keeps position Views as members of default-constructed structs (functors, workspaces).
// GCC 12 with the Kokkos 4.6.99 mdspan View leaves such a member's allocation tracker zeroed, and the
// first assignment crashes (docs/building.md); this test makes that toolchain fail here, not in a model.
TEST( TEST_CATEGORY, default_constructed_position_view_member_accepts_assignment )
{
    Particles<float, TEST_MEMSPACE, int> particles( "agents", 8 );
    using position_view = std::decay_t<decltype( particles.positions() )>;
    struct Holder
    {
        position_view x;
        int n = 0;
    };
    Holder h;
    h.x = particles.positions();
    h.n = 8;
    EXPECT_EQ( h.x.data(), particles.positions().data() );
    EXPECT_EQ( h.x.extent( 0 ), particles.capacity() );
    Holder copy = h;
    h = Holder{};
    EXPECT_EQ( copy.x.data(), particles.positions().data() );
}

} // namespace morula_test_soa
