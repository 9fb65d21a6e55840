// `morula ode`: integrate a mass-action reaction network (LASSIE folder, SBML or text model) with the
// RKF45/BDF solver and write the trajectories (CSV, PNG); generate LASSIE-style synthetic networks.
#ifndef MORULA_APPS_ODECOMMAND_HPP
#define MORULA_APPS_ODECOMMAND_HPP

#include <CLI/CLI.hpp>

namespace morula::app
{
//! Registers the `ode` subcommand (with `ode run` and `ode generate`) on `app`.
void add_ode_command( CLI::App& app );
} // namespace morula::app

#endif
