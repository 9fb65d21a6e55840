#include "Progress.hpp"

#include <algorithm>
#include <cstdio>

#include <unistd.h>

namespace morula::app
{

Progress::Progress( long total, bool on )
    : m_total( total )
    , m_on( on && total > 0 )
    , m_terminal( isatty( 2 ) != 0 )
    , m_start( std::chrono::steady_clock::now() )
{
}

bool Progress::due( long done ) const
{
    if ( !m_on )
        return false;
    const int percent = int( 100 * done / m_total );
    if ( percent == m_last )
        return false;
    // Not a terminal: the first line, then one per 10% and the last.
    return m_terminal || m_last < 0 || percent / 10 != m_last / 10 || done == m_total;
}

void Progress::draw( long done, const std::string& text )
{
    const int percent = int( 100 * done / m_total );
    m_last = percent;
    const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - m_start ).count();
    char head[96];
    const std::string bar( std::size_t( percent / 5 ), '#' );
    std::snprintf( head, sizeof head, "[%-20s] %3d%%  step %ld/%ld", bar.c_str(), percent, done, m_total );
    char tail[32];
    std::snprintf( tail, sizeof tail, "  %.1f s", seconds );
    std::string line = head + ( text.empty() ? "" : "  " + text ) + tail;
    if ( !m_terminal )
    {
        std::fprintf( stderr, "%s\n", line.c_str() );
        std::fflush( stderr );
        return;
    }
    // Redrawn from the start of the line: blanks cover what a longer line before left.
    const std::size_t width = line.size();
    line.resize( std::max( width, m_width ), ' ' );
    m_width = width;
    std::fprintf( stderr, "\r%s%s", line.c_str(), done == m_total ? "\n" : "" );
    std::fflush( stderr );
}

} // namespace morula::app
