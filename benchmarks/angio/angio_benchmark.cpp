// The tumour growth and angiogenesis model of seed 001 (Worecki and Wcisło 2012) timed as in its section 4,
// phase by phase, on Kokkos::DefaultExecutionSpace and its memory space.
//
//   angio_benchmark --case cellcell [--cells 1e4,1e5,1e6] [--volume-fraction 0.5] [--sweeps 64]
//     The paper's random input without tubes: N Mature cells of radius 5 um at uniform random positions
//     in a closed cube sized for the volume fraction, oxygen 1, uptake, TAF production and decay off,
//     sort_every 1. Timed: grid build + sort, grid build alone, cell-cell from both sides, cell-cell with
//     atomics, one exchange (1 sweep) and the exchange with --sweeps sweeps (seconds per sweep), motion.
//     Cell-cell also as interacting pairs per second (pairs counted once, outside timing, from the
//     contact counts) and the speed-up of both sides over atomics.
//   angio_benchmark --case tubecell [--cells 1e5] [--tubes 1000,2500,5000,9996] [--max-tubes-per-cell 64]
//     The paper's dense random tubes: the cells above plus M random inlet tubes (length 10-20 um, radius
//     3-5 um, inside the box). Timed: blood flow, tube grid + tube-tube, tube-cell + cell-tube
//     (Algorithms 5 and 6); the share of tube-tube in their sum (29% at 9996 tubes in the paper).
//   angio_benchmark --case whole [--cluster-radius 150] [--edge 800] [--steps 200] [--warmup-steps 20]
//     The whole simulation: a tumour cluster beside two straight vessels in a closed cube, default
//     parameters; per run the model is rebuilt from the same initial state, advanced --warmup-steps
//     untimed steps, then --steps steps with every phase fenced and timed (seconds per step per phase).
//   --case all runs the three. Common: [--precision float|double|both] [--runs 5] [--warmup 1]
//     [--seed 1] [--out results.json]. Phase timings: medians (and min, max) over --runs runs after
//     --warmup untimed runs, each between two fences of the execution space.
#include <common/BenchmarkUtils.hpp>

#include <morula/angio/Angiogenesis.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/BuildInfo.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace
{
namespace angio = morula::angio;
namespace core = morula::core;
using morula::bench::Stats;
using exec_space = Kokkos::DefaultExecutionSpace;
using mem_space = exec_space::memory_space;

template <class Scalar>
using Model = angio::TumourAngiogenesis<Scalar, mem_space>;
template <class Scalar>
using Cells = angio::TumourCells<Scalar, mem_space>;
template <class Scalar>
using Tubes = angio::VesselTubes<Scalar, mem_space>;

constexpr double pi = 3.14159265358979323846;

struct Settings
{
    std::string which = "all";
    std::vector<int> cells;
    std::vector<int> tubes;
    int steps = 200;
    int warmup_steps = 20;
    int runs = 5;
    int warmup = 1;
    int sweeps = 64;
    std::string precision = "both";
    std::string out;
    double cell_radius = 5;
    double volume_fraction = 0.5;
    int max_tubes_per_cell = 64;
    double cluster_radius = 150;
    double edge = 800;
    double vessel_radius = 5;
    std::uint64_t seed = 1;
};

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

//! Edge of the cube in which n cells of radius r fill `fraction` of the volume.
double random_box_edge( int n, double r, double fraction )
{
    return std::cbrt( n * 4.0 / 3.0 * pi * r * r * r / fraction );
}

//! n Mature cells of radius r, oxygen 1, at uniform random positions in [0, edge)^3 (hashed RNG).
angio::HostCells random_cells( int n, double edge, double r, std::uint64_t seed )
{
    angio::HostCells h;
    const core::HashedRng rng( seed );
    for ( int i = 0; i < n; ++i )
    {
        const auto key = static_cast<std::uint64_t>( i );
        const double x[3] = { edge * rng.uniform<double>( key, 0, 0 ), edge * rng.uniform<double>( key, 1, 0 ),
                              edge * rng.uniform<double>( key, 2, 0 ) };
        h.add( x, r, 10.0, angio::cell_mature, 1.0, 0.0, i );
    }
    return h;
}

//! m inlet tubes: random direction, length 10-20 um, one radius 3-5 um, the midpoint at least 10 um from
//! every wall so that both ends lie inside the box.
angio::HostTubes random_tubes( int m, double edge, std::uint64_t seed )
{
    angio::HostTubes t;
    const core::HashedRng rng( seed ^ 0x7475626573ULL ); // other variates than the cells'
    for ( int i = 0; i < m; ++i )
    {
        const auto key = static_cast<std::uint64_t>( i );
        const double length = 10 + 10 * rng.uniform<double>( key, 0, 0 );
        const double radius = 3 + 2 * rng.uniform<double>( key, 1, 0 );
        const double z = 2 * rng.uniform<double>( key, 2, 0 ) - 1;
        const double phi = 2 * pi * rng.uniform<double>( key, 3, 0 );
        const double s = std::sqrt( std::max( 0.0, 1 - z * z ) );
        const double dir[3] = { s * std::cos( phi ), s * std::sin( phi ), z };
        double a[3], b[3];
        for ( int d = 0; d < 3; ++d )
        {
            const double mid = 10 + ( edge - 20 ) * rng.uniform<double>( key, 4 + d, 0 );
            a[d] = mid - 0.5 * length * dir[d];
            b[d] = mid + 0.5 * length * dir[d];
        }
        t.add( a, b, radius, radius, -1, 1.0, 0 );
    }
    return t;
}

//! The random-input parameters of the paper: no oxygen uptake (no hypoxia, no death), no TAF sources.
angio::AngioParameters random_input_parameters( const Settings& s )
{
    angio::AngioParameters p;
    p.exchange.oxygen_uptake = 0;
    p.exchange.taf_production = 0;
    p.exchange.taf_decay = 0;
    p.exchange.sweeps = 1;
    p.sort_every = 1;
    p.max_tubes_per_cell = s.max_tubes_per_cell;
    p.seed = s.seed;
    return p;
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

//! Reads the step counters (capacity overflows, negative concentrations throw), zeroes them again.
template <class Scalar>
void check_counters( const exec_space& exec, Model<Scalar>& m )
{
    angio::AngioStepReport report;
    m.finish_step( exec, report );
    m.prepare_step( exec );
}

//! Every interaction phase once, untimed, so that grids, contact and tube lists are those of a step.
template <class Scalar>
void make_ready( const exec_space& exec, Model<Scalar>& m )
{
    m.prepare_step( exec );
    m.build_grid( exec );
    m.interact_cells( exec );
    m.update_blood_flow( exec );
    m.interact_tubes( exec );
    m.interact_tubes_and_cells( exec );
    check_counters( exec, m );
}

template <class View>
std::vector<long long> first_n_to_host( const View& v, int n )
{
    const auto h =
        Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), Kokkos::subview( v, std::make_pair( 0, n ) ) );
    std::vector<long long> out( n );
    for ( int i = 0; i < n; ++i )
        out[i] = static_cast<long long>( h( i ) );
    return out;
}

long long sum_of( const std::vector<long long>& v )
{
    long long s = 0;
    for ( auto x : v )
        s += x;
    return s;
}

long long max_of( const std::vector<long long>& v )
{
    long long s = 0;
    for ( auto x : v )
        s = x > s ? x : s;
    return s;
}

//! One result row: what was timed, where, and its statistics.
nlohmann::json record( const char* which, const char* precision, int cells, int tubes, const std::string& phase,
                       const Stats& t )
{
    nlohmann::json r = t.to_json();
    r["case"] = which;
    r["precision"] = precision;
    r["cells"] = cells;
    r["tubes"] = tubes;
    r["phase"] = phase;
    return r;
}

void print_header()
{
    std::printf( "%-9s %-6s %8s %6s  %-26s %12s %12s %12s  %s\n", "case", "prec", "cells", "tubes", "phase",
                 "median ms", "min ms", "max ms", "notes" );
}

void print_row( const char* which, const char* precision, int cells, int tubes, const std::string& phase,
                const Stats& t, const std::string& notes = "" )
{
    std::printf( "%-9s %-6s %8d %6d  %-26s %12.4f %12.4f %12.4f  %s\n", which, precision, cells, tubes,
                 phase.c_str(), 1e3 * t.median(), 1e3 * t.min(), 1e3 * t.max(), notes.c_str() );
    std::fflush( stdout );
}

std::string format( const char* fmt, double a, double b = 0, double c = 0 )
{
    char buf[256];
    std::snprintf( buf, sizeof buf, fmt, a, b, c );
    return buf;
}

// ---------------------------------------------------------------------------------------------
// cellcell: the random input without tubes
// ---------------------------------------------------------------------------------------------

template <class Scalar>
void cellcell( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows )
{
    const char* which = "cellcell";
    for ( const int n : s.cells )
    {
        const double edge = random_box_edge( n, s.cell_radius, s.volume_fraction );
        const auto host = random_cells( n, edge, s.cell_radius, s.seed );
        const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( edge ), core::Boundary::closed );
        std::optional<Model<Scalar>> m;
        auto build = [&]( bool atomic, int sweeps, int sort_every ) {
            m.reset(); // free the previous model before allocating the next
            auto p = random_input_parameters( s );
            p.atomic_cell_cell = atomic;
            p.exchange.sweeps = sweeps;
            p.sort_every = sort_every;
            m.emplace( Cells<Scalar>( host ), Tubes<Scalar>( angio::HostTubes{} ), box, p );
            make_ready( exec, *m );
        };
        auto add = [&]( const std::string& phase, const Stats& t, nlohmann::json extra = nlohmann::json::object(),
                        const std::string& notes = "" ) {
            print_row( which, precision, n, 0, phase, t, notes );
            nlohmann::json r = record( which, precision, n, 0, phase, t );
            r["box_edge_um"] = edge;
            r["volume_fraction"] = s.volume_fraction;
            r.update( extra );
            rows.push_back( r );
        };

        // Model A: both sides, one sweep, sorted at every build. Its data are in grid order after the
        // first build, as they are (nearly) in a running simulation.
        build( false, 1, 1 );
        const Stats grid_sort = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->build_grid( exec ); } );
        m->interact_cells( exec );
        const Stats both = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->interact_cells( exec ); } );
        const auto counts = first_n_to_host( m->workspace().contact_count, n );
        const long long pairs = sum_of( counts ) / 2; // every contact is listed by both of its cells
        const long long max_contacts = max_of( counts );
        m->interact_tubes_and_cells( exec ); // vessel supply 0 without tubes
        const Stats ex1 = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->exchange( exec ); } );
        check_counters( exec, *m );
        // Motion from the same positions and forces every run (it moves the cells and adds wall forces).
        using vector_view = typename Cells<Scalar>::vector_view;
        vector_view saved( "saved_positions", m->cells().positions().extent( 0 ) );
        Kokkos::deep_copy( exec, saved, m->cells().positions() );
        const Stats motion = morula::bench::time_phase(
            exec, s.warmup, s.runs,
            [&] {
                Kokkos::deep_copy( exec, m->cells().positions(), saved );
                m->interact_cells( exec );
            },
            [&] { m->move( exec ); } );
        saved = vector_view();

        // Model B: atomics (pairs once, j > i).
        build( true, 1, 1 );
        const Stats atomic = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->interact_cells( exec ); } );
        const long long pairs_atomic = sum_of( first_n_to_host( m->workspace().contact_count, n ) ) / 2;

        // Model C: `sweeps` sweeps, sorted only at its first build (so its later builds only bin).
        build( false, s.sweeps, 1 << 30 );
        const Stats grid_only = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->build_grid( exec ); } );
        m->interact_cells( exec );
        m->interact_tubes_and_cells( exec );
        const Stats exS = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->exchange( exec ); } );
        check_counters( exec, *m );
        m.reset();

        if ( pairs_atomic != pairs )
            std::printf( "warning: %d cells: %lld contact pairs from both sides, %lld with atomics\n", n, pairs,
                         pairs_atomic );
        const double per_cell = 2.0 * pairs / n;
        add( "grid_build_sort", grid_sort, { { "sorted", true } }, "cells already in grid order" );
        add( "grid_build", grid_only, { { "sorted", false } }, "binning only" );
        add( "cell_cell_both_sides", both,
             { { "pairs", pairs },
               { "contacts_per_cell", per_cell },
               { "max_contacts_per_cell", max_contacts },
               { "pairs_per_s", pairs / both.median() } },
             format( "%.3g pairs/s, %.1f contacts/cell", pairs / both.median(), per_cell ) );
        add( "cell_cell_atomic", atomic,
             { { "pairs", pairs_atomic },
               { "pairs_per_s", pairs_atomic / atomic.median() },
               { "speedup_both_sides_vs_atomic", atomic.median() / both.median() } },
             format( "%.3g pairs/s; speed-up both sides vs atomics %.2fx", pairs_atomic / atomic.median(),
                     atomic.median() / both.median() ) );
        add( "exchange_1_sweep", ex1, { { "sweeps", 1 } }, "pseudo-time steps + 1 sweep" );
        // Per sweep: the whole exchange over its sweeps, and the marginal cost of a sweep (without the
        // two reductions that find the pseudo-time steps).
        const double per_sweep = exS.median() / s.sweeps;
        const double marginal = s.sweeps > 1 ? ( exS.median() - ex1.median() ) / ( s.sweeps - 1 ) : per_sweep;
        add( "exchange_" + std::to_string( s.sweeps ) + "_sweeps", exS,
             { { "sweeps", s.sweeps }, { "seconds_per_sweep", per_sweep }, { "marginal_seconds_per_sweep", marginal } },
             format( "%.4f ms/sweep (marginal %.4f ms)", 1e3 * per_sweep, 1e3 * marginal ) );
        add( "motion", motion );
    }
}

// ---------------------------------------------------------------------------------------------
// tubecell: the random input with dense random tubes
// ---------------------------------------------------------------------------------------------

template <class Scalar>
void tubecell( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows )
{
    const char* which = "tubecell";
    for ( const int n : s.cells )
        for ( const int mt : s.tubes )
        {
            const double edge = random_box_edge( n, s.cell_radius, s.volume_fraction );
            const auto host = random_cells( n, edge, s.cell_radius, s.seed );
            const auto host_tubes = random_tubes( mt, edge, s.seed );
            const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( edge ), core::Boundary::closed );
            std::optional<Model<Scalar>> m;
            int width = s.max_tubes_per_cell;
            for ( ;; )
            {
                try
                {
                    m.reset();
                    auto p = random_input_parameters( s );
                    p.max_tubes_per_cell = width;
                    m.emplace( Cells<Scalar>( host ), Tubes<Scalar>( host_tubes ), box, p );
                    make_ready( exec, *m );
                    break;
                }
                catch ( const core::CapacityError& e )
                {
                    if ( 2 * width > 1024 )
                        throw;
                    std::printf( "  %s; retrying with max_tubes_per_cell = %d\n", e.what(), 2 * width );
                    width *= 2;
                }
            }
            const Stats flow =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->update_blood_flow( exec ); } );
            const Stats tube_tube =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->interact_tubes( exec ); } );
            const Stats tube_cell =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->interact_tubes_and_cells( exec ); } );
            check_counters( exec, *m );
            const auto per_cell = first_n_to_host( m->workspace().tube_count, n );
            const long long cell_tube_contacts = sum_of( per_cell );
            const long long max_per_cell = max_of( per_cell );
            const long long tube_pairs = sum_of( first_n_to_host( m->tubes().contacts(), mt ) ) / 2;
            m.reset();

            const double total = flow.median() + tube_tube.median() + tube_cell.median();
            const double share = tube_tube.median() / total;
            auto add = [&]( const std::string& phase, const Stats& t, nlohmann::json extra, const std::string& notes ) {
                print_row( which, precision, n, mt, phase, t, notes );
                nlohmann::json r = record( which, precision, n, mt, phase, t );
                r["box_edge_um"] = edge;
                r["max_tubes_per_cell"] = width;
                r.update( extra );
                rows.push_back( r );
            };
            add( "blood_flow", flow, nlohmann::json::object(), "" );
            add( "tube_grid_and_tube_tube", tube_tube,
                 { { "touching_tube_pairs", tube_pairs }, { "share_of_tube_phases", share } },
                 format( "%.1f%% of the tube phases, %.0f touching tube pairs", 100 * share, double( tube_pairs ) ) );
            add( "tube_cell_alg5_alg6", tube_cell,
                 { { "cell_tube_contacts", cell_tube_contacts }, { "max_tubes_of_a_cell", max_per_cell } },
                 format( "%.0f cell-tube contacts, at most %.0f per cell (list width %.0f)",
                         double( cell_tube_contacts ), double( max_per_cell ), double( width ) ) );
            // The sum of the three medians (not a separately timed run).
            Stats sum;
            sum.samples = { total };
            nlohmann::json r = record( which, precision, n, mt, "tube_phases_total", sum );
            r["note"] = "sum of the medians of blood_flow, tube_grid_and_tube_tube and tube_cell_alg5_alg6";
            r["tube_tube_share"] = share;
            r["max_tubes_per_cell"] = width;
            rows.push_back( r );
            print_row( which, precision, n, mt, "tube_phases_total", sum,
                       format( "sum of medians; tube-tube %.1f%% (paper: 29%% at 9996 tubes)", 100 * share ) );
        }
}

// ---------------------------------------------------------------------------------------------
// whole: the full model, a tumour beside two vessels
// ---------------------------------------------------------------------------------------------

struct WholeInput
{
    angio::HostCells cells;
    angio::HostTubes tubes;
    angio::AngioParameters params;
    double vessel_offset;
};

//! A cluster at the centre of the cube; two vessels along y at x = centre -+ 0.75 R, z = centre, running
//! through the tumour's outer shell from wall to wall.
WholeInput whole_input( const Settings& s )
{
    WholeInput in;
    in.params.seed = s.seed;
    const double c = 0.5 * s.edge;
    angio::ClusterSpec spec;
    spec.centre[0] = spec.centre[1] = spec.centre[2] = c;
    spec.radius = s.cluster_radius;
    spec.seed = s.seed;
    angio::add_cluster( in.cells, spec );
    in.vessel_offset = 0.75 * s.cluster_radius;
    for ( const double x : { c - in.vessel_offset, c + in.vessel_offset } )
        in.tubes.add_vessel( { x, 0, c, x, s.edge, c }, s.vessel_radius, in.params.vessels.max_tube_length,
                             "angio_benchmark" );
    return in;
}

//! Cells per state, the range of oxygen and TAF, and the sprouted tubes: one copy to the host.
template <class Scalar>
nlohmann::json describe( const Model<Scalar>& m )
{
    const auto c = m.cells().to_host();
    const auto t = m.tubes().to_host();
    long long states[5] = { 0, 0, 0, 0, 0 };
    double o_min = 1e300, o_max = 0, o_sum = 0, taf_max = 0;
    for ( std::size_t i = 0; i < c.size(); ++i )
    {
        ++states[std::min( std::max( c.state[i], 0 ), 4 )];
        o_min = std::min( o_min, c.oxygen[i] );
        o_max = std::max( o_max, c.oxygen[i] );
        o_sum += c.oxygen[i];
        taf_max = std::max( taf_max, c.taf[i] );
    }
    long long sprouted = 0;
    double sensed_max = 0;
    for ( std::size_t i = 0; i < t.size(); ++i )
    {
        sprouted += ( t.flags[i] & angio::tube_sprouted ) ? 1 : 0;
        sensed_max = std::max( sensed_max, t.taf[i] );
    }
    return { { "new", states[angio::cell_new] },
             { "mature", states[angio::cell_mature] },
             { "hypoxic", states[angio::cell_hypoxic] },
             { "dead", states[angio::cell_dead] },
             { "oxygen_min", c.size() ? o_min : 0.0 },
             { "oxygen_mean", c.size() ? o_sum / c.size() : 0.0 },
             { "oxygen_max", o_max },
             { "taf_max", taf_max },
             { "tube_taf_sensed_max", sensed_max },
             { "sprouted_tubes", sprouted } };
}

template <class Scalar>
void whole( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows )
{
    const char* which = "whole";
    const WholeInput in = whole_input( s );
    const int n0 = static_cast<int>( in.cells.size() ), m0 = static_cast<int>( in.tubes.size() );
    const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( s.edge ), core::Boundary::closed );
    const char* names[] = { "removal",  "grid",   "cell_cell",   "blood_flow", "tube_tube", "tube_cell",
                            "exchange", "motion", "tube_growth", "life_cycle", "counters",  "total" };
    constexpr int num_phases = 12;
    Stats per_phase[num_phases], wall;
    std::vector<int> final_cells, final_tubes;
    long long divisions = 0, sprouts = 0, anastomoses = 0;
    nlohmann::json final_state; // of the last run: what the model was doing, for reading the timings
    for ( int r = 0; r < s.runs; ++r )
    {
        Model<Scalar> m( Cells<Scalar>( in.cells ), Tubes<Scalar>( in.tubes ), box, in.params );
        for ( int k = 0; k < s.warmup_steps; ++k )
            m.step( exec );
        m.reset_times();
        exec.fence();
        const auto t0 = std::chrono::steady_clock::now();
        for ( int k = 0; k < s.steps; ++k )
            m.step( exec, true );
        exec.fence();
        const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        const auto& t = m.times();
        const double v[num_phases] = { t.removal,  t.grid,   t.cell_cell,   t.blood_flow, t.tube_tube, t.tube_cell,
                                       t.exchange, t.motion, t.tube_growth, t.life_cycle, t.counters,  t.total() };
        for ( int p = 0; p < num_phases; ++p )
            per_phase[p].samples.push_back( v[p] / s.steps );
        wall.samples.push_back( seconds / s.steps );
        final_cells.push_back( m.num_cells() );
        final_tubes.push_back( m.num_tubes() );
        divisions = m.divisions();
        sprouts = m.sprouts();
        anastomoses = m.anastomoses();
        if ( r == s.runs - 1 )
            final_state = describe( m );
    }
    bool same = true;
    for ( int r = 1; r < s.runs; ++r )
        same = same && final_cells[r] == final_cells[0] && final_tubes[r] == final_tubes[0];
    if ( !same )
        std::printf( "warning: runs from the same initial state ended with different cell or tube counts\n" );
    auto extra = [&]( nlohmann::json& r ) {
        r["unit"] = "seconds per step";
        r["steps"] = s.steps;
        r["warmup_steps"] = s.warmup_steps;
        r["cluster_radius_um"] = s.cluster_radius;
        r["box_edge_um"] = s.edge;
        r["vessel_radius_um"] = s.vessel_radius;
        r["vessel_offset_um"] = in.vessel_offset;
        r["final_cells"] = final_cells.back();
        r["final_tubes"] = final_tubes.back();
        r["final_counts_equal_across_runs"] = same;
        r["final_state_last_run"] = final_state;
    };
    const double total = per_phase[num_phases - 1].median();
    for ( int p = 0; p < num_phases; ++p )
    {
        nlohmann::json r = record( which, precision, n0, m0, names[p], per_phase[p] );
        extra( r );
        r["share_of_total"] = per_phase[p].median() / total;
        rows.push_back( r );
        print_row( which, precision, n0, m0, std::string( names[p] ) + " /step", per_phase[p],
                   format( "%.1f%%", 100 * per_phase[p].median() / total ) );
    }
    nlohmann::json r = record( which, precision, n0, m0, "wall", wall );
    extra( r );
    r["steps_per_s"] = 1 / wall.median();
    r["divisions_last_run"] = divisions;
    r["sprouts_last_run"] = sprouts;
    r["anastomoses_last_run"] = anastomoses;
    r["note"] = "wall clock of the timed steps (every phase fenced) per step";
    rows.push_back( r );
    print_row( which, precision, n0, m0, "wall /step", wall,
               format( "%.1f steps/s; final %.0f cells, %.0f tubes", 1 / wall.median(), double( final_cells.back() ),
                       double( final_tubes.back() ) ) );
    std::printf( "%-9s %-6s after %d + %d steps (last run): %lld divisions, %lld sprouts, %lld anastomoses; %s\n",
                 which, precision, s.warmup_steps, s.steps, divisions, sprouts, anastomoses, final_state.dump().c_str() );
    std::fflush( stdout );
}

std::vector<int> parse_sizes( const std::string& list, const char* option )
{
    std::vector<int> out;
    std::stringstream ss( list );
    for ( std::string item; std::getline( ss, item, ',' ); )
    {
        double v = 0;
        try
        {
            v = std::stod( item ); // accepts 1e5
        }
        catch ( const std::exception& )
        {
            throw CLI::ValidationError( option, "'" + item + "' is not a number" );
        }
        if ( !( v >= 1 && v <= 2e9 ) )
            throw CLI::ValidationError( option, "'" + item + "' is not a count in [1, 2e9]" );
        out.push_back( static_cast<int>( std::lround( v ) ) );
    }
    return out;
}

} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "Tumour growth and angiogenesis benchmarks (seed 001, section 4)" );
    Settings s;
    std::string cells, tubes;
    app.add_option( "--case", s.which, "cellcell, tubecell, whole or all" )
        ->check( CLI::IsMember( { "cellcell", "tubecell", "whole", "all" } ) );
    app.add_option( "--cells", cells, "comma-separated cell counts (cellcell: 1e4,1e5,1e6; tubecell: 1e5)" );
    app.add_option( "--tubes", tubes, "comma-separated tube counts (tubecell: 1000,2500,5000,9996)" );
    app.add_option( "--steps", s.steps, "whole: timed steps per run" )->check( CLI::Range( 1, 10000000 ) );
    app.add_option( "--warmup-steps", s.warmup_steps, "whole: untimed steps before the timed ones" )
        ->check( CLI::Range( 0, 10000000 ) );
    app.add_option( "--runs", s.runs, "timed runs" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--warmup", s.warmup, "untimed runs before the timed ones (cellcell, tubecell)" )
        ->check( CLI::Range( 0, 1000 ) );
    app.add_option( "--sweeps", s.sweeps, "cellcell: exchange sweeps of the per-sweep measurement" )
        ->check( CLI::Range( 1, 10000 ) );
    app.add_option( "--precision", s.precision, "float, double or both" )
        ->check( CLI::IsMember( { "float", "double", "both" } ) );
    app.add_option( "--volume-fraction", s.volume_fraction, "cellcell, tubecell: cell volume / box volume" )
        ->check( CLI::Range( 0.01, 2.0 ) );
    app.add_option( "--max-tubes-per-cell", s.max_tubes_per_cell, "tubecell: first list width (doubled on overflow)" )
        ->check( CLI::Range( 1, 1024 ) );
    app.add_option( "--cluster-radius", s.cluster_radius, "whole: tumour radius in um" )->check( CLI::Range( 10.0, 1e4 ) );
    app.add_option( "--edge", s.edge, "whole: cube edge in um" )->check( CLI::Range( 50.0, 1e5 ) );
    app.add_option( "--seed", s.seed, "of the random inputs and of the model" );
    app.add_option( "--out", s.out, "JSON results file" );
    CLI11_PARSE( app, argc, argv );
    try
    {
        if ( !cells.empty() )
            s.cells = parse_sizes( cells, "--cells" );
        s.tubes = parse_sizes( tubes.empty() ? "1000,2500,5000,9996" : tubes, "--tubes" );
    }
    catch ( const CLI::Error& e )
    {
        return app.exit( e );
    }
    if ( s.which == "whole" || s.which == "all" )
        if ( !( s.edge >= 2 * ( s.cluster_radius + 10 ) ) )
        {
            std::fprintf( stderr, "--edge %g is too small for --cluster-radius %g\n", s.edge, s.cluster_radius );
            return 1;
        }

    exec_space exec;
    std::printf( "%s\n", morula::core::build_summary().c_str() );
    print_header();
    nlohmann::json results = nlohmann::json::array();
    const bool all = s.which == "all";
    try
    {
        auto run = [&]( auto tag, const char* name ) {
            using Scalar = decltype( tag );
            if ( all || s.which == "cellcell" )
            {
                Settings c = s;
                if ( c.cells.empty() )
                    c.cells = { 10000, 100000, 1000000 };
                cellcell<Scalar>( exec, c, name, results );
            }
            if ( all || s.which == "tubecell" )
            {
                Settings c = s;
                if ( c.cells.empty() )
                    c.cells = { 100000 };
                tubecell<Scalar>( exec, c, name, results );
            }
            if ( all || s.which == "whole" )
                whole<Scalar>( exec, s, name, results );
        };
        if ( s.precision != "double" )
            run( float{}, "float" );
        if ( s.precision != "float" )
            run( double{}, "double" );
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "angio_benchmark: %s\n", e.what() );
        return 1;
    }
    if ( !s.out.empty() )
    {
        nlohmann::json settings = { { "case", s.which },
                                    { "cells", cells.empty() ? "default (cellcell 1e4,1e5,1e6; tubecell 1e5)" : cells },
                                    { "tubes", s.tubes },
                                    { "runs", s.runs },
                                    { "warmup_runs", s.warmup },
                                    { "steps", s.steps },
                                    { "warmup_steps", s.warmup_steps },
                                    { "sweeps", s.sweeps },
                                    { "precision", s.precision },
                                    { "cell_radius_um", s.cell_radius },
                                    { "volume_fraction", s.volume_fraction },
                                    { "max_tubes_per_cell", s.max_tubes_per_cell },
                                    { "cluster_radius_um", s.cluster_radius },
                                    { "edge_um", s.edge },
                                    { "vessel_radius_um", s.vessel_radius },
                                    { "seed", s.seed } };
        nlohmann::json j = { { "benchmark", "angio_benchmark" },
                             { "case", s.which },
                             { "machine", morula::bench::machine_info( exec ) },
                             { "settings", settings },
                             { "definition",
                               "phase times in seconds (median, min, max over runs, fenced); cellcell and tubecell: "
                               "one call of the phase per run; whole: seconds per step. pairs = interacting cell "
                               "pairs (exchange contacts / 2), counted once outside timing" },
                             { "results", results } };
        morula::bench::write_json( s.out, j );
    }
    return 0;
}
