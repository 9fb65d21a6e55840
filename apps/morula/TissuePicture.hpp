// PNG pictures of a tissue of subcellular elements drawn with cairo: an oblique 3D view of the
// elements over the basement membrane, coloured as in Christley et al. 2010 (Figs 3-4).
#ifndef MORULA_APPS_TISSUEPICTURE_HPP
#define MORULA_APPS_TISSUEPICTURE_HPP

#include <morula/io/TissueSnapshots.hpp>

#include <string>

namespace morula::app
{

//! How a tissue picture is framed.
struct TissueView
{
    //! Membrane extent, drawn as the plane [0, box_x] x [0, box_y] at z = 0 (0: the data's x or y range).
    double box_x = 0, box_y = 0;
    std::string title; //!< empty: "step S, t = T"
    int width = 1200, height = 800;
    double element_radius = 0.15; //!< in the units of the positions
};

//! PNG picture of a tissue like Christley et al. 2010 Figs 3-4: an oblique orthographic 3D view fitted
//! to the elements and the membrane (true aspect ratio), elements drawn as shaded discs back to front
//! (painter's order), red for type 1 (membrane-adhesive), otherwise blue for basal (state 0) and yellow
//! for suprabasal (state 1); the basement membrane a greenish-yellow translucent parallelogram at z = 0.
//! Title and a small legend. Returns false (and writes nothing) when built without cairo.
//! \throws core::InputError if the frame is inconsistent, the view invalid or the file cannot be written
bool write_tissue_picture( const std::string& path, const io::TissueFrame& frame, const TissueView& view );

} // namespace morula::app

#endif
