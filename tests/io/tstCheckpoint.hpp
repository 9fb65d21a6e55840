#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include "ExpectError.hpp"

#include <cstdint>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <thread>
#include <cstring>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace morula_test_io_checkpoint
{
using morula::io::CheckpointReader;
using morula::io::CheckpointWriter;

std::string file_for( const char* test )
{
    return std::string( "morula_checkpoint_test_" ) + test + "_" + TEST_EXECSPACE::name() + ".h5";
}

using morula_test::expect_error;

#if MORULA_HAVE_HDF5

// Every type comes back with its bits: NaN payloads, -0, denormals, the integer extremes.
TEST( TEST_CATEGORY, checkpoint_round_trip_keeps_every_bit )
{
    const std::string path = file_for( "round_trip" );
    const std::vector<float> floats{ -0.0f, std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::quiet_NaN(), 1.0f / 3.0f };
    const std::vector<double> doubles{ -0.0, std::numeric_limits<double>::denorm_min(),
                                       std::numeric_limits<double>::infinity(), 0.1, 2.0 / 3.0, 7.0 };
    const std::vector<std::uint32_t> words{ 0u, 0xffffffffu, 0x12345678u };
    const std::vector<std::int64_t> ids{ std::numeric_limits<std::int64_t>::min(), -1, 0,
                                         std::numeric_limits<std::int64_t>::max() };
    const std::vector<std::uint8_t> flags{ 0, 1, 255 };
    const std::vector<std::int8_t> small{ -128, 0, 127 };
    const std::vector<std::uint64_t> big{ std::numeric_limits<std::uint64_t>::max() };
    const std::vector<std::int32_t> none;
    {
        CheckpointWriter out( "test_model" );
        out.put( "fields/floats", floats );
        out.put( "fields/doubles", doubles, { 2, 3 } );
        out.put( "words", words );
        out.put( "agents/id", ids );
        out.put( "agents/flags", flags );
        out.put( "small", small );
        out.put( "big", big );
        out.put( "empty", none, { 0, 3 } );
        out.put_scalar( "step", 123456789012LL );
        out.put_scalar( "dt", 0.01f );
        out.put_text( "rule", "basal_state" );
        out.put_text( "nothing", "" );
        out.write( path );
    }
    EXPECT_FALSE( std::filesystem::exists( path + ".tmp" ) );
    const CheckpointReader in( path, "test_model" );
    const auto same_bits = []( const auto& a, const auto& b ) {
        return a.size() == b.size() && std::memcmp( a.data(), b.data(), a.size() * sizeof( a[0] ) ) == 0;
    };
    EXPECT_TRUE( same_bits( in.get<float>( "fields/floats" ), floats ) );
    EXPECT_TRUE( same_bits( in.get<double>( "fields/doubles" ), doubles ) );
    EXPECT_EQ( in.dims( "fields/doubles" ), ( std::vector<std::size_t>{ 2, 3 } ) );
    EXPECT_EQ( in.get<std::uint32_t>( "words" ), words );
    EXPECT_EQ( in.get<std::int64_t>( "agents/id" ), ids );
    EXPECT_EQ( in.get<std::uint8_t>( "agents/flags" ), flags );
    EXPECT_EQ( in.get<std::int8_t>( "small" ), small );
    EXPECT_EQ( in.get<std::uint64_t>( "big" ), big );
    EXPECT_TRUE( in.get<std::int32_t>( "empty" ).empty() );
    EXPECT_EQ( in.dims( "empty" ), ( std::vector<std::size_t>{ 0, 3 } ) );
    EXPECT_EQ( in.rows( "fields/doubles" ), 2u );
    EXPECT_EQ( in.scalar<long long>( "step" ), 123456789012LL );
    EXPECT_EQ( in.scalar<float>( "dt" ), 0.01f );
    EXPECT_EQ( in.text( "rule" ), "basal_state" );
    EXPECT_EQ( in.text( "nothing" ), "" );
    EXPECT_TRUE( in.has( "step" ) );
    EXPECT_FALSE( in.has( "morula/model" ) ); // the header is not the model's
    std::remove( path.c_str() );
}

// A device lambda cannot sit in a TEST body: GoogleTest >= 1.13 makes TestBody private, which nvcc refuses.
template <class Positions, class Species, class Sites>
void fill_fields( const Positions& positions, const Species& species, const Sites& sites )
{
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, sites.extent( 0 ) ), KOKKOS_LAMBDA( const int i ) {
            for ( int d = 0; d < 3; ++d )
                positions( i, d ) = 0.1f * float( i ) + float( d );
            for ( int s = 0; s < 4; ++s )
                species( i, s ) = 1.0 / double( 1 + i + s );
            sites( i ) = 0x80000000u + std::uint32_t( i );
        } );
    Kokkos::fence();
}

// Device fields: the first n rows of rank-1 and rank-2 Views of both layouts, in their own types.
TEST( TEST_CATEGORY, checkpoint_fields_of_device_views )
{
    using memory_space = TEST_EXECSPACE::memory_space;
    const std::string path = file_for( "fields" );
    const std::size_t n = 5, capacity = 9;
    Kokkos::View<float* [3], Kokkos::LayoutLeft, memory_space> positions( "positions", capacity );
    Kokkos::View<double**, Kokkos::LayoutRight, memory_space> species( "species", capacity, 4 );
    Kokkos::View<std::uint32_t*, memory_space> sites( "sites", capacity );
    fill_fields( positions, species, sites );
    {
        CheckpointWriter out( "fields" );
        out.put_field( "positions", positions, n );
        out.put_field( "species", species, n );
        out.put_field( "sites", sites, n );
        out.write( path );
    }
    const CheckpointReader in( path, "fields" );
    EXPECT_EQ( in.dims( "positions" ), ( std::vector<std::size_t>{ n, 3 } ) );
    Kokkos::View<float* [3], Kokkos::LayoutLeft, memory_space> positions2( "positions2", capacity );
    Kokkos::View<double**, Kokkos::LayoutRight, memory_space> species2( "species2", capacity, 4 );
    Kokkos::View<std::uint32_t*, memory_space> sites2( "sites2", capacity );
    in.get_field( "positions", positions2, n );
    in.get_field( "species", species2, n );
    in.get_field( "sites", sites2, n );
    const auto p = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), positions );
    const auto p2 = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), positions2 );
    const auto s = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), species );
    const auto s2 = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), species2 );
    const auto w = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sites );
    const auto w2 = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sites2 );
    for ( std::size_t i = 0; i < capacity; ++i )
    {
        const bool live = i < n; // rows from n on are left as they were (zero)
        for ( int d = 0; d < 3; ++d )
            EXPECT_EQ( p2( i, d ), live ? p( i, d ) : 0.0f );
        for ( int c = 0; c < 4; ++c )
            EXPECT_EQ( s2( i, c ), live ? s( i, c ) : 0.0 );
        EXPECT_EQ( w2( i ), live ? w( i ) : 0u );
    }
    // Another type, another width or another count is refused with the entry named.
    Kokkos::View<double* [3], memory_space> wrong_type( "wrong_type", capacity );
    expect_error<morula::core::InputError>( [&] { in.get_field( "positions", wrong_type, n ); },
                                            { path, "'positions' holds float32, expected float64" } );
    Kokkos::View<float* [2], memory_space> wrong_width( "wrong_width", capacity );
    expect_error<morula::core::InputError>( [&] { in.get_field( "positions", wrong_width, n ); },
                                            { path, "'positions' has shape (5, 3), expected shape (5, 2)" } );
    expect_error<morula::core::InputError>( [&] { in.get_field( "sites", sites2, n - 1 ); },
                                            { "'sites' has shape (5), expected shape (4)" } );
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, checkpoint_refuses_other_models_versions_and_files )
{
    const std::string path = file_for( "refuse" );
    {
        CheckpointWriter out( "lattice" );
        out.put_scalar( "step", 5LL );
        out.write( path );
    }
    expect_error<morula::core::InputError>( [&] { CheckpointReader( path, "epidermis" ); },
                                            { path, "a checkpoint of model 'lattice', not of 'epidermis'" } );
    const CheckpointReader in( path, "lattice" );
    expect_error<morula::core::InputError>( [&] { in.scalar<int>( "step" ); },
                                            { path, "'step' holds int64, expected int32" } );
    expect_error<morula::core::InputError>( [&] { in.get<double>( "missing" ); }, { path, "has no 'missing'" } );

    // Another version: a file whose header says so (written with the HDF5 layer directly).
    auto entries = morula::io::detail::read_checkpoint_file( path );
    const std::string old_version = "0.0.1-old";
    entries["morula/version"].bytes.assign( old_version.begin(), old_version.end() );
    const std::string other = file_for( "other_version" );
    morula::io::detail::write_checkpoint_file( other, entries );
    expect_error<morula::core::InputError>( [&] { CheckpointReader( other, "lattice" ); },
                                            { other, "written by Morula 0.0.1-old", "restart with the version" } );
    // A file without the header, a text file, a missing file.
    entries.erase( "morula/format" );
    morula::io::detail::write_checkpoint_file( other, entries );
    expect_error<morula::core::InputError>( [&] { CheckpointReader( other, "lattice" ); },
                                            { other, "not a Morula checkpoint" } );
    {
        std::ofstream text( other );
        text << "{ \"steps\": 3 }\n";
    }
    expect_error<morula::core::IoError>( [&] { CheckpointReader( other, "lattice" ); },
                                         { other, "not an HDF5 file" } );
    std::remove( other.c_str() );
    expect_error<morula::core::IoError>( [&] { CheckpointReader( other, "lattice" ); }, { other } );
    std::remove( path.c_str() );
}

// A write that fails (here: the folder does not exist) leaves the older checkpoint and no temporary.
TEST( TEST_CATEGORY, checkpoint_failed_write_keeps_the_previous_one )
{
    const std::string path = file_for( "keep" );
    {
        CheckpointWriter out( "m" );
        out.put_scalar( "step", 1LL );
        out.write( path );
    }
    CheckpointWriter second( "m" );
    second.put_scalar( "step", 2LL );
    const std::string nowhere = "no_such_folder_for_checkpoints/" + path;
    expect_error<morula::core::IoError>( [&] { second.write( nowhere ); }, { nowhere } );
    EXPECT_FALSE( std::filesystem::exists( nowhere + ".tmp" ) );
    EXPECT_EQ( CheckpointReader( path, "m" ).scalar<long long>( "step" ), 1 );
    // Overwriting replaces it whole.
    second.write( path );
    EXPECT_EQ( CheckpointReader( path, "m" ).scalar<long long>( "step" ), 2 );
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, checkpoint_writer_refuses_bad_names )
{
    CheckpointWriter out( "m" );
    out.put_scalar( "a/b", 1 );
    const std::vector<double> two{ 1, 2 };
    expect_error<morula::core::InputError>( [&] { out.put_scalar( "a/b", 2 ); }, { "'a/b' clashes with 'a/b'" } );
    expect_error<morula::core::InputError>( [&] { out.put_scalar( "a", 2 ); }, { "'a' clashes with 'a/b'" } );
    expect_error<morula::core::InputError>( [&] { out.put_scalar( "a/b/c", 2 ); }, { "clashes" } );
    expect_error<morula::core::InputError>( [&] { out.put_scalar( "morula/step", 2 ); }, { "reserved" } );
    expect_error<morula::core::InputError>( [&] { out.put_scalar( "/x", 2 ); }, { "not a name" } );
    expect_error<morula::core::InputError>( [&] { out.put( "v", two, { 3 } ); }, { "'v' has 2 values", "holds 3" } );
}

#else

// Without HDF5 a state is still collected (tests compare entries in memory), but writing or reading a
// file is refused with a message that names the file and the option to rebuild with.
TEST( TEST_CATEGORY, checkpoint_files_need_hdf5 )
{
    CheckpointWriter out( "m" );
    out.put_scalar( "step", 3LL );
    EXPECT_EQ( out.entries().count( "step" ), 1u );
    expect_error<morula::core::InputError>( [&] { out.write( "no_hdf5_checkpoint.h5" ); },
                                            { "no_hdf5_checkpoint.h5", "without HDF5", "Morula_ENABLE_HDF5=ON" } );
    EXPECT_FALSE( std::filesystem::exists( "no_hdf5_checkpoint.h5.tmp" ) );
    expect_error<morula::core::InputError>( [] { CheckpointReader( "no_hdf5_checkpoint.h5", "m" ); },
                                            { "no_hdf5_checkpoint.h5", "without HDF5" } );
}

#endif

} // namespace morula_test_io_checkpoint

namespace morula_test_io_checkpoint
{
#if MORULA_HAVE_HDF5
// first_difference names the first entry that differs in a bit, a type, a shape, or exists once only;
// the same state written twice gives the same bytes on disk.
TEST( TEST_CATEGORY, checkpoint_first_difference_and_identical_files )
{
    const auto state = []( double x, bool extra ) {
        CheckpointWriter out( "m" );
        out.put( "a", std::vector<double>{ 1.0, x } );
        out.put_scalar( "b/step", 3LL );
        if ( extra )
            out.put_scalar( "c", 1.0f );
        return out;
    };
    using morula::io::first_difference;
    EXPECT_EQ( first_difference( state( 2.0, false ).entries(), state( 2.0, false ).entries() ), "" );
    EXPECT_EQ( first_difference( state( 2.0, false ).entries(), state( std::nextafter( 2.0, 3.0 ), false ).entries() ),
               "a" );
    EXPECT_EQ( first_difference( state( 2.0, false ).entries(), state( 2.0, true ).entries() ), "c" );
    const std::string p1 = file_for( "same1" ), p2 = file_for( "same2" );
    state( 2.0, true ).write( p1 );
    // a second later: no modification time may differ
    std::this_thread::sleep_for( std::chrono::milliseconds( 1100 ) );
    state( 2.0, true ).write( p2 );
    std::ifstream f1( p1, std::ios::binary ), f2( p2, std::ios::binary );
    const std::string b1( ( std::istreambuf_iterator<char>( f1 ) ), std::istreambuf_iterator<char>() );
    const std::string b2( ( std::istreambuf_iterator<char>( f2 ) ), std::istreambuf_iterator<char>() );
    EXPECT_FALSE( b1.empty() );
    EXPECT_TRUE( b1 == b2 );
    EXPECT_EQ( first_difference( CheckpointReader( p1, "m" ).entries(), state( 2.0, true ).entries() ), "" );
    std::remove( p1.c_str() );
    std::remove( p2.c_str() );
}
#endif
} // namespace morula_test_io_checkpoint
