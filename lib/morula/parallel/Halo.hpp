/*!
  \file Halo.hpp
  \brief Ghost particles: copies of the particles within the halo width of a rank's faces, edges and
  corners, received from the (up to 26) neighbours and appended to the SoA storage.
*/
#ifndef MORULA_PARALLEL_HALO_HPP
#define MORULA_PARALLEL_HALO_HPP

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

namespace detail
{

//! What a kernel needs to decide where an owned particle must be sent.
template <class Scalar>
struct HaloSendRule
{
    Kokkos::Array<Scalar, 3> low_limit{};  //!< Send towards -axis if x < lo + h ...
    Kokkos::Array<Scalar, 3> high_limit{}; //!< ... towards +axis if x >= hi - h ...
    Kokkos::Array<int, 3> has_low{};       //!< ... and a neighbour exists that way.
    Kokkos::Array<int, 3> has_high{};
    std::uint32_t slot_exists = 0; //!< Bit s: direction slot s has a neighbour.

    //! Bit s set when the particle at (x, y, z) goes to direction slot s.
    KOKKOS_INLINE_FUNCTION std::uint32_t mask( Scalar x, Scalar y, Scalar z ) const
    {
        const Scalar p[3] = { x, y, z };
        int low[3], high[3];
        for ( int a = 0; a < 3; ++a )
        {
            low[a] = has_low[a] && p[a] < low_limit[a];
            high[a] = has_high[a] && p[a] >= high_limit[a];
        }
        std::uint32_t m = 0;
        for ( int s = 0; s < num_directions; ++s )
        {
            const auto d = direction_of_slot( s );
            bool go = true;
            for ( int a = 0; a < 3; ++a )
                go = go && ( d[a] == 0 || ( d[a] < 0 ? low[a] : high[a] ) );
            if ( go )
                m |= std::uint32_t( 1 ) << s;
        }
        return m & slot_exists;
    }
};

//! mask(i) = the direction slots particle i is sent to.
template <class ExecutionSpace, class Scalar, class PositionView, class MaskView>
void halo_masks( const ExecutionSpace& exec, std::size_t n, const HaloSendRule<Scalar>& rule,
                 const PositionView& x, const MaskView& mask )
{
    Kokkos::parallel_for(
        "morula::parallel::halo_masks", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t i ) { mask( i ) = rule.mask( x( i, 0 ), x( i, 1 ), x( i, 2 ) ); } );
}

/*!
  \brief The particles with a non-empty mask (those near a face), in particle order: boundary(j) for
  j < count(0). One scan over the particles, so that the export scan below runs over these few
  (a surface's worth) rather than over every particle 26 times.
*/
template <class ExecutionSpace, class MaskView, class IndexView, class CountView>
void halo_boundary_particles( const ExecutionSpace& exec, std::size_t n, const MaskView& mask,
                              const IndexView& boundary, const CountView& count )
{
    Kokkos::parallel_scan(
        "morula::parallel::halo_boundary_particles", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t i, int& update, const bool final ) {
            const int flag = mask( i ) != 0u;
            if ( final )
            {
                if ( flag )
                    boundary( update ) = static_cast<int>( i );
                if ( i + 1 == n )
                    count( 0 ) = update + flag;
            }
            update += flag;
        } );
}

/*!
  \brief One exclusive scan over (slot, boundary particle) pairs, slot-major: offsets(s) is the first
  export row of slot s, offsets(26) the total. With `fill`, export row r gets its particle and slot.
  Atomics-free and deterministic: rows are in slot order, then particle order.
*/
template <class ExecutionSpace, class MaskView, class OffsetView, class IndexView>
void halo_export_scan( const ExecutionSpace& exec, std::size_t m, const IndexView& boundary,
                       const MaskView& mask, const OffsetView& offsets, bool fill, const IndexView& index,
                       const IndexView& slot )
{
    const std::size_t total = m * num_directions;
    if ( total == 0 )
    {
        Kokkos::deep_copy( exec, offsets, 0 );
        return;
    }
    Kokkos::parallel_scan(
        "morula::parallel::halo_export_scan", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, total ),
        KOKKOS_LAMBDA( const std::size_t k, int& update, const bool final ) {
            const int s = static_cast<int>( k / m );
            const std::size_t i = static_cast<std::size_t>( boundary( k % m ) );
            const int flag = ( mask( i ) >> s ) & 1u;
            if ( final )
            {
                if ( k % m == 0 )
                    offsets( s ) = update;
                if ( fill && flag )
                {
                    index( update ) = static_cast<int>( i );
                    slot( update ) = s;
                }
                if ( k + 1 == total )
                    offsets( num_directions ) = update + flag;
            }
            update += flag;
        } );
}

} // namespace detail

/*!
  \brief Ghost particles of a CartesianDecomposition for a SoA whose field 0 is the position Scalar[3].

  Construction takes the first n_owned entries as this rank's particles (inside its subdomain) and
  - marks, per particle on the device, the directions it goes to: per axis -1 if it lies within the
    halo width of the low face (x < lo + h) and a neighbour exists that way, +1 likewise for the high
    face (x >= hi - h), 0 always; every combination but (0, 0, 0);
  - compacts the particles with a non-empty mask (one scan), then builds the export lists by one
    exclusive scan over (direction, compacted particle): rows in direction order, then particle order,
    no atomics;
  - exchanges the counts with each neighbour (non-blocking), then every field of the SoA, one message
    per direction and field: positions get the direction's periodic shift added on the device;
  - resizes the SoA to n_owned + num_ghosts() and writes the ghosts behind the owned particles, ordered
    by the slot of the neighbour they come from (see direction_of_slot()), then by the sender's export
    order. The ghosts from neighbour slot r are entries n_owned + ghost_offset(r) .. n_owned +
    ghost_offset(r + 1).

  With one or two ranks along a periodic axis several directions lead to the same rank, or to this rank
  itself, with different shifts; every direction has its own MPI tag, and messages to this rank go
  through MPI like any other.

  One message per direction and field keeps every buffer a typed, contiguous View (no byte packing with
  mixed alignments) and lets update() move a subset of fields with the same plan. The fields share one
  send and one receive buffer (detail::MessageBuffers) that the halo keeps: they grow to the largest
  field during construction, and update() allocates no device memory at all.
*/
template <class MemorySpace, class Scalar>
class Halo
{
  public:
    using memory_space = MemorySpace;
    using scalar_type = Scalar;

    template <class ExecutionSpace, class SoAType>
    Halo( const ExecutionSpace& exec, const CartesianDecomposition<Scalar>& decomposition,
          SoAType& particles, std::size_t n_owned )
        : Halo( exec, decomposition, particles, n_owned, detail::MessageBuffers<MemorySpace>() )
    {
    }

    /*!
      \brief As above, starting from existing message buffers (a previous halo's buffers(), a
      MigrationWorkspace's): copies share the storage, so a rebuild that needs no more than they hold
      allocates none. The halo grows its copy only; the buffers must not be used by another exchange
      while this halo works.
    */
    template <class ExecutionSpace, class SoAType>
    Halo( const ExecutionSpace& exec, const CartesianDecomposition<Scalar>& decomposition,
          SoAType& particles, std::size_t n_owned, detail::MessageBuffers<MemorySpace> buffers )
        : m_decomposition( decomposition ), m_comm( decomposition.comm() ), m_n_owned( n_owned ),
          m_transport( select_transport<MemorySpace>() ), m_buffers( std::move( buffers ) )
    {
        static_assert( std::is_same_v<typename SoAType::memory_space, MemorySpace>,
                       "Halo: the SoA lives in another memory space" );
        static_assert( std::is_same_v<typename SoAType::template field_type<0>, Scalar[3]>,
                       "Halo: field 0 of the SoA must be the position, Scalar[3]" );
        if ( n_owned > particles.size() )
            throw core::InputError( core::detail::concat( "parallel::Halo: n_owned = ", n_owned,
                                                          " exceeds the ", particles.size(),
                                                          " stored entries" ) );
        compat::ScopedRegion region( "morula::parallel::Halo::build" );
        build_plan( exec, decomposition, particles.template get<0>() );
        particles.resize( m_n_owned + m_n_ghost );
        exchange_fields( exec, particles, std::make_index_sequence<SoAType::num_fields>{} );
    }

    //! Owned particles the halo was built for.
    std::size_t num_owned() const { return m_n_owned; }
    //! Ghosts received (the SoA holds num_owned() + num_ghosts() entries).
    std::size_t num_ghosts() const { return m_n_ghost; }
    //! Rows sent (a particle counts once per direction it goes to).
    std::size_t num_exports() const { return m_plan.send_rows; }
    //! First ghost (relative to num_owned()) from the neighbour in direction slot r; r = 26 gives the end.
    std::size_t ghost_offset( int r ) const { return m_ghost_offset[r]; }
    //! How MPI reached the buffers.
    Transport transport() const { return m_transport; }
    //! Bytes held by the message buffers: sized by the construction's largest field, unchanged by
    //! update() of the same fields (no allocation per update).
    std::size_t buffer_bytes() const { return m_buffers.capacity_bytes(); }
    //! The message buffers (to check that update() reuses their storage).
    const detail::MessageBuffers<MemorySpace>& buffers() const { return m_buffers; }

    /*!
      \brief Refreshes the ghosts of fields Fields... (default: the position only) from the owned
      particles, with the export lists of the construction: for the steps between rebuilds.
      The SoA must still hold num_owned() + num_ghosts() entries.
    */
    template <std::size_t... Fields, class ExecutionSpace, class SoAType>
    void update( const ExecutionSpace& exec, SoAType& particles ) const
    {
        if ( particles.size() != m_n_owned + m_n_ghost )
            throw core::InputError( core::detail::concat(
                "parallel::Halo::update: the SoA holds ", particles.size(), " entries, expected ",
                m_n_owned, " owned + ", m_n_ghost, " ghosts" ) );
        compat::ScopedRegion region( "morula::parallel::Halo::update" );
        if constexpr ( sizeof...( Fields ) == 0 )
            exchange_fields( exec, particles, std::index_sequence<0>{} );
        else
            exchange_fields( exec, particles, std::index_sequence<Fields...>{} );
    }

    // Public because nvcc rejects extended lambdas in private member functions.
    template <class ExecutionSpace, class PositionView>
    void build_plan( const ExecutionSpace& exec, const CartesianDecomposition<Scalar>& dec,
                     const PositionView& x )
    {
        detail::HaloSendRule<Scalar> rule;
        const auto coords = dec.coords();
        const auto dims = dec.dims();
        const Scalar h = dec.halo_width();
        for ( int a = 0; a < 3; ++a )
        {
            rule.low_limit[a] = dec.lo()[a] + h;
            rule.high_limit[a] = dec.hi()[a] - h;
            rule.has_low[a] = dec.box().is_periodic( a ) || coords[a] > 0;
            rule.has_high[a] = dec.box().is_periodic( a ) || coords[a] < dims[a] - 1;
        }
        for ( int s = 0; s < num_directions; ++s )
            if ( dec.neighbor_rank( s ) != MPI_PROC_NULL )
                rule.slot_exists |= std::uint32_t( 1 ) << s;

        const std::size_t n = m_n_owned;
        Kokkos::View<int*, MemorySpace> offsets( "morula::parallel::halo_offsets", num_directions + 1 );
        Kokkos::View<std::uint32_t*, MemorySpace> mask(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::halo_mask" ), n );
        Kokkos::View<int*, MemorySpace> boundary(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::halo_boundary" ), n );
        Kokkos::View<int*, MemorySpace> boundary_count( "morula::parallel::halo_boundary_count", 1 );
        std::size_t m = 0;
        if ( n > 0 )
        {
            detail::halo_masks( exec, n, rule, x, mask );
            detail::halo_boundary_particles( exec, n, mask, boundary, boundary_count );
            int h_m = 0;
            Kokkos::deep_copy( h_m, Kokkos::subview( boundary_count, 0 ) );
            m = static_cast<std::size_t>( h_m );
        }
        detail::halo_export_scan( exec, m, boundary, mask, offsets, false, m_export_index, m_export_slot );
        auto h_offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), offsets );
        const std::size_t n_export = static_cast<std::size_t>( h_offsets( num_directions ) );
        m_export_index = Kokkos::View<int*, MemorySpace>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::halo_export_index" ),
            n_export );
        m_export_slot = Kokkos::View<int*, MemorySpace>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::parallel::halo_export_slot" ),
            n_export );
        if ( n_export > 0 )
            detail::halo_export_scan( exec, m, boundary, mask, offsets, true, m_export_index, m_export_slot );

        m_shift = Kokkos::View<Scalar* [3], MemorySpace>( "morula::parallel::halo_shift", num_directions );
        auto h_shift = Kokkos::create_mirror_view( m_shift );
        for ( int s = 0; s < num_directions; ++s )
            for ( int a = 0; a < 3; ++a )
                h_shift( s, a ) = dec.neighbor_shift( s )[a];
        Kokkos::deep_copy( m_shift, h_shift );

        // Counts: what goes in direction s arrives at that neighbour from its direction 25 - s.
        std::vector<int> send_count( num_directions, 0 ), recv_count( num_directions, 0 );
        std::vector<MPI_Request> req;
        req.reserve( 2 * num_directions );
        for ( int s = 0; s < num_directions; ++s )
        {
            const int nb = dec.neighbor_rank( s );
            if ( nb == MPI_PROC_NULL )
                continue;
            send_count[s] = h_offsets( s + 1 ) - h_offsets( s );
            req.emplace_back();
            MPI_Irecv( &recv_count[s], 1, MPI_INT, nb, count_tag + opposite_slot( s ), m_comm,
                       &req.back() );
            req.emplace_back();
            MPI_Isend( &send_count[s], 1, MPI_INT, nb, count_tag + s, m_comm, &req.back() );
        }
        MPI_Waitall( static_cast<int>( req.size() ), req.data(), MPI_STATUSES_IGNORE );

        m_plan = detail::CommPlan{};
        std::size_t recv_rows = 0;
        for ( int s = 0; s < num_directions; ++s )
        {
            m_ghost_offset[s] = recv_rows;
            const int nb = dec.neighbor_rank( s );
            if ( nb == MPI_PROC_NULL )
                continue;
            m_plan.sends.push_back( { nb, s, static_cast<std::size_t>( h_offsets( s ) ),
                                      static_cast<std::size_t>( send_count[s] ) } );
            m_plan.recvs.push_back( { nb, opposite_slot( s ), recv_rows,
                                      static_cast<std::size_t>( recv_count[s] ) } );
            recv_rows += static_cast<std::size_t>( recv_count[s] );
        }
        m_ghost_offset[num_directions] = recv_rows;
        m_plan.send_rows = n_export;
        m_plan.recv_rows = recv_rows;
        m_n_ghost = recv_rows;
    }

  private:
    static constexpr int count_tag = 0;
    static constexpr int data_tag = 64;

    template <class ExecutionSpace, class SoAType, std::size_t... I>
    void exchange_fields( const ExecutionSpace& exec, SoAType& particles,
                          std::index_sequence<I...> ) const
    {
        ( exchange_one<I>( exec, particles ), ... );
    }

    template <std::size_t I, class ExecutionSpace, class SoAType>
    void exchange_one( const ExecutionSpace& exec, SoAType& particles ) const
    {
        static_assert( I < SoAType::num_fields, "Halo::update: no such field" );
        if constexpr ( I == 0 )
        {
            const auto& x = particles.template get<0>();
            detail::pack_exchange_unpack<Scalar[3]>(
                exec, m_comm, m_plan, data_tag, static_cast<int>( SoAType::num_fields ), m_buffers,
                m_transport,
                [&]( const auto& send ) {
                    detail::pack_shifted_positions( exec, m_plan.send_rows, m_export_index,
                                                    m_export_slot, m_shift, x, send );
                },
                [&]( const auto&, const auto& recv ) {
                    detail::unpack_rows( exec, m_plan.recv_rows, recv, 0, x, m_n_owned );
                } );
        }
        else
            detail::exchange_field<I>( exec, m_comm, m_plan, data_tag, particles, m_export_index,
                                       m_n_owned, m_transport, m_buffers );
        exec.fence();
    }

    CartesianDecomposition<Scalar> m_decomposition; // keeps the Cartesian communicator alive
    MPI_Comm m_comm = MPI_COMM_NULL;
    std::size_t m_n_owned = 0;
    std::size_t m_n_ghost = 0;
    Transport m_transport = Transport::host_memory;
    Kokkos::View<int*, MemorySpace> m_export_index;
    Kokkos::View<int*, MemorySpace> m_export_slot;
    Kokkos::View<Scalar* [3], MemorySpace> m_shift;
    detail::CommPlan m_plan;
    // Scratch for the messages, kept across update() calls (which are const: the buffers hold no
    // state of the halo, only storage).
    mutable detail::MessageBuffers<MemorySpace> m_buffers;
    std::size_t m_ghost_offset[num_directions + 1] = {};
};

} // namespace morula::parallel

#endif
