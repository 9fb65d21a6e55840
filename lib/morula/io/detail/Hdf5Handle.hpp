/*!
  \file detail/Hdf5Handle.hpp
  \brief For Morula's own .cpp files only: an HDF5 handle closed at scope exit, and a dataset writer.
*/
#ifndef MORULA_IO_DETAIL_HDF5HANDLE_HPP
#define MORULA_IO_DETAIL_HDF5HANDLE_HPP

#include <morula/Config.hpp>
#include <morula/core/Error.hpp>

#if MORULA_HAVE_HDF5
#include <hdf5.h>

#include <string>

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

//! Turns off HDF5's own printing of its error stack while it lives: Morula reports a failed call with
//! an exception naming the file, and the stack would come first on stderr, with nothing to act on.
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

//! H5Fcreate (truncating) without HDF5's error stack on stderr; negative on failure.
inline hid_t create_file( const std::string& path )
{
    QuietErrors quiet;
    return H5Fcreate( path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT );
}

//! H5Fopen for reading and writing without HDF5's error stack on stderr; negative on failure.
inline hid_t open_file_rw( const std::string& path )
{
    QuietErrors quiet;
    return H5Fopen( path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT );
}

//! Writes `data` as dataset `name` (rank, dims, type) under `parent`; returns the open dataset.
inline hid_t write_dataset( hid_t parent, const char* name, hid_t type, int rank, const hsize_t* dims,
                            const void* data, const std::string& path )
{
    Handle space( H5Screate_simple( rank, dims, nullptr ), H5Sclose );
    const hid_t set = space.id < 0 ? -1 : H5Dcreate2( parent, name, type, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT );
    if ( set < 0 || ( dims[0] > 0 && H5Dwrite( set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data ) < 0 ) )
    {
        if ( set >= 0 )
            H5Dclose( set );
        throw core::IoError( "cannot write dataset '" + std::string( name ) + "' to " + path );
    }
    return set;
}
} // namespace morula::io::detail
#endif

#endif
