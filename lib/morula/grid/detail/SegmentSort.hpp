/*!
  \file SegmentSort.hpp
  \brief Sorting the particle indices inside each cell, which makes the counting sort stable.

  The scatter of a GPU counting sort places the particles of a cell in the order their atomic
  increments happened, which varies from run to run. Sorting each cell's (short) segment by particle
  index afterwards restores the original order: the permutation becomes stable and deterministic.
  Short segments are sorted by one thread each, medium ones by a team in scratch memory, and the rare
  very long ones (adversarial or extremely clustered inputs) by a device-wide sort.
*/
#ifndef MORULA_GRID_DETAIL_SEGMENTSORT_HPP
#define MORULA_GRID_DETAIL_SEGMENTSORT_HPP

#include <Kokkos_Core.hpp>

namespace morula::grid::detail
{

//! Segments up to this length are sorted by a single thread (insertion sort).
constexpr int thread_sort_max = 32;
//! Segments up to this length are sorted by a team in scratch memory (bitonic sort).
constexpr int team_sort_max = 4096;

//! In-place insertion sort of a[0, m): O(m^2), fast for the few particles of a typical cell.
template <class View>
KOKKOS_INLINE_FUNCTION void insertion_sort( const View& a, int begin, int end )
{
    for ( int k = begin + 1; k < end; ++k )
    {
        const auto v = a( k );
        int j = k - 1;
        while ( j >= begin && a( j ) > v )
        {
            a( j + 1 ) = a( j );
            --j;
        }
        a( j + 1 ) = v;
    }
}

//! Smallest power of two >= m (m >= 1).
KOKKOS_INLINE_FUNCTION int next_pow2( int m )
{
    int p = 1;
    while ( p < m )
        p <<= 1;
    return p;
}

/*!
  \brief Bitonic sort of s[0, p) (p a power of two) by the threads of a team.
  Works for any team size, including 1 on CPU backends.
*/
template <class TeamMember, class ScratchView>
KOKKOS_INLINE_FUNCTION void team_bitonic_sort( const TeamMember& team, const ScratchView& s,
                                               int p )
{
    for ( int k = 2; k <= p; k <<= 1 )
    {
        for ( int j = k >> 1; j > 0; j >>= 1 )
        {
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, p ), [&]( const int i ) {
                const int partner = i ^ j;
                if ( partner > i )
                {
                    const bool ascending = ( i & k ) == 0;
                    const auto a = s( i );
                    const auto b = s( partner );
                    if ( ( a > b ) == ascending )
                    {
                        s( i ) = b;
                        s( partner ) = a;
                    }
                }
            } );
            team.team_barrier();
        }
    }
}

} // namespace morula::grid::detail

#endif
