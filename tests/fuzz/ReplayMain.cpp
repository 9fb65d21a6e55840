/*
  A main() for the fuzz targets in an ordinary build (any compiler, no libFuzzer): feeds every file named
  on the command line, or found under a folder named there, to LLVMFuzzerTestOneInput once, in sorted
  order. CTest runs it on each target's regressions and seed corpus (fuzz_replay_<target>), so every
  finding stays fixed in the normal CI and under the asan preset.
*/
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize( int* argc, char*** argv );
extern "C" int LLVMFuzzerTestOneInput( const std::uint8_t* data, std::size_t size );

int main( int argc, char* argv[] )
{
    namespace fs = std::filesystem;
    std::vector<fs::path> inputs;
    for ( int i = 1; i < argc; ++i )
    {
        const fs::path p( argv[i] );
        if ( fs::is_directory( p ) )
        {
            for ( const auto& e : fs::recursive_directory_iterator( p ) )
                if ( e.is_regular_file() && e.path().filename().string().rfind( "README", 0 ) != 0 )
                    inputs.push_back( e.path() );
        }
        else if ( fs::is_regular_file( p ) )
            inputs.push_back( p );
        else
        {
            std::fprintf( stderr, "replay: '%s' is neither a file nor a folder\n", argv[i] );
            return 2;
        }
    }
    std::sort( inputs.begin(), inputs.end() );
    if ( inputs.empty() )
    {
        std::fprintf( stderr, "replay: no inputs\n" );
        return 2;
    }
    // Only argv[0]: Kokkos must not see the paths.
    int init_argc = 1;
    char** init_argv = argv;
    LLVMFuzzerInitialize( &init_argc, &init_argv );
    for ( const auto& p : inputs )
    {
        std::ifstream in( p, std::ios::binary );
        const std::vector<char> bytes( ( std::istreambuf_iterator<char>( in ) ), std::istreambuf_iterator<char>() );
        std::printf( "replay: %s (%zu bytes)\n", p.string().c_str(), bytes.size() );
        std::fflush( stdout );
        LLVMFuzzerTestOneInput( reinterpret_cast<const std::uint8_t*>( bytes.data() ), bytes.size() );
    }
    std::printf( "replay: %zu inputs, no finding\n", inputs.size() );
    return 0;
}
