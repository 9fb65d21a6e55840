// `morula ode run`'s inputs: the command line resolved over the model file's settings (OdeRun.hpp).
#include "OdeRun.hpp"

#include <morula/core/Error.hpp>
#include <morula/core/MemoryInfo.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>

namespace morula::app::ode_run
{
using core::InputError;
using core::detail::concat;

namespace
{
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

// The sample times alone, and one saved species of one system kept twice (the solver's and the CSV's),
// take 24 bytes per sample: a count beyond the host's memory is refused before anything is allocated
// (it ended in std::bad_alloc, issue #46). refuse_batch_beyond_memory() checks the whole run later.
void refuse_samples_beyond_memory( long samples )
{
    const double need = 24.0 * double( samples );
    const double host = core::host_memory_bytes();
    if ( host > 0 && need > host )
    {
        char figures[96];
        std::snprintf( figures, sizeof( figures ), "%.3g GB, more than this machine's %.3g GB", need / 1e9, host / 1e9 );
        throw InputError( concat( "--samples ", samples, ": the sample times and one species' values need at least ",
                                  figures, " of memory" ) );
    }
}
} // namespace

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
    if ( given( cmd, "--stiff-method" ) )
    {
        if ( o.method != ode::Method::automatic )
            throw InputError( "--stiff-method chooses what --method auto uses while a system is stiff; it does not apply "
                              "to the method given by --method" );
        o.stiff_method = a.stiff_method;
    }
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
    // Options of the general path's RKF45 and BDF ask for that path: under --method auto they keep the stiff
    // stretches in BDF (the register kernel chooses its own first step and has no BDF order or linear solver).
    if ( o.method == ode::Method::automatic && !given( cmd, "--stiff-method" ) &&
         ( given( cmd, "--initial-step" ) || given( cmd, "--bdf-order" ) || given( cmd, "--linear" ) ) )
        o.stiff_method = ode::Method::bdf;
    // The precision before the mode: single precision is the batched kernel's, so it chooses the mode.
    if ( given( cmd, "--precision" ) )
    {
        if ( a.precision == ode::Precision::single_precision && !ode::is_rosenbrock( o.method ) )
            throw InputError( "--precision single needs a Rosenbrock method (--method rodas5p, rodas4 or rosenbrock23); "
                              "RKF45 and BDF run in double" );
        o.precision = a.precision;
    }
    o.mode = ode::default_execution_mode( systems, net.species_count(), net.reaction_count(), o );
    if ( given( cmd, "--mode" ) )
    {
        if ( ode::is_rosenbrock( o.method ) && a.mode == ode::ExecutionMode::device_wide )
            throw InputError( "--method rodas5p, rodas4 and rosenbrock23 run in --mode batched or fine, not device "
                              "(or leave --mode out)" );
        if ( a.mode == ode::ExecutionMode::device_wide && systems > 1 )
            throw InputError( concat( "--mode device integrates one system; --batch is ", systems,
                                      " (use --mode batched or fine)" ) );
        o.mode = a.mode;
    }
    if ( o.linear_solver == ode::LinearSolver::sparse_iterative && o.mode == ode::ExecutionMode::batched )
        throw InputError( "--linear sparse needs --mode fine or device" );
    if ( given( cmd, "--layout" ) )
    {
        if ( a.layout == ode::BatchedLayout::on_chip && o.mode != ode::ExecutionMode::batched )
            throw InputError( "--layout on-chip is a layout of --mode batched (a batch, or --mode batched for one system); "
                              "the fine and device modes keep a system's arrays in device memory" );
        o.batched_layout = a.layout;
    }
    if ( given( cmd, "--sample-output" ) )
        o.sample_output = a.sample_output;
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

double RunTimes::at( long system, std::size_t i ) const
{
    if ( !per_system() )
        return grid[i];
    const double end = ends[std::size_t( system )];
    if ( i + 1 == grid.size() )
        return end;
    // The grid's fractions of the run, stretched to this system's span; computed once here for both the
    // device (system_sample_times) and the outputs, so the CSV's times are the ones integrated to.
    return t_start + ( grid[i] - t_start ) * ( ( end - t_start ) / ( grid.back() - t_start ) );
}

RunTimes run_times( const RunArgs& a, std::vector<double> grid, const RunSystems& sys )
{
    RunTimes times;
    times.grid = std::move( grid );
    times.t_start = a.t_start;
    const int column = sys.sweep ? sys.sweep->end_time_column() : -1;
    if ( column < 0 )
        return times;
    const ode::ParameterSweep& sweep = *sys.sweep;
    if ( !( times.grid.back() > a.t_start ) )
        throw InputError( concat( sweep.source, ": a t_end column needs sample times after --t-start (", number( a.t_start ),
                                  ") to stretch to each system's end; the run's last is ", number( times.grid.back() ) ) );
    times.ends.resize( std::size_t( sweep.systems ) );
    for ( long s = 0; s < sweep.systems; ++s )
    {
        const double end = sweep.value( s, std::size_t( column ) );
        if ( !( end > a.t_start ) )
            throw InputError( concat( sweep.where( s ), ": column ", column + 1, " (t_end): end time ", number( end ),
                                      "; expected a time after --t-start (", number( a.t_start ), ")" ) );
        times.ends[std::size_t( s )] = end;
    }
    return times;
}

Matrix system_sample_times( const RunTimes& times, const RunSystems& sys )
{
    Matrix rows( Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::app::ode::sample_times" ), sys.count, times.count() );
    auto host = Kokkos::create_mirror_view( rows );
    for ( long s = 0; s < sys.count; ++s )
        for ( std::size_t i = 0; i < times.count(); ++i )
            host( s, i ) = times.at( sys.first + s, i );
    Kokkos::deep_copy( rows, host );
    return rows;
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
    const double per_system = 8.0 * ( 2.0 * double( nsamples ) * double( nsaved + 1 ) + 2.0 * n + m + ode::stat_count );
    const double need = per_system * double( systems );
    const double host = core::host_memory_bytes();
    if ( host > 0 && need > host )
    {
        char figures[160];
        std::snprintf( figures, sizeof( figures ), "at least %.3g GB (%.0f bytes per system", need / 1e9, per_system );
        char memory[64];
        std::snprintf( memory, sizeof( memory ), "%.3g GB", host / 1e9 );
        throw InputError( concat( "--batch ", systems, ": the run needs ", figures, ": ", nsamples, " samples of ",
                                  nsaved, " species and their times, twice, with states and rate constants), more than this "
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

// The largest batch refuse_batch_beyond_memory() lets through.
long max_batch_systems( std::size_t nsamples, std::size_t nsaved, int n, int m )
{
    const double per_system = 8.0 * ( 2.0 * double( nsamples ) * double( nsaved + 1 ) + 2.0 * n + m + ode::stat_count );
    const double host = core::host_memory_bytes();
    if ( host <= 0 )
        return std::numeric_limits<long>::max();
    return long( std::min( host / per_system, 9.0e18 ) );
}

RunSystems run_systems( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net, std::size_t nsamples,
                        std::size_t nsaved, int rank, int ranks )
{
    RunSystems sys;
    const bool table = given( cmd, "--sweep-table" ), ranges = given( cmd, "--sweep" );
    if ( table && ranges )
        throw InputError( "--sweep-table and --sweep both set per-system values; give one of them" );
    if ( ( table || ranges ) && given( cmd, "--vary" ) )
        throw InputError( concat( table ? "--sweep-table" : "--sweep",
                                  " and --vary both set per-system rate constants; give one of them" ) );
    const int n = net.species_count(), m = net.reaction_count();
    if ( table )
    {
        sys.sweep = ode::read_sweep_table( a.sweep_table, net );
        if ( given( cmd, "--batch" ) && a.batch != sys.sweep->systems )
            throw InputError( concat( "--batch ", a.batch, ": the table '", a.sweep_table, "' has ", sys.sweep->systems,
                                      " rows (systems); give no --batch or --batch ", sys.sweep->systems ) );
    }
    else if ( ranges )
    {
        std::vector<ode::SweepRange> parsed;
        for ( const std::string& text : a.sweep_ranges )
            parsed.push_back( ode::parse_sweep_range( text, "--sweep" ) );
        sys.sweep = ode::make_range_sweep( net, parsed, given( cmd, "--batch" ) ? a.batch : 0, a.seed,
                                           max_batch_systems( nsamples, nsaved, n, m ) );
    }
    sys.total = sys.sweep ? sys.sweep->systems : a.batch;
    sys.batch_output = sys.sweep.has_value() || given( cmd, "--batch" );
    refuse_batch_beyond_memory( sys.total, nsamples, nsaved, n, m );
    // Contiguous slices, the first (total % ranks) one system longer: rank order is system order.
    const long base = sys.total / ranks, extra = sys.total % ranks;
    sys.first = rank * base + std::min<long>( rank, extra );
    sys.count = base + ( rank < extra ? 1 : 0 );
    return sys;
}

// This rank's systems start from the model's initial state, or the sweep's.
Matrix initial_states( const ode::ReactionNetwork& net, const RunSystems& sys )
{
    const int n = net.species_count();
    Matrix x0( "morula::app::ode::x0", sys.count, n );
    auto x0_host = Kokkos::create_mirror_view( x0 );
    std::vector<double> k, x;
    if ( sys.sweep )
        ode::fill_systems( *sys.sweep, net, sys.first, sys.count, k, x );
    for ( long s = 0; s < sys.count; ++s )
        for ( int i = 0; i < n; ++i )
            x0_host( s, i ) = sys.sweep ? x[std::size_t( s ) * std::size_t( n ) + std::size_t( i )]
                                        : net.initial_state[std::size_t( i )];
    Kokkos::deep_copy( x0, x0_host );
    return x0;
}

// With --vary, each system's rate constants times random factors; with a sweep, the sweep's; else empty
// (the model's constants).
Matrix rate_constants( const RunArgs& a, const CLI::App& cmd, const ode::ReactionNetwork& net, const RunSystems& sys )
{
    Matrix k;
    const bool vary = given( cmd, "--vary" );
    if ( !vary && !sys.sweep )
        return k;
    const int m = net.reaction_count();
    k = Matrix( "morula::app::ode::k", sys.count, m );
    auto k_host = Kokkos::create_mirror_view( k );
    if ( sys.sweep )
    {
        std::vector<double> rates, x;
        ode::fill_systems( *sys.sweep, net, sys.first, sys.count, rates, x );
        for ( long s = 0; s < sys.count; ++s )
            for ( int r = 0; r < m; ++r )
                k_host( s, r ) = rates[std::size_t( s ) * std::size_t( m ) + std::size_t( r )];
    }
    else
    {
        // Factors 1 - F + 2F u, u = the top 53 bits of mt19937_64 / 2^53, drawn system by system and
        // reaction by reaction from system 0: the same seed gives the same constants with every standard
        // library and on every rank count.
        std::mt19937_64 rng( a.seed );
        rng.discard( static_cast<unsigned long long>( sys.first ) * static_cast<unsigned long long>( m ) );
        for ( long s = 0; s < sys.count; ++s )
            for ( int r = 0; r < m; ++r )
            {
                const double factor = 1 - a.vary + 2 * a.vary * double( rng() >> 11 ) * 0x1.0p-53;
                k_host( s, r ) = net.reactions[std::size_t( r )].rate_constant * factor;
            }
    }
    Kokkos::deep_copy( k, k_host );
    return k;
}

// Checkpoints default to <out without .csv>.checkpoint.h5 ("ode.checkpoint.h5" without --out).
std::string checkpoint_prefix( const std::string& out )
{
    if ( out.empty() )
        return "ode";
    const std::filesystem::path p( out );
    return p.extension() == ".csv" ? ( p.parent_path() / p.stem() ).string() : out;
}

} // namespace morula::app::ode_run
