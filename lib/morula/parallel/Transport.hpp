/*!
  \file Transport.hpp
  \brief How MPI messages reach device data: host memory, GPU-aware MPI, or staged through host mirrors.
*/
#ifndef MORULA_PARALLEL_TRANSPORT_HPP
#define MORULA_PARALLEL_TRANSPORT_HPP

#include <Kokkos_Core.hpp>

#include <mpi.h>
#if defined( OPEN_MPI ) && __has_include( <mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <cstdlib>
#include <cstring>

namespace morula::parallel
{

//! Which memory MPI reads and writes.
enum class Transport : int
{
    host_memory, //!< The data lives in host-accessible memory: MPI uses the buffers directly.
    gpu_aware,   //!< Device buffers handed to a GPU-aware MPI.
    staged       //!< Device buffers copied to and from host mirrors around every message.
};

inline const char* to_string( Transport t )
{
    switch ( t )
    {
    case Transport::host_memory:
        return "host memory";
    case Transport::gpu_aware:
        return "GPU-aware";
    case Transport::staged:
        return "staged through host";
    }
    return "unknown";
}

/*!
  \brief Whether the MPI library accepts device pointers.

  MORULA_MPI_GPU_AWARE=0 or 1 in the environment decides; otherwise OpenMPI's run-time query
  (MPIX_Query_cuda_support, MPIX_Query_rocm_support) when compiled in, else false.
*/
inline bool mpi_gpu_aware()
{
    if ( const char* env = std::getenv( "MORULA_MPI_GPU_AWARE" ) )
    {
        if ( std::strcmp( env, "1" ) == 0 )
            return true;
        if ( std::strcmp( env, "0" ) == 0 )
            return false;
    }
#if defined( KOKKOS_ENABLE_CUDA ) && defined( MPIX_CUDA_AWARE_SUPPORT )
    return MPIX_Query_cuda_support() == 1;
#elif defined( KOKKOS_ENABLE_HIP ) && defined( MPIX_ROCM_AWARE_SUPPORT )
    return MPIX_Query_rocm_support() == 1;
#else
    return false;
#endif
}

//! The transport for buffers in MemorySpace: host memory if the host can access it, else GPU-aware
//! MPI if available, else staging through host mirrors.
template <class MemorySpace>
Transport select_transport()
{
    if constexpr ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible )
        return Transport::host_memory;
    else
        return mpi_gpu_aware() ? Transport::gpu_aware : Transport::staged;
}

} // namespace morula::parallel

#endif
