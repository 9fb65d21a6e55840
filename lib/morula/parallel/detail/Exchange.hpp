/*!
  \file Exchange.hpp
  \brief Gather/scatter kernels between SoA fields and contiguous message buffers, and the non-blocking
  MPI exchange of those buffers (directly, GPU-aware, or staged through host mirrors).
*/
#ifndef MORULA_PARALLEL_DETAIL_EXCHANGE_HPP
#define MORULA_PARALLEL_DETAIL_EXCHANGE_HPP

#include <morula/core/Error.hpp>
#include <morula/core/SoA.hpp>
#include <morula/parallel/Transport.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <string>
#include <vector>

namespace morula::parallel::detail
{

//! Message buffer for a field of type T (T* or T*[N]); LayoutRight, so that a run of rows is one
//! contiguous block and one message.
template <class T, class MemorySpace>
using buffer_view = Kokkos::View<typename core::detail::soa_data_type<T>::type, Kokkos::LayoutRight,
                                 MemorySpace>;

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

template <class View>
std::size_t row_elements( const View& v )
{
    if constexpr ( View::rank == 1 )
        return 1;
    else
        return v.extent( 1 );
}

//! Posts every receive, then every send, of `plan` on the given (host- or MPI-accessible) buffers and
//! waits for all. MPI tag of a message: tag_offset + message.tag * tag_stride.
template <class SendView, class RecvView>
void post_and_wait( MPI_Comm comm, const CommPlan& plan, int tag_offset, int tag_stride,
                    const SendView& send, const RecvView& recv )
{
    using value_type = typename SendView::non_const_value_type;
    const std::size_t row_bytes = row_elements( send ) * sizeof( value_type );
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
        MPI_Irecv( reinterpret_cast<char*>( recv.data() ) + m.offset * row_bytes, bytes_of( m ),
                   MPI_BYTE, m.rank, tag_offset + m.tag * tag_stride, comm, &requests.back() );
    }
    for ( const auto& m : plan.sends )
    {
        if ( m.count == 0 )
            continue;
        requests.emplace_back();
        MPI_Isend( reinterpret_cast<const char*>( send.data() ) + m.offset * row_bytes, bytes_of( m ),
                   MPI_BYTE, m.rank, tag_offset + m.tag * tag_stride, comm, &requests.back() );
    }
    MPI_Waitall( static_cast<int>( requests.size() ), requests.data(), MPI_STATUSES_IGNORE );
}

//! Exchanges the rows of one field's send buffer into its receive buffer following `plan`.
template <class ExecutionSpace, class SendView, class RecvView>
void exchange_buffers( const ExecutionSpace& exec, MPI_Comm comm, const CommPlan& plan,
                       int tag_offset, int tag_stride, const SendView& send, const RecvView& recv,
                       Transport transport )
{
    exec.fence(); // the pack kernels must have finished before MPI reads the buffers
    if ( transport == Transport::staged )
    {
        auto hsend = Kokkos::create_mirror_view( send );
        auto hrecv = Kokkos::create_mirror_view( recv );
        Kokkos::deep_copy( hsend, send );
        post_and_wait( comm, plan, tag_offset, tag_stride, hsend, hrecv );
        Kokkos::deep_copy( recv, hrecv );
    }
    else
        post_and_wait( comm, plan, tag_offset, tag_stride, send, recv );
}

/*!
  \brief Moves field I of `soa` through `plan`: send rows are field(idx(k)) for k < plan.send_rows,
  received rows are written to field rows [dst, dst + plan.recv_rows).
*/
template <std::size_t I, class ExecutionSpace, class SoAType, class IndexView>
void exchange_field( const ExecutionSpace& exec, MPI_Comm comm, const CommPlan& plan, int tag_offset,
                     const SoAType& soa, const IndexView& idx, std::size_t dst, Transport transport )
{
    using T = typename SoAType::template field_type<I>;
    using memory_space = typename SoAType::memory_space;
    const auto& field = soa.template get<I>();
    buffer_view<T, memory_space> send(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::send" ), plan.send_rows );
    buffer_view<T, memory_space> recv(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::recv" ), plan.recv_rows );
    pack_rows( exec, plan.send_rows, idx, field, send );
    exchange_buffers( exec, comm, plan, tag_offset + static_cast<int>( I ),
                      static_cast<int>( SoAType::num_fields ), send, recv, transport );
    unpack_rows( exec, plan.recv_rows, recv, 0, field, dst );
}

} // namespace morula::parallel::detail

#endif
