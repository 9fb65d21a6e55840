#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/AgentSnapshots.hpp>
#include <morula/mechanics/Initializers.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "SnapshotTestUtils.hpp"

namespace morula_test_io
{
using namespace morula_test_snapshots;

// A lattice of agents written from device Views reads back exactly, and the XDMF index names every
// snapshot with its time and size.
TEST( TEST_CATEGORY, snapshots_round_trip )
{
    const std::string prefix = std::string( "morula_io_test_" ) + TEST_EXECSPACE::name();
    if ( !morula::io::hdf5_available() )
    {
        EXPECT_THROW( morula::io::AgentSnapshotWriter w( prefix ), morula::core::InputError );
        return;
    }
#if MORULA_HAVE_HDF5
    morula::mechanics::AgentProperties<float> props;
    auto agents = morula::mechanics::lattice_agents<float, TEST_MEMSPACE>( TEST_EXECSPACE(), 3, 2.5f, props );
    morula::io::AgentSnapshotWriter writer( prefix );
    writer.write_views( 0, 0.0, agents.positions(), agents.diameters(), agents.ids(), agents.size() );
    writer.write_views( 7, 0.07, agents.positions(), agents.diameters(), agents.ids(), 5 );
    {
        // Each dataset's shape and stored type are checked too.
        H5 first{ open_read_only( prefix + "_000000.h5" ), H5Fclose };
        const auto xyz = read_doubles( first.id, "positions", { 27, 3 } );
        const auto d = read_doubles( first.id, "diameter", { 27 } );
        const auto id = read_int64( first.id, "id", { 27 } );
        ASSERT_EQ( xyz.size(), 27u * 3 );
        ASSERT_EQ( d.size(), 27u );
        ASSERT_EQ( id.size(), 27u );
        for ( int i = 0; i < 27; ++i )
        {
            EXPECT_EQ( xyz[3 * i + 0], 2.5 * ( i % 3 ) );
            EXPECT_EQ( xyz[3 * i + 1], 2.5 * ( i / 3 % 3 ) );
            EXPECT_EQ( xyz[3 * i + 2], 2.5 * ( i / 9 ) );
            EXPECT_EQ( d[i], 30.0 );
            EXPECT_EQ( id[i], i );
        }
    }
    {
        H5 second{ open_read_only( prefix + "_000007.h5" ), H5Fclose };
        read_doubles( second.id, "diameter", { 5 } );
    }
    const std::string x = read_text( writer.xdmf_path() );
    EXPECT_NE( x.find( "NumberOfElements=\"27\"" ), std::string::npos );
    EXPECT_NE( x.find( "NumberOfElements=\"5\"" ), std::string::npos );
    EXPECT_NE( x.find( "<Time Value=\"0.07\"/>" ), std::string::npos );
    EXPECT_NE( x.find( prefix + "_000007.h5:/positions" ), std::string::npos );
    std::remove( ( prefix + "_000000.h5" ).c_str() );
    std::remove( ( prefix + "_000007.h5" ).c_str() );
    std::remove( writer.xdmf_path().c_str() );
#endif
}

} // namespace morula_test_io
