// Benchmarks A and B of seed 004 (BioDynaMo on GPUs) with Morula's sphere mechanics.
//
//   mechanics_benchmark [--space device|host] [--scalar float|double|both] [--runs 10] [--warmup 3]
//                       [--agents 2000000] [--neighbors 6,27,47] [--cells 64] [--steps 10]
//                       [--repeats 3] [--orders z-order,row-major,unsorted] [--skip-a] [--skip-b]
//                       [--out results.json]
//
// A: a 64^3 lattice of cells (diameter 30, spacing 20) that grow, divide and push each other for 10
//    steps; the time of each operation (division, grid build, Z-order sort, forces, displacement),
//    median over repeated simulations after a warm-up one.
// B: 2M static agents (displacement locked to zero) at random positions in a periodic box sized for
//    6, 27 and 47 interacting neighbours per agent on average; the mechanical operation (forces and
//    displacements) timed alone, median over runs after warm-up, with the agents sorted in Z-order,
//    in row-major cell order, or not at all. Bytes: what the operation must move (per agent: position, diameter, adherence and
//    density read, force and displacement written; the cell offsets read), against the copy bandwidth
//    measured in the same run.
#include <common/BenchmarkUtils.hpp>

#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
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
};

template <class Scalar, class ExecutionSpace>
nlohmann::json benchmark_b( const ExecutionSpace& exec, const Settings& set, double neighbors,
                            const std::string& order, double bandwidth )
{
    using mem = typename ExecutionSpace::memory_space;
    mechanics::AgentProperties<Scalar> props; // BioDynaMo's cell: diameter 30, adherence 0.4, mass 1
    mechanics::MechanicsParameters<Scalar> mp;
    mp.max_displacement = 0; // locked in place, as in the paper
    const bool sorted = order != "unsorted";
    mp.sort_every = sorted ? 1 : 0;
    mp.ordering = order == "row-major" ? morula::grid::CellOrdering::row_major
                                       : morula::grid::CellOrdering::morton;
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

    const double n = set.agents;
    const double bytes = n * 12.0 * sizeof( Scalar ) + 4.0 * mech.grid().num_cells();
    const double t = forces.median();
    std::printf( "B %-6s n=%d neighbours %5.2f (target %2.0f) %-9s: forces %8.3f ms (min %8.3f), "
                 "%.3g interactions/s, %5.1f%% of the copy roof; grid build %.3f ms, sort %.3f ms\n",
                 sizeof( Scalar ) == 4 ? "float" : "double", set.agents, pairs / n, neighbors,
                 order.c_str(), 1e3 * t, 1e3 * forces.min(), pairs / t,
                 100.0 * bytes / bandwidth / t, 1e3 * build.median(), 1e3 * sort.median() );
    return { { "benchmark", "B" },
             { "scalar", sizeof( Scalar ) == 4 ? "float" : "double" },
             { "agents", set.agents },
             { "neighbors_target", neighbors },
             { "neighbors_measured", pairs / n },
             { "box_edge", edge },
             { "agent_order", order },
             { "forces", forces.to_json() },
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
    mp.ordering = order == "row-major" ? morula::grid::CellOrdering::row_major
                                       : morula::grid::CellOrdering::morton;
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
        const auto& t = model.times();
        division.push_back( t.division );
        build.push_back( t.grid_build );
        sort.push_back( t.sort );
        forces.push_back( t.forces );
        move.push_back( t.displacement );
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
    const double bandwidth = morula::bench::copy_bandwidth( exec, set.runs );
    std::printf( "copy bandwidth: %.0f GB/s\n", bandwidth * 1e-9 );
    nlohmann::json cases = nlohmann::json::array();
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
                    cases.push_back( benchmark_b<Scalar>( exec, set, nb, order, bandwidth ) );
    } );
    if ( !set.out.empty() )
    {
        nlohmann::json j = { { "benchmark", "mechanics_benchmark" },
                             { "machine", morula::bench::machine_info( exec ) },
                             { "copy_bandwidth_bytes_per_s", bandwidth },
                             { "settings",
                               { { "runs", set.runs },
                                 { "warmup", set.warmup },
                                 { "repeats_a", set.repeats } } },
                             { "cases", cases } };
        morula::bench::write_json( set.out, j );
        std::printf( "wrote %s\n", set.out.c_str() );
    }
}

} // namespace mech_bench

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    mech_bench::Settings set;
    CLI::App app( "Benchmarks A and B of seed 004 with Morula's sphere mechanics" );
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
    app.add_option( "--orders", set.orders, "Agent orders: z-order, row-major, unsorted" )
        ->delimiter( ',' )
        ->check( CLI::IsMember( { "z-order", "row-major", "unsorted" } ) );
    app.add_flag( "--skip-a", set.skip_a, "Skip benchmark A" );
    app.add_flag( "--skip-b", set.skip_b, "Skip benchmark B" );
    app.add_option( "--out", set.out, "JSON result file" );
    CLI11_PARSE( app, argc, argv );
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
