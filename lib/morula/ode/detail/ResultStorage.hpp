/*!
  \file ResultStorage.hpp
  \brief The Views of an OdeResult for one solve: a caller's Views reused where their extents fit, else new ones.
*/
#ifndef MORULA_ODE_DETAIL_RESULTSTORAGE_HPP
#define MORULA_ODE_DETAIL_RESULTSTORAGE_HPP

#include <morula/ode/OdeResult.hpp>
#include <morula/ode/SolverOptions.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <limits>

namespace morula::ode::detail
{

/*!
  Views for (systems, samples, saved) samples and (systems, stat_count) statistics: `reuse`'s own where
  their extents are these, else allocated without initialization (a fresh allocation of a large sweep's
  results costs about what its fills do). With `fill` the samples are set to NaN and the statistics to 0,
  for integrators whose kernels do not write every entry themselves.
*/
template <class ExecutionSpace, class MemorySpace>
OdeResult<MemorySpace> result_storage( const ExecutionSpace& exec, const OdeResult<MemorySpace>& reuse, long systems,
                                       int samples, std::size_t saved, bool fill )
{
    OdeResult<MemorySpace> result = reuse;
    const auto n = static_cast<std::size_t>( systems );
    if ( result.samples.extent( 0 ) != n || result.samples.extent( 1 ) != static_cast<std::size_t>( samples ) ||
         result.samples.extent( 2 ) != saved )
        result.samples = Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::samples" ), n, samples, saved );
    if ( result.statistics.extent( 0 ) != n || result.statistics.extent( 1 ) != static_cast<std::size_t>( stat_count ) )
        result.statistics = Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::ode::statistics" ), n, stat_count );
    if ( fill )
    {
        Kokkos::deep_copy( exec, result.samples, std::numeric_limits<double>::quiet_NaN() );
        Kokkos::deep_copy( exec, result.statistics, 0l );
    }
    return result;
}

} // namespace morula::ode::detail

#endif
