// The apps' one run loop: where a run stops (every period, checkpoints every N, the end), the chunks it
// advances between stops from a fresh start and from a restart, how many samples a first part took, the
// checkpoints the schedule asks for, and a signal: a checkpoint after the step it came in, then the stop.
#include "Checkpointing.hpp"
#include "RunLoop.hpp"

#include <morula/Config.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

namespace
{
using morula::app::CheckpointFlags;
using morula::app::CheckpointSchedule;
using morula::app::RunLoop;
using morula::app::StoppedBySignal;

std::vector<long long> stops_from( const RunLoop& loop, long long start, long long total )
{
    std::vector<long long> s;
    for ( long long done = start; done < total; )
        s.push_back( done = loop.next_stop( done ) );
    return s;
}

struct Trace
{
    std::vector<long long> chunks, at, checkpoints;
    long long done = 0;
};

void run( RunLoop& loop, long long start, Trace& t )
{
    t.done = start;
    loop.run(
        start,
        [&]( long long n ) {
            t.chunks.push_back( n );
            t.done += n;
        },
        [&]( long long done ) {
            EXPECT_EQ( done, t.done ); // at_stop sees the steps taken
            t.at.push_back( done );
        },
        [&] { t.checkpoints.push_back( t.done ); }, [] { return std::string(); } );
}

TEST( app_run_loop, stops_at_every_period_and_the_end )
{
    CheckpointSchedule schedule( CheckpointFlags{}, "run_loop_periods" );
    RunLoop loop( schedule, 50, false );
    loop.stop_every( 20 ).stop_every( 7 ).stop_every( 0 ); // 0: no stops of its own
    EXPECT_EQ( stops_from( loop, 0, 50 ), ( std::vector<long long>{ 7, 14, 20, 21, 28, 35, 40, 42, 49, 50 } ) );
    EXPECT_EQ( stops_from( loop, 41, 50 ), ( std::vector<long long>{ 42, 49, 50 } ) ); // a restart between stops
    // the samples (multiples of 20, and the end) a first part that stopped at step 42 took
    EXPECT_EQ( loop.stops_through( 42, []( long long s ) { return s % 20 == 0; } ), 2u );
    EXPECT_EQ( loop.stops_through( 0, []( long long ) { return true; } ), 0u );
    EXPECT_EQ( loop.stops_through( 50, []( long long s ) { return s % 20 == 0 || s == 50; } ), 3u );

    RunLoop single( schedule, 4, false ); // no period: one chunk to the end
    EXPECT_EQ( stops_from( single, 0, 4 ), ( std::vector<long long>{ 4 } ) );
}

TEST( app_run_loop, advances_in_chunks_between_stops_from_a_start_and_a_restart )
{
    CheckpointSchedule schedule( CheckpointFlags{}, "run_loop_chunks" );
    RunLoop loop( schedule, 35, false );
    loop.stop_every( 10 );
    Trace fresh;
    run( loop, 0, fresh );
    EXPECT_EQ( fresh.chunks, ( std::vector<long long>{ 10, 10, 10, 5 } ) );
    EXPECT_EQ( fresh.at, ( std::vector<long long>{ 10, 20, 30, 35 } ) );
    EXPECT_TRUE( fresh.checkpoints.empty() ); // no checkpoint flag, no signal
    Trace resumed;
    run( loop, 25, resumed );
    EXPECT_EQ( resumed.chunks, ( std::vector<long long>{ 5, 5 } ) );
    EXPECT_EQ( resumed.at, ( std::vector<long long>{ 30, 35 } ) );
    Trace finished;
    run( loop, 35, finished ); // a restart at the last step takes none
    EXPECT_TRUE( finished.chunks.empty() && finished.at.empty() );
}

#if MORULA_HAVE_HDF5
// --checkpoint-every 15: the run stops at its multiples too, and checkpoints there and at the end.
TEST( app_run_loop, checkpoints_where_the_schedule_asks )
{
    CheckpointFlags flags;
    flags.every = 15;
    CheckpointSchedule schedule( flags, "run_loop_checkpoints" );
    RunLoop loop( schedule, 40, false );
    loop.stop_every( 10 );
    Trace t;
    run( loop, 0, t );
    EXPECT_EQ( t.at, ( std::vector<long long>{ 10, 15, 20, 30, 40 } ) );
    EXPECT_EQ( t.checkpoints, ( std::vector<long long>{ 15, 30, 40 } ) );
}
#endif

// SIGTERM in the middle of a chunk: the run writes a checkpoint at the stop after it (whether or not a
// checkpoint flag was given), then ends with StoppedBySignal naming the checkpoint; no step after it.
TEST( app_run_loop, a_signal_checkpoints_then_stops )
{
    CheckpointFlags flags;
    flags.file = "run_loop_signal.h5";
#if !MORULA_HAVE_HDF5
    flags.file.clear(); // a file asked for needs HDF5; the stop itself does not
#endif
    CheckpointSchedule schedule( flags, "run_loop_signal" );
    RunLoop loop( schedule, 100, false );
    loop.stop_every( 10 );
    Trace t;
    try
    {
        loop.run(
            0,
            [&]( long long n ) {
                t.chunks.push_back( n );
                t.done += n;
                if ( t.done == 30 )
                    std::raise( SIGTERM );
            },
            [&]( long long done ) { t.at.push_back( done ); }, [&] { t.checkpoints.push_back( t.done ); },
            [] { return std::string(); } );
        ADD_FAILURE() << "the run did not stop";
    }
    catch ( const StoppedBySignal& stop )
    {
        EXPECT_EQ( stop.checkpoint, schedule.file() );
    }
    EXPECT_EQ( t.done, 30 );
    EXPECT_EQ( t.at.back(), 30 );
    EXPECT_EQ( t.checkpoints, ( std::vector<long long>{ 30 } ) );
    CheckpointSchedule next( CheckpointFlags{}, "run_loop_after" ); // a new schedule clears the request
    EXPECT_FALSE( CheckpointSchedule::stop_requested() );
}

} // namespace
