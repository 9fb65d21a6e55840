// io::SnapshotReader: what the writers wrote reads back bit for bit, with its shape; the frames a series
// holds are listed (one file per frame, temporaries of a killed run ignored; frames in one file); a missing
// frame, dataset or attribute and a wrong type are refused with the file and the object named.
#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/AgentSnapshots.hpp>
#include <morula/io/SnapshotReader.hpp>
#include <morula/io/SnapshotSeries.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace morula_test_io
{
namespace
{
// Expects `f` to throw E with a message holding every part.
template <class E, class F>
void expect_refused( F&& f, const std::vector<std::string>& parts )
{
    try
    {
        f();
        ADD_FAILURE() << "no exception";
    }
    catch ( const E& e )
    {
        for ( const auto& p : parts )
            EXPECT_NE( std::string( e.what() ).find( p ), std::string::npos ) << e.what() << " lacks '" << p << "'";
    }
}
} // namespace

TEST( TEST_CATEGORY, snapshot_reader_reads_agent_frames_back )
{
    const std::string prefix = std::string( "morula_reader_test_" ) + TEST_EXECSPACE::name();
    if ( !morula::io::hdf5_available() )
    {
        EXPECT_THROW( morula::io::SnapshotReader r( prefix ), morula::core::InputError );
        return;
    }
    // Frames at steps 0, 40 and 1234567 (more than the 6 digits of the file names), of 4, 0 and 3 agents;
    // values that a conversion through float would change.
    const std::vector<long long> steps{ 0, 40, 1234567 };
    const std::vector<int> counts{ 4, 0, 3 };
    std::vector<std::vector<double>> xyz( 3 ), diameter( 3 );
    std::vector<std::vector<std::int64_t>> ids( 3 );
    {
        morula::io::AgentSnapshotWriter writer( prefix );
        for ( int f = 0; f < 3; ++f )
        {
            for ( int i = 0; i < counts[f]; ++i )
            {
                for ( int d = 0; d < 3; ++d )
                    xyz[f].push_back( 0.1 * ( f + 1 ) + 1e-13 * i - 7.0 * d );
                diameter[f].push_back( 30.0 + 1e-12 * i );
                ids[f].push_back( ( std::int64_t( 1 ) << 40 ) + 17 * i + f );
            }
            writer.write( steps[f], 0.5 * f, xyz[f], diameter[f], ids[f] );
        }
    }
    // A temporary of a killed run and a file of another prefix are not frames.
    std::ofstream( prefix + "_000050.h5.tmp" ) << "partial";
    std::ofstream( prefix + "x_000060.h5" ) << "other";

    const morula::io::SnapshotReader reader( prefix );
    EXPECT_EQ( reader.steps(), steps );
    for ( int f = 0; f < 3; ++f )
    {
        const auto x = reader.read<double>( steps[f], "positions" );
        EXPECT_EQ( x.dims, ( std::vector<std::size_t>{ std::size_t( counts[f] ), 3 } ) );
        EXPECT_EQ( x.rows(), std::size_t( counts[f] ) );
        EXPECT_EQ( x.values, xyz[f] );
        EXPECT_EQ( reader.read<double>( steps[f], "diameter" ).values, diameter[f] );
        EXPECT_EQ( reader.read<std::int64_t>( steps[f], "id" ).values, ids[f] );
        EXPECT_TRUE( reader.has( steps[f], "positions" ) );
    }
    EXPECT_FALSE( reader.has( 40, "velocity" ) );
    EXPECT_FALSE( reader.has( 41, "positions" ) );

    const std::string first = prefix + "_000000.h5";
    expect_refused<morula::core::InputError>( [&] { reader.read<double>( 41, "positions" ); },
                                              { "no frame at step 41", prefix + "_000041.h5" } );
    expect_refused<morula::core::InputError>( [&] { reader.read<double>( 0, "velocity" ); },
                                              { first, "no dataset", "velocity" } );
    expect_refused<morula::core::InputError>( [&] { reader.read<std::int32_t>( 0, "id" ); },
                                              { first, "'/id'", "holds int64, not int32" } );
    expect_refused<morula::core::InputError>( [&] { reader.read<double>( 0, "id" ); },
                                              { first, "holds int64, not float64" } );
    expect_refused<morula::core::InputError>( [&] { reader.attribute<double>( 0, "", "time" ); },
                                              { first, "no attribute 'time' on '/'" } );
    // A file that is not HDF5 where a frame should be.
    std::ofstream( prefix + "_000099.h5" ) << "not hdf5";
    expect_refused<morula::core::IoError>( [&] { reader.read<double>( 99, "positions" ); },
                                           { prefix + "_000099.h5", "HDF5" } );
    for ( const long long s : { 0LL, 40LL, 1234567LL, 99LL } )
    {
        char name[64];
        std::snprintf( name, sizeof name, "_%06lld.h5", s );
        std::remove( ( prefix + name ).c_str() );
    }
    std::remove( ( prefix + "_000050.h5.tmp" ).c_str() );
    std::remove( ( prefix + "x_000060.h5" ).c_str() );
    std::remove( ( prefix + ".xmf" ).c_str() );
}

// Frames in one file under a group, with attributes of the frame and of a dataset, and every element type.
TEST( TEST_CATEGORY, snapshot_reader_reads_frames_of_one_file )
{
    if ( !morula::io::hdf5_available() )
        return;
    const std::string path = std::string( "morula_reader_single_" ) + TEST_EXECSPACE::name() + ".h5";
    morula::io::SnapshotLayout layout;
    layout.hdf5 = path;
    layout.frames_group = "frames";
    const std::vector<std::int32_t> species{ -3, 0, 2147483647 };
    const std::vector<std::uint32_t> words{ 0u, 4294967295u, 12345u, 7u };
    {
        morula::io::SnapshotSeries series( layout );
        for ( const long long step : { 3LL, 1LL } ) // written out of order: steps() sorts
        {
            morula::io::SnapshotFrame frame;
            frame.group( "cells" );
            frame.dataset( "cells/species", species.data(), { 3 } );
            frame.dataset( "words", words.data(), { 2, 2 } );
            frame.attribute( "", "time", 0.25 * double( step ) );
            frame.attribute( "", "step", std::int64_t( step ) );
            frame.attribute( "words", "capacity", std::uint32_t( 8 ) );
            series.append( step, frame );
        }
    }
    const morula::io::SnapshotReader reader( layout );
    EXPECT_EQ( reader.steps(), ( std::vector<long long>{ 1, 3 } ) );
    EXPECT_EQ( reader.read<std::int32_t>( 3, "cells/species" ).values, species );
    const auto w = reader.read<std::uint32_t>( 1, "words" );
    EXPECT_EQ( w.dims, ( std::vector<std::size_t>{ 2, 2 } ) );
    EXPECT_EQ( w.values, words );
    EXPECT_EQ( reader.attribute<double>( 3, "", "time" ), 0.75 );
    EXPECT_EQ( reader.attribute<std::int64_t>( 1, "", "step" ), 1 );
    EXPECT_EQ( reader.attribute<std::uint32_t>( 1, "words", "capacity" ), 8u );
    EXPECT_TRUE( reader.has( 1, "cells" ) );
    EXPECT_TRUE( reader.has( 1, "cells/species" ) );
    EXPECT_FALSE( reader.has( 2, "cells" ) );
    expect_refused<morula::core::InputError>( [&] { reader.read<std::int32_t>( 2, "cells/species" ); },
                                              { path, "no frame at step 2", "/frames/step_0000000002" } );
    expect_refused<morula::core::InputError>( [&] { reader.read<std::int32_t>( 1, "cells" ); },
                                              { path, "is not a dataset" } );
    expect_refused<morula::core::InputError>( [&] { reader.attribute<double>( 1, "words", "capacity" ); },
                                              { path, "capacity", "holds uint32, not float64" } );
    std::remove( path.c_str() );
    // A layout a reader cannot use.
    morula::io::SnapshotLayout bad;
    bad.hdf5 = "x";
    bad.file_per_frame = true;
    bad.frames_group = "frames";
    EXPECT_THROW( morula::io::SnapshotReader r( bad ), morula::core::InputError );
    EXPECT_THROW( morula::io::SnapshotReader r{ std::string() }, morula::core::InputError );
}

} // namespace morula_test_io
