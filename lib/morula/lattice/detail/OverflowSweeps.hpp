/*!
  \file detail/OverflowSweeps.hpp
  \brief The overflow placement in parallel: a sort of the list on the device, then the sequential
  placement (PlaceOverflow) computed as the fixed point of parallel sweeps; the result is the sequential
  one bit for bit.
*/
#ifndef MORULA_LATTICE_DETAIL_OVERFLOWSWEEPS_HPP
#define MORULA_LATTICE_DETAIL_OVERFLOWSWEEPS_HPP

#include <morula/core/LaunchPolicy.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/PlaceOverflow.hpp>
#include <morula/lattice/detail/SlabWindow.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace morula::lattice::detail
{

/*!
  \brief The device side of the fixed-point placement.

  The sequential kernel places entry i (key order) at the first site of its table with o's type and
  fewer particles than slots, counting the entries placed before it: T(i) = the first table site s with
  base(s) + #{ j < i : T(j) = s } < Slots, base(s) the particles there after the pass. That defines T
  entry by entry, and it is the only solution of the equations T = F(T), F(i) computed from T(j), j < i.
  A sweep computes T_new(i) = F(i) from the previous sweep's targets T_old for every entry at once; after
  sweep r every entry up to r has its final target (induction on i), and a sweep that changes nothing
  has found the solution. On lattices where few placements interfere, a handful of sweeps suffice,
  whatever the list's length.

  The previous sweep's claims are lists per site: head(s), the last entry linked to s, and next(j);
  "fewer than f earlier claimants" walks s's list, which is short (the entries whose table reaches s
  and found room there). An entry whose table has no room has no target (none); the first such entry
  at the fixed point needs the index-order scan, so the entries before it are final and those after it
  are computed again once the sequential kernel has placed it.

  Sweeps after the first recompute only the entries whose inputs changed. F(i) reads the claims of the
  sites its walk asked for room (`checked`: the table's sites before its target that have its type and
  a free slot, and the target), nothing else that a sweep changes; a sweep stamps (`site_changed_at`)
  the sites an entry left or took, and the next one recomputes an entry only when one of its checked
  sites carries that stamp (on a crowded lattice the first sweep changes every entry, so the second
  computes nearly all again; it changes 4-9% of them, the third 0.2-1%, the fourth 0.01-0.1%). Entries that checked more than two sites (`many`) are
  always recomputed. Targets are updated in place: a sweep reads the claims through the lists only,
  which change between sweeps.

  Late sweeps, which change a few entries of a long list, follow the changes instead of the list: the
  sweep lists its changed entries, the claim lists of the sites they left or took are rebuilt from them
  (ListedChanges), and the next sweep computes only the entries that can ask those sites for room (within
  3 sites along each axis) and whose inputs changed (QueueAskers), found by bisection of the sorted list.
  The fixed point is the same: an entry whose table holds no changed site keeps its target.
*/
template <int Slots, class MemorySpace>
struct FixedPointData
{
    using layout = SiteLayout<Slots>;
    using serial_type = PlaceOverflow<Slots, MemorySpace>;
    serial_type p;
    Kokkos::View<std::uint32_t*, MemorySpace> head;          //!< per local site: a claimant (nobody: none)
    Kokkos::View<std::uint32_t*, MemorySpace> next;          //!< per entry: the next claimant of its site
    Kokkos::View<std::uint64_t*, MemorySpace> target;        //!< per entry: local site claimed (none: no room)
    Kokkos::View<std::uint64_t*, MemorySpace> previous;      //!< per entry: its target before the last change
    Kokkos::View<std::uint64_t*, MemorySpace> target_global; //!< per entry: its target's global site
    Kokkos::View<std::uint8_t*, MemorySpace> target_table;   //!< per entry: its target's table position
    Kokkos::View<std::uint64_t* [2], MemorySpace> checked;   //!< per entry: the sites F(i) depends on
    Kokkos::View<std::uint8_t*, MemorySpace> changed_at;     //!< per entry: epoch of its last change
    Kokkos::View<std::uint8_t*, MemorySpace> site_changed_at; //!< per local site: epoch of its last change
    std::uint8_t epoch;         //!< this sweep's
    std::uint8_t inputs_epoch;  //!< the previous sweep's: sites stamped with it changed their claimants

    static constexpr std::uint32_t nobody = ~std::uint32_t( 0 );
    static constexpr std::uint64_t none = ~std::uint64_t( 0 );
    static constexpr std::uint64_t many = ~std::uint64_t( 0 ) - 1; //!< in checked(i, 0): always recompute

    //! Whether fewer than `free` entries before i claimed local site s in the previous sweep.
    KOKKOS_INLINE_FUNCTION bool room_before( std::uint32_t i, std::size_t s, int free ) const
    {
        int earlier = 0;
        for ( std::uint32_t j = head( s ); j != nobody; j = next( j ) )
            if ( j < i && ++earlier >= free )
                return false;
        return true;
    }

    //! Whether a site entry i's target depends on changed its claimants in the previous sweep.
    KOKKOS_INLINE_FUNCTION bool inputs_changed( std::size_t i ) const
    {
        const std::uint64_t a = checked( i, 0 );
        if ( a == many )
            return true;
        if ( a != none && site_changed_at( a ) == inputs_epoch )
            return true;
        const std::uint64_t b = checked( i, 1 );
        return b != none && site_changed_at( b ) == inputs_epoch;
    }
};

//! find_room_if's predicate of a sweep: the slots the previous sweep's earlier entries claim are taken.
//! Records the sites it is asked about (the first two, and how many).
template <int Slots, class MemorySpace>
struct RoomBefore
{
    const FixedPointData<Slots, MemorySpace>* d;
    std::uint32_t i;
    std::uint64_t* asked; //!< two sites
    int* count;
    KOKKOS_INLINE_FUNCTION bool operator()( std::size_t s, int free ) const
    {
        if ( *count < 2 )
            asked[*count] = s;
        ++*count;
        return d->room_before( i, s, free );
    }
};

//! What a sweep reduces: the first entry whose target changed, and how many changed.
struct SweepChanges
{
    std::size_t first;
    std::size_t count;
};

/*!
  A sweep: the target of every entry whose inputs changed (of every entry when `every_entry`) from the
  previous sweep's claims; reduces the first entry whose target changed (a minimum) and how many
  changed. The entries before the first are final: their targets depend only on earlier ones, which did
  not change either, so the next sweep starts there. A changed entry keeps its previous target and the
  sweep's epoch for MarkChanges. Work item w computes entry w of the range, or entry work(w) when a
  worklist is given (its entries were tested already: every_entry is then true). With `changed_list`
  non-empty the changed entries are also appended to it (as many as fit; counters(0) counts them all).
*/
template <int Slots, class MemorySpace>
struct SweepTargets
{
    using data_type = FixedPointData<Slots, MemorySpace>;
    using value_type = SweepChanges;
    data_type d;
    bool every_entry;
    Kokkos::View<const std::uint32_t*, MemorySpace> work;   //!< the entries to compute (empty: the range)
    Kokkos::View<std::uint32_t*, MemorySpace> changed_list; //!< empty: changes not listed
    Kokkos::View<std::uint32_t*, MemorySpace> counters;     //!< counters(0): changed_list's entries

    KOKKOS_INLINE_FUNCTION void init( value_type& v ) const
    {
        v.first = ~std::size_t( 0 );
        v.count = 0;
    }
    KOKKOS_INLINE_FUNCTION void join( value_type& a, const value_type& b ) const
    {
        a.first = b.first < a.first ? b.first : a.first;
        a.count += b.count;
    }
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t w, value_type& changes ) const
    {
        const std::size_t i = work.extent( 0 ) > 0 ? std::size_t( work( w ) ) : w;
        if ( !every_entry && !d.inputs_changed( i ) )
            return;
        const auto o = d.p.origin_of( i );
        typename data_type::serial_type::Room room;
        std::uint64_t asked[2] = { data_type::none, data_type::none };
        int count = 0;
        std::uint64_t t = data_type::none;
        if ( d.p.find_room_if( i, o, room, RoomBefore<Slots, MemorySpace>{ &d, std::uint32_t( i ), asked, &count } ) )
            t = room.local;
        // The sites asked depend only on the target's table position (and on the lattice, which the
        // sweeps do not change), so they are written with it.
        d.checked( i, 0 ) = count > 2 ? data_type::many : asked[0];
        d.checked( i, 1 ) = asked[1];
        const std::uint64_t old = d.target( i );
        if ( t == old )
            return;
        d.previous( i ) = old;
        d.target( i ) = t;
        if ( t != data_type::none )
        {
            d.target_global( i ) = room.global;
            d.target_table( i ) = std::uint8_t( room.table );
        }
        d.changed_at( i ) = d.epoch;
        if ( i < changes.first )
            changes.first = i;
        ++changes.count;
        if ( changed_list.extent( 0 ) > 0 )
        {
            const std::uint32_t at = Kokkos::atomic_fetch_add( &counters( 0 ), std::uint32_t( 1 ) );
            if ( at < changed_list.extent( 0 ) )
                changed_list( at ) = std::uint32_t( i );
        }
    }
};

/*!
  After a sweep (epoch e): the sites that an entry changed in it left or took are stamped e and their
  claim lists emptied (MarkChanges, over the changed entries' range); then every entry whose target
  carries the stamp is linked again (RelinkChanged, over all entries). The other lists stay as they are.
*/
template <class MemorySpace>
struct MarkChanges
{
    Kokkos::View<std::uint64_t*, MemorySpace> target, previous;
    Kokkos::View<std::uint8_t*, MemorySpace> changed_at, site_changed_at;
    Kokkos::View<std::uint32_t*, MemorySpace> head;
    std::uint8_t epoch;
    KOKKOS_INLINE_FUNCTION void mark( std::uint64_t s ) const
    {
        if ( s == ~std::uint64_t( 0 ) )
            return;
        site_changed_at( s ) = epoch; // racing writers write the same values
        head( s ) = ~std::uint32_t( 0 );
    }
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i ) const
    {
        if ( changed_at( i ) != epoch )
            return;
        mark( previous( i ) );
        mark( target( i ) );
    }
};

template <class MemorySpace>
struct RelinkChanged
{
    Kokkos::View<std::uint64_t*, MemorySpace> target;
    Kokkos::View<std::uint8_t*, MemorySpace> site_changed_at;
    Kokkos::View<std::uint32_t*, MemorySpace> head, next;
    std::uint8_t epoch;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i ) const
    {
        const std::uint64_t t = target( i );
        if ( t != ~std::uint64_t( 0 ) && site_changed_at( t ) == epoch )
            next( i ) = Kokkos::atomic_exchange( &head( t ), std::uint32_t( i ) );
    }
};

/*!
  \brief The same as MarkChanges and RelinkChanged when a sweep listed its few changed entries: work
  proportional to the changes, not to the list (OverflowSweeps::set_changed_list_limit).

  Stamp (over the changed entries): the sites an entry left or took are stamped, and the first work item
  to reach a site takes its claim list (an atomic exchange leaves `taken` in its head; the item records
  the site and the list's old head in the stamped lists). Rebuild (over the stamped sites): each taken
  list keeps the claimants that did not change in this sweep (the others left the site). Link (over the
  changed entries): each changed entry joins the list of its new target. The lists then hold exactly
  what a clear and relink of the stamped sites would give, in another order (which no reader depends on).
*/
template <class MemorySpace>
struct ListedChanges
{
    Kokkos::View<std::uint64_t*, MemorySpace> target, previous;
    Kokkos::View<std::uint8_t*, MemorySpace> changed_at, site_changed_at;
    Kokkos::View<std::uint32_t*, MemorySpace> head, next;
    Kokkos::View<const std::uint32_t*, MemorySpace> changed_list;
    Kokkos::View<std::uint64_t*, MemorySpace> stamped_sites;
    Kokkos::View<std::uint32_t*, MemorySpace> stamped_heads;
    Kokkos::View<std::uint32_t*, MemorySpace> counters; //!< counters(1): stamped sites
    std::uint8_t epoch;

    static constexpr std::uint32_t nobody = ~std::uint32_t( 0 );
    static constexpr std::uint32_t taken = ~std::uint32_t( 0 ) - 1;
    static constexpr std::uint64_t none = ~std::uint64_t( 0 );

    struct Stamp
    {
    };
    struct Rebuild
    {
    };
    struct Link
    {
    };

    KOKKOS_INLINE_FUNCTION void stamp( std::uint64_t s ) const
    {
        if ( s == none )
            return;
        site_changed_at( s ) = epoch; // racing writers write the same value
        const std::uint32_t old = Kokkos::atomic_exchange( &head( s ), taken );
        if ( old == taken )
            return; // another work item took this site's list
        const std::uint32_t at = Kokkos::atomic_fetch_add( &counters( 1 ), std::uint32_t( 1 ) );
        stamped_sites( at ) = s; // at most two sites per changed entry: the lists have room
        stamped_heads( at ) = old;
    }
    KOKKOS_INLINE_FUNCTION void operator()( Stamp, const std::size_t c ) const
    {
        const std::uint32_t i = changed_list( c );
        stamp( previous( i ) );
        stamp( target( i ) );
    }
    KOKKOS_INLINE_FUNCTION void operator()( Rebuild, const std::size_t k ) const
    {
        if ( k >= counters( 1 ) )
            return;
        std::uint32_t kept = nobody;
        for ( std::uint32_t j = stamped_heads( k ); j != nobody; )
        {
            const std::uint32_t after = next( j );
            if ( changed_at( j ) != epoch )
            {
                next( j ) = kept;
                kept = j;
            }
            j = after;
        }
        head( stamped_sites( k ) ) = kept;
    }
    KOKKOS_INLINE_FUNCTION void operator()( Link, const std::size_t c ) const
    {
        const std::uint32_t i = changed_list( c );
        const std::uint64_t t = target( i );
        if ( t != none )
            next( i ) = Kokkos::atomic_exchange( &head( t ), i );
    }
};

/*!
  \brief The next sweep's worklist after listed changes: the entries from `active` on whose inputs
  changed (FixedPointData::inputs_changed, against this sweep's stamps), found from the stamped sites.

  An entry's table is the 5^3 cube around its origin, one move from its site, so an entry can ask for
  room only at sites within 3 of its own along each axis. Work item (k, row) looks at the 7 x 7 rows of
  sites around stamped site k that could hold such entries, finds each row's entries in the sorted list
  by bisection (the keys are global sites, ascending or descending), and queues those whose inputs
  changed; a per-entry tag (the build's number, by atomic exchange) queues each entry once.
*/
template <int Slots, class MemorySpace>
struct QueueAskers
{
    using data_type = FixedPointData<Slots, MemorySpace>;
    data_type d;
    Kokkos::View<const std::uint64_t*, MemorySpace> stamped_sites;
    Kokkos::View<std::uint32_t*, MemorySpace> queued; //!< per entry: the tag of the last build that queued it
    Kokkos::View<std::uint32_t*, MemorySpace> work;
    Kokkos::View<std::uint32_t*, MemorySpace> counters; //!< counters(1): stamped sites; counters(2): queued
    std::uint32_t tag;
    std::size_t active, n;

    static constexpr int reach = 3; //!< one plane to the origin, two more to the edge of its cube
    static constexpr int rows = ( 2 * reach + 1 ) * ( 2 * reach + 1 );

    //! Coordinate c - delta on an axis of n sites, or -1 outside a reflecting one.
    KOKKOS_INLINE_FUNCTION static int shifted( int c, int delta, int n, bool periodic )
    {
        int t = c - delta;
        if ( !periodic )
            return t >= 0 && t < n ? t : -1;
        t %= n;
        return t < 0 ? t + n : t;
    }

    //! The first entry in [active, n) whose site is at least `site` (ascending list) or at most (descending).
    KOKKOS_INLINE_FUNCTION std::size_t first_at( std::uint64_t site ) const
    {
        const bool descending = d.p.descending;
        std::size_t lo = active, hi = n;
        while ( lo < hi )
        {
            const std::size_t mid = lo + ( hi - lo ) / 2;
            const std::uint64_t s = d.p.overflow.keys( mid ) >> 8;
            if ( descending ? s > site : s < site )
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }

    //! Queues the entries whose sites are global sites [a, b] (one row).
    KOKKOS_INLINE_FUNCTION void queue_row( std::uint64_t a, std::uint64_t b ) const
    {
        const bool descending = d.p.descending;
        for ( std::size_t i = first_at( descending ? b : a ); i < n; ++i )
        {
            const std::uint64_t s = d.p.overflow.keys( i ) >> 8;
            if ( descending ? s < a : s > b )
                return;
            if ( !d.inputs_changed( i ) || Kokkos::atomic_exchange( &queued( i ), tag ) == tag )
                continue;
            const std::uint32_t at = Kokkos::atomic_fetch_add( &counters( 2 ), std::uint32_t( 1 ) );
            if ( at < work.extent( 0 ) )
                work( at ) = std::uint32_t( i );
        }
    }

    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t w ) const
    {
        const std::size_t k = w / rows;
        if ( k >= counters( 1 ) )
            return;
        const int row = int( w % rows );
        const auto& p = d.p;
        const std::uint64_t site = stamped_sites( k ); // local
        const std::uint64_t plane = std::uint64_t( p.nx ) * std::uint64_t( p.ny );
        const int sx = int( site % std::uint64_t( p.nx ) );
        const int sy = int( ( site / std::uint64_t( p.nx ) ) % std::uint64_t( p.ny ) );
        const int sz = p.window.global_z( int( site / plane ) );
        const int ey = shifted( sy, row % ( 2 * reach + 1 ) - reach, p.ny, p.periodic[1] );
        const int ez = shifted( sz, row / ( 2 * reach + 1 ) - reach, p.window.nz, p.periodic[2] );
        if ( ey < 0 || ez < 0 )
            return;
        const std::uint64_t first = std::uint64_t( p.nx ) * std::uint64_t( ey ) + plane * std::uint64_t( ez );
        if ( p.periodic[0] && p.nx <= 2 * reach + 1 )
        {
            queue_row( first, first + std::uint64_t( p.nx ) - 1 ); // the whole row
            return;
        }
        const int lo = sx - reach, hi = sx + reach;
        if ( !p.periodic[0] )
        {
            queue_row( first + std::uint64_t( lo < 0 ? 0 : lo ), first + std::uint64_t( hi >= p.nx ? p.nx - 1 : hi ) );
            return;
        }
        if ( lo < 0 ) // wraps below x = 0
        {
            queue_row( first, first + std::uint64_t( hi ) );
            queue_row( first + std::uint64_t( lo + p.nx ), first + std::uint64_t( p.nx - 1 ) );
        }
        else if ( hi >= p.nx ) // wraps above
        {
            queue_row( first + std::uint64_t( lo ), first + std::uint64_t( p.nx - 1 ) );
            queue_row( first, first + std::uint64_t( hi - p.nx ) );
        }
        else
            queue_row( first + std::uint64_t( lo ), first + std::uint64_t( hi ) );
    }
};

//! Empties the claim list of every entry's target.
template <int Slots, class MemorySpace>
struct ClearClaims
{
    FixedPointData<Slots, MemorySpace> d;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i ) const
    {
        const std::uint64_t t = d.target( i );
        if ( t != d.none )
            d.head( t ) = d.nobody;
    }
};

//! The first entry without a target at the fixed point (the one that needs the scan), as a minimum.
template <int Slots, class MemorySpace>
struct FirstWithoutTarget
{
    FixedPointData<Slots, MemorySpace> d;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i, std::size_t& first ) const
    {
        if ( d.target( i ) == d.none && i < first )
            first = i;
    }
};

/*!
  \brief Places the entries [first, stop) at their fixed-point targets: each entry its tracer's
  displacement and its placement log; the first claimant of a site (none before it) writes the codes of
  all its site's claimants before `stop`, in entry order, into the free slots, as the sequential kernel
  would one after the other. At the fixed point a site has at most as many claimants as free slots.
*/
template <int Slots, class MemorySpace>
struct CommitTargets
{
    using layout = SiteLayout<Slots>;
    FixedPointData<Slots, MemorySpace> d;
    std::uint32_t stop;
    KOKKOS_INLINE_FUNCTION void operator()( const std::size_t i ) const
    {
        const auto& p = d.p;
        const std::uint64_t t = d.target( i );
        const std::uint32_t code = p.overflow.codes( i );
        const std::uint8_t move = p.overflow.moves( i );
        int off[3];
        p.table_offset( i, d.target_table( i ), off );
        p.tracers.add( code, off[0] - move_component( move, 0 ), off[1] - move_component( move, 1 ),
                       off[2] - move_component( move, 2 ) );
        if ( p.placed.extent( 0 ) > 0 )
            p.placed( i ) = d.target_global( i );
        std::uint32_t mine[Slots];
        int k = 0;
        for ( std::uint32_t j = d.head( t ); j != d.nobody; j = d.next( j ) )
        {
            if ( j < std::uint32_t( i ) )
                return; // not the first claimant
            if ( j < stop && k < Slots )
                mine[k++] = j;
        }
        for ( int a = 1; a < k; ++a ) // insertion sort: entry order
            for ( int b = a; b > 0 && mine[b] < mine[b - 1]; --b )
            {
                const std::uint32_t x = mine[b];
                mine[b] = mine[b - 1];
                mine[b - 1] = x;
            }
        site_word w = p.sites( t );
        for ( int a = 0; a < k; ++a )
            w = layout::with_code( w, layout::count( w ), p.overflow.codes( mine[a] ) );
        p.sites( t ) = w;
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

//! An exclusive scan in place of counts: RadixPass's (digit, chunk) counts and SiteBuckets' per-site ones.
template <class MemorySpace>
struct CountOffsets
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
  \brief The sort by counting: the keys are (site, arrival rank) with the site one of this window's owned
  sites, so the entries are counted per bucket of 2^shift consecutive local sites (in the first entries of
  the claim-list heads, zeroed first), the counts scanned, the entries scattered into their bucket (in any
  order: atomics), and every entry copied back to its bucket's start plus its rank among the bucket's few
  entries. Owned sites keep their global order locally (slabs never wrap inside their owned planes), so
  buckets in order, each sorted, are the key order. Buckets of several sites keep the scan short: one per
  site scanned all 33.5M sites of a 256 x 256 x 512 lattice, with the two fills of the heads 1.0 ms of a
  1.4 ms sort on an H200 (4M entries).
*/
template <int Slots, class MemorySpace>
struct SiteBuckets
{
    using serial_type = PlaceOverflow<Slots, MemorySpace>;
    serial_type p;
    Kokkos::View<std::uint32_t*, MemorySpace> count; //!< per local site: entries, then bucket offsets
    Kokkos::View<std::uint64_t*, MemorySpace> keys_out;
    Kokkos::View<std::uint32_t*, MemorySpace> codes_out;
    Kokkos::View<std::uint8_t*, MemorySpace> moves_out;
    std::size_t n;
    int shift; //!< a bucket is 2^shift consecutive local sites

    struct Count
    {
    };
    struct Scatter
    {
    };
    struct CopyInOrder
    {
    };

    //! The local site of a key's (global) site.
    KOKKOS_INLINE_FUNCTION std::size_t local_site( std::uint64_t key ) const
    {
        const std::uint64_t site = key >> 8;
        const std::uint64_t plane = std::uint64_t( p.nx ) * std::uint64_t( p.ny );
        const int lz = p.window.local_of_global( int( site / plane ) );
        if ( lz < 0 )
            Kokkos::abort( "morula::lattice: an overflow entry outside this rank's planes" );
        return std::size_t( site % plane ) + std::size_t( plane ) * std::size_t( lz );
    }
    KOKKOS_INLINE_FUNCTION std::size_t bucket( std::uint64_t key ) const { return local_site( key ) >> shift; }
    KOKKOS_INLINE_FUNCTION void operator()( Count, const std::size_t i ) const
    {
        // atomic_add, not atomic_increment (deprecated in Kokkos 4)
        Kokkos::atomic_add( &count( bucket( p.overflow.keys( i ) ) ), std::uint32_t( 1 ) );
    }
    KOKKOS_INLINE_FUNCTION void operator()( Scatter, const std::size_t i ) const
    {
        const std::uint64_t k = p.overflow.keys( i );
        const std::uint32_t at = Kokkos::atomic_fetch_add( &count( bucket( k ) ), std::uint32_t( 1 ) );
        keys_out( at ) = k;
        codes_out( at ) = p.overflow.codes( i );
        moves_out( at ) = p.overflow.moves( i );
    }
    /*!
      Entry i of the scattered list goes to its place in the list: its bucket's start (after Scatter,
      count(b) is bucket b's end) plus the entries of its bucket that come before it. Keys are unique
      within a pass, but a list gathered over several passes without placement (LatticeDiffusion's
      split_pass() called again before place_overflow(), as lattice_benchmark's passes-only timing does)
      can hold one key twice: ties are ordered by code and move, and entries equal in all three (which no
      placement can tell apart) by their scattered position, so that the ranks stay a permutation and the
      list stays sorted (QueueAskers bisects it). Reversed when the pass places in descending key order.
      Every entry counts its own rank, so a warp stays converged; sorting each bucket by its first
      position (an insertion sort in global memory, one work item per bucket) took 0.6 ms for 4M entries
      on an H200.
    */
    KOKKOS_INLINE_FUNCTION void operator()( CopyInOrder, const std::size_t i ) const
    {
        const std::uint64_t k = keys_out( i );
        const std::uint64_t c = ( std::uint64_t( codes_out( i ) ) << 8 ) | moves_out( i );
        const std::size_t b = bucket( k );
        const std::size_t end = count( b );
        std::size_t at = b > 0 ? count( b - 1 ) : 0;
        for ( std::size_t j = at; j < end; ++j )
        {
            const std::uint64_t kj = keys_out( j );
            if ( kj < k )
                ++at;
            else if ( kj == k && j != i )
            {
                const std::uint64_t cj = ( std::uint64_t( codes_out( j ) ) << 8 ) | moves_out( j );
                at += cj < c || ( cj == c && j < i ) ? 1 : 0;
            }
        }
        const std::size_t to = p.descending ? n - 1 - at : at;
        p.overflow.keys( to ) = k;
        p.overflow.codes( to ) = codes_out( i );
        p.overflow.moves( to ) = moves_out( i );
    }
};

/*!
  \brief The host side of the parallel placement: scratch that only grows, the sort and the sweeps.

  place() sorts the list (when `first` is 0), then runs sweeps of three kernels (SweepTargets over the
  entries from the first one the previous sweep changed, whose first changed entry is the sweep's one read
  on the host; MarkChanges and RelinkChanged, which rebuild the claim lists of the sites whose claimants
  changed) until a sweep changes nothing (after a sweep of few changes: the listed kernels and a worklist,
  set_changed_list_limit()); then CommitTargets places every entry before the first one
  without room in its table, the sequential kernel places that one (the scan over the lattice; on a slab
  it stops there, as it does) and the sweeps resume after it. After `max_sweeps` sweeps without a fixed
  point the sequential kernel places the rest: the result is the sequential one in every case.
*/
template <int Slots, class ExecutionSpace>
class OverflowSweeps
{
  public:
    using memory_space = typename ExecutionSpace::memory_space;
    using serial_type = PlaceOverflow<Slots, memory_space>;
    using data_type = FixedPointData<Slots, memory_space>;

    /*!
      Places entries [first, n) of p.overflow (n, the list's size, read by the caller) as the sequential
      kernel `p` would from first_entry = first, on `exec`; `key_bits` bounds the keys. Leaves
      p.next_entry as the sequential kernel does.
    */
    void place( const ExecutionSpace& exec, serial_type p, std::size_t first, std::size_t n, int key_bits,
                int max_sweeps )
    {
        reserve( exec, p, n );
        if ( first == 0 )
            sort( exec, p, n, key_bits );
        p.presorted = true;
        m_sweeps = 0;
        m_listed_sweeps = 0;
        const auto range = [&]( std::size_t from, std::size_t to ) {
            return core::LaunchRange<ExecutionSpace>( exec, from, to );
        };
        auto sequential = [&]( std::size_t from, std::size_t to ) {
            serial_type s = p;
            s.first_entry = from;
            s.last_entry = to;
            Kokkos::parallel_for( "morula::lattice::place_overflow", core::LaunchRange<ExecutionSpace>( exec, 0, 1 ), s );
        };
        while ( true )
        {
            Kokkos::deep_copy( exec, Kokkos::subview( m_target, Kokkos::make_pair( first, n ) ), data_type::none );
            if ( !sweep_to_fixed_point( exec, p, first, n, max_sweeps, false ) )
            {
                Kokkos::parallel_for( "morula::lattice::overflow_clear_claims", range( first, n ),
                                      ClearClaims<Slots, memory_space>{ data( p, m_epoch, m_inputs_epoch ) } );
                sequential( first, n ); // every entry in order: the result is the same
                return;
            }
            const std::size_t stop = commit_fixed_point( exec, p, first, n );
            if ( stop >= n || !p.window.whole )
                return;
            first = stop + 1;
            if ( first >= n )
                return; // the sequential kernel placed the last entry and closed the list
        }
    }

    /*!
      @{ The placement of a slab's list in two halves (parallel::detail::OverflowTurns, slabs placing
      together): speculate() sorts the list and sweeps it to the fixed point against the lattice as it
      is, without writing anything to it; the caller may then append particles that come before every
      entry of the list in key order (a neighbouring slab's placements, ReplayPlacements) and stamp their
      sites (stamp_sites()); settle() sweeps again from the fixed point, computing only the entries whose
      sites were stamped and those they displace; commit() places the list as place() would: up to the
      first entry without room (settled_stop()), which the sequential kernel then reports in next_entry.
      Appended particles only take room, so the new fixed point is the sequential placement on the
      lattice with them (the fixed-point argument above holds from any start). Between settle() and
      commit() the placement is known but not written: targets_global() holds the global site of every
      entry before settled_stop() (what commit() records in the placement log). speculate() and settle()
      return false when the sweeps did not settle within max_sweeps (then commit() places the list with
      the sequential kernel); abandon() drops a speculation (its claims) without placing anything.
    */
    bool speculate( const ExecutionSpace& exec, serial_type p, std::size_t n, int key_bits, int max_sweeps )
    {
        reserve( exec, p, n );
        sort( exec, p, n, key_bits );
        p.presorted = true;
        m_sweeps = 0;
        m_listed_sweeps = 0;
        m_speculation = Speculation{ p, n, max_sweeps, false, false, true };
        Kokkos::deep_copy( exec, Kokkos::subview( m_target, Kokkos::make_pair( std::size_t( 0 ), n ) ), data_type::none );
        m_speculation.fixed = sweep_to_fixed_point( exec, p, 0, n, max_sweeps, false );
        if ( !m_speculation.fixed )
            clear_claims( exec );
        return m_speculation.fixed;
    }

    //! Stamps the local sites of `replay`'s entries that land on this lattice's planes (the particles it
    //! appended after speculate()), for settle().
    template <class Replay>
    void stamp_sites( const ExecutionSpace& exec, const Replay& replay )
    {
        if ( !m_speculation.active || !m_speculation.fixed || replay.begin >= replay.end )
            return;
        // One epoch for every call before settle(): the sweep after them reads the sites stamped with it.
        if ( !m_speculation.stamped && next_epoch( exec ) )
            m_speculation.every_entry = true; // the stamps were reset: settle() computes every entry
        const auto stamps = m_site_changed_at;
        const std::uint8_t epoch = m_epoch;
        Kokkos::parallel_for(
            "morula::lattice::overflow_stamp_appended", core::LaunchRange<ExecutionSpace>( exec, replay.begin, replay.end ),
            KOKKOS_LAMBDA( const std::size_t i ) {
                const std::size_t s = replay.local_site( i );
                if ( s != ~std::size_t( 0 ) )
                    stamps( s ) = epoch;
            } );
        m_inputs_epoch = m_epoch;
        m_speculation.stamped = true;
    }

    //! Sweeps a speculation again after stamps (see speculate()); true when it is at its fixed point (then
    //! settled_stop() and targets_global() tell the placement), false when the sweeps did not settle.
    bool settle( const ExecutionSpace& exec )
    {
        Speculation& sp = m_speculation;
        if ( !sp.active || sp.settled )
            return sp.active && sp.fixed;
        sp.settled = true;
        if ( sp.fixed && sp.stamped )
        {
            ++m_resumed;
            if ( !sweep_to_fixed_point( exec, sp.p, 0, sp.n, sp.max_sweeps, true, sp.every_entry ) )
            {
                clear_claims( exec );
                sp.fixed = false;
            }
        }
        if ( sp.fixed )
            sp.stop = first_without_target( exec, sp.p, 0, sp.n );
        return sp.fixed;
    }
    //! After settle() returned true: the first entry without room (the list's size: none).
    std::size_t settled_stop() const { return m_speculation.stop; }
    //! Per entry: its target's global site (valid at a fixed point for the entries before settled_stop()).
    Kokkos::View<const std::uint64_t*, memory_space> targets_global() const { return m_target_global; }

    //! Completes a speculation (see speculate(); settles it first if need be); leaves p.next_entry as
    //! place() does.
    void commit( const ExecutionSpace& exec )
    {
        settle( exec );
        Speculation& sp = m_speculation;
        if ( !sp.active )
            return;
        sp.active = false;
        if ( sp.fixed )
        {
            commit_up_to( exec, sp.p, 0, sp.n, sp.stop );
            return;
        }
        serial_type s = sp.p;
        s.first_entry = 0;
        s.last_entry = sp.n;
        Kokkos::parallel_for( "morula::lattice::place_overflow", core::LaunchRange<ExecutionSpace>( exec, 0, 1 ), s );
    }

    //! Drops a speculation without placing anything (the list stays sorted).
    void abandon( const ExecutionSpace& exec )
    {
        if ( m_speculation.active && m_speculation.fixed )
            clear_claims( exec );
        m_speculation.active = false;
    }
    //! @}

    //! Sweeps run by the last place() (for tests and benchmarks).
    int sweeps() const { return m_sweeps; }
    //! Lists of at least `entries` entries are sorted by counting per site, shorter ones by the radix
    //! sort (0: the default, every list by counting). For tests of both sorts.
    void set_counting_sort_from( std::size_t entries ) { m_counting_from = entries; }
    //! The stamps are reset after `epochs` sweeps (at most 255, the default; from 1), the sweep after a
    //! reset computing every entry again. For tests of that path.
    void set_epoch_limit( int epochs ) { m_epoch_limit = std::uint8_t( std::clamp( epochs, 1, 255 ) ); }
    /*!
      On a list of at least `min_entries` entries (from the first one to place), a sweep after one that
      changed at most `entries` entries, and at most 1 / `share` of the entries to place, lists its
      changes, and the claim lists and the next sweep's entries are found from them (ListedChanges,
      QueueAskers) instead of by kernels over the whole list. `entries` 0: never; `entries` at least the
      list's size with `share` 1 and `min_entries` 0: every sweep, the first included. The defaults
      (65536 entries, 1/16, lists of 2^20 entries) were measured on an H200 (docs/performance.md, "Late
      sweeps from the changes": 6% faster steps on 4M-entry lists, up to 3% slower on lists of 0.3M and
      100 entries, where a sweep over the range is short). Every choice gives the same targets; tests run
      several.
    */
    void set_changed_list_limit( std::size_t entries, std::size_t share = 16, std::size_t min_entries = std::size_t( 1 ) << 20 )
    {
        m_list_limit = entries;
        m_list_share = std::max<std::size_t>( 1, share );
        m_list_min_entries = min_entries;
    }
    //! Speculations that settle() swept again because sites were stamped, since construction (for tests).
    long long resumed_speculations() const { return m_resumed; }
    //! Sweeps of the last place() that computed a worklist instead of a range (for tests and benchmarks).
    int listed_sweeps() const { return m_listed_sweeps; }

  private:
    //! A speculation between speculate() and commit() / abandon().
    struct Speculation
    {
        serial_type p;
        std::size_t n = 0;
        int max_sweeps = 0;
        bool fixed = false;       //!< the sweeps settled; the claims are held
        bool stamped = false;     //!< sites were stamped since
        bool active = false;
        bool every_entry = false; //!< the stamps were reset since: compute every entry again
        bool settled = false;     //!< settle() ran
        std::size_t stop = 0;     //!< settled at a fixed point: the first entry without room
    };

    void clear_claims( const ExecutionSpace& exec )
    {
        const Speculation& sp = m_speculation;
        Kokkos::parallel_for( "morula::lattice::overflow_clear_claims", core::LaunchRange<ExecutionSpace>( exec, 0, sp.n ),
                              ClearClaims<Slots, memory_space>{ data( sp.p, m_epoch, m_inputs_epoch ) } );
    }

    /*!
      Sweeps entries [first, n) until a sweep changes nothing (true) or max_sweeps sweeps ran (false).
      From scratch (targets none, every entry computed by the first sweep), or `resumed` from a fixed
      point whose inputs changed at the sites stamped m_inputs_epoch (every entry computed first when
      `every_entry`).
    */
    bool sweep_to_fixed_point( const ExecutionSpace& exec, const serial_type& p, std::size_t first, std::size_t n,
                               int max_sweeps, bool resumed, bool every_entry_first = false )
    {
        const auto range = [&]( std::size_t from, std::size_t to ) {
            return core::LaunchRange<ExecutionSpace>( exec, from, to );
        };
        int run = 0; // sweeps of this stretch
        bool fixed = false;
        std::size_t active = first; // the entries before it are final
        bool every_entry = !resumed || every_entry_first; // the first sweep from scratch: no claims yet
        data_type d = data( p, 0, 0 );
        // The first sweep from scratch changes every entry with room; a resumed one few.
        std::size_t last_changes = resumed ? 0 : n - first;
        std::size_t work_size = 0; // the next sweep's worklist, when listed
        bool listed = false;
        while ( !fixed && run < max_sweeps )
        {
            if ( next_epoch( exec ) )
            {
                every_entry = true; // the stamps were reset: the previous sweep's changes are lost
                listed = false;
            }
            d = data( p, m_epoch, m_inputs_epoch );
            // Few changes in the previous sweep: this one lists its changes, and the claim lists and
            // the next sweep's entries follow from them (work per change, not per entry).
            const bool list = n - first >= m_list_min_entries && last_changes <= m_list_limit &&
                              last_changes * m_list_share <= n - first;
            if ( list )
            {
                reserve_lists( exec, n );
                Kokkos::deep_copy( exec, m_counters, std::uint32_t( 0 ) );
            }
            SweepTargets<Slots, memory_space> sweep{ d, every_entry, {}, {}, m_counters };
            if ( list )
                sweep.changed_list = m_changed_list;
            SweepChanges changes{ n, 0 }; // read on the host
            if ( listed && !every_entry )
            {
                sweep.every_entry = true; // the worklist holds the entries whose inputs changed
                sweep.work = Kokkos::subview( m_work, Kokkos::make_pair( std::size_t( 0 ), work_size ) );
                if ( work_size > 0 )
                    Kokkos::parallel_reduce( "morula::lattice::overflow_sweep_listed", range( 0, work_size ), sweep,
                                             changes );
            }
            else
                // A range, not teams that queue the entries to compute in scratch (as the compacted split
                // passes queue busy sites): on an H200 such teams (256 x 4 entries) took 200-240 us for
                // the late sweeps of a 4M-entry list against 116-145 us for a plain range, 390-460 against
                // 290-370 us for the first two.
                Kokkos::parallel_reduce( "morula::lattice::overflow_sweep", range( active, n ), sweep, changes );
            ++run;
            every_entry = false;
            fixed = changes.count == 0;
            if ( fixed )
                break;
            const std::size_t changed = changes.first;
            active = changed;
            last_changes = changes.count;
            if ( list && changes.count <= m_changed_list.extent( 0 ) )
            {
                work_size = follow_listed_changes( exec, p, changes.count, active, n );
                listed = work_size <= m_work.extent( 0 );
            }
            else
            {
                Kokkos::parallel_for( "morula::lattice::overflow_mark_changes", range( changed, n ),
                                      MarkChanges<memory_space>{ m_target, m_previous, m_changed_at, m_site_changed_at,
                                                                 m_head, m_epoch } );
                Kokkos::parallel_for( "morula::lattice::overflow_relink_claims", range( first, n ),
                                      RelinkChanged<memory_space>{ m_target, m_site_changed_at, m_head, m_next, m_epoch } );
                listed = false;
            }
            m_inputs_epoch = m_epoch;
        }
        m_sweeps += run;
        return fixed;
    }

    /*!
      At a fixed point of entries [first, n): places the entries before the first one without room
      (CommitTargets), clears the claims, and has the sequential kernel place that entry (the scan over
      the lattice; on a slab it stops there and reports it in next_entry) or close the list. Returns the
      first entry without room (n: none).
    */
    std::size_t commit_fixed_point( const ExecutionSpace& exec, const serial_type& p, std::size_t first, std::size_t n )
    {
        const std::size_t stop = first_without_target( exec, p, first, n );
        commit_up_to( exec, p, first, n, stop );
        return stop;
    }

    //! At a fixed point of entries [first, n): the first entry without room (n: none).
    std::size_t first_without_target( const ExecutionSpace& exec, const serial_type& p, std::size_t first, std::size_t n )
    {
        std::size_t stop = n;
        Kokkos::parallel_reduce( "morula::lattice::overflow_first_without_target",
                                 core::LaunchRange<ExecutionSpace>( exec, first, n ),
                                 FirstWithoutTarget<Slots, memory_space>{ data( p, m_epoch, m_inputs_epoch ) },
                                 Kokkos::Min<std::size_t>( stop ) );
        return std::min( stop, n ); // the reducer's identity when every entry has a target
    }

    //! commit_fixed_point() with its first entry without room known: `stop`.
    void commit_up_to( const ExecutionSpace& exec, const serial_type& p, std::size_t first, std::size_t n, std::size_t stop )
    {
        const auto range = [&]( std::size_t from, std::size_t to ) {
            return core::LaunchRange<ExecutionSpace>( exec, from, to );
        };
        const data_type d = data( p, m_epoch, m_inputs_epoch );
        if ( stop > first )
            Kokkos::parallel_for( "morula::lattice::overflow_commit", range( first, stop ),
                                  CommitTargets<Slots, memory_space>{ d, std::uint32_t( stop ) } );
        Kokkos::parallel_for( "morula::lattice::overflow_clear_claims", range( first, n ), ClearClaims<Slots, memory_space>{ d } );
        serial_type s = p;
        s.first_entry = stop >= n ? n : stop;
        s.last_entry = stop >= n ? n : stop + 1; // closes the list, or the scan over the lattice
        Kokkos::parallel_for( "morula::lattice::place_overflow", core::LaunchRange<ExecutionSpace>( exec, 0, 1 ), s );
    }

    /*!
      After a sweep that listed its `count` changed entries (epoch m_epoch): the claim lists of the sites
      they left or took rebuilt, and the next sweep's worklist (entries from `active` on whose inputs
      changed). Returns the worklist's size (more than m_work holds: not all were written).
    */
    std::size_t follow_listed_changes( const ExecutionSpace& exec, const serial_type& p, std::size_t count,
                                       std::size_t active, std::size_t n )
    {
        using lists = ListedChanges<memory_space>;
        const lists l{ m_target,  m_previous, m_changed_at,    m_site_changed_at, m_head, m_next,
                       m_changed_list, m_stamped_sites, m_stamped_heads, m_counters, m_epoch };
        auto over = [&]( auto tag, std::size_t items ) {
            return core::LaunchRange<ExecutionSpace, decltype( tag )>( exec, 0, items );
        };
        Kokkos::parallel_for( "morula::lattice::overflow_stamp_listed", over( typename lists::Stamp{}, count ), l );
        Kokkos::parallel_for( "morula::lattice::overflow_rebuild_listed", over( typename lists::Rebuild{}, 2 * count ), l );
        Kokkos::parallel_for( "morula::lattice::overflow_link_listed", over( typename lists::Link{}, count ), l );
        if ( ++m_queue_tag == 0 ) // the tags wrapped: none may look current
        {
            Kokkos::deep_copy( exec, m_queued, std::uint32_t( 0 ) );
            m_queue_tag = 1;
        }
        using askers = QueueAskers<Slots, memory_space>;
        Kokkos::parallel_for( "morula::lattice::overflow_queue_askers",
                              core::LaunchRange<ExecutionSpace>( exec, 0, 2 * count * std::size_t( askers::rows ) ),
                              askers{ data( p, m_epoch, m_epoch ), m_stamped_sites, m_queued, m_work, m_counters,
                                      m_queue_tag, active, n } );
        ++m_listed_sweeps;
        Kokkos::deep_copy( exec, m_host_counters, m_counters );
        exec.fence();
        return m_host_counters( 2 );
    }

    //! Allocation properties of scratch that every use writes before it reads.
    static auto uninitialized( const char* name ) { return Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( name ) ); }

    //! The lists of listed sweeps, for a list of n entries: the changed entries (as many as the list
    //! limit allows, with room to spare), two stamped sites per change, the worklist and its tags.
    void reserve_lists( const ExecutionSpace& exec, std::size_t n )
    {
        if ( m_counters.extent( 0 ) == 0 )
        {
            m_counters = Kokkos::View<std::uint32_t*, memory_space>( "lattice_overflow_list_counters", 3 );
            m_host_counters = Kokkos::create_mirror_view( m_counters );
        }
        const std::size_t changes = m_list_limit >= n / 4 ? n : std::min( n, 4 * m_list_limit + 64 );
        if ( m_changed_list.extent( 0 ) < changes )
        {
            m_changed_list = Kokkos::View<std::uint32_t*, memory_space>( uninitialized( "lattice_overflow_changed_list" ), changes );
            m_stamped_sites = Kokkos::View<std::uint64_t*, memory_space>( uninitialized( "lattice_overflow_stamped_sites" ), 2 * changes );
            m_stamped_heads = Kokkos::View<std::uint32_t*, memory_space>( uninitialized( "lattice_overflow_stamped_heads" ), 2 * changes );
        }
        // The worklist: the entries near the changes whose inputs changed; more than this and the next
        // sweep takes the range instead.
        const std::size_t work = std::min( n, 64 * changes );
        if ( m_work.extent( 0 ) < work )
            m_work = Kokkos::View<std::uint32_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_worklist" ), work );
        if ( m_queued.extent( 0 ) < n )
        {
            m_queued = Kokkos::View<std::uint32_t*, memory_space>( "lattice_overflow_queued_tags", m_next.extent( 0 ) );
            m_queue_tag = 0;
        }
    }

    data_type data( const serial_type& p, std::uint8_t epoch, std::uint8_t inputs_epoch ) const
    {
        return data_type{ p,         m_head,    m_next,       m_target,          m_previous, m_target_global,
                          m_target_table, m_checked, m_changed_at, m_site_changed_at, epoch,      inputs_epoch };
    }

    //! The next sweep's epoch; true when the stamps had to be reset (every 255 sweeps: they are bytes).
    bool next_epoch( const ExecutionSpace& exec )
    {
        if ( m_epoch < m_epoch_limit )
        {
            ++m_epoch;
            return false;
        }
        Kokkos::deep_copy( exec, m_site_changed_at, std::uint8_t( 0 ) );
        Kokkos::deep_copy( exec, m_changed_at, std::uint8_t( 0 ) );
        m_epoch = 1;
        m_inputs_epoch = 0;
        return true;
    }

    void reserve( const ExecutionSpace& exec, const serial_type& p, std::size_t n )
    {
        const std::size_t sites = p.sites.extent( 0 );
        if ( m_head.extent( 0 ) != sites )
        {
            m_head = Kokkos::View<std::uint32_t*, memory_space>(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "lattice_overflow_claim_heads" ), sites );
            Kokkos::deep_copy( exec, m_head, data_type::nobody );
            m_site_changed_at = Kokkos::View<std::uint8_t*, memory_space>( "lattice_overflow_site_changed_at", sites );
            m_epoch = 0; // stamps are 0: every epoch from 1 is new
            m_inputs_epoch = 0;
        }
        if ( m_next.extent( 0 ) < n )
        {
            const std::size_t c = std::max( n, m_next.extent( 0 ) + m_next.extent( 0 ) / 2 );
            m_next = Kokkos::View<std::uint32_t*, memory_space>( uninitialized( "lattice_overflow_claim_next" ), c );
            m_target = Kokkos::View<std::uint64_t*, memory_space>( uninitialized( "lattice_overflow_target" ), c );
            m_previous = Kokkos::View<std::uint64_t*, memory_space>( uninitialized( "lattice_overflow_previous_target" ), c );
            m_target_global = Kokkos::View<std::uint64_t*, memory_space>( uninitialized( "lattice_overflow_target_global" ), c );
            m_target_table = Kokkos::View<std::uint8_t*, memory_space>( uninitialized( "lattice_overflow_target_table" ), c );
            m_checked = Kokkos::View<std::uint64_t* [2], memory_space>( uninitialized( "lattice_overflow_checked_sites" ), c );
            // Stamps: older than every epoch to come (the epochs restart with the site stamps)
            m_changed_at = Kokkos::View<std::uint8_t*, memory_space>( "lattice_overflow_changed_at", c );
            Kokkos::deep_copy( exec, m_site_changed_at, std::uint8_t( 0 ) );
            m_epoch = 0;
            m_inputs_epoch = 0;
            m_keys = Kokkos::View<std::uint64_t*, memory_space>( uninitialized( "lattice_overflow_sort_keys" ), c );
            m_codes = Kokkos::View<std::uint32_t*, memory_space>( uninitialized( "lattice_overflow_sort_codes" ), c );
            m_moves = Kokkos::View<std::uint8_t*, memory_space>( uninitialized( "lattice_overflow_sort_moves" ), c );
        }
    }

    void sort( const ExecutionSpace& exec, const serial_type& p, std::size_t n, int key_bits )
    {
        // Lists are sorted by counting per bucket of sites: five launches, work per entry and a scan over
        // about n / 8 buckets. The radix sort (tests choose it with set_counting_sort_from) runs eight
        // passes of three launches over a key's 33 bits, each chunk of the list by one work item in
        // sequence: on an H200, 3.9 ms per list of 4M entries (256 x 256 x 512 sites, 60% of 2 slots). It
        // orders by key only: one key's entries (lists gathered over several passes) keep the list's order.
        const std::size_t from = m_counting_from ? m_counting_from : 1;
        if ( n >= from )
        {
            sort_by_site( exec, p, n );
            return;
        }
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
                                   CountOffsets<memory_space>{ m_offsets } );
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

    void sort_by_site( const ExecutionSpace& exec, const serial_type& p, std::size_t n )
    {
        using buckets = SiteBuckets<Slots, memory_space>;
        // About 8 entries per bucket where the list is spread evenly: the insertion sorts stay short, the
        // scan covers a fraction of the sites.
        const std::size_t sites = m_head.extent( 0 );
        int shift = 0;
        while ( shift < 16 && ( std::size_t( 2 ) << shift ) * n <= 8 * sites )
            ++shift;
        const std::size_t count = ( sites + ( std::size_t( 1 ) << shift ) - 1 ) >> shift;
        const auto counts = Kokkos::subview( m_head, Kokkos::make_pair( std::size_t( 0 ), count ) );
        const buckets b{ p, m_head, m_keys, m_codes, m_moves, n, shift };
        const auto entries = [&]( auto tag ) {
            return core::LaunchRange<ExecutionSpace, decltype( tag )>( exec, 0, n );
        };
        Kokkos::deep_copy( exec, counts, std::uint32_t( 0 ) );
        Kokkos::parallel_for( "morula::lattice::overflow_sort_count_sites", entries( typename buckets::Count{} ), b );
        Kokkos::parallel_scan( "morula::lattice::overflow_sort_site_offsets", core::LaunchRange<ExecutionSpace>( exec, 0, count ),
                               CountOffsets<memory_space>{ m_head } );
        Kokkos::parallel_for( "morula::lattice::overflow_sort_scatter_sites", entries( typename buckets::Scatter{} ), b );
        Kokkos::parallel_for( "morula::lattice::overflow_sort_copy_in_order", entries( typename buckets::CopyInOrder{} ), b );
        Kokkos::deep_copy( exec, counts, data_type::nobody ); // the claim lists' empty state
    }


    Kokkos::View<std::uint32_t*, memory_space> m_head, m_next, m_offsets;
    Kokkos::View<std::uint64_t*, memory_space> m_target, m_previous, m_target_global;
    Kokkos::View<std::uint64_t* [2], memory_space> m_checked;
    Kokkos::View<std::uint8_t*, memory_space> m_target_table, m_moves, m_changed_at, m_site_changed_at;
    Kokkos::View<std::uint64_t*, memory_space> m_keys;
    Kokkos::View<std::uint32_t*, memory_space> m_codes;
    Kokkos::View<std::uint32_t*, memory_space> m_changed_list, m_stamped_heads, m_work, m_queued, m_counters;
    Kokkos::View<std::uint64_t*, memory_space> m_stamped_sites;
    typename Kokkos::View<std::uint32_t*, memory_space>::HostMirror m_host_counters;
    std::uint32_t m_queue_tag = 0;
    std::size_t m_list_limit = 65536, m_list_share = 16, m_list_min_entries = std::size_t( 1 ) << 20;
    int m_sweeps = 0, m_listed_sweeps = 0;
    std::size_t m_counting_from = 0;
    std::uint8_t m_epoch = 0, m_inputs_epoch = 0; //!< the last sweep's, and the one before
    std::uint8_t m_epoch_limit = 255;
    Speculation m_speculation;
    long long m_resumed = 0;
};

} // namespace morula::lattice::detail

#endif
