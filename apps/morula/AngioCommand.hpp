// `morula angiogenesis`: tumour growth and angiogenesis (Worecki and Wcisło 2012) from a JSON configuration file.
#ifndef MORULA_APPS_ANGIOCOMMAND_HPP
#define MORULA_APPS_ANGIOCOMMAND_HPP

#include <CLI/CLI.hpp>

#include <string>

namespace morula::app
{
//! Registers the `angiogenesis` subcommand on `app`.
void add_angiogenesis_command( CLI::App& app );
//! Reads and validates the `angiogenesis` configuration file `path` as `morula angiogenesis --config` does before it
//! starts (every key, value and cross-key rule that needs no allocated model); throws core::InputError
//! naming the file, key and value. The fuzz target tests/fuzz/fuzz_config_angiogenesis.cpp calls it.
void check_angiogenesis_config( const std::string& path );
} // namespace morula::app

#endif
