#include "GridTestUtils.hpp"

#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace morula_test_grid
{
using morula::core::CapacityError;
using morula::core::InputError;
using morula::grid::GridOptions;
using morula::grid::UniformGrid;

//! Runs f, expects an exception of type E whose message contains every one of `parts`.
template <class E, class F>
void expect_error( F&& f, std::initializer_list<std::string> parts )
{
    try
    {
        f();
        ADD_FAILURE() << "no exception";
    }
    catch ( const E& e )
    {
        const std::string msg = e.what();
        for ( const auto& part : parts )
            EXPECT_NE( msg.find( part ), std::string::npos ) << "'" << part << "' not in: " << msg;
    }
}

template <class Scalar>
void bad_geometry()
{
    using Grid = UniformGrid<Scalar, TEST_MEMSPACE>;
    const Box<Scalar> box = Box<Scalar>::cube( 10 );
    expect_error<InputError>( [&] { Grid( box, Scalar( 0 ) ); }, { "cutoff", "positive" } );
    expect_error<InputError>( [&] { Grid( box, Scalar( -1 ) ); }, { "cutoff", "-1" } );
    expect_error<InputError>( [&] { Grid( box, std::numeric_limits<Scalar>::quiet_NaN() ); },
                              { "cutoff", "nan" } );
    expect_error<InputError>( [&] { Grid( box, std::numeric_limits<Scalar>::infinity() ); },
                              { "cutoff" } );
    expect_error<InputError>(
        [&] { Grid( Box<Scalar>( { 0, 0, 0 }, { 1, 1, 0 } ), Scalar( 1 ) ); },
        { "axis z", "empty or inverted" } );
    expect_error<InputError>(
        [&] { Grid( Box<Scalar>( { 0, 3, 0 }, { 1, 1, 1 } ), Scalar( 1 ) ); },
        { "axis y", "lo = 3" } );
    GridOptions small;
    small.max_cells = 1000;
    expect_error<CapacityError>( [&] { Grid( box, Scalar( 0.5 ), small ); },
                                 { "max_cells = 1000" } );
    GridOptions absurd;
    absurd.max_cells = 0;
    expect_error<InputError>( [&] { Grid( box, Scalar( 1 ), absurd ); }, { "max_cells" } );
    GridOptions morton;
    morton.ordering = morula::grid::CellOrdering::morton;
    morton.max_cells = std::int64_t( 1 ) << 30;
    expect_error<CapacityError>(
        [&] { Grid( Box<Scalar>( { 0, 0, 0 }, { 2000, 1, 1 } ), Scalar( 1 ), morton ); },
        { "Morton", "1024" } );
    // Whole Morton rows leave x out of the code: 2000 cells along x are fine, along y they are not.
    GridOptions rows = morton;
    rows.ordering = morula::grid::CellOrdering::morton_rows;
    EXPECT_GT( Grid( Box<Scalar>( { 0, 0, 0 }, { 2000, 1, 1 } ), Scalar( 1 ), rows ).geometry().ncell[0], 1024 );
    expect_error<CapacityError>(
        [&] { Grid( Box<Scalar>( { 0, 0, 0 }, { 1, 2000, 1 } ), Scalar( 1 ), rows ); },
        { "morton-rows", "1024 cells along y" } );
    GridOptions invalid;
    invalid.ordering = static_cast<morula::grid::CellOrdering>( 7 );
    expect_error<InputError>( [&] { Grid( box, Scalar( 1 ), invalid ); }, { "ordering = 7" } );
}

TEST( TEST_CATEGORY, grid_rejects_bad_geometry_float ) { bad_geometry<float>(); }
TEST( TEST_CATEGORY, grid_rejects_bad_geometry_double ) { bad_geometry<double>(); }

template <class Scalar>
void bad_positions()
{
    const Box<Scalar> box( { 0, 0, 0 }, { 10, 10, 10 },
                           { Boundary::periodic, Boundary::closed, Boundary::open } );
    UniformGrid<Scalar, TEST_MEMSPACE> grid( box, Scalar( 1 ) );
    auto good = uniform_points( 50, box, 1 );
    auto x = to_device( good );
    EXPECT_NO_THROW( grid.build( TEST_EXECSPACE(), x, 50 ) );

    const Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
    const Scalar inf = std::numeric_limits<Scalar>::infinity();
    {
        auto p = good;
        p[17][0] = nan;
        p[31][2] = nan; // the first offender is the one reported
        expect_error<InputError>( [&] { grid.build( TEST_EXECSPACE(), to_device( p ), 50 ); },
                                  { "particle 17", "non-finite" } );
    }
    {
        auto p = good;
        p[8][2] = -inf; // open axis: still rejected, infinity is no position
        expect_error<InputError>( [&] { grid.build( TEST_EXECSPACE(), to_device( p ), 50 ); },
                                  { "particle 8", "non-finite", "inf" } );
    }
    {
        auto p = good;
        p[42][1] = Scalar( 10.5 ); // closed y
        expect_error<InputError>( [&] { grid.build( TEST_EXECSPACE(), to_device( p ), 50 ); },
                                  { "particle 42", "closed box along y", "10.5", "[0, 10]" } );
    }
    {
        auto p = good;
        p[3][1] = Scalar( -0.25 );
        expect_error<InputError>( [&] { grid.build( TEST_EXECSPACE(), to_device( p ), 50 ); },
                                  { "particle 3", "along y" } );
    }
    {
        // Outside along periodic x and open z is allowed: nothing is dropped.
        auto p = good;
        p[5][0] = Scalar( 23.5 );
        p[6][2] = Scalar( -40 );
        EXPECT_NO_THROW( grid.build( TEST_EXECSPACE(), to_device( p ), 50 ) );
        EXPECT_EQ( grid.num_particles(), 50 );
        auto offsets =
            Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.cell_offsets() );
        EXPECT_EQ( offsets( grid.num_cells() ), 50 );
    }
    expect_error<InputError>( [&] { grid.build( TEST_EXECSPACE(), x, 51 ); },
                              { "n = 51", "hold 50" } );
    expect_error<InputError>( [&] { grid.build( TEST_EXECSPACE(), x, -1 ); }, { "n = -1" } );
}

TEST( TEST_CATEGORY, grid_rejects_bad_positions_float ) { bad_positions<float>(); }
TEST( TEST_CATEGORY, grid_rejects_bad_positions_double ) { bad_positions<double>(); }

struct ids_init
{
    Kokkos::View<int*, TEST_MEMSPACE> ids;
    KOKKOS_INLINE_FUNCTION void operator()( const int i ) const { ids( i ) = i; }
};

TEST( TEST_CATEGORY, grid_permute_checks_sizes )
{
    const Box<double> box = Box<double>::cube( 5, Boundary::periodic );
    UniformGrid<double, TEST_MEMSPACE> grid( box, 1.0 );
    auto x = to_device( uniform_points( 40, box, 2 ) );
    grid.build( TEST_EXECSPACE(), x, 40 );
    morula::core::Particles<double, TEST_MEMSPACE> wrong( "wrong", 39 );
    expect_error<InputError>( [&] { grid.permute( TEST_EXECSPACE(), wrong ); },
                              { "39 entries", "40 particles" } );
    Kokkos::View<int*, TEST_MEMSPACE> short_view( "short", 10 );
    expect_error<InputError>( [&] { grid.permute_view( TEST_EXECSPACE(), short_view ); },
                              { "'short'", "10 entries" } );
    // permute_view on a plain View reorders it like the permutation.
    Kokkos::View<int*, TEST_MEMSPACE> ids( "ids", 40 );
    Kokkos::parallel_for( Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 40 ), ids_init{ ids } );
    grid.permute_view( TEST_EXECSPACE(), ids );
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), ids );
    auto perm = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), grid.permutation() );
    for ( int k = 0; k < 40; ++k )
        EXPECT_EQ( h( k ), perm( k ) );
}

} // namespace morula_test_grid
