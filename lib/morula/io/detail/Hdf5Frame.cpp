#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/detail/Hdf5Frame.hpp>

#include <string>
#include <vector>

#if MORULA_HAVE_HDF5
// No public header includes hdf5.h (lib/CMakeLists.txt links HDF5 privately).
#include <morula/io/detail/Hdf5Handle.hpp>
#endif

namespace morula::io::detail
{
#if MORULA_HAVE_HDF5
namespace
{
// Truncating.
hid_t create_file( const std::string& path )
{
    return H5Fcreate( path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT );
}

hid_t open_file_rw( const std::string& path ) { return H5Fopen( path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT ); }


// `object` of the frame as a path in the file.
std::string in_file( const std::string& frame_path, const std::string& object )
{
    if ( object.empty() )
        return frame_path.empty() ? "/" : frame_path;
    return frame_path + "/" + object;
}

void write_dataset( hid_t file, const std::string& name, const SnapshotFrame::Entry& e, const std::string& path )
{
    std::vector<hsize_t> dims( e.dims.begin(), e.dims.end() );
    hsize_t count = 1;
    for ( const auto d : dims )
        count *= d;
    const hid_t type = native( e.type );
    Handle space( H5Screate_simple( int( dims.size() ), dims.data(), nullptr ), H5Sclose );
    // No modification times: the same frame gives the same bytes (a resumed run's frames equal the
    // uninterrupted run's, file for file).
    Handle creation( H5Pcreate( H5P_DATASET_CREATE ), H5Pclose );
    Handle set( space.id < 0 || creation.id < 0 || H5Pset_obj_track_times( creation.id, 0 ) < 0
                    ? -1
                    : H5Dcreate2( file, name.c_str(), type, space.id, H5P_DEFAULT, creation.id, H5P_DEFAULT ),
                H5Dclose );
    // A zero-size dataset has nothing to write (and no data pointer to write from).
    if ( set.id < 0 || ( count > 0 && H5Dwrite( set.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, e.data ) < 0 ) )
        throw core::IoError( "cannot write dataset '" + name + "' to '" + path + "'" );
}

void write_attribute( hid_t file, const std::string& object, const SnapshotFrame::Entry& e, const std::string& path )
{
    const auto fail = [&] {
        return core::IoError( "cannot write attribute '" + e.name + "' of '" + object + "' to '" + path + "'" );
    };
    Handle owner( H5Oopen( file, object.c_str(), H5P_DEFAULT ), H5Oclose );
    if ( owner.id < 0 )
        throw fail();
    if ( e.kind == SnapshotFrame::Kind::attribute )
    {
        const hid_t type = native( e.type );
        Handle space( H5Screate( H5S_SCALAR ), H5Sclose );
        Handle attr( H5Acreate2( owner.id, e.name.c_str(), type, space.id, H5P_DEFAULT, H5P_DEFAULT ), H5Aclose );
        // The value in the attribute's own type: HDF5 reads the memory as that type.
        const std::int32_t i32 = std::int32_t( e.integer );
        const std::uint32_t u32 = std::uint32_t( e.integer );
        const void* value = e.type == SnapshotType::float64 ? static_cast<const void*>( &e.real )
                            : e.type == SnapshotType::int64 ? static_cast<const void*>( &e.integer )
                            : e.type == SnapshotType::int32 ? static_cast<const void*>( &i32 )
                                                            : static_cast<const void*>( &u32 );
        if ( attr.id < 0 || H5Awrite( attr.id, type, value ) < 0 )
            throw fail();
        return;
    }
    std::vector<const char*> pointers;
    for ( const auto& s : e.strings )
        pointers.push_back( s.c_str() );
    const hsize_t dims[1] = { e.strings.size() };
    Handle type( H5Tcopy( H5T_C_S1 ), H5Tclose );
    Handle space( H5Screate_simple( 1, dims, nullptr ), H5Sclose );
    if ( type.id < 0 || H5Tset_size( type.id, H5T_VARIABLE ) < 0 || H5Tset_cset( type.id, H5T_CSET_UTF8 ) < 0 ||
         space.id < 0 )
        throw fail();
    Handle attr( H5Acreate2( owner.id, e.name.c_str(), type.id, space.id, H5P_DEFAULT, H5P_DEFAULT ), H5Aclose );
    if ( attr.id < 0 || H5Awrite( attr.id, type.id, pointers.data() ) < 0 )
        throw fail();
}

void create_group( hid_t file, const std::string& name, const std::string& path )
{
    Handle creation( H5Pcreate( H5P_GROUP_CREATE ), H5Pclose );
    Handle group( creation.id < 0 || H5Pset_obj_track_times( creation.id, 0 ) < 0
                      ? -1
                      : H5Gcreate2( file, name.c_str(), H5P_DEFAULT, creation.id, H5P_DEFAULT ),
                  H5Gclose );
    if ( group.id < 0 )
        throw core::IoError( "cannot create group " + name + " in '" + path + "'" );
}
} // namespace

void create_hdf5_file( const std::string& path, const std::string& group, const std::string& description )
{
    QuietErrors quiet;
    Handle file( create_file( path ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot create the " + description + " '" + path + "'" );
    if ( !group.empty() )
        create_group( file.id, "/" + group, path );
}

void check_hdf5_file( const std::string& path, const std::string& group, const std::string& description )
{
    QuietErrors quiet;
    Handle file( open_file_rw( path ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot reopen the " + description + " '" + path + "'" );
    if ( !group.empty() && H5Lexists( file.id, group.c_str(), H5P_DEFAULT ) <= 0 )
        throw core::IoError( "the " + description + " '" + path + "' has no group /" + group );
}

void remove_hdf5_frames( const std::string& path, const std::string& group, long long keep_through,
                         const std::string& description )
{
    QuietErrors quiet;
    Handle file( open_file_rw( path ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( "cannot reopen the " + description + " '" + path + "'" );
    const std::string where = group.empty() ? "/" : "/" + group;
    Handle frames( H5Gopen2( file.id, where.c_str(), H5P_DEFAULT ), H5Gclose );
    hsize_t count = 0;
    if ( frames.id < 0 || H5Gget_num_objs( frames.id, &count ) < 0 )
        throw core::IoError( "cannot read the frames of the " + description + " '" + path + "'" );
    std::vector<std::string> later;
    for ( hsize_t i = 0; i < count; ++i )
    {
        char name[64] = { 0 };
        if ( H5Lget_name_by_idx( frames.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT ) < 0 )
            continue;
        const std::string n( name );
        if ( n.size() == 15 && n.compare( 0, 5, "step_" ) == 0 &&
             n.find_first_not_of( "0123456789", 5 ) == std::string::npos && std::stoll( n.substr( 5 ) ) > keep_through )
            later.push_back( n );
    }
    for ( const auto& n : later )
        if ( H5Ldelete( frames.id, n.c_str(), H5P_DEFAULT ) < 0 )
            throw core::IoError( "cannot remove frame " + where + "/" + n + " from the " + description + " '" + path + "'" );
}

bool write_hdf5_frame( const std::string& path, bool create, const std::string& frame_path, const SnapshotFrame& frame,
                       const std::string& description )
{
    QuietErrors quiet;
    Handle file( create ? create_file( path ) : open_file_rw( path ), H5Fclose );
    if ( file.id < 0 )
        throw core::IoError( ( create ? "cannot create the " : "cannot reopen the " ) + description + " '" + path +
                             "'" );
    if ( !frame_path.empty() && H5Lexists( file.id, frame_path.c_str(), H5P_DEFAULT ) > 0 )
        return false;
    if ( !frame_path.empty() && !frame.is_dataset() )
        create_group( file.id, frame_path, path );
    for ( const auto& e : frame.entries() )
    {
        const std::string object = in_file( frame_path, e.object );
        switch ( e.kind )
        {
        case SnapshotFrame::Kind::group:
            create_group( file.id, object, path );
            break;
        case SnapshotFrame::Kind::dataset:
            write_dataset( file.id, object, e, path );
            break;
        case SnapshotFrame::Kind::attribute:
        case SnapshotFrame::Kind::names:
            write_attribute( file.id, object, e, path );
            break;
        }
    }
    return true;
}

#else
namespace
{
[[noreturn]] void unavailable( const std::string& path )
{
    throw core::InputError( "cannot write '" + path + "': this Morula was built without HDF5" );
}
} // namespace
void create_hdf5_file( const std::string& path, const std::string&, const std::string& ) { unavailable( path ); }
void check_hdf5_file( const std::string& path, const std::string&, const std::string& ) { unavailable( path ); }
void remove_hdf5_frames( const std::string& path, const std::string&, long long, const std::string& )
{
    unavailable( path );
}
bool write_hdf5_frame( const std::string& path, bool, const std::string&, const SnapshotFrame&, const std::string& )
{
    unavailable( path );
}
#endif

} // namespace morula::io::detail
