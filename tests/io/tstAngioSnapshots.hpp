#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/AngioSnapshots.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include "SnapshotTestUtils.hpp"

namespace morula_test_io_angio
{
using namespace morula_test_snapshots;

// Three cells (new, hypoxic, dead) and a vessel of two tubes: the inlet and a growing sprout off it.
morula::io::AngioFrame tumour_and_vessel()
{
    morula::io::AngioFrame f;
    f.step = 5;
    f.time = 0.25;
    f.cell_positions = { 10.5, 20.25, -3.0, 1.0 / 3, 40.0, 5.125, -7.75, 0.0, 1e-9 };
    f.cell_radius = { 5.0, 5.5, 4.75 };
    f.cell_age = { 0.0, 12.5, 30.125 };
    f.cell_oxygen = { 0.9, 0.05, 0.0 };
    f.cell_taf = { 0.0, 0.75, 1.0 / 7 };
    f.cell_pressure = { 1.5, -0.25, 2e-12 };
    f.cell_state = { 0, 2, 3 };
    f.cell_id = { 7, 8000000000123, -1 };
    f.tube_end_a = { 0.0, 0.0, 0.0, 50.0, 0.0, 0.0 };
    f.tube_end_b = { 50.0, 0.0, 0.0, 60.0, 10.0, 1.0 / 3 };
    f.tube_radius_a = { 8.0, 3.0 };
    f.tube_radius_b = { 7.5, 2.0 };
    f.tube_flow = { 1.25, 0.0625 };
    f.tube_blood_oxygen = { 1.0, 0.875 };
    f.tube_delivered = { 0.125, 1e-7 };
    f.tube_taf = { 0.0, 0.5 };
    f.tube_parent = { -1, 0 };
    f.tube_flags = { 0, morula::io::angio_tube_tip | morula::io::angio_tube_sprouted };
    f.tube_id = { 100, 4000000000001 };
    return f;
}

// Two cells and no vessel at all.
morula::io::AngioFrame cells_only()
{
    morula::io::AngioFrame f;
    f.step = 6;
    f.time = 0.30000000000000004; // needs 17 digits to read back
    f.cell_positions = { 1.0, 2.0, 3.0, -4.0, -5.0, -6.5 };
    f.cell_radius = { 5.0, 6.0 };
    f.cell_age = { 1.0, 2.0 };
    f.cell_oxygen = { 0.5, 0.25 };
    f.cell_taf = { 0.0, 0.0 };
    f.cell_pressure = { 0.0, 3.0 };
    f.cell_state = { 1, 1 };
    f.cell_id = { 1, 2 };
    return f;
}

// No cells, three tubes: an inlet with two branches, one of them anastomosed.
morula::io::AngioFrame vessels_only()
{
    morula::io::AngioFrame f;
    f.step = 1234567;
    f.time = 1.5;
    f.tube_end_a = { 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 10.0, 0.0, 0.0 };
    f.tube_end_b = { 10.0, 0.0, 0.0, 20.0, 5.0, 0.0, 20.0, -5.0, 2.5 };
    f.tube_radius_a = { 6.0, 4.0, 4.5 };
    f.tube_radius_b = { 5.0, 3.5, 4.25 };
    f.tube_flow = { 2.0, 1.0, 1.0 };
    f.tube_blood_oxygen = { 1.0, 0.9, 0.8 };
    f.tube_delivered = { 0.1, 0.2, 0.3 };
    f.tube_taf = { 0.01, 0.02, 0.03 };
    f.tube_parent = { -1, 0, 0 };
    f.tube_flags = { 0, morula::io::angio_tube_sprouted, morula::io::angio_tube_anastomosed };
    f.tube_id = { 1, 2, 3 };
    return f;
}

#if MORULA_HAVE_HDF5
// Every dataset and attribute of the frame's file (its root group) equals the frame's arrays exactly,
// and nothing else is there.
void expect_group_equals( const std::string& path, const morula::io::AngioFrame& f )
{
    const std::string group_name = "/";
    SCOPED_TRACE( path );
    H5 file{ H5Fopen( path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT ), H5Fclose };
    ASSERT_GE( file.id, 0 ) << path;
    H5 group{ H5Gopen2( file.id, group_name.c_str(), H5P_DEFAULT ), H5Gclose };
    ASSERT_GE( group.id, 0 ) << group_name;
    EXPECT_EQ( read_scalar_attribute<std::int64_t>( group.id, "step", H5T_INTEGER, H5T_NATIVE_INT64 ), f.step );
    EXPECT_EQ( read_scalar_attribute<double>( group.id, "time", H5T_FLOAT, H5T_NATIVE_DOUBLE ), f.time );
    EXPECT_EQ( links( group.id ), 2u );

    const hsize_t n = f.cells(), m = f.tubes();
    H5 cells{ H5Gopen2( group.id, "cells", H5P_DEFAULT ), H5Gclose };
    ASSERT_GE( cells.id, 0 );
    EXPECT_EQ( read_doubles( cells.id, "positions", { n, 3 } ), f.cell_positions );
    EXPECT_EQ( read_doubles( cells.id, "radius", { n } ), f.cell_radius );
    EXPECT_EQ( read_doubles( cells.id, "age", { n } ), f.cell_age );
    EXPECT_EQ( read_doubles( cells.id, "oxygen", { n } ), f.cell_oxygen );
    EXPECT_EQ( read_doubles( cells.id, "taf", { n } ), f.cell_taf );
    EXPECT_EQ( read_doubles( cells.id, "pressure", { n } ), f.cell_pressure );
    EXPECT_EQ( read_int32( cells.id, "state", { n } ), f.cell_state );
    EXPECT_EQ( read_int64( cells.id, "id", { n } ), f.cell_id );
    std::vector<std::int32_t> index( n );
    for ( std::size_t i = 0; i < n; ++i )
        index[i] = std::int32_t( i );
    EXPECT_EQ( read_int32( cells.id, "index", { n } ), index );
    EXPECT_EQ( links( cells.id ), 9u );

    H5 tubes{ H5Gopen2( group.id, "tubes", H5P_DEFAULT ), H5Gclose };
    ASSERT_GE( tubes.id, 0 );
    std::vector<double> points, radius;
    std::vector<std::int32_t> connectivity;
    for ( std::size_t t = 0; t < m; ++t )
    {
        points.insert( points.end(), f.tube_end_a.begin() + 3 * t, f.tube_end_a.begin() + 3 * t + 3 );
        points.insert( points.end(), f.tube_end_b.begin() + 3 * t, f.tube_end_b.begin() + 3 * t + 3 );
        radius.insert( radius.end(), { f.tube_radius_a[t], f.tube_radius_b[t] } );
        connectivity.insert( connectivity.end(), { std::int32_t( 2 * t ), std::int32_t( 2 * t + 1 ) } );
    }
    EXPECT_EQ( read_doubles( tubes.id, "points", { 2 * m, 3 } ), points );
    EXPECT_EQ( read_doubles( tubes.id, "radius", { 2 * m } ), radius );
    EXPECT_EQ( read_doubles( tubes.id, "radius_a", { m } ), f.tube_radius_a );
    EXPECT_EQ( read_doubles( tubes.id, "radius_b", { m } ), f.tube_radius_b );
    EXPECT_EQ( read_doubles( tubes.id, "flow", { m } ), f.tube_flow );
    EXPECT_EQ( read_doubles( tubes.id, "blood_oxygen", { m } ), f.tube_blood_oxygen );
    EXPECT_EQ( read_doubles( tubes.id, "delivered", { m } ), f.tube_delivered );
    EXPECT_EQ( read_doubles( tubes.id, "taf", { m } ), f.tube_taf );
    EXPECT_EQ( read_int32( tubes.id, "parent", { m } ), f.tube_parent );
    EXPECT_EQ( read_int32( tubes.id, "flags", { m } ), f.tube_flags );
    EXPECT_EQ( read_int64( tubes.id, "id", { m } ), f.tube_id );
    EXPECT_EQ( read_int32( tubes.id, "connectivity", { m, 2 } ), connectivity );
    EXPECT_EQ( links( tubes.id ), 12u );
}
#endif

// Three steps (one without tubes, one without cells) read back exactly, each from its own file, the XDMF
// index lists each as a spatial collection of a cells grid and a tubes grid naming its file by its own
// name, a step cannot be written twice and a frame's file is never touched again once written.
TEST( TEST_CATEGORY, angio_snapshots_round_trip )
{
    const std::string folder = std::string( "morula_angio_test_" ) + TEST_EXECSPACE::name();
    const std::string prefix = folder + "/frames";
    if ( !morula::io::angio_snapshots_available() )
    {
        EXPECT_THROW( morula::io::AngioSnapshotWriter w( prefix ), morula::core::InputError );
        GTEST_SKIP() << "built without HDF5";
    }
#if MORULA_HAVE_HDF5
    std::filesystem::remove_all( folder );
    std::filesystem::create_directories( folder );
    const auto a = tumour_and_vessel();
    const auto b = cells_only();
    const auto c = vessels_only();
    morula::io::AngioSnapshotWriter writer( prefix );
    EXPECT_EQ( writer.hdf5_file( 5 ), prefix + "_000005.h5" );
    EXPECT_EQ( writer.xdmf_path(), prefix + ".xmf" );
    EXPECT_EQ( read_text( writer.xdmf_path() ).find( "<Grid Name=\"step_" ), std::string::npos );
    writer.write( a );
    EXPECT_EQ( occurrences( read_text( writer.xdmf_path() ), "<Grid Name=\"step_0000000005\"" ), 1u );
    const std::string first_bytes = read_text( writer.hdf5_file( 5 ) );
    writer.write( b );
    writer.write( c );
    // Read while the writer still exists: each write closes its file.
    expect_group_equals( writer.hdf5_file( 5 ), a );
    expect_group_equals( writer.hdf5_file( 6 ), b );
    expect_group_equals( writer.hdf5_file( 1234567 ), c );
    EXPECT_EQ( read_text( writer.hdf5_file( 5 ) ), first_bytes ) << "a frame's file was rewritten";

    try
    {
        writer.write( b );
        ADD_FAILURE() << "writing step 6 twice was accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "step 6 is already in '" + writer.hdf5_file( 6 ) + "'" ),
                   std::string::npos )
            << e.what();
    }
    auto bad = a;
    bad.step = 8;
    bad.tube_flow.pop_back();
    EXPECT_THROW( writer.write( bad ), morula::core::InputError );
    expect_group_equals( writer.hdf5_file( 6 ), b );
    // The three frames' files and the index, nothing else (no temporary left, no file for step 8).
    EXPECT_EQ( std::distance( std::filesystem::directory_iterator( folder ), std::filesystem::directory_iterator() ),
               4 );

    const std::string x = read_text( writer.xdmf_path() );
    EXPECT_EQ( occurrences( x, "CollectionType=\"Temporal\"" ), 1u ) << x;
    EXPECT_EQ( occurrences( x, "GridType=\"Collection\" CollectionType=\"Spatial\"" ), 3u ) << x;
    EXPECT_EQ( occurrences( x, "<Grid Name=\"cells\" GridType=\"Uniform\">" ), 3u ) << x;
    EXPECT_EQ( occurrences( x, "<Grid Name=\"tubes\" GridType=\"Uniform\">" ), 3u ) << x;
    EXPECT_EQ( occurrences( x, "<Time Value=" ), 3u ) << x;
    EXPECT_EQ( occurrences( x, "<Grid " ), 1u + 3 * 3 ) << x;
    EXPECT_EQ( occurrences( x, "</Grid>" ), 1u + 3 * 3 ) << x;
    EXPECT_NE( x.find( "<Time Value=\"0.25\"/>" ), std::string::npos ) << x;
    EXPECT_NE( x.find( "<Time Value=\"0.30000000000000004\"/>" ), std::string::npos ) << x;
    EXPECT_NE( x.find( "<Time Value=\"1.5\"/>" ), std::string::npos ) << x;
    // Counts: 3 cells and 2 tubes, 2 cells and no tubes, no cells and 3 tubes.
    for ( const char* count : { "3", "2", "0" } )
        EXPECT_NE( x.find( std::string( "TopologyType=\"Polyvertex\" NumberOfElements=\"" ) + count +
                           "\" NodesPerElement=\"1\"" ),
                   std::string::npos )
            << count;
    for ( const char* count : { "2", "0", "3" } )
        EXPECT_NE( x.find( std::string( "TopologyType=\"Polyline\" NumberOfElements=\"" ) + count +
                           "\" NodesPerElement=\"2\"" ),
                   std::string::npos )
            << count;
    // The order within a step: the cells grid, then the tubes grid, each with its own arrays.
    const std::string a_cells = "frames_000005.h5:/cells/", a_tubes = "frames_000005.h5:/tubes/";
    const auto tubes_at = x.find( "<Grid Name=\"tubes\"" );
    EXPECT_LT( x.find( "<Grid Name=\"cells\"" ), tubes_at );
    EXPECT_LT( x.find( a_cells + "positions" ), tubes_at );
    EXPECT_GT( x.find( a_tubes + "points" ), tubes_at );
    EXPECT_NE( x.find( "<DataItem Dimensions=\"3\" NumberType=\"Int\" Precision=\"4\" Format=\"HDF\">" + a_cells +
                       "index</DataItem>" ),
               std::string::npos )
        << x;
    EXPECT_NE( x.find( "<DataItem Dimensions=\"3 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" + a_cells +
                       "positions</DataItem>" ),
               std::string::npos )
        << x;
    EXPECT_NE( x.find( "<DataItem Dimensions=\"2 2\" NumberType=\"Int\" Precision=\"4\" Format=\"HDF\">" + a_tubes +
                       "connectivity</DataItem>" ),
               std::string::npos )
        << x;
    EXPECT_NE( x.find( "<DataItem Dimensions=\"4 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" + a_tubes +
                       "points</DataItem>" ),
               std::string::npos )
        << x;
    auto expect_attribute = [&]( const std::string& where, const std::string& name, const char* center,
                                 const std::string& dims, const char* type, const char* precision ) {
        const std::string text = "<Attribute Name=\"" + name + "\" AttributeType=\"Scalar\" Center=\"" + center +
                                 "\">\n      <DataItem Dimensions=\"" + dims + "\" NumberType=\"" + type +
                                 "\" Precision=\"" + precision + "\" Format=\"HDF\">" + where + name + "</DataItem>";
        EXPECT_NE( x.find( text ), std::string::npos ) << text << "\nnot in:\n" << x;
    };
    for ( const char* name : { "radius", "age", "oxygen", "taf", "pressure" } )
        expect_attribute( a_cells, name, "Node", "3", "Float", "8" );
    expect_attribute( a_cells, "state", "Node", "3", "Int", "4" );
    expect_attribute( a_cells, "id", "Node", "3", "Int", "8" );
    expect_attribute( a_tubes, "radius", "Node", "4", "Float", "8" );
    for ( const char* name : { "radius_a", "radius_b", "flow", "blood_oxygen", "delivered", "taf" } )
        expect_attribute( a_tubes, name, "Cell", "2", "Float", "8" );
    expect_attribute( a_tubes, "parent", "Cell", "2", "Int", "4" );
    expect_attribute( a_tubes, "flags", "Cell", "2", "Int", "4" );
    expect_attribute( a_tubes, "id", "Cell", "2", "Int", "8" );
    expect_attribute( "frames_1234567.h5:/tubes/", "radius", "Node", "6", "Float", "8" );
    expect_attribute( "frames_1234567.h5:/cells/", "radius", "Node", "0", "Float", "8" );
    expect_attribute( "frames_000006.h5:/tubes/", "flow", "Cell", "0", "Float", "8" );
    EXPECT_EQ( x.find( folder ), std::string::npos ) << "the XDMF file must name the HDF5 file relative to itself";
    EXPECT_EQ( x.find( "step_0000000008" ), std::string::npos );
    std::filesystem::remove_all( folder );
#endif
}

TEST( TEST_CATEGORY, angio_snapshots_cannot_create )
{
    if ( !morula::io::angio_snapshots_available() )
        GTEST_SKIP() << "built without HDF5";
    // An IoError naming the file, and nothing else on stderr (HDF5 printed its own error stack first).
    testing::internal::CaptureStderr();
    try
    {
        morula::io::AngioSnapshotWriter writer( "morula_no_such_folder/angio" );
        ADD_FAILURE() << "a file in a missing folder was created";
    }
    catch ( const morula::core::IoError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "morula_no_such_folder/angio" ), std::string::npos ) << e.what();
    }
    const std::string printed = testing::internal::GetCapturedStderr();
    EXPECT_EQ( printed.find( "HDF5-DIAG" ), std::string::npos ) << printed;
    EXPECT_TRUE( printed.empty() ) << printed;
}

// Each inconsistency is reported with the field's name and the sizes (or value) found and expected.
TEST( TEST_CATEGORY, angio_frame_validate )
{
    const auto good = tumour_and_vessel();
    EXPECT_NO_THROW( good.validate( "test" ) );
    EXPECT_NO_THROW( cells_only().validate( "test" ) );
    EXPECT_NO_THROW( vessels_only().validate( "test" ) );
    EXPECT_NO_THROW( morula::io::AngioFrame().validate( "test" ) );
    EXPECT_EQ( good.cells(), 3u );
    EXPECT_EQ( good.tubes(), 2u );
    EXPECT_EQ( cells_only().tubes(), 0u );
    EXPECT_EQ( vessels_only().cells(), 0u );

    auto expect_message = [&]( morula::io::AngioFrame f, const std::vector<std::string>& parts ) {
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
    f.cell_positions.pop_back();
    expect_message( f, { "'cell_positions'", "8 values", "multiple of 3" } );
    f = good;
    f.tube_end_a.push_back( 1.0 );
    expect_message( f, { "'tube_end_a'", "7 values", "multiple of 3" } );
    f = good;
    f.cell_radius.pop_back();
    expect_message( f, { "'cell_radius'", "has 2 values, expected 3" } );
    f = good;
    f.cell_id.push_back( 9 );
    expect_message( f, { "'cell_id'", "has 4 values, expected 3" } );
    f = good;
    f.cell_pressure.clear();
    expect_message( f, { "'cell_pressure'", "has 0 values, expected 3" } );
    f = good;
    f.cell_state.pop_back();
    expect_message( f, { "'cell_state'", "has 2 values, expected 3" } );
    f = good;
    f.tube_end_b.resize( 3 );
    expect_message( f, { "'tube_end_b'", "has 3 values, expected 6" } );
    f = good;
    f.tube_taf.push_back( 0.0 );
    expect_message( f, { "'tube_taf'", "has 3 values, expected 2" } );
    f = good;
    f.tube_parent.pop_back();
    expect_message( f, { "'tube_parent'", "has 1 values, expected 2" } );
    f = good;
    f.tube_id.clear();
    expect_message( f, { "'tube_id'", "has 0 values, expected 2" } );
    // Cell arrays without positions: the cells are counted from the positions.
    f = cells_only();
    f.cell_positions.clear();
    expect_message( f, { "'cell_radius'", "has 2 values, expected 0" } );

    f = good;
    f.tube_parent[1] = 2;
    expect_message( f, { "'tube_parent'[1] = 2", "[0, 2)" } );
    f = good;
    f.tube_parent[0] = -2;
    expect_message( f, { "'tube_parent'[0] = -2", "-1" } );
    f = good;
    f.cell_state[2] = 4;
    expect_message( f, { "'cell_state'[2] = 4", "[0, 3]" } );
    f = good;
    f.cell_state[0] = -1;
    expect_message( f, { "'cell_state'[0] = -1" } );
    f = good;
    f.cell_state[0] = 3;
    f.tube_parent[0] = 1;
    EXPECT_NO_THROW( f.validate( "test" ) );
}

} // namespace morula_test_io_angio
