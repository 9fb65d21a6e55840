// `morula ode run --out x.h5`: the results file written by ode_run::write_hdf5, read back with HDF5's C
// API: every dataset's shape and values, the column names, and a stopped run's prefix of samples.
#include "OdeRun.hpp"

#include <morula/core/Error.hpp>
#include <morula/ode/ModelReaders.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace
{
using namespace morula;
using namespace morula::app::ode_run;

template <class T>
std::vector<T> read_dataset( hid_t file, const char* name, hid_t type, std::vector<hsize_t>& dims )
{
    const hid_t d = H5Dopen2( file, name, H5P_DEFAULT );
    EXPECT_GE( d, 0 ) << name;
    const hid_t space = H5Dget_space( d );
    dims.assign( std::size_t( H5Sget_simple_extent_ndims( space ) ), 0 );
    H5Sget_simple_extent_dims( space, dims.data(), nullptr );
    hsize_t n = 1;
    for ( hsize_t x : dims )
        n *= x;
    std::vector<T> values( n );
    EXPECT_GE( H5Dread( d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data() ), 0 );
    H5Sclose( space );
    H5Dclose( d );
    return values;
}

// The number of strings in a names attribute (the strings themselves are h5py's business).
hssize_t names_count( hid_t file, const char* object, const char* attribute )
{
    const hid_t a = H5Aopen_by_name( file, object, attribute, H5P_DEFAULT, H5P_DEFAULT );
    EXPECT_GE( a, 0 ) << object << " " << attribute;
    const hid_t space = H5Aget_space( a );
    const hssize_t n = H5Sget_simple_extent_npoints( space );
    H5Sclose( space );
    H5Aclose( a );
    return n;
}

TEST( OdeResultsFile, sweep_samples_status_and_parameters_read_back )
{
    const ode::ReactionNetwork net =
        ode::parse_text_model( "A -> B, k=0.5\nB -> C, k=2\ninit A = 1\n", "chain.txt" );
    RunSystems sys;
    sys.sweep = ode::make_range_sweep( net, { ode::parse_sweep_range( "R1=linear:1:3:3" ) }, 0, 1, 100 );
    sys.total = sys.count = 3;
    RunTimes times;
    times.grid = { 0, 1, 2 };
    const std::vector<int> saved = { 0, 2 }; // A and C
    RunOutput out( 3, times.count(), saved.size(), 0.0 );
    for ( long s = 0; s < 3; ++s )
        for ( std::size_t t = 0; t < 3; ++t )
            for ( std::size_t j = 0; j < 2; ++j )
                out.sample_at( s, t, j ) = 100.0 * s + 10.0 * t + j;
    out.sample_at( 2, 2, 0 ) = out.sample_at( 2, 2, 1 ) = std::nan( "" ); // system 2 failed after t = 1
    out.stats[2 * ode::stat_count + ode::stat_status] = long( ode::SolverStatus::max_steps );
    out.stats[1 * ode::stat_count + ode::stat_steps] = 42;
    out.rows = 3;
    out.tally( times );
    ASSERT_EQ( out.failures, 1 );

    const std::string path = ( std::filesystem::temp_directory_path() / "morula_ode_results_test.h5" ).string();
    write_hdf5( path, net, times, saved, sys, out );
    const hid_t file = H5Fopen( path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT );
    ASSERT_GE( file, 0 );
    std::vector<hsize_t> dims;
    EXPECT_EQ( read_dataset<double>( file, "time", H5T_NATIVE_DOUBLE, dims ), times.grid );
    const std::vector<double> samples = read_dataset<double>( file, "samples", H5T_NATIVE_DOUBLE, dims );
    EXPECT_EQ( dims, ( std::vector<hsize_t>{ 3, 3, 2 } ) );
    EXPECT_EQ( samples[( 1 * 3 + 2 ) * 2 + 1], 121.0 ); // system 1, t = 2, species C
    EXPECT_TRUE( std::isnan( samples[( 2 * 3 + 2 ) * 2] ) );
    const std::vector<long long> status = read_dataset<long long>( file, "status", H5T_NATIVE_LLONG, dims );
    EXPECT_EQ( status, ( std::vector<long long>{ 0, 0, long( ode::SolverStatus::max_steps ) } ) );
    const std::vector<double> reached = read_dataset<double>( file, "reached", H5T_NATIVE_DOUBLE, dims );
    EXPECT_EQ( reached, ( std::vector<double>{ 2, 2, 1 } ) );
    const std::vector<long long> stats = read_dataset<long long>( file, "statistics", H5T_NATIVE_LLONG, dims );
    EXPECT_EQ( dims, ( std::vector<hsize_t>{ 3, hsize_t( ode::stat_count ) } ) );
    EXPECT_EQ( stats[1 * ode::stat_count + ode::stat_steps], 42 );
    const std::vector<double> parameters = read_dataset<double>( file, "parameters", H5T_NATIVE_DOUBLE, dims );
    EXPECT_EQ( parameters, ( std::vector<double>{ 1, 2, 3 } ) );
    EXPECT_EQ( names_count( file, "samples", "species" ), 2 );
    EXPECT_EQ( names_count( file, "status", "names" ), 6 );
    EXPECT_EQ( names_count( file, "statistics", "columns" ), ode::stat_count );
    EXPECT_EQ( names_count( file, "parameters", "columns" ), 1 );
    H5Fclose( file );
    std::filesystem::remove( path );
}

// Per-system end times (a t_end column): `time` is (system, sample), each row the run's times stretched
// to the system's end; `reached` is each system's own last time reached.
TEST( OdeResultsFile, per_system_times_read_back_as_a_table )
{
    const ode::ReactionNetwork net = ode::parse_text_model( "A -> B, k=0.5\ninit A = 1\n", "decay.txt" );
    RunSystems sys;
    sys.sweep = ode::make_range_sweep( net, { ode::parse_sweep_range( "t_end=linear:2:6:3" ) }, 0, 1, 100 );
    sys.total = sys.count = 3;
    RunArgs args;
    args.t_start = 1.0;
    const RunTimes times = run_times( args, { 1.0, 1.5, 2.0, 3.0 }, sys ); // fractions 0, 1/4, 1/2, 1 of the run
    ASSERT_TRUE( times.per_system() );
    EXPECT_EQ( times.at( 0, 1 ), 1.25 );
    EXPECT_EQ( times.at( 2, 2 ), 3.5 );
    EXPECT_EQ( times.last( 2 ), 6.0 );
    RunOutput out( 3, times.count(), 1, args.t_start );
    for ( long s = 0; s < 3; ++s )
        for ( std::size_t t = 0; t < 4; ++t )
            out.sample_at( s, t, 0 ) = 1.0;
    out.sample_at( 1, 3, 0 ) = std::nan( "" ); // system 1 stopped after its third sample
    out.rows = 4;
    out.tally( times );
    const std::string path = ( std::filesystem::temp_directory_path() / "morula_ode_results_times_test.h5" ).string();
    write_hdf5( path, net, times, { 0 }, sys, out );
    const hid_t file = H5Fopen( path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT );
    ASSERT_GE( file, 0 );
    std::vector<hsize_t> dims;
    const std::vector<double> time = read_dataset<double>( file, "time", H5T_NATIVE_DOUBLE, dims );
    EXPECT_EQ( dims, ( std::vector<hsize_t>{ 3, 4 } ) );
    EXPECT_EQ( time, ( std::vector<double>{ 1, 1.25, 1.5, 2, 1, 1.75, 2.5, 4, 1, 2.25, 3.5, 6 } ) );
    EXPECT_EQ( names_count( file, "time", "dimensions" ), 2 );
    EXPECT_EQ( read_dataset<double>( file, "reached", H5T_NATIVE_DOUBLE, dims ), ( std::vector<double>{ 2, 2.5, 6 } ) );
    H5Fclose( file );
    std::filesystem::remove( path );
    // An end time at --t-start is refused naming the range's system.
    RunSystems bad;
    bad.sweep = ode::make_range_sweep( net, { ode::parse_sweep_range( "t_end=linear:1:3:2" ) }, 0, 1, 100 );
    bad.total = bad.count = 2;
    try
    {
        run_times( args, { 1.0, 2.0 }, bad );
        ADD_FAILURE() << "no error";
    }
    catch ( const core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "--sweep, system 0: column 1 (t_end): end time 1; expected a time after --t-start (1)" ),
                   std::string::npos )
            << e.what();
    }
}

} // namespace
