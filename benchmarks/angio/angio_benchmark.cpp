// The tumour growth and angiogenesis model of seed 001 (Worecki and Wcisło 2012) timed as in its section 4,
// phase by phase, on Kokkos::DefaultExecutionSpace and its memory space.
//
//   angio_benchmark --case cellcell [--cells 1e4,1e5,1e6] [--volume-fraction 0.5] [--sweeps 64]
//     The paper's random input without tubes: N Mature cells of radius 5 um at uniform random positions
//     in a closed cube sized for the volume fraction, oxygen 1, uptake, TAF production and decay off,
//     sort_every 1. Timed: grid build + sort, grid build alone, cell-cell from both sides, cell-cell with
//     atomics, one exchange (1 sweep) and the exchange with --sweeps sweeps (seconds per sweep), motion.
//     Cell-cell also as interacting pairs per second (pairs counted once, outside timing, from the
//     contact counts) and the speed-up of both sides over atomics.
//   angio_benchmark --case tubecell [--cells 1e5] [--tubes 1000,2500,5000,9996] [--max-tubes-per-cell 64]
//     The paper's dense random tubes: the cells above plus M random inlet tubes (length 10-20 um, radius
//     3-5 um, inside the box). Timed: blood flow, tube grid + tube-tube, tube-cell + cell-tube
//     (Algorithms 5 and 6); the share of tube-tube in their sum (29% at 9996 tubes in the paper).
//   angio_benchmark --case whole [--cluster-radius 150] [--edge 800] [--steps 200] [--warmup-steps 20]
//     The whole simulation: a tumour cluster beside two straight vessels in a closed cube, default
//     parameters; per run the model is rebuilt from the same initial state, advanced --warmup-steps
//     untimed steps, then --steps steps with every phase fenced and timed (seconds per step per phase).
//   --case all runs the three. Common: [--precision float|double|both] [--runs 5] [--warmup 1]
//     [--seed 1] [--out results.json]. Phase timings: medians (and min, max) over --runs runs after
//     --warmup untimed runs, each between two fences of the execution space.
//   --roofline-suite: the roofline cases (issue #8): cellcell and tubecell at 1e6 cells and 1e5 tubes, float
//     and double, 16 exchange sweeps, 1 warm-up and 5 timed runs; options given explicitly override the preset.
//
// Roofline records (top-level "kernels" array): every timed phase of cellcell and tubecell with its bytes
// and flops counted from the algorithm (docs/roofline/lattice-and-angio.md). The data-dependent counts
// (stencil rows and candidates, pairs within reach, overlapping pairs, contacts, cells a tube visits) come
// from census kernels that walk the same stencils as the timed kernels, run outside the timed region.
#include "../common/Roofline.hpp"
#include <common/BenchmarkUtils.hpp>

#include <morula/angio/Angiogenesis.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/BuildInfo.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace
{
namespace angio = morula::angio;
namespace core = morula::core;
using morula::bench::Stats;
using exec_space = Kokkos::DefaultExecutionSpace;
using mem_space = exec_space::memory_space;

template <class Scalar>
using Model = angio::TumourAngiogenesis<Scalar, mem_space>;
template <class Scalar>
using Cells = angio::TumourCells<Scalar, mem_space>;
template <class Scalar>
using Tubes = angio::VesselTubes<Scalar, mem_space>;

constexpr double pi = 3.14159265358979323846;

struct Settings
{
    std::string which = "all";
    std::vector<int> cells;
    std::vector<int> tubes;
    int steps = 200;
    int warmup_steps = 20;
    int runs = 5;
    int warmup = 1;
    int sweeps = 64;
    std::string precision = "both";
    std::string out;
    double cell_radius = 5;
    double volume_fraction = 0.5;
    int max_tubes_per_cell = 64;
    double cluster_radius = 150;
    double edge = 800;
    double vessel_radius = 5;
    std::uint64_t seed = 1;
};

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

//! Edge of the cube in which n cells of radius r fill `fraction` of the volume.
double random_box_edge( int n, double r, double fraction )
{
    return std::cbrt( n * 4.0 / 3.0 * pi * r * r * r / fraction );
}

//! n Mature cells of radius r, oxygen 1, at uniform random positions in [0, edge)^3 (hashed RNG).
angio::HostCells random_cells( int n, double edge, double r, std::uint64_t seed )
{
    angio::HostCells h;
    const core::HashedRng rng( seed );
    for ( int i = 0; i < n; ++i )
    {
        const auto key = static_cast<std::uint64_t>( i );
        const double x[3] = { edge * rng.uniform<double>( key, 0, 0 ), edge * rng.uniform<double>( key, 1, 0 ),
                              edge * rng.uniform<double>( key, 2, 0 ) };
        h.add( x, r, 10.0, angio::cell_mature, 1.0, 0.0, i );
    }
    return h;
}

//! m inlet tubes: random direction, length 10-20 um, one radius 3-5 um, the midpoint at least 10 um from
//! every wall so that both ends lie inside the box.
angio::HostTubes random_tubes( int m, double edge, std::uint64_t seed )
{
    angio::HostTubes t;
    const core::HashedRng rng( seed ^ 0x7475626573ULL ); // other variates than the cells'
    for ( int i = 0; i < m; ++i )
    {
        const auto key = static_cast<std::uint64_t>( i );
        const double length = 10 + 10 * rng.uniform<double>( key, 0, 0 );
        const double radius = 3 + 2 * rng.uniform<double>( key, 1, 0 );
        const double z = 2 * rng.uniform<double>( key, 2, 0 ) - 1;
        const double phi = 2 * pi * rng.uniform<double>( key, 3, 0 );
        const double s = std::sqrt( std::max( 0.0, 1 - z * z ) );
        const double dir[3] = { s * std::cos( phi ), s * std::sin( phi ), z };
        double a[3], b[3];
        for ( int d = 0; d < 3; ++d )
        {
            const double mid = 10 + ( edge - 20 ) * rng.uniform<double>( key, 4 + d, 0 );
            a[d] = mid - 0.5 * length * dir[d];
            b[d] = mid + 0.5 * length * dir[d];
        }
        t.add( a, b, radius, radius, -1, 1.0, 0 );
    }
    return t;
}

//! The random-input parameters of the paper: no oxygen uptake (no hypoxia, no death), no TAF sources.
angio::AngioParameters random_input_parameters( const Settings& s )
{
    angio::AngioParameters p;
    p.exchange.oxygen_uptake = 0;
    p.exchange.taf_production = 0;
    p.exchange.taf_decay = 0;
    p.exchange.sweeps = 1;
    p.sort_every = 1;
    p.max_tubes_per_cell = s.max_tubes_per_cell;
    p.seed = s.seed;
    return p;
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

//! Reads the step counters (capacity overflows, negative concentrations throw), zeroes them again.
template <class Scalar>
void check_counters( const exec_space& exec, Model<Scalar>& m )
{
    angio::TumourAngiogenesisReport report;
    m.finish_step( exec, report );
    m.prepare_step( exec );
}

//! Every interaction phase once, untimed, so that grids, contact and tube lists are those of a step.
template <class Scalar>
void make_ready( const exec_space& exec, Model<Scalar>& m )
{
    m.prepare_step( exec );
    m.build_grid( exec );
    m.interact_cells( exec );
    m.update_blood_flow( exec );
    m.interact_tubes( exec );
    m.interact_tubes_and_cells( exec );
    check_counters( exec, m );
}

template <class View>
std::vector<long long> first_n_to_host( const View& v, int n )
{
    const auto h =
        Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), Kokkos::subview( v, std::make_pair( 0, n ) ) );
    std::vector<long long> out( n );
    for ( int i = 0; i < n; ++i )
        out[i] = static_cast<long long>( h( i ) );
    return out;
}

long long sum_of( const std::vector<long long>& v )
{
    long long s = 0;
    for ( auto x : v )
        s += x;
    return s;
}

long long max_of( const std::vector<long long>& v )
{
    long long s = 0;
    for ( auto x : v )
        s = x > s ? x : s;
    return s;
}

//! One result row: what was timed, where, and its statistics.
nlohmann::json record( const char* which, const char* precision, int cells, int tubes, const std::string& phase,
                       const Stats& t )
{
    nlohmann::json r = t.to_json();
    r["case"] = which;
    r["precision"] = precision;
    r["cells"] = cells;
    r["tubes"] = tubes;
    r["phase"] = phase;
    return r;
}

void print_header()
{
    std::printf( "%-9s %-6s %8s %6s  %-26s %12s %12s %12s  %s\n", "case", "prec", "cells", "tubes", "phase",
                 "median ms", "min ms", "max ms", "notes" );
}

void print_row( const char* which, const char* precision, int cells, int tubes, const std::string& phase,
                const Stats& t, const std::string& notes = "" )
{
    std::printf( "%-9s %-6s %8d %6d  %-26s %12.4f %12.4f %12.4f  %s\n", which, precision, cells, tubes,
                 phase.c_str(), 1e3 * t.median(), 1e3 * t.min(), 1e3 * t.max(), notes.c_str() );
    std::fflush( stdout );
}

std::string format( const char* fmt, double a, double b = 0, double c = 0 )
{
    char buf[256];
    std::snprintf( buf, sizeof buf, fmt, a, b, c );
    return buf;
}

// ---------------------------------------------------------------------------------------------
// Roofline counts (issue #8): census kernels and the byte and flop formulas of every timed phase
// ---------------------------------------------------------------------------------------------

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
        const CountingSource<Scalar, typename Query::template GlobalSource<true, false>> src{ { q }, &rows_scanned,
                                                                                              &slots };
        q.template visit_stencil<false>( i, xi, yi, zi, r2max, src, f );
    }
    else
    {
        const CountingSource<Scalar, typename Query::template GlobalSource<false, false>> src{ { q }, &rows_scanned,
                                                                                               &slots };
        q.template visit_stencil<false>( i, xi, yi, zi, r2max, src, f );
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
  and the cell offsets read, so that each counts once.
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
        Scalar a[3], b[3];
        t.ends( i, a, b );
        const Scalar rmax = t.ra( i ) > t.rb( i ) ? t.ra( i ) : t.rb( i );
        const Scalar reach = ( Scalar( 1 ) + c.range ) * ( c.division_radius + rmax );
        int lo[3], hi[3];
        for ( int d = 0; d < 3; ++d )
        {
            lo[d] = geom.cell_coordinate( d, ( a[d] < b[d] ? a[d] : b[d] ) - reach );
            hi[d] = geom.cell_coordinate( d, ( a[d] > b[d] ? a[d] : b[d] ) + reach );
        }
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

    // Tube-tube: a tube grid like the model's (same box, same reach as TumourAngiogenesis::check_inputs
    // computes it, same midpoints), walked by the census.
    double rmax = p.vessels.sprout_radius, lmax = 0;
    for ( int i = 0; i < mt; ++i )
    {
        rmax = std::max( { rmax, ht.radius_a[i], ht.radius_b[i] } );
        double l2 = 0;
        for ( int d = 0; d < 3; ++d )
            l2 += ( ht.end_b[3 * i + d] - ht.end_a[3 * i + d] ) * ( ht.end_b[3 * i + d] - ht.end_a[3 * i + d] );
        lmax = std::max( lmax, std::sqrt( l2 ) );
    }
    const double grown = p.vessels.max_tube_length + p.vessels.tip_speed * p.time_step;
    const auto reach = static_cast<Scalar>( std::max( grown, lmax ) + 2 * rmax );
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

// The formulas. S = sizeof(Scalar); N cells, C grid cells, M tubes. Every array element a kernel launch
// touches counts once per launch (reads from cache within a launch are free, nothing is assumed to
// survive in cache between launches); docs/roofline/lattice-and-angio.md derives each term.
using morula::bench::WorkCount;

template <class Scalar>
WorkCount make_work( double bytes, double flops, const std::string& basis )
{
    WorkCount w;
    w.bytes = bytes;
    w.flops = flops;
    w.precision = morula::bench::precision_name<Scalar>();
    w.basis = basis;
    return w;
}

//! UniformGrid::build: positions read (3S N), cell keys written then read (4N + 4N), (key, index) pairs
//! written then read (8N + 8N), permutation written (4N), cell offsets written (4C); cell_coordinate 3
//! flops per axis.
template <class Scalar>
double grid_build_bytes( double n, double cells )
{
    return ( 3.0 * sizeof( Scalar ) + 28.0 ) * n + 4.0 * cells;
}

template <class Scalar>
WorkCount work_build_grid( const CellCensus& k, bool sort )
{
    const double S = sizeof( Scalar );
    double bytes = grid_build_bytes<Scalar>( k.n, k.grid_cells );
    std::string basis = "grid build (3S+28) N + 4 C; 9 flops per cell (cell coordinates)";
    if ( sort )
    {
        // 11 fields gathered: read (15S + 12) N, write (15S + 12) N, the permutation read by each gather.
        bytes += ( 2.0 * ( 15.0 * S + 12.0 ) + 11.0 * 4.0 ) * k.n;
        basis += "; + permute of 11 cell fields (30S + 68) N";
    }
    return make_work<Scalar>( bytes, 9.0 * k.n, basis );
}

//! Flops of the stencil walk shared by every grid query: 31 per query (radius^2, 3 cell coordinates,
//! 3 face distances), 3 per existing row (row distance), 4 per scanned row (left/right tests), 8 per
//! candidate (3 differences, squared distance).
inline double stencil_flops( double queries, double rows_valid, double rows_scanned, double candidates )
{
    return 31.0 * queries + 3.0 * rows_valid + 4.0 * rows_scanned + 8.0 * candidates;
}

template <class Scalar>
WorkCount work_cell_cell( const CellCensus& k, bool atomic )
{
    const double S = sizeof( Scalar );
    const double lists = ( 4.0 + S ) * k.listed; // contact index + conductance written per entry
    const double stencil = stencil_flops( k.queries, k.rows_valid, k.rows_scanned, k.candidates );
    if ( !atomic )
    {
        const double bytes = ( 8.0 + 8.0 * S ) * k.n + 4.0 * k.grid_cells + lists;
        const double flops = stencil + 4.0 * k.within + 11.0 * k.inter_overlap + 13.0 * k.inter_apart +
                             6.0 * k.live_overlap + 9.0 * k.live_apart + 3.0 * k.n;
        return make_work<Scalar>( bytes, flops,
                                  "(8+8S) N + 4 C + (4+S) contact entries; stencil + 4/neighbour in reach + "
                                  "11|13 per interacting side + 6|9 per live contact + 3/cell" );
    }
    // Reset (4S+4) N, main: reads (4+4S) N, atomics RMW forces, pressure, counts 2 (4S+4) N; finish (3S+4) N.
    const double bytes = ( 19.0 * S + 20.0 ) * k.n + 4.0 * k.grid_cells + lists;
    const double flops = stencil + 0.5 * ( 4.0 * k.within + 15.0 * k.inter_overlap + 17.0 * k.inter_apart +
                                           6.0 * k.live_overlap + 9.0 * k.live_apart ) +
                         4.0 * k.queries + 3.0 * k.n;
    return make_work<Scalar>( bytes, flops,
                              "(19S+20) N + 4 C + (4+S) contact entries; stencil + per pair once: 4/neighbour in "
                              "reach + 15|17 per interacting pair + 6|9 per live contact; + 4/query + 3/cell" );
}

template <class Scalar>
WorkCount work_exchange( const CellCensus& k, int sweeps )
{
    const double S = sizeof( Scalar );
    // Pseudo-time steps: two reductions (oxygen, TAF) over states, counts, conductances, radii (+ supply rate).
    const double step_bytes = ( 4.0 * k.n + k.live * ( 4.0 + 2.0 * S ) + S * k.listed_live ) +
                              ( 4.0 * k.n + k.live * ( 4.0 + S ) + S * k.listed_live );
    const double step_flops = ( k.listed_live + 7.0 * k.live ) + ( k.listed_live + 6.0 * k.live );
    // One sweep: (4S+4) N for every cell, (3S+4) more per live cell, (4+S) per contact entry.
    const double sweep_bytes = ( 4.0 * S + 4.0 ) * k.n + ( 3.0 * S + 4.0 ) * k.live + ( 4.0 + S ) * k.listed_live;
    const double sweep_flops = 21.0 * k.live + 6.0 * k.listed_live;
    const double copy_back = sweeps % 2 == 1 ? 4.0 * S * k.n : 0.0;
    return make_work<Scalar>( step_bytes + sweeps * sweep_bytes + copy_back, step_flops + sweeps * sweep_flops,
                              "2 rate reductions + " + std::to_string( sweeps ) +
                                  " x sweep ((4S+4) N + (3S+4) N_live + (4+S) entries; 21/live cell + 6/entry)" +
                                  ( sweeps % 2 == 1 ? " + copy back 4S N" : "" ) );
}

template <class Scalar>
WorkCount work_move( const CellCensus& k )
{
    const double S = sizeof( Scalar );
    return make_work<Scalar>( 4.0 * k.n + 18.0 * S * k.present, 26.0 * k.present + 4.0 * k.wall_sides,
                              "4 N states + 18S per cell (x, f, pressure read+written, v written, r read); "
                              "26 flops/cell + 4 per wall side" );
}

template <class Scalar>
WorkCount work_blood_flow( const TubeCensus& k )
{
    const double S = sizeof( Scalar );
    const double bytes = ( 24.0 + 9.0 * S ) * k.m + 3.0 * S * k.children + 16.0 * k.parents;
    const double flops = 4.0 * k.children + 14.0 * k.m + 17.0 * k.chain_steps;
    return make_work<Scalar>( bytes, flops,
                              "(24+9S) M + 3S per child + 16 per parent; 14/tube + 4/child + 17/chain step "
                              "(Murray weights in double)" );
}

template <class Scalar>
WorkCount work_tube_tube( const TubeCensus& k )
{
    const double S = sizeof( Scalar );
    const double bytes = 9.0 * S * k.m + grid_build_bytes<Scalar>( k.m, k.tube_grid_cells ) +
                         ( 14.0 * S + 16.0 ) * k.m + 4.0 * k.tube_grid_cells;
    const double flops = 6.0 * k.m + 9.0 * k.m +
                         stencil_flops( k.queries, k.rows_valid, k.rows_scanned, k.candidates ) + 73.0 * k.within +
                         1.0 * k.touching + 30.0 * k.touching_apart;
    return make_work<Scalar>( bytes, flops,
                              "midpoints 9S M + tube grid build + tube-tube (14S+16) M + 4 C_t; 6+9 per tube + "
                              "stencil + 73 per unlinked pair side in reach + 1 (+30) per touching side" );
}

template <class Scalar>
WorkCount work_tube_cell( const TubeCensus& k )
{
    const double S = sizeof( Scalar );
    const double zero = 4.0 * k.tube_count_extent;
    const double alg5 = 21.0 * S * k.m + 4.0 * k.distinct_offsets_read +
                        ( 4.0 + 4.0 * S + ( k.cells_sorted ? 0.0 : 4.0 ) ) * k.distinct_cells_visited +
                        ( 2.0 * S + 8.0 ) * k.cells_touched + 4.0 * k.tube_list_entries;
    const double alg6 = ( 8.0 + 14.0 * S ) * k.n + 4.0 * ( k.tube_list_entries + k.tube_list_rewrites ) +
                        10.0 * S * k.tubes_touched;
    const double flops5 = 32.0 * k.m + 43.0 * k.visited + 9.0 * k.contacts_overlap + 24.0 * k.contacts_live +
                          3.0 * k.contacts_live_apart;
    const double flops6 = 7.0 * k.n + 41.0 * k.contacts + 12.0 * k.contacts_overlap + 13.0 * k.contacts_live +
                          3.0 * k.contacts_live_apart;
    return make_work<Scalar>( zero + alg5 + alg6, flops5 + flops6,
                              "zero counts 4 x extent; Alg. 5: 21S M + offsets + (4+4S) per distinct cell visited + "
                              "(2S+8) per cell touched + 4/list entry; Alg. 6: (8+14S) N + 4/entry + 4/entry "
                              "re-written by the sort + 10S per tube touched; flops 32/tube + 43/visit + contact "
                              "terms, 7/cell + 41/entry + contact terms" );
}

// ---------------------------------------------------------------------------------------------
// cellcell: the random input without tubes
// ---------------------------------------------------------------------------------------------

//! Appends one roofline record and prints its figures.
void add_kernel( nlohmann::json& kernels, const std::string& name, const WorkCount& w, const Stats& t,
                 const nlohmann::json& parameters )
{
    kernels.push_back( morula::bench::kernel_record( "angio", name, w, t, parameters ) );
    const auto& r = kernels.back();
    std::printf( "    roofline %-26s %10.4f ms  %9.3e B  %9.3e flop  AI %6.3f  %8.2f GB/s  %8.2f GFLOP/s\n",
                 name.c_str(), 1e3 * t.median(), w.bytes, w.flops, r["arithmetic_intensity"].get<double>(),
                 r["gbytes_per_s"].get<double>(), r["gflops_per_s"].get<double>() );
    std::fflush( stdout );
}

template <class Scalar>
void cellcell( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows,
               nlohmann::json& kernels )
{
    const char* which = "cellcell";
    for ( const int n : s.cells )
    {
        const double edge = random_box_edge( n, s.cell_radius, s.volume_fraction );
        const auto host = random_cells( n, edge, s.cell_radius, s.seed );
        const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( edge ), core::Boundary::closed );
        std::optional<Model<Scalar>> m;
        auto build = [&]( bool atomic, int sweeps, int sort_every ) {
            m.reset(); // free the previous model before allocating the next
            auto p = random_input_parameters( s );
            p.atomic_cell_cell = atomic;
            p.exchange.sweeps = sweeps;
            p.sort_every = sort_every;
            m.emplace( Cells<Scalar>( host ), Tubes<Scalar>( angio::HostTubes{} ), box, p );
            make_ready( exec, *m );
        };
        auto add = [&]( const std::string& phase, const Stats& t, nlohmann::json extra = nlohmann::json::object(),
                        const std::string& notes = "" ) {
            print_row( which, precision, n, 0, phase, t, notes );
            nlohmann::json r = record( which, precision, n, 0, phase, t );
            r["box_edge_um"] = edge;
            r["volume_fraction"] = s.volume_fraction;
            r.update( extra );
            rows.push_back( r );
        };

        // Model A: both sides, one sweep, sorted at every build. Its data are in grid order after the
        // first build, as they are (nearly) in a running simulation.
        build( false, 1, 1 );
        const Stats grid_sort = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->build_grid( exec ); } );
        m->interact_cells( exec );
        const Stats both = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->interact_cells( exec ); } );
        const auto counts = first_n_to_host( m->workspace().contact_count, n );
        const long long pairs = sum_of( counts ) / 2; // every contact is listed by both of its cells
        const long long max_contacts = max_of( counts );
        // Roofline counts of this state (cells in grid order, contacts listed), outside the timed runs.
        // The atomic and the many-sweep models below start from the same cells: the same pairs and contacts.
        const CellCensus census = census_cells( *m );
        m->interact_tubes_and_cells( exec ); // vessel supply 0 without tubes
        const Stats ex1 = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->exchange( exec ); } );
        check_counters( exec, *m );
        // Motion from the same positions and forces every run (it moves the cells and adds wall forces).
        using vector_view = typename Cells<Scalar>::vector_view;
        vector_view saved( "saved_positions", m->cells().positions().extent( 0 ) );
        Kokkos::deep_copy( exec, saved, m->cells().positions() );
        const Stats motion = morula::bench::time_phase(
            exec, s.warmup, s.runs,
            [&] {
                Kokkos::deep_copy( exec, m->cells().positions(), saved );
                m->interact_cells( exec );
            },
            [&] { m->move( exec ); } );
        saved = vector_view();

        // Model B: atomics (pairs once, j > i).
        build( true, 1, 1 );
        const Stats atomic = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->interact_cells( exec ); } );
        const long long pairs_atomic = sum_of( first_n_to_host( m->workspace().contact_count, n ) ) / 2;

        // Model C: `sweeps` sweeps, sorted only at its first build (so its later builds only bin).
        build( false, s.sweeps, 1 << 30 );
        const Stats grid_only = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->build_grid( exec ); } );
        m->interact_cells( exec );
        m->interact_tubes_and_cells( exec );
        const Stats exS = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->exchange( exec ); } );
        check_counters( exec, *m );
        m.reset();

        if ( pairs_atomic != pairs )
            std::printf( "warning: %d cells: %lld contact pairs from both sides, %lld with atomics\n", n, pairs,
                         pairs_atomic );
        const double per_cell = 2.0 * pairs / n;
        add( "grid_build_sort", grid_sort, { { "sorted", true } }, "cells already in grid order" );
        add( "grid_build", grid_only, { { "sorted", false } }, "binning only" );
        add( "cell_cell_both_sides", both,
             { { "pairs", pairs },
               { "contacts_per_cell", per_cell },
               { "max_contacts_per_cell", max_contacts },
               { "pairs_per_s", pairs / both.median() } },
             format( "%.3g pairs/s, %.1f contacts/cell", pairs / both.median(), per_cell ) );
        add( "cell_cell_atomic", atomic,
             { { "pairs", pairs_atomic },
               { "pairs_per_s", pairs_atomic / atomic.median() },
               { "speedup_both_sides_vs_atomic", atomic.median() / both.median() } },
             format( "%.3g pairs/s; speed-up both sides vs atomics %.2fx", pairs_atomic / atomic.median(),
                     atomic.median() / both.median() ) );
        add( "exchange_1_sweep", ex1, { { "sweeps", 1 } }, "pseudo-time steps + 1 sweep" );
        // Per sweep: the whole exchange over its sweeps, and the marginal cost of a sweep (without the
        // two reductions that find the pseudo-time steps).
        const double per_sweep = exS.median() / s.sweeps;
        const double marginal = s.sweeps > 1 ? ( exS.median() - ex1.median() ) / ( s.sweeps - 1 ) : per_sweep;
        add( "exchange_" + std::to_string( s.sweeps ) + "_sweeps", exS,
             { { "sweeps", s.sweeps }, { "seconds_per_sweep", per_sweep }, { "marginal_seconds_per_sweep", marginal } },
             format( "%.4f ms/sweep (marginal %.4f ms)", 1e3 * per_sweep, 1e3 * marginal ) );
        add( "motion", motion );

        nlohmann::json par = { { "case", which },
                               { "cells", n },
                               { "box_edge_um", edge },
                               { "volume_fraction", s.volume_fraction },
                               { "census", census.to_json() } };
        add_kernel( kernels, "build_grid_sort", work_build_grid<Scalar>( census, true ), grid_sort, par );
        add_kernel( kernels, "build_grid", work_build_grid<Scalar>( census, false ), grid_only, par );
        add_kernel( kernels, "interact_cells", work_cell_cell<Scalar>( census, false ), both, par );
        add_kernel( kernels, "interact_cells_atomic", work_cell_cell<Scalar>( census, true ), atomic, par );
        nlohmann::json par1 = par;
        par1["sweeps"] = 1;
        add_kernel( kernels, "exchange_1_sweep", work_exchange<Scalar>( census, 1 ), ex1, par1 );
        nlohmann::json parS = par;
        parS["sweeps"] = s.sweeps;
        add_kernel( kernels, "exchange", work_exchange<Scalar>( census, s.sweeps ), exS, parS );
        add_kernel( kernels, "move", work_move<Scalar>( census ), motion, par );
    }
}

// ---------------------------------------------------------------------------------------------
// tubecell: the random input with dense random tubes
// ---------------------------------------------------------------------------------------------

template <class Scalar>
void tubecell( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows,
               nlohmann::json& kernels )
{
    const char* which = "tubecell";
    for ( const int n : s.cells )
        for ( const int mt : s.tubes )
        {
            const double edge = random_box_edge( n, s.cell_radius, s.volume_fraction );
            const auto host = random_cells( n, edge, s.cell_radius, s.seed );
            const auto host_tubes = random_tubes( mt, edge, s.seed );
            const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( edge ), core::Boundary::closed );
            std::optional<Model<Scalar>> m;
            int width = s.max_tubes_per_cell;
            for ( ;; )
            {
                try
                {
                    m.reset();
                    auto p = random_input_parameters( s );
                    p.max_tubes_per_cell = width;
                    m.emplace( Cells<Scalar>( host ), Tubes<Scalar>( host_tubes ), box, p );
                    make_ready( exec, *m );
                    break;
                }
                catch ( const core::CapacityError& e )
                {
                    if ( 2 * width > 1024 )
                        throw;
                    std::printf( "  %s; retrying with max_tubes_per_cell = %d\n", e.what(), 2 * width );
                    width *= 2;
                }
            }
            const Stats flow =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->update_blood_flow( exec ); } );
            const Stats tube_tube =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->interact_tubes( exec ); } );
            const Stats tube_cell =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { m->interact_tubes_and_cells( exec ); } );
            check_counters( exec, *m );
            const auto per_cell = first_n_to_host( m->workspace().tube_count, n );
            const long long cell_tube_contacts = sum_of( per_cell );
            const long long max_per_cell = max_of( per_cell );
            const long long tube_pairs = sum_of( first_n_to_host( m->tubes().contacts(), mt ) ) / 2;
            const TubeCensus census = census_tubes( exec, *m ); // roofline counts, outside the timed runs
            m.reset();

            const double total = flow.median() + tube_tube.median() + tube_cell.median();
            const double share = tube_tube.median() / total;
            auto add = [&]( const std::string& phase, const Stats& t, nlohmann::json extra, const std::string& notes ) {
                print_row( which, precision, n, mt, phase, t, notes );
                nlohmann::json r = record( which, precision, n, mt, phase, t );
                r["box_edge_um"] = edge;
                r["max_tubes_per_cell"] = width;
                r.update( extra );
                rows.push_back( r );
            };
            add( "blood_flow", flow, nlohmann::json::object(), "" );
            add( "tube_grid_and_tube_tube", tube_tube,
                 { { "touching_tube_pairs", tube_pairs }, { "share_of_tube_phases", share } },
                 format( "%.1f%% of the tube phases, %.0f touching tube pairs", 100 * share, double( tube_pairs ) ) );
            add( "tube_cell_alg5_alg6", tube_cell,
                 { { "cell_tube_contacts", cell_tube_contacts }, { "max_tubes_of_a_cell", max_per_cell } },
                 format( "%.0f cell-tube contacts, at most %.0f per cell (list width %.0f)",
                         double( cell_tube_contacts ), double( max_per_cell ), double( width ) ) );
            // The sum of the three medians (not a separately timed run).
            Stats sum;
            sum.samples = { total };
            nlohmann::json r = record( which, precision, n, mt, "tube_phases_total", sum );
            r["note"] = "sum of the medians of blood_flow, tube_grid_and_tube_tube and tube_cell_alg5_alg6";
            r["tube_tube_share"] = share;
            r["max_tubes_per_cell"] = width;
            rows.push_back( r );
            print_row( which, precision, n, mt, "tube_phases_total", sum,
                       format( "sum of medians; tube-tube %.1f%% (paper: 29%% at 9996 tubes)", 100 * share ) );

            const nlohmann::json par = { { "case", which },
                                         { "cells", n },
                                         { "tubes", mt },
                                         { "box_edge_um", edge },
                                         { "volume_fraction", s.volume_fraction },
                                         { "max_tubes_per_cell", width },
                                         { "census", census.to_json() } };
            add_kernel( kernels, "update_blood_flow", work_blood_flow<Scalar>( census ), flow, par );
            add_kernel( kernels, "interact_tubes", work_tube_tube<Scalar>( census ), tube_tube, par );
            add_kernel( kernels, "interact_tubes_and_cells", work_tube_cell<Scalar>( census ), tube_cell, par );
        }
}

// ---------------------------------------------------------------------------------------------
// whole: the full model, a tumour beside two vessels
// ---------------------------------------------------------------------------------------------

struct WholeInput
{
    angio::HostCells cells;
    angio::HostTubes tubes;
    angio::AngioParameters params;
    double vessel_offset;
};

//! A cluster at the centre of the cube; two vessels along y at x = centre -+ 0.75 R, z = centre, running
//! through the tumour's outer shell from wall to wall.
WholeInput whole_input( const Settings& s )
{
    WholeInput in;
    in.params.seed = s.seed;
    const double c = 0.5 * s.edge;
    angio::ClusterSpec spec;
    spec.centre[0] = spec.centre[1] = spec.centre[2] = c;
    spec.radius = s.cluster_radius;
    spec.seed = s.seed;
    angio::add_cluster( in.cells, spec );
    in.vessel_offset = 0.75 * s.cluster_radius;
    for ( const double x : { c - in.vessel_offset, c + in.vessel_offset } )
        in.tubes.add_vessel( { x, 0, c, x, s.edge, c }, s.vessel_radius, in.params.vessels.max_tube_length,
                             "angio_benchmark" );
    return in;
}

//! Cells per state, the range of oxygen and TAF, and the sprouted tubes: one copy to the host.
template <class Scalar>
nlohmann::json describe( const Model<Scalar>& m )
{
    const auto c = m.cells().to_host();
    const auto t = m.tubes().to_host();
    long long states[5] = { 0, 0, 0, 0, 0 };
    double o_min = 1e300, o_max = 0, o_sum = 0, taf_max = 0;
    for ( std::size_t i = 0; i < c.size(); ++i )
    {
        ++states[std::min( std::max( c.state[i], 0 ), 4 )];
        o_min = std::min( o_min, c.oxygen[i] );
        o_max = std::max( o_max, c.oxygen[i] );
        o_sum += c.oxygen[i];
        taf_max = std::max( taf_max, c.taf[i] );
    }
    long long sprouted = 0;
    double sensed_max = 0;
    for ( std::size_t i = 0; i < t.size(); ++i )
    {
        sprouted += ( t.flags[i] & angio::tube_sprouted ) ? 1 : 0;
        sensed_max = std::max( sensed_max, t.taf[i] );
    }
    return { { "new", states[angio::cell_new] },
             { "mature", states[angio::cell_mature] },
             { "hypoxic", states[angio::cell_hypoxic] },
             { "dead", states[angio::cell_dead] },
             { "oxygen_min", c.size() ? o_min : 0.0 },
             { "oxygen_mean", c.size() ? o_sum / c.size() : 0.0 },
             { "oxygen_max", o_max },
             { "taf_max", taf_max },
             { "tube_taf_sensed_max", sensed_max },
             { "sprouted_tubes", sprouted } };
}

template <class Scalar>
void whole( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows )
{
    const char* which = "whole";
    const WholeInput in = whole_input( s );
    const int n0 = static_cast<int>( in.cells.size() ), m0 = static_cast<int>( in.tubes.size() );
    const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( s.edge ), core::Boundary::closed );
    // The model's phases in its order, then their sum.
    std::vector<std::string> names;
    std::vector<Stats> per_phase;
    Stats wall;
    std::vector<int> final_cells, final_tubes;
    long long divisions = 0, sprouts = 0, anastomoses = 0;
    nlohmann::json final_state; // of the last run: what the model was doing, for reading the timings
    for ( int r = 0; r < s.runs; ++r )
    {
        Model<Scalar> m( Cells<Scalar>( in.cells ), Tubes<Scalar>( in.tubes ), box, in.params );
        for ( int k = 0; k < s.warmup_steps; ++k )
            m.step( exec );
        m.reset_times();
        exec.fence();
        const auto t0 = std::chrono::steady_clock::now();
        for ( int k = 0; k < s.steps; ++k )
            m.step( exec, true );
        exec.fence();
        const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        const auto& t = m.times();
        if ( names.empty() )
        {
            for ( int p = 0; p < t.num_phases(); ++p )
                names.push_back( t.phase_name( p ) );
            names.push_back( "total" );
            per_phase.resize( names.size() );
        }
        for ( int p = 0; p < t.num_phases(); ++p )
            per_phase[p].samples.push_back( t.seconds( p ) / s.steps );
        per_phase.back().samples.push_back( t.total() / s.steps );
        wall.samples.push_back( seconds / s.steps );
        final_cells.push_back( m.num_cells() );
        final_tubes.push_back( m.num_tubes() );
        divisions = m.divisions();
        sprouts = m.sprouts();
        anastomoses = m.anastomoses();
        if ( r == s.runs - 1 )
            final_state = describe( m );
    }
    bool same = true;
    for ( int r = 1; r < s.runs; ++r )
        same = same && final_cells[r] == final_cells[0] && final_tubes[r] == final_tubes[0];
    if ( !same )
        std::printf( "warning: runs from the same initial state ended with different cell or tube counts\n" );
    auto extra = [&]( nlohmann::json& r ) {
        r["unit"] = "seconds per step";
        r["steps"] = s.steps;
        r["warmup_steps"] = s.warmup_steps;
        r["cluster_radius_um"] = s.cluster_radius;
        r["box_edge_um"] = s.edge;
        r["vessel_radius_um"] = s.vessel_radius;
        r["vessel_offset_um"] = in.vessel_offset;
        r["final_cells"] = final_cells.back();
        r["final_tubes"] = final_tubes.back();
        r["final_counts_equal_across_runs"] = same;
        r["final_state_last_run"] = final_state;
    };
    const double total = per_phase.back().median();
    for ( std::size_t p = 0; p < names.size(); ++p )
    {
        nlohmann::json r = record( which, precision, n0, m0, names[p], per_phase[p] );
        extra( r );
        r["share_of_total"] = per_phase[p].median() / total;
        rows.push_back( r );
        print_row( which, precision, n0, m0, std::string( names[p] ) + " /step", per_phase[p],
                   format( "%.1f%%", 100 * per_phase[p].median() / total ) );
    }
    nlohmann::json r = record( which, precision, n0, m0, "wall", wall );
    extra( r );
    r["steps_per_s"] = 1 / wall.median();
    r["divisions_last_run"] = divisions;
    r["sprouts_last_run"] = sprouts;
    r["anastomoses_last_run"] = anastomoses;
    r["note"] = "wall clock of the timed steps (every phase fenced) per step";
    rows.push_back( r );
    print_row( which, precision, n0, m0, "wall /step", wall,
               format( "%.1f steps/s; final %.0f cells, %.0f tubes", 1 / wall.median(), double( final_cells.back() ),
                       double( final_tubes.back() ) ) );
    std::printf( "%-9s %-6s after %d + %d steps (last run): %lld divisions, %lld sprouts, %lld anastomoses; %s\n",
                 which, precision, s.warmup_steps, s.steps, divisions, sprouts, anastomoses, final_state.dump().c_str() );
    std::fflush( stdout );
}

std::vector<int> parse_sizes( const std::string& list, const char* option )
{
    std::vector<int> out;
    std::stringstream ss( list );
    for ( std::string item; std::getline( ss, item, ',' ); )
    {
        double v = 0;
        try
        {
            v = std::stod( item ); // accepts 1e5
        }
        catch ( const std::exception& )
        {
            throw CLI::ValidationError( option, "'" + item + "' is not a number" );
        }
        if ( !( v >= 1 && v <= 2e9 ) )
            throw CLI::ValidationError( option, "'" + item + "' is not a count in [1, 2e9]" );
        out.push_back( static_cast<int>( std::lround( v ) ) );
    }
    return out;
}

} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "Tumour growth and angiogenesis benchmarks (seed 001, section 4)" );
    Settings s;
    std::string cells, tubes;
    app.add_option( "--case", s.which, "cellcell, tubecell, whole or all" )
        ->check( CLI::IsMember( { "cellcell", "tubecell", "whole", "all" } ) );
    app.add_option( "--cells", cells, "comma-separated cell counts (cellcell: 1e4,1e5,1e6; tubecell: 1e5)" );
    app.add_option( "--tubes", tubes, "comma-separated tube counts (tubecell: 1000,2500,5000,9996)" );
    app.add_option( "--steps", s.steps, "whole: timed steps per run" )->check( CLI::Range( 1, 10000000 ) );
    app.add_option( "--warmup-steps", s.warmup_steps, "whole: untimed steps before the timed ones" )
        ->check( CLI::Range( 0, 10000000 ) );
    app.add_option( "--runs", s.runs, "timed runs" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--warmup", s.warmup, "untimed runs before the timed ones (cellcell, tubecell)" )
        ->check( CLI::Range( 0, 1000 ) );
    app.add_option( "--sweeps", s.sweeps, "cellcell: exchange sweeps of the per-sweep measurement" )
        ->check( CLI::Range( 1, 10000 ) );
    app.add_option( "--precision", s.precision, "float, double or both" )
        ->check( CLI::IsMember( { "float", "double", "both" } ) );
    app.add_option( "--volume-fraction", s.volume_fraction, "cellcell, tubecell: cell volume / box volume" )
        ->check( CLI::Range( 0.01, 2.0 ) );
    app.add_option( "--max-tubes-per-cell", s.max_tubes_per_cell, "tubecell: first list width (doubled on overflow)" )
        ->check( CLI::Range( 1, 1024 ) );
    app.add_option( "--cluster-radius", s.cluster_radius, "whole: tumour radius in um" )->check( CLI::Range( 10.0, 1e4 ) );
    app.add_option( "--edge", s.edge, "whole: cube edge in um" )->check( CLI::Range( 50.0, 1e5 ) );
    app.add_option( "--seed", s.seed, "of the random inputs and of the model" );
    app.add_option( "--out", s.out, "JSON results file" );
    bool suite = false;
    app.add_flag( "--roofline-suite", suite,
                  "roofline cases (issue #8): cellcell and tubecell at --cells 1e6 --tubes 1e5, float and double, "
                  "--sweeps 16 --warmup 1 --runs 5; options given explicitly override these" );
    CLI11_PARSE( app, argc, argv );
    if ( suite )
    {
        if ( app.count( "--case" ) )
        {
            std::fprintf( stderr, "--roofline-suite runs cellcell and tubecell; leave out --case\n" );
            return 1;
        }
        s.which = "roofline";
        if ( cells.empty() )
            cells = "1e6";
        if ( tubes.empty() )
            tubes = "1e5";
        if ( !app.count( "--precision" ) )
            s.precision = "both";
        if ( !app.count( "--runs" ) )
            s.runs = 5;
        if ( !app.count( "--warmup" ) )
            s.warmup = 1;
        if ( !app.count( "--sweeps" ) )
            s.sweeps = 16;
    }
    try
    {
        if ( !cells.empty() )
            s.cells = parse_sizes( cells, "--cells" );
        s.tubes = parse_sizes( tubes.empty() ? "1000,2500,5000,9996" : tubes, "--tubes" );
    }
    catch ( const CLI::Error& e )
    {
        return app.exit( e );
    }
    if ( s.which == "whole" || s.which == "all" )
        if ( !( s.edge >= 2 * ( s.cluster_radius + 10 ) ) )
        {
            std::fprintf( stderr, "--edge %g is too small for --cluster-radius %g\n", s.edge, s.cluster_radius );
            return 1;
        }

    exec_space exec;
    std::printf( "%s\n", morula::core::build_summary().c_str() );
    print_header();
    nlohmann::json results = nlohmann::json::array();
    nlohmann::json kernels = nlohmann::json::array();
    const bool all = s.which == "all";
    const bool roofline = s.which == "roofline";
    try
    {
        auto run = [&]( auto tag, const char* name ) {
            using Scalar = decltype( tag );
            if ( all || roofline || s.which == "cellcell" )
            {
                Settings c = s;
                if ( c.cells.empty() )
                    c.cells = { 10000, 100000, 1000000 };
                cellcell<Scalar>( exec, c, name, results, kernels );
            }
            if ( all || roofline || s.which == "tubecell" )
            {
                Settings c = s;
                if ( c.cells.empty() )
                    c.cells = { 100000 };
                tubecell<Scalar>( exec, c, name, results, kernels );
            }
            if ( all || s.which == "whole" )
                whole<Scalar>( exec, s, name, results );
        };
        if ( s.precision != "double" )
            run( float{}, "float" );
        if ( s.precision != "float" )
            run( double{}, "double" );
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "angio_benchmark: %s\n", e.what() );
        return 1;
    }
    if ( !s.out.empty() )
    {
        nlohmann::json settings = { { "case", s.which },
                                    { "cells", cells.empty() ? "default (cellcell 1e4,1e5,1e6; tubecell 1e5)" : cells },
                                    { "tubes", s.tubes },
                                    { "runs", s.runs },
                                    { "warmup_runs", s.warmup },
                                    { "steps", s.steps },
                                    { "warmup_steps", s.warmup_steps },
                                    { "sweeps", s.sweeps },
                                    { "precision", s.precision },
                                    { "cell_radius_um", s.cell_radius },
                                    { "volume_fraction", s.volume_fraction },
                                    { "max_tubes_per_cell", s.max_tubes_per_cell },
                                    { "cluster_radius_um", s.cluster_radius },
                                    { "edge_um", s.edge },
                                    { "vessel_radius_um", s.vessel_radius },
                                    { "seed", s.seed } };
        nlohmann::json j = { { "benchmark", "angio_benchmark" },
                             { "case", s.which },
                             { "machine", morula::bench::machine_info( exec ) },
                             { "settings", settings },
                             { "definition",
                               "phase times in seconds (median, min, max over runs, fenced); cellcell and tubecell: "
                               "one call of the phase per run; whole: seconds per step. pairs = interacting cell "
                               "pairs (exchange contacts / 2), counted once outside timing" },
                             { "results", results },
                             { "kernels", kernels } };
        morula::bench::write_json( s.out, j );
    }
    return 0;
}
