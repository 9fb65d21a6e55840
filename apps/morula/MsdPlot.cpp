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
bool write_msd_plot( const std::string& path, const std::string& title, const std::vector<PlotSeries>& series )
{
    const int width = 900, height = 600;
    const double left = 90, right = 200, top = 50, bottom = 70;
    double tmin = 1e300, tmax = -1e300, dmax = 0;
    for ( const auto& s : series )
    {
        for ( const auto& [t, d] : s.points )
            if ( t > 0 && std::isfinite( d ) )
            {
                tmin = std::min( tmin, t );
                tmax = std::max( tmax, t );
                dmax = std::max( dmax, d );
            }
        dmax = std::max( dmax, s.reference );
    }
    if ( !( tmax > 0 ) )
        tmin = 1e-9, tmax = 1e-6;
    if ( tmax <= tmin )
        tmax = tmin * 10;
    dmax = dmax > 0 ? dmax * 1.1 : 1;
    const double lx0 = std::floor( std::log10( tmin ) ), lx1 = std::ceil( std::log10( tmax ) );
    auto px = [&]( double t ) { return left + ( std::log10( t ) - lx0 ) / ( lx1 - lx0 ) * ( width - left - right ); };
    auto py = [&]( double d ) { return height - bottom - d / dmax * ( height - top - bottom ); };

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
    for ( double e = lx0; e <= lx1 + 0.5; e += 1 ) // decades
    {
        const double x = px( std::pow( 10.0, e ) );
        cairo_move_to( cr, x, height - bottom );
        cairo_line_to( cr, x, height - bottom + 6 );
        cairo_stroke( cr );
        std::snprintf( label, sizeof label, "1e%d", int( e ) );
        cairo_move_to( cr, x - 14, height - bottom + 22 );
        cairo_show_text( cr, label );
    }
    const double tick = std::pow( 10.0, std::floor( std::log10( dmax / 2 ) ) );
    for ( double d = 0; d <= dmax; d += tick * ( dmax / tick > 8 ? 2 : 1 ) )
    {
        const double y = py( d );
        cairo_move_to( cr, left - 6, y );
        cairo_line_to( cr, left, y );
        cairo_stroke( cr );
        std::snprintf( label, sizeof label, "%g", d );
        cairo_move_to( cr, left - 12 - 8.0 * double( std::string( label ).size() ), y + 5 );
        cairo_show_text( cr, label );
    }
    cairo_move_to( cr, left + 150, height - 20 );
    cairo_show_text( cr, "time t (s)" );
    cairo_save( cr );
    cairo_move_to( cr, 24, height / 2.0 + 90 );
    cairo_rotate( cr, -M_PI / 2 );
    cairo_show_text( cr, "MSD / 6t (nm^2/us)" );
    cairo_restore( cr );
    cairo_set_font_size( cr, 16 );
    cairo_move_to( cr, left, 30 );
    cairo_show_text( cr, title.c_str() );
    cairo_set_font_size( cr, 13 );

    const double colours[][3] = { { 0.12, 0.47, 0.71 }, { 0.84, 0.15, 0.16 }, { 0.17, 0.63, 0.17 },
                                  { 1.0, 0.5, 0.05 },   { 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 } };
    for ( std::size_t i = 0; i < series.size(); ++i )
    {
        const auto* c = colours[i % 6];
        cairo_set_source_rgb( cr, c[0], c[1], c[2] );
        cairo_set_line_width( cr, 2 );
        bool first = true;
        for ( const auto& [t, d] : series[i].points )
        {
            if ( !( t > 0 ) || !std::isfinite( d ) )
                continue;
            if ( first )
                cairo_move_to( cr, px( t ), py( d ) );
            else
                cairo_line_to( cr, px( t ), py( d ) );
            first = false;
        }
        cairo_stroke( cr );
        if ( series[i].reference > 0 )
        {
            const double dash[] = { 6, 4 };
            cairo_set_dash( cr, dash, 2, 0 );
            cairo_set_line_width( cr, 1 );
            cairo_move_to( cr, left, py( series[i].reference ) );
            cairo_line_to( cr, width - right, py( series[i].reference ) );
            cairo_stroke( cr );
            cairo_set_dash( cr, nullptr, 0, 0 );
        }
        const double ly = top + 20 + 22.0 * double( i );
        cairo_set_line_width( cr, 2 );
        cairo_move_to( cr, width - right + 12, ly - 4 );
        cairo_line_to( cr, width - right + 36, ly - 4 );
        cairo_stroke( cr );
        cairo_move_to( cr, width - right + 42, ly );
        cairo_set_source_rgb( cr, 0, 0, 0 );
        cairo_show_text( cr, series[i].name.c_str() );
    }
    cairo_set_source_rgb( cr, 0.3, 0.3, 0.3 );
    cairo_move_to( cr, width - right + 12, top + 30 + 22.0 * double( series.size() ) );
    cairo_show_text( cr, "dashed: D0" );
    cairo_destroy( cr );
    const cairo_status_t status = cairo_surface_write_to_png( surface, path.c_str() );
    cairo_surface_destroy( surface );
    if ( status != CAIRO_STATUS_SUCCESS )
        throw core::InputError( "cannot write the plot '" + path + "': " + cairo_status_to_string( status ) );
    return true;
}
#else
bool write_msd_plot( const std::string&, const std::string&, const std::vector<PlotSeries>& ) { return false; }
#endif

} // namespace morula::app
