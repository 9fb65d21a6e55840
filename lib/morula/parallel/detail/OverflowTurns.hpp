/*!
  \file detail/OverflowTurns.hpp
  \brief The placement of a pass's overflowed particles over the slabs of a distributed lattice, in the
  single rank's order: the ranks with entries take turns in slab order, and every rank replays each
  turn's placements (lattice::LatticeDiffusion describes the protocol on slabs).
*/
#ifndef MORULA_PARALLEL_DETAIL_OVERFLOWTURNS_HPP
#define MORULA_PARALLEL_DETAIL_OVERFLOWTURNS_HPP

#include <morula/core/Error.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/detail/Moves.hpp>
#include <morula/lattice/detail/SlabDiffusion.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>
#include <morula/parallel/LatticeSlabs.hpp>
#include <morula/parallel/detail/PlaneExchange.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace morula::parallel::detail
{

/*!
  \brief One rank's part in placing the overflowed particles of a pass: its report to the others (how
  many entries, whether they reach a ghost band), and the turns. Keeps the placement log's buffers
  (device and host), which grow to the largest list seen.
*/
template <int Slots, class ExecutionSpace>
class OverflowTurns
{
  public:
    using memory_space = typename ExecutionSpace::memory_space;
    using engine_type = lattice::detail::SlabDiffusion<Slots, ExecutionSpace>;
    static constexpr int ghost_planes = lattice_slab_ghost_planes;

    //! What a rank tells the others after a pass: its entries, and whether any of them can reach the
    //! ghost band below (1) and above (1). Gathered as 3 numbers per rank.
    using Report = std::array<unsigned long long, 3>;

    //! What the turns did over all ranks.
    struct Done
    {
        long long entries = 0; //!< particles placed from the overflow lists
        long long scans = 0;   //!< of those, placed by the index-order scan over all slabs
    };

    OverflowTurns() = default;
    OverflowTurns( MPI_Comm comm, int rank, int size, int lower, int upper, const lattice::LatticeShape& whole,
                   const lattice::detail::SlabWindow& window )
        : m_comm( comm )
        , m_rank( rank )
        , m_size( size )
        , m_lower( lower )
        , m_upper( upper )
        , m_whole( whole )
        , m_window( window )
        , m_plane( std::size_t( whole.nx ) * std::size_t( whole.ny ) )
    {
    }

    /*!
      This rank's entries, and whether any of them can reach the ghost band below / above (an entry at
      local plane p touches planes p - 3 .. p + 3: origin one plane away, its 5^3 cube two more). Entries
      far from the faces, the usual case, need no band from a neighbour. Fences.
    */
    Report local_report( const ExecutionSpace& exec, const engine_type& engine ) const
    {
        const unsigned long long mine = engine.pending_overflows( exec );
        Report report = { mine, 0, 0 };
        if ( mine > 0 )
        {
            const auto reach = near_faces( exec, engine, std::size_t( mine ) );
            report[1] = reach.first ? 1 : 0;
            report[2] = reach.second ? 1 : 0;
        }
        return report;
    }

    //! Every rank's report (MPI_Allgather): where a rank waits for the slower ranks' passes.
    std::vector<unsigned long long> gather_reports( const Report& report ) const
    {
        std::vector<unsigned long long> reports( 3 * std::size_t( m_size ) );
        MPI_Allgather( report.data(), 3, MPI_UNSIGNED_LONG_LONG, reports.data(), 3, MPI_UNSIGNED_LONG_LONG, m_comm );
        return reports;
    }

    //! Places the entries of every rank in the single-rank order (see the class), given this rank's
    //! report and everybody's.
    Done take_turns( const ExecutionSpace& exec, engine_type& engine, PlaneExchange<ExecutionSpace>& planes,
                     const Report& report, const std::vector<unsigned long long>& reports )
    {
        Done done;
        const unsigned long long mine = report[0];
        std::vector<unsigned long long> counts( m_size );
        unsigned long long total = 0, largest = 0;
        for ( int r = 0; r < m_size; ++r )
        {
            counts[r] = reports[3 * r];
            total += counts[r];
            largest = std::max( largest, counts[r] );
        }
        if ( total == 0 )
            return done;
        done.entries = (long long)total;

        // A rank whose entries reach a ghost band needs that band as the pass left them; it then keeps it
        // current by replaying every placement. Planes a rank does not hold current get no replays.
        const bool to_lower = m_lower != MPI_PROC_NULL && reports[3 * m_lower + 2] != 0;
        const bool to_upper = m_upper != MPI_PROC_NULL && reports[3 * m_upper + 1] != 0;
        const bool from_lower = report[1] != 0, from_upper = report[2] != 0;
        if ( to_lower || to_upper || from_lower || from_upper )
            planes.exchange( exec, engine.lattice().sites(), ghost_planes, to_lower, to_upper, from_lower, from_upper );
        const int fresh_begin = from_lower && m_lower != MPI_PROC_NULL ? 0 : m_window.owned_begin;
        const int fresh_end = from_upper && m_upper != MPI_PROC_NULL ? m_window.planes : m_window.owned_end;
        ensure_log_capacity( std::size_t( largest ) );

        // Turns in slab order, which is the order of the overflow keys (global site, arrival rank), from the
        // last slab when the engine places in descending order.
        const bool descending = engine.placement_descending();
        for ( int t = 0; t < m_size; ++t )
        {
            const int turn = descending ? m_size - 1 - t : t;
            if ( counts[turn] == 0 )
                continue;
            std::size_t next = 0; // the turn's next entry (on the rank whose turn it is)
            for ( ;; )
            {
                SegmentHeader h;
                if ( m_rank == turn )
                    h = place_segment( exec, engine, next, std::size_t( mine ) );
                MPI_Bcast( &h, int( sizeof( h ) ), MPI_BYTE, turn, m_comm );
                if ( h.sent > 0 )
                {
                    MPI_Bcast( m_host_log_sites.data(), int( h.sent ), MPI_UINT64_T, turn, m_comm );
                    MPI_Bcast( m_host_log_codes.data(), int( h.sent ), MPI_UINT32_T, turn, m_comm );
                    if ( m_rank != turn )
                        replay_host_log( exec, engine, std::size_t( h.sent ), fresh_begin, fresh_end );
                }
                if ( !h.needs_scan )
                    break;
                const std::uint64_t target = scan_all_slabs( exec, engine, h );
                ++done.scans;
                m_host_log_sites( 0 ) = target;
                m_host_log_codes( 0 ) = h.code;
                replay_host_log( exec, engine, 1, fresh_begin, fresh_end );
                if ( m_rank == turn )
                {
                    // the kernel has undone the rejected move already
                    engine.add_displacement( exec, h.code, minimum_image_delta( h.origin, target ) );
                    next += std::size_t( h.placed ) + 1;
                }
            }
        }
        return done;
    }

    // Public because nvcc rejects extended lambdas in private member functions.
    /*!
      Whether any of the first n entries of this slab's overflow list can reach the ghost planes below /
      above: its site's local plane within ghost_planes of the owned range's first / last plane.
    */
    std::pair<bool, bool> near_faces( const ExecutionSpace& exec, const engine_type& engine, std::size_t n ) const
    {
        const auto keys = engine.overflow_keys();
        const lattice::detail::SlabWindow w = m_window;
        const std::uint64_t plane = m_plane;
        using reducer = Kokkos::MinMax<int>;
        typename reducer::value_type range;
        Kokkos::parallel_reduce(
            "morula::parallel::lattice_overflow_reach", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const std::size_t i, typename reducer::value_type& r ) {
                const int p = w.local_of_global( int( ( keys( i ) >> 8 ) / plane ) );
                r.min_val = p < r.min_val ? p : r.min_val;
                r.max_val = p > r.max_val ? p : r.max_val;
            },
            reducer( range ) );
        return { range.min_val < w.owned_begin + ghost_planes, range.max_val >= w.owned_end - ghost_planes };
    }

  private:
    //! What the rank whose turn it is tells the others, per segment of its overflow list.
    struct SegmentHeader
    {
        std::uint64_t placed = 0;   //!< entries placed by the nearest-site table
        std::uint64_t sent = 0;     //!< of those, the ones within ghost_planes of a face (they follow)
        std::uint64_t origin = 0;   //!< the entry that needs the scan over all slabs: the global site
                                    //!< its particle came from,
        std::uint32_t code = 0;     //!< its particle,
        std::uint32_t type = 0;     //!< and its origin's type
        std::uint32_t needs_scan = 0;
    };

  public:
    // Public because nvcc rejects extended lambdas in private member functions.
    /*!
      Copies, in order, the placed entries [next, stop) whose site lies within ghost_planes of a face of
      this slab (on either side of it) to the device log buffers, and returns how many. Only those can be
      on another rank's planes, owned or ghost: a placement moves a particle at most three planes from its
      overflow site, which is owned, and a ghost band is three planes deep. Entries farther in, most of a
      crowded list, stay on this rank; not placed ones (~0) too.
    */
    std::size_t select_band( const ExecutionSpace& exec, const engine_type& engine, std::size_t next, std::size_t stop )
    {
        const auto sites = engine.placed_sites();
        const auto codes = engine.placed_codes();
        const auto log_sites = m_log_sites;
        const auto log_codes = m_log_codes;
        const std::uint64_t plane = m_plane;
        const int first = m_window.global_z( m_window.owned_begin ) + ghost_planes;
        const int last = m_window.global_z( m_window.owned_end - 1 ) - ghost_planes; // interior: [first, last]
        std::size_t selected = 0;
        Kokkos::parallel_scan(
            "morula::parallel::lattice_overflow_band", core::LaunchRange<ExecutionSpace>( exec, 0, stop - next ),
            KOKKOS_LAMBDA( const std::size_t k, std::size_t& update, const bool final ) {
                const std::uint64_t g = sites( next + k );
                const int z = g == ~std::uint64_t( 0 ) ? first : int( g / plane );
                if ( z >= first && z <= last )
                    return;
                if ( final )
                {
                    log_sites( update ) = g;
                    log_codes( update ) = codes( next + k );
                }
                ++update;
            },
            selected );
        return selected;
    }

  private:
    // The rank whose turn it is places entries from `next` until the end of its list or an entry the
    // nearest-site table cannot place; of the placed entries, those another rank can need go to the host
    // log buffers.
    SegmentHeader place_segment( const ExecutionSpace& exec, engine_type& engine, std::size_t next, std::size_t n )
    {
        SegmentHeader h;
        const std::size_t stop = engine.place_overflow_from( exec, next );
        h.placed = stop - next;
        if ( h.placed > 0 )
        {
            h.sent = select_band( exec, engine, next, stop );
            const auto to = Kokkos::make_pair( std::size_t( 0 ), std::size_t( h.sent ) );
            Kokkos::deep_copy( Kokkos::subview( m_host_log_sites, to ), Kokkos::subview( m_log_sites, to ) );
            Kokkos::deep_copy( Kokkos::subview( m_host_log_codes, to ), Kokkos::subview( m_log_codes, to ) );
        }
        if ( stop < n )
        {
            std::uint64_t key = 0;
            std::uint8_t move = 0;
            Kokkos::deep_copy( key, Kokkos::subview( engine.overflow_keys(), stop ) );
            Kokkos::deep_copy( move, Kokkos::subview( engine.overflow_moves(), stop ) );
            Kokkos::deep_copy( h.code, Kokkos::subview( engine.placed_codes(), stop ) );
            h.origin = lattice::detail::move_origin( key >> 8, move, m_whole.nx, m_whole.ny, m_whole.nz );
            h.type = engine.site_type( h.origin );
            h.needs_scan = 1;
        }
        return h;
    }

    // The single rank's last resort over all slabs: the first site after h.origin in index order of the
    // same type with a free slot, else of any open type (MPI_Allreduce MIN of each slab's candidate).
    std::uint64_t scan_all_slabs( const ExecutionSpace& exec, const engine_type& engine, const SegmentHeader& h ) const
    {
        const std::uint64_t total = std::uint64_t( m_whole.sites() );
        for ( bool any_open : { false, true } )
        {
            const std::uint64_t local = engine.first_free_after( exec, h.origin, h.type, any_open );
            std::uint64_t best = 0;
            MPI_Allreduce( &local, &best, 1, MPI_UINT64_T, MPI_MIN, m_comm );
            if ( best != ~std::uint64_t( 0 ) )
                return engine.placement_descending() ? ( h.origin + total - 1 - best % total ) % total
                                                     : ( h.origin + 1 + best ) % total;
        }
        throw core::CapacityError( core::detail::concat( "LatticeDiffusion on slabs: an overflowed particle (code ",
                                                         h.code, ") found no free slot on the whole lattice" ) );
    }

    //! Unwrapped displacement from global site `from` to `to` (minimum image on periodic axes).
    std::array<int, 3> minimum_image_delta( std::uint64_t from, std::uint64_t to ) const
    {
        const std::uint64_t nx = std::uint64_t( m_whole.nx ), ny = std::uint64_t( m_whole.ny );
        const int a[3] = { int( from % nx ), int( ( from / nx ) % ny ), int( from / ( nx * ny ) ) };
        const int b[3] = { int( to % nx ), int( ( to / nx ) % ny ), int( to / ( nx * ny ) ) };
        std::array<int, 3> d{};
        for ( int k = 0; k < 3; ++k )
        {
            const int n = m_whole.extent( k );
            d[k] = b[k] - a[k];
            if ( m_whole.boundary[k] == lattice::LatticeBoundary::periodic )
                d[k] = 2 * d[k] > n ? d[k] - n : ( 2 * d[k] < -n ? d[k] + n : d[k] );
        }
        return d;
    }

    void ensure_log_capacity( std::size_t n )
    {
        if ( m_log_sites.extent( 0 ) < n )
        {
            const std::size_t c = std::max( n, 2 * m_log_sites.extent( 0 ) );
            m_log_sites = Kokkos::View<std::uint64_t*, memory_space>( "lattice_placement_log_sites", c );
            m_log_codes = Kokkos::View<std::uint32_t*, memory_space>( "lattice_placement_log_codes", c );
            m_host_log_sites = Kokkos::View<std::uint64_t*, Kokkos::HostSpace>( "lattice_placement_log_sites_host", c );
            m_host_log_codes = Kokkos::View<std::uint32_t*, Kokkos::HostSpace>( "lattice_placement_log_codes_host", c );
        }
    }

    // Replays host log entries [0, n) on local planes [first_plane, last_plane) of this slab.
    void replay_host_log( const ExecutionSpace& exec, engine_type& engine, std::size_t n, int first_plane, int last_plane )
    {
        const auto range = Kokkos::make_pair( std::size_t( 0 ), n );
        Kokkos::deep_copy( exec, Kokkos::subview( m_log_sites, range ), Kokkos::subview( m_host_log_sites, range ) );
        Kokkos::deep_copy( exec, Kokkos::subview( m_log_codes, range ), Kokkos::subview( m_host_log_codes, range ) );
        engine.replay_placements( exec, m_log_sites, m_log_codes, 0, n, first_plane, last_plane );
    }

    MPI_Comm m_comm = MPI_COMM_NULL;
    int m_rank = 0, m_size = 1;
    int m_lower = MPI_PROC_NULL, m_upper = MPI_PROC_NULL;
    lattice::LatticeShape m_whole;
    lattice::detail::SlabWindow m_window;
    std::size_t m_plane = 0;
    Kokkos::View<std::uint64_t*, memory_space> m_log_sites;
    Kokkos::View<std::uint32_t*, memory_space> m_log_codes;
    Kokkos::View<std::uint64_t*, Kokkos::HostSpace> m_host_log_sites;
    Kokkos::View<std::uint32_t*, Kokkos::HostSpace> m_host_log_codes;
};

} // namespace morula::parallel::detail

#endif
