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
