/*!
  \file detail/XdmfIndex.hpp
  \brief The XDMF file of a snapshot series: a temporal collection of the frames' grids, rewritten
  whole after every frame under a temporary name and renamed over the index, so that a run killed at
  any moment leaves an index of complete frames.
*/
#ifndef MORULA_IO_DETAIL_XDMFINDEX_HPP
#define MORULA_IO_DETAIL_XDMFINDEX_HPP

#include <string>
#include <vector>

namespace morula::io::detail
{

//! Lists a series' frames for ParaView; a default-constructed index is none and writes nothing.
class XdmfIndex
{
  public:
    XdmfIndex() = default;
    XdmfIndex( std::string path, std::string collection, bool doctype );

    //! Writes an index without frames (truncating an older one). \throws core::IoError naming the file
    void create();
    //! Takes over the frames an index written before lists, to add more after them.
    //! \throws core::IoError if it cannot be read; core::InputError if no series wrote it this way
    void reopen();
    //! Adds a frame's `<Grid>` element and rewrites the file. \throws core::IoError naming the file
    void add( const std::string& grid );
    //! Keeps the frames whose `<Grid>` element (its text, nested grids included) `keep` accepts and
    //! rewrites the file. \throws core::IoError naming the file
    template <class Keep>
    void keep_frames( const Keep& keep )
    {
        std::string kept;
        for ( const auto& grid : frames() )
            if ( keep( grid ) )
                kept += grid;
        m_grids = kept;
        write();
    }

    bool exists() const { return !m_path.empty(); }
    const std::string& path() const { return m_path; }

  private:
    //! Each frame's `<Grid>` element: the lines from one at the collection's child indentation to the next.
    std::vector<std::string> frames() const;
    std::string header() const;
    void write() const;

    std::string m_path;
    std::string m_collection;
    bool m_doctype = true;
    std::string m_grids; // every frame's grid, in order
};

} // namespace morula::io::detail

#endif
