/*!
  \file detail/Hdf5Frame.hpp
  \brief The HDF5 side of a snapshot series: making its file and writing a frame's groups, datasets
  and attributes, without HDF5's error stack on stderr (a failure throws core::IoError naming the file).
*/
#ifndef MORULA_IO_DETAIL_HDF5FRAME_HPP
#define MORULA_IO_DETAIL_HDF5FRAME_HPP

#include <morula/io/SnapshotFrame.hpp>

#include <string>

namespace morula::io::detail
{

//! Creates (truncates) the file `path`, with the group `group` unless it is empty.
//! \throws core::IoError "cannot create the <description> '<path>'" (or the group)
void create_hdf5_file( const std::string& path, const std::string& group, const std::string& description );

//! Checks that the file `path` exists, opens for writing and holds `group` unless it is empty.
//! \throws core::IoError "cannot reopen the <description> '<path>'" (or the group is missing)
void check_hdf5_file( const std::string& path, const std::string& group, const std::string& description );

//! Removes from the file `path` the frames "step_<10 digits>" (below `group`, or the root) of steps
//! after `keep_through`. \throws core::IoError "cannot reopen the <description> '<path>'"
void remove_hdf5_frames( const std::string& path, const std::string& group, long long keep_through,
                         const std::string& description );

/*!
  \brief Writes `frame` as the object `frame_path` of the file `path` ("" for its root), creating
  (truncating) the file when `create`, else reopening it; the file is closed on return.
  \return false, writing nothing, if the file holds `frame_path` already
  \throws core::IoError naming the file (and the object) when something cannot be written
*/
bool write_hdf5_frame( const std::string& path, bool create, const std::string& frame_path, const SnapshotFrame& frame,
                       const std::string& description );

} // namespace morula::io::detail

#endif
