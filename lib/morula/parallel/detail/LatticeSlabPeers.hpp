/*!
  \file LatticeSlabPeers.hpp
  \brief What lattice::LatticeDiffusion adds when it runs on slabs over several MPI ranks: the slab's
  window with its ghost planes, the ghost-plane exchange of a pass, the turns of the overflow placement,
  and the collective reads, gathers and checkpoints. A driver on one rank has none of this.
*/
#ifndef MORULA_PARALLEL_DETAIL_LATTICESLABPEERS_HPP
#define MORULA_PARALLEL_DETAIL_LATTICESLABPEERS_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionStep.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/LatticeCheckpoint.hpp>
#include <morula/lattice/detail/SlabDiffusion.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>
#include <morula/parallel/LatticeSlabs.hpp>
#include <morula/parallel/Transport.hpp>
#include <morula/parallel/detail/AgreeOnError.hpp>
#include <morula/parallel/detail/GatherToRoot.hpp>
#include <morula/parallel/detail/OverflowTurns.hpp>
#include <morula/parallel/detail/PlaneExchange.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::parallel::detail
{

/*!
  \brief One rank's part of a lattice cut into slabs along z (lattice::LatticeDiffusion on several ranks
  describes the algorithm). Built before the driver's engine: it makes the window (the owned planes and
  ghost_planes on each side), fills the ghosts, and says how large the engine's overflow list must be.
*/
template <int Slots, class ExecutionSpace>
class LatticeSlabPeers
{
  public:
    using memory_space = typename ExecutionSpace::memory_space;
    using lattice_type = lattice::Lattice<Slots, memory_space>;
    using engine_type = lattice::detail::SlabDiffusion<Slots, ExecutionSpace>;
    using device_sites = Kokkos::View<lattice::site_word*, memory_space>;
    using host_sites = Kokkos::View<lattice::site_word*, Kokkos::HostSpace>;
    using Phase = lattice::LatticeDiffusionPhase;
    static constexpr int ghost_planes = lattice_slab_ghost_planes;

    //! Ranks in `comm` (every rank asks before it builds its part, so all take the same path).
    static int ranks( MPI_Comm comm )
    {
        int size = 1;
        MPI_Comm_size( comm, &size );
        return size;
    }

    /*!
      `owned` holds this rank's planes slab_of_rank(whole.nz, rank, ranks) of `whole`; they are copied
      into the window. Collective; validates before any communication (the same answer on every rank).
    */
    LatticeSlabPeers( const ExecutionSpace& exec, MPI_Comm comm, const lattice::LatticeShape& whole,
                      const lattice_type& owned )
    {
        int size = 1, rank = 0;
        MPI_Comm_size( comm, &size );
        MPI_Comm_rank( comm, &rank );
        validate_lattice_slabs( whole, owned.shape(), rank, size ); // before any collective call
        const bool periodic = whole.boundary[2] == lattice::LatticeBoundary::periodic;
        int dims = size, periods = periodic ? 1 : 0;
        MPI_Cart_create( comm, 1, &dims, &periods, 0, &m_comm );
        MPI_Comm_rank( m_comm, &m_rank );
        MPI_Comm_size( m_comm, &m_size );
        MPI_Cart_shift( m_comm, 0, 1, &m_lower, &m_upper );
        m_context = TransportContext( m_comm );
        m_exchange_exec = compat::concurrent_instance( exec );
        m_transport = m_context.transport<memory_space>();
        m_slab = slab_of_rank( whole.nz, m_rank, m_size );
        m_plane = std::size_t( whole.nx ) * std::size_t( whole.ny );

        lattice::detail::SlabWindow w;
        w.nz = whole.nz;
        w.z_first = m_slab.begin - ghost_planes;
        w.planes = m_slab.size() + 2 * ghost_planes;
        w.owned_begin = ghost_planes;
        w.owned_end = ghost_planes + m_slab.size();
        w.periodic = periodic;
        w.whole = false;
        lattice::LatticeShape local_shape = whole;
        local_shape.nz = w.planes;
        m_initial = lattice_type( local_shape, "lattice_slab" );
        Kokkos::deep_copy( exec, planes( m_initial.sites(), w.owned_begin, w.owned_end ), owned.sites() );
        exec.fence();
        m_window = w;
        m_planes = PlaneExchange<ExecutionSpace>( m_context, m_transport, false, m_lower, m_upper, m_plane, w );
        m_turns = OverflowTurns<Slots, ExecutionSpace>( m_comm, m_rank, m_size, m_lower, m_upper, whole, w );
        m_planes.exchange( exec, m_initial.sites(), ghost_planes, true, true ); // types and particles of the ghosts
        m_particles = sum( count_particles( exec, owned ) );
    }

    LatticeSlabPeers( const LatticeSlabPeers& ) = delete;
    LatticeSlabPeers& operator=( const LatticeSlabPeers& ) = delete;
    ~LatticeSlabPeers()
    {
        if ( m_comm != MPI_COMM_NULL )
            MPI_Comm_free( &m_comm );
    }

    //! @{ What the engine is built from: the window lattice (once), its planes, and the most particles
    //! a pass can overflow on this slab (those that can reach the owned sites).
    lattice_type take_initial_window()
    {
        lattice_type w = m_initial;
        m_initial = lattice_type();
        return w;
    }
    const lattice::detail::SlabWindow& window() const { return m_window; }
    std::size_t overflow_capacity() const
    {
        return std::max<std::size_t>( 1, std::min<std::size_t>( std::size_t( m_particles ),
                                                                std::size_t( Slots ) * m_plane * std::size_t( m_slab.size() + 2 ) ) );
    }
    //! @}

    MPI_Comm comm() const { return m_comm; }
    int rank() const { return m_rank; }
    int size() const { return m_size; }
    PlaneRange slab() const { return m_slab; }
    Transport transport() const { return m_transport; }
    unsigned long long particles() const { return m_particles; }
    long long bytes_sent() const { return m_planes.bytes_sent(); }

    //! The owned planes of a window's sites.
    template <class View>
    auto owned( const View& v ) const
    {
        return planes( v, m_window.owned_begin, m_window.owned_end );
    }

    /*!
      A pass that reads one ghost plane on each side (split z: axis 2; fused: 3), overlapped with their
      exchange: the interior planes, which read owned planes only, start on `exec`, and the ghost planes
      travel meanwhile on an instance of their own (a second, high-priority stream on a GPU); then the
      two planes next to the faces. Timed: `halo` is the host's time in starting and ending the exchange
      (the interior pass runs meanwhile), `passes` the rest.
    */
    template <class Phases>
    void pass_with_ghosts( const ExecutionSpace& exec, engine_type& engine, int axis, Phases& phase )
    {
        const int ob = m_window.owned_begin, oe = m_window.owned_end;
        auto pass = [&]( int first, int last ) { engine.pass_planes( exec, axis, first, last ); };
        const auto no_sync = [] {};
        const auto& sites = engine.lattice().sites();
        const ExecutionSpace& comm = m_exchange_exec;
        exec.fence(); // the last pass and placement wrote the planes that travel
        // The interior first (slabs have at least 3 planes): it reads the owned planes of the current
        // lattice and writes the next one, while the exchange reads the planes next to the faces and
        // writes the ghost planes of the current lattice.
        phase.synced( Phase::passes, no_sync, [&] { pass( ob + 1, oe - 1 ); } );
        phase.synced( Phase::halo, no_sync, [&] {
            m_planes.begin( comm, sites, 1, true, true, true, true );
            m_planes.end( comm, sites );
            comm.fence(); // the planes next to the faces read the ghost planes
        } );
        phase.synced( Phase::passes, FenceAtEnd{ exec }, [&] {
            pass( ob, ob + 1 );
            pass( oe - 1, oe );
        } );
        engine.end_pass( axis );
    }

    //! A pass that needs no ghost plane (split x and y), as a phase that ends with a fence of `exec`.
    template <class Phases>
    void pass_in_planes( const ExecutionSpace& exec, engine_type& engine, int axis, Phases& phase )
    {
        phase.synced( Phase::passes, FenceAtEnd{ exec }, [&] { engine.split_pass( exec, axis ); } );
    }

    //! Places this pass's overflowed particles on all ranks in the single-rank order: this rank's
    //! report, everybody's (sync), then the slabs together or in turn (DiffusionOptions::slab_turns).
    template <class Phases>
    void place_overflow( const ExecutionSpace& exec, engine_type& engine, Phases& phase,
                         lattice::LatticeDiffusionReport& report )
    {
        const auto no_sync = [] {};
        const auto mine = phase.synced( Phase::overflow, no_sync, [&] { return m_turns.local_report( exec, engine ); } );
        const auto reports = phase.synced( Phase::sync, no_sync, [&] { return m_turns.gather_reports( mine ); } );
        const auto done = phase.synced( Phase::overflow, FenceAtEnd{ exec }, [&] {
            return m_turns.place( exec, engine, m_planes, mine, reports, engine.options().slab_turns );
        } );
        report.overflow_events += done.entries > 0 ? 1 : 0;
        report.overflow_entries += done.entries;
        report.overflow_scans += done.scans;
    }

    //! @{ Sums over the ranks (collective).
    unsigned long long sum( unsigned long long local ) const
    {
        unsigned long long all = 0;
        MPI_Allreduce( &local, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, m_comm );
        return all;
    }
    std::vector<unsigned long long> sum( const std::vector<unsigned long long>& local ) const
    {
        std::vector<unsigned long long> all( local.size() );
        MPI_Allreduce( local.data(), all.data(), int( local.size() ), MPI_UNSIGNED_LONG_LONG, MPI_SUM, m_comm );
        return all;
    }
    //! The tracers' displacements (rows of 3 ints): each rank's, summed. The reduction runs over the raw
    //! array, so both sides keep the device View's layout (LayoutLeft on GPUs).
    template <class HostView>
    HostView sum_rows( const HostView& local ) const
    {
        HostView all( "lattice_displacement_sum", local.extent( 0 ) );
        MPI_Allreduce( local.data(), all.data(), int( 3 * local.extent( 0 ) ), MPI_INT, MPI_SUM, m_comm );
        return all;
    }
    //! @}

    /*!
      The whole lattice on every rank from the owned planes of each (MPI_Allgatherv).
      \throws core::CapacityError when the lattice exceeds MPI's int counts (2^31 sites)
    */
    host_sites gather( const ExecutionSpace& exec, const lattice::LatticeShape& whole, const device_sites& window ) const
    {
        if ( whole.sites() > std::size_t( INT_MAX ) )
            throw core::CapacityError(
                core::detail::concat( "LatticeDiffusion::gather: ", whole.sites(), " sites on slabs exceed 2^31" ) );
        host_sites mine( "lattice_gather_slab", m_plane * std::size_t( m_slab.size() ) );
        Kokkos::deep_copy( exec, mine, owned( window ) );
        exec.fence();
        std::vector<int> counts( m_size ), displs( m_size );
        for ( int r = 0; r < m_size; ++r )
        {
            const auto s = slab_of_rank( whole.nz, r, m_size );
            counts[r] = int( m_plane * std::size_t( s.size() ) );
            displs[r] = int( m_plane * std::size_t( s.begin ) );
        }
        host_sites all( "lattice_gathered", whole.sites() );
        MPI_Allgatherv( mine.data(), counts[m_rank], MPI_UINT32_T, all.data(), counts.data(), displs.data(),
                        MPI_UINT32_T, m_comm );
        return all;
    }

    /*!
      The whole state in the single-rank layout, gathered to rank 0 (collective): rank 0's `out` receives
      the whole lattice, the overflow total and the tracer displacements summed over the ranks, and the
      parameters; the other ranks' `out` is left as it is.
    */
    void checkpoint( const engine_type& engine, const lattice::LatticeShape& whole, io::CheckpointWriter& out ) const
    {
        ExecutionSpace().fence();
        lattice::detail::LatticeCheckpointState state;
        std::vector<lattice::site_word> mine;
        core::copy_to_host( owned( engine.lattice().sites() ), m_plane * std::size_t( m_slab.size() ), mine );
        // The slabs are in rank order: rank 0 gets the whole lattice in the single-rank layout.
        state.sites = gather_to_root( m_comm, mine );
        unsigned long long local = engine.overflows();
        MPI_Reduce( &local, &state.overflows, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, m_comm );
        if ( engine.tracking() )
        {
            std::vector<int> d;
            core::copy_to_host( engine.displacements(), engine.displacements().extent( 0 ), d );
            state.displacement.resize( m_rank == 0 ? d.size() : 0 );
            MPI_Reduce( d.data(), state.displacement.data(), int( d.size() ), MPI_INT, MPI_SUM, 0, m_comm );
        }
        if ( m_rank != 0 )
            return;
        state.step = engine.steps_done();
        lattice::detail::put_lattice_parameters( out, Slots, whole, engine.options(), engine.rules(), engine.codes() );
        lattice::detail::put_lattice_state( out, state );
    }

    //! Writes `out` to `path` from rank 0 (collective); rank 0's error, if any, is thrown on every rank.
    void write( const io::CheckpointWriter& out, const std::string& path ) const
    {
        agree_on_error( m_comm, [&] {
            if ( m_rank == 0 )
                out.write( path );
        } );
    }

    /*!
      Resumes `engine` from a checkpoint of the whole lattice (collective: every rank reads the file and
      takes its slab); rank 0 takes the overflow total and the tracer displacements (the driver sums them
      over the ranks). Returns the checkpoint's step.
      \throws core::InputError on every rank, naming the checkpoint, as lattice::LatticeDiffusion::restart
    */
    std::uint32_t restart( const ExecutionSpace& exec, engine_type& engine, const lattice::LatticeShape& whole,
                           const io::CheckpointReader& in )
    {
        const auto max_code = std::uint32_t( engine.codes().max_code() );
        lattice::detail::LatticeCheckpointState state;
        const std::size_t first = m_plane * std::size_t( m_slab.begin );
        agree_on_error( m_comm, [&] {
            lattice::detail::check_lattice_parameters( in, Slots, whole, engine.options(), engine.rules(), engine.codes() );
            state = lattice::detail::read_lattice_state<Slots>( in, whole, max_code, engine.rules().blocked_types,
                                                                engine.tracking() );
            std::vector<lattice::site_word> here;
            core::copy_to_host( owned( engine.lattice().sites() ), m_plane * std::size_t( m_slab.size() ), here );
            lattice::detail::check_site_types<Slots>( in, state.sites, here.data(), first, here.size(), whole );
        } );
        const auto here_counts = sum( engine.code_counts( exec ) ); // collective
        agree_on_error( m_comm, [&] {
            lattice::detail::check_code_counts(
                in, lattice::detail::count_codes<Slots>( state.sites.data(), state.sites.size(), max_code ), here_counts );
        } );
        engine.restore_sites( exec, state.sites.data() + first, m_window.owned_begin, m_slab.size() );
        m_planes.exchange( exec, engine.lattice().sites(), ghost_planes, true, true ); // as the constructor takes them
        exec.fence();
        if ( m_rank != 0 )
        {
            state.overflows = 0;
            state.displacement.clear();
        }
        engine.restore_state( exec, state.step, state.overflows, state.displacement );
        return state.step;
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

    template <class View>
    auto planes( const View& v, int first, int last ) const
    {
        return Kokkos::subview( v, Kokkos::make_pair( m_plane * std::size_t( first ), m_plane * std::size_t( last ) ) );
    }

    MPI_Comm m_comm = MPI_COMM_NULL;
    int m_rank = 0, m_size = 1;
    int m_lower = MPI_PROC_NULL, m_upper = MPI_PROC_NULL;
    PlaneRange m_slab;
    std::size_t m_plane = 0;
    lattice::detail::SlabWindow m_window;
    lattice_type m_initial; // the window until the engine takes it
    TransportContext m_context;
    Transport m_transport = Transport::host_memory;
    unsigned long long m_particles = 0;
    PlaneExchange<ExecutionSpace> m_planes;
    OverflowTurns<Slots, ExecutionSpace> m_turns;
    ExecutionSpace m_exchange_exec; // where the ghost planes of a pass travel while its interior runs
};

} // namespace morula::parallel::detail

#endif
