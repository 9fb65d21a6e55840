#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/LatticeSnapshots.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "SnapshotTestUtils.hpp"

namespace morula_test_io_lattice
{
using namespace morula_test_snapshots;

#if MORULA_HAVE_HDF5
// Dataset /sites of the snapshot's file holds `words` as nz x ny x nx and the attributes that say how
// to read it, and nothing else is in the file.
void expect_snapshot( const std::string& file_name, const std::vector<std::uint32_t>& words, long long step,
                      double time_s )
{
    SCOPED_TRACE( file_name );
    H5 file_handle{ open_read_only( file_name ), H5Fclose };
    ASSERT_GE( file_handle.id, 0 );
    const hid_t file = file_handle.id;
    EXPECT_EQ( links( file ), 1u );
    const std::string path = "/sites";
    EXPECT_EQ( read_uint32( file, path, { 2, 3, 4 } ), words );
    H5 set{ H5Dopen2( file, path.c_str(), H5P_DEFAULT ), H5Dclose };
    ASSERT_GE( set.id, 0 );
    auto int_attribute = [&]( const char* attr ) {
        return read_scalar_attribute<std::int32_t>( set.id, attr, H5T_INTEGER, H5T_NATIVE_INT32 );
    };
    EXPECT_EQ( int_attribute( "nx" ), 4 );
    EXPECT_EQ( int_attribute( "ny" ), 3 );
    EXPECT_EQ( int_attribute( "nz" ), 2 );
    EXPECT_EQ( int_attribute( "slots_per_site" ), 4 );
    EXPECT_EQ( int_attribute( "bits_per_slot" ), 7 );
    EXPECT_EQ( read_scalar_attribute<double>( set.id, "spacing_nm", H5T_FLOAT, H5T_NATIVE_DOUBLE ), 2.5 );
    EXPECT_EQ( read_scalar_attribute<double>( set.id, "time_s", H5T_FLOAT, H5T_NATIVE_DOUBLE ), time_s );
    EXPECT_EQ( read_scalar_attribute<std::int64_t>( set.id, "step", H5T_INTEGER, H5T_NATIVE_INT64 ), step );
}
#endif

// Site words written from a device View read back exactly, one file per step (a trailing ".h5" of the
// name dropped) with the lattice's shape and packing as attributes; wrong sizes, a step written twice
// and unwritable files are reported.
TEST( TEST_CATEGORY, lattice_snapshots_round_trip )
{
    const std::string folder = std::string( "morula_lattice_snapshot_test_" ) + TEST_EXECSPACE::name();
    const std::string path = folder + "/lattice.h5";
    if ( !morula::io::hdf5_available() )
    {
        EXPECT_THROW( morula::io::LatticeSnapshotWriter w( path, 4, 3, 2, 2.5, 4 ), morula::core::InputError );
        GTEST_SKIP() << "built without HDF5";
    }
#if MORULA_HAVE_HDF5
    std::filesystem::remove_all( folder );
    std::filesystem::create_directories( folder );
    std::vector<std::uint32_t> words( 24 );
    for ( std::uint32_t i = 0; i < 24; ++i )
        words[i] = 0x10000000u * ( i % 3 ) + i;
    Kokkos::View<std::uint32_t*, TEST_MEMSPACE> sites( "sites", words.size() );
    Kokkos::deep_copy( sites, Kokkos::View<const std::uint32_t*, Kokkos::HostSpace>( words.data(), words.size() ) );

    morula::io::LatticeSnapshotWriter writer( path, 4, 3, 2, 2.5, 4 );
    EXPECT_EQ( writer.prefix(), folder + "/lattice" );
    EXPECT_EQ( writer.file( 20 ), folder + "/lattice_000020.h5" );
    writer.write_view( 0, 0.0, sites );
    const std::string first_bytes = read_text( writer.file( 0 ) );
    auto later = words;
    later[5] = 0xffffffffu;
    writer.write( 1234567, 1e-8, later );
    expect_snapshot( writer.file( 0 ), words, 0, 0.0 );
    expect_snapshot( writer.file( 1234567 ), later, 1234567, 1e-8 );
    EXPECT_EQ( read_text( writer.file( 0 ) ), first_bytes ) << "a snapshot's file was rewritten";
    EXPECT_THROW( writer.write( 0, 0.5, later ), morula::core::InputError );
    expect_snapshot( writer.file( 0 ), words, 0, 0.0 );
    // The same prefix given without ".h5" names the same files; a new series removes the old ones.
    morula::io::LatticeSnapshotWriter again( folder + "/lattice", 4, 3, 2, 2.5, 4 );
    EXPECT_FALSE( std::filesystem::exists( writer.file( 0 ) ) );
    EXPECT_FALSE( std::filesystem::exists( writer.file( 1234567 ) ) );
    again.write( 0, 0.0, words );
    expect_snapshot( writer.file( 0 ), words, 0, 0.0 );
    try
    {
        writer.write( 2, 0.0, std::vector<std::uint32_t>( 23 ) );
        ADD_FAILURE() << "23 words for 24 sites were accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "23 words for 4 x 3 x 2 sites" ), std::string::npos ) << e.what();
    }
    std::filesystem::remove_all( folder );

    testing::internal::CaptureStderr();
    try
    {
        morula::io::LatticeSnapshotWriter w( "morula_no_such_folder/lattice.h5", 4, 3, 2, 2.5, 4 );
        ADD_FAILURE() << "a file in a missing folder was created";
    }
    catch ( const morula::core::IoError& e )
    {
        EXPECT_NE( std::string( e.what() ).find(
                       "morula_no_such_folder/lattice_000000.h5': the folder 'morula_no_such_folder' does not exist" ),
                   std::string::npos )
            << e.what();
    }
    const std::string printed = testing::internal::GetCapturedStderr();
    EXPECT_TRUE( printed.empty() ) << printed;
#endif
}

} // namespace morula_test_io_lattice
