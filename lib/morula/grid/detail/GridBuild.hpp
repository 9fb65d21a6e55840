/*!
  \file GridBuild.hpp
  \brief The passes of UniformGrid::build: a two-level (bucketed) stable counting sort.

  A one-level counting sort on a GPU scatters 4-byte indices to random places of an array much larger
  than the cache: every write then costs a read-modify-write of a DRAM sector, and the per-cell atomic
  counters thrash as well: the scatter alone moves far more bytes than the data and is slow
  (docs/performance.md, "Design choices measured (moved from source comments, issue #46)").
  The build therefore sorts in two levels:

  1. count: each particle's cell key (and input checks) and a count per *bucket*, a run of
     cells_per_bucket consecutive cell keys sized so that a bucket holds about 1024 particles;
  2. scan the few thousand bucket counts;
  3. scatter (cell key, particle) pairs into their bucket's segment: the writes advance only as many
     fronts as there are buckets, which stay in L2, so they reach DRAM as whole sectors;
  4. one team per bucket sorts its segment in scratch memory by (cell, particle index) — a counting sort
     over the bucket's cells with the few entries of each cell ordered by index, or a bitonic sort when a
     cell is long — and writes the permutation and the bucket's cell offsets contiguously.
  Buckets too large for scratch memory (clustered or adversarial input) are sorted together by one
  device-wide sort of their pairs.

  Pass 1 also notes whether the keys are already in order. A simulation that permutes its data into cell
  order every step rebuilds from that order, and as long as no particle changed cell the input is sorted:
  pass 3 then returns at once, and in pass 4 each team writes the identity permutation of its bucket's
  particles (contiguous in sorted input) and its cells' starts, read off the keys where they change:
  no scatter, no sort, and no bucket too large. Both paths test the flag on the device, so that a
  build still synchronises once. A separate kernel for the sorted case would cost its launch also on
  random input, where it returns at once (docs/performance.md,
  "Neighbour kernels at the hardware limit (issue #25): first pass").

  The result is the unique stable counting sort of the particles by cell key: deterministic, the same
  on every backend. Free functions, not private members, because nvcc does not allow extended lambdas in
  private member functions.
*/
#ifndef MORULA_GRID_DETAIL_GRIDBUILD_HPP
#define MORULA_GRID_DETAIL_GRIDBUILD_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/GridGeometry.hpp>
#include <morula/grid/detail/Morton.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::grid::detail
{

//! Slots of the small status array a build reads back once.
enum BuildStatus : int
{
    first_bad_particle = 0, //!< smallest index of a non-finite or out-of-closed-box particle
    num_oversized = 1,      //!< buckets too large for team scratch memory
    periodic_outside = 2,   //!< 1 if some position lies outside the box along a periodic axis
    unsorted = 3,           //!< 1 if some particle's cell key is below its predecessor's
    status_size = 4
};

//! Entries a bucket may hold to be sorted in team scratch memory.
constexpr int bucket_capacity = 2048;
//! Mean bucket occupancy aimed at: half the capacity, so that uniform data never overflow it.
constexpr int bucket_target = 1024;
//! Most cells a bucket spans (the team's histogram lives in scratch memory).
constexpr int max_cells_per_bucket = 2048;

/*!
  How cell keys are grouped into buckets (bucket = key >> shift), and, on CPUs, how each bucket's
  counter is split into one counter per thread (stripe i / chunk: each thread's contiguous block of
  particles has counters of its own, so no cache line bounces between cores and no increment needs an
  atomic). GPUs use one counter per bucket and aggregate increments per team instead.
*/
struct BucketLayout
{
    int shift = 0;
    int cells_per_bucket = 1;
    int num_buckets = 1;
    int stripes = 1;
    int stripe_chunk = 1; //!< stripe of particle i: (i / stripe_chunk) % stripes

    KOKKOS_INLINE_FUNCTION int stripe( int i ) const { return ( i / stripe_chunk ) % stripes; }
    //! Counter of (bucket, stripe), stored stripe-major.
    KOKKOS_INLINE_FUNCTION int counter( int bucket, int s ) const
    {
        return s * num_buckets + bucket;
    }
    int num_counters() const { return stripes * num_buckets; }
};

//! Power-of-two cells per bucket giving about bucket_target particles per bucket on average.
inline BucketLayout choose_buckets( int ncells, int n, bool host_backend, int concurrency )
{
    BucketLayout b;
    const double want =
        n > 0 ? double( ncells ) * bucket_target / double( n ) : double( max_cells_per_bucket );
    while ( ( 2 << b.shift ) <= want && ( 2 << b.shift ) <= max_cells_per_bucket )
        ++b.shift;
    b.cells_per_bucket = 1 << b.shift;
    b.num_buckets = ( ncells + b.cells_per_bucket - 1 ) >> b.shift;
    if ( host_backend )
    {
        b.stripes = concurrency > 1 ? concurrency : 1;
        b.stripe_chunk = n / b.stripes + 1;
    }
    return b;
}

//! GPU count and scatter work in team tiles of consecutive particles; a tile's buckets are gathered
//! in a hash table in scratch memory so that a bucket met many times in a tile (nearly sorted input)
//! costs one global atomic instead of one per particle.
constexpr int aggregate_team_size = 256;
constexpr int aggregate_tile = 2048;
constexpr int aggregate_hash_size = 4096; // load factor at most 1/2
constexpr int aggregate_hash_bits = 12;
static_assert( aggregate_tile <= 2048 && aggregate_hash_size == 1 << aggregate_hash_bits,
               "scatter_to_buckets packs (hash slot << 11 | rank in tile) into one int" );

//! Slot of bucket b in a team's hash table (inserting it if absent); linear probing.
template <class IntScratch>
KOKKOS_INLINE_FUNCTION int aggregate_slot( const IntScratch& keys, int b )
{
    int h = static_cast<int>( ( static_cast<std::uint32_t>( b ) * 2654435761u ) >>
                              ( 32 - aggregate_hash_bits ) );
    while ( true )
    {
        const int k = keys( h );
        if ( k == b )
            return h;
        if ( k == -1 )
        {
            const int old = Kokkos::atomic_compare_exchange( &keys( h ), -1, b );
            if ( old == -1 || old == b )
                return h;
        }
        h = ( h + 1 ) & ( aggregate_hash_size - 1 );
    }
}

//! Empties a team's bucket hash table: no bucket in any slot, every count zero (`counts` may be longer
//! than the table; its extra entries are zeroed too). The caller synchronises the team afterwards.
template <class Member, class IntScratch>
KOKKOS_INLINE_FUNCTION void clear_aggregate_table( const Member& team, const IntScratch& keys,
                                                   const IntScratch& counts )
{
    const int slots = static_cast<int>( counts.extent( 0 ) );
    Kokkos::parallel_for( Kokkos::TeamThreadRange( team, slots ), [&]( const int h ) {
        if ( h < aggregate_hash_size )
            keys( h ) = -1;
        counts( h ) = 0;
    } );
}

//! Adds each bucket's count in a team's hash table to its global counter.
template <class Member, class IntScratch, class IndexView>
KOKKOS_INLINE_FUNCTION void flush_aggregate_table( const Member& team, const IntScratch& keys,
                                                   const IntScratch& counts, const IndexView& counters )
{
    Kokkos::parallel_for( Kokkos::TeamThreadRange( team, aggregate_hash_size ), [&]( const int h ) {
        if ( keys( h ) >= 0 )
            Kokkos::atomic_add( &counters( keys( h ) ), counts( h ) );
    } );
}

//! Reallocates v (without initialising) when it holds fewer than n entries; 1/8 headroom.
template <class View>
void ensure_extent( View& v, std::size_t n, const char* label )
{
    if ( v.extent( 0 ) < n )
        v = View( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ),
                  n + n / 8 );
}

/*!
  Row-major cell index -> the cell's rank in Morton order (the cell key under CellOrdering::morton), or,
  with whole_rows, in the order of (Morton code of the row (iy, iz), ix) (CellOrdering::morton_rows; a
  row's cells then have consecutive keys).
*/
template <class ExecutionSpace, class MemorySpace, class Scalar>
Kokkos::View<int*, MemorySpace> morton_cell_keys( const ExecutionSpace& exec,
                                                  const GridGeometry<Scalar>& g, bool whole_rows )
{
    const int ncells = g.num_cells();
    Kokkos::View<std::uint64_t*, MemorySpace> codes(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::grid::morton_codes" ), ncells );
    Kokkos::parallel_for(
        "morula::grid::morton_codes", core::LaunchRange<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int lin ) {
            const int ix = lin % g.ncell[0];
            const int iy = ( lin / g.ncell[0] ) % g.ncell[1];
            const int iz = lin / ( g.ncell[0] * g.ncell[1] );
            // Code in the high word, cell in the low word: sorting orders cells by code, and cells of
            // equal code (one row, with whole_rows) by ix.
            codes( lin ) = ( std::uint64_t( morton_code( whole_rows ? 0 : ix, iy, iz ) ) << 32 ) |
                           std::uint64_t( lin );
        } );
    compat::sort( exec, codes );
    Kokkos::View<int*, MemorySpace> keys(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::grid::cell_keys" ), ncells );
    Kokkos::parallel_for(
        "morula::grid::morton_rank", core::LaunchRange<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int rank ) {
            keys( static_cast<int>( codes( rank ) & 0xffffffffu ) ) = rank;
        } );
    return keys;
}

//! Resets the status array and the bucket counters, and stores n as the end of the last cell.
template <class ExecutionSpace, class IndexView>
void reset_build( const ExecutionSpace& exec, const IndexView& status, const IndexView& counters,
                  int num_counters, const IndexView& offsets, int ncells, int n, bool check_order )
{
    // Without the order check the input counts as unsorted, and the build takes the full sort.
    const int assume_unsorted = check_order ? 0 : 1;
    Kokkos::parallel_for(
        "morula::grid::reset_build", core::LaunchRange<ExecutionSpace>( exec, 0, num_counters ),
        KOKKOS_LAMBDA( const int c ) {
            counters( c ) = 0;
            if ( c == 0 )
            {
                status( first_bad_particle ) = INT_MAX;
                status( num_oversized ) = 0;
                status( periodic_outside ) = 0;
                status( unsorted ) = assume_unsorted;
                offsets( ncells ) = n;
            }
        } );
}

//! A particle's cell key and input checks (the body of pass 1).
template <class Scalar, class PositionView, class IndexView>
struct CellKeyOf
{
    GridGeometry<Scalar> g;
    PositionView x;
    IndexView cell_key; // Morton rank of each row-major cell, or empty
    IndexView status;

    KOKKOS_INLINE_FUNCTION int operator()( int i ) const
    {
        const Scalar p[3] = { x( i, 0 ), x( i, 1 ), x( i, 2 ) };
        bool bad = false;
        bool outside_periodic = false;
        for ( int d = 0; d < 3; ++d )
        {
            const bool in_closed = p[d] >= g.box.lo[d] && p[d] <= g.box.hi[d];
            bad = bad || !compat::isfinite( p[d] ) ||
                  ( g.box.boundary[d] == Boundary::closed && !in_closed );
            outside_periodic = outside_periodic || ( g.is_periodic( d ) && !g.inside( d, p[d] ) );
        }
        if ( bad )
            Kokkos::atomic_fetch_min( &status( first_bad_particle ), i );
        if ( outside_periodic )
            Kokkos::atomic_fetch_max( &status( periodic_outside ), 1 );
        const int key = g.linear_index( g.cell_coordinate( 0, p[0] ), g.cell_coordinate( 1, p[1] ),
                                        g.cell_coordinate( 2, p[2] ) );
        return cell_key.extent( 0 ) > 0 ? cell_key( key ) : key;
    }
};

/*!
  Pass 1: each particle's cell key, its input checks (fused into the one read of the positions), the
  count of its (bucket, stripe), and whether the keys are already in order (status `unsorted`). GPUs
  increment atomically, one thread per particle; CPU threads take one stripe each, a contiguous block
  of particles, and increment their own counters plainly (an atomic read-modify-write would stall each
  core's out-of-order loads).
*/
template <class ExecutionSpace, class Scalar, class PositionView, class IndexView>
void count_buckets( const ExecutionSpace& exec, const GridGeometry<Scalar>& g,
                    const PositionView& x, int n, const IndexView& cell_key,
                    const BucketLayout& layout, const IndexView& counters,
                    const IndexView& cell_of, const IndexView& status,
                    bool check_order )
{
    const CellKeyOf<Scalar, PositionView, IndexView> key_of{ g, x, cell_key, status };
    if constexpr ( Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                              typename ExecutionSpace::memory_space>::accessible )
    {
        Kokkos::parallel_for(
            "morula::grid::count_buckets",
            core::LaunchRange<ExecutionSpace>( exec, 0, layout.stripes ),
            KOKKOS_LAMBDA( const int s ) {
                const int begin = s * layout.stripe_chunk;
                const int end = ( s + 1 ) * layout.stripe_chunk < n ? ( s + 1 ) * layout.stripe_chunk
                                                                    : n;
                if ( begin >= end )
                    return;
                // the key before the stripe, for the order check across the stripe boundary
                int prev = begin > 0 ? key_of( begin - 1 ) : 0;
                bool descent = false;
                for ( int i = begin; i < end; ++i )
                {
                    const int key = key_of( i );
                    cell_of( i ) = key;
                    ++counters( layout.counter( key >> layout.shift, s ) );
                    descent = descent || key < prev;
                    prev = key;
                }
                if ( descent && check_order )
                    Kokkos::atomic_fetch_max( &status( unsorted ), 1 );
            } );
    }
    else
    {
        using policy_type = core::LaunchTeam<ExecutionSpace>;
        using member_type = typename policy_type::member_type;
        using int_scratch = Kokkos::View<int*, typename ExecutionSpace::scratch_memory_space,
                                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
        const int shift = layout.shift;
        if ( !check_order )
        {
            // One pass: a key, its checks and an increment per particle (the hardware aggregates
            // a warp's increments of one address).
            policy_type policy( exec, ( n + aggregate_tile - 1 ) / aggregate_tile, aggregate_team_size );
            policy.set_scratch_size( 0, Kokkos::PerTeam( 2 * int_scratch::shmem_size( aggregate_hash_size ) ) );
            Kokkos::parallel_for(
                "morula::grid::count_buckets", policy, KOKKOS_LAMBDA( const member_type& team ) {
                    int_scratch keys( team.team_scratch( 0 ), aggregate_hash_size );
                    int_scratch counts( team.team_scratch( 0 ), aggregate_hash_size );
                    clear_aggregate_table( team, keys, counts );
                    team.team_barrier();
                    const int first = team.league_rank() * aggregate_tile;
                    const int last = first + aggregate_tile < n ? first + aggregate_tile : n;
                    Kokkos::parallel_for( Kokkos::TeamThreadRange( team, first, last ), [&]( const int i ) {
                        const int key = key_of( i );
                        cell_of( i ) = key;
                        Kokkos::atomic_add( &counts( aggregate_slot( keys, key >> shift ) ), 1 );
                    } );
                    team.team_barrier();
                    flush_aggregate_table( team, keys, counts, counters );
                } );
            return;
        }
        policy_type policy( exec, ( n + aggregate_tile - 1 ) / aggregate_tile,
                            aggregate_team_size );
        policy.set_scratch_size( 0, Kokkos::PerTeam( int_scratch::shmem_size( aggregate_hash_size ) +
                                                     int_scratch::shmem_size( aggregate_hash_size + 1 ) +
                                                     int_scratch::shmem_size( aggregate_tile ) ) );
        Kokkos::parallel_for(
            "morula::grid::count_buckets", policy, KOKKOS_LAMBDA( const member_type& team ) {
                int_scratch keys( team.team_scratch( 0 ), aggregate_hash_size );
                int_scratch counts( team.team_scratch( 0 ), aggregate_hash_size + 1 );
                int_scratch tile_key( team.team_scratch( 0 ), aggregate_tile );
                clear_aggregate_table( team, keys, counts ); // counts(aggregate_hash_size): a descent seen
                const int first = team.league_rank() * aggregate_tile;
                const int len = first + aggregate_tile < n ? aggregate_tile : n - first;
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, len ), [&]( const int k ) {
                    const int key = key_of( first + k );
                    cell_of( first + k ) = key;
                    tile_key( k ) = key;
                } );
                team.team_barrier();
                // The order check needs each key's predecessor: the tile's keys go to scratch memory,
                // and after a barrier one pass checks the order (one flag per team, not an atomic per
                // descent) and counts by runs of one bucket: the first particle of a run subtracts its
                // rank, the last adds its rank + 1, so each run adds its length with at most two
                // atomics. This costs a little over a one-pass count without the check; recomputing the
                // predecessor's key instead, or re-reading the keys from global memory, was slower
                // (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): first pass").
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, len ), [&]( const int k ) {
                    const int key = tile_key( k );
                    const int b = key >> shift;
                    const bool head = k == 0 || ( tile_key( k - 1 ) >> shift ) != b;
                    const bool tail = k + 1 == len || ( tile_key( k + 1 ) >> shift ) != b;
                    // (the tile's first key against the previous tile's last, recomputed: another team
                    // writes it)
                    if ( k > 0 ? key < tile_key( k - 1 ) : first > 0 && key < key_of( first - 1 ) )
                        counts( aggregate_hash_size ) = 1;
                    if ( head || tail )
                        Kokkos::atomic_add( &counts( aggregate_slot( keys, b ) ),
                                            ( tail ? k + 1 : 0 ) - ( head ? k : 0 ) );
                } );
                team.team_barrier();
                flush_aggregate_table( team, keys, counts, counters );
                Kokkos::single( Kokkos::PerTeam( team ), [&] {
                    if ( counts( aggregate_hash_size ) )
                        Kokkos::atomic_fetch_max( &status( unsorted ), 1 );
                } );
            } );
    }
}

/*!
  Pass 2: exclusive scan of the counters in (bucket, stripe) order, in place, so that each counter
  becomes the first slot of its stripe of its bucket; bucket_base(b) receives the start of bucket b and
  bucket_base(num_buckets) the number of particles.
*/
template <class ExecutionSpace, class IndexView>
void scan_counters( const ExecutionSpace& exec, const BucketLayout& layout,
                    const IndexView& counters, const IndexView& bucket_base )
{
    // A device-wide scan (two launches). A single-team scan saves a launch but is slower: one SM walks
    // the counters 256 at a time (docs/performance.md, "Sorted uniform grid (issue #2)").
    const int stripes = layout.stripes;
    const int total = layout.num_counters();
    Kokkos::parallel_scan(
        "morula::grid::scan_buckets", core::LaunchRange<ExecutionSpace>( exec, 0, total + 1 ),
        KOKKOS_LAMBDA( const int t, int& update, const bool final_pass ) {
            const int b = t / stripes;
            const int c = t < total ? layout.counter( b, t % stripes ) : 0;
            const int count = t < total ? counters( c ) : 0; // read before it is overwritten
            if ( final_pass )
            {
                if ( t < total )
                    counters( c ) = update;
                if ( t % stripes == 0 )
                    bucket_base( b ) = update;
            }
            update += count;
        } );
}

//! Pass 3: (cell key, particle) pairs into their bucket's segment, through the stripe cursors
//! (atomically on GPUs, one stripe per CPU thread otherwise, as in pass 1).
template <class ExecutionSpace, class IndexView, class PairView>
void scatter_to_buckets( const ExecutionSpace& exec, int n, const BucketLayout& layout,
                         const IndexView& cursors, const IndexView& cell_of, const PairView& pairs,
                         const IndexView& status )
{
    // Input already in cell order needs no scatter (sort_buckets() reads the keys in place); the
    // kernel still launches, so that the build reads its status back once, at the end.
    if constexpr ( Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                              typename ExecutionSpace::memory_space>::accessible )
    {
        Kokkos::parallel_for(
            "morula::grid::scatter_to_buckets",
            core::LaunchRange<ExecutionSpace>( exec, 0, layout.stripes ),
            KOKKOS_LAMBDA( const int s ) {
                if ( status( unsorted ) == 0 )
                    return;
                const int end = ( s + 1 ) * layout.stripe_chunk < n ? ( s + 1 ) * layout.stripe_chunk
                                                                    : n;
                for ( int i = s * layout.stripe_chunk; i < end; ++i )
                {
                    const int key = cell_of( i );
                    const int slot = cursors( layout.counter( key >> layout.shift, s ) )++;
                    pairs( slot ) =
                        ( std::uint64_t( key ) << 32 ) | std::uint64_t( std::uint32_t( i ) );
                }
            } );
    }
    else
    {
        // Per tile: each particle takes a rank among the tile's particles of its bucket (scratch
        // atomics), one thread per bucket reserves the bucket's run in global memory, then each
        // particle writes to run start + rank; a tile's particles of one bucket land contiguously.
        using policy_type = core::LaunchTeam<ExecutionSpace>;
        using member_type = typename policy_type::member_type;
        using int_scratch = Kokkos::View<int*, typename ExecutionSpace::scratch_memory_space,
                                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
        policy_type policy( exec, ( n + aggregate_tile - 1 ) / aggregate_tile,
                            aggregate_team_size );
        policy.set_scratch_size( 0, Kokkos::PerTeam( 2 * int_scratch::shmem_size( aggregate_hash_size ) +
                                                     int_scratch::shmem_size( aggregate_tile ) ) );
        const int shift = layout.shift;
        Kokkos::parallel_for(
            "morula::grid::scatter_to_buckets", policy, KOKKOS_LAMBDA( const member_type& team ) {
                if ( status( unsorted ) == 0 )
                    return;
                int_scratch keys( team.team_scratch( 0 ), aggregate_hash_size );
                int_scratch counts( team.team_scratch( 0 ), aggregate_hash_size );
                int_scratch placed( team.team_scratch( 0 ), aggregate_tile ); // slot << 11 | rank
                clear_aggregate_table( team, keys, counts );
                team.team_barrier();
                const int first = team.league_rank() * aggregate_tile;
                const int last = first + aggregate_tile < n ? first + aggregate_tile : n;
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, first, last ), [&]( const int i ) {
                    const int h = aggregate_slot( keys, cell_of( i ) >> shift );
                    placed( i - first ) = ( h << 11 ) | Kokkos::atomic_fetch_add( &counts( h ), 1 );
                } );
                team.team_barrier();
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, aggregate_hash_size ),
                                      [&]( const int h ) {
                                          if ( keys( h ) >= 0 )
                                              counts( h ) = Kokkos::atomic_fetch_add(
                                                  &cursors( keys( h ) ), counts( h ) );
                                      } );
                team.team_barrier();
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, first, last ), [&]( const int i ) {
                    const int p = placed( i - first );
                    const int key = cell_of( i );
                    pairs( counts( p >> 11 ) + ( p & 2047 ) ) =
                        ( std::uint64_t( key ) << 32 ) | std::uint64_t( std::uint32_t( i ) );
                } );
            } );
    }
}

} // namespace morula::grid::detail

#endif
