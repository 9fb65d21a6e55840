/*!
  \file SnapshotSeries.hpp
  \brief A series of snapshot frames in HDF5 with an XDMF index for ParaView: the file handling every
  model's snapshot writer shares.
*/
#ifndef MORULA_IO_SNAPSHOTSERIES_HPP
#define MORULA_IO_SNAPSHOTSERIES_HPP

#include <morula/io/SnapshotFrame.hpp>
#include <morula/io/detail/XdmfIndex.hpp>

#include <string>

namespace morula::io
{

//! Whether this Morula was built with HDF5 (snapshots need it).
bool hdf5_available();

/*!
  \brief Does nothing with HDF5; without it throws core::InputError: "<request> but this Morula was built
  without HDF5; rebuild with -DMorula_ENABLE_HDF5=ON or leave snapshots off".
  \param request what was asked for, e.g. "tissue snapshots were requested (prefix 'run')"
*/
void require_hdf5( const std::string& request );

//! Where a series puts its frames and how it names them.
struct SnapshotLayout
{
    //! The HDF5 file; with file_per_frame, the prefix of one file per frame, `<hdf5>_<step, 6 digits>.h5`.
    std::string hdf5;
    //! One file per frame, each frame at the file's root; otherwise one file with a frame per step,
    //! `<frames_group>/step_<step, 10 digits>`.
    bool file_per_frame = false;
    //! The group holding the frames of a single file ("" for the root), made with the file.
    std::string frames_group;
    //! The XDMF index, in the HDF5 file's folder, which it names relative to itself; "" for none.
    std::string xdmf;
    //! The name of the index's temporal collection.
    std::string collection = "snapshots";
    //! Whether the index starts with a DOCTYPE line (the agents' index has always been written without).
    bool doctype = true;
    //! How messages call the HDF5 file: "cannot create the <description> '<path>'".
    std::string description = "snapshot file";

    //! The HDF5 file that holds frame `step`: `<hdf5>_<step, 6 digits>.h5` with file_per_frame, else `hdf5`.
    std::string file_of( long long step ) const;
    //! Frame `step`'s object in its file: "/<frames_group>/step_0000000042", "" for a file's root.
    std::string frame_path( long long step ) const;
};

namespace detail
{
//! The step of a frame file's name `<before><digits><after>` ("agents_000042.h5"), -1 if it is not one.
long long frame_file_step( const std::string& name, const std::string& before, const std::string& after );
//! The folder part of a path ("" for none) and the name after it.
std::string folder_of( const std::string& path );
std::string name_of( const std::string& path );
} // namespace detail

//! Whether a series starts anew or continues one written before (a restarted run).
enum class SnapshotOpen
{
    create, //!< truncates the HDF5 file (one file) and the index
    append, //!< keeps the frames and the index already there
    resume  //!< keeps the frames up to a step and drops later ones (written after the checkpoint a
            //!< run restarts from); starts a new series if there is none
};

/*!
  \brief Owns a series of frames: the HDF5 file (created or reopened), the name of each frame, the
  writing of a frame's datasets and the XDMF index that lists the frames, rewritten after every frame
  so that an interrupted run leaves both readable. A model's writer says only how one frame becomes
  datasets (a SnapshotFrame) and how the index shows it (an XDMF grid).

  With one file per frame, each frame is written under a temporary name and renamed when complete, and
  the index is always rewritten whole and renamed into place: a run killed at any moment leaves an index
  that lists complete frames only, and no file written before is ever reopened. A new series removes the
  frame files of an earlier one with the same prefix. The single file is reopened and closed for every
  frame; HDF5 updates it in place, so a kill while a frame is added can damage frames written before
  (this was seen: docs/restart.md). Tissue, angiogenesis and agent series use one file per frame. HDF5's own error stack never reaches stderr: a
  failure throws core::IoError naming the file.
  \throws core::InputError if HDF5 is not available or the layout is unusable; core::IoError if a
  file cannot be created, reopened or written
*/
class SnapshotSeries
{
  public:
    /*!
      \param keep_through with SnapshotOpen::resume: the last step whose frame is kept (the checkpoint's)
    */
    explicit SnapshotSeries( SnapshotLayout layout, SnapshotOpen open = SnapshotOpen::create,
                             long long keep_through = -1 );

    //! SnapshotOpen::create for `resume_after` < 0, else SnapshotOpen::resume: what a writer's
    //! `resume_after` argument means.
    static SnapshotOpen open_mode( long long resume_after )
    {
        return resume_after < 0 ? SnapshotOpen::create : SnapshotOpen::resume;
    }

    //! The HDF5 file that holds frame `step`.
    std::string file_of( long long step ) const;

    //! Frame `step`'s object in its file: "/step_0000000042" (under the frames group), "" for a file's root.
    std::string frame_path( long long step ) const;

    //! The name of frame `step` in a file and in the index: "step_0000000042".
    static std::string step_name( long long step );

    //! Frame `step` as the index refers to it, its file relative to the index: "run.h5:/step_0000000042",
    //! "run_000042.h5:"; an object below it appends "/name".
    std::string xdmf_reference( long long step ) const;

    /*!
      \brief Writes frame `step` and, with an index, adds `xdmf_grid` (the frame's `<Grid>` element,
      indented as a child of the temporal collection) to it.
      \throws core::InputError if a single file holds step `step` already; core::IoError if a file
      cannot be written (the message names it and the object)
    */
    void append( long long step, const SnapshotFrame& frame, const std::string& xdmf_grid = {} );

    const SnapshotLayout& layout() const { return m_layout; }
    const std::string& xdmf_path() const { return m_layout.xdmf; }

  private:
    //! Removes the frames after `keep_through` from the HDF5 file(s) and the index.
    void drop_frames_after( long long keep_through );
    //! One file per frame: removes the frame files after `keep_through` and every temporary left behind.
    void remove_frame_files_after( long long keep_through ) const;

    SnapshotLayout m_layout;
    detail::XdmfIndex m_index;
};

} // namespace morula::io

#endif
