/*!
  \file Migration.hpp
  \brief Moves particles that left a rank's subdomain to the rank that owns them, with every field of
  the SoA storage.
*/
#ifndef MORULA_PARALLEL_MIGRATION_HPP
#define MORULA_PARALLEL_MIGRATION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/core/SoA.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>
#include <morula/parallel/Transport.hpp>
#include <morula/parallel/detail/Exchange.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
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
  \brief Storage that migrate() reuses across calls: the message buffers, the leavers' keys, the
  places they leave and the stayers that fill them, and a few device counters. Everything grows only,
  so migrations of no more particles than an earlier one allocate no device memory. Keep one per
  particle set (e.g. as a member).
*/
template <class MemorySpace>
struct MigrationWorkspace
{
    detail::MessageBuffers<MemorySpace> buffers;
    Kokkos::View<std::uint64_t*, MemorySpace> leaver_key; //!< owner << 32 | index of each leaver
    Kokkos::View<int*, MemorySpace> hole;                 //!< leavers' places below the stayers' end
    Kokkos::View<int*, MemorySpace> filler;               //!< stayers above it that move there
    Kokkos::View<int*, MemorySpace> send_offset;          //!< first send row of each rank (size + 1)
    Kokkos::View<int*, MemorySpace> counters;             //!< holes, fillers
    //! The leavers' keys on the host, where few enough to sort there.
    typename Kokkos::View<std::uint64_t*, MemorySpace>::HostMirror leaver_key_host;
};

//! Up to this many leavers are sorted on the host (two small copies) rather than on the device, where
//! a device sort and the per-rank offsets read back cost more for few leavers (docs/performance.md,
//! "Design choices measured (moved from source comments, issue #46)").
constexpr std::size_t host_sorted_leavers = 1 << 16;

namespace detail
{

/*!
  \brief One pass over the owned particles: wraps periodic axes in place (writing only the coordinates
  that change), computes each owner and appends the leavers' keys owner << 32 | i to leaver_key, in
  no particular order (one atomic per leaver; the sort by key that follows makes the order
  deterministic). `counter` (one int on the device) counts them. Returns the number of leavers (the
  one value the host needs to go on).

  One pass with atomics for the few leavers, not a scan: an exclusive scan evaluates the owner twice
  and writes every position, a noticeable share of a step
  (docs/performance.md, "Multi-GPU path without the host in the way (issue #23)").
*/
template <class ExecutionSpace, class Scalar, class PositionView, class KeyView, class CounterView>
std::size_t migration_leavers( const ExecutionSpace& exec, std::size_t n, const CartesianOwner<Scalar>& owner,
                               int me, const PositionView& x, const KeyView& leaver_key,
                               const CounterView& counter )
{
    if ( n == 0 )
        return 0;
    Kokkos::deep_copy( exec, counter, 0 );
    Kokkos::parallel_for(
        "morula::parallel::migration_leavers", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t i ) {
            Scalar w[3];
            for ( int a = 0; a < 3; ++a )
            {
                const Scalar xa = x( i, a );
                w[a] = owner.wrap( a, xa );
                if ( w[a] != xa )
                    x( i, a ) = w[a];
            }
            const int r = owner( w[0], w[1], w[2] );
            if ( r != me )
            {
                const int k = Kokkos::atomic_fetch_add( &counter(), 1 );
                leaver_key( k ) = ( static_cast<std::uint64_t>( r ) << 32 ) | static_cast<std::uint64_t>( i );
            }
        } );
    int leavers = 0;
    Kokkos::deep_copy( exec, leavers, counter );
    exec.fence();
    return static_cast<std::size_t>( leavers );
}

//! offset(r) = the first sorted leaver whose owner is >= r, r <= size: the send rows of rank r are
//! [offset(r), offset(r + 1)).
template <class ExecutionSpace, class KeyView, class OffsetView>
void migration_send_offsets( const ExecutionSpace& exec, std::size_t leavers, int size, const KeyView& key,
                             const OffsetView& offset )
{
    Kokkos::parallel_for(
        "morula::parallel::migration_send_offsets", core::LaunchRange<ExecutionSpace>( exec, 0, size + 1 ),
        KOKKOS_LAMBDA( const int r ) {
            std::size_t lo = 0, hi = leavers; // first key with owner >= r
            while ( lo < hi )
            {
                const std::size_t mid = ( lo + hi ) / 2;
                if ( static_cast<int>( key( mid ) >> 32 ) < r ) lo = mid + 1;
                else hi = mid;
            }
            offset( r ) = static_cast<int>( lo );
        } );
}

//! Row k of `buf` <- the particle of sorted leaver k.
template <class ExecutionSpace, class Rows, class KeyView, class Bytes>
void pack_leaver_rows( const ExecutionSpace& exec, std::size_t leavers, const Rows& rows, const KeyView& key,
                       const Bytes& buf, std::size_t row_bytes )
{
    if ( leavers == 0 )
        return;
    Kokkos::parallel_for(
        "morula::parallel::pack_leaver_rows", core::LaunchRange<ExecutionSpace>( exec, 0, leavers ),
        KOKKOS_LAMBDA( const std::size_t k ) {
            rows.gather( buf.data() + k * row_bytes, static_cast<std::size_t>( key( k ) & 0xffffffffu ) );
        } );
}

/*!
  \brief The places the stayers close up: hole(h) = the h-th leaver (in sorted-key order) whose index
  is below n_stay, filler(h) = the h-th stayer (in particle order) at or above n_stay; both counts go
  to counters(0) and counters(1) (they are equal: as many leavers below n_stay as stayers above it).
*/
template <class ExecutionSpace, class Scalar, class KeyView, class PositionView, class IndexView>
void migration_holes( const ExecutionSpace& exec, std::size_t leavers, std::size_t n, std::size_t n_stay,
                      const CartesianOwner<Scalar>& owner, int me, const KeyView& key, const PositionView& x,
                      const IndexView& hole, const IndexView& filler, const IndexView& counters )
{
    Kokkos::parallel_scan(
        "morula::parallel::migration_holes", core::LaunchRange<ExecutionSpace>( exec, 0, leavers ),
        KOKKOS_LAMBDA( const std::size_t j, int& before, const bool final ) {
            const std::size_t i = key( j ) & 0xffffffffu;
            const int flag = i < n_stay ? 1 : 0;
            if ( final )
            {
                if ( flag )
                    hole( before ) = static_cast<int>( i );
                if ( j + 1 == leavers )
                    counters( 0 ) = before + flag;
            }
            before += flag;
        } );
    const std::size_t tail = n - n_stay;
    Kokkos::parallel_scan(
        "morula::parallel::migration_fillers", core::LaunchRange<ExecutionSpace>( exec, 0, tail ),
        KOKKOS_LAMBDA( const std::size_t k, int& before, const bool final ) {
            const std::size_t i = n_stay + k;
            const int flag = owner( x( i, 0 ), x( i, 1 ), x( i, 2 ) ) == me ? 1 : 0; // wrapped already
            if ( final )
            {
                if ( flag )
                    filler( before ) = static_cast<int>( i );
                if ( k + 1 == tail )
                    counters( 1 ) = before + flag;
            }
            before += flag;
        } );
}

//! Every field of particle hole(h) <- particle filler(h), h < counters(0) (the bound is read on the
//! device: no transfer).
template <class ExecutionSpace, class Rows, class IndexView>
void migration_close_holes( const ExecutionSpace& exec, std::size_t most, const Rows& rows, const IndexView& hole,
                            const IndexView& filler, const IndexView& counters )
{
    Kokkos::parallel_for(
        "morula::parallel::migration_close_holes", core::LaunchRange<ExecutionSpace>( exec, 0, most ),
        KOKKOS_LAMBDA( const std::size_t h ) {
            if ( static_cast<int>( h ) < counters( 0 ) )
                rows.copy( static_cast<std::size_t>( hole( h ) ), static_cast<std::size_t>( filler( h ) ) );
        } );
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

} // namespace detail

/*!
  \brief Sends every owned particle that left this rank's subdomain to its owner, with every field.

  Entries [0, n_owned) of `particles` are this rank's particles (field 0 the position, Scalar[3]);
  anything behind them (old ghosts) is dropped. On the device, in one pass: periodic axes are wrapped
  into the box (the stored positions change accordingly), each particle's owner is computed with
  CartesianDecomposition::owner(), and the leavers' keys (owner, index) are appended. Only the leavers
  are sorted (unique keys: a deterministic order whatever the order of the appends) and packed, every field of a leaver in one message row,
  one kernel. The stayers do not move, except that the last stayers close the places the leavers left
  (one copy per leaver at most, instead of rewriting every stayer). A rank nobody leaves packs nothing.
  The host reads back the number of leavers, then either their keys, which it sorts and copies back (up
  to host_sorted_leavers of them: the usual step), or, after a device sort of more, the per-rank offsets.

  Counts: each rank checks whether all its leaving particles go to its (up to 26, deduplicated)
  neighbour ranks; one MPI_Allreduce (logical or) of "some particle went further" follows. If none did,
  counts are exchanged with the neighbour ranks only (MPI_Isend / MPI_Irecv), O(neighbours) instead of
  O(ranks); otherwise through MPI_Alltoall, so a particle may move any distance, also past the
  neighbouring ranks, and is never lost. Both give the same counts, hence the same result;
  CountExchange::alltoall forces the second. The rows then travel in one message per peer through the
  decomposition's transport and the workspace's buffers.

  Afterwards the SoA holds the particles that stayed, in their original order except that the last
  stayers have moved into the places of the leavers below them (the h-th such place, in (owner, index)
  order, takes the h-th of those stayers), followed by the arrivals ordered by (source rank, source
  index). Collective over the decomposition's communicator.
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
    if ( n_owned > std::size_t( INT_MAX ) )
        throw core::CapacityError( core::detail::concat( "parallel::migrate: ", n_owned,
                                                         " particles on one rank exceed 2^31 - 1" ) );
    compat::ScopedRegion region( "morula::parallel::migrate" );
    const int nranks = decomposition.size();
    const int me = decomposition.rank();
    const std::size_t n = n_owned;
    const auto& owner = decomposition.owner();

    // Usually few particles leave a rank, and none on one rank: only the leavers are sorted (by owner,
    // then index) and packed.
    detail::grow_to( workspace.leaver_key, n, "morula::parallel::migration_leaver_key" );
    detail::grow_to( workspace.counters, 2, "morula::parallel::migration_counters" );
    const std::size_t leavers = detail::migration_leavers( exec, n, owner, me, particles.template get<0>(),
                                                           workspace.leaver_key,
                                                           Kokkos::subview( workspace.counters, 0 ) );
    const std::size_t n_stay = n - leavers;
    const auto leaver_key = Kokkos::subview( workspace.leaver_key, std::make_pair( std::size_t( 0 ), leavers ) );
    std::vector<int> send_count( nranks, 0 ), recv_count( nranks );
    std::vector<std::size_t> h_off( static_cast<std::size_t>( nranks ) + 1, 0 ); // first send row per rank
    if ( leavers > 0 && leavers <= host_sorted_leavers )
    {
        // Few leavers (every step but the first): sorted on the host, where their per-rank offsets
        // come for free, and copied back for the pack.
        using host_keys = decltype( workspace.leaver_key_host );
        if ( workspace.leaver_key_host.extent( 0 ) < leavers )
            workspace.leaver_key_host = host_keys(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( "morula::parallel::migration_leaver_key_host" ) ),
                host_sorted_leavers );
        const auto keys = Kokkos::subview( workspace.leaver_key_host, std::make_pair( std::size_t( 0 ), leavers ) );
        Kokkos::deep_copy( exec, keys, leaver_key );
        exec.fence();
        std::sort( keys.data(), keys.data() + leavers );
        Kokkos::deep_copy( exec, leaver_key, keys );
        for ( std::size_t k = 0; k < leavers; ++k )
            ++send_count[static_cast<int>( keys( k ) >> 32 )];
        for ( int r = 0; r < nranks; ++r )
            h_off[r + 1] = h_off[r] + static_cast<std::size_t>( send_count[r] );
    }
    else if ( leavers > 0 )
    {
        compat::sort( exec, leaver_key );
        detail::grow_to( workspace.send_offset, std::size_t( nranks ) + 1, "morula::parallel::migration_send_offset" );
        detail::migration_send_offsets( exec, leavers, nranks, leaver_key, workspace.send_offset );
        const auto h_offsets = Kokkos::create_mirror_view_and_copy(
            Kokkos::HostSpace(), Kokkos::subview( workspace.send_offset, std::make_pair( 0, nranks + 1 ) ) );
        for ( int r = 0; r <= nranks; ++r )
            h_off[r] = static_cast<std::size_t>( h_offsets( r ) );
        for ( int r = 0; r < nranks; ++r )
            send_count[r] = static_cast<int>( h_off[r + 1] - h_off[r] );
    }
    if ( send_count[me] != 0 )
        throw core::CapacityError( "parallel::migrate: a leaver owned by this rank (internal error)" );

    MigrationResult result;
    result.neighbor_counts =
        detail::exchange_migration_counts( decomposition, counts, send_count, recv_count );

    detail::CommPlan plan;
    plan.send_rows = leavers;
    result.transport = decomposition.transport_context().template transport<memory_space>();
    for ( int r = 0; r < nranks; ++r )
    {
        if ( r == me )
            continue;
        if ( send_count[r] > 0 )
            plan.sends.push_back( { r, 0, h_off[r], static_cast<std::size_t>( send_count[r] ) } );
        if ( recv_count[r] > 0 )
            plan.recvs.push_back( { r, 0, plan.recv_rows, static_cast<std::size_t>( recv_count[r] ) } );
        plan.recv_rows += static_cast<std::size_t>( recv_count[r] );
    }
    result.num_sent = leavers;
    result.num_received = plan.recv_rows;
    result.num_owned = n_stay + plan.recv_rows;
    if ( leavers == 0 && plan.recv_rows == 0 )
    {
        particles.set_size( n );
        return result;
    }

    // Room for the arrivals first (growing keeps every entry), then the views of every field.
    if ( result.num_owned > particles.capacity() )
        particles.reserve( result.num_owned + result.num_owned / 8 );
    std::size_t row_bytes = 0;
    const auto rows = detail::soa_field_rows( particles, row_bytes );
    const auto send = workspace.buffers.send_bytes( leavers * row_bytes );
    if ( leavers > 0 )
    {
        // Pack before the stayers close the holes (which overwrites leavers' rows).
        detail::pack_leaver_rows( exec, leavers, rows, leaver_key, send, row_bytes );
        detail::grow_to( workspace.hole, leavers, "morula::parallel::migration_hole" );
        detail::grow_to( workspace.filler, leavers, "morula::parallel::migration_filler" );
        detail::grow_to( workspace.counters, 2, "morula::parallel::migration_counters" );
        detail::migration_holes( exec, leavers, n, n_stay, owner, me, leaver_key, particles.template get<0>(),
                                 workspace.hole, workspace.filler, workspace.counters );
        detail::migration_close_holes( exec, leavers, rows, workspace.hole, workspace.filler, workspace.counters );
    }
    detail::exchange_buffers( exec, decomposition.transport_context(), result.transport, plan, 0, row_bytes,
                              workspace.buffers );
    // The receive storage is fetched after the exchange, which may have switched it (Transport::ipc).
    const auto recv = workspace.buffers.recv_bytes( plan.recv_rows * row_bytes );
    detail::unpack_particle_rows( exec, plan.recv_rows, rows, recv, row_bytes, n_stay );
    particles.set_size( result.num_owned );
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
