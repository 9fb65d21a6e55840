/*!
  \file UpdateKernels.hpp
  \brief What a step does with its interactions (Worecki and Wcisło 2012, section 2.1): cell motion, tube growth and
  sprouting, the cell life cycle, and compaction of the lysed cells. New cells and tubes are appended
  on the device.
*/
#ifndef MORULA_ANGIO_DETAIL_UPDATEKERNELS_HPP
#define MORULA_ANGIO_DETAIL_UPDATEKERNELS_HPP

#include <morula/angio/Interactions.hpp>
#include <morula/angio/detail/KernelData.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::angio::detail
{

/*!
  \brief Cell-barrier forces and overdamped motion: a cell reaching past a wall by h is pushed back with
  wall_stiffness x h; every cell moves by dt F / gamma with gamma = friction x r / reference_radius; the
  walls stop a cell that would cross them. The total force and the velocity are stored.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void move_cells( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int n,
                 const Constants<Scalar>& c )
{
    Kokkos::parallel_for(
        "morula::angio::move_cells", core::LaunchRange<ExecutionSpace>( exec, 0, n ), KOKKOS_LAMBDA( const int i ) {
            if ( cells.state( i ) == cell_lysed )
                return;
            const Scalar r = cells.radius( i );
            const Scalar gamma = c.friction_per_radius * r;
            Scalar wall = 0;
            for ( int d = 0; d < 3; ++d )
            {
                const Scalar x = cells.x( i, d );
                Scalar F = cells.f( i, d );
                const Scalar below = r - ( x - c.box.lo[d] );
                const Scalar above = r - ( c.box.hi[d] - x );
                if ( below > Scalar( 0 ) )
                {
                    F += c.wall_stiffness * below;
                    wall += c.wall_stiffness * below;
                }
                if ( above > Scalar( 0 ) )
                {
                    F -= c.wall_stiffness * above;
                    wall += c.wall_stiffness * above;
                }
                const Scalar v = F / gamma;
                Scalar xn = x + c.dt * v;
                xn = xn < c.box.lo[d] ? c.box.lo[d] : ( xn > c.box.hi[d] ? c.box.hi[d] : xn );
                cells.x( i, d ) = xn;
                cells.v( i, d ) = v;
                cells.f( i, d ) = F;
            }
            cells.pressure( i ) += wall / ( Scalar( 12.566370614359172954 ) * r * r );
        } );
}

//! What a tube does in the growth phase (computed alike in both passes of the scan).
template <class Scalar>
struct TubeGrowth
{
    bool extends = false, stops = false, splits = false, sprouts = false;
    Scalar new_b[3];
    Scalar sprout_dir[3];
};

template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION TubeGrowth<Scalar> plan_tube_growth( const TubeViews<Scalar, MemorySpace>& t, int i,
                                                             const Constants<Scalar>& c, Scalar time,
                                                             std::uint32_t step )
{
    TubeGrowth<Scalar> g{};
    const int flags = t.flags( i );
    const Scalar sensed = t.taf( i );
    Scalar grad[3] = { t.grad( i, 0 ), t.grad( i, 1 ), t.grad( i, 2 ) };
    const Scalar gnorm = norm3( grad );
    if ( flags & tube_tip )
    {
        if ( !( sensed >= c.tip_taf ) || c.tip_speed <= Scalar( 0 ) )
            return g;
        Scalar a[3], b[3], u[3];
        t.ends( i, a, b );
        for ( int d = 0; d < 3; ++d )
            u[d] = b[d] - a[d];
        const Scalar len = norm3( u );
        Scalar dir[3];
        for ( int d = 0; d < 3; ++d )
        {
            const Scalar own = len > Scalar( 0 ) ? u[d] / len : Scalar( 0 );
            const Scalar chem = gnorm > Scalar( 0 ) ? grad[d] / gnorm : own;
            dir[d] = c.tip_persistence * own + ( Scalar( 1 ) - c.tip_persistence ) * chem;
        }
        const Scalar dn = norm3( dir );
        if ( !( dn > Scalar( 0 ) ) )
            return g;
        g.extends = true;
        Scalar grown2 = 0;
        for ( int d = 0; d < 3; ++d )
        {
            Scalar x = b[d] + c.dt * c.tip_speed * dir[d] / dn;
            if ( x < c.box.lo[d] || x > c.box.hi[d] )
            {
                g.stops = true; // reached a wall
                x = x < c.box.lo[d] ? c.box.lo[d] : c.box.hi[d];
            }
            g.new_b[d] = x;
            grown2 += ( x - a[d] ) * ( x - a[d] );
        }
        g.splits = grown2 > c.max_tube_length * c.max_tube_length;
        return g;
    }
    // Sprouts come from the initial vessels only; new vessels extend from their tips.
    if ( !c.sprouting || ( flags & ( tube_anastomosed | tube_sprouted ) ) || !( sensed >= c.sprout_taf ) ||
         !( gnorm > Scalar( 0 ) ) ||
         time - t.last_sprout( i ) < c.sprout_refractory )
        return g;
    const core::HashedRng rng( c.seed );
    const Scalar p = Scalar( 1 ) - compat::exp( -c.sprout_rate * c.dt );
    if ( !( rng.uniform<Scalar>( static_cast<std::uint64_t>( t.ids( i ) ), 7, step ) < p ) )
        return g;
    for ( int d = 0; d < 3; ++d )
    {
        g.sprout_dir[d] = grad[d] / gnorm;
        const Scalar x = Scalar( 0.5 ) * ( t.a( i, d ) + t.b( i, d ) ) + c.sprout_length * g.sprout_dir[d];
        if ( x < c.box.lo[d] || x > c.box.hi[d] )
            return g;
    }
    g.sprouts = true;
    return g;
}

//! Fills tube slot k as a new tube [a, b] of radius r, child of `parent` attached at `attach`.
template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION void append_tube( const TubeViews<Scalar, MemorySpace>& t, int k, const Scalar a[3],
                                         const Scalar b[3], Scalar r, int parent, Scalar attach, Scalar time,
                                         std::int64_t id )
{
    for ( int d = 0; d < 3; ++d )
    {
        t.a( k, d ) = a[d];
        t.b( k, d ) = b[d];
        t.grad( k, d ) = 0;
        t.f( k, d ) = 0;
    }
    t.ra( k ) = r;
    t.rb( k ) = r;
    t.parent( k ) = parent;
    t.flags( k ) = tube_tip | tube_sprouted;
    t.attach( k ) = attach;
    t.flow( k ) = 0;
    t.blood( k ) = 0;
    t.delivered( k ) = 0;
    t.taf( k ) = 0;
    t.last_sprout( k ) = time;
    t.children_r3( k ) = 0;
    t.contacts( k ) = 0;
    t.ids( k ) = id;
}

/*!
  \brief Tube growth and sprouting. A tip in enough TAF extends at tip_speed along a blend of its own
  direction and the TAF gradient (stopping at a wall); one longer than max_tube_length splits at its
  middle, the front half becoming a new tip tube. A tube of the initial vessels in TAF above sprout_taf sprouts at
  rate sprout_rate, at most once per refractory time: a new tip of sprout_radius grows from its middle up
  the TAF gradient. New tubes go to slots m, m + 1, ... in the order of their parents (a scan), with ids
  next_id, next_id + 1, ...; their number goes to the counters.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void grow_tubes( const ExecutionSpace& exec, const TubeViews<Scalar, MemorySpace>& t, int m, const Constants<Scalar>& c,
                 Scalar time, std::uint32_t step, std::int64_t next_id, const Workspace<Scalar, MemorySpace>& w )
{
    const auto counters = w.counters;
    Kokkos::parallel_scan(
        "morula::angio::grow_tubes", core::LaunchRange<ExecutionSpace>( exec, 0, m ),
        KOKKOS_LAMBDA( const int i, long long& offset, const bool final_pass ) {
            const TubeGrowth<Scalar> g = plan_tube_growth( t, i, c, time, step );
            const int added = ( g.splits ? 1 : 0 ) + ( g.sprouts ? 1 : 0 );
            if ( final_pass )
            {
                long long slot = m + offset;
                if ( g.extends )
                {
                    Scalar a[3];
                    for ( int d = 0; d < 3; ++d )
                        a[d] = t.a( i, d );
                    if ( g.splits )
                    {
                        Scalar mid[3];
                        for ( int d = 0; d < 3; ++d )
                            mid[d] = Scalar( 0.5 ) * ( a[d] + g.new_b[d] );
                        append_tube( t, static_cast<int>( slot ), mid, g.new_b, t.rb( i ), i, Scalar( 1 ), time,
                                     next_id + offset );
                        if ( g.stops )
                            t.flags( static_cast<int>( slot ) ) &= ~tube_tip;
                        for ( int d = 0; d < 3; ++d )
                            t.b( i, d ) = mid[d];
                        t.flags( i ) &= ~tube_tip;
                        ++slot;
                    }
                    else
                    {
                        for ( int d = 0; d < 3; ++d )
                            t.b( i, d ) = g.new_b[d];
                        if ( g.stops )
                            t.flags( i ) &= ~tube_tip;
                    }
                }
                if ( g.sprouts )
                {
                    Scalar a[3], b[3];
                    for ( int d = 0; d < 3; ++d )
                    {
                        a[d] = Scalar( 0.5 ) * ( t.a( i, d ) + t.b( i, d ) );
                        b[d] = a[d] + c.sprout_length * g.sprout_dir[d];
                    }
                    append_tube( t, static_cast<int>( slot ), a, b, c.sprout_radius, i, Scalar( 0.5 ), time,
                                 next_id + offset + ( g.splits ? 1 : 0 ) );
                    t.last_sprout( i ) = time;
                    Kokkos::atomic_add( &counters( counter_sprouts ), 1LL );
                }
                if ( i == m - 1 )
                    counters( counter_new_tubes ) = offset + added;
            }
            offset += added;
        } );
}

//! What the life-cycle rules make of one cell (computed alike in both passes of the scan).
template <class Scalar>
struct CellFate
{
    std::int32_t state;
    Scalar age, hypoxic_time, radius;
    bool divides = false, lysed = false;
};

template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION CellFate<Scalar> plan_cell_fate( const CellViews<Scalar, MemorySpace>& cells, int i,
                                                         const Constants<Scalar>& c )
{
    CellFate<Scalar> f{};
    f.state = cells.state( i );
    f.age = cells.age( i ) + c.dt;
    f.hypoxic_time = cells.hypoxic_time( i );
    f.radius = cells.radius( i );
    const Scalar oxygen = cells.oxygen( i );
    if ( is_alive( f.state ) )
    {
        if ( f.state != cell_hypoxic && oxygen < c.hypoxia_threshold )
        {
            f.state = cell_hypoxic;
            f.hypoxic_time = 0;
        }
        else if ( f.state == cell_hypoxic )
        {
            f.hypoxic_time += c.dt;
            if ( oxygen >= c.recovery_threshold )
            {
                f.state = f.age >= c.maturation_age ? cell_mature : cell_new;
                f.hypoxic_time = 0;
            }
            else if ( f.hypoxic_time >= c.hypoxic_survival )
                f.state = cell_dead;
        }
        if ( is_alive( f.state ) && f.age >= c.max_age )
            f.state = cell_dead;
        if ( f.state == cell_new && f.age >= c.maturation_age )
            f.state = cell_mature;
        if ( ( f.state == cell_new || f.state == cell_mature ) && cells.pressure( i ) <= c.max_pressure )
        {
            const Scalar vmax = sphere_volume_of_radius( c.division_radius );
            // Cells of one lineage do not stay in step: each grows at its own rate, fixed by its id.
            const core::HashedRng rng( c.seed );
            const Scalar u = Scalar( 2 ) * rng.uniform<Scalar>( static_cast<std::uint64_t>( cells.id( i ) ), 5, 0 ) - Scalar( 1 );
            Scalar v = sphere_volume_of_radius( f.radius ) + c.growth_rate * ( Scalar( 1 ) + c.growth_spread * u ) * c.dt;
            v = v < vmax ? v : vmax;
            f.radius = sphere_radius_of_volume( v );
        }
        f.divides = f.state == cell_mature && f.radius >= c.division_radius * Scalar( 0.99999 );
    }
    if ( f.state == cell_dead )
    {
        const Scalar v = sphere_volume_of_radius( f.radius ) - c.lysis_rate * c.dt;
        if ( v <= sphere_volume_of_radius( c.lysis_radius ) )
        {
            f.state = cell_lysed;
            f.lysed = true;
            f.radius = c.lysis_radius;
        }
        else
            f.radius = sphere_radius_of_volume( v );
    }
    return f;
}

/*!
  \brief The cell life cycle: age, hypoxia and recovery, death by age or prolonged hypoxia, growth of
  normoxic cells below the pressure limit, division of Mature cells at the division radius (two New cells
  of half the volume, a daughter radius apart along a random axis, same concentrations, so oxygen and TAF
  amounts are kept), lysis of dead cells. Daughters go to slots n, n + 1, ... in their mothers' order
  with ids next_id, ...; the numbers of divisions and lysed cells go to the counters.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void life_cycle( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int n,
                 const Constants<Scalar>& c, std::uint32_t step, std::int64_t next_id,
                 const Workspace<Scalar, MemorySpace>& w )
{
    const auto counters = w.counters;
    Kokkos::parallel_scan(
        "morula::angio::life_cycle", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, long long& offset, const bool final_pass ) {
            const CellFate<Scalar> f = plan_cell_fate( cells, i, c );
            if ( final_pass )
            {
                cells.s( i ) = f.state;
                cells.age( i ) = f.age;
                cells.hypoxic_time( i ) = f.hypoxic_time;
                cells.r( i ) = f.radius;
                if ( f.lysed )
                    Kokkos::atomic_add( &counters( counter_lysed ), 1LL );
                if ( f.divides )
                {
                    const int k = static_cast<int>( n + offset );
                    const core::HashedRng rng( c.seed );
                    const std::uint64_t key = static_cast<std::uint64_t>( cells.id( i ) );
                    const Scalar z = Scalar( 2 ) * rng.uniform<Scalar>( key, 1, step ) - Scalar( 1 );
                    const Scalar phi = Scalar( 6.283185307179586477 ) * rng.uniform<Scalar>( key, 2, step );
                    const Scalar sxy = compat::sqrt( compat::fmax( Scalar( 0 ), Scalar( 1 ) - z * z ) );
                    const Scalar axis[3] = { sxy * compat::cos( phi ), sxy * compat::sin( phi ), z };
                    const Scalar rd = sphere_radius_of_volume( Scalar( 0.5 ) * sphere_volume_of_radius( f.radius ) );
                    for ( int d = 0; d < 3; ++d )
                    {
                        const Scalar x = cells.x( i, d );
                        Scalar xm = x - Scalar( 0.5 ) * rd * axis[d];
                        Scalar xd = x + Scalar( 0.5 ) * rd * axis[d];
                        xm = xm < c.box.lo[d] ? c.box.lo[d] : ( xm > c.box.hi[d] ? c.box.hi[d] : xm );
                        xd = xd < c.box.lo[d] ? c.box.lo[d] : ( xd > c.box.hi[d] ? c.box.hi[d] : xd );
                        cells.x( i, d ) = xm;
                        cells.x( k, d ) = xd;
                        cells.v( k, d ) = 0;
                        cells.f( k, d ) = 0;
                    }
                    cells.r( i ) = rd;
                    cells.r( k ) = rd;
                    cells.age( i ) = 0;
                    cells.age( k ) = 0;
                    cells.hypoxic_time( k ) = 0;
                    cells.s( i ) = cell_new;
                    cells.s( k ) = cell_new;
                    cells.oxygen( k ) = cells.oxygen( i );
                    cells.taf( k ) = cells.taf( i );
                    cells.pressure( k ) = cells.pressure( i );
                    cells.ids( k ) = next_id + offset;
                }
                if ( i == n - 1 )
                    counters( counter_divisions ) = offset + ( f.divides ? 1 : 0 );
            }
            offset += f.divides ? 1 : 0;
        } );
}

/*!
  \brief Stable partition of the cells: those still present first, in their order, then the lysed ones;
  perm(k) is the old index of new slot k (n_kept is known to the host from the counters).
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class Perm>
void removal_permutation( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int n, int n_kept,
                          const Perm& perm )
{
    Kokkos::parallel_scan(
        "morula::angio::removal_permutation", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, int& kept, const bool final_pass ) {
            const bool keep = cells.state( i ) != cell_lysed;
            if ( final_pass )
                perm( keep ? kept : n_kept + ( i - kept ) ) = i;
            kept += keep ? 1 : 0;
        } );
}

} // namespace morula::angio::detail

#endif
