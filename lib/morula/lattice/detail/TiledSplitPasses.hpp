/*!
  \file detail/TiledSplitPasses.hpp
  \brief Tiled split passes (issue #22): each word is loaded once and each particle hashed once per
  pass and tile; the result is bit for bit that of the gather SplitPass (SplitPass.hpp), which defines
  the model. The fused pass's 3D boxes are in TiledFusedPass.hpp.

  The gather recomputes, for every destination, the moves of the particles on its two neighbours along
  the axis: three loads and up to three hashes of every particle per pass, and one 4-byte load in
  flight per thread, too little to cover the memory latency of a GPU. Here a site's moves are drawn
  once, packed into a move mask (2 bits per slot: moves -1 and +1), and the destination combines its
  own mask with its neighbours' exactly as the gather does (same arrival groups, same order, same
  overflow keys, same coin, the same tracer increments by the destination's work item):

  - along y and z (TiledSplitPassColumn): a work item walks a run of `Run` sites of one column along
    the axis, with the two apron sites of the run (the seed paper's 1D block of length B, kept in
    registers instead of shared memory). Consecutive work items take consecutive x, so every load is
    coalesced; the Run + 2 loads of a work item are independent, so each thread has many in flight.
    Apron sites are loaded and hashed twice: 2 / Run of the work;
  - along x (TiledSplitPassRow): a team takes a tile of consecutive x on `Rows` rows; it loads each
    word into team scratch once and draws its moves once (the apron sites at both ends of each row
    segment too), then every destination reads its neighbours' words and masks from scratch.

  Only the whole lattice (SlabWindow::whole): a slab of a distributed lattice keeps the gather.
*/
#ifndef MORULA_LATTICE_DETAIL_TILEDSPLITPASSES_HPP
#define MORULA_LATTICE_DETAIL_TILEDSPLITPASSES_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/PassOutputs.hpp>
#include <morula/lattice/detail/SiteBuilder.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace morula::lattice::detail
{

/*!
  \brief The moves of a site's particles along Axis, drawn as the gather draws them (split_draw: one
  64-bit hash per pair of slots): bit 2k set if slot k moves -1, bit 2k + 1 if it moves +1.
*/
template <int Slots, int Axis, class MemorySpace>
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t split_move_mask( const DeviceRules<MemorySpace>& rules,
                                                           const core::HashedRng& rng, const site_word w,
                                                           const std::size_t site, const std::uint32_t step )
{
    using layout = SiteLayout<Slots>;
    std::uint32_t mask = 0;
    if ( layout::empty( w ) )
        return mask;
    const std::uint32_t t = layout::type( w );
    for ( int k = 0; k < Slots; k += 2 )
    {
        const std::uint32_t c0 = layout::code( w, k );
        if ( c0 == 0 )
            break;
        const std::uint64_t b = rng.bits( site, std::uint32_t( Axis * 4 + k / 2 ), step );
        const int m0 = rules.move( c0, t, Axis, std::uint32_t( b >> 32 ) );
        mask |= ( m0 < 0 ? 1u : ( m0 > 0 ? 2u : 0u ) ) << ( 2 * k );
        const std::uint32_t c1 = layout::code( w, k + 1 );
        if ( c1 == 0 )
            break;
        const int m1 = rules.move( c1, t, Axis, std::uint32_t( b ) );
        mask |= ( m1 < 0 ? 1u : ( m1 > 0 ? 2u : 0u ) ) << ( 2 * k + 2 );
    }
    return mask;
}

/*!
  \brief Destination d's new word from its word and mask, and those of its lower and upper neighbours
  along Axis (has_lower / has_upper false past a reflecting face): SplitPass's arrival order, coin and
  overflow entries. gd is d's global index.
*/
template <int Slots, int Axis, class MemorySpace>
KOKKOS_FORCEINLINE_FUNCTION site_word split_destination( const DeviceRules<MemorySpace>& rules, const core::HashedRng& rng,
                                                         const std::uint32_t step,
                                                         const TracerDisplacements<MemorySpace>& tracers,
                                                         const OverflowList<MemorySpace>& overflow, const std::size_t gd,
                                                         const site_word wd, const std::uint32_t md, const bool has_lower,
                                                         const site_word wl, const std::uint32_t ml, const bool has_upper,
                                                         const site_word wu, const std::uint32_t mu )
{
    using layout = SiteLayout<Slots>;
    const std::uint32_t td = layout::type( wd );
    SiteBuilder<Slots, MemorySpace> site{ layout::empty_site( td ) };
    if ( rules.blocked( td ) )
        return site.word;
    const std::uint32_t ups = has_lower ? ml : 0u;
    const std::uint32_t downs = has_upper ? mu : 0u;
    if ( !( ups & 0xAAAAAAAAu ) && !( downs & 0x55555555u ) && !md )
        return wd; // nobody arrives and nobody leaves: the word is unchanged
    ArrivalGroup<Slots> up, stay, down;
    for ( int k = 0; k < Slots; ++k )
        if ( ( ups >> ( 2 * k + 1 ) ) & 1u )
        {
            const std::uint32_t code = layout::code( wl, k );
            up.add( code );
            tracers.template add_along<Axis>( code, 1 );
        }
    const bool lower_open = has_lower && !rules.blocked( layout::type( wl ) );
    const bool upper_open = has_upper && !rules.blocked( layout::type( wu ) );
    for ( int k = 0; k < Slots; ++k )
    {
        const std::uint32_t code = layout::code( wd, k );
        if ( code == 0 )
            break;
        const std::uint32_t m = ( md >> ( 2 * k ) ) & 3u;
        if ( m == 0 || ( m == 1u && !lower_open ) || ( m == 2u && !upper_open ) )
            stay.add( code );
    }
    for ( int k = 0; k < Slots; ++k )
        if ( ( downs >> ( 2 * k ) ) & 1u )
        {
            const std::uint32_t code = layout::code( wu, k );
            down.add( code );
            tracers.template add_along<Axis>( code, -1 );
        }
    return assemble_split_site<Axis>( site, stay, up, down, gd, rng, step, overflow );
}

/*!
  \brief Split pass along y (Axis 1) or z (Axis 2) over the whole lattice: work item i takes column
  (x, other) and the run of `Run` sites along the axis that starts at run * Run; i = x + nx (run +
  runs other), x fastest.
*/
template <int Slots, int Axis, int Run, class ExecutionSpace>
struct TiledSplitPassColumn
{
    static_assert( Axis == 1 || Axis == 2, "the column pass runs along y or z" );
    using MemorySpace = typename ExecutionSpace::memory_space;
    using layout = SiteLayout<Slots>;
    using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
    Kokkos::View<const site_word*, MemorySpace> in;
    Kokkos::View<site_word*, MemorySpace> out;
    DeviceRules<MemorySpace> rules;
    core::HashedRng rng;
    std::uint32_t step;
    int nx, ny, nz;
    bool periodic; //!< along Axis
    TracerDisplacements<MemorySpace> tracers;
    OverflowList<MemorySpace> overflow;
    int items_per_team = 256;

    int league() const { return int( ( items() + std::size_t( items_per_team ) - 1 ) / std::size_t( items_per_team ) ); }

    KOKKOS_INLINE_FUNCTION void operator()( const member_type& team ) const
    {
        const std::size_t first = std::size_t( team.league_rank() ) * std::size_t( items_per_team );
        const std::size_t n = items();
        const int count = int( n - first < std::size_t( items_per_team ) ? n - first : std::size_t( items_per_team ) );
        if ( n < ( std::size_t( 1 ) << 31 ) )
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, count ),
                                  [&]( const int k ) { item( int( first ) + k ); } );
        else
            Kokkos::parallel_for( Kokkos::TeamThreadRange( team, count ),
                                  [&]( const int k ) { item( first + std::size_t( k ) ); } );
    }

    KOKKOS_FORCEINLINE_FUNCTION int extent() const { return Axis == 1 ? ny : nz; }
    KOKKOS_FORCEINLINE_FUNCTION int runs() const { return ( extent() + Run - 1 ) / Run; }
    //! Work items of one launch.
    KOKKOS_INLINE_FUNCTION std::size_t items() const
    {
        return std::size_t( nx ) * std::size_t( runs() ) * std::size_t( Axis == 1 ? nz : ny );
    }

    //! Launches of fewer than 2^31 items (32-bit index arithmetic: a 64-bit division costs a GPU several
    //! times as many instructions).
    KOKKOS_INLINE_FUNCTION void item( const int i ) const
    {
        const int nruns = runs();
        const int rest = i / nx;
        column( i - rest * nx, rest % nruns, rest / nruns );
    }

    KOKKOS_INLINE_FUNCTION void item( const std::size_t i ) const
    {
        const std::size_t nruns = std::size_t( runs() );
        const std::size_t rest = i / std::size_t( nx );
        column( int( i % std::size_t( nx ) ), int( rest % nruns ), int( rest / nruns ) );
    }

    KOKKOS_INLINE_FUNCTION void column( const int x, const int run, const int other ) const
    {
        const int n = extent();
        const std::size_t plane = std::size_t( nx ) * std::size_t( ny );
        const std::size_t stride = Axis == 1 ? std::size_t( nx ) : plane;
        const std::size_t base =
            std::size_t( x ) + ( Axis == 1 ? plane * std::size_t( other ) : std::size_t( nx ) * std::size_t( other ) );
        const int c0 = run * Run;
        const int len = n - c0 < Run ? n - c0 : Run;
        // w[p], p in [0, len + 1]: site c0 + p - 1 of the run, with the apron sites at p = 0 and p = len + 1
        // (absent past a reflecting face). Every index is a constant after unrolling: the arrays stay in
        // registers, and the loads are all issued before the first hash.
        const bool has_first = c0 > 0 || periodic;
        const bool has_last = c0 + len < n || periodic;
        const int first = c0 > 0 ? c0 - 1 : n - 1;
        const int last = c0 + len < n ? c0 + len : 0;
        site_word w[Run + 2];
        std::uint32_t m[Run + 2];
        w[0] = has_first ? in( base + stride * std::size_t( first ) ) : layout::empty_site( 0 );
MORULA_UNROLL
        for ( int p = 1; p <= Run + 1; ++p )
        {
            if ( p - 1 < len )
                w[p] = in( base + stride * std::size_t( c0 + p - 1 ) );
            else if ( p - 1 == len )
                w[p] = has_last ? in( base + stride * std::size_t( last ) ) : layout::empty_site( 0 );
        }
        m[0] = has_first ? split_move_mask<Slots, Axis>( rules, rng, w[0], base + stride * std::size_t( first ), step ) : 0u;
MORULA_UNROLL
        for ( int p = 1; p <= Run + 1; ++p )
        {
            if ( p - 1 < len )
                m[p] = split_move_mask<Slots, Axis>( rules, rng, w[p], base + stride * std::size_t( c0 + p - 1 ), step );
            else if ( p - 1 == len )
                m[p] = has_last ? split_move_mask<Slots, Axis>( rules, rng, w[p], base + stride * std::size_t( last ), step )
                                : 0u;
        }
MORULA_UNROLL
        for ( int j = 0; j < Run; ++j )
            if ( j < len )
            {
                const std::size_t d = base + stride * std::size_t( c0 + j );
                const bool has_lower = j > 0 || has_first;
                const bool has_upper = j < len - 1 || has_last;
                out( d ) = split_destination<Slots, Axis>( rules, rng, step, tracers, overflow, d, w[j + 1], m[j + 1],
                                                           has_lower, w[j], m[j], has_upper, w[j + 2], m[j + 2] );
            }
    }
};

/*!
  \brief Split pass along x over the whole lattice: team t takes the row segment [x0, x0 + width) of
  `rows` consecutive rows (row = y + ny z), loads their words and the apron words at both ends into
  team scratch, draws every particle's move once, then writes each destination once.
*/
template <int Slots, class ExecutionSpace>
struct TiledSplitPassRow
{
    using memory_space = typename ExecutionSpace::memory_space;
    using layout = SiteLayout<Slots>;
    using policy_type = core::LaunchTeam<ExecutionSpace>;
    using member_type = typename policy_type::member_type;
    using word_scratch = Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, typename ExecutionSpace::scratch_memory_space,
                                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::View<const site_word*, memory_space> in;
    Kokkos::View<site_word*, memory_space> out;
    DeviceRules<memory_space> rules;
    core::HashedRng rng;
    std::uint32_t step;
    int nx, ny, nz;
    bool periodic; //!< along x
    TracerDisplacements<memory_space> tracers;
    OverflowList<memory_space> overflow;
    int width; //!< x sites per tile
    int rows;  //!< rows per tile

    int segments() const { return ( nx + width - 1 ) / width; }
    int league() const
    {
        const std::size_t r = std::size_t( ny ) * std::size_t( nz );
        return int( ( r + std::size_t( rows ) - 1 ) / std::size_t( rows ) ) * segments();
    }
    std::size_t scratch_bytes() const { return 2 * word_scratch::shmem_size( rows, width + 2 ); }

    KOKKOS_INLINE_FUNCTION void operator()( const member_type& team ) const
    {
        word_scratch w( team.team_scratch( 0 ), rows, width + 2 );
        word_scratch m( team.team_scratch( 0 ), rows, width + 2 );
        const int nseg = ( nx + width - 1 ) / width;
        const int seg = team.league_rank() % nseg;
        const int row0 = ( team.league_rank() / nseg ) * rows;
        const int total_rows = ny * nz;
        const int nrows = total_rows - row0 < rows ? total_rows - row0 : rows;
        const int x0 = seg * width;
        const int len = nx - x0 < width ? nx - x0 : width;
        const bool has_first = x0 > 0 || periodic;
        const bool has_last = x0 + len < nx || periodic;
        const int first = x0 > 0 ? x0 - 1 : nx - 1;
        const int last = x0 + len < nx ? x0 + len : 0;
        // Entry j + 1 of a scratch row is x0 + j, j in [-1, len].
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, nrows * ( len + 2 ) ), [&]( const int e ) {
            const int r = e / ( len + 2 );
            const int j = e - r * ( len + 2 ) - 1;
            const bool present = j < 0 ? has_first : ( j == len ? has_last : true );
            const int x = j < 0 ? first : ( j == len ? last : x0 + j );
            const std::size_t s = std::size_t( x ) + std::size_t( nx ) * std::size_t( row0 + r );
            const site_word word = present ? in( s ) : layout::empty_site( 0 );
            w( r, j + 1 ) = word;
            m( r, j + 1 ) = present ? split_move_mask<Slots, 0>( rules, rng, word, s, step ) : 0u;
        } );
        team.team_barrier();
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, nrows * len ), [&]( const int e ) {
            const int r = e / len;
            const int j = e - r * len;
            const std::size_t d = std::size_t( x0 + j ) + std::size_t( nx ) * std::size_t( row0 + r );
            const bool has_lower = j > 0 || has_first;
            const bool has_upper = j < len - 1 || has_last;
            out( d ) = split_destination<Slots, 0>( rules, rng, step, tracers, overflow, d, w( r, j + 1 ), m( r, j + 1 ),
                                                    has_lower, w( r, j ), m( r, j ), has_upper, w( r, j + 2 ),
                                                    m( r, j + 2 ) );
        } );
    }
};

} // namespace morula::lattice::detail

#endif
