/*!
  \file LaunchPolicy.hpp
  \brief Execution policies for the short, frequent kernels of the time-stepped models.
*/
#ifndef MORULA_CORE_LAUNCHPOLICY_HPP
#define MORULA_CORE_LAUNCHPOLICY_HPP

#include <Kokkos_Core.hpp>

namespace morula::core
{

/*!
  \brief A 1D range whose functor is passed to the kernel as its argument (Kokkos' "light weight" hint).

  Kokkos' CUDA backend copies a functor of 512 bytes or more into constant memory, and before each such
  launch the host waits for the previous constant-memory kernel to finish (an event synchronisation), so
  back-to-back launches of a large functor never overlap their launch latency with work. The models'
  functors capture many Views (a cell's or element's whole SoA storage, several hundred bytes with the
  mdspan-based View), and a step launches dozens of them: the angiogenesis exchange's 64 sweeps per step
  each paid a fixed cost from this (docs/performance.md, "Tumour growth and angiogenesis (issue #7)").
  Kernel arguments hold up to 4 KB; a functor beyond that still works (Kokkos copies it to global
  memory). On the host backends the hint does nothing.
  Every kernel of the time-stepped models launches through LaunchRange, LaunchTeam or LaunchMDRange; the
  constant-memory path's host wait would also forbid capturing their launches in a graph (core::StepGraph).
*/
template <class ExecutionSpace, class... Traits>
using LaunchRange =
    Kokkos::RangePolicy<ExecutionSpace, Kokkos::Experimental::WorkItemProperty::HintLightWeight_t, Traits...>;

/*!
  \brief A 1D range without the hint, for one long kernel per call whose functor carries read-only tables
  indexed at run time: on CUDA Kokkos copies a functor of 512 bytes or more into constant memory. Both
  places are read through the constant cache, but as the kernel's argument the tables of the register
  Rosenbrock kernel (ode/detail/RosenbrockBatch.hpp), read at run-time offsets, cost registers (sm_90,
  Rodas5P for 3 species in double: 127 -> 134, 4 -> 3 blocks of 128 threads per multiprocessor; on an
  H200 a whole solve of 8.4M Robertson systems took 181 ms where the same kernel launched from constant
  memory took 161). The host wait before such a launch costs nothing where there is one launch per solve;
  never use it for the short, frequent kernels of the time loops.
*/
template <class ExecutionSpace, class... Traits>
using LaunchConstantRange = Kokkos::RangePolicy<ExecutionSpace, Traits...>;

//! The team policy with the same light-weight hint: for team kernels whose functor holds many Views.
template <class ExecutionSpace, class... Traits>
using LaunchTeam =
    Kokkos::TeamPolicy<ExecutionSpace, Kokkos::Experimental::WorkItemProperty::HintLightWeight_t, Traits...>;

//! The multidimensional range with the same light-weight hint.
template <class ExecutionSpace, class Rank, class... Traits>
using LaunchMDRange =
    Kokkos::MDRangePolicy<ExecutionSpace, Rank, Kokkos::Experimental::WorkItemProperty::HintLightWeight_t, Traits...>;

} // namespace morula::core

#endif // MORULA_CORE_LAUNCHPOLICY_HPP
