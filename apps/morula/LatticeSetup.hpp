// What `morula lattice` builds before it steps: the lattice's shape, the species' move rules, the pass
// options, and the initial lattice (obstacles, then particles, placed with the hashed RNG) with its code
// map. The command and the Python module (python/) both start a run from here, so that the same
// configuration gives the same lattice in both, bit for bit.
#ifndef MORULA_APPS_LATTICESETUP_HPP
#define MORULA_APPS_LATTICESETUP_HPP

#include "LatticeConfig.hpp"

#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/DiffusionOptions.hpp>

#include <Kokkos_Core.hpp>

#include <vector>

namespace morula::app
{
//! What a run without a config file starts from: two tracer species (fast, slow) on the defaults' lattice.
LatticeSettings default_lattice_settings();

lattice::LatticeShape lattice_shape( const LatticeSettings& s );
lattice::DiffusionRules lattice_rules( const LatticeSettings& s );
lattice::DiffusionOptions lattice_options( const LatticeSettings& s );

//! The initial lattice in the default memory space, its code map and each obstacle class's placement.
template <int Slots>
struct LatticeStart
{
    lattice::Lattice<Slots, Kokkos::DefaultExecutionSpace::memory_space> lattice;
    lattice::CodeMap codes;
    std::vector<lattice::ObstaclePlacement> obstacles;
};

/*!
  \brief Refuses (core::InputError, before anything is allocated) a run whose lattice cannot fit in the
  memory of this rank's device: the initial lattice, which every rank builds whole, its slab when the run
  is split over `ranks` MPI ranks, and the driver's Views (lattice::diffusion_memory_bytes). `what` begins
  the message ("config: key 'size' = [...]" or a sweep point).
*/
void refuse_lattice_beyond_memory( const LatticeSettings& s, const std::string& what, int ranks );

/*!
  Places the obstacles, then the particles, as the configuration says (the same on every rank); a
  placement the configuration cannot have is named by its key (core::InputError). First refuses a
  lattice beyond the device's memory (refuse_lattice_beyond_memory, for a run over `ranks` ranks).
  Instantiated for capacities 2, 4 and 8.
*/
template <int Slots>
LatticeStart<Slots> make_lattice_start( const Kokkos::DefaultExecutionSpace& space, const LatticeSettings& s,
                                        int ranks = 1 );
} // namespace morula::app

#endif
