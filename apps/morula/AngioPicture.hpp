// PNG pictures of a vascular tumour drawn with cairo: a top view (x-y) and a side view (x-z) of the
// tumour cells and the vessel tubes in the domain box, side by side at one scale.
#ifndef MORULA_APPS_ANGIOPICTURE_HPP
#define MORULA_APPS_ANGIOPICTURE_HPP

#include <morula/io/AngioSnapshots.hpp>

#include <array>
#include <string>

namespace morula::app
{

//! How an angiogenesis picture is framed.
struct AngioView
{
    double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 }; //!< domain box in μm, drawn and fitted into the panels
    std::string title;                                //!< empty: "step S, t = T"
    int width = 1600, height = 800;
};

//! Where the domain lands in an angiogenesis picture: one scale for both panels, so lengths compare.
struct AngioPictureLayout
{
    double lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 };
    double scale = 1;              //!< pixels per μm
    double top_x = 0, top_y = 0;   //!< pixel of the box corner (lo[0], hi[1]) in the top view
    double side_x = 0, side_y = 0; //!< pixel of the box corner (lo[0], hi[2]) in the side view
    double panel_width = 0, panel_height = 0; //!< each panel's drawing area; drawing is clipped to it
    double top_panel_x = 0, side_panel_x = 0, panel_y = 0; //!< the drawing areas' top left corners

    //! Pixel (x to the right, y down) of point p in the top view: x to the right, y up, seen from +z.
    std::array<double, 2> top_view( const double* p ) const
    {
        return { top_x + ( p[0] - lo[0] ) * scale, top_y + ( hi[1] - p[1] ) * scale };
    }
    //! Pixel of point p in the side view: x to the right, z up, seen from -y.
    std::array<double, 2> side_view( const double* p ) const
    {
        return { side_x + ( p[0] - lo[0] ) * scale, side_y + ( hi[2] - p[2] ) * scale };
    }
};

//! The layout write_angio_picture uses for `view` (it depends on the view only, not on the frame).
//! \throws core::InputError if the view is invalid (naming `path`)
AngioPictureLayout angio_picture_layout( const std::string& path, const AngioView& view );

//! PNG picture of a tumour and its vessels in two panels side by side, each fitted to the domain box (drawn
//! as a grey rectangle) at one scale: left a top view (x-y projection, seen from +z), right a side view
//! (x-z, seen from -y). Cells are translucent discs of their true radius in painter's order (nearest to
//! the viewer last: by z ascending in the top view, by y descending in the side view), coloured by
//! state: new light green, mature green-blue, hypoxic orange, dead dark grey. Vessel tubes are red lines
//! as wide as their mean diameter (at least one pixel) drawn over the cells, and each growing tip's far
//! end (end_b) a yellow dot. Title, a legend with counts and a scale bar in μm.
//! Returns false (and writes nothing) when built without cairo.
//! \throws core::InputError if the frame is inconsistent, the view invalid or the file cannot be written
bool write_angio_picture( const std::string& path, const io::AngioFrame& frame, const AngioView& view );

} // namespace morula::app

#endif
