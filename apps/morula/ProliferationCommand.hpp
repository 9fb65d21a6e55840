// `morula proliferation`: the cell-division simulation (benchmark A of Hesam et al. 2021) and the static
// mechanics benchmark (benchmark B), from a JSON configuration file.
#ifndef MORULA_APPS_PROLIFERATIONCOMMAND_HPP
#define MORULA_APPS_PROLIFERATIONCOMMAND_HPP

#include <CLI/CLI.hpp>

namespace morula::app
{
//! Registers the `proliferation` subcommand on `app`.
void add_proliferation_command( CLI::App& app );
} // namespace morula::app

#endif
