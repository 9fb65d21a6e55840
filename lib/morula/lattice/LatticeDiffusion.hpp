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
*/
#ifndef MORULA_LATTICE_LATTICEDIFFUSION_HPP
#define MORULA_LATTICE_LATTICEDIFFUSION_HPP

#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/PhaseTimer.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionOptions.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/LatticeCheckpoint.hpp>
#include <morula/lattice/MsdSample.hpp>
#include <morula/lattice/detail/EngineAccess.hpp>
#include <morula/lattice/detail/SlabDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <vector>

namespace morula::lattice
{

//! The phases of LatticeDiffusion::step(), in the order of the names of its times().
struct LatticeDiffusionPhase
{
    enum : int
    {
        passes,  //!< the three split passes or the fused pass
        overflow //!< placing the overflowed particles after each pass
    };
    static constexpr const char* scope = "morula::lattice::LatticeDiffusion";
    static constexpr const char* names[] = { "passes", "overflow" };
};

/*!
  \brief What LatticeDiffusion::step() did: the step's index. The overflows of the step are on the
  device (overflows() reads their running total), so the report does not carry them.
*/
struct LatticeDiffusionReport : core::StepReport
{
};

/*!
  \brief Steps a lattice of `Slots`-particle sites under DiffusionRules on `ExecutionSpace`.

  Holds two lattices (the current one and the one the next pass writes), the overflow list and, for
  tracer codes, the unwrapped displacement of every tracer. No allocation happens while stepping.
  A driver on core::ModelDriver (core/Driver.hpp): step() takes one step, timed per phase
  (LatticeDiffusionPhase) when asked; advance(exec, n) takes n.
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
    using Phase = LatticeDiffusionPhase;

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
        : m_engine( exec, lattice, rules, codes, options )
    {
    }

    /*!
      \brief One time step's phases (core::ModelDriver::step() runs them): the passes (three split or one
      fused), each followed by the placement of its overflowed particles.
    */
    template <class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, LatticeDiffusionReport& )
    {
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

    //! @{ The blocks of step(), for callers that interleave other operators (reactions) between passes,
    //! and for benchmarks; never timed. A pass leaves overflowed particles in the list until
    //! place_overflow() runs (step() runs it after every pass); complete_step() advances the step number
    //! that keys the random moves (step() calls it after the last pass of a step).
    void split_pass( const ExecutionSpace& exec, int axis ) { m_engine.split_pass( exec, axis ); }
    void fused_pass( const ExecutionSpace& exec ) { m_engine.fused_pass( exec ); }
    void place_overflow( const ExecutionSpace& exec ) { m_engine.place_overflow( exec ); }
    void complete_step()
    {
        m_engine.complete_step();
        this->set_steps_done( this->steps_done() + 1 );
    }
    //! @}


    //! The current lattice (after the last pass). Its View changes with every pass.
    const lattice_type& lattice() const { return m_engine.lattice(); }
    const LatticeShape& shape() const { return m_engine.shape(); }
    const DiffusionOptions& options() const { return m_engine.options(); }
    //! The kernels that run the split passes and the fused pass (DiffusionOptions::kernels resolved).
    PassKernels split_kernels() const { return m_engine.split_kernels(); }
    PassKernels fused_kernels() const { return m_engine.fused_kernels(); }
    std::size_t particles() const { return m_engine.particles(); }
    bool tracking() const { return m_engine.tracking(); }
    const CodeMap& codes() const { return m_engine.codes(); }

    //! Particles that went through the overflow list since construction (reads the device).
    unsigned long long overflows() const { return m_engine.overflows(); }

    //! Unwrapped displacement of each tracer (row = code, in lattice units); empty for species codes.
    const displacement_view& displacements() const { return m_engine.displacements(); }

    //! Mean square displacement of the tracers of `species` (tracer codes only).
    MsdSample msd( int species ) const
    {
        if ( !m_engine.tracking() )
            throw core::InputError( "LatticeDiffusion::msd: needs tracer codes (construct with species_of_tracer)" );
        auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_engine.displacements() );
        return msd_of_tracers( h, m_engine.codes(), species );
    }

    //! Number of particles with each code (index = code, 0 unused). Also re-checks the invariants.
    std::vector<unsigned long long> code_counts( const ExecutionSpace& exec ) const
    {
        return m_engine.code_counts( exec );
    }

    //! The model name in checkpoints (LatticeCheckpoint.hpp; DistributedLatticeDiffusion writes the same).
    static constexpr const char* checkpoint_model = lattice_checkpoint_model;

    /*!
      \brief Writes the whole state between steps (LatticeCheckpoint.hpp lists it) and the parameters a
      restart must match into `out`. Fences.
    */
    void checkpoint( io::CheckpointWriter& out ) const
    {
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
      \brief Resumes from a checkpoint of this model (of either lattice driver, at any rank count): this
      driver must have been built from the same parameters (any initial particle placement); the next
      step continues the checkpointed run bit for bit. The kernels may differ (they give the same results).
      \throws core::InputError naming the checkpoint if a parameter (capacity, size, boundaries, scheme,
      seed, rules, code map), the site types (obstacles) or the particles per code differ from this
      driver's, or a site word breaks the lattice rules; the driver is unchanged then
    */
    void restart( const io::CheckpointReader& in )
    {
        const ExecutionSpace exec;
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

    engine_type m_engine;
};

} // namespace morula::lattice

#endif
