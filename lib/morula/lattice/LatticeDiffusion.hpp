/*!
  \file LatticeDiffusion.hpp
  \brief The multiparticle lattice diffusion model of Roberts et al. (2009) on any backend.

  A time step moves every particle independently along x, then y, then z (three split passes), or
  along all three in one fused pass. Each pass reads one lattice and writes the other; the random move
  of a particle is the hashed RNG of (site, slot, step, axis, seed), so a pass is a pure function of
  the old lattice and the results are bit for bit the same on Serial, OpenMP, CUDA and HIP, for any
  thread count or block size. Particles arriving at a full site go to an overflow list and are then
  placed, on the device and in a deterministic order: no particle is ever lost.

  Particle codes are species numbers (1..species), tracer ids (1..n, each code on exactly one
  particle), or both (CodeMap: species codes for the crowd, then one id per tracer); the unwrapped
  displacement of every tracer is kept for mean square displacements (the paper's MSD runs used 2
  particles per site and tracer ids up to 16383).

  An overflow rejects a move: the particle goes back to the site it came from, or, if that site has
  filled meanwhile, to the nearest site of its type with room, in a random symmetric order
  (docs/models/lattice.md says how this shapes crowded dynamics).

  One driver runs on one rank or, given an MPI communicator (builds with MPI), on slabs along z over its
  ranks; the slabs give the one-rank lattice bit for bit, for any number of ranks.
*/
#ifndef MORULA_LATTICE_LATTICEDIFFUSION_HPP
#define MORULA_LATTICE_LATTICEDIFFUSION_HPP

#include <morula/Config.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/MemoryInfo.hpp>
#include <morula/core/PhaseTimer.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionOptions.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/DiffusionStep.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/LatticeCheckpoint.hpp>
#include <morula/lattice/MsdSample.hpp>
#include <morula/lattice/detail/EngineAccess.hpp>
#include <morula/lattice/detail/SlabDiffusion.hpp>
#if MORULA_HAVE_MPI
#include <morula/parallel/LatticeSlabs.hpp>
#include <morula/parallel/detail/LatticeSlabPeers.hpp>
#include <mpi.h>
#endif

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace morula::lattice
{

/*!
  \brief Device bytes of a LatticeDiffusion on `sites` sites (the whole lattice on one rank; a rank's slab
  with its six ghost planes on slabs) with `particles` particles and `tracers` tracer ids on them: the
  lattice it is given (held, not copied) and the one a pass writes (4 bytes per site each), the
  placement's claim heads and change stamps (5 per site, at the first pass with overflows), the overflow
  list (13 per particle: key, code and move of every particle that could overflow in one pass) and per
  tracer its displacement and, while the ids are checked, its count (20). The placement's sort and sweep
  buffers (67 bytes per entry of one pass's overflow list, and 28 more per entry of the first 262 144 for
  listed changes: at most 7.3 MB) grow with the crowding and are not counted. The compacted fused pass
  adds an eighth of a byte per site (`fused`: its marked destinations, one bit per site).
  Measured on an H200 (at the count of 12 bytes per site, before the stamps): 1536 x 2048 x 2048 sites at
  1% of 2 slots, 78.98 GB by this count, 79.65 GB peak with the CUDA context.
*/
inline double diffusion_memory_bytes( double sites, double particles, double tracers, bool fused = false )
{
    return ( fused ? 13.125 : 13.0 ) * sites + 13.0 * particles + 20.0 * tracers;
}


/*!
  \brief Steps a lattice of `Slots`-particle sites under DiffusionRules on `ExecutionSpace`, on one rank
  or on slabs along z over the ranks of an MPI communicator.

  Holds two lattices (the current one and the one the next pass writes), the overflow list and, for
  tracer codes, the unwrapped displacement of every tracer. No allocation happens while stepping.
  A driver on core::ModelDriver (core/Driver.hpp): step() takes one step, timed per phase
  (LatticeDiffusionPhase) when asked; advance(exec, n) takes n.

  On slabs (the constructors with an MPI_Comm; with one rank in it they are the one-rank driver), rank r
  owns planes parallel::slab_of_rank(nz, r, ranks) and keeps three ghost planes on each side. The
  kernels key every random move and every overflow entry on the global site index, so a slab computes
  exactly what the whole lattice computes for its sites:
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
    in its turn it places its entries with the single-rank kernel and broadcasts where those within
    three planes of its faces went (no other rank holds the others), and every rank replays them onto
    its planes, so every later turn sees the lattice exactly as the
    single rank would. An entry whose 5^3 cube has no room stops the kernel: the single rank's last
    resort, the first site with room after it in index order, is found over all slabs (one
    MPI_Allreduce MIN of each slab's candidate), placed on every rank, and the turn resumes. That is
    SlabTurns::in_turn. By default (SlabTurns::together) the slabs do not wait for their turns: each
    sweeps its own list at once against the lattice as the pass left it (the parallel placement's fixed
    point, nothing written), then, in slab order, takes the placements of the neighbour before it near
    their shared face (particles that come before all its entries: they only take room), sweeps again
    from its fixed point (only the entries they displace), sends its own placements near its faces on
    and then writes them (the next slab's corrections overlap that write); a word passed from slab to slab
    says whether a slab before needed the scan over all slabs, in which case that slab and the ones
    after it finish in turns as above. The result is the single-rank placement bit for bit either way;
    a pass without overflows costs one MPI_Allgather, a pass with overflows one MPI_Allreduce more
    when the slabs place together.
  Tracer displacements are kept per rank and summed over the ranks when asked for. A timed step adds
  what it communicated (LatticeDiffusionCount) to times(); each phase ends with a fence of `exec`, and
  a phase that waits for messages includes the wait for slower ranks. Collective then: every rank
  constructs, steps and queries together. Requirements, checked on every rank alike before any
  communication: every slab at least 3 planes thick; with a periodic z axis and more than one rank, nz
  at least the thickest slab + 6 (a window must not wrap onto itself).
*/
template <int Slots, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class LatticeDiffusion
    : public core::ModelDriver<LatticeDiffusion<Slots, ExecutionSpace>, LatticeDiffusionPhase, LatticeDiffusionReport>
{
  public:
    using execution_space = ExecutionSpace;
    using memory_space = typename ExecutionSpace::memory_space;
    using layout = SiteLayout<Slots>;
    using lattice_type = Lattice<Slots, memory_space>;
    using displacement_view = detail::DisplacementView<memory_space>;
    using host_sites = Kokkos::View<site_word*, Kokkos::HostSpace>;
    using host_displacements = Kokkos::View<int* [3], Kokkos::HostSpace>;
    using Phase = LatticeDiffusionPhase;
    using Count = LatticeDiffusionCount;

    /*!
      Species codes: a particle's code c in 1..rules.species() is its species c - 1.
      \throws core::InputError if a site holds a code beyond rules.species(), a particle sits on a
      blocked site, or a site's slots have a gap
    */
    LatticeDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                      const DiffusionOptions& options = {} )
        : LatticeDiffusion( exec, lattice, rules, CodeMap::species( rules.species() ), options )
    {
    }

    /*!
      Tracer codes: code t (1..n) is one particle of species species_of_tracer[t - 1]; every code
      must appear exactly once on the lattice. Displacements are tracked.
    */
    LatticeDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                      const std::vector<int>& species_of_tracer, const DiffusionOptions& options = {} )
        : LatticeDiffusion( exec, lattice, rules, CodeMap::tracers( species_of_tracer ), options )
    {
    }

    /*!
      Any code map: species codes 1..codes.species_codes for particles without ids, then one code per
      tracer (each must appear exactly once on the lattice; their displacements are tracked).
    */
    LatticeDiffusion( const ExecutionSpace& exec, const lattice_type& lattice, const DiffusionRules& rules,
                      const CodeMap& codes, const DiffusionOptions& options )
        : m_whole( lattice.shape() )
        , m_engine( exec, lattice, rules, codes, options )
    {
    }

#if MORULA_HAVE_MPI
    /*!
      On slabs over the ranks of `comm` (collective), species codes. `owned` holds this rank's planes
      parallel::slab_of_rank(whole.nz, rank, ranks) of the lattice `whole` (its x and y extents, nz = the
      slab's planes; parallel::owned_slab() cuts them from a whole lattice); its View is copied. With one
      rank in `comm`, `owned` is the whole lattice and this is the one-rank driver.
      \throws core::InputError (on every rank) for a slab that does not fit or is too thin, or a site
      that breaks the lattice rules
    */
    LatticeDiffusion( const ExecutionSpace& exec, MPI_Comm comm, const LatticeShape& whole, const lattice_type& owned,
                      const DiffusionRules& rules, const DiffusionOptions& options = {} )
        : LatticeDiffusion( exec, comm, whole, owned, rules, CodeMap::species( rules.species() ), options )
    {
    }

    //! On slabs, tracer codes: every code must appear exactly once over all slabs.
    LatticeDiffusion( const ExecutionSpace& exec, MPI_Comm comm, const LatticeShape& whole, const lattice_type& owned,
                      const DiffusionRules& rules, const std::vector<int>& species_of_tracer,
                      const DiffusionOptions& options )
        : LatticeDiffusion( exec, comm, whole, owned, rules, CodeMap::tracers( species_of_tracer ), options )
    {
    }

    //! On slabs, any code map (CodeMap): every tracer code must appear exactly once over all slabs.
    LatticeDiffusion( const ExecutionSpace& exec, MPI_Comm comm, const LatticeShape& whole, const lattice_type& owned,
                      const DiffusionRules& rules, const CodeMap& codes, const DiffusionOptions& options )
        : m_whole( whole )
        , m_peers( make_peers( exec, comm, whole, owned ) )
        , m_engine( make_engine( exec, m_peers.get(), whole, owned, rules, codes, options ) )
    {
        if ( !m_peers )
            return;
        m_engine.record_placements();
        if ( codes.tracking() )
            check_tracer_ids( exec );
    }
#endif

    //! The driver owns its state and moves with it; a copy would share the lattice's Views.
    LatticeDiffusion( LatticeDiffusion&& ) = default;
    LatticeDiffusion& operator=( LatticeDiffusion&& ) = default;
    LatticeDiffusion( const LatticeDiffusion& ) = delete;
    LatticeDiffusion& operator=( const LatticeDiffusion& ) = delete;

    /*!
      \brief One time step's phases (core::ModelDriver::step() runs them; collective on slabs): the
      passes (three split or one fused), each followed by the placement of its overflowed particles.
    */
    template <class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, LatticeDiffusionReport& report )
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return step_slab_phases( exec, phase, report );
#endif
        (void)report;
        // A placement launch after every pass: placement by the last team of each pass was slower
        // (docs/performance.md, "Lattice passes at the memory roof (issue #22)").
        if ( m_engine.options().scheme == PassScheme::split )
            for ( int axis = 0; axis < 3; ++axis )
            {
                phase( Phase::passes, [&] { m_engine.split_pass( exec, axis ); } );
                phase( Phase::overflow, [&] { m_engine.place_overflow( exec ); } );
            }
        else
        {
            phase( Phase::passes, [&] { m_engine.fused_pass( exec ); } );
            phase( Phase::overflow, [&] { m_engine.place_overflow( exec ); } );
        }
        m_engine.complete_step();
    }

    //! @{ The blocks of step() on one rank, for callers that interleave other operators (reactions)
    //! between passes, and for benchmarks; never timed. A pass leaves overflowed particles in the list
    //! until place_overflow() runs (step() runs it after every pass); complete_step() advances the step
    //! number that keys the random moves (step() calls it after the last pass of a step).
    //! \throws core::InputError on slabs over several ranks (their passes exchange planes: use step())
    void split_pass( const ExecutionSpace& exec, int axis )
    {
        one_rank( "split_pass" );
        m_engine.split_pass( exec, axis );
    }
    void fused_pass( const ExecutionSpace& exec )
    {
        one_rank( "fused_pass" );
        m_engine.fused_pass( exec );
    }
    void place_overflow( const ExecutionSpace& exec )
    {
        one_rank( "place_overflow" );
        m_engine.place_overflow( exec );
    }
    void complete_step()
    {
        one_rank( "complete_step" );
        m_engine.complete_step();
        this->set_steps_done( this->steps_done() + 1 );
    }
    //! @}

    //! This rank's lattice after the last pass: on one rank the whole lattice; on slabs the owned planes
    //! with three ghost planes on each side (owned_sites() has the owned ones). Its View changes with
    //! every pass.
    const lattice_type& lattice() const { return m_engine.lattice(); }
    //! This rank's owned sites (on one rank all; a View of the current lattice, changes with every pass).
    auto owned_sites() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->owned( lattice().sites() );
#endif
        return Kokkos::subview( lattice().sites(), Kokkos::make_pair( std::size_t( 0 ), m_whole.sites() ) );
    }
    //! The whole lattice's shape (on slabs too).
    const LatticeShape& shape() const { return m_whole; }
    const DiffusionOptions& options() const { return m_engine.options(); }
    //! The kernels that run the split passes and the fused pass (DiffusionOptions::kernels resolved).
    PassKernels split_kernels() const { return m_engine.split_kernels(); }
    PassKernels fused_kernels() const { return m_engine.fused_kernels(); }
    //! Particles on the whole lattice (constant).
    std::size_t particles() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return std::size_t( m_peers->particles() );
#endif
        return m_engine.particles();
    }
    bool tracking() const { return m_engine.tracking(); }
    const CodeMap& codes() const { return m_engine.codes(); }

    //! @{ Where this driver runs: rank() of size() ranks owning planes slab() of z (on one rank: 0 of 1,
    //! all planes).
    int rank() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->rank();
#endif
        return 0;
    }
    int size() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->size();
#endif
        return 1;
    }
    //! [first plane, last plane + 1) of z that this rank owns.
    std::pair<int, int> slab() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return { m_peers->slab().begin, m_peers->slab().end };
#endif
        return { 0, m_whole.nz };
    }
#if MORULA_HAVE_MPI
    //! The communicator of the slabs (a Cartesian one made from the constructor's); MPI_COMM_SELF on one rank.
    MPI_Comm comm() const { return m_peers ? m_peers->comm() : MPI_COMM_SELF; }
    //! How ghost planes travel between slabs (host_memory on one rank, where nothing travels).
    parallel::Transport transport() const { return m_peers ? m_peers->transport() : parallel::Transport::host_memory; }
#endif
    //! @}

    //! Particles that went through the overflow list since construction, on all ranks (reads the device;
    //! collective on slabs).
    unsigned long long overflows() const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->sum( m_engine.overflows() );
#endif
        return m_engine.overflows();
    }

    /*!
      Unwrapped displacement of each tracer (row = code, in lattice units) on this rank's device; empty for
      species codes. On slabs each rank holds the moves its planes made: gather_displacements() sums them.
    */
    const displacement_view& displacements() const { return m_engine.displacements(); }

    //! The tracers' displacements over all ranks, on the host (collective on slabs).
    host_displacements gather_displacements() const
    {
        if ( !m_engine.tracking() )
            throw core::InputError( "LatticeDiffusion: displacements need tracer codes (construct with species_of_tracer)" );
        auto local = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_engine.displacements() );
#if MORULA_HAVE_MPI
        if ( m_peers )
            local = m_peers->sum_rows( local );
#endif
        host_displacements all( "lattice_displacements", local.extent( 0 ) );
        Kokkos::deep_copy( all, local );
        return all;
    }

    //! Mean square displacement of the tracers of `species` (tracer codes only; collective on slabs).
    MsdSample msd( int species ) const
    {
        if ( !m_engine.tracking() )
            throw core::InputError( "LatticeDiffusion::msd: needs tracer codes (construct with species_of_tracer)" );
        return msd_of_tracers( gather_displacements(), m_engine.codes(), species );
    }

    //! Number of particles with each code (index = code, 0 unused) over all ranks. Also re-checks the
    //! invariants (collective on slabs).
    std::vector<unsigned long long> code_counts( const ExecutionSpace& exec ) const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->sum( m_engine.code_counts( exec ) );
#endif
        return m_engine.code_counts( exec );
    }

    /*!
      \brief The whole lattice's sites on the host of every rank (collective on slabs: MPI_Allgatherv), for
      tests, snapshots and small lattices.
      \throws core::CapacityError on slabs when the lattice exceeds MPI's int counts (2^31 sites)
    */
    host_sites gather( const ExecutionSpace& exec ) const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->gather( exec, m_whole, lattice().sites() );
#endif
        host_sites all( "lattice_gathered", m_whole.sites() );
        Kokkos::deep_copy( exec, all, owned_sites() );
        exec.fence();
        return all;
    }

    //! The model name in checkpoints (LatticeCheckpoint.hpp), the same on one rank and on slabs.
    static constexpr const char* checkpoint_model = lattice_checkpoint_model;

    /*!
      \brief Writes the whole state between steps (LatticeCheckpoint.hpp lists it) and the parameters a
      restart must match into `out`. Fences. On slabs (collective) the state is gathered to rank 0 in the
      one-rank layout: rank 0's `out` receives it, the other ranks' `out` is left as it is.
      \throws core::CapacityError on slabs when the lattice exceeds MPI's int counts (2^31 sites)
    */
    void checkpoint( io::CheckpointWriter& out ) const
    {
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->checkpoint( m_engine, m_whole, out );
#endif
        ExecutionSpace().fence();
        detail::put_lattice_parameters( out, Slots, shape(), options(), m_engine.rules(), codes() );
        detail::LatticeCheckpointState state;
        state.step = m_engine.steps_done();
        core::copy_to_host( lattice().sites(), shape().sites(), state.sites );
        state.overflows = overflows();
        if ( tracking() )
            core::copy_to_host( displacements(), displacements().extent( 0 ), state.displacement );
        detail::put_lattice_state( out, state );
    }

    /*!
      \brief Writes checkpoint() to `path` (io::CheckpointWriter::write: a temporary file renamed over
      `path`); on slabs from rank 0 (collective).
      \throws core::IoError (on every rank, with rank 0's message) if the file cannot be written
    */
    void write_checkpoint( const std::string& path ) const
    {
        io::CheckpointWriter out( checkpoint_model );
        checkpoint( out );
#if MORULA_HAVE_MPI
        if ( m_peers )
            return m_peers->write( out, path );
#endif
        out.write( path );
    }

    /*!
      \brief Resumes from a checkpoint of this model, written on any number of ranks (collective on slabs:
      every rank reads the file and takes its slab): this driver must have been built from the same
      parameters (any initial particle placement); the next step continues the checkpointed run bit for
      bit. The kernels may differ (they give the same results).
      \throws core::InputError (on every rank) naming the checkpoint if a parameter (capacity, size,
      boundaries, scheme, seed, rules, code map), the site types (obstacles) or the particles per code
      differ from this driver's, or a site word breaks the lattice rules; the driver is unchanged then
    */
    void restart( const io::CheckpointReader& in )
    {
        const ExecutionSpace exec;
#if MORULA_HAVE_MPI
        if ( m_peers )
        {
            this->set_steps_done( static_cast<long long>( m_peers->restart( exec, m_engine, m_whole, in ) ) );
            return;
        }
#endif
        detail::check_lattice_parameters( in, Slots, shape(), options(), m_engine.rules(), codes() );
        const auto max_code = std::uint32_t( codes().max_code() );
        auto state = detail::read_lattice_state<Slots>( in, shape(), max_code, m_engine.rules().blocked_types, tracking() );
        std::vector<site_word> here;
        core::copy_to_host( lattice().sites(), shape().sites(), here );
        detail::check_site_types<Slots>( in, state.sites, here.data(), 0, here.size(), shape() );
        detail::check_code_counts( in, detail::count_codes<Slots>( state.sites.data(), state.sites.size(), max_code ),
                                   detail::count_codes<Slots>( here.data(), here.size(), max_code ) );
        m_engine.restore_sites( exec, state.sites.data(), 0, shape().nz );
        m_engine.restore_state( exec, state.step, state.overflows, state.displacement );
        this->set_steps_done( static_cast<long long>( state.step ) ); // the step that keys the random moves
    }

  private:
    using engine_type = detail::SlabDiffusion<Slots, ExecutionSpace>;
    friend struct detail::EngineAccess; // tests that look inside a step
    const engine_type& engine() const { return m_engine; }
    engine_type& engine() { return m_engine; }

    void one_rank( const char* what ) const
    {
        if ( size() > 1 )
            throw core::InputError( core::detail::concat( "LatticeDiffusion::", what, ": runs on one rank only; this "
                                                          "driver runs on ", size(), " slabs (use step())" ) );
    }

#if MORULA_HAVE_MPI
    using peers_type = parallel::detail::LatticeSlabPeers<Slots, ExecutionSpace>;

    static std::unique_ptr<peers_type> make_peers( const ExecutionSpace& exec, MPI_Comm comm, const LatticeShape& whole,
                                                   const lattice_type& owned )
    {
        if ( peers_type::ranks( comm ) > 1 )
            return std::make_unique<peers_type>( exec, comm, whole, owned );
        parallel::validate_lattice_slabs( whole, owned.shape(), 0, 1 );
        return nullptr;
    }

    static engine_type make_engine( const ExecutionSpace& exec, peers_type* peers, const LatticeShape& whole,
                                    const lattice_type& owned, const DiffusionRules& rules, const CodeMap& codes,
                                    const DiffusionOptions& options )
    {
        if ( !peers )
        {
            // One rank: the whole lattice, copied as on several ranks (the caller's View stays its own).
            lattice_type copy( owned.shape() );
            Kokkos::deep_copy( exec, copy.sites(), owned.sites() );
            return engine_type( exec, copy, rules, codes, options );
        }
        return engine_type( exec, peers->take_initial_window(), whole, peers->window(), rules, codes, options,
                            peers->overflow_capacity() );
    }

    template <class Phases>
    void step_slab_phases( const ExecutionSpace& exec, Phases& phase, LatticeDiffusionReport& report )
    {
        compat::ScopedRegion region( "morula::lattice::LatticeDiffusion::slab_step" );
        const long long bytes_before = m_peers->bytes_sent();
        if ( m_engine.options().scheme == PassScheme::split )
            for ( int axis = 0; axis < 3; ++axis )
            {
                if ( axis == 2 )
                    m_peers->pass_with_ghosts( exec, m_engine, 2, phase );
                else
                    m_peers->pass_in_planes( exec, m_engine, axis, phase );
                m_peers->place_overflow( exec, m_engine, phase, report );
            }
        else
        {
            m_peers->pass_with_ghosts( exec, m_engine, 3, phase );
            m_peers->place_overflow( exec, m_engine, phase, report );
        }
        m_engine.complete_step();
        report.halo_bytes = m_peers->bytes_sent() - bytes_before;
        phase.add( Count::halo_bytes, report.halo_bytes );
        phase.add( Count::overflow_events, report.overflow_events );
        phase.add( Count::overflow_entries, report.overflow_entries );
        phase.add( Count::overflow_scans, report.overflow_scans );
    }

    void check_tracer_ids( const ExecutionSpace& exec ) const
    {
        const auto counts = code_counts( exec );
        for ( std::size_t c = m_engine.codes().first_tracer_code(); c < counts.size(); ++c )
            if ( counts[c] != 1 )
                throw core::InputError( core::detail::concat( "LatticeDiffusion: tracer id ", c, " appears ", counts[c],
                                                              " times on the slabs' lattice; expected once" ) );
    }
#endif

    LatticeShape m_whole;
#if MORULA_HAVE_MPI
    std::unique_ptr<peers_type> m_peers; // null on one rank; built before the engine, which it sizes
#endif
    engine_type m_engine;
};

} // namespace morula::lattice

#endif
