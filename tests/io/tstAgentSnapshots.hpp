#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/AgentSnapshots.hpp>
#include <morula/mechanics/Initializers.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#if MORULA_HAVE_HDF5
#include <hdf5.h>
#endif

namespace morula_test_io
{

#if MORULA_HAVE_HDF5
template <class T>
std::vector<T> read_dataset( const std::string& path, const char* name, hid_t type, std::size_t count )
{
    std::vector<T> v( count );
    const hid_t file = H5Fopen( path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT );
    EXPECT_GE( file, 0 ) << path;
    const hid_t set = H5Dopen2( file, name, H5P_DEFAULT );
    EXPECT_GE( set, 0 ) << name;
    const hid_t space = H5Dget_space( set );
    EXPECT_EQ( H5Sget_simple_extent_npoints( space ), static_cast<hssize_t>( count ) ) << name;
    EXPECT_GE( H5Dread( set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data() ), 0 ) << name;
    H5Sclose( space );
    H5Dclose( set );
    H5Fclose( file );
    return v;
}
#endif

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
    const auto xyz = read_dataset<double>( prefix + "_000000.h5", "positions", H5T_NATIVE_DOUBLE, 27 * 3 );
    const auto d = read_dataset<double>( prefix + "_000000.h5", "diameter", H5T_NATIVE_DOUBLE, 27 );
    const auto id = read_dataset<long long>( prefix + "_000000.h5", "id", H5T_NATIVE_LLONG, 27 );
    for ( int i = 0; i < 27; ++i )
    {
        EXPECT_EQ( xyz[3 * i + 0], 2.5 * ( i % 3 ) );
        EXPECT_EQ( xyz[3 * i + 1], 2.5 * ( i / 3 % 3 ) );
        EXPECT_EQ( xyz[3 * i + 2], 2.5 * ( i / 9 ) );
        EXPECT_EQ( d[i], 30.0 );
        EXPECT_EQ( id[i], i );
    }
    read_dataset<double>( prefix + "_000007.h5", "diameter", H5T_NATIVE_DOUBLE, 5 );
    std::ifstream in( writer.xdmf_path() );
    std::stringstream text;
    text << in.rdbuf();
    const std::string x = text.str();
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
