// PNG line plots drawn with cairo: D(t) = MSD / 6t against t (log axis) for `morula lattice`, and
// trajectories against time (linear axes) for `morula ode`.
#ifndef MORULA_APPS_MSDPLOT_HPP
#define MORULA_APPS_MSDPLOT_HPP

#include <string>
#include <utility>
#include <vector>

namespace morula::app
{

struct PlotSeries
{
    std::string name;
    std::vector<std::pair<double, double>> points; // (x, y), e.g. (time in s, MSD/6t in nm^2/us)
    double reference = 0;                           // a horizontal line drawn dashed (0: none)
};

//! What the axes show; the data range sets their limits.
struct PlotAxes
{
    std::string title;
    std::string x_label;
    std::string y_label;
    bool log_x = false;          //!< decades on x (points with x <= 0 are left out)
    std::string reference_label; //!< legend note for the dashed reference lines ("dashed: D0"); empty: none
};

//! Writes a line plot of `series` (at most 20 are named in the legend); returns false (and writes nothing)
//! when built without cairo.
//! \throws core::InputError if the file cannot be written
bool write_line_plot( const std::string& path, const PlotAxes& axes, const std::vector<PlotSeries>& series );

//! The `morula lattice` plot: MSD/6t in nm^2/us against time in s (log axis), D0 dashed.
bool write_msd_plot( const std::string& path, const std::string& title, const std::vector<PlotSeries>& series );

} // namespace morula::app

#endif
