/*!
  \file Nccl.hpp
  \brief The NCCL (RCCL with HIP) side of Transport::nccl: a communicator made from an MPI one, grouped
  point-to-point messages on the execution space's stream, and the check that every rank drives a GPU
  of its own. Compiled to stubs that are never reached where the build has no NCCL.
*/
#ifndef MORULA_PARALLEL_DETAIL_NCCL_HPP
#define MORULA_PARALLEL_DETAIL_NCCL_HPP

#include <morula/Config.hpp>
#include <morula/core/Error.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#if MORULA_HAVE_NCCL && defined( KOKKOS_ENABLE_CUDA )
#include <cuda_runtime.h>
#include <nccl.h>
#define MORULA_NCCL_CUDA 1
#elif MORULA_HAVE_NCCL && defined( KOKKOS_ENABLE_HIP )
#include <hip/hip_runtime.h>
#include <rccl/rccl.h>
#define MORULA_NCCL_HIP 1
#endif

#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace morula::parallel::detail
{

#if defined( MORULA_NCCL_CUDA ) || defined( MORULA_NCCL_HIP )
inline constexpr bool nccl_enabled = true;
#else
inline constexpr bool nccl_enabled = false;
#endif

#if defined( MORULA_NCCL_HIP )
inline constexpr const char* nccl_library_name = "RCCL";
#else
inline constexpr const char* nccl_library_name = "NCCL";
#endif

//! One message of a grouped exchange: `bytes` bytes at byte `offset` of the buffer, to or from `peer`.
struct DeviceMessage
{
    int peer = 0;
    std::size_t offset = 0;
    std::size_t bytes = 0;
};

/*!
  \brief Host name and PCI bus id of the GPU this rank drives, gathered over `comm`: true when no two
  ranks share a GPU. Collective. Without a GPU backend: false.
*/
inline bool ranks_on_distinct_devices( MPI_Comm comm )
{
#if defined( MORULA_NCCL_CUDA ) || defined( MORULA_NCCL_HIP )
    constexpr int id_bytes = MPI_MAX_PROCESSOR_NAME + 32;
    std::vector<char> mine( id_bytes, 0 );
    int name_length = 0;
    MPI_Get_processor_name( mine.data(), &name_length );
    int device = 0;
    char bus[32] = {};
#if defined( MORULA_NCCL_CUDA )
    cudaGetDevice( &device );
    cudaDeviceGetPCIBusId( bus, sizeof( bus ), device );
#else
    hipGetDevice( &device );
    hipDeviceGetPCIBusId( bus, sizeof( bus ), device );
#endif
    std::memcpy( mine.data() + MPI_MAX_PROCESSOR_NAME, bus, sizeof( bus ) - 1 );
    int size = 1;
    MPI_Comm_size( comm, &size );
    std::vector<char> all( std::size_t( id_bytes ) * std::size_t( size ) );
    MPI_Allgather( mine.data(), id_bytes, MPI_CHAR, all.data(), id_bytes, MPI_CHAR, comm );
    std::vector<std::string> ids;
    for ( int r = 0; r < size; ++r )
        ids.emplace_back( all.data() + std::size_t( r ) * id_bytes, id_bytes );
    for ( int a = 0; a < size; ++a )
        for ( int b = a + 1; b < size; ++b )
            if ( ids[a] == ids[b] )
                return false;
    return true;
#else
    (void)comm;
    return false;
#endif
}

/*!
  \brief An NCCL communicator over the ranks of an MPI communicator (rank 0 makes the unique id, MPI
  broadcasts it, every rank joins with its own GPU, the one Kokkos selected). Collective construction.
*/
class NcclCommunicator
{
  public:
    explicit NcclCommunicator( MPI_Comm comm )
    {
#if defined( MORULA_NCCL_CUDA ) || defined( MORULA_NCCL_HIP )
        int rank = 0, size = 1;
        MPI_Comm_rank( comm, &rank );
        MPI_Comm_size( comm, &size );
        ncclUniqueId id;
        if ( rank == 0 )
            check( ncclGetUniqueId( &id ), "ncclGetUniqueId" );
        MPI_Bcast( &id, int( sizeof( id ) ), MPI_BYTE, 0, comm );
        check( ncclCommInitRank( &m_comm, size, id, rank ), "ncclCommInitRank" );
#else
        (void)comm;
        throw core::InputError( "parallel: this Morula was built without NCCL/RCCL" );
#endif
    }
    NcclCommunicator( const NcclCommunicator& ) = delete;
    NcclCommunicator& operator=( const NcclCommunicator& ) = delete;
    ~NcclCommunicator()
    {
#if defined( MORULA_NCCL_CUDA ) || defined( MORULA_NCCL_HIP )
        if ( m_comm )
            ncclCommDestroy( m_comm );
#endif
    }

    /*!
      \brief Posts every receive and send in one NCCL group on `exec`'s stream and returns: the
      transfers are ordered after the kernels launched on `exec` before (no fence) and before those
      launched after. Messages between two ranks are matched in the order they are posted: callers
      list each peer's messages in the same order on both sides.
    */
    template <class ExecutionSpace>
    void exchange( const ExecutionSpace& exec, const std::vector<DeviceMessage>& sends,
                   const std::vector<DeviceMessage>& recvs, const unsigned char* send, unsigned char* recv ) const
    {
#if defined( MORULA_NCCL_CUDA ) || defined( MORULA_NCCL_HIP )
        // Exchange.hpp instantiates this for every execution space it is built for; Transport only picks
        // nccl for device memory, so a host space here is a caller's mistake, not a build error.
#if defined( MORULA_NCCL_CUDA )
        constexpr bool device_space = std::is_same_v<ExecutionSpace, Kokkos::Cuda>;
#else
        constexpr bool device_space = std::is_same_v<ExecutionSpace, Kokkos::HIP>;
#endif
        if constexpr ( !device_space )
        {
            (void)exec, (void)sends, (void)recvs, (void)send, (void)recv;
            throw core::InputError( core::detail::concat( "parallel: transport nccl moves device buffers on a GPU "
                                                          "stream, which the execution space ",
                                                          ExecutionSpace::name(), " does not have" ) );
        }
        else
        {
#if defined( MORULA_NCCL_CUDA )
            const auto stream = exec.cuda_stream();
#else
            const auto stream = exec.hip_stream();
#endif
            post_group( sends, recvs, send, recv, stream );
        }
#else
        (void)exec, (void)sends, (void)recvs, (void)send, (void)recv;
        throw core::InputError( "parallel: this Morula was built without NCCL/RCCL" );
#endif
    }

  private:
#if defined( MORULA_NCCL_CUDA ) || defined( MORULA_NCCL_HIP )
    template <class Stream>
    void post_group( const std::vector<DeviceMessage>& sends, const std::vector<DeviceMessage>& recvs,
                     const unsigned char* send, unsigned char* recv, Stream stream ) const
    {
        check( ncclGroupStart(), "ncclGroupStart" );
        for ( const auto& m : recvs )
            if ( m.bytes )
                check( ncclRecv( recv + m.offset, m.bytes, ncclUint8, m.peer, m_comm, stream ), "ncclRecv" );
        for ( const auto& m : sends )
            if ( m.bytes )
                check( ncclSend( send + m.offset, m.bytes, ncclUint8, m.peer, m_comm, stream ), "ncclSend" );
        check( ncclGroupEnd(), "ncclGroupEnd" );
    }

    static void check( ncclResult_t r, const char* call )
    {
        if ( r != ncclSuccess )
            throw core::CapacityError( core::detail::concat( "parallel: ", call, " failed: ", ncclGetErrorString( r ) ) );
    }
    ncclComm_t m_comm = nullptr;
#endif
};

} // namespace morula::parallel::detail

#endif
