/*!
  \file Driver.hpp
  \brief The shape every model driver takes: what a step reports, and a compile-time check of the shape.

  A driver owns its state (agents, tissue, cells and tubes, lattice) and is stepped, timed and read the
  same way in every model family, single-rank or distributed:

  \code
  Model model( state, box, parameters );            // validates; throws core::InputError naming the item
  auto report = model.step( exec, timed );           // one step on `exec`; report derives from StepReport
  model.steps_done();                                // steps taken since construction
  model.times().seconds( ModelPhase::forces );       // a core::PhaseTimer; filled on timed steps only
  model.reset_times();                               // after warm-up, say
  \endcode

  Every driver can also stop and resume (io/Checkpoint.hpp, docs/restart.md): a `checkpoint_model` name,
  `checkpoint( io::CheckpointWriter& ) const`, which writes its whole state, and `restart( const
  io::CheckpointReader& )`, which resumes a driver made from the same parameters so that the steps after
  it are those the uninterrupted run takes (`io::is_checkpointable_v<Driver>` checks the shape).

  Drivers name their phases in a struct of unscoped enumerators (`ProliferationPhase::forces`) whose
  order is that of the names given to their PhaseTimer. Writing a frame of a run is the io layer's job
  (io::SnapshotSeries); drivers only give read access to their state.
*/
#ifndef MORULA_CORE_DRIVER_HPP
#define MORULA_CORE_DRIVER_HPP

#include <morula/core/PhaseTimer.hpp>

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

} // namespace morula::core

#endif
