#include "GridTestUtils.hpp"

#include <morula/core/SoA.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace morula_test_grid
{
using morula::grid::CellOrdering;
using morula::grid::GridOptions;
using morula::grid::UniformGrid;

/*!
  Checks the structure of a build: offsets consistent, every particle exactly once, cells in key
  order, and particles of a cell in increasing index order, i.e. the permutation is the unique stable
  counting sort of the particles' cell keys (compared with std::stable_sort).
*/
template <class Scalar>
void check_structure( const UniformGrid<Scalar, TEST_MEMSPACE>& grid, int n, const std::string& what )
{
    const int ncells = grid.num_cells();
    auto offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.cell_offsets() );
    auto perm = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.permutation() );
    auto cells = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.particle_cells() );
    ASSERT_EQ( offsets( 0 ), 0 ) << what;
    ASSERT_EQ( offsets( ncells ), n ) << what << ": particles lost or duplicated";
    std::vector<int> seen( n, 0 );
    for ( int c = 0; c < ncells; ++c )
    {
        ASSERT_LE( offsets( c ), offsets( c + 1 ) ) << what << ": cell " << c;
        for ( int k = offsets( c ); k < offsets( c + 1 ); ++k )
        {
            const int i = perm( k );
            ASSERT_GE( i, 0 );
            ASSERT_LT( i, n );
            ++seen[i];
            ASSERT_EQ( cells( i ), c ) << what << ": particle " << i << " in the slot of cell " << c;
            if ( k > offsets( c ) )
                ASSERT_LT( perm( k - 1 ), i ) << what << ": cell " << c << " not in index order";
        }
    }
    for ( int i = 0; i < n; ++i )
        ASSERT_EQ( seen[i], 1 ) << what << ": particle " << i;
    {
        // The reference: std::stable_sort of the particles by cell key.
        std::vector<int> ref( n );
        std::iota( ref.begin(), ref.end(), 0 );
        std::stable_sort( ref.begin(), ref.end(),
                          [&]( int a, int b ) { return cells( a ) < cells( b ); } );
        for ( int k = 0; k < n; ++k )
            ASSERT_EQ( perm( k ), ref[k] ) << what << ": slot " << k;
    }
}

//! Cell keys computed on the host from the geometry agree with the device for in-box positions, and
//! every particle's position lies in (or, on open axes, is clamped to) its cell.
template <class Scalar>
void check_cells_on_host( const UniformGrid<Scalar, TEST_MEMSPACE>& grid, const Points<Scalar>& p,
                          const std::string& what )
{
    const auto& g = grid.geometry();
    auto cells = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.particle_cells() );
    auto keys = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.cell_keys() );
    for ( std::size_t i = 0; i < p.size(); ++i )
    {
        bool inside = true;
        for ( int d = 0; d < 3; ++d )
            inside = inside && p[i][d] >= g.box.lo[d] && p[i][d] < g.box.hi[d];
        if ( !inside )
            continue;
        int lin = g.linear_index( g.cell_coordinate( 0, p[i][0] ), g.cell_coordinate( 1, p[i][1] ),
                                  g.cell_coordinate( 2, p[i][2] ) );
        const int key = keys.extent( 0 ) ? keys( lin ) : lin;
        ASSERT_EQ( cells( i ), key ) << what << ": particle " << i;
        for ( int d = 0; d < 3; ++d )
        {
            const int c = g.cell_coordinate( d, p[i][d] );
            const double lo = g.box.lo[d] + c * double( g.cell_size[d] );
            const double tol = 1e-5 * g.box.length( d );
            ASSERT_GE( double( p[i][d] ), lo - tol ) << what << ": particle " << i;
            ASSERT_LE( double( p[i][d] ), lo + g.cell_size[d] + tol ) << what << ": particle " << i;
        }
    }
}

/*!
  NeighborReduction with one to four particles per thread and automatic, pairs inline and batched, over
  all particles and over the first half: the same sets as the brute force, and the same order-dependent
  sums as one particle per thread with inline pairs, bit for bit (the same pairs in the same order with
  the same arithmetic).
*/
template <class Scalar, class Query>
void check_reductions( const Query& query, const NeighborSets<Scalar>& expected, int n, Scalar radius, int stride,
                       const std::string& what )
{
    using morula::grid::PairBatching;
    std::vector<Scalar> reference;
    expect_same_sets( expected, reduction_sets( query, n, radius, stride, 1, n, reference ),
                      what + ", NeighborReduction, 1 per thread" );
    for ( const PairBatching batching : { PairBatching::inline_pairs, PairBatching::batched } )
        for ( int k : { 0, 1, 2, 3, 4 } )
        {
            if ( k == 1 && batching == PairBatching::inline_pairs )
                continue; // the reference
            const std::string label = what + ", NeighborReduction, " + std::to_string( k ) + " per thread" +
                                      ( batching == PairBatching::batched ? ", batched" : "" );
            std::vector<Scalar> sums;
            expect_same_sets( expected, reduction_sets( query, n, radius, stride, k, n, sums, batching ), label );
            int differ = 0;
            for ( int i = 0; i < n; ++i )
                if ( !( sums[i] == reference[i] ) && differ++ < 3 )
                    ADD_FAILURE() << label << ": particle " << i << " sums " << sums[i] << ", one per thread "
                                  << reference[i];
            // Targets: the first half only; the others keep no set.
            const int targets = n / 2;
            auto partial = reduction_sets( query, n, radius, stride, k, targets, sums, batching );
            auto expected_partial = expected;
            for ( int i = targets; i < n; ++i )
                expected_partial[i].clear();
            expect_same_sets( expected_partial, partial, label + ", " + std::to_string( targets ) + " targets" );
        }
}

/*!
  Builds a grid over the points and compares, for several radii up to the cutoff, every particle's
  neighbours (and squared distances) with the brute force. Then permutes the data into cell order
  and repeats, querying without indirection.
*/
template <class Scalar>
void check_against_brute_force( const Box<Scalar>& box, const Points<Scalar>& points, Scalar cutoff,
                                const GridOptions& options, const std::string& what,
                                std::vector<Scalar> radii = {} )
{
    if ( radii.empty() )
        radii = { cutoff, Scalar( 0.6 ) * cutoff };
    const int n = static_cast<int>( points.size() );
    auto x = to_device( points, n + 7 ); // capacity larger than n: only the first n are binned
    UniformGrid<Scalar, TEST_MEMSPACE> grid( box, cutoff, options );
    for ( int d = 0; d < 3; ++d )
        if ( grid.geometry().ncell[d] > 1 )
            ASSERT_GE( grid.geometry().cell_size[d], cutoff ) << what << ": cell edge below cutoff";
    grid.build( TEST_EXECSPACE(), x, n );
    check_structure( grid, n, what );
    check_cells_on_host( grid, points, what );

    auto query = grid.query( x );
    for ( const Scalar radius : radii )
    {
        int max_count = 0;
        const auto expected = brute_force( box, x, n, radius, max_count );
        expect_same_sets( expected, query_sets( query, n, radius, max_count + 1 ),
                          what + ", radius " + std::to_string( radius ) );
        expect_same_sets( expected, fixed_order_query_sets( query, n, radius, max_count + 1 ),
                          what + ", walk compiled for the cell ordering, radius " + std::to_string( radius ) );
        expect_same_sets( expected, sweep_sets( query, n, radius, max_count + 1 ),
                          what + ", for_each_particle, radius " + std::to_string( radius ) );
        // Unsorted data: one particle per thread whatever K; batched pairs read through the permutation
        // and give the inline sums bit for bit.
        std::vector<Scalar> sums, batched_sums;
        expect_same_sets( expected, reduction_sets( query, n, radius, max_count + 1, 3, n, sums ),
                          what + ", NeighborReduction (unsorted data: one per thread), radius " +
                              std::to_string( radius ) );
        expect_same_sets( expected,
                          reduction_sets( query, n, radius, max_count + 1, 2, n, batched_sums,
                                          morula::grid::PairBatching::batched ),
                          what + ", NeighborReduction (unsorted data: one per thread, batched), radius " +
                              std::to_string( radius ) );
        ASSERT_EQ( sums.size(), batched_sums.size() );
        for ( std::size_t k = 0; k < sums.size(); ++k )
            ASSERT_EQ( sums[k], batched_sums[k] ) << what << ", unsorted data, batched against inline sums, entry " << k;
        // count_neighbors agrees with the sets.
        Kokkos::View<int*, TEST_MEMSPACE> counts( "counts", n );
        Kokkos::parallel_for(
            Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ),
            KOKKOS_LAMBDA( const int i ) { counts( i ) = query.count_neighbors( i, radius ); } );
        auto hc = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), counts );
        for ( int i = 0; i < n; ++i )
            ASSERT_EQ( hc( i ), static_cast<int>( expected[i].size() ) ) << what << ": " << i;
    }

    // Permute positions (and an id field) into cell order; query again with direct access.
    morula::core::Particles<Scalar, TEST_MEMSPACE, int> particles( "particles", n );
    {
        auto pos = particles.positions();
        auto ids = particles.template get<1>();
        Kokkos::parallel_for(
            Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int i ) {
                for ( int d = 0; d < 3; ++d )
                    pos( i, d ) = x( i, d );
                ids( i ) = i;
            } );
    }
    grid.permute( TEST_EXECSPACE(), particles );
    ASSERT_TRUE( grid.data_sorted() );
    auto ids = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), particles.template get<1>() );
    auto perm = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.permutation() );
    for ( int k = 0; k < n; ++k )
        ASSERT_EQ( ids( k ), perm( k ) ) << what << ": permuted id field";
    auto sorted_query = grid.query( particles.positions() );
    int max_count = 0;
    const auto expected_sorted = brute_force( box, particles.positions(), n, radii[0], max_count );
    expect_same_sets( expected_sorted, query_sets( sorted_query, n, radii[0], max_count + 1 ),
                      what + ", permuted data" );
    expect_same_sets( expected_sorted, fixed_order_query_sets( sorted_query, n, radii[0], max_count + 1 ),
                      what + ", permuted data, walk compiled for the cell ordering" );
    // Sorted data through for_each_particle.
    for ( const Scalar radius : radii )
    {
        const auto expected_r = brute_force( box, particles.positions(), n, radius, max_count );
        expect_same_sets( expected_r, sweep_sets( sorted_query, n, radius, max_count + 1 ),
                          what + ", permuted data, for_each_particle, radius " +
                              std::to_string( radius ) );
        check_reductions( sorted_query, expected_r, n, radius, max_count + 1,
                          what + ", permuted data, radius " + std::to_string( radius ) );
    }
}

template <class Scalar>
void run_all_options( const Box<Scalar>& box, const Points<Scalar>& p, Scalar cutoff,
                      const std::string& what )
{
    GridOptions row_major;
    check_against_brute_force( box, p, cutoff, row_major, what + " [row-major]" );
    GridOptions morton;
    morton.ordering = CellOrdering::morton;
    check_against_brute_force( box, p, cutoff, morton, what + " [morton]" );
    GridOptions morton_rows;
    morton_rows.ordering = CellOrdering::morton_rows;
    check_against_brute_force( box, p, cutoff, morton_rows, what + " [morton-rows]" );
}

template <class Scalar>
void random_closed_box()
{
    const Box<Scalar> box( { -1, 0, 2 }, { 9, 7, 7 }, Boundary::closed );
    run_all_options( box, uniform_points( 3000, box, 1 ), Scalar( 1.1 ), "closed box" );
}

template <class Scalar>
void random_periodic_box()
{
    const Box<Scalar> box = Box<Scalar>::cube( 10, Boundary::periodic );
    run_all_options( box, uniform_points( 3000, box, 2 ), Scalar( 1.5 ), "periodic box" );
}

template <class Scalar>
void mixed_boundaries_with_open_escapees()
{
    const Box<Scalar> box( { 0, 0, 0 }, { 8, 6, 5 },
                           { Boundary::periodic, Boundary::closed, Boundary::open } );
    auto p = uniform_points( 2500, box, 3 );
    // A tenth of the particles have left the box through the open z faces, some far away.
    for ( std::size_t i = 0; i < p.size(); i += 10 )
        p[i][2] = ( i % 20 == 0 ) ? Scalar( -1.0 - 0.001 * i ) : Scalar( 5.5 + 0.002 * i );
    run_all_options( box, p, Scalar( 1.2 ), "mixed boundaries" );
}

template <class Scalar>
void fewer_than_three_cells()
{
    // Periodic: 2 cells along x, 1 along y; closed z with 1 cell.
    const Box<Scalar> box( { 0, 0, 0 }, { 2.5, 1.2, 0.9 },
                           { Boundary::periodic, Boundary::periodic, Boundary::closed } );
    run_all_options( box, uniform_points( 400, box, 4 ), Scalar( 1 ), "fewer than 3 cells" );
    const Box<Scalar> tiny = Box<Scalar>::cube( 0.7, Boundary::periodic );
    run_all_options( tiny, uniform_points( 200, tiny, 5 ), Scalar( 1 ), "box below the cutoff" );
}

template <class Scalar>
void all_particles_in_one_cell()
{
    const Box<Scalar> box = Box<Scalar>::cube( 20, Boundary::periodic );
    // Cells are 20/9 wide; all points in cell (4, 4, 4). n selects how the cell's bucket is sorted:
    // counting sort (a short cell), bitonic sort in scratch memory (a long cell), device-wide sort
    // (more than a bucket holds). Small radii keep the brute-force buffers small.
    for ( int n : { 30, 1000, 5000 } )
    {
        Points<Scalar> p( n );
        std::mt19937 rng( n );
        std::uniform_real_distribution<double> u( 8.9, 11.1 );
        for ( auto& q : p )
            q = { Scalar( u( rng ) ), Scalar( u( rng ) ), Scalar( u( rng ) ) };
        for ( auto ordering : { CellOrdering::row_major, CellOrdering::morton, CellOrdering::morton_rows } )
        {
            GridOptions options;
            options.ordering = ordering;
            check_against_brute_force( box, p, Scalar( 2 ), options,
                                       "one cell, n = " + std::to_string( n ) + ", " + to_string( ordering ),
                                       { Scalar( 0.3 ), Scalar( 0.1 ) } );
        }
    }
}

template <class Scalar>
void particles_on_cell_and_box_faces()
{
    // Integer lattice, cutoff exactly the lattice spacing: many pairs sit exactly at the cutoff and
    // every particle sits on cell faces; the closed box includes its upper faces.
    Points<Scalar> p;
    for ( int i = 0; i <= 6; ++i )
        for ( int j = 0; j <= 5; ++j )
            for ( int k = 0; k <= 4; ++k )
                p.push_back( { Scalar( i ), Scalar( j ), Scalar( k ) } );
    const Box<Scalar> closed( { 0, 0, 0 }, { 6, 5, 4 }, Boundary::closed );
    run_all_options( closed, p, Scalar( 1 ), "lattice, closed" );
    Points<Scalar> q;
    for ( auto& a : p )
        if ( a[0] < 6 && a[1] < 5 && a[2] < 4 )
            q.push_back( a );
    const Box<Scalar> periodic( { 0, 0, 0 }, { 6, 5, 4 }, Boundary::periodic );
    run_all_options( periodic, q, Scalar( 1 ), "lattice, periodic" );
    run_all_options( periodic, q, Scalar( 2 ), "lattice, periodic, radius 2" );
}

template <class Scalar>
void zero_and_one_particle()
{
    const Box<Scalar> box = Box<Scalar>::cube( 5, Boundary::periodic );
    run_all_options( box, Points<Scalar>{}, Scalar( 1 ), "no particles" );
    run_all_options( box, Points<Scalar>{ { Scalar( 4.9 ), Scalar( 0 ), Scalar( 2.5 ) } },
                     Scalar( 1 ), "one particle" );
}

template <class Scalar>
void clustered()
{
    const Box<Scalar> box = Box<Scalar>::cube( 16, Boundary::closed );
    run_all_options( box, clustered_points( 4000, box, 6 ), Scalar( 1 ), "clustered" );
}

/*!
  Positions one ulp below a periodic box's upper face, in boxes where (x - lo) times the cell count over
  the box length, rounded, is the cell count. Such a position lies inside the box and belongs to the last
  cell; wrapped to cell 0 (as the grid once did) it sat a box length away from its neighbours for the
  walks' per-cell image shifts, which then missed its pairs with the particles near the lower face. The
  boxes are searched for on the host; the test fails if none is found.
*/
template <class Scalar>
void positions_just_below_the_upper_face()
{
    int exercised = 0;
    for ( int trial = 0; trial < 400 && exercised < 3; ++trial )
    {
        const Scalar length = Scalar( 7 ) + Scalar( 0.37 ) * Scalar( trial );
        const Scalar lo = Scalar( -3.1 ) * Scalar( trial % 5 );
        const Box<Scalar> box( { lo, lo, lo }, { lo + length, lo + length, lo + length }, Boundary::periodic );
        const Scalar cutoff = length / Scalar( 3 + trial % 4 ) * Scalar( 0.99 );
        const morula::grid::GridGeometry<Scalar> g( box, cutoff, std::int64_t( 1 ) << 28, "test" );
        const Scalar top = std::nextafter( box.hi[0], box.lo[0] );
        const Scalar rounded = static_cast<Scalar>( double( g.ncell[0] ) / double( box.length( 0 ) ) );
        if ( !( ( top - box.lo[0] ) * rounded >= Scalar( g.ncell[0] ) ) )
            continue;
        ++exercised;
        EXPECT_EQ( g.cell_coordinate( 0, top ), g.ncell[0] - 1 ) << "length " << length;
        EXPECT_LT( ( top - box.lo[0] ) * g.inv_cell_size[0], Scalar( g.ncell[0] ) ) << "length " << length;
        const Scalar near_lo = lo + Scalar( 0.01 ) * cutoff;
        const Scalar mid = lo + Scalar( 0.5 ) * length;
        const Points<Scalar> p = { { top, mid, mid },        { near_lo, mid, mid }, { mid, top, mid },
                                   { mid, near_lo, mid },    { mid, mid, top },     { mid, mid, near_lo },
                                   { top, top, top },        { lo, lo, lo },        { near_lo, top, near_lo } };
        run_all_options( box, p, cutoff, "one ulp below the upper face, box length " + std::to_string( length ) );
    }
    EXPECT_GT( exercised, 0 ) << "no box found where a position below the upper face rounds up to the cell count";
}

template <class Scalar>
void periodic_positions_outside_the_box()
{
    // Unwrapped periodic coordinates (several box lengths away): found through the wrapped cell and
    // the per-pair minimum image.
    const Box<Scalar> box( { 0, 0, 0 }, { 9, 9, 9 }, Boundary::periodic );
    auto p = uniform_points( 1500, box, 7 );
    for ( std::size_t i = 0; i < p.size(); i += 3 )
    {
        p[i][0] += Scalar( 9 * ( int( i % 5 ) - 2 ) );
        p[i][2] -= Scalar( 18 );
    }
    run_all_options( box, p, Scalar( 1.3 ), "unwrapped periodic positions" );
}

template <class Scalar>
void point_queries()
{
    const Box<Scalar> box( { 0, 0, 0 }, { 10, 10, 10 },
                           { Boundary::periodic, Boundary::closed, Boundary::periodic } );
    const auto p = uniform_points( 2000, box, 8 );
    const int n = static_cast<int>( p.size() );
    auto x = to_device( p );
    UniformGrid<Scalar, TEST_MEMSPACE> grid( box, Scalar( 1.5 ) );
    grid.build( TEST_EXECSPACE(), x, n );
    auto query = grid.query( x );
    // Query points inside, on faces, and outside the box along the periodic axes.
    Points<Scalar> q = uniform_points( 200, box, 9 );
    q.push_back( { Scalar( 0 ), Scalar( 0 ), Scalar( 0 ) } );
    q.push_back( { Scalar( 10 ), Scalar( 10 ), Scalar( 10 ) } );
    q.push_back( { Scalar( -3.2 ), Scalar( 5 ), Scalar( 24.9 ) } );
    const int m = static_cast<int>( q.size() );
    auto qd = to_device( q );
    const Scalar radius = Scalar( 1.5 );
    Kokkos::View<int*, TEST_MEMSPACE> found( "found", m );
    Kokkos::View<int*, TEST_MEMSPACE> reference( "reference", m );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, m ), KOKKOS_LAMBDA( const int a ) {
            int c = 0;
            long sum = 0;
            query.for_each_neighbor_of_point( qd( a, 0 ), qd( a, 1 ), qd( a, 2 ), radius,
                                              [&]( int j, Scalar, Scalar, Scalar, Scalar ) {
                                                  ++c;
                                                  sum += j + 1;
                                              } );
            found( a ) = c * 100000 + static_cast<int>( sum % 100000 );
            int cr = 0;
            long sr = 0;
            for ( int j = 0; j < n; ++j )
            {
                const Scalar dx = box.minimum_image( 0, qd( a, 0 ) - x( j, 0 ) );
                const Scalar dy = box.minimum_image( 1, qd( a, 1 ) - x( j, 1 ) );
                const Scalar dz = box.minimum_image( 2, qd( a, 2 ) - x( j, 2 ) );
                if ( morula::grid::detail::distance_squared( dx, dy, dz ) <= radius * radius )
                {
                    ++cr;
                    sr += j + 1;
                }
            }
            reference( a ) = cr * 100000 + static_cast<int>( sr % 100000 );
        } );
    auto hf = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), found );
    auto hr = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), reference );
    int nonempty = 0;
    for ( int a = 0; a < m; ++a )
    {
        EXPECT_EQ( hf( a ), hr( a ) ) << "query point " << a;
        nonempty += hr( a ) >= 100000;
    }
    EXPECT_GT( nonempty, m / 2 ); // the comparison is not vacuous
}

template <class Scalar>
void rebuild_after_moves_and_growth()
{
    // The same grid object rebuilt for more particles (buffers grow) and moved particles.
    const Box<Scalar> box = Box<Scalar>::cube( 12, Boundary::periodic );
    UniformGrid<Scalar, TEST_MEMSPACE> grid( box, Scalar( 1.25 ) );
    for ( int round = 0; round < 3; ++round )
    {
        const int n = 500 * ( round + 1 ) * ( round + 1 );
        auto p = uniform_points( n, box, 100 + round );
        auto x = to_device( p );
        grid.build( TEST_EXECSPACE(), x, n );
        check_structure( grid, n, "rebuild " + std::to_string( round ) );
        int max_count = 0;
        const auto expected = brute_force( box, x, n, Scalar( 1.25 ), max_count );
        expect_same_sets( expected, query_sets( grid.query( x ), n, Scalar( 1.25 ), max_count + 1 ),
                          "rebuild " + std::to_string( round ) );
    }
}

/*!
  Builds from input already in cell order (the points of a first build, permuted) and from input one
  swap away from it. Sorted input takes the build's fast path: the permutation must be the identity,
  the cell starts those of the first build, the neighbours the brute force's, and permute() a no-op.
  Each swap puts one descent where the order check is easiest to get wrong: at the first pair, at the
  last pair, across the GPU count's 2048-particle tiles and across the CPU threads' stripes. Every such
  build must take the full sort and give the stable counting sort (check_structure).
*/
template <class Scalar>
void sorted_and_nearly_sorted_input()
{
    const Box<Scalar> box = Box<Scalar>::cube( 14, Boundary::periodic );
    const Scalar cutoff( 1.1 );
    struct Input
    {
        std::string name;
        Points<Scalar> points;
    };
    std::vector<Input> inputs;
    inputs.push_back( { "uniform", uniform_points( 3 * 2048 + 17, box, 41 ) } );
    // more particles in one bucket than scratch memory holds: the unsorted build sorts them device-wide
    inputs.push_back( { "clustered", clustered_points( 6000, box, 42 ) } );
    Points<Scalar> one_cell( 3000 );
    std::mt19937 rng( 43 );
    std::uniform_real_distribution<double> u( 7.05, 7.95 );
    for ( auto& q : one_cell )
        q = { Scalar( u( rng ) ), Scalar( u( rng ) ), Scalar( u( rng ) ) };
    inputs.push_back( { "one cell", one_cell } );
    for ( const auto& in : inputs )
        for ( auto ordering : { CellOrdering::row_major, CellOrdering::morton, CellOrdering::morton_rows } )
        {
            const std::string what = in.name + ", " + to_string( ordering );
            GridOptions options;
            options.ordering = ordering;
            const int n = static_cast<int>( in.points.size() );
            UniformGrid<Scalar, TEST_MEMSPACE> grid( box, cutoff, options );
            grid.build( TEST_EXECSPACE(), to_device( in.points ), n );
            // (the one-cell input is in order whatever its order: every key is the same)
            EXPECT_EQ( grid.permutation_is_identity(), in.name == "one cell" ) << what;
            check_structure( grid, n, what + ", random input" );
            const auto first_offsets =
                Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.cell_offsets() );
            const auto perm = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.permutation() );
            Points<Scalar> sorted( n );
            for ( int k = 0; k < n; ++k )
                sorted[k] = in.points[perm( k )];

            // sorted input: the fast path, found within order_probe_interval builds; the builds before
            // it sort in full and must give the same result
            auto x = to_device( sorted );
            const auto build_until_identity = [&]( const std::string& w ) {
                int builds = 0;
                do
                {
                    grid.build( TEST_EXECSPACE(), x, n );
                    ++builds;
                    check_structure( grid, n, w + ", sorted input, build " + std::to_string( builds ) );
                } while ( !grid.permutation_is_identity() && builds < grid.order_probe_interval );
                ASSERT_TRUE( grid.permutation_is_identity() ) << w << ": not found in " << builds << " builds";
                grid.build( TEST_EXECSPACE(), x, n ); // and found again at once while it stays sorted
                ASSERT_TRUE( grid.permutation_is_identity() ) << w;
            };
            build_until_identity( what );
            EXPECT_TRUE( grid.data_sorted() ) << what;
            check_structure( grid, n, what + ", sorted input" );
            const auto offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.cell_offsets() );
            for ( int c = 0; c <= grid.num_cells(); ++c )
                ASSERT_EQ( offsets( c ), first_offsets( c ) ) << what << ": cell " << c;
            if ( in.name == "uniform" ) // (the others' brute force is slow on Serial, and adds nothing)
            {
                int max_count = 0;
                const auto expected = brute_force( box, x, n, cutoff, max_count );
                expect_same_sets( expected, query_sets( grid.query( x ), n, cutoff, max_count + 1 ),
                                  what + ", sorted input" );
            }
            // permute() of sorted input leaves the data as they are
            morula::core::Particles<Scalar, TEST_MEMSPACE> particles( "particles", n );
            Kokkos::deep_copy( Kokkos::subview( particles.positions(), std::make_pair( 0, n ), Kokkos::ALL ), x );
            grid.permute( TEST_EXECSPACE(), particles );
            const auto after = to_host( particles.positions(), n );
            for ( int k = 0; k < n; ++k )
                ASSERT_EQ( after[k], sorted[k] ) << what << ": permute moved particle " << k;

            // one descent each: first pair, last pair, a tile boundary, a CPU stripe boundary
            const int stripe_chunk = n / TEST_EXECSPACE().concurrency() + 1;
            for ( int at : { 1, n - 1, 2048, 4096, stripe_chunk } )
            {
                if ( at <= 0 || at >= n )
                    continue;
                // the first pair of different cells at or after `at`, swapped, makes one descent there
                const auto cells =
                    Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.particle_cells() );
                int k = at;
                while ( k < n && cells( k ) == cells( k - 1 ) )
                    ++k;
                if ( k == n )
                    continue; // one cell: no descent can be made
                Points<Scalar> nearly = sorted;
                std::swap( nearly[k - 1], nearly[k] );
                const std::string w = what + ", descent at " + std::to_string( k );
                auto y = to_device( nearly );
                UniformGrid<Scalar, TEST_MEMSPACE> g2( box, cutoff, options );
                g2.build( TEST_EXECSPACE(), y, n );
                EXPECT_FALSE( g2.permutation_is_identity() ) << w;
                check_structure( g2, n, w );
                grid.build( TEST_EXECSPACE(), y, n ); // the same grid object, after a sorted build
                EXPECT_FALSE( grid.permutation_is_identity() ) << w;
                check_structure( grid, n, w + ", rebuilt" );
                build_until_identity( w + ", back" );
            }
        }
}

/*!
  The cell keys of the Morton orderings against a host reference: under morton, the ranks of the cells'
  Morton codes; under morton_rows, every row of cells along x has consecutive keys and the rows follow
  the Morton order of (iy, iz). Box sizes that are not powers of two leave gaps in the codes.
*/
template <class Scalar>
void morton_cell_keys_match_reference()
{
    const Box<Scalar> box( { 0, 0, 0 }, { 11, 6, 9 }, Boundary::periodic );
    for ( const auto ordering : { CellOrdering::morton, CellOrdering::morton_rows } )
    {
        GridOptions options;
        options.ordering = ordering;
        UniformGrid<Scalar, TEST_MEMSPACE> grid( box, Scalar( 1 ), options );
        grid.build( TEST_EXECSPACE(), to_device( uniform_points( 10, box, 9 ) ), 10 );
        const auto& g = grid.geometry();
        auto keys = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.cell_keys() );
        const int nc = g.num_cells();
        ASSERT_EQ( static_cast<int>( keys.extent( 0 ) ), nc ) << to_string( ordering );
        const bool rows = ordering == CellOrdering::morton_rows;
        std::vector<std::pair<std::uint32_t, int>> code( nc );
        for ( int iz = 0; iz < g.ncell[2]; ++iz )
            for ( int iy = 0; iy < g.ncell[1]; ++iy )
                for ( int ix = 0; ix < g.ncell[0]; ++ix )
                {
                    const int lin = g.linear_index( ix, iy, iz );
                    code[lin] = { morula::grid::detail::morton_code( rows ? 0 : ix, iy, iz ), lin };
                }
        std::sort( code.begin(), code.end() );
        for ( int rank = 0; rank < nc; ++rank )
            ASSERT_EQ( keys( code[rank].second ), rank ) << to_string( ordering ) << ": cell " << code[rank].second;
        if ( rows )
            for ( int lin = 0; lin < nc; ++lin )
                ASSERT_EQ( keys( lin ), keys( lin - lin % g.ncell[0] ) + lin % g.ncell[0] ) << "cell " << lin;
    }
}

TEST( TEST_CATEGORY, grid_morton_cell_keys_float ) { morton_cell_keys_match_reference<float>(); }
TEST( TEST_CATEGORY, grid_morton_cell_keys_double ) { morton_cell_keys_match_reference<double>(); }
TEST( TEST_CATEGORY, grid_sorted_input_float ) { sorted_and_nearly_sorted_input<float>(); }
TEST( TEST_CATEGORY, grid_sorted_input_double ) { sorted_and_nearly_sorted_input<double>(); }
TEST( TEST_CATEGORY, grid_random_closed_box_float ) { random_closed_box<float>(); }
TEST( TEST_CATEGORY, grid_random_closed_box_double ) { random_closed_box<double>(); }
TEST( TEST_CATEGORY, grid_random_periodic_box_float ) { random_periodic_box<float>(); }
TEST( TEST_CATEGORY, grid_random_periodic_box_double ) { random_periodic_box<double>(); }
TEST( TEST_CATEGORY, grid_mixed_boundaries_float ) { mixed_boundaries_with_open_escapees<float>(); }
TEST( TEST_CATEGORY, grid_mixed_boundaries_double ) { mixed_boundaries_with_open_escapees<double>(); }
TEST( TEST_CATEGORY, grid_fewer_than_three_cells_float ) { fewer_than_three_cells<float>(); }
TEST( TEST_CATEGORY, grid_fewer_than_three_cells_double ) { fewer_than_three_cells<double>(); }
TEST( TEST_CATEGORY, grid_all_in_one_cell_float ) { all_particles_in_one_cell<float>(); }
TEST( TEST_CATEGORY, grid_all_in_one_cell_double ) { all_particles_in_one_cell<double>(); }
TEST( TEST_CATEGORY, grid_on_cell_faces_float ) { particles_on_cell_and_box_faces<float>(); }
TEST( TEST_CATEGORY, grid_on_cell_faces_double ) { particles_on_cell_and_box_faces<double>(); }
TEST( TEST_CATEGORY, grid_zero_and_one_particle_float ) { zero_and_one_particle<float>(); }
TEST( TEST_CATEGORY, grid_zero_and_one_particle_double ) { zero_and_one_particle<double>(); }
TEST( TEST_CATEGORY, grid_clustered_float ) { clustered<float>(); }
TEST( TEST_CATEGORY, grid_clustered_double ) { clustered<double>(); }
TEST( TEST_CATEGORY, grid_just_below_the_upper_face_float ) { positions_just_below_the_upper_face<float>(); }
TEST( TEST_CATEGORY, grid_just_below_the_upper_face_double ) { positions_just_below_the_upper_face<double>(); }
TEST( TEST_CATEGORY, grid_unwrapped_periodic_float ) { periodic_positions_outside_the_box<float>(); }
TEST( TEST_CATEGORY, grid_unwrapped_periodic_double ) { periodic_positions_outside_the_box<double>(); }
TEST( TEST_CATEGORY, grid_point_queries_float ) { point_queries<float>(); }
TEST( TEST_CATEGORY, grid_point_queries_double ) { point_queries<double>(); }
TEST( TEST_CATEGORY, grid_rebuild_float ) { rebuild_after_moves_and_growth<float>(); }
TEST( TEST_CATEGORY, grid_rebuild_double ) { rebuild_after_moves_and_growth<double>(); }

} // namespace morula_test_grid
