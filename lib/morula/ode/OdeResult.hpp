/*!
  \file OdeResult.hpp
  \brief What an ODE integration leaves on the device: the samples of every system and its statistics.
*/
#ifndef MORULA_ODE_ODERESULT_HPP
#define MORULA_ODE_ODERESULT_HPP

#include <Kokkos_Core.hpp>

namespace morula::ode
{

template <class MemorySpace>
struct OdeResult
{
    //! (systems, samples, saved species); samples a failed system did not reach are NaN.
    Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace> samples;
    //! (systems, stat_count): SolverStatus in column stat_status, then the counters of StatisticsColumn.
    Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace> statistics;
};

} // namespace morula::ode

#endif
