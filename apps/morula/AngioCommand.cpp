#include "AngioCommand.hpp"
#include "AngioPicture.hpp"
#include "AngioSetup.hpp"
#include "Checkpointing.hpp"
#include "CliOverrides.hpp"
#include "ConfigFile.hpp"
#include "RunLoop.hpp"

#include <morula/Morula.hpp>
#include <morula/io/AngioSnapshots.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace morula::app
{
void check_angiogenesis_config( const std::string& path )
{
    AngioSettings s;
    read_angiogenesis_config( path, s );
    // what run_angiogenesis checks before it allocates the model: the parameters and the vessels' tubes
    angio::AngioParameters p = s.p;
    p.validate( "morula angiogenesis" );
    angio::HostTubes tubes;
    for ( std::size_t k = 0; k < s.vessels.size(); ++k )
        tubes.add_vessel( s.vessels[k].points, s.vessels[k].radius, p.vessels.max_tube_length,
                          core::detail::concat( "morula angiogenesis: vessels[", k, "]" ) );
}

namespace
{

// Restarts `model` (made from the configuration) from the checkpoint `path`; returns the step it resumes
// after. The model refuses a checkpoint of other parameters; the run refuses one past its last step, and
// one whose angiogenic switch contradicts the configuration (sprouting on while this run has it off, or
// off while this run has it on from the start).
template <class Model>
long long resume( Model& model, const std::string& path, const AngioSettings& s, bool sprouting )
{
    const std::string where = "morula angiogenesis";
    io::restart_from_checkpoint( model, path );
    const long long step = model.steps_done();
    if ( step > s.steps )
        throw core::InputError( core::detail::concat( where, ": checkpoint '", path, "' is at step ", step,
                                                      ", past the run's steps = ", s.steps ) );
    const bool on = model.parameters().vessels.sprouting;
    if ( on != sprouting && ( on || s.angiogenic_switch <= 0 ) )
        throw core::InputError( core::detail::concat( where, ": checkpoint '", path, "' has sprouting ",
                                                      on ? "on" : "off", " at step ", step, ", but this run has sprouting ",
                                                      sprouting ? "on from the start" : "off" ) );
    std::printf( "resuming from '%s' at step %lld (%g h)\n", path.c_str(), step, model.time() );
    return step;
}

template <class Scalar>
int run_angiogenesis( const AngioSettings& s, const CheckpointFlags& flags )
{
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    exec space;
    const std::string where = "morula angiogenesis";
    AngioStart start = make_angiogenesis_start( s, where );
    const angio::AngioParameters& p = start.parameters;
    const bool sprouting = start.sprouting;
    const angio::HostCells& cells = start.cells;
    const angio::HostTubes& tubes = start.tubes;
    const core::Box<Scalar> box = angiogenesis_box<Scalar>( s );

    std::printf( "%s\n", core::build_summary().c_str() );
    std::printf( "angiogenesis (%s): %zu cells, %zu vessel tubes in a %g x %g x %g um box, %ld steps of %g h%s\n",
                 s.precision.c_str(), cells.size(), tubes.size(), s.box[0], s.box[1], s.box[2], s.steps, p.time_step,
                 sprouting ? ( s.angiogenic_switch > 0
                                   ? core::detail::concat( ", angiogenic switch at ", s.angiogenic_switch, " h" ).c_str()
                                   : ", sprouting on" )
                           : ", sprouting off" );
    angio::TumourAngiogenesis<Scalar, mem> model( angio::TumourCells<Scalar, mem>( cells ),
                                                  angio::VesselTubes<Scalar, mem>( tubes ), box, p );

    CheckpointSchedule schedule( flags, s.output );
    const long long first_step = schedule.restarting() ? resume( model, schedule.restart_file(), s, sprouting ) : 0;

    const std::string csv_path = s.output + ".csv";
    const bool csv_resumed = schedule.restarting() && keep_csv_rows_up_to( csv_path, first_step, where );
    std::ofstream csv( csv_path, csv_resumed ? std::ios::app : std::ios::trunc );
    if ( !csv )
        throw core::IoError( where + ": cannot write '" + csv_path + "'" );
    if ( !csv_resumed )
        csv << "step,time_h,cells,new,mature,hypoxic,dead,tubes,vessel_length_um,sprouts,anastomoses,mean_oxygen,max_taf\n";
    std::unique_ptr<io::AngioSnapshotWriter> writer;
    if ( io::angio_snapshots_available() )
        writer = std::make_unique<io::AngioSnapshotWriter>( s.output, schedule.restarting() ? first_step : -1 );
    else
        std::printf( "HDF5 not available in this build: no snapshots\n" );
    auto record = [&]( const io::AngioFrame& f ) {
        int count[4] = { 0, 0, 0, 0 };
        double oxygen = 0, taf = 0, length = 0;
        for ( std::size_t i = 0; i < f.cells(); ++i )
        {
            ++count[f.cell_state[i]];
            oxygen += f.cell_oxygen[i];
            taf = std::max( taf, f.cell_taf[i] );
        }
        for ( std::size_t i = 0; i < f.tubes(); ++i )
        {
            double l2 = 0;
            for ( int d = 0; d < 3; ++d )
                l2 += std::pow( f.tube_end_b[3 * i + d] - f.tube_end_a[3 * i + d], 2 );
            length += std::sqrt( l2 );
        }
        csv << f.step << ',' << f.time << ',' << f.cells() << ',' << count[0] << ',' << count[1] << ',' << count[2]
            << ',' << count[3] << ',' << f.tubes() << ',' << length << ',' << model.sprouts() << ','
            << model.anastomoses() << ',' << ( f.cells() ? oxygen / f.cells() : 0.0 ) << ',' << taf << '\n';
        csv.flush();
        if ( writer )
            writer->write( f );
    };

    io::AngioFrame last = angiogenesis_frame( model );
    if ( !schedule.restarting() ) // the resumed series has the checkpoint's frame already
        record( last );
    const auto t0 = std::chrono::steady_clock::now();
    const AngiogenicSwitch angiogenic_switch( s, start );
    RunLoop loop( schedule, s.steps, s.progress );
    loop.stop_every( 1 ); // the angiogenic switch is checked before every step
    loop.run(
        static_cast<long long>( first_step ),
        [&]( long long ) {
            angiogenic_switch.before_step( model );
            model.step( space );
        },
        [&]( long long i ) {
            if ( ( s.output_every > 0 && i % s.output_every == 0 ) || i == s.steps )
            {
                last = angiogenesis_frame( model );
                record( last );
            }
        },
        [&] { io::write_checkpoint( model, schedule.file() ); },
        [&] { return core::detail::concat( model.num_cells(), " cells  ", model.num_tubes(), " tubes" ); } );
    const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    const long stepped = s.steps - static_cast<long>( first_step );
    AngioView view;
    for ( int d = 0; d < 3; ++d )
        view.hi[d] = s.box[d];
    char title[160];
    std::snprintf( title, sizeof title, "tumour and vessels: t = %.1f h, %zu cells, %zu tubes", last.time, last.cells(),
                   last.tubes() );
    view.title = title;
    const bool png = write_angio_picture( s.output + ".png", last, view );
    int dead = 0, hypoxic = 0;
    for ( auto st : last.cell_state )
    {
        dead += st == angio::cell_dead;
        hypoxic += st == angio::cell_hypoxic;
    }
    std::printf( "done: %ld steps (%g h) in %.2f s (%.1f us/step); %zu cells (%d hypoxic, %d dead), %zu tubes, "
                 "%lld divisions, %lld sprouts, %lld anastomoses\n",
                 s.steps, std::round( model.time() * 1e6 ) / 1e6, seconds, stepped ? 1e6 * seconds / stepped : 0.0, last.cells(), hypoxic, dead,
                 last.tubes(), model.divisions(), model.sprouts(), model.anastomoses() );
    std::printf( "wrote %s.csv%s%s\n", s.output.c_str(), png ? ( ", " + s.output + ".png" ).c_str() : "",
                 writer ? ( ", " + writer->xdmf_path() + " (frames " + s.output + "_<step>.h5)" ).c_str() : "" );
    return 0;
}
} // namespace

void add_angiogenesis_command( CLI::App& app )
{
    auto config = std::make_shared<std::string>();
    auto checkpoints = std::make_shared<CheckpointFlags>();
    CLI::App* cmd = app.add_subcommand(
        "angiogenesis", "tumour growth and angiogenesis: cells, vessel tubes, oxygen and TAF (Worecki and Wcisło 2012)" );
    auto o = make_cli_overrides<AngioSettings>( *cmd );
    cmd->add_option( "--config", *config, "JSON file; keys as in docs/models/angiogenesis.md" );
    o->option( "--precision", &AngioSettings::precision, "float or double" )->check( CLI::IsMember( { "float", "double" } ) );
    o->option( "--steps", &AngioSettings::steps, "time steps" )->check( CLI::Range( 0L, 1000000000L ) );
    o->option( "--output-every", &AngioSettings::output_every, "steps between snapshots (0: first and last)" )
        ->check( CLI::Range( 0L, 1000000000L ) );
    o->option( "--seed", &AngioSettings::seed, "seed of the random numbers" )->check( CLI::Range( 0L, 9007199254740991L ) );
    o->option( "--output", &AngioSettings::output, "prefix of the .h5, .xmf, .csv and .png files" );
    o->flag( "--no-progress", &AngioSettings::progress, false, "no progress bar" );
    add_checkpoint_flags( *cmd, *checkpoints );
    cmd->callback( [config, o, checkpoints] {
        AngioSettings s;
        if ( !config->empty() )
            read_angiogenesis_config( *config, s );
        o->apply( s ); // options given on the command line win over the file
        if ( s.precision == "float" )
            run_angiogenesis<float>( s, *checkpoints );
        else
            run_angiogenesis<double>( s, *checkpoints );
    } );
}

} // namespace morula::app
