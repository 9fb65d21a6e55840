// `morula angiogenesis`: tumour growth and angiogenesis (Worecki and Wcisło 2012) from a JSON configuration file.
#ifndef MORULA_APPS_ANGIOCOMMAND_HPP
#define MORULA_APPS_ANGIOCOMMAND_HPP

#include <CLI/CLI.hpp>

namespace morula::app
{
//! Registers the `angiogenesis` subcommand on `app`.
void add_angiogenesis_command( CLI::App& app );
} // namespace morula::app

#endif
