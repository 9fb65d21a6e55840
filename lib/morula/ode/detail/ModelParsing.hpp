/*!
  \file ModelParsing.hpp
  \brief Strict token and file helpers shared by the model readers (internal; not installed API).
*/
#ifndef MORULA_ODE_DETAIL_MODELPARSING_HPP
#define MORULA_ODE_DETAIL_MODELPARSING_HPP

#include <string>
#include <vector>

namespace morula::ode::detail
{

//! Removes leading and trailing spaces, tabs and carriage returns (files written on Windows keep '\r').
std::string trim( const std::string& s );

//! Splits at runs of spaces and tabs (and '\r').
std::vector<std::string> split_whitespace( const std::string& s );

//! Parses a whole token as a finite decimal number ("1", "-2.5", "3e-7"); false for anything else,
//! including "inf", "nan", hexadecimal and trailing characters, which strtod alone would accept.
bool parse_number( const std::string& token, double& value );

//! Parses a whole token as a non-negative decimal integer that fits an int ("0", "12"; not "1.0", "+1").
bool parse_count( const std::string& token, int& value );

//! [A-Za-z_][A-Za-z0-9_]*
bool is_identifier( const std::string& token );

//! The whole file, or InputError naming the path when it cannot be read.
std::string read_file( const std::string& path );

//! Splits text into lines at '\n' (a last line without '\n' counts; the empty piece after a final '\n' does not).
std::vector<std::string> split_lines( const std::string& text );

//! Formats a double so that strtod reads back the same value (max_digits10, classic locale).
std::string format_exact( double value );

} // namespace morula::ode::detail

#endif
