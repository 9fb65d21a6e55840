/*!
  \file TissueSnapshots.hpp
  \brief HDF5 snapshots of a tissue of subcellular elements (one group per output step) with an XDMF
  index for ParaView.
*/
#ifndef MORULA_IO_TISSUESNAPSHOTS_HPP
#define MORULA_IO_TISSUESNAPSHOTS_HPP

#include <morula/io/SnapshotSeries.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::io
{

/*!
  \brief One output step of a tissue of subcellular elements, on the host: every cell is a cluster of
  point elements. Element arrays have one entry (three for positions) per element, cell arrays one
  (three for centres, species_count for species) per cell.
*/
struct TissueFrame
{
    long long step = 0;
    double time = 0;
    std::vector<double> positions;           //!< 3 per element: x0, y0, z0, x1, ...
    std::vector<std::int32_t> cell;          //!< owning cell of each element, in [0, cells())
    std::vector<std::int32_t> type;          //!< element type (1 = adheres to the basement membrane, 0 otherwise)
    std::vector<std::int32_t> state;         //!< per element: state of its cell (0 = basal, 1 = suprabasal)
    std::vector<double> cell_centres;        //!< 3 per cell
    std::vector<std::int32_t> cell_elements; //!< element count per cell
    std::vector<std::int32_t> cell_state;    //!< per cell: 0 basal, 1 suprabasal
    std::vector<double> species;             //!< species_count values per cell, cell-major (may be empty)
    int species_count = 0;
    std::vector<std::string> species_names; //!< species_count names (may be empty when species is empty)

    //! Number of elements: positions.size() / 3.
    std::size_t elements() const { return positions.size() / 3; }
    //! Number of cells: cell_elements.size().
    std::size_t cells() const { return cell_elements.size(); }

    /*!
      \brief Checks that the arrays agree in size (and that every element's cell is one of the cells).
      \throws core::InputError naming `where`, the field and the sizes found and expected
    */
    void validate( const std::string& where ) const;
};

//! Whether tissue snapshots can be written (this Morula was built with HDF5).
bool tissue_snapshots_available();

/*!
  \brief Writes each tissue frame into its own HDF5 file, `<prefix>_<step, 6 digits>.h5`, and keeps
  `<prefix>.xmf`, an XDMF temporal collection that ParaView opens as a point cloud per step with cell, type and state as point
  data.

  Every write makes the frame's file, whose root has attributes step (int64) and time (double) and
  datasets positions (n x 3 double), cell, type, state (int32, n), cell_centres (m x 3 double),
  cell_elements, cell_state (int32, m), element_index (int32, n: 0, 1, ..., n - 1, the Polyvertex
  connectivity that ParaView's Xdmf3 readers need) and, when species_count > 0, species
  (m x species_count double, with the attribute names, a list of variable-length UTF-8 strings, when
  species_names is given). A frame's file is written under `.tmp` and renamed when complete, then the
  XDMF index is rewritten and renamed, so a run killed at any moment leaves an index of complete frames.
  A new series removes the frame files of an earlier one with the same prefix. A step without elements
  is stored with zero-size datasets and listed in the index: ParaView's Xdmf3 readers show it empty, its
  older XDMF Reader logs an error for that step (XDMF 2 cannot read zero-size data) and shows it empty
  too.
  \throws core::InputError if HDF5 is not available, a frame is inconsistent or its step was written
  before; core::IoError if a file cannot be created or written (the message names the file or the field)
*/
class TissueSnapshotWriter
{
  public:
    //! Creates (truncates) `<prefix>.xmf` and removes any `<prefix>_<step>.h5` of an earlier series.
    //! `resume_after` >= 0: a restarted run's series, which keeps the frames up to that step (the
    //! checkpoint's), drops later ones and appends after them; -1: a new series.
    explicit TissueSnapshotWriter( std::string prefix, long long resume_after = -1 );

    //! Adds one output step.
    void write( const TissueFrame& frame );

    //! The file of frame `step`: `<prefix>_<step, 6 digits>.h5`.
    std::string hdf5_file( long long step ) const { return m_series.file_of( step ); }
    const std::string& xdmf_path() const { return m_series.xdmf_path(); }

  private:
    SnapshotSeries m_series;
};

} // namespace morula::io

#endif
