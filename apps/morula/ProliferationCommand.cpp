#include "ProliferationCommand.hpp"
#include "Checkpointing.hpp"
#include "CliOverrides.hpp"
#include "ConfigFile.hpp"
#include "MpiSession.hpp"
#include "ProliferationSetup.hpp"
#include "RunLoop.hpp"

#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace morula::app
{
void check_proliferation_config( const std::string& path )
{
    ProliferationSettings s;
    read_proliferation_config( path, s );
}

namespace
{
// The key 'output': the run's counts and timings as JSON.
void write_output( const std::string& path, const nlohmann::json& j )
{
    std::ofstream out( path );
    if ( !out )
        throw core::IoError( "cannot write the output file '" + path + "'" );
    out << j.dump( 1 ) << "\n";
}

// The prefix of the default checkpoint file: the snapshots', else the output's without ".json".
std::string checkpoint_prefix( const ProliferationSettings& s )
{
    if ( !s.snapshots.empty() )
        return s.snapshots;
    if ( s.output.empty() )
        return "proliferation";
    const std::filesystem::path p( s.output );
    return p.extension() == ".json" ? ( p.parent_path() / p.stem() ).string() : s.output;
}

// A resumed run's rows of the output's "steps": those the run before the checkpoint wrote (none if it
// wrote no output), so that the output ends as the uninterrupted run's would.
nlohmann::json steps_before( const std::string& path, long long first_step )
{
    nlohmann::json kept = nlohmann::json::array();
    std::ifstream in( path );
    if ( path.empty() || !in )
        return kept;
    const auto old = nlohmann::json::parse( in, nullptr, false );
    if ( old.is_discarded() || !old.contains( "steps" ) || !old["steps"].is_array() )
        throw core::InputError( "the output file '" + path + "' of the run to resume is not its JSON output" );
    for ( const auto& row : old["steps"] )
        if ( row.contains( "step" ) && row["step"].is_number_integer() && row["step"].get<long long>() < first_step )
            kept.push_back( row );
    return kept;
}

// The step a restart continues from, which the configured run must not have passed.
void check_restart_step( long long done, long steps, const std::string& file )
{
    if ( done > steps )
        throw core::InputError( core::detail::concat( "checkpoint '", file, "': it is of step ", done,
                                                      ", past the run's ", steps, " steps" ) );
}

// The largest of `mine` over the ranks (one rank's step time for each rank).
double over_ranks_max( double mine )
{
#if MORULA_HAVE_MPI
    if ( MpiSession::size() > 1 )
    {
        double all = 0;
        MPI_Allreduce( &mine, &all, 1, MPI_DOUBLE, MPI_MAX, MpiSession::comm() );
        return all;
    }
#endif
    return mine;
}

/*
  One driver on one rank or under an MPI launcher with several ranks: there, rank 0 starts with every agent
  and the first migration hands them to the ranks of a Cartesian decomposition of the box. Ids, diameters
  and counts are those of one rank; positions agree to round-off. The lines per step and the JSON rows
  give the phases on one rank and the slowest rank's step on several.
*/
template <class Scalar>
int run_proliferation( const ProliferationSettings& s, const CheckpointFlags& flags )
{
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    exec space;
    const bool distributed = MpiSession::size() > 1;
    if ( distributed && !s.snapshots.empty() )
        throw core::InputError( "config: key 'snapshots': a distributed run writes no snapshots yet; remove the key "
                                "or run on one rank" );
    auto [box, mp, growth, agents] = make_proliferation_setup<Scalar>( s, space );
    const std::size_t initial = agents.size();
    std::printf( "%s\n", core::build_summary().c_str() );
    std::printf( "proliferation (%s, %s): %zu agents, %ld steps, sort every %ld (%s)", s.scenario.c_str(),
                 s.precision.c_str(), initial, s.steps, s.sort_every, s.ordering.c_str() );
    const auto make_model = [&, &box = box, &mp = mp, &growth = growth, &agents = agents] {
#if MORULA_HAVE_MPI
        if ( distributed )
        {
            if ( MpiSession::rank() != 0 )
                agents.resize( 0 );
            // The halo covers the interaction distance: the largest diameter (a growing cell passes the
            // division diameter by at most one step's growth; 10% covers it) plus two radius extensions.
            const double largest = std::max( s.diameter, growth ? 1.1 * s.division_diameter : 0.0 );
            const double halo = largest + 2 * s.radius_extension;
            const parallel::CartesianDecomposition<Scalar> dec( MpiSession::comm(), box, Scalar( halo ) );
            const auto dims = dec.dims();
            std::printf( "; %d MPI ranks (%d x %d x %d), halo width %g", MpiSession::size(), dims[0], dims[1],
                         dims[2], halo );
            return mechanics::Proliferation<Scalar, mem>( std::move( agents ), dec, mp, growth );
        }
#endif
        return mechanics::Proliferation<Scalar, mem>( std::move( agents ), box, mp, growth );
    };
    mechanics::Proliferation<Scalar, mem> model = make_model();
    std::printf( "\n" );
    // The per-step lines report neighbours per agent (one rank).
    model.set_count_interactions( !distributed );
    // Divisions are counted by the ids they gave out (next_id is the same on every rank after a step), so
    // that a resumed run counts those before it too.
    const std::int64_t first_id = model.agents().next_id();
    CheckpointSchedule schedule( flags, checkpoint_prefix( s ) );
    if ( schedule.restarting() )
    {
        // On several ranks every rank reads the file and keeps its agents (all of them, in their order,
        // on the ranks that wrote it; else those it owns).
        io::restart_from_checkpoint( model, schedule.restart_file() );
        check_restart_step( model.steps_done(), s.steps, schedule.restart_file() );
        std::printf( "resumed from '%s' at step %lld: %lld agents\n", schedule.restart_file().c_str(),
                     model.steps_done(), model.all_agents() );
    }
    const long start = static_cast<long>( model.steps_done() );

    std::unique_ptr<io::AgentSnapshotWriter> writer;
    auto snapshot = [&]( long long step ) {
        const auto& a = model.agents();
        writer->write_views( step, double( step ) * s.time_step, a.positions(), a.diameters(),
                             a.ids(), a.size() );
    };
    if ( !s.snapshots.empty() )
    {
        // A resumed run keeps the frames up to its checkpoint's step and drops any written after it.
        writer = std::make_unique<io::AgentSnapshotWriter>( s.snapshots, schedule.restarting() ? start : -1 );
        if ( !schedule.restarting() )
            snapshot( 0 );
    }

    const bool writes_output = !s.output.empty() && MpiSession::rank() == 0;
    nlohmann::json steps = schedule.restarting() && writes_output ? steps_before( s.output, start )
                                                                    : nlohmann::json::array();
    long long all_agents = model.all_agents(), divisions = 0, interactions = 0;
    const auto json_output = [&] {
        nlohmann::json out{ { "scenario", s.scenario }, { "precision", s.precision }, { "build", core::build_summary() } };
        if ( distributed )
            out["mpi_ranks"] = MpiSession::size();
        out["final_agents"] = all_agents;
        out["divisions"] = divisions;
        if ( !distributed )
            out["last_interacting_pairs"] = interactions;
        out["steps"] = steps;
        return out;
    };
    using Phase = mechanics::ProliferationPhase;
    const auto& t = model.times();
    // A line per step, printed after the run: while it runs, (rank 0's) progress bar shows the step.
    std::string step_lines;
    char line[256];
    double neighbours = 0, last_total = 0;
    RunLoop loop( schedule, s.steps, s.progress );
    loop.stop_every( 1 ); // a line per step
    auto one_step = [&]( long long ) {
        const long step = long( model.steps_done() );
        // Seconds per phase in this step: the timer's sums after it less those before it.
        std::vector<double> before( t.num_phases() );
        for ( int p = 0; p < t.num_phases(); ++p )
            before[p] = t.seconds( p );
        const auto r = model.step( space, true );
        all_agents = model.all_agents();
        divisions = model.agents().next_id() - first_id;
        if ( distributed )
        {
            // The slowest rank's step (each rank's phases are fenced and timed alone).
            const double slowest = over_ranks_max( t.total() );
            std::snprintf( line, sizeof line, "step %4ld: %9lld agents, %7lld divisions | %.3f ms (slowest rank)\n",
                           step, all_agents, model.all_divisions(), 1e3 * ( slowest - last_total ) );
            steps.push_back( { { "step", step }, { "agents", all_agents }, { "divisions", model.all_divisions() },
                               { "slowest_rank_s", slowest - last_total } } );
            last_total = slowest;
        }
        else
        {
            const auto in_step = [&]( int p ) { return t.seconds( p ) - before[p]; };
            interactions = r.interactions;
            neighbours = double( r.interactions ) / double( model.agents().size() );
            std::snprintf( line, sizeof line,
                           "step %4ld: %9zu agents, %7d divisions, %.2f neighbours/agent | ms: division "
                           "%.3f, grid %.3f, sort %.3f, forces %.3f, move %.3f\n",
                           step, model.agents().size(), r.divisions, neighbours, 1e3 * in_step( Phase::division ),
                           1e3 * in_step( Phase::grid ), 1e3 * in_step( Phase::sort ),
                           1e3 * in_step( Phase::forces ), 1e3 * in_step( Phase::move ) );
            steps.push_back( { { "step", step },
                               { "agents", model.agents().size() },
                               { "divisions", r.divisions },
                               { "interacting_pairs", r.interactions },
                               { "sorted", r.sorted },
                               { "division_s", in_step( Phase::division ) },
                               { "grid_build_s", in_step( Phase::grid ) },
                               { "sort_s", in_step( Phase::sort ) },
                               { "forces_s", in_step( Phase::forces ) },
                               { "displacement_s", in_step( Phase::move ) } } );
        }
        step_lines += line;
    };
    loop.run(
        start, one_step,
        [&]( long long done ) {
            if ( writer && ( ( s.snapshot_every > 0 && done % s.snapshot_every == 0 ) || done == s.steps ) )
                snapshot( done );
        },
        [&] {
            io::write_checkpoint( model, schedule.file() );
            if ( writes_output )
                write_output( s.output, json_output() ); // its rows so far, for a resumed run to keep
        },
        [&] {
            if ( distributed )
                std::snprintf( line, sizeof line, "%lld agents  %lld divisions", all_agents, divisions );
            else
                std::snprintf( line, sizeof line, "%lld agents  %lld divisions  %.2f neighbours/agent", all_agents,
                               divisions, neighbours );
            return std::string( line );
        } );
    std::fputs( step_lines.c_str(), stdout );
    all_agents = model.all_agents();
    divisions = model.agents().next_id() - first_id;
    const long run_steps = s.steps - start; // timed in this process
    const auto per_step = [&]( double seconds ) { return run_steps ? 1e3 * seconds / double( run_steps ) : 0.0; };
    if ( distributed )
        std::printf( "total: %lld agents (%lld divisions), %.3f ms per step on the slowest rank; rank 0: division "
                     "%.3f, migration %.3f, halo %.3f, sort %.3f, grid %.3f, forces %.3f, move %.3f ms per step\n",
                     all_agents, divisions, per_step( last_total ), per_step( t.seconds( Phase::division ) ),
                     per_step( t.seconds( Phase::migration ) ),
                     per_step( t.seconds( Phase::halo_build ) + t.seconds( Phase::halo_update ) ),
                     per_step( t.seconds( Phase::sort ) ), per_step( t.seconds( Phase::grid ) ),
                     per_step( t.seconds( Phase::forces ) ), per_step( t.seconds( Phase::move ) ) );
    else
        std::printf( "total: %lld agents (%lld divisions), %.3f ms per step (division %.3f, grid %.3f, "
                     "sort %.3f, forces %.3f, move %.3f; timed with a fence per operation)\n",
                     all_agents, divisions, per_step( t.total() ), per_step( t.seconds( Phase::division ) ),
                     per_step( t.seconds( Phase::grid ) ), per_step( t.seconds( Phase::sort ) ),
                     per_step( t.seconds( Phase::forces ) ), per_step( t.seconds( Phase::move ) ) );
    if ( writer )
        std::printf( "snapshots: %s\n", writer->xdmf_path().c_str() );
    if ( writes_output )
        write_output( s.output, json_output() );
    return 0;
}
} // namespace

void add_proliferation_command( CLI::App& app )
{
    auto config = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand(
        "proliferation",
        "Sphere cells that grow, divide and push each other (benchmarks A and B of Hesam et al. 2021); alias: mechanics" );
    cmd->alias( "mechanics" );
    auto overrides = make_cli_overrides<ProliferationSettings>( *cmd );
    cmd->add_option( "--config", *config, "JSON file; keys as in docs/models/proliferation.md" );
    overrides->option( "--scenario", &ProliferationSettings::scenario, "division (benchmark A) or static (B)" )
        ->check( CLI::IsMember( { "division", "static" } ) );
    overrides->option( "--precision", &ProliferationSettings::precision, "float or double" )
        ->check( CLI::IsMember( { "float", "double" } ) );
    overrides->option( "--steps", &ProliferationSettings::steps, "Number of steps" )->check( CLI::Range( 0L, 100000000L ) );
    overrides->option( "--output", &ProliferationSettings::output, "JSON file for counts and timings" );
    overrides->flag( "--no-progress", &ProliferationSettings::progress, false, "No progress bar (the lines per step are printed after the run either way)" );
    auto checkpoints = std::make_shared<CheckpointFlags>();
    add_checkpoint_flags( *cmd, *checkpoints );
    cmd->callback( [config, overrides, checkpoints] {
        ProliferationSettings s;
        if ( !config->empty() )
            read_proliferation_config( *config, s );
        overrides->apply( s ); // options given on the command line win over the file
        if ( s.precision == "float" )
            run_proliferation<float>( s, *checkpoints );
        else
            run_proliferation<double>( s, *checkpoints );
    } );
}

} // namespace morula::app
