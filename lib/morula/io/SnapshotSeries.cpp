#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/SnapshotSeries.hpp>
#include <morula/io/detail/Hdf5Frame.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace morula::io
{

bool hdf5_available() { return MORULA_HAVE_HDF5 != 0; }

void require_hdf5( const std::string& request )
{
    if ( !hdf5_available() )
        throw core::InputError( request + " but this Morula was built without HDF5; rebuild with "
                                          "-DMorula_ENABLE_HDF5=ON or leave snapshots off" );
}

namespace detail
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

long long frame_file_step( const std::string& name, const std::string& before, const std::string& after )
{
    if ( name.size() <= before.size() + after.size() || name.compare( 0, before.size(), before ) != 0 ||
         name.compare( name.size() - after.size(), after.size(), after ) != 0 )
        return -1;
    const std::string digits = name.substr( before.size(), name.size() - before.size() - after.size() );
    if ( digits.find_first_not_of( "0123456789" ) != std::string::npos || digits.size() > 18 )
        return -1;
    return std::stoll( digits );
}
} // namespace detail

namespace
{
using detail::folder_of;
using detail::name_of;

detail::XdmfIndex index_of( const SnapshotLayout& layout )
{
    if ( layout.xdmf.empty() )
        return {};
    return detail::XdmfIndex( layout.xdmf, layout.collection, layout.doctype );
}
} // namespace

SnapshotSeries::SnapshotSeries( SnapshotLayout layout, SnapshotOpen open, long long keep_through )
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
    // One file per frame creates nothing before the first frame: a folder that is not there is reported
    // now, not when the run reaches its first output.
    if ( m_layout.file_per_frame )
    {
        const std::string folder = folder_of( m_layout.hdf5 );
        std::error_code ec;
        if ( !folder.empty() && !std::filesystem::is_directory( folder, ec ) )
            throw core::IoError( "cannot create the " + m_layout.description + " '" + file_of( 0 ) +
                                 "': the folder '" + folder + "' does not exist" );
    }
    if ( open == SnapshotOpen::resume )
    {
        if ( keep_through < 0 )
            throw core::InputError( core::detail::concat( "SnapshotSeries: resuming '", m_layout.hdf5,
                                                          "' after step ", keep_through, ": expected a step >= 0" ) );
        // A series the first part of the run never wrote (snapshots switched on at the restart) starts anew.
        const bool there = m_layout.file_per_frame ? !m_index.exists() || std::filesystem::exists( m_layout.xdmf )
                                                   : std::filesystem::exists( m_layout.hdf5 ) &&
                                                         ( !m_index.exists() || std::filesystem::exists( m_layout.xdmf ) );
        open = there ? SnapshotOpen::append : SnapshotOpen::create;
        if ( there )
        {
            if ( !m_layout.file_per_frame )
                detail::check_hdf5_file( m_layout.hdf5, m_layout.frames_group, m_layout.description );
            if ( m_index.exists() )
                m_index.reopen();
            drop_frames_after( keep_through );
            return;
        }
    }
    if ( !m_layout.file_per_frame )
    {
        if ( open == SnapshotOpen::create )
            detail::create_hdf5_file( m_layout.hdf5, m_layout.frames_group, m_layout.description );
        else
            detail::check_hdf5_file( m_layout.hdf5, m_layout.frames_group, m_layout.description );
    }
    else if ( open == SnapshotOpen::create )
        remove_frame_files_after( -1 ); // a new series, as a single file is truncated: no stale frames
    if ( m_index.exists() )
    {
        if ( open == SnapshotOpen::create )
            m_index.create();
        else
            m_index.reopen();
    }
}

std::string SnapshotLayout::file_of( long long step ) const
{
    if ( !file_per_frame )
        return hdf5;
    char suffix[32];
    std::snprintf( suffix, sizeof suffix, "_%06lld.h5", step );
    return hdf5 + suffix;
}

std::string SnapshotLayout::frame_path( long long step ) const
{
    if ( file_per_frame )
        return {};
    return ( frames_group.empty() ? "" : "/" + frames_group ) + "/" + SnapshotSeries::step_name( step );
}

std::string SnapshotSeries::file_of( long long step ) const { return m_layout.file_of( step ); }

std::string SnapshotSeries::frame_path( long long step ) const { return m_layout.frame_path( step ); }

std::string SnapshotSeries::step_name( long long step )
{
    char name[32];
    std::snprintf( name, sizeof name, "step_%010lld", step );
    return name;
}

std::string SnapshotSeries::xdmf_reference( long long step ) const
{
    return name_of( file_of( step ) ) + ":" + frame_path( step );
}

void SnapshotSeries::remove_frame_files_after( long long keep_through ) const
{
    namespace fs = std::filesystem;
    const std::string prefix = name_of( m_layout.hdf5 ) + "_", folder = folder_of( m_layout.hdf5 );
    std::error_code ec;
    std::vector<fs::path> doomed; // not removed while the folder is iterated
    for ( const auto& entry : fs::directory_iterator( folder.empty() ? fs::path( "." ) : fs::path( folder ), ec ) )
    {
        const std::string name = entry.path().filename().string();
        // Frames after the step, and every temporary a killed run left (never listed, never complete).
        if ( detail::frame_file_step( name, prefix, ".h5" ) > keep_through ||
             detail::frame_file_step( name, prefix, ".h5.tmp" ) >= 0 )
            doomed.push_back( entry.path() );
    }
    for ( const auto& path : doomed )
        fs::remove( path, ec );
}

void SnapshotSeries::drop_frames_after( long long keep_through )
{
    const std::string prefix = name_of( m_layout.hdf5 ) + "_";
    if ( m_layout.file_per_frame )
        remove_frame_files_after( keep_through );
    else
        detail::remove_hdf5_frames( m_layout.hdf5, m_layout.frames_group, keep_through, m_layout.description );
    if ( m_index.exists() )
    {
        // A frame's grid names its frame: "<file>:/<group>/step_0000000042/..." or "<prefix>_000042.h5:...".
        const std::string single = frame_path( 0 );
        const std::string marker = m_layout.file_per_frame ? prefix : ":" + single.substr( 0, single.size() - 10 );
        m_index.keep_frames( [&]( const std::string& grid ) {
            const auto at = grid.find( marker );
            if ( at == std::string::npos )
                return false;
            const std::size_t first = at + marker.size();
            const std::size_t end = std::min( grid.find_first_not_of( "0123456789", first ), grid.size() );
            return end > first && end - first <= 18 && std::stoll( grid.substr( first, end - first ) ) <= keep_through;
        } );
    }
}

void SnapshotSeries::append( long long step, const SnapshotFrame& frame, const std::string& xdmf_grid )
{
    const std::string file = file_of( step ), object = frame_path( step );
    if ( m_layout.file_per_frame )
    {
        // A series takes each step once, as in a single file (a new series removed the frames of any
        // earlier one; a resumed series those after its checkpoint).
        if ( std::filesystem::exists( file ) )
            throw core::InputError( core::detail::concat( "step ", step, " is already in '", file,
                                                          "': a series takes each step once" ) );
        // The frame's own file under a temporary name, renamed once complete: a run killed at any moment
        // leaves complete frame files only, and the files written before are never reopened.
        const std::string temporary = file + ".tmp";
        detail::write_hdf5_frame( temporary, true, object, frame, m_layout.description );
        if ( std::rename( temporary.c_str(), file.c_str() ) != 0 )
        {
            std::remove( temporary.c_str() );
            throw core::IoError( "cannot rename '" + temporary + "' to the " + m_layout.description + " '" + file + "'" );
        }
    }
    else if ( !detail::write_hdf5_frame( file, false, object, frame, m_layout.description ) )
        throw core::InputError( core::detail::concat( "step ", step, " is already in '", file, "' (",
                                                      frame.is_dataset() ? "dataset " : "group ", object,
                                                      "): a series takes each step once" ) );
    if ( m_index.exists() )
        m_index.add( xdmf_grid );
}

} // namespace morula::io
