/*!
  \file detail/PlaneExchange.hpp
  \brief The exchange of whole z planes between a slab of a distributed lattice and its two neighbours:
  the owned planes next to each face go to the neighbour on that side and arrive in its ghost planes.
*/
#ifndef MORULA_PARALLEL_DETAIL_PLANEEXCHANGE_HPP
#define MORULA_PARALLEL_DETAIL_PLANEEXCHANGE_HPP

#include <morula/core/Error.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>
#include <morula/parallel/Transport.hpp>
#include <morula/parallel/detail/Exchange.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <climits>
#include <cstddef>

namespace morula::parallel::detail
{

/*!
  \brief Sends the `depth` owned planes next to each face of a slab to the neighbour on that side and
  receives the neighbours' into the ghost planes next to the owned ones, through the transport (NCCL,
  CUDA IPC, GPU-aware or staged MPI, host memory), like every other exchange (detail::exchange_begin).
  Planes are contiguous in the x-fastest layout: one device copy into the message buffers, one row per
  plane. Keeps its buffers between exchanges, and counts the bytes it sent.
*/
template <class ExecutionSpace>
class PlaneExchange
{
  public:
    using memory_space = typename ExecutionSpace::memory_space;
    using device_sites = Kokkos::View<lattice::site_word*, memory_space>;

    PlaneExchange() = default;
    //! `lower` / `upper`: the neighbours' ranks (MPI_PROC_NULL at a reflecting face); `plane`: sites per
    //! plane; `window`: the slab's planes. With `alone` (one rank) nothing is ever exchanged.
    PlaneExchange( const TransportContext& context, Transport transport, bool alone, int lower, int upper,
                   std::size_t plane, const lattice::detail::SlabWindow& window )
        : m_context( context )
        , m_transport( transport )
        , m_alone( alone )
        , m_lower( lower )
        , m_upper( upper )
        , m_plane( plane )
        , m_window( window )
    {
    }

    /*!
      Sends the `depth` owned planes next to each face to the neighbour on that side (where `to_lower`
      / `to_upper`) and receives the neighbours' into the ghost planes next to the owned ones (where
      `from_lower` / `from_upper`). With two ranks on a periodic axis both neighbours are the same rank;
      the tags tell the directions apart. begin() and end() on `exec`, which also wrote the planes
      (stream order suffices).
    */
    void exchange( const ExecutionSpace& exec, const device_sites& s, int depth, bool to_lower, bool to_upper,
                   bool from_lower = true, bool from_upper = true )
    {
        begin( exec, s, depth, to_lower, to_upper, from_lower, from_upper );
        end( exec, s );
    }

    // The first half of exchange(), on `exec` (the planes must be final for work on it): the planes to
    // send are copied into the message buffers (one row per plane), and the exchange starts through the
    // transport.
    void begin( const ExecutionSpace& exec, const device_sites& s, int depth, bool to_lower, bool to_upper,
                bool from_lower, bool from_upper )
    {
        m_pending = Pending{};
        if ( m_alone )
            return;
        const int ob = m_window.owned_begin, oe = m_window.owned_end;
        const std::size_t n = m_plane * std::size_t( depth );
        if ( n * sizeof( lattice::site_word ) > std::size_t( INT_MAX ) )
            throw core::CapacityError( core::detail::concat( "LatticeDiffusion on slabs: ", depth,
                                                             " planes of ", m_plane, " sites exceed one MPI message" ) );
        const bool send_lower = to_lower && m_lower != MPI_PROC_NULL;
        const bool send_upper = to_upper && m_upper != MPI_PROC_NULL;
        const bool recv_lower = from_lower && m_lower != MPI_PROC_NULL;
        const bool recv_upper = from_upper && m_upper != MPI_PROC_NULL;
        m_pending.depth = depth;
        m_pending.recv_lower = recv_lower;
        m_pending.recv_upper = recv_upper;
        // Rows [0, depth): towards / from below; [depth, 2 depth): towards / from above. With two ranks
        // on a periodic axis both neighbours are the same rank; the tags tell the directions apart.
        const std::size_t d = std::size_t( depth );
        CommPlan plan;
        plan.send_rows = plan.recv_rows = 2 * d;
        if ( send_lower )
            plan.sends.push_back( { m_lower, tag_down, 0, d } );
        if ( send_upper )
            plan.sends.push_back( { m_upper, tag_up, d, d } );
        if ( recv_lower )
            plan.recvs.push_back( { m_lower, tag_up, 0, d } );
        if ( recv_upper )
            plan.recvs.push_back( { m_upper, tag_down, d, d } );
        const std::size_t plane_bytes = m_plane * sizeof( lattice::site_word );
        const auto send = m_buffers.send_bytes( 2 * n * sizeof( lattice::site_word ) );
        const sites_view send_sites( reinterpret_cast<lattice::site_word*>( send.data() ), 2 * n );
        if ( send_lower )
            Kokkos::deep_copy( exec, Kokkos::subview( send_sites, Kokkos::make_pair( std::size_t( 0 ), n ) ),
                               planes( s, ob, ob + depth ) );
        if ( send_upper )
            Kokkos::deep_copy( exec, Kokkos::subview( send_sites, Kokkos::make_pair( n, 2 * n ) ),
                               planes( s, oe - depth, oe ) );
        m_pending.exchange = exchange_begin( exec, m_context, m_transport, plan, 0, plane_bytes, m_buffers );
        m_pending.active = true;
        m_bytes_sent += ( ( send_lower ? 1LL : 0LL ) + ( send_upper ? 1LL : 0LL ) ) *
                        (long long)( n * sizeof( lattice::site_word ) );
    }

    // The second half: waits for the messages and copies the received planes into the ghost planes on
    // `exec`. Work on `exec` afterwards sees them; work on other instances needs exec.fence().
    void end( const ExecutionSpace& exec, const device_sites& s )
    {
        if ( !m_pending.active )
            return;
        m_pending.active = false;
        exchange_end( exec, m_pending.exchange, m_buffers );
        const int ob = m_window.owned_begin, oe = m_window.owned_end;
        const std::size_t n = m_plane * std::size_t( m_pending.depth );
        const auto recv = m_buffers.recv_bytes( 2 * n * sizeof( lattice::site_word ) );
        const sites_view recv_sites( reinterpret_cast<lattice::site_word*>( recv.data() ), 2 * n );
        if ( m_pending.recv_lower )
            Kokkos::deep_copy( exec, planes( s, ob - m_pending.depth, ob ),
                               Kokkos::subview( recv_sites, Kokkos::make_pair( std::size_t( 0 ), n ) ) );
        if ( m_pending.recv_upper )
            Kokkos::deep_copy( exec, planes( s, oe, oe + m_pending.depth ),
                               Kokkos::subview( recv_sites, Kokkos::make_pair( n, 2 * n ) ) );
    }

    //! Bytes this rank has sent since construction.
    long long bytes_sent() const { return m_bytes_sent; }

  private:
    using sites_view =
        Kokkos::View<lattice::site_word*, Kokkos::LayoutRight, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    static constexpr int tag_up = 11;   // planes sent to the upper neighbour (its ghosts below)
    static constexpr int tag_down = 12; // planes sent to the lower neighbour (its ghosts above)

    //! An exchange between begin() and end().
    struct Pending
    {
        bool active = false;
        int depth = 0;
        bool recv_lower = false, recv_upper = false;
        PendingExchange exchange;
    };

    template <class View>
    auto planes( const View& v, int first, int last ) const
    {
        return Kokkos::subview( v, Kokkos::make_pair( m_plane * std::size_t( first ), m_plane * std::size_t( last ) ) );
    }

    TransportContext m_context;
    Transport m_transport = Transport::host_memory;
    bool m_alone = true;
    int m_lower = MPI_PROC_NULL, m_upper = MPI_PROC_NULL;
    std::size_t m_plane = 0;
    lattice::detail::SlabWindow m_window;
    // The planes' messages (device rows, page-locked host copies for staging, IPC storage), kept.
    MessageBuffers<memory_space> m_buffers;
    Pending m_pending;
    long long m_bytes_sent = 0;
};

} // namespace morula::parallel::detail

#endif
