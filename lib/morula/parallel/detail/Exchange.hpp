/*!
  \file Exchange.hpp
  \brief Gather/scatter kernels between SoA fields and contiguous message buffers, the reusable buffers
  themselves (MessageBuffers), and the non-blocking MPI exchange of those buffers (directly, GPU-aware,
  or staged through host copies).
*/
#ifndef MORULA_PARALLEL_DETAIL_EXCHANGE_HPP
#define MORULA_PARALLEL_DETAIL_EXCHANGE_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/SoA.hpp>
#include <morula/parallel/Transport.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <utility>
#include <string>
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

//! buf(k, ...) = field(idx(k), ...), k < n. Free function: nvcc rejects extended lambdas elsewhere.
template <class ExecutionSpace, class IndexView, class FieldView, class BufferView>
void pack_rows( const ExecutionSpace& exec, std::size_t n, const IndexView& idx, const FieldView& field,
                const BufferView& buf )
{
    if ( n == 0 )
        return;
    if constexpr ( FieldView::rank == 1 )
        Kokkos::parallel_for(
            "morula::parallel::pack", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const std::size_t k ) { buf( k ) = field( idx( k ) ); } );
    else
    {
        const int nc = static_cast<int>( field.extent( 1 ) );
        Kokkos::parallel_for(
            "morula::parallel::pack", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const std::size_t k ) {
                const auto i = idx( k );
                for ( int c = 0; c < nc; ++c )
                    buf( k, c ) = field( i, c );
            } );
    }
}

//! buf(k, c) = x(idx(k), c) + shift(slot(k), c): positions with the periodic image of their direction.
template <class ExecutionSpace, class IndexView, class SlotView, class ShiftView, class FieldView,
          class BufferView>
void pack_shifted_positions( const ExecutionSpace& exec, std::size_t n, const IndexView& idx,
                             const SlotView& slot, const ShiftView& shift, const FieldView& x,
                             const BufferView& buf )
{
    if ( n == 0 )
        return;
    Kokkos::parallel_for(
        "morula::parallel::pack_positions", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t k ) {
            const auto i = idx( k );
            const int s = slot( k );
            for ( int c = 0; c < 3; ++c )
                buf( k, c ) = x( i, c ) + shift( s, c );
        } );
}

//! field(dst + k, ...) = buf(src + k, ...), k < n.
template <class ExecutionSpace, class BufferView, class FieldView>
void unpack_rows( const ExecutionSpace& exec, std::size_t n, const BufferView& buf, std::size_t src,
                  const FieldView& field, std::size_t dst )
{
    if ( n == 0 )
        return;
    if constexpr ( FieldView::rank == 1 )
        Kokkos::parallel_for(
            "morula::parallel::unpack", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const std::size_t k ) { field( dst + k ) = buf( src + k ); } );
    else
    {
        const int nc = static_cast<int>( field.extent( 1 ) );
        Kokkos::parallel_for(
            "morula::parallel::unpack", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const std::size_t k ) {
                for ( int c = 0; c < nc; ++c )
                    field( dst + k, c ) = buf( src + k, c );
            } );
    }
}

/*!
  \brief Reusable message storage: one device byte buffer for the send rows and one for the receive rows,
  plus host copies of both (page-locked on GPU backends) used only by Transport::staged.

  Every buffer grows (never shrinks) when a request exceeds its capacity, so a halo update or a
  migration that moves no more rows than an earlier one allocates nothing: on a GPU each allocation is
  a cudaMalloc/cudaFree pair, tens of microseconds, paid per field and per call otherwise. Growing is
  host code, between kernels; the typed views handed out are unmanaged and valid until the next
  request for more rows than the capacity. Copies share the storage (View semantics): only one
  exchange at a time may use a set of buffers.
*/
template <class MemorySpace>
class MessageBuffers
{
  public:
    using memory_space = MemorySpace;
    //! Page-locked when the backend has it: staging copies then run at the link's speed.
    using host_space = compat::HostPinnedSpace;

    //! `rows` rows of a field of type T (T or T[N]) over buffer storage: LayoutRight, so that a run of
    //! rows is one contiguous block and one message.
    template <class T>
    using rows_view = Kokkos::View<typename core::detail::soa_data_type<T>::type, Kokkos::LayoutRight,
                                   MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    //! Raw bytes of a buffer.
    template <class Space>
    using bytes_view =
        Kokkos::View<unsigned char*, Kokkos::LayoutRight, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

    //! Send rows of type T, growing the send buffer to hold `rows` of them.
    template <class T>
    rows_view<T> send_rows( std::size_t rows )
    {
        return typed<T>( grow( m_send, bytes_for<T>( rows ), "morula::parallel::send" ), rows );
    }
    //! Receive rows of type T, growing the receive buffer to hold `rows` of them.
    template <class T>
    rows_view<T> recv_rows( std::size_t rows )
    {
        return typed<T>( grow( m_recv, bytes_for<T>( rows ), "morula::parallel::recv" ), rows );
    }

    //! The first `bytes` of the device buffers (after send_rows()/recv_rows() made room for them).
    bytes_view<MemorySpace> send_bytes( std::size_t bytes ) const
    {
        return bytes_view<MemorySpace>( m_send.data(), bytes );
    }
    bytes_view<MemorySpace> recv_bytes( std::size_t bytes ) const
    {
        return bytes_view<MemorySpace>( m_recv.data(), bytes );
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
               m_host_recv.extent( 0 );
    }
    //! Start of the device send / receive storage (changes only when a buffer grows).
    const void* send_data() const { return m_send.data(); }
    const void* recv_data() const { return m_recv.data(); }

  private:
    // Every buffer is used for one field at a time from its start, and Kokkos allocations are aligned
    // far beyond 16 bytes; rounding capacities to 16 keeps that true should buffers ever be split.
    static constexpr std::size_t alignment = 16;

    static std::size_t rounded( std::size_t bytes )
    {
        return ( bytes + alignment - 1 ) / alignment * alignment;
    }

    template <class T>
    static std::size_t bytes_for( std::size_t rows )
    {
        static_assert( alignof( T ) <= alignment, "MessageBuffers: field type aligned beyond 16 bytes" );
        return rounded( rows * sizeof( T ) ); // sizeof(T[N]) = N sizeof(T): a whole row
    }

    template <class T>
    static rows_view<T> typed( unsigned char* data, std::size_t rows )
    {
        return rows_view<T>( reinterpret_cast<typename rows_view<T>::pointer_type>( data ), rows );
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
    Kokkos::View<std::size_t* [3], Kokkos::LayoutRight, MemorySpace> m_copy_table;
    typename Kokkos::View<std::size_t* [3], Kokkos::LayoutRight, MemorySpace>::HostMirror m_copy_table_host;
};

/*!
  \brief recv[dst_i + b] = send[src_i + b] for every entry i = (src_i, dst_i, first_i) of `table` and
  every byte b of it, in one kernel over all `total` bytes: entry i covers flat bytes [first_i,
  first_(i+1)), found by binary search. Free function: nvcc rejects extended lambdas elsewhere.
*/
template <class ExecutionSpace, class Table, class Bytes>
void copy_table_bytes( const ExecutionSpace& exec, const Table& table, std::size_t entries, std::size_t total,
                       const Bytes& send, const Bytes& recv )
{
    Kokkos::parallel_for(
        "morula::parallel::copy_self_messages", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, total ),
        KOKKOS_LAMBDA( const std::size_t k ) {
            // table(i, 2) = first byte of entry i in the flat range; find the last entry starting <= k
            std::size_t lo = 0, hi = entries;
            while ( hi - lo > 1 )
            {
                const std::size_t mid = ( lo + hi ) / 2;
                if ( table( mid, 2 ) <= k ) lo = mid;
                else hi = mid;
            }
            const std::size_t b = k - table( lo, 2 );
            recv( table( lo, 1 ) + b ) = send( table( lo, 0 ) + b );
        } );
}

//! Posts every receive, then every send, of `plan` on the given (host- or MPI-accessible) buffers of
//! rows of `row_bytes` bytes and waits for all. MPI tag of a message: tag_offset + message.tag * tag_stride.
inline void post_and_wait( MPI_Comm comm, const CommPlan& plan, int tag_offset, int tag_stride,
                           std::size_t row_bytes, const unsigned char* send, unsigned char* recv )
{
    std::vector<MPI_Request> requests;
    requests.reserve( plan.sends.size() + plan.recvs.size() );
    auto bytes_of = [&]( const Message& m ) {
        const std::size_t b = m.count * row_bytes;
        if ( b > static_cast<std::size_t>( INT_MAX ) )
            throw core::CapacityError( core::detail::concat(
                "parallel: a message of ", m.count, " rows (", b,
                " bytes) exceeds MPI's int count; use more ranks" ) );
        return static_cast<int>( b );
    };
    for ( const auto& m : plan.recvs )
    {
        if ( m.count == 0 )
            continue;
        requests.emplace_back();
        MPI_Irecv( recv + m.offset * row_bytes, bytes_of( m ), MPI_BYTE, m.rank,
                   tag_offset + m.tag * tag_stride, comm, &requests.back() );
    }
    for ( const auto& m : plan.sends )
    {
        if ( m.count == 0 )
            continue;
        requests.emplace_back();
        MPI_Isend( send + m.offset * row_bytes, bytes_of( m ), MPI_BYTE, m.rank,
                   tag_offset + m.tag * tag_stride, comm, &requests.back() );
    }
    MPI_Waitall( static_cast<int>( requests.size() ), requests.data(), MPI_STATUSES_IGNORE );
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

/*!
  \brief Exchanges the send rows of `buffers` (rows of `row_bytes`) into its receive rows following `plan`.

  Messages from this rank to itself (one or two ranks along a periodic axis) never reach MPI: their rows
  are copied from the send to the receive buffer on the device, all of them in one kernel. With Transport::staged only the rows of
  the other messages go through the (page-locked) host copies, one copy per contiguous run of rows, so
  rows that stay (migrate()'s stayers) or go to this rank are never staged.
*/
template <class ExecutionSpace, class MemorySpace>
void exchange_buffers( const ExecutionSpace& exec, MPI_Comm comm, const CommPlan& plan, int tag_offset,
                       int tag_stride, std::size_t row_bytes, MessageBuffers<MemorySpace>& buffers,
                       Transport transport )
{
    const std::size_t send_bytes = plan.send_rows * row_bytes;
    const std::size_t recv_bytes = plan.recv_rows * row_bytes;
    const auto send = buffers.send_bytes( send_bytes );
    const auto recv = buffers.recv_bytes( recv_bytes );
    const auto [self, remote] = split_self_messages( comm, plan );
    auto rows = [row_bytes]( const auto& view, std::size_t first, std::size_t count ) {
        return Kokkos::subview( view, Kokkos::make_pair( first * row_bytes, ( first + count ) * row_bytes ) );
    };
    // Messages to this rank: one kernel for all of them (26 of them with one rank in a periodic box;
    // a copy each would cost a launch each).
    if ( !self.empty() )
    {
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
    if ( transport == Transport::staged )
    {
        const auto hsend = buffers.host_send_bytes( send_bytes );
        const auto hrecv = buffers.host_recv_bytes( recv_bytes );
        for ( const auto& [first, last] : message_runs( remote.sends ) )
            Kokkos::deep_copy( exec, rows( hsend, first, last - first ), rows( send, first, last - first ) );
        exec.fence(); // the pack kernels and the copies must be done before MPI reads the host rows
        post_and_wait( comm, remote, tag_offset, tag_stride, row_bytes, hsend.data(), hrecv.data() );
        for ( const auto& [first, last] : message_runs( remote.recvs ) )
            Kokkos::deep_copy( exec, rows( recv, first, last - first ), rows( hrecv, first, last - first ) );
    }
    else
    {
        exec.fence(); // the pack kernels must have finished before MPI reads the buffers
        post_and_wait( comm, remote, tag_offset, tag_stride, row_bytes, send.data(), recv.data() );
    }
}

/*!
  \brief The one pack - exchange - unpack sequence of Halo and migrate(), for rows of type T over
  `buffers`: pack(send) fills plan.send_rows rows, the rows travel following `plan`, and
  unpack(send, recv) writes them where they belong (plan.recv_rows received rows).

  pack and unpack are host callables that launch kernels (free functions: nvcc rejects extended
  lambdas inside lambdas).
*/
template <class T, class ExecutionSpace, class MemorySpace, class Pack, class Unpack>
void pack_exchange_unpack( const ExecutionSpace& exec, MPI_Comm comm, const CommPlan& plan,
                           int tag_offset, int tag_stride, MessageBuffers<MemorySpace>& buffers,
                           Transport transport, Pack&& pack, Unpack&& unpack )
{
    const auto send = buffers.template send_rows<T>( plan.send_rows );
    const auto recv = buffers.template recv_rows<T>( plan.recv_rows );
    pack( send );
    exchange_buffers( exec, comm, plan, tag_offset, tag_stride, sizeof( T ), buffers, transport );
    unpack( send, recv );
}

//! Send rows that stay on this rank: rows [begin, begin + count) of the send buffer go back to field
//! rows [0, count) (migrate() packs stayers and leavers in one buffer). Empty for the halo.
struct KeptRows
{
    std::size_t begin = 0;
    std::size_t count = 0;
};

/*!
  \brief Moves field I of `soa` through `plan`: send rows are field(idx(k)) for k < plan.send_rows,
  received rows are written to field rows [dst, dst + plan.recv_rows), kept rows to the front.
*/
template <std::size_t I, class ExecutionSpace, class SoAType, class IndexView, class MemorySpace>
void exchange_field( const ExecutionSpace& exec, MPI_Comm comm, const CommPlan& plan, int tag_offset,
                     const SoAType& soa, const IndexView& idx, std::size_t dst, Transport transport,
                     MessageBuffers<MemorySpace>& buffers, KeptRows kept = {} )
{
    static_assert( std::is_same_v<typename SoAType::memory_space, MemorySpace>,
                   "exchange_field: the buffers live in another memory space than the SoA" );
    using T = typename SoAType::template field_type<I>;
    const auto& field = soa.template get<I>();
    pack_exchange_unpack<T>(
        exec, comm, plan, tag_offset + static_cast<int>( I ), static_cast<int>( SoAType::num_fields ),
        buffers, transport, [&]( const auto& send ) { pack_rows( exec, plan.send_rows, idx, field, send ); },
        [&]( const auto& send, const auto& recv ) {
            unpack_rows( exec, kept.count, send, kept.begin, field, 0 );
            unpack_rows( exec, plan.recv_rows, recv, 0, field, dst );
        } );
}

} // namespace morula::parallel::detail

#endif
