// Fuzz target: the SBML reader (ode::read_sbml_model through libsbml), then the compilation into a
// MassActionSystem. The input is written to a file: the reader takes a path, as `morula ode run` does.
#include "FuzzSupport.hpp"
#include "ModelCompile.hpp"

#include <morula/ode/ModelReaders.hpp>

extern "C" int LLVMFuzzerInitialize( int* argc, char*** argv )
{
    morula::fuzz::initialize( argc, argv, "sbml" );
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput( const std::uint8_t* data, std::size_t size )
{
    const auto path = morula::fuzz::scratch_dir() / "model.xml";
    morula::fuzz::write_file( path, data, size );
    return morula::fuzz::expect_only_input_errors(
        [&] { morula::fuzz::compile( morula::ode::read_sbml_model( path.string() ) ); } );
}
