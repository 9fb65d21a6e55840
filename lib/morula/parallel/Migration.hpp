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

#include <algorithm>
#include <cstdint>
#include <string>
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
    //! The counts went to the neighbour ranks only (no particle went past them on any rank); false when
    //! they went through MPI_Alltoall.
    bool neighbor_counts = false;
};

//! How migrate() exchanges the per-rank counts.
enum class CountExchange : int
{
    neighbors_when_possible, //!< With the neighbour ranks only, unless a particle went further (then all).
    alltoall                 //!< Always MPI_Alltoall (for comparisons and tests).
};

/*!
  \brief Storage that migrate() reuses across calls: the message buffers, the per-particle keys and
  send-row indices, and the leavers' keys. Everything grows only, so migrations of no more particles than
  an earlier one allocate no device memory. Keep one per particle set (e.g. as a member).
*/
template <class MemorySpace>
struct MigrationWorkspace
{
    detail::MessageBuffers<MemorySpace> buffers;
    Kokkos::View<std::uint64_t*, MemorySpace> key;
    Kokkos::View<std::uint64_t*, MemorySpace> leaver_key; //!< the keys of the particles that leave
    Kokkos::View<int*, MemorySpace> index;
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

//! Particles whose owner (key >> 32) is below `me` (below = true) or above it.
template <class ExecutionSpace, class KeyView>
std::size_t count_leavers( const ExecutionSpace& exec, std::size_t n, const KeyView& key, int me, bool below )
{
    std::size_t leavers = 0;
    Kokkos::parallel_reduce(
        "morula::parallel::migration_count_leavers", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t i, std::size_t& c ) {
            const int r = static_cast<int>( key( i ) >> 32 );
            c += below ? r < me : r > me;
        },
        leavers );
    return leavers;
}

/*!
  \brief One stable partition scan: the keys of the leavers go to leaver_key[0, leavers) in particle
  order, and the stayers' indices to idx[first_stay, first_stay + n - leavers), in particle order.
*/
template <class ExecutionSpace, class KeyView, class LeaverKeyView, class IndexView>
void migration_partition( const ExecutionSpace& exec, std::size_t n, const KeyView& key, int me,
                          const LeaverKeyView& leaver_key, const IndexView& idx, std::size_t first_stay )
{
    Kokkos::parallel_scan(
        "morula::parallel::migration_partition", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t i, std::size_t& leavers_before, const bool final ) {
            const bool leaves = static_cast<int>( key( i ) >> 32 ) != me;
            if ( final )
            {
                if ( leaves )
                    leaver_key( leavers_before ) = key( i );
                else
                    idx( first_stay + ( i - leavers_before ) ) = static_cast<int>( i );
            }
            leavers_before += leaves ? 1 : 0;
        } );
}

//! idx rows of the sorted leavers: the first `below` before the stayers, the others after them.
template <class ExecutionSpace, class KeyView, class IndexView>
void migration_leaver_rows( const ExecutionSpace& exec, std::size_t leavers, std::size_t below, std::size_t n_stay,
                            const KeyView& leaver_key, const IndexView& idx )
{
    Kokkos::parallel_for(
        "morula::parallel::migration_leaver_rows", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, leavers ),
        KOKKOS_LAMBDA( const std::size_t j ) {
            idx( j < below ? j : j + n_stay ) = static_cast<int>( leaver_key( j ) & 0xffffffffu );
        } );
}

template <class ExecutionSpace, class SoAType, class IndexView, class MemorySpace, std::size_t... I>
void migrate_fields( const ExecutionSpace& exec, MPI_Comm comm, const CommPlan& plan, KeptRows stayers,
                     std::size_t arrivals_at, const SoAType& soa, const IndexView& idx, Transport transport,
                     MessageBuffers<MemorySpace>& buffers, std::index_sequence<I...> )
{
    // Stayers are packed with the leavers (in destination order) and written back to the front,
    // followed by the arrivals at row arrivals_at (when nobody left, the stayers never moved).
    ( ( exchange_field<I>( exec, comm, plan, 0, soa, idx, arrivals_at, transport, buffers, stayers ),
        exec.fence() ),
      ... );
}

/*!
  \brief The distinct ranks among the decomposition's 26 neighbours, this rank excluded, ascending.
  With one or two ranks along a periodic axis one rank is the neighbour of several slots.
*/
template <class Scalar>
std::vector<int> distinct_neighbor_ranks( const CartesianDecomposition<Scalar>& dec )
{
    std::vector<int> ranks;
    for ( int s = 0; s < num_directions; ++s )
    {
        const int r = dec.neighbor_rank( s );
        if ( r != MPI_PROC_NULL && r != dec.rank() )
            ranks.push_back( r );
    }
    std::sort( ranks.begin(), ranks.end() );
    ranks.erase( std::unique( ranks.begin(), ranks.end() ), ranks.end() );
    return ranks;
}

/*!
  \brief recv_count[r] = what rank r sends here, from this rank's send_count, exchanged with the
  distinct neighbour ranks only when no rank sends a particle further (one MPI_Allreduce decides,
  collectively), else through MPI_Alltoall. Returns whether the neighbour path was taken.

  The neighbour relation is symmetric (direction d from A reaches B, -d from B reaches A), so every
  rank posts exactly the messages its neighbours expect; counts from non-neighbours are zero then.
*/
template <class Scalar>
bool exchange_migration_counts( const CartesianDecomposition<Scalar>& dec, CountExchange mode,
                                const std::vector<int>& send_count, std::vector<int>& recv_count )
{
    MPI_Comm comm = dec.comm();
    std::fill( recv_count.begin(), recv_count.end(), 0 );
    if ( mode == CountExchange::neighbors_when_possible )
    {
        const std::vector<int> neighbors = distinct_neighbor_ranks( dec );
        int local_far = 0;
        for ( int r = 0; r < dec.size(); ++r )
            if ( r != dec.rank() && send_count[r] > 0 &&
                 !std::binary_search( neighbors.begin(), neighbors.end(), r ) )
                local_far = 1;
        int any_far = 0;
        MPI_Allreduce( &local_far, &any_far, 1, MPI_INT, MPI_LOR, comm );
        if ( !any_far )
        {
            // One message per pair of distinct ranks, under a tag that no field message uses (those
            // are < the number of fields); all are received before any field message is posted.
            constexpr int count_tag = 32767; // the least MPI_TAG_UB that MPI allows
            std::vector<MPI_Request> requests( 2 * neighbors.size() );
            for ( std::size_t k = 0; k < neighbors.size(); ++k )
                MPI_Irecv( &recv_count[neighbors[k]], 1, MPI_INT, neighbors[k], count_tag, comm,
                           &requests[2 * k] );
            for ( std::size_t k = 0; k < neighbors.size(); ++k )
                MPI_Isend( &send_count[neighbors[k]], 1, MPI_INT, neighbors[k], count_tag, comm,
                           &requests[2 * k + 1] );
            MPI_Waitall( static_cast<int>( requests.size() ), requests.data(), MPI_STATUSES_IGNORE );
            return true;
        }
    }
    MPI_Alltoall( send_count.data(), 1, MPI_INT, recv_count.data(), 1, MPI_INT, comm );
    return false;
}

//! `view` with at least n entries, reallocated (contents dropped) only when it holds fewer. Host code.
template <class View>
void grow_to( View& view, std::size_t n, const char* label )
{
    if ( view.extent( 0 ) >= n )
        return;
    view = View();
    view = View( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ), n );
}

} // namespace detail

/*!
  \brief Sends every owned particle that left this rank's subdomain to its owner, with every field.

  Entries [0, n_owned) of `particles` are this rank's particles (field 0 the position, Scalar[3]);
  anything behind them (old ghosts) is dropped. On the device: periodic axes are wrapped into the box
  (the stored positions change accordingly), each particle's owner is computed with
  CartesianDecomposition::owner(). One stable partition scan separates the leavers from the stayers,
  and only the leavers are sorted by (owner, index): unique keys, so the order is deterministic, and
  a sort of the few that leave instead of all n. A rank nobody leaves packs nothing.

  Counts: each rank checks whether all its leaving particles go to its (up to 26, deduplicated)
  neighbour ranks; one MPI_Allreduce (logical or) of "some particle went further" follows. If none did,
  counts are exchanged with the neighbour ranks only (MPI_Isend / MPI_Irecv), O(neighbours) instead of
  O(ranks); otherwise through MPI_Alltoall, so a particle may move any distance, also past the
  neighbouring ranks, and is never lost. Both give the same counts, hence the same result;
  CountExchange::alltoall forces the second. Each field then travels in one message per peer, through
  the workspace's buffers: with a workspace kept across calls, a migration of no more particles than
  an earlier one allocates no device memory.

  Afterwards the SoA holds the particles that stayed, in their original order, followed by the arrivals
  ordered by (source rank, source order). Collective over the decomposition's communicator.
*/
template <class ExecutionSpace, class Scalar, class SoAType>
MigrationResult migrate( const ExecutionSpace& exec, const CartesianDecomposition<Scalar>& decomposition,
                         SoAType& particles, std::size_t n_owned,
                         MigrationWorkspace<typename SoAType::memory_space>& workspace,
                         CountExchange counts = CountExchange::neighbors_when_possible )
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

    // The workspace's views may be longer than n (they only grow): kernels take n, the sort a subview.
    detail::grow_to( workspace.key, n, "morula::parallel::migration_key" );
    detail::grow_to( workspace.index, n, "morula::parallel::migration_index" );
    const auto& key = workspace.key;
    const auto& idx = workspace.index;
    // Usually few particles leave a rank, and none on one rank: the stayers keep their order and only
    // the leavers are sorted (by owner, then index). With no leaver nothing is packed at all.
    std::size_t below = 0, above = 0;
    if ( n > 0 )
    {
        detail::migration_keys( exec, n, decomposition.owner(), particles.template get<0>(), key );
        below = detail::count_leavers( exec, n, key, me, true );
        above = detail::count_leavers( exec, n, key, me, false );
    }
    const std::size_t leavers = below + above;
    const std::size_t n_stay = n - leavers;
    std::vector<int> send_count( nranks, 0 ), recv_count( nranks );
    std::vector<std::size_t> h_off( static_cast<std::size_t>( nranks ) + 1, 0 ); // first send row per rank
    if ( leavers > 0 )
    {
        // Send rows: leavers to ranks below this one, the stayers, leavers to ranks above.
        detail::grow_to( workspace.leaver_key, leavers, "morula::parallel::migration_leaver_key" );
        const auto leaver_key =
            Kokkos::subview( workspace.leaver_key, std::make_pair( std::size_t( 0 ), leavers ) );
        detail::migration_partition( exec, n, key, me, leaver_key, idx, below );
        compat::sort( exec, leaver_key );
        detail::migration_leaver_rows( exec, leavers, below, n_stay, leaver_key, idx );
        const auto h_leaver_key = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), leaver_key );
        for ( std::size_t j = 0; j < leavers; ++j )
            ++send_count[static_cast<int>( h_leaver_key( j ) >> 32 )];
    }
    send_count[me] = static_cast<int>( n_stay );
    for ( int r = 0; r < nranks; ++r )
        h_off[r + 1] = h_off[r] + static_cast<std::size_t>( send_count[r] );

    MigrationResult result;
    result.neighbor_counts =
        detail::exchange_migration_counts( decomposition, counts, send_count, recv_count );

    detail::CommPlan plan;
    plan.send_rows = leavers > 0 ? n : 0; // without leavers nothing is packed: the stayers are in place
    result.transport = select_transport<memory_space>();
    for ( int r = 0; r < nranks; ++r )
    {
        if ( r == me )
            continue;
        if ( send_count[r] > 0 )
            plan.sends.push_back(
                { r, 0, h_off[r], static_cast<std::size_t>( send_count[r] ) } );
        if ( recv_count[r] > 0 )
            plan.recvs.push_back( { r, 0, plan.recv_rows, static_cast<std::size_t>( recv_count[r] ) } );
        plan.recv_rows += static_cast<std::size_t>( recv_count[r] );
        result.num_sent += static_cast<std::size_t>( send_count[r] );
    }
    result.num_received = plan.recv_rows;
    result.num_owned = n_stay + plan.recv_rows;

    // Growing keeps entries [0, n): every field is packed from them before being overwritten.
    particles.resize( result.num_owned > n ? result.num_owned : n );
    // Without leavers the stayers are rows [0, n) already: nothing to keep from the send buffer.
    const detail::KeptRows kept = leavers > 0 ? detail::KeptRows{ h_off[me], n_stay }
                                              : detail::KeptRows{ 0, 0 };
    detail::migrate_fields( exec, decomposition.comm(), plan, kept, n_stay, particles,
                            idx, result.transport, workspace.buffers,
                            std::make_index_sequence<SoAType::num_fields>{} );
    particles.resize( result.num_owned );
    return result;
}

//! migrate() with a workspace of its own, allocated for this call.
template <class ExecutionSpace, class Scalar, class SoAType>
MigrationResult migrate( const ExecutionSpace& exec, const CartesianDecomposition<Scalar>& decomposition,
                         SoAType& particles, std::size_t n_owned,
                         CountExchange counts = CountExchange::neighbors_when_possible )
{
    MigrationWorkspace<typename SoAType::memory_space> workspace;
    return migrate( exec, decomposition, particles, n_owned, workspace, counts );
}

} // namespace morula::parallel

#endif
