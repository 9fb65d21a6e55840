#include "LatticeCommand.hpp"
#include "Checkpointing.hpp"
#include "ConfigFile.hpp"
#include "MpiSession.hpp"
#include "MsdPlot.hpp"
#include "Progress.hpp"

#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace morula::app
{
namespace
{
using core::InputError;
using core::detail::concat;
namespace lat = morula::lattice;

struct SpeciesSettings
{
    std::string name;
    long count = 0;
    long tracers = -1; // particles of this species with ids (marked tracers); -1: not given
    std::array<lat::MoveProbabilities, 3> p; // per axis
};

struct ObstacleSettings
{
    double radius_nm = 0;
    double volume_fraction = 0;
};

// Every key of the configuration file (docs/models/lattice.md); the defaults are a small version of
// the paper's free-diffusion run (2 nm spacing, 10 ns steps).
struct LatticeSettings
{
    std::array<long, 3> size{ 64, 64, 64 };
    double spacing_nm = 2;
    double time_step_ns = 10;
    std::vector<std::string> boundary{ "periodic", "periodic", "periodic" };
    long capacity = 2;
    std::string scheme = "split";
    std::string kernels = "automatic";
    std::vector<SpeciesSettings> species;
    std::vector<ObstacleSettings> obstacles;
    long steps = 2000;
    long sample_every = 20;
    long seed = 1;
    bool tracers = true;
    std::string output = "lattice";
    std::string snapshots;
    long snapshot_every = 0;
    bool progress = true;
};

// (p_-1, p_0, p_+1) of one axis from the config: non-negative (checked by ConfigFile) and summing to 1.
lat::MoveProbabilities probabilities_from( const std::string& where, const std::vector<double>& v )
{
    const double sum = v[0] + v[1] + v[2];
    if ( std::abs( sum - 1 ) > 1e-9 )
    {
        char msg[256];
        std::snprintf( msg, sizeof msg, ": probabilities (%g, %g, %g) sum to %.12g; expected (p_-1, p_0, p_+1) summing to 1",
                       v[0], v[1], v[2], sum );
        throw InputError( where + msg );
    }
    return { v[0], v[1], v[2] };
}

void read_config( const std::string& path, LatticeSettings& s )
{
    const double big = ConfigTable::huge;
    ConfigTable t;
    t.custom( "size",
              [&s]( const ConfigFile& c, const std::string& key ) {
                  const auto v = c.integers( key, 3, 1, 1 << 20 );
                  s.size = { v[0], v[1], v[2] };
              } )
        .number( "spacing_nm", s.spacing_nm, 1e-300, big )
        .number( "time_step_ns", s.time_step_ns, 1e-300, big )
        .custom( "boundary",
                 [&s]( const ConfigFile& c, const std::string& key ) {
                     s.boundary = c.choices( key, 3, { "periodic", "reflecting" } );
                 } )
        .custom( "capacity",
                 [&s, &path]( const ConfigFile& c, const std::string& key ) {
                     s.capacity = c.integer( key, 2, 8 );
                     if ( s.capacity != 2 && s.capacity != 4 && s.capacity != 8 )
                         throw InputError( concat( "config '", path, "': key 'capacity' = ", s.capacity, " must be 2, 4 or 8" ) );
                 } )
        .choice( "scheme", s.scheme, { "split", "fused" } )
        .choice( "kernels", s.kernels, { "automatic", "compacted", "tiled", "gather" } )
        .integer( "steps", s.steps, 0, 4000000000L )
        .integer( "sample_every", s.sample_every, 1, 4000000000L )
        .integer( "seed", s.seed, 0, 9007199254740991L )
        .flag( "tracers", s.tracers )
        .text( "output", s.output )
        .text( "snapshots", s.snapshots )
        .integer( "snapshot_every", s.snapshot_every, 0, 4000000000L )
        .flag( "progress", s.progress )
        // after spacing_nm and time_step_ns: a diffusion coefficient is checked against them
        .custom( "species",
                 [&s, &path, big]( const ConfigFile& c, const std::string& key ) {
                    s.species.clear();
                    const auto list = c.objects( key, { "name", "count", "tracers", "diffusion_nm2_per_us", "probabilities" } );
                    for ( std::size_t i = 0; i < list.size(); ++i )
                    {
                        const auto& o = list[i];
                        const std::string item = concat( key, "[", i, "]" );
                        SpeciesSettings sp;
                        sp.name = o.has( "name" ) ? o.text( "name" ) : concat( "species ", i + 1 );
                        if ( !o.has( "count" ) )
                            throw InputError( concat( "config '", path, "': key '", item, ".count' is missing" ) );
                        sp.count = o.integer( "count", 0, 1L << 40 );
                        if ( o.has( "tracers" ) )
                            sp.tracers = o.integer( "tracers", 0, sp.count );
                        if ( o.has( "diffusion_nm2_per_us" ) == o.has( "probabilities" ) )
                            throw InputError( concat( "config '", path, "': ", item,
                                                      " needs exactly one of 'diffusion_nm2_per_us' and 'probabilities'" ) );
                        if ( o.has( "diffusion_nm2_per_us" ) )
                        {
                            const double d = o.number( "diffusion_nm2_per_us", 0, big );
                            const double max_d = s.spacing_nm * s.spacing_nm / ( 2 * s.time_step_ns ) * 1e3;
                            if ( d > max_d )
                                throw InputError( concat( "config '", path, "': key '", item, ".diffusion_nm2_per_us' = ", d,
                                                          " is larger than the lattice allows: spacing^2 / (2 time step) = ",
                                                          max_d, " nm^2/us" ) );
                            const auto p = lat::probabilities_for_diffusion( d * 1e-3, s.spacing_nm, s.time_step_ns );
                            sp.p = { p, p, p };
                        }
                        else
                        {
                            // one triple [p_-1, p_0, p_+1] for every axis
                            const auto v = o.numbers( "probabilities", 3, 0, 1 );
                            sp.p.fill( probabilities_from( concat( "config '", path, "': key '", item, ".probabilities'" ), v ) );
                        }
                        s.species.push_back( sp );
                    }
                 } )
        .custom( "obstacles",
                 [&s, &path, big]( const ConfigFile& c, const std::string& key ) {
                    const auto list = c.objects( key, { "radius_nm", "volume_fraction" }, true );
                    for ( const auto& o : list )
                    {
                        ObstacleSettings ob;
                        ob.radius_nm = o.number( "radius_nm", 1e-300, big );
                        ob.volume_fraction = o.number( "volume_fraction", 0, 1 );
                        s.obstacles.push_back( ob );
                    }
                    if ( s.obstacles.size() > 15 )
                        throw InputError( concat( "config '", path, "': key 'obstacles' has ", s.obstacles.size(),
                                                  " classes; at most 15 (site types 1..15)" ) );
                 } );
    t.read( path );
}
} // namespace

void check_lattice_config( const std::string& path )
{
    LatticeSettings s;
    read_config( path, s );
}

namespace
{

/*
  The model on one rank (LatticeDiffusion) or, under an MPI launcher with several ranks, cut into z
  slabs (parallel::DistributedLatticeDiffusion): the same config gives the same lattice bit for bit.
  Every rank builds the initial lattice (obstacles and particles are placed on the host with the
  hashed RNG) and keeps its own slab.
*/
template <int Slots>
class LatticeRun
{
  public:
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;

    LatticeRun( const exec& space, const lat::Lattice<Slots, mem>& lattice, const lat::DiffusionRules& rules,
                const lat::CodeMap& codes, const lat::DiffusionOptions& opt )
    {
#if MORULA_HAVE_MPI
        if ( MpiSession::size() > 1 )
        {
            const auto& shape = lattice.shape();
            const auto mine = parallel::slab_of_rank( shape.nz, MpiSession::rank(), MpiSession::size() );
            lat::LatticeShape slab_shape = shape;
            slab_shape.nz = mine.size();
            // validate before slicing, so that a bad rank count is reported as such
            parallel::DistributedLatticeDiffusion<Slots, exec>::validate( shape, slab_shape, MpiSession::rank(),
                                                                          MpiSession::size() );
            lat::Lattice<Slots, mem> slab( slab_shape, "lattice_slab_initial" );
            const std::size_t plane = std::size_t( shape.nx ) * std::size_t( shape.ny );
            Kokkos::deep_copy( slab.sites(), Kokkos::subview( lattice.sites(), Kokkos::make_pair(
                                                                                   plane * std::size_t( mine.begin ),
                                                                                   plane * std::size_t( mine.end ) ) ) );
            m_distributed = std::make_unique<parallel::DistributedLatticeDiffusion<Slots, exec>>(
                space, MpiSession::comm(), shape, slab, rules, codes, opt );
            return;
        }
#endif
        m_single.emplace( space, lattice, rules, codes, opt );
    }

    void advance( const exec& space, int steps )
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
        {
            m_distributed->advance( space, steps );
            return;
        }
#endif
        m_single->advance( space, steps );
    }
    lat::MsdSample msd( int species ) const
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
            return m_distributed->msd( species );
#endif
        return m_single->msd( species );
    }
    std::size_t particles() const
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
            return std::size_t( m_distributed->particles() );
#endif
        return m_single->particles();
    }
    unsigned long long overflows() const
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
            return m_distributed->overflows();
#endif
        return m_single->overflows();
    }
    std::vector<unsigned long long> code_counts( const exec& space ) const
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
            return m_distributed->code_counts( space );
#endif
        return m_single->code_counts( space );
    }
    //! The whole lattice's sites (gathered from the slabs on every rank when distributed).
    Kokkos::View<const lat::site_word*, Kokkos::HostSpace> sites( const exec& space ) const
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
            return m_distributed->gather( space );
#endif
        (void)space;
        return Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_single->lattice().sites() );
    }
    long long steps_done() const
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
            return m_distributed->steps_done();
#endif
        return m_single->steps_done();
    }
    //! Writes the model's checkpoint and, on rank 0, what `add` adds (the app's own state) to `path`
    //! (collective: the distributed model gathers its slabs to rank 0, which writes the file).
    void write_checkpoint( const std::string& path, const std::function<void( io::CheckpointWriter& )>& add ) const
    {
        io::CheckpointWriter out( lat::lattice_checkpoint_model );
#if MORULA_HAVE_MPI
        if ( m_distributed )
            m_distributed->checkpoint( out );
        else
#endif
            m_single->checkpoint( out );
        if ( MpiSession::rank() == 0 )
        {
            add( out );
            out.write( path );
        }
    }
    //! Resumes from a checkpoint of the same configuration (collective: every rank reads it).
    void restart( const io::CheckpointReader& in )
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
            return m_distributed->restart( in );
#endif
        m_single->restart( in );
    }
    std::string describe() const
    {
#if MORULA_HAVE_MPI
        if ( m_distributed )
            return concat( MpiSession::size(), " MPI ranks, z slabs of ", m_distributed->slab().size(), "+ planes, ",
                           parallel::to_string( m_distributed->transport() ), ", ", kernels( *m_distributed ),
                           " kernels" );
#endif
        return concat( "one rank, ", kernels( *m_single ), " kernels" );
    }

  private:
    template <class Model>
    static const char* kernels( const Model& m )
    {
        return lat::to_string( m.options().scheme == lat::PassScheme::split ? m.split_kernels() : m.fused_kernels() );
    }

    std::optional<lat::LatticeDiffusion<Slots, exec>> m_single;
#if MORULA_HAVE_MPI
    std::unique_ptr<parallel::DistributedLatticeDiffusion<Slots, exec>> m_distributed;
#endif
};

template <int Slots>
int run_lattice( const LatticeSettings& s, const CheckpointFlags& checkpoint_flags )
{
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    exec space;
    lat::LatticeShape shape( int( s.size[0] ), int( s.size[1] ), int( s.size[2] ) );
    for ( int a = 0; a < 3; ++a )
        shape.boundary[a] = s.boundary[a] == "periodic" ? lat::LatticeBoundary::periodic : lat::LatticeBoundary::reflecting;
    const int nspecies = int( s.species.size() );
    lat::DiffusionRules rules( nspecies );
    for ( int i = 0; i < nspecies; ++i )
        for ( int a = 0; a < 3; ++a )
            rules.set( i, a, s.species[i].p[a] );
    for ( std::size_t k = 0; k < s.obstacles.size(); ++k )
        rules.block( int( k + 1 ) );

    // Everything is checked before the first step: obstacles, particle counts, outputs.
    lat::Lattice<Slots, mem> lattice( shape );
    std::vector<double> obstacle_fraction;
    for ( std::size_t k = 0; k < s.obstacles.size(); ++k )
    {
        try
        {
            const auto r = lat::place_sphere_obstacles( space, lattice, s.obstacles[k].radius_nm / s.spacing_nm,
                                                        s.obstacles[k].volume_fraction, std::uint32_t( k + 1 ),
                                                        std::uint64_t( s.seed ) * 31 + k );
            obstacle_fraction.push_back( r.fraction );
            std::printf( "obstacles[%zu]: radius %g nm (%g sites), %zu spheres, volume fraction %.4f (target %g)\n", k,
                         s.obstacles[k].radius_nm, s.obstacles[k].radius_nm / s.spacing_nm, r.spheres, r.fraction,
                         s.obstacles[k].volume_fraction );
        }
        catch ( const InputError& e )
        {
            throw InputError( concat( "config: key 'obstacles[", k, "].volume_fraction' = ", s.obstacles[k].volume_fraction,
                                      ": ", e.what() ) );
        }
    }
    std::vector<std::size_t> counts;
    std::size_t total = 0;
    for ( const auto& sp : s.species )
    {
        counts.push_back( std::size_t( sp.count ) );
        total += std::size_t( sp.count );
    }
    // Marked tracers: some particles of a species carry ids, the others crowd without (any capacity);
    // otherwise every particle is a tracer ("tracers": true) or none is.
    bool marked = false;
    std::vector<std::size_t> marked_counts;
    for ( const auto& sp : s.species )
    {
        marked = marked || sp.tracers >= 0;
        marked_counts.push_back( std::size_t( std::max( 0L, sp.tracers ) ) );
    }
    if ( marked && !s.tracers )
        throw InputError( "config: key 'tracers' = false, but species give 'tracers' counts; remove one of them" );
    if ( !marked && s.tracers && total > lat::SiteLayout<Slots>::max_code )
        throw InputError( concat( "config: key 'tracers' = true needs one id per particle, at most ",
                                  lat::SiteLayout<Slots>::max_code, " with capacity ", Slots, "; the species have ",
                                  total, " particles (give each species a 'tracers' count to follow some of them, set "
                                         "\"tracers\": false to run without MSD, or use capacity 2)" ) );
    lat::CodeMap codes;
    try
    {
        if ( marked )
            codes = lat::place_particles( lattice, counts, marked_counts, rules, std::uint64_t( s.seed ) );
        else if ( s.tracers )
            codes = lat::CodeMap::tracers(
                lat::place_particles( lattice, counts, rules, std::uint64_t( s.seed ), lat::ParticleCodes::tracers ) );
        else
        {
            lat::place_particles( lattice, counts, rules, std::uint64_t( s.seed ), lat::ParticleCodes::species );
            codes = lat::CodeMap::species( nspecies );
        }
    }
    catch ( const InputError& e )
    {
        throw InputError( concat( "config: key 'species' (counts", marked ? " and tracers" : "", "): ", e.what() ) );
    }
    const bool tracking = codes.tracking();
    lat::DiffusionOptions opt;
    opt.scheme = s.scheme == "fused" ? lat::PassScheme::fused : lat::PassScheme::split;
    opt.seed = std::uint64_t( s.seed );
    opt.kernels = s.kernels == "compacted" ? lat::PassKernels::compacted
                  : s.kernels == "tiled"   ? lat::PassKernels::tiled
                  : s.kernels == "gather"  ? lat::PassKernels::gather
                                           : lat::PassKernels::automatic;
    LatticeRun<Slots> model( space, lattice, rules, codes, opt );
    const bool root = MpiSession::rank() == 0; // the one that writes files

    // Where the run samples (MSD rows, snapshots) and where its steps stop: the same in a run and in
    // its restarts, so a resumed run knows which rows and frames of its outputs to keep.
    auto sample_step = [&]( long step ) {
        return step % s.sample_every == 0 || step == s.steps ||
               ( !s.snapshots.empty() && s.snapshot_every > 0 && step % s.snapshot_every == 0 );
    };
    auto next_stop = [&]( long done ) {
        long chunk = std::min( s.sample_every - done % s.sample_every, s.steps - done );
        if ( !s.snapshots.empty() && s.snapshot_every > 0 )
            chunk = std::min( chunk, s.snapshot_every - done % s.snapshot_every );
        if ( checkpoint_flags.every > 0 )
            chunk = std::min( chunk, long( checkpoint_flags.every - done % checkpoint_flags.every ) );
        return done + chunk;
    };
    std::size_t species_with_tracers = 0;
    for ( int i = 0; i < nspecies; ++i )
        species_with_tracers += std::count( codes.species_of_tracer.begin(), codes.species_of_tracer.end(), i ) > 0;

    // --restart: the model continues from the checkpoint's step to the configured steps.
    CheckpointSchedule schedule( checkpoint_flags, s.output );
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
    std::size_t samples_before = 0;
    for ( long done = 0; done < start; )
    {
        done = next_stop( done );
        samples_before += done <= start && sample_step( done ) ? 1 : 0;
    }

    const std::string csv_path = s.output + "_msd.csv";
    const std::string msd_header = "time_s,species,msd_nm2,msd_x_nm2,msd_y_nm2,msd_z_nm2,msd_over_6t_nm2_per_us";
    std::ofstream csv;
    // A resumed series keeps the rows of the samples up to the checkpoint's step (a run that went on
    // after its last checkpoint, or ended at another step, wrote more); this run appends to them.
    // Rank 0 owns the file; a missing or short one is bad input on every rank.
    if ( tracking && start > 0 )
        MpiSession::check_on_root( [&] {
            if ( !keep_first_csv_rows( csv_path, samples_before * species_with_tracers, "--restart", msd_header ) )
                throw core::InputError( concat( "--restart: cannot read the MSD series '", csv_path,
                                                "' of the run to resume (run in the folder of its outputs, with its --output)" ) );
        } );
    if ( tracking && root )
    {
        if ( start > 0 )
            csv.open( csv_path, std::ios::app );
        else
            csv.open( csv_path );
        if ( !csv )
            throw core::IoError( "config: key 'output': cannot write '" + csv_path + "'" );
        if ( start == 0 )
            csv << msd_header << "\n";
    }
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

    const double lambda2 = s.spacing_nm * s.spacing_nm;
    std::vector<PlotSeries> series( static_cast<std::size_t>( nspecies ) );
    for ( int i = 0; i < nspecies; ++i )
    {
        series[i].name = s.species[i].name;
        double sum = 0;
        for ( const auto& p : s.species[i].p )
            sum += p.minus + p.plus;
        series[i].reference = lambda2 * sum / ( 6 * s.time_step_ns ) * 1e3; // nm^2/us
        // the plot's points up to the checkpoint (checkpoints of the app hold them)
        const std::string points = concat( "app/msd_plot/", i );
        if ( resumed && resumed->has( points ) )
        {
            const auto v = resumed->get<double>( points );
            for ( std::size_t k = 0; k + 1 < v.size() && k / 2 < samples_before; k += 2 )
                series[i].points.emplace_back( v[k], v[k + 1] );
        }
    }
    auto write_checkpoint = [&] {
        if ( csv.is_open() )
            csv.flush(); // the rows up to the checkpoint are on the disk before it
        model.write_checkpoint( schedule.file(), [&]( io::CheckpointWriter& out ) {
            for ( int i = 0; i < nspecies; ++i )
            {
                std::vector<double> v;
                for ( const auto& p : series[i].points )
                {
                    v.push_back( p.first );
                    v.push_back( p.second );
                }
                out.put( concat( "app/msd_plot/", i ), v, { v.size() / 2, 2 } );
            }
        } );
    };
    std::printf( "%s\n", core::build_summary().c_str() );
    std::printf( "lattice %d x %d x %d (%s, %s, %s), %g nm spacing, %g ns steps, %ld particles per site, %s passes, "
                 "%zu particles%s; %s\n",
                 shape.nx, shape.ny, shape.nz, s.boundary[0].c_str(), s.boundary[1].c_str(), s.boundary[2].c_str(),
                 s.spacing_nm, s.time_step_ns, s.capacity, s.scheme.c_str(), model.particles(),
                 !tracking ? "" : marked ? concat( " (", codes.species_of_tracer.size(), " of them tracers)" ).c_str() : " (tracers)",
                 model.describe().c_str() );
    for ( int i = 0; i < nspecies; ++i )
        std::printf( "species %d '%s': %ld particles, D0 = %g nm^2/us\n", i + 1, s.species[i].name.c_str(),
                     s.species[i].count, series[i].reference );

    auto sample = [&]( long step ) {
        const double t_s = double( step ) * s.time_step_ns * 1e-9;
        for ( int i = 0; i < nspecies && tracking && step > 0; ++i )
        {
            const auto m = model.msd( i );
            if ( m.tracers == 0 )
                continue;
            const double d = m.total() * lambda2 / ( 6 * t_s * 1e6 );
            if ( root )
                csv << t_s << "," << s.species[i].name << "," << m.total() * lambda2 << "," << m.per_axis[0] * lambda2
                << "," << m.per_axis[1] * lambda2 << "," << m.per_axis[2] * lambda2 << "," << d << "\n";
            series[i].points.emplace_back( t_s, d );
        }
        if ( !s.snapshots.empty() &&
             ( ( s.snapshot_every > 0 && step % s.snapshot_every == 0 ) || step == 0 || step == s.steps ) )
        {
            const auto sites = model.sites( space ); // collective when distributed
            if ( snapshots )
                snapshots->write_view( step, t_s, sites );
        }
    };

    if ( resumed )
        std::printf( "resumed from '%s' at step %ld\n", schedule.restart_file().c_str(), start );
    Progress progress( s.steps, s.progress && root );
    if ( start == 0 )
        sample( 0 );
    else
        progress.update( start );
    const auto t0 = std::chrono::steady_clock::now();
    for ( long done = start; done < s.steps; )
    {
        const long stop = next_stop( done );
        model.advance( space, int( stop - done ) );
        done = stop;
        if ( sample_step( done ) )
        {
            space.fence();
            sample( done );
        }
        progress.update( done );
        // Under mpirun a signal may reach the ranks at different steps: they agree on the checkpoint
        // and the stop, or one would leave the others waiting in the next step.
        int due[2] = { schedule.due( done, s.steps ) ? 1 : 0, CheckpointSchedule::stop_requested() ? 1 : 0 };
#if MORULA_HAVE_MPI
        if ( MpiSession::size() > 1 )
            MPI_Allreduce( MPI_IN_PLACE, due, 2, MPI_INT, MPI_LOR, MpiSession::comm() );
#endif
        if ( due[0] || due[1] )
        {
            write_checkpoint();
            if ( due[1] )
                throw StoppedBySignal{ schedule.file() };
        }
    }
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
    if ( tracking )
    {
        for ( int i = 0; i < nspecies; ++i )
            if ( !series[i].points.empty() )
                std::printf( "species '%s': MSD/6t at the end %.4g nm^2/us = %.4f D0\n", s.species[i].name.c_str(),
                             series[i].points.back().second, series[i].points.back().second / series[i].reference );
        std::printf( "MSD time series: %s\n", csv_path.c_str() );
        const std::string png = s.output + "_msd.png";
        std::string title = concat( "lattice ", shape.nx, "x", shape.ny, "x", shape.nz, ", ", s.spacing_nm, " nm, ",
                                    s.time_step_ns, " ns" );
        for ( std::size_t k = 0; k < s.obstacles.size(); ++k )
            title += concat( k ? "; " : ", obstacles r ", s.obstacles[k].radius_nm, " nm ",
                             int( 100 * obstacle_fraction[k] + 0.5 ), "%" );
        if ( root ) // the one that writes files
        {
            if ( write_msd_plot( png, title, series ) )
                std::printf( "plot of MSD/6t: %s\n", png.c_str() );
            else
                std::printf( "plot skipped: this morula was built without cairo (the CSV has the data)\n" );
        }
    }
    if ( snapshots )
        std::printf( "snapshots: %s_<step>.h5\n", snapshots->prefix().c_str() );
    return 0;
}
} // namespace

void add_lattice_command( CLI::App& app )
{
    auto config = std::make_shared<std::string>();
    auto overrides = std::make_shared<LatticeSettings>();
    auto checkpoints = std::make_shared<CheckpointFlags>();
    CLI::App* cmd = app.add_subcommand(
        "lattice", "Multiparticle lattice diffusion (Roberts et al. 2009): free, obstructed and crowded experiments, MSD" );
    cmd->add_option( "--config", *config, "JSON file; keys as in docs/models/lattice.md" );
    cmd->add_option( "--steps", overrides->steps, "Number of time steps" )->check( CLI::Range( 0L, 4000000000L ) );
    cmd->add_option( "--seed", overrides->seed, "Random seed" )->check( CLI::Range( 0L, 9007199254740991L ) );
    cmd->add_option( "--output", overrides->output, "Prefix of the CSV and PNG outputs" );
    cmd->add_option( "--scheme", overrides->scheme, "split or fused passes" )
        ->check( CLI::IsMember( { "split", "fused" } ) );
    cmd->add_option( "--kernels", overrides->kernels,
                     "pass kernels: automatic, compacted, tiled or gather (the same results, different speed)" )
        ->check( CLI::IsMember( { "automatic", "compacted", "tiled", "gather" } ) );
    cmd->add_flag( "!--no-progress", overrides->progress, "No progress bar" );
    add_checkpoint_flags( *cmd, *checkpoints );
    cmd->callback( [config, overrides, checkpoints, cmd] {
        LatticeSettings s;
        // Without a config file: two tracer species on the defaults' lattice.
        s.species = { { "fast", 2000, {} }, { "slow", 2000, {} } };
        s.species[0].p.fill( lat::probabilities_for_diffusion( 100e-3, s.spacing_nm, s.time_step_ns ) );
        s.species[1].p.fill( lat::probabilities_for_diffusion( 10e-3, s.spacing_nm, s.time_step_ns ) );
        if ( !config->empty() )
            read_config( *config, s );
        if ( cmd->count( "--steps" ) ) s.steps = overrides->steps;
        if ( cmd->count( "--seed" ) ) s.seed = overrides->seed;
        if ( cmd->count( "--output" ) ) s.output = overrides->output;
        if ( cmd->count( "--scheme" ) ) s.scheme = overrides->scheme;
        if ( cmd->count( "--kernels" ) ) s.kernels = overrides->kernels;
        if ( cmd->count( "--no-progress" ) ) s.progress = false;
        if ( s.capacity == 2 )
            run_lattice<2>( s, *checkpoints );
        else if ( s.capacity == 4 )
            run_lattice<4>( s, *checkpoints );
        else
            run_lattice<8>( s, *checkpoints );
    } );
}

} // namespace morula::app
