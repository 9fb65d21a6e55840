#include "LatticeCommand.hpp"
#include "Checkpointing.hpp"
#include "CliOverrides.hpp"
#include "LatticeConfig.hpp"
#include "LatticeCrowding.hpp"
#include "LatticeDriver.hpp"
#include "LatticeSetup.hpp"
#include "MpiSession.hpp"
#include "MsdSeries.hpp"
#include "RunLoop.hpp"

#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace morula::app
{
void check_lattice_config( const std::string& path )
{
    LatticeSettings s;
    read_lattice_config( path, s );
}

namespace
{
using core::InputError;
using core::detail::concat;
namespace lat = morula::lattice;
using exec_space = Kokkos::DefaultExecutionSpace;
using mem_space = exec_space::memory_space;

template <int Slots>
std::string describe( const LatticeModel<Slots>& m )
{
    const char* kernels =
        lat::to_string( m.options().scheme == lat::PassScheme::split ? m.split_kernels() : m.fused_kernels() );
#if MORULA_HAVE_MPI
    if ( m.size() > 1 )
        return concat( m.size(), " MPI ranks, z slabs of ", m.slab().second - m.slab().first, "+ planes, ",
                       parallel::to_string( m.transport() ), ", ", kernels, " kernels" );
#endif
    return concat( "one rank, ", kernels, " kernels" );
}

template <int Slots>
int run_lattice( const LatticeSettings& s, const CheckpointFlags& checkpoint_flags )
{
    exec_space space;
    const lat::LatticeShape shape = lattice_shape( s );
    const int nspecies = int( s.species.size() );
    const auto rules = lattice_rules( s );

    // Everything is checked before the first step: obstacles, particle counts, outputs.
    auto start_state = make_lattice_start<Slots>( space, s, MpiSession::size() );
    auto& lattice = start_state.lattice;
    const lat::CodeMap& codes = start_state.codes;
    std::vector<double> obstacle_fraction;
    for ( std::size_t k = 0; k < start_state.obstacles.size(); ++k )
    {
        const auto& r = start_state.obstacles[k];
        obstacle_fraction.push_back( r.fraction );
        std::printf( "obstacles[%zu]: radius %g nm (%g sites), %zu spheres, volume fraction %.4f (target %g)\n", k,
                     s.obstacles[k].radius_nm, s.obstacles[k].radius_nm / s.spacing_nm, r.spheres, r.fraction,
                     s.obstacles[k].volume_fraction );
    }
    const bool tracking = codes.tracking();
    const bool marked = tracking && codes.species_codes > 0;
    const lat::DiffusionOptions opt = lattice_options( s );
    std::optional<LatticeModel<Slots>> driver;
    start_model( driver, space, lattice, rules, codes, opt );
    auto& model = *driver;
    lattice = {}; // the driver holds its own copy
    const bool root = MpiSession::rank() == 0; // the one that writes files

    // Where the run samples (MSD rows, snapshots) and stops: the same in a run and in its restarts, so a
    // resumed run knows which rows and frames of its outputs to keep.
    CheckpointSchedule schedule( checkpoint_flags, s.output );
    const bool snapshots_every = !s.snapshots.empty() && s.snapshot_every > 0;
    RunLoop loop( schedule, s.steps, s.progress );
    loop.stop_every( s.sample_every ).stop_every( snapshots_every ? s.snapshot_every : 0 );
    auto sample_step = [&]( long long step ) {
        return step % s.sample_every == 0 || step == s.steps || ( snapshots_every && step % s.snapshot_every == 0 );
    };
    std::size_t species_with_tracers = 0;
    for ( int i = 0; i < nspecies; ++i )
        species_with_tracers += std::count( codes.species_of_tracer.begin(), codes.species_of_tracer.end(), i ) > 0;

    // --restart: the model continues from the checkpoint's step to the configured steps.
    long start = 0;
    std::optional<io::CheckpointReader> resumed;
    if ( schedule.restarting() )
    {
        resumed.emplace( schedule.restart_file(), lat::lattice_checkpoint_model );
        model.restart( *resumed );
        start = long( model.steps_done() );
        if ( start > s.steps )
            throw InputError( concat( "--restart '", schedule.restart_file(), "': its step ", start,
                                      " is beyond the run's ", s.steps, " steps" ) );
    }
    // the samples this run takes up to the checkpoint's step (a first part that ended at another step
    // took one more at its end)
    const std::size_t samples_before = loop.stops_through( start, sample_step );
    std::vector<PlotSeries> species( static_cast<std::size_t>( nspecies ) );
    for ( int i = 0; i < nspecies; ++i )
    {
        species[i].name = s.species[i].name;
        double sum = 0;
        for ( const auto& p : s.species[i].p )
            sum += p.minus + p.plus;
        species[i].reference = s.spacing_nm * s.spacing_nm * sum / ( 6 * s.time_step_ns ) * 1e3; // D0, nm^2/us
    }
    MsdSeries msd( s.output, species, species_with_tracers, s.spacing_nm, tracking );
    if ( resumed )
        msd.resume( samples_before, *resumed );
    msd.open();
    std::unique_ptr<io::LatticeSnapshotWriter> snapshots;
    if ( !s.snapshots.empty() && root )
    {
        // a resumed series keeps its frames up to the last snapshot step of this run before the checkpoint
        long long keep = -1;
        if ( resumed )
            keep = start == s.steps ? start : s.snapshot_every > 0 ? start / s.snapshot_every * s.snapshot_every : 0;
        snapshots = std::make_unique<io::LatticeSnapshotWriter>( s.snapshots, shape.nx, shape.ny, shape.nz,
                                                                 s.spacing_nm, Slots, keep );
    }

    auto write_checkpoint = [&] {
        io::CheckpointWriter out( LatticeModel<Slots>::checkpoint_model );
        model.checkpoint( out ); // collective on slabs: rank 0 receives the whole state
        msd.checkpoint( out );
        if ( root )
            out.write( schedule.file() );
    };
    std::printf( "%s\n", core::build_summary().c_str() );
    std::printf( "lattice %d x %d x %d (%s, %s, %s), %g nm spacing, %g ns steps, %ld particles per site, %s passes, "
                 "%zu particles%s; %s\n",
                 shape.nx, shape.ny, shape.nz, s.boundary[0].c_str(), s.boundary[1].c_str(), s.boundary[2].c_str(),
                 s.spacing_nm, s.time_step_ns, s.capacity, s.scheme.c_str(), model.particles(),
                 !tracking ? "" : marked ? concat( " (", codes.species_of_tracer.size(), " of them tracers)" ).c_str() : " (tracers)",
                 describe( model ).c_str() );
    for ( int i = 0; i < nspecies; ++i )
        std::printf( "species %d '%s': %ld particles, D0 = %g nm^2/us\n", i + 1, s.species[i].name.c_str(),
                     s.species[i].count, species[i].reference );

    auto sample = [&]( long step ) {
        const double t_s = double( step ) * s.time_step_ns * 1e-9;
        for ( int i = 0; i < nspecies && tracking && step > 0; ++i )
        {
            const auto m = model.msd( i );
            if ( m.tracers > 0 )
                msd.add( i, t_s, m );
        }
        if ( !s.snapshots.empty() &&
             ( ( s.snapshot_every > 0 && step % s.snapshot_every == 0 ) || step == 0 || step == s.steps ) )
        {
            const auto sites = model.gather( space ); // collective on slabs
            if ( snapshots )
                snapshots->write_view( step, t_s, sites );
        }
    };

    if ( resumed )
        std::printf( "resumed from '%s' at step %ld\n", schedule.restart_file().c_str(), start );
    if ( start == 0 )
        sample( 0 );
    const auto t0 = std::chrono::steady_clock::now();
    loop.run(
        start, [&]( long long n ) { model.advance( space, n ); },
        [&]( long long done ) {
            if ( !sample_step( done ) )
                return;
            space.fence();
            sample( done );
        },
        write_checkpoint, [] { return std::string(); } );
    space.fence();
    const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    const auto final_counts = model.code_counts( space ); // also re-checks every invariant
    unsigned long long on_lattice = 0;
    for ( auto n : final_counts )
        on_lattice += n;
    std::printf( "%ld steps in %.3f s: %.3g site updates/s; %llu overflows (particles placed from the overflow list); "
                 "%llu of %zu particles on the lattice\n",
                 s.steps - start, seconds,
                 s.steps > start ? double( shape.sites() ) * double( s.steps - start ) / seconds : 0.0,
                 model.overflows(), on_lattice, model.particles() );
    if ( on_lattice != model.particles() )
        throw core::CapacityError( "particles were lost: a bug, please report it" );
    std::string title = concat( "lattice ", shape.nx, "x", shape.ny, "x", shape.nz, ", ", s.spacing_nm, " nm, ",
                                s.time_step_ns, " ns" );
    for ( std::size_t k = 0; k < s.obstacles.size(); ++k )
        title += concat( k ? "; " : ", obstacles r ", s.obstacles[k].radius_nm, " nm ",
                         int( 100 * obstacle_fraction[k] + 0.5 ), "%" );
    msd.finish( title );
    if ( snapshots )
        std::printf( "snapshots: %s_<step>.h5\n", snapshots->prefix().c_str() );
    return 0;
}
} // namespace

void add_lattice_command( CLI::App& app )
{
    auto config = std::make_shared<std::string>();
    auto checkpoints = std::make_shared<CheckpointFlags>();
    CLI::App* cmd = app.add_subcommand(
        "lattice", "Multiparticle lattice diffusion (Roberts et al. 2009): free, obstructed and crowded experiments, MSD" );
    auto overrides = make_cli_overrides<LatticeSettings>( *cmd );
    cmd->add_option( "--config", *config, "JSON file; keys as in docs/models/lattice.md" );
    overrides->option( "--steps", &LatticeSettings::steps, "Number of time steps" )->check( CLI::Range( 0L, 4000000000L ) );
    overrides->option( "--seed", &LatticeSettings::seed, "Random seed" )->check( CLI::Range( 0L, 9007199254740991L ) );
    overrides->option( "--output", &LatticeSettings::output, "Prefix of the CSV and PNG outputs" );
    overrides->option( "--scheme", &LatticeSettings::scheme, "split or fused passes" )
        ->check( CLI::IsMember( { "split", "fused" } ) );
    overrides->option( "--kernels", &LatticeSettings::kernels,
                     "pass kernels: automatic, compacted, tiled or gather (the same results, different speed)" )
        ->check( CLI::IsMember( { "automatic", "compacted", "tiled", "gather" } ) );
    CLI::Option* sweep_slots =
        overrides
            ->option( "--sweep-slot-fraction", &LatticeSettings::sweep_slot_fraction,
                      "Crowding sweep: the run at each fraction of the slots filled (comma-separated), D_eff/D0 per species" )
            ->delimiter( ',' )
            ->check( CLI::Range( 0.0, 1.0 ) );
    CLI::Option* sweep_obstacles =
        overrides
            ->option( "--sweep-obstacle-fraction", &LatticeSettings::sweep_obstacle_fraction,
                      "Crowding sweep: the run at each volume fraction of obstacles[0] (comma-separated), D_eff/D0 per species" )
            ->delimiter( ',' )
            ->check( CLI::Range( 0.0, 1.0 ) );
    overrides->flag( "--no-progress", &LatticeSettings::progress, false, "No progress bar" );
    add_checkpoint_flags( *cmd, *checkpoints );
    cmd->callback( [config, overrides, checkpoints, sweep_slots, sweep_obstacles] {
        // Without a config file: two tracer species on the defaults' lattice.
        LatticeSettings s = default_lattice_settings();
        if ( !config->empty() )
            read_lattice_config( *config, s );
        overrides->apply( s ); // options given on the command line win over the file
        // a sweep on the command line replaces the file's sweep of the other kind
        if ( sweep_slots->count() > 0 && sweep_obstacles->count() == 0 )
            s.sweep_obstacle_fraction.clear();
        if ( sweep_obstacles->count() > 0 && sweep_slots->count() == 0 )
            s.sweep_slot_fraction.clear();
        if ( !s.sweep_slot_fraction.empty() || !s.sweep_obstacle_fraction.empty() )
        {
            if ( !checkpoints->restart.empty() || checkpoints->every > 0 || !checkpoints->file.empty() )
                throw InputError( "--checkpoint, --checkpoint-every and --restart: not with a crowding sweep (each point "
                                  "is a short run of its own)" );
            run_crowding_sweep( s );
            return;
        }
        if ( s.capacity == 2 )
            run_lattice<2>( s, *checkpoints );
        else if ( s.capacity == 4 )
            run_lattice<4>( s, *checkpoints );
        else
            run_lattice<8>( s, *checkpoints );
    } );
}

} // namespace morula::app
