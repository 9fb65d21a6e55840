/*!
  \file CellCellKernels.hpp
  \brief Cell-cell interactions of the tumour/angiogenesis model (Worecki and Wcisło 2012, section 2.1): forces, contact
  pressure and exchange contacts, from both sides of every pair or once with atomics.
*/
#ifndef MORULA_ANGIO_DETAIL_CELLCELLKERNELS_HPP
#define MORULA_ANGIO_DETAIL_CELLCELLKERNELS_HPP

#include <morula/angio/Interactions.hpp>
#include <morula/angio/detail/KernelData.hpp>
#include <morula/core/FastMath.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborReduction.hpp>
#include <morula/mechanics/SphereForce.hpp>

#include <Kokkos_Core.hpp>

namespace morula::angio::detail
{

/*!
  \brief What one neighbour j does to cell i: force along x_i - x_j, repulsive part (for the pressure),
  and the exchange conductance (0 unless both are alive and within range).
*/
template <class Scalar>
struct PairEffect
{
    Scalar force[3];
    Scalar repulsive;
    Scalar conductance;
    bool interacts;
};

template <class Scalar, class Cells>
KOKKOS_INLINE_FUNCTION PairEffect<Scalar> cell_pair( const Constants<Scalar>& c, const Cells& cells, int i, int j,
                                                     Scalar dx, Scalar dy, Scalar dz, Scalar r2 )
{
    PairEffect<Scalar> e{};
    const Scalar ri = cells.radius( i ), rj = cells.radius( j );
    const Scalar sum = ri + rj;
    const Scalar reach = ( Scalar( 1 ) + c.range ) * sum;
    if ( !( r2 < reach * reach ) )
        return e;
    e.interacts = true;
    const bool live = is_alive( cells.state( i ) ) && is_alive( cells.state( j ) );
    // The distance and its inverse from one reciprocal square root (core/FastMath.hpp: on GPUs the
    // hardware estimate, refined in double): in double a square root and a division are each a dozen
    // instructions with a slow-path branch on a GPU.
    const Scalar inv_d = r2 > Scalar( 0 ) ? core::fast_rsqrt( r2 ) : Scalar( 0 );
    const Scalar d = r2 * inv_d;
    const Scalar f = contact_force( d, sum, c.repulsion, live ? c.adhesion : Scalar( 0 ), c.range );
    if ( d > Scalar( 0 ) )
    {
        const Scalar k = f * inv_d;
        e.force[0] = k * dx;
        e.force[1] = k * dy;
        e.force[2] = k * dz;
    }
    else
    {
        // Coincident centres (a division at a wall): a direction fixed by the pair of ids.
        Scalar u[3];
        mechanics::coincident_direction<Scalar>( cells.id( i ), cells.id( j ), u );
        for ( int a = 0; a < 3; ++a )
            e.force[a] = f * u[a];
    }
    e.repulsive = f > Scalar( 0 ) ? f : Scalar( 0 );
    if ( live )
        e.conductance = contact_conductance( ri, rj, contact_weight( d, sum, c.range ) );
    return e;
}

/*!
  \brief The both-sides cell-cell interaction as a grid::NeighborReduction kernel: every cell sums the forces
  of its neighbours and their repulsive parts (its contact pressure), and lists its exchange contacts in
  the order its neighbours are visited. Lysed cells neither act nor are acted on.
*/
template <class Scalar, class MemorySpace>
struct CellCellReduction
{
    struct accumulator_type
    {
        Scalar force[3];
        Scalar repulsive;
        int contacts;
        bool active;
    };

    Constants<Scalar> c;
    CellViews<Scalar, MemorySpace> cells;
    Kokkos::View<int**, Kokkos::LayoutLeft, MemorySpace> contact;
    Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace> conductance;
    Kokkos::View<int*, MemorySpace> count;
    Kokkos::View<long long*, MemorySpace> counters;

    KOKKOS_INLINE_FUNCTION void init( int i, accumulator_type& a ) const { a.active = cells.state( i ) != cell_lysed; }

    KOKKOS_INLINE_FUNCTION void pair( int i, int j, Scalar dx, Scalar dy, Scalar dz, Scalar r2,
                                      accumulator_type& a ) const
    {
        if ( !a.active || cells.state( j ) == cell_lysed )
            return;
        const PairEffect<Scalar> e = cell_pair( c, cells, i, j, dx, dy, dz, r2 );
        if ( !e.interacts )
            return;
        for ( int d = 0; d < 3; ++d )
            a.force[d] += e.force[d];
        a.repulsive += e.repulsive;
        if ( e.conductance > Scalar( 0 ) )
        {
            if ( a.contacts < c.max_contacts )
            {
                contact( i, a.contacts ) = j;
                conductance( i, a.contacts ) = e.conductance;
            }
            ++a.contacts;
        }
    }

    template <class Neighbors>
    KOKKOS_INLINE_FUNCTION void finish( int i, const accumulator_type& a, const Neighbors& ) const
    {
        for ( int d = 0; d < 3; ++d )
            cells.f( i, d ) = a.force[d];
        const Scalar ri = cells.radius( i );
        cells.pressure( i ) = a.repulsive / ( Scalar( 12.566370614359172954 ) * ri * ri );
        count( i ) = a.contacts;
        if ( a.contacts > c.max_contacts )
            Kokkos::atomic_fetch_max( &counters( counter_max_contacts ), static_cast<long long>( a.contacts ) );
    }
};

/*!
  \brief Cell-cell interactions with each pair computed from both sides (the paper's choice, no atomics):
  every cell sums the forces of its neighbours, its contact pressure, and lists its exchange contacts.
  Through `reduction` (grid::NeighborReduction with batched pairs: the pair work of a warp's threads runs
  together).
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class Query>
void cell_cell_both_sides( const ExecutionSpace& exec, const Query& query, grid::NeighborReduction<MemorySpace>& reduction,
                           const CellViews<Scalar, MemorySpace>& cells, int n, const Constants<Scalar>& c,
                           const Workspace<Scalar, MemorySpace>& w )
{
    const CellCellReduction<Scalar, MemorySpace> kernel{ c, cells, w.contact, w.conductance, w.contact_count, w.counters };
    // One cell per thread only (the model never asks for more): one kernel compiled, not four.
    reduction.template run<Kokkos::LaunchBounds<>, 1>( exec, query, kernel, c.cell_reach, n, "morula::angio::cell_cell" );
}

/*!
  \brief Cell-cell interactions with each pair computed once (j > i) and added to both cells with atomics;
  contacts are appended to both lists through atomic counters (their order, and so the last bits of the
  exchange, then depend on scheduling).
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class Query>
void cell_cell_atomic( const ExecutionSpace& exec, const Query& query, const CellViews<Scalar, MemorySpace>& cells,
                       int n, const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w )
{
    const auto contact = w.contact;
    const auto conductance = w.conductance;
    const auto count = w.contact_count;
    const auto counters = w.counters;
    Kokkos::parallel_for(
        "morula::angio::cell_cell_atomic_reset", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            for ( int a = 0; a < 3; ++a )
                cells.f( i, a ) = 0;
            cells.pressure( i ) = 0;
            count( i ) = 0;
        } );
    Kokkos::parallel_for(
        "morula::angio::cell_cell_atomic", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            if ( cells.state( i ) == cell_lysed )
                return;
            Scalar F[3] = { 0, 0, 0 };
            Scalar repulsive = 0;
            query.for_each_neighbor( i, c.cell_reach, [&]( int j, Scalar dx, Scalar dy, Scalar dz, Scalar r2 ) {
                if ( j < i || cells.state( j ) == cell_lysed )
                    return;
                const PairEffect<Scalar> e = cell_pair( c, cells, i, j, dx, dy, dz, r2 );
                if ( !e.interacts )
                    return;
                for ( int a = 0; a < 3; ++a )
                {
                    F[a] += e.force[a];
                    Kokkos::atomic_add( &cells.f( j, a ), -e.force[a] );
                }
                repulsive += e.repulsive;
                Kokkos::atomic_add( &cells.pressure( j ), e.repulsive );
                if ( e.conductance > Scalar( 0 ) )
                {
                    const int ki = Kokkos::atomic_fetch_add( &count( i ), 1 );
                    const int kj = Kokkos::atomic_fetch_add( &count( j ), 1 );
                    if ( ki < c.max_contacts )
                    {
                        contact( i, ki ) = j;
                        conductance( i, ki ) = e.conductance;
                    }
                    if ( kj < c.max_contacts )
                    {
                        contact( j, kj ) = i;
                        conductance( j, kj ) = e.conductance;
                    }
                }
            } );
            for ( int a = 0; a < 3; ++a )
                Kokkos::atomic_add( &cells.f( i, a ), F[a] );
            Kokkos::atomic_add( &cells.pressure( i ), repulsive );
        } );
    Kokkos::parallel_for(
        "morula::angio::cell_cell_atomic_finish", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            const Scalar ri = cells.radius( i );
            cells.pressure( i ) /= Scalar( 12.566370614359172954 ) * ri * ri;
            const int k = count( i );
            if ( k > c.max_contacts )
                Kokkos::atomic_fetch_max( &counters( counter_max_contacts ), static_cast<long long>( k ) );
        } );
}

} // namespace morula::angio::detail

#endif
