#ifndef MORULA_TEST_MECHANICS_UTILS_HPP
#define MORULA_TEST_MECHANICS_UTILS_HPP

#include <morula/mechanics/SphereAgents.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <map>
#include <vector>

namespace morula_test_mechanics
{

//! Host copy of agents, one struct per agent (tests only).
template <class Scalar>
struct HostAgent
{
    Scalar x[3];
    Scalar diameter;
    Scalar adherence;
    Scalar density;
    std::int64_t id;
};

template <class Scalar, class MemorySpace>
std::vector<HostAgent<Scalar>> to_host( const morula::mechanics::SphereAgents<Scalar, MemorySpace>& a )
{
    auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.positions() );
    auto d = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.diameters() );
    auto ad = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.adherence() );
    auto rho = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.densities() );
    auto id = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), a.ids() );
    std::vector<HostAgent<Scalar>> h( a.size() );
    for ( std::size_t i = 0; i < a.size(); ++i )
        h[i] = { { x( i, 0 ), x( i, 1 ), x( i, 2 ) }, d( i ), ad( i ), rho( i ), id( i ) };
    return h;
}

template <class Scalar, class MemorySpace>
morula::mechanics::SphereAgents<Scalar, MemorySpace>
from_host( const std::vector<HostAgent<Scalar>>& h )
{
    morula::mechanics::SphereAgents<Scalar, MemorySpace> a( "test_agents", h.size() );
    auto x = Kokkos::create_mirror_view( a.positions() );
    auto d = Kokkos::create_mirror_view( a.diameters() );
    auto ad = Kokkos::create_mirror_view( a.adherence() );
    auto rho = Kokkos::create_mirror_view( a.densities() );
    auto id = Kokkos::create_mirror_view( a.ids() );
    std::int64_t next = 0;
    for ( std::size_t i = 0; i < h.size(); ++i )
    {
        for ( int k = 0; k < 3; ++k )
            x( i, k ) = h[i].x[k];
        d( i ) = h[i].diameter;
        ad( i ) = h[i].adherence;
        rho( i ) = h[i].density;
        id( i ) = h[i].id;
        next = h[i].id + 1 > next ? h[i].id + 1 : next;
    }
    Kokkos::deep_copy( a.positions(), x );
    Kokkos::deep_copy( a.diameters(), d );
    Kokkos::deep_copy( a.adherence(), ad );
    Kokkos::deep_copy( a.densities(), rho );
    Kokkos::deep_copy( a.ids(), id );
    a.set_next_id( next );
    return a;
}

//! Agents keyed by id.
template <class Scalar>
std::map<std::int64_t, HostAgent<Scalar>> by_id( const std::vector<HostAgent<Scalar>>& h )
{
    std::map<std::int64_t, HostAgent<Scalar>> m;
    for ( const auto& a : h )
        m[a.id] = a;
    return m;
}

} // namespace morula_test_mechanics

#endif
