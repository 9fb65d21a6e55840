#include "OdeCommand.hpp"
#include "Checkpointing.hpp"
#include "CliChoice.hpp"
#include "JsonOptions.hpp"
#include "MpiSession.hpp"
#include "OdeRun.hpp"

#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#if MORULA_HAVE_HDF5
#include <morula/io/detail/Hdf5Frame.hpp>
#endif
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/OdeIntegration.hpp>
#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/ReactionNetwork.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/SyntheticNetwork.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

namespace morula::app
{
namespace
{
using core::InputError;
using core::detail::concat;
using namespace ode_run;

// The options of `ode run` that name files it reads: relative to the --config file when given there.
const std::set<std::string> run_input_files{ "model", "sweep-table", "restart" };

struct GenerateArgs
{
    long species = 0;
    long reactions = 0;
    std::uint64_t seed = 1;
    std::string out;
    double t_end = 50;
    long samples = 10;
    bool force = false;
};

// Copies the solver's samples and statistics to the host and notes which systems failed, and where.
void collect( const ode::OdeResult<mem_space>& result, const RunTimes& times, long first, RunOutput& out )
{
    auto r_samples = Kokkos::create_mirror_view( result.samples );
    auto r_stats = Kokkos::create_mirror_view( result.statistics );
    Kokkos::deep_copy( r_samples, result.samples );
    Kokkos::deep_copy( r_stats, result.statistics );
    for ( long s = 0; s < out.systems; ++s )
    {
        for ( std::size_t t = 0; t < out.nsamples; ++t )
            for ( std::size_t j = 0; j < out.nsaved; ++j )
                out.sample_at( s, t, j ) = r_samples( s, t, j );
        for ( int col = 0; col < ode::stat_count; ++col )
            out.stats[std::size_t( s ) * ode::stat_count + col] = r_stats( s, col );
    }
    out.tally( times, first );
}

#if MORULA_HAVE_MPI
// Rank 0 receives every rank's part of `v` in rank (= system) order; pieces of at most 2^27 elements, so
// that no count overflows MPI's int.
template <class T>
std::vector<T> gather_in_rank_order( const std::vector<T>& mine, MPI_Datatype type )
{
    const int rank = MpiSession::rank(), ranks = MpiSession::size();
    constexpr std::size_t piece = std::size_t( 1 ) << 27;
    unsigned long long count = mine.size();
    std::vector<unsigned long long> counts( std::size_t( ranks ), 0 );
    MPI_Gather( &count, 1, MPI_UNSIGNED_LONG_LONG, counts.data(), 1, MPI_UNSIGNED_LONG_LONG, 0, MpiSession::comm() );
    std::vector<T> all;
    if ( rank != 0 )
    {
        for ( std::size_t at = 0; at < mine.size(); at += piece )
            MPI_Send( mine.data() + at, int( std::min( piece, mine.size() - at ) ), type, 0, 7, MpiSession::comm() );
        return all;
    }
    std::size_t total = 0;
    for ( unsigned long long c : counts )
        total += std::size_t( c );
    all.resize( total );
    std::copy( mine.begin(), mine.end(), all.begin() );
    std::size_t offset = mine.size();
    for ( int r = 1; r < ranks; ++r )
    {
        for ( std::size_t at = 0; at < counts[std::size_t( r )]; at += piece )
            MPI_Recv( all.data() + offset + at, int( std::min<std::size_t>( piece, counts[std::size_t( r )] - at ) ), type, r, 7,
                      MpiSession::comm(), MPI_STATUS_IGNORE );
        offset += std::size_t( counts[std::size_t( r )] );
    }
    return all;
}
#endif

// Under mpirun each rank integrated its slice of the systems: rank 0 gets them all, in system order (the
// same samples and statistics as one rank, since every system is integrated on its own), and the
// slowest rank's wall time. One rank: the output as it is.
RunOutput gather_systems( RunOutput mine, const RunSystems& sys, const RunTimes& times, double t_start )
{
    if ( MpiSession::size() == 1 )
        return mine;
#if MORULA_HAVE_MPI
    RunOutput all( MpiSession::rank() == 0 ? sys.total : 0, mine.nsamples, mine.nsaved, t_start );
    std::vector<double> samples = gather_in_rank_order( mine.samples, MPI_DOUBLE );
    std::vector<long> stats = gather_in_rank_order( mine.stats, MPI_LONG );
    MPI_Reduce( &mine.seconds, &all.seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MpiSession::comm() );
    all.rows = mine.rows;
    if ( MpiSession::rank() == 0 )
    {
        all.samples = std::move( samples );
        all.stats = std::move( stats );
        all.tally( times );
    }
    return all;
#else
    (void)sys, (void)times, (void)t_start;
    return mine;
#endif
}

// The samples are one integration (ode::OdeIntegration), which may pause after a sample: it is defined
// by the whole list of sample times, and a pause keeps every system's step size, BDF order and history,
// Jacobian and factorisation, so a run in legs is the same run bit for bit. Splitting it used to restart
// the integrator and change the samples (1.9e-6 relative on a 30-species network); now it does not, and
// the run pauses only where a checkpoint is wanted: every --checkpoint-every samples, after --stop-after
// samples, or on SIGTERM/SIGINT/SIGUSR1 at the end of the leg it is in. Without those flags the run is one
// leg, as one solver call, so a batch's systems never wait for each other at a sample.
RunOutput integrate( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net, const RunSystems& sys,
                     const ode::SolverOptions& options, const RunTimes& times, const std::vector<int>& saved,
                     bool progress, const CheckpointSchedule& schedule )
{
    const long systems = sys.count;
    exec_space exec;
    ode::MassActionSystem<mem_space> system( net );
    ode::OdeSolver<exec_space> solver( system, options );
    const Matrix x0 = initial_states( net, sys );
    const Matrix k = rate_constants( a, cmd, net, sys );
    RunOutput out( systems, times.count(), saved.size(), a.t_start );
    // With per-system end times each system gets its own row of times (ode::OdeSolver's times_type).
    ode::OdeIntegration<exec_space> run = times.per_system()
                                              ? ode::OdeIntegration<exec_space>( solver, exec, x0, k, system_sample_times( times, sys ),
                                                                                 saved, a.t_start )
                                              : ode::OdeIntegration<exec_space>( solver, exec, x0, k, times.grid, saved, a.t_start );
    const int total = run.sample_count();
    if ( schedule.restarting() )
    {
        const std::string& file = schedule.restart_file(); // an existing file (CLI::ExistingFile)
        try
        {
            io::restart_from_checkpoint( run, file );
        }
        catch ( const core::IoError& e )
        {
            // The checkpoint is this run's input: an unreadable one is bad input (exit status 2).
            throw InputError( "--restart '" + file + "': not a readable checkpoint (" + e.what() + ")" );
        }
        out.resumed_from = run.samples_done();
    }

    if ( progress )
    {
        if ( out.resumed_from >= 0 )
            std::fprintf( stderr, "ode: resuming %ld system%s of %d species after sample %d of %d (t = %g) to t = %g\n",
                          sys.total, sys.total == 1 ? "" : "s", net.species_count(), out.resumed_from, total,
                          out.resumed_from > 0 ? times.at( sys.first, std::size_t( out.resumed_from - 1 ) ) : a.t_start,
                          times.last( sys.first ) );
        else
            std::fprintf( stderr, "ode: integrating %ld system%s of %d species from t = %g to %s%s\n", sys.total,
                          sys.total == 1 ? "" : "s", net.species_count(), a.t_start,
                          times.per_system() ? "each system's t_end" : number( times.grid.back() ).c_str(),
                          MpiSession::size() > 1 ? concat( " on ", MpiSession::size(), " ranks" ).c_str() : "" );
        std::fflush( stderr );
    }
    const auto start = std::chrono::steady_clock::now();
    const long every = a.checkpoint.every;
    while ( !run.finished() )
    {
        long stop = total;
        if ( every > 0 )
            stop = std::min<long>( stop, ( run.samples_done() / every + 1 ) * every );
        if ( a.stop_after > run.samples_done() )
            stop = std::min( stop, a.stop_after );
        run.advance_to( exec, static_cast<int>( stop ) );
        const long done = run.samples_done();
        const bool stop_here = ( done == a.stop_after || CheckpointSchedule::stop_requested() ) && done < total;
        if ( schedule.due( done, total ) || stop_here )
        {
            io::write_checkpoint( run, schedule.file() );
            if ( stop_here )
            {
                out.stopped = true;
                break;
            }
        }
    }
    exec.fence();
    out.seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count();
    out.rows = static_cast<std::size_t>( run.samples_done() );
    collect( run.result( exec ), times, sys.first, out );
    return out;
}

int run_ode( const RunArgs& a, const CLI::App& cmd )
{
    // Everything is checked before the integration starts: model, times, species, sweep, options, outputs.
    const ode::ReactionNetwork net = ode::read_model( a.model );
    require( a.batch >= 1, "--batch", double( a.batch ), "a number of systems >= 1" );
    if ( given( cmd, "--vary" ) )
        require( std::isfinite( a.vary ) && a.vary >= 0 && a.vary <= 1, "--vary", a.vary,
                 "a fraction in [0, 1] (factors uniform in [1-F, 1+F])" );
    require( std::isfinite( a.t_start ), "--t-start", a.t_start, "a finite time" );
    const std::vector<double> grid = sample_times( a, cmd, net );
    const std::vector<int> saved = saved_species( a, cmd, net );
    const int rank = MpiSession::rank(), ranks = MpiSession::size();
    const bool root = rank == 0; // the one that writes files and prints
    const RunSystems sys = run_systems( a, cmd, net, grid.size(), saved.size(), rank, ranks );
    const RunTimes times = run_times( a, grid, sys );
    if ( ranks > 1 )
    {
        if ( sys.total < ranks )
            throw InputError( concat( "mpirun -n ", ranks, ": the run has ", sys.total, " system",
                                      sys.total == 1 ? "" : "s", "; expected at least one per rank" ) );
        if ( given( cmd, "--checkpoint-every" ) || given( cmd, "--restart" ) || given( cmd, "--stop-after" ) )
            throw InputError( "--checkpoint-every, --restart and --stop-after: not supported under mpirun (the ranks' "
                              "systems would need one checkpoint each); run the sweep on one rank to checkpoint it" );
    }
    const ode::SolverOptions options = solver_options( a, cmd, net, sys.total );
    const bool hdf5_out = is_hdf5_path( a.out );
    if ( hdf5_out && !MORULA_HAVE_HDF5 )
        throw InputError( "--out '" + a.out + "': this morula was built without HDF5; expected a .csv file" );
    std::ofstream csv = root && !hdf5_out ? open_csv( a.out ) : std::ofstream();
#if MORULA_HAVE_HDF5
    if ( root && hdf5_out )
        io::detail::create_hdf5_file( a.out, "", "ODE results file" ); // fails now, not after the work
#endif
    const bool progress = root && !a.no_progress && ( a.progress || isatty( 2 ) );

    require( a.stop_after >= 0, "--stop-after", double( a.stop_after ), "a number of samples >= 0" );
    const CheckpointSchedule schedule( a.checkpoint, checkpoint_prefix( a.out ) );

    const RunOutput out = gather_systems( integrate( a, cmd, net, sys, options, times, saved, progress, schedule ), sys,
                                          times, a.t_start );
    if ( !root )
        return 0;

    if ( csv.is_open() )
        write_csv( csv, a.out, sys.batch_output, net, times, saved, out );
    if ( hdf5_out )
        write_hdf5( a.out, net, times, saved, sys, out );
    if ( out.stopped )
    {
        std::printf( "ode: stopped after sample %zu of %zu (t = %s); checkpoint written to %s (resume with --restart)\n",
                     out.rows, times.count(), out.rows > 0 ? number( times.at( 0, out.rows - 1 ) ).c_str() : "start",
                     schedule.file().c_str() );
        if ( csv.is_open() || !a.out.empty() )
            std::printf( "samples so far: %s\n", a.out.c_str() );
        std::fflush( stdout );
        schedule.stop_if_requested(); // a signal: exit status 3
        return 0;
    }
    if ( !a.summary.empty() )
        write_summary( a.summary, sys, out );
    print_summary( a, times, out );
    if ( a.stats )
        print_statistics( out );
    if ( csv.is_open() || !a.out.empty() )
        std::printf( "samples: %s\n", a.out.c_str() );
    if ( !a.summary.empty() )
        std::printf( "systems: %s\n", a.summary.c_str() );
    if ( !a.plot.empty() )
        write_plot( a, net, times, saved, out );
    if ( out.failures > 0 && !( a.allow_failures && out.failures < out.systems ) )
        report_failures( times, out );
    if ( out.failures > 0 )
        std::printf( "ode: %ld of %ld systems failed (--allow-failures; statuses in %s)\n", out.failures, out.systems,
                     a.summary.empty() ? "the summary above" : a.summary.c_str() );
    return 0;
}

void generate_model( const GenerateArgs& a )
{
    namespace fs = std::filesystem;
    require( a.species >= 1 && a.species <= 100000000, "--species", double( a.species ), "a count >= 1" );
    require( a.reactions >= 0 && a.reactions <= 1000000000, "--reactions", double( a.reactions ), "a count >= 0" );
    require( std::isfinite( a.t_end ) && a.t_end > 0, "--t-end", a.t_end, "a time > 0" );
    require( a.samples >= 2, "--samples", double( a.samples ), "at least 2 (times 0 to --t-end, both included)" );
    std::error_code ec;
    const auto status = fs::status( a.out, ec );
    if ( fs::exists( status ) )
    {
        if ( !fs::is_directory( status ) )
            throw InputError( "--out '" + a.out + "' is a file; expected a folder for the model" );
        if ( !fs::is_empty( a.out, ec ) && !a.force )
            throw InputError( "--out '" + a.out + "' is not empty; give --force to write the model files into it" );
    }
    ode::ReactionNetwork net = ode::generate_synthetic_network( int( a.species ), int( a.reactions ), a.seed );
    net.settings.sample_times = even_times( 0, a.t_end, a.samples );
    ode::write_folder_model( net, a.out );
    std::printf( "ode: wrote %s (%ld species, %ld reactions, %ld sample times from 0 to %g) to %s\n",
                 net.source.c_str(), a.species, a.reactions, a.samples, a.t_end, a.out.c_str() );
}
} // namespace

void add_ode_command( CLI::App& app )
{
    CLI::App* ode_cmd = app.add_subcommand(
        "ode", "Mass-action reaction networks (LASSIE folder, SBML, text): integrate with RKF45/BDF, generate" );
    ode_cmd->require_subcommand( 1 );

    auto r = std::make_shared<RunArgs>();
    CLI::App* run = ode_cmd->add_subcommand( "run", "Integrate a model and write the trajectories (docs/models/ode-app.md)" );
    run->add_option( "model", r->model, "LASSIE/cupSODA folder, SBML file (.xml/.sbml) or text model (or 'model' in --config)" );
    run->add_option( "--config", r->config,
                     "JSON file of this command's options: keys are the options without dashes (\"t_end\": 1e5, "
                     "\"sweep\": [\"k3=log:1e-2:1e4:64\"], \"model\": \"robertson.txt\", relative to the file); the command line wins" )
        ->check( CLI::ExistingFile );
    run->add_option( "--out", r->out, "CSV file of the samples (time, then one column per saved species)" );
    run->add_option( "--t-start", r->t_start, "Start time (default 0)" );
    run->add_option( "--t-end", r->t_end, "Last sample time (with --samples; default: the model's sample times)" );
    run->add_option( "--samples", r->samples, "Number of evenly spaced sample times, t-start to t-end inclusive (>= 2)" );
    run->add_option( "--rtol", r->rtol, "Relative tolerance (default the model's, else 1e-6)" );
    run->add_option( "--atol", r->atol, "Absolute tolerance, one value for all species (default the model's, else 1e-12)" );
    run->add_option( "--method", r->method,
                     "auto (RKF45 while not stiff, Rodas5P or BDF while stiff: --stiff-method), rkf45, bdf, or a "
                     "Rosenbrock method (in registers for networks of up to 8 species and 16 reactions, batched; the "
                     "general path beyond and with --mode fine): rodas5p (order 5), rodas4, rosenbrock23 (loose tolerances)" )
        ->transform( cli_choice<ode::Method>( { { "auto", ode::Method::automatic },
                                                { "rkf45", ode::Method::rkf45 },
                                                { "bdf", ode::Method::bdf },
                                                { "rodas5p", ode::Method::rodas5p },
                                                { "rodas4", ode::Method::rodas4 },
                                                { "rosenbrock23", ode::Method::rosenbrock23 } } ) );
    run->add_option( "--stiff-method", r->stiff_method,
                     "What --method auto uses while stiff: auto (default: Rodas5P in registers for networks of up to 4 "
                     "species and 8 reactions, and up to 8 and 16 at --rtol <= 1e-6; on the general path up to 30 "
                     "species at --rtol <= 1e-6; in the batched mode; BDF otherwise), bdf, or rodas5p" )
        ->transform( cli_choice<ode::Method>(
            { { "auto", ode::Method::automatic }, { "bdf", ode::Method::bdf }, { "rodas5p", ode::Method::rodas5p } } ) );
    run->add_option( "--precision", r->precision,
                     "double (default) or single: float state and matrices, time and error norm in double "
                     "(Rosenbrock methods only)" )
        ->transform( cli_choice<ode::Precision>(
            { { "double", ode::Precision::double_precision }, { "single", ode::Precision::single_precision } } ) );
    run->add_option( "--norm", r->norm, "Error norm: mixed (atol + rtol |x|) or paper (LASSIE's per-unit-time rule)" )
        ->transform( cli_choice<ode::ErrorNorm>( { { "mixed", ode::ErrorNorm::mixed }, { "paper", ode::ErrorNorm::paper } } ) );
    run->add_flag( "--paper", r->paper, "LASSIE's published settings (paper norm, eps 1e-12, fixed-step BDF1 h = 0.1, "
                                        "Newton tol 1e-6); later options override them" );
    run->add_option( "--bdf-order", r->bdf_order, "Highest BDF order, 1 to 5 (default 5)" );
    run->add_option( "--bdf-step", r->bdf_step, "Fixed BDF step (first order, no error test); needs --newton-tol" );
    run->add_option( "--newton-tol", r->newton_tol, "Newton stopping tolerance of the fixed-step BDF" );
    run->add_option( "--eps-s", r->eps_s, "Stiffness threshold: a rejected RKF45 step below it switches to the stiff method (default 1e-6)" );
    run->add_option( "--initial-step", r->initial_step, "First step (default 1e-3)" );
    run->add_option( "--linear", r->linear, "BDF linear solver: auto, dense, kokkos-batched or sparse" )
        ->transform( cli_choice<ode::LinearSolver>( { { "auto", ode::LinearSolver::automatic },
                                                      { "dense", ode::LinearSolver::dense_lu },
                                                      { "kokkos-batched", ode::LinearSolver::kokkos_batched },
                                                      { "sparse", ode::LinearSolver::sparse_iterative } } ) );
    run->add_option( "--mode", r->mode, "fine (one system per team; default for one system), device (one system over the whole device, "
                                          "one kernel per RKF45 stage) or batched (one system per thread)" )
        ->transform( cli_choice<ode::ExecutionMode>( { { "fine", ode::ExecutionMode::fine_grained },
                                                       { "device", ode::ExecutionMode::device_wide },
                                                       { "batched", ode::ExecutionMode::batched } } ) );
    run->add_option( "--layout", r->layout,
                     "Batched mode, general path: where each system's arrays live: auto (default: on-chip on CPUs, and "
                     "on GPUs from 20 species while they fit; else interleaved), interleaved (device memory, one thread per system) "
                     "or on-chip (team scratch memory, a system's loops over vector lanes)" )
        ->transform( cli_choice<ode::BatchedLayout>( { { "auto", ode::BatchedLayout::automatic },
                                                       { "interleaved", ode::BatchedLayout::interleaved },
                                                       { "on-chip", ode::BatchedLayout::on_chip } } ) );
    run->add_option( "--sample-output", r->sample_output,
                     "Rosenbrock methods: dense (steps pass sample times, which take the method's interpolant), steps "
                     "(a step that would pass a sample ends on it) or auto (default: dense, except with one method in "
                     "double precision below 16 samples on a GPU; where nonnegativity is enforced, as in single "
                     "precision, an interpolated value below 0 is recorded as 0)" )
        ->transform( cli_choice<ode::SampleOutput>( { { "auto", ode::SampleOutput::automatic },
                                                      { "dense", ode::SampleOutput::dense },
                                                      { "steps", ode::SampleOutput::step_to_sample } } ) );
    run->add_option( "--team-size", r->team_size, "Threads per team in fine mode (default: chosen by the solver)" );
    run->add_option( "--max-steps", r->max_steps, "Accepted + rejected steps per system before giving up (default 1e7)" );
    run->add_option( "--save", r->save, "Species to write, by name: A,B,C (default the model's saved species, else all)" );
    run->add_option( "--batch", r->batch, "Integrate N copies (batched mode); the CSV gets a first column 'system'" );
    run->add_option( "--vary", r->vary, "With --batch: multiply each copy's rate constants by factors uniform in [1-F, 1+F]" );
    run->add_option( "--seed", r->seed, "Seed of --vary's std::mt19937_64 (default 1)" );
    run->add_option( "--sweep-table", r->sweep_table,
                     "CSV of a parameter sweep: a header of species (initial values) and reactions (rate constants: "
                     "R<i> or the reaction's name), then one row per system" )
        ->check( CLI::ExistingFile );
    run->add_option( "--sweep", r->sweep_ranges,
                     "A swept quantity, NAME=SPACING:LOW:HIGH[:POINTS] with SPACING linear, log (grids, combined as a "
                     "product), uniform or log-uniform (one draw per system, --seed); repeatable" )
        ->allow_extra_args( false ); // one range per --sweep, so that the model after it stays the model
    run->add_option( "--summary", r->summary,
                     "CSV with one row per system: status, reason of a failure, last sample reached, steps, swept values" );
    run->add_flag( "--allow-failures", r->allow_failures,
                   "Exit 0 when some (not all) systems of a batch fail; their statuses go to the summary" );
    run->add_option( "--plot", r->plot, "PNG plot of the saved species against time (system 0)" );
    run->add_flag( "--stats", r->stats, "Print the solver's statistics (min/median/max over a batch)" );
    run->add_flag( "--progress", r->progress, "Say on stderr when the integration starts, even when stderr is not a "
                                              "terminal" );
    add_checkpoint_flags( *run, r->checkpoint );
    run->add_option( "--stop-after", r->stop_after,
                     "Stop after this many samples with a checkpoint (and the CSV rows so far); resume with --restart. "
                     "--checkpoint-every also counts samples (rows of the CSV), not solver steps" );
    run->add_flag( "--no-progress", r->no_progress, "No progress line, even on a terminal" );
    run->callback( [r, run] {
        if ( !r->config.empty() )
            apply_json_options( *run, r->config, run_input_files );
        if ( r->model.empty() )
            throw InputError( "morula ode run: no model: give a model file or folder on the command line or as 'model' in --config" );
        run_ode( *r, *run );
    } );

    auto g = std::make_shared<GenerateArgs>();
    CLI::App* gen = ode_cmd->add_subcommand( "generate", "Write a random LASSIE-style network as a LASSIE folder" );
    gen->add_option( "--species", g->species, "Number of species (>= 1)" )->required();
    gen->add_option( "--reactions", g->reactions, "Number of reactions (>= 0)" )->required();
    gen->add_option( "--seed", g->seed, "Seed of the generator (default 1)" );
    gen->add_option( "--out", g->out, "Folder to write (created if needed)" )->required();
    gen->add_option( "--t-end", g->t_end, "Last sample time written to t_vector (default 50)" );
    gen->add_option( "--samples", g->samples, "Number of sample times from 0 to --t-end (default 10)" );
    gen->add_flag( "--force", g->force, "Write into a non-empty folder" );
    gen->callback( [g] { generate_model( *g ); } );
}

void check_ode_run_config( const std::string& path )
{
    CLI::App app( "morula" );
    add_ode_command( app );
    CLI::App* run = app.get_subcommand( "ode" )->get_subcommand( "run" );
    apply_json_options( *run, path, run_input_files );
}

} // namespace morula::app
