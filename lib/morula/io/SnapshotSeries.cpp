#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/SnapshotSeries.hpp>
#include <morula/io/detail/Hdf5Frame.hpp>

#include <cstdio>
#include <utility>

namespace morula::io
{

bool hdf5_available() { return MORULA_HAVE_HDF5 != 0; }

void require_hdf5( const std::string& request )
{
    if ( !hdf5_available() )
        throw core::InputError( request + " but this Morula was built without HDF5; rebuild with "
                                          "-DMorula_ENABLE_HDF5=ON or leave snapshots off" );
}

namespace
{
std::string folder_of( const std::string& path )
{
    const auto slash = path.find_last_of( '/' );
    return slash == std::string::npos ? std::string() : path.substr( 0, slash );
}

std::string name_of( const std::string& path )
{
    const auto slash = path.find_last_of( '/' );
    return slash == std::string::npos ? path : path.substr( slash + 1 );
}

detail::XdmfIndex index_of( const SnapshotLayout& layout )
{
    if ( layout.xdmf.empty() )
        return {};
    return detail::XdmfIndex( layout.xdmf, layout.collection, layout.doctype );
}
} // namespace

SnapshotSeries::SnapshotSeries( SnapshotLayout layout, SnapshotOpen open )
    : m_layout( std::move( layout ) )
    , m_index( index_of( m_layout ) )
{
    if ( !hdf5_available() )
        throw core::InputError( "snapshots were requested ('" + m_layout.hdf5 +
                                "') but this Morula was built without HDF5; rebuild with "
                                "-DMorula_ENABLE_HDF5=ON or leave snapshots off" );
    // The index names the HDF5 files by their names alone, so that the folder can be moved.
    if ( m_index.exists() && folder_of( m_layout.xdmf ) != folder_of( m_layout.hdf5 ) )
        throw core::InputError( "SnapshotSeries: the XDMF index '" + m_layout.xdmf +
                                "' must be in the folder of the HDF5 files '" + m_layout.hdf5 + "'" );
    if ( m_layout.file_per_frame && !m_layout.frames_group.empty() )
        throw core::InputError( "SnapshotSeries: frames_group '" + m_layout.frames_group +
                                "' with one file per frame (each frame is its file's root)" );
    if ( !m_layout.file_per_frame )
    {
        if ( open == SnapshotOpen::create )
            detail::create_hdf5_file( m_layout.hdf5, m_layout.frames_group, m_layout.description );
        else
            detail::check_hdf5_file( m_layout.hdf5, m_layout.frames_group, m_layout.description );
    }
    if ( m_index.exists() )
    {
        if ( open == SnapshotOpen::create )
            m_index.create();
        else
            m_index.reopen();
    }
}

std::string SnapshotSeries::file_of( long long step ) const
{
    if ( !m_layout.file_per_frame )
        return m_layout.hdf5;
    char suffix[32];
    std::snprintf( suffix, sizeof suffix, "_%06lld.h5", step );
    return m_layout.hdf5 + suffix;
}

std::string SnapshotSeries::frame_path( long long step ) const
{
    if ( m_layout.file_per_frame )
        return {};
    char name[32];
    std::snprintf( name, sizeof name, "/step_%010lld", step );
    return ( m_layout.frames_group.empty() ? "" : "/" + m_layout.frames_group ) + name;
}

std::string SnapshotSeries::xdmf_reference( long long step ) const
{
    return name_of( file_of( step ) ) + ":" + frame_path( step );
}

void SnapshotSeries::append( long long step, const SnapshotFrame& frame, const std::string& xdmf_grid )
{
    const std::string file = file_of( step ), object = frame_path( step );
    if ( !detail::write_hdf5_frame( file, m_layout.file_per_frame, object, frame, m_layout.description ) )
        throw core::InputError( core::detail::concat( "step ", step, " is already in '", file, "' (",
                                                      frame.is_dataset() ? "dataset " : "group ", object,
                                                      "): a series takes each step once" ) );
    if ( m_index.exists() )
        m_index.add( xdmf_grid );
}

} // namespace morula::io
