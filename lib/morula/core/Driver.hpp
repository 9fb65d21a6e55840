/*!
  \file Driver.hpp
  \brief The driver framework: what every model driver repeats, written once (core::ModelDriver), the
  report every step returns, and a compile-time check of the shape.

  A driver owns its state (agents, tissue, cells and tubes, lattice) and is stepped, timed and read the
  same way in every model family, single-rank or distributed:

  \code
  Model model( state, box, parameters );            // validates; throws core::InputError naming the item
  auto report = model.step( exec, timed );           // one step on `exec`; report derives from StepReport
  auto total = model.advance( exec, n );             // n untimed steps; their reports merged
  model.steps_done();                                // steps taken since construction (or the checkpoint)
  model.times().seconds( ModelPhase::forces );       // a core::PhaseTimer; filled on timed steps only
  model.reset_times();                               // after warm-up, say
  \endcode

  A model writes none of that itself. It declares its phases once, as indices with names:

  \code
  struct DecayPhase
  {
      enum : int { rates, update };                                 // in step order
      static constexpr const char* scope = "mymodel::Decay";        // prefix of the profiling regions
      static constexpr const char* names[] = { "rates", "update" }; // one per index
      // optional: static constexpr const char* counts[] = { ... }; named counts a timed step adds
  };
  \endcode

  and derives from ModelDriver<Model, DecayPhase, Report>, giving it one member, the step as a sequence
  of phases, each a callable that enqueues its kernels on `exec`:

  \code
  template <class ExecutionSpace, class Phases>
  void step_phases( const ExecutionSpace& exec, Phases& phase, Report& report )
  {
      phase( DecayPhase::rates, [&] { ... } );
      report.something = phase( DecayPhase::update, [&] { return ...; } ); // a phase's value passes through
  }
  \endcode

  ModelDriver::step() runs it through one path, timed or not: every phase opens its profiling region
  ("<scope>::<name>"); a timed step also synchronises before and after each phase (timing_sync(exec):
  exec.fence() unless the model defines its own, as a distributed driver does with a barrier) and adds
  the seconds. advance(exec, n) runs advance_steps(), n untimed step()s by default; a model whose steps
  replay from a core::StepGraph defines its own advance_steps() with the same results. step_phases()
  must be public: nvcc forbids device lambdas in private or protected member functions.

  Every driver can also stop and resume (io/Checkpoint.hpp, docs/restart.md): a `checkpoint_model` name,
  `checkpoint( io::CheckpointWriter& ) const`, which writes its whole state, and `restart( const
  io::CheckpointReader& )`, which resumes a driver made from the same parameters so that the steps after
  it are those the uninterrupted run takes (`io::is_checkpointable_v<Driver>` checks the shape).
  Writing a frame of a run is the io layer's job (io::SnapshotSeries); drivers only give read access to
  their state.
*/
#ifndef MORULA_CORE_DRIVER_HPP
#define MORULA_CORE_DRIVER_HPP

#include <morula/core/Error.hpp>
#include <morula/core/PhaseTimer.hpp>

#include <initializer_list>

#include <type_traits>
#include <utility>

namespace morula::core
{

//! What every driver's step() returns; each model derives and adds what its step did.
struct StepReport
{
    long long step = -1; //!< index of the step just taken (0 for the first), -1 before any
};

namespace detail
{
template <class Driver, class ExecutionSpace, class = void>
struct is_driver : std::false_type
{
};

template <class Driver, class ExecutionSpace>
struct is_driver<
    Driver, ExecutionSpace,
    std::void_t<decltype( std::declval<Driver&>().step( std::declval<const ExecutionSpace&>(), true ) ),
                decltype( std::declval<const Driver&>().steps_done() ),
                decltype( std::declval<const Driver&>().times() ), decltype( std::declval<Driver&>().reset_times() )>>
    : std::bool_constant<
          std::is_base_of_v<StepReport, decltype( std::declval<Driver&>().step(
                                            std::declval<const ExecutionSpace&>(), true ) )> &&
          std::is_same_v<decltype( std::declval<const Driver&>().times() ), const PhaseTimer&> &&
          std::is_same_v<decltype( std::declval<const Driver&>().steps_done() ), long long>>
{
};
} // namespace detail

//! Whether `Driver` has the driver shape above for execution space `ExecutionSpace`.
template <class Driver, class ExecutionSpace>
inline constexpr bool is_driver_v = detail::is_driver<Driver, ExecutionSpace>::value;

namespace detail
{
template <class Phases, class = void>
struct has_phase_counts : std::false_type
{
};
template <class Phases>
struct has_phase_counts<Phases, std::void_t<decltype( Phases::counts )>> : std::true_type
{
};

template <class Report, class = void>
struct has_report_merge : std::false_type
{
};
template <class Report>
struct has_report_merge<Report, std::void_t<decltype( std::declval<Report&>().merge( std::declval<const Report&>() ) )>>
    : std::true_type
{
};

// The synchronisation ModelDriver::step() gives a timed phase: the model's timing_sync( exec ). A named
// type, not a lambda: nvcc forbids a local lambda type in the template arguments of a function that
// holds an extended device lambda, which a model's step_phases() does.
template <class Model, class ExecutionSpace>
struct ModelTimingSync
{
    Model* model;
    const ExecutionSpace* exec;
    void operator()() const { model->timing_sync( *exec ); }
};

//! A synchronisation that does nothing (an operator whose every phase brings its own, StepPhases::synced).
struct NoSync
{
    void operator()() const {}
};
} // namespace detail

/*!
  \brief The phases of one step, as ModelDriver::step() hands them to a model's step_phases():
  `phase( index, op )` runs op as that phase (its profiling region always; fenced and timed when the
  step is timed) and returns what op returns.
*/
template <class Sync>
class StepPhases
{
  public:
    StepPhases( PhaseTimer& timer, bool timed, Sync sync )
        : m_timer( timer )
        , m_sync( std::move( sync ) )
        , m_timed( timed )
    {
    }

    template <class Op>
    auto operator()( int phase, Op&& op )
    {
        return m_timer.run_synced( m_timed, phase, m_sync, std::forward<Op>( op ) );
    }

    /*!
      \brief Like operator(), with `sync` instead of the model's timing_sync() around this phase: for a
      phase that starts where the last one ended, or overlaps work on another stream (a distributed
      driver's interior pass beside its ghost exchange).
    */
    template <class PhaseSync, class Op>
    auto synced( int phase, PhaseSync&& sync, Op&& op )
    {
        return m_timer.run_synced( m_timed, phase, std::forward<PhaseSync>( sync ), std::forward<Op>( op ) );
    }

    //! Whether this step is timed.
    bool timed() const { return m_timed; }
    //! Adds `n` to the count `index` of the model's phase declaration, on timed steps only.
    void add( int index, long long n )
    {
        if ( m_timed )
            m_timer.add( index, n );
    }

  private:
    PhaseTimer& m_timer;
    Sync m_sync;
    bool m_timed;
};

/*!
  \brief The base of every model driver (CRTP): owns the step counter and the PhaseTimer, and gives
  step(), advance(), steps_done(), times() and reset_times() (see the file's description).

  \tparam Derived the model; it defines `step_phases( exec, phases, report )` (public)
  \tparam Phases its phase declaration: an unscoped enum of indices, `scope` and `names` (and `counts`)
  \tparam Report what a step returns, derived from StepReport; a `merge( const Report& )` member, if
  any, sums the steps of an advance() (otherwise advance() reports the last step's index only)
*/
template <class Derived, class Phases, class Report>
class ModelDriver
{
    static_assert( std::is_base_of_v<StepReport, Report>, "a driver's report derives from core::StepReport" );

  public:
    using phases_type = Phases;
    using report_type = Report;

    //! One step on `exec`; with `timed`, each phase is synchronised and timed into times().
    template <class ExecutionSpace>
    Report step( const ExecutionSpace& exec, bool timed = false )
    {
        Report report;
        report.step = m_step;
        const detail::ModelTimingSync<Derived, ExecutionSpace> sync{ &derived(), &exec };
        StepPhases<detail::ModelTimingSync<Derived, ExecutionSpace>> phases( m_times, timed, sync );
        derived().step_phases( exec, phases, report );
        ++m_step;
        if ( timed )
            m_times.count_step();
        return report;
    }

    /*!
      \brief `n` untimed steps, bit for bit what n calls of step(exec) do. The report's `step` is the
      last step's index (steps_done() - 1), its other fields the steps' merged reports.
      \throws core::InputError if n < 0
    */
    template <class ExecutionSpace>
    Report advance( const ExecutionSpace& exec, long long n )
    {
        if ( n < 0 )
            throw InputError( detail::concat( Phases::scope, "::advance: n = ", n, " steps (expected >= 0)" ) );
        Report total;
        total.step = m_step - 1;
        derived().advance_steps( exec, n, total );
        return total;
    }

    //! Steps taken since construction (or since the step a restart resumed at).
    long long steps_done() const { return m_step; }
    //! Seconds per phase (and the counts) over the timed steps since construction or reset_times().
    const PhaseTimer& times() const { return m_times; }
    void reset_times() { m_times.reset(); }

    //! The default of advance(): n step()s, reports merged. A model may define its own (StepGraph replay).
    template <class ExecutionSpace>
    void advance_steps( const ExecutionSpace& exec, long long n, Report& total )
    {
        for ( long long k = 0; k < n; ++k )
            merge_report( total, step( exec ) );
    }

    //! The default synchronisation around a timed phase: the caller's execution space instance.
    template <class ExecutionSpace>
    void timing_sync( const ExecutionSpace& exec ) const
    {
        exec.fence();
    }

    //! Folds one step's report into an advance()'s total.
    static void merge_report( Report& total, const Report& one )
    {
        if constexpr ( detail::has_report_merge<Report>::value )
            total.merge( one );
        total.step = one.step;
    }

  protected:
    ModelDriver() = default;
    //! For restart(): the step count saved with the state.
    void set_steps_done( long long step ) { m_step = step; }

  private:
    Derived& derived() { return static_cast<Derived&>( *this ); }

    static PhaseTimer make_timer()
    {
        if constexpr ( detail::has_phase_counts<Phases>::value )
            return PhaseTimer( Phases::scope, Phases::names, Phases::counts );
        else
            return PhaseTimer( Phases::scope, Phases::names, std::initializer_list<const char*>{} );
    }

    PhaseTimer m_times = make_timer();
    long long m_step = 0;
};

} // namespace morula::core

#endif
