/*!
  \file VectorOps.hpp
  \brief The two ways one system's vector work is spread over hardware threads, behind one interface,
         so that every integrator is written once (the pattern of KokkosBatched's Serial/Team variants).

  ThreadOps: the calling thread does every loop itself (one system per thread, batched mode).
  TeamOps:   the loops are split over a team's threads (TeamThreadRange) with a barrier after each, and
             reductions return the same value to every thread. Integrator control flow (step size,
             accept/reject, order) is replicated in every thread from those identical values, so no
             broadcast and no host round trip is needed.
  LaneOps:   the loops are split over the vector lanes of one team thread (ThreadVectorRange): one system
             per team thread in the batched mode's on-chip layout, its arrays in team scratch memory.
             The lanes of a system are one warp's slice on a GPU; Kokkos synchronises them after each
             vector loop (CUDA's __syncwarp with the lanes' mask), which is the barrier the loops need.
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

/*!
  The reductions of a nested range - TeamThreadRange for TeamOps, ThreadVectorRange for LaneOps - over
  `Derived::range( n )`: the same value in every thread (or lane) of the range.
*/
template <class Derived>
struct NestedReductions
{
    template <class F>
    KOKKOS_INLINE_FUNCTION double sum( int n, const F& f ) const
    {
        double s = 0.0;
        Kokkos::parallel_reduce(
            static_cast<const Derived&>( *this ).range( n ), [&]( int i, double& acc ) { acc += f( i ); }, s );
        return s;
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION double max( int n, const F& f ) const
    {
        double m = 0.0;
        Kokkos::parallel_reduce(
            static_cast<const Derived&>( *this ).range( n ),
            [&]( int i, double& acc ) {
                const double v = f( i );
                acc = v > acc ? v : acc;
            },
            Kokkos::Max<double>( m ) );
        return m > 0.0 ? m : 0.0;
    }
};

template <class Member>
struct TeamOps : NestedReductions<TeamOps<Member>>
{
    const Member& member;

    KOKKOS_INLINE_FUNCTION explicit TeamOps( const Member& m )
        : member( m )
    {
    }
    KOKKOS_INLINE_FUNCTION auto range( int n ) const { return Kokkos::TeamThreadRange( member, n ); }
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( int n, const F& f ) const
    {
        Kokkos::parallel_for( range( n ), [&]( int i ) { f( i ); } );
        member.team_barrier();
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

template <class Member>
struct LaneOps : NestedReductions<LaneOps<Member>>
{
    const Member& member;

    KOKKOS_INLINE_FUNCTION explicit LaneOps( const Member& m )
        : member( m )
    {
    }
    KOKKOS_INLINE_FUNCTION auto range( int n ) const { return Kokkos::ThreadVectorRange( member, n ); }
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( int n, const F& f ) const
    {
        Kokkos::parallel_for( range( n ), [&]( int i ) { f( i ); } );
    }
    //! Lane 0 runs f; the vector loop of one index synchronises the lanes after it, as for_each does.
    template <class F>
    KOKKOS_INLINE_FUNCTION void single( const F& f ) const
    {
        Kokkos::parallel_for( range( 1 ), [&]( int ) { f(); } );
    }
    KOKKOS_INLINE_FUNCTION void barrier() const {}
    KOKKOS_INLINE_FUNCTION bool is_leader() const { return true; }
};

} // namespace morula::ode::detail

#endif
