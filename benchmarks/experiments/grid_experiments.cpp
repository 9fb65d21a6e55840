// The grid experiments measured and not kept in the library (issue #25; README.md in this folder maps each
// to its docs/performance.md section): the per-cell traversal (CellSweep.hpp), the count sweep through
// cells of half the cutoff (HalfCellSweep.hpp), stencil rows cut to the sphere's chord, one particle or K
// consecutive particles per thread (ChordSweep.hpp, CellGroups.hpp) and V lanes per particle (SweepLanes.hpp,
// GPUs only). Each counts the neighbours of every particle and must equal for_each_particle's counts (a
// mismatch ends the program with exit status 1); each is timed beside for_each_particle in the same run.
//
//   grid_experiments [--particles 1000000] [--scalar double|float] [--space device|host] [--runs 10]
//                    [--warmup 3] [--experiments cell,half,chord,lanes] [--cell-sweeps 256:4:4,...]
//                    [--out grid_experiments.json]
//
// The particles are grid_vs_cabana's case (a), Cabana's own benchmark configuration: N points uniform in
// a closed cube of edge 1.3 N^(1/3), cutoff 2.5, cells one cutoff wide (row-major), data in cell order.
#include <common/BenchmarkUtils.hpp>
#include <grid/GridBenchmarkCommon.hpp>

#include "CellSweep.hpp"
#include "ChordSweep.hpp"
#include "HalfCellSweep.hpp"
#include "SweepLanes.hpp"

#include <morula/core/SoA.hpp>
#include <morula/grid/NeighborSweep.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace grid_experiments
{
using morula::bench::Stats;
using morula::bench::time_phase;

struct Settings
{
    int particles = 1000000;
    std::string scalar = "double";
    std::string space = "device";
    int runs = 10;
    int warmup = 3;
    std::vector<std::string> experiments{ "cell", "half", "chord", "lanes" };
    //! The per-cell traversal's settings (tile:cells per warp:warps per team), each timed.
    std::vector<std::string> cell_sweeps{ "256:4:4" };
    std::string out = "grid_experiments.json";

    bool wants( const char* e ) const
    {
        return std::find( experiments.begin(), experiments.end(), e ) != experiments.end();
    }
};

//! Throws unless found(i) == reference(i) for every i < n.
template <class ExecutionSpace, class CountView>
void expect_same_counts( const ExecutionSpace& exec, int n, const CountView& found, const CountView& reference,
                         const std::string& what )
{
    int mismatches = 0;
    Kokkos::parallel_reduce(
        "morula::bench::count_check", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, int& bad ) { bad += found( i ) != reference( i ) ? 1 : 0; }, mismatches );
    if ( mismatches != 0 )
        throw std::runtime_error( what + ": counts differ from for_each_particle's for " +
                                  std::to_string( mismatches ) + " particles" );
}

//! One experiment's timing against for_each_particle's, printed and as JSON.
nlohmann::json against( const char* what, const Stats& s, const Stats& base )
{
    std::printf( "    %-34s %9.3f ms (min %9.3f)   for_each_particle / this: x%.2f\n", what, 1e3 * s.median(),
                 1e3 * s.min(), base.median() / s.median() );
    std::fflush( stdout );
    return { { "time", s.to_json() }, { "speedup_over_for_each_particle", base.median() / s.median() } };
}

template <class Scalar, class ExecutionSpace>
nlohmann::json run( const ExecutionSpace& exec, const Settings& set )
{
    using memory_space = typename ExecutionSpace::memory_space;
    using positions_type = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, memory_space>;
    const int n = set.particles;
    const double edge_d = 1.3 * std::cbrt( double( n ) );
    const Scalar edge = static_cast<Scalar>( edge_d );
    const Scalar cutoff = Scalar( 2.5 );
    std::printf( "%d points uniform in a closed cube of edge %.4g, cutoff 2.5, %s\n", n, edge_d,
                 sizeof( Scalar ) == 4 ? "float" : "double" );

    positions_type original( "original", n );
    morula::bench::fill_uniform( exec, original, n, Scalar( 0 ), edge, 424242 );
    const auto box = morula::core::Box<Scalar>::cube( edge, morula::core::Boundary::closed );
    morula::grid::UniformGrid<Scalar, memory_space> grid( box, cutoff );
    morula::core::Particles<Scalar, memory_space> particles( "particles", n );
    Kokkos::deep_copy( exec, particles.positions(), original );
    grid.build( exec, particles.positions(), n );
    grid.permute( exec, particles );
    const auto query = grid.query( particles.positions() );

    // The reference: for_each_particle's counts, and its time.
    Kokkos::View<int*, memory_space> reference( "reference", n );
    using neighbors_type = morula::grid::ParticleNeighbors<decltype( query ), ExecutionSpace>;
    const Stats base = time_phase( exec, set.warmup, set.runs, [&] {
        morula::grid::for_each_particle(
            exec, query, KOKKOS_LAMBDA( const int i, const neighbors_type& nb ) { reference( i ) = nb.count(); } );
    } );
    long long pairs = 0;
    Kokkos::parallel_reduce(
        "morula::bench::pairs", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, long long& p ) { p += reference( i ); }, pairs );
    std::printf( "    %-34s %9.3f ms (min %9.3f)   %.2f neighbours per particle\n", "for_each_particle (reference)",
                 1e3 * base.median(), 1e3 * base.min(), double( pairs ) / n );
    nlohmann::json result = { { "n", n },
                              { "edge", edge_d },
                              { "cutoff", 2.5 },
                              { "scalar", sizeof( Scalar ) == 4 ? "float" : "double" },
                              { "neighbors_per_particle", double( pairs ) / n },
                              { "for_each_particle", base.to_json() } };
    Kokkos::View<int*, memory_space> got( "got", n );

    // The per-cell traversal (CellSweep.hpp), each setting.
    if ( set.wants( "cell" ) )
    {
        nlohmann::json variants = nlohmann::json::array();
        for ( const std::string& setting : set.cell_sweeps )
        {
            morula::bench::CellSweepSettings cs;
            if ( std::sscanf( setting.c_str(), "%d:%d:%d", &cs.tile, &cs.cells_per_warp, &cs.warps_per_team ) != 3 ||
                 cs.tile < 32 || cs.cells_per_warp < 1 || cs.warps_per_team < 1 )
                throw std::invalid_argument( "--cell-sweeps: expected tile:cells:warps (tile >= 32), got '" +
                                             setting + "'" );
            auto count_pair = KOKKOS_LAMBDA( int, int, Scalar, Scalar, Scalar, Scalar, int& c ) { ++c; };
            auto store = KOKKOS_LAMBDA( const int i, const int& c ) { got( i ) = c; };
            Kokkos::deep_copy( exec, got, -1 );
            const Stats s = time_phase( exec, set.warmup, set.runs, [&] {
                morula::bench::reduce_neighbors_per_cell<int, Kokkos::LaunchBounds<>>( exec, query, count_pair, store,
                                                                                       cutoff * cutoff, cs,
                                                                                       "cell_sweep_count" );
            } );
            expect_same_counts( exec, n, got, reference, "per-cell sweep " + setting );
            auto j = against( ( "per-cell sweep " + setting ).c_str(), s, base );
            j["settings"] = setting;
            variants.push_back( j );
        }
        result["per_cell_sweep"] = variants;
    }

    // Cells of half the cutoff (HalfCellSweep.hpp): the same data sorted into half-width cells, checked
    // against for_each_particle on full cells over the same data.
    if ( set.wants( "half" ) )
    {
        morula::core::Particles<Scalar, memory_space> hp( "half_particles", n );
        Kokkos::deep_copy( exec, hp.positions(), particles.positions() );
        morula::grid::UniformGrid<Scalar, memory_space> half_grid( box, cutoff / 2 );
        half_grid.build( exec, hp.positions(), n );
        half_grid.permute( exec, hp );
        const auto half_query = half_grid.query( hp.positions() );
        morula::grid::UniformGrid<Scalar, memory_space> full_grid( box, cutoff );
        full_grid.build( exec, hp.positions(), n );
        const auto full_query = full_grid.query( hp.positions() );
        Kokkos::View<int*, memory_space> half_ref( "half_ref", n );
        using full_neighbors = morula::grid::ParticleNeighbors<decltype( full_query ), ExecutionSpace>;
        morula::grid::for_each_particle(
            exec, full_query, KOKKOS_LAMBDA( const int i, const full_neighbors& nb ) { half_ref( i ) = nb.count(); } );
        Kokkos::deep_copy( exec, got, -1 );
        const Stats s = time_phase( exec, set.warmup, set.runs,
                                    [&] { morula::bench::half_cell_count_sweep( exec, half_query, cutoff, got ); } );
        expect_same_counts( exec, n, got, half_ref, "half-cell sweep" );
        result["half_cells"] = against( "half cells (5x5 rows)", s, base );
        result["half_cells"]["cells_per_axis"] = half_grid.geometry().ncell[0];
    }

    // Rows cut to the chord (ChordSweep.hpp): each cell's points re-sorted along x (not timed), one
    // particle per thread and K = 2, 3, 4 per thread; against for_each_particle over the re-sorted data.
    if ( set.wants( "chord" ) )
    {
        positions_type chord_x( "chord_positions", n );
        Kokkos::View<int*, memory_space> order( "chord_order", n );
        morula::bench::sort_cells_along_x( exec, grid.cell_offsets(), grid.num_cells(), particles.positions(), order,
                                           chord_x );
        const auto chord_query = grid.query( chord_x );
        Kokkos::View<int*, memory_space> chord_ref( "chord_ref", n );
        using chord_neighbors = morula::grid::ParticleNeighbors<decltype( chord_query ), ExecutionSpace>;
        const Stats plain = time_phase( exec, set.warmup, set.runs, [&] {
            morula::grid::for_each_particle(
                exec, chord_query,
                KOKKOS_LAMBDA( const int i, const chord_neighbors& nb ) { chord_ref( i ) = nb.count(); } );
        } );
        morula::bench::CellGroupWork<memory_space> work;
        nlohmann::json groups = nlohmann::json::array();
        for ( const int K : { 1, 2, 3, 4 } )
        {
            Kokkos::deep_copy( exec, got, -1 );
            const Stats s = time_phase( exec, set.warmup, set.runs, [&] {
                if ( K == 1 )
                    morula::bench::chord_count_sweep<1>( exec, chord_query, work, cutoff, got );
                else if ( K == 2 )
                    morula::bench::chord_count_sweep<2>( exec, chord_query, work, cutoff, got );
                else if ( K == 3 )
                    morula::bench::chord_count_sweep<3>( exec, chord_query, work, cutoff, got );
                else
                    morula::bench::chord_count_sweep<4>( exec, chord_query, work, cutoff, got );
            } );
            expect_same_counts( exec, n, got, chord_ref, "chord sweep, K = " + std::to_string( K ) );
            auto j = against( ( "rows cut to the chord, K=" + std::to_string( K ) ).c_str(), s, plain );
            j["particles_per_thread"] = K;
            groups.push_back( j );
        }
        result["chord_rows"] = { { "for_each_particle_same_data", plain.to_json() }, { "groups", groups } };
    }

    // V lanes per particle (SweepLanes.hpp; GPUs only: nothing on host backends).
    if ( set.wants( "lanes" ) )
        result["lane_sweeps"] =
            morula::bench::time_lane_sweeps( exec, set.warmup, set.runs, query, cutoff, reference );
    return result;
}

template <class ExecutionSpace>
void run_all( const ExecutionSpace& exec, const Settings& set, nlohmann::json& out )
{
    out["machine"] = morula::bench::machine_info( exec );
    std::printf( "%s on %s\n", ExecutionSpace::name(), out["machine"]["device"].get<std::string>().c_str() );
    out["result"] = set.scalar == "float" ? run<float>( exec, set ) : run<double>( exec, set );
}

} // namespace grid_experiments

int main( int argc, char* argv[] )
{
    grid_experiments::Settings set;
    CLI::App app( "The grid experiments kept as evidence, checked and timed against for_each_particle" );
    app.add_option( "--particles", set.particles, "points in the cube" )->check( CLI::Range( 100, 200000000 ) );
    app.add_option( "--scalar", set.scalar, "double or float" )->check( CLI::IsMember( { "double", "float" } ) );
    app.add_option( "--space", set.space, "device (default execution space) or host" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    app.add_option( "--runs", set.runs, "timed runs per experiment" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--warmup", set.warmup, "untimed runs first" )->check( CLI::Range( 0, 100 ) );
    app.add_option( "--experiments", set.experiments, "cell, half, chord, lanes" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { "cell", "half", "chord", "lanes" } ) );
    app.add_option( "--cell-sweeps", set.cell_sweeps, "per-cell sweep settings tile:cells_per_warp:warps_per_team" )
        ->delimiter( ',' );
    app.add_option( "--out", set.out, "JSON result file" );
    CLI11_PARSE( app, argc, argv );

    Kokkos::ScopeGuard guard( argc, argv );
    nlohmann::json out = { { "benchmark", "grid_experiments" },
                           { "settings",
                             { { "particles", set.particles },
                               { "scalar", set.scalar },
                               { "runs", set.runs },
                               { "warmup", set.warmup },
                               { "experiments", set.experiments } } } };
    try
    {
        if ( set.space == "device" )
            grid_experiments::run_all( Kokkos::DefaultExecutionSpace(), set, out );
        else
            grid_experiments::run_all( Kokkos::DefaultHostExecutionSpace(), set, out );
    }
    catch ( const std::invalid_argument& e )
    {
        std::fprintf( stderr, "grid_experiments: %s\n", e.what() );
        return 2;
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "grid_experiments: FAILED: %s\n", e.what() );
        return 1;
    }
    morula::bench::write_json( set.out, out );
    std::printf( "results in %s\n", set.out.c_str() );
    return 0;
}
