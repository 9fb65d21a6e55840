// Small reaction networks with known solutions, built in code, and helpers to run the solver on them.
#ifndef MORULA_TESTS_ODE_ODETESTUTILS_HPP
#define MORULA_TESTS_ODE_ODETESTUTILS_HPP

#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/ReactionNetwork.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace morula::test
{

using Side = std::vector<std::pair<int, int>>; // (species, coefficient)

inline ode::Reaction reaction( const Side& reactants, const Side& products, double k )
{
    ode::Reaction r;
    for ( auto [s, c] : reactants )
        r.reactants.push_back( { s, c } );
    for ( auto [s, c] : products )
        r.products.push_back( { s, c } );
    r.rate_constant = k;
    return r;
}

inline ode::ReactionNetwork network( std::vector<std::string> names, std::vector<ode::Reaction> reactions,
                                     std::vector<double> x0 )
{
    ode::ReactionNetwork net;
    net.species_names = std::move( names );
    net.reactions = std::move( reactions );
    net.initial_state = std::move( x0 );
    net.source = "test network";
    return net;
}

//! Robertson's problem as mass action: A -> B (0.04), 2B -> B + C (3e7), B + C -> A + C (1e4).
inline ode::ReactionNetwork robertson_network()
{
    return network( { "A", "B", "C" },
                    { reaction( { { 0, 1 } }, { { 1, 1 } }, 0.04 ),
                      reaction( { { 1, 2 } }, { { 1, 1 }, { 2, 1 } }, 3e7 ),
                      reaction( { { 1, 1 }, { 2, 1 } }, { { 0, 1 }, { 2, 1 } }, 1e4 ) },
                    { 1.0, 0.0, 0.0 } );
}

/*!
  A1 -> A2 -> ... -> A_length with rate constants from 1e5 down to 1e-6 (geometric, 11 decades), all of A1 at
  the start: a stiff linear chain with Bateman's solution (bateman() below); k receives the rate constants.
*/
inline ode::ReactionNetwork stiff_chain( int length, std::vector<double>& k )
{
    std::vector<std::string> names;
    std::vector<ode::Reaction> reactions;
    std::vector<double> x0( length, 0.0 );
    x0[0] = 1.0;
    k.clear();
    for ( int i = 0; i < length; ++i )
        names.push_back( "A" + std::to_string( i + 1 ) );
    for ( int i = 0; i + 1 < length; ++i )
    {
        k.push_back( std::pow( 10.0, 5.0 - 11.0 * i / ( length - 2 ) ) );
        reactions.push_back( reaction( { { i, 1 } }, { { i + 1, 1 } }, k.back() ) );
    }
    return network( names, reactions, x0 );
}

// Bateman's solution of the linear chain in long double: A_n(t) = prod_{i<n} k_i sum_{j<=n} e^{-k_j t} / prod_{l!=j} (k_l - k_j).
inline std::vector<double> bateman( const std::vector<double>& k, double t, int length )
{
    std::vector<double> a( length );
    for ( int n = 0; n < length; ++n )
    {
        long double prefactor = 1.0L, sum = 0.0L;
        for ( int i = 0; i < n; ++i )
            prefactor *= k[i];
        for ( int j = 0; j <= n; ++j )
        {
            const long double kj = j < length - 1 ? k[j] : 0.0L;
            long double denom = 1.0L;
            for ( int l = 0; l <= n; ++l )
                if ( l != j )
                    denom *= ( ( l < length - 1 ? k[l] : 0.0L ) - kj );
            sum += std::exp( -kj * t ) / denom;
        }
        a[n] = static_cast<double>( prefactor * sum );
    }
    return a;
}

//! Copies a result to the host: (systems, samples, saved) and the statistics.
template <class MemorySpace>
struct HostResult
{
    Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace> samples;
    Kokkos::View<long**, Kokkos::LayoutLeft, Kokkos::HostSpace> statistics;
    explicit HostResult( const ode::OdeResult<MemorySpace>& r )
        : samples( "samples", r.samples.extent( 0 ), r.samples.extent( 1 ), r.samples.extent( 2 ) )
        , statistics( "statistics", r.statistics.extent( 0 ), r.statistics.extent( 1 ) )
    {
        Kokkos::deep_copy( samples, r.samples );
        Kokkos::deep_copy( statistics, r.statistics );
    }
    ode::SolverStatus status( int s = 0 ) const { return static_cast<ode::SolverStatus>( statistics( s, ode::stat_status ) ); }
    long stat( ode::StatisticsColumn c, int s = 0 ) const { return statistics( s, c ); }
};

template <class ExecutionSpace>
HostResult<typename ExecutionSpace::memory_space> solve_one( const ode::ReactionNetwork& net, const ode::SolverOptions& options,
                                                             const std::vector<double>& times )
{
    using Mem = typename ExecutionSpace::memory_space;
    ode::MassActionSystem<Mem> system( net );
    ode::OdeSolver<ExecutionSpace> solver( system, options );
    ExecutionSpace exec;
    auto r = solver.solve( exec, times );
    exec.fence();
    return HostResult<Mem>( r );
}

/*!
  `systems` copies of `net` with the network's initial state and per-system rate constants (rows of k;
  empty: the network's), integrated by one solve() over `times`; the result on the host.
*/
template <class ExecutionSpace>
HostResult<typename ExecutionSpace::memory_space> solve_batch( const ode::ReactionNetwork& net, const ode::SolverOptions& options,
                                                               const std::vector<double>& times, long systems = 1,
                                                               const std::vector<std::vector<double>>& k = {} )
{
    using Mem = typename ExecutionSpace::memory_space;
    using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Mem>;
    ode::MassActionSystem<Mem> system( net );
    ode::OdeSolver<ExecutionSpace> solver( system, options );
    Matrix x0( "x0", systems, net.species_count() ), rates( "k", k.empty() ? 0 : systems, net.reactions.size() );
    auto hx = Kokkos::create_mirror_view( x0 );
    auto hk = Kokkos::create_mirror_view( rates );
    for ( long s = 0; s < systems; ++s )
    {
        for ( int i = 0; i < net.species_count(); ++i )
            hx( s, i ) = net.initial_state[i];
        if ( !k.empty() )
            for ( std::size_t r = 0; r < net.reactions.size(); ++r )
                hk( s, r ) = k[s][r];
    }
    Kokkos::deep_copy( x0, hx );
    Kokkos::deep_copy( rates, hk );
    ExecutionSpace exec;
    auto r = solver.solve( exec, x0, rates, times );
    exec.fence();
    return HostResult<Mem>( r );
}

//! Morula's default options with one method, mode and tolerance pair.
inline ode::SolverOptions options_with( ode::Method method, ode::ExecutionMode mode, double rtol, double atol )
{
    ode::SolverOptions o;
    o.method = method;
    o.mode = mode;
    o.relative_tolerance = rtol;
    o.absolute_tolerance = { atol };
    return o;
}

} // namespace morula::test

#endif
