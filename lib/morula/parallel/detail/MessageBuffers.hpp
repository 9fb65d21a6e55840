/*!
  \file MessageBuffers.hpp
  \brief Reusable device and host byte buffers for the send and receive rows of an exchange, grown
  only.
*/
#ifndef MORULA_PARALLEL_DETAIL_MESSAGEBUFFERS_HPP
#define MORULA_PARALLEL_DETAIL_MESSAGEBUFFERS_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/parallel/detail/Ipc.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>


namespace morula::parallel::detail
{

/*!
  \brief Reusable message storage: one device byte buffer for the send rows and one for the receive rows,
  plus host copies of both (page-locked on GPU backends) used only by Transport::staged.

  Every buffer grows (never shrinks) when a request exceeds its capacity, so a halo update or a
  migration that moves no more rows than an earlier one allocates nothing: on a GPU each allocation is
  a cudaMalloc/cudaFree pair, tens of microseconds, paid per call otherwise. Growing is host code,
  between kernels; the views handed out are unmanaged and valid until the next request for more bytes
  than the capacity. Copies share the storage (View semantics): only one
  exchange at a time may use a set of buffers.
*/
template <class MemorySpace>
class MessageBuffers
{
  public:
    using memory_space = MemorySpace;
    //! Page-locked when the backend has it: staging copies then run at the link's speed.
    using host_space = compat::HostPinnedSpace;

    //! Raw bytes of a buffer.
    template <class Space>
    using bytes_view =
        Kokkos::View<unsigned char*, Kokkos::LayoutRight, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

    //! The first `bytes` bytes of the device send / receive buffer, which grows to hold them.
    bytes_view<MemorySpace> send_bytes( std::size_t bytes )
    {
        return bytes_view<MemorySpace>( grow( m_send, bytes, "morula::parallel::send" ), bytes );
    }
    bytes_view<MemorySpace> recv_bytes( std::size_t bytes )
    {
        if ( m_ipc_recv )
            return bytes_view<MemorySpace>( m_ipc_recv->bytes( bytes ), bytes );
        return bytes_view<MemorySpace>( grow( m_recv, bytes, "morula::parallel::recv" ), bytes );
    }

    /*!
      \brief Switches the device receive storage to memory that the node's other processes can map
      (Transport::ipc; kept from then on, for copies made afterwards too) and returns it.
    */
    IpcBuffer& ipc_receive()
    {
        if ( !m_ipc_recv )
        {
            m_ipc_recv = std::make_shared<IpcBuffer>();
            m_recv = decltype( m_recv )();
        }
        return *m_ipc_recv;
    }
    //! Host copies of `bytes` bytes, growing; for staging device buffers through the host.
    bytes_view<host_space> host_send_bytes( std::size_t bytes )
    {
        return bytes_view<host_space>( grow( m_host_send, bytes, "morula::parallel::host_send" ), bytes );
    }
    bytes_view<host_space> host_recv_bytes( std::size_t bytes )
    {
        return bytes_view<host_space>( grow( m_host_recv, bytes, "morula::parallel::host_recv" ), bytes );
    }

    //! Room on the device for `n` (source byte, destination byte, bytes) entries of the self-copy table,
    //! and its host mirror (both grow only).
    std::pair<Kokkos::View<std::size_t* [3], Kokkos::LayoutRight, MemorySpace>,
              typename Kokkos::View<std::size_t* [3], Kokkos::LayoutRight, MemorySpace>::HostMirror>
    copy_table( std::size_t n )
    {
        if ( m_copy_table.extent( 0 ) < n )
        {
            m_copy_table = Kokkos::View<std::size_t* [3], Kokkos::LayoutRight, MemorySpace>(
                "morula::parallel::self_copy_table", n + n / 4 );
            m_copy_table_host = Kokkos::create_mirror_view( m_copy_table );
        }
        return { m_copy_table, m_copy_table_host };
    }

    //! Bytes allocated, device and host buffers together (grows only).
    std::size_t capacity_bytes() const
    {
        return m_send.extent( 0 ) + m_recv.extent( 0 ) + m_host_send.extent( 0 ) +
               m_host_recv.extent( 0 ) + ( m_ipc_recv ? m_ipc_recv->capacity() : 0 );
    }
    //! Start of the device send / receive storage (changes only when a buffer grows).
    const void* send_data() const { return m_send.data(); }
    const void* recv_data() const { return m_ipc_recv ? static_cast<const void*>( m_ipc_recv->data() ) : m_recv.data(); }

  private:
    // Rows are multiples of 8 bytes from the buffer's start, and Kokkos allocations are aligned far
    // beyond 16 bytes; rounding capacities to 16 keeps that true should buffers ever be split.
    static constexpr std::size_t alignment = 16;

    static std::size_t rounded( std::size_t bytes )
    {
        return ( bytes + alignment - 1 ) / alignment * alignment;
    }

    // Host code only. The old contents are not kept: a buffer is filled anew by every exchange. The
    // capacity grows by at least a quarter so that slowly growing counts reallocate rarely.
    template <class Storage>
    static unsigned char* grow( Storage& storage, std::size_t bytes, const char* label )
    {
        const std::size_t capacity = storage.extent( 0 );
        if ( bytes > capacity )
        {
            const std::size_t headroom = capacity + capacity / 4;
            const std::size_t want = rounded( bytes > headroom ? bytes : headroom );
            storage = Storage(); // free first: the old and new buffers need not coexist
            storage =
                Storage( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ), want );
        }
        return storage.data();
    }

    Kokkos::View<unsigned char*, Kokkos::LayoutRight, MemorySpace> m_send;
    Kokkos::View<unsigned char*, Kokkos::LayoutRight, MemorySpace> m_recv;
    Kokkos::View<unsigned char*, Kokkos::LayoutRight, host_space> m_host_send;
    Kokkos::View<unsigned char*, Kokkos::LayoutRight, host_space> m_host_recv;
    std::shared_ptr<IpcBuffer> m_ipc_recv; // the receive storage once Transport::ipc has been used
    Kokkos::View<std::size_t* [3], Kokkos::LayoutRight, MemorySpace> m_copy_table;
    typename Kokkos::View<std::size_t* [3], Kokkos::LayoutRight, MemorySpace>::HostMirror m_copy_table_host;
};

} // namespace morula::parallel::detail

#endif
