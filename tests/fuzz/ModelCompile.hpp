/*!
  \file ModelCompile.hpp
  \brief The step after every model reader in `morula ode run`: compiling the network into the sparse
         structures of MassActionSystem (on the host memory space, so that a fuzz build needs no device).
*/
#ifndef MORULA_TESTS_FUZZ_MODELCOMPILE_HPP
#define MORULA_TESTS_FUZZ_MODELCOMPILE_HPP

#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/ReactionNetwork.hpp>

#include <Kokkos_Core.hpp>

namespace morula::fuzz
{
inline void compile( const ode::ReactionNetwork& network )
{
    const ode::MassActionSystem<Kokkos::HostSpace> system( network );
    (void)system;
}
} // namespace morula::fuzz

#endif
