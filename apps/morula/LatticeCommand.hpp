// `morula lattice`: multiparticle lattice diffusion (Roberts et al. 2009): free, obstructed and crowded ('in
// vivo') experiments from a JSON config, with MSD time series (CSV), D(t) plot (PNG) and HDF5 snapshots.
#ifndef MORULA_APPS_LATTICECOMMAND_HPP
#define MORULA_APPS_LATTICECOMMAND_HPP

#include <CLI/CLI.hpp>

#include <string>

namespace morula::app
{
//! Registers the `lattice` subcommand on `app`.
void add_lattice_command( CLI::App& app );
//! Reads and validates the `lattice` configuration file `path` as `morula lattice --config` does before it
//! starts (every key, value and cross-key rule that needs no allocated model); throws core::InputError
//! naming the file, key and value. The fuzz target tests/fuzz/fuzz_config_lattice.cpp calls it.
void check_lattice_config( const std::string& path );
} // namespace morula::app

#endif
