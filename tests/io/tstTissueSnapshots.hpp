#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/TissueSnapshots.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "SnapshotTestUtils.hpp"

namespace morula_test_io_tissue
{
using namespace morula_test_snapshots;

// Three cells of 3, 2 and 2 elements with two species, and a step with no cells at all.
morula::io::TissueFrame frame_with_species()
{
    morula::io::TissueFrame f;
    f.step = 10;
    f.time = 0.1;
    f.positions = { 0.5, 1.25, 0.0, 0.75, 1.0, 0.125, 1.0 / 3, 1.5, 0.25, 2.0, 2.0, 1.0,
                    2.25, 2.5, 1.5, -1.0, 3.0, 2.0, -1.5, 3.5, 2.75 };
    f.cell = { 0, 0, 0, 1, 1, 2, 2 };
    f.type = { 1, 1, 0, 0, 1, 0, 0 };
    f.state = { 0, 0, 0, 0, 0, 1, 1 };
    f.cell_centres = { 0.5, 1.25, 0.125, 2.125, 2.25, 1.25, -1.25, 3.25, 2.375 };
    f.cell_elements = { 3, 2, 2 };
    f.cell_state = { 0, 0, 1 };
    f.species_count = 2;
    f.species = { 1.0, 0.5, 2.0, 1e-12, 0.0, 3.75 };
    f.species_names = { "KLF4", "Notch signal" };
    return f;
}

morula::io::TissueFrame empty_frame()
{
    morula::io::TissueFrame f;
    f.step = 11;
    f.time = 0.30000000000000004; // needs 17 digits to read back
    return f;
}

#if MORULA_HAVE_HDF5
// Every dataset and attribute of the frame's file (its root group) equals the frame's arrays exactly.
void expect_group_equals( const std::string& path, const morula::io::TissueFrame& f )
{
    const std::string group_name = "/";
    H5 file{ H5Fopen( path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT ), H5Fclose };
    ASSERT_GE( file.id, 0 ) << path;
    H5 group{ H5Gopen2( file.id, group_name.c_str(), H5P_DEFAULT ), H5Gclose };
    ASSERT_GE( group.id, 0 ) << group_name;
    EXPECT_EQ( read_scalar_attribute<std::int64_t>( group.id, "step", H5T_INTEGER, H5T_NATIVE_INT64 ), f.step );
    EXPECT_EQ( read_scalar_attribute<double>( group.id, "time", H5T_FLOAT, H5T_NATIVE_DOUBLE ), f.time );
    const hsize_t n = f.elements(), m = f.cells();
    EXPECT_EQ( read_dataset<double>( group.id, "positions", { n, 3 }, H5T_FLOAT, H5T_NATIVE_DOUBLE ), f.positions );
    EXPECT_EQ( read_dataset<std::int32_t>( group.id, "cell", { n }, H5T_INTEGER, H5T_NATIVE_INT32 ), f.cell );
    EXPECT_EQ( read_dataset<std::int32_t>( group.id, "type", { n }, H5T_INTEGER, H5T_NATIVE_INT32 ), f.type );
    EXPECT_EQ( read_dataset<std::int32_t>( group.id, "state", { n }, H5T_INTEGER, H5T_NATIVE_INT32 ), f.state );
    std::vector<std::int32_t> index( n );
    for ( std::size_t i = 0; i < n; ++i )
        index[i] = std::int32_t( i );
    EXPECT_EQ( read_dataset<std::int32_t>( group.id, "element_index", { n }, H5T_INTEGER, H5T_NATIVE_INT32 ), index );
    EXPECT_EQ( read_dataset<double>( group.id, "cell_centres", { m, 3 }, H5T_FLOAT, H5T_NATIVE_DOUBLE ),
               f.cell_centres );
    EXPECT_EQ( read_dataset<std::int32_t>( group.id, "cell_elements", { m }, H5T_INTEGER, H5T_NATIVE_INT32 ),
               f.cell_elements );
    EXPECT_EQ( read_dataset<std::int32_t>( group.id, "cell_state", { m }, H5T_INTEGER, H5T_NATIVE_INT32 ),
               f.cell_state );
    if ( f.species_count > 0 )
    {
        EXPECT_EQ( read_dataset<double>( group.id, "species", { m, hsize_t( f.species_count ) }, H5T_FLOAT,
                                         H5T_NATIVE_DOUBLE ),
                   f.species );
        H5 set{ H5Dopen2( group.id, "species", H5P_DEFAULT ), H5Dclose };
        EXPECT_EQ( read_names( set.id ), f.species_names );
    }
    else
        EXPECT_EQ( H5Lexists( group.id, "species", H5P_DEFAULT ), 0 );
    H5G_info_t info;
    H5Gget_info( group.id, &info );
    EXPECT_EQ( info.nlinks, f.species_count > 0 ? 9u : 8u );
}
#endif

// Two steps (one with species, one without elements) read back exactly, each from its own file, the
// XDMF index names both files by their own names, a step cannot be written twice, a frame's file is
// never touched again once written, and a new series removes the frame files of an earlier one.
TEST( TEST_CATEGORY, tissue_snapshots_round_trip )
{
    const std::string folder = std::string( "morula_tissue_test_" ) + TEST_EXECSPACE::name();
    const std::string prefix = folder + "/frames";
    if ( !morula::io::tissue_snapshots_available() )
    {
        EXPECT_THROW( morula::io::TissueSnapshotWriter w( prefix ), morula::core::InputError );
        GTEST_SKIP() << "built without HDF5";
    }
#if MORULA_HAVE_HDF5
    std::filesystem::remove_all( folder );
    std::filesystem::create_directories( folder );
    const auto a = frame_with_species();
    const auto b = empty_frame();
    morula::io::TissueSnapshotWriter writer( prefix );
    EXPECT_EQ( writer.hdf5_file( 10 ), prefix + "_000010.h5" );
    EXPECT_EQ( writer.hdf5_file( 1234567 ), prefix + "_1234567.h5" );
    EXPECT_EQ( writer.xdmf_path(), prefix + ".xmf" );
    EXPECT_EQ( read_text( writer.xdmf_path() ).find( "<Grid Name=\"step_" ), std::string::npos );
    writer.write( a );
    const std::string first_bytes = read_text( writer.hdf5_file( 10 ) );
    writer.write( b );
    // Read while the writer still exists: each write closes its file.
    expect_group_equals( writer.hdf5_file( 10 ), a );
    expect_group_equals( writer.hdf5_file( 11 ), b );
    // A run killed while it writes a frame cannot damage the frames before: they are not reopened.
    EXPECT_EQ( read_text( writer.hdf5_file( 10 ) ), first_bytes );

    try
    {
        writer.write( a );
        ADD_FAILURE() << "writing step 10 twice was accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "step 10 is already in '" + writer.hdf5_file( 10 ) + "'" ),
                   std::string::npos )
            << e.what();
    }
    auto bad = a;
    bad.step = 12;
    bad.state.pop_back();
    EXPECT_THROW( writer.write( bad ), morula::core::InputError );
    expect_group_equals( writer.hdf5_file( 10 ), a );
    EXPECT_FALSE( std::filesystem::exists( writer.hdf5_file( 12 ) ) );
    EXPECT_FALSE( std::filesystem::exists( writer.hdf5_file( 12 ) + ".tmp" ) );

    const std::string x = read_text( writer.xdmf_path() );
    EXPECT_NE( x.find( "CollectionType=\"Temporal\"" ), std::string::npos );
    EXPECT_NE( x.find( "<Time Value=\"0.1\"/>" ), std::string::npos ) << x;
    EXPECT_NE( x.find( "<Time Value=\"0.30000000000000004\"/>" ), std::string::npos ) << x;
    EXPECT_NE( x.find( "TopologyType=\"Polyvertex\" NumberOfElements=\"7\"" ), std::string::npos );
    EXPECT_NE( x.find( "TopologyType=\"Polyvertex\" NumberOfElements=\"0\"" ), std::string::npos );
    EXPECT_NE( x.find( "<Grid Name=\"step_0000000010\"" ), std::string::npos ) << x;
    EXPECT_NE( x.find( ">frames_000010.h5:/positions</DataItem>" ), std::string::npos ) << x;
    EXPECT_NE( x.find( ">frames_000011.h5:/positions</DataItem>" ), std::string::npos ) << x;
    EXPECT_NE( x.find( "<DataItem Dimensions=\"7\" NumberType=\"Int\" Precision=\"4\" "
                       "Format=\"HDF\">frames_000010.h5:/element_index</DataItem>" ),
               std::string::npos )
        << x;
    for ( const char* name : { "cell", "type", "state" } )
        EXPECT_NE( x.find( std::string( "Precision=\"4\" Format=\"HDF\">frames_000010.h5:/" ) + name +
                           "</DataItem>" ),
                   std::string::npos )
            << name;
    EXPECT_EQ( x.find( folder ), std::string::npos ) << "the XDMF file must name the HDF5 file relative to itself";
    EXPECT_EQ( x.find( "step_0000000012" ), std::string::npos );

    // A new series under the same prefix: the earlier frames and a temporary a killed run left are
    // removed (they would otherwise be mistaken for this series' frames), files of other names stay.
    std::ofstream( writer.hdf5_file( 13 ) + ".tmp" ) << "partial";
    std::ofstream( folder + "/frames_notes.h5" ) << "not a frame";
    morula::io::TissueSnapshotWriter again( prefix );
    EXPECT_FALSE( std::filesystem::exists( writer.hdf5_file( 10 ) ) );
    EXPECT_FALSE( std::filesystem::exists( writer.hdf5_file( 11 ) ) );
    EXPECT_FALSE( std::filesystem::exists( writer.hdf5_file( 13 ) + ".tmp" ) );
    EXPECT_TRUE( std::filesystem::exists( folder + "/frames_notes.h5" ) );
    again.write( a ); // step 10 again, now in a new series
    expect_group_equals( again.hdf5_file( 10 ), a );
    std::filesystem::remove_all( folder );
#endif
}

TEST( TEST_CATEGORY, tissue_snapshots_cannot_create )
{
    if ( !morula::io::tissue_snapshots_available() )
        GTEST_SKIP() << "built without HDF5";
    // An IoError naming the file, and nothing else on stderr (HDF5 printed its own error stack first).
    testing::internal::CaptureStderr();
    try
    {
        morula::io::TissueSnapshotWriter writer( "morula_no_such_folder/frames" );
        ADD_FAILURE() << "a file in a missing folder was created";
    }
    catch ( const morula::core::IoError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "morula_no_such_folder/frames" ), std::string::npos ) << e.what();
    }
    const std::string printed = testing::internal::GetCapturedStderr();
    EXPECT_EQ( printed.find( "HDF5-DIAG" ), std::string::npos ) << printed;
    EXPECT_TRUE( printed.empty() ) << printed;
}

// Each inconsistency is reported with the field's name and the sizes found and expected.
TEST( TEST_CATEGORY, tissue_frame_validate )
{
    const auto good = frame_with_species();
    EXPECT_NO_THROW( good.validate( "test" ) );
    EXPECT_NO_THROW( empty_frame().validate( "test" ) );
    EXPECT_EQ( good.elements(), 7u );
    EXPECT_EQ( good.cells(), 3u );
    auto no_names = good;
    no_names.species.clear();
    no_names.species_count = 0;
    no_names.species_names.clear();
    EXPECT_NO_THROW( no_names.validate( "test" ) );

    auto expect_message = [&]( morula::io::TissueFrame f, const std::vector<std::string>& parts ) {
        try
        {
            f.validate( "where" );
            ADD_FAILURE() << "accepted; expected: " << parts[0];
        }
        catch ( const morula::core::InputError& e )
        {
            const std::string what = e.what();
            EXPECT_EQ( what.rfind( "where: ", 0 ), 0u ) << what;
            for ( const auto& p : parts )
                EXPECT_NE( what.find( p ), std::string::npos ) << "'" << p << "' not in: " << what;
        }
    };
    auto f = good;
    f.positions.pop_back();
    expect_message( f, { "'positions'", "20 values", "multiple of 3" } );
    f = good;
    f.type.pop_back();
    expect_message( f, { "'type'", "has 6 values, expected 7" } );
    f = good;
    f.cell.push_back( 0 );
    expect_message( f, { "'cell'", "has 8 values, expected 7" } );
    f = good;
    f.state.clear();
    expect_message( f, { "'state'", "has 0 values, expected 7" } );
    f = good;
    f.cell_centres.resize( 8 );
    expect_message( f, { "'cell_centres'", "has 8 values, expected 9" } );
    f = good;
    f.cell_state.push_back( 1 );
    expect_message( f, { "'cell_state'", "has 4 values, expected 3" } );
    f = good;
    f.species.pop_back();
    expect_message( f, { "'species'", "has 5 values, expected 6" } );
    f = good;
    f.species_count = 3;
    expect_message( f, { "'species'", "has 6 values, expected 9" } );
    f = good;
    f.species_names.pop_back();
    expect_message( f, { "'species_names'", "has 1 values, expected 2" } );
    f = good;
    f.species_count = -1;
    expect_message( f, { "'species_count'", "-1" } );
    f = good;
    f.cell[4] = 3;
    expect_message( f, { "'cell'[4] = 3", "[0, 3)" } );
}

} // namespace morula_test_io_tissue
