/*!
  \file detail/Hdf5Handle.hpp
  \brief What Morula's HDF5 sources share: a handle that closes itself and the silencing of HDF5's
  error stack. Included by .cpp files only (it includes hdf5.h) and not installed.
*/
#ifndef MORULA_IO_DETAIL_HDF5HANDLE_HPP
#define MORULA_IO_DETAIL_HDF5HANDLE_HPP

#include <morula/io/SnapshotFrame.hpp>

#include <hdf5.h>

namespace morula::io::detail
{

//! Closes an HDF5 handle when it goes out of scope.
struct Handle
{
    hid_t id;
    herr_t ( *close )( hid_t );
    Handle( hid_t i, herr_t ( *c )( hid_t ) )
        : id( i )
        , close( c )
    {
    }
    Handle( const Handle& ) = delete;
    Handle& operator=( const Handle& ) = delete;
    ~Handle()
    {
        if ( id >= 0 )
            close( id );
    }
};

// Turns off HDF5's own printing of its error stack while it lives: Morula reports a failed call with
// an exception naming the file, and the stack would come first on stderr, with nothing to act on.
// Every function that calls HDF5 holds one.
class QuietErrors
{
  public:
    QuietErrors()
    {
        H5Eget_auto2( H5E_DEFAULT, &m_func, &m_data );
        H5Eset_auto2( H5E_DEFAULT, nullptr, nullptr );
    }
    QuietErrors( const QuietErrors& ) = delete;
    QuietErrors& operator=( const QuietErrors& ) = delete;
    ~QuietErrors() { H5Eset_auto2( H5E_DEFAULT, m_func, m_data ); }

  private:
    H5E_auto2_t m_func = nullptr;
    void* m_data = nullptr;
};

//! The HDF5 native type of a snapshot element type (what the writer stores and the reader reads into).
inline hid_t native( SnapshotType type )
{
    switch ( type )
    {
    case SnapshotType::float64:
        return H5T_NATIVE_DOUBLE;
    case SnapshotType::int32:
        return H5T_NATIVE_INT32;
    case SnapshotType::int64:
        return H5T_NATIVE_INT64;
    case SnapshotType::uint32:
        return H5T_NATIVE_UINT32;
    }
    return H5T_NATIVE_DOUBLE;
}

} // namespace morula::io::detail

#endif
