// Fuzz target: the text reaction format (ode::parse_text_model, docs/models/ode-formats.md), then the
// compilation into a MassActionSystem that `morula ode run` does next.
#include "FuzzSupport.hpp"
#include "ModelCompile.hpp"

#include <morula/ode/ModelReaders.hpp>

#include <string>

extern "C" int LLVMFuzzerInitialize( int* argc, char*** argv )
{
    morula::fuzz::initialize( argc, argv, "reactions_text" );
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput( const std::uint8_t* data, std::size_t size )
{
    const std::string text( reinterpret_cast<const char*>( data ), size );
    return morula::fuzz::expect_only_input_errors(
        [&] { morula::fuzz::compile( morula::ode::parse_text_model( text, "fuzz.txt" ) ); } );
}
