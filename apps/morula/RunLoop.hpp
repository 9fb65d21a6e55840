// The run loop of every `morula` command that runs steps, on one rank or under mpirun: where a run stops
// between advances (samples, snapshots, checkpoints every N steps, the end), the progress bar, and the
// checkpoint and stop that the schedule or a signal asks for, which every rank agrees on. A command
// gives it how to advance, what to do at a stop and how to write its checkpoint; nothing else.
#ifndef MORULA_APPS_RUNLOOP_HPP
#define MORULA_APPS_RUNLOOP_HPP

#include "Checkpointing.hpp"
#include "Progress.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace morula::app
{

class RunLoop
{
  public:
    //! A run of `total` steps with `schedule`'s checkpoints; the progress bar on rank 0 when `progress`.
    RunLoop( const CheckpointSchedule& schedule, long long total, bool progress );

    //! The run also stops at every multiple of `period` steps (0 or less: adds nothing).
    RunLoop& stop_every( long long period );
    //! The first stop after `done` steps: the next multiple of a period, or the end.
    long long next_stop( long long done ) const;
    //! How many stops in (0, step] satisfy `counts( stop )` (the samples a run took up to a restart's step).
    template <class Counts>
    std::size_t stops_through( long long step, const Counts& counts ) const
    {
        std::size_t n = 0;
        for ( long long done = 0; done < step; )
        {
            done = next_stop( done );
            n += done <= step && counts( done ) ? 1 : 0;
        }
        return n;
    }

    /*!
      From `start` steps to the end: `advance( n )` takes n steps; `at_stop( done )` runs after each
      advance; then a checkpoint that the schedule or a signal asks for is written by `checkpoint()`
      (under mpirun every rank takes part: a signal may reach the ranks at different steps, so they agree
      first), and a signal then ends the run with StoppedBySignal. `status()` gives the progress bar's
      text when it is redrawn.
    */
    template <class Advance, class AtStop, class Checkpoint, class Status>
    void run( long long start, Advance&& advance, AtStop&& at_stop, Checkpoint&& checkpoint, Status&& status )
    {
        Progress progress( long( m_total ), m_progress );
        if ( start > 0 )
            progress.update( long( start ), status );
        for ( long long done = start; done < m_total; )
        {
            const long long stop = next_stop( done );
            advance( stop - done );
            done = stop;
            at_stop( done );
            progress.update( long( done ), status );
            const auto [due, stop_now] = agree( done );
            if ( due )
            {
                checkpoint();
                if ( stop_now )
                    throw StoppedBySignal{ m_schedule.file() };
            }
        }
    }

  private:
    //! Whether any rank is due a checkpoint after `done` steps, and whether any was asked to stop
    //! (collective under mpirun).
    std::pair<bool, bool> agree( long long done ) const;

    const CheckpointSchedule& m_schedule;
    long long m_total;
    bool m_progress;
    std::vector<long long> m_periods;
};

} // namespace morula::app

#endif
