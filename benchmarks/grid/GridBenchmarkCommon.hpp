// Pieces shared by the grid benchmarks: random points on the device, the exact number of candidate
// pairs a stencil sweep tests, and the analytic byte counts behind the GB/s figures
// (docs/performance.md explains each count).
#ifndef MORULA_BENCHMARKS_GRIDBENCHMARKCOMMON_HPP
#define MORULA_BENCHMARKS_GRIDBENCHMARKCOMMON_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

namespace morula::bench
{
// The neighbour query's stencil walk, internal to the library (experiments and checks look inside it).
using QueryAccess = morula::grid::detail::QueryAccess;

//! Uniform random positions in box (lo, lo + edge)^3, from the counter-based generator.
template <class ExecutionSpace, class PositionView, class Scalar>
void fill_uniform( const ExecutionSpace& exec, const PositionView& x, int n, Scalar lo, Scalar edge,
                   std::uint64_t seed )
{
    const core::HashedRng rng( seed );
    Kokkos::parallel_for(
        "morula::bench::fill_uniform", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            for ( int d = 0; d < 3; ++d )
            {
                Scalar v = lo + edge * rng.uniform<Scalar>( i, d, 0 );
                x( i, d ) = v < lo + edge ? v : lo; // rounding must not reach the upper face
            }
        } );
}

/*!
  Clustered points: a fraction `background` uniform in the box, the rest in Gaussian blobs of width
  sigma around `blobs` random centres (kept inside the box by resampling), so that the density varies
  by orders of magnitude between blobs and background.
*/
template <class ExecutionSpace, class PositionView, class Scalar>
void fill_clustered( const ExecutionSpace& exec, const PositionView& x, int n, Scalar edge,
                     int blobs, Scalar sigma, double background, std::uint64_t seed )
{
    const core::HashedRng rng( seed );
    const int n_background = static_cast<int>( background * n );
    Kokkos::parallel_for(
        "morula::bench::fill_clustered", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            if ( i < n_background )
            {
                for ( int d = 0; d < 3; ++d )
                {
                    const Scalar v = edge * rng.uniform<Scalar>( i, d, 0 );
                    x( i, d ) = v < edge ? v : Scalar( 0 );
                }
                return;
            }
            const int b = i % blobs;
            for ( int d = 0; d < 3; ++d )
            {
                const Scalar c = edge * ( Scalar( 0.15 ) +
                                          Scalar( 0.7 ) * rng.uniform<Scalar>( b, d, 1 ) );
                Scalar v = -1;
                for ( std::uint32_t attempt = 0; !( v >= 0 && v < edge ); ++attempt )
                    v = c + sigma * rng.normal<Scalar>( i, d + 3 * attempt, 2 );
                x( i, d ) = v;
            }
        } );
}

//! Exact number of candidate pairs (j != i in the 27-cell stencil) a grid sweep tests, from the cell
//! counts. Row-major, non-periodic grids (the benchmark geometries).
inline double stencil_candidates( const std::vector<int>& offsets, int nx, int ny, int nz )
{
    auto count = [&]( int x, int y, int z ) {
        const int c = x + nx * ( y + ny * z );
        return double( offsets[c + 1] - offsets[c] );
    };
    double total = 0;
    for ( int z = 0; z < nz; ++z )
        for ( int y = 0; y < ny; ++y )
            for ( int x = 0; x < nx; ++x )
            {
                const double m = count( x, y, z );
                if ( m == 0 )
                    continue;
                double s = 0;
                for ( int dz = -1; dz <= 1; ++dz )
                    for ( int dy = -1; dy <= 1; ++dy )
                        for ( int dx = -1; dx <= 1; ++dx )
                        {
                            const int a = x + dx, b = y + dy, c = z + dz;
                            if ( a >= 0 && a < nx && b >= 0 && b < ny && c >= 0 && c < nz )
                                s += count( a, b, c );
                        }
                total += m * ( s - 1 );
            }
    return total;
}

/*!
  Bytes the two-level build moves, counting every array once per pass that touches it: positions
  3SN read; cell keys 4N written, then read; (cell, particle) pairs 8N written, then read; permutation
  4N and cell offsets 4C written (bucket counters are a few kilobytes and stay in cache).
*/
inline double build_bytes( double n, double cells, int scalar_bytes )
{
    return 3.0 * scalar_bytes * n + 4.0 * n + 4.0 * n + 8.0 * n + 8.0 * n + 4.0 * n + 4.0 * cells;
}

/*!
  What one neighbour sweep's stencil walk does, summed over the particles, for the flop count of the
  roofline records (docs/roofline/grid-and-mechanics.md): the walk is NeighborQuery::visit_stencil
  itself, run with a source that counts the slots of each run instead of reading them.
*/
struct StencilTally
{
    long long particles = 0;
    long long rows_tested = 0;    //!< stencil rows (oy, oz) that exist (row_d2 computed)
    long long rows_passed = 0;    //!< rows not pruned by their distance (a run scanned)
    long long x_cells_tested = 0; //!< Morton cells: cells along x tested in the passed rows
    long long candidates = 0;     //!< distance evaluations, j != i
    long long shifted_candidates = 0; //!< ... in periodic image runs (3 subtractions more each)
};

//! Sum reducer of StencilTally for both Kokkos 3.4 (volatile join) and 4.x.
struct StencilTallySum
{
    using reducer = StencilTallySum;
    using value_type = StencilTally;
    using result_view_type = Kokkos::View<value_type, Kokkos::HostSpace>;

    result_view_type value;

    explicit StencilTallySum( value_type& v ) : value( &v ) {}

    KOKKOS_INLINE_FUNCTION void join( value_type& dst, const value_type& src ) const
    {
        dst.particles += src.particles;
        dst.rows_tested += src.rows_tested;
        dst.rows_passed += src.rows_passed;
        dst.x_cells_tested += src.x_cells_tested;
        dst.candidates += src.candidates;
        dst.shifted_candidates += src.shifted_candidates;
    }
    KOKKOS_INLINE_FUNCTION void join( volatile value_type& dst, const volatile value_type& src ) const
    {
        dst.particles += src.particles;
        dst.rows_tested += src.rows_tested;
        dst.rows_passed += src.rows_passed;
        dst.x_cells_tested += src.x_cells_tested;
        dst.candidates += src.candidates;
        dst.shifted_candidates += src.shifted_candidates;
    }
    KOKKOS_INLINE_FUNCTION void init( value_type& v ) const { v = value_type(); }
    KOKKOS_INLINE_FUNCTION value_type& reference() const { return *value.data(); }
    KOKKOS_INLINE_FUNCTION result_view_type view() const { return value; }
    KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }
};

//! A visit_stencil source that counts each run's slots and the rows they belong to.
template <class Scalar>
struct TallySource
{
    StencilTally* tally;
    unsigned* rows; //!< bit r: stencil row r = 3 (oz + 1) + (oy + 1) had a run scanned
    bool min_image;

    template <class F>
    KOKKOS_INLINE_FUNCTION void scan( int piece, int begin, int end, int, Scalar, Scalar, Scalar,
                                      Scalar sx, Scalar sy, Scalar sz, Scalar, F& ) const
    {
        const long long m = end - begin;
        tally->candidates += m;
        if ( !min_image && !( sx == Scalar( 0 ) && sy == Scalar( 0 ) && sz == Scalar( 0 ) ) )
            tally->shifted_candidates += m;
        *rows |= 1u << ( piece / 3 );
    }
};

/*!
  Walks the stencil of every particle of `query` at `radius` exactly as for_each_particle does (same
  cells, same pruning) and counts rows, cells and candidates. Outside any timed region.
*/
template <class ExecutionSpace, class Query>
StencilTally stencil_tally( const ExecutionSpace& exec, const Query& query,
                            typename Query::scalar_type radius )
{
    using Scalar = typename Query::scalar_type;
    const Scalar r2max = radius * radius;
    const bool min_image = query.per_pair_minimum_image();
    const bool row_major = query.whole_rows();
    StencilTally total;
    Kokkos::parallel_reduce(
        "morula::bench::stencil_tally",
        Kokkos::RangePolicy<ExecutionSpace>( exec, 0, query.num_particles() ),
        KOKKOS_LAMBDA( const int i, StencilTally& t ) {
            const Scalar xi = query.position( i, 0 );
            const Scalar yi = query.position( i, 1 );
            const Scalar zi = query.position( i, 2 );
            StencilTally mine;
            unsigned rows = 0;
            const TallySource<Scalar> source{ &mine, &rows, min_image };
            int unused = 0;
            if ( min_image )
                QueryAccess::visit_stencil<true>( query, i, xi, yi, zi, r2max, source, unused );
            else
                QueryAccess::visit_stencil<false>( query, i, xi, yi, zi, r2max, source, unused );
            // Rows and x cells that exist around the particle's cell (neighbor_cell true).
            const auto& g = query.geometry();
            const Scalar p[3] = { xi, yi, zi };
            int valid[3] = { 0, 0, 0 };
            for ( int d = 0; d < 3; ++d )
            {
                const int c = g.cell_coordinate( d, p[d] );
                for ( int o = -1; o <= 1; ++o )
                {
                    int nc;
                    Scalar shift;
                    valid[d] += QueryAccess::neighbor_cell( query, d, c, o, nc, shift ) ? 1 : 0;
                }
            }
            int passed = 0;
            for ( int r = 0; r < 9; ++r )
                passed += ( rows >> r ) & 1u;
            t.particles += 1;
            t.rows_tested += valid[1] * valid[2];
            t.rows_passed += passed;
            t.x_cells_tested += row_major ? 0 : passed * valid[0];
            t.candidates += mine.candidates - 1; // the particle itself is skipped, not tested
            t.shifted_candidates += mine.shifted_candidates;
        },
        StencilTallySum( total ) );
    return total;
}

/*!
  Floating-point operations of the stencil walk and the candidate tests of one sweep
  (NeighborQuery.hpp, line by line in docs/roofline/grid-and-mechanics.md):
  per particle 1 (radius^2) + 6 (cell coordinates: subtract, multiply per axis) + 21 (face distances,
  7 per axis, not with the per-pair minimum image); per existing row 3 (row_d2); per passed row 4
  (row-major: left and right tests) or 2 per x cell tested (Morton); per candidate 8 (3 differences, 5
  for the squared distance), plus 3 in a shifted periodic run or 3 per periodic axis with the per-pair
  minimum image (divide, multiply, subtract). The work done for a neighbour is the caller's.
*/
template <class Query>
double stencil_flops( const StencilTally& t, const Query& query )
{
    const bool min_image = query.per_pair_minimum_image();
    int periodic_axes = 0;
    for ( int d = 0; d < 3; ++d )
        periodic_axes += query.geometry().is_periodic( d ) ? 1 : 0;
    double f = double( t.particles ) * ( 1 + 6 + ( min_image ? 0 : 21 ) );
    f += 3.0 * double( t.rows_tested );
    f += query.whole_rows() ? 4.0 * double( t.rows_passed ) : 2.0 * double( t.x_cells_tested );
    f += 8.0 * double( t.candidates );
    f += min_image ? 3.0 * periodic_axes * double( t.candidates )
                   : 3.0 * double( t.shifted_candidates );
    return f;
}

//! Number of non-empty cells of a built grid (from its offsets).
template <class ExecutionSpace, class OffsetView>
long long occupied_cells( const ExecutionSpace& exec, const OffsetView& offsets, int ncells )
{
    long long occupied = 0;
    Kokkos::parallel_reduce(
        "morula::bench::occupied_cells", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, ncells ),
        KOKKOS_LAMBDA( const int c, long long& s ) { s += offsets( c + 1 ) > offsets( c ) ? 1 : 0; },
        occupied );
    return occupied;
}

} // namespace morula::bench

#endif
