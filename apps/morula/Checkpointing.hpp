// What every `morula` command that runs steps shares for checkpoint and restart: the three flags,
// when a checkpoint is due, and a stop requested by the batch system (SIGTERM, SIGINT, SIGUSR1).
//
//   --checkpoint FILE      where checkpoints go (default <output>.checkpoint.h5); one is written at the
//                          end of the run, and every N steps with --checkpoint-every N
//   --checkpoint-every N   a checkpoint every N steps (counted from the start of the run, not the restart)
//   --restart FILE         resume from a checkpoint: the run continues to the configured number of
//                          steps, appending to its outputs after the checkpoint's step
//
// A signal makes the run write a checkpoint after the step it is in and exit with status 3 (a
// checkpoint is written whether or not the flags asked for one), so that a job killed at its time
// limit with SIGTERM first can be resubmitted with --restart.
#ifndef MORULA_APPS_CHECKPOINTING_HPP
#define MORULA_APPS_CHECKPOINTING_HPP

#include <CLI/CLI.hpp>

#include <string>

namespace morula::app
{

struct CheckpointFlags
{
    std::string file;
    long long every = 0;
    std::string restart;
};

//! Adds --checkpoint, --checkpoint-every and --restart to `command`, filling `flags`.
void add_checkpoint_flags( CLI::App& command, CheckpointFlags& flags );

//! The exit status of a run stopped by a signal after writing its checkpoint.
inline constexpr int exit_status_stopped = 3;

//! Thrown (and turned into exit status 3 by main) when a run stopped on a signal after its checkpoint.
struct StoppedBySignal
{
    std::string checkpoint;
};

class CheckpointSchedule
{
  public:
    //! `output` is the run's output prefix (the default file is `<output>.checkpoint.h5`). Installs the
    //! signal handlers for the life of the schedule.
    CheckpointSchedule( const CheckpointFlags& flags, const std::string& output );
    ~CheckpointSchedule();
    CheckpointSchedule( const CheckpointSchedule& ) = delete;
    CheckpointSchedule& operator=( const CheckpointSchedule& ) = delete;

    //! Where checkpoints go.
    const std::string& file() const { return m_file; }
    bool restarting() const { return !m_restart.empty(); }
    //! --checkpoint-every (0: none).
    long long every() const { return m_every; }
    const std::string& restart_file() const { return m_restart; }

    //! Whether a checkpoint is due after `steps_done` steps of a run of `total` (every N steps, and at
    //! the end when any checkpoint flag was given) or a signal asked the run to stop.
    bool due( long long steps_done, long long total ) const;
    //! Whether a signal asked the run to stop (after writing its checkpoint).
    static bool stop_requested();
    //! After a checkpoint was written at a stop request: throws StoppedBySignal.
    void stop_if_requested() const;

  private:
    std::string m_file;
    long long m_every = 0;
    bool m_at_end = false;
    std::string m_restart;
};

/*!
  A resumed run's CSV, whose rows start with their step: keeps the header and the rows of the steps up
  to `step` (a run killed after its last checkpoint wrote later ones, which the resumed run writes
  again), rewritten under a temporary name and renamed. Returns false if there is no CSV at `path` (a
  new output prefix: the caller starts one, or refuses).
  \throws core::InputError naming `where` and the file if a row does not start with a step, or the first
  line is not `header` (when given); core::IoError if it cannot be rewritten
*/
bool keep_csv_rows_up_to( const std::string& path, long long step, const std::string& where,
                          const std::string& header = {} );

/*!
  A resumed run's CSV whose rows are not numbered by step (the lattice's MSD series, one row per sample
  and species): keeps the header and the first `count` rows, rewritten like keep_csv_rows_up_to().
  Returns false if there is no CSV at `path`.
  \throws core::InputError naming `where` and the file if it has fewer rows, or the first line is not
  `header` (when given); core::IoError if it cannot be rewritten
*/
bool keep_first_csv_rows( const std::string& path, std::size_t count, const std::string& where,
                          const std::string& header = {} );

} // namespace morula::app

#endif
