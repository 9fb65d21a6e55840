// `morula ode run`'s outputs: the CSV, the summary and statistics, the plot and the failure report
// (OdeRun.hpp).
#include "MsdPlot.hpp"
#include "OdeRun.hpp"

#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/SnapshotFrame.hpp>
#if MORULA_HAVE_HDF5
#include <morula/io/detail/Hdf5Frame.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace morula::app::ode_run
{
namespace
{
using core::detail::concat;

// In the order of ode::StatisticsColumn.
const char* const statistic_names[ode::stat_count] = {
    "status",            "steps",           "rejected",  "RKF45 steps",    "BDF steps",       "switches to BDF",
    "switches to RKF45", "Newton iterations", "Jacobians", "factorisations", "RHS evaluations", "BiCGStab iterations" };

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
} // namespace

// time, then one column per saved species; with --batch a first column 'system'; the samples filled
// (all, unless the run stopped after a checkpoint: then the rows up to it). Closes the file.
void write_csv( std::ofstream& csv, const std::string& path, bool batch_output, const ode::ReactionNetwork& net,
                const RunTimes& times, const std::vector<int>& saved, const RunOutput& out )
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
            csv << times.at( s, t );
            for ( std::size_t j = 0; j < out.nsaved; ++j )
                csv << ',' << out.sample_at( s, t, j );
            csv << '\n';
        }
    csv.close();
    if ( !csv )
        throw core::IoError( "--out: writing '" + path + "' failed" );
}

// One line: status, time span, steps and switches (min / median / max over a batch), wall time.
void print_summary( const RunArgs& a, const RunTimes& times, const RunOutput& out )
{
    // The span's end: the run's last time, or the range of the systems' own end times.
    std::string end = number( times.grid.back() );
    if ( times.per_system() )
    {
        const auto [low, high] = std::minmax_element( times.ends.begin(), times.ends.end() );
        end = *low == *high ? number( *low ) : concat( number( *low ), "..", number( *high ), " (per system)" );
    }
    if ( out.systems == 1 )
    {
        const auto stat = [&]( int col ) { return out.stat( 0, col ); };
        std::printf( "ode: %s, t = %g to %s, %zu samples, %ld steps (%ld rejected), switches %ld to BDF / %ld to "
                     "RKF45, %.4g s\n",
                     out.status_name( 0 ), a.t_start, end.c_str(), out.nsamples, stat( ode::stat_steps ),
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
    std::printf( "ode: %ld systems: %ld success, %ld failed, t = %g to %s, %zu samples, steps min %ld / median "
                 "%g / max %ld, switches %ld to BDF / %ld to RKF45 in all, %.4g s\n",
                 out.systems, out.systems - out.failures, out.failures, a.t_start, end.c_str(), out.nsamples,
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
void write_plot( const RunArgs& a, const ode::ReactionNetwork& net, const RunTimes& times,
                 const std::vector<int>& saved, const RunOutput& out )
{
    std::vector<PlotSeries> series( out.nsaved );
    for ( std::size_t j = 0; j < out.nsaved; ++j )
    {
        series[j].name = net.species_names[std::size_t( saved[j] )];
        for ( std::size_t t = 0; t < out.nsamples; ++t )
            series[j].points.emplace_back( times.at( 0, t ), out.sample_at( 0, t, j ) );
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

void RunOutput::tally( const RunTimes& times, long first )
{
    failures = 0;
    for ( long s = 0; s < systems; ++s )
    {
        for ( std::size_t t = 0; t < nsamples; ++t )
            for ( std::size_t j = 0; j < nsaved; ++j )
                if ( !std::isnan( sample_at( s, t, j ) ) )
                {
                    reached[std::size_t( s )] = times.at( first + s, t ), reached_any[std::size_t( s )] = true;
                    break;
                }
        failed[std::size_t( s )] = stat( s, ode::stat_status ) != long( ode::SolverStatus::success );
        failures += failed[std::size_t( s )] ? 1 : 0;
    }
}

const char* failure_reason( ode::SolverStatus s )
{
    switch ( s )
    {
    case ode::SolverStatus::success: return "";
    case ode::SolverStatus::max_steps: return "more steps than --max-steps before the last sample";
    case ode::SolverStatus::step_too_small:
        return "the step size fell below what the time's precision resolves (or an explicit-only method met stiffness)";
    case ode::SolverStatus::newton_failure: return "the Newton iteration did not converge";
    case ode::SolverStatus::singular_matrix: return "a zero pivot in the iteration matrix";
    case ode::SolverStatus::not_finite: return "a NaN or infinite value in the state";
    }
    return "unknown status";
}

// system, status, reason, reached (the last sample time with a value; empty for none), steps, rejected,
// then the sweep's columns by name, 17 significant digits so that the values read back exactly.
void write_summary( const std::string& path, const RunSystems& sys, const RunOutput& out )
{
    std::ofstream csv( path );
    if ( !csv )
        throw core::IoError( "--summary: cannot write '" + path + "'" );
    csv.precision( 17 );
    csv << "system,status,reason,reached,steps,rejected";
    if ( sys.sweep )
        for ( const ode::SweepColumn& c : sys.sweep->columns )
            csv << ',' << c.name;
    csv << '\n';
    for ( long s = 0; s < out.systems; ++s )
    {
        csv << s << ',' << out.status_name( s ) << ",\""
            << failure_reason( ode::SolverStatus( out.stat( s, ode::stat_status ) ) ) << "\",";
        if ( out.reached_any[std::size_t( s )] )
            csv << out.reached[std::size_t( s )];
        csv << ',' << out.stat( s, ode::stat_steps ) << ',' << out.stat( s, ode::stat_rejected );
        if ( sys.sweep )
            for ( std::size_t c = 0; c < sys.sweep->columns.size(); ++c )
                csv << ',' << sys.sweep->value( s, c );
        csv << '\n';
    }
    csv.close();
    if ( !csv )
        throw core::IoError( "--summary: writing '" + path + "' failed" );
}

bool is_hdf5_path( const std::string& path )
{
    const std::string ext = std::filesystem::path( path ).extension().string();
    return ext == ".h5" || ext == ".hdf5";
}

// The results as one HDF5 file (h5py: f["samples"][system, sample, species]); datasets carry their
// columns' names as attributes so that the file reads without this documentation.
void write_hdf5( const std::string& path, const ode::ReactionNetwork& net, const RunTimes& times,
                 const std::vector<int>& saved, const RunSystems& sys, const RunOutput& out )
{
#if MORULA_HAVE_HDF5
    io::SnapshotFrame frame;
    const std::size_t systems = std::size_t( out.systems );
    // Each system's own times: (system, sample), as `samples` is indexed. The frame keeps a pointer to the
    // data until the file is written, so the table lives as long as the frame.
    std::vector<double> rows;
    if ( times.per_system() )
    {
        rows.resize( systems * out.rows );
        for ( std::size_t s = 0; s < systems; ++s )
            for ( std::size_t t = 0; t < out.rows; ++t )
                rows[s * out.rows + t] = times.at( long( s ), t );
        frame.dataset( "time", rows.data(), { systems, out.rows } );
        frame.names( "time", "dimensions", { "system", "sample" } );
    }
    else
        frame.dataset( "time", times.grid.data(), { out.rows } );
    // The rows filled: all, unless the run stopped early (then a prefix of every system's samples).
    std::vector<double> samples( systems * out.rows * out.nsaved );
    for ( std::size_t s = 0; s < systems; ++s )
        for ( std::size_t t = 0; t < out.rows; ++t )
            for ( std::size_t j = 0; j < out.nsaved; ++j )
                samples[( s * out.rows + t ) * out.nsaved + j] = out.sample_at( long( s ), t, j );
    frame.dataset( "samples", samples.data(), { systems, out.rows, out.nsaved } );
    std::vector<std::string> species;
    for ( int j : saved )
        species.push_back( net.species_names[std::size_t( j )] );
    frame.names( "samples", "species", species );
    frame.names( "samples", "dimensions", { "system", "sample", "species" } );
    std::vector<std::int64_t> status( systems ), stats( out.stats.begin(), out.stats.end() );
    std::vector<std::string> status_names, reasons;
    for ( int st = 0; st <= int( ode::SolverStatus::not_finite ); ++st )
    {
        status_names.push_back( ode::to_string( ode::SolverStatus( st ) ) );
        reasons.push_back( failure_reason( ode::SolverStatus( st ) ) );
    }
    for ( std::size_t s = 0; s < systems; ++s )
        status[s] = out.stat( long( s ), ode::stat_status );
    frame.dataset( "status", status.data(), { systems } );
    frame.names( "status", "names", status_names );
    frame.names( "status", "reasons", reasons );
    std::vector<double> reached( systems );
    for ( std::size_t s = 0; s < systems; ++s )
        reached[s] = out.reached_any[s] ? out.reached[s] : std::numeric_limits<double>::quiet_NaN();
    frame.dataset( "reached", reached.data(), { systems } );
    frame.dataset( "statistics", stats.data(), { systems, std::size_t( ode::stat_count ) } );
    frame.names( "statistics", "columns", std::vector<std::string>( statistic_names, statistic_names + ode::stat_count ) );
    std::vector<std::string> columns;
    if ( sys.sweep )
    {
        for ( const ode::SweepColumn& c : sys.sweep->columns )
            columns.push_back( c.name );
        frame.dataset( "parameters", sys.sweep->values.data(), { systems, columns.size() } );
        frame.names( "parameters", "columns", columns );
    }
    frame.attribute( "", "systems", std::int64_t( systems ) );
    io::detail::write_hdf5_frame( path, true, "", frame, "ODE results file" );
#else
    (void)net, (void)times, (void)saved, (void)sys, (void)out;
    throw core::IoError( "--out '" + path + "': this morula was built without HDF5" );
#endif
}

// Lists up to 10 failed systems of a batch on stderr and throws with the first failure's status and the
// last sample it reached.
void report_failures( const RunTimes& times, const RunOutput& out )
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
                                          reach, " of ", times.last( 0 ), "; the later samples are NaN" ) );
    throw std::runtime_error( concat( "integration failed for ", out.failures, " of ", out.systems,
                                      " systems (first: system ", first, ", status ", out.status_name( first ),
                                      " after reaching ", reach, " of ", times.last( first ),
                                      "); their later samples are NaN" ) );
}

} // namespace morula::app::ode_run
