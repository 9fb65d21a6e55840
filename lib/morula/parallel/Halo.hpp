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
#include <morula/parallel/detail/HaloScans.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <array>
#include <climits>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula::parallel
{

//! How a rank that is its own neighbour across a periodic axis (one rank along it) sees its images.
enum class PeriodicImages : int
{
    ghosts,       //!< as ghosts, like any neighbour's particles (a local grid with open axes works)
    minimum_image //!< not at all: the local grid must be periodic along those axes (minimum image)
};

/*!
  \brief Ghost particles of a CartesianDecomposition for a SoA whose field 0 is the position Scalar[3].

  build() (the constructor builds too) takes the first n_owned entries as this rank's particles (inside
  its subdomain) and
  - in one scan over them, marks the directions each goes to (per axis -1 if it lies within the halo
    width of the low face, x < lo + h, and a neighbour exists that way, +1 likewise for the high face,
    x >= hi - h, 0 always; every combination but (0, 0, 0)) and compacts the particles with a
    non-empty mask; one exclusive scan over (direction, compacted particle) then gives the export
    lists: rows in direction order, then particle order, no atomics;
  - reads back the compacted count and the 27 export offsets (the only device-to-host transfers), and
    exchanges the counts with each neighbour (non-blocking MPI, one int per direction);
  - packs every field of an exported particle into one message row (positions get the direction's
    periodic shift) in one kernel, sends one message per direction through the decomposition's
    transport (NCCL on the stream, GPU-aware MPI, staged, or host memory), and unpacks the received
    rows behind the owned particles in one kernel: the SoA then holds n_owned + num_ghosts() entries,
    ghosts ordered by the slot of the neighbour they come from (see direction_of_slot()), then by the
    sender's export order. The ghosts from neighbour slot r are entries n_owned + ghost_offset(r) ..
    n_owned + ghost_offset(r + 1).

  With one or two ranks along a periodic axis several directions lead to the same rank, or to this rank
  itself, with different shifts; every direction has its own message (and MPI tag). Messages to this
  rank are one device copy kernel. With PeriodicImages::minimum_image the directions across periodic
  axes with one rank are left out altogether (the caller's local grid wraps those axes): one rank in a
  periodic box then has no ghosts at all.

  Both build() and update() come in two halves, start_*() and finish_*(), so that a caller overlaps
  the exchange with other work: between them the messages are in flight (NCCL on the given execution
  space instance's stream, MPI requests posted), the SoA is not reallocated, and only ghost rows are
  written. DistributedSphereMechanics starts them on a high-priority stream of their own while the
  forces among the owned particles run, and adds the ghosts' forces to boundary_particles(), the
  owned particles within the halo width of a face towards a neighbour, once they have arrived.

  Everything the halo allocates is kept and grows only: the export lists, the scan's scratch, and the
  message buffers (detail::MessageBuffers, shared with migrate() through buffers()); a rebuild or an
  update() that moves no more than an earlier one allocates nothing.
*/
template <class MemorySpace, class Scalar>
class Halo
{
  public:
    using memory_space = MemorySpace;
    using scalar_type = Scalar;

    template <class ExecutionSpace, class SoAType>
    Halo( const ExecutionSpace& exec, const CartesianDecomposition<Scalar>& decomposition,
          SoAType& particles, std::size_t n_owned, PeriodicImages images = PeriodicImages::ghosts )
        : Halo( exec, decomposition, particles, n_owned, detail::MessageBuffers<MemorySpace>(), images )
    {
    }

    /*!
      \brief A halo with no plan yet (no ghosts), to be built by build() or start_build(), with message
      buffers to start from (copies share the storage; see below).
    */
    Halo( const CartesianDecomposition<Scalar>& decomposition, detail::MessageBuffers<MemorySpace> buffers,
          PeriodicImages images = PeriodicImages::ghosts )
        : m_decomposition( decomposition ), m_comm( decomposition.comm() ), m_images( images ),
          m_buffers( std::move( buffers ) )
    {
        init_directions();
    }

    /*!
      \brief As above, starting from existing message buffers (a previous halo's buffers(), a
      MigrationWorkspace's): copies share the storage, so a build that needs no more than they hold
      allocates none. The halo grows its copy only; the buffers must not be used by another exchange
      while this halo works.
    */
    template <class ExecutionSpace, class SoAType>
    Halo( const ExecutionSpace& exec, const CartesianDecomposition<Scalar>& decomposition,
          SoAType& particles, std::size_t n_owned, detail::MessageBuffers<MemorySpace> buffers,
          PeriodicImages images = PeriodicImages::ghosts )
        : m_decomposition( decomposition ), m_comm( decomposition.comm() ), m_images( images ),
          m_buffers( std::move( buffers ) )
    {
        init_directions();
        build( exec, particles, n_owned );
    }

    /*!
      \brief Builds the halo anew for the first n_owned entries of `particles` (dropping the old ghosts),
      reusing everything allocated before. Collective. start_build() and finish_build() in one.
    */
    template <class ExecutionSpace, class SoAType>
    void build( const ExecutionSpace& exec, SoAType& particles, std::size_t n_owned )
    {
        start_build( exec, particles, n_owned );
        finish_build( exec, particles );
    }

    /*!
      \brief The first half of build(): the export lists and the counts (collective; the host reads
      back 27 offsets and exchanges one count per neighbour), the SoA resized to n_owned + num_ghosts()
      entries, every field of the exports packed and the messages started. Until finish_build(), the
      owned entries may be read by work on other execution space instances (the interior forces): the
      SoA is not reallocated after this returns, and only ghost rows are written.
    */
    template <class ExecutionSpace, class SoAType>
    void start_build( const ExecutionSpace& exec, SoAType& particles, std::size_t n_owned )
    {
        start_build( exec, particles, n_owned, [] {} );
    }

    /*!
      \brief start_build() for a caller whose work on other execution space instances reads the owned
      entries while the plan is made: `before_reallocation()` runs before the SoA is reallocated for
      the ghosts (when it must grow), e.g. a fence of that work. Nothing else of the SoA changes under it.
    */
    template <class ExecutionSpace, class SoAType, class BeforeReallocation>
    void start_build( const ExecutionSpace& exec, SoAType& particles, std::size_t n_owned,
                      BeforeReallocation&& before_reallocation )
    {
        static_assert( std::is_same_v<typename SoAType::memory_space, MemorySpace>,
                       "Halo: the SoA lives in another memory space" );
        static_assert( std::is_same_v<typename SoAType::template field_type<0>, Scalar[3]>,
                       "Halo: field 0 of the SoA must be the position, Scalar[3]" );
        check_owned( n_owned, particles.size() );
        check_idle( "build" );
        compat::ScopedRegion region( "morula::parallel::Halo::start_build" );
        if ( !( m_exports_found && m_n_owned == n_owned ) )
        {
            m_n_owned = n_owned;
            find_exports( exec, particles.template get<0>() );
        }
        m_exports_found = false;
        m_transport = m_decomposition.transport_context().template transport<MemorySpace>();
        plan_messages();
        // Ghost rows are all written by the unpack: no zero-fill (resize() would), and room with
        // headroom so that a slowly growing halo reallocates rarely.
        const std::size_t total = m_n_owned + m_n_ghost;
        if ( total > particles.capacity() )
        {
            before_reallocation();
            particles.reserve( total + total / 8 );
        }
        particles.set_size( total );
        std::size_t row_bytes = 0;
        const auto rows = detail::soa_field_rows( particles, row_bytes );
        start_rows( exec, rows, row_bytes );
    }

    /*!
      \brief Optional first step of start_build(), on an instance of the caller's choice: finds the
      export lists of the first n_owned particles (two scans on the device, the 27 offsets read back;
      not collective). The next start_build() for as many particles then starts from these lists;
      the positions must not change in between. DistributedSphereMechanics runs this on its main
      stream before it launches the forces, and start_build() after: the scans, which read every
      position, then do not compete with the forces for the GPU, and only the count exchange with the
      neighbours, the pack and the messages run beside them.
    */
    template <class ExecutionSpace, class SoAType>
    void find_exports( const ExecutionSpace& exec, const SoAType& particles, std::size_t n_owned )
    {
        check_owned( n_owned, particles.size() );
        check_idle( "find_exports" );
        compat::ScopedRegion region( "morula::parallel::Halo::find_exports" );
        m_n_owned = n_owned;
        find_exports( exec, particles.template get<0>() );
        m_exports_found = true;
    }

    //! The second half of build(): waits for the messages and unpacks every field of the ghosts.
    template <class ExecutionSpace, class SoAType>
    void finish_build( const ExecutionSpace& exec, SoAType& particles )
    {
        compat::ScopedRegion region( "morula::parallel::Halo::finish_build" );
        std::size_t row_bytes = 0;
        const auto rows = detail::soa_field_rows( particles, row_bytes );
        finish_rows( exec, rows, row_bytes );
    }

    //! Owned particles the halo was built for.
    std::size_t num_owned() const { return m_n_owned; }
    //! Ghosts received (the SoA holds num_owned() + num_ghosts() entries).
    std::size_t num_ghosts() const { return m_n_ghost; }
    //! Rows sent (a particle counts once per direction it goes to).
    std::size_t num_exports() const { return m_plan.send_rows; }
    //! First ghost (relative to num_owned()) from the neighbour in direction slot r; r = 26 gives the end.
    std::size_t ghost_offset( int r ) const { return m_ghost_offset[r]; }
    //! How the messages travelled.
    Transport transport() const { return m_transport; }
    //! How this halo treats a rank's own periodic images.
    PeriodicImages periodic_images() const { return m_images; }
    //! Bytes held by the message buffers: sized by the largest build, unchanged by update() (no
    //! allocation per update).
    std::size_t buffer_bytes() const { return m_buffers.capacity_bytes(); }
    //! The message buffers (to share them with migrate(), and to check that update() reuses them).
    const detail::MessageBuffers<MemorySpace>& buffers() const { return m_buffers; }

    /*!
      \brief Refreshes the ghosts of fields Fields... (default: the position only) from the owned
      particles, with the export lists of the last build: for the steps between rebuilds. One message
      per direction for all the fields. The SoA must still hold num_owned() + num_ghosts() entries.
      start_update() and finish_update() in one.
    */
    template <std::size_t... Fields, class ExecutionSpace, class SoAType>
    void update( const ExecutionSpace& exec, SoAType& particles ) const
    {
        start_update<Fields...>( exec, particles );
        finish_update<Fields...>( exec, particles );
    }

    //! The first half of update(): packs the fields and starts the messages (see start_build()).
    template <std::size_t... Fields, class ExecutionSpace, class SoAType>
    void start_update( const ExecutionSpace& exec, SoAType& particles ) const
    {
        if ( particles.size() != m_n_owned + m_n_ghost )
            throw core::InputError( core::detail::concat(
                "parallel::Halo::update: the SoA holds ", particles.size(), " entries, expected ",
                m_n_owned, " owned + ", m_n_ghost, " ghosts" ) );
        check_idle( "update" );
        compat::ScopedRegion region( "morula::parallel::Halo::start_update" );
        with_update_rows<Fields...>( particles, [&]( const auto& rows, std::size_t row_bytes, bool shift ) {
            start_rows( exec, rows, row_bytes, shift );
        } );
    }

    //! The second half of update(): waits for the messages and unpacks the fields of the ghosts.
    template <std::size_t... Fields, class ExecutionSpace, class SoAType>
    void finish_update( const ExecutionSpace& exec, SoAType& particles ) const
    {
        compat::ScopedRegion region( "morula::parallel::Halo::finish_update" );
        with_update_rows<Fields...>( particles, [&]( const auto& rows, std::size_t row_bytes, bool ) {
            finish_rows( exec, rows, row_bytes );
        } );
    }

    /*!
      \brief Follows a reordering of the owned particles between builds: owned particle i is now the
      one that was perm(i) (perm a permutation of [0, num_owned()), as SoA::permute_leading() applies).
      The export lists and boundary_particles() then name the same particles at their new places, so
      that update() sends what it sent before, in the same rows: the neighbours' ghosts keep their
      order. For a cell-order sort of the owned particles between rebuilds.
    */
    template <class ExecutionSpace, class PermutationView>
    void renumber_owned( const ExecutionSpace& exec, const PermutationView& perm )
    {
        check_idle( "renumber_owned" );
        if ( perm.extent( 0 ) < m_n_owned )
            throw core::InputError( core::detail::concat( "parallel::Halo::renumber_owned: a permutation of ",
                                                          perm.extent( 0 ), " entries for ", m_n_owned,
                                                          " owned particles" ) );
        compat::ScopedRegion region( "morula::parallel::Halo::renumber_owned" );
        detail::grow_to( m_new_index, m_n_owned, "morula::parallel::halo_new_index" );
        detail::renumber( exec, m_n_owned, perm, m_new_index, m_plan.send_rows, m_export_index, m_n_boundary,
                          m_boundary );
    }

    /*!
      \brief The owned particles within the halo width of a face towards a neighbour at the last build
      (those exported at least once), in particle order at the build (after renumber_owned(), the same
      particles in the same list order, under their new indices): entries [0, num_boundary()) of the View. Every other owned particle is farther
      than the halo width from every ghost of that build.
    */
    Kokkos::View<const int*, MemorySpace> boundary_particles() const
    {
        return Kokkos::subview( m_boundary, std::make_pair( std::size_t( 0 ), m_n_boundary ) );
    }
    std::size_t num_boundary() const { return m_n_boundary; }

    // Public because nvcc rejects extended lambdas in private member functions.
    // The export lists of the first m_n_owned particles, and their 27 offsets on the host.
    template <class ExecutionSpace, class PositionView>
    void find_exports( const ExecutionSpace& exec, const PositionView& x )
    {
        const auto& dec = m_decomposition;
        detail::HaloSendRule<Scalar> rule;
        const auto coords = dec.coords();
        const auto dims = dec.dims();
        const Scalar h = dec.halo_width();
        for ( int a = 0; a < 3; ++a )
        {
            const bool images_by_grid = m_images == PeriodicImages::minimum_image && dec.periodic_within_rank( a );
            rule.low_limit[a] = dec.lo()[a] + h;
            rule.high_limit[a] = dec.hi()[a] - h;
            rule.has_low[a] = !images_by_grid && ( dec.box().is_periodic( a ) || coords[a] > 0 );
            rule.has_high[a] = !images_by_grid && ( dec.box().is_periodic( a ) || coords[a] < dims[a] - 1 );
        }
        for ( int s = 0; s < num_directions; ++s )
            if ( m_slot_rank[s] != MPI_PROC_NULL )
                rule.slot_exists |= std::uint32_t( 1 ) << s;

        const std::size_t n = m_n_owned;
        std::size_t m = 0;
        if ( rule.slot_exists != 0u )
        {
            detail::grow_to( m_boundary, n, "morula::parallel::halo_boundary" );
            detail::grow_to( m_boundary_mask, n, "morula::parallel::halo_boundary_mask" );
            m = detail::halo_boundary_particles( exec, n, rule, x, m_boundary, m_boundary_mask );
        }
        m_n_boundary = m;
        const std::size_t most = std::size_t( rule.max_directions() ) * m;
        detail::grow_to( m_export_index, most, "morula::parallel::halo_export_index" );
        detail::grow_to( m_export_slot, most, "morula::parallel::halo_export_slot" );
        detail::halo_export_scan( exec, m, detail::ExportSlots( rule.slot_exists ), m_boundary, m_boundary_mask,
                                  m_offsets, m_export_index, m_export_slot );
        Kokkos::deep_copy( exec, m_offsets_host, m_offsets );
        exec.fence();
    }

    // The counts exchanged with the neighbours (non-blocking MPI, one int per direction, waited for) and
    // the messages of the build, from the export offsets of find_exports().
    void plan_messages()
    {
        const std::size_t n_export = static_cast<std::size_t>( m_offsets_host( num_directions ) );

        // Counts: what goes in direction s arrives at that neighbour from its direction 25 - s.
        std::vector<int> send_count( num_directions, 0 ), recv_count( num_directions, 0 );
        std::vector<MPI_Request> req;
        req.reserve( 2 * num_directions );
        for ( int s = 0; s < num_directions; ++s )
        {
            const int nb = m_slot_rank[s];
            if ( nb == MPI_PROC_NULL )
                continue;
            send_count[s] = m_offsets_host( s + 1 ) - m_offsets_host( s );
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
            const int nb = m_slot_rank[s];
            if ( nb == MPI_PROC_NULL )
                continue;
            m_plan.sends.push_back( { nb, s, static_cast<std::size_t>( m_offsets_host( s ) ),
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

    // Packs the rows (shifting positions when `shift_positions`: field 0 is first in the rows then)
    // and starts the messages. Public for nvcc (extended lambdas in callees).
    template <class ExecutionSpace, class Rows>
    void start_rows( const ExecutionSpace& exec, const Rows& rows, std::size_t row_bytes,
                     bool shift_positions = true ) const
    {
        // (exchange_begin() grows the receive storage before any message is posted)
        const auto send = m_buffers.send_bytes( m_plan.send_rows * row_bytes );
        if ( shift_positions )
            detail::pack_shifted_particle_rows( exec, m_plan.send_rows, rows, m_export_index, m_export_slot,
                                                m_shift, send, row_bytes );
        else
            detail::pack_particle_rows( exec, m_plan.send_rows, rows, m_export_index, send, row_bytes );
        m_pending = detail::exchange_begin( exec, m_decomposition.transport_context(), m_transport, m_plan,
                                            data_tag, row_bytes, m_buffers );
    }

    // Completes the messages started by start_rows() and unpacks the ghosts.
    template <class ExecutionSpace, class Rows>
    void finish_rows( const ExecutionSpace& exec, const Rows& rows, std::size_t row_bytes ) const
    {
        if ( !m_pending.active )
            throw core::InputError( "parallel::Halo: finish without a started build or update" );
        if ( m_pending.row_bytes != row_bytes )
            throw core::InputError( core::detail::concat( "parallel::Halo: finishing rows of ", row_bytes,
                                                          " bytes, started with ", m_pending.row_bytes,
                                                          " (other fields)" ) );
        detail::exchange_end( exec, m_pending, m_buffers );
        const auto recv = m_buffers.recv_bytes( m_plan.recv_rows * row_bytes );
        detail::unpack_particle_rows( exec, m_plan.recv_rows, rows, recv, row_bytes, m_n_owned );
    }

  private:
    static constexpr int count_tag = 0;
    static constexpr int data_tag = 64;

    static void check_owned( std::size_t n_owned, std::size_t stored )
    {
        if ( n_owned > stored )
            throw core::InputError( core::detail::concat( "parallel::Halo: n_owned = ", n_owned, " exceeds the ",
                                                          stored, " stored entries" ) );
        if ( n_owned > std::size_t( INT_MAX ) )
            throw core::CapacityError( core::detail::concat( "parallel::Halo: ", n_owned,
                                                             " particles on one rank exceed 2^31 - 1" ) );
    }

    void check_idle( const char* what ) const
    {
        if ( m_pending.active )
            throw core::InputError( core::detail::concat(
                "parallel::Halo::", what, ": an exchange is in flight; finish it first" ) );
    }

    // Calls f(rows, row_bytes, shift_positions) with the rows of an update of Fields... (the position
    // alone when none is listed).
    template <std::size_t... Fields, class SoAType, class F>
    static void with_update_rows( SoAType& particles, F&& f )
    {
        std::size_t at = 0;
        if constexpr ( sizeof...( Fields ) == 0 )
        {
            const auto rows = detail::make_field_rows( at, particles.template get<0>() );
            f( rows, detail::row_bytes_for( at ), true );
        }
        else
        {
            static_assert( ( ( Fields < SoAType::num_fields ) && ... ), "Halo::update: no such field" );
            constexpr std::size_t listed[] = { Fields... };
            // The shift is added to the first three scalars of a row: the position must lead.
            static_assert( ( ( Fields != 0 ) && ... ) || listed[0] == 0,
                           "Halo::update: list the position (field 0) first" );
            const auto rows = detail::make_field_rows( at, particles.template get<Fields>()... );
            f( rows, detail::row_bytes_for( at ), listed[0] == 0 );
        }
    }

    // The neighbour of each direction slot (MPI_PROC_NULL where none, or where the images are the
    // local grid's), their periodic shifts on the device, and the persistent offsets.
    void init_directions()
    {
        const auto& dec = m_decomposition;
        m_shift = Kokkos::View<Scalar* [3], MemorySpace>( "morula::parallel::halo_shift", num_directions );
        auto h_shift = Kokkos::create_mirror_view( m_shift );
        for ( int s = 0; s < num_directions; ++s )
        {
            const auto d = direction_of_slot( s );
            bool by_grid = false;
            for ( int a = 0; a < 3; ++a )
                by_grid = by_grid || ( d[a] != 0 && m_images == PeriodicImages::minimum_image &&
                                       dec.periodic_within_rank( a ) );
            m_slot_rank[s] = by_grid ? MPI_PROC_NULL : dec.neighbor_rank( s );
            for ( int a = 0; a < 3; ++a )
                h_shift( s, a ) = dec.neighbor_rank( s ) == MPI_PROC_NULL ? Scalar( 0 ) : dec.neighbor_shift( s )[a];
        }
        Kokkos::deep_copy( m_shift, h_shift );
        m_offsets = Kokkos::View<int*, MemorySpace>( "morula::parallel::halo_offsets", num_directions + 1 );
        m_offsets_host = Kokkos::create_mirror_view( m_offsets );
    }

    CartesianDecomposition<Scalar> m_decomposition; // keeps the Cartesian communicator alive
    MPI_Comm m_comm = MPI_COMM_NULL;
    PeriodicImages m_images = PeriodicImages::ghosts;
    std::size_t m_n_owned = 0;
    std::size_t m_n_ghost = 0;
    Transport m_transport = Transport::host_memory;
    std::array<int, num_directions> m_slot_rank{};
    Kokkos::View<int*, MemorySpace> m_boundary;
    Kokkos::View<std::uint32_t*, MemorySpace> m_boundary_mask;
    Kokkos::View<int*, MemorySpace> m_offsets;
    typename Kokkos::View<int*, MemorySpace>::HostMirror m_offsets_host;
    Kokkos::View<int*, MemorySpace> m_export_index;
    Kokkos::View<int*, MemorySpace> m_export_slot;
    Kokkos::View<Scalar* [3], MemorySpace> m_shift;
    detail::CommPlan m_plan;
    // Scratch for the messages, kept across update() calls (which are const: the buffers hold no
    // state of the halo, only storage).
    mutable detail::MessageBuffers<MemorySpace> m_buffers;
    mutable detail::PendingExchange m_pending; // between a start_* and its finish_*
    std::size_t m_n_boundary = 0;
    std::size_t m_ghost_offset[num_directions + 1] = {};
    bool m_exports_found = false; // find_exports() ran for the next start_build()
    Kokkos::View<int*, MemorySpace> m_new_index; // renumber_owned(): old index -> new
};

} // namespace morula::parallel

#endif
