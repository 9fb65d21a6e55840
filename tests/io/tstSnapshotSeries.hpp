#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/SnapshotSeries.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "SnapshotTestUtils.hpp"

namespace morula_test_io_series
{
using namespace morula_test_snapshots;
using morula::io::SnapshotFrame;
using morula::io::SnapshotLayout;
using morula::io::SnapshotOpen;
using morula::io::SnapshotSeries;

std::string folder_for( const char* test )
{
    return std::string( "morula_series_test_" ) + test + "_" + TEST_EXECSPACE::name();
}

// One file `<prefix>.h5` with a group per step, indexed in `<prefix>.xmf`.
SnapshotLayout one_file( const std::string& prefix )
{
    SnapshotLayout layout;
    layout.hdf5 = prefix + ".h5";
    layout.xdmf = prefix + ".xmf";
    layout.collection = "test";
    return layout;
}

// The frame of step `step`: values (step, step + 0.5) at its root, ids (int64) in the subgroup "sub",
// the step and a list of names as attributes.
struct TestFrame
{
    std::vector<double> values;
    std::vector<std::int64_t> ids{ 7, -8000000000123 };
    SnapshotFrame frame;

    explicit TestFrame( long long step )
        : values{ double( step ), step + 0.5 }
    {
        frame.attribute( "", "step", std::int64_t( step ) );
        frame.dataset( "values", values.data(), { 2 } );
        frame.group( "sub" );
        frame.dataset( "sub/ids", ids.data(), { 2, 1 } );
        frame.names( "sub/ids", "names", { "first", "second" } );
    }
};

// The index's grid of a frame: its name, and a data item at the frame's reference.
std::string grid( const SnapshotSeries& series, long long step )
{
    return "   <Grid Name=\"frame " + std::to_string( step ) + "\">" + series.xdmf_reference( step ) +
           "/values</Grid>\n";
}

#if MORULA_HAVE_HDF5
// Group `name` of the file holds the frame of `step`, exactly.
void expect_frame( const std::string& path, const std::string& name, long long step )
{
    SCOPED_TRACE( name );
    H5 file{ open_read_only( path ), H5Fclose };
    ASSERT_GE( file.id, 0 );
    H5 group{ H5Gopen2( file.id, name.c_str(), H5P_DEFAULT ), H5Gclose };
    ASSERT_GE( group.id, 0 );
    EXPECT_EQ( read_scalar_attribute<std::int64_t>( group.id, "step", H5T_INTEGER, H5T_NATIVE_INT64 ), step );
    EXPECT_EQ( read_doubles( group.id, "values", { 2 } ), ( std::vector<double>{ double( step ), step + 0.5 } ) );
    EXPECT_EQ( read_int64( group.id, "sub/ids", { 2, 1 } ), ( std::vector<std::int64_t>{ 7, -8000000000123 } ) );
    H5 ids{ H5Dopen2( group.id, "sub/ids", H5P_DEFAULT ), H5Dclose };
    EXPECT_EQ( read_names( ids.id ), ( std::vector<std::string>{ "first", "second" } ) );
    EXPECT_EQ( links( group.id ), 2u );
}

hsize_t links_at( const std::string& path, const char* group_name )
{
    H5 file{ open_read_only( path ), H5Fclose };
    H5 group{ H5Gopen2( file.id, group_name, H5P_DEFAULT ), H5Gclose };
    return links( group.id );
}
#endif

// Frames are appended as groups named by the step and read back while the series is open (each
// append closes the file); the index lists each frame in order, naming the file relative to itself;
// a step is taken once.
TEST( TEST_CATEGORY, snapshot_series_appends_frames )
{
    const std::string folder = folder_for( "append" );
    if ( !morula::io::hdf5_available() )
    {
        EXPECT_THROW( SnapshotSeries s( one_file( folder + "/run" ) ), morula::core::InputError );
        GTEST_SKIP() << "built without HDF5";
    }
#if MORULA_HAVE_HDF5
    std::filesystem::remove_all( folder );
    std::filesystem::create_directories( folder );
    SnapshotSeries series( one_file( folder + "/run" ) );
    EXPECT_EQ( series.file_of( 3 ), folder + "/run.h5" );
    EXPECT_EQ( series.frame_path( 3 ), "/step_0000000003" );
    EXPECT_EQ( series.xdmf_reference( 3 ), "run.h5:/step_0000000003" );
    EXPECT_EQ( series.xdmf_path(), folder + "/run.xmf" );
    const std::string empty = read_text( series.xdmf_path() );
    EXPECT_NE( empty.find( "<Grid Name=\"test\" GridType=\"Collection\" CollectionType=\"Temporal\">" ),
               std::string::npos )
        << empty;
    EXPECT_NE( empty.find( "<!DOCTYPE Xdmf" ), std::string::npos ) << empty;
    EXPECT_EQ( occurrences( empty, "<Grid " ), 1u ) << empty;

    const TestFrame a( 3 ), b( 12345678901LL );
    series.append( 3, a.frame, grid( series, 3 ) );
    expect_frame( series.file_of( 3 ), "step_0000000003", 3 );
    series.append( 12345678901LL, b.frame, grid( series, 12345678901LL ) );
    expect_frame( series.file_of( 3 ), "step_0000000003", 3 );
    expect_frame( series.file_of( 3 ), "step_12345678901", 12345678901LL );
    EXPECT_EQ( links_at( series.file_of( 3 ), "/" ), 2u );

    try
    {
        series.append( 3, b.frame, grid( series, 3 ) );
        ADD_FAILURE() << "step 3 was taken twice";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "step 3 is already in '" + series.file_of( 3 ) + "'" ),
                   std::string::npos )
            << e.what();
    }
    expect_frame( series.file_of( 3 ), "step_0000000003", 3 );

    const std::string x = read_text( series.xdmf_path() );
    const auto first = x.find( "<Grid Name=\"frame 3\">run.h5:/step_0000000003/values</Grid>\n" );
    const auto second = x.find( "<Grid Name=\"frame 12345678901\">run.h5:/step_12345678901/values</Grid>\n" );
    EXPECT_NE( first, std::string::npos ) << x;
    EXPECT_NE( second, std::string::npos ) << x;
    EXPECT_LT( first, second ) << x;
    EXPECT_EQ( occurrences( x, "<Grid Name=\"frame" ), 2u ) << x;
    EXPECT_EQ( x.find( folder ), std::string::npos ) << "the index must name the HDF5 file relative to itself";
    const std::string footer = "  </Grid>\n </Domain>\n</Xdmf>\n";
    EXPECT_EQ( x.substr( x.size() - footer.size() ), footer ) << x;
    std::filesystem::remove_all( folder );
#endif
}

// A series opened again (a restarted run) appends after the frames it holds, in the file and in the
// index, and still takes each step once; one file per frame and frames in a group work alike.
TEST( TEST_CATEGORY, snapshot_series_reopened_appends )
{
    if ( !morula::io::hdf5_available() )
        GTEST_SKIP() << "built without HDF5";
#if MORULA_HAVE_HDF5
    const std::string folder = folder_for( "reopen" );
    std::filesystem::remove_all( folder );
    std::filesystem::create_directories( folder );
    const TestFrame a( 1 ), b( 2 ), c( 3 );
    {
        SnapshotSeries series( one_file( folder + "/run" ) );
        series.append( 1, a.frame, grid( series, 1 ) );
        series.append( 2, b.frame, grid( series, 2 ) );
    }
    const std::string before = read_text( folder + "/run.xmf" );
    {
        SnapshotSeries series( one_file( folder + "/run" ), SnapshotOpen::append );
        EXPECT_EQ( read_text( series.xdmf_path() ), before ) << "reopening changed the index";
        series.append( 3, c.frame, grid( series, 3 ) );
        EXPECT_THROW( series.append( 2, c.frame, grid( series, 2 ) ), morula::core::InputError );
    }
    for ( long long step : { 1, 2, 3 } )
        expect_frame( folder + "/run.h5", "step_000000000" + std::to_string( step ), step );
    EXPECT_EQ( links_at( folder + "/run.h5", "/" ), 3u );
    const std::string x = read_text( folder + "/run.xmf" );
    EXPECT_EQ( occurrences( x, "<Grid Name=\"frame" ), 3u ) << x;
    EXPECT_LT( x.find( "run.h5:/step_0000000002/" ), x.find( "run.h5:/step_0000000003/" ) ) << x;
    EXPECT_EQ( x.substr( 0, x.find( "   <Grid Name=\"frame 3\">" ) ) + "  </Grid>\n </Domain>\n</Xdmf>\n", before );

    // One file per frame, each frame at its file's root, and an index without the DOCTYPE line.
    SnapshotLayout per_frame;
    per_frame.hdf5 = folder + "/agents";
    per_frame.file_per_frame = true;
    per_frame.xdmf = folder + "/agents.xmf";
    per_frame.collection = "agents";
    per_frame.doctype = false;
    {
        SnapshotSeries series( per_frame );
        EXPECT_EQ( series.file_of( 7 ), folder + "/agents_000007.h5" );
        EXPECT_EQ( series.frame_path( 7 ), "" );
        EXPECT_EQ( series.xdmf_reference( 7 ), "agents_000007.h5:" );
        series.append( 7, a.frame, grid( series, 7 ) );
    }
    {
        SnapshotSeries series( per_frame, SnapshotOpen::append );
        series.append( 8, b.frame, grid( series, 8 ) );
        // Each step once here too: frame 7's file is not replaced.
        EXPECT_THROW( series.append( 7, c.frame, grid( series, 7 ) ), morula::core::InputError );
    }
    expect_frame( folder + "/agents_000007.h5", "/", 1 );
    expect_frame( folder + "/agents_000008.h5", "/", 2 );
    const std::string y = read_text( folder + "/agents.xmf" );
    EXPECT_EQ( y.find( "<!DOCTYPE" ), std::string::npos ) << y;
    EXPECT_LT( y.find( ">agents_000007.h5:/values<" ), y.find( ">agents_000008.h5:/values<" ) ) << y;
    EXPECT_EQ( y.find( folder ), std::string::npos ) << y;

    // Frames in a group, each frame one dataset (as a lattice's): no index.
    SnapshotLayout grouped;
    grouped.hdf5 = folder + "/lattice.h5";
    grouped.frames_group = "snapshots";
    const std::vector<std::uint32_t> words{ 1, 2, 3, 4, 5, 0xffffffffu };
    SnapshotFrame words_frame;
    words_frame.dataset( "", words.data(), { 2, 3 } );
    words_frame.attribute( "", "nx", std::int32_t( 3 ) );
    EXPECT_TRUE( words_frame.is_dataset() );
    {
        SnapshotSeries series( grouped );
        EXPECT_EQ( series.frame_path( 5 ), "/snapshots/step_0000000005" );
        EXPECT_EQ( series.xdmf_path(), "" );
        series.append( 5, words_frame );
    }
    {
        SnapshotSeries series( grouped, SnapshotOpen::append );
        series.append( 6, words_frame );
        EXPECT_THROW( series.append( 5, words_frame ), morula::core::InputError );
    }
    {
        H5 file{ open_read_only( grouped.hdf5 ), H5Fclose };
        for ( const char* name : { "/snapshots/step_0000000005", "/snapshots/step_0000000006" } )
        {
            EXPECT_EQ( read_uint32( file.id, name, { 2, 3 } ), words ) << name;
            H5 set{ H5Dopen2( file.id, name, H5P_DEFAULT ), H5Dclose };
            EXPECT_EQ( read_scalar_attribute<std::int32_t>( set.id, "nx", H5T_INTEGER, H5T_NATIVE_INT32 ), 3 );
        }
    }
    EXPECT_EQ( links_at( grouped.hdf5, "/snapshots" ), 2u );
    EXPECT_FALSE( std::filesystem::exists( folder + "/lattice.xmf" ) );
    std::filesystem::remove_all( folder );
#endif
}

// A restarted run resumes its series after the checkpoint's step: frames written after it (by the run
// that was killed later) leave the file and the index, and the steps after it can be written again.
// With no series there (snapshots switched on at the restart), resuming starts one.
TEST( TEST_CATEGORY, snapshot_series_resume_drops_later_frames )
{
    if ( !morula::io::hdf5_available() )
        GTEST_SKIP() << "built without HDF5";
#if MORULA_HAVE_HDF5
    const std::string folder = folder_for( "resume" );
    std::filesystem::remove_all( folder );
    std::filesystem::create_directories( folder );
    const TestFrame f10( 10 ), f20( 20 ), f30( 30 ), f40( 40 ), again30( 300 );
    SnapshotLayout per_frame;
    per_frame.hdf5 = folder + "/agents";
    per_frame.file_per_frame = true;
    per_frame.xdmf = folder + "/agents.xmf";
    per_frame.collection = "agents";
    SnapshotLayout grouped;
    grouped.hdf5 = folder + "/lattice.h5";
    grouped.frames_group = "snapshots";
    for ( const auto& layout : { one_file( folder + "/run" ), per_frame, grouped } )
    {
        SCOPED_TRACE( layout.hdf5 );
        {
            SnapshotSeries series( layout );
            for ( const auto* f : { &f10, &f20, &f30, &f40 } )
            {
                const auto step = static_cast<long long>( f->values[0] );
                series.append( step, f->frame, layout.xdmf.empty() ? "" : grid( series, step ) );
            }
        }
        SnapshotSeries series( layout, SnapshotOpen::resume, 20 );
        series.append( 30, again30.frame, layout.xdmf.empty() ? "" : grid( series, 30 ) );
        if ( layout.file_per_frame )
        {
            expect_frame( series.file_of( 10 ), "/", 10 );
            expect_frame( series.file_of( 20 ), "/", 20 );
            expect_frame( series.file_of( 30 ), "/", 300 );
            EXPECT_FALSE( std::filesystem::exists( series.file_of( 40 ) ) );
            EXPECT_FALSE( std::filesystem::exists( series.file_of( 30 ) + ".tmp" ) );
        }
        else if ( layout.frames_group.empty() )
        {
            expect_frame( layout.hdf5, "step_0000000010", 10 );
            expect_frame( layout.hdf5, "step_0000000020", 20 );
            expect_frame( layout.hdf5, "step_0000000030", 300 );
            EXPECT_EQ( links_at( layout.hdf5, "/" ), 3u );
        }
        else
            EXPECT_EQ( links_at( layout.hdf5, "/snapshots" ), 3u );
        if ( !layout.xdmf.empty() )
        {
            const std::string x = read_text( layout.xdmf );
            EXPECT_EQ( occurrences( x, "<Grid Name=\"frame" ), 3u ) << x;
            EXPECT_NE( x.find( "<Grid Name=\"frame 20\">" ), std::string::npos ) << x;
            EXPECT_EQ( x.find( "<Grid Name=\"frame 40\">" ), std::string::npos ) << x;
            EXPECT_LT( x.find( "<Grid Name=\"frame 20\">" ), x.find( "<Grid Name=\"frame 30\">" ) ) << x;
            EXPECT_FALSE( std::filesystem::exists( layout.xdmf + ".tmp" ) );
        }
    }
    // Nothing to resume: a new series.
    {
        SnapshotSeries series( one_file( folder + "/fresh" ), SnapshotOpen::resume, 5 );
        series.append( 6, f10.frame, grid( series, 6 ) );
    }
    EXPECT_EQ( links_at( folder + "/fresh.h5", "/" ), 1u );
    EXPECT_THROW( SnapshotSeries( one_file( folder + "/fresh" ), SnapshotOpen::resume, -1 ), morula::core::InputError );
    std::filesystem::remove_all( folder );
#endif
}

// A file that cannot be written, or a series that is not there to continue: core::IoError naming the
// file, with nothing on stderr (HDF5 printed its own error stack first); an index that is not one a
// series wrote, or one in another folder than its files: core::InputError.
TEST( TEST_CATEGORY, snapshot_series_errors )
{
    if ( !morula::io::hdf5_available() )
        GTEST_SKIP() << "built without HDF5";
#if MORULA_HAVE_HDF5
    auto expect_io_error = [&]( const SnapshotLayout& layout, SnapshotOpen open, const std::string& named ) {
        testing::internal::CaptureStderr();
        try
        {
            SnapshotSeries series( layout, open );
            TestFrame frame( 0 );
            series.append( 0, frame.frame, grid( series, 0 ) );
            ADD_FAILURE() << "no error for " << named;
        }
        catch ( const morula::core::IoError& e )
        {
            EXPECT_NE( std::string( e.what() ).find( named ), std::string::npos ) << e.what();
        }
        const std::string printed = testing::internal::GetCapturedStderr();
        EXPECT_EQ( printed.find( "HDF5-DIAG" ), std::string::npos ) << printed;
        EXPECT_TRUE( printed.empty() ) << printed;
    };
    expect_io_error( one_file( "morula_no_such_folder/run" ), SnapshotOpen::create, "morula_no_such_folder/run.h5" );
    auto no_index = one_file( "morula_no_such_folder/run" );
    no_index.xdmf.clear();
    expect_io_error( no_index, SnapshotOpen::create, "morula_no_such_folder/run.h5" );
    expect_io_error( no_index, SnapshotOpen::append, "morula_no_such_folder/run.h5" );
    SnapshotLayout per_frame;
    per_frame.hdf5 = "morula_no_such_folder/agents";
    per_frame.file_per_frame = true;
    // One file per frame: the missing folder is reported when the series opens, before any frame.
    const std::string no_folder =
        "morula_no_such_folder/agents_000000.h5': the folder 'morula_no_such_folder' does not exist";
    expect_io_error( per_frame, SnapshotOpen::create, no_folder );
    per_frame.xdmf = "morula_no_such_folder/agents.xmf";
    expect_io_error( per_frame, SnapshotOpen::create, no_folder );

    const std::string folder = folder_for( "errors" );
    std::filesystem::remove_all( folder );
    std::filesystem::create_directories( folder );
    // Continuing a series whose HDF5 file is gone.
    {
        SnapshotSeries series( one_file( folder + "/gone" ) );
    }
    std::filesystem::remove( folder + "/gone.h5" );
    expect_io_error( one_file( folder + "/gone" ), SnapshotOpen::append, folder + "/gone.h5" );

    // An index some other program wrote is not continued (its frames would be lost).
    {
        SnapshotSeries series( one_file( folder + "/other" ) );
    }
    std::ofstream( folder + "/other.xmf" ) << "<Xdmf/>\n";
    EXPECT_THROW( SnapshotSeries( one_file( folder + "/other" ), SnapshotOpen::append ), morula::core::InputError );

    auto elsewhere = one_file( folder + "/run" );
    elsewhere.xdmf = "run.xmf";
    EXPECT_THROW( SnapshotSeries s( elsewhere ), morula::core::InputError );
    std::filesystem::remove_all( folder );
#endif
}

} // namespace morula_test_io_series
