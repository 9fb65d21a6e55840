#include "AngioPicture.hpp"

#include <morula/core/Error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#if MORULA_APP_HAVE_CAIRO
#include <cairo.h>
#endif

namespace morula::app
{

namespace
{
// The picture's frame, in pixels: a header with the title, a caption line over the two panels and a
// legend strip of two rows at the bottom.
constexpr double pad = 16, header = 64, caption = 24, legend_row = 24, legend_height = 2 * legend_row + 16;
constexpr double inset = 6; // between a panel's edge and the domain box, so the box outline shows

void check_view( const std::string& path, const AngioView& view )
{
    // Below 800 x 400 the legend and the scale bar do not fit beside each other and the panels get too
    // small to read; cairo's image surfaces stop at 32767, and 16384 keeps a PNG within reason.
    if ( view.width < 800 || view.height < 400 || view.width > 16384 || view.height > 16384 )
        throw core::InputError( core::detail::concat( "angio picture '", path, "': size ", view.width, " x ",
                                                      view.height, " pixels is outside 800 x 400 to 16384 x 16384" ) );
    const char* axes[3] = { "x", "y", "z" };
    for ( int d = 0; d < 3; ++d )
        if ( !std::isfinite( view.lo[d] ) || !std::isfinite( view.hi[d] ) || !( view.lo[d] < view.hi[d] ) )
            throw core::InputError( core::detail::concat( "angio picture '", path, "': domain box ", axes[d],
                                                          " range [", view.lo[d], ", ", view.hi[d],
                                                          "] must be finite with lo < hi" ) );
}

} // namespace

AngioPictureLayout angio_picture_layout( const std::string& path, const AngioView& view )
{
    check_view( path, view );
    AngioPictureLayout layout;
    for ( int d = 0; d < 3; ++d )
        layout.lo[d] = view.lo[d], layout.hi[d] = view.hi[d];
    const double lx = view.hi[0] - view.lo[0], ly = view.hi[1] - view.lo[1], lz = view.hi[2] - view.lo[2];
    layout.panel_width = 0.5 * ( view.width - 3 * pad );
    layout.panel_height = view.height - header - caption - legend_height;
    layout.top_panel_x = pad;
    layout.side_panel_x = 2 * pad + layout.panel_width;
    layout.panel_y = header + caption;
    // One scale for both panels and both screen axes: nothing is stretched and the scale bar holds for both.
    const double w = layout.panel_width - 2 * inset, h = layout.panel_height - 2 * inset;
    layout.scale = std::min( { w / lx, h / ly, h / lz } );
    layout.top_x = layout.top_panel_x + 0.5 * ( layout.panel_width - lx * layout.scale );
    layout.side_x = layout.side_panel_x + 0.5 * ( layout.panel_width - lx * layout.scale );
    layout.top_y = layout.panel_y + 0.5 * ( layout.panel_height - ly * layout.scale );
    layout.side_y = layout.panel_y + 0.5 * ( layout.panel_height - lz * layout.scale );
    return layout;
}

#if MORULA_APP_HAVE_CAIRO
namespace
{
bool finite3( const double* p ) { return std::isfinite( p[0] ) && std::isfinite( p[1] ) && std::isfinite( p[2] ); }

const double pi = std::acos( -1.0 );

struct Rgb
{
    double r, g, b;
};
// By cell state: new, mature, hypoxic, dead.
const Rgb state_colours[4] = { { 0.55, 0.90, 0.45 }, { 0.10, 0.62, 0.58 }, { 0.96, 0.55, 0.10 }, { 0.30, 0.30, 0.30 } };
const char* state_names[4] = { "new", "mature", "hypoxic", "dead" };
const Rgb vessel{ 0.82, 0.06, 0.06 }, tip{ 1.0, 0.85, 0.10 }, tip_edge{ 0.35, 0.10, 0.0 };
const Rgb box_fill{ 0.97, 0.97, 0.98 }, box_edge{ 0.35, 0.35, 0.35 };
constexpr double cell_alpha = 0.7;

void cell_disc( cairo_t* cr, double x, double y, double radius, const Rgb& c )
{
    cairo_new_path( cr );
    cairo_arc( cr, x, y, radius, 0, 2 * pi );
    cairo_set_source_rgba( cr, c.r, c.g, c.b, cell_alpha );
    if ( radius < 2.5 ) // too small for an outline to show
    {
        cairo_fill( cr );
        return;
    }
    cairo_fill_preserve( cr );
    cairo_set_source_rgba( cr, 0.5 * c.r, 0.5 * c.g, 0.5 * c.b, 0.8 );
    cairo_set_line_width( cr, std::min( 1.0, 0.1 * radius ) );
    cairo_stroke( cr );
}

void tip_dot( cairo_t* cr, double x, double y, double radius )
{
    cairo_new_path( cr );
    cairo_arc( cr, x, y, radius, 0, 2 * pi );
    cairo_set_source_rgb( cr, tip.r, tip.g, tip.b );
    cairo_fill_preserve( cr );
    cairo_set_source_rgb( cr, tip_edge.r, tip_edge.g, tip_edge.b );
    cairo_set_line_width( cr, 1 );
    cairo_stroke( cr );
}

// The largest 1, 2 or 5 times a power of ten not above `most` (> 0).
double nice_length( double most )
{
    const double power = std::pow( 10.0, std::floor( std::log10( most ) ) );
    for ( const double m : { 5.0, 2.0, 1.0 } )
        if ( m * power <= most )
            return m * power;
    return power;
}
} // namespace

bool write_angio_picture( const std::string& path, const io::AngioFrame& frame, const AngioView& view )
{
    frame.validate( "angio picture '" + path + "'" );
    const AngioPictureLayout layout = angio_picture_layout( path, view );
    const std::size_t n = frame.cells(), m = frame.tubes();
    const double scale = layout.scale;

    // Cells with a finite position and radius, tubes with finite ends; counts for the legend.
    std::vector<std::size_t> shown_cells, shown_tubes;
    std::size_t state_counts[4] = { 0, 0, 0, 0 }, tips = 0;
    for ( std::size_t i = 0; i < n; ++i )
    {
        ++state_counts[frame.cell_state[i]];
        if ( finite3( &frame.cell_positions[3 * i] ) && std::isfinite( frame.cell_radius[i] ) )
            shown_cells.push_back( i );
    }
    for ( std::size_t t = 0; t < m; ++t )
    {
        if ( frame.tube_flags[t] & io::angio_tube_tip )
            ++tips;
        if ( finite3( &frame.tube_end_a[3 * t] ) && finite3( &frame.tube_end_b[3 * t] ) )
            shown_tubes.push_back( t );
    }

    cairo_surface_t* surface = cairo_image_surface_create( CAIRO_FORMAT_RGB24, view.width, view.height );
    if ( cairo_surface_status( surface ) != CAIRO_STATUS_SUCCESS )
    {
        const std::string why = cairo_status_to_string( cairo_surface_status( surface ) );
        cairo_surface_destroy( surface );
        throw core::InputError( "cannot draw the angio picture '" + path + "': " + why );
    }
    cairo_t* cr = cairo_create( surface );
    cairo_set_source_rgb( cr, 1, 1, 1 );
    cairo_paint( cr );
    cairo_select_font_face( cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL );

    // One panel: the domain box, the cells back to front, the tubes over them and the tips over those.
    // `depth` grows towards the viewer.
    auto draw_panel = [&]( bool top, double panel_x ) {
        auto project = [&]( const double* p ) { return top ? layout.top_view( p ) : layout.side_view( p ); };
        auto depth = [&]( std::size_t i ) {
            return top ? frame.cell_positions[3 * i + 2] : -frame.cell_positions[3 * i + 1];
        };
        cairo_save( cr );
        cairo_rectangle( cr, panel_x, layout.panel_y, layout.panel_width, layout.panel_height );
        cairo_clip( cr );
        const double corner_x = top ? layout.top_x : layout.side_x, corner_y = top ? layout.top_y : layout.side_y;
        const double box_w = ( layout.hi[0] - layout.lo[0] ) * scale,
                     box_h = ( top ? layout.hi[1] - layout.lo[1] : layout.hi[2] - layout.lo[2] ) * scale;
        cairo_rectangle( cr, corner_x, corner_y, box_w, box_h );
        cairo_set_source_rgb( cr, box_fill.r, box_fill.g, box_fill.b );
        cairo_fill_preserve( cr );
        cairo_set_source_rgb( cr, box_edge.r, box_edge.g, box_edge.b );
        cairo_set_line_width( cr, 1.5 );
        cairo_stroke( cr );

        std::vector<std::size_t> order = shown_cells;
        std::stable_sort( order.begin(), order.end(),
                          [&]( std::size_t a, std::size_t b ) { return depth( a ) < depth( b ); } );
        for ( const std::size_t i : order )
        {
            const auto c = project( &frame.cell_positions[3 * i] );
            cell_disc( cr, c[0], c[1], std::max( 0.75, frame.cell_radius[i] * scale ),
                       state_colours[frame.cell_state[i]] );
        }

        cairo_set_line_cap( cr, CAIRO_LINE_CAP_ROUND );
        cairo_set_source_rgb( cr, vessel.r, vessel.g, vessel.b );
        for ( const std::size_t t : shown_tubes )
        {
            const auto a = project( &frame.tube_end_a[3 * t] ), b = project( &frame.tube_end_b[3 * t] );
            const double diameter = ( frame.tube_radius_a[t] + frame.tube_radius_b[t] ) * scale;
            cairo_set_line_width( cr, std::isfinite( diameter ) ? std::max( 1.0, diameter ) : 1.0 );
            cairo_move_to( cr, a[0], a[1] );
            cairo_line_to( cr, b[0], b[1] );
            cairo_stroke( cr );
        }
        for ( const std::size_t t : shown_tubes )
            if ( frame.tube_flags[t] & io::angio_tube_tip )
            {
                const auto b = project( &frame.tube_end_b[3 * t] );
                const double r = std::max( 0.0, frame.tube_radius_b[t] ) * scale;
                tip_dot( cr, b[0], b[1], std::isfinite( r ) ? std::min( std::max( 3.0, 0.8 * r ), 8.0 ) : 3.0 );
            }
        cairo_restore( cr );
    };
    draw_panel( true, layout.top_panel_x );
    draw_panel( false, layout.side_panel_x );

    // Title, what is shown and the panels' captions.
    char text[200];
    cairo_set_source_rgb( cr, 0, 0, 0 );
    cairo_set_font_size( cr, 20 );
    std::snprintf( text, sizeof text, "step %lld, t = %g", frame.step, frame.time );
    cairo_move_to( cr, pad, 30 );
    cairo_show_text( cr, view.title.empty() ? text : view.title.c_str() );
    const std::string subtitle = view.title.empty() ? std::string() : std::string( text ) + ", ";
    std::snprintf( text, sizeof text, "%s%zu cells, %zu vessel tubes; domain %g x %g x %g \xce\xbcm",
                   subtitle.c_str(), n, m, layout.hi[0] - layout.lo[0], layout.hi[1] - layout.lo[1],
                   layout.hi[2] - layout.lo[2] );
    cairo_set_font_size( cr, 14 );
    cairo_set_source_rgb( cr, 0.25, 0.25, 0.25 );
    cairo_move_to( cr, pad, 54 );
    cairo_show_text( cr, text );
    cairo_set_source_rgb( cr, 0, 0, 0 );
    cairo_move_to( cr, layout.top_panel_x, header + 16 );
    cairo_show_text( cr, "top view (x-y, seen from +z)" );
    cairo_move_to( cr, layout.side_panel_x, header + 16 );
    cairo_show_text( cr, "side view (x-z, seen from -y)" );

    // The legend: the states on the first row, the vessels on the second; the scale bar on the right.
    // The font shrinks when the counts make a row wider than the room left by the scale bar.
    const double bar = nice_length( 0.25 * layout.panel_width / scale ), bar_px = bar * scale;
    const double legend_room = view.width - 2 * pad - std::max( bar_px, 90.0 ) - 3 * pad;
    std::vector<std::string> rows[2];
    for ( int s = 0; s < 4; ++s )
    {
        std::snprintf( text, sizeof text, "%s (%zu)", state_names[s], state_counts[s] );
        rows[0].push_back( text );
    }
    std::snprintf( text, sizeof text, "vessel (%zu tubes)", m );
    rows[1].push_back( text );
    std::snprintf( text, sizeof text, "growing tip (%zu)", tips );
    rows[1].push_back( text );
    const double swatch = 26, gap = 22;
    double font = 14;
    cairo_set_font_size( cr, font );
    for ( const auto& row : rows )
    {
        double needed = 0;
        for ( const auto& item : row )
        {
            cairo_text_extents_t extents;
            cairo_text_extents( cr, item.c_str(), &extents );
            needed += swatch + extents.x_advance + gap;
        }
        font = std::min( font, 14 * legend_room / needed );
    }
    cairo_set_font_size( cr, std::max( font, 6.0 ) );
    const double legend_top = view.height - legend_height + 8;
    for ( int r = 0; r < 2; ++r )
    {
        double x = pad;
        const double y = legend_top + ( r + 0.5 ) * legend_row; // the row's middle
        for ( std::size_t k = 0; k < rows[r].size(); ++k )
        {
            if ( r == 0 )
                cell_disc( cr, x + 9, y, 8, state_colours[k] );
            else if ( k == 0 )
            {
                cairo_set_line_cap( cr, CAIRO_LINE_CAP_ROUND );
                cairo_set_source_rgb( cr, vessel.r, vessel.g, vessel.b );
                cairo_set_line_width( cr, 6 );
                cairo_move_to( cr, x + 2, y );
                cairo_line_to( cr, x + 18, y );
                cairo_stroke( cr );
            }
            else
            {
                cairo_set_line_cap( cr, CAIRO_LINE_CAP_ROUND );
                cairo_set_source_rgb( cr, vessel.r, vessel.g, vessel.b );
                cairo_set_line_width( cr, 6 );
                cairo_move_to( cr, x, y );
                cairo_line_to( cr, x + 12, y );
                cairo_stroke( cr );
                tip_dot( cr, x + 13, y, 4 );
            }
            cairo_text_extents_t extents;
            cairo_text_extents( cr, rows[r][k].c_str(), &extents );
            cairo_set_source_rgb( cr, 0, 0, 0 );
            cairo_move_to( cr, x + swatch, y - extents.y_bearing - 0.5 * extents.height );
            cairo_show_text( cr, rows[r][k].c_str() );
            x += swatch + extents.x_advance + gap;
        }
    }

    const double bar_right = view.width - pad, bar_y = legend_top + 0.5 * legend_row;
    cairo_set_source_rgb( cr, 0, 0, 0 );
    cairo_set_line_cap( cr, CAIRO_LINE_CAP_BUTT );
    cairo_set_line_width( cr, 3 );
    cairo_move_to( cr, bar_right - bar_px, bar_y );
    cairo_line_to( cr, bar_right, bar_y );
    cairo_stroke( cr );
    cairo_set_line_width( cr, 1.5 );
    for ( const double x : { bar_right - bar_px, bar_right } )
    {
        cairo_move_to( cr, x, bar_y - 6 );
        cairo_line_to( cr, x, bar_y + 6 );
    }
    cairo_stroke( cr );
    std::snprintf( text, sizeof text, "%g \xce\xbcm", bar );
    cairo_set_font_size( cr, 14 );
    cairo_text_extents_t extents;
    cairo_text_extents( cr, text, &extents );
    cairo_move_to( cr, bar_right - 0.5 * bar_px - 0.5 * extents.x_advance, bar_y + legend_row );
    cairo_show_text( cr, text );

    cairo_destroy( cr );
    const cairo_status_t status = cairo_surface_write_to_png( surface, path.c_str() );
    cairo_surface_destroy( surface );
    if ( status != CAIRO_STATUS_SUCCESS )
        throw core::IoError( "cannot write the angio picture '" + path + "': " + cairo_status_to_string( status ) );
    return true;
}
#else
bool write_angio_picture( const std::string& path, const io::AngioFrame& frame, const AngioView& view )
{
    frame.validate( "angio picture '" + path + "'" );
    check_view( path, view );
    return false;
}
#endif

} // namespace morula::app
