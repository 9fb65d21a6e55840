/*!
  \file rosenbrock_check.cpp
  \brief Issue #45 work-precision study: a batch of identical copies of a text model through
         OdeSolver (batched mode) with one method, timed around solver.solve only. Built outside the
         project's CMake (see README.md of this folder) to measure the batched Rosenbrock kernels with the
         small-LU fix of SmallMassAction.hpp without rebuilding the shared `morula` binary.

  Usage: rosenbrock_check MODEL.txt METHOD RTOL ATOL BATCH REPEATS [OUT.csv]
  METHOD: rodas5p | rodas4 | rosenbrock23 | bdf | auto | rkf45. Prints one JSON line: steps and rejected of
  system 0, status counts, the minimum and median of the REPEATS timed solves divided by BATCH.
*/
#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    if ( argc < 7 )
    {
        std::fprintf( stderr, "usage: rosenbrock_check MODEL.txt METHOD RTOL ATOL BATCH REPEATS [OUT.csv]\n" );
        return 2;
    }
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    namespace ode = morula::ode;
    const ode::ReactionNetwork net = ode::read_text_model( argv[1] );
    const std::string method = argv[2];
    const int batch = std::atoi( argv[5] ), repeats = std::atoi( argv[6] );
    ode::SolverOptions options;
    options.mode = ode::ExecutionMode::batched;
    options.relative_tolerance = std::atof( argv[3] );
    options.absolute_tolerance = { std::atof( argv[4] ) };
    options.max_steps = 1000000;
    options.method = method == "rodas5p"        ? ode::Method::rodas5p
                     : method == "rodas4"       ? ode::Method::rodas4
                     : method == "rosenbrock23" ? ode::Method::rosenbrock23
                     : method == "bdf"          ? ode::Method::bdf
                     : method == "rkf45"        ? ode::Method::rkf45
                                                : ode::Method::automatic;
    ode::MassActionSystem<mem> system( net );
    ode::OdeSolver<exec> solver( system, options );
    const int n = net.species_count(), m = net.reaction_count();
    Kokkos::View<double**, Kokkos::LayoutLeft, mem> x0( "x0", batch, n ), k( "k", batch, m );
    auto x0h = Kokkos::create_mirror_view( x0 );
    auto kh = Kokkos::create_mirror_view( k );
    for ( int s = 0; s < batch; ++s )
    {
        for ( int i = 0; i < n; ++i )
            x0h( s, i ) = net.initial_state[std::size_t( i )];
        for ( int r = 0; r < m; ++r )
            kh( s, r ) = net.reactions[std::size_t( r )].rate_constant;
    }
    Kokkos::deep_copy( x0, x0h );
    Kokkos::deep_copy( k, kh );
    const std::vector<double>& times = net.settings.sample_times;
    exec space;
    std::vector<double> runs;
    ode::OdeResult<mem> result = solver.solve( space, x0, k, times ); // untimed first call
    for ( int r = 0; r < repeats; ++r )
    {
        const auto start = std::chrono::steady_clock::now();
        result = solver.solve( space, x0, k, times );
        space.fence();
        auto y = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), result.samples );
        runs.push_back( std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count() / batch );
    }
    auto y = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), result.samples );
    auto st = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), result.statistics );
    long failed = 0;
    for ( int s = 0; s < batch; ++s )
        failed += st( s, ode::stat_status ) != static_cast<long>( ode::SolverStatus::success );
    if ( argc > 7 )
    {
        std::ofstream out( argv[7] );
        out.precision( 17 );
        for ( std::size_t t = 0; t < times.size(); ++t )
        {
            out << times[t];
            for ( int i = 0; i < n; ++i )
                out << ',' << y( 0, t, i );
            out << '\n';
        }
    }
    auto sorted = runs;
    std::sort( sorted.begin(), sorted.end() );
    std::printf( "{\"method\": \"%s\", \"steps\": %ld, \"rejected\": %ld, \"failed\": %ld, \"batch\": %d, "
                 "\"min_s\": %.6g, \"median_s\": %.6g}\n",
                 method.c_str(), st( 0, ode::stat_steps ), st( 0, ode::stat_rejected ), failed, batch, sorted.front(),
                 sorted[sorted.size() / 2] );
    return failed == 0 ? 0 : 1;
}
