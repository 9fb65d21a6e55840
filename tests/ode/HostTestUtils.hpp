// Helpers of the host-only ODE tests (model readers, parameter sweeps): scratch folders, files, and
// checks that a call throws core::InputError with a message naming what it should.
#ifndef MORULA_TESTS_ODE_HOSTTESTUTILS_HPP
#define MORULA_TESTS_ODE_HOSTTESTUTILS_HPP

#include <morula/core/Error.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace morula_test
{
namespace fs = std::filesystem;
using morula::core::InputError;

//! A fresh folder under the build tree for one test.
inline fs::path scratch( const std::string& name )
{
    const fs::path dir = fs::path( MORULA_ODE_TEST_SCRATCH ) / name;
    fs::remove_all( dir );
    fs::create_directories( dir );
    return dir;
}

inline void write( const fs::path& path, const std::string& text )
{
    std::ofstream out( path, std::ios::binary );
    out << text;
}

//! The message of the InputError that `f` throws; fails the test when it throws nothing or something else.
inline std::string error_of( const std::function<void()>& f )
{
    try
    {
        f();
    }
    catch ( const InputError& e )
    {
        return e.what();
    }
    catch ( const std::exception& e )
    {
        ADD_FAILURE() << "expected InputError, got: " << e.what();
        return {};
    }
    ADD_FAILURE() << "expected InputError, nothing was thrown";
    return {};
}

} // namespace morula_test

#define EXPECT_INPUT_ERROR( call, ... )                                                                          \
    do                                                                                                           \
    {                                                                                                            \
        const std::string message_ = morula_test::error_of( [&] { call; } );                                     \
        for ( const char* part_ : { __VA_ARGS__ } )                                                              \
            EXPECT_NE( message_.find( part_ ), std::string::npos ) << "'" << part_ << "' not in: " << message_; \
    } while ( 0 )

#endif
