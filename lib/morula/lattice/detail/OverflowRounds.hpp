/*!
  \file detail/OverflowRounds.hpp
  \brief The overflow placement in parallel: a radix sort of the list on the device, then rounds in
  which every entry that no earlier unplaced entry can disturb is placed at once; the result is the
  sequential placement (PlaceOverflow) bit for bit.
*/
#ifndef MORULA_LATTICE_DETAIL_OVERFLOWROUNDS_HPP
#define MORULA_LATTICE_DETAIL_OVERFLOWROUNDS_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/PlaceOverflow.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

//! The distinct coordinates within `reach` of c on an axis of extent n (wrapped where periodic, clipped
//! where not); returns how many (at most 2 reach + 1, fewer on a short periodic axis).
KOKKOS_INLINE_FUNCTION int axis_reach( int c, int reach, int n, bool periodic, int* out )
{
    int k = 0;
    for ( int d = -reach; d <= reach; ++d )
    {
        int t = c + d;
        if ( periodic )
            t = ( ( t % n ) + n ) % n;
        else if ( t < 0 || t >= n )
            continue;
        bool seen = false;
        for ( int j = 0; j < k; ++j )
            seen = seen || out[j] == t;
        if ( !seen )
            out[k++] = t;
    }
    return k;
}

/*!
  \brief The device side of the rounds: the sequential kernel's data (PlaceOverflow, whose table search
  and placement it shares), plus
  - owner: per local site, the smallest index of an unplaced entry whose particle came from that site
    in this round (~0: none); cleared after each round;
  - origins: per local site, the unplaced entries whose particle came from it (all zero between
    placements);
  - state: per entry, placed (bit 0) and known to fit (bit 1, surely_fits(), which stays true).
*/
template <int Slots, class MemorySpace>
struct OverflowRoundsData
{
    using layout = SiteLayout<Slots>;
    using serial_type = PlaceOverflow<Slots, MemorySpace>;
    serial_type p;
    Kokkos::View<std::uint32_t*, MemorySpace> owner;
    Kokkos::View<std::uint32_t*, MemorySpace> origins;
    Kokkos::View<std::uint8_t*, MemorySpace> state;

    static constexpr std::uint32_t nobody = ~std::uint32_t( 0 );
    static constexpr std::uint8_t placed = 1, fits = 2;

    //! The local planes within `reach` of global plane z (-1 dropped); returns how many.
    KOKKOS_INLINE_FUNCTION int plane_reach( int z, int reach, int* out ) const
    {
        int g[9];
        const int m = axis_reach( z, reach, p.window.nz, p.periodic[2], g );
        int k = 0;
        for ( int j = 0; j < m; ++j )
        {
            const int lz = p.window.local_of_global( g[j] );
            if ( lz >= 0 )
                out[k++] = lz;
        }
        return k;
    }

    /*!
      Whether entry i (origin o) is sure to find room in its table whenever its turn comes, provided no
      entry before it needs the index-order scan: the free slots of o's type in its cube outnumber the
      earlier unplaced entries whose cubes overlap it (origins within 4 sites), for only those can take
      them first (a placement by the table lands in the placed entry's own cube, and a later entry
      never lands in the cube of an earlier unplaced one). Placements lower both sides alike: once
      true, it stays true.
    */
    KOKKOS_INLINE_FUNCTION bool surely_fits( std::size_t i, const typename serial_type::Origin& o ) const
    {
        const std::size_t plane = std::size_t( p.nx ) * std::size_t( p.ny );
        int c[3][9], k[3];
        k[0] = axis_reach( o.c[0], 2, p.nx, p.periodic[0], c[0] );
        k[1] = axis_reach( o.c[1], 2, p.ny, p.periodic[1], c[1] );
        k[2] = plane_reach( o.c[2], 2, c[2] );
        std::uint32_t free_slots = 0;
        for ( int z = 0; z < k[2]; ++z )
            for ( int y = 0; y < k[1]; ++y )
                for ( int x = 0; x < k[0]; ++x )
                {
                    const site_word w = p.sites( std::size_t( c[0][x] ) + std::size_t( p.nx ) * std::size_t( c[1][y] ) +
                                                 plane * std::size_t( c[2][z] ) );
                    if ( layout::type( w ) == o.type )
                        free_slots += std::uint32_t( Slots - layout::count( w ) );
                }
        k[0] = axis_reach( o.c[0], 4, p.nx, p.periodic[0], c[0] );
        k[1] = axis_reach( o.c[1], 4, p.ny, p.periodic[1], c[1] );
        k[2] = plane_reach( o.c[2], 4, c[2] );
        std::uint32_t earlier = 0; // an upper bound: all entries of an origin that an earlier entry claimed
        for ( int z = 0; z < k[2]; ++z )
            for ( int y = 0; y < k[1]; ++y )
                for ( int x = 0; x < k[0]; ++x )
                {
                    const std::size_t s = std::size_t( c[0][x] ) + std::size_t( p.nx ) * std::size_t( c[1][y] ) +
                                          plane * std::size_t( c[2][z] );
                    if ( owner( s ) < std::uint32_t( i ) )
                    {
                        earlier += origins( s );
                        if ( earlier >= free_slots )
                            return false;
                    }
                }
        return earlier < free_slots;
    }

    //! Whether an unplaced entry before `i` has its origin within 2 sites of global site c (its cube then
    //! holds c).
    KOKKOS_INLINE_FUNCTION bool earlier_reaches( std::size_t i, const int* g ) const
    {
        int c[3][5], k[3];
        k[0] = axis_reach( g[0], 2, p.nx, p.periodic[0], c[0] );
        k[1] = axis_reach( g[1], 2, p.ny, p.periodic[1], c[1] );
        k[2] = plane_reach( g[2], 2, c[2] );
        const std::size_t plane = std::size_t( p.nx ) * std::size_t( p.ny );
        for ( int z = 0; z < k[2]; ++z )
            for ( int y = 0; y < k[1]; ++y )
                for ( int x = 0; x < k[0]; ++x )
                    if ( owner( std::size_t( c[0][x] ) + std::size_t( p.nx ) * std::size_t( c[1][y] ) +
                                plane * std::size_t( c[2][z] ) ) < std::uint32_t( i ) )
                        return true;
        return false;
    }
};

//! Counts each entry of [first, n) at its origin (+1, clearing its state), or takes the ones not placed
//! out again (-1), leaving every count at zero.
template <int Slots, class MemorySpace>
struct CountOrigins
{
    OverflowRoundsData<Slots, MemorySpace> d;
    bool add;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i ) const
    {
        if ( add )
            d.state( i ) = 0;
        else if ( d.state( i ) & d.placed )
            return;
        const std::size_t s = d.p.origin_of( i ).local;
        Kokkos::atomic_add( &d.origins( s ), add ? std::uint32_t( 1 ) : ~std::uint32_t( 0 ) ); // +1 or -1
    }
};

//! A round's first step: every unplaced entry claims its origin (atomic min of its index).
template <int Slots, class MemorySpace>
struct ClaimOrigins
{
    OverflowRoundsData<Slots, MemorySpace> d;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i ) const
    {
        if ( !( d.state( i ) & d.placed ) )
            Kokkos::atomic_fetch_min( &d.owner( d.p.origin_of( i ).local ), std::uint32_t( i ) );
    }
};

//! A round's second step: reduces (the first unplaced entry, minus the first that might not fit).
template <int Slots, class MemorySpace>
struct FindBarrier
{
    using reducer = Kokkos::MinMax<std::int64_t>;
    OverflowRoundsData<Slots, MemorySpace> d;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i, typename reducer::value_type& r ) const
    {
        const std::uint8_t st = d.state( i );
        if ( st & d.placed )
            return;
        const std::int64_t index = std::int64_t( i );
        if ( index < r.min_val )
            r.min_val = index;
        if ( ( st & d.fits ) || -index <= r.max_val )
            return; // known to fit, or after a known barrier
        if ( d.surely_fits( i, d.p.origin_of( i ) ) )
            d.state( i ) = st | d.fits;
        else
            r.max_val = -index;
    }
};

/*!
  \brief A round's third step: entry i (at most the first that might not fit) is placed
  now if its table finds room and no earlier unplaced entry's cube holds that site. Then no earlier
  entry can write where i looks (the table sites before i's are full and stay full; i's site is out of
  every earlier cube; no earlier entry needs the scan), and i writes where no earlier entry looks: i's
  outcome is the sequential one. Entries placed in one round write distinct sites. An entry may see a
  site written in the same round by an entry before it, never by one after it (that one's site lies
  outside its cube): what it sees is still a state of the sequential order before its turn.
*/
template <int Slots, class MemorySpace>
struct PlaceReady
{
    using layout = SiteLayout<Slots>;
    OverflowRoundsData<Slots, MemorySpace> d;
    typename Kokkos::MinMax<std::int64_t, MemorySpace>::result_view_type bounds; //!< FindBarrier's
    std::int64_t n;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i, std::size_t& count ) const
    {
        const std::int64_t first_unsure = bounds().max_val > -n ? -bounds().max_val : n;
        if ( std::int64_t( i ) > first_unsure || ( d.state( i ) & d.placed ) )
            return;
        const auto& p = d.p;
        const auto o = p.origin_of( i );
        typename OverflowRoundsData<Slots, MemorySpace>::serial_type::Room room;
        if ( !p.find_room( i, o, room ) || d.earlier_reaches( i, room.c ) )
            return;
        const std::uint32_t code = p.overflow.codes( i );
        const std::uint8_t move = p.overflow.moves( i );
        const site_word w = p.sites( room.local );
        p.sites( room.local ) = layout::with_code( w, layout::count( w ), code );
        p.tracers.add( code, room.off[0] - move_component( move, 0 ), room.off[1] - move_component( move, 1 ),
                       room.off[2] - move_component( move, 2 ) );
        if ( p.placed.extent( 0 ) > 0 )
            p.placed( i ) = room.global;
        d.state( i ) = d.placed;
        Kokkos::atomic_add( &d.origins( o.local ), ~std::uint32_t( 0 ) ); // - 1
        ++count;
    }
};

//! Clears the origins claimed in a round.
template <int Slots, class MemorySpace>
struct ClearOrigins
{
    OverflowRoundsData<Slots, MemorySpace> d;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i ) const
    {
        d.owner( d.p.origin_of( i ).local ) = OverflowRoundsData<Slots, MemorySpace>::nobody;
    }
};

/*!
  \brief One pass of an LSD radix sort of the overflow list by key (8 bits from `shift`; of ~key when
  descending), stable: the list cut into `chunks` contiguous chunks, each counted (histogram) and later
  scattered in order by one work item, at offsets from an exclusive scan of the counts in (digit, chunk)
  order.
*/
template <class MemorySpace>
struct RadixPass
{
    Kokkos::View<std::uint64_t*, MemorySpace> keys_in, keys_out;
    Kokkos::View<std::uint32_t*, MemorySpace> codes_in, codes_out;
    Kokkos::View<std::uint8_t*, MemorySpace> moves_in, moves_out;
    Kokkos::View<std::uint32_t*, MemorySpace> offsets; //!< (digit, chunk), digit major
    std::size_t n, chunk, chunks;
    int shift;
    bool descending;

    struct Count
    {
    };
    struct Scatter
    {
    };

    KOKKOS_INLINE_FUNCTION std::size_t digit( std::uint64_t key ) const
    {
        return std::size_t( ( ( descending ? ~key : key ) >> shift ) & 0xFFu );
    }
    KOKKOS_INLINE_FUNCTION void operator()( Count, const std::size_t b ) const
    {
        for ( std::size_t d = 0; d < 256; ++d )
            offsets( d * chunks + b ) = 0;
        const std::size_t end = ( b + 1 ) * chunk < n ? ( b + 1 ) * chunk : n;
        for ( std::size_t i = b * chunk; i < end; ++i )
            offsets( digit( keys_in( i ) ) * chunks + b ) += 1;
    }
    KOKKOS_INLINE_FUNCTION void operator()( Scatter, const std::size_t b ) const
    {
        const std::size_t end = ( b + 1 ) * chunk < n ? ( b + 1 ) * chunk : n;
        for ( std::size_t i = b * chunk; i < end; ++i )
        {
            const std::uint64_t k = keys_in( i );
            const std::size_t to = offsets( digit( k ) * chunks + b )++;
            keys_out( to ) = k;
            codes_out( to ) = codes_in( i );
            moves_out( to ) = moves_in( i );
        }
    }
};

//! The exclusive scan of RadixPass's counts.
template <class MemorySpace>
struct RadixOffsets
{
    using value_type = std::uint32_t;
    Kokkos::View<std::uint32_t*, MemorySpace> offsets;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i, value_type& sum, const bool final ) const
    {
        const std::uint32_t c = offsets( i );
        if ( final )
            offsets( i ) = sum;
        sum += c;
    }
};

/*!
  \brief The host side of the placement in rounds: scratch that only grows, the sort and the rounds.

  place() sorts the list (when `first` is 0), then runs rounds of four kernels: ClaimOrigins,
  FindBarrier (into device memory), PlaceReady (its count of placed entries is the round's one read on
  the host), ClearOrigins. The first unplaced entry may always go, so a round that places nothing has
  found it without room in its table: the sequential kernel places it alone (the scan over the
  lattice; on a slab it stops there, as it does) and the rounds resume after it. A round that places
  fewer than `min_progress` entries hands the rest to the sequential kernel, which skips the entries
  placed out of turn: still the sequential result (every entry before one placed out of turn surely
  fits, so none of them needs the scan, and none of them can reach the sites those took).
*/
template <int Slots, class ExecutionSpace>
class OverflowRounds
{
  public:
    using memory_space = typename ExecutionSpace::memory_space;
    using serial_type = PlaceOverflow<Slots, memory_space>;
    using data_type = OverflowRoundsData<Slots, memory_space>;

    /*!
      Places entries [first, n) of p.overflow (n, the list's size, read by the caller) as the sequential
      kernel `p` would from first_entry = first, on `exec`; `key_bits` bounds the keys. Leaves
      p.next_entry as the sequential kernel does. Rounds continue while each places at least
      `min_progress` entries (1: to the end).
    */
    void place( const ExecutionSpace& exec, serial_type p, std::size_t first, std::size_t n, int key_bits,
                std::size_t min_progress )
    {
        reserve( exec, p, n );
        if ( first == 0 )
            sort( exec, p, n, key_bits );
        p.presorted = true;
        data_type d{ p, m_owner, m_origins, m_done };
        m_rounds = 0;
        const auto range = [&]( std::size_t from ) { return core::LaunchRange<ExecutionSpace>( exec, from, n ); };
        while ( true )
        {
            Kokkos::parallel_for( "morula::lattice::overflow_count_origins", range( first ),
                                  CountOrigins<Slots, memory_space>{ d, true } );
            std::size_t remaining = n - first;
            std::int64_t stuck = -1; // the first unplaced entry, whose table has no room
            while ( remaining > 0 )
            {
                Kokkos::parallel_for( "morula::lattice::overflow_claim_origins", range( first ),
                                      ClaimOrigins<Slots, memory_space>{ d } );
                Kokkos::parallel_reduce( "morula::lattice::overflow_find_barrier", range( first ),
                                         FindBarrier<Slots, memory_space>{ d },
                                         Kokkos::MinMax<std::int64_t, memory_space>( m_bounds ) );
                std::size_t placed = 0; // the round's one read on the host
                Kokkos::parallel_reduce( "morula::lattice::overflow_place_ready", range( first ),
                                         PlaceReady<Slots, memory_space>{ d, m_bounds, std::int64_t( n ) }, placed );
                Kokkos::parallel_for( "morula::lattice::overflow_clear_origins", range( first ),
                                      ClearOrigins<Slots, memory_space>{ d } );
                ++m_rounds;
                remaining -= placed;
                if ( placed == 0 )
                {
                    // The first unplaced entry is always free to go: its table has no room.
                    typename Kokkos::MinMax<std::int64_t, memory_space>::value_type b;
                    Kokkos::deep_copy( exec, b, m_bounds );
                    exec.fence();
                    stuck = b.min_val;
                    break;
                }
                if ( placed < min_progress )
                    break; // too few per round: the sequential kernel is faster
            }
            // the counts back to zero; the sequential kernel does the rest
            Kokkos::parallel_for( "morula::lattice::overflow_count_origins", range( first ),
                                  CountOrigins<Slots, memory_space>{ d, false } );
            serial_type s = d.p;
            s.done = m_done;
            s.first_entry = stuck >= 0 ? std::size_t( stuck ) : first;
            if ( stuck >= 0 )
                s.last_entry = std::size_t( stuck ) + 1;
            Kokkos::parallel_for( "morula::lattice::place_overflow", core::LaunchRange<ExecutionSpace>( exec, 0, 1 ), s );
            if ( stuck < 0 || !p.window.whole )
                return; // done, or stopped at the entry (a slab's scan runs over all slabs)
            first = std::size_t( stuck ) + 1;
            if ( first >= n )
                return; // the sequential kernel placed the last entry and closed the list
        }
    }

    //! Rounds run by the last place() (for tests and benchmarks).
    int rounds() const { return m_rounds; }

  private:
    void reserve( const ExecutionSpace& exec, const serial_type& p, std::size_t n )
    {
        const std::size_t sites = p.sites.extent( 0 );
        if ( m_owner.extent( 0 ) != sites )
        {
            m_owner = Kokkos::View<std::uint32_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_owner" ), sites );
            Kokkos::deep_copy( exec, m_owner, data_type::nobody );
            m_origins = Kokkos::View<std::uint32_t*, memory_space>( "lattice_overflow_origins", sites );
        }
        if ( m_done.extent( 0 ) < n )
        {
            const std::size_t c = std::max( n, m_done.extent( 0 ) + m_done.extent( 0 ) / 2 );
            m_done = Kokkos::View<std::uint8_t*, memory_space>( "lattice_overflow_done", c );
            m_keys = Kokkos::View<std::uint64_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_sort_keys" ), c );
            m_codes = Kokkos::View<std::uint32_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_sort_codes" ), c );
            m_moves = Kokkos::View<std::uint8_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_sort_moves" ), c );
        }
    }

    void sort( const ExecutionSpace& exec, const serial_type& p, std::size_t n, int key_bits )
    {
        // Chunks: enough work items to fill the device, each a few hundred entries at least on a host.
        const std::size_t workers = std::size_t( std::max( 1, exec.concurrency() ) );
        constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
        const std::size_t chunks =
            std::max<std::size_t>( 1, std::min( host ? workers : workers / 4 + 1, ( n + 255 ) / 256 ) );
        if ( m_offsets.extent( 0 ) < 256 * chunks )
            m_offsets = Kokkos::View<std::uint32_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_sort_offsets" ), 256 * chunks );
        RadixPass<memory_space> r{ p.overflow.keys, m_keys, p.overflow.codes, m_codes, p.overflow.moves, m_moves,
                                   m_offsets, n, ( n + chunks - 1 ) / chunks, chunks, 0, p.descending };
        const int passes = ( key_bits + 7 ) / 8;
        for ( int pass = 0; pass < passes; ++pass )
        {
            r.shift = 8 * pass;
            Kokkos::parallel_for( "morula::lattice::overflow_sort_count",
                                  core::LaunchRange<ExecutionSpace, typename RadixPass<memory_space>::Count>( exec, 0, chunks ), r );
            Kokkos::parallel_scan( "morula::lattice::overflow_sort_scan",
                                   core::LaunchRange<ExecutionSpace>( exec, 0, 256 * chunks ),
                                   RadixOffsets<memory_space>{ m_offsets } );
            Kokkos::parallel_for( "morula::lattice::overflow_sort_scatter",
                                  core::LaunchRange<ExecutionSpace, typename RadixPass<memory_space>::Scatter>( exec, 0, chunks ),
                                  r );
            std::swap( r.keys_in, r.keys_out );
            std::swap( r.codes_in, r.codes_out );
            std::swap( r.moves_in, r.moves_out );
        }
        if ( passes % 2 )
        {
            const auto range = Kokkos::make_pair( std::size_t( 0 ), n );
            Kokkos::deep_copy( exec, Kokkos::subview( p.overflow.keys, range ), Kokkos::subview( m_keys, range ) );
            Kokkos::deep_copy( exec, Kokkos::subview( p.overflow.codes, range ), Kokkos::subview( m_codes, range ) );
            Kokkos::deep_copy( exec, Kokkos::subview( p.overflow.moves, range ), Kokkos::subview( m_moves, range ) );
        }
    }

    Kokkos::View<std::uint32_t*, memory_space> m_owner, m_origins, m_offsets;
    typename Kokkos::MinMax<std::int64_t, memory_space>::result_view_type m_bounds{ "lattice_overflow_bounds" };
    Kokkos::View<std::uint8_t*, memory_space> m_done, m_moves;
    Kokkos::View<std::uint64_t*, memory_space> m_keys;
    Kokkos::View<std::uint32_t*, memory_space> m_codes;
    int m_rounds = 0;
};

} // namespace morula::lattice::detail

#endif
