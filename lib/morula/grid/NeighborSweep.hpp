/*!
  \file NeighborSweep.hpp
  \brief for_each_particle: the fast way to run a kernel over every particle and its neighbours.
*/
#ifndef MORULA_GRID_NEIGHBORSWEEP_HPP
#define MORULA_GRID_NEIGHBORSWEEP_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/grid/NeighborQuery.hpp>
#include <morula/grid/detail/NeighborTile.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace morula::grid
{

/*!
  \brief The neighbours of one particle, handed to the function of for_each_particle().

  `for_each(f)` calls f(j, dx, dy, dz, r2) for every neighbour j within the sweep's radius, exactly as
  NeighborQuery::for_each_neighbor does (same set, same order, same arithmetic); the candidates come
  from team scratch memory when the sweep staged them there.
*/
template <class Query, class ExecutionSpace>
class BasicParticleNeighbors
{
  public:
    using scalar_type = typename Query::scalar_type;
    using tile_type =
        detail::NeighborTile<scalar_type, typename ExecutionSpace::scratch_memory_space>;

    //! Neighbours read through the query (global memory).
    KOKKOS_INLINE_FUNCTION BasicParticleNeighbors( const Query& q, int i, scalar_type radius )
        : m_q( q ), m_i( i ), m_radius( radius )
    {
    }

    //! Neighbours read from a staged tile (held by value: a pointer to a local object would send
    //! the tile's handles, and every candidate load through them, to local memory).
    KOKKOS_INLINE_FUNCTION BasicParticleNeighbors( const Query& q, const tile_type& tile, int i,
                                                   scalar_type radius )
        : m_q( q ), m_tile( tile ), m_staged( true ), m_i( i ), m_radius( radius )
    {
    }

    //! The particle whose neighbours these are.
    KOKKOS_INLINE_FUNCTION int particle() const { return m_i; }

    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( F&& f ) const
    {
        if ( m_staged )
            m_q.template visit_stencil<false>( m_i, m_q.position( m_i, 0 ), m_q.position( m_i, 1 ),
                                               m_q.position( m_i, 2 ), m_radius * m_radius, m_tile,
                                               f );
        else
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
    tile_type m_tile;
    bool m_staged = false;
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

  On GPUs, when the data are in cell order with row-major cells, a team of threads takes a block of
  cells, stages their neighbourhood in scratch memory once, and its threads read candidates from there
  (detail/NeighborTile.hpp). Otherwise (CPU backends, unsorted data, Morton cells, per-pair minimum
  image) each thread queries global memory directly. The neighbours are the same either way.

  \param radius neighbour radius, at most the grid's cutoff (default: the cutoff)
  \param stage_in_scratch allow the staged GPU path (false: every thread reads global memory)
*/
template <class ExecutionSpace, class Query, class Functor>
void for_each_particle( const ExecutionSpace& exec, const Query& query, const Functor& f,
                        typename Query::scalar_type radius = -1, bool stage_in_scratch = true,
                        const std::string& label = "morula::grid::for_each_particle" )
{
    using neighbors_type = ParticleNeighbors<Query, ExecutionSpace>;
    using tile_type = typename neighbors_type::tile_type;
    if ( radius < 0 )
        radius = query.cutoff();
    if ( !( radius <= query.cutoff() ) )
        throw core::InputError( core::detail::concat( "for_each_particle: radius ", radius,
                                                      " exceeds the grid's cutoff ",
                                                      query.cutoff() ) );
    const int n = query.num_particles();
    constexpr bool host_backend =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                   typename ExecutionSpace::memory_space>::accessible;
    const bool tiled = stage_in_scratch && !host_backend && query.data_sorted() &&
                       query.row_major() && !query.per_pair_minimum_image();
    if ( !tiled )
    {
        Kokkos::parallel_for(
            label, Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ), KOKKOS_LAMBDA( const int i ) {
                const neighbors_type nb( query, i, radius );
                f( i, nb );
            } );
        return;
    }
    const auto& g = query.geometry();
    const detail::TileLayout layout = detail::choose_tiles( g, n );
    using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
    using member_type = typename policy_type::member_type;
    policy_type policy( exec, layout.num_tiles, detail::tile_team_size );
    policy.set_scratch_size( 0, Kokkos::PerTeam( tile_type::scratch_bytes() ) );
    const int nx = g.ncell[0];
    const int ny = g.ncell[1];
    const auto offsets = query.cell_offsets();
    Kokkos::parallel_for(
        label, policy, KOKKOS_LAMBDA( const member_type& team ) {
            const int t = team.league_rank();
            const int xb = t % layout.blocks_per_row;
            const int row_index = t / layout.blocks_per_row; // cy + ny * cz
            const int cy = row_index % ny;
            const int cz = row_index / ny;
            const int x0 = xb * layout.width;
            const int x1 = x0 + layout.width < nx ? x0 + layout.width : nx;
            const int row = nx * row_index;
            const int begin = offsets( row + x0 );
            const int end = offsets( row + x1 );
            if ( begin == end )
                return;
            const tile_type tile( team );
            const bool staged = tile.load( team, query, x0, x1, cy, cz );
            if ( staged )
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, begin, end ), [&]( const int i ) {
                    const neighbors_type nb( query, tile, i, radius );
                    f( i, nb );
                } );
            else
                Kokkos::parallel_for( Kokkos::TeamThreadRange( team, begin, end ), [&]( const int i ) {
                    const neighbors_type nb( query, i, radius );
                    f( i, nb );
                } );
        } );
}

} // namespace morula::grid

#endif
