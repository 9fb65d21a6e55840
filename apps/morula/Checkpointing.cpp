#include "Checkpointing.hpp"

#include <morula/core/Error.hpp>

#include <csignal>

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

} // namespace morula::app
