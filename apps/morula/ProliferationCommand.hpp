// `morula proliferation`: the cell-division simulation (benchmark A of Hesam et al. 2021) and the static
// mechanics benchmark (benchmark B), from a JSON configuration file.
#ifndef MORULA_APPS_PROLIFERATIONCOMMAND_HPP
#define MORULA_APPS_PROLIFERATIONCOMMAND_HPP

#include <CLI/CLI.hpp>

#include <string>

namespace morula::app
{
//! Registers the `proliferation` subcommand on `app`.
void add_proliferation_command( CLI::App& app );
//! Reads and validates the `proliferation` configuration file `path` as `morula proliferation --config` does before it
//! starts (every key, value and cross-key rule that needs no allocated model); throws core::InputError
//! naming the file, key and value. The fuzz target tests/fuzz/fuzz_config_proliferation.cpp calls it.
void check_proliferation_config( const std::string& path );
} // namespace morula::app

#endif
