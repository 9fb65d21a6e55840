// Benchmarks A and B of Hesam et al. (2021) (BioDynaMo on GPUs) with Morula's sphere mechanics.
//
//   mechanics_benchmark [--space device|host] [--scalar float|double|both] [--runs 10] [--warmup 3]
//                       [--agents 2000000] [--neighbors 6,27,47] [--cells 64] [--steps 10]
//                       [--repeats 3] [--orders z-order,row-major,unsorted] [--per-thread 1,2,3,4]
//                       [--skip-a] [--skip-b]
//                       [--out results.json] [--roofline-suite] [--no-copy-roof]
//
// --roofline-suite: the roofline suite's case (issue #8): benchmark B only, 2M agents, 27 neighbours,
// Z-order, both precisions, 3 runs after 1 warm-up, results in mechanics_benchmark.json (options given
// explicitly still win; the CI smoke test adds --agents 50000 --neighbors 6 --runs 2 --scalar float
// --no-copy-roof).
//
// A: a 64^3 lattice of cells (diameter 30, spacing 20) that grow, divide and push each other for 10
//    steps; the time of each operation (division, grid build, Z-order sort, forces, displacement),
//    median over repeated simulations after a warm-up one.
// B: 2M static agents (displacement locked to zero) at random positions in a periodic box sized for
//    6, 27 and 47 interacting neighbours per agent on average; the mechanical operation (forces and
//    displacements) timed alone, median over runs after warm-up, with the agents sorted in Z-order,
//    in row-major cell order, or not at all; and the force kernel's grid walk alone (for_each_particle
//    counting the neighbours on the same grid, "count sweep alone"). Bytes: what the operation must
//    move (per agent: position, diameter, adherence and density read, force and displacement written;
//    the cell offsets read), against the copy bandwidth measured in the same run.
// --per-thread K,...: B's forces are also timed through grid::NeighborReduction with K agents of a cell per
// thread, pairs inline and batched, on the same grid (issue #25), each checked bit for bit against the
// library's forces ("forces_by_particles_per_thread").
// Each case of B also appends roofline records (analytic bytes and flops,
// docs/roofline/grid-and-mechanics.md) of its three timed kernels (Z-order sort, grid build,
// compute_displacements) to the result file's top-level "kernels" array. A's times are sums over
// steps whose agent counts change, so A has no records.
#include <common/BenchmarkUtils.hpp>
#include <common/Roofline.hpp>
#include <grid/GridBenchmarkCommon.hpp>

#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace mech_bench
{
using morula::bench::Stats;
using morula::bench::time_phase;
namespace mechanics = morula::mechanics;

struct Settings
{
    std::string space = "device";
    std::string scalar = "both";
    int runs = 10;
    int warmup = 3;
    int agents = 2000000;
    std::vector<double> neighbors{ 6, 27, 47 };
    int cells = 64;
    int steps = 10;
    int repeats = 3;
    bool skip_a = false;
    bool skip_b = false;
    //! z-order: agents sorted by Morton cell order every step (the paper's space-filling curve);
    //! row-major: sorted by row-major cell order; unsorted: never sorted (read through the grid).
    std::vector<std::string> orders{ "z-order", "row-major", "unsorted" };
    std::string out;
    bool roofline_suite = false;
    bool no_copy_roof = false; //!< skip the copy-bandwidth measurement (2 x 1 GiB)
    //! Agents per thread of the force kernel also timed in benchmark B (0: automatic; unsorted agents: 1).
    std::vector<int> per_thread{};
};

//! Neighbours within the query's cutoff at distance^2 > 1e-16 (the force loop's non-coincident
//! branch), summed over the agents; untimed, for the flop count.
template <class ExecutionSpace, class Query>
long long pairs_within_cutoff( const ExecutionSpace& exec, const Query& query )
{
    using Scalar = typename Query::scalar_type;
    using neighbors_type = morula::grid::ParticleNeighbors<Query, ExecutionSpace>;
    Kokkos::View<int*, typename Query::memory_space> counts( "counts", query.num_particles() );
    const Scalar coincident2 = Scalar( 1e-16 );
    morula::grid::for_each_particle(
        exec, query,
        KOKKOS_LAMBDA( const int i, const neighbors_type& nb ) {
            int c = 0;
            nb.for_each( [&]( int, Scalar, Scalar, Scalar, Scalar r2 ) {
                c += r2 > coincident2 ? 1 : 0;
            } );
            counts( i ) = c;
        },
        query.cutoff(), "morula::bench::pairs_within_cutoff" );
    long long total = 0;
    Kokkos::parallel_reduce(
        "morula::bench::sum", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, query.num_particles() ),
        KOKKOS_LAMBDA( const int i, long long& s ) { s += counts( i ); }, total );
    return total;
}

/*!
  The force kernel's grid walk alone: for_each_particle counting the neighbours within the cutoff
  (same query, same pairs, no force arithmetic), timed as the forces are. The forces' time over this
  one says what the force arithmetic and its loads add to the neighbour search.
*/
template <class ExecutionSpace, class Query>
Stats time_count_sweep( const ExecutionSpace& exec, const Settings& set, const Query& query )
{
    using Scalar = typename Query::scalar_type;
    using neighbors_type = morula::grid::ParticleNeighbors<Query, ExecutionSpace>;
    Kokkos::View<int*, typename Query::memory_space> counts( "counts", query.num_particles() );
    return time_phase( exec, set.warmup, set.runs, [&] {
        morula::grid::for_each_particle(
            exec, query,
            KOKKOS_LAMBDA( const int i, const neighbors_type& nb ) {
                int c = 0;
                nb.for_each( [&]( int, Scalar, Scalar, Scalar, Scalar ) { ++c; } );
                counts( i ) = c;
            },
            query.cutoff(), "morula::bench::count_sweep" );
    } );
}

/*!
  Agents whose force breaks their adherence (displacement_from_force goes past its early return), and
  among them those whose move is capped at max_displacement; from the forces of the last
  compute_displacements(), same arithmetic. Untimed, for the flop count.
*/
template <class ExecutionSpace, class VectorView, class Scalar, class MemorySpace>
void count_movers( const ExecutionSpace& exec, const VectorView& force,
                   const mechanics::SphereAgents<Scalar, MemorySpace>& agents,
                   const mechanics::MechanicsParameters<Scalar>& mp, long long& movers,
                   long long& capped )
{
    const auto adherence = agents.adherence();
    const auto density = agents.densities();
    const auto diameter = agents.diameters();
    const Scalar dt = mp.time_step;
    const Scalar max_move = mp.max_displacement;
    const int n = static_cast<int>( agents.size() );
    movers = 0;
    capped = 0;
    Kokkos::parallel_reduce(
        "morula::bench::movers", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, long long& s ) {
            const Scalar norm = morula::compat::sqrt( force( i, 0 ) * force( i, 0 ) +
                                                      force( i, 1 ) * force( i, 1 ) +
                                                      force( i, 2 ) * force( i, 2 ) );
            s += ( norm > adherence( i ) && norm > Scalar( 0 ) ) ? 1 : 0;
        },
        movers );
    Kokkos::parallel_reduce(
        "morula::bench::capped", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, long long& s ) {
            const Scalar norm = morula::compat::sqrt( force( i, 0 ) * force( i, 0 ) +
                                                      force( i, 1 ) * force( i, 1 ) +
                                                      force( i, 2 ) * force( i, 2 ) );
            if ( !( norm > adherence( i ) && norm > Scalar( 0 ) ) )
                return;
            const Scalar mass = density( i ) * mechanics::sphere_volume( diameter( i ) );
            s += norm * ( dt / mass ) > max_move ? 1 : 0;
        },
        capped );
}

//! Number of components that differ between two n x 3 force arrays (bit for bit).
template <class ExecutionSpace, class VectorView>
int differing_components( const ExecutionSpace& exec, const VectorView& a, const VectorView& b, int n )
{
    int differ = 0;
    Kokkos::parallel_reduce(
        "morula::bench::compare_forces", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, int& d ) {
            for ( int c = 0; c < 3; ++c )
                d += a( i, c ) != b( i, c ) ? 1 : 0;
        },
        differ );
    return differ;
}

void print_record( const nlohmann::json& r )
{
    std::printf( "  %-32s %-6s %10.3f ms  AI %7.3f flop/B  %8.2f GB/s  %8.2f GFLOP/s\n",
                 r["kernel"].get<std::string>().c_str(), r["precision"].get<std::string>().c_str(),
                 1e3 * r["time"]["median_s"].get<double>(), r["arithmetic_intensity"].get<double>(),
                 r["gbytes_per_s"].get<double>(), r["gflops_per_s"].get<double>() );
}

//! The grid's cell ordering for an agent order of --orders (unsorted agents keep Morton cells).
inline morula::grid::CellOrdering cell_ordering_of( const std::string& order )
{
    if ( order == "row-major" )
        return morula::grid::CellOrdering::row_major;
    if ( order == "z-rows" )
        return morula::grid::CellOrdering::morton_rows;
    return morula::grid::CellOrdering::morton;
}

template <class Scalar, class ExecutionSpace>
nlohmann::json benchmark_b( const ExecutionSpace& exec, const Settings& set, double neighbors,
                            const std::string& order, double bandwidth, nlohmann::json& kernels )
{
    using mem = typename ExecutionSpace::memory_space;
    mechanics::AgentProperties<Scalar> props; // BioDynaMo's cell: diameter 30, adherence 0.4, mass 1
    mechanics::MechanicsParameters<Scalar> mp;
    mp.max_displacement = 0; // locked in place, as in the paper
    const bool sorted = order != "unsorted";
    mp.sort_every = sorted ? 1 : 0;
    mp.ordering = cell_ordering_of( order );
    const double distance = double( props.diameter ) + 2 * double( mp.force.radius_extension );
    const double edge = mechanics::box_edge_for_neighbors( set.agents, neighbors, distance );
    const auto box = morula::core::Box<Scalar>::cube( Scalar( edge ), morula::core::Boundary::periodic );
    auto make = [&] { return mechanics::random_agents<Scalar, mem>( exec, set.agents, box, props, 7 ); };
    auto agents = make();
    mechanics::SphereMechanics<Scalar, mem> mech( box, mp );

    // The Z-order sort of agents in random order (all seven fields), and the grid build alone.
    const Stats sort = time_phase(
        exec, 1, set.runs,
        [&] {
            agents = make();
            mech.build_grid( exec, agents );
        },
        [&] { mech.sort_agents( exec, agents ); } );
    if ( !sorted )
        agents = make();
    const Stats build = time_phase( exec, set.warmup, set.runs, [&] { mech.build_grid( exec, agents ); } );
    if ( sorted )
        mech.sort_agents( exec, agents ); // the agents are in order already: marks the grid sorted
    const long long pairs = mech.compute_displacements( exec, agents, true );
    const Stats forces =
        time_phase( exec, set.warmup, set.runs, [&] { mech.compute_displacements( exec, agents ); } );
    morula::bench::profile_once( exec, "mechanics_compute_displacements",
                                 [&] { mech.compute_displacements( exec, agents ); } );

    const Stats count_sweep = time_count_sweep( exec, set, mech.grid().query( agents.positions() ) );

    // The force kernel with each number of agents of a cell per thread and each pair batching (issue
    // #25), on the same grid and agents, in this call: the forces must equal the default's bit for bit.
    nlohmann::json per_thread = nlohmann::json::array();
    const int resolved_default = mech.particles_per_thread( exec, agents );
    // Unsorted agents take one agent per thread whatever K; their batched pairs read through the grid's
    // permutation.
    if ( !set.per_thread.empty() )
    {
        using vector_view = typename mechanics::SphereMechanics<Scalar, mem>::vector_view;
        const vector_view force( "force", set.agents ), displacement( "displacement", set.agents );
        const Kokkos::View<int*, mem> overlaps;
        const auto query = mech.grid().query( agents.positions() );
        for ( const auto batching : { morula::grid::PairBatching::inline_pairs, morula::grid::PairBatching::batched } )
            for ( int k : set.per_thread )
            {
                morula::grid::NeighborReduction<mem> reduction( k, batching );
                auto run = [&] {
                    mechanics::detail::compute_displacements( exec, query, reduction, agents, mp, force, displacement,
                                                              overlaps, false, set.agents );
                };
                const Stats s = time_phase( exec, set.warmup, set.runs, run );
                const int differ = differing_components( exec, mech.forces(), force, set.agents );
                const int resolved = reduction.resolved_particles_per_thread( exec, query );
                const bool batched = batching == morula::grid::PairBatching::batched;
                std::printf( "  forces, %d agents per thread (asked %d), pairs %s: %.3f ms, %d components differ "
                             "from the default's (%d per thread)\n",
                             resolved, k, batched ? "batched" : "inline", 1e3 * s.median(), differ,
                             resolved_default );
                per_thread.push_back( { { "particles_per_thread", k },
                                        { "resolved", resolved },
                                        { "pair_batching", batched ? "batched" : "inline" },
                                        { "time", s.to_json() },
                                        { "components_differing_from_default", differ } } );
            }
    }

    const double n = set.agents;
    const double bytes = n * 12.0 * sizeof( Scalar ) + 4.0 * mech.grid().num_cells();
    const double t = forces.median();

    // Roofline records (untimed counting passes over the same data and grid).
    {
        const auto& grid = mech.grid();
        const auto& g = grid.geometry();
        const double S = sizeof( Scalar );
        const double cells = grid.num_cells();
        // Morton cell keys: one per cell (morton), or one per row read by the force kernel (morton_rows).
        const bool morton = mp.ordering != morula::grid::CellOrdering::row_major;
        const double key_reads =
            mp.ordering == morula::grid::CellOrdering::morton ? cells : cells / double( g.ncell[0] );
        const auto query = grid.query( agents.positions() );
        const morula::bench::StencilTally tally =
            morula::bench::stencil_tally( exec, query, query.cutoff() );
        const long long in_cutoff = pairs_within_cutoff( exec, query );
        const long long occupied = morula::bench::occupied_cells( exec, grid.cell_offsets(),
                                                                  grid.num_cells() );
        long long movers = 0, capped = 0;
        count_movers( exec, mech.forces(), agents, mp, movers, capped );
        int open_axes = 0;
        for ( int d = 0; d < 3; ++d )
            open_axes += box.boundary[d] == morula::core::Boundary::open ? 1 : 0;
        const char* precision = morula::bench::precision_name<Scalar>();
        const nlohmann::json parameters = {
            { "scalar", precision },
            { "agents", set.agents },
            { "neighbors_target", neighbors },
            { "neighbors_measured", pairs / n },
            { "box_edge", edge },
            { "boundary", "periodic" },
            { "agent_order", order },
            { "cell_ordering", morula::grid::to_string( mp.ordering ) },
            { "cells", grid.num_cells() },
            { "cells_per_axis", g.ncell[0] },
            { "occupied_cells", occupied },
            { "cutoff", query.cutoff() },
            { "candidates_tested", tally.candidates },
            { "pairs_within_cutoff", in_cutoff },
            { "overlapping_pairs", pairs },
            { "agents_moving", movers },
            { "agents_capped", capped } };
        // Sort: one gather per field (position 3S, diameter, adherence, density S each, id 8), read
        // and written; the permutation counted once although each field's gather reads it again.
        kernels.push_back( morula::bench::kernel_record(
            "mechanics", "mechanics_sort_agents",
            { 4.0 * n + 2.0 * n * ( 6.0 * S + 8.0 ), 0, "none",
              "permutation 4n read; 5 fields (position 3S, diameter, adherence, density S, id 8) "
              "gathered and written: 2n(6S + 8)" },
            sort, parameters ) );
        kernels.push_back( morula::bench::kernel_record(
            "mechanics", "mechanics_grid_build",
            { ( 2.0 + open_axes ) * S * n + morula::bench::build_bytes( n, cells, sizeof( Scalar ) ) +
                  ( morton ? 4.0 * occupied : 0.0 ),
              6.0 * n, precision,
              "diameter, density 2Sn read (largest diameter; + Sn per open axis); grid build: "
              "positions 3Sn, cell keys 4n written and read, pairs 8n written and read, permutation 4n, "
              "offsets 4C written; Morton key of each occupied cell 4 read. 6 flops/agent" },
            build, parameters ) );
        const double force_bytes = 12.0 * S * n + 4.0 * ( cells + 1 ) + ( morton ? 4.0 * key_reads : 0.0 ) +
                                   ( sorted ? 0.0 : 4.0 * n );
        // Per overlapping pair: float r delta = ra rb delta / sum and its sqrt (9 flops); double
        // t = ra rb delta and t / sqrt(t sum) (10; SphereForce.hpp).
        const double overlap_flops = sizeof( Scalar ) >= 8 ? 10.0 : 9.0;
        const double force_flops = 12.0 * n + 5.0 * double( movers ) + double( capped ) +
                                   morula::bench::stencil_flops( tally, query ) +
                                   13.0 * double( in_cutoff ) + overlap_flops * double( pairs );
        kernels.push_back( morula::bench::kernel_record(
            "mechanics", "mechanics_compute_displacements",
            { force_bytes, force_flops, precision,
              "position 3S, diameter, adherence, density S read, force 3S, displacement 3S written per "
              "agent; offsets 4(C+1)" +
                  std::string( morton ? ", Morton cell keys 4 per cell (z-order) or per row (z-rows)" : "" ) +
                  ( sorted ? "" : ", permutation 4n" ) +
                  " read. Flops: 12/agent + 5/moving agent (+1 capped) + stencil walk (28/agent, "
                  "3/row, 2/x cell tested, 8/candidate, +3 in shifted runs) + 13/pair within the "
                  "cutoff + " + std::string( sizeof( Scalar ) >= 8 ? "10" : "9" ) + "/overlapping pair" },
            forces, parameters ) );
        for ( std::size_t k = kernels.size() - 3; k < kernels.size(); ++k )
            print_record( kernels[k] );
    }
    std::printf( "B %-6s n=%d neighbours %5.2f (target %2.0f) %-9s: forces %8.3f ms (min %8.3f), "
                 "%.3g interactions/s, %5.1f%% of the copy roof; grid build %.3f ms, sort %.3f ms; "
                 "count sweep alone %.3f ms\n",
                 sizeof( Scalar ) == 4 ? "float" : "double", set.agents, pairs / n, neighbors,
                 order.c_str(), 1e3 * t, 1e3 * forces.min(), pairs / t,
                 100.0 * bytes / bandwidth / t, 1e3 * build.median(), 1e3 * sort.median(),
                 1e3 * count_sweep.median() );
    return { { "benchmark", "B" },
             { "scalar", sizeof( Scalar ) == 4 ? "float" : "double" },
             { "agents", set.agents },
             { "neighbors_target", neighbors },
             { "neighbors_measured", pairs / n },
             { "box_edge", edge },
             { "agent_order", order },
             { "forces", forces.to_json() },
             { "count_sweep_alone", count_sweep.to_json() },
             { "particles_per_thread", resolved_default },
             { "forces_by_particles_per_thread", per_thread },
             { "grid_build", build.to_json() },
             { "sort_random_order", sort.to_json() },
             { "interactions_per_s_median", pairs / t },
             { "bytes_must_move", bytes },
             { "gbytes_per_s_median", bytes / t * 1e-9 },
             { "fraction_of_copy_roof", bytes / bandwidth / t } };
}

template <class Scalar, class ExecutionSpace>
nlohmann::json benchmark_a( const ExecutionSpace& exec, const Settings& set, const std::string& order )
{
    using mem = typename ExecutionSpace::memory_space;
    mechanics::MechanicsParameters<Scalar> mp;
    const bool sorted = order != "unsorted";
    mp.sort_every = sorted ? 1 : 0;
    mp.ordering = cell_ordering_of( order );
    const Scalar spacing = 20;
    const Scalar extent = spacing * Scalar( set.cells - 1 );
    const morula::core::Box<Scalar> box( { 0, 0, 0 }, { extent, extent, extent }, morula::core::Boundary::open );
    std::vector<double> division, build, sort, forces, move, total;
    std::size_t final_agents = 0;
    for ( int r = 0; r < 1 + set.repeats; ++r )
    {
        mechanics::Proliferation<Scalar, mem> model(
            mechanics::lattice_agents<Scalar, mem>( exec, set.cells, spacing, {} ), box, mp,
            mechanics::GrowthParameters<Scalar>{} );
        for ( int s = 0; s < set.steps; ++s )
            model.step( exec, true );
        if ( r == 0 )
            continue; // warm-up simulation
        using Phase = mechanics::ProliferationPhase;
        const auto& t = model.times();
        division.push_back( t.seconds( Phase::division ) );
        build.push_back( t.seconds( Phase::grid ) );
        sort.push_back( t.seconds( Phase::sort ) );
        forces.push_back( t.seconds( Phase::forces ) );
        move.push_back( t.seconds( Phase::move ) );
        total.push_back( t.total() );
        final_agents = model.agents().size();
    }
    auto stats = []( std::vector<double> v ) {
        Stats s;
        s.samples = std::move( v );
        return s;
    };
    const Stats tot = stats( total ), frc = stats( forces );
    std::printf( "A %-6s %d^3 cells, %d steps, %-9s: total %8.3f ms (division %.3f, grid %.3f, sort "
                 "%.3f, forces %.3f, move %.3f), %zu agents at the end\n",
                 sizeof( Scalar ) == 4 ? "float" : "double", set.cells, set.steps,
                 order.c_str(), 1e3 * tot.median(),
                 1e3 * stats( division ).median(), 1e3 * stats( build ).median(),
                 1e3 * stats( sort ).median(), 1e3 * frc.median(), 1e3 * stats( move ).median(),
                 final_agents );
    return { { "benchmark", "A" },
             { "scalar", sizeof( Scalar ) == 4 ? "float" : "double" },
             { "initial_agents", set.cells * set.cells * set.cells },
             { "final_agents", final_agents },
             { "steps", set.steps },
             { "agent_order", order },
             { "note", "times are sums over the steps of one simulation; median over simulations" },
             { "division", stats( division ).to_json() },
             { "grid_build", stats( build ).to_json() },
             { "sort", stats( sort ).to_json() },
             { "forces", frc.to_json() },
             { "displacement", stats( move ).to_json() },
             { "total", tot.to_json() } };
}

template <class ExecutionSpace>
void run_all( const ExecutionSpace& exec, const Settings& set )
{
    std::printf( "%s\n%s on %s\n", morula::core::build_summary().c_str(), ExecutionSpace::name(),
                 ExecutionSpace::name() == std::string( "Cuda" ) ? morula::bench::device_name().c_str()
                                                                 : morula::bench::cpu_model().c_str() );
    // Without the measurement (--no-copy-roof) the copy-roof fractions are NaN (null in the JSON).
    const double bandwidth = set.no_copy_roof ? std::numeric_limits<double>::quiet_NaN()
                                              : morula::bench::copy_bandwidth( exec, set.runs );
    if ( !set.no_copy_roof )
        std::printf( "copy bandwidth: %.0f GB/s\n", bandwidth * 1e-9 );
    nlohmann::json cases = nlohmann::json::array();
    nlohmann::json kernels = nlohmann::json::array();
    auto each_scalar = [&]( auto&& f ) {
        if ( set.scalar != "double" )
            f( float() );
        if ( set.scalar != "float" )
            f( double() );
    };
    each_scalar( [&]( auto s ) {
        using Scalar = decltype( s );
        if ( !set.skip_a )
            for ( const auto& order : set.orders )
                cases.push_back( benchmark_a<Scalar>( exec, set, order ) );
        if ( !set.skip_b )
            for ( double nb : set.neighbors )
                for ( const auto& order : set.orders )
                    cases.push_back( benchmark_b<Scalar>( exec, set, nb, order, bandwidth, kernels ) );
    } );
    if ( !set.out.empty() )
    {
        nlohmann::json machine = morula::bench::machine_info( exec );
        if ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible )
            machine["device"] = morula::bench::cpu_model(); // (a CUDA build's host space: not its GPU)
        nlohmann::json j = { { "benchmark", "mechanics_benchmark" },
                             { "machine", machine },
                             { "copy_bandwidth_bytes_per_s", bandwidth },
                             { "settings",
                               { { "runs", set.runs },
                                 { "warmup", set.warmup },
                                 { "repeats_a", set.repeats },
                                 { "roofline_suite", set.roofline_suite } } },
                             { "cases", cases },
                             { "kernels", kernels } };
        morula::bench::write_json( set.out, j );
        std::printf( "wrote %s\n", set.out.c_str() );
    }
}

} // namespace mech_bench

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    mech_bench::Settings set;
    CLI::App app( "Benchmarks A and B of Hesam et al. (2021) with Morula's sphere mechanics" );
    app.add_option( "--space", set.space, "device (default execution space) or host" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    app.add_option( "--scalar", set.scalar, "float, double or both" )
        ->check( CLI::IsMember( { "float", "double", "both" } ) );
    app.add_option( "--runs", set.runs, "Timed runs (B)" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--warmup", set.warmup, "Warm-up runs (B)" )->check( CLI::Range( 0, 1000 ) );
    app.add_option( "--agents", set.agents, "Agents of benchmark B" )->check( CLI::Range( 1, 200000000 ) );
    app.add_option( "--neighbors", set.neighbors, "Mean neighbours of benchmark B" )->delimiter( ',' );
    app.add_option( "--cells", set.cells, "Cells per axis of benchmark A" )->check( CLI::Range( 1, 512 ) );
    app.add_option( "--steps", set.steps, "Steps of benchmark A" )->check( CLI::Range( 1, 100000 ) );
    app.add_option( "--repeats", set.repeats, "Timed simulations of benchmark A" )->check( CLI::Range( 1, 100 ) );
    app.add_option( "--orders", set.orders, "Agent orders: z-order, z-rows (rows of cells in Z-order), row-major, unsorted" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { "z-order", "z-rows", "row-major", "unsorted" } ) );
    app.add_option( "--per-thread", set.per_thread,
                    "Also time B's forces with these agents of a cell per thread (0 automatic, 1-4)" )
        ->delimiter( ',' )
        ->check( CLI::Range( 0, 4 ) );
    app.add_flag( "--skip-a", set.skip_a, "Skip benchmark A" );
    app.add_flag( "--skip-b", set.skip_b, "Skip benchmark B" );
    app.add_option( "--out", set.out, "JSON result file" );
    app.add_flag( "--no-copy-roof", set.no_copy_roof,
                  "Skip the copy-bandwidth measurement (2 x 1 GiB; copy-roof fractions become null)" );
    app.add_flag( "--roofline-suite", set.roofline_suite,
                  "Roofline suite case: B only, --agents 2000000 --neighbors 27 --orders z-order "
                  "--runs 3 --warmup 1 --scalar both --out mechanics_benchmark.json unless given" );
    CLI11_PARSE( app, argc, argv );
    if ( set.roofline_suite )
    {
        set.skip_a = true;
        if ( app.count( "--agents" ) == 0 )
            set.agents = 2000000;
        if ( app.count( "--neighbors" ) == 0 )
            set.neighbors = { 27 };
        if ( app.count( "--orders" ) == 0 )
            set.orders = { "z-order" };
        if ( app.count( "--runs" ) == 0 )
            set.runs = 3;
        if ( app.count( "--warmup" ) == 0 )
            set.warmup = 1;
        if ( app.count( "--scalar" ) == 0 )
            set.scalar = "both";
        if ( app.count( "--out" ) == 0 )
            set.out = "mechanics_benchmark.json";
    }
    try
    {
        if ( set.space == "device" )
            mech_bench::run_all( Kokkos::DefaultExecutionSpace(), set );
        else
            mech_bench::run_all( Kokkos::DefaultHostExecutionSpace(), set );
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "mechanics_benchmark: %s\n", e.what() );
        return 1;
    }
    return 0;
}
