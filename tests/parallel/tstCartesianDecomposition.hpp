#include <morula/parallel/CartesianDecomposition.hpp>

#include <ParallelTestUtils.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

namespace morula_test_decomposition
{
using morula::core::Boundary;
using morula::core::Box;
using morula::core::InputError;
using morula::parallel::CartesianDecomposition;
using morula_test_parallel::comm_rank;
using morula_test_parallel::comm_size;

// Runs `make` and expects an InputError whose message contains every one of `parts`.
template <class F>
void expect_input_error( F make, const std::vector<std::string>& parts )
{
    try
    {
        make();
        ADD_FAILURE() << "no InputError";
    }
    catch ( const InputError& e )
    {
        for ( const auto& p : parts )
            EXPECT_NE( std::string( e.what() ).find( p ), std::string::npos )
                << "message '" << e.what() << "' lacks '" << p << "'";
    }
}

TEST( TEST_CATEGORY, decomposition_bad_input )
{
    const int s = comm_size();
    const auto cube = Box<double>::cube( 1.0, Boundary::closed );
    expect_input_error( [&] { CartesianDecomposition<double>( MPI_COMM_WORLD, cube, 0.1, { s + 1, 1, 1 } ); },
                        { std::to_string( s + 1 ) + " x 1 x 1", "communicator size " + std::to_string( s ) } );
    expect_input_error( [&] { CartesianDecomposition<double>( MPI_COMM_WORLD, cube, 0.1, { 3, 0, 0 } ); },
                        { "3 x 0 x 0", "does not divide" } );
    if ( s > 1 ) // one rank does not split the cube
    {
        expect_input_error( [&] { CartesianDecomposition<double>( MPI_COMM_WORLD, cube, 0.75, { s, 1, 1 } ); },
                            { "axis x", "thinner than the halo width 0.75", "at most 1 ranks" } );
        // Automatic dims cannot help either: every split of a unit cube is thinner than 0.75.
        expect_input_error( [&] { CartesianDecomposition<double>( MPI_COMM_WORLD, cube, 0.75 ); },
                            { "halo width 0.75" } );
    }
    const Box<double> thin( { 0, 0, 0 }, { 10.0 * s, 0.5, 10 }, Boundary::periodic );
    expect_input_error( [&] { CartesianDecomposition<double>( MPI_COMM_WORLD, thin, 0.75, { s, 1, 1 } ); },
                        { "periodic axis y", "length 0.5", "halo width 0.75" } );
    expect_input_error( [&] { CartesianDecomposition<double>( MPI_COMM_WORLD, cube, 0.0 ); }, { "got 0" } );
    expect_input_error( [&] { CartesianDecomposition<double>( MPI_COMM_WORLD, cube, -2.5 ); }, { "got -2.5" } );
    expect_input_error( [&] { CartesianDecomposition<double>( MPI_COMM_WORLD, cube, 0.1, { -1, 1, 1 } ); },
                        { "axis x", "got -1" } );
    const Box<float> inverted( { 0, 0, 0 }, { 1, -1, 1 } );
    expect_input_error( [&] { CartesianDecomposition<float>( MPI_COMM_WORLD, inverted, 0.1f ); },
                        { "axis y", "inverted" } );
    // Every rank threw before any collective: the communicator is still in step.
    MPI_Barrier( MPI_COMM_WORLD );
}

// Owner of each point, computed in a kernel on the test's execution space.
template <class Scalar>
std::vector<int> device_owners( const morula::parallel::CartesianOwner<Scalar>& owner,
                                const std::vector<std::array<Scalar, 3>>& pts )
{
    Kokkos::View<Scalar* [3], TEST_MEMSPACE> x( "x", pts.size() );
    Kokkos::View<int*, TEST_MEMSPACE> r( "r", pts.size() );
    auto hx = Kokkos::create_mirror_view( x );
    for ( std::size_t i = 0; i < pts.size(); ++i )
        for ( int a = 0; a < 3; ++a )
            hx( i, a ) = pts[i][a];
    Kokkos::deep_copy( x, hx );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, pts.size() ),
        KOKKOS_LAMBDA( const int i ) { r( i ) = owner( x( i, 0 ), x( i, 1 ), x( i, 2 ) ); } );
    auto hr = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), r );
    return std::vector<int>( hr.data(), hr.data() + pts.size() );
}

template <class Scalar>
void check_tiling( const Box<Scalar>& box, Scalar h, std::array<int, 3> dims_in )
{
    SCOPED_TRACE( "dims " + std::to_string( dims_in[0] ) + "x" + std::to_string( dims_in[1] ) + "x" +
                  std::to_string( dims_in[2] ) );
    CartesianDecomposition<Scalar> dec( MPI_COMM_WORLD, box, h, dims_in );
    const auto dims = dec.dims();
    const auto c = dec.coords();
    const auto& own = dec.owner();
    const int me = dec.rank();
    EXPECT_EQ( dims[0] * dims[1] * dims[2], comm_size() );
    for ( int a = 0; a < 3; ++a )
        if ( dims_in[a] > 0 )
            EXPECT_EQ( dims[a], dims_in[a] );

    // Subdomains tile the box: bounds from the shared formula, volumes add up, no two overlap.
    std::vector<double> mine = { double( dec.lo()[0] ), double( dec.lo()[1] ), double( dec.lo()[2] ),
                                 double( dec.hi()[0] ), double( dec.hi()[1] ), double( dec.hi()[2] ) };
    std::vector<double> all( 6 * comm_size() );
    MPI_Allgather( mine.data(), 6, MPI_DOUBLE, all.data(), 6, MPI_DOUBLE, MPI_COMM_WORLD );
    double volume = 0;
    for ( int r = 0; r < comm_size(); ++r )
    {
        double v = 1;
        for ( int a = 0; a < 3; ++a )
            v *= all[6 * r + 3 + a] - all[6 * r + a];
        volume += v;
        for ( int q = r + 1; q < comm_size(); ++q )
        {
            double ov = 1;
            for ( int a = 0; a < 3; ++a )
                ov *= std::max( 0.0, std::min( all[6 * r + 3 + a], all[6 * q + 3 + a] ) -
                                         std::max( all[6 * r + a], all[6 * q + a] ) );
            EXPECT_EQ( ov, 0.0 ) << "ranks " << r << " and " << q << " overlap";
        }
    }
    const double box_volume = double( box.length( 0 ) ) * box.length( 1 ) * box.length( 2 );
    EXPECT_NEAR( volume, box_volume, 1e-5 * box_volume );
    for ( int a = 0; a < 3; ++a )
    {
        EXPECT_EQ( dec.lo()[a], own.bound( a, c[a] ) );
        EXPECT_EQ( dec.hi()[a], own.bound( a, c[a] + 1 ) );
        if ( c[a] == 0 )
            EXPECT_EQ( dec.lo()[a], box.lo[a] );
        if ( c[a] == dims[a] - 1 )
            EXPECT_EQ( dec.hi()[a], box.hi[a] );
    }

    // Owners of points on faces and corners, on the host and the device alike.
    std::vector<std::array<Scalar, 3>> pts;
    std::vector<int> expected;
    auto rank_at = [&]( int cx, int cy, int cz ) { return own.rank_of_coords( cx, cy, cz ); };
    pts.push_back( { dec.lo()[0], dec.lo()[1], dec.lo()[2] } ); // own low corner
    expected.push_back( me );
    for ( int a = 0; a < 3; ++a )
    {
        // A point on the high face along a belongs to the next rank (or wraps, or stays at the end).
        std::array<Scalar, 3> p = { dec.lo()[0], dec.lo()[1], dec.lo()[2] };
        p[a] = dec.hi()[a];
        int nc[3] = { c[0], c[1], c[2] };
        nc[a] = c[a] + 1;
        if ( nc[a] == dims[a] )
            nc[a] = box.is_periodic( a ) ? 0 : dims[a] - 1;
        pts.push_back( p );
        expected.push_back( rank_at( nc[0], nc[1], nc[2] ) );
        // Just below the high face: still this rank.
        p[a] = std::nextafter( dec.hi()[a], dec.lo()[a] );
        pts.push_back( p );
        expected.push_back( me );
        // Outside the box below lo: periodic axes wrap (one box length), others clamp to coord 0.
        p[a] = box.is_periodic( a ) ? ( dec.lo()[a] + dec.hi()[a] ) / 2 - box.length( a ) : box.lo[a] - 5;
        nc[a] = box.is_periodic( a ) ? c[a] : 0;
        pts.push_back( p );
        expected.push_back( rank_at( nc[0], nc[1], nc[2] ) );
    }
    const auto on_device = device_owners( own, pts );
    for ( std::size_t i = 0; i < pts.size(); ++i )
    {
        EXPECT_EQ( own( pts[i][0], pts[i][1], pts[i][2] ), expected[i] )
            << "point " << i << " (" << pts[i][0] << ", " << pts[i][1] << ", " << pts[i][2] << ")";
        EXPECT_EQ( on_device[i], expected[i] ) << "point " << i << " on the device";
    }

    // Neighbours: the rank at the wrapped coordinates, a shift of -+L where the box wraps.
    int count = 0;
    for ( int s = 0; s < morula::parallel::num_directions; ++s )
    {
        const auto d = morula::parallel::direction_of_slot( s );
        EXPECT_EQ( morula::parallel::slot_of_direction( d[0], d[1], d[2] ), s );
        bool exists = true;
        int nc[3];
        Scalar shift[3];
        for ( int a = 0; a < 3; ++a )
        {
            nc[a] = c[a] + d[a];
            shift[a] = 0;
            if ( nc[a] < 0 || nc[a] >= dims[a] )
            {
                exists = exists && box.is_periodic( a );
                shift[a] = nc[a] < 0 ? box.length( a ) : -box.length( a );
                nc[a] = ( nc[a] + dims[a] ) % dims[a];
            }
        }
        if ( !exists )
        {
            EXPECT_EQ( dec.neighbor_rank( s ), MPI_PROC_NULL ) << "slot " << s;
            continue;
        }
        ++count;
        EXPECT_EQ( dec.neighbor_rank( s ), rank_at( nc[0], nc[1], nc[2] ) ) << "slot " << s;
        for ( int a = 0; a < 3; ++a )
            EXPECT_EQ( dec.neighbor_shift( s )[a], shift[a] ) << "slot " << s << " axis " << a;
    }
    EXPECT_EQ( count, static_cast<int>( dec.neighbors().size() ) );
}

TEST( TEST_CATEGORY, decomposition_tiling_owner_neighbors )
{
    const int s = comm_size();
    const Box<double> periodic( { -1, 0, 0.5 }, { 3, 2.5, 2.5 }, Boundary::periodic );
    const Box<double> closed( { -1, 0, 0.5 }, { 3, 2.5, 2.5 }, Boundary::closed );
    const Box<float> mixed( { -1, 0, 0.5 }, { 3, 2.5, 2.5 },
                            { Boundary::periodic, Boundary::open, Boundary::closed } );
    for ( std::array<int, 3> dims : { std::array<int, 3>{ 0, 0, 0 }, { s, 1, 1 }, { 1, 1, s }, { 1, s, 1 },
                                      morula_test_parallel::two_way_dims() } )
    {
        check_tiling( periodic, 0.3, dims );
        check_tiling( closed, 0.3, dims );
        check_tiling( mixed, 0.3f, dims );
    }
}

TEST( TEST_CATEGORY, decomposition_neighbor_counts )
{
    const int s = comm_size();
    const int me = comm_rank();
    // 1 x 1 x N, closed: only the z neighbours that exist.
    {
        CartesianDecomposition<double> dec( MPI_COMM_WORLD, Box<double>::cube( 4.0 ), 0.5, { 1, 1, s } );
        const int expected = ( me > 0 ) + ( me < s - 1 );
        EXPECT_EQ( static_cast<int>( dec.neighbors().size() ), expected );
    }
    // N x 1 x 1, periodic: all 26 directions exist; along y and z they lead back here with a shift.
    {
        CartesianDecomposition<double> dec( MPI_COMM_WORLD, Box<double>::cube( 4.0, Boundary::periodic ),
                                            0.5, { s, 1, 1 } );
        EXPECT_EQ( dec.neighbors().size(), 26u );
        const int up = morula::parallel::slot_of_direction( 0, 1, 0 );
        EXPECT_EQ( dec.neighbor_rank( up ), me );
        EXPECT_EQ( dec.neighbor_shift( up )[1], -4.0 );
        const int left = morula::parallel::slot_of_direction( -1, 0, 0 );
        EXPECT_EQ( dec.neighbor_rank( left ), ( me + s - 1 ) % s );
        EXPECT_EQ( dec.neighbor_shift( left )[0], me == 0 ? 4.0 : 0.0 );
    }
    // 2 x (N/2) x 1, periodic in x and y only: the 8 in-plane directions.
    {
        const Box<double> box( { 0, 0, 0 }, { 4, 4, 4 },
                               { Boundary::periodic, Boundary::periodic, Boundary::closed } );
        CartesianDecomposition<double> dec( MPI_COMM_WORLD, box, 0.5, morula_test_parallel::two_way_dims() );
        EXPECT_EQ( dec.neighbors().size(), 8u );
        for ( const auto& nb : dec.neighbors() )
            EXPECT_EQ( nb.direction[2], 0 );
    }
}

} // namespace morula_test_decomposition
