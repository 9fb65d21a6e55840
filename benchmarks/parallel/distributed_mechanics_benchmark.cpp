// Distributed sphere mechanics over MPI (issue #11): weak and strong scaling, and the time of halo
// exchange and migration per step against the compute.
//
//   mpiexec -n P distributed_mechanics_benchmark (--agents-per-rank N | --agents-total N)
//       [--steps 20] [--warmup-steps 4] [--rebuild-every 1] [--scalar float|double] [--runs 3]
//       [--neighbors 27] [--max-displacement 3] [--images minimum|ghosts]
//       [--order automatic|exchange-first|forces-first]
//       [--transport automatic|host|staged|gpu-aware|nccl|ipc] [--timeline PREFIX] [--out results.json]
//
// Agents: BioDynaMo's cell of benchmark B of mechanics_benchmark (diameter 30, adherence 0.4, the
// default radius extension 1.5, so the interaction distance is 33), uniformly random in a periodic
// cube whose edge gives `--neighbors` interacting neighbours per agent on average (27 by default: the
// roofline case of benchmark B), sized from the total agent count (box_edge_for_neighbors). Unlike B
// the agents move (max_displacement 3 by default): at this density they overlap and push each other,
// so agents cross subdomain faces and migration has work. Each rank creates its own agents at random
// positions inside its subdomain (ids made globally unique with MPI_Exscan), so no agent needs to move
// before the first step. The halo width is the interaction distance plus 2 (rebuild_every - 1)
// max_displacement, as DistributedSphereMechanics requires.
//
// One run: fresh agents, --warmup-steps untimed steps, then --steps steps with every phase fenced and
// timed between barriers over the ranks (DistributedSphereMechanics::step with timed: no overlap,
// no wait for a slower rank inside a phase): migration, halo build (the collective halo-width check and
// the new Halo), halo update (between rebuilds, when --rebuild-every > 1), sort (sort_every = 1: every
// step on a rank without a halo, else at rebuilds), grid (owned agents, ghosts), forces (owned, then the
// ghosts' on the boundary agents), move. Per-step means of
// each rank are reduced over the ranks with MPI_Reduce (max and mean), and the median over --runs runs
// of those is reported, with the share of halo + migration in the step (target of issue #11: <= 15%),
// ghosts and bytes sent per rank per step, and the transport MPI used (host memory, GPU-aware, staged).
//
// Baselines (issue #23): every run also times (a) the distributed step without phase fences, wall
// clock over --steps steps with one fence at the end ("step_wall"), and (b) the plain, non-distributed
// single-GPU step (SphereMechanics: grid + sort + forces + move) on agents_per_rank agents at the same
// density in a periodic cube of their own, timed the same way ("plain_step"). Weak-scaling efficiency
// against the plain step is plain_step / step_wall (the same agents per GPU); the throughput of P
// ranks against one plain GPU is P x that. --images chooses how a rank reaches its own periodic images
// (minimum image of its grid, the default, or ghosts); --transport sets MORULA_TRANSPORT. --timeline
// records one unfenced rebuild cycle per rank (StepTimeline.hpp; timeline_summary.py summarises it).
// --order picks which of the ghost exchange and the owned forces a step starts first (issue #24;
// parallel::OverlapOrder; automatic: forces first with NCCL).
//
// With several GPUs visible, each rank takes device (node-local rank mod device count), the local rank
// coming from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), given to Kokkos as --kokkos-device-id.
#include "MpiBenchmarkUtils.hpp"
#include "StepTimeline.hpp"

#include <common/BenchmarkUtils.hpp>

#include <morula/Morula.hpp>
#include <morula/Parallel.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

namespace dist_bench
{
using morula::bench::Stats;
using morula::bench::mpi::reduce;
namespace mechanics = morula::mechanics;
namespace parallel = morula::parallel;

struct Settings
{
    long long agents_per_rank = 0;
    long long agents_total = 0;
    int steps = 20;
    int warmup_steps = 4;
    int rebuild_every = 1;
    std::string scalar = "double";
    int runs = 3;
    double neighbors = 27;
    double max_displacement = 3;
    std::string images = "minimum";
    std::string transport = "automatic";
    std::string order = "automatic";
    std::string timeline; // file prefix: one unfenced rebuild cycle recorded per rank (StepTimeline.hpp)
    std::string out;
};

// Seconds per step of `steps` steps, wall clock, one fence at the end (after a barrier at the start).
template <class ExecutionSpace, class Step>
double wall_per_step( const ExecutionSpace& exec, int steps, Step&& step )
{
    exec.fence();
    MPI_Barrier( MPI_COMM_WORLD );
    const auto t0 = std::chrono::steady_clock::now();
    for ( int s = 0; s < steps; ++s )
        step();
    exec.fence();
    return std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count() / steps;
}

/*
  The plain single-GPU step on n agents at the distributed run's density, in a periodic cube of their
  own: SphereMechanics::update_grid (grid, sort every sort_every) + compute_displacements +
  apply_displacements, as a single-rank user runs it. Seconds per step.
*/
template <class Scalar, class ExecutionSpace>
double plain_step( const ExecutionSpace& exec, const Settings& set, long long n,
                   const mechanics::MechanicsParameters<Scalar>& mp, int run )
{
    using mem = typename ExecutionSpace::memory_space;
    const mechanics::AgentProperties<Scalar> props;
    const double distance = double( props.diameter ) + 2 * double( mp.force.radius_extension );
    const double edge = mechanics::box_edge_for_neighbors( n, set.neighbors, distance );
    const auto box = morula::core::Box<Scalar>::cube( Scalar( edge ), morula::core::Boundary::periodic );
    auto agents = mechanics::random_agents<Scalar, mem>( exec, static_cast<int>( n ), box, props,
                                                         std::uint64_t( 4242 ) + std::uint64_t( run ) );
    mechanics::SphereMechanics<Scalar, mem> m( box, mp );
    auto step = [&] {
        m.update_grid( exec, agents );
        m.compute_displacements( exec, agents );
        m.apply_displacements( exec, agents );
    };
    for ( int s = 0; s < set.warmup_steps; ++s )
        step();
    return wall_per_step( exec, set.steps, step );
}

//! Per-step means of one rank's phases (seconds), and what it sent.
struct RankSample
{
    std::map<std::string, double> phase;
    double ghosts = 0;
    double owned = 0;
    double bytes_sent = 0;
    double migrated_sent = 0;
};

template <class Scalar, class ExecutionSpace>
RankSample one_run( const ExecutionSpace& exec, const Settings& set, const parallel::CartesianDecomposition<Scalar>& dec,
                    long long n_local, long long first_id, const mechanics::MechanicsParameters<Scalar>& mp,
                    int run, std::string& transport )
{
    using mem = typename ExecutionSpace::memory_space;
    const mechanics::AgentProperties<Scalar> props; // diameter 30, adherence 0.4, as in benchmark B
    const morula::core::Box<Scalar> sub( dec.lo(), dec.hi(), morula::core::Boundary::closed );
    auto agents = mechanics::random_agents<Scalar, mem>(
        exec, static_cast<int>( n_local ), sub, props,
        std::uint64_t( 7 ) + std::uint64_t( 1000003 ) * std::uint64_t( dec.rank() ) + std::uint64_t( run ) );
    {
        const auto ids = agents.ids();
        const std::int64_t offset = first_id;
        Kokkos::parallel_for(
            "morula::bench::global_ids", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, static_cast<int>( agents.size() ) ),
            KOKKOS_LAMBDA( const int i ) { ids( i ) += offset; } );
    }
    const auto images = set.images == "ghosts" ? parallel::PeriodicImages::ghosts : parallel::PeriodicImages::minimum_image;
    const auto order = set.order == "exchange-first" ? parallel::OverlapOrder::exchange_first
                       : set.order == "forces-first" ? parallel::OverlapOrder::forces_first
                                                     : parallel::OverlapOrder::automatic;
    parallel::DistributedSphereMechanics<Scalar, mem> dm( dec, mp, set.rebuild_every, images, order );
    for ( int s = 0; s < set.warmup_steps; ++s )
        dm.step( exec, agents );
    // Unfenced steps first (what a run costs), then the same number with every phase fenced and timed.
    const double step_wall = wall_per_step( exec, set.steps, [&] { dm.step( exec, agents ); } );
    if ( run == 0 && !set.timeline.empty() )
    {
        // One rebuild cycle (rebuild_every steps, the first a rebuild), unfenced, recorded.
        while ( dm.steps_since_rebuild() != dm.rebuild_every() )
            dm.step( exec, agents );
        morula::bench::timeline::start( exec );
        for ( int s = 0; s < set.rebuild_every; ++s )
            dm.step( exec, agents );
        const auto records = morula::bench::timeline::stop( exec );
        const std::string file = set.timeline + "_rank" + std::to_string( dec.rank() ) + ".json";
        morula::bench::write_json( file, nlohmann::json{ { "benchmark", "distributed_mechanics_benchmark" },
                                                         { "rank", dec.rank() },
                                                         { "ranks", dec.size() },
                                                         { "agents_per_rank", n_local },
                                                         { "rebuild_every", set.rebuild_every },
                                                         { "transport", parallel::to_string( dm.halo().transport() ) },
                                                         { "records", records } } );
    }
    dm.reset_times();
    for ( int s = 0; s < set.steps; ++s )
        dm.step( exec, agents, true );
    exec.fence();
    using Phase = parallel::DistributedMechanicsPhase;
    using Count = parallel::DistributedMechanicsCount;
    const auto& t = dm.times();
    const double steps = double( t.steps() );
    RankSample r;
    r.phase["step_wall"] = step_wall;
    r.phase["plain_step"] = plain_step<Scalar>( exec, set, n_local, mp, run );
    for ( int p : { Phase::migration, Phase::halo_build, Phase::halo_update, Phase::sort, Phase::grid, Phase::forces,
                    Phase::move } )
        r.phase[t.phase_name( p )] = t.seconds( p ) / steps;
    const double communication = Phase::communication( t );
    r.phase["halo_and_migration"] = communication / steps;
    r.phase["compute"] = ( t.total() - communication ) / steps;
    r.phase["total"] = t.total() / steps;
    r.ghosts = double( t.count( Count::ghosts ) ) / steps;
    r.owned = double( dm.num_owned() );
    r.migrated_sent = double( t.count( Count::migrated_sent ) ) / steps;
    // Rows: position 3S, diameter, adherence, density S each, id 8 bytes; update() sends positions.
    // Counts: 26 ints per halo build (one per direction), and per migration one int per neighbour
    // rank (counted as 26) or, when an agent went past the neighbours, one per rank (MPI_Alltoall).
    const double row = 6.0 * sizeof( Scalar ) + 8.0;
    r.bytes_sent = ( row * double( t.count( Count::migrated_sent ) + t.count( Count::halo_build_rows ) ) +
                     3.0 * sizeof( Scalar ) * double( t.count( Count::halo_update_rows ) ) +
                     double( t.count( Count::rebuilds ) ) * 4.0 * ( 26.0 + 26.0 ) ) /
                   steps;
    transport = parallel::to_string( dm.halo().transport() );
    return r;
}

template <class Scalar, class ExecutionSpace>
nlohmann::json run_case( const ExecutionSpace& exec, const Settings& set )
{
    int rank = 0, size = 1;
    MPI_Comm_rank( MPI_COMM_WORLD, &rank );
    MPI_Comm_size( MPI_COMM_WORLD, &size );
    const bool weak = set.agents_per_rank > 0;
    const long long total = weak ? set.agents_per_rank * size : set.agents_total;
    const long long n_local = weak ? set.agents_per_rank : total / size + ( rank < total % size ? 1 : 0 );
    long long first_id = 0;
    MPI_Exscan( &n_local, &first_id, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD );
    if ( rank == 0 )
        first_id = 0; // MPI_Exscan leaves rank 0's result undefined

    mechanics::MechanicsParameters<Scalar> mp;
    mp.max_displacement = Scalar( set.max_displacement );
    mp.sort_every = 1; // cell order at every rebuild, as benchmark B's Z-order case
    const mechanics::AgentProperties<Scalar> props;
    const double distance = double( props.diameter ) + 2 * double( mp.force.radius_extension );
    const double edge = mechanics::box_edge_for_neighbors( total, set.neighbors, distance );
    const double halo_width = distance + 2.0 * ( set.rebuild_every - 1 ) * set.max_displacement;
    const auto box = morula::core::Box<Scalar>::cube( Scalar( edge ), morula::core::Boundary::periodic );
    // A little more than the interaction distance: DistributedSphereMechanics checks distance + drift
    // <= width, and float rounding of the width must not fail that check.
    const parallel::CartesianDecomposition<Scalar> dec( MPI_COMM_WORLD, box,
                                                        Scalar( halo_width * ( 1 + 1e-6 ) ) );

    const char* names[] = { "migration", "halo_build", "halo_update", "sort", "grid", "forces",
                            "move", "halo_and_migration", "compute", "total", "step_wall", "plain_step" };
    std::map<std::string, Stats> max_stats, mean_stats;
    Stats ghosts_max, ghosts_mean, bytes_max, bytes_mean, owned_max, owned_min, share_max_rank,
        share_of_max, migrated_mean;
    std::string transport;
    for ( int run = 0; run < set.runs; ++run )
    {
        const RankSample r = one_run<Scalar>( exec, set, dec, n_local, first_id, mp, run, transport );
        for ( const char* name : names )
        {
            double mx = 0, mean = 0;
            reduce( r.phase.at( name ), MPI_COMM_WORLD, mx, mean );
            max_stats[name].samples.push_back( mx );
            mean_stats[name].samples.push_back( mean );
        }
        // Share of halo + migration in this rank's step, the largest over the ranks.
        const double share = r.phase.at( "halo_and_migration" ) / r.phase.at( "total" );
        double smax = 0, smean = 0;
        reduce( share, MPI_COMM_WORLD, smax, smean );
        share_max_rank.samples.push_back( smax );
        double mx = 0, mean = 0;
        reduce( r.ghosts, MPI_COMM_WORLD, mx, mean );
        ghosts_max.samples.push_back( mx );
        ghosts_mean.samples.push_back( mean );
        reduce( r.bytes_sent, MPI_COMM_WORLD, mx, mean );
        bytes_max.samples.push_back( mx );
        bytes_mean.samples.push_back( mean );
        reduce( r.migrated_sent, MPI_COMM_WORLD, mx, mean );
        migrated_mean.samples.push_back( mean );
        reduce( r.owned, MPI_COMM_WORLD, mx, mean );
        owned_max.samples.push_back( mx );
        double mn = 0, neg = -r.owned;
        MPI_Reduce( &neg, &mn, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD );
        owned_min.samples.push_back( -mn );
        if ( rank == 0 )
            share_of_max.samples.push_back( max_stats["halo_and_migration"].samples.back() /
                                            max_stats["total"].samples.back() );
    }
    if ( rank != 0 )
        return {};

    nlohmann::json phases = nlohmann::json::object();
    for ( const char* name : names )
        phases[name] = { { "max_over_ranks", max_stats[name].to_json() },
                         { "mean_over_ranks", mean_stats[name].to_json() } };
    const double share = share_max_rank.median();
    const auto dims = dec.dims();
    const double wall = max_stats["step_wall"].median();
    const double plain = max_stats["plain_step"].median();
    std::printf( "%s %-6s %d ranks (%d x %d x %d), %lld agents (%s), box edge %.1f, halo %.2f, rebuild every "
                 "%d, own images: %s: step %.3f ms unfenced (plain single-GPU step on %.0f agents %.3f ms: "
                 "efficiency %.1f%%, throughput %.2fx one plain GPU); fenced phases: step %.3f ms (max over "
                 "ranks), migration %.3f, halo build %.3f, halo update %.3f, "
                 "sort %.3f, grid %.3f, forces %.3f, move %.3f ms; halo + migration %.1f%% of the step "
                 "(largest rank share); %.0f ghosts/rank, %.3g bytes sent/rank/step; transport: %s\n",
                 weak ? "weak" : "strong", sizeof( Scalar ) == 4 ? "float" : "double", size, dims[0],
                 dims[1], dims[2], total, weak ? "per rank x ranks" : "total", edge, halo_width,
                 set.rebuild_every, set.images.c_str(), 1e3 * wall, double( n_local ), 1e3 * plain,
                 100 * plain / wall, size * plain / wall,
                 1e3 * max_stats["total"].median(), 1e3 * max_stats["migration"].median(),
                 1e3 * max_stats["halo_build"].median(), 1e3 * max_stats["halo_update"].median(),
                 1e3 * max_stats["sort"].median(), 1e3 * max_stats["grid"].median(),
                 1e3 * max_stats["forces"].median(), 1e3 * max_stats["move"].median(), 100 * share,
                 ghosts_mean.median(), bytes_mean.median(), transport.c_str() );
    return { { "scaling", weak ? "weak" : "strong" },
             { "scalar", sizeof( Scalar ) == 4 ? "float" : "double" },
             { "ranks", size },
             { "dims", { dims[0], dims[1], dims[2] } },
             { "agents_total", total },
             { "agents_per_rank", weak ? set.agents_per_rank : double( total ) / size },
             { "owned_per_rank_at_end", { { "min", owned_min.median() }, { "max", owned_max.median() } } },
             { "neighbors_target", set.neighbors },
             { "interaction_distance", distance },
             { "box_edge", edge },
             { "boundary", "periodic" },
             { "halo_width", halo_width },
             { "rebuild_every", set.rebuild_every },
             { "max_displacement", set.max_displacement },
             { "steps", set.steps },
             { "warmup_steps", set.warmup_steps },
             { "note", "per-step seconds of each rank (phases fenced between barriers over the ranks), reduced over ranks "
                       "(max, mean); statistics over runs. compute = sort + grid + forces + move; "
                       "halo_and_migration = migration + halo_build + halo_update; total = both" },
             { "phases", phases },
             { "halo_and_migration_share",
               { { "largest_rank_share_median", share },
                 { "of_max_rank_times_median", share_of_max.median() },
                 { "target", 0.15 },
                 { "within_target", share <= 0.15 } } },
             { "ghosts_per_rank", { { "max", ghosts_max.median() }, { "mean", ghosts_mean.median() } } },
             { "bytes_sent_per_rank_per_step",
               { { "max", bytes_max.median() },
                 { "mean", bytes_mean.median() },
                 { "note", "payload of halo build (6S + 8 per row), halo update (3S per row), migration "
                           "(6S + 8 per agent) and their counts; MPI headers not included" } } },
             { "agents_migrated_per_rank_per_step_mean", migrated_mean.median() },
             { "transport", transport },
             { "periodic_images", set.images },
             { "overlap_order", set.order },
             { "overlap_order_resolved",
               set.order != "automatic" ? set.order : ( transport == "nccl" || transport == "rccl" ) ? "forces-first" : "exchange-first" },
             { "plain_single_gpu_step",
               { { "agents", n_local },
                 { "seconds_median", plain },
                 { "note", "SphereMechanics update_grid + compute_displacements + apply_displacements on the "
                           "agents of one rank at the same density in a periodic cube of their own; wall "
                           "clock over the timed steps, one fence at the end" } } },
             { "step_wall_seconds_median", wall },
             { "efficiency_vs_plain_single_gpu", plain / wall },
             { "throughput_vs_one_plain_gpu", size * plain / wall } };
}

template <class ExecutionSpace>
int run_all( const ExecutionSpace& exec, const Settings& set, int device_id )
{
    int rank = 0, size = 1;
    MPI_Comm_rank( MPI_COMM_WORLD, &rank );
    MPI_Comm_size( MPI_COMM_WORLD, &size );
    if ( rank == 0 )
        std::printf( "%s\n%s on %s, %d ranks\n", morula::core::build_summary().c_str(), ExecutionSpace::name(),
                     morula::bench::device_name().c_str(), size );
    nlohmann::json cases = nlohmann::json::array();
    if ( set.scalar == "float" )
        cases.push_back( run_case<float>( exec, set ) );
    else
        cases.push_back( run_case<double>( exec, set ) );
    // Each rank's device, gathered on rank 0.
    std::vector<int> devices( size );
    MPI_Gather( &device_id, 1, MPI_INT, devices.data(), 1, MPI_INT, 0, MPI_COMM_WORLD );
    if ( rank == 0 && !set.out.empty() )
    {
        nlohmann::json j = { { "benchmark", "distributed_mechanics_benchmark" },
                             { "machine", morula::bench::machine_info( exec ) },
                             { "execution_space", ExecutionSpace::name() },
                             { "mpi_ranks", size },
                             { "device_id_per_rank", devices },
                             { "settings",
                               { { "agents_per_rank", set.agents_per_rank },
                                 { "agents_total", set.agents_total },
                                 { "steps", set.steps },
                                 { "warmup_steps", set.warmup_steps },
                                 { "rebuild_every", set.rebuild_every },
                                 { "scalar", set.scalar },
                                 { "runs", set.runs },
                                 { "neighbors", set.neighbors },
                                 { "max_displacement", set.max_displacement },
                                 { "images", set.images },
                                 { "transport", set.transport } } },
                             { "cases", cases } };
        morula::bench::write_json( set.out, j );
        std::printf( "wrote %s\n", set.out.c_str() );
    }
    return 0;
}

} // namespace dist_bench

int main( int argc, char* argv[] )
{
    MPI_Init( &argc, &argv );
    int rank = 0;
    MPI_Comm_rank( MPI_COMM_WORLD, &rank );
    dist_bench::Settings set;
    CLI::App app( "Distributed sphere mechanics over MPI: weak/strong scaling, halo and migration per step" );
    auto* per_rank = app.add_option( "--agents-per-rank", set.agents_per_rank, "Agents per rank (weak scaling)" )
                         ->check( CLI::Range( 1LL, 2000000000LL ) );
    auto* total = app.add_option( "--agents-total", set.agents_total, "Agents over all ranks (strong scaling)" )
                      ->check( CLI::Range( 1LL, 100000000000LL ) );
    per_rank->excludes( total );
    app.add_option( "--steps", set.steps, "Timed steps per run" )->check( CLI::Range( 1, 100000 ) );
    app.add_option( "--warmup-steps", set.warmup_steps, "Untimed steps before them" )
        ->check( CLI::Range( 0, 100000 ) );
    app.add_option( "--rebuild-every", set.rebuild_every, "Migrate and rebuild the halo every this many steps" )
        ->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--scalar", set.scalar, "float or double" )->check( CLI::IsMember( { "float", "double" } ) );
    app.add_option( "--runs", set.runs, "Timed runs (fresh agents each)" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--neighbors", set.neighbors, "Mean interacting neighbours per agent (sets the density)" )
        ->check( CLI::Range( 0.01, 1000.0 ) );
    app.add_option( "--max-displacement", set.max_displacement, "Largest move per step" )
        ->check( CLI::Range( 0.0, 1000.0 ) );
    app.add_option( "--images", set.images, "A rank's own periodic images: minimum (image of its grid) or ghosts" )
        ->check( CLI::IsMember( { "minimum", "ghosts" } ) );
    app.add_option( "--order", set.order, "Rebuild steps: start the ghost exchange or the owned forces first" )
        ->check( CLI::IsMember( { "automatic", "exchange-first", "forces-first" } ) );
    app.add_option( "--transport", set.transport, "automatic, host, staged, gpu-aware, nccl or ipc (sets MORULA_TRANSPORT)" )
        ->check( CLI::IsMember( { "automatic", "host", "staged", "gpu-aware", "nccl", "ipc" } ) );
    app.add_option( "--timeline", set.timeline,
                    "File prefix: record one unfenced rebuild cycle per rank (PREFIX_rankR.json; Kokkos 4)" );
    app.add_option( "--out", set.out, "JSON result file (written by rank 0)" );
    app.allow_extras(); // --kokkos-* arguments
    int rc = 0;
    try
    {
        app.parse( argc, argv );
    }
    catch ( const CLI::ParseError& e )
    {
        rc = rank == 0 ? app.exit( e ) : ( e.get_exit_code() == 0 ? 0 : 1 );
        MPI_Finalize();
        return rc;
    }
    if ( set.agents_per_rank == 0 && set.agents_total == 0 )
    {
        if ( rank == 0 )
            std::fprintf( stderr, "give --agents-per-rank (weak scaling) or --agents-total (strong scaling)\n" );
        MPI_Finalize();
        return 2;
    }

    if ( set.transport != "automatic" )
        setenv( "MORULA_TRANSPORT", set.transport.c_str(), 1 );
    if ( !set.timeline.empty() )
        morula::bench::timeline::prepare();
    rc = morula::bench::mpi::run_on_rank_device( argc, argv, [&]( int device_id ) {
        return dist_bench::run_all( Kokkos::DefaultExecutionSpace(), set, device_id );
    } );
    MPI_Finalize();
    return rc;
}
