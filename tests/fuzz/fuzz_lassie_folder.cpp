/*
  Fuzz target: the LASSIE / cupSODA input folder (ode::read_folder_model), then the compilation into a
  MassActionSystem.

  Framing (documented in docs/robustness.md): the input is split into the folder's files at lines of the
  form "--- NAME" (NAME one of the file names the reader knows: left_side, right_side, c_vector, M_0, ...);
  what follows such a line, up to the next one or the end, is that file's content. Text before the first
  such line and sections with any other name are ignored, so the fuzzer can create neither other files
  nor paths outside the folder. A name given twice keeps its last section. Files of the folder that an
  input does not give are removed before the reader runs.
*/
#include "FuzzSupport.hpp"
#include "ModelCompile.hpp"

#include <morula/ode/ModelReaders.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace
{
// Every file read_folder_model looks at (lib/morula/ode/FolderModel.cpp).
constexpr std::array<std::string_view, 16> folder_files{
    "left_side", "right_side", "c_vector", "c_matrix", "M_0", "MX_0", "M_feed", "alphabet", "modelkind", "volume",
    "t_vector", "atol_vector", "rtol", "cs_vector", "be_step", "reaction_names" };

std::optional<std::size_t> index_of( std::string_view name )
{
    for ( std::size_t f = 0; f < folder_files.size(); ++f )
        if ( folder_files[f] == name )
            return f;
    return std::nullopt;
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
    static const fs::path dir = [] {
        const fs::path d = morula::fuzz::scratch_dir() / "model";
        fs::create_directories( d );
        return d;
    }();

    // The sections of the input by file; the last one of a name wins.
    const std::string_view input( reinterpret_cast<const char*>( data ), size );
    std::array<std::optional<std::string_view>, folder_files.size()> content;
    std::optional<std::size_t> file;   // index in folder_files of the current section
    std::size_t section = 0;           // where its content starts
    auto close = [&]( std::size_t end ) {
        if ( file )
            content[*file] = input.substr( section, end - section );
    };
    for ( std::size_t pos = 0; pos < input.size(); )
    {
        const std::size_t eol = std::min( input.find( '\n', pos ), input.size() );
        const auto line = input.substr( pos, eol - pos );
        if ( line.substr( 0, 4 ) == "--- " )
        {
            close( pos );
            file = index_of( line.substr( 4 ) );
            section = std::min( eol + 1, input.size() );
        }
        pos = eol + 1;
    }
    close( input.size() );

    // Every file of the folder written or removed: nothing is left from the previous input.
    for ( std::size_t f = 0; f < folder_files.size(); ++f )
    {
        const fs::path path = dir / std::string( folder_files[f] );
        if ( content[f] )
            morula::fuzz::write_file( path, reinterpret_cast<const std::uint8_t*>( content[f]->data() ),
                                      content[f]->size() );
        else
        {
            std::error_code ec;
            fs::remove( path, ec );
        }
    }
    return morula::fuzz::expect_only_input_errors(
        [&] { morula::fuzz::compile( morula::ode::read_folder_model( dir.string() ) ); } );
}
