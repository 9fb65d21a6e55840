// `morula epidermis`: the 3D epidermis model of Christley et al. (2010) (subcellular elements, gene network, growth
// and division) from a JSON config file or flags.
#ifndef MORULA_APPS_EPIDERMISCOMMAND_HPP
#define MORULA_APPS_EPIDERMISCOMMAND_HPP

#include <CLI/CLI.hpp>

#include <string>

namespace morula::app
{
void add_epidermis_command( CLI::App& app );
//! Reads and validates the `epidermis` configuration file `path` as `morula epidermis --config` does before it
//! starts (every key, value and cross-key rule that needs no allocated model); throws core::InputError
//! naming the file, key and value. The fuzz target tests/fuzz/fuzz_config_epidermis.cpp calls it.
void check_epidermis_config( const std::string& path );
}

#endif
