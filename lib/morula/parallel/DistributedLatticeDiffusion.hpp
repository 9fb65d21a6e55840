/*!
  \file DistributedLatticeDiffusion.hpp
  \brief The lattice diffusion model of seed 002 over MPI: the lattice is cut into slabs along z, one per
  rank, each stepped by the single-rank kernels with ghost planes from its neighbours; the result is bit
  for bit the single-rank result, for any number of ranks.
*/
#ifndef MORULA_PARALLEL_DISTRIBUTEDLATTICEDIFFUSION_HPP
#define MORULA_PARALLEL_DISTRIBUTEDLATTICEDIFFUSION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>
#include <morula/parallel/Transport.hpp>
#include <morula/parallel/detail/Exchange.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace morula::parallel
{

//! Planes [begin, end) of a lattice's z axis.
struct PlaneRange
{
    int begin = 0;
    int end = 0;
    int size() const { return end - begin; }
};

//! The planes rank `rank` of `ranks` owns: [nz rank / ranks, nz (rank + 1) / ranks).
inline PlaneRange slab_of_rank( int nz, int rank, int ranks )
{
    return { int( std::int64_t( nz ) * rank / ranks ), int( std::int64_t( nz ) * ( rank + 1 ) / ranks ) };
}

/*!
  \brief Seconds per phase of DistributedLatticeDiffusion::step() on this rank, summed over all steps,
  and what was communicated. Each phase ends with a fence; a phase that waits for messages includes
  the wait for slower ranks.
*/
struct LatticeStepTimes
{
    double passes = 0;    //!< the split or fused passes (kernels only)
    double halo = 0;      //!< one-plane ghost exchanges before each z or fused pass
    double sync = 0;      //!< the MPI_Allgather of the overflow counts after every pass: where a rank
                          //!< waits for slower ones (their passes), so mostly imbalance
    double overflow = 0;  //!< placing overflowed particles: ghost bands, turns, broadcasts, replays
    long long steps = 0;
    long long halo_bytes = 0;          //!< bytes this rank sent in ghost-plane exchanges (all depths)
    long long overflow_events = 0;     //!< passes after which some rank had overflowed particles
    long long overflow_entries = 0;    //!< particles placed from overflow lists, over all ranks
    long long overflow_scans = 0;      //!< of those, placed by the index-order scan over all slabs
    double communication() const { return halo + sync + overflow; }
    double total() const { return passes + communication(); }
};

/*!
  \brief Steps a lattice of `Slots`-particle sites distributed over the ranks of `comm` as slabs along z.

  Rank r owns planes slab_of_rank(nz, r, ranks) and keeps three ghost planes on each side. The kernels
  are those of lattice::LatticeDiffusion, which key every random move and every overflow entry on the
  global site index, so a slab computes exactly what the whole lattice computes for its sites:
  - split passes: x and y moves stay in a plane and need no ghosts; during the z pass each rank sends
    its first and last owned plane to its neighbours through the transport (NCCL, CUDA IPC, GPU-aware
    or staged MPI, host memory) while the interior planes, which need no ghost, are updated; the two
    planes next to the faces follow. The fused pass does the same every step;
  - overflow: placement is sequential in the order of (global site, arrival rank) on a single rank.
    With slabs along z that order runs through the ranks in slab order, so after a pass in which any
    rank overflowed (MPI_Allgather of the counts) the ranks with entries take turns in slab order.
    A rank whose entries lie within three planes of a face first receives the three ghost planes on
    that side (a rejected particle goes back to its origin, one plane from its site at most, or to the
    5^3 cube around it: 3 planes in all); entries farther in, the usual case, need no band at all;
    in its turn it places its entries with the single-rank kernel and broadcasts where they went,
    and every rank replays them onto its planes, so every later turn sees the lattice exactly as the
    single rank would. An entry whose 5^3 cube has no room stops the kernel: the single rank's last
    resort, the first site with room after it in index order, is found over all slabs (one
    MPI_Allreduce MIN of each slab's candidate), placed on every rank, and the turn resumes. The
    result is the single-rank placement bit for bit; a pass without overflows costs one MPI_Allgather.
  Tracer displacements are kept per rank and summed over the ranks when asked for.

  Collective: every rank constructs, steps and queries together. Requirements, checked on every rank
  alike before any communication: every slab at least 3 planes thick; with a periodic z axis and more
  than one rank, nz at least the thickest slab + 6 (a window must not wrap onto itself).
*/
template <int Slots, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class DistributedLatticeDiffusion
{
  public:
    using execution_space = ExecutionSpace;
    using memory_space = typename ExecutionSpace::memory_space;
    using lattice_type = lattice::Lattice<Slots, memory_space>;
    using engine_type = lattice::LatticeDiffusion<Slots, ExecutionSpace>;
    using host_sites = Kokkos::View<lattice::site_word*, Kokkos::HostSpace>;
    static constexpr int ghost_planes = 3;

    /*!
      Species codes. `owned` holds this rank's planes slab_of_rank(whole.nz, rank, size) of the
      lattice `whole` (its x and y extents, nz = the slab's planes); its View is copied.
      \throws core::InputError (on every rank) for a slab that does not fit or is too thin, or a site
      that breaks the lattice rules
    */
    DistributedLatticeDiffusion( const ExecutionSpace& exec, MPI_Comm comm, const lattice::LatticeShape& whole,
                                 const lattice_type& owned, const lattice::DiffusionRules& rules,
                                 const lattice::DiffusionOptions& options = {} )
        : DistributedLatticeDiffusion( exec, comm, whole, owned, rules, lattice::CodeMap::species( rules.species() ),
                                       options )
    {
    }

    /*!
      Tracer codes: code t (1..n) is one particle of species species_of_tracer[t - 1]; every code must
      appear exactly once over all slabs.
    */
    DistributedLatticeDiffusion( const ExecutionSpace& exec, MPI_Comm comm, const lattice::LatticeShape& whole,
                                 const lattice_type& owned, const lattice::DiffusionRules& rules,
                                 const std::vector<int>& species_of_tracer, const lattice::DiffusionOptions& options )
        : DistributedLatticeDiffusion( exec, comm, whole, owned, rules, lattice::CodeMap::tracers( species_of_tracer ),
                                       options )
    {
    }

    /*!
      Any code map (lattice::CodeMap): species codes without ids, then one code per tracer; every tracer
      code must appear exactly once over all slabs.
    */
    DistributedLatticeDiffusion( const ExecutionSpace& exec, MPI_Comm comm, const lattice::LatticeShape& whole,
                                 const lattice_type& owned, const lattice::DiffusionRules& rules,
                                 const lattice::CodeMap& codes, const lattice::DiffusionOptions& options )
        : m_whole( whole )
    {
        int size = 1, rank = 0;
        MPI_Comm_size( comm, &size );
        MPI_Comm_rank( comm, &rank );
        validate( whole, owned.shape(), rank, size ); // before any collective call
        const bool periodic = whole.boundary[2] == lattice::LatticeBoundary::periodic;
        int dims = size, periods = periodic ? 1 : 0;
        MPI_Cart_create( comm, 1, &dims, &periods, 0, &m_comm );
        MPI_Comm_rank( m_comm, &m_rank );
        MPI_Comm_size( m_comm, &m_size );
        MPI_Cart_shift( m_comm, 0, 1, &m_lower, &m_upper );
        m_context = TransportContext( m_comm );
        m_exchange_exec = compat::concurrent_instance( exec );
        m_transport = m_size == 1 ? Transport::host_memory : m_context.transport<memory_space>();
        m_slab = slab_of_rank( whole.nz, m_rank, m_size );
        m_plane = std::size_t( whole.nx ) * std::size_t( whole.ny );

        // The window: the owned planes with ghost_planes on each side, or the whole axis on one rank.
        const bool alone = m_size == 1;
        const int ghosts = alone ? 0 : ghost_planes;
        lattice::detail::SlabWindow w;
        w.nz = whole.nz;
        w.z_first = m_slab.begin - ghosts;
        w.planes = m_slab.size() + 2 * ghosts;
        w.owned_begin = ghosts;
        w.owned_end = ghosts + m_slab.size();
        w.periodic = periodic;
        w.whole = alone;
        lattice::LatticeShape local_shape = whole;
        local_shape.nz = w.planes;
        lattice_type window( local_shape, "lattice_slab" );
        Kokkos::deep_copy( exec, plane_range( window.sites(), w.owned_begin, w.owned_end ), owned.sites() );
        exec.fence();
        m_window = w;
        exchange_planes( exec, window.sites(), ghost_planes, true, true ); // types and particles of the ghosts

        // A pass overflows at most the particles that can reach the owned sites.
        unsigned long long local_particles = count_particles( exec, owned );
        MPI_Allreduce( &local_particles, &m_particles, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, m_comm );
        const std::size_t capacity = std::max<std::size_t>(
            1, std::min<std::size_t>( std::size_t( m_particles ), std::size_t( Slots ) * m_plane * std::size_t( m_slab.size() + 2 ) ) );
        m_engine.emplace( exec, window, whole, w, rules, codes, options, capacity );
        m_engine->record_placements();
        m_tracking = codes.tracking();
        if ( m_tracking )
            check_tracer_ids( exec );
    }

    DistributedLatticeDiffusion( const DistributedLatticeDiffusion& ) = delete;
    DistributedLatticeDiffusion& operator=( const DistributedLatticeDiffusion& ) = delete;
    ~DistributedLatticeDiffusion()
    {
        if ( m_comm != MPI_COMM_NULL )
            MPI_Comm_free( &m_comm );
    }

    //! Advances `steps` time steps (collective).
    void step( const ExecutionSpace& exec, int steps = 1 )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedLatticeDiffusion::step" );
        for ( int s = 0; s < steps; ++s )
        {
            if ( m_engine->options().scheme == lattice::PassScheme::split )
                for ( int axis = 0; axis < 3; ++axis )
                {
                    if ( axis == 2 )
                        pass_with_ghosts( exec, 2 );
                    else
                        timed( m_times.passes, exec, [&] { m_engine->split_pass( exec, axis ); } );
                    timed( m_times.overflow, exec, [&] { place_overflow( exec ); } );
                }
            else
            {
                pass_with_ghosts( exec, 3 );
                timed( m_times.overflow, exec, [&] { place_overflow( exec ); } );
            }
            m_engine->complete_step();
            ++m_times.steps;
        }
    }

    MPI_Comm comm() const { return m_comm; }
    int rank() const { return m_rank; }
    int size() const { return m_size; }
    //! The planes this rank owns.
    PlaneRange slab() const { return m_slab; }
    const lattice::LatticeShape& shape() const { return m_whole; }
    Transport transport() const { return m_transport; }
    std::uint32_t steps_done() const { return m_engine->steps_done(); }
    //! Particles on the whole lattice (constant).
    unsigned long long particles() const { return m_particles; }
    const LatticeStepTimes& times() const { return m_times; }
    void reset_times() { m_times = {}; }
    //! The single-rank engine of this slab (its lattice() holds the ghost planes too).
    const engine_type& engine() const { return *m_engine; }

    //! This rank's owned sites (a View of the slab's current lattice; changes with every pass).
    auto owned_sites() const { return plane_range( sites(), m_window.owned_begin, m_window.owned_end ); }

    //! Particles that went through an overflow list, on all ranks (collective).
    unsigned long long overflows() const
    {
        unsigned long long local = m_engine->overflows(), all = 0;
        MPI_Allreduce( &local, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, m_comm );
        return all;
    }

    //! Particles per code over the whole lattice; re-checks every slab (collective).
    std::vector<unsigned long long> code_counts( const ExecutionSpace& exec ) const
    {
        auto c = m_engine->code_counts( exec );
        std::vector<unsigned long long> all( c.size() );
        MPI_Allreduce( c.data(), all.data(), int( c.size() ), MPI_UNSIGNED_LONG_LONG, MPI_SUM, m_comm );
        return all;
    }

    //! Unwrapped displacement of each tracer (row = code), summed over the ranks (collective).
    Kokkos::View<int* [3], Kokkos::HostSpace> displacements() const
    {
        if ( !m_tracking )
            throw core::InputError( "DistributedLatticeDiffusion: displacements need tracer codes" );
        // The reduction runs over the raw array, so both sides need the device View's layout (LayoutLeft
        // on GPUs); the result is then handed out in the host's default layout.
        auto local = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_engine->displacements() );
        decltype( local ) sum( "lattice_displacement_sum", local.extent( 0 ) );
        MPI_Allreduce( local.data(), sum.data(), int( 3 * local.extent( 0 ) ), MPI_INT, MPI_SUM, m_comm );
        Kokkos::View<int* [3], Kokkos::HostSpace> all( "lattice_displacements", local.extent( 0 ) );
        Kokkos::deep_copy( all, sum );
        return all;
    }

    //! Mean square displacement of the tracers of `species` over the whole lattice (collective).
    lattice::MsdSample msd( int species ) const
    {
        const auto h = displacements();
        return lattice::msd_of_tracers( h, m_engine->codes(), species );
    }

    /*!
      \brief The whole lattice on every rank (collective; MPI_Allgatherv of the slabs), for tests,
      snapshots and small lattices.
      \throws core::CapacityError when the lattice exceeds MPI's int counts (2^31 sites)
    */
    host_sites gather( const ExecutionSpace& exec ) const
    {
        if ( m_whole.sites() > std::size_t( INT_MAX ) )
            throw core::CapacityError( core::detail::concat( "DistributedLatticeDiffusion::gather: ",
                                                             m_whole.sites(), " sites exceed 2^31" ) );
        host_sites mine( "lattice_gather_slab", m_plane * std::size_t( m_slab.size() ) );
        Kokkos::deep_copy( exec, mine, owned_sites() );
        exec.fence();
        std::vector<int> counts( m_size ), displs( m_size );
        for ( int r = 0; r < m_size; ++r )
        {
            const auto s = slab_of_rank( m_whole.nz, r, m_size );
            counts[r] = int( m_plane * std::size_t( s.size() ) );
            displs[r] = int( m_plane * std::size_t( s.begin ) );
        }
        host_sites all( "lattice_gathered", m_whole.sites() );
        MPI_Allgatherv( mine.data(), counts[m_rank], MPI_UINT32_T, all.data(), counts.data(), displs.data(),
                        MPI_UINT32_T, m_comm );
        return all;
    }

    //! \throws core::InputError unless `ranks` slabs of `whole` work (the same answer on every rank);
    //! `owned` must be rank `rank`'s slab.
    static void validate( const lattice::LatticeShape& whole, const lattice::LatticeShape& owned, int rank, int ranks )
    {
        using core::detail::concat;
        whole.validate();
        const auto thinnest = slab_of_rank( whole.nz, 0, ranks ).size(); // nz / ranks rounded down
        const int thickest = ( whole.nz + ranks - 1 ) / ranks;
        if ( ranks > 1 && thinnest < ghost_planes )
            throw core::InputError( concat( "DistributedLatticeDiffusion: ", ranks, " ranks cut the ", whole.nz,
                                            " planes of z into slabs of ", thinnest, "; each needs at least ",
                                            ghost_planes, " planes (the overflow placement reaches 3 sites): use at most ",
                                            whole.nz / ghost_planes, " ranks" ) );
        if ( ranks > 1 && whole.boundary[2] == lattice::LatticeBoundary::periodic && whole.nz < thickest + 2 * ghost_planes )
            throw core::InputError( concat( "DistributedLatticeDiffusion: with a periodic z axis of ", whole.nz,
                                            " planes, a slab of ", thickest, " planes and its ", 2 * ghost_planes,
                                            " ghost planes would wrap onto itself: use more planes or more ranks" ) );
        const auto mine = slab_of_rank( whole.nz, rank, ranks );
        if ( owned.nx != whole.nx || owned.ny != whole.ny || owned.nz != mine.size() )
            throw core::InputError( concat( "DistributedLatticeDiffusion: rank ", rank, " was given ", owned.nx, " x ",
                                            owned.ny, " x ", owned.nz, " sites; its slab of the ", whole.nx, " x ",
                                            whole.ny, " x ", whole.nz, " lattice is ", whole.nx, " x ", whole.ny, " x ",
                                            mine.size(), " (planes ", mine.begin, " to ", mine.end - 1, ")" ) );
    }

    // Public because nvcc rejects extended lambdas in private member functions.
    //! Particles on a lattice's sites.
    static unsigned long long count_particles( const ExecutionSpace& exec, const lattice_type& l )
    {
        using layout = lattice::SiteLayout<Slots>;
        const auto s = l.sites();
        unsigned long long n = 0;
        Kokkos::parallel_reduce(
            "morula::parallel::lattice_count_particles",
            Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, s.extent( 0 ) ),
            KOKKOS_LAMBDA( const std::size_t i, unsigned long long& acc ) { acc += layout::count( s( i ) ); }, n );
        return n;
    }

    /*!
      Whether any of the first n entries of this slab's overflow list can reach the ghost planes below /
      above: its site's local plane within ghost_planes of the owned range's first / last plane.
    */
    std::pair<bool, bool> near_faces( const ExecutionSpace& exec, std::size_t n ) const
    {
        const auto keys = m_engine->overflow_keys();
        const lattice::detail::SlabWindow w = m_window;
        const std::uint64_t plane = m_plane;
        using reducer = Kokkos::MinMax<int>;
        typename reducer::value_type range;
        Kokkos::parallel_reduce(
            "morula::parallel::lattice_overflow_reach", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const std::size_t i, typename reducer::value_type& r ) {
                const int p = w.local_of_global( int( ( keys( i ) >> 8 ) / plane ) );
                r.min_val = p < r.min_val ? p : r.min_val;
                r.max_val = p > r.max_val ? p : r.max_val;
            },
            reducer( range ) );
        return { range.min_val < w.owned_begin + ghost_planes, range.max_val >= w.owned_end - ghost_planes };
    }

  private:
    using device_sites = Kokkos::View<lattice::site_word*, memory_space>;
    using lattice_sites_view =
        Kokkos::View<lattice::site_word*, Kokkos::LayoutRight, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    static constexpr int tag_up = 11;   // planes sent to the upper neighbour (its ghosts below)
    static constexpr int tag_down = 12; // planes sent to the lower neighbour (its ghosts above)

    const device_sites& sites() const { return m_engine->lattice().sites(); }

    template <class View>
    auto plane_range( const View& v, int first, int last ) const
    {
        return Kokkos::subview( v, Kokkos::make_pair( m_plane * std::size_t( first ), m_plane * std::size_t( last ) ) );
    }

    template <class F>
    static void timed( double& acc, const ExecutionSpace& exec, F&& f )
    {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        exec.fence();
        acc += std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    }

    /*!
      A pass that reads one ghost plane on each side (split z: axis 2; fused: 3), overlapped with their
      exchange: the interior planes, which read owned planes only, start on `exec`, and the ghost planes
      travel meanwhile on an instance of their own (a second, high-priority stream on a GPU); then the
      two planes next to the faces. Timed: `halo` is the host's time in starting and ending the exchange (the interior pass
      runs meanwhile), `passes` the rest.
    */
    void pass_with_ghosts( const ExecutionSpace& exec, int axis )
    {
        const int ob = m_window.owned_begin, oe = m_window.owned_end;
        auto pass = [&]( int first, int last ) { m_engine->pass_planes( exec, axis, first, last ); };
        if ( m_size == 1 )
        {
            timed( m_times.passes, exec, [&] { pass( ob, oe ); } );
            m_engine->end_pass( axis );
            return;
        }
        const ExecutionSpace& comm = m_exchange_exec;
        exec.fence(); // the last pass and placement wrote the planes that travel
        auto t0 = std::chrono::steady_clock::now();
        // The interior first (slabs have at least 3 planes): it reads the owned planes of the current
        // lattice and writes the next one, while the exchange reads the planes next to the faces and
        // writes the ghost planes of the current lattice.
        pass( ob + 1, oe - 1 );
        m_times.passes += seconds_since( t0 );
        t0 = std::chrono::steady_clock::now();
        begin_planes( comm, sites(), 1, true, true, true, true );
        end_planes( comm, sites() );
        comm.fence(); // the planes next to the faces read the ghost planes
        m_times.halo += seconds_since( t0 );
        timed( m_times.passes, exec, [&] {
            pass( ob, ob + 1 );
            pass( oe - 1, oe );
        } );
        m_engine->end_pass( axis );
    }

    static double seconds_since( std::chrono::steady_clock::time_point t0 )
    {
        return std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    }

    /*!
      Sends the `depth` owned planes next to each face to the neighbour on that side (where `to_lower`
      / `to_upper`) and receives the neighbours' into the ghost planes next to the owned ones. With two
      ranks on a periodic axis both neighbours are the same rank; the tags tell the directions apart.
      begin_planes() and end_planes() on `exec`, which also wrote the planes (stream order suffices).
    */
    void exchange_planes( const ExecutionSpace& exec, const device_sites& s, int depth, bool to_lower, bool to_upper,
                          bool from_lower = true, bool from_upper = true )
    {
        begin_planes( exec, s, depth, to_lower, to_upper, from_lower, from_upper );
        end_planes( exec, s );
    }

    // The first half of exchange_planes(), on `exec` (the planes must be final for work on it): the
    // planes to send are copied into the message buffers (one row per plane), and the exchange starts
    // through the transport, like every other exchange (detail::exchange_begin: NCCL on the stream,
    // CUDA IPC, GPU-aware or staged MPI, host memory).
    void begin_planes( const ExecutionSpace& exec, const device_sites& s, int depth, bool to_lower, bool to_upper,
                       bool from_lower, bool from_upper )
    {
        m_pending = PendingPlanes{};
        if ( m_size == 1 )
            return;
        const int ob = m_window.owned_begin, oe = m_window.owned_end;
        const std::size_t n = m_plane * std::size_t( depth );
        if ( n * sizeof( lattice::site_word ) > std::size_t( INT_MAX ) )
            throw core::CapacityError( core::detail::concat( "DistributedLatticeDiffusion: ", depth,
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
        detail::CommPlan plan;
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
        const lattice_sites_view send_sites( reinterpret_cast<lattice::site_word*>( send.data() ), 2 * n );
        if ( send_lower )
            Kokkos::deep_copy( exec, Kokkos::subview( send_sites, Kokkos::make_pair( std::size_t( 0 ), n ) ),
                               plane_range( s, ob, ob + depth ) );
        if ( send_upper )
            Kokkos::deep_copy( exec, Kokkos::subview( send_sites, Kokkos::make_pair( n, 2 * n ) ),
                               plane_range( s, oe - depth, oe ) );
        m_pending.exchange =
            detail::exchange_begin( exec, m_context, m_transport, plan, 0, plane_bytes, m_buffers );
        m_pending.active = true;
        m_times.halo_bytes += ( ( send_lower ? 1LL : 0LL ) + ( send_upper ? 1LL : 0LL ) ) *
                              (long long)( n * sizeof( lattice::site_word ) );
    }

    // The second half: waits for the messages and copies the received planes into the ghost planes on
    // `exec`. Work on `exec` afterwards sees them; work on other instances needs exec.fence().
    void end_planes( const ExecutionSpace& exec, const device_sites& s )
    {
        if ( !m_pending.active )
            return;
        m_pending.active = false;
        detail::exchange_end( exec, m_pending.exchange, m_buffers );
        const int ob = m_window.owned_begin, oe = m_window.owned_end;
        const std::size_t n = m_plane * std::size_t( m_pending.depth );
        const auto recv = m_buffers.recv_bytes( 2 * n * sizeof( lattice::site_word ) );
        const lattice_sites_view recv_sites( reinterpret_cast<lattice::site_word*>( recv.data() ), 2 * n );
        if ( m_pending.recv_lower )
            Kokkos::deep_copy( exec, plane_range( s, ob - m_pending.depth, ob ),
                               Kokkos::subview( recv_sites, Kokkos::make_pair( std::size_t( 0 ), n ) ) );
        if ( m_pending.recv_upper )
            Kokkos::deep_copy( exec, plane_range( s, oe, oe + m_pending.depth ),
                               Kokkos::subview( recv_sites, Kokkos::make_pair( n, 2 * n ) ) );
    }

    //! What the rank whose turn it is tells the others, per segment of its overflow list.
    struct SegmentHeader
    {
        std::uint64_t placed = 0;   //!< entries placed by the nearest-site table (they follow)
        std::uint64_t origin = 0;   //!< the entry that needs the scan over all slabs: the global site
                                    //!< its particle came from,
        std::uint32_t code = 0;     //!< its particle,
        std::uint32_t type = 0;     //!< and its origin's type
        std::uint32_t needs_scan = 0;
    };

    //! Places this pass's overflowed particles on all ranks in the single-rank order (see the class).
    void place_overflow( const ExecutionSpace& exec )
    {
        if ( m_size == 1 ) // the single-rank model (code_counts() reports an unplaced particle)
        {
            m_engine->place_overflow( exec );
            return;
        }
        // Per rank: its entries, and whether any of them can reach the ghost band below / above (an
        // entry at local plane p touches planes p - 3 .. p + 3: origin one plane away, its 5^3 cube two
        // more). Entries far from the faces, the usual case, need no band from a neighbour.
        const unsigned long long mine = m_engine->pending_overflows( exec );
        unsigned long long report[3] = { mine, 0, 0 };
        if ( mine > 0 )
        {
            const auto reach = near_faces( exec, std::size_t( mine ) );
            report[1] = reach.first ? 1 : 0;
            report[2] = reach.second ? 1 : 0;
        }
        std::vector<unsigned long long> reports( 3 * std::size_t( m_size ) );
        const auto t0 = std::chrono::steady_clock::now();
        MPI_Allgather( report, 3, MPI_UNSIGNED_LONG_LONG, reports.data(), 3, MPI_UNSIGNED_LONG_LONG, m_comm );
        const double sync = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        m_times.sync += sync;
        m_times.overflow -= sync; // the caller times the whole of place_overflow() as overflow
        std::vector<unsigned long long> counts( m_size );
        unsigned long long total = 0, largest = 0;
        for ( int r = 0; r < m_size; ++r )
        {
            counts[r] = reports[3 * r];
            total += counts[r];
            largest = std::max( largest, counts[r] );
        }
        if ( total == 0 )
            return;
        ++m_times.overflow_events;
        m_times.overflow_entries += (long long)total;

        // A rank whose entries reach a ghost band needs that band as the pass left them; it then keeps it
        // current by replaying every placement. Planes a rank does not hold current get no replays.
        const bool to_lower = m_lower != MPI_PROC_NULL && reports[3 * m_lower + 2] != 0;
        const bool to_upper = m_upper != MPI_PROC_NULL && reports[3 * m_upper + 1] != 0;
        const bool from_lower = report[1] != 0, from_upper = report[2] != 0;
        if ( to_lower || to_upper || from_lower || from_upper )
            exchange_planes( exec, sites(), ghost_planes, to_lower, to_upper, from_lower, from_upper );
        const int fresh_begin = from_lower && m_lower != MPI_PROC_NULL ? 0 : m_window.owned_begin;
        const int fresh_end = from_upper && m_upper != MPI_PROC_NULL ? m_window.planes : m_window.owned_end;
        ensure_log_capacity( std::size_t( largest ) );

        // Turns in slab order, which is the order of the overflow keys (global site, arrival rank), from the
        // last slab when the engine places in descending order.
        const bool descending = m_engine->placement_descending();
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
                    h = place_segment( exec, next, std::size_t( mine ) );
                MPI_Bcast( &h, int( sizeof( h ) ), MPI_BYTE, turn, m_comm );
                if ( h.placed > 0 )
                {
                    MPI_Bcast( m_host_log_sites.data(), int( h.placed ), MPI_UINT64_T, turn, m_comm );
                    MPI_Bcast( m_host_log_codes.data(), int( h.placed ), MPI_UINT32_T, turn, m_comm );
                    if ( m_rank != turn )
                        replay_host_log( exec, std::size_t( h.placed ), fresh_begin, fresh_end );
                }
                if ( !h.needs_scan )
                    break;
                const std::uint64_t target = scan_all_slabs( exec, h );
                ++m_times.overflow_scans;
                m_host_log_sites( 0 ) = target;
                m_host_log_codes( 0 ) = h.code;
                replay_host_log( exec, 1, fresh_begin, fresh_end );
                if ( m_rank == turn )
                {
                    // the kernel has undone the rejected move already
                    m_engine->add_displacement( exec, h.code, minimum_image_delta( h.origin, target ) );
                    next += std::size_t( h.placed ) + 1;
                }
            }
        }
    }

    // The rank whose turn it is places entries from `next` until the end of its list or an entry the
    // nearest-site table cannot place; the placed entries go to the host log buffers.
    SegmentHeader place_segment( const ExecutionSpace& exec, std::size_t next, std::size_t n )
    {
        SegmentHeader h;
        const std::size_t stop = m_engine->place_overflow_from( exec, next );
        h.placed = stop - next;
        if ( h.placed > 0 )
        {
            const auto range = Kokkos::make_pair( next, stop );
            const auto to = Kokkos::make_pair( std::size_t( 0 ), stop - next );
            Kokkos::deep_copy( Kokkos::subview( m_host_log_sites, to ), Kokkos::subview( m_engine->placed_sites(), range ) );
            Kokkos::deep_copy( Kokkos::subview( m_host_log_codes, to ), Kokkos::subview( m_engine->placed_codes(), range ) );
        }
        if ( stop < n )
        {
            std::uint64_t key = 0;
            std::uint8_t move = 0;
            Kokkos::deep_copy( key, Kokkos::subview( m_engine->overflow_keys(), stop ) );
            Kokkos::deep_copy( move, Kokkos::subview( m_engine->overflow_moves(), stop ) );
            Kokkos::deep_copy( h.code, Kokkos::subview( m_engine->placed_codes(), stop ) );
            h.origin = lattice::detail::move_origin( key >> 8, move, m_whole.nx, m_whole.ny, m_whole.nz );
            h.type = m_engine->site_type( h.origin );
            h.needs_scan = 1;
        }
        return h;
    }

    // The single rank's last resort over all slabs: the first site after h.origin in index order of the
    // same type with a free slot, else of any open type (MPI_Allreduce MIN of each slab's candidate).
    std::uint64_t scan_all_slabs( const ExecutionSpace& exec, const SegmentHeader& h ) const
    {
        const std::uint64_t total = std::uint64_t( m_whole.sites() );
        for ( bool any_open : { false, true } )
        {
            const std::uint64_t local = m_engine->first_free_after( exec, h.origin, h.type, any_open );
            std::uint64_t best = 0;
            MPI_Allreduce( &local, &best, 1, MPI_UINT64_T, MPI_MIN, m_comm );
            if ( best != ~std::uint64_t( 0 ) )
                return m_engine->placement_descending() ? ( h.origin + total - 1 - best % total ) % total
                                                        : ( h.origin + 1 + best ) % total;
        }
        throw core::CapacityError( core::detail::concat( "DistributedLatticeDiffusion: an overflowed particle (code ",
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
    void replay_host_log( const ExecutionSpace& exec, std::size_t n, int first_plane, int last_plane )
    {
        const auto range = Kokkos::make_pair( std::size_t( 0 ), n );
        Kokkos::deep_copy( exec, Kokkos::subview( m_log_sites, range ), Kokkos::subview( m_host_log_sites, range ) );
        Kokkos::deep_copy( exec, Kokkos::subview( m_log_codes, range ), Kokkos::subview( m_host_log_codes, range ) );
        m_engine->replay_placements( exec, m_log_sites, m_log_codes, 0, n, first_plane, last_plane );
    }

    void check_tracer_ids( const ExecutionSpace& exec ) const
    {
        const auto counts = code_counts( exec );
        for ( std::size_t c = m_engine->codes().first_tracer_code(); c < counts.size(); ++c )
            if ( counts[c] != 1 )
                throw core::InputError( core::detail::concat( "DistributedLatticeDiffusion: tracer id ", c, " appears ",
                                                              counts[c], " times on the lattice; expected once" ) );
    }

    lattice::LatticeShape m_whole;
    MPI_Comm m_comm = MPI_COMM_NULL;
    int m_rank = 0, m_size = 1;
    int m_lower = MPI_PROC_NULL, m_upper = MPI_PROC_NULL;
    PlaneRange m_slab;
    std::size_t m_plane = 0;
    lattice::detail::SlabWindow m_window;
    TransportContext m_context;
    Transport m_transport = Transport::host_memory;
    unsigned long long m_particles = 0;
    bool m_tracking = false;
    std::optional<engine_type> m_engine;
    // The planes' messages (device rows, page-locked host copies for staging, IPC storage), kept.
    detail::MessageBuffers<memory_space> m_buffers;
    //! A ghost-plane exchange between begin_planes() and end_planes().
    struct PendingPlanes
    {
        bool active = false;
        int depth = 0;
        bool recv_lower = false, recv_upper = false;
        detail::PendingExchange exchange;
    };
    PendingPlanes m_pending;
    ExecutionSpace m_exchange_exec; // where the ghost planes of a pass travel while its interior runs
    Kokkos::View<std::uint64_t*, memory_space> m_log_sites;
    Kokkos::View<std::uint32_t*, memory_space> m_log_codes;
    Kokkos::View<std::uint64_t*, Kokkos::HostSpace> m_host_log_sites;
    Kokkos::View<std::uint32_t*, Kokkos::HostSpace> m_host_log_codes;
    LatticeStepTimes m_times;
};

} // namespace morula::parallel

#endif
