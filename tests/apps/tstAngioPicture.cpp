// The angiogenesis picture of the morula app: a PNG of the requested size whose pixels show the
// vessels over the cells, the cells' state colours in painter's order in both views and the domain box;
// an empty frame; bad input rejected with a message naming the file.
#include "AngioPicture.hpp"

#include <morula/core/Error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ostream>
#include <exception>
#include <string>

#if MORULA_APP_HAVE_CAIRO
#include <cairo.h>
#endif

namespace
{

// A 400 x 200 x 200 μm domain with six cells and a vessel of two tubes:
// - cell 0 (new) lies under the inlet tube, which must cover its centre in the top view;
// - cells 2 (hypoxic, z = 150) and 3 (dead, z = 50) share x and y: the top view shows the hypoxic one
//   in front, the side view shows both apart;
// - cells 4 (new, y = 20) and 5 (dead, y = 180) share x and z: the side view, seen from -y, shows the
//   new one in front, the top view both apart;
// - tube 1 is a growing sprout off tube 0 whose tip, end_b, gets a yellow dot.
morula::io::AngioFrame small_frame()
{
    morula::io::AngioFrame f;
    f.step = 40;
    f.time = 2.5;
    f.cell_positions = { 100, 100, 100, 300, 150, 60, 200, 50, 150, 200, 50, 50, 350, 20, 150, 350, 180, 150 };
    f.cell_radius = { 20, 15, 15, 15, 12, 12 };
    f.cell_state = { 0, 1, 2, 3, 0, 3 };
    for ( std::size_t i = 0; i < f.cells(); ++i )
    {
        f.cell_age.push_back( double( i ) );
        f.cell_oxygen.push_back( 0.5 );
        f.cell_taf.push_back( 0.1 );
        f.cell_pressure.push_back( 0.0 );
        f.cell_id.push_back( std::int64_t( i ) );
    }
    f.tube_end_a = { 0, 100, 100, 150, 100, 100 };
    f.tube_end_b = { 150, 100, 100, 250, 160, 140 };
    f.tube_radius_a = { 6, 4 };
    f.tube_radius_b = { 6, 3 };
    f.tube_flow = { 1, 0 };
    f.tube_blood_oxygen = { 1, 1 };
    f.tube_delivered = { 0, 0 };
    f.tube_taf = { 0, 0 };
    f.tube_parent = { -1, 0 };
    f.tube_flags = { 0, morula::io::angio_tube_tip | morula::io::angio_tube_sprouted };
    f.tube_id = { 10, 11 };
    return f;
}

morula::app::AngioView small_view()
{
    morula::app::AngioView view;
    view.lo[0] = view.lo[1] = view.lo[2] = 0;
    view.hi[0] = 400;
    view.hi[1] = view.hi[2] = 200;
    view.title = "synthetic tumour";
    return view;
}

#if MORULA_APP_HAVE_CAIRO
struct Rgb
{
    double r, g, b;
};

std::ostream& operator<<( std::ostream& os, const Rgb& c )
{
    return os << "rgb(" << c.r << ", " << c.g << ", " << c.b << ")";
}

// A PNG read back with cairo; pixel() of a picture coordinate (x to the right, y down).
struct Png
{
    cairo_surface_t* surface;
    explicit Png( const std::string& path )
        : surface( cairo_image_surface_create_from_png( path.c_str() ) )
    {
    }
    Png( const Png& ) = delete;
    ~Png() { cairo_surface_destroy( surface ); }
    bool ok() const { return cairo_surface_status( surface ) == CAIRO_STATUS_SUCCESS; }
    int width() const { return cairo_image_surface_get_width( surface ); }
    int height() const { return cairo_image_surface_get_height( surface ); }
    Rgb pixel( double x, double y ) const
    {
        const int i = int( std::floor( x ) ), j = int( std::floor( y ) );
        if ( i < 0 || j < 0 || i >= width() || j >= height() )
            return { -1, -1, -1 };
        const unsigned char* row =
            cairo_image_surface_get_data( surface ) + j * cairo_image_surface_get_stride( surface );
        std::uint32_t v;
        std::memcpy( &v, row + 4 * i, 4 );
        return { ( ( v >> 16 ) & 255 ) / 255.0, ( ( v >> 8 ) & 255 ) / 255.0, ( v & 255 ) / 255.0 };
    }
};

bool vessel_red( const Rgb& c ) { return c.r > 0.7 && c.g < 0.2 && c.b < 0.2; }
bool tip_yellow( const Rgb& c ) { return c.r > 0.85 && c.g > 0.7 && c.b < 0.35; }
#endif

TEST( angio_picture, layout )
{
    const auto view = small_view();
    const auto layout = morula::app::angio_picture_layout( "layout.png", view );
    // Two panels of (1600 - 3 * 16) / 2 = 776 pixels side by side; x (400 μm) fills a panel's width.
    EXPECT_DOUBLE_EQ( layout.panel_width, 776 );
    EXPECT_DOUBLE_EQ( layout.side_panel_x - layout.top_panel_x, 776 + 16 );
    EXPECT_NEAR( layout.scale, ( 776 - 12 ) / 400.0, 1e-12 );
    const double corner[3] = { 0, 200, 200 }, far[3] = { 400, 0, 0 };
    EXPECT_DOUBLE_EQ( layout.top_view( corner )[0], layout.top_x );
    EXPECT_DOUBLE_EQ( layout.top_view( corner )[1], layout.top_y );
    EXPECT_DOUBLE_EQ( layout.side_view( corner )[1], layout.side_y );
    // The box inside the panels, the same size in both (y and z ranges are equal here).
    EXPECT_GE( layout.top_x, layout.top_panel_x );
    EXPECT_LE( layout.top_view( far )[0], layout.top_panel_x + layout.panel_width );
    EXPECT_LE( layout.top_view( far )[1], layout.panel_y + layout.panel_height );
    EXPECT_GE( layout.top_y, layout.panel_y );
    EXPECT_NEAR( layout.side_view( far )[0] - layout.top_view( far )[0], 776 + 16, 1e-9 );
    EXPECT_NEAR( layout.side_view( far )[1], layout.top_view( far )[1], 1e-9 );
    EXPECT_NEAR( layout.top_view( far )[1] - layout.top_y, 200 * layout.scale, 1e-9 );
}

TEST( angio_picture, small_frame_pixels )
{
    const std::string path = "morula_angio_picture.png";
    std::remove( path.c_str() );
    const auto frame = small_frame();
    const auto view = small_view();
    if ( !morula::app::write_angio_picture( path, frame, view ) )
    {
        EXPECT_FALSE( std::ifstream( path ).good() ) << "a picture was written without cairo";
        GTEST_SKIP() << "built without cairo";
    }
#if MORULA_APP_HAVE_CAIRO
    const Png png( path );
    ASSERT_TRUE( png.ok() ) << path;
    EXPECT_EQ( png.width(), 1600 );
    EXPECT_EQ( png.height(), 800 );
    const auto layout = morula::app::angio_picture_layout( path, view );
    auto top = [&]( double x, double y, double z ) {
        const double p[3] = { x, y, z };
        const auto s = layout.top_view( p );
        return png.pixel( s[0], s[1] );
    };
    auto side = [&]( double x, double y, double z ) {
        const double p[3] = { x, y, z };
        const auto s = layout.side_view( p );
        return png.pixel( s[0], s[1] );
    };

    // Vessels: both tubes' midpoints red in both views, and the inlet tube over cell 0's centre.
    EXPECT_TRUE( vessel_red( top( 75, 100, 100 ) ) ) << top( 75, 100, 100 );
    EXPECT_TRUE( vessel_red( side( 75, 100, 100 ) ) ) << side( 75, 100, 100 );
    EXPECT_TRUE( vessel_red( top( 200, 130, 120 ) ) ) << top( 200, 130, 120 );
    EXPECT_TRUE( vessel_red( side( 200, 130, 120 ) ) ) << side( 200, 130, 120 );
    EXPECT_TRUE( vessel_red( top( 100, 100, 100 ) ) ) << "tube under cell 0: " << top( 100, 100, 100 );
    // The sprout's tip, and no dot at the inlet tube's far end.
    EXPECT_TRUE( tip_yellow( top( 250, 160, 140 ) ) ) << top( 250, 160, 140 );
    EXPECT_TRUE( tip_yellow( side( 250, 160, 140 ) ) ) << side( 250, 160, 140 );
    EXPECT_FALSE( tip_yellow( top( 0, 100, 100 ) ) ) << top( 0, 100, 100 );

    // Cell 1, mature: green-blue.
    const Rgb mature = top( 300, 150, 60 );
    EXPECT_GT( mature.g - mature.r, 0.2 ) << mature;
    EXPECT_GT( mature.b - mature.r, 0.2 ) << mature;
    EXPECT_LT( std::abs( mature.g - mature.b ), 0.15 ) << mature;
    // Cells 2 (hypoxic, higher z) over 3 (dead) in the top view: orange, not muddied to grey-brown.
    const Rgb front = top( 200, 50, 100 );
    EXPECT_GT( front.r, 0.7 ) << front;
    EXPECT_GT( front.r - front.b, 0.45 ) << front;
    EXPECT_GT( front.g - front.b, 0.2 ) << front;
    // Both apart in the side view: hypoxic orange at z = 150, dead grey at z = 50.
    const Rgb hypoxic = side( 200, 50, 150 ), dead = side( 200, 50, 50 );
    EXPECT_GT( hypoxic.r, 0.85 ) << hypoxic;
    EXPECT_GT( hypoxic.r - hypoxic.b, 0.5 ) << hypoxic;
    EXPECT_LT( std::abs( dead.r - dead.g ) + std::abs( dead.g - dead.b ), 0.05 ) << dead;
    EXPECT_LT( dead.r, 0.6 ) << dead;
    // Cells 4 (new, y = 20) over 5 (dead, y = 180) in the side view: light green in front.
    const Rgb green = side( 350, 100, 150 );
    EXPECT_GT( green.g - green.r, 0.2 ) << green;
    EXPECT_GT( green.g - green.b, 0.2 ) << green;
    // Both apart in the top view: new light green and dead grey.
    const Rgb fresh = top( 350, 20, 150 ), grey = top( 350, 180, 150 );
    EXPECT_GT( fresh.g, 0.8 ) << fresh;
    EXPECT_GT( fresh.g - fresh.b, 0.3 ) << fresh;
    EXPECT_LT( std::abs( grey.r - grey.b ), 0.05 ) << grey;
    EXPECT_LT( grey.g, 0.6 ) << grey;

    // The domain box: its left edge drawn dark, white above it (outside), its light fill in an empty
    // corner inside.
    auto darkest = [&]( double x, double y ) {
        double least = 1;
        for ( int dx = -1; dx <= 1; ++dx )
        {
            const Rgb c = png.pixel( x + dx, y );
            least = std::min( least, c.r + c.g + c.b );
        }
        return least / 3;
    };
    EXPECT_LT( darkest( layout.top_x, layout.top_y + 150 * layout.scale ), 0.6 );
    EXPECT_LT( darkest( layout.side_x, layout.side_y + 150 * layout.scale ), 0.6 );
    const Rgb outside = png.pixel( layout.top_x + 40, layout.top_y - 20 );
    EXPECT_EQ( outside.r + outside.g + outside.b, 3 ) << outside;
    const Rgb inside = top( 20, 10, 0 );
    EXPECT_GT( inside.r, 0.9 ) << inside;
    EXPECT_LT( inside.r + inside.g + inside.b, 3 ) << inside;
#endif
}

TEST( angio_picture, empty_frame_png )
{
    const std::string path = "morula_angio_picture_empty.png";
    std::remove( path.c_str() );
    morula::io::AngioFrame empty;
    morula::app::AngioView view; // the unit cube, 1600 x 800
    if ( !morula::app::write_angio_picture( path, empty, view ) )
        GTEST_SKIP() << "built without cairo";
#if MORULA_APP_HAVE_CAIRO
    const Png png( path );
    ASSERT_TRUE( png.ok() ) << path;
    EXPECT_EQ( png.width(), 1600 );
    EXPECT_EQ( png.height(), 800 );
    // A frame with cells but no tubes, at the smallest size.
    auto cells = small_frame();
    for ( auto* v : { &cells.tube_end_a, &cells.tube_end_b, &cells.tube_radius_a, &cells.tube_radius_b,
                      &cells.tube_flow, &cells.tube_blood_oxygen, &cells.tube_delivered, &cells.tube_taf } )
        v->clear();
    cells.tube_parent.clear(), cells.tube_flags.clear(), cells.tube_id.clear();
    view = small_view();
    view.width = 800;
    view.height = 400;
    EXPECT_TRUE( morula::app::write_angio_picture( path, cells, view ) );
    const Png small( path );
    ASSERT_TRUE( small.ok() ) << path;
    EXPECT_EQ( small.width(), 800 );
    EXPECT_EQ( small.height(), 400 );
#endif
}

TEST( angio_picture, bad_input )
{
    auto expect_error = [&]( const std::string& path, const morula::io::AngioFrame& frame,
                             const morula::app::AngioView& view, const std::string& part ) {
        try
        {
            morula::app::write_angio_picture( path, frame, view );
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
    const auto frame = small_frame();
    auto view = small_view();
    view.width = 0;
    expect_error( "bad_size.png", frame, view, "size 0 x 800" );
    view = small_view();
    view.hi[2] = 0;
    expect_error( "bad_box.png", frame, view, "domain box z range [0, 0]" );
    view = small_view();
    view.lo[1] = std::nan( "" );
    expect_error( "bad_box.png", frame, view, "domain box y range" );
    view = small_view();
    auto broken = frame;
    broken.tube_radius_b.pop_back();
    expect_error( "bad_frame.png", broken, view, "'tube_radius_b' has 1 values, expected 2" );
    broken = frame;
    broken.tube_parent[1] = 5;
    expect_error( "bad_parent.png", broken, view, "'tube_parent'[1] = 5" );
    broken = frame;
    broken.cell_state[0] = 7;
    expect_error( "bad_state.png", broken, view, "'cell_state'[0] = 7" );
#if MORULA_APP_HAVE_CAIRO
    expect_error( "morula_no_such_folder/angio.png", frame, view, "cannot write the angio picture" );
#endif
}

} // namespace
