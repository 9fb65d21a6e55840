#include "MsdPlot.hpp"

#include <morula/core/Error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#if MORULA_APP_HAVE_CAIRO
#include <cairo.h>
#endif

namespace morula::app
{

#if MORULA_APP_HAVE_CAIRO
namespace
{
// A 1, 2 or 5 times a power of ten giving about six ticks over `span`, so labels stay short.
double tick_step( double span )
{
    const double raw = span / 6;
    const double magnitude = std::pow( 10.0, std::floor( std::log10( raw ) ) );
    const double r = raw / magnitude;
    return ( r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10 ) * magnitude;
}
} // namespace

bool write_line_plot( const std::string& path, const PlotAxes& axes, const std::vector<PlotSeries>& series )
{
    const int width = 900, height = 600;
    const double left = 90, right = 200, top = 50, bottom = 70;
    const std::size_t max_legend = 20;
    double xmin = 1e300, xmax = -1e300, ymin = 0, ymax = 0;
    for ( const auto& s : series )
    {
        for ( const auto& [x, y] : s.points )
            if ( ( !axes.log_x || x > 0 ) && std::isfinite( x ) && std::isfinite( y ) )
            {
                xmin = std::min( xmin, x );
                xmax = std::max( xmax, x );
                ymin = std::min( ymin, y );
                ymax = std::max( ymax, y );
            }
        if ( s.reference != 0 )
        {
            ymin = std::min( ymin, s.reference );
            ymax = std::max( ymax, s.reference );
        }
    }
    if ( !( xmax >= xmin ) )
        xmin = axes.log_x ? 1e-9 : 0, xmax = axes.log_x ? 1e-6 : 1;
    if ( xmax <= xmin )
        xmax = axes.log_x ? xmin * 10 : xmin + 1;
    if ( ymax <= ymin )
        ymax = ymin + 1;
    else
    {
        // Headroom above the data, and below it when it goes negative, so no line runs along the frame.
        const double pad = 0.1 * ( ymax - ymin );
        ymax += pad;
        if ( ymin < 0 )
            ymin -= pad;
    }
    double x0 = xmin, x1 = xmax;
    if ( axes.log_x )
        x0 = std::floor( std::log10( xmin ) ), x1 = std::ceil( std::log10( xmax ) );
    auto px = [&]( double x ) {
        const double u = axes.log_x ? std::log10( x ) : x;
        return left + ( u - x0 ) / ( x1 - x0 ) * ( width - left - right );
    };
    auto py = [&]( double y ) { return height - bottom - ( y - ymin ) / ( ymax - ymin ) * ( height - top - bottom ); };

    cairo_surface_t* surface = cairo_image_surface_create( CAIRO_FORMAT_RGB24, width, height );
    cairo_t* cr = cairo_create( surface );
    cairo_set_source_rgb( cr, 1, 1, 1 );
    cairo_paint( cr );
    cairo_select_font_face( cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL );
    cairo_set_font_size( cr, 14 );
    cairo_set_source_rgb( cr, 0, 0, 0 );
    cairo_set_line_width( cr, 1 );
    cairo_rectangle( cr, left, top, width - left - right, height - top - bottom );
    cairo_stroke( cr );
    char label[64];
    auto x_tick = [&]( double x, const char* text ) {
        cairo_move_to( cr, px( x ), height - bottom );
        cairo_line_to( cr, px( x ), height - bottom + 6 );
        cairo_stroke( cr );
        cairo_move_to( cr, px( x ) - 3.5 * double( std::string( text ).size() ), height - bottom + 22 );
        cairo_show_text( cr, text );
    };
    if ( axes.log_x )
        for ( double e = x0; e <= x1 + 0.5; e += 1 ) // decades
        {
            std::snprintf( label, sizeof label, "1e%d", int( e ) );
            x_tick( std::pow( 10.0, e ), label );
        }
    else
    {
        const double step = tick_step( x1 - x0 );
        for ( double i = std::ceil( x0 / step ); i * step <= x1 * ( 1 + 1e-12 ); i += 1 )
        {
            std::snprintf( label, sizeof label, "%g", i * step );
            x_tick( i * step, label );
        }
    }
    const double ystep = tick_step( ymax - ymin );
    for ( double i = std::ceil( ymin / ystep ); i * ystep <= ymax; i += 1 )
    {
        const double y = py( i * ystep );
        cairo_move_to( cr, left - 6, y );
        cairo_line_to( cr, left, y );
        cairo_stroke( cr );
        std::snprintf( label, sizeof label, "%g", std::abs( i ) < 0.5 ? 0.0 : i * ystep );
        cairo_move_to( cr, left - 12 - 8.0 * double( std::string( label ).size() ), y + 5 );
        cairo_show_text( cr, label );
    }
    cairo_move_to( cr, left + 150, height - 20 );
    cairo_show_text( cr, axes.x_label.c_str() );
    cairo_save( cr );
    cairo_move_to( cr, 24, height / 2.0 + 90 );
    cairo_rotate( cr, -M_PI / 2 );
    cairo_show_text( cr, axes.y_label.c_str() );
    cairo_restore( cr );
    cairo_set_font_size( cr, 16 );
    cairo_move_to( cr, left, 30 );
    cairo_show_text( cr, axes.title.c_str() );
    cairo_set_font_size( cr, 13 );

    const double colours[][3] = { { 0.12, 0.47, 0.71 }, { 0.84, 0.15, 0.16 }, { 0.17, 0.63, 0.17 },
                                  { 1.0, 0.5, 0.05 },   { 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 } };
    for ( std::size_t i = 0; i < series.size(); ++i )
    {
        const auto* c = colours[i % 6];
        cairo_set_source_rgb( cr, c[0], c[1], c[2] );
        cairo_set_line_width( cr, 2 );
        bool first = true;
        for ( const auto& [x, y] : series[i].points )
        {
            // A gap (NaN: a sample not reached) ends the line rather than joining across it.
            if ( ( axes.log_x && !( x > 0 ) ) || !std::isfinite( x ) || !std::isfinite( y ) )
            {
                first = true;
                continue;
            }
            if ( first )
                cairo_move_to( cr, px( x ), py( y ) );
            else
                cairo_line_to( cr, px( x ), py( y ) );
            first = false;
        }
        cairo_stroke( cr );
        if ( series[i].reference != 0 )
        {
            const double dash[] = { 6, 4 };
            cairo_set_dash( cr, dash, 2, 0 );
            cairo_set_line_width( cr, 1 );
            cairo_move_to( cr, left, py( series[i].reference ) );
            cairo_line_to( cr, width - right, py( series[i].reference ) );
            cairo_stroke( cr );
            cairo_set_dash( cr, nullptr, 0, 0 );
        }
        if ( i >= max_legend )
            continue;
        const double ly = top + 20 + 22.0 * double( i );
        cairo_set_line_width( cr, 2 );
        cairo_move_to( cr, width - right + 12, ly - 4 );
        cairo_line_to( cr, width - right + 36, ly - 4 );
        cairo_stroke( cr );
        cairo_move_to( cr, width - right + 42, ly );
        cairo_set_source_rgb( cr, 0, 0, 0 );
        cairo_show_text( cr, series[i].name.c_str() );
    }
    const std::size_t named = std::min( series.size(), max_legend );
    double note_y = top + 30 + 22.0 * double( named );
    cairo_set_source_rgb( cr, 0.3, 0.3, 0.3 );
    if ( series.size() > max_legend )
    {
        std::snprintf( label, sizeof label, "and %zu more", series.size() - max_legend );
        cairo_move_to( cr, width - right + 12, note_y );
        cairo_show_text( cr, label );
        note_y += 22;
    }
    if ( !axes.reference_label.empty() )
    {
        cairo_move_to( cr, width - right + 12, note_y );
        cairo_show_text( cr, axes.reference_label.c_str() );
    }
    cairo_destroy( cr );
    const cairo_status_t status = cairo_surface_write_to_png( surface, path.c_str() );
    cairo_surface_destroy( surface );
    if ( status != CAIRO_STATUS_SUCCESS )
        throw core::IoError( "cannot write the plot '" + path + "': " + cairo_status_to_string( status ) );
    return true;
}
#else
bool write_line_plot( const std::string&, const PlotAxes&, const std::vector<PlotSeries>& ) { return false; }
#endif

bool write_msd_plot( const std::string& path, const std::string& title, const std::vector<PlotSeries>& series )
{
    PlotAxes axes;
    axes.title = title;
    axes.x_label = "time t (s)";
    axes.y_label = "MSD / 6t (nm^2/us)";
    axes.log_x = true;
    axes.reference_label = "dashed: D0";
    return write_line_plot( path, axes, series );
}

} // namespace morula::app
