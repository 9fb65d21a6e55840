#include "GridTestUtils.hpp"

#include <morula/core/SoA.hpp>
#include <morula/grid/EllNeighborList.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace morula_test_grid
{
using morula::grid::EllNeighborList;

//! Every particle's entries of an ELL list, in list order, read back through neighbor(i, k) on the
//! device (checking that count(i) never exceeds the capacity).
template <class Scalar>
std::vector<std::vector<int>> ell_entries( const EllNeighborList<Scalar, TEST_MEMSPACE>& list )
{
    const int n = list.num_particles();
    const int capacity = list.capacity();
    EXPECT_GE( capacity, list.largest_count() );
    const auto view = list.view();
    Kokkos::View<int*, TEST_MEMSPACE> count( "count", n );
    Kokkos::View<int*, TEST_MEMSPACE> idx( "idx", std::size_t( n ) * std::max( capacity, 1 ) );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int i ) {
            const int c = view.count( i );
            count( i ) = c;
            for ( int k = 0; k < c && k < capacity; ++k )
                idx( std::size_t( i ) * capacity + k ) = view.neighbor( i, k );
        } );
    auto hc = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), count );
    auto hi = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), idx );
    std::vector<std::vector<int>> out( n );
    for ( int i = 0; i < n; ++i )
    {
        EXPECT_LE( hc( i ), capacity ) << "particle " << i;
        for ( int k = 0; k < std::min( hc( i ), capacity ); ++k )
            out[i].push_back( hi( std::size_t( i ) * capacity + k ) );
    }
    return out;
}

//! The entries for_each_listed_particle visits over an ELL list, per particle in order.
template <class Scalar>
std::vector<std::vector<int>> ell_visited( const EllNeighborList<Scalar, TEST_MEMSPACE>& list )
{
    using neighbors_type = morula::grid::EllListedNeighbors<TEST_MEMSPACE, TEST_EXECSPACE>;
    const int n = list.num_particles();
    const int stride = std::max( list.capacity(), 1 );
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

//! The CSR list's entries per particle, in list order.
template <class Scalar>
std::vector<std::vector<int>> csr_entries( const morula::grid::NeighborList<Scalar, TEST_MEMSPACE>& list )
{
    auto offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), list.offsets() );
    auto indices = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), list.indices() );
    std::vector<std::vector<int>> out( list.num_particles() );
    for ( int i = 0; i < list.num_particles(); ++i )
        for ( auto k = offsets( i ); k < offsets( i + 1 ); ++k )
            out[i].push_back( indices( k ) );
    return out;
}

//! Entries as neighbour sets (sorted indices, distances zero), for comparison with brute force.
template <class Scalar>
NeighborSets<Scalar> as_sets( const std::vector<std::vector<int>>& entries )
{
    NeighborSets<Scalar> sets( entries.size() );
    for ( std::size_t i = 0; i < entries.size(); ++i )
    {
        for ( int j : entries[i] )
            sets[i].emplace_back( j, Scalar( 0 ) );
        std::sort( sets[i].begin(), sets[i].end() );
    }
    return sets;
}

template <class Scalar>
NeighborSets<Scalar> indices_only( NeighborSets<Scalar> s )
{
    for ( auto& v : s )
        for ( auto& e : v )
            e.second = Scalar( 0 );
    return s;
}

//! ell_equals_csr_and_brute_force() for one set of grid options.
template <class Scalar>
void ell_matches_with_options( const Box<Scalar>& box, const Points<Scalar>& p, Scalar cutoff, Scalar skin,
                               const morula::grid::GridOptions& options )
{
    const int n = static_cast<int>( p.size() );
    auto x = to_device( p );
    morula::grid::UniformGrid<Scalar, TEST_MEMSPACE> grid( box, cutoff + skin, options );
    morula::core::Particles<Scalar, TEST_MEMSPACE> sorted( "sorted", n );
    for ( int cell_order = 0; cell_order < 2; ++cell_order )
    {
        grid.build( TEST_EXECSPACE(), x, n );
        if ( cell_order )
        {
            // The same points permuted into cell order (queries without indirection).
            Kokkos::deep_copy(
                Kokkos::subview( sorted.positions(), std::make_pair( 0, n ), Kokkos::ALL ),
                Kokkos::subview( x, std::make_pair( 0, n ), Kokkos::ALL ) );
            grid.permute( TEST_EXECSPACE(), sorted );
        }
        const auto positions = cell_order ? DevicePositions<Scalar>( sorted.positions() ) : x;
        const auto query = grid.query( positions );
        SCOPED_TRACE( cell_order ? "data in cell order" : "unsorted data" );
        EllNeighborList<Scalar, TEST_MEMSPACE> ell;
        ell.build( TEST_EXECSPACE(), query, cutoff, skin );
        morula::grid::NeighborList<Scalar, TEST_MEMSPACE> csr;
        csr.build( TEST_EXECSPACE(), query, cutoff, skin );

        int max_count = 0;
        const auto expected = brute_force( box, positions, n, cutoff + skin, max_count );
        const auto entries = ell_entries( ell );
        EXPECT_EQ( ell.largest_count(), max_count );
        expect_same_sets( indices_only( expected ), as_sets<Scalar>( entries ), "ELL list" );
        EXPECT_EQ( entries, csr_entries( csr ) ) << "ELL and CSR lists differ in content or order";
        EXPECT_EQ( ell_visited( ell ), entries ) << "for_each_listed_particle over the ELL list";

        morula::grid::NeighborList<Scalar, TEST_MEMSPACE> copied;
        copied.assign( TEST_EXECSPACE(), ell );
        EXPECT_EQ( copied.num_pairs(), csr.num_pairs() );
        EXPECT_EQ( csr_entries( copied ), entries ) << "NeighborList::assign from the ELL list";
        EXPECT_EQ( copied.needs_rebuild( TEST_EXECSPACE(), positions ),
                   csr.needs_rebuild( TEST_EXECSPACE(), positions ) );
        EXPECT_EQ( ell.needs_rebuild( TEST_EXECSPACE(), positions ), !( skin > 0 ) );
    }
}

/*!
  The ELL list holds exactly the brute-force pairs, in the CSR list's order, visited in that order by
  for_each_listed_particle; NeighborList::assign from it gives the CSR list bit for bit. Checked on
  unsorted and cell-ordered data, with and without skin, for every cell ordering (on GPUs the ELL fills
  are compiled once per ordering and per data access).
*/
template <class Scalar>
void ell_equals_csr_and_brute_force( const Box<Scalar>& box, const Points<Scalar>& p,
                                     Scalar cutoff, Scalar skin )
{
    for ( const auto ordering : { morula::grid::CellOrdering::row_major, morula::grid::CellOrdering::morton,
                                  morula::grid::CellOrdering::morton_rows } )
    {
        SCOPED_TRACE( morula::grid::to_string( ordering ) );
        morula::grid::GridOptions options;
        options.ordering = ordering;
        ell_matches_with_options( box, p, cutoff, skin, options );
    }
}

TEST( TEST_CATEGORY, ell_neighbor_list_periodic_float )
{
    const auto box = Box<float>::cube( 11, Boundary::periodic );
    ell_equals_csr_and_brute_force( box, uniform_points( 2500, box, 41 ), 1.0f, 0.3f );
}
TEST( TEST_CATEGORY, ell_neighbor_list_closed_double )
{
    const auto box = Box<double>::cube( 11, Boundary::closed );
    ell_equals_csr_and_brute_force( box, uniform_points( 2500, box, 42 ), 1.0, 0.0 );
}
TEST( TEST_CATEGORY, ell_neighbor_list_mixed_double )
{
    const Box<double> box( { 0, 0, 0 }, { 9, 12, 10 },
                           { Boundary::open, Boundary::periodic, Boundary::closed } );
    ell_equals_csr_and_brute_force( box, uniform_points( 2000, box, 43 ), 1.0, 0.3 );
}
// Periodic axes of fewer than 3 cells: distances take the per-pair minimum image (the fills' generic
// kernel on GPUs).
TEST( TEST_CATEGORY, ell_neighbor_list_fewer_than_three_cells_double )
{
    const Box<double> box( { 0, 0, 0 }, { 2.5, 6, 1.2 },
                           { Boundary::periodic, Boundary::closed, Boundary::periodic } );
    ell_equals_csr_and_brute_force( box, uniform_points( 300, box, 46 ), 1.0, 0.1 );
}
// Crowded: Gaussian blobs where one particle has hundreds of neighbours and the background a few, so
// counts vary ~100x across the list (a capacity sized from the mean would drop entries).
TEST( TEST_CATEGORY, ell_neighbor_list_clustered_float )
{
    const auto box = Box<float>::cube( 12, Boundary::periodic );
    ell_equals_csr_and_brute_force( box, clustered_points( 3000, box, 44 ), 1.0f, 0.2f );
}
TEST( TEST_CATEGORY, ell_neighbor_list_clustered_double )
{
    const auto box = Box<double>::cube( 12, Boundary::closed );
    ell_equals_csr_and_brute_force( box, clustered_points( 3000, box, 45 ), 1.0, 0.0 );
}

/*!
  Capacity grows without losing entries: a list reserved far too small, then rebuilt after the points
  crowd into one corner (counts jump from ~4 to ~n), holds every brute-force pair each time; the
  capacity never shrinks, so moving back needs no regrowth.
*/
template <class Scalar>
void ell_capacity_grows()
{
    const auto box = Box<Scalar>::cube( 10, Boundary::periodic );
    const int n = 1500;
    const Scalar cutoff = Scalar( 1.0 );
    const auto spread = uniform_points( n, box, 51 );
    Points<Scalar> crowded = spread;
    for ( auto& q : crowded )
        for ( int d = 0; d < 3; ++d )
            q[d] = Scalar( 0.15 ) * q[d]; // all within a cube of edge 1.5: ~600 neighbours each
    morula::grid::UniformGrid<Scalar, TEST_MEMSPACE> grid( box, cutoff );
    EllNeighborList<Scalar, TEST_MEMSPACE> ell;
    ell.reserve( 1 );
    int previous_capacity = 1;
    const std::vector<const Points<Scalar>*> stages = { &spread, &crowded, &spread };
    for ( const auto* p : stages )
    {
        auto x = to_device( *p );
        grid.build( TEST_EXECSPACE(), x, n );
        ell.build( TEST_EXECSPACE(), grid.query( x ), cutoff );
        int max_count = 0;
        const auto expected = brute_force( box, x, n, cutoff, max_count );
        EXPECT_EQ( ell.largest_count(), max_count );
        EXPECT_GE( ell.capacity(), max_count );
        EXPECT_GE( ell.capacity(), previous_capacity );
        previous_capacity = ell.capacity();
        expect_same_sets( indices_only( expected ), as_sets<Scalar>( ell_entries( ell ) ),
                          "ELL list after regrowth" );
    }
    EXPECT_GT( previous_capacity, 300 );
}

TEST( TEST_CATEGORY, ell_neighbor_list_capacity_grows_float ) { ell_capacity_grows<float>(); }
TEST( TEST_CATEGORY, ell_neighbor_list_capacity_grows_double ) { ell_capacity_grows<double>(); }

// The slot formula: within a slice the k-th entries of consecutive particles are adjacent on GPUs, a
// particle's entries adjacent on the host; every (i, k) below the capacity has its own slot.
TEST( TEST_CATEGORY, ell_neighbor_list_layout )
{
    const auto box = Box<double>::cube( 8, Boundary::periodic );
    const int n = 100;
    auto x = to_device( uniform_points( n, box, 61 ) );
    morula::grid::UniformGrid<double, TEST_MEMSPACE> grid( box, 1.5 );
    grid.build( TEST_EXECSPACE(), x, n );
    EllNeighborList<double, TEST_MEMSPACE> ell;
    ell.build( TEST_EXECSPACE(), grid.query( x ), 1.5 );
    const auto v = ell.view();
    const int slice = 1 << ell.slice_shift();
    EXPECT_EQ( ell.slice_shift(), morula::grid::detail::ell_slice_shift<TEST_EXECSPACE>() );
    std::vector<char> used( static_cast<std::size_t>( ell.indices().extent( 0 ) ), 0 );
    for ( int i = 0; i < n; ++i )
        for ( int k = 0; k < ell.capacity(); ++k )
        {
            const auto s = v.slot( i, k );
            ASSERT_GE( s, 0 );
            ASSERT_LT( s, static_cast<std::int64_t>( used.size() ) );
            ASSERT_EQ( used[s], 0 ) << "slot of (" << i << ", " << k << ") taken twice";
            used[s] = 1;
            if ( i % slice + 1 < slice && i + 1 < n )
                EXPECT_EQ( v.slot( i + 1, k ), s + 1 );
            if ( k + 1 < ell.capacity() )
                EXPECT_EQ( v.slot( i, k + 1 ), s + slice );
        }
}

TEST( TEST_CATEGORY, ell_neighbor_list_rejects_bad_input )
{
    const Box<double> box = Box<double>::cube( 10, Boundary::periodic );
    auto x = to_device( uniform_points( 100, box, 3 ) );
    morula::grid::UniformGrid<double, TEST_MEMSPACE> grid( box, 1.0 );
    grid.build( TEST_EXECSPACE(), x, 100 );
    EllNeighborList<double, TEST_MEMSPACE> ell;
    EXPECT_THROW( ell.build( TEST_EXECSPACE(), grid.query( x ), 0.9, 0.2 ), morula::core::InputError );
    EXPECT_THROW( ell.build( TEST_EXECSPACE(), grid.query( x ), -1.0 ), morula::core::InputError );
    EXPECT_THROW( ell.reserve( -3 ), morula::core::InputError );
    EXPECT_NO_THROW( ell.build( TEST_EXECSPACE(), grid.query( x ), 0.8, 0.2 ) );
    // No particles: an empty list.
    grid.build( TEST_EXECSPACE(), x, 0 );
    ell.build( TEST_EXECSPACE(), grid.query( x ), 0.8 );
    EXPECT_EQ( ell.num_particles(), 0 );
    EXPECT_EQ( ell.largest_count(), 0 );
}

/*!
  The staged writes (used on GPUs; called here directly so that every backend runs them) write exactly
  what the direct ones write: ELL entries and counts (also with a capacity below the largest count,
  which cuts lists short), and the staged copy from ELL to CSR gives the CSR list. Clustered points, so
  that lists run far past the staging depth; depths 0, 3 and the default, teams of the backend's size.
*/
template <class Scalar>
void staged_fills_match_direct( bool cell_order )
{
    namespace gd = morula::grid::detail;
    const auto box = Box<Scalar>::cube( 12, Boundary::periodic );
    const int n = 3000;
    auto x = to_device( clustered_points( n, box, 71 ) );
    const Scalar radius = Scalar( 1.1 );
    morula::grid::UniformGrid<Scalar, TEST_MEMSPACE> grid( box, radius );
    grid.build( TEST_EXECSPACE(), x, n );
    morula::core::Particles<Scalar, TEST_MEMSPACE> sorted( "sorted", n );
    if ( cell_order )
    {
        Kokkos::deep_copy( Kokkos::subview( sorted.positions(), std::make_pair( 0, n ), Kokkos::ALL ),
                           Kokkos::subview( x, std::make_pair( 0, n ), Kokkos::ALL ) );
        grid.permute( TEST_EXECSPACE(), sorted );
    }
    const auto positions = cell_order ? DevicePositions<Scalar>( sorted.positions() ) : x;
    const auto query = grid.query( positions );
    morula::grid::NeighborList<Scalar, TEST_MEMSPACE> csr;
    csr.build( TEST_EXECSPACE(), query, radius );
    const auto expected = csr_entries( csr );
    int largest = 0;
    for ( const auto& e : expected )
        largest = std::max<int>( largest, static_cast<int>( e.size() ) );
    ASSERT_GT( largest, 40 ); // past the default staging depth

    const int shift = gd::ell_slice_shift<TEST_EXECSPACE>();
    const std::int64_t total = csr.num_pairs();
    std::vector<int> teams = { std::min<int>( 4, TEST_EXECSPACE().concurrency() ) };
    if ( gd::stages_list_fill<TEST_EXECSPACE>() )
        teams.push_back( gd::staged_fill_team_size );
    for ( const int team : teams )
        for ( const int depth : { 0, 3, gd::staged_fill_depth } )
        {
            SCOPED_TRACE( "team " + std::to_string( team ) + ", depth " + std::to_string( depth ) );
            const auto hi = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), csr.indices() );
            std::size_t wrong = 0;
            // ELL, with room for every entry and with a capacity that cuts lists short.
            for ( const int capacity : { largest, largest / 2 } )
            {
                const std::int64_t slices = ( ( n + ( 1 << shift ) - 1 ) >> shift );
                Kokkos::View<int*, TEST_MEMSPACE> counts( "counts", n );
                Kokkos::View<int*, TEST_MEMSPACE> ell( "ell", ( slices * capacity ) << shift );
                const int found = gd::fill_ell_list_staged( TEST_EXECSPACE(), query, n, radius,
                                                            capacity, shift, counts, ell, team, depth );
                EXPECT_EQ( found, largest );
                morula::grid::EllNeighborListView<TEST_MEMSPACE> view{ counts, ell, capacity, shift };
                auto hc = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), counts );
                auto he = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), ell );
                wrong = 0;
                for ( int i = 0; i < n; ++i )
                {
                    wrong += hc( i ) != static_cast<int>( expected[i].size() );
                    for ( std::size_t k = 0; k < expected[i].size() && k < std::size_t( capacity ); ++k )
                        wrong += he( view.slot( i, static_cast<int>( k ) ) ) != expected[i][k];
                }
                EXPECT_EQ( wrong, 0u ) << "staged ELL fill, capacity " << capacity;

                if ( capacity == largest )
                {
                    Kokkos::View<int*, TEST_MEMSPACE> copied( "copied", total );
                    gd::copy_list_to_csr_staged( TEST_EXECSPACE(), view, n, csr.offsets(), copied, team );
                    auto hcp = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), copied );
                    wrong = 0;
                    for ( std::int64_t e = 0; e < total; ++e )
                        wrong += hcp( e ) != hi( e );
                    EXPECT_EQ( wrong, 0u ) << "staged copy from ELL to CSR";
                }
            }
        }
}

TEST( TEST_CATEGORY, staged_list_fills_float ) { staged_fills_match_direct<float>( false ); }
TEST( TEST_CATEGORY, staged_list_fills_double_cell_order ) { staged_fills_match_direct<double>( true ); }

} // namespace morula_test_grid
