/*!
  \file Census.hpp
  \brief The data-dependent numbers of angio_benchmark's roofline counts (issue #8): census kernels that
  walk the same stencils and loops as the timed kernels, outside the timed region, and check their
  totals against what the kernels wrote.
*/
#ifndef MORULA_BENCHMARKS_ANGIO_CENSUS_HPP
#define MORULA_BENCHMARKS_ANGIO_CENSUS_HPP

#include "Common.hpp"

#include <morula/angio/Angiogenesis.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace angio_bench
{
// The neighbour query's stencil walk, internal to the library (experiments and checks look inside it).
using QueryAccess = morula::grid::detail::QueryAccess;

//! A census reduction value: N counters.
template <int N>
struct Tally
{
    long long v[N];
};

// init and join of a census functor over Tally<N> (members, not inherited: Kokkos looks them up on the functor).
#define ANGIO_BENCH_TALLY( N )                                                                                  \
    using value_type = Tally<N>;                                                                                 \
    KOKKOS_INLINE_FUNCTION void init( value_type& t ) const                                                      \
    {                                                                                                            \
        for ( int k = 0; k < N; ++k )                                                                            \
            t.v[k] = 0;                                                                                          \
    }                                                                                                            \
    KOKKOS_INLINE_FUNCTION void join( value_type& a, const value_type& b ) const                                 \
    {                                                                                                            \
        for ( int k = 0; k < N; ++k )                                                                            \
            a.v[k] += b.v[k];                                                                                    \
    }

//! Wraps the query's own candidate source and counts the stencil rows it scans and the slots they hold.
template <class Scalar, class Inner>
struct CountingSource
{
    Inner inner;
    long long* rows;
    long long* slots;

    template <class F>
    KOKKOS_INLINE_FUNCTION void scan( int piece, int begin, int end, int self, Scalar xi, Scalar yi, Scalar zi,
                                      Scalar sx, Scalar sy, Scalar sz, Scalar r2max, F& f ) const
    {
        ++*rows;
        *slots += end - begin;
        inner.scan( piece, begin, end, self, xi, yi, zi, sx, sy, sz, r2max, f );
    }
};

//! Walks query.for_each_neighbor(i, sqrt(r2max), f) as the kernels do (closed box: no minimum image),
//! counting the stencil rows that exist (rows_valid), those scanned after pruning and the candidates.
template <class Scalar, class Query, class F>
KOKKOS_INLINE_FUNCTION void census_stencil( const Query& q, int i, Scalar r2max, long long& rows_valid,
                                            long long& rows_scanned, long long& candidates, F& f )
{
    const Scalar xi = q.position( i, 0 ), yi = q.position( i, 1 ), zi = q.position( i, 2 );
    const auto& g = q.geometry();
    const int iy = g.cell_coordinate( 1, yi ), iz = g.cell_coordinate( 2, zi );
    rows_valid += ( 1 + ( iy > 0 ? 1 : 0 ) + ( iy < g.ncell[1] - 1 ? 1 : 0 ) ) *
                  ( 1 + ( iz > 0 ? 1 : 0 ) + ( iz < g.ncell[2] - 1 ? 1 : 0 ) );
    long long slots = 0;
    if ( q.data_sorted() )
    {
        auto inner = QueryAccess::global_source<true, false>( q );
        const CountingSource<Scalar, decltype( inner )> src{ inner, &rows_scanned, &slots };
        QueryAccess::visit_stencil<false>( q, i, xi, yi, zi, r2max, src, f );
    }
    else
    {
        auto inner = QueryAccess::global_source<false, false>( q );
        const CountingSource<Scalar, decltype( inner )> src{ inner, &rows_scanned, &slots };
        QueryAccess::visit_stencil<false>( q, i, xi, yi, zi, r2max, src, f );
    }
    candidates += slots - 1; // the query's own slot lies in the central row, always scanned
}

/*!
  Cell-cell census (both sides): v[0] queries, v[1] stencil rows that exist, v[2] rows scanned,
  v[3] candidates, v[4] neighbours within cell_reach (cell_pair called), v[5] interacting with overlap
  (d < r_i + r_j), v[6] interacting without, v[7] and v[8] the same for two live cells (exchange contacts).
*/
template <class Scalar, class Query>
struct CellPairCensus
{
    ANGIO_BENCH_TALLY( 9 )
    Query query;
    angio::detail::CellViews<Scalar, mem_space> cells;
    angio::detail::Constants<Scalar> c;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, Tally<9>& t ) const
    {
        if ( cells.state( i ) == angio::cell_lysed )
            return;
        auto visit = [&]( int j, Scalar dx, Scalar dy, Scalar dz, Scalar r2 ) {
            if ( cells.state( j ) == angio::cell_lysed )
                return;
            ++t.v[4];
            const angio::detail::PairEffect<Scalar> e = angio::detail::cell_pair( c, cells, i, j, dx, dy, dz, r2 );
            if ( !e.interacts )
                return;
            const bool overlap = morula::compat::sqrt( r2 ) - ( cells.radius( i ) + cells.radius( j ) ) < Scalar( 0 );
            ++t.v[overlap ? 5 : 6];
            if ( angio::is_alive( cells.state( i ) ) && angio::is_alive( cells.state( j ) ) )
                ++t.v[overlap ? 7 : 8];
        };
        ++t.v[0];
        census_stencil( query, i, c.cell_reach * c.cell_reach, t.v[1], t.v[2], t.v[3], visit );
    }
};

/*!
  Tube-tube census: v[0] queries, v[1] rows that exist, v[2] rows scanned, v[3] candidates, v[4] neighbours
  within reach not linked in a chain (segment distance computed), v[5] touching, v[6] touching at d > 0.
*/
template <class Scalar, class Query>
struct TubeTubeCensus
{
    ANGIO_BENCH_TALLY( 7 )
    Query query;
    angio::detail::TubeViews<Scalar, mem_space> t;
    Scalar reach;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, Tally<7>& tally ) const
    {
        Scalar ai[3], bi[3];
        t.ends( i, ai, bi );
        auto visit = [&]( int j, Scalar, Scalar, Scalar, Scalar ) {
            if ( t.parent( i ) == j || t.parent( j ) == i )
                return;
            ++tally.v[4];
            Scalar aj[3], bj[3], s, u;
            t.ends( j, aj, bj );
            const Scalar d2 = angio::segment_distance2( ai, bi, aj, bj, s, u );
            const Scalar rsum = t.ra( i ) + s * ( t.rb( i ) - t.ra( i ) ) + t.ra( j ) + u * ( t.rb( j ) - t.ra( j ) );
            if ( !( d2 < rsum * rsum ) )
                return;
            ++tally.v[5];
            if ( morula::compat::sqrt( d2 ) > Scalar( 0 ) )
                ++tally.v[6];
        };
        ++tally.v[0];
        census_stencil( query, i, reach * reach, tally.v[1], tally.v[2], tally.v[3], visit );
    }
};

/*!
  Tube-cell census (Algorithm 5's loops): v[0] cells visited (not lysed: tube_contact computed), v[1]
  contacts, v[2] contacts with d < r + R and d > 0 (repulsion), v[3] contacts with a live cell, v[4] of
  those with d > r + R (the contact weight's second branch), v[5] tubes with a contact. Marks the cells
  and the cell offsets read, so that each counts once. The block of grid cells a tube visits is the
  kernel's own (angio::detail::tube_cell_stencil), so the census cannot drift from it.
*/
template <class Scalar, class Query>
struct TubeCellCensus
{
    ANGIO_BENCH_TALLY( 6 )
    Query query;
    angio::detail::CellViews<Scalar, mem_space> cells;
    angio::detail::TubeViews<Scalar, mem_space> t;
    angio::detail::Constants<Scalar> c;
    Kokkos::View<int*, mem_space> cell_seen, offset_seen;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, Tally<6>& tally ) const
    {
        const auto& geom = query.geometry();
        const auto& offsets = query.cell_offsets();
        int lo[3], hi[3];
        angio::detail::tube_cell_stencil( geom, t, i, c, lo, hi ); // the kernel's own bounds
        bool touched = false;
        for ( int cz = lo[2]; cz <= hi[2]; ++cz )
            for ( int cy = lo[1]; cy <= hi[1]; ++cy )
            {
                const int row = geom.linear_index( 0, cy, cz );
                offset_seen( row + lo[0] ) = 1;
                offset_seen( row + hi[0] + 1 ) = 1;
                for ( int slot = offsets( row + lo[0] ); slot < offsets( row + hi[0] + 1 ); ++slot )
                {
                    const int j = query.particle( slot );
                    const std::int32_t sj = cells.state( j );
                    if ( sj == angio::cell_lysed )
                        continue;
                    ++tally.v[0];
                    cell_seen( j ) = 1;
                    const Scalar p[3] = { cells.x( j, 0 ), cells.x( j, 1 ), cells.x( j, 2 ) };
                    const angio::detail::TubeContact<Scalar> g = angio::detail::tube_contact( t, i, p );
                    const Scalar sum = cells.radius( j ) + g.tube_radius;
                    if ( !( g.d < ( Scalar( 1 ) + c.range ) * sum ) )
                        continue;
                    ++tally.v[1];
                    touched = true;
                    if ( g.d < sum && g.d > Scalar( 0 ) )
                        ++tally.v[2];
                    if ( angio::is_alive( sj ) )
                    {
                        ++tally.v[3];
                        if ( g.d - sum > Scalar( 0 ) )
                            ++tally.v[4];
                    }
                }
            }
        if ( touched )
            ++tally.v[5];
    }
};

template <class Functor>
auto run_census( const char* label, int n, const Functor& f )
{
    typename Functor::value_type v;
    f.init( v );
    if ( n > 0 )
        Kokkos::parallel_reduce( label, Kokkos::RangePolicy<exec_space>( 0, n ), f, v );
    Kokkos::fence();
    return v;
}

//! Number of nonzero entries among the first n of a flag View.
inline long long count_flags( const Kokkos::View<int*, mem_space>& flags, int n )
{
    long long total = 0;
    Kokkos::parallel_reduce(
        "angio_benchmark::count_flags", Kokkos::RangePolicy<exec_space>( 0, n ),
        KOKKOS_LAMBDA( const int k, long long& s ) { s += flags( k ) != 0 ? 1 : 0; }, total );
    return total;
}

//! The data-dependent numbers the counts of the cell phases need, from one model state.
struct CellCensus
{
    double n = 0, grid_cells = 0;
    // cell-cell stencil walk (both sides)
    double queries = 0, rows_valid = 0, rows_scanned = 0, candidates = 0, within = 0, inter_overlap = 0,
           inter_apart = 0, live_overlap = 0, live_apart = 0;
    // contact lists: entries kept (min(count, max_contacts)), over all cells and over live cells
    double listed = 0, live = 0, listed_live = 0;
    // motion: cells not lysed, and (cell, axis, side) pairs pushed by a wall
    double present = 0, wall_sides = 0;

    nlohmann::json to_json() const
    {
        return { { "cells", n },
                 { "grid_cells", grid_cells },
                 { "queries", queries },
                 { "stencil_rows_existing", rows_valid },
                 { "stencil_rows_scanned", rows_scanned },
                 { "candidates", candidates },
                 { "neighbours_within_reach", within },
                 { "interacting_overlapping", inter_overlap },
                 { "interacting_apart", inter_apart },
                 { "live_contacts_overlapping", live_overlap },
                 { "live_contacts_apart", live_apart },
                 { "contact_list_entries", listed },
                 { "live_cells", live },
                 { "contact_list_entries_live", listed_live },
                 { "cells_present", present },
                 { "wall_sides", wall_sides } };
    }
};

template <class Scalar>
CellCensus census_cells( const Model<Scalar>& m )
{
    CellCensus k;
    const int n = m.num_cells();
    k.n = n;
    k.grid_cells = m.grid().num_cells();
    const auto p = m.parameters();
    const auto c = angio::detail::Constants<Scalar>::make( p, m.box(), p.exchange.max_contacts );
    const auto query = m.grid().query( m.cells().positions() );
    const CellPairCensus<Scalar, decltype( query )> pc{ query, m.cells_view(), c };
    const auto t = run_census( "angio_benchmark::cell_pair_census", n, pc );
    k.queries = double( t.v[0] );
    k.rows_valid = double( t.v[1] );
    k.rows_scanned = double( t.v[2] );
    k.candidates = double( t.v[3] );
    k.within = double( t.v[4] );
    k.inter_overlap = double( t.v[5] );
    k.inter_apart = double( t.v[6] );
    k.live_overlap = double( t.v[7] );
    k.live_apart = double( t.v[8] );
    const auto counts = first_n_to_host( m.workspace().contact_count, n );
    const auto host = m.cells().to_host();
    const auto& box = m.box();
    for ( int i = 0; i < n; ++i )
    {
        const double kept = double( std::min<long long>( counts[i], p.exchange.max_contacts ) );
        k.listed += kept;
        if ( angio::is_alive( host.state[i] ) )
        {
            ++k.live;
            k.listed_live += kept;
        }
        if ( host.state[i] == angio::cell_lysed )
            continue;
        ++k.present;
        const auto r = static_cast<Scalar>( host.radius[i] );
        for ( int d = 0; d < 3; ++d )
        {
            const auto x = static_cast<Scalar>( host.position[3 * i + d] );
            k.wall_sides += r - ( x - box.lo[d] ) > Scalar( 0 ) ? 1 : 0;
            k.wall_sides += r - ( box.hi[d] - x ) > Scalar( 0 ) ? 1 : 0;
        }
    }
    // Every live interacting pair side lists a contact (the weight is > 0 inside the reach).
    if ( k.live_overlap + k.live_apart != double( sum_of( counts ) ) )
        std::printf( "warning: cell census found %.0f live contacts, the kernel listed %lld\n",
                     k.live_overlap + k.live_apart, sum_of( counts ) );
    return k;
}

//! The data-dependent numbers of the tube phases.
struct TubeCensus
{
    double m = 0, n = 0, cell_grid_cells = 0, tube_grid_cells = 0, tube_count_extent = 0;
    // blood flow: tubes with a parent, distinct parents, sum of chain depths
    double children = 0, parents = 0, chain_steps = 0;
    // tube-tube
    double queries = 0, rows_valid = 0, rows_scanned = 0, candidates = 0, within = 0, touching = 0,
           touching_apart = 0;
    // tube-cell and cell-tube
    double visited = 0, contacts = 0, contacts_overlap = 0, contacts_live = 0, contacts_live_apart = 0,
           tubes_touched = 0, distinct_cells_visited = 0, distinct_offsets_read = 0, cells_touched = 0,
           tube_list_entries = 0, tube_list_rewrites = 0;
    bool cells_sorted = true;

    nlohmann::json to_json() const
    {
        return { { "tubes", m },
                 { "cells", n },
                 { "cell_grid_cells", cell_grid_cells },
                 { "tube_grid_cells", tube_grid_cells },
                 { "tubes_with_parent", children },
                 { "distinct_parents", parents },
                 { "chain_steps", chain_steps },
                 { "tube_queries", queries },
                 { "tube_stencil_rows_existing", rows_valid },
                 { "tube_stencil_rows_scanned", rows_scanned },
                 { "tube_candidates", candidates },
                 { "tube_pairs_within_reach_unlinked", within },
                 { "tube_touching_sides", touching },
                 { "tube_touching_sides_apart", touching_apart },
                 { "cells_visited_by_tubes", visited },
                 { "cell_tube_contacts", contacts },
                 { "cell_tube_contacts_overlapping", contacts_overlap },
                 { "cell_tube_contacts_live", contacts_live },
                 { "cell_tube_contacts_live_apart", contacts_live_apart },
                 { "tubes_touching_cells", tubes_touched },
                 { "distinct_cells_visited", distinct_cells_visited },
                 { "distinct_cell_offsets_read", distinct_offsets_read },
                 { "cells_touching_tubes", cells_touched },
                 { "tube_list_entries", tube_list_entries },
                 { "tube_list_rewrites", tube_list_rewrites } };
    }
};

template <class Scalar>
TubeCensus census_tubes( const exec_space& exec, const Model<Scalar>& m )
{
    TubeCensus k;
    const int n = m.num_cells(), mt = m.num_tubes();
    k.m = mt;
    k.n = n;
    k.cell_grid_cells = m.grid().num_cells();
    k.tube_count_extent = double( m.workspace().tube_count.extent( 0 ) );
    const auto p = m.parameters();
    const auto c = angio::detail::Constants<Scalar>::make( p, m.box(), p.exchange.max_contacts );
    const auto ht = m.tubes().to_host();

    // Blood flow: the chains.
    std::vector<char> is_parent( mt, 0 );
    for ( int i = 0; i < mt; ++i )
    {
        if ( ht.parent[i] >= 0 )
        {
            ++k.children;
            is_parent[ht.parent[i]] = 1;
        }
        for ( int q = ht.parent[i]; q >= 0; q = ht.parent[q] )
            ++k.chain_steps;
    }
    for ( char f : is_parent )
        k.parents += f;

    // Tube-tube: a tube grid like the model's (same box, the model's reach, same midpoints), walked by the
    // census.
    const Scalar reach = m.tube_reach();
    morula::grid::UniformGrid<Scalar, mem_space> tube_grid( m.box(), reach, morula::grid::GridOptions{} );
    k.tube_grid_cells = tube_grid.num_cells();
    if ( mt > 0 )
    {
        tube_grid.build( exec, m.workspace().midpoints, mt );
        const auto tq = tube_grid.query( m.workspace().midpoints );
        const TubeTubeCensus<Scalar, decltype( tq )> tc{ tq, m.tubes_view(), reach };
        const auto t = run_census( "angio_benchmark::tube_tube_census", mt, tc );
        k.queries = double( t.v[0] );
        k.rows_valid = double( t.v[1] );
        k.rows_scanned = double( t.v[2] );
        k.candidates = double( t.v[3] );
        k.within = double( t.v[4] );
        k.touching = double( t.v[5] );
        k.touching_apart = double( t.v[6] );
        const long long contacts = sum_of( first_n_to_host( m.tubes().contacts(), mt ) );
        if ( double( contacts ) != k.touching )
            std::printf( "warning: tube census found %.0f touching tube sides, the kernel %lld\n", k.touching,
                         contacts );
    }

    // Tube-cell (Algorithm 5) and cell-tube (Algorithm 6).
    const auto query = m.grid().query( m.cells().positions() );
    k.cells_sorted = query.data_sorted();
    Kokkos::View<int*, mem_space> cell_seen( "angio_benchmark::cell_seen", std::max( n, 1 ) );
    Kokkos::View<int*, mem_space> offset_seen( "angio_benchmark::offset_seen", m.grid().num_cells() + 1 );
    const TubeCellCensus<Scalar, decltype( query )> tc{ query, m.cells_view(), m.tubes_view(), c, cell_seen,
                                                        offset_seen };
    const auto t = run_census( "angio_benchmark::tube_cell_census", mt, tc );
    k.visited = double( t.v[0] );
    k.contacts = double( t.v[1] );
    k.contacts_overlap = double( t.v[2] );
    k.contacts_live = double( t.v[3] );
    k.contacts_live_apart = double( t.v[4] );
    k.tubes_touched = double( t.v[5] );
    k.distinct_cells_visited = double( count_flags( cell_seen, n ) );
    k.distinct_offsets_read = double( count_flags( offset_seen, m.grid().num_cells() + 1 ) );
    const auto per_cell = first_n_to_host( m.workspace().tube_count, n );
    for ( const long long v : per_cell )
    {
        const long long kept = std::min<long long>( v, p.max_tubes_per_cell );
        k.cells_touched += v > 0 ? 1 : 0;
        k.tube_list_entries += double( kept );
        k.tube_list_rewrites += double( kept > 1 ? kept - 1 : 0 ); // Algorithm 6's insertion sort writes slots 1..k-1
    }
    if ( double( sum_of( per_cell ) ) != k.contacts )
        std::printf( "warning: tube-cell census found %.0f contacts, the kernel %lld\n", k.contacts,
                     sum_of( per_cell ) );
    return k;
}

} // namespace angio_bench

#endif
