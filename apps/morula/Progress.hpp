// The progress bar of every `morula` command that runs steps, on stderr:
//   [#########           ]  45%  step 450/1000  812 cells  3.2 s
#ifndef MORULA_APPS_PROGRESS_HPP
#define MORULA_APPS_PROGRESS_HPP

#include <chrono>
#include <string>

namespace morula::app
{

/*!
  \brief Redrawn in place on a terminal; a line per 10% otherwise, so that a log gets a few lines
  rather than every redraw. Off (--no-progress, "progress": false, or a rank other than 0) it draws
  nothing. It reads the clock and writes stderr, nothing else: the display never changes a result.
*/
class Progress
{
  public:
    Progress( long total, bool on );

    //! Shows `done` of the steps; `text()` (what the run has reached: "812 cells") is called only
    //! when the bar is redrawn, so it may cost a copy from the device.
    template <class Text>
    void update( long done, const Text& text )
    {
        if ( due( done ) )
            draw( done, text() );
    }
    void update( long done )
    {
        if ( due( done ) )
            draw( done, {} );
    }

  private:
    bool due( long done ) const;
    void draw( long done, const std::string& text );

    long m_total;
    bool m_on;
    bool m_terminal;
    int m_last = -1;          // percent last drawn
    std::size_t m_width = 0; // characters last drawn on a terminal
    std::chrono::steady_clock::time_point m_start;
};

} // namespace morula::app

#endif
