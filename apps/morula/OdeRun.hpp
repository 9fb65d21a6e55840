// `morula ode run`'s pieces: its options as given, how they resolve against the model file into what
// the run does (OdeRunInputs.cpp), and what the run leaves and writes (OdeRunOutputs.cpp). The command
// itself (OdeCommand.cpp) wires the options and runs the integration between the two.
#ifndef MORULA_APPS_ODERUN_HPP
#define MORULA_APPS_ODERUN_HPP

#include "Checkpointing.hpp"

#include <morula/ode/ParameterSweep.hpp>
#include <morula/ode/ReactionNetwork.hpp>
#include <morula/ode/SolverOptions.hpp>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace morula::app::ode_run
{
using exec_space = Kokkos::DefaultExecutionSpace;
using mem_space = exec_space::memory_space;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, mem_space>;

// Every option of `morula ode run` as given; `given()` tells which ones were on the command line, so
// the model file's settings apply only where the command line is silent.
struct RunArgs
{
    std::string config; // --config: a JSON file of these options (JsonOptions.hpp)
    std::string model;
    std::string out;
    std::string plot;
    std::string save;
    ode::Method method = ode::Method::automatic;
    ode::Method stiff_method = ode::Method::automatic;
    ode::ErrorNorm norm = ode::ErrorNorm::mixed;
    ode::LinearSolver linear = ode::LinearSolver::automatic;
    ode::ExecutionMode mode = ode::ExecutionMode::fine_grained;
    ode::Precision precision = ode::Precision::double_precision;
    ode::BatchedLayout layout = ode::BatchedLayout::automatic;
    ode::SampleOutput sample_output = ode::SampleOutput::automatic;
    double t_start = 0;
    double t_end = 0;
    long samples = 0;
    double rtol = 0;
    double atol = 0;
    long bdf_order = 5;
    double bdf_step = 0;
    double newton_tol = 0;
    double eps_s = 0;
    double initial_step = 0;
    long team_size = 0;
    long max_steps = 0;
    long batch = 1;
    double vary = 0;
    std::uint64_t seed = 1;
    std::string sweep_table;               // --sweep-table: CSV of per-system rate constants / initial values
    std::vector<std::string> sweep_ranges; // --sweep NAME=SPACING:LOW:HIGH[:POINTS], repeatable
    std::string summary;                   // --summary: one CSV row per system (status, reason, reach, values)
    bool allow_failures = false;
    bool paper = false;
    bool stats = false;
    bool progress = false;
    bool no_progress = false;
    CheckpointFlags checkpoint;
    long stop_after = 0; // --stop-after: samples after which the run checkpoints and stops (0: none)
};

// The run's sample times: one list for every system, or, with a sweep's `t_end` column, each system's own
// list: the run's list scaled to end at the system's end time (its last time exactly the end time).
struct RunTimes
{
    std::vector<double> grid; // --t-start to --t-end in --samples times, or the model's sample times
    std::vector<double> ends; // each system's end time (every system of the run), or empty: the grid for all
    double t_start = 0;

    bool per_system() const { return !ends.empty(); }
    std::size_t count() const { return grid.size(); }
    //! System s's i-th sample time (s counts the systems of the whole run).
    double at( long system, std::size_t i ) const;
    double last( long system ) const { return at( system, count() - 1 ); }
};

// What the solver call leaves on the host: the samples, the statistics, and per system whether it failed
// and the last sample time it reached.
struct RunOutput
{
    long systems = 0;
    std::size_t nsamples = 0, nsaved = 0;
    std::vector<double> samples;  // (system, sample, saved); NaN where not reached
    std::vector<long> stats;      // (system, ode::StatisticsColumn)
    std::vector<bool> failed;
    std::vector<double> reached;  // last sample time recorded
    std::vector<bool> reached_any;
    long failures = 0;
    double seconds = 0;
    std::size_t rows = 0;     // samples filled (all of them unless the run stopped early)
    int resumed_from = -1;    // the sample the run resumed after (--restart), else -1
    bool stopped = false;     // stopped after a checkpoint (--stop-after or a signal) before the end

    RunOutput( long systems_, std::size_t nsamples_, std::size_t nsaved_, double t_start )
        : systems( systems_ )
        , nsamples( nsamples_ )
        , nsaved( nsaved_ )
        , samples( std::size_t( systems_ ) * nsamples_ * nsaved_, std::numeric_limits<double>::quiet_NaN() )
        , stats( std::size_t( systems_ ) * ode::stat_count, 0 )
        , failed( std::size_t( systems_ ), false )
        , reached( std::size_t( systems_ ), t_start )
        , reached_any( std::size_t( systems_ ), false )
    {
    }
    //! From the samples and statistics: which systems failed, and the last sample time each reached
    //! (the systems are the run's `first`, `first + 1`, ...).
    void tally( const RunTimes& times, long first = 0 );
    double& sample_at( long s, std::size_t t, std::size_t j ) { return samples[( std::size_t( s ) * nsamples + t ) * nsaved + j]; }
    double sample_at( long s, std::size_t t, std::size_t j ) const
    {
        return samples[( std::size_t( s ) * nsamples + t ) * nsaved + j];
    }
    long stat( long s, int col ) const { return stats[std::size_t( s ) * ode::stat_count + col]; }
    std::vector<long> column( int col ) const
    {
        std::vector<long> v( static_cast<std::size_t>( systems ) );
        for ( long s = 0; s < systems; ++s )
            v[std::size_t( s )] = stat( s, col );
        return v;
    }
    const char* status_name( long s ) const { return ode::to_string( ode::SolverStatus( stat( s, ode::stat_status ) ) ); }
};

// The systems of a run: --batch copies of the model (with --vary's factors), or a sweep's systems; and
// the slice of them this rank integrates (all of them on one rank).
struct RunSystems
{
    long total = 1;
    long first = 0, count = 1;
    std::optional<ode::ParameterSweep> sweep;
    bool batch_output = false; // the CSV gets a 'system' column
};

// --- Inputs (OdeRunInputs.cpp): the command line over the model file's settings; every check names the
// option and what it expects, and runs before anything is integrated.

//! `v` as %g writes it, with more digits only where needed to read back exactly.
std::string number( double v );
//! Throws core::InputError "<option> <value>: expected <expected>" unless ok.
void require( bool ok, const char* option, double value, const char* expected );
//! Whether the option was on the command line.
bool given( const CLI::App& cmd, const char* name );
//! `count` evenly spaced times from first to last, both included exactly.
std::vector<double> even_times( double first, double last, long count );
//! Morula's defaults (or --paper), then the model file's tolerances, then the command line; validated.
ode::SolverOptions solver_options( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net, long systems );
//! --t-start to --t-end in --samples evenly spaced times, else the model's own sample times.
std::vector<double> sample_times( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net );
//! The run's times: `grid` for every system, or with a sweep's t_end column each system's own (checked:
//! every end time after --t-start, naming the table line or range).
RunTimes run_times( const RunArgs& a, std::vector<double> grid, const RunSystems& sys );
//! This rank's systems' rows of sample times (per-system times only).
Matrix system_sample_times( const RunTimes& times, const RunSystems& sys );
//! --save's species, else the model's saved species, else all of them.
std::vector<int> saved_species( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net );
//! Refuses a run whose samples and states cannot fit in the host's memory, with the figures.
void refuse_batch_beyond_memory( long systems, std::size_t nsamples, std::size_t nsaved, int n, int m );
//! The --out file opened for writing (not open without --out). \throws core::IoError
std::ofstream open_csv( const std::string& path );
//! The largest batch whose samples and states fit in the host's memory (LONG_MAX when unknown).
long max_batch_systems( std::size_t nsamples, std::size_t nsaved, int n, int m );
//! --batch, or the sweep of --sweep-table / --sweep (refusing the two together, or with --vary), split
//! evenly over `ranks`; checked against the host's memory.
RunSystems run_systems( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net, std::size_t nsamples,
                        std::size_t nsaved, int rank, int ranks );
//! This rank's systems' initial states: the model's, or the sweep's.
Matrix initial_states( const ode::ReactionNetwork& net, const RunSystems& sys );
//! This rank's systems' rate constants: with --vary the model's times random factors (drawn for every
//! system of the run, so that any split over ranks gives the same constants), or the sweep's; else empty
//! (the model's constants).
Matrix rate_constants( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net, const RunSystems& sys );
//! Checkpoints default to <out without .csv>.checkpoint.h5 ("ode.checkpoint.h5" without --out).
std::string checkpoint_prefix( const std::string& out );

// --- Outputs (OdeRunOutputs.cpp).

//! The CSV: time, then one column per saved species (with --batch a first column 'system'). Closes it.
void write_csv( std::ofstream& csv, const std::string& path, bool batch_output, const ode::ReactionNetwork& net,
                const RunTimes& times, const std::vector<int>& saved, const RunOutput& out );
//! One line: status, time span, steps and switches (min / median / max over a batch), wall time.
void print_summary( const RunArgs& a, const RunTimes& times, const RunOutput& out );
//! --stats: every counter of one system, or statuses and min / median / max of each over a batch.
void print_statistics( const RunOutput& out );
//! --plot: the saved species of system 0 against time.
void write_plot( const RunArgs& a, const ode::ReactionNetwork& net, const RunTimes& times,
                 const std::vector<int>& saved, const RunOutput& out );
//! Whether --out names an HDF5 file (.h5, .hdf5) rather than a CSV.
bool is_hdf5_path( const std::string& path );
//! --out x.h5: time (samples, or (system, sample) with per-system times), samples (system, sample,
//! species), status (with names and reasons), reached, statistics, and the sweep's parameters, each with
//! its column names. \throws core::IoError
void write_hdf5( const std::string& path, const ode::ReactionNetwork& net, const RunTimes& times,
                 const std::vector<int>& saved, const RunSystems& sys, const RunOutput& out );
//! --summary: one row per system: system, status, reason, last sample time reached, steps, rejected
//! steps, then the sweep's values. \throws core::IoError
void write_summary( const std::string& path, const RunSystems& sys, const RunOutput& out );
//! Why a system with status `s` stopped, in words (empty for success).
const char* failure_reason( ode::SolverStatus s );
//! Lists up to 10 failed systems on stderr and throws with the first failure's status and reach.
[[noreturn]] void report_failures( const RunTimes& times, const RunOutput& out );

} // namespace morula::app::ode_run

#endif
