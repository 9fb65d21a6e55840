/*!
  \file SyntheticNetwork.hpp
  \brief Random mass-action networks in the manner of the LASSIE paper (Tangherloni et al., BMC
         Bioinformatics 18:246, 2017): reactions of order at most 2, initial concentrations uniform in [0, 1),
         rate constants log-uniform in [1e-8, 1). docs/models/ode-formats.md gives the exact draws.
*/
#ifndef MORULA_ODE_SYNTHETICNETWORK_HPP
#define MORULA_ODE_SYNTHETICNETWORK_HPP

#include <morula/ode/ReactionNetwork.hpp>

#include <cstdint>

namespace morula::ode
{

//! A network of `species` species named S0..S{species-1} and `reactions` reactions drawn from
//! std::mt19937_64(seed) with Morula's own integer and floating-point mappings, so the same arguments give
//! the same network with every compiler and standard library. No sample times are set. Throws
//! core::InputError when species < 1 or reactions < 0. Not every species is guaranteed to take part in a
//! reaction.
ReactionNetwork generate_synthetic_network( int species, int reactions, std::uint64_t seed );

} // namespace morula::ode

#endif
