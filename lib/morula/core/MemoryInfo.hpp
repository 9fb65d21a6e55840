/*!
  \file MemoryInfo.hpp
  \brief How many bytes Views in a memory space may still take, so that a model too large for its device
  is refused with the figures before anything is allocated (instead of an allocation failure halfway
  through, or the host's out-of-memory killer).
*/
#ifndef MORULA_CORE_MEMORYINFO_HPP
#define MORULA_CORE_MEMORYINFO_HPP

#include <Kokkos_Core.hpp>

#if defined( KOKKOS_ENABLE_CUDA )
#include <cuda_runtime_api.h>
#elif defined( KOKKOS_ENABLE_HIP )
#include <hip/hip_runtime_api.h>
#endif
#include <unistd.h>

namespace morula::core
{

//! The host's physical memory in bytes (0 when unknown). Physical, not free: page caches and other
//! programs give memory back, so free memory would refuse runs that fit.
inline double host_memory_bytes()
{
    const long pages = sysconf( _SC_PHYS_PAGES ), page = sysconf( _SC_PAGE_SIZE );
    return pages > 0 && page > 0 ? double( pages ) * double( page ) : 0.0;
}

/*!
  \brief Bytes that Views in `MemorySpace` may take now: the GPU's free memory for a CUDA or HIP device
  space (what other allocations, of this process or another, already hold is not available), the
  host's physical memory for a space the host can reach (host, pinned, managed). 0 when unknown.
*/
template <class MemorySpace>
double available_memory_bytes()
{
    if constexpr ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible )
        return host_memory_bytes();
    else
    {
#if defined( KOKKOS_ENABLE_CUDA )
        std::size_t free_bytes = 0, total = 0;
        if ( cudaMemGetInfo( &free_bytes, &total ) == cudaSuccess )
            return double( free_bytes );
#elif defined( KOKKOS_ENABLE_HIP )
        std::size_t free_bytes = 0, total = 0;
        if ( hipMemGetInfo( &free_bytes, &total ) == hipSuccess )
            return double( free_bytes );
#endif
        return 0.0;
    }
}

//! "the 80 GB free on the GPU" or "the 24 GB of this machine's memory": where available_memory_bytes
//! looked, for messages.
template <class MemorySpace>
const char* available_memory_source()
{
    return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible ? "of this machine's memory"
                                                                                  : "free on the GPU";
}

} // namespace morula::core

#endif
