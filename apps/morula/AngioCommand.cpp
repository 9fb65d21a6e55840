#include "AngioCommand.hpp"
#include "AngioPicture.hpp"
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
namespace
{
// Every key of the configuration file (docs/models/angiogenesis.md). Model parameters use the names of
// the fields of angio::AngioParameters and default to its values.
struct AngioSettings
{
    std::string precision = "double";
    double box[3] = { 400, 400, 400 };
    double tumour_centre[3] = { 220, 200, 200 };
    double tumour_radius = 20;
    double cell_radius = 5;
    struct Vessel
    {
        std::vector<double> points;
        double radius = 5;
    };
    std::vector<Vessel> vessels;
    long steps = 1000;
    long output_every = 100;
    long seed = 1;
    double angiogenic_switch = 0; // h: sprouting from this time on (when sprouting is true)
    std::string output = "angiogenesis";
    bool progress = true;
    angio::AngioParameters p;
};

const std::set<std::string> vessel_keys{ "points", "radius" };

void read_config( const std::string& path, AngioSettings& s )
{
    constexpr double big = ConfigTable::huge;
    auto& p = s.p;
    ConfigTable t;
    t.choice( "precision", s.precision, { "float", "double" } )
        .numbers( "box", s.box, 3, 1e-300 )
        .numbers( "tumour_centre", s.tumour_centre, 3, -big )
        .number( "tumour_radius", s.tumour_radius, 0 )
        .number( "cell_radius", s.cell_radius, 1e-300 )
        .custom( "vessels",
                 [&s]( const ConfigFile& c, const std::string& key ) {
                     s.vessels.clear();
                     for ( const auto& v : c.objects( key, vessel_keys, true ) )
                     {
                         AngioSettings::Vessel vessel;
                         vessel.points = v.numbers( "points", 0, -big, big );
                         if ( v.has( "radius" ) )
                             vessel.radius = v.number( "radius", 1e-300, big );
                         s.vessels.push_back( vessel );
                     }
                 } )
        .integer( "steps", s.steps, 0, 1000000000 )
        .number( "dt", p.time_step, 1e-300 )
        .integer( "output_every", s.output_every, 0, 1000000000 )
        .integer( "seed", s.seed, 0, 9007199254740991L )
        .number( "angiogenic_switch", s.angiogenic_switch, 0 )
        .text( "output", s.output )
        .flag( "progress", s.progress )
        .number( "repulsion", p.mechanics.repulsion, 0 )
        .number( "adhesion", p.mechanics.adhesion, 0 )
        .number( "adhesion_range", p.mechanics.adhesion_range, 0 )
        .number( "friction", p.mechanics.friction, 0 )
        .number( "reference_radius", p.mechanics.reference_radius, 0 )
        .number( "wall_stiffness", p.mechanics.wall_stiffness, 0 )
        .number( "oxygen_diffusion", p.exchange.oxygen_diffusion, 0 )
        .number( "oxygen_uptake", p.exchange.oxygen_uptake, 0 )
        .number( "hypoxic_uptake_factor", p.exchange.hypoxic_uptake_factor, 0 )
        .number( "taf_diffusion", p.exchange.taf_diffusion, 0 )
        .number( "taf_decay", p.exchange.taf_decay, 0 )
        .number( "taf_production", p.exchange.taf_production, 0 )
        .integer( "sweeps", p.exchange.sweeps, 0, 10000 )
        .number( "sweep_fraction", p.exchange.sweep_fraction, 0 )
        .integer( "max_contacts", p.exchange.max_contacts, 1, 1000 )
        .number( "division_radius", p.life.division_radius, 0 )
        .number( "growth_rate", p.life.growth_rate, 0 )
        .number( "growth_spread", p.life.growth_spread, 0 )
        .number( "maturation_age", p.life.maturation_age, 0 )
        .number( "hypoxia_threshold", p.life.hypoxia_threshold, 0 )
        .number( "recovery_threshold", p.life.recovery_threshold, 0 )
        .number( "hypoxic_survival", p.life.hypoxic_survival, 0 )
        .number( "max_age", p.life.max_age, 0 )
        .number( "max_pressure", p.life.max_pressure, 0 )
        .number( "lysis_rate", p.life.lysis_rate, 0 )
        .number( "lysis_radius", p.life.lysis_radius, 0 )
        .number( "inflow", p.vessels.inflow, 0 )
        .number( "perfusion_half", p.vessels.perfusion_half, 0 )
        .number( "blood_oxygen_length", p.vessels.blood_oxygen_length, 0 )
        .number( "wall_conductance", p.vessels.wall_conductance, 0 )
        .flag( "sprouting", p.vessels.sprouting )
        .number( "sprout_taf", p.vessels.sprout_taf, 0 )
        .number( "sprout_rate", p.vessels.sprout_rate, 0 )
        .number( "sprout_refractory", p.vessels.sprout_refractory, 0 )
        .number( "sprout_radius", p.vessels.sprout_radius, 0 )
        .number( "sprout_length", p.vessels.sprout_length, 0 )
        .number( "tip_speed", p.vessels.tip_speed, 0 )
        .number( "tip_taf", p.vessels.tip_taf, 0 )
        .number( "tip_persistence", p.vessels.tip_persistence, 0 )
        .number( "max_tube_length", p.vessels.max_tube_length, 0 )
        .number( "tube_repulsion", p.vessels.tube_repulsion, 0 )
        .integer( "sort_every", p.sort_every, 0, 1000000000 )
        .integer( "max_tubes_per_cell", p.max_tubes_per_cell, 1, 1024 )
        .flag( "atomic_cell_cell", p.atomic_cell_cell );
    t.read( path );
}
} // namespace

void check_angiogenesis_config( const std::string& path )
{
    AngioSettings s;
    read_config( path, s );
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

// Host copies of the model's cells and tubes as one output frame.
template <class Model>
io::AngioFrame make_frame( const Model& m )
{
    const auto c = m.cells().to_host();
    const auto t = m.tubes().to_host();
    io::AngioFrame f;
    f.step = m.steps_done();
    f.time = m.time();
    f.cell_positions = c.position;
    f.cell_radius = c.radius;
    f.cell_age = c.age;
    f.cell_oxygen = c.oxygen;
    f.cell_taf = c.taf;
    f.cell_pressure = c.pressure;
    f.cell_state = c.state;
    f.cell_id = c.id;
    f.tube_end_a = t.end_a;
    f.tube_end_b = t.end_b;
    f.tube_radius_a = t.radius_a;
    f.tube_radius_b = t.radius_b;
    f.tube_flow = t.flow;
    f.tube_blood_oxygen = t.blood_oxygen;
    f.tube_delivered = t.delivered;
    f.tube_taf = t.taf;
    f.tube_parent = t.parent;
    f.tube_flags = t.flags;
    f.tube_id = t.id;
    return f;
}

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
    angio::AngioParameters p = s.p;
    p.seed = static_cast<std::uint64_t>( s.seed );
    const bool sprouting = p.vessels.sprouting;
    p.vessels.sprouting = sprouting && s.angiogenic_switch <= 0;
    p.validate( where );

    angio::HostTubes tubes;
    for ( std::size_t k = 0; k < s.vessels.size(); ++k )
        tubes.add_vessel( s.vessels[k].points, s.vessels[k].radius, p.vessels.max_tube_length,
                          core::detail::concat( where, ": vessels[", k, "]" ) );
    angio::HostCells cells;
    // The tumour's sphere against the box before any cell is placed: a radius far beyond the box would
    // otherwise place (radius / cell spacing)^3 cells before the check below sees one outside.
    for ( int d = 0; d < 3 && s.tumour_radius > 0; ++d )
        if ( !( s.tumour_centre[d] - s.tumour_radius >= 0 && s.tumour_centre[d] + s.tumour_radius <= s.box[d] ) )
            throw core::InputError( core::detail::concat(
                where, ": the tumour (tumour_centre, tumour_radius) reaches outside the box along ", "xyz"[d],
                " (centre ", s.tumour_centre[d], ", radius ", s.tumour_radius, ", box [0, ", s.box[d], "])" ) );
    if ( s.tumour_radius > 0 )
    {
        angio::ClusterSpec cluster;
        for ( int d = 0; d < 3; ++d )
            cluster.centre[d] = s.tumour_centre[d];
        cluster.radius = s.tumour_radius;
        cluster.cell_radius = s.cell_radius;
        cluster.seed = p.seed;
        angio::add_cluster( cells, cluster );
    }
    const core::Box<Scalar> box( { 0, 0, 0 }, { Scalar( s.box[0] ), Scalar( s.box[1] ), Scalar( s.box[2] ) },
                                 core::Boundary::closed );
    for ( std::size_t i = 0; i < cells.size(); ++i )
        for ( int d = 0; d < 3; ++d )
            if ( !( cells.position[3 * i + d] >= 0 && cells.position[3 * i + d] <= s.box[d] ) )
                throw core::InputError( core::detail::concat(
                    where, ": the tumour (tumour_centre, tumour_radius) reaches outside the box along ", "xyz"[d],
                    " (cell at ", cells.position[3 * i + d], ", box [0, ", s.box[d], "])" ) );

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

    io::AngioFrame last = make_frame( model );
    if ( !schedule.restarting() ) // the resumed series has the checkpoint's frame already
        record( last );
    const auto t0 = std::chrono::steady_clock::now();
    bool switched = model.parameters().vessels.sprouting;
    RunLoop loop( schedule, s.steps, s.progress );
    loop.stop_every( 1 ); // the angiogenic switch is checked before every step
    loop.run(
        static_cast<long long>( first_step ),
        [&]( long long ) {
            if ( sprouting && !switched && model.time() >= s.angiogenic_switch )
            {
                model.set_sprouting( true );
                switched = true;
            }
            model.step( space );
        },
        [&]( long long i ) {
            if ( ( s.output_every > 0 && i % s.output_every == 0 ) || i == s.steps )
            {
                last = make_frame( model );
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
            read_config( *config, s );
        o->apply( s ); // options given on the command line win over the file
        if ( s.precision == "float" )
            run_angiogenesis<float>( s, *checkpoints );
        else
            run_angiogenesis<double>( s, *checkpoints );
    } );
}

} // namespace morula::app
