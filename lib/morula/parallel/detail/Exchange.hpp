/*!
  \file Exchange.hpp
  \brief Gather/scatter kernels between every field of a SoA and message rows (one row per particle, all
  fields in it: one message per neighbour), the reusable buffers themselves (MessageBuffers), and the
  exchange of those buffers through the chosen transport (host memory, GPU-aware MPI, staged through
  host copies, or NCCL on the execution space's stream).
*/
#ifndef MORULA_PARALLEL_DETAIL_EXCHANGE_HPP
#define MORULA_PARALLEL_DETAIL_EXCHANGE_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/SoA.hpp>
#include <morula/parallel/Transport.hpp>
#include <morula/parallel/detail/Ipc.hpp>
#include <morula/parallel/detail/Nccl.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>

namespace morula::parallel::detail
{

//! One message: `count` rows starting at row `offset` of the buffer, to or from `rank`, with `tag`.
struct Message
{
    int rank = MPI_PROC_NULL;
    int tag = 0;
    std::size_t offset = 0;
    std::size_t count = 0;
};

//! Who sends what to whom; every rank's plan agrees with its peers' (counts exchanged beforehand).
struct CommPlan
{
    std::vector<Message> sends;
    std::vector<Message> recvs;
    std::size_t send_rows = 0;
    std::size_t recv_rows = 0;
};

/*!
  \brief Every field of a particle set as one message row: field f of particle i occupies bytes
  [offset_f, offset_f + sizeof(T_f)) of its row (offsets aligned to the field's element type, rows a
  multiple of 8 bytes), so that one message per neighbour carries all fields and one kernel packs them.
  A recursive list rather than a std::tuple: std::get is not callable on the device without
  --expt-relaxed-constexpr.
*/
template <class... Views>
struct FieldRows;

template <>
struct FieldRows<>
{
    KOKKOS_INLINE_FUNCTION void gather( unsigned char*, std::size_t ) const {}
    KOKKOS_INLINE_FUNCTION void scatter( const unsigned char*, std::size_t ) const {}
    KOKKOS_INLINE_FUNCTION void copy( std::size_t, std::size_t ) const {}
};

template <class View, class... Rest>
struct FieldRows<View, Rest...>
{
    using value_type = typename View::non_const_value_type;
    View view;
    std::size_t offset = 0;
    int components = 1;
    FieldRows<Rest...> rest;

    //! row <- particle i
    KOKKOS_INLINE_FUNCTION void gather( unsigned char* row, std::size_t i ) const
    {
        auto* p = reinterpret_cast<value_type*>( row + offset );
        if constexpr ( View::rank == 1 )
            p[0] = view( i );
        else
            for ( int c = 0; c < components; ++c )
                p[c] = view( i, c );
        rest.gather( row, i );
    }
    //! particle i <- row
    KOKKOS_INLINE_FUNCTION void scatter( const unsigned char* row, std::size_t i ) const
    {
        const auto* p = reinterpret_cast<const value_type*>( row + offset );
        if constexpr ( View::rank == 1 )
            view( i ) = p[0];
        else
            for ( int c = 0; c < components; ++c )
                view( i, c ) = p[c];
        rest.scatter( row, i );
    }
    //! particle dst <- particle src, every field
    KOKKOS_INLINE_FUNCTION void copy( std::size_t dst, std::size_t src ) const
    {
        if constexpr ( View::rank == 1 )
            view( dst ) = view( src );
        else
            for ( int c = 0; c < components; ++c )
                view( dst, c ) = view( src, c );
        rest.copy( dst, src );
    }
};

inline FieldRows<> make_field_rows( std::size_t& ) { return {}; }

//! The rows of `view, rest...`, laid out from byte `at` (which ends past the last field).
template <class View, class... Rest>
FieldRows<View, Rest...> make_field_rows( std::size_t& at, const View& view, const Rest&... rest )
{
    using T = typename View::non_const_value_type;
    static_assert( alignof( T ) <= 8, "FieldRows: a field aligned beyond 8 bytes" );
    FieldRows<View, Rest...> rows;
    at = ( at + alignof( T ) - 1 ) / alignof( T ) * alignof( T );
    rows.view = view;
    rows.offset = at;
    rows.components = View::rank == 1 ? 1 : static_cast<int>( view.extent( 1 ) );
    at += sizeof( T ) * std::size_t( rows.components );
    rows.rest = make_field_rows( at, rest... );
    return rows;
}

//! Row bytes ending at byte `end`: a multiple of 8, so that every row starts aligned.
inline std::size_t row_bytes_for( std::size_t end ) { return ( end + 7 ) / 8 * 8; }

template <class SoAType, std::size_t... I>
auto soa_field_rows( const SoAType& soa, std::size_t& at, std::index_sequence<I...> )
{
    return make_field_rows( at, soa.template get<I>()... );
}

//! Every field of `soa` as rows, and the row size in bytes.
template <class SoAType>
auto soa_field_rows( const SoAType& soa, std::size_t& row_bytes )
{
    std::size_t at = 0;
    auto rows = soa_field_rows( soa, at, std::make_index_sequence<SoAType::num_fields>{} );
    row_bytes = row_bytes_for( at );
    return rows;
}

//! Row k of `buf` <- particle idx(k), k < n. Free function: nvcc rejects extended lambdas elsewhere.
template <class ExecutionSpace, class Rows, class IndexView, class Bytes>
void pack_particle_rows( const ExecutionSpace& exec, std::size_t n, const Rows& rows, const IndexView& idx,
                         const Bytes& buf, std::size_t row_bytes )
{
    if ( n == 0 )
        return;
    Kokkos::parallel_for(
        "morula::parallel::pack_rows", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t k ) { rows.gather( buf.data() + k * row_bytes, std::size_t( idx( k ) ) ); } );
}

/*!
  As pack_particle_rows, then the position (field 0, Scalar[3] at byte 0 of the row) gets the periodic
  shift of the direction slot(k) it is exported to.
*/
template <class ExecutionSpace, class Rows, class IndexView, class ShiftView, class Bytes>
void pack_shifted_particle_rows( const ExecutionSpace& exec, std::size_t n, const Rows& rows, const IndexView& idx,
                                 const IndexView& slot, const ShiftView& shift, const Bytes& buf,
                                 std::size_t row_bytes )
{
    if ( n == 0 )
        return;
    using Scalar = typename ShiftView::non_const_value_type;
    Kokkos::parallel_for(
        "morula::parallel::pack_shifted_rows", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t k ) {
            unsigned char* row = buf.data() + k * row_bytes;
            rows.gather( row, std::size_t( idx( k ) ) );
            Scalar* x = reinterpret_cast<Scalar*>( row );
            const int s = slot( k );
            for ( int c = 0; c < 3; ++c )
                x[c] += shift( s, c );
        } );
}

//! Particle dst + k <- row k of `buf`, k < n.
template <class ExecutionSpace, class Rows, class Bytes>
void unpack_particle_rows( const ExecutionSpace& exec, std::size_t n, const Rows& rows, const Bytes& buf,
                           std::size_t row_bytes, std::size_t dst )
{
    if ( n == 0 )
        return;
    Kokkos::parallel_for(
        "morula::parallel::unpack_rows", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t k ) { rows.scatter( buf.data() + k * row_bytes, dst + k ); } );
}

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

/*!
  \brief recv[dst_i + b] = send[src_i + b] for every entry i = (src_i, dst_i, first_i) of `table` and
  every byte b of it, in one kernel over all `total` bytes, 8 bytes per thread (every offset and size
  is a multiple of 8: whole rows): entry i covers flat bytes [first_i, first_(i+1)), found by binary
  search. Free function: nvcc rejects extended lambdas elsewhere.
*/
template <class ExecutionSpace, class Table, class Bytes>
void copy_table_bytes( const ExecutionSpace& exec, const Table& table, std::size_t entries, std::size_t total,
                       const Bytes& send, const Bytes& recv )
{
    const unsigned char* from = send.data();
    unsigned char* to = recv.data();
    Kokkos::parallel_for(
        "morula::parallel::copy_self_messages", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, total / 8 ),
        KOKKOS_LAMBDA( const std::size_t w ) {
            const std::size_t k = 8 * w;
            // table(i, 2) = first byte of entry i in the flat range; find the last entry starting <= k
            std::size_t lo = 0, hi = entries;
            while ( hi - lo > 1 )
            {
                const std::size_t mid = ( lo + hi ) / 2;
                if ( table( mid, 2 ) <= k ) lo = mid;
                else hi = mid;
            }
            const std::size_t b = k - table( lo, 2 );
            *reinterpret_cast<std::uint64_t*>( to + table( lo, 1 ) + b ) =
                *reinterpret_cast<const std::uint64_t*>( from + table( lo, 0 ) + b );
        } );
}

//! MPI's int count of a message of `m.count` rows of `row_bytes` bytes; a CapacityError beyond it.
inline int message_bytes( const Message& m, std::size_t row_bytes )
{
    const std::size_t b = m.count * row_bytes;
    if ( b > static_cast<std::size_t>( INT_MAX ) )
        throw core::CapacityError( core::detail::concat( "parallel: a message of ", m.count, " rows (", b,
                                                         " bytes) exceeds MPI's int count; use more ranks" ) );
    return static_cast<int>( b );
}

//! Posts every receive, then every send, of `plan` on the given (host- or MPI-accessible) buffers of
//! rows of `row_bytes` bytes, and returns the requests. MPI tag of a message: tag_offset + message.tag.
inline std::vector<MPI_Request> post_messages( MPI_Comm comm, const CommPlan& plan, int tag_offset,
                                               std::size_t row_bytes, const unsigned char* send,
                                               unsigned char* recv )
{
    std::vector<MPI_Request> requests;
    requests.reserve( plan.sends.size() + plan.recvs.size() );
    for ( const auto& m : plan.recvs )
    {
        if ( m.count == 0 )
            continue;
        requests.emplace_back();
        MPI_Irecv( recv + m.offset * row_bytes, message_bytes( m, row_bytes ), MPI_BYTE, m.rank,
                   tag_offset + m.tag, comm, &requests.back() );
    }
    for ( const auto& m : plan.sends )
    {
        if ( m.count == 0 )
            continue;
        requests.emplace_back();
        MPI_Isend( send + m.offset * row_bytes, message_bytes( m, row_bytes ), MPI_BYTE, m.rank,
                   tag_offset + m.tag, comm, &requests.back() );
    }
    return requests;
}

//! The messages of `plan` between this rank and itself, paired as MPI would match them (same tag,
//! in order), and the plan without them.
inline std::pair<std::vector<std::pair<Message, Message>>, CommPlan> split_self_messages( MPI_Comm comm,
                                                                                         const CommPlan& plan )
{
    int me = 0;
    MPI_Comm_rank( comm, &me );
    std::vector<std::pair<Message, Message>> self;
    CommPlan remote;
    remote.send_rows = plan.send_rows;
    remote.recv_rows = plan.recv_rows;
    std::vector<bool> used( plan.sends.size(), false );
    for ( const auto& r : plan.recvs )
    {
        if ( r.rank != me || r.count == 0 )
        {
            if ( r.count )
                remote.recvs.push_back( r );
            continue;
        }
        bool found = false;
        for ( std::size_t k = 0; k < plan.sends.size() && !found; ++k )
            if ( !used[k] && plan.sends[k].rank == me && plan.sends[k].tag == r.tag && plan.sends[k].count == r.count )
            {
                used[k] = true;
                found = true;
                self.emplace_back( plan.sends[k], r );
            }
        if ( !found )
            throw core::CapacityError( core::detail::concat( "parallel: a message of ", r.count,
                                                             " rows from this rank to itself (tag ", r.tag,
                                                             ") has no matching send" ) );
    }
    for ( std::size_t k = 0; k < plan.sends.size(); ++k )
        if ( !used[k] && plan.sends[k].count )
        {
            if ( plan.sends[k].rank == me )
                throw core::CapacityError( core::detail::concat( "parallel: a message of ", plan.sends[k].count,
                                                                 " rows from this rank to itself (tag ",
                                                                 plan.sends[k].tag, ") has no matching receive" ) );
            remote.sends.push_back( plan.sends[k] );
        }
    return { self, remote };
}

//! The row ranges [begin, end) the messages cover, merged where they touch: what staging copies.
inline std::vector<std::pair<std::size_t, std::size_t>> message_runs( const std::vector<Message>& messages )
{
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for ( const auto& m : messages )
        runs.emplace_back( m.offset, m.offset + m.count );
    std::sort( runs.begin(), runs.end() );
    std::vector<std::pair<std::size_t, std::size_t>> merged;
    for ( const auto& r : runs )
        if ( !merged.empty() && r.first <= merged.back().second )
            merged.back().second = std::max( merged.back().second, r.second );
        else
            merged.push_back( r );
    return merged;
}

//! `view` with at least n entries, reallocated (contents dropped) only when it holds fewer. Host code.
template <class View>
void grow_to( View& view, std::size_t n, const char* label )
{
    if ( view.extent( 0 ) >= n )
        return;
    const std::size_t want = n + n / 4;
    view = View();
    view = View( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ), want );
}

//! Rows [first, first + count) of a byte buffer of rows of `row_bytes` bytes.
template <class Bytes>
auto rows_of( const Bytes& view, std::size_t row_bytes, std::size_t first, std::size_t count )
{
    return Kokkos::subview( view, Kokkos::make_pair( first * row_bytes, ( first + count ) * row_bytes ) );
}

//! The messages of `messages` ordered by (rank, tag): how NCCL, which has no tags and matches the
//! messages between two ranks in posting order, pairs them (both sides post in this order).
inline std::vector<DeviceMessage> device_messages( std::vector<Message> messages, std::size_t row_bytes )
{
    std::stable_sort( messages.begin(), messages.end(), []( const Message& a, const Message& b ) {
        return a.rank != b.rank ? a.rank < b.rank : a.tag < b.tag;
    } );
    std::vector<DeviceMessage> out;
    out.reserve( messages.size() );
    for ( const auto& m : messages )
        if ( m.count )
            out.push_back( { m.rank, m.offset * row_bytes, m.count * row_bytes } );
    return out;
}

/*!
  \brief What a started exchange (exchange_begin()) still has to do in exchange_end(): the MPI
  requests to wait for and, when staged, the received rows to copy back to the device.
*/
struct PendingExchange
{
    bool active = false;
    Transport transport = Transport::host_memory;
    std::size_t row_bytes = 0;
    CommPlan remote; //!< the messages to other ranks (or all, when self messages use the transport)
    std::vector<MPI_Request> requests;
    int tag_offset = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    std::vector<IpcTarget> ipc_targets; //!< IPC: where each sender's rows go (sent, kept until delivered)
    std::vector<char> ipc_done;         //!< IPC: one flag per message in, one out
};

//! MPI tags of the IPC handshake, above every data tag (MPI guarantees tags up to 32767).
inline constexpr int ipc_ready_tag = 4096;
inline constexpr int ipc_done_tag = 8192;

/*!
  \brief Starts the exchange of the first plan.send_rows rows (of `row_bytes` bytes) of the send buffer
  of `buffers` into its receive rows, following `plan`, through `transport`; exchange_end() completes
  it. In between, `exec`'s work may go on, and other execution space instances' work runs
  concurrently: this is how a halo exchange overlaps the interior forces.

  - Messages from this rank to itself (one or two ranks along a periodic axis) are one device copy
    kernel for all of them, unless the context sends them through the transport
    (MORULA_SELF_MESSAGES=transport, for testing a transport with one rank).
  - NCCL: one group of ncclSend/ncclRecv on `exec`'s stream; nothing waits on the host (the pack
    kernels before and the unpack kernels after are ordered on the stream): exchange_end() has
    nothing left to do.
  - GPU-aware MPI and host memory: a fence (the pack kernels must be done), then MPI_Isend/Irecv on the
    buffers; exchange_end() waits.
  - Staged: the rows of messages to other ranks are copied to the page-locked host buffers (one copy
    per contiguous run), a fence, MPI_Isend/Irecv; exchange_end() waits and copies the received runs
    back on `exec`.
  MPI tags: tag_offset + message.tag.
*/
template <class ExecutionSpace, class MemorySpace>
PendingExchange exchange_begin( const ExecutionSpace& exec, const TransportContext& context, Transport transport,
                                const CommPlan& plan, int tag_offset, std::size_t row_bytes,
                                MessageBuffers<MemorySpace>& buffers )
{
    MPI_Comm comm = context.comm();
    if ( transport == Transport::ipc )
        buffers.ipc_receive(); // before the views below: the receive storage changes
    PendingExchange pending;
    pending.active = true;
    pending.transport = transport;
    pending.row_bytes = row_bytes;
    const std::size_t send_bytes = plan.send_rows * row_bytes;
    const std::size_t recv_bytes = plan.recv_rows * row_bytes;
    const auto send = buffers.send_bytes( send_bytes );
    const auto recv = buffers.recv_bytes( recv_bytes );
    pending.remote = plan;
    if ( !context.self_messages_through_transport() )
    {
        auto split = split_self_messages( comm, plan );
        const auto& self = split.first;
        pending.remote = std::move( split.second );
        // Messages to this rank: one kernel for all of them (26 of them with one rank in a periodic
        // box; a copy each would cost a launch each).
        if ( !self.empty() )
        {
            if ( row_bytes % 8 != 0 )
                throw core::CapacityError( core::detail::concat( "parallel: message rows of ", row_bytes,
                                                                 " bytes (expected a multiple of 8)" ) );
            auto [table, host_table] = buffers.copy_table( self.size() );
            std::size_t total = 0;
            for ( std::size_t i = 0; i < self.size(); ++i )
            {
                host_table( i, 0 ) = self[i].first.offset * row_bytes;
                host_table( i, 1 ) = self[i].second.offset * row_bytes;
                host_table( i, 2 ) = total;
                total += self[i].first.count * row_bytes;
            }
            Kokkos::deep_copy( exec, table, host_table );
            copy_table_bytes( exec, table, self.size(), total, send, recv );
        }
    }
    const CommPlan& remote = pending.remote;
    if ( remote.sends.empty() && remote.recvs.empty() )
        return pending;
    switch ( transport )
    {
    case Transport::nccl:
        context.nccl().exchange( exec, device_messages( remote.sends, row_bytes ),
                                 device_messages( remote.recvs, row_bytes ), send.data(), recv.data() );
        break;
    case Transport::staged:
    {
        const auto hsend = buffers.host_send_bytes( send_bytes );
        const auto hrecv = buffers.host_recv_bytes( recv_bytes );
        for ( const auto& [first, last] : message_runs( remote.sends ) )
            Kokkos::deep_copy( exec, rows_of( hsend, row_bytes, first, last - first ),
                               rows_of( send, row_bytes, first, last - first ) );
        exec.fence(); // the pack kernels and the copies must be done before MPI reads the host rows
        pending.requests = post_messages( comm, remote, tag_offset, row_bytes, hsend.data(), hrecv.data() );
        break;
    }
    case Transport::host_memory:
    case Transport::gpu_aware:
        exec.fence(); // the pack kernels must have finished before MPI reads the buffers
        pending.requests = post_messages( comm, remote, tag_offset, row_bytes, send.data(), recv.data() );
        break;
    case Transport::ipc:
    {
        // Earlier readers of the receive buffer (unpacks) are done before peers write into it.
        exec.fence();
        auto& ipc_buffer = buffers.ipc_receive();
        // 1. Tell each sender where its rows go (the buffer's handle and the rows' offset).
        pending.ipc_targets.reserve( remote.recvs.size() );
        for ( const auto& m : remote.recvs )
        {
            pending.ipc_targets.push_back( ipc_buffer.target( m.offset * row_bytes ) );
            pending.requests.emplace_back();
            MPI_Isend( &pending.ipc_targets.back(), int( sizeof( IpcTarget ) ), MPI_BYTE, m.rank,
                       ipc_ready_tag + tag_offset + m.tag, comm, &pending.requests.back() );
        }
        // 2. Copy our rows into each receiver's buffer on exec's stream as its target arrives.
        int me = 0;
        MPI_Comm_rank( comm, &me );
        for ( const auto& m : remote.sends )
        {
            IpcTarget target;
            MPI_Recv( &target, int( sizeof( IpcTarget ) ), MPI_BYTE, m.rank, ipc_ready_tag + tag_offset + m.tag, comm,
                      MPI_STATUS_IGNORE );
            unsigned char* dst =
                m.rank == me ? recv.data() + target.offset : context.ipc().address( m.rank, target );
            ipc_copy( exec, dst, send.data() + m.offset * row_bytes, m.count * row_bytes );
        }
        // 3. Each sender says when its copy is complete (exchange_end()).
        pending.ipc_done.assign( remote.recvs.size() + 1, 1 );
        for ( std::size_t k = 0; k < remote.recvs.size(); ++k )
        {
            pending.requests.emplace_back();
            MPI_Irecv( &pending.ipc_done[k], 1, MPI_BYTE, remote.recvs[k].rank,
                       ipc_done_tag + tag_offset + remote.recvs[k].tag, comm, &pending.requests.back() );
        }
        pending.tag_offset = tag_offset;
        pending.comm = comm;
        break;
    }
    }
    return pending;
}

/*!
  \brief Completes an exchange_begin(): waits for its MPI requests and, when staged, copies the
  received rows to the device on `exec` (the instance that unpacks them next). Leaves `pending`
  inactive.
*/
template <class ExecutionSpace, class MemorySpace>
void exchange_end( const ExecutionSpace& exec, PendingExchange& pending, MessageBuffers<MemorySpace>& buffers )
{
    if ( !pending.active )
        throw core::CapacityError( "parallel: exchange_end without exchange_begin (internal error)" );
    pending.active = false;
    if ( pending.transport == Transport::ipc && !pending.remote.sends.empty() )
    {
        // Our copies into the receivers' buffers are complete: tell them.
        exec.fence();
            for ( const auto& m : pending.remote.sends )
        {
            pending.requests.emplace_back();
            MPI_Isend( &pending.ipc_done.back(), 1, MPI_BYTE, m.rank, ipc_done_tag + pending.tag_offset + m.tag,
                       pending.comm, &pending.requests.back() );
        }
    }
    if ( !pending.requests.empty() )
        MPI_Waitall( static_cast<int>( pending.requests.size() ), pending.requests.data(), MPI_STATUSES_IGNORE );
    pending.requests.clear();
    if ( pending.transport == Transport::staged && !pending.remote.recvs.empty() )
    {
        const std::size_t recv_bytes = pending.remote.recv_rows * pending.row_bytes;
        const auto recv = buffers.recv_bytes( recv_bytes );
        const auto hrecv = buffers.host_recv_bytes( recv_bytes );
        for ( const auto& [first, last] : message_runs( pending.remote.recvs ) )
            Kokkos::deep_copy( exec, rows_of( recv, pending.row_bytes, first, last - first ),
                               rows_of( hrecv, pending.row_bytes, first, last - first ) );
    }
}

//! exchange_begin() and exchange_end() in one.
template <class ExecutionSpace, class MemorySpace>
void exchange_buffers( const ExecutionSpace& exec, const TransportContext& context, Transport transport,
                       const CommPlan& plan, int tag_offset, std::size_t row_bytes,
                       MessageBuffers<MemorySpace>& buffers )
{
    auto pending = exchange_begin( exec, context, transport, plan, tag_offset, row_bytes, buffers );
    exchange_end( exec, pending, buffers );
}

} // namespace morula::parallel::detail

#endif
