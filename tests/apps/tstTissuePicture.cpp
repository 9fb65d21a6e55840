// The tissue picture of the morula app: a PNG of the requested size for a small two-layer tissue and
// for an empty one, and bad input rejected with a message naming the file.
#include "TissuePicture.hpp"

#include <morula/core/Error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <exception>
#include <string>
#include <vector>

namespace
{

// Six basal cells on a 3 x 2 grid over a 6 x 4 membrane and two suprabasal cells above them, 30
// elements each scattered in a ball; basal elements near the membrane adhere to it (type 1).
morula::io::TissueFrame small_tissue()
{
    morula::io::TissueFrame f;
    f.step = 250;
    f.time = 12.5;
    std::uint64_t seed = 12345;
    auto uniform = [&]() {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return double( seed >> 11 ) / double( 1ull << 53 );
    };
    auto add_cell = [&]( double cx, double cy, double cz, int state ) {
        const int c = int( f.cells() );
        for ( int e = 0; e < 30; ++e )
        {
            double d[3];
            do
                for ( double& v : d )
                    v = 2 * uniform() - 1;
            while ( d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 1 );
            const double z = std::max( 0.05, cz + 0.75 * d[2] );
            f.positions.insert( f.positions.end(), { cx + 0.8 * d[0], cy + 0.8 * d[1], z } );
            f.cell.push_back( c );
            f.type.push_back( state == 0 && z < 0.3 ? 1 : 0 );
            f.state.push_back( state );
        }
        f.cell_centres.insert( f.cell_centres.end(), { cx, cy, cz } );
        f.cell_elements.push_back( 30 );
        f.cell_state.push_back( state );
    };
    for ( int j = 0; j < 2; ++j )
        for ( int i = 0; i < 3; ++i )
            add_cell( 1 + 2 * i, 1 + 2 * j, 0.8, 0 );
    add_cell( 2, 2, 2.3, 1 );
    add_cell( 4, 2, 2.3, 1 );
    return f;
}

std::vector<unsigned char> read_bytes( const std::string& path )
{
    std::ifstream in( path, std::ios::binary );
    return { std::istreambuf_iterator<char>( in ), std::istreambuf_iterator<char>() };
}

// PNG signature, then the IHDR chunk with the width and height (big-endian) at bytes 16 and 20.
void expect_png( const std::string& path, int width, int height )
{
    const auto bytes = read_bytes( path );
    ASSERT_GT( bytes.size(), 24u ) << path;
    const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    for ( int i = 0; i < 8; ++i )
        EXPECT_EQ( bytes[i], signature[i] ) << path << " byte " << i;
    auto be32 = [&]( int at ) {
        return ( long( bytes[at] ) << 24 ) | ( long( bytes[at + 1] ) << 16 ) | ( long( bytes[at + 2] ) << 8 ) |
               long( bytes[at + 3] );
    };
    EXPECT_EQ( be32( 16 ), width ) << path;
    EXPECT_EQ( be32( 20 ), height ) << path;
}

TEST( tissue_picture, small_tissue_png )
{
    const std::string path = "morula_tissue_picture.png";
    std::remove( path.c_str() );
    morula::app::TissueView view;
    view.box_x = 6;
    view.box_y = 4;
    view.title = "two-layer test tissue";
    view.width = 900;
    view.height = 600;
    if ( !morula::app::write_tissue_picture( path, small_tissue(), view ) )
    {
        EXPECT_FALSE( std::ifstream( path ).good() ) << "a picture was written without cairo";
        GTEST_SKIP() << "built without cairo";
    }
    expect_png( path, 900, 600 );
    // Shaded discs in three colours over the membrane: far more than a blank image compresses to.
    EXPECT_GT( read_bytes( path ).size(), 20000u );
}

TEST( tissue_picture, empty_tissue_png )
{
    const std::string path = "morula_tissue_picture_empty.png";
    std::remove( path.c_str() );
    morula::io::TissueFrame empty;
    morula::app::TissueView view; // no box: the membrane falls back to a unit square
    if ( !morula::app::write_tissue_picture( path, empty, view ) )
        GTEST_SKIP() << "built without cairo";
    expect_png( path, 1200, 800 );
    view.box_x = 10;
    view.box_y = 3;
    EXPECT_TRUE( morula::app::write_tissue_picture( path, empty, view ) );
    expect_png( path, 1200, 800 );
}

TEST( tissue_picture, bad_input )
{
    auto expect_error = [&]( const std::string& path, const morula::io::TissueFrame& frame,
                             const morula::app::TissueView& view, const std::string& part ) {
        try
        {
            morula::app::write_tissue_picture( path, frame, view );
            ADD_FAILURE() << "accepted; expected: " << part;
        }
        catch ( const std::exception& e )
        {
            const std::string what = e.what();
            // A file that cannot be written is an IoError (the program aborts every rank on it), bad
            // input an InputError.
            const bool io = dynamic_cast<const morula::core::IoError*>( &e ) != nullptr;
            const bool input = dynamic_cast<const morula::core::InputError*>( &e ) != nullptr;
            EXPECT_EQ( io, part.rfind( "cannot write", 0 ) == 0 ) << what;
            EXPECT_EQ( input, !io ) << what;
            EXPECT_NE( what.find( path ), std::string::npos ) << what;
            EXPECT_NE( what.find( part ), std::string::npos ) << what;
        }
    };
    const auto frame = small_tissue();
    morula::app::TissueView view;
    view.width = 0;
    expect_error( "bad_size.png", frame, view, "size 0 x 800" );
    view = {};
    view.element_radius = -1;
    expect_error( "bad_radius.png", frame, view, "element_radius = -1" );
    view = {};
    auto broken = frame;
    broken.state.pop_back();
    expect_error( "bad_frame.png", broken, view, "'state'" );
#if MORULA_APP_HAVE_CAIRO
    expect_error( "morula_no_such_folder/picture.png", frame, view, "cannot write the tissue picture" );
#endif
}

} // namespace
