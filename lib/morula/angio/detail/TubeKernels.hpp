/*!
  \file TubeKernels.hpp
  \brief The vessel tubes' interactions in the tumour/angiogenesis model (Worecki and Wcisło 2012, section 2.1): blood
  flow, tube-tube, tube-cell (Algorithm 5) and cell-tube (Algorithm 6).
*/
#ifndef MORULA_ANGIO_DETAIL_TUBEKERNELS_HPP
#define MORULA_ANGIO_DETAIL_TUBEKERNELS_HPP

#include <morula/angio/Interactions.hpp>
#include <morula/angio/detail/KernelData.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/GridGeometry.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <utility>

namespace morula::angio::detail
{

//! Fixed-point scale of the Murray sums: integer sums are exact, so their order does not matter.
constexpr double murray_scale = 1048576.0; // 2^20 per μm^3

template <class Scalar>
KOKKOS_INLINE_FUNCTION long long murray_weight( Scalar r )
{
    return static_cast<long long>( static_cast<double>( r ) * static_cast<double>( r ) * static_cast<double>( r ) *
                                       murray_scale +
                                   0.5 );
}

/*!
  \brief The blood-flow rule: each inlet carries `inflow`; at every branch point the parent's flow splits
  among its children in proportion to r^3 (Murray's law); blood oxygen falls as exp(-s / length) with s
  the path length from the inlet to the tube's middle. Each tube walks its chain up to the inlet.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void blood_flow( const ExecutionSpace& exec, const TubeViews<Scalar, MemorySpace>& t, int m, const Constants<Scalar>& c,
                 const Workspace<Scalar, MemorySpace>& w )
{
    const auto children = w.children_fixed;
    Kokkos::deep_copy( exec, Kokkos::subview( children, std::make_pair( 0, m ) ), 0LL );
    Kokkos::parallel_for(
        "morula::angio::murray_sums", core::LaunchRange<ExecutionSpace>( exec, 0, m ), KOKKOS_LAMBDA( const int i ) {
            const int p = t.parent( i );
            if ( p >= 0 )
                Kokkos::atomic_add( &children( p ), murray_weight( t.ra( i ) ) );
        } );
    Kokkos::parallel_for(
        "morula::angio::blood_flow", core::LaunchRange<ExecutionSpace>( exec, 0, m ), KOKKOS_LAMBDA( const int i ) {
            double share = 1;
            Scalar path = Scalar( 0.5 ) * t.length( i );
            int k = i;
            for ( int p = t.parent( k ); p >= 0; p = t.parent( k ) )
            {
                share *= static_cast<double>( murray_weight( t.ra( k ) ) ) / static_cast<double>( children( p ) );
                path += t.attach( k ) * t.length( p );
                k = p;
            }
            t.children_r3( i ) = static_cast<Scalar>( static_cast<double>( children( i ) ) / murray_scale );
            t.flow( i ) = c.inflow * static_cast<Scalar>( share );
            t.blood( i ) = compat::exp( -path / c.blood_oxygen_length );
        } );
}

//! Midpoints of the tubes, the positions of the tube grid.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void tube_midpoints( const ExecutionSpace& exec, const TubeViews<Scalar, MemorySpace>& t, int m,
                     const Workspace<Scalar, MemorySpace>& w )
{
    const auto mid = w.midpoints;
    Kokkos::parallel_for(
        "morula::angio::tube_midpoints", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
        KOKKOS_LAMBDA( const int i ) {
            for ( int d = 0; d < 3; ++d )
                mid( i, d ) = Scalar( 0.5 ) * ( t.a( i, d ) + t.b( i, d ) );
        } );
}

//! Whether tube `j` is an ancestor of tube `i` (on the chain from i up to its inlet).
template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION bool is_ancestor( const TubeViews<Scalar, MemorySpace>& t, int j, int i )
{
    for ( int k = t.parent( i ); k >= 0; k = t.parent( k ) )
        if ( k == j )
            return true;
    return false;
}

/*!
  Tube j's contact with tube i (ends ai-bi and aj-bj), shared by both tube-tube kernels: where the two
  segments overlap (closer than the sum of their radii at the closest points), one more touching tube, a
  repulsion along the closest points' difference added to F, and a fusion when i is a growing tip touching
  with its front half a tube that is not its ancestor.
*/
template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION void tube_pair_contact( const TubeViews<Scalar, MemorySpace>& t, const Constants<Scalar>& c,
                                               const int i, const int j, const Scalar* ai, const Scalar* bi,
                                               const Scalar* aj, const Scalar* bj, const bool tip, Scalar* F,
                                               int& touching, bool& fuse )
{
    Scalar s, u;
    const Scalar d2 = segment_distance2( ai, bi, aj, bj, s, u );
    const Scalar rsum = t.ra( i ) + s * ( t.rb( i ) - t.ra( i ) ) + t.ra( j ) + u * ( t.rb( j ) - t.ra( j ) );
    if ( !( d2 < rsum * rsum ) )
        return;
    ++touching;
    const Scalar d = compat::sqrt( d2 );
    if ( d > Scalar( 0 ) )
    {
        const Scalar k = c.tube_repulsion * ( rsum - d ) / d;
        for ( int a = 0; a < 3; ++a )
            F[a] += k * ( ai[a] + s * ( bi[a] - ai[a] ) - aj[a] - u * ( bj[a] - aj[a] ) );
    }
    if ( tip && s >= Scalar( 0.5 ) && !is_ancestor( t, j, i ) )
        fuse = true;
}

/*!
  \brief Tube-tube interactions: every tube finds the tubes whose segments come closer than the sum of
  their radii (through a grid over midpoints), counts them and sums an overlap force (tubes are anchored:
  the force is reported, not applied). A growing tip that touches, with its front half, a tube that is
  not its own ancestor fuses with it (anastomosis) and stops growing.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class Query>
void tube_tube( const ExecutionSpace& exec, const Query& query, const TubeViews<Scalar, MemorySpace>& t, int m,
                Scalar reach, const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w )
{
    const auto counters = w.counters;
    Kokkos::parallel_for(
        "morula::angio::tube_tube", core::LaunchRange<ExecutionSpace>( exec, 0, m ), KOKKOS_LAMBDA( const int i ) {
            Scalar ai[3], bi[3];
            t.ends( i, ai, bi );
            const int flags = t.flags( i );
            const bool tip = ( flags & tube_tip ) != 0;
            Scalar F[3] = { 0, 0, 0 };
            int touching = 0;
            bool fuse = false;
            query.for_each_neighbor( i, reach, [&]( int j, Scalar, Scalar, Scalar, Scalar ) {
                if ( t.parent( i ) == j || t.parent( j ) == i )
                    return; // linked in a chain: they meet by construction
                Scalar aj[3], bj[3];
                t.ends( j, aj, bj );
                tube_pair_contact( t, c, i, j, ai, bi, aj, bj, tip, F, touching, fuse );
            } );
            for ( int a = 0; a < 3; ++a )
                t.f( i, a ) = F[a];
            t.contacts( i ) = touching;
            if ( fuse )
            {
                t.flags( i ) = ( flags & ~tube_tip ) | tube_anastomosed;
                Kokkos::atomic_add( &counters( counter_anastomoses ), 1LL );
            }
        } );
}

//! Tubes up to which interact_tubes() uses tube_tube_all_pairs() on a device backend instead of the tube
//! grid (a GPU checks 512^2 pairs in microseconds; a grid build costs several launches and a host read).
//! Below the tube-cell benchmark's smallest case (1000 tubes), which times the grid path.
constexpr int tube_tube_all_pairs_max = 512;

/*!
  \brief tube_tube() without a grid: every tube checks every other tube whose midpoint lies within `reach`
  of its own (the pairs the grid query visits), one team per tube, thread r taking tubes r, r + T, ...
  The contacts and anastomoses are those of tube_tube(); the reported force sums the same terms in
  another order (tubes are anchored: the force is reported, never applied).
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void tube_tube_all_pairs( const ExecutionSpace& exec, const TubeViews<Scalar, MemorySpace>& t, int m, Scalar reach,
                          const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w )
{
    using policy_type = core::LaunchTeam<ExecutionSpace>;
    using member_type = typename policy_type::member_type;
    using shares_type = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecutionSpace::scratch_memory_space,
                                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    constexpr int fields = 5; // force (3), touching tubes, fuses
    const auto counters = w.counters;
    const Scalar reach2 = reach * reach;
    const auto body = KOKKOS_LAMBDA( const member_type& team )
    {
        const int i = team.league_rank();
        const int r = team.team_rank(), T = team.team_size();
        Scalar ai[3], bi[3], mi[3];
        t.ends( i, ai, bi );
        for ( int d = 0; d < 3; ++d )
            mi[d] = Scalar( 0.5 ) * ( ai[d] + bi[d] );
        const int flags = t.flags( i );
        const bool tip = ( flags & tube_tip ) != 0;
        Scalar F[3] = { 0, 0, 0 };
        int touching = 0;
        bool fuse = false;
        for ( int j = r; j < m; j += T )
        {
            if ( j == i || t.parent( i ) == j || t.parent( j ) == i )
                continue; // itself, or linked in a chain: they meet by construction
            Scalar aj[3], bj[3];
            t.ends( j, aj, bj );
            Scalar r2 = 0;
            for ( int d = 0; d < 3; ++d )
            {
                const Scalar dm = mi[d] - Scalar( 0.5 ) * ( aj[d] + bj[d] );
                r2 += dm * dm;
            }
            if ( !( r2 <= reach2 ) )
                continue;
            tube_pair_contact( t, c, i, j, ai, bi, aj, bj, tip, F, touching, fuse );
        }
        const shares_type shares( team.team_scratch( 0 ), T, fields );
        for ( int a = 0; a < 3; ++a )
            shares( r, a ) = F[a];
        shares( r, 3 ) = static_cast<Scalar>( touching );
        shares( r, 4 ) = fuse ? Scalar( 1 ) : Scalar( 0 );
        team.team_barrier();
        Kokkos::single( Kokkos::PerTeam( team ), [&]() {
            Scalar total[fields];
            for ( int f = 0; f < fields; ++f )
                total[f] = shares( 0, f );
            for ( int q = 1; q < T; ++q )
                for ( int f = 0; f < fields; ++f )
                    total[f] += shares( q, f );
            for ( int a = 0; a < 3; ++a )
                t.f( i, a ) = total[a];
            t.contacts( i ) = static_cast<int>( total[3] );
            if ( total[4] > Scalar( 0 ) )
            {
                t.flags( i ) = ( flags & ~tube_tip ) | tube_anastomosed;
                Kokkos::atomic_add( &counters( counter_anastomoses ), 1LL );
            }
        } );
    };
    if ( m == 0 )
        return;
    const int most = policy_type( exec, m, Kokkos::AUTO ).team_size_max( body, Kokkos::ParallelForTag() );
    const int team_size = most < 64 ? most : 64;
    policy_type policy( exec, m, team_size );
    policy.set_scratch_size( 0, Kokkos::PerTeam( shares_type::shmem_size( team_size, fields ) ) );
    Kokkos::parallel_for( "morula::angio::tube_tube_all_pairs", policy, body );
}

/*!
  \brief Geometry of a cell-tube pair: closest point q on the tube to the cell centre p, distance, the
  tube radius there, and the direction from q to p.
*/
template <class Scalar>
struct TubeContact
{
    Scalar diff[3]; // p - q
    Scalar d;       // |p - q|
    Scalar tube_radius;
    Scalar t; // parameter of q along the tube
};

template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION TubeContact<Scalar> tube_contact( const TubeViews<Scalar, MemorySpace>& tubes, int i,
                                                         const Scalar p[3] )
{
    TubeContact<Scalar> g{};
    Scalar a[3], b[3];
    tubes.ends( i, a, b );
    g.t = closest_parameter( a, b, p );
    for ( int d = 0; d < 3; ++d )
        g.diff[d] = p[d] - ( a[d] + g.t * ( b[d] - a[d] ) );
    g.d = norm3( g.diff );
    g.tube_radius = tubes.ra( i ) + g.t * ( tubes.rb( i ) - tubes.ra( i ) );
    return g;
}

/*!
  \brief The block of grid cells tube i visits in Algorithm 5: the cells its bounding box covers, widened by
  the largest reach of a cell-tube contact, (1 + range)(division radius + the tube's larger radius), so
  that no cell it may touch is missed. lo and hi are inclusive cell coordinates per axis. The one
  definition, used by tube_cell() and by the benchmark's census of what tube_cell() reads.
*/
template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION void tube_cell_stencil( const grid::GridGeometry<Scalar>& geom,
                                               const TubeViews<Scalar, MemorySpace>& t, int i, const Constants<Scalar>& c,
                                               int lo[3], int hi[3] )
{
    Scalar a[3], b[3];
    t.ends( i, a, b );
    const Scalar rmax = t.ra( i ) > t.rb( i ) ? t.ra( i ) : t.rb( i );
    const Scalar reach = ( Scalar( 1 ) + c.range ) * ( c.division_radius + rmax );
    for ( int d = 0; d < 3; ++d )
    {
        lo[d] = geom.cell_coordinate( d, ( a[d] < b[d] ? a[d] : b[d] ) - reach );
        hi[d] = geom.cell_coordinate( d, ( a[d] > b[d] ? a[d] : b[d] ) + reach );
    }
}

//! Largest team of tube_cell(): a tube's stencil holds a few hundred cells, 64 threads take a few each.
constexpr int tube_cell_team = 64;

/*!
  \brief Tube-cell interactions (the paper's Algorithm 5): each tube visits the grid cells its bounding box,
  widened by the interaction reach, covers; for every cell it touches it appends itself to the cell's tube
  list (atomic counter), and sums, for itself only, the reaction force, the TAF it senses (largest
  concentration and a weighted direction to it) and the oxygen it delivers at the current concentrations.

  One team per tube: a small tumour has tens of tubes, and one thread per tube walked its few hundred
  candidate cells alone, a chain of dependent loads that left the GPU idle
  (docs/performance.md, "Tumour growth and angiogenesis (issue #7)"). The team's threads take the slots of
  every stencil row in turn (thread r the slots r, r + T, ...); each sums its own share in slot order, then
  the shares are added in thread order, so the result depends on the team size T only (T = 1 on the host
  backends, where the sums are the one-thread sums of the slots in order).
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class Query>
void tube_cell( const ExecutionSpace& exec, const Query& query, const CellViews<Scalar, MemorySpace>& cells,
                const TubeViews<Scalar, MemorySpace>& t, int m, const Constants<Scalar>& c,
                const Workspace<Scalar, MemorySpace>& w )
{
    using policy_type = core::LaunchTeam<ExecutionSpace>;
    using member_type = typename policy_type::member_type;
    using shares_type = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecutionSpace::scratch_memory_space,
                                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    constexpr int fields = 8; // force (3), TAF direction (3), delivered oxygen, sensed TAF
    const auto tube_list = w.tube_list;
    const auto tube_count = w.tube_count;
    const auto geom = query.geometry();
    const auto offsets = query.cell_offsets();
    const auto body = KOKKOS_LAMBDA( const member_type& team )
    {
        const int i = team.league_rank();
        const int r = team.team_rank(), T = team.team_size();
        int lo[3], hi[3];
        tube_cell_stencil( geom, t, i, c, lo, hi );
        const Scalar perf = perfusion( t.flow( i ), c.perfusion_half );
        const Scalar blood = t.blood( i );
        Scalar F[3] = { 0, 0, 0 }, grad[3] = { 0, 0, 0 };
        Scalar sensed = 0, delivered = 0;
        for ( int cz = lo[2]; cz <= hi[2]; ++cz )
            for ( int cy = lo[1]; cy <= hi[1]; ++cy )
            {
                // Row-major cells: the run of cells lo[0]..hi[0] of one row is one run of slots.
                const int row = geom.linear_index( 0, cy, cz );
                const int end = offsets( row + hi[0] + 1 );
                for ( int slot = offsets( row + lo[0] ) + r; slot < end; slot += T )
                {
                    const int j = query.particle( slot );
                    const std::int32_t sj = cells.state( j );
                    if ( sj == cell_lysed )
                        continue;
                    const Scalar p[3] = { cells.x( j, 0 ), cells.x( j, 1 ), cells.x( j, 2 ) };
                    const TubeContact<Scalar> g = tube_contact( t, i, p );
                    const Scalar sum = cells.radius( j ) + g.tube_radius;
                    if ( !( g.d < ( Scalar( 1 ) + c.range ) * sum ) )
                        continue;
                    const int k = Kokkos::atomic_fetch_add( &tube_count( j ), 1 );
                    if ( k < c.max_tubes )
                        tube_list( j, k ) = i;
                    if ( g.d < sum && g.d > Scalar( 0 ) )
                    {
                        const Scalar f = c.tube_repulsion * ( sum - g.d ) / g.d;
                        for ( int d = 0; d < 3; ++d )
                            F[d] -= f * g.diff[d];
                    }
                    if ( is_alive( sj ) )
                    {
                        const Scalar wgt = contact_weight( g.d, sum, c.range );
                        const Scalar tj = cells.taf( j );
                        sensed = tj > sensed ? tj : sensed;
                        if ( g.d > Scalar( 0 ) )
                            for ( int d = 0; d < 3; ++d )
                                grad[d] += wgt * tj * g.diff[d] / g.d;
                        const Scalar gc = c.wall_conductance * contact_conductance( cells.radius( j ), g.tube_radius, wgt );
                        delivered += c.oxygen_diffusion * gc * perf * ( blood - cells.oxygen( j ) );
                    }
                }
            }
        const shares_type shares( team.team_scratch( 0 ), T, fields );
        for ( int d = 0; d < 3; ++d )
        {
            shares( r, d ) = F[d];
            shares( r, 3 + d ) = grad[d];
        }
        shares( r, 6 ) = delivered;
        shares( r, 7 ) = sensed;
        team.team_barrier();
        Kokkos::single( Kokkos::PerTeam( team ), [&]() {
            Scalar total[fields];
            for ( int f = 0; f < fields; ++f )
                total[f] = shares( 0, f );
            for ( int q = 1; q < T; ++q )
            {
                for ( int f = 0; f < 7; ++f )
                    total[f] += shares( q, f );
                total[7] = shares( q, 7 ) > total[7] ? shares( q, 7 ) : total[7];
            }
            for ( int d = 0; d < 3; ++d )
            {
                t.f( i, d ) += total[d];
                t.grad( i, d ) = total[3 + d];
            }
            t.taf( i ) = total[7];
            t.delivered( i ) = total[6];
        } );
    };
    const int most = policy_type( exec, m, Kokkos::AUTO ).team_size_max( body, Kokkos::ParallelForTag() );
    const int team_size = most < tube_cell_team ? most : tube_cell_team;
    policy_type policy( exec, m, team_size );
    policy.set_scratch_size( 0, Kokkos::PerTeam( shares_type::shmem_size( team_size, fields ) ) );
    Kokkos::parallel_for( "morula::angio::tube_cell", policy, body );
}

/*!
  \brief Cell-tube interactions (the paper's Algorithm 6): each cell goes through its tube list (sorted
  first, so that sums do not depend on the order the atomics gave) and adds the tubes' forces and contact
  pressure to its own, and their oxygen supply: sum g x blood oxygen and sum g, with g the wall conductance.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void cell_tube( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells,
                const TubeViews<Scalar, MemorySpace>& t, int n, const Constants<Scalar>& c,
                const Workspace<Scalar, MemorySpace>& w )
{
    const auto tube_list = w.tube_list;
    const auto tube_count = w.tube_count;
    const auto level = w.supply_level;
    const auto rate = w.supply_rate;
    const auto counters = w.counters;
    Kokkos::parallel_for(
        "morula::angio::cell_tube", core::LaunchRange<ExecutionSpace>( exec, 0, n ), KOKKOS_LAMBDA( const int j ) {
            const int total = tube_count( j );
            if ( total > c.max_tubes )
                Kokkos::atomic_fetch_max( &counters( counter_max_tubes ), static_cast<long long>( total ) );
            const int k = total < c.max_tubes ? total : c.max_tubes;
            for ( int q = 1; q < k; ++q ) // insertion sort: lists are short
            {
                const int v = tube_list( j, q );
                int p = q - 1;
                for ( ; p >= 0 && tube_list( j, p ) > v; --p )
                    tube_list( j, p + 1 ) = tube_list( j, p );
                tube_list( j, p + 1 ) = v;
            }
            const Scalar p[3] = { cells.x( j, 0 ), cells.x( j, 1 ), cells.x( j, 2 ) };
            const Scalar rj = cells.radius( j );
            const bool alive = is_alive( cells.state( j ) );
            Scalar F[3] = { 0, 0, 0 };
            Scalar repulsive = 0, A = 0, B = 0;
            for ( int q = 0; q < k; ++q )
            {
                const int i = tube_list( j, q );
                const TubeContact<Scalar> g = tube_contact( t, i, p );
                const Scalar sum = rj + g.tube_radius;
                if ( g.d < sum && g.d > Scalar( 0 ) )
                {
                    const Scalar f = c.tube_repulsion * ( sum - g.d );
                    for ( int d = 0; d < 3; ++d )
                        F[d] += f * g.diff[d] / g.d;
                    repulsive += f;
                }
                if ( alive )
                {
                    const Scalar gc = c.wall_conductance * contact_conductance( rj, g.tube_radius,
                                                                                contact_weight( g.d, sum, c.range ) ) *
                                      perfusion( t.flow( i ), c.perfusion_half );
                    A += gc * t.blood( i );
                    B += gc;
                }
            }
            for ( int d = 0; d < 3; ++d )
                cells.f( j, d ) += F[d];
            cells.pressure( j ) += repulsive / ( Scalar( 12.566370614359172954 ) * rj * rj );
            level( j ) = A;
            rate( j ) = B;
        } );
}

} // namespace morula::angio::detail

#endif
