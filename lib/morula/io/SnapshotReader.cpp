#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/SnapshotReader.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#if MORULA_HAVE_HDF5
// No public header includes hdf5.h (lib/CMakeLists.txt links HDF5 privately).
#include <morula/io/detail/Hdf5Handle.hpp>
#endif

namespace morula::io
{
namespace
{
SnapshotLayout prefix_layout( const std::string& prefix )
{
    SnapshotLayout layout;
    layout.hdf5 = prefix;
    layout.file_per_frame = true;
    return layout;
}

#if MORULA_HAVE_HDF5
using detail::Handle;
using detail::native;

const char* type_name( SnapshotType t )
{
    switch ( t )
    {
    case SnapshotType::float64:
        return "float64";
    case SnapshotType::int32:
        return "int32";
    case SnapshotType::int64:
        return "int64";
    case SnapshotType::uint32:
        return "uint32";
    }
    return "?";
}

// The SnapshotType an HDF5 datatype stores, false if none (strings, floats of other sizes, ...).
bool snapshot_type_of_h5( hid_t type, SnapshotType& out )
{
    const H5T_class_t cls = H5Tget_class( type );
    const std::size_t size = H5Tget_size( type );
    if ( cls == H5T_FLOAT && size == 8 )
        out = SnapshotType::float64;
    else if ( cls == H5T_INTEGER && size == 8 && H5Tget_sign( type ) == H5T_SGN_2 )
        out = SnapshotType::int64;
    else if ( cls == H5T_INTEGER && size == 4 )
        out = H5Tget_sign( type ) == H5T_SGN_2 ? SnapshotType::int32 : SnapshotType::uint32;
    else
        return false;
    return true;
}


// `object` of the frame at `frame` as a path in the file.
std::string in_file( const std::string& frame, const std::string& object )
{
    if ( object.empty() )
        return frame.empty() ? "/" : frame;
    return frame + "/" + object;
}

// Whether every group on the way to `path` and the object itself exist (H5Lexists needs each parent).
bool exists( hid_t file, const std::string& path )
{
    if ( path == "/" )
        return true;
    std::size_t at = 0;
    while ( at != std::string::npos )
    {
        at = path.find( '/', at + 1 );
        const std::string part = path.substr( 0, at );
        if ( part.empty() || part == "/" )
            continue;
        if ( H5Lexists( file, part.c_str(), H5P_DEFAULT ) <= 0 )
            return false;
    }
    return true;
}

// The frame's file opened read-only; throws naming the file (and the step) when there is none.
hid_t open_frame_file( const SnapshotLayout& layout, long long step )
{
    const std::string file = layout.file_of( step );
    std::error_code ec;
    if ( !std::filesystem::exists( file, ec ) )
    {
        if ( layout.file_per_frame )
            throw core::InputError( core::detail::concat( "SnapshotReader: no frame at step ", step, ": '", file,
                                                          "' does not exist" ) );
        throw core::IoError( "SnapshotReader: cannot open the snapshot file '" + file + "': it does not exist" );
    }
    const hid_t id = H5Fopen( file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT );
    if ( id < 0 )
        throw core::IoError( "SnapshotReader: cannot open '" + file + "' as an HDF5 file" );
    return id;
}

// The frame's object path in its open file; throws naming file and step when the frame is missing.
std::string frame_in( hid_t file, const SnapshotLayout& layout, long long step )
{
    const std::string frame = layout.frame_path( step );
    if ( !frame.empty() && !exists( file, frame ) )
        throw core::InputError( core::detail::concat( "SnapshotReader: '", layout.file_of( step ),
                                                      "' has no frame at step ", step, " ('", frame, "')" ) );
    return frame;
}

// Checks that `type` holds `want`; throws naming the file, the object and both types.
void check_type( hid_t type, SnapshotType want, const std::string& file, const std::string& what )
{
    SnapshotType has;
    if ( !snapshot_type_of_h5( type, has ) )
        throw core::InputError( "SnapshotReader: " + what + " in '" + file +
                                "' holds a type a snapshot never holds (expected " + type_name( want ) + ")" );
    if ( has != want )
        throw core::InputError( "SnapshotReader: " + what + " in '" + file + "' holds " + type_name( has ) +
                                ", not " + type_name( want ) );
}
#endif
} // namespace

SnapshotReader::SnapshotReader( const std::string& prefix )
    : SnapshotReader( prefix_layout( prefix ) )
{
}

SnapshotReader::SnapshotReader( SnapshotLayout layout )
    : m_layout( std::move( layout ) )
{
    require_hdf5( "reading the snapshots '" + m_layout.hdf5 + "' was requested" );
    if ( m_layout.hdf5.empty() )
        throw core::InputError( "SnapshotReader: the series' HDF5 file or prefix is empty" );
    if ( m_layout.file_per_frame && !m_layout.frames_group.empty() )
        throw core::InputError( "SnapshotReader: frames_group '" + m_layout.frames_group +
                                "' with one file per frame (each frame is at its file's root)" );
}

std::vector<long long> SnapshotReader::steps() const
{
    std::vector<long long> steps;
#if MORULA_HAVE_HDF5
    if ( m_layout.file_per_frame )
    {
        namespace fs = std::filesystem;
        const std::string folder = detail::folder_of( m_layout.hdf5 );
        const std::string before = detail::name_of( m_layout.hdf5 ) + "_";
        std::error_code ec;
        fs::directory_iterator it( folder.empty() ? fs::path( "." ) : fs::path( folder ), ec );
        if ( ec )
            throw core::IoError( "SnapshotReader: cannot list the folder '" + ( folder.empty() ? "." : folder ) +
                                 "' of the snapshots '" + m_layout.hdf5 + "': " + ec.message() );
        for ( const auto& entry : it )
        {
            const long long step = detail::frame_file_step( entry.path().filename().string(), before, ".h5" );
            if ( step >= 0 )
                steps.push_back( step );
        }
    }
    else
    {
        detail::QuietErrors quiet;
        Handle file( open_frame_file( m_layout, 0 ), H5Fclose );
        const std::string group = m_layout.frames_group.empty() ? "/" : "/" + m_layout.frames_group;
        if ( !exists( file.id, group ) )
            throw core::InputError( "SnapshotReader: '" + m_layout.hdf5 + "' has no group '" + group + "'" );
        Handle g( H5Gopen2( file.id, group.c_str(), H5P_DEFAULT ), H5Gclose );
        H5G_info_t info;
        if ( g.id < 0 || H5Gget_info( g.id, &info ) < 0 )
            throw core::IoError( "SnapshotReader: cannot read the group '" + group + "' of '" + m_layout.hdf5 + "'" );
        for ( hsize_t k = 0; k < info.nlinks; ++k )
        {
            char name[64] = {};
            if ( H5Lget_name_by_idx( g.id, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof name, H5P_DEFAULT ) < 0 )
                throw core::IoError( "SnapshotReader: cannot read the group '" + group + "' of '" + m_layout.hdf5 +
                                     "'" );
            const long long step = detail::frame_file_step( name, "step_", std::string() );
            if ( step >= 0 )
                steps.push_back( step );
        }
    }
    std::sort( steps.begin(), steps.end() );
#endif
    return steps;
}

bool SnapshotReader::has( long long step, const std::string& object ) const
{
#if MORULA_HAVE_HDF5
    detail::QuietErrors quiet;
    std::error_code ec;
    if ( !std::filesystem::exists( m_layout.file_of( step ), ec ) )
        return false;
    Handle file( H5Fopen( m_layout.file_of( step ).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT ), H5Fclose );
    if ( file.id < 0 )
        return false;
    const std::string frame = m_layout.frame_path( step );
    if ( !frame.empty() && !exists( file.id, frame ) )
        return false;
    return exists( file.id, in_file( frame, object ) );
#else
    (void)step;
    (void)object;
    return false;
#endif
}

std::vector<unsigned char> SnapshotReader::read_bytes( long long step, const std::string& dataset,
                                                       SnapshotType type, std::vector<std::size_t>& dims ) const
{
    std::vector<unsigned char> bytes;
#if MORULA_HAVE_HDF5
    detail::QuietErrors quiet;
    const std::string name = m_layout.file_of( step );
    Handle file( open_frame_file( m_layout, step ), H5Fclose );
    const std::string path = in_file( frame_in( file.id, m_layout, step ), dataset );
    const std::string what = "the dataset '" + path + "'";
    if ( !exists( file.id, path ) )
        throw core::InputError( "SnapshotReader: '" + name + "' has no dataset '" + path + "'" );
    {
        Handle object( H5Oopen( file.id, path.c_str(), H5P_DEFAULT ), H5Oclose );
        if ( object.id < 0 || H5Iget_type( object.id ) != H5I_DATASET )
            throw core::InputError( "SnapshotReader: '" + path + "' in '" + name + "' is not a dataset" );
    }
    Handle set( H5Dopen2( file.id, path.c_str(), H5P_DEFAULT ), H5Dclose );
    Handle stored( H5Dget_type( set.id ), H5Tclose );
    Handle space( H5Dget_space( set.id ), H5Sclose );
    if ( set.id < 0 || stored.id < 0 || space.id < 0 )
        throw core::IoError( "SnapshotReader: cannot read " + what + " of '" + name + "'" );
    check_type( stored.id, type, name, what );
    const int rank = H5Sget_simple_extent_ndims( space.id );
    if ( rank < 0 )
        throw core::IoError( "SnapshotReader: cannot read the shape of " + what + " of '" + name + "'" );
    std::vector<hsize_t> extent( static_cast<std::size_t>( rank ) );
    H5Sget_simple_extent_dims( space.id, extent.data(), nullptr );
    dims.assign( extent.begin(), extent.end() );
    std::size_t count = 1;
    for ( const auto d : dims )
        count *= d;
    bytes.resize( count * H5Tget_size( native( type ) ) );
    if ( count > 0 && H5Dread( set.id, native( type ), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data() ) < 0 )
        throw core::IoError( "SnapshotReader: cannot read " + what + " of '" + name + "'" );
#else
    (void)step;
    (void)dataset;
    (void)type;
    (void)dims;
#endif
    return bytes;
}

std::vector<unsigned char> SnapshotReader::read_attribute_bytes( long long step, const std::string& object,
                                                                 const std::string& name, SnapshotType type ) const
{
    std::vector<unsigned char> bytes;
#if MORULA_HAVE_HDF5
    detail::QuietErrors quiet;
    const std::string file_name = m_layout.file_of( step );
    Handle file( open_frame_file( m_layout, step ), H5Fclose );
    const std::string path = in_file( frame_in( file.id, m_layout, step ), object );
    const std::string what = "the attribute '" + name + "' of '" + path + "'";
    if ( !exists( file.id, path ) )
        throw core::InputError( "SnapshotReader: '" + file_name + "' has no object '" + path + "'" );
    if ( H5Aexists_by_name( file.id, path.c_str(), name.c_str(), H5P_DEFAULT ) <= 0 )
        throw core::InputError( "SnapshotReader: '" + file_name + "' has no attribute '" + name + "' on '" + path +
                                "'" );
    Handle attr( H5Aopen_by_name( file.id, path.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT ), H5Aclose );
    Handle stored( H5Aget_type( attr.id ), H5Tclose );
    Handle space( H5Aget_space( attr.id ), H5Sclose );
    if ( attr.id < 0 || stored.id < 0 || space.id < 0 )
        throw core::IoError( "SnapshotReader: cannot read " + what + " of '" + file_name + "'" );
    check_type( stored.id, type, file_name, what );
    if ( H5Sget_simple_extent_npoints( space.id ) != 1 )
        throw core::InputError( "SnapshotReader: " + what + " in '" + file_name + "' is not a single value" );
    bytes.resize( H5Tget_size( native( type ) ) );
    if ( H5Aread( attr.id, native( type ), bytes.data() ) < 0 )
        throw core::IoError( "SnapshotReader: cannot read " + what + " of '" + file_name + "'" );
#else
    (void)step;
    (void)object;
    (void)name;
    (void)type;
#endif
    return bytes;
}

} // namespace morula::io
