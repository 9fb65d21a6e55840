/*!
  \file AngioSnapshots.hpp
  \brief HDF5 snapshots of a vascular tumour model (spherical tumour cells and vessel tubes, one group
  per output step) with an XDMF index for ParaView.
*/
#ifndef MORULA_IO_ANGIOSNAPSHOTS_HPP
#define MORULA_IO_ANGIOSNAPSHOTS_HPP

#include <morula/io/SnapshotSeries.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::io
{

/*!
  \brief One output step of a tumour and its vessels, on the host. Cell arrays have one entry (three
  for positions) per cell, tube arrays one (three for each end) per tube; a tube is a straight vessel
  segment from end_a to end_b whose radius varies linearly from radius_a to radius_b. Lengths are in
  μm.
*/
struct AngioFrame
{
    long long step = 0;
    double time = 0;

    std::vector<double> cell_positions; //!< 3 per cell: x0, y0, z0, x1, ...
    std::vector<double> cell_radius;
    std::vector<double> cell_age;
    std::vector<double> cell_oxygen;
    std::vector<double> cell_taf; //!< tumour angiogenic factor at the cell
    std::vector<double> cell_pressure;
    std::vector<std::int32_t> cell_state; //!< 0 new, 1 mature, 2 hypoxic, 3 dead
    std::vector<std::int64_t> cell_id;

    std::vector<double> tube_end_a; //!< 3 per tube: the end at the parent tube (or the vessel's inlet)
    std::vector<double> tube_end_b; //!< 3 per tube: the far end (a growing tip's tip)
    std::vector<double> tube_radius_a;
    std::vector<double> tube_radius_b;
    std::vector<double> tube_flow;
    std::vector<double> tube_blood_oxygen;
    std::vector<double> tube_delivered; //!< oxygen delivered to the tissue
    std::vector<double> tube_taf;
    std::vector<std::int32_t> tube_parent; //!< -1 for a vessel's inlet tube, else the parent tube's index
    std::vector<std::int32_t> tube_flags;  //!< bit 0: growing tip, bit 1: grown by angiogenesis, bit 2: anastomosed
    std::vector<std::int64_t> tube_id;

    //! Number of cells: cell_positions.size() / 3.
    std::size_t cells() const { return cell_positions.size() / 3; }
    //! Number of tubes: tube_end_a.size() / 3.
    std::size_t tubes() const { return tube_end_a.size() / 3; }

    /*!
      \brief Checks that the arrays agree in size, that every state is 0 to 3 and every parent -1 or a
      tube index.
      \throws core::InputError naming `where`, the field and the sizes (or the value) found and expected
    */
    void validate( const std::string& where ) const;
};

//! Tube flag bits (AngioFrame::tube_flags).
enum AngioTubeFlag : std::int32_t
{
    angio_tube_tip = 1,           //!< growing tip: end_b is the tip of a sprout
    angio_tube_sprouted = 2,      //!< grown by angiogenesis (not one of the initial vessels)
    angio_tube_anastomosed = 4    //!< joined another vessel (a closed loop)
};

//! Whether angiogenesis snapshots can be written (this Morula was built with HDF5).
bool angio_snapshots_available();

/*!
  \brief Writes each tumour/vessel frame into its own HDF5 file, `<prefix>_<step, 6 digits>.h5`, and keeps
  `<prefix>.xmf`, an
  XDMF temporal collection whose every step is a spatial collection of two grids that ParaView opens
  side by side: "cells", a point cloud with the cell arrays as point data (render with a sphere glyph
  scaled by radius), and "tubes", two-point polylines with the per-end radius as point data and the
  tube arrays as cell data (render with Extract Surface, which the Tube filter needs on the readers'
  unstructured grids, then Tube with Vary Radius "By Absolute Scalar" on the point data "radius").

  Every write makes the frame's file, whose root has attributes step (int64) and time (double) and two
  groups:
  - `cells`: positions (n x 3 double), radius, age, oxygen, taf, pressure (double, n), state (int32, n),
    id (int64, n) and index (int32, n: 0, 1, ..., n - 1, the Polyvertex connectivity that ParaView's
    Xdmf3 readers need);
  - `tubes`: points (2m x 3 double: a0, b0, a1, b1, ...), radius (double, 2m: radius_a0, radius_b0,
    radius_a1, ...), radius_a, radius_b, flow, blood_oxygen, delivered, taf (double, m), parent, flags
    (int32, m), id (int64, m) and connectivity (int32, m x 2: 0, 1, 2, ..., 2m - 1).

  A frame's file is written under `.tmp` and renamed when complete, then the XDMF index is rewritten
  and renamed, so a run killed at any moment leaves an index of complete frames. A new series removes
  the frame files of an earlier one with the same prefix. A step without cells or without tubes is stored with zero-size datasets and
  listed in the index: ParaView's Xdmf3 readers show that grid empty, its older XDMF Reader logs an
  error for it (XDMF 2 cannot read zero-size data) and leaves it out.
  \throws core::InputError if HDF5 is not available, a frame is inconsistent or its step was written
  before; core::IoError if a file cannot be created or written (the message names the file or the field)
*/
class AngioSnapshotWriter
{
  public:
    //! Creates (truncates) `<prefix>.xmf` and removes any `<prefix>_<step>.h5` of an earlier series.
    //! `resume_after` >= 0: a restarted run's series, which keeps the frames up to that step (the
    //! checkpoint's), drops later ones and appends after them; -1: a new series.
    explicit AngioSnapshotWriter( std::string prefix, long long resume_after = -1 );

    //! Adds one output step.
    void write( const AngioFrame& frame );

    //! The file of frame `step`: `<prefix>_<step, 6 digits>.h5`.
    std::string hdf5_file( long long step ) const { return m_series.file_of( step ); }
    const std::string& xdmf_path() const { return m_series.xdmf_path(); }

  private:
    SnapshotSeries m_series;
};

} // namespace morula::io

#endif
