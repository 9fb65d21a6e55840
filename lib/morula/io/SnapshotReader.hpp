/*!
  \file SnapshotReader.hpp
  \brief Reading a snapshot series back: the frames a run wrote (one file per frame, as every Morula
  writer does, or frames in one file) and any dataset or scalar attribute of a frame, without the HDF5 API.
*/
#ifndef MORULA_IO_SNAPSHOTREADER_HPP
#define MORULA_IO_SNAPSHOTREADER_HPP

#include <morula/io/SnapshotFrame.hpp>
#include <morula/io/SnapshotSeries.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace morula::io
{

//! One dataset of a frame read back: its shape (slowest axis first) and its values in that order.
template <class T>
struct SnapshotArray
{
    std::vector<std::size_t> dims;
    std::vector<T> values;

    //! The number of rows (the slowest axis), e.g. the agents of an n x 3 "positions".
    std::size_t rows() const { return dims.empty() ? 1 : dims[0]; }
};

/*!
  \brief The frames of a snapshot series and their contents, read through the layout that wrote them.

  `SnapshotReader( "run/agents" )` reads the files `run/agents_<step>.h5` that AgentSnapshotWriter,
  TissueSnapshotWriter, AngioSnapshotWriter and LatticeSnapshotWriter write (one file per frame, the frame
  at the file's root); a SnapshotLayout with `file_per_frame = false` reads the frames
  `<frames_group>/step_<step>` of one file. Objects are named relative to the frame, as the writers name
  them: "positions", "cells/radius"; the lattice's frame is one dataset, named "".

  Each call opens the frame's file and closes it before returning; the reader holds no HDF5 state.
  \throws core::InputError if this Morula was built without HDF5 (every member that reads)
*/
class SnapshotReader
{
  public:
    //! The one-file-per-frame series with this prefix (`<prefix>_<step>.h5`).
    explicit SnapshotReader( const std::string& prefix );
    //! The series written with `layout` (its hdf5, file_per_frame and frames_group; the rest is unused).
    explicit SnapshotReader( SnapshotLayout layout );

    const SnapshotLayout& layout() const { return m_layout; }

    /*!
      \brief The steps of the frames there are, ascending. One file per frame: the complete frame files in
      the prefix's folder (temporaries of a killed run are never listed); one file: the frame groups in it.
      \throws core::IoError if the folder or the single file cannot be read
    */
    std::vector<long long> steps() const;

    //! Whether frame `step` exists and holds `object` (a dataset or a group).
    bool has( long long step, const std::string& object ) const;

    /*!
      \brief The dataset `dataset` of frame `step`, which must hold T (double, int32, int64 or uint32).
      \throws core::IoError if the frame's file cannot be opened or read; core::InputError naming the file
      and the dataset if the frame or the dataset is missing or holds another type (both types named)
    */
    template <class T>
    SnapshotArray<T> read( long long step, const std::string& dataset ) const
    {
        SnapshotArray<T> out;
        const std::vector<unsigned char> bytes = read_bytes( step, dataset, snapshot_type_of<T>(), out.dims );
        out.values.resize( bytes.size() / sizeof( T ) );
        if ( !bytes.empty() )
            std::memcpy( out.values.data(), bytes.data(), bytes.size() );
        return out;
    }

    /*!
      \brief The scalar attribute `name` of `object` in frame `step` ("" for the frame itself, as the
      writers put "time" there), which must hold T.
      \throws as read(), naming the attribute
    */
    template <class T>
    T attribute( long long step, const std::string& object, const std::string& name ) const
    {
        T value;
        const std::vector<unsigned char> bytes = read_attribute_bytes( step, object, name, snapshot_type_of<T>() );
        std::memcpy( &value, bytes.data(), sizeof( T ) );
        return value;
    }

  private:
    std::vector<unsigned char> read_bytes( long long step, const std::string& dataset, SnapshotType type,
                                           std::vector<std::size_t>& dims ) const;
    std::vector<unsigned char> read_attribute_bytes( long long step, const std::string& object,
                                                     const std::string& name, SnapshotType type ) const;

    SnapshotLayout m_layout;
};

} // namespace morula::io

#endif
