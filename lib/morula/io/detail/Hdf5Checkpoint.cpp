#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>

#include <string>
#include <vector>

#if MORULA_HAVE_HDF5
#include <morula/io/detail/Hdf5Handle.hpp>
#endif

namespace morula::io::detail
{
#if MORULA_HAVE_HDF5
namespace
{
hid_t native( CheckpointType type )
{
    switch ( type )
    {
    case CheckpointType::float32:
        return H5T_NATIVE_FLOAT;
    case CheckpointType::float64:
        return H5T_NATIVE_DOUBLE;
    case CheckpointType::int8:
        return H5T_NATIVE_INT8;
    case CheckpointType::uint8:
        return H5T_NATIVE_UINT8;
    case CheckpointType::int32:
        return H5T_NATIVE_INT32;
    case CheckpointType::uint32:
        return H5T_NATIVE_UINT32;
    case CheckpointType::int64:
        return H5T_NATIVE_INT64;
    case CheckpointType::uint64:
        return H5T_NATIVE_UINT64;
    case CheckpointType::text:
        break;
    }
    return -1;
}

// The CheckpointType of a dataset's stored type, false if it is none of them.
bool type_of( hid_t stored, CheckpointType& type )
{
    const H5T_class_t kind = H5Tget_class( stored );
    const std::size_t size = H5Tget_size( stored );
    if ( kind == H5T_STRING )
    {
        type = CheckpointType::text;
        return H5Tis_variable_str( stored ) == 0;
    }
    if ( kind == H5T_FLOAT )
    {
        if ( size != 4 && size != 8 )
            return false;
        type = size == 4 ? CheckpointType::float32 : CheckpointType::float64;
        return true;
    }
    if ( kind != H5T_INTEGER )
        return false;
    const bool is_signed = H5Tget_sign( stored ) == H5T_SGN_2;
    switch ( size )
    {
    case 1:
        type = is_signed ? CheckpointType::int8 : CheckpointType::uint8;
        return true;
    case 4:
        type = is_signed ? CheckpointType::int32 : CheckpointType::uint32;
        return true;
    case 8:
        type = is_signed ? CheckpointType::int64 : CheckpointType::uint64;
        return true;
    default:
        return false;
    }
}

// A fixed-length string type of `size` bytes (at least one: HDF5 refuses zero).
hid_t string_type( std::size_t size )
{
    const hid_t type = H5Tcopy( H5T_C_S1 );
    if ( type >= 0 )
    {
        H5Tset_size( type, size == 0 ? 1 : size );
        H5Tset_strpad( type, H5T_STR_NULLPAD );
        H5Tset_cset( type, H5T_CSET_UTF8 );
    }
    return type;
}

void write_entry( hid_t file, const std::string& name, const CheckpointEntry& e, const std::string& path )
{
    const auto fail = [&] { return core::IoError( "cannot write '" + name + "' to the checkpoint '" + path + "'" ); };
    const bool text = e.type == CheckpointType::text;
    std::vector<hsize_t> dims( e.dims.begin(), e.dims.end() );
    Handle space( dims.empty() ? H5Screate( H5S_SCALAR ) : H5Screate_simple( int( dims.size() ), dims.data(), nullptr ),
                  H5Sclose );
    Handle string( text ? string_type( e.bytes.size() ) : -1, H5Tclose );
    const hid_t type = text ? string.id : native( e.type );
    // Groups on the way ("agents" of "agents/position") are made as needed. No modification times:
    // the same state gives the same bytes, so that two checkpoints can be compared as files.
    Handle links( H5Pcreate( H5P_LINK_CREATE ), H5Pclose );
    Handle creation( H5Pcreate( H5P_DATASET_CREATE ), H5Pclose );
    if ( space.id < 0 || type < 0 || links.id < 0 || creation.id < 0 ||
         H5Pset_create_intermediate_group( links.id, 1 ) < 0 || H5Pset_obj_track_times( creation.id, 0 ) < 0 )
        throw fail();
    Handle set( H5Dcreate2( file, name.c_str(), type, space.id, links.id, creation.id, H5P_DEFAULT ), H5Dclose );
    if ( set.id < 0 )
        throw fail();
    const char nothing[1] = { 0 };
    const void* data = e.bytes.empty() ? static_cast<const void*>( nothing ) : e.bytes.data();
    const bool empty_array = !text && !dims.empty() && e.bytes.empty();
    if ( !empty_array && H5Dwrite( set.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data ) < 0 )
        throw fail();
}

#if H5_VERSION_GE( 1, 12, 0 )
using ObjectInfo = H5O_info2_t;
#else
using ObjectInfo = H5O_info_t;
#endif

struct Visit
{
    const std::string* path;
    CheckpointEntries* entries;
    std::string error;
};

herr_t read_object( hid_t root, const char* name, const ObjectInfo* info, void* data )
{
    auto& visit = *static_cast<Visit*>( data );
    if ( info->type != H5O_TYPE_DATASET )
        return 0;
    const auto fail = [&]( const std::string& why ) {
        visit.error = "cannot read '" + std::string( name ) + "' of the checkpoint '" + *visit.path + "': " + why;
        return -1;
    };
    Handle set( H5Dopen2( root, name, H5P_DEFAULT ), H5Dclose );
    Handle stored( set.id < 0 ? -1 : H5Dget_type( set.id ), H5Tclose );
    Handle space( set.id < 0 ? -1 : H5Dget_space( set.id ), H5Sclose );
    if ( stored.id < 0 || space.id < 0 )
        return fail( "not readable" );
    CheckpointEntry e;
    if ( !type_of( stored.id, e.type ) )
        return fail( "a type checkpoints do not hold" );
    const int rank = H5Sget_simple_extent_ndims( space.id );
    if ( rank < 0 )
        return fail( "no simple shape" );
    std::vector<hsize_t> dims( std::size_t( rank ), 0 );
    if ( rank > 0 )
        H5Sget_simple_extent_dims( space.id, dims.data(), nullptr );
    hsize_t count = 1;
    for ( const auto d : dims )
    {
        e.dims.push_back( std::size_t( d ) );
        count *= d;
    }
    if ( e.type == CheckpointType::text )
    {
        if ( rank != 0 )
            return fail( "a string array" );
        std::vector<char> chars( H5Tget_size( stored.id ) + 1, '\0' );
        Handle memory( string_type( chars.size() - 1 ), H5Tclose );
        if ( memory.id < 0 || H5Dread( set.id, memory.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, chars.data() ) < 0 )
            return fail( "the string cannot be read" );
        const std::string value( chars.data() ); // null-padded
        e.bytes.assign( value.begin(), value.end() );
    }
    else
    {
        const std::size_t element = H5Tget_size( native( e.type ) );
        // A corrupt or hostile file can claim any shape: refuse more than the file could hold.
        const hsize_t stored_bytes = H5Dget_storage_size( set.id );
        if ( count > 0 && ( count > hsize_t( -1 ) / element || count * element > stored_bytes ) )
            return fail( "its shape claims more data than the file holds" );
        e.bytes.resize( std::size_t( count * element ) );
        if ( count > 0 && H5Dread( set.id, native( e.type ), H5S_ALL, H5S_ALL, H5P_DEFAULT, e.bytes.data() ) < 0 )
            return fail( "the data cannot be read" );
    }
    ( *visit.entries )[name] = std::move( e );
    return 0;
}
} // namespace

void write_checkpoint_file( const std::string& path, const CheckpointEntries& entries )
{
    QuietErrors quiet;
    Handle file( H5Fcreate( path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot create the checkpoint '" + path + "'" );
    for ( const auto& [name, e] : entries )
        write_entry( file.id, name, e, path );
    if ( H5Fflush( file.id, H5F_SCOPE_GLOBAL ) < 0 )
        throw core::IoError( "cannot flush the checkpoint '" + path + "'" );
}

CheckpointEntries read_checkpoint_file( const std::string& path )
{
    QuietErrors quiet;
#if H5_VERSION_GE( 1, 12, 0 )
    const htri_t is_hdf5 = H5Fis_accessible( path.c_str(), H5P_DEFAULT );
#else
    const htri_t is_hdf5 = H5Fis_hdf5( path.c_str() );
#endif
    if ( is_hdf5 <= 0 )
        throw core::IoError( "cannot open the checkpoint '" + path + "': no such file, or not an HDF5 file" );
    Handle file( H5Fopen( path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot open the checkpoint '" + path + "'" );
    CheckpointEntries entries;
    Visit visit{ &path, &entries, {} };
#if H5_VERSION_GE( 1, 12, 0 )
    const herr_t status = H5Ovisit3( file.id, H5_INDEX_NAME, H5_ITER_INC, read_object, &visit, H5O_INFO_BASIC );
#else
    const herr_t status = H5Ovisit2( file.id, H5_INDEX_NAME, H5_ITER_INC, read_object, &visit, H5O_INFO_BASIC );
#endif
    if ( !visit.error.empty() )
        throw core::IoError( visit.error );
    if ( status < 0 )
        throw core::IoError( "cannot read the checkpoint '" + path + "'" );
    return entries;
}

#else
void write_checkpoint_file( const std::string& path, const CheckpointEntries& )
{
    throw core::InputError( "cannot write the checkpoint '" + path + "': this Morula was built without HDF5" );
}
CheckpointEntries read_checkpoint_file( const std::string& path )
{
    throw core::InputError( "cannot read the checkpoint '" + path + "': this Morula was built without HDF5" );
}
#endif

} // namespace morula::io::detail
