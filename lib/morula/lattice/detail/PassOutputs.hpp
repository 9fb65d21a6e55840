/*!
  \file detail/PassOutputs.hpp
  \brief What a pass writes besides the next lattice: the overflow list of the particles that did not
  fit, and the unwrapped displacements of the tracers.
*/
#ifndef MORULA_LATTICE_DETAIL_PASSOUTPUTS_HPP
#define MORULA_LATTICE_DETAIL_PASSOUTPUTS_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

//! Overflow list in device memory: (site << 8 | arrival rank) keys, particle codes and the move that
//! brought each particle to the site. Its capacity is the number of particles on the lattice, so even
//! a pass in which every particle overflowed fits. The counter is 32 bits: on a GPU a contended 64-bit
//! atomic add on one address is far slower than a 32-bit one
//! (docs/performance.md, "Lattice passes at the memory roof (issue #22)"); LatticeDiffusion refuses more
//! than 2^32 - 1 particles.
template <class MemorySpace>
struct OverflowList
{
    Kokkos::View<std::uint64_t*, MemorySpace> keys;
    Kokkos::View<std::uint32_t*, MemorySpace> codes;
    Kokkos::View<std::uint8_t*, MemorySpace> moves;
    Kokkos::View<unsigned int, MemorySpace> count;

    KOKKOS_INLINE_FUNCTION void push( std::size_t site, int rank, std::uint32_t code, std::uint8_t move ) const
    {
        const unsigned int i = Kokkos::atomic_fetch_add( &count(), 1u );
        keys( i ) = ( std::uint64_t( site ) << 8 ) | std::uint64_t( rank );
        codes( i ) = code;
        moves( i ) = move;
    }
};

/*!
  \brief A team's overflow entries, gathered in team scratch and appended to the pass's list with one
  atomic add per team (the list's order is free: the placement sorts it by key). On a GPU every entry
  of a crowded pass otherwise takes its place through one global counter, millions of atomic adds on
  one address per pass. Entries past `capacity` go to the list directly. Used by the compacted split
  passes on crowded lattices; the kernel zeroes the count before the first push.
*/
template <class ExecutionSpace>
struct TeamOverflowBuffer
{
    using memory_space = typename ExecutionSpace::memory_space;
    using scratch_space = typename ExecutionSpace::scratch_memory_space;
    template <class T>
    using scratch_view = Kokkos::View<T*, scratch_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

    OverflowList<memory_space> list;
    scratch_view<std::uint64_t> keys;
    scratch_view<std::uint32_t> codes;
    scratch_view<std::uint8_t> moves;
    scratch_view<unsigned int> count; //!< count(0): entries pushed; count(1): the team's place in the list
    unsigned int capacity = 0;

    static std::size_t scratch_bytes( unsigned int capacity )
    {
        return scratch_view<std::uint64_t>::shmem_size( capacity ) + scratch_view<std::uint32_t>::shmem_size( capacity ) +
               scratch_view<std::uint8_t>::shmem_size( capacity ) + scratch_view<unsigned int>::shmem_size( 2 );
    }

    template <class Member>
    KOKKOS_INLINE_FUNCTION TeamOverflowBuffer( const Member& team, const OverflowList<memory_space>& list_,
                                               unsigned int capacity_ )
        : list( list_ )
        , keys( team.team_scratch( 0 ), capacity_ )
        , codes( team.team_scratch( 0 ), capacity_ )
        , moves( team.team_scratch( 0 ), capacity_ )
        , count( team.team_scratch( 0 ), 2 )
        , capacity( capacity_ )
    {
    }

    KOKKOS_INLINE_FUNCTION void push( std::size_t site, int rank, std::uint32_t code, std::uint8_t move ) const
    {
        const unsigned int i = Kokkos::atomic_fetch_add( &count( 0 ), 1u );
        if ( i >= capacity )
        {
            list.push( site, rank, code, move );
            return;
        }
        keys( i ) = ( std::uint64_t( site ) << 8 ) | std::uint64_t( rank );
        codes( i ) = code;
        moves( i ) = move;
    }

    //! Between barriers: the team's entries, appended to the list.
    template <class Member>
    KOKKOS_INLINE_FUNCTION void flush( const Member& team ) const
    {
        const unsigned int n = count( 0 ) < capacity ? count( 0 ) : capacity;
        if ( n == 0 )
            return;
        Kokkos::single( Kokkos::PerTeam( team ), [&]() { count( 1 ) = Kokkos::atomic_fetch_add( &list.count(), n ); } );
        team.team_barrier();
        const unsigned int base = count( 1 );
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, n ), [&]( const int k ) {
            list.keys( base + unsigned( k ) ) = keys( k );
            list.codes( base + unsigned( k ) ) = codes( k );
            list.moves( base + unsigned( k ) ) = moves( k );
        } );
    }
};

//! Unwrapped displacement of every tracer in sites, indexed by tracer id; empty when not tracking.
template <class MemorySpace>
using DisplacementView = Kokkos::View<int* [3], MemorySpace>;

/*!
  \brief The tracers of a lattice: codes from first_code on carry one particle each and have their
  unwrapped displacement kept; lower codes are species codes (particles without ids, which crowd but
  are not followed). Empty view: no tracers.
*/
template <class MemorySpace>
struct TracerDisplacements
{
    DisplacementView<MemorySpace> view;
    std::uint32_t first_code = 1;

    KOKKOS_FORCEINLINE_FUNCTION bool tracks( std::uint32_t code ) const
    {
        return code >= first_code && view.extent( 0 ) > 0;
    }
    KOKKOS_FORCEINLINE_FUNCTION void add( std::uint32_t code, int dx, int dy, int dz ) const
    {
        if ( tracks( code ) )
        {
            view( code, 0 ) += dx;
            view( code, 1 ) += dy;
            view( code, 2 ) += dz;
        }
    }
    template <int Axis>
    KOKKOS_FORCEINLINE_FUNCTION void add_along( std::uint32_t code, int m ) const
    {
        if ( tracks( code ) )
            view( code, Axis ) += m;
    }
};

} // namespace morula::lattice::detail

#endif
