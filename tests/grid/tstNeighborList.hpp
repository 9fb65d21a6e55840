#include "GridTestUtils.hpp"

#include <morula/core/SoA.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <string>
#include <vector>

namespace morula_test_grid
{
using morula::grid::NeighborList;

//! The CSR list's neighbour sets (indices only; distances zero).
template <class Scalar>
NeighborSets<Scalar> list_sets( const NeighborList<Scalar, TEST_MEMSPACE>& list, int n )
{
    auto offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), list.offsets() );
    auto indices = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), list.indices() );
    NeighborSets<Scalar> sets( n );
    EXPECT_EQ( offsets( 0 ), 0 );
    EXPECT_EQ( offsets( n ), list.num_pairs() );
    for ( int i = 0; i < n; ++i )
    {
        for ( auto k = offsets( i ); k < offsets( i + 1 ); ++k )
            sets[i].emplace_back( indices( k ), Scalar( 0 ) );
        std::sort( sets[i].begin(), sets[i].end() );
    }
    return sets;
}

//! The list as visited by for_each_listed_particle, per particle in order.
template <class Scalar>
std::vector<std::vector<int>> listed_in_order( const NeighborList<Scalar, TEST_MEMSPACE>& list,
                                               int n, int stride )
{
    using neighbors_type = morula::grid::ListedNeighbors<TEST_MEMSPACE, TEST_EXECSPACE>;
    Kokkos::View<int*, TEST_MEMSPACE> count( "count", n );
    Kokkos::View<int*, TEST_MEMSPACE> idx( "idx", std::size_t( n ) * stride );
    morula::grid::for_each_listed_particle(
        TEST_EXECSPACE(), list.view(), n, KOKKOS_LAMBDA( const int i, const neighbors_type& nb ) {
            int c = 0;
            nb.for_each( [&]( const int j ) {
                if ( c < stride )
                    idx( std::size_t( i ) * stride + c ) = j;
                ++c;
            } );
            count( i ) = c;
        } );
    auto hc = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), count );
    auto hi = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), idx );
    std::vector<std::vector<int>> out( n );
    for ( int i = 0; i < n; ++i )
        for ( int k = 0; k < std::min( hc( i ), stride ); ++k )
            out[i].push_back( hi( std::size_t( i ) * stride + k ) );
    return out;
}

//! Expects for_each_listed_particle to visit exactly the CSR entries, in order.
template <class Scalar>
void expect_listed_visit( const NeighborList<Scalar, TEST_MEMSPACE>& list, int n )
{
    auto offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), list.offsets() );
    auto indices = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), list.indices() );
    int stride = 1;
    for ( int i = 0; i < n; ++i )
        stride = std::max<int>( stride, offsets( i + 1 ) - offsets( i ) );
    const auto visited = listed_in_order( list, n, stride );
    for ( int i = 0; i < n; ++i )
    {
        ASSERT_EQ( static_cast<long>( visited[i].size() ), offsets( i + 1 ) - offsets( i ) )
            << "particle " << i;
        for ( std::size_t k = 0; k < visited[i].size(); ++k )
            ASSERT_EQ( visited[i][k], indices( offsets( i ) + k ) ) << "particle " << i;
    }
}

template <class Scalar>
NeighborSets<Scalar> without_distances( NeighborSets<Scalar> s )
{
    for ( auto& v : s )
        for ( auto& e : v )
            e.second = Scalar( 0 );
    return s;
}

template <class Scalar>
void list_equals_brute_force( const Box<Scalar>& box, unsigned seed )
{
    const int n = 2500;
    const auto p = uniform_points( n, box, seed );
    auto x = to_device( p );
    const Scalar cutoff = Scalar( 1.0 ), skin = Scalar( 0.3 );
    morula::grid::UniformGrid<Scalar, TEST_MEMSPACE> grid( box, cutoff + skin );
    grid.build( TEST_EXECSPACE(), x, n );
    NeighborList<Scalar, TEST_MEMSPACE> list;
    list.build( TEST_EXECSPACE(), grid.query( x ), cutoff, skin );
    EXPECT_EQ( list.num_particles(), n );
    int max_count = 0;
    const auto expected = brute_force( box, x, n, cutoff + skin, max_count );
    std::size_t pairs = 0;
    for ( auto& e : expected )
        pairs += e.size();
    EXPECT_EQ( static_cast<std::size_t>( list.num_pairs() ), pairs );
    expect_same_sets( without_distances( expected ), list_sets( list, n ), "CSR list" );
    expect_listed_visit( list, n );

    // Built from data in cell order (queries without indirection).
    morula::core::Particles<Scalar, TEST_MEMSPACE> sorted( "sorted", n );
    Kokkos::deep_copy( Kokkos::subview( sorted.positions(), std::make_pair( 0, n ), Kokkos::ALL ),
                       Kokkos::subview( x, std::make_pair( 0, n ), Kokkos::ALL ) );
    grid.permute( TEST_EXECSPACE(), sorted );
    NeighborList<Scalar, TEST_MEMSPACE> sorted_list;
    sorted_list.build( TEST_EXECSPACE(), grid.query( sorted.positions() ), cutoff, skin );
    const auto expected_sorted = brute_force( box, sorted.positions(), n, cutoff + skin, max_count );
    expect_same_sets( without_distances( expected_sorted ), list_sets( sorted_list, n ),
                      "CSR list, sorted data" );
    expect_listed_visit( sorted_list, n );
    // Counted with every particles-per-thread setting and pair batching: the same list.
    for ( const auto batching : { morula::grid::PairBatching::inline_pairs, morula::grid::PairBatching::batched } )
        for ( int k = 1; k <= 4; ++k )
        {
            NeighborList<Scalar, TEST_MEMSPACE> counted;
            counted.counting().set_particles_per_thread( k );
            counted.counting().set_pair_batching( batching );
            counted.build( TEST_EXECSPACE(), grid.query( sorted.positions() ), cutoff, skin );
            EXPECT_EQ( counted.num_pairs(), sorted_list.num_pairs() );
            expect_same_sets( without_distances( expected_sorted ), list_sets( counted, n ),
                              "CSR list, sorted data, counted with " + std::to_string( k ) + " per thread" +
                                  ( batching == morula::grid::PairBatching::batched ? ", batched" : "" ) );
        }

    grid.build( TEST_EXECSPACE(), x, n ); // back to the original order

    // A list without skin lists exactly the pairs within the cutoff, and rebuilding reuses memory.
    list.build( TEST_EXECSPACE(), grid.query( x ), cutoff );
    const auto expected_cut = brute_force( box, x, n, cutoff, max_count );
    expect_same_sets( without_distances( expected_cut ), list_sets( list, n ),
                      "CSR list without skin" );
    EXPECT_TRUE( list.needs_rebuild( TEST_EXECSPACE(), x ) );
}

TEST( TEST_CATEGORY, neighbor_list_periodic_float )
{
    list_equals_brute_force( Box<float>::cube( 11, Boundary::periodic ), 21 );
}
TEST( TEST_CATEGORY, neighbor_list_closed_double )
{
    list_equals_brute_force( Box<double>::cube( 11, Boundary::closed ), 22 );
}
TEST( TEST_CATEGORY, neighbor_list_mixed_double )
{
    list_equals_brute_force(
        Box<double>( { 0, 0, 0 }, { 9, 12, 10 },
                     { Boundary::open, Boundary::periodic, Boundary::closed } ),
        23 );
}

// Moving every particle by less than skin / 2 keeps the list valid: it still contains every pair
// within the cutoff at the new positions. A larger move of one particle triggers a rebuild.
template <class Scalar>
void skin_reuse()
{
    const Box<Scalar> box = Box<Scalar>::cube( 10, Boundary::periodic );
    const int n = 2000;
    auto p = uniform_points( n, box, 31 );
    auto x = to_device( p );
    const Scalar cutoff = Scalar( 1.0 ), skin = Scalar( 0.4 );
    morula::grid::UniformGrid<Scalar, TEST_MEMSPACE> grid( box, cutoff + skin );
    grid.build( TEST_EXECSPACE(), x, n );
    NeighborList<Scalar, TEST_MEMSPACE> list;
    list.build( TEST_EXECSPACE(), grid.query( x ), cutoff, skin );
    EXPECT_FALSE( list.needs_rebuild( TEST_EXECSPACE(), x ) );

    std::mt19937 rng( 5 );
    std::uniform_real_distribution<double> u( -1, 1 );
    auto moved = p;
    for ( auto& q : moved )
    {
        // At most 0.11 per axis: |displacement| <= 0.11 sqrt(3) = 0.19 < skin / 2. Positions
        // crossing the periodic faces are wrapped, as an integrator would.
        for ( int d = 0; d < 3; ++d )
        {
            Scalar v = q[d] + Scalar( 0.11 * u( rng ) );
            if ( v < 0 )
                v += 10;
            if ( v >= 10 )
                v -= 10;
            q[d] = v;
        }
    }
    auto xm = to_device( moved );
    EXPECT_FALSE( list.needs_rebuild( TEST_EXECSPACE(), xm ) );
    int max_count = 0;
    const auto expected = brute_force( box, xm, n, cutoff, max_count );
    const auto listed = list_sets( list, n );
    for ( int i = 0; i < n; ++i )
        for ( const auto& e : expected[i] )
            ASSERT_TRUE( std::binary_search( listed[i].begin(), listed[i].end(),
                                             std::make_pair( e.first, Scalar( 0 ) ) ) )
                << "pair (" << i << ", " << e.first << ") within the cutoff but not listed";

    moved[123][1] = moved[123][1] + Scalar( 0.25 );
    if ( moved[123][1] >= 10 )
        moved[123][1] -= 10;
    EXPECT_TRUE( list.needs_rebuild( TEST_EXECSPACE(), to_device( moved ) ) );
}

TEST( TEST_CATEGORY, neighbor_list_skin_reuse_float ) { skin_reuse<float>(); }
TEST( TEST_CATEGORY, neighbor_list_skin_reuse_double ) { skin_reuse<double>(); }

TEST( TEST_CATEGORY, neighbor_list_rejects_radius_beyond_grid )
{
    const Box<double> box = Box<double>::cube( 10, Boundary::periodic );
    auto x = to_device( uniform_points( 100, box, 3 ) );
    morula::grid::UniformGrid<double, TEST_MEMSPACE> grid( box, 1.0 );
    grid.build( TEST_EXECSPACE(), x, 100 );
    NeighborList<double, TEST_MEMSPACE> list;
    EXPECT_THROW( list.build( TEST_EXECSPACE(), grid.query( x ), 0.9, 0.2 ),
                  morula::core::InputError );
    EXPECT_THROW( list.build( TEST_EXECSPACE(), grid.query( x ), -1.0 ),
                  morula::core::InputError );
    EXPECT_THROW( list.build( TEST_EXECSPACE(), grid.query( x ), 0.5, -0.1 ),
                  morula::core::InputError );
    EXPECT_NO_THROW( list.build( TEST_EXECSPACE(), grid.query( x ), 0.8, 0.2 ) );
}

} // namespace morula_test_grid
