/*!
  \file Migration.hpp
  \brief Moves particles that left a rank's subdomain to the rank that owns them, with every field of
  the SoA storage.
*/
#ifndef MORULA_PARALLEL_MIGRATION_HPP
#define MORULA_PARALLEL_MIGRATION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/SoA.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/Transport.hpp>
#include <morula/parallel/detail/Exchange.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula::parallel
{

//! What one migrate() did on this rank.
struct MigrationResult
{
    std::size_t num_owned = 0;    //!< Particles owned afterwards (the SoA's new size).
    std::size_t num_sent = 0;     //!< Particles that left this rank.
    std::size_t num_received = 0; //!< Particles that arrived.
    Transport transport = Transport::host_memory;
};

namespace detail
{

//! Wraps positions on periodic axes in place and sets key(i) = owner << 32 | i.
template <class ExecutionSpace, class Scalar, class PositionView, class KeyView>
void migration_keys( const ExecutionSpace& exec, std::size_t n, const CartesianOwner<Scalar>& owner,
                     const PositionView& x, const KeyView& key )
{
    Kokkos::parallel_for(
        "morula::parallel::migration_keys", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t i ) {
            for ( int a = 0; a < 3; ++a )
                x( i, a ) = owner.wrap( a, x( i, a ) );
            const int r = owner( x( i, 0 ), x( i, 1 ), x( i, 2 ) );
            key( i ) = ( static_cast<std::uint64_t>( r ) << 32 ) | static_cast<std::uint64_t>( i );
        } );
}

//! offsets(r) = first sorted key whose rank is >= r, r <= nranks (binary search per rank); idx = key's
//! particle index.
template <class ExecutionSpace, class KeyView, class OffsetView, class IndexView>
void migration_segments( const ExecutionSpace& exec, std::size_t n, int nranks, const KeyView& key,
                         const OffsetView& offsets, const IndexView& idx )
{
    Kokkos::parallel_for(
        "morula::parallel::migration_segments",
        Kokkos::RangePolicy<ExecutionSpace>( exec, 0, nranks + 1 ), KOKKOS_LAMBDA( const int r ) {
            std::size_t lo = 0, hi = n;
            while ( lo < hi )
            {
                const std::size_t mid = lo + ( hi - lo ) / 2;
                if ( static_cast<int>( key( mid ) >> 32 ) < r )
                    lo = mid + 1;
                else
                    hi = mid;
            }
            offsets( r ) = lo;
        } );
    Kokkos::parallel_for(
        "morula::parallel::migration_index", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t k ) {
            idx( k ) = static_cast<int>( key( k ) & 0xffffffffu );
        } );
}

//! Moves field I: packs every particle in destination order, exchanges, and writes the stayers then
//! the arrivals to the front of the field.
template <std::size_t I, class ExecutionSpace, class SoAType, class IndexView>
void migrate_field( const ExecutionSpace& exec, MPI_Comm comm, const CommPlan& plan,
                    std::size_t stay_begin, std::size_t n_stay, const SoAType& soa,
                    const IndexView& idx, Transport transport )
{
    using T = typename SoAType::template field_type<I>;
    using memory_space = typename SoAType::memory_space;
    const auto& field = soa.template get<I>();
    buffer_view<T, memory_space> send(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::send" ), plan.send_rows );
    buffer_view<T, memory_space> recv(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::recv" ), plan.recv_rows );
    pack_rows( exec, plan.send_rows, idx, field, send );
    exchange_buffers( exec, comm, plan, static_cast<int>( I ), static_cast<int>( SoAType::num_fields ),
                      send, recv, transport );
    unpack_rows( exec, n_stay, send, stay_begin, field, 0 );
    unpack_rows( exec, plan.recv_rows, recv, 0, field, n_stay );
    exec.fence();
}

template <class ExecutionSpace, class SoAType, class IndexView, std::size_t... I>
void migrate_fields( const ExecutionSpace& exec, MPI_Comm comm, const CommPlan& plan,
                     std::size_t stay_begin, std::size_t n_stay, const SoAType& soa,
                     const IndexView& idx, Transport transport, std::index_sequence<I...> )
{
    ( migrate_field<I>( exec, comm, plan, stay_begin, n_stay, soa, idx, transport ), ... );
}

} // namespace detail

/*!
  \brief Sends every owned particle that left this rank's subdomain to its owner, with every field.

  Entries [0, n_owned) of `particles` are this rank's particles (field 0 the position, Scalar[3]);
  anything behind them (old ghosts) is dropped. On the device: periodic axes are wrapped into the box
  (the stored positions change accordingly), each particle's owner is computed with
  CartesianDecomposition::owner(), and the particles are sorted by (owner, index) - unique keys, so the
  order is deterministic. Counts go through MPI_Alltoall, so a particle may move any distance, also
  past the neighbouring ranks, and is never lost. Each field then travels in one message per peer.

  Afterwards the SoA holds the particles that stayed, in their original order, followed by the arrivals
  ordered by (source rank, source order). Collective over the decomposition's communicator.
*/
template <class ExecutionSpace, class Scalar, class SoAType>
MigrationResult migrate( const ExecutionSpace& exec, const CartesianDecomposition<Scalar>& decomposition,
                         SoAType& particles, std::size_t n_owned )
{
    static_assert( std::is_same_v<typename SoAType::template field_type<0>, Scalar[3]>,
                   "migrate: field 0 of the SoA must be the position, Scalar[3]" );
    using memory_space = typename SoAType::memory_space;
    if ( n_owned > particles.size() )
        throw core::InputError( core::detail::concat( "parallel::migrate: n_owned = ", n_owned,
                                                      " exceeds the ", particles.size(),
                                                      " stored entries" ) );
    if ( n_owned > 0xffffffffu )
        throw core::CapacityError( core::detail::concat( "parallel::migrate: ", n_owned,
                                                         " particles on one rank exceed 2^32" ) );
    compat::ScopedRegion region( "morula::parallel::migrate" );
    const int nranks = decomposition.size();
    const int me = decomposition.rank();
    const std::size_t n = n_owned;

    Kokkos::View<std::uint64_t*, memory_space> key(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::migration_key" ), n );
    Kokkos::View<int*, memory_space> idx(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::migration_index" ), n );
    Kokkos::View<std::size_t*, memory_space> offsets( "morula::parallel::migration_offsets", nranks + 1 );
    if ( n > 0 )
    {
        detail::migration_keys( exec, n, decomposition.owner(), particles.template get<0>(), key );
        compat::sort( exec, key );
    }
    detail::migration_segments( exec, n, nranks, key, offsets, idx );
    auto h_off = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), offsets );

    std::vector<int> send_count( nranks ), recv_count( nranks );
    for ( int r = 0; r < nranks; ++r )
        send_count[r] = static_cast<int>( h_off( r + 1 ) - h_off( r ) );
    MPI_Alltoall( send_count.data(), 1, MPI_INT, recv_count.data(), 1, MPI_INT, decomposition.comm() );

    detail::CommPlan plan;
    plan.send_rows = n;
    MigrationResult result;
    result.transport = select_transport<memory_space>();
    for ( int r = 0; r < nranks; ++r )
    {
        if ( r == me )
            continue;
        if ( send_count[r] > 0 )
            plan.sends.push_back(
                { r, 0, static_cast<std::size_t>( h_off( r ) ), static_cast<std::size_t>( send_count[r] ) } );
        if ( recv_count[r] > 0 )
            plan.recvs.push_back( { r, 0, plan.recv_rows, static_cast<std::size_t>( recv_count[r] ) } );
        plan.recv_rows += static_cast<std::size_t>( recv_count[r] );
        result.num_sent += static_cast<std::size_t>( send_count[r] );
    }
    const std::size_t n_stay = static_cast<std::size_t>( send_count[me] );
    result.num_received = plan.recv_rows;
    result.num_owned = n_stay + plan.recv_rows;

    // Growing keeps entries [0, n): every field is packed from them before being overwritten.
    particles.resize( result.num_owned > n ? result.num_owned : n );
    detail::migrate_fields( exec, decomposition.comm(), plan, static_cast<std::size_t>( h_off( me ) ),
                            n_stay, particles, idx, result.transport,
                            std::make_index_sequence<SoAType::num_fields>{} );
    particles.resize( result.num_owned );
    return result;
}

} // namespace morula::parallel

#endif
