// Using Morula's sorted uniform grid from another code: the host code owns its particles (here a
// std::vector of positions), Morula takes them as a View, bins them and answers neighbour queries in
// device kernels. Nothing global: the grid is an object of the caller's.
//
//   grid_neighbors [particles]     prints the neighbour counts' mean and checks them by brute force
#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    const int n = argc > 1 ? std::atoi( argv[1] ) : 20000;
    const double edge = 20.0, cutoff = 1.5;

    // The other code's data: x, y, z of each particle, in its own layout.
    std::vector<double> xyz( 3 * std::size_t( n ) );
    std::mt19937_64 rng( 42 );
    std::uniform_real_distribution<double> uniform( 0.0, edge );
    for ( auto& v : xyz )
        v = uniform( rng );

    // Into a View (n x 3, LayoutLeft: each coordinate contiguous, as Morula's SoA fields are).
    Kokkos::View<double* [3], Kokkos::LayoutLeft, mem> x( "x", n );
    auto x_host = Kokkos::create_mirror_view( x );
    for ( int i = 0; i < n; ++i )
        for ( int d = 0; d < 3; ++d )
            x_host( i, d ) = xyz[3 * std::size_t( i ) + d];
    Kokkos::deep_copy( x, x_host );

    // A periodic box; the grid's cells are at least one cutoff wide.
    const auto box = morula::core::Box<double>::cube( edge, morula::core::Boundary::periodic );
    morula::grid::UniformGrid<double, mem> grid( box, cutoff );
    exec space;
    grid.build( space, x, n );

    // Per particle: the number of neighbours within the cutoff and the distance to the nearest one.
    const auto query = grid.query( x );
    Kokkos::View<int*, mem> count( "count", n );
    Kokkos::View<double*, mem> nearest( "nearest", n );
    Kokkos::parallel_for(
        "example::neighbours", Kokkos::RangePolicy<exec>( space, 0, n ), KOKKOS_LAMBDA( const int i ) {
            int c = 0;
            double r2_min = cutoff * cutoff;
            query.for_each_neighbor( i, [&]( int, double, double, double, double r2 ) {
                ++c;
                r2_min = r2 < r2_min ? r2 : r2_min;
            } );
            count( i ) = c;
            nearest( i ) = morula::compat::sqrt( r2_min ); // Kokkos::sqrt (Kokkos::Experimental:: in 3.x)
        } );

    // Back to the host code, and a brute-force check of every 100th particle.
    auto count_host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), count );
    long long total = 0;
    int wrong = 0;
    for ( int i = 0; i < n; ++i )
    {
        total += count_host( i );
        if ( i % 100 != 0 )
            continue;
        int brute = 0;
        for ( int j = 0; j < n; ++j )
        {
            if ( j == i )
                continue;
            const double dx = box.minimum_image( 0, x_host( i, 0 ) - x_host( j, 0 ) );
            const double dy = box.minimum_image( 1, x_host( i, 1 ) - x_host( j, 1 ) );
            const double dz = box.minimum_image( 2, x_host( i, 2 ) - x_host( j, 2 ) );
            brute += morula::grid::detail::distance_squared( dx, dy, dz ) <= cutoff * cutoff;
        }
        wrong += brute != count_host( i );
    }
    const double expected = 4.0 / 3.0 * 3.14159265358979 * cutoff * cutoff * cutoff * n / ( edge * edge * edge );
    std::printf( "grid_neighbors: %d particles, %d cells, %.2f neighbours per particle (uniform density: %.2f); "
                 "brute force %s\n",
                 n, grid.num_cells(), n ? double( total ) / n : 0.0, expected, wrong ? "DIFFERS" : "agrees" );
    return wrong == 0 ? 0 : 1;
}
