#include "OdeCommand.hpp"
#include "Checkpointing.hpp"
#include "CliChoice.hpp"
#include "MsdPlot.hpp"

#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
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
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace morula::app
{
namespace
{
using core::InputError;
using core::detail::concat;

// Every option of `morula ode run` as given; `given()` tells which ones were on the command line, so
// the model file's settings apply only where the command line is silent.
struct RunArgs
{
    std::string model;
    std::string out;
    std::string plot;
    std::string save;
    ode::Method method = ode::Method::automatic;
    ode::ErrorNorm norm = ode::ErrorNorm::mixed;
    ode::LinearSolver linear = ode::LinearSolver::automatic;
    ode::ExecutionMode mode = ode::ExecutionMode::fine_grained;
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
    bool paper = false;
    bool stats = false;
    bool progress = false;
    bool no_progress = false;
    CheckpointFlags checkpoint;
    long stop_after = 0; // --stop-after: samples after which the run checkpoints and stops (0: none)
};

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

// In the order of ode::StatisticsColumn.
const char* const statistic_names[ode::stat_count] = {
    "status",            "steps",           "rejected",  "RKF45 steps",    "BDF steps",       "switches to BDF",
    "switches to RKF45", "Newton iterations", "Jacobians", "factorisations", "RHS evaluations", "BiCGStab iterations" };

// `v` as %g writes it, with more digits only where needed to read back exactly: "--bdf-step 0.1", not
// 0.10000000000000001.
std::string number( double v )
{
    char text[32];
    for ( int digits = 6; digits <= 17; ++digits )
    {
        std::snprintf( text, sizeof text, "%.*g", digits, v );
        if ( std::strtod( text, nullptr ) == v )
            break;
    }
    return text;
}

std::string species_list( const ode::ReactionNetwork& net )
{
    std::string s;
    const int shown = std::min( net.species_count(), 20 );
    for ( int i = 0; i < shown; ++i )
        s += ( i ? ", " : "" ) + net.species_names[i];
    if ( net.species_count() > shown )
        s += concat( ", ... (", net.species_count(), " species)" );
    return s;
}

// Names separated by commas (spaces around them are ignored) -> species indices, in the order given.
std::vector<int> parse_saved_species( const std::string& list, const ode::ReactionNetwork& net )
{
    std::vector<int> saved;
    std::size_t begin = 0;
    while ( begin <= list.size() )
    {
        std::size_t end = list.find( ',', begin );
        if ( end == std::string::npos )
            end = list.size();
        std::string name = list.substr( begin, end - begin );
        const auto first = name.find_first_not_of( " \t" );
        name = first == std::string::npos ? "" : name.substr( first, name.find_last_not_of( " \t" ) - first + 1 );
        if ( name.empty() )
            throw InputError( concat( "--save '", list, "': an empty species name; expected names separated by commas" ) );
        const auto it = std::find( net.species_names.begin(), net.species_names.end(), name );
        if ( it == net.species_names.end() )
            throw InputError( concat( "--save: unknown species '", name, "'; the model '", net.source, "' has ",
                                      species_list( net ) ) );
        const int index = int( it - net.species_names.begin() );
        if ( std::find( saved.begin(), saved.end(), index ) != saved.end() )
            throw InputError( concat( "--save: species '", name, "' is listed twice" ) );
        saved.push_back( index );
        begin = end + 1;
    }
    return saved;
}

std::vector<double> even_times( double first, double last, long count )
{
    std::vector<double> t( static_cast<std::size_t>( count ) );
    for ( long i = 0; i < count; ++i )
        t[std::size_t( i )] = first + ( last - first ) * double( i ) / double( count - 1 );
    t.back() = last; // exactly, whatever the rounding of the line above
    return t;
}

// Checks an option that was given; the message names the option and the accepted range.
void require( bool ok, const char* option, double value, const char* expected )
{
    if ( !ok )
        throw InputError( concat( option, " ", number( value ), ": expected ", expected ) );
}

//! One system with at least this many species runs in the device-wide mode unless --mode says otherwise.
constexpr int device_wide_species = 4096;

//! Whether the option was on the command line.
bool given( const CLI::App& cmd, const char* name ) { return cmd.count( name ) > 0; }

ode::SolverOptions solver_options( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net, long systems )
{
    // Precedence: Morula's defaults (or --paper), then the model file's tolerances, then the command line.
    ode::SolverOptions o = a.paper ? ode::SolverOptions::paper() : ode::SolverOptions();
    if ( net.settings.relative_tolerance )
        o.relative_tolerance = *net.settings.relative_tolerance;
    if ( !net.settings.absolute_tolerances.empty() )
        o.absolute_tolerance = net.settings.absolute_tolerances;
    if ( given( cmd, "--rtol" ) )
    {
        require( std::isfinite( a.rtol ) && a.rtol >= 0 && a.rtol < 1, "--rtol", a.rtol, "a value in [0, 1)" );
        o.relative_tolerance = a.rtol;
    }
    if ( given( cmd, "--atol" ) )
    {
        require( std::isfinite( a.atol ) && a.atol >= 0, "--atol", a.atol, "a finite value >= 0" );
        o.absolute_tolerance = { a.atol };
    }
    if ( given( cmd, "--method" ) )
        o.method = a.method;
    if ( given( cmd, "--norm" ) )
        o.error_norm = a.norm;
    if ( given( cmd, "--bdf-order" ) )
    {
        require( a.bdf_order >= 1 && a.bdf_order <= 5, "--bdf-order", double( a.bdf_order ), "an order from 1 to 5" );
        o.bdf_max_order = int( a.bdf_order );
    }
    if ( given( cmd, "--newton-tol" ) )
    {
        require( std::isfinite( a.newton_tol ) && a.newton_tol > 0, "--newton-tol", a.newton_tol, "a value > 0" );
        o.newton_tolerance = a.newton_tol;
    }
    if ( given( cmd, "--bdf-step" ) )
    {
        require( std::isfinite( a.bdf_step ) && a.bdf_step > 0, "--bdf-step", a.bdf_step,
                 "a step > 0 (the fixed-step BDF)" );
        if ( !( o.newton_tolerance > 0 ) )
            throw InputError( concat( "--bdf-step ", number( a.bdf_step ), " needs --newton-tol (the fixed-step BDF stops "
                                      "Newton when max |dy| is below it; LASSIE uses 1e-6)" ) );
        o.bdf_fixed_step = a.bdf_step;
    }
    if ( given( cmd, "--eps-s" ) )
    {
        require( std::isfinite( a.eps_s ) && a.eps_s >= 0, "--eps-s", a.eps_s, "a finite value >= 0" );
        o.stiffness_threshold = a.eps_s;
    }
    if ( given( cmd, "--initial-step" ) )
    {
        require( std::isfinite( a.initial_step ) && a.initial_step > 0, "--initial-step", a.initial_step, "a step > 0" );
        o.initial_step = a.initial_step;
    }
    if ( given( cmd, "--linear" ) )
        o.linear_solver = a.linear;
    // A batch maps one copy to one thread. One system: a team up to 2048 species, the whole device
    // (one kernel per stage) from 4096 up - the crossover measured on the H100 (docs/performance.md).
    o.mode = systems > 1 ? ode::ExecutionMode::batched
                         : ( net.species_count() >= device_wide_species ? ode::ExecutionMode::device_wide
                                                                        : ode::ExecutionMode::fine_grained );
    if ( given( cmd, "--mode" ) )
    {
        if ( a.mode == ode::ExecutionMode::device_wide && systems > 1 )
            throw InputError( concat( "--mode device integrates one system; --batch is ", systems,
                                      " (use --mode batched or fine)" ) );
        o.mode = a.mode;
    }
    if ( o.linear_solver == ode::LinearSolver::sparse_iterative && o.mode == ode::ExecutionMode::batched )
        throw InputError( "--linear sparse needs --mode fine or device" );
    if ( given( cmd, "--team-size" ) )
    {
        require( a.team_size >= 1 && a.team_size <= 1 << 20, "--team-size", double( a.team_size ), "a size >= 1" );
        o.team_size = int( a.team_size );
    }
    if ( given( cmd, "--max-steps" ) )
    {
        require( a.max_steps >= 1, "--max-steps", double( a.max_steps ), "a count >= 1" );
        o.max_steps = a.max_steps;
    }
    o.validate( net.species_count() );
    return o;
}

// min, median (the mean of the middle two for an even count) and max of one counter over the systems.
struct Spread
{
    long min = 0, max = 0;
    double median = 0;
};

Spread spread( std::vector<long> v )
{
    Spread s;
    if ( v.empty() )
        return s;
    std::sort( v.begin(), v.end() );
    s.min = v.front();
    s.max = v.back();
    const std::size_t n = v.size();
    s.median = n % 2 ? double( v[n / 2] ) : 0.5 * ( double( v[n / 2 - 1] ) + double( v[n / 2] ) );
    return s;
}

using exec_space = Kokkos::DefaultExecutionSpace;
using mem_space = exec_space::memory_space;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, mem_space>;

double host_memory_bytes()
{
    return double( sysconf( _SC_PHYS_PAGES ) ) * double( sysconf( _SC_PAGE_SIZE ) );
}

// The sample times alone, and one saved species of one system kept twice (the solver's and the CSV's),
// take 24 bytes per sample: a count beyond the host's memory is refused before anything is allocated
// (it ended in std::bad_alloc, issue #46). refuse_batch_beyond_memory() checks the whole run later.
void refuse_samples_beyond_memory( long samples )
{
    const double need = 24.0 * double( samples );
    const double host = host_memory_bytes();
    if ( host > 0 && need > host )
    {
        char figures[96];
        std::snprintf( figures, sizeof( figures ), "%.3g GB, more than this machine's %.3g GB", need / 1e9, host / 1e9 );
        throw InputError( concat( "--samples ", samples, ": the sample times and one species' values need at least ",
                                  figures, " of memory" ) );
    }
}

// --t-start to --t-end in --samples evenly spaced times, else the model's own sample times.
std::vector<double> sample_times( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net )
{
    std::vector<double> times;
    if ( given( cmd, "--t-end" ) || given( cmd, "--samples" ) )
    {
        if ( !given( cmd, "--t-end" ) )
            throw InputError( "--samples needs --t-end (the last sample time)" );
        if ( !given( cmd, "--samples" ) )
            throw InputError( "--t-end needs --samples (the number of sample times, >= 2)" );
        if ( a.samples < 2 )
            throw InputError( concat( "--samples ", a.samples, ": expected at least 2 (evenly spaced times from "
                                      "--t-start to --t-end, both included)" ) );
        if ( !( std::isfinite( a.t_end ) && a.t_end > a.t_start ) )
            throw InputError( concat( "--t-end ", number( a.t_end ), ": expected a finite time after --t-start (",
                                      number( a.t_start ), ")" ) );
        refuse_samples_beyond_memory( a.samples );
        times = even_times( a.t_start, a.t_end, a.samples );
    }
    else if ( !net.settings.sample_times.empty() )
    {
        times = net.settings.sample_times;
        if ( times.front() < a.t_start )
            throw InputError( concat( "--t-start ", number( a.t_start ), ": the model '", net.source, "' samples at t = ",
                                      times.front(), ", before it; expected --t-start <= the first sample time" ) );
    }
    else
        throw InputError( concat( "model '", net.source, "' has no sample times; give --t-end T and --samples S" ) );
    return times;
}

// --save's species, else the model's saved species, else all of them.
std::vector<int> saved_species( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net )
{
    std::vector<int> saved;
    if ( given( cmd, "--save" ) )
        saved = parse_saved_species( a.save, net );
    else if ( !net.settings.saved_species.empty() )
        saved = net.settings.saved_species;
    else
        for ( int i = 0; i < net.species_count(); ++i )
            saved.push_back( i );
    return saved;
}

// What the run keeps on the host and on the device at least (the samples of every system, twice: the
// solver's and the CSV's; states, rate constants, statistics) against the host's memory: a batch far
// beyond it is refused here with the figures, not by an allocation failing inside Kokkos.
void refuse_batch_beyond_memory( long systems, std::size_t nsamples, std::size_t nsaved, int n, int m )
{
    const double per_system = 8.0 * ( 2.0 * double( nsamples ) * double( nsaved ) + 2.0 * n + m + ode::stat_count );
    const double need = per_system * double( systems );
    const double host = host_memory_bytes();
    if ( host > 0 && need > host )
    {
        char figures[160];
        std::snprintf( figures, sizeof( figures ), "at least %.3g GB (%.0f bytes per system", need / 1e9, per_system );
        char memory[64];
        std::snprintf( memory, sizeof( memory ), "%.3g GB", host / 1e9 );
        throw InputError( concat( "--batch ", systems, ": the run needs ", figures, ": ", nsamples, " samples of ",
                                  nsaved, " species, twice, with states and rate constants), more than this "
                                  "machine's ", memory, " of memory" ) );
    }
}

std::ofstream open_csv( const std::string& path )
{
    std::ofstream csv;
    if ( !path.empty() )
    {
        csv.open( path );
        if ( !csv )
            throw core::IoError( "--out: cannot write '" + path + "'" );
    }
    return csv;
}

// Every system starts from the model's initial state.
Matrix initial_states( const ode::ReactionNetwork& net, long systems )
{
    const int n = net.species_count();
    Matrix x0( "morula::app::ode::x0", systems, n );
    auto x0_host = Kokkos::create_mirror_view( x0 );
    for ( long s = 0; s < systems; ++s )
        for ( int i = 0; i < n; ++i )
            x0_host( s, i ) = net.initial_state[std::size_t( i )];
    Kokkos::deep_copy( x0, x0_host );
    return x0;
}

// With --vary, each system's rate constants times random factors; else empty (the model's constants).
Matrix rate_constants( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net, long systems )
{
    Matrix k;
    if ( !given( cmd, "--vary" ) )
        return k;
    const int m = net.reaction_count();
    k = Matrix( "morula::app::ode::k", systems, m );
    auto k_host = Kokkos::create_mirror_view( k );
    // Factors 1 - F + 2F u, u = the top 53 bits of mt19937_64 / 2^53, drawn system by system and
    // reaction by reaction: the same seed gives the same constants with every standard library.
    std::mt19937_64 rng( a.seed );
    for ( long s = 0; s < systems; ++s )
        for ( int r = 0; r < m; ++r )
        {
            const double factor = 1 - a.vary + 2 * a.vary * double( rng() >> 11 ) * 0x1.0p-53;
            k_host( s, r ) = net.reactions[std::size_t( r )].rate_constant * factor;
        }
    Kokkos::deep_copy( k, k_host );
    return k;
}

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

// Copies the solver's samples and statistics to the host and notes which systems failed, and where.
void collect( const ode::OdeResult<mem_space>& result, const std::vector<double>& times, RunOutput& out )
{
    auto r_samples = Kokkos::create_mirror_view( result.samples );
    auto r_stats = Kokkos::create_mirror_view( result.statistics );
    Kokkos::deep_copy( r_samples, result.samples );
    Kokkos::deep_copy( r_stats, result.statistics );
    for ( long s = 0; s < out.systems; ++s )
    {
        for ( std::size_t t = 0; t < out.nsamples; ++t )
        {
            bool any = false;
            for ( std::size_t j = 0; j < out.nsaved; ++j )
            {
                const double v = r_samples( s, t, j );
                out.sample_at( s, t, j ) = v;
                any = any || !std::isnan( v );
            }
            if ( any )
                out.reached[std::size_t( s )] = times[t], out.reached_any[std::size_t( s )] = true;
        }
        for ( int col = 0; col < ode::stat_count; ++col )
            out.stats[std::size_t( s ) * ode::stat_count + col] = r_stats( s, col );
        if ( r_stats( s, ode::stat_status ) != long( ode::SolverStatus::success ) )
        {
            out.failed[std::size_t( s )] = true;
            ++out.failures;
        }
    }
}

// The samples are one integration (ode::OdeIntegration), which may pause after a sample: it is defined
// by the whole list of sample times, and a pause keeps every system's step size, BDF order and history,
// Jacobian and factorisation, so a run in legs is the same run bit for bit. Splitting it used to restart
// the integrator and change the samples (1.9e-6 relative on a 30-species network); now it does not, and
// the run pauses only where a checkpoint is wanted: every --checkpoint-every samples, after --stop-after
// samples, or on SIGTERM/SIGINT/SIGUSR1 at the end of the leg it is in. Without those flags the run is one
// leg, as one solver call, so a batch's systems never wait for each other at a sample.
RunOutput integrate( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net,
                     const ode::SolverOptions& options, const std::vector<double>& times, const std::vector<int>& saved,
                     bool progress, const CheckpointSchedule& schedule )
{
    const long systems = a.batch;
    exec_space exec;
    ode::MassActionSystem<mem_space> system( net );
    ode::OdeSolver<exec_space> solver( system, options );
    const Matrix x0 = initial_states( net, systems );
    const Matrix k = rate_constants( a, cmd, net, systems );
    RunOutput out( systems, times.size(), saved.size(), a.t_start );
    ode::OdeIntegration<exec_space> run( solver, exec, x0, k, times, saved, a.t_start );
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
                          systems, systems == 1 ? "" : "s", net.species_count(), out.resumed_from, total,
                          out.resumed_from > 0 ? times[std::size_t( out.resumed_from - 1 )] : a.t_start, times.back() );
        else
            std::fprintf( stderr, "ode: integrating %ld system%s of %d species from t = %g to %g\n", systems,
                          systems == 1 ? "" : "s", net.species_count(), a.t_start, times.back() );
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
        run.advance( exec, static_cast<int>( stop ) );
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
    collect( run.result( exec ), times, out );
    return out;
}

// time, then one column per saved species; with --batch a first column 'system'; the samples filled
// (all, unless the run stopped after a checkpoint: then the rows up to it). Closes the file.
void write_csv( std::ofstream& csv, const std::string& path, bool batch_output, const ode::ReactionNetwork& net,
                const std::vector<double>& times, const std::vector<int>& saved, const RunOutput& out )
{
    csv.precision( 17 );
    if ( batch_output )
        csv << "system,";
    csv << "time";
    for ( int j : saved )
        csv << ',' << net.species_names[std::size_t( j )];
    csv << '\n';
    for ( long s = 0; s < out.systems; ++s )
        for ( std::size_t t = 0; t < out.rows; ++t )
        {
            if ( batch_output )
                csv << s << ',';
            csv << times[t];
            for ( std::size_t j = 0; j < out.nsaved; ++j )
                csv << ',' << out.sample_at( s, t, j );
            csv << '\n';
        }
    csv.close();
    if ( !csv )
        throw core::IoError( "--out: writing '" + path + "' failed" );
}

// One line: status, time span, steps and switches (min / median / max over a batch), wall time.
void print_summary( const RunArgs& a, const std::vector<double>& times, const RunOutput& out )
{
    if ( out.systems == 1 )
    {
        const auto stat = [&]( int col ) { return out.stat( 0, col ); };
        std::printf( "ode: %s, t = %g to %g, %zu samples, %ld steps (%ld rejected), switches %ld to BDF / %ld to "
                     "RKF45, %.4g s\n",
                     out.status_name( 0 ), a.t_start, times.back(), out.nsamples, stat( ode::stat_steps ),
                     stat( ode::stat_rejected ), stat( ode::stat_switches_to_bdf ), stat( ode::stat_switches_to_rkf ),
                     out.seconds );
        return;
    }
    const Spread steps = spread( out.column( ode::stat_steps ) );
    long to_bdf = 0, to_rkf = 0;
    for ( long v : out.column( ode::stat_switches_to_bdf ) )
        to_bdf += v;
    for ( long v : out.column( ode::stat_switches_to_rkf ) )
        to_rkf += v;
    std::printf( "ode: %ld systems: %ld success, %ld failed, t = %g to %g, %zu samples, steps min %ld / median "
                 "%g / max %ld, switches %ld to BDF / %ld to RKF45 in all, %.4g s\n",
                 out.systems, out.systems - out.failures, out.failures, a.t_start, times.back(), out.nsamples,
                 steps.min, steps.median, steps.max, to_bdf, to_rkf, out.seconds );
}

// --stats: every counter of one system, or statuses and min / median / max of each counter over a batch.
void print_statistics( const RunOutput& out )
{
    if ( out.systems == 1 )
    {
        std::printf( "statistics:\n  %-20s %s\n", statistic_names[0], out.status_name( 0 ) );
        for ( int col = 1; col < ode::stat_count; ++col )
            std::printf( "  %-20s %ld\n", statistic_names[col], out.stat( 0, col ) );
        return;
    }
    std::vector<long> by_status( 6, 0 );
    for ( long s = 0; s < out.systems; ++s )
        ++by_status[std::size_t( std::clamp( out.stat( s, 0 ), 0L, 5L ) )];
    std::printf( "statistics over %ld systems:\n  %-20s", out.systems, "status" );
    for ( int st = 0; st < 6; ++st )
        if ( by_status[std::size_t( st )] )
            std::printf( " %s %ld", ode::to_string( ode::SolverStatus( st ) ), by_status[std::size_t( st )] );
    std::printf( "\n  %-20s %12s %12s %12s\n", "", "min", "median", "max" );
    for ( int col = 1; col < ode::stat_count; ++col )
    {
        const Spread sp = spread( out.column( col ) );
        std::printf( "  %-20s %12ld %12g %12ld\n", statistic_names[col], sp.min, sp.median, sp.max );
    }
}

// --plot: the saved species of system 0 against time.
void write_plot( const RunArgs& a, const ode::ReactionNetwork& net, const std::vector<double>& times,
                 const std::vector<int>& saved, const RunOutput& out )
{
    std::vector<PlotSeries> series( out.nsaved );
    for ( std::size_t j = 0; j < out.nsaved; ++j )
    {
        series[j].name = net.species_names[std::size_t( saved[j] )];
        for ( std::size_t t = 0; t < out.nsamples; ++t )
            series[j].points.emplace_back( times[t], out.sample_at( 0, t, j ) );
    }
    PlotAxes axes;
    axes.title = concat( std::filesystem::path( a.model ).filename().string(), ": ", net.species_count(), " species, ",
                         net.reaction_count(), " reactions",
                         out.systems > 1 ? concat( ", system 0 of ", out.systems ) : std::string() );
    axes.x_label = "time";
    axes.y_label = "concentration";
    if ( write_line_plot( a.plot, axes, series ) )
        std::printf( "plot: %s\n", a.plot.c_str() );
    else
        std::printf( "plot skipped: this morula was built without cairo (the CSV has the data)\n" );
}

// Lists up to 10 failed systems of a batch on stderr and throws with the first failure's status and the
// last sample it reached.
void report_failures( const std::vector<double>& times, const RunOutput& out )
{
    long first = -1;
    int listed = 0;
    for ( long s = 0; s < out.systems; ++s )
        if ( out.failed[std::size_t( s )] )
        {
            if ( first < 0 )
                first = s;
            if ( out.systems > 1 && listed++ < 10 )
                std::fprintf( stderr, "morula: system %ld: %s; last sample reached: %s\n", s, out.status_name( s ),
                              out.reached_any[std::size_t( s )] ? concat( "t = ", out.reached[std::size_t( s )] ).c_str()
                                                                : "none" );
        }
    const std::string reach = out.reached_any[std::size_t( first )]
                                  ? concat( "t = ", out.reached[std::size_t( first )] )
                                  : std::string( "no sample" );
    if ( out.systems == 1 )
        throw std::runtime_error( concat( "integration failed: status ", out.status_name( 0 ), " after reaching ",
                                          reach, " of ", times.back(), "; the later samples are NaN" ) );
    throw std::runtime_error( concat( "integration failed for ", out.failures, " of ", out.systems,
                                      " systems (first: system ", first, ", status ", out.status_name( first ),
                                      " after reaching ", reach, " of ", times.back(),
                                      "); their later samples are NaN" ) );
}

// Checkpoints default to <out without .csv>.checkpoint.h5 ("ode.checkpoint.h5" without --out).
std::string checkpoint_prefix( const std::string& out )
{
    if ( out.empty() )
        return "ode";
    const std::filesystem::path p( out );
    return p.extension() == ".csv" ? ( p.parent_path() / p.stem() ).string() : out;
}

int run_ode( const RunArgs& a, const CLI::App& cmd )
{
    // Everything is checked before the integration starts: model, times, species, options, outputs.
    const ode::ReactionNetwork net = ode::read_model( a.model );
    require( a.batch >= 1, "--batch", double( a.batch ), "a number of systems >= 1" );
    if ( given( cmd, "--vary" ) )
        require( std::isfinite( a.vary ) && a.vary >= 0 && a.vary <= 1, "--vary", a.vary,
                 "a fraction in [0, 1] (factors uniform in [1-F, 1+F])" );
    require( std::isfinite( a.t_start ), "--t-start", a.t_start, "a finite time" );
    const std::vector<double> times = sample_times( a, cmd, net );
    const std::vector<int> saved = saved_species( a, cmd, net );
    refuse_batch_beyond_memory( a.batch, times.size(), saved.size(), net.species_count(), net.reaction_count() );
    const ode::SolverOptions options = solver_options( a, cmd, net, a.batch );
    std::ofstream csv = open_csv( a.out );
    const bool progress = !a.no_progress && ( a.progress || isatty( 2 ) );

    require( a.stop_after >= 0, "--stop-after", double( a.stop_after ), "a number of samples >= 0" );
    const CheckpointSchedule schedule( a.checkpoint, checkpoint_prefix( a.out ) );

    const RunOutput out = integrate( a, cmd, net, options, times, saved, progress, schedule );

    if ( csv.is_open() )
        write_csv( csv, a.out, given( cmd, "--batch" ), net, times, saved, out );
    if ( out.stopped )
    {
        std::printf( "ode: stopped after sample %zu of %zu (t = %s); checkpoint written to %s (resume with --restart)\n",
                     out.rows, times.size(), out.rows > 0 ? number( times[out.rows - 1] ).c_str() : "start",
                     schedule.file().c_str() );
        if ( csv.is_open() || !a.out.empty() )
            std::printf( "samples so far: %s\n", a.out.c_str() );
        std::fflush( stdout );
        schedule.stop_if_requested(); // a signal: exit status 3
        return 0;
    }
    print_summary( a, times, out );
    if ( a.stats )
        print_statistics( out );
    if ( csv.is_open() || !a.out.empty() )
        std::printf( "samples: %s\n", a.out.c_str() );
    if ( !a.plot.empty() )
        write_plot( a, net, times, saved, out );
    if ( out.failures > 0 )
        report_failures( times, out );
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
    run->add_option( "model", r->model, "LASSIE/cupSODA folder, SBML file (.xml/.sbml) or text model" )->required();
    run->add_option( "--out", r->out, "CSV file of the samples (time, then one column per saved species)" );
    run->add_option( "--t-start", r->t_start, "Start time (default 0)" );
    run->add_option( "--t-end", r->t_end, "Last sample time (with --samples; default: the model's sample times)" );
    run->add_option( "--samples", r->samples, "Number of evenly spaced sample times, t-start to t-end inclusive (>= 2)" );
    run->add_option( "--rtol", r->rtol, "Relative tolerance (default the model's, else 1e-6)" );
    run->add_option( "--atol", r->atol, "Absolute tolerance, one value for all species (default the model's, else 1e-12)" );
    run->add_option( "--method", r->method, "auto (RKF45/BDF switching), rkf45 or bdf" )
        ->transform( cli_choice<ode::Method>(
            { { "auto", ode::Method::automatic }, { "rkf45", ode::Method::rkf45 }, { "bdf", ode::Method::bdf } } ) );
    run->add_option( "--norm", r->norm, "Error norm: mixed (atol + rtol |x|) or paper (LASSIE's per-unit-time rule)" )
        ->transform( cli_choice<ode::ErrorNorm>( { { "mixed", ode::ErrorNorm::mixed }, { "paper", ode::ErrorNorm::paper } } ) );
    run->add_flag( "--paper", r->paper, "LASSIE's published settings (paper norm, eps 1e-12, fixed-step BDF1 h = 0.1, "
                                        "Newton tol 1e-6); later options override them" );
    run->add_option( "--bdf-order", r->bdf_order, "Highest BDF order, 1 to 5 (default 5)" );
    run->add_option( "--bdf-step", r->bdf_step, "Fixed BDF step (first order, no error test); needs --newton-tol" );
    run->add_option( "--newton-tol", r->newton_tol, "Newton stopping tolerance of the fixed-step BDF" );
    run->add_option( "--eps-s", r->eps_s, "Stiffness threshold: a rejected RKF45 step below it switches to BDF (default 1e-6)" );
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
    run->add_option( "--team-size", r->team_size, "Threads per team in fine mode (default: chosen by the solver)" );
    run->add_option( "--max-steps", r->max_steps, "Accepted + rejected steps per system before giving up (default 1e7)" );
    run->add_option( "--save", r->save, "Species to write, by name: A,B,C (default the model's saved species, else all)" );
    run->add_option( "--batch", r->batch, "Integrate N copies (batched mode); the CSV gets a first column 'system'" );
    run->add_option( "--vary", r->vary, "With --batch: multiply each copy's rate constants by factors uniform in [1-F, 1+F]" );
    run->add_option( "--seed", r->seed, "Seed of --vary's std::mt19937_64 (default 1)" );
    run->add_option( "--plot", r->plot, "PNG plot of the saved species against time (system 0)" );
    run->add_flag( "--stats", r->stats, "Print the solver's statistics (min/median/max over a batch)" );
    run->add_flag( "--progress", r->progress, "Say on stderr when the integration starts, even when stderr is not a "
                                              "terminal" );
    add_checkpoint_flags( *run, r->checkpoint );
    run->add_option( "--stop-after", r->stop_after,
                     "Stop after this many samples with a checkpoint (and the CSV rows so far); resume with --restart. "
                     "--checkpoint-every also counts samples (rows of the CSV), not solver steps" );
    run->add_flag( "--no-progress", r->no_progress, "No progress line, even on a terminal" );
    run->callback( [r, run] { run_ode( *r, *run ); } );

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

} // namespace morula::app
