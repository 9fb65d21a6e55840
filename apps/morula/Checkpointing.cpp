#include "Checkpointing.hpp"

#include <morula/core/Error.hpp>
#include <morula/io/SnapshotSeries.hpp>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace morula::app
{
namespace
{
volatile std::sig_atomic_t g_stop = 0;

extern "C" void request_stop( int ) { g_stop = 1; }

const int stop_signals[] = { SIGTERM, SIGINT, SIGUSR1 };
} // namespace

void add_checkpoint_flags( CLI::App& command, CheckpointFlags& flags )
{
    command.add_option( "--checkpoint", flags.file,
                        "Checkpoint file (HDF5), written at the end and every --checkpoint-every steps "
                        "(default <output>.checkpoint.h5)" );
    command.add_option( "--checkpoint-every", flags.every, "Write a checkpoint every N steps" )
        ->check( CLI::Range( 1LL, 4000000000000LL ) );
    command.add_option( "--restart", flags.restart, "Resume from this checkpoint" )->check( CLI::ExistingFile );
}

CheckpointSchedule::CheckpointSchedule( const CheckpointFlags& flags, const std::string& output )
    : m_file( flags.file.empty() ? output + ".checkpoint.h5" : flags.file )
    , m_every( flags.every )
    , m_at_end( !flags.file.empty() || flags.every > 0 )
    , m_restart( flags.restart )
{
    if ( m_every < 0 )
        throw core::InputError( "--checkpoint-every " + std::to_string( m_every ) + ": expected a positive step count" );
    // Checkpoints are HDF5 files: without HDF5 the run is refused before its first step, not at its
    // first checkpoint.
    if ( m_at_end )
        io::require_hdf5( "a checkpoint ('" + m_file + "') was requested" );
    if ( !m_restart.empty() )
        io::require_hdf5( "--restart " + m_restart + " was requested" );
    g_stop = 0;
    for ( const int s : stop_signals )
        std::signal( s, request_stop );
}

CheckpointSchedule::~CheckpointSchedule()
{
    for ( const int s : stop_signals )
        std::signal( s, SIG_DFL );
}

bool CheckpointSchedule::due( long long steps_done, long long total ) const
{
    return g_stop != 0 || ( m_every > 0 && steps_done % m_every == 0 ) || ( m_at_end && steps_done == total );
}

bool CheckpointSchedule::stop_requested() { return g_stop != 0; }

void CheckpointSchedule::stop_if_requested() const
{
    if ( g_stop != 0 )
        throw StoppedBySignal{ m_file };
}

namespace
{
// Reads a CSV's header and rows; false if there is no file to read (a new output prefix).
bool read_csv( const std::string& path, const std::string& where, const std::string& header, std::string& first,
               std::vector<std::string>& rows )
{
    std::ifstream in( path );
    if ( !in || !std::getline( in, first ) )
        return false;
    if ( !header.empty() && first != header )
        throw core::InputError( where + ": cannot resume '" + path + "': its first line is not the header '" + header + "'" );
    std::string line;
    while ( std::getline( in, line ) )
        rows.push_back( line );
    return true;
}

// Writes the header and the first `count` rows under a temporary name, then renames it: a run killed
// here leaves the old series whole.
void rewrite_csv( const std::string& path, const std::string& where, const std::string& first,
                  const std::vector<std::string>& rows, std::size_t count )
{
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out( temporary, std::ios::trunc );
        out << first << '\n';
        for ( std::size_t r = 0; r < count; ++r )
            out << rows[r] << '\n';
        if ( !out.flush() )
            throw core::IoError( where + ": cannot write '" + temporary + "'" );
    }
    std::error_code error;
    std::filesystem::rename( temporary, path, error );
    if ( error )
        throw core::IoError( where + ": cannot rename '" + temporary + "' to '" + path + "': " + error.message() );
}
} // namespace

bool keep_csv_rows_up_to( const std::string& path, long long step, const std::string& where, const std::string& header )
{
    std::string first;
    std::vector<std::string> rows;
    if ( !read_csv( path, where, header, first, rows ) )
        return false;
    std::size_t kept = 0;
    for ( const std::string& line : rows )
    {
        long long row_step = -1;
        if ( std::sscanf( line.c_str(), "%lld", &row_step ) != 1 )
            throw core::InputError( core::detail::concat( where, ": cannot resume '", path, "': the row '", line,
                                                          "' does not start with a step" ) );
        // Rows are in step order; the ones after `step` are dropped (kept rows stay in place).
        if ( row_step <= step )
            rows[kept++] = line;
    }
    rewrite_csv( path, where, first, rows, kept );
    return true;
}

bool keep_first_csv_rows( const std::string& path, std::size_t count, const std::string& where, const std::string& header )
{
    std::string first;
    std::vector<std::string> rows;
    if ( !read_csv( path, where, header, first, rows ) )
        return false;
    if ( rows.size() < count )
        throw core::InputError( core::detail::concat( where, ": cannot resume '", path, "': it has ", rows.size(),
                                                      " rows; the checkpoint's step follows ", count, " of them" ) );
    rewrite_csv( path, where, first, rows, count );
    return true;
}

} // namespace morula::app
