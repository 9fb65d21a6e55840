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

} // namespace morula::bench

#endif
