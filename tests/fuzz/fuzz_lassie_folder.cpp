/*
  Fuzz target: the LASSIE / cupSODA input folder (ode::read_folder_model), then the compilation into a
  MassActionSystem.

  Framing (documented in docs/robustness.md): the input is split into the folder's files at lines of the
  form "--- NAME" (NAME one of the file names the reader knows: left_side, right_side, c_vector, M_0, ...);
  what follows such a line, up to the next one or the end, is that file's content. Text before the first
  such line and sections with any other name are ignored, so the fuzzer can create neither other files
  nor paths outside the folder. A name given twice keeps its last section. The folder is emptied before
  every input.
*/
#include "FuzzSupport.hpp"
#include "ModelCompile.hpp"

#include <morula/ode/ModelReaders.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace
{
// Every file read_folder_model looks at (lib/morula/ode/FolderModel.cpp).
constexpr std::array<std::string_view, 16> folder_files{
    "left_side", "right_side", "c_vector", "c_matrix", "M_0", "MX_0", "M_feed", "alphabet", "modelkind", "volume",
    "t_vector", "atol_vector", "rtol", "cs_vector", "be_step", "reaction_names" };

bool known( std::string_view name )
{
    for ( auto f : folder_files )
        if ( f == name )
            return true;
    return false;
}
} // namespace

extern "C" int LLVMFuzzerInitialize( int* argc, char*** argv )
{
    morula::fuzz::initialize( argc, argv, "lassie_folder" );
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput( const std::uint8_t* data, std::size_t size )
{
    namespace fs = std::filesystem;
    const fs::path dir = morula::fuzz::scratch_dir() / "model";
    std::error_code ec;
    fs::remove_all( dir, ec );
    fs::create_directories( dir );

    const std::string_view input( reinterpret_cast<const char*>( data ), size );
    std::string_view name;
    std::size_t section = std::string_view::npos; // start of the current file's content
    auto flush = [&]( std::size_t end ) {
        if ( section != std::string_view::npos && known( name ) )
        {
            const auto content = input.substr( section, end - section );
            morula::fuzz::write_file( dir / std::string( name ),
                                      reinterpret_cast<const std::uint8_t*>( content.data() ), content.size() );
        }
    };
    std::size_t pos = 0;
    while ( pos <= input.size() )
    {
        const std::size_t eol = std::min( input.find( '\n', pos ), input.size() );
        const auto line = input.substr( pos, eol - pos );
        if ( line.substr( 0, 4 ) == "--- " )
        {
            flush( pos );
            name = line.substr( 4 );
            section = std::min( eol + 1, input.size() );
        }
        if ( eol == input.size() )
            break;
        pos = eol + 1;
    }
    flush( input.size() );
    return morula::fuzz::expect_only_input_errors(
        [&] { morula::fuzz::compile( morula::ode::read_folder_model( dir.string() ) ); } );
}
