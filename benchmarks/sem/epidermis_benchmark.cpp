// The epidermis model of Christley et al. (2010) timed as in its Table 3.
//
//   epidermis_benchmark --case table3 [--cells 128,250,500,1000,5000] [--iterations 3000]
//                       [--precision float|double|both] [--boundary periodic|none|both] [--runs 3]
//                       [--out results.json]
//     For every cell count, model (movement; movement + gene network) and boundary (periodic; none):
//     a single layer of cells of 20 elements on the membrane, `iterations` RK2 steps, timed whole
//     (setup excluded), median over runs after one warm-up run.
//   epidermis_benchmark --case full [--cells 100,1000] [--iterations 130000]
//     The full model (growth and division) once per cell count and boundary, with the final cell count.
//   table3 and full run the steps through Epidermis::advance (chunks of steps replayed without the host;
//   --driver step: one step() call per step, as before issue #26) and report the element list's builds,
//   the cell-centre list's builds and the chunk statistics (chunks, failed chunks = rollbacks, wasted
//   steps, plain steps, graph records). --skin F sets SemParameters::skin_factor (default: the library's per backend, sem::default_skin_factor).
//   epidermis_benchmark --case force [--cells 5000] [--runs 20] [--settle 200]
//     The roofline kernels (issue #8) after `settle` steps of the movement model, per cell count, boundary
//     and precision: the force kernel alone (velocities of every element), the inter-cell Verlet list
//     build, and one step of the per-cell gene network (GeneCoupling), each with its bytes and flops
//     counted analytically from the algorithm and the run's own pair counts
//     (docs/roofline/ode-and-sem.md). They go to the result file's top-level "kernels" array.
//   epidermis_benchmark --roofline-suite [--quick]
//     --case force at the roofline suite's size: 5000 cells (100 000 elements), both boundaries, both
//     precisions, 100 settling steps, 5 runs; --quick: 128 cells, 20 settling steps, 2 runs.
//
// --space host runs on the default host execution space instead of the default execution space.
#include "../common/Roofline.hpp"

#include <morula/core/BuildInfo.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/UniformGrid.hpp>
#include <morula/sem/Epidermis.hpp>
#include <morula/sem/Initializers.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace
{
// The neighbour query's stencil walk, internal to the library (experiments and checks look inside it).
using QueryAccess = morula::grid::detail::QueryAccess;
namespace sem = morula::sem;
namespace grid = morula::grid;
namespace compat = morula::compat;
using morula::bench::Stats;
using morula::bench::WorkCount;

struct Settings
{
    std::string which = "table3";
    std::vector<int> cells;
    long iterations = 0;
    std::string precision = "both";
    std::string boundary = "both"; // periodic, none or both
    int runs = 3;
    int settle = 200;
    std::string out;
    std::string driver = "advance"; // advance or step
    double skin = 0; // 0: the library's default (SemParameters::skin_factor)
};

template <class Model, class Exec>
void run_steps( Model& m, const Exec& exec, long n, const Settings& s )
{
    if ( s.driver == "step" )
        for ( long i = 0; i < n; ++i )
            m.step( exec );
    else
        m.advance( exec, n );
}

template <class Model>
std::string chunk_summary( const Model& m )
{
    const auto& c = m.chunk_stats();
    char buf[256];
    std::snprintf( buf, sizeof buf,
                   "%lld cell-list builds, %lld chunks (%lld steps, %lld failed, %lld wasted), %lld plain steps, "
                   "%lld records",
                   m.genes().list_builds(), c.chunks, c.chunk_steps, c.failed, c.wasted, c.plain_steps, c.captures );
    return buf;
}

template <class Model>
nlohmann::json chunk_json( const Model& m )
{
    const auto& c = m.chunk_stats();
    return { { "cell_list_builds", m.genes().list_builds() }, { "chunks", c.chunks }, { "chunk_steps", c.chunk_steps },
             { "failed_chunks", c.failed },  { "wasted_steps", c.wasted }, { "plain_steps", c.plain_steps },
             { "records", c.captures } };
}

// The boundaries a case runs, in the order of the paper's Table 3 (no boundary first).
std::vector<bool> boundaries( const Settings& s )
{
    std::vector<bool> out;
    if ( s.boundary != "periodic" )
        out.push_back( false );
    if ( s.boundary != "none" )
        out.push_back( true );
    return out;
}

template <class Exec, class Scalar>
sem::Epidermis<Scalar, typename Exec::memory_space> make_model( int cells, bool periodic, sem::EpidermisModel model,
                                                                 double skin = 0 )
{
    sem::EpidermisParameters p;
    p.model = model;
    if ( skin > 0 )
        p.mechanics.skin_factor = skin;
    sem::MonolayerSpec spec;
    spec.cells = cells;
    spec.periodic = periodic;
    const auto layer = sem::monolayer<Scalar>( spec, p.mechanics );
    using Mem = typename Exec::memory_space;
    return sem::Epidermis<Scalar, Mem>( sem::Tissue<Scalar, Mem>( layer.tissue ), layer.box, p );
}

template <class Exec, class Scalar>
nlohmann::json table3( const Exec& exec, const Settings& s, const char* precision )
{
    using Mem = typename Exec::memory_space;
    nlohmann::json rows = nlohmann::json::array();
    for ( const int cells : s.cells )
        for ( const auto model : { sem::EpidermisModel::movement, sem::EpidermisModel::gene_network } )
            for ( const bool periodic : boundaries( s ) )
            {
                std::optional<sem::Epidermis<Scalar, Mem>> m;
                const Stats t = morula::bench::time_phase(
                    exec, 1, s.runs, [&] { m.emplace( make_model<Exec, Scalar>( cells, periodic, model, s.skin ) ); },
                    [&] { run_steps( *m, exec, s.iterations, s ); } );
                std::printf( "%-6s %5d cells %-12s %-8s %ld iterations (%s): median %.3f s (min %.3f, max %.3f), "
                             "%.1f us/step, %lld list builds, %s\n",
                             precision, cells, sem::to_string( model ), periodic ? "periodic" : "none",
                             s.iterations, s.driver.c_str(), t.median(), t.min(), t.max(),
                             1e6 * t.median() / s.iterations, m->mechanics().list_builds(),
                             chunk_summary( *m ).c_str() );
                std::fflush( stdout );
                nlohmann::json r = t.to_json();
                r["precision"] = precision;
                r["cells"] = cells;
                r["elements"] = cells * 20;
                r["model"] = sem::to_string( model );
                r["boundary"] = periodic ? "periodic" : "none";
                r["iterations"] = s.iterations;
                r["list_builds_last_run"] = m->mechanics().list_builds();
                r["driver"] = s.driver;
                r["skin_factor"] = *m->mechanics().parameters().skin_factor;
                r["chunks_last_run"] = chunk_json( *m );
                rows.push_back( r );
            }
    return rows;
}

template <class Exec, class Scalar>
nlohmann::json full( const Exec& exec, const Settings& s, const char* precision )
{
    nlohmann::json rows = nlohmann::json::array();
    for ( const int cells : s.cells )
        for ( const bool periodic : boundaries( s ) )
        {
            auto m = make_model<Exec, Scalar>( cells, periodic, sem::EpidermisModel::full, s.skin );
            exec.fence();
            const auto t0 = std::chrono::steady_clock::now();
            for ( long i = 0; i < s.iterations; i += 10000 )
            {
                const long n = s.iterations - i < 10000 ? s.iterations - i : 10000;
                run_steps( m, exec, n, s );
                exec.fence();
                std::printf( "  %s %d cells %s: step %ld, %.2f s, %d cells, %lld list builds, %s\n", precision,
                             cells, periodic ? "periodic" : "none", i + n,
                             std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count(),
                             m.tissue().num_cells(), m.mechanics().list_builds(), chunk_summary( m ).c_str() );
                std::fflush( stdout );
            }
            exec.fence();
            const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
            std::printf( "%-6s full model %5d cells %-8s %ld iterations (%s): %.2f s, final %d cells (%d elements), "
                         "%lld divisions, %lld list builds, %s\n",
                         precision, cells, periodic ? "periodic" : "none", s.iterations, s.driver.c_str(), seconds,
                         m.tissue().num_cells(), m.tissue().num_elements(), m.divisions(),
                         m.mechanics().list_builds(), chunk_summary( m ).c_str() );
            std::fflush( stdout );
            rows.push_back( { { "precision", precision },
                              { "cells", cells },
                              { "boundary", periodic ? "periodic" : "none" },
                              { "iterations", s.iterations },
                              { "seconds", seconds },
                              { "final_cells", m.tissue().num_cells() },
                              { "final_elements", m.tissue().num_elements() },
                              { "divisions", m.divisions() },
                              { "list_builds", m.mechanics().list_builds() },
                              { "driver", s.driver },
                              { "skin_factor", *m.mechanics().parameters().skin_factor },
                              { "chunks", chunk_json( m ) },
                              { "runs", 1 } } );
        }
    return rows;
}

// --- pair and candidate counts of the run, for the analytic work (untimed) --------------------------------

//! What ForceTally counts, one per reduction.
enum ForceCount : int
{
    intra_visits = 0,  // intra-cell pairs visited (displacement, r^2, sqrt)
    intra_active,      // ... of them with r > 0 (Morse derivative, force accumulated)
    inter_candidates,  // list entries of another cell (displacement and r^2)
    inter_within,      // ... within the cutoff (sqrt)
    inter_positive,    // ... with r > 0 (two exponentials, the sign test of V)
    inter_repulsive,   // ... where V_inter >= 0 (force accumulated)
    membrane_active,   // type-1 elements with z != 0 (membrane force)
    list_entries,      // every list entry (same-cell ones are skipped after reading cell(j))
    force_count_kinds
};

/*!
  Counts the interactions of one velocities() evaluation by the same visit (detail::PairVisitor) and the
  same tests as detail::VelocityEvaluator, over a list built exactly as SemMechanics builds its own.
*/
template <class Scalar, class Mem>
struct ForceTally
{
    sem::detail::PairVisitor<Scalar, Mem> pairs;
    sem::MorsePotential inter;
    int which = 0;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, long& acc ) const
    {
        long t[force_count_kinds] = { 0, 0, 0, 0, 0, 0, 0, 0 };
        pairs.visit( i, [&]( const sem::detail::PairKind kind, const Scalar r, const Scalar* ) {
            if ( kind == sem::detail::pair_intra )
            {
                ++t[intra_visits];
                if ( r > Scalar( 0 ) )
                    ++t[intra_active];
            }
            else if ( kind == sem::detail::pair_inter )
            {
                ++t[inter_within];
                if ( r > Scalar( 0 ) )
                {
                    ++t[inter_positive];
                    const Scalar e1 = compat::exp( -r / Scalar( inter.xi1 ) );
                    const Scalar e2 = compat::exp( -r / Scalar( inter.xi2 ) );
                    if ( Scalar( inter.U0 ) * e1 >= Scalar( inter.W0 ) * e2 )
                        ++t[inter_repulsive];
                }
            }
            else if ( r > Scalar( 0 ) )
                ++t[membrane_active];
        } );
        const int c = pairs.cell( i );
        for ( auto k = pairs.list.begin( i ); k < pairs.list.end( i ); ++k )
        {
            ++t[list_entries];
            if ( pairs.cell( pairs.list.neighbor( k ) ) != c )
                ++t[inter_candidates];
        }
        acc += t[which];
    }
};

//! Velocities by the library's evaluator over our list: equal to the timed kernel's output when our list
//! is the same as SemMechanics' own (a check of the counts' premise).
template <class Scalar, class Mem>
struct VelocityDifference
{
    sem::detail::VelocityEvaluator<Scalar, Mem> eval;
    Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, Mem> v;

    KOKKOS_INLINE_FUNCTION void operator()( const int i, double& m ) const
    {
        Scalar u[3];
        eval( i, u );
        for ( int d = 0; d < 3; ++d )
        {
            const double e = compat::fabs( static_cast<double>( u[d] - v( i, d ) ) );
            m = e > m ? e : m;
        }
    }
};

/*!
  A neighbour-query "source" (NeighborQuery::visit_stencil) that counts instead of visiting: the candidate
  slots of each scanned run (self excluded) and those of runs with a periodic image shift (3 more
  subtractions each); or, over a query whose cell offsets are the identity, the offsets entries read.
*/
template <class Scalar, class Mem>
struct StencilSource
{
    Kokkos::View<const int*, Mem> perm;
    Kokkos::View<int*, Mem> touched;
    bool mark = false;

    struct Counter
    {
        long candidates = 0;
        long shifted = 0;
    };

    template <class F>
    KOKKOS_INLINE_FUNCTION void scan( int, int begin, int end, int self, Scalar, Scalar, Scalar, Scalar sx, Scalar sy,
                                      Scalar sz, Scalar, F& f ) const
    {
        if ( mark )
        {
            touched( begin ) = 1;
            touched( end ) = 1;
            return;
        }
        const bool shifted = sx != Scalar( 0 ) || sy != Scalar( 0 ) || sz != Scalar( 0 );
        for ( int k = begin; k < end; ++k )
        {
            if ( perm( k ) == self )
                continue;
            ++f.candidates;
            if ( shifted )
                ++f.shifted;
        }
    }
};

template <class Scalar, class Mem, class Query>
struct StencilTally
{
    Query query;
    StencilSource<Scalar, Mem> source;
    Scalar radius = 0;
    int which = 0; // 0: candidates, 1: shifted candidates, 2: mark the offsets read

    KOKKOS_INLINE_FUNCTION void operator()( const int i, long& acc ) const
    {
        typename StencilSource<Scalar, Mem>::Counter c;
        const Scalar xi = query.position( i, 0 ), yi = query.position( i, 1 ), zi = query.position( i, 2 );
        const Scalar r2max = radius * radius;
        if ( query.per_pair_minimum_image() )
            QueryAccess::visit_stencil<true>( query, i, xi, yi, zi, r2max, source, c );
        else
            QueryAccess::visit_stencil<false>( query, i, xi, yi, zi, r2max, source, c );
        acc += which == 0 ? c.candidates : which == 1 ? c.shifted : 0;
    }
};

template <class Exec, class Functor>
long reduce_count( const Exec& exec, int n, const Functor& f )
{
    long total = 0;
    Kokkos::parallel_reduce( "epidermis_benchmark::count", Kokkos::RangePolicy<Exec>( exec, 0, n ), f, total );
    return total;
}

template <class Exec>
long count_marked( const Exec& exec, const Kokkos::View<int*, typename Exec::memory_space>& flags )
{
    long total = 0;
    Kokkos::parallel_reduce(
        "epidermis_benchmark::count_marked", Kokkos::RangePolicy<Exec>( exec, 0, static_cast<int>( flags.extent( 0 ) ) ),
        KOKKOS_LAMBDA( const int k, long& acc ) { acc += flags( k ); }, total );
    return total;
}

template <class Exec>
Kokkos::View<int*, typename Exec::memory_space> identity_offsets( const Exec& exec, int size )
{
    Kokkos::View<int*, typename Exec::memory_space> v( "identity_offsets", size );
    Kokkos::parallel_for(
        "epidermis_benchmark::identity", Kokkos::RangePolicy<Exec>( exec, 0, size ), KOKKOS_LAMBDA( const int k ) { v( k ) = k; } );
    return v;
}

//! Flops of one Hill value a + b / (1 + (c X)^h), |h| = m: m + 3 repressing (h > 0), m + 4 activating.
double hill_value_flops( const morula::ode::HillTerm& t )
{
    const int m = t.h > 0 ? t.h : -t.h;
    return m + ( t.h > 0 ? 3.0 : 4.0 );
}

//! Flops of EpidermisGeneNetwork::evaluate without the Jacobian: eight Hill values + 26.
double gene_rhs_flops( const morula::ode::EpidermisGeneParameters& p )
{
    return hill_value_flops( p.BN ) + hill_value_flops( p.ON ) + hill_value_flops( p.ND ) + hill_value_flops( p.VO ) +
           hill_value_flops( p.GO ) + hill_value_flops( p.OV ) + hill_value_flops( p.AV ) + hill_value_flops( p.OM ) +
           26.0;
}

//! The roofline kernels of one settled tissue: forces, the inter-cell list build, one gene-network step.
template <class Exec, class Scalar>
nlohmann::json force( const Exec& exec, const Settings& s, const char* precision, nlohmann::json& kernels )
{
    using Mem = typename Exec::memory_space;
    nlohmann::json rows = nlohmann::json::array();
    for ( const int cells : s.cells )
        for ( const bool periodic : boundaries( s ) )
        {
            auto m = make_model<Exec, Scalar>( cells, periodic, sem::EpidermisModel::movement );
            m.advance( exec, s.settle ); // settle, so that the contacts are those of a run
            auto& t = m.tissue();
            auto& mech = m.mechanics();
            const int n = t.num_elements();
            const int nc = t.num_cells();
            // A list built from the current positions, which the timed evaluations then reuse.
            mech.build_list( exec, t );
            Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, Mem> v( "v", n );
            const Stats st = morula::bench::time_phase( exec, 3, s.runs, [&] { mech.velocities( exec, t, v ); } );
            const Stats sl = morula::bench::time_phase( exec, 1, s.runs, [&] { mech.build_list( exec, t ); } );

            // --- counts, untimed: our own grid and list, laid out exactly as SemMechanics lays its own.
            const auto& params = mech.parameters();
            const Scalar cutoff = mech.inter_cutoff(), skin = mech.skin();
            const Scalar radius = cutoff + skin;
            const Scalar half_min = Scalar( 0.5 * params.intra.minimum() );
            const Scalar edge = radius > half_min ? radius : half_min;
            const auto x = t.positions();
            grid::UniformGrid<Scalar, Mem> g( mech.grid_box(), edge );
            g.build( exec, x, n );
            const auto query = g.query( x );
            grid::NeighborList<Scalar, Mem> list;
            list.build( exec, query, cutoff, skin );

            sem::detail::PairVisitor<Scalar, Mem> pv;
            pv.x = x;
            pv.cell = t.element_cell();
            pv.type = t.element_type();
            pv.offset = t.cell_offset();
            pv.count = t.cell_count();
            pv.list = list.view();
            pv.box = mech.box();
            pv.inter_cutoff2 = cutoff * cutoff;
            pv.num_elements = n;
            pv.brute_force = false;
            long fc[force_count_kinds];
            for ( int k = 0; k < force_count_kinds; ++k )
                fc[k] = reduce_count( exec, n, ForceTally<Scalar, Mem>{ pv, params.inter, k } );
            double list_check = 0;
            Kokkos::parallel_reduce( "epidermis_benchmark::velocity_check", Kokkos::RangePolicy<Exec>( exec, 0, n ),
                                     VelocityDifference<Scalar, Mem>{ { pv, params.intra, params.inter, params.membrane }, v },
                                     Kokkos::Max<double>( list_check ) );

            using Query = std::decay_t<decltype( query )>;
            StencilSource<Scalar, Mem> src{ g.permutation(), {}, false };
            const long candidates = reduce_count( exec, n, StencilTally<Scalar, Mem, Query>{ query, src, radius, 0 } );
            const long shifted = reduce_count( exec, n, StencilTally<Scalar, Mem, Query>{ query, src, radius, 1 } );
            const int ncells = g.num_cells();
            const Query identity( g.geometry(), identity_offsets( exec, ncells + 1 ), g.permutation(), g.cell_keys(),
                                  g.options().ordering, x,
                                  false, query.per_pair_minimum_image(), n );
            Kokkos::View<int*, Mem> touched( "touched_offsets", ncells + 1 );
            reduce_count( exec, n, StencilTally<Scalar, Mem, Query>{ identity, { g.permutation(), touched, true }, radius, 2 } );
            const long offsets_read = count_marked( exec, touched );

            int periodic_axes = 0;
            for ( int d = 0; d < 3; ++d )
                periodic_axes += mech.box().is_periodic( d ) ? 1 : 0;
            const bool min_image = query.per_pair_minimum_image();
            const double sb = sizeof( Scalar );
            const double N = n, L = double( list.num_pairs() );

            // Forces (docs/roofline/ode-and-sem.md, "SEM forces").
            const double disp = 3.0 + 3.0 * periodic_axes; // x_i - x_j and the minimum image per periodic axis
            WorkCount wf;
            wf.precision = morula::bench::precision_name<Scalar>();
            wf.flops = fc[intra_visits] * ( disp + 5 + 1 ) + fc[intra_active] * ( 7 + 1 + 6 ) +
                       fc[inter_candidates] * ( disp + 5 ) + fc[inter_within] * 1.0 + fc[inter_positive] * 6.0 +
                       fc[inter_repulsive] * 10.0 + fc[membrane_active] * 10.0;
            wf.bytes = N * ( 6 * sb + 8 ) + 8.0 * nc + 8.0 * ( N + 1 ) + 4.0 * L;
            wf.basis = "x read + v written (3 scalars each), cell and type (ints) per element; offset, count per "
                       "cell; list offsets (int64) and entries (int); flops per intra pair " +
                       std::to_string( int( disp + 20 ) ) + ", per inter candidate " + std::to_string( int( disp + 5 ) ) +
                       " + 7 within cutoff + 10 repulsive, per membrane element 10, from the run's pair counts";

            // Inter-cell list build (SemMechanics::build_list): wrap and extent, grid build, count, scan, fill,
            // two copies of the positions at build time.
            const double per_particle_query = 6.0 + ( min_image ? 0.0 : 21.0 ) + 1.0;
            const double per_candidate = 8.0 + ( min_image ? 3.0 * periodic_axes : 0.0 );
            WorkCount wl;
            wl.precision = morula::bench::precision_name<Scalar>();
            wl.flops = N * 4.0 * periodic_axes + 6.0 * N +
                       2.0 * ( N * per_particle_query + candidates * per_candidate + ( min_image ? 0.0 : 3.0 * shifted ) );
            wl.bytes = 30.0 * sb * N + 68.0 * N + 16.0 + 4.0 * ncells + 8.0 * offsets_read + 4.0 * L;
            wl.basis = "positions 30 scalars per element over the passes (wrap/extent 9, grid 3, count 3, fill 3, two "
                       "reference copies 12), 68 B of grid and list indices per element, grid offsets written once and "
                       "read twice where touched, list entries written; flops: wrap, cell coordinates, stencil setup "
                       "and 8 per candidate pair in the count and fill passes, candidates counted by the same stencil";

            // One gene-network step of every cell (GeneCoupling::step).
            sem::GeneCoupling<Scalar, Mem> genes( mech.box(), m.parameters().genes );
            mech.compute_cell_geometry( exec, t );
            genes.compute_inputs( exec, t, mech.grid_box() );
            const double dt = params.time_step;
            const auto integrator = params.integrator;
            const Stats sg = morula::bench::time_phase( exec, 1, s.runs, [&] { genes.step( exec, t, dt, integrator ); } );
            const bool rk2 = integrator == sem::TimeScheme::runge_kutta2;
            const double stage_flops = gene_rhs_flops( m.parameters().genes.genes ) + 12.0;
            WorkCount wg;
            wg.precision = "double";
            wg.flops = double( nc ) * ( rk2 ? 2 : 1 ) * stage_flops;
            wg.bytes = double( nc ) * 8.0 * ( rk2 ? 40 : 17 );
            wg.basis = rk2 ? "per cell, two stages: inputs 5 + species 6 read, half 6 written; inputs 5 + half 6 + "
                             "species 6 read, species 6 written (doubles); flops per stage 8 Hill values + 26 + 6 FMA"
                           : "per cell: inputs 5 + species 6 read, species 6 written (doubles); flops 8 Hill values + "
                             "26 + 6 FMA";

            const nlohmann::json parameters{ { "cells", nc }, { "elements", n }, { "boundary", periodic ? "periodic" : "none" },
                                             { "precision", precision }, { "settle_steps", s.settle } };
            nlohmann::json pf = parameters;
            pf["intra_pairs"] = fc[intra_visits];
            pf["inter_candidates"] = fc[inter_candidates];
            pf["inter_within_cutoff"] = fc[inter_within];
            pf["inter_repulsive"] = fc[inter_repulsive];
            pf["membrane_elements"] = fc[membrane_active];
            pf["list_entries"] = list.num_pairs();
            nlohmann::json pl = parameters;
            pl["list_entries"] = list.num_pairs();
            pl["stencil_candidates"] = candidates;
            pl["shifted_candidates"] = shifted;
            pl["grid_cells"] = ncells;
            pl["grid_offsets_read"] = offsets_read;
            pl["per_pair_minimum_image"] = min_image;
            nlohmann::json pg = parameters;
            pg["integrator"] = sem::to_string( integrator );
            kernels.push_back( morula::bench::kernel_record( "sem", "forces", wf, st, pf ) );
            kernels.push_back( morula::bench::kernel_record( "sem", "neighbor_list_build", wl, sl, pl ) );
            kernels.push_back( morula::bench::kernel_record( "sem", "gene_step", wg, sg, pg ) );

            std::printf( "%-6s %5d cells %-8s forces: median %.1f us, %.1f GB/s, %.1f GFLOP/s (AI %.2f); list build: "
                         "%.1f us, %.1f GB/s; gene step: %.1f us, %.1f GB/s (list check %.1e)\n",
                         precision, cells, periodic ? "periodic" : "none", 1e6 * st.median(), 1e-9 * wf.bytes / st.median(),
                         1e-9 * wf.flops / st.median(), wf.flops / wf.bytes, 1e6 * sl.median(),
                         1e-9 * wl.bytes / sl.median(), 1e6 * sg.median(), 1e-9 * wg.bytes / sg.median(), list_check );
            std::fflush( stdout );
            nlohmann::json r = st.to_json();
            r["precision"] = precision;
            r["cells"] = cells;
            r["elements"] = n;
            r["boundary"] = periodic ? "periodic" : "none";
            r["intra_pairs"] = fc[intra_visits];
            r["flops_per_pair"] = disp + 20; // per intra pair (the other pair kinds: docs/roofline/ode-and-sem.md)
            r["flops"] = wf.flops;
            r["compulsory_bytes"] = wf.bytes;
            r["gflops"] = 1e-9 * wf.flops / st.median();
            r["gbytes_per_s"] = 1e-9 * wf.bytes / st.median();
            r["list_check_max_difference"] = list_check;
            r["list_build_time"] = sl.to_json();
            r["gene_step_time"] = sg.to_json();
            rows.push_back( r );
        }
    return rows;
}

template <class Exec>
int run( const Settings& s )
{
    Exec exec;
    std::printf( "%s\n", morula::core::build_summary().c_str() );
    nlohmann::json results = nlohmann::json::array();
    nlohmann::json kernels = nlohmann::json::array();
    auto one = [&]( auto tag, const char* name ) {
        using Scalar = decltype( tag );
        nlohmann::json r = s.which == "table3" ? table3<Exec, Scalar>( exec, s, name )
                           : s.which == "full" ? full<Exec, Scalar>( exec, s, name )
                                               : force<Exec, Scalar>( exec, s, name, kernels );
        for ( auto& x : r )
            results.push_back( x );
    };
    if ( s.precision != "double" )
        one( float{}, "float" );
    if ( s.precision != "float" )
        one( double{}, "double" );
    if ( !s.out.empty() )
    {
        nlohmann::json j = morula::bench::machine_info( exec );
        j["benchmark"] = "epidermis_" + s.which;
        j["results"] = results;
        j["kernels"] = kernels; // roofline records (issue #8); empty for table3 and full
        morula::bench::write_json( s.out, j );
    }
    return 0;
}

} // namespace

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    CLI::App app( "Epidermis model benchmarks (Christley et al. 2010, Table 3) and roofline kernels (issue #8)" );
    Settings s;
    std::string cells, space = "device";
    bool suite = false, quick = false;
    app.add_option( "--case", s.which, "table3, full or force" )->check( CLI::IsMember( { "table3", "full", "force" } ) );
    app.add_flag( "--roofline-suite", suite, "--case force at the roofline suite's size (5000 cells, both precisions, 5 runs)" );
    app.add_flag( "--quick", quick, "with --roofline-suite: smoke-test size (128 cells, 20 settling steps, 2 runs)" );
    app.add_option( "--cells", cells, "comma-separated starting cell counts" );
    app.add_option( "--iterations", s.iterations, "time steps (default 3000; full: 130000)" );
    app.add_option( "--precision", s.precision, "float, double or both" )->check( CLI::IsMember( { "float", "double", "both" } ) );
    app.add_option( "--boundary", s.boundary, "periodic, none or both" )
        ->check( CLI::IsMember( { "periodic", "none", "both" } ) );
    app.add_option( "--runs", s.runs, "timed runs after the warm-up" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--settle", s.settle, "force: movement-model steps before the kernels are timed (default 200)" )
        ->check( CLI::Range( 0, 1000000 ) );
    app.add_option( "--out", s.out, "JSON results file" );
    app.add_option( "--driver", s.driver, "table3/full: advance (default) or step (one call per step)" )
        ->check( CLI::IsMember( { "advance", "step" } ) );
    app.add_option( "--skin", s.skin, "Verlet skin of the element list, in inter-cell cutoffs (default: the library's, 3)" )
        ->check( CLI::PositiveNumber );
    app.add_option( "--space", space, "device (default execution space) or host (default host execution space)" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    CLI11_PARSE( app, argc, argv );
    if ( suite )
    {
        s.which = "force";
        if ( cells.empty() )
            cells = quick ? "128" : "5000";
        if ( app.count( "--settle" ) == 0 )
            s.settle = quick ? 20 : 100;
        if ( app.count( "--runs" ) == 0 )
            s.runs = quick ? 2 : 5;
    }
    else if ( quick )
    {
        std::fprintf( stderr, "--quick goes with --roofline-suite\n" );
        return 2;
    }
    if ( cells.empty() )
        cells = s.which == "full" ? "100,1000" : s.which == "force" ? "5000" : "128,250,500,1000,5000";
    std::stringstream ss( cells );
    for ( std::string item; std::getline( ss, item, ',' ); )
        s.cells.push_back( std::stoi( item ) );
    if ( s.iterations == 0 )
        s.iterations = s.which == "full" ? 130000 : 3000;
    return space == "host" ? run<Kokkos::DefaultHostExecutionSpace>( s ) : run<Kokkos::DefaultExecutionSpace>( s );
}
