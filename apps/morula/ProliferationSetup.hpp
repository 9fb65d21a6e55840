// What `morula proliferation` builds before it steps: its settings (every key of the configuration file,
// BioDynaMo's values as defaults), read from a file or from JSON text, and the box, parameters and initial
// agents made from them. The command and the Python module (python/) both start a run from here, so that
// the same configuration gives the same model in both.
#ifndef MORULA_APPS_PROLIFERATIONSETUP_HPP
#define MORULA_APPS_PROLIFERATIONSETUP_HPP

#include <morula/core/Box.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <optional>
#include <string>

namespace morula::app
{
// Every key of the configuration file (docs/models/proliferation.md), with BioDynaMo's values as defaults.
struct ProliferationSettings
{
    std::string scenario = "division"; // division (benchmark A) or static (benchmark B)
    std::string precision = "double";
    long cells_per_axis = 64;  // division: a cube of cells_per_axis^3 cells ...
    double spacing = 20;       // ... this far apart
    long agents = 2000000;     // static: this many agents at random positions ...
    double neighbors = 27;     // ... with this many within interaction distance on average
    double diameter = 30;
    double adherence = 0.4;
    double mass = 1;
    double division_diameter = 30.05;
    double growth_rate = 5000;
    double time_step = 0.01;
    double max_displacement = 3;
    double repulsion = 2;
    double attraction = 1;
    double radius_extension = 1.5;
    long sort_every = 1;
    std::string ordering = "morton-rows";
    long agents_per_thread = 0; // force kernel: agents of a grid cell per thread (0: automatic)
    long steps = 10;
    long seed = 1;
    std::string output;          // JSON with counts and timings
    std::string snapshots;       // HDF5 + XDMF prefix
    long snapshot_every = 0;     // 0: first and last step only
    bool progress = true;        // a progress bar on stderr
};

//! Reads the keys the configuration file `path` holds into `s` (the others keep their values); throws
//! core::InputError naming the file, key and value.
void read_proliferation_config( const std::string& path, ProliferationSettings& s );
//! The same for JSON text in memory, named `name` in errors.
void read_proliferation_config_text( const std::string& json, const std::string& name, ProliferationSettings& s );

//! What a run starts from: box, parameters and the initial agents (in the default memory space).
template <class Scalar>
struct ProliferationSetup
{
    using memory_space = Kokkos::DefaultExecutionSpace::memory_space;
    core::Box<Scalar> box;
    mechanics::MechanicsParameters<Scalar> mechanics;
    std::optional<mechanics::GrowthParameters<Scalar>> growth;
    mechanics::SphereAgents<Scalar, memory_space> agents;
};

//! The setup of the settings' scenario: a cube of growing cells (division) or agents locked at random
//! positions (static). Instantiated for float and double.
template <class Scalar>
ProliferationSetup<Scalar> make_proliferation_setup( const ProliferationSettings& s,
                                                     const Kokkos::DefaultExecutionSpace& space );
} // namespace morula::app

#endif
