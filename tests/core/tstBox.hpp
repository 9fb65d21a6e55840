#include <morula/core/Box.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace morula_test_box
{
using morula::core::Boundary;
using morula::core::Box;
using morula::core::InputError;

template <class Scalar>
void check_minimum_image_on_device()
{
    // Periodic x (L = 10), closed y, open z.
    Box<Scalar> box( { -2, 0, 0 }, { 8, 5, 5 },
                     { Boundary::periodic, Boundary::closed, Boundary::open } );
    const std::vector<Scalar> inputs = { 0,   1,    4.75, 5.25, -5.25, 9.5,
                                         -31, 24.5, 100,  -0.5, 3 };
    const int n = static_cast<int>( inputs.size() );
    Kokkos::View<Scalar* [3], TEST_MEMSPACE> d( "d", n );
    auto h = Kokkos::create_mirror_view( d );
    for ( int i = 0; i < n; ++i )
        for ( int a = 0; a < 3; ++a )
            h( i, a ) = inputs[i];
    Kokkos::deep_copy( d, h );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int i ) {
            for ( int a = 0; a < 3; ++a )
                d( i, a ) = box.minimum_image( a, d( i, a ) );
        } );
    Kokkos::deep_copy( h, d );
    for ( int i = 0; i < n; ++i )
    {
        const Scalar x = inputs[i];
        // Periodic axis: the image lies in [-L/2, L/2] and differs from x by a whole number of L.
        EXPECT_LE( std::abs( h( i, 0 ) ), Scalar( 5 ) ) << "input " << x;
        const double periods = ( double( x ) - double( h( i, 0 ) ) ) / 10.0;
        EXPECT_NEAR( periods, std::round( periods ), 1e-6 ) << "input " << x;
        // The device result equals the host function exactly.
        EXPECT_EQ( h( i, 0 ), box.minimum_image( 0, x ) );
        // Non-periodic axes are untouched.
        EXPECT_EQ( h( i, 1 ), x );
        EXPECT_EQ( h( i, 2 ), x );
    }
    EXPECT_EQ( box.minimum_image( 0, Scalar( 9.5 ) ), Scalar( -0.5 ) );
    EXPECT_EQ( box.minimum_image( 0, Scalar( -31 ) ), Scalar( -1 ) );
    EXPECT_EQ( box.minimum_image( 0, Scalar( 4.75 ) ), Scalar( 4.75 ) );
    EXPECT_EQ( box.minimum_image( 0, Scalar( 5.25 ) ), Scalar( -4.75 ) );
}

TEST( TEST_CATEGORY, box_minimum_image_float ) { check_minimum_image_on_device<float>(); }
TEST( TEST_CATEGORY, box_minimum_image_double ) { check_minimum_image_on_device<double>(); }

TEST( TEST_CATEGORY, box_validate_rejects_bad_boxes )
{
    Box<double> good = Box<double>::cube( 3.0, Boundary::periodic );
    EXPECT_NO_THROW( good.validate( "test" ) );
    EXPECT_EQ( good.length( 1 ), 3.0 );
    EXPECT_TRUE( good.is_periodic( 2 ) );

    Box<double> inverted( { 0, 5, 0 }, { 1, 4, 1 } );
    try
    {
        inverted.validate( "where" );
        FAIL() << "inverted box accepted";
    }
    catch ( const InputError& e )
    {
        const std::string msg = e.what();
        EXPECT_NE( msg.find( "axis y" ), std::string::npos ) << msg;
        EXPECT_NE( msg.find( "inverted" ), std::string::npos ) << msg;
        EXPECT_NE( msg.find( "where" ), std::string::npos ) << msg;
    }
    Box<double> empty( { 0, 0, 2 }, { 1, 1, 2 } );
    EXPECT_THROW( empty.validate( "w" ), InputError );
    Box<double> nan_box( { 0, 0, std::numeric_limits<double>::quiet_NaN() }, { 1, 1, 1 } );
    EXPECT_THROW( nan_box.validate( "w" ), InputError );
    Box<float> inf_box( { 0, 0, 0 }, { std::numeric_limits<float>::infinity(), 1, 1 } );
    EXPECT_THROW( inf_box.validate( "w" ), InputError );
}

TEST( TEST_CATEGORY, box_boundary_names )
{
    EXPECT_EQ( morula::core::boundary_from_string( "periodic" ), Boundary::periodic );
    EXPECT_EQ( morula::core::boundary_from_string( "closed" ), Boundary::closed );
    EXPECT_EQ( morula::core::boundary_from_string( "open" ), Boundary::open );
    EXPECT_STREQ( morula::core::to_string( Boundary::open ), "open" );
    try
    {
        morula::core::boundary_from_string( "wrap" );
        FAIL() << "unknown boundary accepted";
    }
    catch ( const InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "'wrap'" ), std::string::npos );
    }
}

} // namespace morula_test_box
