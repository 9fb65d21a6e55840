// Helpers shared by the grid tests: point sets, an O(N^2) brute-force neighbour search on the device,
// and the neighbour sets a grid query finds, both returned to the host for exact comparison.
#ifndef MORULA_TEST_GRIDTESTUTILS_HPP
#define MORULA_TEST_GRIDTESTUTILS_HPP

#include <morula/core/Box.hpp>
#include <morula/grid/NeighborQuery.hpp>
#include <morula/grid/NeighborReduction.hpp>
#include <morula/grid/NeighborSweep.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace morula_test_grid
{
// The neighbour query's stencil walk, internal to the library (experiments and checks look inside it).
using QueryAccess = morula::grid::detail::QueryAccess;
using morula::core::Boundary;
using morula::core::Box;

template <class Scalar>
using Points = std::vector<std::array<Scalar, 3>>;

template <class Scalar>
using DevicePositions = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, TEST_MEMSPACE>;

//! For each particle: its neighbours (sorted by index) with the squared distance found.
template <class Scalar>
using NeighborSets = std::vector<std::vector<std::pair<int, Scalar>>>;

template <class Scalar>
DevicePositions<Scalar> to_device( const Points<Scalar>& p, std::size_t capacity = 0 )
{
    DevicePositions<Scalar> x( "positions", std::max( capacity, p.size() ) );
    auto h = Kokkos::create_mirror_view( x );
    for ( std::size_t i = 0; i < p.size(); ++i )
        for ( int d = 0; d < 3; ++d )
            h( i, d ) = p[i][d];
    Kokkos::deep_copy( x, h );
    return x;
}

template <class Scalar>
Points<Scalar> to_host( const DevicePositions<Scalar>& x, int n )
{
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), x );
    Points<Scalar> p( n );
    for ( int i = 0; i < n; ++i )
        for ( int d = 0; d < 3; ++d )
            p[i][d] = h( i, d );
    return p;
}

template <class Scalar>
Points<Scalar> uniform_points( int n, const Box<Scalar>& box, unsigned seed )
{
    std::mt19937_64 rng( seed );
    Points<Scalar> p( n );
    for ( auto& q : p )
        for ( int d = 0; d < 3; ++d )
        {
            std::uniform_real_distribution<double> u( box.lo[d], box.hi[d] );
            Scalar v = static_cast<Scalar>( u( rng ) );
            // Rounding to float can land on hi; keep half-open [lo, hi) for periodic axes.
            if ( v >= box.hi[d] && box.is_periodic( d ) )
                v = box.lo[d];
            q[d] = v;
        }
    return p;
}

//! Gaussian blobs holding most points, on a sparse uniform background: density varies ~100x.
template <class Scalar>
Points<Scalar> clustered_points( int n, const Box<Scalar>& box, unsigned seed )
{
    std::mt19937_64 rng( seed );
    Points<Scalar> p = uniform_points( n / 10, box, seed + 1 );
    const int blobs = 5;
    std::vector<std::array<double, 3>> centres( blobs );
    for ( auto& c : centres )
        for ( int d = 0; d < 3; ++d )
            c[d] = std::uniform_real_distribution<double>( box.lo[d] + 0.2 * box.length( d ),
                                                           box.hi[d] - 0.2 * box.length( d ) )( rng );
    std::normal_distribution<double> g( 0.0, 0.6 );
    while ( static_cast<int>( p.size() ) < n )
    {
        const auto& c = centres[p.size() % blobs];
        std::array<Scalar, 3> q;
        bool in = true;
        for ( int d = 0; d < 3; ++d )
        {
            q[d] = static_cast<Scalar>( c[d] + g( rng ) );
            in = in && q[d] >= box.lo[d] && q[d] < box.hi[d];
        }
        if ( in )
            p.push_back( q );
    }
    return p;
}

//! Copies per-particle (index, r2) buffers to sorted host sets, failing on duplicates.
template <class Scalar, class CountView, class IndexView, class R2View>
NeighborSets<Scalar> collect( const CountView& count, const IndexView& idx, const R2View& r2,
                              int n, int stride, const std::string& what )
{
    auto hc = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), count );
    auto hi = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), idx );
    auto hr = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), r2 );
    NeighborSets<Scalar> sets( n );
    for ( int i = 0; i < n; ++i )
    {
        EXPECT_LE( hc( i ), stride ) << what << ": particle " << i << " overflowed the buffer";
        const int c = std::min<int>( hc( i ), stride );
        for ( int k = 0; k < c; ++k )
            sets[i].emplace_back( hi( std::size_t( i ) * stride + k ),
                                  hr( std::size_t( i ) * stride + k ) );
        std::sort( sets[i].begin(), sets[i].end() );
        for ( int k = 1; k < c; ++k )
            EXPECT_NE( sets[i][k].first, sets[i][k - 1].first )
                << what << ": neighbour " << sets[i][k].first << " of " << i << " found twice";
    }
    return sets;
}

/*!
  O(N^2) minimum-image search on the device. It uses the same distance arithmetic as the grid
  (x_i - x_j, minimum image, then distance_squared), compiled by the same compiler for the same
  backend, so a correct grid must agree with it exactly, including pairs at exactly the radius.
*/
template <class Scalar>
NeighborSets<Scalar> brute_force( const Box<Scalar>& box, const DevicePositions<Scalar>& x, int n,
                                  Scalar radius, int& max_count )
{
    const Scalar r2max = radius * radius;
    Kokkos::View<int*, TEST_MEMSPACE> count( "count", n );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int i ) {
            int c = 0;
            for ( int j = 0; j < n; ++j )
            {
                if ( j == i )
                    continue;
                const Scalar dx = box.minimum_image( 0, x( i, 0 ) - x( j, 0 ) );
                const Scalar dy = box.minimum_image( 1, x( i, 1 ) - x( j, 1 ) );
                const Scalar dz = box.minimum_image( 2, x( i, 2 ) - x( j, 2 ) );
                if ( morula::grid::detail::distance_squared( dx, dy, dz ) <= r2max )
                    ++c;
            }
            count( i ) = c;
        } );
    max_count = 0;
    Kokkos::parallel_reduce(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ),
        KOKKOS_LAMBDA( const int i, int& m ) { m = count( i ) > m ? count( i ) : m; },
        Kokkos::Max<int>( max_count ) );
    const int stride = std::max( max_count, 1 );
    Kokkos::View<int*, TEST_MEMSPACE> idx( "idx", std::size_t( n ) * stride );
    Kokkos::View<Scalar*, TEST_MEMSPACE> r2( "r2", std::size_t( n ) * stride );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int i ) {
            int c = 0;
            for ( int j = 0; j < n; ++j )
            {
                if ( j == i )
                    continue;
                const Scalar dx = box.minimum_image( 0, x( i, 0 ) - x( j, 0 ) );
                const Scalar dy = box.minimum_image( 1, x( i, 1 ) - x( j, 1 ) );
                const Scalar dz = box.minimum_image( 2, x( i, 2 ) - x( j, 2 ) );
                const Scalar d2 = morula::grid::detail::distance_squared( dx, dy, dz );
                if ( d2 <= r2max )
                {
                    idx( std::size_t( i ) * stride + c ) = j;
                    r2( std::size_t( i ) * stride + c ) = d2;
                    ++c;
                }
            }
        } );
    return collect<Scalar>( count, idx, r2, n, stride, "brute force" );
}

//! Neighbour sets of every particle as found by the grid query (for_each_neighbor), with the stencil walk
//! reading the cell ordering from the query (the default) or compiled for one ordering (`Order`).
template <morula::grid::detail::StencilOrder Order = morula::grid::detail::StencilOrder::from_query, class Scalar,
          class Query>
NeighborSets<Scalar> query_sets( const Query& query, int n, Scalar radius, int stride )
{
    stride = std::max( stride, 1 );
    Kokkos::View<int*, TEST_MEMSPACE> count( "count", n );
    Kokkos::View<int*, TEST_MEMSPACE> idx( "idx", std::size_t( n ) * stride );
    Kokkos::View<Scalar*, TEST_MEMSPACE> r2( "r2", std::size_t( n ) * stride );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int i ) {
            int c = 0;
            query.template for_each_neighbor<Order>( i, radius, [&]( int j, Scalar, Scalar, Scalar, Scalar d2 ) {
                if ( c < stride )
                {
                    idx( std::size_t( i ) * stride + c ) = j;
                    r2( std::size_t( i ) * stride + c ) = d2;
                }
                ++c;
            } );
            count( i ) = c;
        } );
    return collect<Scalar>( count, idx, r2, n, stride, "grid query" );
}

//! query_sets() with the walk compiled for the query's cell ordering (what NeighborReduction's kernels
//! do on GPUs), on every backend.
template <class Scalar, class Query>
NeighborSets<Scalar> fixed_order_query_sets( const Query& query, int n, Scalar radius, int stride )
{
    using morula::grid::detail::StencilOrder;
    switch ( QueryAccess::stencil_order( query ) )
    {
    case StencilOrder::row_major:
        return query_sets<StencilOrder::row_major>( query, n, radius, stride );
    case StencilOrder::morton_rows:
        return query_sets<StencilOrder::morton_rows>( query, n, radius, stride );
    default:
        return query_sets<StencilOrder::morton>( query, n, radius, stride );
    }
}

//! Neighbour sets of every particle as visited by for_each_particle.
template <class Scalar, class Query>
NeighborSets<Scalar> sweep_sets( const Query& query, int n, Scalar radius, int stride )
{
    using neighbors_type = morula::grid::ParticleNeighbors<Query, TEST_EXECSPACE>;
    stride = std::max( stride, 1 );
    Kokkos::View<int*, TEST_MEMSPACE> count( "count", n );
    Kokkos::View<int*, TEST_MEMSPACE> idx( "idx", std::size_t( n ) * stride );
    Kokkos::View<Scalar*, TEST_MEMSPACE> r2( "r2", std::size_t( n ) * stride );
    morula::grid::for_each_particle(
        TEST_EXECSPACE(), query,
        KOKKOS_LAMBDA( const int i, const neighbors_type& nb ) {
            int c = 0;
            nb.for_each( [&]( int j, Scalar, Scalar, Scalar, Scalar d2 ) {
                if ( c < stride )
                {
                    idx( std::size_t( i ) * stride + c ) = j;
                    r2( std::size_t( i ) * stride + c ) = d2;
                }
                ++c;
            } );
            count( i ) = c;
        },
        radius );
    return collect<Scalar>( count, idx, r2, n, stride, "for_each_particle" );
}

/*!
  A NeighborReduction kernel that records each particle's neighbours (index and r2, up to `stride`)
  and an order-dependent sum of their offsets, so that two paths can be compared pair for pair and
  in order. finish() also checks the ParticleNeighbors it is given (particle and count).
*/
template <class Scalar>
struct RecordingKernel
{
    struct accumulator_type
    {
        int count;
        Scalar sum;
    };
    Kokkos::View<int*, TEST_MEMSPACE> count;
    Kokkos::View<int*, TEST_MEMSPACE> idx;
    Kokkos::View<Scalar*, TEST_MEMSPACE> r2;
    Kokkos::View<Scalar*, TEST_MEMSPACE> sum;
    int stride;

    KOKKOS_INLINE_FUNCTION void init( int, accumulator_type& a ) const { a.sum = Scalar( 1 ); }

    KOKKOS_INLINE_FUNCTION void pair( int i, int j, Scalar dx, Scalar dy, Scalar dz, Scalar d2,
                                      accumulator_type& a ) const
    {
        if ( a.count < stride )
        {
            idx( std::size_t( i ) * stride + a.count ) = j;
            r2( std::size_t( i ) * stride + a.count ) = d2;
        }
        ++a.count;
        a.sum = a.sum * Scalar( 0.75 ) + ( dx - Scalar( 0.5 ) * dy + Scalar( 0.25 ) * dz );
    }

    template <class Neighbors>
    KOKKOS_INLINE_FUNCTION void finish( int i, accumulator_type& a, const Neighbors& nb ) const
    {
        const bool consistent = nb.particle() == i && nb.count() == a.count;
        count( i ) = consistent ? a.count : -1000 - a.count;
        sum( i ) = a.sum;
    }
};

/*!
  Neighbour sets of particles [0, num_targets) as NeighborReduction finds them with
  `particles_per_thread` (0: automatic), and the kernel's order-dependent sums (into `sums`). The
  particles from num_targets on must be left alone: their sets come back empty.
*/
template <class Scalar, class Query>
NeighborSets<Scalar> reduction_sets( const Query& query, int n, Scalar radius, int stride, int particles_per_thread,
                                     int num_targets, std::vector<Scalar>& sums,
                                     morula::grid::PairBatching batching = morula::grid::PairBatching::inline_pairs )
{
    stride = std::max( stride, 1 );
    RecordingKernel<Scalar> kernel{ Kokkos::View<int*, TEST_MEMSPACE>( "count", n ),
                                    Kokkos::View<int*, TEST_MEMSPACE>( "idx", std::size_t( n ) * stride ),
                                    Kokkos::View<Scalar*, TEST_MEMSPACE>( "r2", std::size_t( n ) * stride ),
                                    Kokkos::View<Scalar*, TEST_MEMSPACE>( "sum", n ), stride };
    morula::grid::NeighborReduction<TEST_MEMSPACE> reduction( particles_per_thread, batching );
    reduction.run( TEST_EXECSPACE(), query, kernel, radius, num_targets );
    // Twice: the second run reuses the group arrays of the first.
    reduction.run( TEST_EXECSPACE(), query, kernel, radius, num_targets );
    auto hs = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), kernel.sum );
    sums.assign( hs.data(), hs.data() + n );
    return collect<Scalar>( kernel.count, kernel.idx, kernel.r2, n, stride,
                            "NeighborReduction, " + std::to_string( particles_per_thread ) + " per thread" +
                                ( batching == morula::grid::PairBatching::batched ? ", batched" : "" ) );
}

//! Expects identical neighbour sets (indices and squared distances, bit for bit).
template <class Scalar>
void expect_same_sets( const NeighborSets<Scalar>& expected, const NeighborSets<Scalar>& found,
                       const std::string& what )
{
    ASSERT_EQ( expected.size(), found.size() ) << what;
    std::size_t pairs = 0, mismatches = 0;
    for ( std::size_t i = 0; i < expected.size(); ++i )
    {
        pairs += expected[i].size();
        if ( expected[i] != found[i] )
        {
            if ( mismatches++ < 5 )
            {
                ADD_FAILURE() << what << ": particle " << i << " has " << found[i].size()
                              << " neighbours, brute force " << expected[i].size();
            }
        }
    }
    EXPECT_EQ( mismatches, 0u ) << what << " (" << pairs << " pairs in the reference)";
}

} // namespace morula_test_grid

#endif
