// The configuration of `morula lattice` (docs/models/lattice.md): its settings, read from a JSON file
// through the apps' ConfigTable (each key declared once, with its range), and checked before a run.
#ifndef MORULA_APPS_LATTICECONFIG_HPP
#define MORULA_APPS_LATTICECONFIG_HPP

#include <morula/lattice/DiffusionRules.hpp>

#include <array>
#include <string>
#include <vector>

namespace morula::app
{

struct SpeciesSettings
{
    std::string name;
    long count = 0;
    long tracers = -1; // particles of this species with ids (marked tracers); -1: not given
    std::array<lattice::MoveProbabilities, 3> p; // per axis
};

struct ObstacleSettings
{
    double radius_nm = 0;
    double volume_fraction = 0;
};

// Every key of the configuration file (docs/models/lattice.md); the defaults are a small version of
// the paper's free-diffusion run (2 nm spacing, 10 ns steps).
struct LatticeSettings
{
    std::array<long, 3> size{ 64, 64, 64 };
    double spacing_nm = 2;
    double time_step_ns = 10;
    std::vector<std::string> boundary{ "periodic", "periodic", "periodic" };
    long capacity = 2;
    std::string scheme = "split";
    std::string kernels = "automatic";
    std::vector<SpeciesSettings> species;
    std::vector<ObstacleSettings> obstacles;
    long steps = 2000;
    long sample_every = 20;
    long seed = 1;
    bool tracers = true;
    std::string output = "lattice";
    std::string snapshots;
    long snapshot_every = 0;
    bool progress = true;
    // A crowding sweep (one of the two): the run repeated at each fraction of the slots filled (the
    // species' counts scaled in their configured proportions) or at each volume fraction of obstacles[0];
    // D_eff/D0 per species at each point (docs/models/lattice.md, "Crowding sweep").
    std::vector<double> sweep_slot_fraction;
    std::vector<double> sweep_obstacle_fraction;
};

//! Reads every key of the configuration file `path` into `s` (keys not in the file keep their values).
//! \throws core::InputError naming the file, key and value
void read_lattice_config( const std::string& path, LatticeSettings& s );
//! The same for JSON text in memory, named `name` in errors.
void read_lattice_config_text( const std::string& json, const std::string& name, LatticeSettings& s );

} // namespace morula::app

#endif
