// `morula grid`: a demonstration of the sorted uniform grid on random particles, with a brute-force
// check of the neighbours it finds.
#ifndef MORULA_APPS_GRIDCOMMAND_HPP
#define MORULA_APPS_GRIDCOMMAND_HPP

#include <CLI/CLI.hpp>

#include <string>

namespace morula::app
{
//! Registers the `grid` subcommand on `app`.
void add_grid_command( CLI::App& app );
//! Reads and validates the `grid` configuration file `path` as `morula grid --config` does before it
//! starts (every key, value and cross-key rule that needs no allocated model); throws core::InputError
//! naming the file, key and value. The fuzz target tests/fuzz/fuzz_config_grid.cpp calls it.
void check_grid_config( const std::string& path );
} // namespace morula::app

#endif
