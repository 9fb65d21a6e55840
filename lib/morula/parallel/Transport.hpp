/*!
  \file Transport.hpp
  \brief How messages reach device data: host memory, GPU-aware MPI, staged through host mirrors, NCCL
  (RCCL on AMD GPUs) from GPU to GPU, or CUDA (HIP) IPC between the ranks of one node; chosen at run
  time, once per communicator.
*/
#ifndef MORULA_PARALLEL_TRANSPORT_HPP
#define MORULA_PARALLEL_TRANSPORT_HPP

#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/parallel/detail/Ipc.hpp>
#include <morula/parallel/detail/Nccl.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>
#if defined( OPEN_MPI ) && __has_include( <mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

namespace morula::parallel
{

//! Which path a message takes between the ranks' buffers.
enum class Transport : int
{
    host_memory, //!< The data lives in host-accessible memory: MPI uses the buffers directly.
    gpu_aware,   //!< Device buffers handed to a GPU-aware MPI.
    staged,      //!< Device buffers copied to and from (page-locked) host copies around every message.
    nccl,        //!< Device buffers moved GPU to GPU by NCCL (RCCL with HIP) on the execution space's stream.
    ipc          //!< Device buffers copied into the receiver's device buffer through CUDA (HIP) IPC: ranks of
                 //!< one node, also several on one GPU (which NCCL refuses)
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
    case Transport::nccl:
        return detail::nccl_library_name;
    case Transport::ipc:
        return detail::ipc_library_name;
    }
    return "unknown";
}

/*!
  \brief The transport named by `name`: "automatic" (std::nullopt), "host", "gpu-aware", "staged",
  "nccl" (also accepted for RCCL) or "ipc". Throws core::InputError naming `where` and the accepted values.
*/
inline std::optional<Transport> parse_transport( const std::string& name, const std::string& where )
{
    if ( name == "automatic" || name == "auto" || name.empty() )
        return std::nullopt;
    if ( name == "host" )
        return Transport::host_memory;
    if ( name == "gpu-aware" || name == "gpu_aware" )
        return Transport::gpu_aware;
    if ( name == "staged" )
        return Transport::staged;
    if ( name == "nccl" || name == "rccl" )
        return Transport::nccl;
    if ( name == "ipc" )
        return Transport::ipc;
    throw core::InputError( core::detail::concat( where, ": unknown transport '", name,
                                                  "' (expected automatic, host, gpu-aware, staged, nccl or ipc)" ) );
}

//! Whether this build has the NCCL (or RCCL) transport: MORULA_HAVE_NCCL and a CUDA or HIP backend.
constexpr bool nccl_built() { return detail::nccl_enabled; }

//! Whether this build has the IPC transport: a CUDA or HIP backend (the runtime provides it).
constexpr bool ipc_built() { return detail::ipc_enabled; }

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

//! Whether MemorySpace is the GPU's own memory (CudaSpace, HIPSpace), which NCCL and IPC move.
template <class MemorySpace>
constexpr bool nccl_memory_space()
{
#if defined( KOKKOS_ENABLE_CUDA )
    if constexpr ( std::is_same_v<MemorySpace, Kokkos::CudaSpace> )
        return true;
#endif
#if defined( KOKKOS_ENABLE_HIP )
    if constexpr ( std::is_same_v<MemorySpace, compat::HIPSpace> )
        return true;
#endif
    return false;
}

/*!
  \brief The transport requested by MORULA_TRANSPORT (automatic when unset); throws core::InputError
  for an unknown value.
*/
inline std::optional<Transport> requested_transport()
{
    const char* env = std::getenv( "MORULA_TRANSPORT" );
    return env ? parse_transport( env, "MORULA_TRANSPORT" ) : std::nullopt;
}

/*!
  \brief The transport for buffers in MemorySpace over `comm`. Collective (every rank of comm calls it
  with the same request, and gets the same answer).

  `request` (default: MORULA_TRANSPORT) forces one; std::nullopt chooses automatically:
  - host-accessible memory: host memory;
  - device memory: NCCL when built, the memory is the GPU's own and every rank of `comm` drives a GPU of
    its own (NCCL refuses two ranks on one GPU: found by gathering each rank's host and PCI bus id);
    else CUDA (HIP) IPC when every rank runs on this node (ranks sharing a GPU included); else
    GPU-aware MPI when the library says so; else staged through host.
  A forced choice that cannot work throws core::InputError saying why: NCCL not built, NCCL or IPC on
  host memory, NCCL with two ranks on one GPU, IPC across nodes. Staged works everywhere (on host
  memory it copies once more, which lets tests on CPU-only machines run the staging code); GPU-aware
  on host memory is host memory.
*/
template <class MemorySpace>
Transport select_transport( MPI_Comm comm, std::optional<Transport> request = requested_transport() )
{
    constexpr bool host_accessible = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
    constexpr bool device_memory = nccl_memory_space<MemorySpace>();
    constexpr bool nccl_here = nccl_built() && device_memory;
    constexpr bool ipc_here = ipc_built() && device_memory;
    if ( request )
    {
        switch ( *request )
        {
        case Transport::host_memory:
            if ( !host_accessible )
                throw core::InputError( core::detail::concat(
                    "transport host: the data lives in ", MemorySpace::name(),
                    ", which the host cannot access (use automatic, staged, gpu-aware, nccl or ipc)" ) );
            return Transport::host_memory;
        case Transport::gpu_aware:
            return host_accessible ? Transport::host_memory : Transport::gpu_aware;
        case Transport::staged:
            return Transport::staged;
        case Transport::nccl:
            if constexpr ( !nccl_built() )
                throw core::InputError( "transport nccl: this Morula was built without NCCL/RCCL "
                                        "(Morula_ENABLE_NCCL and a CUDA or HIP build of Kokkos)" );
            else if constexpr ( !nccl_here )
                throw core::InputError( core::detail::concat(
                    "transport nccl: the data lives in ", MemorySpace::name(), "; ", detail::nccl_library_name,
                    " moves the GPU's own memory only" ) );
            else
            {
                if ( !detail::ranks_on_distinct_devices( comm ) )
                    throw core::InputError( core::detail::concat(
                        "transport nccl: two ranks share a GPU, which ", detail::nccl_library_name,
                        " refuses; run one rank per GPU, or choose ipc or staged" ) );
                return Transport::nccl;
            }
        case Transport::ipc:
            if constexpr ( !ipc_here )
                throw core::InputError( core::detail::concat(
                    "transport ipc: the data lives in ", MemorySpace::name(), "; ", detail::ipc_library_name,
                    " maps a CUDA or HIP device's own memory only" ) );
            else
            {
                if ( !detail::ranks_on_one_node( comm ) )
                    throw core::InputError( core::detail::concat( "transport ipc: the ranks run on several nodes; ",
                                                                  detail::ipc_library_name,
                                                                  " reaches the ranks of one node only" ) );
                return Transport::ipc;
            }
        }
    }
    if constexpr ( host_accessible )
        return Transport::host_memory;
    else
    {
        if constexpr ( nccl_here )
            if ( detail::ranks_on_distinct_devices( comm ) )
                return Transport::nccl;
        if constexpr ( ipc_here )
            if ( detail::ranks_on_one_node( comm ) )
                return Transport::ipc;
        return mpi_gpu_aware() ? Transport::gpu_aware : Transport::staged;
    }
}

/*!
  \brief A transport chosen once for a communicator, with what it needs: the NCCL communicator (made
  from the MPI one on first use, collectively), the peers' buffers mapped through IPC, and whether
  messages from a rank to itself also take the transport (MORULA_SELF_MESSAGES=transport; by default
  they are one device copy kernel).

  Copies share the state. Owned by a CartesianDecomposition or a lattice::LatticeDiffusion on slabs; no
  global state.
*/
class TransportContext
{
  public:
    TransportContext() = default;
    explicit TransportContext( MPI_Comm comm ) : m_state( std::make_shared<State>() ) { m_state->comm = comm; }

    /*!
      \brief The transport for MemorySpace (collective on the first call for each kind of memory). With
      NCCL/RCCL the communicator is made here too, while every rank is in this call: made later, at the
      first exchange, it would wait for ranks that have nothing to send and skip that exchange (four
      ranks on four GPUs, two of them without particles, hung in their first migration).
    */
    template <class MemorySpace>
    Transport transport() const
    {
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
        auto& slot = host ? m_state->host_choice : m_state->device_choice;
        if ( !slot )
        {
            slot = select_transport<MemorySpace>( m_state->comm );
            if ( *slot == Transport::nccl )
                nccl();
        }
        return *slot;
    }

    //! Whether messages to this rank go through the transport rather than a device copy.
    bool self_messages_through_transport() const
    {
        const char* env = std::getenv( "MORULA_SELF_MESSAGES" );
        return env && std::strcmp( env, "transport" ) == 0;
    }

    MPI_Comm comm() const { return m_state->comm; }

    //! The peers' buffers this rank has mapped (Transport::ipc).
    detail::IpcMappings& ipc() const
    {
        if ( !m_state->ipc )
            m_state->ipc = std::make_shared<detail::IpcMappings>();
        return *m_state->ipc;
    }

    //! The NCCL communicator over comm() (collective on first use). Only with Transport::nccl.
    const detail::NcclCommunicator& nccl() const
    {
        if ( !m_state->nccl )
            m_state->nccl = std::make_shared<detail::NcclCommunicator>( m_state->comm );
        return *m_state->nccl;
    }

  private:
    struct State
    {
        MPI_Comm comm = MPI_COMM_NULL;
        std::optional<Transport> host_choice;
        std::optional<Transport> device_choice;
        std::shared_ptr<detail::NcclCommunicator> nccl;
        std::shared_ptr<detail::IpcMappings> ipc;
    };
    std::shared_ptr<State> m_state;
};

} // namespace morula::parallel

#endif
