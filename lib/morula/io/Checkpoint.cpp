#include <morula/Config.hpp>
#include <morula/core/BuildInfo.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/io/SnapshotSeries.hpp>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace morula::io
{

const char* to_string( CheckpointType type )
{
    switch ( type )
    {
    case CheckpointType::float32:
        return "float32";
    case CheckpointType::float64:
        return "float64";
    case CheckpointType::int8:
        return "int8";
    case CheckpointType::uint8:
        return "uint8";
    case CheckpointType::int32:
        return "int32";
    case CheckpointType::uint32:
        return "uint32";
    case CheckpointType::int64:
        return "int64";
    case CheckpointType::uint64:
        return "uint64";
    case CheckpointType::text:
        return "text";
    }
    return "unknown";
}

namespace
{
// Where Morula keeps what identifies the file; a model's names cannot start with it.
const std::string header_group = "morula/";

std::string shape_of( const std::vector<std::size_t>& dims )
{
    if ( dims.empty() )
        return "a scalar";
    std::string s = "shape (";
    for ( std::size_t i = 0; i < dims.size(); ++i )
        s += ( i ? ", " : "" ) + std::to_string( dims[i] );
    return s + ")";
}

// fsync of a file or folder by name; false if it cannot be opened or synced.
bool sync_path( const std::string& path, bool folder )
{
    const int fd = ::open( path.c_str(), folder ? O_RDONLY | O_DIRECTORY : O_RDONLY );
    if ( fd < 0 )
        return false;
    const bool ok = ::fsync( fd ) == 0;
    ::close( fd );
    return ok;
}

std::string folder_of( const std::string& path )
{
    const auto slash = path.find_last_of( '/' );
    return slash == std::string::npos ? std::string( "." ) : slash == 0 ? std::string( "/" ) : path.substr( 0, slash );
}

std::string text_of( const CheckpointEntry& e ) { return std::string( e.bytes.begin(), e.bytes.end() ); }
} // namespace

CheckpointWriter::CheckpointWriter( std::string model )
    : m_model( std::move( model ) )
{
    if ( m_model.empty() )
        throw core::InputError( "CheckpointWriter: the model's name is empty" );
}

CheckpointEntry& CheckpointWriter::add( const std::string& name, CheckpointType type )
{
    if ( name.empty() || name.front() == '/' || name.back() == '/' || name.find( "//" ) != std::string::npos )
        throw core::InputError( "CheckpointWriter: '" + name + "' is not a name (parts separated by single '/')" );
    if ( name.compare( 0, header_group.size(), header_group ) == 0 )
        throw core::InputError( "CheckpointWriter: '" + name + "' is reserved (Morula's header)" );
    // A name cannot be both an entry and the group of another ("a" and "a/b").
    for ( const auto& [other, e] : m_entries )
        if ( other == name || other.compare( 0, name.size() + 1, name + "/" ) == 0 ||
             name.compare( 0, other.size() + 1, other + "/" ) == 0 )
            throw core::InputError( "CheckpointWriter: '" + name + "' clashes with '" + other +
                                    "', already in the checkpoint of '" + m_model + "'" );
    CheckpointEntry& e = m_entries[name];
    e.type = type;
    return e;
}

void CheckpointWriter::put_text( const std::string& name, const std::string& value )
{
    CheckpointEntry& e = add( name, CheckpointType::text );
    e.bytes.assign( value.begin(), value.end() );
}

void CheckpointWriter::write( const std::string& path ) const
{
    require_hdf5( "the checkpoint '" + path + "' of model '" + m_model + "' was requested" );
    CheckpointEntries all = m_entries;
    const auto header_text = [&]( const std::string& name, const std::string& value ) {
        CheckpointEntry& e = all[header_group + name];
        e.type = CheckpointType::text;
        e.bytes.assign( value.begin(), value.end() );
    };
    header_text( "model", m_model );
    header_text( "version", core::version() );
    header_text( "build", core::build_summary() );
    {
        CheckpointEntry& e = all[header_group + "format"];
        e.type = CheckpointType::int32;
        const std::int32_t format = checkpoint_format;
        e.bytes.resize( sizeof format );
        std::memcpy( e.bytes.data(), &format, sizeof format );
    }
    // The complete file under a temporary name first: rename() replaces `path` atomically, so a
    // reader (or a restart after a kill) sees the old checkpoint or the new one, never a mix.
    const std::string temporary = path + ".tmp";
    try
    {
        detail::write_checkpoint_file( temporary, all );
        if ( !sync_path( temporary, false ) )
            throw core::IoError( "cannot flush the checkpoint '" + temporary + "' to the disk" );
    }
    catch ( ... )
    {
        std::remove( temporary.c_str() );
        throw;
    }
    if ( std::rename( temporary.c_str(), path.c_str() ) != 0 )
    {
        const int error = errno;
        std::remove( temporary.c_str() );
        throw core::IoError( "cannot rename the checkpoint '" + temporary + "' to '" + path +
                             "': " + std::strerror( error ) );
    }
    // The rename itself is durable once the folder is synced (best effort: not every file system
    // lets a folder be opened).
    sync_path( folder_of( path ), true );
}

CheckpointReader::CheckpointReader( std::string path, const std::string& model )
    : m_path( std::move( path ) )
{
    require_hdf5( "restarting from the checkpoint '" + m_path + "' was requested" );
    m_entries = detail::read_checkpoint_file( m_path );
    const auto header = [&]( const std::string& name ) -> const CheckpointEntry* {
        const auto it = m_entries.find( header_group + name );
        return it == m_entries.end() ? nullptr : &it->second;
    };
    const CheckpointEntry* format = header( "format" );
    const CheckpointEntry* written_model = header( "model" );
    const CheckpointEntry* version = header( "version" );
    if ( !format || format->type != CheckpointType::int32 || !written_model ||
         written_model->type != CheckpointType::text || !version || version->type != CheckpointType::text )
        fail( "not a Morula checkpoint (no morula/format, morula/model and morula/version)" );
    std::int32_t written_format = 0;
    std::memcpy( &written_format, format->bytes.data(), sizeof written_format );
    if ( text_of( *written_model ) != model )
        fail( "a checkpoint of model '" + text_of( *written_model ) + "', not of '" + model + "'" );
    if ( written_format != checkpoint_format || text_of( *version ) != core::version() )
        fail( core::detail::concat( "written by Morula ", text_of( *version ), " (checkpoint format ", written_format,
                                    "); this is Morula ", core::version(), " (format ", checkpoint_format,
                                    "): restart with the version that wrote it" ) );
    for ( auto it = m_entries.begin(); it != m_entries.end(); )
        it = it->first.compare( 0, header_group.size(), header_group ) == 0 ? m_entries.erase( it ) : std::next( it );
}

void CheckpointReader::fail( const std::string& what ) const
{
    throw core::InputError( "checkpoint '" + m_path + "': " + what );
}

const CheckpointEntry& CheckpointReader::entry( const std::string& name ) const
{
    const auto it = m_entries.find( name );
    if ( it == m_entries.end() )
        fail( "has no '" + name + "'" );
    return it->second;
}

const CheckpointEntry& CheckpointReader::typed_entry( const std::string& name, CheckpointType type ) const
{
    const CheckpointEntry& e = entry( name );
    if ( e.type != type )
        fail( std::string( "'" ) + name + "' holds " + to_string( e.type ) + ", expected " + to_string( type ) );
    return e;
}

std::string CheckpointReader::text( const std::string& name ) const
{
    return text_of( typed_entry( name, CheckpointType::text ) );
}

std::size_t CheckpointReader::rows( const std::string& name ) const
{
    const CheckpointEntry& e = entry( name );
    if ( e.dims.empty() )
        fail( "'" + name + "' is a scalar, expected an array" );
    return e.dims[0];
}

std::string first_difference( const CheckpointEntries& a, const CheckpointEntries& b )
{
    auto i = a.begin();
    auto j = b.begin();
    for ( ; i != a.end() && j != b.end(); ++i, ++j )
    {
        if ( i->first != j->first )
            return i->first < j->first ? i->first : j->first;
        const CheckpointEntry &x = i->second, &y = j->second;
        if ( x.type != y.type || x.dims != y.dims || x.bytes != y.bytes )
            return i->first;
    }
    return i != a.end() ? i->first : j != b.end() ? j->first : std::string();
}

core::InputError CheckpointReader::not_scalar( const std::string& name ) const
{
    return core::InputError( "checkpoint '" + m_path + "': '" + name + "' has " + shape_of( entry( name ).dims ) +
                             ", expected a scalar" );
}

core::InputError CheckpointReader::wrong_shape( const std::string& name, const std::vector<std::size_t>& expected ) const
{
    return core::InputError( "checkpoint '" + m_path + "': '" + name + "' has " + shape_of( entry( name ).dims ) +
                             ", expected " + shape_of( expected ) );
}

} // namespace morula::io
