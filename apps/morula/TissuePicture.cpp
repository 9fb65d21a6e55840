#include "TissuePicture.hpp"

#include <morula/core/Error.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#if MORULA_APP_HAVE_CAIRO
#include <cairo.h>
#endif

namespace morula::app
{

namespace
{
void check_view( const std::string& path, const TissueView& view )
{
    // Below 320 x 240 the legend and title leave no room for the tissue; cairo's image surfaces stop at
    // 32767, and 16384 keeps a PNG within reason.
    if ( view.width < 320 || view.height < 240 || view.width > 16384 || view.height > 16384 )
        throw core::InputError( core::detail::concat( "tissue picture '", path, "': size ", view.width, " x ",
                                                      view.height, " pixels is outside 320 x 240 to 16384 x 16384" ) );
    if ( !( view.element_radius > 0 ) || !std::isfinite( view.element_radius ) )
        throw core::InputError( core::detail::concat( "tissue picture '", path,
                                                      "': element_radius = ", view.element_radius,
                                                      " must be a positive number" ) );
    if ( !( view.box_x >= 0 ) || !( view.box_y >= 0 ) || !std::isfinite( view.box_x ) ||
         !std::isfinite( view.box_y ) )
        throw core::InputError( core::detail::concat( "tissue picture '", path, "': membrane box ", view.box_x,
                                                      " x ", view.box_y, " must be finite and not negative" ) );
}
} // namespace

#if MORULA_APP_HAVE_CAIRO
namespace
{
using Vec3 = std::array<double, 3>;
const double pi = std::acos( -1.0 );

double dot( const Vec3& a, const Vec3& b ) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// An orthographic camera at azimuth -65 degrees and elevation 25 degrees: the membrane is seen from
// above and the front-left, so the layers stand out against it as in the paper's figures.
struct Camera
{
    Vec3 right, up, towards; // screen x, screen y (upwards) and depth (towards the viewer)
    Camera()
    {
        const double a = -65 * pi / 180, e = 25 * pi / 180;
        towards = { std::cos( e ) * std::cos( a ), std::cos( e ) * std::sin( a ), std::sin( e ) };
        right = { -std::sin( a ), std::cos( a ), 0 };
        up = { towards[1] * right[2] - towards[2] * right[1], towards[2] * right[0] - towards[0] * right[2],
               towards[0] * right[1] - towards[1] * right[0] };
    }
};

struct Rgb
{
    double r, g, b;
};
const Rgb adhesive{ 0.86, 0.13, 0.10 }, basal{ 0.16, 0.36, 0.86 }, suprabasal{ 0.98, 0.84, 0.16 },
    other{ 0.6, 0.6, 0.6 };
const double membrane_fill[4] = { 0.72, 0.84, 0.28, 0.45 }, membrane_edge[4] = { 0.45, 0.55, 0.10, 0.9 };

// A sphere-like disc: a highlight towards the upper left fading to the colour and to a darker rim.
void shaded_disc( cairo_t* cr, double x, double y, double radius, const Rgb& c )
{
    cairo_new_path( cr );
    cairo_arc( cr, x, y, radius, 0, 2 * pi );
    if ( radius < 2.5 ) // too small for the shading to show; a flat disc is faster
    {
        cairo_set_source_rgb( cr, c.r, c.g, c.b );
        cairo_fill( cr );
        return;
    }
    cairo_pattern_t* shade = cairo_pattern_create_radial( x - 0.35 * radius, y - 0.35 * radius, 0.05 * radius, x,
                                                          y, radius );
    cairo_pattern_add_color_stop_rgb( shade, 0, 0.45 + 0.55 * c.r, 0.45 + 0.55 * c.g, 0.45 + 0.55 * c.b );
    cairo_pattern_add_color_stop_rgb( shade, 0.55, c.r, c.g, c.b );
    cairo_pattern_add_color_stop_rgb( shade, 1, 0.55 * c.r, 0.55 * c.g, 0.55 * c.b );
    cairo_set_source( cr, shade );
    cairo_fill_preserve( cr );
    cairo_pattern_destroy( shade );
    cairo_set_source_rgba( cr, 0.3 * c.r, 0.3 * c.g, 0.3 * c.b, 0.6 );
    cairo_set_line_width( cr, std::min( 1.0, 0.08 * radius ) );
    cairo_stroke( cr );
}
} // namespace

bool write_tissue_picture( const std::string& path, const io::TissueFrame& frame, const TissueView& view )
{
    frame.validate( "tissue picture '" + path + "'" );
    check_view( path, view );
    const Camera camera;
    const double radius = view.element_radius;
    const std::size_t n = frame.elements();

    // Elements with a finite position, their colours and the data's x/y range.
    std::vector<std::size_t> shown;
    shown.reserve( n );
    double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
    std::size_t counts[4] = { 0, 0, 0, 0 }; // adhesive, basal, suprabasal, other
    auto category = [&]( std::size_t i ) {
        return frame.type[i] == 1 ? 0 : frame.state[i] == 0 ? 1 : frame.state[i] == 1 ? 2 : 3;
    };
    for ( std::size_t i = 0; i < n; ++i )
    {
        const double* p = &frame.positions[3 * i];
        if ( !std::isfinite( p[0] ) || !std::isfinite( p[1] ) || !std::isfinite( p[2] ) )
            continue;
        shown.push_back( i );
        ++counts[category( i )];
        xmin = std::min( xmin, p[0] ), xmax = std::max( xmax, p[0] );
        ymin = std::min( ymin, p[1] ), ymax = std::max( ymax, p[1] );
    }
    if ( shown.empty() )
        xmin = ymin = 0, xmax = ymax = 1;
    const double mx0 = view.box_x > 0 ? 0 : xmin - radius, mx1 = view.box_x > 0 ? view.box_x : xmax + radius;
    const double my0 = view.box_y > 0 ? 0 : ymin - radius, my1 = view.box_y > 0 ? view.box_y : ymax + radius;
    const Vec3 membrane[4] = { { mx0, my0, 0 }, { mx1, my0, 0 }, { mx1, my1, 0 }, { mx0, my1, 0 } };

    cairo_surface_t* surface = cairo_image_surface_create( CAIRO_FORMAT_RGB24, view.width, view.height );
    if ( cairo_surface_status( surface ) != CAIRO_STATUS_SUCCESS )
    {
        const std::string why = cairo_status_to_string( cairo_surface_status( surface ) );
        cairo_surface_destroy( surface );
        throw core::InputError( "cannot draw the tissue picture '" + path + "': " + why );
    }
    cairo_t* cr = cairo_create( surface );
    cairo_set_source_rgb( cr, 1, 1, 1 );
    cairo_paint( cr );
    cairo_select_font_face( cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL );

    // The legend's lines (a category, or -1 for the membrane) and the width they need.
    char text[160];
    const char* labels[4] = { "membrane-adhesive", "basal", "suprabasal", "other state" };
    std::vector<std::pair<int, std::string>> legend;
    for ( int c = 0; c < 4; ++c )
        if ( c < 3 || counts[c] > 0 )
        {
            std::snprintf( text, sizeof text, "%s (%zu)", labels[c], counts[c] );
            legend.emplace_back( c, text );
        }
    legend.emplace_back( -1, "basement membrane (z = 0)" );
    cairo_set_font_size( cr, 14 );
    double legend_text = 0;
    for ( const auto& line : legend )
    {
        cairo_text_extents_t extents;
        cairo_text_extents( cr, line.second.c_str(), &extents );
        legend_text = std::max( legend_text, extents.x_advance );
    }

    // The projection: fit the projected elements (with their radius) and the membrane into the drawing
    // area with one scale for both screen axes, so nothing is stretched.
    double u0 = 1e300, u1 = -1e300, v0 = 1e300, v1 = -1e300;
    auto extend = [&]( const Vec3& p, double r ) {
        const double u = dot( p, camera.right ), v = dot( p, camera.up );
        u0 = std::min( u0, u - r ), u1 = std::max( u1, u + r );
        v0 = std::min( v0, v - r ), v1 = std::max( v1, v + r );
    };
    for ( const auto& corner : membrane )
        extend( corner, 0 );
    for ( const std::size_t i : shown )
        extend( { frame.positions[3 * i], frame.positions[3 * i + 1], frame.positions[3 * i + 2] }, radius );
    const double width = view.width, height = view.height;
    const double pad = 16, top = std::min( 80.0, height / 6 ), line_height = 24, arm = 36;
    // The legend (and the axes' directions) go in a column on the right or in a strip at the bottom,
    // whichever leaves the tissue the larger scale: the right for wide images, the bottom for tall ones.
    const double legend_width = std::min( legend_text + 24 + 2 * pad, width / 3 );
    const double legend_height = std::min( line_height * double( legend.size() ) + 2 * pad, height / 3 );
    auto fit = [&]( double w, double h ) {
        return std::min( w / std::max( u1 - u0, 1e-300 ), h / std::max( v1 - v0, 1e-300 ) );
    };
    const bool legend_right = fit( width - legend_width - 2 * pad, height - top - 2 * pad ) >=
                              fit( width - 2 * pad, height - top - legend_height - 2 * pad );
    const double area_w = width - 2 * pad - ( legend_right ? legend_width : 0 );
    const double area_h = height - top - 2 * pad - ( legend_right ? 0 : legend_height );
    const double scale = fit( area_w, area_h );
    const double ox = pad + 0.5 * ( area_w - scale * ( u1 - u0 ) );
    const double oy = top + pad + 0.5 * ( area_h - scale * ( v1 - v0 ) );
    auto sx = [&]( const Vec3& p ) { return ox + ( dot( p, camera.right ) - u0 ) * scale; };
    auto sy = [&]( const Vec3& p ) { return oy + ( v1 - dot( p, camera.up ) ) * scale; };
    const double disc = std::max( 0.75, radius * scale );

    // Painter's order: farthest first. Elements wholly below the membrane go under it; the camera looks
    // from above, so the membrane hides none of the others.
    std::vector<double> depth( n, 0 );
    for ( const std::size_t i : shown )
        depth[i] = dot( { frame.positions[3 * i], frame.positions[3 * i + 1], frame.positions[3 * i + 2] },
                        camera.towards );
    std::stable_sort( shown.begin(), shown.end(),
                      [&]( std::size_t a, std::size_t b ) { return depth[a] < depth[b]; } );

    const Rgb colours[4] = { adhesive, basal, suprabasal, other };
    auto draw_elements = [&]( bool below ) {
        for ( const std::size_t i : shown )
        {
            const Vec3 p = { frame.positions[3 * i], frame.positions[3 * i + 1], frame.positions[3 * i + 2] };
            if ( ( p[2] < -radius ) == below )
                shaded_disc( cr, sx( p ), sy( p ), disc, colours[category( i )] );
        }
    };
    draw_elements( true );
    cairo_new_path( cr );
    cairo_move_to( cr, sx( membrane[0] ), sy( membrane[0] ) );
    for ( int c = 1; c < 4; ++c )
        cairo_line_to( cr, sx( membrane[c] ), sy( membrane[c] ) );
    cairo_close_path( cr );
    cairo_set_source_rgba( cr, membrane_fill[0], membrane_fill[1], membrane_fill[2], membrane_fill[3] );
    cairo_fill_preserve( cr );
    cairo_set_source_rgba( cr, membrane_edge[0], membrane_edge[1], membrane_edge[2], membrane_edge[3] );
    cairo_set_line_width( cr, 1.5 );
    cairo_stroke( cr );
    draw_elements( false );

    // Title, what is shown, a legend and the axes' directions.
    cairo_set_source_rgb( cr, 0, 0, 0 );
    cairo_set_font_size( cr, 20 );
    std::snprintf( text, sizeof text, "step %lld, t = %g", frame.step, frame.time );
    cairo_move_to( cr, pad, 32 );
    cairo_show_text( cr, view.title.empty() ? text : view.title.c_str() );
    cairo_set_font_size( cr, 14 );
    cairo_set_source_rgb( cr, 0.25, 0.25, 0.25 );
    const std::string subtitle = view.title.empty() ? std::string() : std::string( text ) + ", ";
    std::snprintf( text, sizeof text, "%s%zu cells, %zu elements", subtitle.c_str(), frame.cells(), n );
    cairo_move_to( cr, pad, 56 );
    cairo_show_text( cr, text );

    const double lx = legend_right ? width - legend_width + pad : pad;
    double ly = legend_right ? top + pad + 10 : height - legend_height + pad + 10;
    cairo_set_font_size( cr, 14 );
    for ( const auto& [c, line] : legend )
    {
        if ( c >= 0 )
            shaded_disc( cr, lx + 9, ly - 5, 8, colours[c] );
        else
        {
            cairo_rectangle( cr, lx + 1, ly - 12, 16, 10 );
            cairo_set_source_rgba( cr, membrane_fill[0], membrane_fill[1], membrane_fill[2], membrane_fill[3] );
            cairo_fill_preserve( cr );
            cairo_set_source_rgba( cr, membrane_edge[0], membrane_edge[1], membrane_edge[2], membrane_edge[3] );
            cairo_set_line_width( cr, 1 );
            cairo_stroke( cr );
        }
        cairo_set_source_rgb( cr, 0, 0, 0 );
        cairo_move_to( cr, lx + 24, ly );
        cairo_show_text( cr, line.c_str() );
        ly += 24;
    }

    const double ax = legend_right ? lx + 40 : std::min( lx + legend_text + 24 + 2 * pad + 40, width - 2 * arm );
    const double ay = legend_right ? height - pad - 50 : height - legend_height + pad + 2 * arm;
    const char* axis_names[3] = { "x", "y", "z" };
    cairo_set_line_width( cr, 1.5 );
    for ( int d = 0; d < 3; ++d )
    {
        const Vec3 e = { d == 0 ? 1.0 : 0.0, d == 1 ? 1.0 : 0.0, d == 2 ? 1.0 : 0.0 };
        const double ex = ax + arm * dot( e, camera.right ), ey = ay - arm * dot( e, camera.up );
        cairo_set_source_rgb( cr, 0.2, 0.2, 0.2 );
        cairo_move_to( cr, ax, ay );
        cairo_line_to( cr, ex, ey );
        cairo_stroke( cr );
        cairo_move_to( cr, ax + 1.35 * ( ex - ax ) - 4, ay + 1.35 * ( ey - ay ) + 5 );
        cairo_show_text( cr, axis_names[d] );
    }

    cairo_destroy( cr );
    const cairo_status_t status = cairo_surface_write_to_png( surface, path.c_str() );
    cairo_surface_destroy( surface );
    if ( status != CAIRO_STATUS_SUCCESS )
        throw core::IoError( "cannot write the tissue picture '" + path + "': " +
                                cairo_status_to_string( status ) );
    return true;
}
#else
bool write_tissue_picture( const std::string& path, const io::TissueFrame& frame, const TissueView& view )
{
    frame.validate( "tissue picture '" + path + "'" );
    check_view( path, view );
    return false;
}
#endif

} // namespace morula::app
