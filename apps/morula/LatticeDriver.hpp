// The lattice model `morula lattice` steps: one rank, or z slabs of the same lattice under an MPI
// launcher with several ranks, each rank keeping its own slab of the whole initial lattice, so that the
// same config gives the same lattice bit for bit.
#ifndef MORULA_APPS_LATTICEDRIVER_HPP
#define MORULA_APPS_LATTICEDRIVER_HPP

#include "MpiSession.hpp"

#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <optional>

namespace morula::app
{
template <int Slots>
using LatticeModel = lattice::LatticeDiffusion<Slots, Kokkos::DefaultExecutionSpace>;

template <int Slots>
void start_model( std::optional<LatticeModel<Slots>>& model, const Kokkos::DefaultExecutionSpace& space,
                  const lattice::Lattice<Slots, Kokkos::DefaultExecutionSpace::memory_space>& lattice,
                  const lattice::DiffusionRules& rules, const lattice::CodeMap& codes, const lattice::DiffusionOptions& opt )
{
#if MORULA_HAVE_MPI
    if ( MpiSession::size() > 1 )
    {
        model.emplace( space, MpiSession::comm(), lattice.shape(),
                       parallel::owned_slab( space, lattice, MpiSession::rank(), MpiSession::size() ), rules, codes, opt );
        return;
    }
#endif
    model.emplace( space, lattice, rules, codes, opt );
}
} // namespace morula::app

#endif
