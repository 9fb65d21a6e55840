/*!
  \file Exchange.hpp
  \brief The exchange of message buffers (MessageBuffers.hpp) of particle rows (MessageRows.hpp)
  through the chosen transport: host memory, GPU-aware MPI, staged through host copies, or NCCL on the
  execution space's stream.
*/
#ifndef MORULA_PARALLEL_DETAIL_EXCHANGE_HPP
#define MORULA_PARALLEL_DETAIL_EXCHANGE_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/core/SoA.hpp>
#include <morula/parallel/Transport.hpp>
#include <morula/parallel/detail/Ipc.hpp>
#include <morula/parallel/detail/MessageBuffers.hpp>
#include <morula/parallel/detail/MessageRows.hpp>
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
        "morula::parallel::copy_self_messages", core::LaunchRange<ExecutionSpace>( exec, 0, total / 8 ),
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
