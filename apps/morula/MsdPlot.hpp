// A PNG plot of D(t) = MSD / 6t against t (log axis) for `morula lattice`, drawn with cairo.
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
    std::vector<std::pair<double, double>> points; // (time in s, MSD/6t in nm^2/us)
    double reference = 0;                           // D0, drawn dashed (0: none)
};

//! Writes the plot; returns false (and writes nothing) when built without cairo.
//! \throws core::InputError if the file cannot be written
bool write_msd_plot( const std::string& path, const std::string& title, const std::vector<PlotSeries>& series );

} // namespace morula::app

#endif
