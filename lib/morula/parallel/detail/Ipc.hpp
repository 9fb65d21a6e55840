/*!
  \file Ipc.hpp
  \brief The CUDA IPC (HIP IPC) side of Transport::ipc, for ranks on one node: a receive buffer whose
  memory other processes can map (IpcBuffer), the mappings a rank keeps of its peers' buffers
  (IpcMappings), and the node check. Compiled to stubs that are never reached without a GPU backend.

  Why a transport of its own: ranks that share a GPU (several MPI ranks per GPU, with MPS) cannot use
  NCCL, which refuses two ranks on one device, and without a GPU-aware MPI every message would travel
  through host memory twice. With IPC the sender copies its rows straight into the receiver's device
  buffer (cudaMemcpyAsync, device to device, or peer to peer between GPUs of the node).
*/
#ifndef MORULA_PARALLEL_DETAIL_IPC_HPP
#define MORULA_PARALLEL_DETAIL_IPC_HPP

#include <morula/core/Error.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined( KOKKOS_ENABLE_CUDA )
#include <cuda_runtime.h>
#define MORULA_IPC_CUDA 1
#elif defined( KOKKOS_ENABLE_HIP )
#include <hip/hip_runtime.h>
#define MORULA_IPC_HIP 1
#endif

namespace morula::parallel::detail
{

#if defined( MORULA_IPC_CUDA ) || defined( MORULA_IPC_HIP )
inline constexpr bool ipc_enabled = true;
#else
inline constexpr bool ipc_enabled = false;
#endif

#if defined( MORULA_IPC_HIP )
inline constexpr const char* ipc_library_name = "HIP IPC";
using ipc_handle_type = hipIpcMemHandle_t;
#elif defined( MORULA_IPC_CUDA )
inline constexpr const char* ipc_library_name = "CUDA IPC";
using ipc_handle_type = cudaIpcMemHandle_t;
#else
inline constexpr const char* ipc_library_name = "CUDA IPC";
struct ipc_handle_type
{
    char reserved[64];
};
#endif

//! Whether every rank of `comm` runs on this node (MPI_COMM_TYPE_SHARED). Collective.
inline bool ranks_on_one_node( MPI_Comm comm )
{
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type( comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node );
    int node_size = 0, size = 0;
    MPI_Comm_size( node, &node_size );
    MPI_Comm_size( comm, &size );
    MPI_Comm_free( &node );
    int local = node_size == size ? 1 : 0, all = 0;
    MPI_Allreduce( &local, &all, 1, MPI_INT, MPI_LAND, comm );
    return all != 0;
}

#if defined( MORULA_IPC_CUDA ) || defined( MORULA_IPC_HIP )
#if defined( MORULA_IPC_CUDA )
#define MORULA_IPC_CALL( call ) ipc_check( call, #call )
inline void ipc_check( cudaError_t e, const char* what )
{
    if ( e != cudaSuccess )
        throw core::CapacityError( core::detail::concat( "parallel: ", what, " failed: ", cudaGetErrorString( e ) ) );
}
#else
#define MORULA_IPC_CALL( call ) ipc_check( call, #call )
inline void ipc_check( hipError_t e, const char* what )
{
    if ( e != hipSuccess )
        throw core::CapacityError( core::detail::concat( "parallel: ", what, " failed: ", hipGetErrorString( e ) ) );
}
#endif
#endif

//! Where a sender's rows go: the receiver's buffer (its handle, an id per buffer and a generation that
//! changes when it grows) and the byte offset of the rows in it. Sent by the receiver, per message.
struct IpcTarget
{
    ipc_handle_type handle{};
    std::uint64_t buffer_id = 0;
    std::uint64_t generation = 0;
    std::uint64_t offset = 0;
};

/*!
  \brief Device memory that peers on the node can map: plain cudaMalloc/hipMalloc (Kokkos' stream-ordered
  allocations cannot be exported), growing by at least a quarter.

  A peer may still map an older allocation after the buffer grew (it learns of the new one with its
  next message to this rank), so grown-out allocations are kept until the buffer is destroyed; with
  growth by a quarter they hold at most four times the last size.
*/
class IpcBuffer
{
  public:
    IpcBuffer() : m_id( next_id() ) {}
    IpcBuffer( const IpcBuffer& ) = delete;
    IpcBuffer& operator=( const IpcBuffer& ) = delete;
    ~IpcBuffer()
    {
#if defined( MORULA_IPC_CUDA )
        for ( void* p : m_allocations )
            cudaFree( p );
#elif defined( MORULA_IPC_HIP )
        for ( void* p : m_allocations )
            (void)hipFree( p );
#endif
    }

    //! The first `bytes` bytes, the buffer grown to hold them (old contents dropped). Host code.
    unsigned char* bytes( std::size_t bytes )
    {
        if ( bytes > m_capacity || !m_data )
        {
            // At least 256 bytes: an exchange may receive nothing, and cudaMalloc( 0 ) gives no allocation
            // to export.
            [[maybe_unused]] const std::size_t want = // unused without a GPU IPC backend
                ( std::max( { bytes, m_capacity + m_capacity / 4, std::size_t( 1 ) } ) + 255 ) / 256 * 256;
#if defined( MORULA_IPC_CUDA ) || defined( MORULA_IPC_HIP )
            void* p = nullptr;
#if defined( MORULA_IPC_CUDA )
            MORULA_IPC_CALL( cudaMalloc( &p, want ) );
            MORULA_IPC_CALL( cudaIpcGetMemHandle( &m_handle, p ) );
#else
            MORULA_IPC_CALL( hipMalloc( &p, want ) );
            MORULA_IPC_CALL( hipIpcGetMemHandle( &m_handle, p ) );
#endif
            m_allocations.push_back( p );
            m_data = static_cast<unsigned char*>( p );
            m_capacity = want;
            ++m_generation;
#else
            throw core::InputError( "parallel: CUDA/HIP IPC needs a CUDA or HIP build" );
#endif
        }
        return m_data;
    }
    std::size_t capacity() const { return m_capacity; }
    unsigned char* data() const { return m_data; }
    //! Where a peer writes rows starting at byte `offset` of the current allocation.
    IpcTarget target( std::size_t offset ) const { return { m_handle, m_id, m_generation, std::uint64_t( offset ) }; }

  private:
    static std::uint64_t next_id()
    {
        static std::atomic<std::uint64_t> counter{ 0 };
        return ++counter;
    }
    std::uint64_t m_id;
    std::uint64_t m_generation = 0;
    ipc_handle_type m_handle{};
    unsigned char* m_data = nullptr;
    std::size_t m_capacity = 0;
    std::vector<void*> m_allocations;
};

/*!
  \brief The peers' buffers this rank has mapped, one mapping per (peer, buffer), replaced when the
  buffer's generation changes, at most eight buffers per peer. Closed when the transport context goes.
*/
class IpcMappings
{
  public:
    IpcMappings() = default;
    IpcMappings( const IpcMappings& ) = delete;
    IpcMappings& operator=( const IpcMappings& ) = delete;
    ~IpcMappings()
    {
        for ( auto& entry : m_open )
            if ( entry.second.second )
                close( entry.second.second );
    }

    /*!
      Device address of byte target.offset of peer's buffer, mapped on first use. A peer's buffers come
      and go (a migrate() without a workspace makes one per call); a mapping of one that the peer has
      freed stays until closed, and the driver then refuses to map a new allocation at the same
      addresses ("already mapped"). So when a mapping fails, this peer's mappings are closed (those still
      in use are mapped again when next needed) and the mapping is tried once more.
    */
    unsigned char* address( int peer, const IpcTarget& target )
    {
        evict_oldest( peer, target.buffer_id );
        auto& slot = m_open[{ peer, target.buffer_id }];
        if ( !slot.second || slot.first != target.generation )
        {
            if ( slot.second )
                close( slot.second );
            slot.second = nullptr;
            if ( !open( target, slot.second ) )
            {
                for ( auto& entry : m_open )
                    if ( entry.first.first == peer && entry.second.second )
                    {
                        close( entry.second.second );
                        entry.second.second = nullptr;
                    }
                void* p = nullptr;
                if ( !open( target, p ) )
                    throw core::CapacityError( core::detail::concat(
                        "parallel: ", ipc_library_name, " could not map the receive buffer of rank ", peer,
                        " (", m_last_error, ")" ) );
                slot.second = p;
            }
            slot.first = target.generation;
        }
        return static_cast<unsigned char*>( slot.second ) + target.offset;
    }

  private:
    // A freed buffer's mapping would hold its memory: keep at most max_buffers_per_peer mappings per peer,
    // closing those of its oldest buffers (ids grow with each buffer a rank makes).
    static constexpr std::size_t max_buffers_per_peer = 8;
    void evict_oldest( int peer, std::uint64_t keep )
    {
        auto first = m_open.lower_bound( { peer, 0 } );
        std::size_t count = 0;
        for ( auto it = first; it != m_open.end() && it->first.first == peer; ++it )
            ++count;
        while ( count >= max_buffers_per_peer && first != m_open.end() && first->first.first == peer &&
                first->first.second != keep )
        {
            if ( first->second.second )
                close( first->second.second );
            first = m_open.erase( first );
            --count;
        }
    }

    // Maps the target's buffer; false (the error kept for the message, and cleared) on failure.
    bool open( const IpcTarget& target, void*& p )
    {
#if defined( MORULA_IPC_CUDA )
        const cudaError_t e = cudaIpcOpenMemHandle( &p, target.handle, cudaIpcMemLazyEnablePeerAccess );
        if ( e == cudaSuccess )
            return true;
        m_last_error = cudaGetErrorString( e );
        cudaGetLastError();
#elif defined( MORULA_IPC_HIP )
        const hipError_t e = hipIpcOpenMemHandle( &p, target.handle, hipIpcMemLazyEnablePeerAccess );
        if ( e == hipSuccess )
            return true;
        m_last_error = hipGetErrorString( e );
        (void)hipGetLastError();
#else
        (void)target;
        m_last_error = "CUDA/HIP IPC needs a CUDA or HIP build";
#endif
        p = nullptr;
        return false;
    }

    static void close( void* p )
    {
#if defined( MORULA_IPC_CUDA )
        cudaIpcCloseMemHandle( p );
#elif defined( MORULA_IPC_HIP )
        (void)hipIpcCloseMemHandle( p );
#else
        (void)p;
#endif
    }
    std::map<std::pair<int, std::uint64_t>, std::pair<std::uint64_t, void*>> m_open;
    std::string m_last_error;
};

//! Enqueues a device-to-device copy of `bytes` bytes on `exec`'s stream (the destination may be a peer's
//! mapped buffer).
template <class ExecutionSpace>
void ipc_copy( const ExecutionSpace& exec, unsigned char* dst, const unsigned char* src, std::size_t bytes )
{
#if defined( MORULA_IPC_CUDA )
    if constexpr ( std::is_same_v<ExecutionSpace, Kokkos::Cuda> )
    {
        MORULA_IPC_CALL( cudaMemcpyAsync( dst, src, bytes, cudaMemcpyDeviceToDevice, exec.cuda_stream() ) );
        return;
    }
#elif defined( MORULA_IPC_HIP )
    if constexpr ( std::is_same_v<ExecutionSpace, Kokkos::HIP> )
    {
        MORULA_IPC_CALL( hipMemcpyAsync( dst, src, bytes, hipMemcpyDeviceToDevice, exec.hip_stream() ) );
        return;
    }
#endif
    (void)exec, (void)dst, (void)src, (void)bytes;
    throw core::InputError( "parallel: CUDA/HIP IPC copies need a CUDA or HIP execution space" );
}

} // namespace morula::parallel::detail

#undef MORULA_IPC_CALL

#endif
