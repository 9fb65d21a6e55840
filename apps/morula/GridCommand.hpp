// `morula grid`: a demonstration of the sorted uniform grid on random particles, with a brute-force
// check of the neighbours it finds.
#ifndef MORULA_APPS_GRIDCOMMAND_HPP
#define MORULA_APPS_GRIDCOMMAND_HPP

#include <CLI/CLI.hpp>

namespace morula::app
{
//! Registers the `grid` subcommand on `app`.
void add_grid_command( CLI::App& app );
} // namespace morula::app

#endif
