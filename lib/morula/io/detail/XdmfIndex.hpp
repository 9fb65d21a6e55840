/*!
  \file detail/XdmfIndex.hpp
  \brief The XDMF file of a snapshot series: a temporal collection of the frames' grids, rewritten
  whole after every frame.
*/
#ifndef MORULA_IO_DETAIL_XDMFINDEX_HPP
#define MORULA_IO_DETAIL_XDMFINDEX_HPP

#include <string>

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

    bool exists() const { return !m_path.empty(); }
    const std::string& path() const { return m_path; }

  private:
    std::string header() const;
    void write() const;

    std::string m_path;
    std::string m_collection;
    bool m_doctype = true;
    std::string m_grids; // every frame's grid, in order
};

} // namespace morula::io::detail

#endif
