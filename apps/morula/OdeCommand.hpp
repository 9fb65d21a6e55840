// `morula ode`: integrate a mass-action reaction network (LASSIE folder, SBML or text model) with the
// RKF45/BDF solver and write the trajectories (CSV, PNG); generate LASSIE-style synthetic networks.
#ifndef MORULA_APPS_ODECOMMAND_HPP
#define MORULA_APPS_ODECOMMAND_HPP

#include <CLI/CLI.hpp>

#include <string>

namespace morula::app
{
//! Registers the `ode` subcommand (with `ode run` and `ode generate`) on `app`.
void add_ode_command( CLI::App& app );
//! Reads `morula ode run --config FILE` into the command's options exactly as the command does before it
//! starts (the fuzz target of the run configs); throws core::InputError for bad input.
void check_ode_run_config( const std::string& path );
} // namespace morula::app

#endif
