// morula_series_check: what a killed run left behind is readable.
//   morula_series_check --index run.xmf [--min-frames N]  every dataset the XDMF index refers to opens
//                                                       and reads whole; prints the number of frames
//   morula_series_check --frames PREFIX OBJECT [--min-frames N]
//                                                       dataset OBJECT of every frame file
//                                                       PREFIX_<digits>.h5 reads whole (a series
//                                                       without an index, as the lattice's)
//   morula_series_check --checkpoint file.h5 MODEL      the checkpoint loads (io::CheckpointReader)
// Exit 0 when everything reads, 1 otherwise (with the reason on stderr).
#include <morula/io/Checkpoint.hpp>

#include <Kokkos_Core.hpp>

#include <hdf5.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace
{
std::string folder_of( const std::string& path )
{
    const auto slash = path.find_last_of( '/' );
    return slash == std::string::npos ? std::string() : path.substr( 0, slash + 1 );
}

// Reads dataset `object` of `file` whole; false (with the reason printed) if it cannot.
bool read_dataset( const std::string& file, const std::string& object )
{
    const hid_t f = H5Fopen( file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT );
    if ( f < 0 )
    {
        std::fprintf( stderr, "cannot open '%s'\n", file.c_str() );
        return false;
    }
    bool ok = false;
    const hid_t set = H5Dopen2( f, object.c_str(), H5P_DEFAULT );
    if ( set >= 0 )
    {
        const hid_t type = H5Dget_type( set );
        const hid_t space = H5Dget_space( set );
        const hssize_t count = H5Sget_simple_extent_npoints( space );
        std::vector<unsigned char> data( std::size_t( count > 0 ? count : 1 ) * H5Tget_size( type ) );
        ok = count == 0 || H5Dread( set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data() ) >= 0;
        H5Sclose( space );
        H5Tclose( type );
        H5Dclose( set );
    }
    H5Fclose( f );
    if ( !ok )
        std::fprintf( stderr, "cannot read '%s:%s'\n", file.c_str(), object.c_str() );
    return ok;
}
} // namespace

int main( int argc, char* argv[] )
{
    const std::vector<std::string> args( argv + 1, argv + argc );
    H5Eset_auto2( H5E_DEFAULT, nullptr, nullptr );
    if ( args.size() == 3 && args[0] == "--checkpoint" )
    {
        Kokkos::ScopeGuard guard;
        try
        {
            const morula::io::CheckpointReader in( args[1], args[2] );
            std::printf( "checkpoint '%s': %zu entries, all read\n", args[1].c_str(), in.entries().size() );
            return 0;
        }
        catch ( const std::exception& e )
        {
            std::fprintf( stderr, "%s\n", e.what() );
            return 1;
        }
    }
    if ( ( args.size() == 2 || args.size() == 4 ) && args[0] == "--index" && ( args.size() == 2 || args[2] == "--min-frames" ) )
    {
        const long min_frames = args.size() == 4 ? std::atol( args[3].c_str() ) : 1;
        std::ifstream in( args[1] );
        std::stringstream text;
        if ( !in || !( text << in.rdbuf() ) )
        {
            std::fprintf( stderr, "cannot read the index '%s'\n", args[1].c_str() );
            return 1;
        }
        const std::string index = text.str();
        if ( index.find( "</Xdmf>" ) == std::string::npos )
        {
            std::fprintf( stderr, "the index '%s' is incomplete\n", args[1].c_str() );
            return 1;
        }
        // "<file>.h5:<object>" in DataItems; frames are the distinct "<file>:<frame>" before the last '/'.
        const std::regex reference( R"(([^<>\s"]+\.h5):(/[^<>\s"]*))" );
        std::set<std::string> frames;
        long datasets = 0;
        for ( std::sregex_iterator it( index.begin(), index.end(), reference ), end; it != end; ++it )
        {
            const std::string file = folder_of( args[1] ) + ( *it )[1].str(), object = ( *it )[2].str();
            if ( !read_dataset( file, object ) )
                return 1;
            ++datasets;
            frames.insert( ( *it )[1].str() + ":" + object.substr( 0, object.find_last_of( '/' ) ) );
        }
        std::printf( "index '%s': %zu frames, %ld datasets, all read\n", args[1].c_str(), frames.size(), datasets );
        if ( long( frames.size() ) < min_frames )
        {
            std::fprintf( stderr, "expected at least %ld frames\n", min_frames );
            return 1;
        }
        return 0;
    }
    if ( ( args.size() == 3 || args.size() == 5 ) && args[0] == "--frames" &&
         ( args.size() == 3 || args[3] == "--min-frames" ) )
    {
        const long min_frames = args.size() == 5 ? std::atol( args[4].c_str() ) : 1;
        const std::string folder = folder_of( args[1] ), stem = args[1].substr( folder.size() ) + "_";
        const std::regex frame_name( std::regex_replace( stem, std::regex( R"([.^$|()\[\]{}*+?\\])" ), R"(\$&)" ) +
                                     R"([0-9]+\.h5)" );
        long frames = 0;
        std::error_code ec;
        for ( const auto& entry : std::filesystem::directory_iterator( folder.empty() ? "." : folder, ec ) )
        {
            const std::string name = entry.path().filename().string();
            if ( !std::regex_match( name, frame_name ) )
                continue;
            if ( !read_dataset( folder + name, args[2] ) )
                return 1;
            ++frames;
        }
        std::printf( "frames '%s_*.h5': %ld, '%s' read in each\n", args[1].c_str(), frames, args[2].c_str() );
        if ( frames < min_frames )
        {
            std::fprintf( stderr, "expected at least %ld frames\n", min_frames );
            return 1;
        }
        return 0;
    }
    std::fprintf( stderr, "usage: morula_series_check --index FILE.xmf [--min-frames N] | --frames PREFIX OBJECT "
                          "[--min-frames N] | --checkpoint FILE MODEL\n" );
    return 2;
}
