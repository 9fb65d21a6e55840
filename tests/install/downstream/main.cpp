// A downstream program using an installed Morula: Views in, neighbour counts out, no global state.
#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <vector>
#include <string>

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    if ( morula::core::version() != MORULA_PACKAGE_VERSION ||
         std::string( MORULA_VERSION_STRING ) != MORULA_PACKAGE_VERSION )
    {
        std::printf( "downstream: the CMake package says Morula %s, the library %s, the headers %s\n",
                     MORULA_PACKAGE_VERSION, morula::core::version().c_str(), MORULA_VERSION_STRING );
        return 1;
    }
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    const int n = 2000;
    const double cutoff = 1.0;
    const auto box = morula::core::Box<double>::cube( 10.0, morula::core::Boundary::periodic );

    // Random positions from Morula's counter-based generator.
    Kokkos::View<double* [3], Kokkos::LayoutLeft, mem> x( "x", n );
    const morula::core::HashedRng rng( 1 );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<exec>( 0, n ), KOKKOS_LAMBDA( const int i ) {
            for ( int d = 0; d < 3; ++d )
                x( i, d ) = 10.0 * rng.uniform<double>( i, d, 0 );
        } );

    morula::grid::UniformGrid<double, mem> grid( box, cutoff );
    grid.build( exec(), x, n );
    const auto query = grid.query( x );
    long long found = 0, brute = 0;
    Kokkos::parallel_reduce(
        Kokkos::RangePolicy<exec>( 0, n ),
        KOKKOS_LAMBDA( const int i, long long& a, long long& b ) {
            a += query.count_neighbors( i );
            for ( int j = 0; j < n; ++j )
            {
                if ( j == i )
                    continue;
                const double dx = box.minimum_image( 0, x( i, 0 ) - x( j, 0 ) );
                const double dy = box.minimum_image( 1, x( i, 1 ) - x( j, 1 ) );
                const double dz = box.minimum_image( 2, x( i, 2 ) - x( j, 2 ) );
                b += morula::grid::detail::distance_squared( dx, dy, dz ) <= cutoff * cutoff;
            }
        },
        found, brute );
    std::printf( "%s\n", morula::core::build_summary().c_str() );
    if ( found != brute || found == 0 )
    {
        std::printf( "downstream: grid found %lld pairs, brute force %lld\n", found, brute );
        return 1;
    }
    std::printf( "downstream: %lld pairs, matches brute force\n", found );

    // The ODE family through the same one header: A -> B with k = 0.5, A(4) = exp(-2).
    const auto net = morula::ode::parse_text_model( "A -> B, k=0.5\ninit A = 1\n", "downstream" );
    morula::ode::MassActionSystem<mem> system( net );
    morula::ode::SolverOptions options;
    options.relative_tolerance = 1e-10;
    options.absolute_tolerance = { 1e-14 };
    morula::ode::OdeSolver<exec> solver( system, options );
    const auto result = solver.solve( exec(), std::vector<double>{ 0.0, 4.0 } );
    auto samples = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), result.samples );
    const double a = samples( 0, 1, 0 ), exact = std::exp( -2.0 );
    if ( !( std::fabs( a - exact ) <= 1e-8 ) )
    {
        std::printf( "downstream: A(4) = %.17g, expected exp(-2) = %.17g\n", a, exact );
        return 1;
    }
    std::printf( "downstream: A(4) = %.12f = exp(-2)\n", a );

    // And a per-particle reduction type: its name must be reachable from Morula.hpp.
    using Reduction = morula::grid::NeighborReduction<mem>;
    static_assert( sizeof( Reduction ) > 0, "NeighborReduction is public" );
    return 0;
}
