// Running Morula's ODE solver from C++: Robertson's stiff reaction network, read from text, integrated as
// a batch of systems that differ in one rate constant (a parameter sweep: one system per GPU thread),
// results back as a View of (system, sample, species).
//
//   ode_parameter_sweep [systems]   prints A, B, C at t = 1e5 across the sweep; checks that every system
//                                   succeeded, conserves A + B + C = 1, and leaves more A the larger k3
#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    using exec = Kokkos::DefaultExecutionSpace;
    using mem = exec::memory_space;
    namespace ode = morula::ode;
    const int systems = argc > 1 ? std::atoi( argv[1] ) : 64;

    // A -> B (0.04), 2B -> B + C (3e7), B + C -> A + C (1e4): the network with its analytic Jacobian.
    const ode::ReactionNetwork net = ode::parse_text_model( "A -> B, k=0.04\n"
                                                            "2 B -> B + C, k=3e7\n"
                                                            "B + C -> A + C, k=1e4\n"
                                                            "init A = 1\n",
                                                            "robertson" );
    ode::MassActionSystem<mem> system( net );

    ode::SolverOptions options; // automatic RKF45/BDF switching
    options.mode = ode::ExecutionMode::batched;
    options.relative_tolerance = 1e-6;
    options.absolute_tolerance = { 1e-12 };
    ode::OdeSolver<exec> solver( system, options );

    // Per system: the initial state and the rate constants, the third swept over 1e2 .. 1e6.
    Kokkos::View<double**, Kokkos::LayoutLeft, mem> x0( "x0", systems, net.species_count() );
    Kokkos::View<double**, Kokkos::LayoutLeft, mem> k( "k", systems, net.reaction_count() );
    auto x0_host = Kokkos::create_mirror_view( x0 );
    auto k_host = Kokkos::create_mirror_view( k );
    for ( int s = 0; s < systems; ++s )
    {
        x0_host( s, 0 ) = 1.0;
        x0_host( s, 1 ) = x0_host( s, 2 ) = 0.0;
        k_host( s, 0 ) = 0.04;
        k_host( s, 1 ) = 3e7;
        k_host( s, 2 ) = std::pow( 10.0, 2.0 + 4.0 * s / ( systems > 1 ? systems - 1 : 1 ) );
    }
    Kokkos::deep_copy( x0, x0_host );
    Kokkos::deep_copy( k, k_host );

    const std::vector<double> times = { 0.0, 1.0, 1e2, 1e4, 1e5 };
    exec space;
    const ode::OdeResult<mem> result = solver.solve( space, x0, k, times );

    auto y = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), result.samples );
    auto stats = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), result.statistics );
    const int last = static_cast<int>( times.size() ) - 1;
    int failed = 0;
    double worst_mass = 0.0;
    for ( int s = 0; s < systems; ++s )
    {
        failed += stats( s, ode::stat_status ) != static_cast<long>( ode::SolverStatus::success );
        for ( int t = 0; t <= last; ++t )
            worst_mass = std::fmax( worst_mass, std::fabs( y( s, t, 0 ) + y( s, t, 1 ) + y( s, t, 2 ) - 1.0 ) );
    }
    // B + C -> A + C returns mass to A: the larger k3, the more A is left at the end.
    int out_of_order = 0;
    for ( int s = 1; s < systems; ++s )
        out_of_order += !( y( s, last, 0 ) > y( s - 1, last, 0 ) );
    for ( int s : { 0, systems / 2, systems - 1 } )
        std::printf( "k3 = %9.3g: A = %.6f, B = %.4e, C = %.6f at t = 1e5 (%ld steps)\n", k_host( s, 2 ),
                     y( s, last, 0 ), y( s, last, 1 ), y( s, last, 2 ), stats( s, ode::stat_steps ) );
    std::printf( "ode_parameter_sweep: %d systems, %d failed, largest |A + B + C - 1| = %.2e, A(1e5) %s in k3\n",
                 systems, failed, worst_mass, out_of_order ? "NOT increasing" : "increasing" );
    return failed == 0 && worst_mass < 1e-6 && out_of_order == 0 ? 0 : 1;
}
