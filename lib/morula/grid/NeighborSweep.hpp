/*!
  \file NeighborSweep.hpp
  \brief for_each_particle: the fast way to run a kernel over every particle and its neighbours.
*/
#ifndef MORULA_GRID_NEIGHBORSWEEP_HPP
#define MORULA_GRID_NEIGHBORSWEEP_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborQuery.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace morula::grid
{

/*!
  \brief The neighbours of one particle, handed to the function of for_each_particle().

  `for_each(f)` calls f(j, dx, dy, dz, r2) for every neighbour j within the sweep's radius, exactly as
  NeighborQuery::for_each_neighbor does (same set, same order, same arithmetic).
*/
template <class Query, class ExecutionSpace>
class BasicParticleNeighbors
{
  public:
    using scalar_type = typename Query::scalar_type;
    using execution_space = ExecutionSpace;

    KOKKOS_INLINE_FUNCTION BasicParticleNeighbors( const Query& q, int i, scalar_type radius )
        : m_q( q ), m_i( i ), m_radius( radius )
    {
    }

    //! The particle whose neighbours these are.
    KOKKOS_INLINE_FUNCTION int particle() const { return m_i; }

    //! Calls f(j, dx, dy, dz, r2) for every neighbour j, with d = x_i - x_j (minimum image).
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( F&& f ) const
    {
        m_q.for_each_neighbor( m_i, m_radius, f );
    }

    KOKKOS_INLINE_FUNCTION int count() const
    {
        int c = 0;
        for_each( [&]( int, scalar_type, scalar_type, scalar_type, scalar_type ) { ++c; } );
        return c;
    }

  private:
    const Query& m_q;
    int m_i;
    scalar_type m_radius;
};

//! The neighbours type for a query (const and references stripped: write
//! `ParticleNeighbors<decltype(query), ExecutionSpace>`).
template <class Query, class ExecutionSpace>
using ParticleNeighbors =
    BasicParticleNeighbors<std::remove_cv_t<std::remove_reference_t<Query>>, ExecutionSpace>;

/*!
  \brief Runs f(i, neighbours) for every particle i of the query, in parallel, where `neighbours` is a
  ParticleNeighbors<Query, ExecutionSpace>; each particle is handled by one thread, so f may update the
  particle's own data without atomics.

  \code
  using Nbrs = morula::grid::ParticleNeighbors<decltype(q), exec>;
  morula::grid::for_each_particle(exec(), q, KOKKOS_LAMBDA(const int i, const Nbrs& nb) {
    double f = 0;
    nb.for_each([&](int j, double dx, double dy, double dz, double r2) { f += ...; });
    force(i) = f;
  });
  \endcode

  With the data in cell order, consecutive threads take consecutive particles of the same or adjacent
  cells, whose candidate runs overlap, so the candidates come mostly from the L1 cache. Staging a
  block's candidates in team scratch memory was slower (more registers, lower occupancy), and so was a
  warp per cell sharing its staged candidates, issue-bound on its per-cell set-up
  (benchmarks/experiments/CellSweep.hpp; docs/performance.md, "Grid and neighbour lists against Cabana (issue #10)"
  and "Neighbour kernels at the hardware limit (issue #25): second pass"). A sum over neighbours per
  particle is faster on GPUs through NeighborReduction, which gives a thread several particles of a cell
  and loads each candidate once for all of them.

  \param radius neighbour radius, at most the grid's cutoff (default: the cutoff)
  \tparam LaunchBounds optional Kokkos::LaunchBounds<MaxThreads, MinBlocks> for kernels whose register
  count would otherwise limit occupancy: `for_each_particle<Kokkos::LaunchBounds<256, 4>>(exec, q, f)`
*/
template <class LaunchBounds = Kokkos::LaunchBounds<>, class ExecutionSpace, class Query, class Functor>
void for_each_particle( const ExecutionSpace& exec, const Query& query, const Functor& f,
                        typename Query::scalar_type radius = -1,
                        const std::string& label = "morula::grid::for_each_particle" )
{
    using neighbors_type = ParticleNeighbors<Query, ExecutionSpace>;
    if ( radius < 0 )
        radius = query.cutoff();
    if ( !( radius <= query.cutoff() ) )
        throw core::InputError( core::detail::concat( "for_each_particle: radius ", radius,
                                                      " exceeds the grid's cutoff ",
                                                      query.cutoff() ) );
    Kokkos::parallel_for(
        label, core::LaunchRange<ExecutionSpace, LaunchBounds>( exec, 0, query.num_particles() ),
        KOKKOS_LAMBDA( const int i ) {
            const neighbors_type nb( query, i, radius );
            f( i, nb );
        } );
}

} // namespace morula::grid

#endif
