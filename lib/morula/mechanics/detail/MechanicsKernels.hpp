/*!
  \file MechanicsKernels.hpp
  \brief Kernels behind SphereMechanics (implementation detail).
*/
#ifndef MORULA_MECHANICS_DETAIL_MECHANICSKERNELS_HPP
#define MORULA_MECHANICS_DETAIL_MECHANICSKERNELS_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborReduction.hpp>
#include <morula/grid/NeighborSweep.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereForce.hpp>

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace morula::mechanics
{
template <class Scalar>
struct MechanicsParameters;

namespace detail
{

//! Largest diameter, and the bounding box of the positions along open axes (others left empty).
template <class Scalar>
struct AgentExtent
{
    Scalar max_diameter = 0;
    Scalar lo[3] = { 0, 0, 0 };
    Scalar hi[3] = { -1, -1, -1 };
};

template <class View>
void ensure_rows( View& v, std::size_t n, const char* label )
{
    if ( v.extent( 0 ) < n )
        v = View( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ),
                  n + n / 2 );
}

/*!
  One pass over the agents for agent_extent(): the largest diameter (+infinity where a diameter or
  density is not finite and positive) and the positions' range along the axes in `open_axes` (bit a
  for axis a). One kernel and one read-back instead of one per quantity: this runs at every grid build,
  and each reduction is a host round trip.
*/
template <class Scalar, class PositionView, class DiameterView>
struct AgentExtentReduction
{
    struct value_type
    {
        Scalar max_diameter;
        Scalar lo[3];
        Scalar hi[3];
    };
    PositionView x;
    DiameterView diameter;
    DiameterView density;
    unsigned open_axes;

    KOKKOS_INLINE_FUNCTION void init( value_type& v ) const
    {
        v.max_diameter = Scalar( 0 );
        for ( int a = 0; a < 3; ++a )
        {
            v.lo[a] = Kokkos::Experimental::infinity<Scalar>::value;
            v.hi[a] = -Kokkos::Experimental::infinity<Scalar>::value;
        }
    }
    KOKKOS_INLINE_FUNCTION void join( value_type& a, const value_type& b ) const
    {
        a.max_diameter = b.max_diameter > a.max_diameter ? b.max_diameter : a.max_diameter;
        for ( int d = 0; d < 3; ++d )
        {
            a.lo[d] = b.lo[d] < a.lo[d] ? b.lo[d] : a.lo[d];
            a.hi[d] = b.hi[d] > a.hi[d] ? b.hi[d] : a.hi[d];
        }
    }
    KOKKOS_INLINE_FUNCTION void operator()( const int i, value_type& v ) const
    {
        const Scalar inf = Kokkos::Experimental::infinity<Scalar>::value;
        const Scalar d = diameter( i );
        const Scalar rho = density( i );
        const Scalar m = ( d > Scalar( 0 ) && d < inf && rho > Scalar( 0 ) && rho < inf ) ? d : inf;
        v.max_diameter = m > v.max_diameter ? m : v.max_diameter;
        for ( int a = 0; a < 3; ++a )
        {
            if ( !( ( open_axes >> a ) & 1u ) )
                continue;
            const Scalar p = x( i, a );
            v.lo[a] = p < v.lo[a] ? p : v.lo[a];
            v.hi[a] = p > v.hi[a] ? p : v.hi[a];
        }
    }
};

/*!
  Largest diameter and, for open axes, the positions' range, in one reduction (AgentExtentReduction).
  A diameter or density that is not finite and positive is an InputError naming the agent (the mass is
  density x volume, and a step divides by it).
*/
template <class ExecutionSpace, class PositionView, class DiameterView, class Scalar>
AgentExtent<Scalar> agent_extent( const ExecutionSpace& exec, const PositionView& x,
                                  const DiameterView& diameter, const DiameterView& density, int n,
                                  const core::Box<Scalar>& box )
{
    AgentExtent<Scalar> e;
    if ( n == 0 )
        return e;
    const Scalar inf = std::numeric_limits<Scalar>::infinity();
    auto valid = [inf]( Scalar v ) { return v > Scalar( 0 ) && v < inf; };
    using reduction = AgentExtentReduction<Scalar, PositionView, DiameterView>;
    unsigned open_axes = 0;
    for ( int a = 0; a < 3; ++a )
        if ( box.boundary[a] == core::Boundary::open )
            open_axes |= 1u << a;
    typename reduction::value_type r;
    Kokkos::parallel_reduce( "morula::mechanics::agent_extent", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
                             reduction{ x, diameter, density, open_axes }, r );
    if ( !( r.max_diameter < inf ) )
    {
        int first = INT_MAX;
        Kokkos::parallel_reduce(
            "morula::mechanics::first_bad_agent", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i, int& m ) {
                const Scalar d = diameter( i );
                const Scalar rho = density( i );
                const bool ok = d > Scalar( 0 ) && d < inf && rho > Scalar( 0 ) && rho < inf;
                if ( !ok && i < m )
                    m = i;
            },
            Kokkos::Min<int>( first ) );
        Scalar d{}, rho{};
        Kokkos::deep_copy( d, Kokkos::subview( diameter, first ) );
        Kokkos::deep_copy( rho, Kokkos::subview( density, first ) );
        throw core::InputError( core::detail::concat(
            "SphereMechanics: agent ", first, " has ", valid( d ) ? "density " : "diameter ",
            valid( d ) ? rho : d, " (expected a finite value > 0)" ) );
    }
    e.max_diameter = r.max_diameter;
    for ( int a = 0; a < 3; ++a )
        if ( ( open_axes >> a ) & 1u )
        {
            e.lo[a] = r.lo[a];
            e.hi[a] = r.hi[a];
        }
    return e;
}

//! Displacement of one agent from its net force, as BioDynaMo's mechanical operation computes it.
template <class Scalar>
KOKKOS_INLINE_FUNCTION void displacement_from_force( const Scalar f[3], Scalar adherence,
                                                     Scalar mass, Scalar time_step,
                                                     Scalar max_displacement, Scalar m[3] )
{
    m[0] = m[1] = m[2] = Scalar( 0 );
    const Scalar norm = compat::sqrt( f[0] * f[0] + f[1] * f[1] + f[2] * f[2] );
    if ( !( norm > adherence ) || !( norm > Scalar( 0 ) ) )
        return; // the force does not break the cell's adherence
    const Scalar mh = time_step / mass;
    // A move longer than max_displacement keeps its direction and gets that length.
    const Scalar scale = norm * mh > max_displacement ? max_displacement / norm : mh;
    for ( int d = 0; d < 3; ++d )
        m[d] = f[d] * scale;
}

// BioDynaMo's threshold for centres "at the same location" (squared distance).
template <class Scalar>
KOKKOS_INLINE_FUNCTION constexpr Scalar coincident_distance2()
{
    return Scalar( 1e-16 );
}

//! f += the overlap force of a neighbour at d = x_i - x_j (r2 = |d|^2, above coincident_distance2())
//! with interaction radii ri and rj; returns whether they overlap.
template <class Scalar>
KOKKOS_INLINE_FUNCTION bool add_overlap_force( Scalar dx, Scalar dy, Scalar dz, Scalar r2, Scalar ri, Scalar rj,
                                               const ForceParameters<Scalar>& fp, Scalar f[3] )
{
    const Scalar k = overlap_force_factor( r2, ri, rj, fp.repulsion, fp.attraction );
    f[0] += k * dx;
    f[1] += k * dy;
    f[2] += k * dz;
    return k != Scalar( 0 );
}

//! f += the force between agents whose centres coincide (ids and diameters of both).
template <class Scalar>
KOKKOS_INLINE_FUNCTION void add_coincident_force( std::int64_t id_i, std::int64_t id_j, Scalar di, Scalar dj,
                                                  const ForceParameters<Scalar>& fp, Scalar f[3] )
{
    Scalar e[3];
    coincident_direction( id_i, id_j, e );
    const Scalar magnitude = coincident_force( di, dj, fp );
    f[0] += magnitude * e[0];
    f[1] += magnitude * e[1];
    f[2] += magnitude * e[2];
}

/*!
  The sphere forces as a grid::NeighborReduction kernel: each agent's net collision force over its
  neighbours, then its displacement (and, if CountPairs, its number of interacting neighbours).
*/
template <bool CountPairs, class Scalar, class MemorySpace, class VectorView>
struct SphereForceKernel
{
    struct accumulator_type
    {
        Scalar f[3];
        Scalar ri; // the agent's interaction radius
        int overlaps;
        int coincident;
    };
    using scalar_view = typename SphereAgents<Scalar, MemorySpace>::scalar_view;
    scalar_view diameter;
    scalar_view adherence;
    scalar_view density;
    typename SphereAgents<Scalar, MemorySpace>::id_view id;
    VectorView force;
    VectorView displacement;
    Kokkos::View<int*, MemorySpace> overlap_count;
    ForceParameters<Scalar> fp;
    Scalar dt;
    Scalar max_move;

    KOKKOS_INLINE_FUNCTION void init( int i, accumulator_type& a ) const
    {
        a.ri = Scalar( 0.5 ) * diameter( i ) + fp.radius_extension;
    }

    KOKKOS_INLINE_FUNCTION void pair( int, int j, Scalar dx, Scalar dy, Scalar dz, Scalar r2,
                                      accumulator_type& a ) const
    {
        if ( r2 > coincident_distance2<Scalar>() )
        {
            const bool overlap = add_overlap_force( dx, dy, dz, r2, a.ri,
                                                    Scalar( 0.5 ) * diameter( j ) + fp.radius_extension, fp, a.f );
            if constexpr ( CountPairs )
                a.overlaps += overlap ? 1 : 0;
        }
        else
            ++a.coincident;
    }

    template <class Neighbors>
    KOKKOS_INLINE_FUNCTION void finish( int i, accumulator_type& a, const Neighbors& nb ) const
    {
        const Scalar di = diameter( i );
        // Centres at the same point are rare: a second walk handles them, which keeps the hash and the
        // trigonometry of coincident_direction out of the main loop's registers.
        if ( a.coincident > 0 )
            nb.for_each( [&]( const int j, const Scalar, const Scalar, const Scalar, const Scalar r2 ) {
                if ( r2 > coincident_distance2<Scalar>() )
                    return;
                add_coincident_force( id( i ), id( j ), di, diameter( j ), fp, a.f );
                if constexpr ( CountPairs )
                    ++a.overlaps;
            } );
        Scalar m[3];
        displacement_from_force( a.f, adherence( i ), density( i ) * sphere_volume( di ), dt, max_move, m );
        for ( int d = 0; d < 3; ++d )
        {
            force( i, d ) = a.f[d];
            displacement( i, d ) = m[d];
        }
        if constexpr ( CountPairs )
            overlap_count( i ) = a.overlaps;
    }
};

/*!
  Net collision force and displacement of the first num_targets agents (their neighbours through the
  grid, which may hold more agents: the ghosts of a distributed run act on the targets but are not
  moved), by `reduction` (one agent per thread, or several of a cell on GPUs). Returns the number of
  overlapping (target, neighbour) pairs if CountPairs.
*/
template <bool CountPairs, class ExecutionSpace, class Query, class Scalar, class MemorySpace,
          class VectorView>
long long compute_displacements_impl( const ExecutionSpace& exec, const Query& query,
                                      grid::NeighborReduction<MemorySpace>& reduction,
                                      const SphereAgents<Scalar, MemorySpace>& agents,
                                      const MechanicsParameters<Scalar>& params,
                                      const VectorView& force, const VectorView& displacement,
                                      const Kokkos::View<int*, MemorySpace>& overlap_count,
                                      const int num_targets )
{
    const SphereForceKernel<CountPairs, Scalar, MemorySpace, VectorView> kernel{
        agents.diameters(), agents.adherence(), agents.densities(), agents.ids(), force, displacement,
        overlap_count,      params.force,       params.time_step,   params.max_displacement };
    // Per-agent counts (overlap_count, at least num_particles() entries when CountPairs), summed
    // afterwards: one 64-bit atomic per agent on a single counter is a compare-and-swap loop that
    // stalls under contention.
    // 256 x 4 threads per SM caps the kernel at 64 registers, for a higher occupancy than with the
    // registers it takes unbounded (docs/performance.md, "Sphere mechanics (issue #6)" and
    // "Design choices measured (moved from source comments, issue #46)").
    reduction.template run<Kokkos::LaunchBounds<256, 4>>( exec, query, kernel, query.cutoff(), num_targets,
                                                          "morula::mechanics::sphere_forces" );
    long long total = 0;
    if ( CountPairs )
        Kokkos::parallel_reduce(
            "morula::mechanics::sum_overlaps",
            core::LaunchRange<ExecutionSpace>( exec, 0, num_targets ),
            KOKKOS_LAMBDA( const int i, long long& sum ) { sum += overlap_count( i ); }, total );
    return total;
}

template <class ExecutionSpace, class Query, class Scalar, class MemorySpace, class VectorView>
long long compute_displacements( const ExecutionSpace& exec, const Query& query,
                                 grid::NeighborReduction<MemorySpace>& reduction,
                                 const SphereAgents<Scalar, MemorySpace>& agents,
                                 const MechanicsParameters<Scalar>& params, const VectorView& force,
                                 const VectorView& displacement,
                                 const Kokkos::View<int*, MemorySpace>& overlap_count, bool count_pairs,
                                 int num_targets )
{
    if ( count_pairs )
        return compute_displacements_impl<true>( exec, query, reduction, agents, params, force, displacement,
                                                 overlap_count, num_targets );
    return compute_displacements_impl<false>( exec, query, reduction, agents, params, force, displacement,
                                              overlap_count, num_targets );
}

/*!
  One target of add_ghost_displacements(): its force from the ghosts within reach added to the force
  from its owned neighbours, and its displacement recomputed; returns the overlapping (target, ghost)
  pairs, coincident ones included, as SphereForceKernel counts a target's pairs.
*/
template <class GhostQuery, class TargetView, class PositionView, class Scalar, class MemorySpace, class VectorView>
struct GhostForce
{
    using agents_type = SphereAgents<Scalar, MemorySpace>;
    GhostQuery ghost_query;
    TargetView targets;
    PositionView x;
    typename agents_type::scalar_view diameter, adherence, density;
    typename agents_type::id_view id;
    VectorView force, displacement;
    ForceParameters<Scalar> fp;
    Scalar dt, max_move, radius;
    int first_ghost;

    KOKKOS_INLINE_FUNCTION int apply( const int t ) const
    {
        const int i = targets( t );
        const Scalar di = diameter( i );
        const Scalar ri = Scalar( 0.5 ) * di + fp.radius_extension;
        Scalar f[3] = { force( i, 0 ), force( i, 1 ), force( i, 2 ) };
        int coincident = 0, overlaps = 0;
        ghost_query.for_each_neighbor_of_point(
            x( i, 0 ), x( i, 1 ), x( i, 2 ), radius,
            [&]( const int g, const Scalar dx, const Scalar dy, const Scalar dz, const Scalar r2 ) {
                if ( r2 > coincident_distance2<Scalar>() )
                    overlaps += add_overlap_force( dx, dy, dz, r2, ri,
                                                   Scalar( 0.5 ) * diameter( first_ghost + g ) + fp.radius_extension,
                                                   fp, f )
                                    ? 1
                                    : 0;
                else
                    ++coincident;
            } );
        if ( coincident > 0 )
            ghost_query.for_each_neighbor_of_point(
                x( i, 0 ), x( i, 1 ), x( i, 2 ), radius,
                [&]( const int g, const Scalar, const Scalar, const Scalar, const Scalar r2 ) {
                    if ( r2 <= coincident_distance2<Scalar>() )
                        add_coincident_force( id( i ), id( first_ghost + g ), di, diameter( first_ghost + g ), fp, f );
                } );
        Scalar m[3];
        displacement_from_force( f, adherence( i ), density( i ) * sphere_volume( di ), dt, max_move, m );
        for ( int d = 0; d < 3; ++d )
        {
            force( i, d ) = f[d];
            displacement( i, d ) = m[d];
        }
        return overlaps + coincident;
    }
};

/*!
  \brief Completes the forces of the agents listed in `targets` (entries [0, num_targets)) with their
  neighbours among the ghosts of a distributed run, and recomputes their displacements.

  compute_displacements_impl() over a grid of the owned agents alone leaves every owned agent's force
  from its owned neighbours in `force`; the ghosts (agents [ghost_begin, ghost_begin + n) of the SoA,
  binned by `ghost_query` over their own positions) add theirs here, for the agents near a face only:
  the others have no ghost within reach. The sum per agent is owned neighbours first, then ghosts
  (the same pairs as one grid over both, in another order: equal to round-off).
  \return the overlapping (target, ghost) pairs if count_pairs (a reduction), else 0 (no reduction)
*/
template <class ExecutionSpace, class GhostQuery, class Scalar, class MemorySpace, class TargetView, class VectorView>
long long add_ghost_displacements( const ExecutionSpace& exec, const GhostQuery& ghost_query, std::size_t ghost_begin,
                                   const TargetView& targets, std::size_t num_targets,
                                   const SphereAgents<Scalar, MemorySpace>& agents,
                                   const MechanicsParameters<Scalar>& params, const VectorView& force,
                                   const VectorView& displacement, bool count_pairs = false )
{
    if ( num_targets == 0 || ghost_query.num_particles() == 0 )
        return 0;
    using PositionView = std::decay_t<decltype( agents.positions() )>;
    const GhostForce<GhostQuery, TargetView, PositionView, Scalar, MemorySpace, VectorView> ghost{
        ghost_query,        targets,          agents.positions(),    agents.diameters(),
        agents.adherence(), agents.densities(), agents.ids(),        force,
        displacement,       params.force,     params.time_step,      params.max_displacement,
        ghost_query.cutoff(), static_cast<int>( ghost_begin ) };
    const core::LaunchRange<ExecutionSpace> range( exec, 0, static_cast<int>( num_targets ) );
    long long pairs = 0;
    if ( count_pairs )
        Kokkos::parallel_reduce(
            "morula::mechanics::sphere_ghost_forces_counted", range,
            KOKKOS_LAMBDA( const int t, long long& sum ) { sum += ghost.apply( t ); }, pairs );
    else
        Kokkos::parallel_for( "morula::mechanics::sphere_ghost_forces", range,
                              KOKKOS_LAMBDA( const int t ) { ghost.apply( t ); } );
    return pairs;
}

//! x += m; periodic axes wrap into [lo, hi), closed axes stop at the walls, open axes are free.
template <class ExecutionSpace, class PositionView, class VectorView, class Scalar>
void apply_displacements( const ExecutionSpace& exec, const PositionView& x,
                          const VectorView& displacement, int n, const core::Box<Scalar>& box )
{
    Kokkos::parallel_for(
        "morula::mechanics::apply_displacements", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            for ( int d = 0; d < 3; ++d )
            {
                Scalar v = x( i, d ) + displacement( i, d );
                const Scalar lo = box.lo[d];
                const Scalar hi = box.hi[d];
                if ( box.boundary[d] == core::Boundary::periodic )
                {
                    const Scalar length = hi - lo;
                    v -= length * compat::floor( ( v - lo ) / length );
                    if ( !( v < hi ) ) // rounding of a position just below lo
                        v = lo;
                }
                else if ( box.boundary[d] == core::Boundary::closed )
                    v = v < lo ? lo : ( v > hi ? hi : v );
                x( i, d ) = v;
            }
        } );
}

} // namespace detail
} // namespace morula::mechanics

#endif
