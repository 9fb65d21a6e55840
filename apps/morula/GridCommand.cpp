#include "GridCommand.hpp"
#include "ConfigFile.hpp"

#include <morula/Morula.hpp>
#include <morula/core/LaunchPolicy.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace morula::app
{
struct GridSettings
{
    long particles = 1000000;
    double box = 100.0;
    double cutoff = 2.5;
    std::string boundary = "periodic";
    std::string ordering = "row-major";
    std::string precision = "double";
    long seed = 1;
    long check = 200;
    std::string config;
};

static double seconds_since( std::chrono::steady_clock::time_point t0 )
{
    return std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
}

// The file sets what the command line did not: `unset(flag)` says whether the flag was not given.
static void read_config( const std::string& path, GridSettings& s, const std::function<bool( const char* )>& unset )
{
    ConfigTable t;
    t.integer( "particles", s.particles, 0, 2000000000L )
        .number( "box", s.box, 1e-300, 1e300 )
        .number( "cutoff", s.cutoff, 1e-300, 1e300 )
        .choice( "boundary", s.boundary, { "periodic", "closed", "open" } )
        .choice( "ordering", s.ordering, { "row-major", "morton", "morton-rows" } )
        .choice( "precision", s.precision, { "float", "double" } )
        .integer( "seed", s.seed, 0, 9007199254740991L )
        .integer( "check", s.check, 0, 1000000 );
    t.read( path, [&unset]( const std::string& key ) { return unset( ( "--" + key ).c_str() ); } );
}

void check_grid_config( const std::string& path )
{
    GridSettings s;
    read_config( path, s, []( const char* ) { return true; } );
}

// The kernels live in a named function template, not in the CLI callback lambda: nvcc accepts
// extended lambdas only inside named functions.
template <class Scalar>
int run_grid_demo( const GridSettings& s )
{
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    exec space;
    const int n = static_cast<int>( s.particles );
    const auto boundary = core::boundary_from_string( s.boundary );
    const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( s.box ), boundary );
    grid::GridOptions options;
    if ( !grid::parse_cell_ordering( s.ordering, options.ordering ) )
        throw core::InputError( "grid: unknown ordering '" + s.ordering + "'" );

    std::printf( "%s\n", core::build_summary().c_str() );
    std::printf( "Grid demonstration: %d particles uniformly random in a %s cube of edge %g, "
                 "cutoff %g, %s precision, %s cells\n",
                 n, s.boundary.c_str(), s.box, s.cutoff, s.precision.c_str(), s.ordering.c_str() );

    // Particles with an id field, placed by the counter-based random generator.
    core::Particles<Scalar, mem, int> particles( "particles", n );
    {
        auto x = particles.positions();
        auto id = particles.template get<1>();
        const core::HashedRng rng( static_cast<std::uint64_t>( s.seed ) );
        const Scalar edge = static_cast<Scalar>( s.box );
        Kokkos::parallel_for(
            "morula::app::grid::place", morula::core::LaunchRange<exec>( space, 0, n ),
            KOKKOS_LAMBDA( const int i ) {
                for ( int d = 0; d < 3; ++d )
                {
                    const Scalar v = edge * rng.uniform<Scalar>( i, d, 0 );
                    x( i, d ) = v < edge ? v : Scalar( 0 );
                }
                id( i ) = i;
            } );
    }

    grid::UniformGrid<Scalar, mem> g( box, static_cast<Scalar>( s.cutoff ), options );
    const auto& geo = g.geometry();
    auto t0 = std::chrono::steady_clock::now();
    g.build( space, particles.positions(), n );
    space.fence();
    const double t_build = seconds_since( t0 );
    t0 = std::chrono::steady_clock::now();
    g.permute( space, particles );
    space.fence();
    const double t_permute = seconds_since( t0 );

    // Occupancy of the cells.
    auto offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), g.cell_offsets() );
    int max_occupancy = 0, empty = 0;
    for ( int c = 0; c < g.num_cells(); ++c )
    {
        const int m = offsets( c + 1 ) - offsets( c );
        max_occupancy = std::max( max_occupancy, m );
        empty += m == 0;
    }
    std::printf( "  cells: %d x %d x %d = %d of edge %.4g (>= cutoff); %.2f particles per cell on "
                 "average, at most %d, %.1f%% empty\n",
                 geo.ncell[0], geo.ncell[1], geo.ncell[2], g.num_cells(), double( geo.cell_size[0] ),
                 double( n ) / g.num_cells(), max_occupancy, 100.0 * empty / g.num_cells() );

    // Neighbour counts of every particle through the grid.
    const auto query = g.query( particles.positions() );
    Kokkos::View<int*, mem> counts( "counts", n );
    t0 = std::chrono::steady_clock::now();
    Kokkos::parallel_for(
        "morula::app::grid::count", morula::core::LaunchRange<exec>( space, 0, n ),
        KOKKOS_LAMBDA( const int i ) { counts( i ) = query.count_neighbors( i ); } );
    space.fence();
    const double t_sweep = seconds_since( t0 );
    long long total = 0;
    int min_count = 0, max_count = 0;
    Kokkos::parallel_reduce(
        "morula::app::grid::stats", morula::core::LaunchRange<exec>( space, 0, n ),
        KOKKOS_LAMBDA( const int i, long long& sum, int& lo, int& hi ) {
            sum += counts( i );
            lo = counts( i ) < lo ? counts( i ) : lo;
            hi = counts( i ) > hi ? counts( i ) : hi;
        },
        total, Kokkos::Min<int>( min_count ), Kokkos::Max<int>( max_count ) );
    const double expected = n > 0 ? 4.0 / 3.0 * M_PI * std::pow( s.cutoff, 3 ) * n /
                                        std::pow( s.box, 3 )
                                  : 0.0;
    std::printf( "  timings: build %.2f ms, permute %.2f ms, neighbour sweep %.2f ms (first run, "
                 "includes warm-up)\n",
                 1e3 * t_build, 1e3 * t_permute, 1e3 * t_sweep );
    std::printf( "  neighbours per particle: mean %.2f (4/3 pi r^3 rho = %.2f%s), min %d, max %d\n",
                 n ? double( total ) / n : 0.0, expected,
                 s.boundary == "periodic" ? "" : ", fewer near closed faces", min_count, max_count );

    // Brute-force check of a sample of particles.
    const int sample = static_cast<int>( std::min<long>( s.check, n ) );
    int mismatches = 0;
    if ( sample > 0 )
    {
        const auto x = particles.positions();
        // The grid's rule: |d|^2 <= radius^2 with both rounded in Scalar (radius = Scalar(cutoff)). The
        // square of the double cutoff rounded once to float can be one ulp below, and then pairs at the
        // cutoff count differently (issue #46).
        const Scalar radius = static_cast<Scalar>( s.cutoff );
        const Scalar r2 = radius * radius;
        const int stride = n / sample;
        Kokkos::parallel_reduce(
            "morula::app::grid::check", morula::core::LaunchRange<exec>( space, 0, sample ),
            KOKKOS_LAMBDA( const int a, int& bad ) {
                const int i = a * stride;
                int c = 0;
                for ( int j = 0; j < n; ++j )
                {
                    if ( j == i )
                        continue;
                    const Scalar dx = box.minimum_image( 0, x( i, 0 ) - x( j, 0 ) );
                    const Scalar dy = box.minimum_image( 1, x( i, 1 ) - x( j, 1 ) );
                    const Scalar dz = box.minimum_image( 2, x( i, 2 ) - x( j, 2 ) );
                    c += grid::detail::distance_squared( dx, dy, dz ) <= r2;
                }
                bad += c != counts( i );
            },
            mismatches );
        std::printf( "  check: neighbour counts of %d particles against a brute-force search: %s\n",
                     sample, mismatches == 0 ? "all equal" : "MISMATCH" );
    }
    return mismatches == 0 ? 0 : 1;
}

void add_grid_command( CLI::App& app )
{
    auto settings = std::make_shared<GridSettings>();
    CLI::App* cmd = app.add_subcommand(
        "grid", "Bin random particles in the sorted uniform grid, count neighbours, check them" );
    cmd->add_option( "--config", settings->config,
                     "JSON file with any of the keys below (command-line flags override it)" );
    cmd->add_option( "--particles", settings->particles, "Number of particles" )
        ->check( CLI::Range( 0L, 2000000000L ) );
    cmd->add_option( "--box", settings->box, "Edge of the cubic box" )->check( CLI::PositiveNumber );
    cmd->add_option( "--cutoff", settings->cutoff, "Neighbour radius" )->check( CLI::PositiveNumber );
    cmd->add_option( "--boundary", settings->boundary, "periodic, closed or open" )
        ->check( CLI::IsMember( { "periodic", "closed", "open" } ) );
    cmd->add_option( "--ordering", settings->ordering, "Cell order: row-major, morton or morton-rows" )
        ->check( CLI::IsMember( { "row-major", "morton", "morton-rows" } ) );
    cmd->add_option( "--precision", settings->precision, "float or double" )
        ->check( CLI::IsMember( { "float", "double" } ) );
    cmd->add_option( "--seed", settings->seed, "Random seed" );
    cmd->add_option( "--check", settings->check, "Particles checked against brute force" )
        ->check( CLI::Range( 0L, 1000000L ) );
    cmd->callback( [settings, cmd] {
        GridSettings s = *settings;
        if ( !s.config.empty() )
        {
            read_config( s.config, s, [&]( const char* flag ) { return cmd->count( flag ) == 0; } );
        }
        const int rc = s.precision == "float" ? run_grid_demo<float>( s ) : run_grid_demo<double>( s );
        if ( rc != 0 )
            throw CLI::RuntimeError( rc );
    } );
}

} // namespace morula::app
