/*!
  \file Error.hpp
  \brief Exception types Morula throws for bad input, exhausted resources and failed file I/O.
*/
#ifndef MORULA_CORE_ERROR_HPP
#define MORULA_CORE_ERROR_HPP

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace morula::core
{

//! Thrown when input (a parameter, a position, a configuration value) is invalid. The message names
//! the function or file, the offending item and what was expected.
class InputError : public std::invalid_argument
{
  public:
    using std::invalid_argument::invalid_argument;
};

//! Thrown when a request cannot be met with the resources available (memory, index ranges).
class CapacityError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/*!
  Thrown when a file cannot be created, opened, written or read back (a snapshot, an output file): a
  failure of the machine, not of the input, and often on one rank only. Not an InputError, which every
  rank raises alike: the `morula` program aborts all ranks on this one, since the others may be waiting
  for this rank in their next collective.
*/
class IoError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

namespace detail
{
//! Concatenates its arguments through an ostream with full floating-point precision.
template <class... Args>
std::string concat( Args&&... args )
{
    std::ostringstream os;
    os.precision( 17 );
    ( os << ... << std::forward<Args>( args ) );
    return os.str();
}
} // namespace detail

} // namespace morula::core

#endif
