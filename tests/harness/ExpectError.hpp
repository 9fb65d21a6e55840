// What the tests of bad input share: an exception of a given type whose message names every part.
#ifndef MORULA_TESTS_HARNESS_EXPECTERROR_HPP
#define MORULA_TESTS_HARNESS_EXPECTERROR_HPP

#include <morula/core/Error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace morula_test
{

//! Expects `f` to throw E with a message containing every part (a failure names the missing part).
template <class E, class F>
void expect_error( F&& f, const std::vector<std::string>& parts )
{
    try
    {
        f();
        ADD_FAILURE() << "no exception";
    }
    catch ( const E& e )
    {
        for ( const auto& p : parts )
            EXPECT_NE( std::string( e.what() ).find( p ), std::string::npos ) << e.what() << "\n  lacks: " << p;
    }
}

//! expect_error for core::InputError, the error of bad input.
template <class F>
void expect_input_error( F&& f, const std::vector<std::string>& parts )
{
    expect_error<morula::core::InputError>( static_cast<F&&>( f ), parts );
}

} // namespace morula_test

#endif
