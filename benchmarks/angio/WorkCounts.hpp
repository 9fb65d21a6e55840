/*!
  \file WorkCounts.hpp
  \brief The bytes and flops of every phase angio_benchmark times, from the census counts
  (docs/roofline/lattice-and-angio.md derives each term).
*/
#ifndef MORULA_BENCHMARKS_ANGIO_WORKCOUNTS_HPP
#define MORULA_BENCHMARKS_ANGIO_WORKCOUNTS_HPP

#include "Census.hpp"

#include <common/Roofline.hpp>

#include <string>

namespace angio_bench
{

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

} // namespace angio_bench

#endif
