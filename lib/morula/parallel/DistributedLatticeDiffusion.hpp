/*!
  \file DistributedLatticeDiffusion.hpp
  \brief The lattice diffusion model of Roberts et al. (2009) over MPI: the lattice is cut into slabs along z, one per
  rank, each stepped by the single-rank kernels with ghost planes from its neighbours; the result is bit
  for bit the single-rank result, for any number of ranks.
*/
#ifndef MORULA_PARALLEL_DISTRIBUTEDLATTICEDIFFUSION_HPP
#define MORULA_PARALLEL_DISTRIBUTEDLATTICEDIFFUSION_HPP

#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/core/PhaseTimer.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionOptions.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/LatticeCheckpoint.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>
#include <morula/lattice/MsdSample.hpp>
#include <morula/lattice/detail/EngineAccess.hpp>
#include <morula/lattice/detail/SlabDiffusion.hpp>
#include <morula/parallel/LatticeSlabs.hpp>
#include <morula/parallel/Transport.hpp>
#include <morula/parallel/detail/OverflowTurns.hpp>
#include <morula/parallel/detail/PlaneExchange.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace morula::parallel
{

/*!
  \brief The phases of DistributedLatticeDiffusion::step(), in the order of the names of its times():
  passes and overflow first, as lattice::LatticeDiffusionPhase numbers them, then what only a
  distributed step does.
*/
struct DistributedLatticeDiffusionPhase
{
    enum : int
    {
        passes,   //!< the split or fused passes (kernels only)
        overflow, //!< placing overflowed particles: ghost bands, turns, broadcasts, replays
        halo,     //!< one-plane ghost exchanges before each z or fused pass
        sync      //!< the MPI_Allgather of the overflow counts after every pass: where a rank waits for
                  //!< slower ones (their passes), so mostly imbalance
    };
    static constexpr const char* scope = "morula::parallel::DistributedLatticeDiffusion";
    static constexpr const char* names[] = { "passes", "overflow", "halo", "sync" };
    static constexpr const char* counts[] = { "halo_bytes", "overflow_events", "overflow_entries", "overflow_scans" };
};

//! The counts of DistributedLatticeDiffusion's times(), in the order of their names.
struct DistributedLatticeDiffusionCount
{
    enum : int
    {
        halo_bytes,       //!< bytes this rank sent in ghost-plane exchanges (all depths)
        overflow_events,  //!< passes after which some rank had overflowed particles
        overflow_entries, //!< particles placed from overflow lists, over all ranks
        overflow_scans    //!< of those, placed by the index-order scan over all slabs
    };
};

/*!
  \brief What DistributedLatticeDiffusion::step() did: the step's index and what it communicated, all
  known on the host (DistributedLatticeDiffusionCount says what each is). On one rank the overflow
  figures stay 0: the single-rank placement needs no count on the host.
*/
struct DistributedLatticeDiffusionReport : lattice::LatticeDiffusionReport
{
    long long halo_bytes = 0;
    long long overflow_events = 0;
    long long overflow_entries = 0;
    long long overflow_scans = 0;

    //! Sums an advance()'s steps.
    void merge( const DistributedLatticeDiffusionReport& other )
    {
        halo_bytes += other.halo_bytes;
        overflow_events += other.overflow_events;
        overflow_entries += other.overflow_entries;
        overflow_scans += other.overflow_scans;
    }
};

/*!
  \brief Steps a lattice of `Slots`-particle sites distributed over the ranks of `comm` as slabs along z.

  Rank r owns planes slab_of_rank(nz, r, ranks) and keeps three ghost planes on each side. The kernels
  are those of lattice::LatticeDiffusion (both drivers step a lattice::detail::SlabDiffusion), which key
  every random move and every overflow entry on the global site index, so a slab computes exactly what
  the whole lattice computes for its sites:
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

  A driver on core::ModelDriver (core/Driver.hpp): step() takes one step; a timed step adds each phase
  (DistributedLatticeDiffusionPhase) and what it communicated (DistributedLatticeDiffusionCount) to
  times(). Each phase ends with a fence of `exec`; a phase that waits for messages includes the wait for
  slower ranks. The ghost planes travel through detail::PlaneExchange, the placement runs in
  detail::OverflowTurns.

  Collective: every rank constructs, steps and queries together. Requirements, checked on every rank
  alike before any communication: every slab at least 3 planes thick; with a periodic z axis and more
  than one rank, nz at least the thickest slab + 6 (a window must not wrap onto itself).
*/
template <int Slots, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class DistributedLatticeDiffusion
    : public core::ModelDriver<DistributedLatticeDiffusion<Slots, ExecutionSpace>, DistributedLatticeDiffusionPhase,
                               DistributedLatticeDiffusionReport>
{
  public:
    using execution_space = ExecutionSpace;
    using memory_space = typename ExecutionSpace::memory_space;
    using lattice_type = lattice::Lattice<Slots, memory_space>;
    using host_sites = Kokkos::View<lattice::site_word*, Kokkos::HostSpace>;
    using Phase = DistributedLatticeDiffusionPhase;
    using Count = DistributedLatticeDiffusionCount;
    static constexpr int ghost_planes = lattice_slab_ghost_planes;

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
        m_planes = detail::PlaneExchange<ExecutionSpace>( m_context, m_transport, alone, m_lower, m_upper, m_plane, w );
        m_turns = detail::OverflowTurns<Slots, ExecutionSpace>( m_comm, m_rank, m_size, m_lower, m_upper, whole, w );
        m_planes.exchange( exec, window.sites(), ghost_planes, true, true ); // types and particles of the ghosts

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

    /*!
      \brief One time step's phases (collective; core::ModelDriver::step() runs them): the passes, each
      followed by the placement of the overflowed particles of all ranks. A timed step adds the phases
      and counts to times().
    */
    template <class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, DistributedLatticeDiffusionReport& report )
    {
        compat::ScopedRegion region( "morula::parallel::DistributedLatticeDiffusion::step" );
        const long long bytes_before = m_planes.bytes_sent();
        if ( m_engine->options().scheme == lattice::PassScheme::split )
            for ( int axis = 0; axis < 3; ++axis )
            {
                if ( axis == 2 )
                    pass_with_ghosts( exec, 2, phase );
                else
                    phase.synced( Phase::passes, FenceAtEnd{ exec }, [&] { m_engine->split_pass( exec, axis ); } );
                place_overflow( exec, phase, report );
            }
        else
        {
            pass_with_ghosts( exec, 3, phase );
            place_overflow( exec, phase, report );
        }
        m_engine->complete_step();
        report.halo_bytes = m_planes.bytes_sent() - bytes_before;
        phase.add( Count::halo_bytes, report.halo_bytes );
        phase.add( Count::overflow_events, report.overflow_events );
        phase.add( Count::overflow_entries, report.overflow_entries );
        phase.add( Count::overflow_scans, report.overflow_scans );
    }

    MPI_Comm comm() const { return m_comm; }
    int rank() const { return m_rank; }
    int size() const { return m_size; }
    //! The planes this rank owns.
    PlaneRange slab() const { return m_slab; }
    const lattice::LatticeShape& shape() const { return m_whole; }
    Transport transport() const { return m_transport; }
    //! Particles on the whole lattice (constant), as lattice::LatticeDiffusion::particles() counts them.
    std::size_t particles() const { return static_cast<std::size_t>( m_particles ); }
    //! The options as run (as lattice::LatticeDiffusion::options()).
    const lattice::DiffusionOptions& options() const { return m_engine->options(); }
    //! @{ The kernels a split or fused pass runs (lattice::DiffusionOptions::kernels resolved for the slab).
    lattice::PassKernels split_kernels() const { return m_engine->split_kernels(); }
    lattice::PassKernels fused_kernels() const { return m_engine->fused_kernels(); }
    //! @}

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

    //! The model name in checkpoints: the single-rank lattice's (one layout, lattice/LatticeCheckpoint.hpp).
    static constexpr const char* checkpoint_model = lattice::lattice_checkpoint_model;

    /*!
      \brief The whole state between steps in the single-rank layout (lattice/LatticeCheckpoint.hpp),
      gathered to rank 0 (collective): rank 0's `out` receives the whole lattice, the overflow total and
      the tracer displacements summed over the ranks, and the parameters; the other ranks' `out` is left
      as it is. write_checkpoint() writes it from rank 0 (io::write_checkpoint would write on every rank).
      \throws core::CapacityError when the lattice exceeds MPI's int counts (2^31 sites)
    */
    void checkpoint( io::CheckpointWriter& out ) const;

    /*!
      \brief Writes the checkpoint (checkpoint()) to `path` from rank 0 (collective; io::CheckpointWriter::write:
      a temporary file renamed over `path`).
      \throws core::IoError on every rank, with rank 0's message, if the file cannot be written
    */
    void write_checkpoint( const std::string& path ) const;

    /*!
      \brief Resumes from a checkpoint of this model, written by either lattice driver at any rank count
      (collective: every rank reads the file and takes its slab). This driver must have been built from the
      same parameters (any initial particle placement); the next step continues the checkpointed run bit for
      bit, and equals the single-rank continuation. Rank 0 takes the overflow total and the tracer
      displacements (the drivers sum them over the ranks).
      \throws core::InputError on every rank, naming the checkpoint, if a parameter (capacity, size,
      boundaries, scheme, seed, rules, code map), the site types (obstacles) or the particles per code
      differ from this driver's, or a site word breaks the lattice rules; the driver is unchanged then
    */
    void restart( const io::CheckpointReader& in );

    //! \throws core::InputError unless `ranks` slabs of `whole` work (the same answer on every rank);
    //! `owned` must be rank `rank`'s slab (validate_lattice_slabs()).
    static void validate( const lattice::LatticeShape& whole, const lattice::LatticeShape& owned, int rank, int ranks )
    {
        validate_lattice_slabs( whole, owned, rank, ranks );
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
            core::LaunchRange<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, s.extent( 0 ) ),
            KOKKOS_LAMBDA( const std::size_t i, unsigned long long& acc ) { acc += layout::count( s( i ) ); }, n );
        return n;
    }

  private:
    using device_sites = Kokkos::View<lattice::site_word*, memory_space>;

    /*!
      The synchronisation of a timed phase: a fence of `exec` when the phase ends, none when it starts.
      Every phase starts where the last one ended: the last one fenced, or, for the faces of a pass, the
      interior planes still run and count as passes.
    */
    struct FenceAtEnd
    {
        const ExecutionSpace& exec;
        bool started = false;
        void operator()()
        {
            if ( started )
                exec.fence();
            started = true;
        }
    };

    const device_sites& sites() const { return m_engine->lattice().sites(); }

    template <class View>
    auto plane_range( const View& v, int first, int last ) const
    {
        return Kokkos::subview( v, Kokkos::make_pair( m_plane * std::size_t( first ), m_plane * std::size_t( last ) ) );
    }

    /*!
      A pass that reads one ghost plane on each side (split z: axis 2; fused: 3), overlapped with their
      exchange: the interior planes, which read owned planes only, start on `exec`, and the ghost planes
      travel meanwhile on an instance of their own (a second, high-priority stream on a GPU); then the
      two planes next to the faces. Timed: `halo` is the host's time in starting and ending the exchange
      (the interior pass runs meanwhile), `passes` the rest.
    */
    template <class Phases>
    void pass_with_ghosts( const ExecutionSpace& exec, int axis, Phases& phase )
    {
        const int ob = m_window.owned_begin, oe = m_window.owned_end;
        auto pass = [&]( int first, int last ) { m_engine->pass_planes( exec, axis, first, last ); };
        const auto no_sync = [] {};
        if ( m_size == 1 )
        {
            phase.synced( Phase::passes, FenceAtEnd{ exec }, [&] { pass( ob, oe ); } );
            m_engine->end_pass( axis );
            return;
        }
        const ExecutionSpace& comm = m_exchange_exec;
        exec.fence(); // the last pass and placement wrote the planes that travel
        // The interior first (slabs have at least 3 planes): it reads the owned planes of the current
        // lattice and writes the next one, while the exchange reads the planes next to the faces and
        // writes the ghost planes of the current lattice.
        phase.synced( Phase::passes, no_sync, [&] { pass( ob + 1, oe - 1 ); } );
        phase.synced( Phase::halo, no_sync, [&] {
            m_planes.begin( comm, sites(), 1, true, true, true, true );
            m_planes.end( comm, sites() );
            comm.fence(); // the planes next to the faces read the ghost planes
        } );
        phase.synced( Phase::passes, FenceAtEnd{ exec }, [&] {
            pass( ob, ob + 1 );
            pass( oe - 1, oe );
        } );
        m_engine->end_pass( axis );
    }

    //! Places this pass's overflowed particles on all ranks in the single-rank order (see the class):
    //! this rank's report, everybody's (sync), the turns.
    template <class Phases>
    void place_overflow( const ExecutionSpace& exec, Phases& phase, DistributedLatticeDiffusionReport& report )
    {
        if ( m_size == 1 ) // the single-rank model (code_counts() reports an unplaced particle)
        {
            phase.synced( Phase::overflow, FenceAtEnd{ exec }, [&] { m_engine->place_overflow( exec ); } );
            return;
        }
        const auto no_sync = [] {};
        const auto mine = phase.synced( Phase::overflow, no_sync, [&] { return m_turns.local_report( exec, *m_engine ); } );
        const auto reports = phase.synced( Phase::sync, no_sync, [&] { return m_turns.gather_reports( mine ); } );
        const auto done = phase.synced( Phase::overflow, FenceAtEnd{ exec }, [&] {
            return m_turns.take_turns( exec, *m_engine, m_planes, mine, reports );
        } );
        report.overflow_events += done.entries > 0 ? 1 : 0;
        report.overflow_entries += done.entries;
        report.overflow_scans += done.scans;
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
    using engine_type = lattice::detail::SlabDiffusion<Slots, ExecutionSpace>;
    friend struct lattice::detail::EngineAccess; // tests that look inside a step
    //! The engine of this slab (its lattice() holds the ghost planes too).
    const engine_type& engine() const { return *m_engine; }
    std::optional<engine_type> m_engine;
    detail::PlaneExchange<ExecutionSpace> m_planes;
    detail::OverflowTurns<Slots, ExecutionSpace> m_turns;
    ExecutionSpace m_exchange_exec; // where the ghost planes of a pass travel while its interior runs
};

} // namespace morula::parallel

#include <morula/parallel/detail/DistributedLatticeCheckpoint.hpp>

#endif
