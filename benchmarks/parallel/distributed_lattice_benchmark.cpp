// Distributed lattice diffusion over MPI (issue #11): weak and strong scaling of z slabs, and the time
// of the ghost-plane exchanges and of the overflow placement per step against the passes.
//
//   mpiexec -n P distributed_lattice_benchmark --nx 512 --ny 512 (--nz-per-rank 512 | --nz-total 1024)
//       [--slots 2|4|8] [--occupancy 0.0015] [--scheme split|fused] [--slab-turns together|in_turn]
//       [--placement automatic|sequential|parallel]
//       [--steps 20] [--warmup-steps 3] [--runs 3] [--out results.json]
//
// The lattice is periodic on every axis, one species with p_-1 = p_+1 = 0.25 per axis (as
// lattice_benchmark). Each rank fills its own slab on the device: slot k of global site g holds a
// particle when the hashed RNG of (g, k) is below occupancy / slots (slots filled in order), so the
// lattice is the same for any rank count and no rank holds the whole lattice. One run: --warmup-steps
// untimed steps, then --steps steps; LatticeDiffusion on slabs times its phases (fenced): the passes,
// the one-plane halo exchanges, the MPI_Allgather of the overflow counts after every pass (sync: where a
// rank waits for the others' passes) and the overflow placement (the slabs placing together or in turn,
// lattice::SlabTurns, with their three-plane bands). Per-step means of each rank are reduced
// over the ranks (max and mean), and the median over --runs runs is reported, with the
// communication share of the step, bytes sent per rank per step and the transport.
#include "MpiBenchmarkUtils.hpp"
#include "StepTimeline.hpp"

#include <common/BenchmarkUtils.hpp>

#include <morula/Morula.hpp>
#include <morula/Parallel.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace dist_lattice_bench
{
using morula::bench::Stats;
namespace lat = morula::lattice;
namespace parallel = morula::parallel;
namespace mpi = morula::bench::mpi;

struct Settings
{
    int nx = 512, ny = 512;
    int nz_per_rank = 0;
    int nz_total = 0;
    int slots = 2;
    double occupancy = -1; // default per capacity, as lattice_benchmark: 0.0015, 0.038, 0.41
    std::string scheme = "split";
    std::string slab_turns = "together"; // how the slabs place overflow lists (lattice::SlabTurns)
    std::string placement = "automatic"; // how a slab places its own list (lattice::OverflowPlacement)
    double move_probability = 0.25;
    int steps = 20;
    int warmup_steps = 3;
    int runs = 3;
    std::uint64_t seed = 7;
    std::string timeline; // file prefix: one step recorded per rank (StepTimeline.hpp)
    std::string out;
};

// Fills a slab whose first plane is global plane z0: slot k of global site g is occupied when
// uniform(g, k) < occupancy / Slots, slots in order (no gaps).
template <int Slots, class ExecutionSpace>
void fill_slab( const ExecutionSpace& exec, const lat::Lattice<Slots, typename ExecutionSpace::memory_space>& slab,
                int z0, double occupancy, std::uint64_t seed )
{
    using layout = lat::SiteLayout<Slots>;
    const auto sites = slab.sites();
    const std::uint64_t offset = std::uint64_t( z0 ) * std::uint64_t( slab.shape().nx ) * std::uint64_t( slab.shape().ny );
    const morula::core::HashedRng rng( seed );
    const double p = occupancy / Slots;
    Kokkos::parallel_for(
        "morula::bench::fill_slab", Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, sites.extent( 0 ) ),
        KOKKOS_LAMBDA( const std::size_t i ) {
            lat::site_word w = layout::empty_site( 0 );
            int n = 0;
            for ( int k = 0; k < Slots; ++k )
                if ( rng.uniform<double>( offset + i, std::uint32_t( k ), 0 ) < p )
                    w = layout::with_code( w, n++, 1 );
            sites( i ) = w;
        } );
    exec.fence();
}

struct RankSample
{
    std::map<std::string, double> phase;
    double bytes_sent = 0;
    double overflow_events = 0;
    double overflow_entries = 0;
};

template <int Slots, class ExecutionSpace>
RankSample one_run( const ExecutionSpace& exec, const Settings& set, const lat::LatticeShape& whole, int run,
                    std::string& transport, unsigned long long& particles )
{
    using mem = typename ExecutionSpace::memory_space;
    const auto mine = parallel::slab_of_rank( whole.nz, mpi::rank(), mpi::size() );
    lat::LatticeShape s = whole;
    s.nz = mine.size();
    lat::Lattice<Slots, mem> slab( s, "bench_slab" );
    fill_slab<Slots>( exec, slab, mine.begin, set.occupancy, set.seed );
    lat::DiffusionRules rules( 1 );
    rules.set_isotropic( 0, set.move_probability );
    lat::DiffusionOptions opt;
    opt.scheme = set.scheme == "fused" ? lat::PassScheme::fused : lat::PassScheme::split;
    opt.seed = set.seed + std::uint64_t( run );
    opt.slab_turns = set.slab_turns == "in_turn" ? lat::SlabTurns::in_turn : lat::SlabTurns::together;
    opt.placement = set.placement == "sequential" ? lat::OverflowPlacement::sequential
                    : set.placement == "parallel" ? lat::OverflowPlacement::parallel
                                                  : lat::OverflowPlacement::automatic;
    lat::LatticeDiffusion<Slots, ExecutionSpace> model( exec, MPI_COMM_WORLD, whole, slab, rules, opt );
    particles = model.particles();
    for ( int k = 0; k < set.warmup_steps; ++k )
        model.step( exec, true );
    model.reset_times();
    const auto t0 = std::chrono::steady_clock::now();
    for ( int k = 0; k < set.steps; ++k )
        model.step( exec, true );
    exec.fence();
    const double wall = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    if ( run == 0 && !set.timeline.empty() )
    {
        morula::bench::timeline::start( exec );
        model.step( exec, true );
        const auto records = morula::bench::timeline::stop( exec );
        morula::bench::write_json( set.timeline + "_rank" + std::to_string( mpi::rank() ) + ".json",
                                   nlohmann::json{ { "benchmark", "distributed_lattice_benchmark" },
                                                   { "rank", mpi::rank() },
                                                   { "ranks", mpi::size() },
                                                   { "transport", parallel::to_string( model.transport() ) },
                                                   { "records", records } } );
    }
    const auto counts = model.code_counts( exec );
    if ( counts[1] != particles )
        throw std::runtime_error( "distributed_lattice_benchmark: particles were lost" );
    using Phase = lat::LatticeDiffusionPhase;
    using Count = lat::LatticeDiffusionCount;
    const auto& t = model.times();
    const double steps = double( t.steps() );
    RankSample r;
    r.phase["passes"] = t.seconds( Phase::passes ) / steps;
    r.phase["halo"] = t.seconds( Phase::halo ) / steps;
    r.phase["sync"] = t.seconds( Phase::sync ) / steps;
    r.phase["overflow"] = t.seconds( Phase::overflow ) / steps;
    r.phase["communication"] = t.sum( { Phase::halo, Phase::sync, Phase::overflow } ) / steps;
    r.phase["total"] = t.total() / steps;
    r.phase["wall"] = wall / steps;
    r.bytes_sent = double( t.count( Count::halo_bytes ) ) / steps;
    r.overflow_events = double( t.count( Count::overflow_events ) ) / steps;
    r.overflow_entries = double( t.count( Count::overflow_entries ) ) / steps;
    transport = parallel::to_string( model.transport() );
    return r;
}

template <int Slots, class ExecutionSpace>
nlohmann::json run_case( const ExecutionSpace& exec, const Settings& set )
{
    const int size = mpi::size();
    const bool weak = set.nz_per_rank > 0;
    const int nz = weak ? set.nz_per_rank * size : set.nz_total;
    const lat::LatticeShape whole( set.nx, set.ny, nz, lat::LatticeBoundary::periodic );
    const char* names[] = { "passes", "halo", "sync", "overflow", "communication", "total", "wall" };
    std::map<std::string, Stats> max_stats, mean_stats;
    Stats share_max_rank, bytes_mean, events, entries;
    std::string transport;
    unsigned long long particles = 0;
    for ( int run = 0; run < set.runs; ++run )
    {
        const RankSample r = one_run<Slots>( exec, set, whole, run, transport, particles );
        for ( const char* name : names )
        {
            double mx = 0, mean = 0;
            mpi::reduce( r.phase.at( name ), MPI_COMM_WORLD, mx, mean );
            max_stats[name].samples.push_back( mx );
            mean_stats[name].samples.push_back( mean );
        }
        double smax = 0, smean = 0;
        mpi::reduce( r.phase.at( "communication" ) / r.phase.at( "total" ), MPI_COMM_WORLD, smax, smean );
        share_max_rank.samples.push_back( smax );
        double mx = 0, mean = 0;
        mpi::reduce( r.bytes_sent, MPI_COMM_WORLD, mx, mean );
        bytes_mean.samples.push_back( mean );
        events.samples.push_back( r.overflow_events );
        entries.samples.push_back( r.overflow_entries );
    }
    if ( mpi::rank() != 0 )
        return {};
    nlohmann::json phases = nlohmann::json::object();
    for ( const char* name : names )
        phases[name] = { { "max_over_ranks", max_stats[name].to_json() },
                         { "mean_over_ranks", mean_stats[name].to_json() } };
    const double t_step = max_stats["total"].median();
    const double sites = double( whole.sites() );
    std::printf( "%s %d ranks, %d x %d x %d (%s), %d slots, occupancy %.4f, %s: step %.3f ms (max over ranks; "
                 "wall %.3f), passes %.3f, halo %.3f, sync %.3f, overflow %.3f ms; communication %.1f%% of the step (largest "
                 "rank share); %.3g site updates/s; %.3g bytes sent/rank/step; %.2f overflow events/step, %.1f "
                 "entries/step; transport: %s\n",
                 weak ? "weak" : "strong", size, whole.nx, whole.ny, whole.nz,
                 weak ? "nz per rank x ranks" : "total", Slots, set.occupancy, set.scheme.c_str(), 1e3 * t_step,
                 1e3 * max_stats["wall"].median(), 1e3 * max_stats["passes"].median(), 1e3 * max_stats["halo"].median(),
                 1e3 * max_stats["sync"].median(), 1e3 * max_stats["overflow"].median(), 100 * share_max_rank.median(), sites / t_step,
                 bytes_mean.median(), events.median(), entries.median(), transport.c_str() );
    return { { "scaling", weak ? "weak" : "strong" },
             { "ranks", size },
             { "lattice", { whole.nx, whole.ny, whole.nz } },
             { "sites", sites },
             { "sites_per_rank", sites / size },
             { "slots", Slots },
             { "occupancy", set.occupancy },
             { "particles", particles },
             { "scheme", set.scheme },
             { "slab_turns", set.slab_turns },
             { "placement", set.placement },
             { "move_probability", set.move_probability },
             { "boundary", "periodic" },
             { "steps", set.steps },
             { "warmup_steps", set.warmup_steps },
             { "note", "per-step seconds of each rank (fenced phases, no barriers), reduced over ranks (max, "
                       "mean); statistics over runs. communication = halo + sync + overflow (sync: the "
                       "MPI_Allgather of overflow counts after each pass, where a rank waits for the slower "
                       "ranks' passes); total = passes + communication; wall = the rank's wall time of the timed steps" },
             { "phases", phases },
             { "site_updates_per_s", sites / t_step },
             { "communication_share", { { "largest_rank_share_median", share_max_rank.median() } } },
             { "halo_bytes_sent_per_rank_per_step_mean", bytes_mean.median() },
             { "overflow_events_per_step", events.median() },
             { "overflow_entries_per_step", entries.median() },
             { "transport", transport } };
}

template <class ExecutionSpace>
int run_all( const ExecutionSpace& exec, const Settings& set, int device_id )
{
    const int rank = mpi::rank(), size = mpi::size();
    if ( rank == 0 )
        std::printf( "%s\n%s on %s, %d ranks\n", morula::core::build_summary().c_str(), ExecutionSpace::name(),
                     morula::bench::device_name().c_str(), size );
    nlohmann::json c = set.slots == 2 ? run_case<2>( exec, set )
                                      : ( set.slots == 4 ? run_case<4>( exec, set ) : run_case<8>( exec, set ) );
    std::vector<int> devices( size );
    MPI_Gather( &device_id, 1, MPI_INT, devices.data(), 1, MPI_INT, 0, MPI_COMM_WORLD );
    if ( rank == 0 && !set.out.empty() )
    {
        nlohmann::json j = { { "benchmark", "distributed_lattice_benchmark" },
                             { "machine", morula::bench::machine_info( exec ) },
                             { "execution_space", ExecutionSpace::name() },
                             { "mpi_ranks", size },
                             { "device_id_per_rank", devices },
                             { "settings",
                               { { "nx", set.nx },
                                 { "ny", set.ny },
                                 { "nz_per_rank", set.nz_per_rank },
                                 { "nz_total", set.nz_total },
                                 { "slots", set.slots },
                                 { "occupancy", set.occupancy },
                                 { "scheme", set.scheme },
                                 { "slab_turns", set.slab_turns },
                                 { "placement", set.placement },
                                 { "steps", set.steps },
                                 { "warmup_steps", set.warmup_steps },
                                 { "runs", set.runs } } },
                             { "cases", nlohmann::json::array( { c } ) } };
        morula::bench::write_json( set.out, j );
        std::printf( "wrote %s\n", set.out.c_str() );
    }
    return 0;
}

} // namespace dist_lattice_bench

int main( int argc, char* argv[] )
{
    MPI_Init( &argc, &argv );
    const int rank = morula::bench::mpi::rank();
    dist_lattice_bench::Settings set;
    CLI::App app( "Distributed lattice diffusion over MPI: weak/strong scaling of z slabs, halo and overflow per step" );
    app.add_option( "--nx", set.nx, "Sites along x" )->check( CLI::Range( 1, 1 << 20 ) );
    app.add_option( "--ny", set.ny, "Sites along y" )->check( CLI::Range( 1, 1 << 20 ) );
    auto* per_rank = app.add_option( "--nz-per-rank", set.nz_per_rank, "Planes per rank (weak scaling)" )
                         ->check( CLI::Range( 1, 1 << 20 ) );
    auto* total = app.add_option( "--nz-total", set.nz_total, "Planes over all ranks (strong scaling)" )
                      ->check( CLI::Range( 1, 1 << 20 ) );
    per_rank->excludes( total );
    app.add_option( "--slots", set.slots, "Particles per site: 2, 4 or 8" )->check( CLI::IsMember( { 2, 4, 8 } ) );
    app.add_option( "--occupancy", set.occupancy, "Mean particles per site (default 0.0015, 0.038, 0.41 for 2, 4, 8)" )
        ->check( CLI::Range( 0.0, 8.0 ) );
    app.add_option( "--scheme", set.scheme, "split or fused passes" )->check( CLI::IsMember( { "split", "fused" } ) );
    app.add_option( "--slab-turns", set.slab_turns, "together or in_turn: how the slabs place overflow lists" )
        ->check( CLI::IsMember( { "together", "in_turn" } ) );
    app.add_option( "--placement", set.placement,
                    "automatic, sequential or parallel: how a slab places its own overflow list" )
        ->check( CLI::IsMember( { "automatic", "sequential", "parallel" } ) );
    app.add_option( "--steps", set.steps, "Timed steps per run" )->check( CLI::Range( 1, 100000 ) );
    app.add_option( "--warmup-steps", set.warmup_steps, "Untimed steps before them" )->check( CLI::Range( 0, 100000 ) );
    app.add_option( "--runs", set.runs, "Timed runs (fresh lattice each)" )->check( CLI::Range( 1, 1000 ) );
    std::string transport = "automatic";
    app.add_option( "--transport", transport, "automatic, host, staged, gpu-aware, nccl or ipc (sets MORULA_TRANSPORT)" )
        ->check( CLI::IsMember( { "automatic", "host", "staged", "gpu-aware", "nccl", "ipc" } ) );
    app.add_option( "--timeline", set.timeline, "File prefix: record one step per rank (PREFIX_rankR.json; Kokkos 4)" );
    app.add_option( "--out", set.out, "JSON result file (written by rank 0)" );
    app.allow_extras(); // --kokkos-* arguments
    try
    {
        app.parse( argc, argv );
    }
    catch ( const CLI::ParseError& e )
    {
        const int rc = rank == 0 ? app.exit( e ) : ( e.get_exit_code() == 0 ? 0 : 1 );
        MPI_Finalize();
        return rc;
    }
    if ( set.nz_per_rank == 0 && set.nz_total == 0 )
    {
        if ( rank == 0 )
            std::fprintf( stderr, "give --nz-per-rank (weak scaling) or --nz-total (strong scaling)\n" );
        MPI_Finalize();
        return 2;
    }
    if ( set.occupancy < 0 )
        set.occupancy = set.slots == 2 ? 0.0015 : ( set.slots == 4 ? 0.038 : 0.41 );
    if ( transport != "automatic" )
        setenv( "MORULA_TRANSPORT", transport.c_str(), 1 );
    if ( !set.timeline.empty() )
        morula::bench::timeline::prepare();
    const int rc = morula::bench::mpi::run_on_rank_device( argc, argv, [&]( int device_id ) {
        return dist_lattice_bench::run_all( Kokkos::DefaultExecutionSpace(), set, device_id );
    } );
    MPI_Finalize();
    return rc;
}
