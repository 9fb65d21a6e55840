// `morula epidermis`: the 3D epidermis model of Christley et al. (2010) (subcellular elements, gene network, growth
// and division) from a JSON config file or flags.
#ifndef MORULA_APPS_EPIDERMISCOMMAND_HPP
#define MORULA_APPS_EPIDERMISCOMMAND_HPP

#include <CLI/CLI.hpp>

namespace morula::app
{
void add_epidermis_command( CLI::App& app );
}

#endif
