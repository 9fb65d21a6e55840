// Site updates per second of the multiparticle lattice (Roberts et al. 2009, Table 2 sizes and 512^3) for every
// capacity (2, 4, 8 particles per site), split and fused passes, with the bytes moved per site update,
// the fraction of the measured copy bandwidth, and the cost of overflow handling at the paper's
// recommended occupancies (expected overflows < 0.01 per step on 256^3: 0.0015, 0.038, 0.41 per site).
//
// A "site update" is one site advanced by one whole time step (three split passes or one fused pass).
// Each split pass reads each word once and writes it once (neighbour words come from cache): 24 B
// per site update; the fused pass 8 B.
//
// Roofline records (issue #8, top-level "kernels" array, counts in docs/roofline/lattice-and-angio.md):
// per case split_pass_x, split_pass_y, split_pass_z (each axis timed alone) and step_split, or fused_pass
// and step_fused for the gather; the same names prefixed tiled_ or compacted_ for those kernels (issue #22;
// --kernels gather,tiled,compacted runs each in the same call). The kernels are integer work (hashed RNG, integer
// thresholds): 0 flops, bytes only.
//
//   lattice_benchmark --out results.json [--sizes 64x64x128,...] [--capacities 2,4,8] [--schemes split,fused]
//                     [--kernels gather,tiled,compacted]
//   lattice_benchmark --roofline-suite --out results.json   (256^3, capacity 4, both schemes; options given
//                                                           explicitly override the preset)
#include "../common/Roofline.hpp"
#include <common/BenchmarkUtils.hpp>

#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace lattice_bench
{
using morula::bench::Stats;
using morula::bench::time_phase;
namespace lat = morula::lattice;

struct Settings
{
    std::vector<std::string> sizes{ "64x64x128", "128x128x256", "256x256x512", "512x512x512" };
    std::vector<int> capacities{ 2, 4, 8 };
    std::vector<std::string> schemes{ "split", "fused" };
    std::vector<std::string> kernels{ "gather", "tiled", "compacted" };
    std::vector<double> occupancy{ 0.0015, 0.038, 0.41 }; // per capacity 2, 4, 8
    double move_probability = 0.25;                       // p_-1 = p_+1: p_0 = 0.5
    int steps = 10;                                       // per timed run
    int warmup = 2;
    int runs = 10;
    std::string space = "device";
    std::string placement = "automatic"; // overflow placement: automatic, sequential, parallel
    int quads_per_thread = 0;            // compacted split passes: quads per work item (0: the library's)
    int marks_quads = 0;                 // compacted fused pass: source quads per work item of its marks (0: the library's)
    int marked_chunks = 0;               // compacted fused pass: chunks of 128 marks per work item of its gathers (0: the library's)
    int team_overflow_entries = -1;      // overflow entries a team gathers in scratch (-1: the library's)
    long long sweep_list_limit = -1;     // placement sweeps list their changes after one of at most this many
                                         // (-1: the library's; 0: never)
    std::string out;
    bool copy_bandwidth = true;
};

//! Time per call when each timed run made `calls` calls (the mean over the run's calls).
Stats per_call( const Stats& s, int calls )
{
    Stats out;
    for ( double t : s.samples )
        out.samples.push_back( t / calls );
    return out;
}

/*!
  Bytes of one pass (split along one axis, or fused) over `sites` sites of 4-byte words: every word of the
  current lattice read once (the neighbour words a gather re-reads come from cache), every word of the
  next lattice written once; an overflowing particle appends an 8-byte key and a 4-byte code to the
  overflow list. No flops: moves are integer threshold tests on hashed random bits.
*/
morula::bench::WorkCount pass_work( double sites, double overflows_per_pass, const char* what )
{
    morula::bench::WorkCount w;
    w.bytes = 8.0 * sites + 12.0 * overflows_per_pass;
    w.basis = std::string( what ) + ": 4 B read + 4 B written per site, + 12 B per overflowed particle "
                                    "(key + code); integer work only (0 flops)";
    return w;
}

/*!
  Bytes of one whole step: its passes (3 split or 1 fused), each followed by a placement launch that reads
  the 8-byte overflow count; per overflowed particle 12 B pushed, then read and written back by the heap
  sort (24 B), its old site's word read (4 B) and its new site's word read and written (8 B).
*/
morula::bench::WorkCount step_work( double sites, int passes, double overflows_per_step )
{
    morula::bench::WorkCount w;
    w.bytes = passes * ( 8.0 * sites + 8.0 ) + 48.0 * overflows_per_step;
    w.basis = std::to_string( passes ) + " x (8 B per site + 8 B overflow count) + 48 B per overflowed "
                                         "particle; integer work only (0 flops)";
    return w;
}

lat::LatticeShape parse_size( const std::string& s )
{
    int x = 0, y = 0, z = 0;
    char a = 0, b = 0;
    std::istringstream in( s );
    if ( !( in >> x >> a >> y >> b >> z ) || a != 'x' || b != 'x' )
        throw std::invalid_argument( "size '" + s + "': expected NXxNYxNZ, e.g. 64x64x128" );
    return lat::LatticeShape( x, y, z );
}

//! Seconds since `t0`, printed (and flushed, so that a case that does not finish shows where it stopped).
double setup_phase( const char* what, std::chrono::steady_clock::time_point& t0 )
{
    const auto t1 = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>( t1 - t0 ).count();
    std::printf( "    setup: %-28s %8.3f s\n", what, s );
    std::fflush( stdout );
    t0 = t1;
    return s;
}

template <int Slots, class ExecutionSpace>
nlohmann::json run_case( const ExecutionSpace& exec, const Settings& set, const lat::LatticeShape& shape,
                         lat::PassScheme scheme, lat::PassKernels pass_kernels, double occupancy, double bandwidth,
                         nlohmann::json& kernels )
{
    using mem = typename ExecutionSpace::memory_space;
    lat::DiffusionRules rules( 1 );
    rules.set_isotropic( 0, set.move_probability );
    auto t0 = std::chrono::steady_clock::now();
    nlohmann::json setup;
    lat::Lattice<Slots, mem> lattice( shape );
    const std::size_t particles = std::size_t( occupancy * double( shape.sites() ) );
    lat::place_particles( lattice, { particles }, rules, 7, lat::ParticleCodes::species );
    setup["place_particles_s"] = setup_phase( "place_particles", t0 );
    lat::DiffusionOptions opt;
    opt.scheme = scheme;
    opt.kernels = pass_kernels;
    opt.placement = set.placement == "sequential" ? lat::OverflowPlacement::sequential
                    : set.placement == "parallel" ? lat::OverflowPlacement::parallel
                                                  : lat::OverflowPlacement::automatic;
    lat::LatticeDiffusion<Slots, ExecutionSpace> model( exec, lattice, rules, opt );
    lat::detail::EngineAccess::engine( model ).set_team_shapes( { set.quads_per_thread, set.team_overflow_entries, set.marks_quads,
                                                                         set.marked_chunks } );
    if ( set.sweep_list_limit >= 0 )
        lat::detail::EngineAccess::engine( model ).overflow_sweeps_engine().set_changed_list_limit(
            std::size_t( set.sweep_list_limit ) );
    setup["construct_s"] = setup_phase( "LatticeDiffusion", t0 );
    const double sites = double( shape.sites() );

    // Whole steps, as a simulation runs them: passes plus overflow placement after each.
    model.step( exec );
    exec.fence();
    setup["first_step_s"] = setup_phase( "first step", t0 );
    const unsigned long long overflows_before = model.overflows();
    const Stats full = time_phase( exec, set.warmup, set.runs, [&] { model.advance( exec, set.steps ); } );
    const unsigned long long overflows = model.overflows() - overflows_before;
    // One more step under the profiler when ncu_crosscheck.py asks for it (after the overflow count).
    // Records are named after the kernels that ran: step_split (gather), tiled_step_split, compacted_...
    const lat::PassKernels ran = scheme == lat::PassScheme::split ? model.split_kernels() : model.fused_kernels();
    const std::string prefix = ran == lat::PassKernels::gather ? std::string() : std::string( lat::to_string( ran ) ) + "_";
    morula::bench::profile_once( exec, ( prefix + ( scheme == lat::PassScheme::split ? "step_split" : "step_fused" ) ).c_str(),
                                 [&] { model.advance( exec, set.steps ); } );
    const double steps_timed = double( set.steps ) * ( set.warmup + set.runs );

    // The passes alone (no placement kernels): the cost of overflow handling is the difference.
    // Overflowed particles stay in the list meanwhile (rare at these occupancies); placement between
    // runs puts them back.
    const unsigned long long overflows_before_passes = model.overflows();
    const Stats passes = time_phase(
        exec, set.warmup, set.runs, [&] { model.place_overflow( exec ); },
        [&] {
            for ( int s = 0; s < set.steps; ++s )
            {
                if ( scheme == lat::PassScheme::split )
                    for ( int axis = 0; axis < 3; ++axis )
                        model.split_pass( exec, axis );
                else
                    model.fused_pass( exec );
                model.complete_step();
            }
        } );
    model.place_overflow( exec );
    const double overflows_in_passes = double( model.overflows() - overflows_before_passes );

    // Each split pass alone: `steps` passes along one axis per timed run (each with the step number
    // advanced, as in a simulation), overflowed particles placed between runs.
    Stats axis_time[3];
    double axis_overflows[3] = { 0, 0, 0 };
    if ( scheme == lat::PassScheme::split )
        for ( int axis = 0; axis < 3; ++axis )
        {
            const unsigned long long before = model.overflows();
            axis_time[axis] = time_phase(
                exec, set.warmup, set.runs, [&] { model.place_overflow( exec ); },
                [&] {
                    for ( int s = 0; s < set.steps; ++s )
                    {
                        model.split_pass( exec, axis );
                        model.complete_step();
                    }
                } );
            model.place_overflow( exec );
            axis_overflows[axis] = double( model.overflows() - before );
        }
    setup_phase( "timed runs", t0 );
    const auto counts = model.code_counts( exec );
    if ( counts[1] != particles )
        throw std::runtime_error( "lattice_benchmark: particles were lost" );
    setup["code_counts_s"] = setup_phase( "code_counts (check)", t0 );

    const char* kernel_name = lat::to_string( ran );
    const double t_step = full.median() / set.steps;
    const double rate = sites / t_step;
    const double bytes = scheme == lat::PassScheme::split ? 24.0 : 8.0;
    const double overhead = full.median() / passes.median() - 1;
    const double fraction = bandwidth > 0 ? bytes * rate / bandwidth : 0.0;
    std::printf( "%4dx%4dx%4d  %d slots  %-5s %-6s  occupancy %.4f: %8.3f ms/step  %.3e site updates/s  %5.1f%% of copy "
                 "bandwidth  overflow handling %+5.1f%%  (%.3g overflows/step)\n",
                 shape.nx, shape.ny, shape.nz, Slots, lat::to_string( scheme ), kernel_name, occupancy, 1e3 * t_step, rate,
                 100 * fraction, 100 * overhead, double( overflows ) / steps_timed );

    // Roofline records: one per timed kernel (time per pass or per step: run time / steps per run).
    const nlohmann::json parameters = { { "nx", shape.nx },
                                        { "ny", shape.ny },
                                        { "nz", shape.nz },
                                        { "sites", shape.sites() },
                                        { "slots", Slots },
                                        { "scheme", lat::to_string( scheme ) },
                                        { "kernels", kernel_name },
                                        { "occupancy", occupancy },
                                        { "particles", particles },
                                        { "steps_per_run", set.steps },
                                        { "time", "per pass or per step: the run's time / steps_per_run" } };
    auto add = [&]( const char* name, const morula::bench::WorkCount& w, const Stats& t, double overflows_per_call ) {
        nlohmann::json p = parameters;
        p["overflows_per_call"] = overflows_per_call;
        const std::string full_name = prefix + name;
        kernels.push_back( morula::bench::kernel_record( "lattice", full_name, w, t, p ) );
        const auto& r = kernels.back();
        std::printf( "    roofline %-19s %10.4f ms  %9.3e B  AI %.3g flop/B  %8.2f GB/s\n", full_name.c_str(),
                     1e3 * t.median(), w.bytes, r["arithmetic_intensity"].get<double>(),
                     r["gbytes_per_s"].get<double>() );
    };
    const double passes_timed = double( set.steps ) * ( set.warmup + set.runs );
    if ( scheme == lat::PassScheme::split )
    {
        const char* names[3] = { "split_pass_x", "split_pass_y", "split_pass_z" };
        for ( int axis = 0; axis < 3; ++axis )
            add( names[axis], pass_work( sites, axis_overflows[axis] / passes_timed, names[axis] ),
                 per_call( axis_time[axis], set.steps ), axis_overflows[axis] / passes_timed );
        add( "step_split", step_work( sites, 3, double( overflows ) / steps_timed ), per_call( full, set.steps ),
             double( overflows ) / steps_timed );
    }
    else
    {
        add( "fused_pass", pass_work( sites, overflows_in_passes / passes_timed, "fused_pass" ),
             per_call( passes, set.steps ), overflows_in_passes / passes_timed );
        add( "step_fused", step_work( sites, 1, double( overflows ) / steps_timed ), per_call( full, set.steps ),
             double( overflows ) / steps_timed );
    }
    std::fflush( stdout );
    return { { "nx", shape.nx },
             { "ny", shape.ny },
             { "nz", shape.nz },
             { "sites", shape.sites() },
             { "slots", Slots },
             { "scheme", lat::to_string( scheme ) },
             { "kernels", kernel_name },
             { "occupancy", occupancy },
             { "particles", particles },
             { "move_probability", set.move_probability },
             { "overflow_placement", set.placement },
             { "quads_per_thread", set.quads_per_thread },
             { "marks_quads", set.marks_quads },
             { "marked_chunks", set.marked_chunks },
             { "team_overflow_entries", set.team_overflow_entries },
             { "sweep_list_limit", set.sweep_list_limit },
             { "setup", setup },
             { "steps_per_run", set.steps },
             { "step_with_overflow_handling", full.to_json() },
             { "passes_only", passes.to_json() },
             { "seconds_per_step", t_step },
             { "site_updates_per_s", rate },
             { "bytes_per_site_update", bytes },
             { "fraction_of_copy_bandwidth", bandwidth > 0 ? nlohmann::json( fraction ) : nlohmann::json() },
             { "overflow_handling_overhead", overhead },
             { "overflows_per_step", double( overflows ) / steps_timed } };
}

template <class ExecutionSpace>
void run_all( const ExecutionSpace& exec, const Settings& set )
{
    std::printf( "%s\n%s on %s\n", morula::core::build_summary().c_str(), ExecutionSpace::name(),
                 morula::bench::device_name().c_str() );
    double bandwidth = 0; // 0: not measured (--no-copy-bandwidth)
    if ( set.copy_bandwidth )
    {
        bandwidth = morula::bench::copy_bandwidth( exec, set.runs );
        std::printf( "copy bandwidth: %.0f GB/s\n", bandwidth * 1e-9 );
    }
    nlohmann::json cases = nlohmann::json::array();
    nlohmann::json kernels = nlohmann::json::array();
    for ( const auto& size : set.sizes )
    {
        const auto shape = parse_size( size );
        for ( const auto& scheme_name : set.schemes )
        {
            const auto scheme = scheme_name == "fused" ? lat::PassScheme::fused : lat::PassScheme::split;
            for ( int slots : set.capacities )
                for ( const auto& kernel_name : set.kernels )
                {
                    const auto pk = kernel_name == "gather"    ? lat::PassKernels::gather
                                    : kernel_name == "tiled"     ? lat::PassKernels::tiled
                                    : kernel_name == "automatic" ? lat::PassKernels::automatic
                                                                 : lat::PassKernels::compacted;
                    const double occ = set.occupancy[slots == 2 ? 0 : slots == 4 ? 1 : 2];
                    if ( slots == 2 )
                        cases.push_back( run_case<2>( exec, set, shape, scheme, pk, occ, bandwidth, kernels ) );
                    else if ( slots == 4 )
                        cases.push_back( run_case<4>( exec, set, shape, scheme, pk, occ, bandwidth, kernels ) );
                    else
                        cases.push_back( run_case<8>( exec, set, shape, scheme, pk, occ, bandwidth, kernels ) );
                }
        }
    }
    if ( !set.out.empty() )
    {
        morula::bench::write_json(
            set.out, { { "benchmark", "lattice_benchmark" },
                       { "machine", morula::bench::machine_info( exec ) },
                       { "copy_bandwidth_bytes_per_s", bandwidth > 0 ? nlohmann::json( bandwidth ) : nlohmann::json() },
                       { "definition", "site updates/s = sites x time steps / s; a step = 3 split passes "
                                       "or 1 fused pass, each followed by overflow placement" },
                       { "settings", { { "runs", set.runs }, { "warmup", set.warmup }, { "steps_per_run", set.steps } } },
                       { "cases", cases },
                       { "kernels", kernels } } );
        std::printf( "wrote %s\n", set.out.c_str() );
    }
}

} // namespace lattice_bench

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    lattice_bench::Settings set;
    CLI::App app( "Site updates per second of Morula's multiparticle lattice (Roberts et al. 2009)" );
    app.add_option( "--sizes", set.sizes, "lattice sizes NXxNYxNZ" )->delimiter( ',' );
    app.add_option( "--capacities", set.capacities, "particles per site: 2, 4, 8" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { 2, 4, 8 } ) );
    app.add_option( "--kernels", set.kernels,
                    "pass kernels: gather, tiled, compacted, automatic (the library's choice; each in the same run; "
                    "the kernel that ran is recorded)" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { "gather", "tiled", "compacted", "automatic" } ) );
    app.add_option( "--schemes", set.schemes, "split, fused" )->delimiter( ',' )->check( CLI::IsMember( { "split", "fused" } ) );
    app.add_option( "--occupancy", set.occupancy, "particles per site for capacities 2, 4, 8" )
        ->delimiter( ',' )
        ->expected( 3 );
    app.add_option( "--move-probability", set.move_probability, "p_-1 = p_+1 on every axis" )
        ->check( CLI::Range( 0.0, 0.5 ) );
    app.add_option( "--steps", set.steps, "time steps per timed run" )->check( CLI::PositiveNumber );
    app.add_option( "--warmup", set.warmup, "untimed runs first" )->check( CLI::NonNegativeNumber );
    app.add_option( "--runs", set.runs, "timed runs (the median is reported)" )->check( CLI::PositiveNumber );
    app.add_option( "--space", set.space, "device (default execution space) or host" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    app.add_option( "--placement", set.placement,
                    "overflow placement: automatic (parallel on a device, sequential on a host), sequential, parallel" )
        ->check( CLI::IsMember( { "automatic", "sequential", "parallel" } ) );
    app.add_option( "--quads-per-thread", set.quads_per_thread,
                    "compacted split passes: quads per work item of a team (0: the default)" )
        ->check( CLI::NonNegativeNumber );
    app.add_option( "--marks-quads", set.marks_quads,
                    "compacted fused pass: source quads per work item of its marks, 1, 2 or 4 (0: the default)" )
        ->check( CLI::IsMember( { 0, 1, 2, 4 } ) );
    app.add_option( "--marked-chunks", set.marked_chunks,
                    "compacted fused pass: chunks of 128 marked sites per work item of a team of its gathers (0: the default)" )
        ->check( CLI::Range( 0, 64 ) );
    app.add_option( "--team-overflow-entries", set.team_overflow_entries,
                    "compacted split passes: overflow entries a team gathers in scratch (-1: the library's choice)" )
        ->check( CLI::Range( -1, 2048 ) ); // 2048 entries and the queue: 43 KB of the 48 KB a GPU team gets
    app.add_option( "--sweep-list-limit", set.sweep_list_limit,
                    "parallel overflow placement: a sweep after one that changed at most this many entries lists its "
                    "changes and the next sweep computes a worklist (-1: the library's choice; 0: never)" )
        ->check( CLI::Range( -1ll, 1ll << 40 ) );
    app.add_option( "--out", set.out, "JSON result file" );
    bool suite = false;
    app.add_flag( "--roofline-suite", suite,
                  "roofline cases (issue #8): 256x256x256, capacity 4, split and fused, 1 step per run, 1 warm-up "
                  "and 5 timed runs; options given explicitly override these" );
    bool no_bandwidth = false;
    app.add_flag( "--no-copy-bandwidth", no_bandwidth, "skip the 2 x 1 GiB copy-bandwidth measurement" );
    try
    {
        app.parse( argc, argv );
        set.copy_bandwidth = !no_bandwidth;
        if ( suite )
        {
            if ( !app.count( "--sizes" ) )
                set.sizes = { "256x256x256" };
            if ( !app.count( "--capacities" ) )
                set.capacities = { 4 };
            if ( !app.count( "--steps" ) )
                set.steps = 1;
            if ( !app.count( "--warmup" ) )
                set.warmup = 1;
            if ( !app.count( "--runs" ) )
                set.runs = 5;
        }
        if ( set.space == "host" )
            lattice_bench::run_all( Kokkos::DefaultHostExecutionSpace(), set );
        else
            lattice_bench::run_all( Kokkos::DefaultExecutionSpace(), set );
    }
    catch ( const CLI::ParseError& e )
    {
        return app.exit( e );
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "lattice_benchmark: %s\n", e.what() );
        return 1;
    }
    return 0;
}
