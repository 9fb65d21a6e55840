/*!
  \file FuzzSupport.hpp
  \brief What every fuzz target shares: Kokkos initialised once per process, a private scratch folder
         (the readers take paths, not bytes) removed at exit, and the one rule of what counts as a finding.

  A fuzz target calls a Morula reader on the bytes libFuzzer gives it. The documented error path of every
  reader is core::InputError (bad input) or core::IoError (a file that cannot be read); those are caught
  here and are the expected outcome for most inputs. Anything else that leaves the reader - another
  exception type, a crash, a sanitizer report, a hang or an allocation beyond the fuzzer's memory limit -
  is a finding.
*/
#ifndef MORULA_TESTS_FUZZ_FUZZSUPPORT_HPP
#define MORULA_TESTS_FUZZ_FUZZSUPPORT_HPP

#include <morula/core/Error.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <unistd.h>

namespace morula::fuzz
{
namespace fs = std::filesystem;

//! This process' scratch folder, <tmp>/morula-fuzz-<name>-<pid>: libFuzzer's -jobs/-workers run several
//! processes of one target at once, and each needs its own files. $MORULA_FUZZ_SCRATCH names it instead
//! (run-fuzzers.sh, one process per target): the path is in the readers' messages and comparisons, so a
//! pid in it made two runs from the same seed mutate differently after a few hundred inputs.
inline const fs::path& scratch_dir( const std::string& name = "" )
{
    static const fs::path dir = [&] {
        if ( const char* fixed = std::getenv( "MORULA_FUZZ_SCRATCH" ); fixed && *fixed )
        {
            fs::create_directories( fixed );
            return fs::path( fixed );
        }
        std::error_code ec;
        fs::path tmp = fs::temp_directory_path( ec );
        if ( ec )
            tmp = "/tmp";
        fs::path d = tmp / ( "morula-fuzz-" + name + "-" + std::to_string( ::getpid() ) );
        fs::create_directories( d );
        std::atexit( [] {
            std::error_code ignored;
            fs::remove_all( scratch_dir(), ignored );
        } );
        return d;
    }();
    return dir;
}

//! Kokkos once per process (the readers that compile a network allocate Views); finalised at exit.
inline void initialize( int* argc, char*** argv, const std::string& name )
{
    static std::unique_ptr<Kokkos::ScopeGuard> guard;
    if ( !guard )
    {
        guard = std::make_unique<Kokkos::ScopeGuard>( *argc, *argv );
        std::atexit( [] { guard.reset(); } );
    }
    scratch_dir( name );
}

//! Writes `size` bytes to `path` (binary, no newline translation).
inline void write_file( const fs::path& path, const std::uint8_t* data, std::size_t size )
{
    std::ofstream out( path, std::ios::binary | std::ios::trunc );
    out.write( reinterpret_cast<const char*>( data ), static_cast<std::streamsize>( size ) );
    if ( !out )
        std::abort(); // the scratch folder itself failed: not a finding, but nothing else is meaningful
}

//! Runs `read` and swallows the documented error path: core::InputError and core::IoError. Every other
//! exception propagates out of LLVMFuzzerTestOneInput, which libFuzzer reports as a crash.
template <class Read>
int expect_only_input_errors( Read&& read )
{
    try
    {
        read();
    }
    catch ( const core::InputError& )
    {
    }
    catch ( const core::IoError& )
    {
    }
    return 0;
}

} // namespace morula::fuzz

#endif
