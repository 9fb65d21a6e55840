#include "EpidermisCommand.hpp"
#include "EpidermisSetup.hpp"
#include "Checkpointing.hpp"
#include "CliOverrides.hpp"
#include "ConfigFile.hpp"
#include "RunLoop.hpp"
#include "TissuePicture.hpp"

#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace morula::app
{
void check_epidermis_config( const std::string& path )
{
    EpidermisSettings s;
    read_epidermis_config( path, s );
    epidermis_parameters( s );
}

namespace
{

/*!
  A restarted run's CSV: the rows of the run being resumed up to step `keep_through` (the last frame at
  or before its checkpoint; later rows came from after the checkpoint or from an end of run that the
  resumed run goes past), opened for appending. The header is checked, so a CSV of another kind is not
  continued.
*/
std::ofstream resume_csv( const std::string& path, const std::string& header, long long keep_through )
{
    const std::string where = "morula epidermis --restart";
    // `header` ends with its newline; the file's first line does not.
    if ( !keep_csv_rows_up_to( path, keep_through, where, header.substr( 0, header.size() - 1 ) ) )
        throw core::InputError( where + ": cannot read '" + path + "', the CSV of the run being resumed (same --output)" );
    std::ofstream out( path, std::ios::app );
    if ( !out )
        throw core::IoError( where + ": cannot append to '" + path + "'" );
    return out;
}

template <class Scalar>
int run_epidermis( const EpidermisSettings& s, const CheckpointFlags& flags )
{
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    exec space;
    const sem::EpidermisParameters p = epidermis_parameters( s );

    const auto layer = sem::monolayer<Scalar>( monolayer_spec( s ), p.mechanics );

    // Memory bound before starting: every growth event adds at most one element per cell and a cell
    // holds at least division_elements / 2 of them, so elements grow at most by (1 + 2 / division_elements)
    // per event. About 160 bytes per element (positions x 4 arrays, indices, list) and 200 per cell.
    double elements = double( layer.tissue.elements() );
    if ( p.model == sem::EpidermisModel::full )
        elements *= std::pow( 1.0 + 2.0 / double( s.division_elements ), double( s.steps / s.growth_interval ) );
    const double bytes = elements * ( 12.0 * sizeof( Scalar ) + 3 * 4 + 40 * 4 ) +
                         elements / 10.0 * ( 200.0 );
    const double available = core::available_memory_bytes<mem>();
    if ( available > 0 && bytes > 0.8 * available )
        throw core::InputError( core::detail::concat(
            "morula epidermis: this run may grow to ", elements, " elements, about ", bytes / 1e9,
            " GB, more than 80% of the ", available / 1e9, " GB available on the device; use fewer cells or steps" ) );

    std::printf( "%s\n", core::build_summary().c_str() );
    std::printf( "epidermis (%s model, %s, %s boundary): %zu cells of %ld elements on a %.3g x %.3g membrane, "
                 "%ld steps of dt = %g (%s)\n",
                 s.model.c_str(), s.precision.c_str(), s.boundary.c_str(), layer.tissue.cells(), s.elements_per_cell,
                 layer.box.length( 0 ), layer.box.length( 1 ), s.steps, s.dt, s.integrator.c_str() );
    sem::Epidermis<Scalar, mem> model( sem::Tissue<Scalar, mem>( layer.tissue ), layer.box, p );

    // --restart: the configured model continues from the checkpoint's state and step; its outputs keep
    // the frames up to the last one at or before that step and continue after it.
    const CheckpointSchedule schedule( flags, s.output );
    long long resume_after = -1;
    if ( schedule.restarting() )
    {
        io::restart_from_checkpoint( model, schedule.restart_file() );
        if ( model.steps_done() > s.steps )
            throw core::InputError( core::detail::concat( "morula epidermis: the checkpoint '", schedule.restart_file(),
                                                          "' is at step ", model.steps_done(), ", beyond the run's ",
                                                          s.steps, " steps" ) );
        resume_after = s.output_every > 0 ? model.steps_done() / s.output_every * s.output_every : 0;
        std::printf( "restarted from '%s' at step %lld (%d cells)\n", schedule.restart_file().c_str(),
                     model.steps_done(), model.tissue().num_cells() );
    }
    const long long first_step = model.steps_done();

    std::unique_ptr<io::TissueSnapshotWriter> writer;
    if ( io::tissue_snapshots_available() )
        writer = std::make_unique<io::TissueSnapshotWriter>( s.output, resume_after );
    else
        std::printf( "HDF5 not available in this build: no snapshots\n" );
    const std::string csv_header = "step,time,cells,elements,basal_cells,suprabasal_cells,adherent_cells,"
                                   "mean_centre_height,max_centre_height,layers\n";
    std::ofstream csv;
    if ( resume_after >= 0 )
        csv = resume_csv( s.output + ".csv", csv_header, resume_after );
    else
    {
        csv.open( s.output + ".csv" );
        if ( !csv )
            throw core::IoError( "morula epidermis: cannot write '" + s.output + ".csv'" );
        csv << csv_header;
    }

    // A frame of the current state, recorded (a CSV row; the caller writes the snapshot) or not.
    auto frame = [&]( bool record ) {
        io::TissueFrame f = epidermis_frame( model, space ); // centres and adhesion updated
        const int m = static_cast<int>( f.cells() );
        std::vector<double> ha;
        core::copy_to_host( model.tissue().adhesion(), m, ha );
        const auto& hs = f.cell_state;
        const auto& hc = f.cell_centres;
        // Layer statistics: a cell's layer is its centre height in units of the cell footprint.
        int basal = 0, adherent = 0, layers = 0;
        double mean_z = 0, max_z = 0;
        for ( int c = 0; c < m; ++c )
        {
            basal += hs[c] == 0;
            adherent += ha[c] > 0;
            const double z = hc[3 * c + 2];
            mean_z += z / m;
            max_z = std::max( max_z, z );
            layers = std::max( layers, 1 + static_cast<int>( std::floor( z / layer.footprint ) ) );
        }
        if ( record )
        {
            csv << f.step << ',' << f.time << ',' << m << ',' << f.elements() << ',' << basal << ','
                << m - basal << ',' << adherent << ',' << mean_z << ',' << max_z << ',' << layers << '\n';
            csv.flush();
        }
        return f;
    };

    // A resumed run's first frame is in its outputs already (or, past the last frame, not on the schedule).
    io::TissueFrame last = frame( resume_after < 0 );
    if ( writer && resume_after < 0 )
        writer->write( last );
    const auto t0 = std::chrono::steady_clock::now();
    // Steps run through advance() (chunks without the host in between) up to the next snapshot, progress
    // report or checkpoint, whichever comes first; all three fall on multiples of their period, so a
    // resumed run stops where the uninterrupted one did. The checkpoint comes after the frame: a run
    // killed past it leaves rows and frames the restart drops.
    RunLoop loop( schedule, s.steps, s.progress );
    loop.stop_every( 1000 ).stop_every( s.output_every );
    loop.run(
        first_step, [&]( long long n ) { model.advance( space, n ); },
        [&]( long long i ) {
            if ( ( s.output_every > 0 && i % s.output_every == 0 ) || i == s.steps )
            {
                last = frame( true );
                if ( writer )
                    writer->write( last );
            }
        },
        [&] { io::write_checkpoint( model, schedule.file() ); },
        [&] { return core::detail::concat( model.tissue().num_cells(), " cells" ); } );
    const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    TissueView view;
    view.box_x = layer.box.length( 0 );
    view.box_y = layer.box.length( 1 );
    view.title = core::detail::concat( "epidermis, ", s.model, " model: step ", last.step, ", ", last.cells(), " cells" );
    const bool png = write_tissue_picture( s.output + ".png", last, view );
    const long ran = s.steps - static_cast<long>( first_step );
    std::printf( "done: %ld steps in %.2f s (%.1f us/step); %zu cells, %zu elements, %lld divisions, %lld list builds\n",
                 s.steps, seconds, ran ? 1e6 * seconds / ran : 0.0, last.cells(), last.elements(),
                 model.divisions(), model.mechanics().list_builds() );
    if ( first_step > 0 )
        std::printf( "(%ld of the steps after the restart at step %lld)\n", ran, first_step );
    std::printf( "wrote %s.csv%s%s\n", s.output.c_str(), png ? ( ", " + s.output + ".png" ).c_str() : "",
                 writer ? ( ", " + writer->xdmf_path() + " (frames " + s.output + "_<step>.h5)" ).c_str() : "" );
    if ( schedule.due( s.steps, s.steps ) && first_step < s.steps )
        std::printf( "checkpoint %s at step %ld\n", schedule.file().c_str(), s.steps );
    return 0;
}
} // namespace

void add_epidermis_command( CLI::App& app )
{
    auto config = std::make_shared<std::string>();
    auto checkpoints = std::make_shared<CheckpointFlags>();
    CLI::App* cmd = app.add_subcommand(
        "epidermis", "3D epidermis: subcellular elements, gene network, growth and division (Christley et al. 2010)" );
    auto o = make_cli_overrides<EpidermisSettings>( *cmd );
    cmd->add_option( "--config", *config, "JSON file; keys as in docs/models/epidermis.md" );
    o->option( "--model", &EpidermisSettings::model, "movement, gene_network or full" )
        ->check( CLI::IsMember( { "movement", "gene_network", "full" } ) );
    o->option( "--precision", &EpidermisSettings::precision, "float or double" )->check( CLI::IsMember( { "float", "double" } ) );
    o->option( "--cells", &EpidermisSettings::cells, "initial cells on the membrane" )->check( CLI::Range( 1L, 10000000L ) );
    o->option( "--elements-per-cell", &EpidermisSettings::elements_per_cell, "elements of each initial cell" )
        ->check( CLI::Range( 1L, 10000L ) );
    o->option( "--steps", &EpidermisSettings::steps, "time steps" )->check( CLI::Range( 0L, 1000000000L ) );
    o->option( "--dt", &EpidermisSettings::dt, "time step" )->check( CLI::PositiveNumber );
    o->option( "--boundary", &EpidermisSettings::boundary, "periodic or none" )->check( CLI::IsMember( { "periodic", "none" } ) );
    o->option( "--output-every", &EpidermisSettings::output_every, "steps between snapshots (0: first and last)" )
        ->check( CLI::Range( 0L, 1000000000L ) );
    o->option( "--seed", &EpidermisSettings::seed, "seed of the cells' orientations" )->check( CLI::Range( 0L, 9007199254740991L ) );
    o->option( "--output", &EpidermisSettings::output, "prefix of the .h5, .xmf, .csv and .png files" );
    o->flag( "--no-progress", &EpidermisSettings::progress, false, "no progress bar" );
    add_checkpoint_flags( *cmd, *checkpoints );
    cmd->callback( [config, o, checkpoints] {
        EpidermisSettings s;
        if ( !config->empty() )
            read_epidermis_config( *config, s );
        o->apply( s ); // options given on the command line win over the file
        if ( s.precision == "float" )
            run_epidermis<float>( s, *checkpoints );
        else
            run_epidermis<double>( s, *checkpoints );
    } );
}

} // namespace morula::app
