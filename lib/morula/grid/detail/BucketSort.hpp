/*!
  \file BucketSort.hpp
  \brief Pass 4 of UniformGrid::build (see GridBuild.hpp): each bucket's (cell, particle) pairs sorted in
  team scratch memory, and the buckets too large for it sorted together by one device-wide sort.
*/
#ifndef MORULA_GRID_DETAIL_BUCKETSORT_HPP
#define MORULA_GRID_DETAIL_BUCKETSORT_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/detail/GridBuild.hpp>
#include <morula/grid/detail/SegmentSort.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::grid::detail
{

/*!
  Pass 4 on input already in cell order: bucket b's particles are the slots [base, base + m), in order.
  The permutation is the identity; cell c0 + c starts at the first slot whose key is not below it, which
  the slot where the key changes writes for every cell it passes over (each cell exactly once, no atomics,
  and any m: nothing goes through scratch memory).
*/
template <class Member, class IndexView>
KOKKOS_INLINE_FUNCTION void write_sorted_bucket( const Member& team, int c0, int nc, int base, int m,
                                                 const IndexView& cell_of, const IndexView& perm,
                                                 const IndexView& offsets )
{
    if ( m == 0 )
    {
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, nc ), [&]( const int c ) { offsets( c0 + c ) = base; } );
        return;
    }
    Kokkos::parallel_for( Kokkos::TeamThreadRange( team, m + 1 ), [&]( const int k ) {
        if ( k < m )
            perm( base + k ) = base + k;
        // cells (previous key, this key] start at slot k; past the last slot, the cells up to the
        // bucket's end start at base + m (the next bucket's first slot)
        const int prev = k == 0 ? -1 : cell_of( base + k - 1 ) - c0;
        const int here = k == m ? nc - 1 : cell_of( base + k ) - c0;
        const int start = k == m ? base + m : base + k;
        for ( int c = prev + 1; c <= here; ++c )
            offsets( c0 + c ) = start;
    } );
}

/*!
  Pass 4: one team per bucket orders its pairs by (cell, particle index) in scratch memory and writes
  the permutation and the start of each of the bucket's cells. Buckets over bucket_capacity are listed
  in `oversized` for sort_oversized_buckets().
*/
template <class ExecutionSpace, class IndexView, class PairView>
void sort_buckets( const ExecutionSpace& exec, const BucketLayout& layout, int ncells,
                   const IndexView& bucket_base, const PairView& pairs, const IndexView& cell_of,
                   const IndexView& perm, const IndexView& offsets, const IndexView& oversized,
                   const IndexView& status )
{
    using policy_type = core::LaunchTeam<ExecutionSpace>;
    using member_type = typename policy_type::member_type;
    using scratch_space = typename ExecutionSpace::scratch_memory_space;
    using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    using key_scratch = Kokkos::View<std::uint64_t*, scratch_space, unmanaged>;
    using int_scratch = Kokkos::View<int*, scratch_space, unmanaged>;
    const int shift = layout.shift;
    const int cpb = layout.cells_per_bucket;
    const int cap_pow2 = next_pow2( bucket_capacity );
    const std::size_t scratch = key_scratch::shmem_size( cap_pow2 ) +
                                int_scratch::shmem_size( bucket_capacity ) +
                                int_scratch::shmem_size( cpb + 1 ) + int_scratch::shmem_size( 1 );
    constexpr bool host_backend =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                   typename ExecutionSpace::memory_space>::accessible;
    // CPU teams of one thread: the bucket is sorted sequentially, with no barriers.
    policy_type policy = host_backend ? policy_type( exec, layout.num_buckets, 1 )
                                      : policy_type( exec, layout.num_buckets, Kokkos::AUTO );
    policy.set_scratch_size( 0, Kokkos::PerTeam( scratch ) );
    Kokkos::parallel_for(
        "morula::grid::sort_buckets", policy, KOKKOS_LAMBDA( const member_type& team ) {
            const int b = team.league_rank();
            const int base = bucket_base( b );
            const int m = bucket_base( b + 1 ) - base;
            if ( status( unsorted ) == 0 )
            {
                write_sorted_bucket( team, b << shift, ncells - ( b << shift ) < cpb ? ncells - ( b << shift ) : cpb,
                                     base, m, cell_of, perm, offsets );
                return;
            }
            if ( m > bucket_capacity )
            {
                Kokkos::single( Kokkos::PerTeam( team ), [&] {
                    oversized( Kokkos::atomic_fetch_add( &status( num_oversized ), 1 ) ) = b;
                } );
                return;
            }
            const int c0 = b << shift;
            const int nc = ncells - c0 < cpb ? ncells - c0 : cpb;
            key_scratch key( team.team_scratch( 0 ), cap_pow2 );
            int_scratch out( team.team_scratch( 0 ), bucket_capacity );
            int_scratch hist( team.team_scratch( 0 ), cpb + 1 );
            int_scratch long_cell( team.team_scratch( 0 ), 1 );

            // Load the pairs as (local cell, particle) and count each cell; note a cell too long
            // for the per-cell insertion sort (exactly one increment sees the threshold).
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, nc ),
                                  [&]( const int c ) { hist( c ) = 0; } );
            Kokkos::single( Kokkos::PerTeam( team ), [&] { long_cell( 0 ) = 0; } );
            team.team_barrier();
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, m ), [&]( const int k ) {
                const std::uint64_t e = pairs( base + k );
                const int lc = static_cast<int>( e >> 32 ) - c0;
                key( k ) = ( std::uint64_t( lc ) << 32 ) | ( e & 0xffffffffu );
                if ( Kokkos::atomic_fetch_add( &hist( lc ), 1 ) == thread_sort_max )
                    long_cell( 0 ) = 1;
            } );
            team.team_barrier();
            const bool longest_is_short = long_cell( 0 ) == 0;
            // Cell starts: exclusive scan of the counts, written out for the bucket's cells.
            Kokkos::parallel_scan( Kokkos::TeamThreadRange( team, nc ),
                                   [&]( const int c, int& update, const bool final_pass ) {
                                       const int count = hist( c );
                                       if ( final_pass )
                                       {
                                           hist( c ) = update;
                                           offsets( c0 + c ) = base + update;
                                       }
                                       update += count;
                                   } );
            team.team_barrier();
            if ( longest_is_short )
            {
                // Counting sort: place by cell, then order each (short) cell by particle index.
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, m ), [&]( const int k ) {
                    const int lc = static_cast<int>( key( k ) >> 32 );
                    out( Kokkos::atomic_fetch_add( &hist( lc ), 1 ) ) =
                        static_cast<int>( key( k ) & 0xffffffffu );
                } );
                team.team_barrier();
                // hist(c) now holds the end of cell c, which is the start of cell c + 1.
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, nc ), [&]( const int c ) {
                    insertion_sort( out, c == 0 ? 0 : hist( c - 1 ), hist( c ) );
                } );
                team.team_barrier();
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, m ),
                                      [&]( const int k ) { perm( base + k ) = out( k ); } );
            }
            else
            {
                // A long cell: sort the whole bucket by (cell, index) instead.
                const int p = next_pow2( m > 0 ? m : 1 );
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, m, p ),
                                      [&]( const int k ) { key( k ) = ~std::uint64_t( 0 ); } );
                team.team_barrier();
                team_bitonic_sort( team, key, p );
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, m ), [&]( const int k ) {
                    perm( base + k ) = static_cast<int>( key( k ) & 0xffffffffu );
                } );
            }
        } );
}

//! Maps entry k of the gathered oversized pairs to its slot in its bucket's segment.
template <class TableView, class IndexView>
struct OversizedTable
{
    TableView table; // (bucket id, first gathered entry), sorted by bucket; row `count` ends it
    IndexView bucket_base;
    int count;

    KOKKOS_INLINE_FUNCTION int slot( int k ) const
    {
        int lo = 0, hi = count; // table(lo, 1) <= k < table(hi, 1)
        while ( hi - lo > 1 )
        {
            const int mid = ( lo + hi ) / 2;
            if ( table( mid, 1 ) <= k )
                lo = mid;
            else
                hi = mid;
        }
        return bucket_base( table( lo, 0 ) ) + ( k - table( lo, 1 ) );
    }
};

/*!
  The buckets listed in oversized[0, count): their pairs are gathered, sorted together by one
  device-wide sort of the (cell << 32 | particle) keys, and written back as permutation and offsets.
  The buckets are visited in increasing order, so the sorted keys fall into them in order.
*/
template <class ExecutionSpace, class IndexView, class PairView>
void sort_oversized_buckets( const ExecutionSpace& exec, int count, const BucketLayout& layout,
                             int ncells, const IndexView& bucket_base, const PairView& pairs,
                             const IndexView& perm, const IndexView& offsets,
                             const IndexView& oversized, PairView& scratch_pairs )
{
    using memory_space = typename IndexView::memory_space;
    // The list (written in any order) and the bucket bases, on the host.
    auto list_host = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview( oversized, std::make_pair( 0, count ) ) );
    auto base_host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), bucket_base );
    std::vector<int> buckets( list_host.data(), list_host.data() + count );
    std::sort( buckets.begin(), buckets.end() );
    // Per oversized bucket: bucket id, start in the gathered array; then the total.
    Kokkos::View<int**, Kokkos::LayoutRight, Kokkos::HostSpace> table( "table", count + 1, 2 );
    int total = 0;
    for ( int i = 0; i < count; ++i )
    {
        table( i, 0 ) = buckets[i];
        table( i, 1 ) = total;
        total += base_host( buckets[i] + 1 ) - base_host( buckets[i] );
    }
    table( count, 0 ) = -1;
    table( count, 1 ) = total;
    auto table_dev = Kokkos::create_mirror_view_and_copy( memory_space(), table );
    ensure_extent( scratch_pairs, total, "morula::grid::oversized_pairs" );
    auto tmp = Kokkos::subview( scratch_pairs, std::make_pair( 0, total ) );

    const OversizedTable<decltype( table_dev ), IndexView> locate{ table_dev, bucket_base, count };
    Kokkos::parallel_for(
        "morula::grid::gather_oversized", core::LaunchRange<ExecutionSpace>( exec, 0, total ),
        KOKKOS_LAMBDA( const int k ) {
            tmp( k ) = pairs( locate.slot( k ) );
        } );
    compat::sort( exec, tmp );
    Kokkos::parallel_for(
        "morula::grid::scatter_oversized", core::LaunchRange<ExecutionSpace>( exec, 0, total ),
        KOKKOS_LAMBDA( const int k ) {
            perm( locate.slot( k ) ) = static_cast<int>( tmp( k ) & 0xffffffffu );
        } );
    // Cell starts: for each cell of the oversized buckets, the first entry of its bucket's sorted
    // run whose cell key is not below it.
    const int shift = layout.shift;
    const int cpb = layout.cells_per_bucket;
    Kokkos::parallel_for(
        "morula::grid::offsets_oversized",
        core::LaunchRange<ExecutionSpace>( exec, 0, std::size_t( count ) * cpb ),
        KOKKOS_LAMBDA( const std::size_t t ) {
            const int i = static_cast<int>( t / cpb );
            const int cell = ( table_dev( i, 0 ) << shift ) + static_cast<int>( t % cpb );
            if ( cell >= ncells )
                return;
            int lo = table_dev( i, 1 ), hi = table_dev( i + 1, 1 ); // first key >= cell in [lo, hi)
            while ( lo < hi )
            {
                const int mid = ( lo + hi ) / 2;
                if ( static_cast<int>( tmp( mid ) >> 32 ) < cell )
                    lo = mid + 1;
                else
                    hi = mid;
            }
            offsets( cell ) = bucket_base( table_dev( i, 0 ) ) + ( lo - table_dev( i, 1 ) );
        } );
}

} // namespace morula::grid::detail

#endif
