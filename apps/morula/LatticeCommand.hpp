// `morula lattice`: multiparticle lattice diffusion (Roberts et al. 2009): free, obstructed and crowded ('in
// vivo') experiments from a JSON config, with MSD time series (CSV), D(t) plot (PNG) and HDF5 snapshots.
#ifndef MORULA_APPS_LATTICECOMMAND_HPP
#define MORULA_APPS_LATTICECOMMAND_HPP

#include <CLI/CLI.hpp>

namespace morula::app
{
//! Registers the `lattice` subcommand on `app`.
void add_lattice_command( CLI::App& app );
} // namespace morula::app

#endif
