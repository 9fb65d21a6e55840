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
#include <stdexcept>
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

    //! Every rank's entries, from the reports.
    struct Totals
    {
        std::vector<unsigned long long> counts;
        unsigned long long total = 0, largest = 0;
    };
    //! The local planes this rank keeps current while the pass's entries are placed: [begin, end).
    struct Fresh
    {
        int begin = 0, end = 0;
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

    /*!
      Places the entries of every rank in the single-rank order (see the class), given this rank's report
      and everybody's: the slabs with entries in turn (lattice::SlabTurns::in_turn), or together (below).
    */
    Done place( const ExecutionSpace& exec, engine_type& engine, PlaneExchange<ExecutionSpace>& planes,
                const Report& report, const std::vector<unsigned long long>& reports, lattice::SlabTurns turns )
    {
        Done done;
        const Totals totals = totals_of( reports );
        if ( totals.total == 0 )
            return done;
        done.entries = (long long)totals.total;
        const Fresh fresh = exchange_bands( exec, engine, planes, report, reports );
        ensure_log_capacity( std::size_t( totals.largest ) );
        done.scans = turns == lattice::SlabTurns::in_turn
                         ? run_turns( exec, engine, fresh, report[0], totals.counts, 0, false, 0 )
                         : place_together( exec, engine, report, reports, fresh, totals );
        return done;
    }

    /*!
      place() with the slabs placing together (lattice::SlabTurns::together); returns the entries placed
      by the scan over all slabs. Every rank
      sweeps its own list at once against the lattice as the pass left it, placing nothing
      (SlabDiffusion::speculate_placement). Then, in the pass's slab order, each rank
      - waits for its predecessor's word: the position in that order of the first rank that handed over
        to the turns (below), if any;
      - takes the placements of its neighbours that come before it in that order, near their shared
        faces: they precede all its entries in key order, so they only take room, and the sweeps resume
        from the fixed point with the entries they displace (SlabDiffusion::absorb_placements);
      - settles its placement (settle_speculation()), passes the word on, sends its placements near a
        face to the neighbours that need them, and only then writes its placement (commit_speculation()),
        while the next slabs correct theirs; a list it did not sweep it places first
        (place_overflow_from()) and sends from the placement log;
      - takes the placements of its neighbours that come after it (appended after its own, the single
        rank's slot order).
      A list with an entry that needs the scan over all slabs stops there; that rank hands over: it and
      every rank after it in the order (which the word reaches before they place anything) finish with
      the turns of SlabTurns::in_turn from its position, after an MPI_Allreduce has told every rank where that is.
      So a pass with entries costs the reports' gather, the word from slab to slab (the only wait
      between ranks besides the predecessors' corrections, which are short) and that reduction; the
      sweeps of all slabs run at the same time. The result is the single rank's, bit for bit.
    */
    long long place_together( const ExecutionSpace& exec, engine_type& engine, const Report& report,
                              const std::vector<unsigned long long>& reports, const Fresh& fresh, const Totals& totals )
    {
        const std::size_t mine = std::size_t( report[0] );
        const bool descending = engine.placement_descending();
        const auto position_of = [&]( int r ) { return descending ? m_size - 1 - r : r; };
        const int position = position_of( m_rank );

        bool speculated = false;
        {
            compat::ScopedRegion region( "morula::parallel::OverflowTurns::speculate" );
            speculated = mine > 0 && engine.speculate_placement( exec, mine );
        }

        // The neighbours (distinct ranks) that exchange placements with this one: when either's entries
        // reach the other's planes (one's placements land there, or the other keeps that band current).
        struct Neighbour
        {
            int rank;
            bool before; //!< earlier in the pass's order
        };
        std::vector<Neighbour> neighbours;
        for ( const int q : { m_lower, m_upper } )
        {
            if ( q == MPI_PROC_NULL || q == m_rank ||
                 std::any_of( neighbours.begin(), neighbours.end(), [&]( const Neighbour& n ) { return n.rank == q; } ) )
                continue;
            const bool i_reach = ( q == m_lower && report[1] != 0 ) || ( q == m_upper && report[2] != 0 );
            const bool q_reaches = ( q == m_lower && reports[3 * std::size_t( q ) + 2] != 0 ) ||
                                   ( q == m_upper && reports[3 * std::size_t( q ) + 1] != 0 );
            if ( i_reach || q_reaches )
                neighbours.push_back( { q, position_of( q ) < position } );
        }

        int handed_over = m_size; // the position of the first rank that handed over to the turns
        {
            compat::ScopedRegion region( "morula::parallel::OverflowTurns::wait_predecessor" );
            if ( position > 0 )
                MPI_Recv( &handed_over, 1, MPI_INT, rank_at( position - 1, descending ), tag_word, m_comm,
                          MPI_STATUS_IGNORE );
        }
        for ( const Neighbour& n : neighbours )
            if ( n.before )
                receive_band( exec, engine, n.rank, fresh );

        // A settled speculation knows this rank's placement before writing it: the word and the band go
        // out first, and the commit overlaps the next slabs' corrections (on the host cores of an H200
        // machine the commit was most of the wait between slabs).
        std::size_t placed = 0;
        bool committed = true;
        {
            compat::ScopedRegion region( "morula::parallel::OverflowTurns::settle" );
            if ( handed_over < m_size )
            {
                if ( speculated )
                    engine.abandon_speculation( exec );
            }
            else if ( mine > 0 )
            {
                const std::size_t settled = speculated ? engine.settle_speculation( exec ) : ~std::size_t( 0 );
                committed = settled == ~std::size_t( 0 );
                if ( !committed )
                    placed = settled;
                else
                    placed = speculated ? engine.commit_speculation( exec ) : engine.place_overflow_from( exec, 0 );
                if ( placed < mine )
                    handed_over = position; // entry `placed` needs the scan over all slabs
            }
        }

        // The word on, and this rank's placements near its faces to the neighbours (none when the turns
        // take over here: they broadcast them).
        std::vector<MPI_Request> requests;
        m_word = handed_over;
        if ( position + 1 < m_size )
        {
            requests.emplace_back();
            MPI_Isend( &m_word, 1, MPI_INT, rank_at( position + 1, descending ), tag_word, m_comm, &requests.back() );
        }
        m_send_count = 0;
        if ( !neighbours.empty() && handed_over == m_size && mine > 0 )
        {
            m_send_count = committed ? select_band( exec, engine.placed_sites(), engine.placed_codes(), 0, mine )
                                     : select_band( exec, engine.speculated_sites(), engine.placed_codes(), 0, mine );
            copy_log_to_host( exec, std::size_t( m_send_count ), m_send_sites, m_send_codes );
        }
        for ( const Neighbour& n : neighbours )
        {
            requests.emplace_back();
            MPI_Isend( &m_send_count, 1, MPI_UINT64_T, n.rank, tag_band, m_comm, &requests.back() );
            if ( m_send_count > 0 )
            {
                requests.emplace_back();
                MPI_Isend( m_send_sites.data(), int( m_send_count ), MPI_UINT64_T, n.rank, tag_band, m_comm, &requests.back() );
                requests.emplace_back();
                MPI_Isend( m_send_codes.data(), int( m_send_count ), MPI_UINT32_T, n.rank, tag_band, m_comm, &requests.back() );
            }
        }
        if ( !committed )
        {
            compat::ScopedRegion region( "morula::parallel::OverflowTurns::commit" );
            const std::size_t next = engine.commit_speculation( exec );
            if ( next != placed )
                throw std::logic_error( core::detail::concat( "LatticeDiffusion: the committed placement stopped at entry ",
                                                              next, ", its settled sweeps at ", placed,
                                                              " (internal error)" ) );
        }
        for ( const Neighbour& n : neighbours )
            if ( !n.before )
                receive_band( exec, engine, n.rank, fresh );
        int first_turn = handed_over;
        {
            compat::ScopedRegion region( "morula::parallel::OverflowTurns::wait_all" );
            MPI_Waitall( int( requests.size() ), requests.data(), MPI_STATUSES_IGNORE );
            MPI_Allreduce( MPI_IN_PLACE, &first_turn, 1, MPI_INT, MPI_MIN, m_comm );
        }
        return first_turn < m_size
                   ? run_turns( exec, engine, fresh, mine, totals.counts, first_turn, position == first_turn, placed )
                   : 0;
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
    std::size_t select_band( const ExecutionSpace& exec, const Kokkos::View<const std::uint64_t*, memory_space>& sites,
                             const Kokkos::View<const std::uint32_t*, memory_space>& codes, std::size_t next,
                             std::size_t stop )
    {
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
    static constexpr int tag_word = 4801; //!< place_together: the position where the turns take over
    static constexpr int tag_band = 4802; //!< place_together: placements near a face

    Totals totals_of( const std::vector<unsigned long long>& reports ) const
    {
        Totals t;
        t.counts.resize( std::size_t( m_size ) );
        for ( int r = 0; r < m_size; ++r )
        {
            t.counts[r] = reports[3 * std::size_t( r )];
            t.total += t.counts[r];
            t.largest = std::max( t.largest, t.counts[r] );
        }
        return t;
    }

    // A rank whose entries reach a ghost band needs that band as the pass left them; it then keeps it
    // current by replaying every placement. Planes a rank does not hold current get no replays.
    Fresh exchange_bands( const ExecutionSpace& exec, engine_type& engine, PlaneExchange<ExecutionSpace>& planes,
                          const Report& report, const std::vector<unsigned long long>& reports )
    {
        const bool to_lower = m_lower != MPI_PROC_NULL && reports[3 * m_lower + 2] != 0;
        const bool to_upper = m_upper != MPI_PROC_NULL && reports[3 * m_upper + 1] != 0;
        const bool from_lower = report[1] != 0, from_upper = report[2] != 0;
        if ( to_lower || to_upper || from_lower || from_upper )
            planes.exchange( exec, engine.lattice().sites(), ghost_planes, to_lower, to_upper, from_lower, from_upper );
        return { from_lower && m_lower != MPI_PROC_NULL ? 0 : m_window.owned_begin,
                 from_upper && m_upper != MPI_PROC_NULL ? m_window.planes : m_window.owned_end };
    }

    //! The rank at `position` in the pass's slab order.
    int rank_at( int position, bool descending ) const { return descending ? m_size - 1 - position : position; }

    /*!
      The turns from `first_position` in the pass's slab order on (in turn: all of them). With
      `placed_here`, this rank is the one at `first_position` and has placed its entries [0, pre_placed)
      already, entry pre_placed needing the scan (place_together handed over here; its move is undone
      already, so the kernel must not place it again). Returns the entries placed by the scan over all
      slabs.
    */
    long long run_turns( const ExecutionSpace& exec, engine_type& engine, const Fresh& fresh, std::size_t mine,
                         const std::vector<unsigned long long>& counts, int first_position, bool placed_here,
                         std::size_t pre_placed )
    {
        long long scans = 0;
        // Turns in slab order, which is the order of the overflow keys (global site, arrival rank), from the
        // last slab when the engine places in descending order.
        const bool descending = engine.placement_descending();
        for ( int t = first_position; t < m_size; ++t )
        {
            const int turn = rank_at( t, descending );
            if ( counts[turn] == 0 )
                continue;
            std::size_t next = 0; // the turn's next entry (on the rank whose turn it is)
            bool first_segment = true;
            for ( ;; )
            {
                SegmentHeader h;
                if ( m_rank == turn )
                    h = first_segment && placed_here
                            ? segment_header( exec, engine, 0, pre_placed, mine )
                            : segment_header( exec, engine, next, engine.place_overflow_from( exec, next ), mine );
                first_segment = false;
                MPI_Bcast( &h, int( sizeof( h ) ), MPI_BYTE, turn, m_comm );
                if ( h.sent > 0 )
                {
                    MPI_Bcast( m_host_log_sites.data(), int( h.sent ), MPI_UINT64_T, turn, m_comm );
                    MPI_Bcast( m_host_log_codes.data(), int( h.sent ), MPI_UINT32_T, turn, m_comm );
                    if ( m_rank != turn )
                        replay_host_log( exec, engine, std::size_t( h.sent ), fresh.begin, fresh.end );
                }
                if ( !h.needs_scan )
                    break;
                const std::uint64_t target = scan_all_slabs( exec, engine, h );
                ++scans;
                m_host_log_sites( 0 ) = target;
                m_host_log_codes( 0 ) = h.code;
                replay_host_log( exec, engine, 1, fresh.begin, fresh.end );
                if ( m_rank == turn )
                {
                    // the kernel has undone the rejected move already
                    engine.add_displacement( exec, h.code, minimum_image_delta( h.origin, target ) );
                    next += std::size_t( h.placed ) + 1;
                }
            }
        }
        return scans;
    }

    //! The first `n` entries of the device log buffers into host vectors.
    void copy_log_to_host( const ExecutionSpace& exec, std::size_t n, std::vector<std::uint64_t>& sites,
                           std::vector<std::uint32_t>& codes ) const
    {
        sites.resize( n );
        codes.resize( n );
        const auto to = Kokkos::make_pair( std::size_t( 0 ), n );
        using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
        Kokkos::deep_copy( exec, Kokkos::View<std::uint64_t*, Kokkos::HostSpace, unmanaged>( sites.data(), n ),
                           Kokkos::subview( m_log_sites, to ) );
        Kokkos::deep_copy( exec, Kokkos::View<std::uint32_t*, Kokkos::HostSpace, unmanaged>( codes.data(), n ),
                           Kokkos::subview( m_log_codes, to ) );
        exec.fence();
    }

    //! place_together: a neighbour's placements near its faces, appended onto this rank's current planes
    //! (and, while this rank's own list is speculated, marked for its sweeps).
    void receive_band( const ExecutionSpace& exec, engine_type& engine, int from, const Fresh& fresh )
    {
        compat::ScopedRegion wait( "morula::parallel::OverflowTurns::wait_band" );
        std::uint64_t n = 0;
        MPI_Recv( &n, 1, MPI_UINT64_T, from, tag_band, m_comm, MPI_STATUS_IGNORE );
        if ( n == 0 )
            return;
        m_receive_sites.resize( n );
        m_receive_codes.resize( n );
        MPI_Recv( m_receive_sites.data(), int( n ), MPI_UINT64_T, from, tag_band, m_comm, MPI_STATUS_IGNORE );
        MPI_Recv( m_receive_codes.data(), int( n ), MPI_UINT32_T, from, tag_band, m_comm, MPI_STATUS_IGNORE );
        wait.end();
        compat::ScopedRegion absorb( "morula::parallel::OverflowTurns::absorb_band" );
        using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
        const auto range = Kokkos::make_pair( std::size_t( 0 ), std::size_t( n ) );
        Kokkos::deep_copy( exec, Kokkos::subview( m_log_sites, range ),
                           Kokkos::View<const std::uint64_t*, Kokkos::HostSpace, unmanaged>( m_receive_sites.data(), n ) );
        Kokkos::deep_copy( exec, Kokkos::subview( m_log_codes, range ),
                           Kokkos::View<const std::uint32_t*, Kokkos::HostSpace, unmanaged>( m_receive_codes.data(), n ) );
        engine.absorb_placements( exec, m_log_sites, m_log_codes, std::size_t( n ), fresh.begin, fresh.end );
    }

    // The rank whose turn it is has placed entries [next, stop) (stop: the end of its list, n, or an
    // entry the nearest-site table cannot place); of the placed entries, those another rank can need go
    // to the host log buffers.
    SegmentHeader segment_header( const ExecutionSpace& exec, engine_type& engine, std::size_t next, std::size_t stop,
                                  std::size_t n )
    {
        SegmentHeader h;
        h.placed = stop - next;
        if ( h.placed > 0 )
        {
            h.sent = select_band( exec, engine.placed_sites(), engine.placed_codes(), next, stop );
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
    // place_together's messages (sent ones live until their requests complete)
    int m_word = 0;
    std::uint64_t m_send_count = 0;
    std::vector<std::uint64_t> m_send_sites, m_receive_sites;
    std::vector<std::uint32_t> m_send_codes, m_receive_codes;
};

} // namespace morula::parallel::detail

#endif
