/*!
  \file ConfigTarget.hpp
  \brief The fuzz target of one `morula` subcommand's JSON configuration: the input is written to a file
         and handed to the command's check_<command>_config, which reads and validates it exactly as
         `morula <command> --config FILE` does before it starts. Include it once, after defining
         MORULA_FUZZ_CHECK (the check function) and MORULA_FUZZ_NAME (a string).
*/
#include "FuzzSupport.hpp"

extern "C" int LLVMFuzzerInitialize( int* argc, char*** argv )
{
    morula::fuzz::initialize( argc, argv, MORULA_FUZZ_NAME );
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput( const std::uint8_t* data, std::size_t size )
{
    const auto path = morula::fuzz::scratch_dir() / "config.json";
    morula::fuzz::write_file( path, data, size );
    return morula::fuzz::expect_only_input_errors( [&] { MORULA_FUZZ_CHECK( path.string() ); } );
}
