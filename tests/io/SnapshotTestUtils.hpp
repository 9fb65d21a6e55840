/*!
  \file SnapshotTestUtils.hpp
  \brief What the snapshot tests read back: text files, and HDF5 datasets and attributes with their
  stored shape and type checked (through the HDF5 C API, not the code under test).
*/
#ifndef MORULA_TESTS_IO_SNAPSHOTTESTUTILS_HPP
#define MORULA_TESTS_IO_SNAPSHOTTESTUTILS_HPP

#include <morula/Config.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#if MORULA_HAVE_HDF5
#include <hdf5.h>
#endif

namespace morula_test_snapshots
{

inline std::string read_text( const std::string& path )
{
    std::ifstream in( path );
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

inline std::size_t occurrences( const std::string& text, const std::string& part )
{
    std::size_t count = 0;
    for ( auto at = text.find( part ); at != std::string::npos; at = text.find( part, at + 1 ) )
        ++count;
    return count;
}

#if MORULA_HAVE_HDF5
//! An HDF5 handle closed at scope exit.
struct H5
{
    hid_t id;
    herr_t ( *close )( hid_t );
    H5( hid_t i, herr_t ( *c )( hid_t ) )
        : id( i )
        , close( c )
    {
    }
    H5( const H5& ) = delete;
    ~H5()
    {
        if ( id >= 0 )
            close( id );
    }
};

//! Opens a file read-only (a failed test if it cannot).
inline hid_t open_read_only( const std::string& path )
{
    const hid_t file = H5Fopen( path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT );
    EXPECT_GE( file, 0 ) << path;
    return file;
}

//! Reads a dataset after checking its shape and its stored type (class and size).
template <class T>
std::vector<T> read_dataset( hid_t group, const std::string& name, const std::vector<hsize_t>& dims,
                             H5T_class_t type_class, hid_t memory_type )
{
    H5 set{ H5Dopen2( group, name.c_str(), H5P_DEFAULT ), H5Dclose };
    EXPECT_GE( set.id, 0 ) << name;
    if ( set.id < 0 )
        return {};
    H5 type{ H5Dget_type( set.id ), H5Tclose };
    EXPECT_EQ( H5Tget_class( type.id ), type_class ) << name;
    EXPECT_EQ( H5Tget_size( type.id ), sizeof( T ) ) << name;
    H5 space{ H5Dget_space( set.id ), H5Sclose };
    EXPECT_EQ( H5Sget_simple_extent_ndims( space.id ), int( dims.size() ) ) << name;
    std::vector<hsize_t> found( dims.size(), 999 );
    H5Sget_simple_extent_dims( space.id, found.data(), nullptr );
    EXPECT_EQ( found, dims ) << name;
    std::size_t count = 1;
    for ( const auto d : dims )
        count *= d;
    std::vector<T> v( count );
    EXPECT_GE( H5Dread( set.id, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data() ), 0 ) << name;
    return v;
}

inline std::vector<double> read_doubles( hid_t group, const std::string& name, std::vector<hsize_t> dims )
{
    return read_dataset<double>( group, name, dims, H5T_FLOAT, H5T_NATIVE_DOUBLE );
}
inline std::vector<std::int32_t> read_int32( hid_t group, const std::string& name, std::vector<hsize_t> dims )
{
    return read_dataset<std::int32_t>( group, name, dims, H5T_INTEGER, H5T_NATIVE_INT32 );
}
inline std::vector<std::int64_t> read_int64( hid_t group, const std::string& name, std::vector<hsize_t> dims )
{
    return read_dataset<std::int64_t>( group, name, dims, H5T_INTEGER, H5T_NATIVE_INT64 );
}
inline std::vector<std::uint32_t> read_uint32( hid_t group, const std::string& name, std::vector<hsize_t> dims )
{
    return read_dataset<std::uint32_t>( group, name, dims, H5T_INTEGER, H5T_NATIVE_UINT32 );
}

//! Reads a scalar attribute after checking its stored type (class and size).
template <class T>
T read_scalar_attribute( hid_t object, const char* name, H5T_class_t type_class, hid_t memory_type )
{
    T value{};
    H5 attr{ H5Aopen( object, name, H5P_DEFAULT ), H5Aclose };
    EXPECT_GE( attr.id, 0 ) << name;
    if ( attr.id < 0 )
        return value;
    H5 type{ H5Aget_type( attr.id ), H5Tclose };
    EXPECT_EQ( H5Tget_class( type.id ), type_class ) << name;
    EXPECT_EQ( H5Tget_size( type.id ), sizeof( T ) ) << name;
    EXPECT_GE( H5Aread( attr.id, memory_type, &value ), 0 ) << name;
    return value;
}

//! The attribute `name`: a list of variable-length UTF-8 strings.
inline std::vector<std::string> read_names( hid_t object, const char* name = "names" )
{
    H5 attr{ H5Aopen( object, name, H5P_DEFAULT ), H5Aclose };
    EXPECT_GE( attr.id, 0 );
    if ( attr.id < 0 )
        return {};
    H5 space{ H5Aget_space( attr.id ), H5Sclose };
    std::vector<char*> raw( std::size_t( H5Sget_simple_extent_npoints( space.id ) ), nullptr );
    H5 type{ H5Tcopy( H5T_C_S1 ), H5Tclose };
    H5Tset_size( type.id, H5T_VARIABLE );
    H5Tset_cset( type.id, H5T_CSET_UTF8 );
    EXPECT_GE( H5Aread( attr.id, type.id, raw.data() ), 0 );
    std::vector<std::string> names;
    for ( char* s : raw )
    {
        names.emplace_back( s ? s : "<null>" );
        H5free_memory( s );
    }
    return names;
}

//! The number of links (groups and datasets) in a group.
inline hsize_t links( hid_t group )
{
    H5G_info_t info;
    info.nlinks = 999;
    H5Gget_info( group, &info );
    return info.nlinks;
}
#endif

} // namespace morula_test_snapshots

#endif
