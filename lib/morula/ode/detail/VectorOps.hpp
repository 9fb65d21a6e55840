/*!
  \file VectorOps.hpp
  \brief The two ways one system's vector work is spread over hardware threads, behind one interface,
         so that every integrator is written once (the pattern of KokkosBatched's Serial/Team variants).

  ThreadOps: the calling thread does every loop itself (one system per thread, batched mode).
  TeamOps:   the loops are split over a team's threads (TeamThreadRange) with a barrier after each, and
             reductions return the same value to every thread. Integrator control flow (step size,
             accept/reject, order) is replicated in every thread from those identical values, so no
             broadcast and no host round trip is needed.
*/
#ifndef MORULA_ODE_DETAIL_VECTOROPS_HPP
#define MORULA_ODE_DETAIL_VECTOROPS_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace morula::ode::detail
{

//! A vector of one system inside a workspace: element i at data[i * stride]. In batched mode the stride
//! is the number of systems (interleaved: thread s reads data[s + i * systems], coalesced across a warp).
template <class T>
struct Strided
{
    T* data = nullptr;
    std::ptrdiff_t stride = 1;

    KOKKOS_INLINE_FUNCTION T& operator[]( int i ) const { return data[static_cast<std::ptrdiff_t>( i ) * stride]; }
    KOKKOS_INLINE_FUNCTION Strided offset( std::ptrdiff_t elements ) const { return { data + elements * stride, stride }; }
};

struct ThreadOps
{
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( int n, const F& f ) const
    {
        for ( int i = 0; i < n; ++i )
            f( i );
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION double sum( int n, const F& f ) const
    {
        double s = 0.0;
        for ( int i = 0; i < n; ++i )
            s += f( i );
        return s;
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION double max( int n, const F& f ) const
    {
        double m = 0.0;
        for ( int i = 0; i < n; ++i )
        {
            const double v = f( i );
            m = v > m ? v : m;
        }
        return m;
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION void single( const F& f ) const
    {
        f();
    }
    KOKKOS_INLINE_FUNCTION void barrier() const {}
    KOKKOS_INLINE_FUNCTION bool is_leader() const { return true; }
};

template <class Member>
struct TeamOps
{
    const Member& member;

    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( int n, const F& f ) const
    {
        Kokkos::parallel_for( Kokkos::TeamThreadRange( member, n ), [&]( int i ) { f( i ); } );
        member.team_barrier();
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION double sum( int n, const F& f ) const
    {
        double s = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange( member, n ), [&]( int i, double& acc ) { acc += f( i ); }, s );
        return s;
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION double max( int n, const F& f ) const
    {
        double m = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange( member, n ),
            [&]( int i, double& acc ) {
                const double v = f( i );
                acc = v > acc ? v : acc;
            },
            Kokkos::Max<double>( m ) );
        return m > 0.0 ? m : 0.0;
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION void single( const F& f ) const
    {
        Kokkos::single( Kokkos::PerTeam( member ), [&]() { f(); } );
        member.team_barrier();
    }
    KOKKOS_INLINE_FUNCTION void barrier() const { member.team_barrier(); }
    KOKKOS_INLINE_FUNCTION bool is_leader() const { return member.team_rank() == 0; }
};

} // namespace morula::ode::detail

#endif
