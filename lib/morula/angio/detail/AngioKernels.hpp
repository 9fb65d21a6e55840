/*!
  \file AngioKernels.hpp
  \brief The device kernels of the tumour/angiogenesis model, one small function per phase (seed 001,
  section 2.1), called by TumourAngiogenesis. Every kernel takes the execution space instance and the
  Views it touches; none allocates.
*/
#ifndef MORULA_ANGIO_DETAIL_ANGIOKERNELS_HPP
#define MORULA_ANGIO_DETAIL_ANGIOKERNELS_HPP

#include <morula/angio/AngioParameters.hpp>
#include <morula/angio/Interactions.hpp>
#include <morula/angio/TumourCells.hpp>
#include <morula/angio/VesselTubes.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/mechanics/SphereForce.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace morula::angio::detail
{

//! Slots of the per-step counters, read by the host once at the end of a step.
enum StepCounter : int
{
    counter_divisions = 0,   //!< cells appended by division
    counter_lysed = 1,       //!< cells that shrank away (removed at the next step)
    counter_new_tubes = 2,   //!< tubes appended (sprouts and tip splits)
    counter_max_contacts = 3, //!< largest number of exchange contacts of a cell
    counter_max_tubes = 4,   //!< largest number of tubes touching a cell
    counter_negative = 5,    //!< cells whose oxygen or TAF went negative or non-finite
    counter_anastomoses = 6,
    counter_sprouts = 7,
    num_counters = 8
};

//! Every constant a kernel needs, in the model's Scalar (trivially copyable, captured by value).
template <class Scalar>
struct Constants
{
    Scalar dt;
    Scalar repulsion, adhesion, range, friction_per_radius, wall_stiffness;
    Scalar oxygen_diffusion, oxygen_uptake, hypoxic_uptake, taf_diffusion, taf_decay, taf_production;
    Scalar sweep_fraction;
    Scalar division_radius, daughter_radius, growth_rate, growth_spread, maturation_age, hypoxia_threshold,
        recovery_threshold, hypoxic_survival, max_age, max_pressure, lysis_rate, lysis_radius;
    Scalar inflow, perfusion_half, blood_oxygen_length, wall_conductance, sprout_taf, sprout_rate,
        sprout_refractory, sprout_radius, sprout_length, tip_speed, tip_taf, tip_persistence,
        max_tube_length, tube_repulsion;
    bool sprouting;
    int max_contacts;   //!< width of the exchange contact lists
    int max_tubes;      //!< width of the per-cell tube lists
    Scalar cell_reach;  //!< largest centre distance of two interacting cells
    core::Box<Scalar> box;
    std::uint64_t seed;

    static Constants make( const AngioParameters& p, const core::Box<Scalar>& box, int max_contacts )
    {
        Constants c{};
        auto s = []( double v ) { return static_cast<Scalar>( v ); };
        c.dt = s( p.time_step );
        c.repulsion = s( p.mechanics.repulsion );
        c.adhesion = s( p.mechanics.adhesion );
        c.range = s( p.mechanics.adhesion_range );
        c.friction_per_radius = s( p.mechanics.friction / p.mechanics.reference_radius );
        c.wall_stiffness = s( p.mechanics.wall_stiffness );
        c.oxygen_diffusion = s( p.exchange.oxygen_diffusion );
        c.oxygen_uptake = s( p.exchange.oxygen_uptake );
        c.hypoxic_uptake = s( p.exchange.oxygen_uptake * p.exchange.hypoxic_uptake_factor );
        c.taf_diffusion = s( p.exchange.taf_diffusion );
        c.taf_decay = s( p.exchange.taf_decay );
        c.taf_production = s( p.exchange.taf_production );
        c.sweep_fraction = s( p.exchange.sweep_fraction );
        c.division_radius = s( p.life.division_radius );
        c.daughter_radius = s( p.daughter_radius() );
        c.growth_rate = s( p.life.growth_rate );
        c.growth_spread = s( p.life.growth_spread );
        c.maturation_age = s( p.life.maturation_age );
        c.hypoxia_threshold = s( p.life.hypoxia_threshold );
        c.recovery_threshold = s( p.life.recovery_threshold );
        c.hypoxic_survival = s( p.life.hypoxic_survival );
        c.max_age = s( p.life.max_age );
        c.max_pressure = s( p.life.max_pressure );
        c.lysis_rate = s( p.life.lysis_rate );
        c.lysis_radius = s( p.life.lysis_radius );
        c.inflow = s( p.vessels.inflow );
        c.perfusion_half = s( p.vessels.perfusion_half );
        c.blood_oxygen_length = s( p.vessels.blood_oxygen_length );
        c.wall_conductance = s( p.vessels.wall_conductance );
        c.sprouting = p.vessels.sprouting;
        c.sprout_taf = s( p.vessels.sprout_taf );
        c.sprout_rate = s( p.vessels.sprout_rate );
        c.sprout_refractory = s( p.vessels.sprout_refractory );
        c.sprout_radius = s( p.vessels.sprout_radius );
        c.sprout_length = s( p.vessels.sprout_length );
        c.tip_speed = s( p.vessels.tip_speed );
        c.tip_taf = s( p.vessels.tip_taf );
        c.tip_persistence = s( p.vessels.tip_persistence );
        c.max_tube_length = s( p.vessels.max_tube_length );
        c.tube_repulsion = s( p.vessels.tube_repulsion );
        c.max_contacts = max_contacts;
        c.max_tubes = p.max_tubes_per_cell;
        c.cell_reach = s( 2 * p.life.division_radius * ( 1 + p.mechanics.adhesion_range ) );
        c.box = box;
        c.seed = p.seed;
        return c;
    }
};

//! Scratch Views of a step: exchange contacts, per-cell tube lists, vessel supply, the second
//! concentration buffer, the pseudo-time steps and the counters.
template <class Scalar, class MemorySpace>
struct Workspace
{
    Kokkos::View<int**, Kokkos::LayoutLeft, MemorySpace> contact;       // (cell, k): neighbour
    Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace> conductance; // (cell, k): sqrt(2) rho w
    Kokkos::View<int*, MemorySpace> contact_count;
    Kokkos::View<int**, Kokkos::LayoutLeft, MemorySpace> tube_list; // (cell, k): tube (Algorithm 5)
    Kokkos::View<int*, MemorySpace> tube_count;
    Kokkos::View<Scalar*, MemorySpace> supply_level; // sum over tubes of g x blood oxygen
    Kokkos::View<Scalar*, MemorySpace> supply_rate;  // sum over tubes of g
    Kokkos::View<Scalar*, MemorySpace> oxygen_next, taf_next;
    Kokkos::View<Scalar*, MemorySpace> exchange_rate; // [0]: max over cells of (D_O sum g + D_O B) / V, [1]: D_T sum g / V
    Kokkos::View<long long*, MemorySpace> counters;
    Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace> midpoints; // of tubes, for the tube grid
    Kokkos::View<long long*, MemorySpace> children_fixed; // Murray sums in fixed point (deterministic)
    Kokkos::View<int*, MemorySpace> permutation;
};

//! Grows a rank-1 View to at least n entries (contents are not kept: scratch only).
template <class View>
void ensure_extent_1d( View& v, std::size_t n, const char* label )
{
    if ( v.extent( 0 ) < n )
        v = View( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ), n );
}

template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar norm3( const Scalar v[3] )
{
    return compat::sqrt( v[0] * v[0] + v[1] * v[1] + v[2] * v[2] );
}

//! Fraction of its full exchange a tube carrying `flow` delivers: flow / (flow + half).
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar perfusion( Scalar flow, Scalar half )
{
    return flow / ( flow + half );
}

// ---------------------------------------------------------------------------------------------
// Cell-cell interactions
// ---------------------------------------------------------------------------------------------

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
    const Scalar d = compat::sqrt( r2 );
    const Scalar f = contact_force( d, sum, c.repulsion, live ? c.adhesion : Scalar( 0 ), c.range );
    if ( d > Scalar( 0 ) )
    {
        const Scalar k = f / d;
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

//! The cell fields the kernels read and write, captured by value.
template <class Scalar, class MemorySpace>
struct CellViews
{
    using cells_type = TumourCells<Scalar, MemorySpace>;
    typename cells_type::vector_view x, v, f;
    typename cells_type::scalar_view r, age, hypoxic_time, oxygen, taf, pressure;
    typename cells_type::state_view s;
    typename cells_type::id_view ids;

    explicit CellViews( const cells_type& c )
        : x( c.positions() ), v( c.velocities() ), f( c.forces() ), r( c.radii() ), age( c.ages() ),
          hypoxic_time( c.hypoxic_times() ), oxygen( c.oxygen() ), taf( c.taf() ), pressure( c.pressures() ),
          s( c.states() ), ids( c.ids() )
    {
    }
    KOKKOS_INLINE_FUNCTION Scalar radius( int i ) const { return r( i ); }
    KOKKOS_INLINE_FUNCTION std::int32_t state( int i ) const { return s( i ); }
    KOKKOS_INLINE_FUNCTION std::int64_t id( int i ) const { return ids( i ); }
};

//! The tube fields the kernels read and write.
template <class Scalar, class MemorySpace>
struct TubeViews
{
    using tubes_type = VesselTubes<Scalar, MemorySpace>;
    typename tubes_type::vector_view a, b, grad, f;
    typename tubes_type::scalar_view ra, rb, attach, flow, blood, delivered, taf, last_sprout, children_r3;
    typename tubes_type::int_view parent, flags, contacts;
    typename tubes_type::id_view ids;

    explicit TubeViews( const tubes_type& t )
        : a( t.end_a() ), b( t.end_b() ), grad( t.taf_gradient() ), f( t.forces() ), ra( t.radius_a() ),
          rb( t.radius_b() ), attach( t.attach() ), flow( t.flow() ), blood( t.blood_oxygen() ),
          delivered( t.delivered() ), taf( t.taf() ), last_sprout( t.last_sprout() ),
          children_r3( t.children_r3() ), parent( t.parents() ), flags( t.flags() ), contacts( t.contacts() ),
          ids( t.ids() )
    {
    }
    KOKKOS_INLINE_FUNCTION void ends( int i, Scalar pa[3], Scalar pb[3] ) const
    {
        for ( int d = 0; d < 3; ++d )
        {
            pa[d] = a( i, d );
            pb[d] = b( i, d );
        }
    }
    KOKKOS_INLINE_FUNCTION Scalar length( int i ) const
    {
        Scalar g[3] = { b( i, 0 ) - a( i, 0 ), b( i, 1 ) - a( i, 1 ), b( i, 2 ) - a( i, 2 ) };
        return norm3( g );
    }
};

/*!
  \brief Cell-cell interactions with each pair computed from both sides (the paper's choice, no atomics):
  every cell sums the forces of its neighbours, its contact pressure, and lists its exchange contacts.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class Query>
void cell_cell_both_sides( const ExecutionSpace& exec, const Query& query, const CellViews<Scalar, MemorySpace>& cells,
                           int n, const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w )
{
    const auto contact = w.contact;
    const auto conductance = w.conductance;
    const auto count = w.contact_count;
    const auto counters = w.counters;
    Kokkos::parallel_for(
        "morula::angio::cell_cell", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            Scalar F[3] = { 0, 0, 0 };
            Scalar repulsive = 0;
            int k = 0;
            if ( cells.state( i ) != cell_lysed )
                query.for_each_neighbor( i, c.cell_reach, [&]( int j, Scalar dx, Scalar dy, Scalar dz, Scalar r2 ) {
                    if ( cells.state( j ) == cell_lysed )
                        return;
                    const PairEffect<Scalar> e = cell_pair( c, cells, i, j, dx, dy, dz, r2 );
                    if ( !e.interacts )
                        return;
                    for ( int a = 0; a < 3; ++a )
                        F[a] += e.force[a];
                    repulsive += e.repulsive;
                    if ( e.conductance > Scalar( 0 ) )
                    {
                        if ( k < c.max_contacts )
                        {
                            contact( i, k ) = j;
                            conductance( i, k ) = e.conductance;
                        }
                        ++k;
                    }
                } );
            for ( int a = 0; a < 3; ++a )
                cells.f( i, a ) = F[a];
            const Scalar ri = cells.radius( i );
            cells.pressure( i ) = repulsive / ( Scalar( 12.566370614359172954 ) * ri * ri );
            count( i ) = k;
            if ( k > c.max_contacts )
                Kokkos::atomic_fetch_max( &counters( counter_max_contacts ), static_cast<long long>( k ) );
        } );
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

// ---------------------------------------------------------------------------------------------
// Tubes: blood flow, tube-tube, tube-cell (Algorithm 5) and cell-tube (Algorithm 6)
// ---------------------------------------------------------------------------------------------

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
                Scalar aj[3], bj[3], s, u;
                t.ends( j, aj, bj );
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
  \brief Tube-cell interactions (the paper's Algorithm 5): each tube visits the grid cells its bounding box,
  widened by the interaction reach, covers; for every cell it touches it appends itself to the cell's tube
  list (atomic counter), and sums, for itself only, the reaction force, the TAF it senses (largest
  concentration and a weighted direction to it) and the oxygen it delivers at the current concentrations.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class Query>
void tube_cell( const ExecutionSpace& exec, const Query& query, const CellViews<Scalar, MemorySpace>& cells,
                const TubeViews<Scalar, MemorySpace>& t, int m, const Constants<Scalar>& c,
                const Workspace<Scalar, MemorySpace>& w )
{
    const auto tube_list = w.tube_list;
    const auto tube_count = w.tube_count;
    const auto geom = query.geometry();
    const auto offsets = query.cell_offsets();
    Kokkos::parallel_for(
        "morula::angio::tube_cell", core::LaunchRange<ExecutionSpace>( exec, 0, m ), KOKKOS_LAMBDA( const int i ) {
            Scalar a[3], b[3];
            t.ends( i, a, b );
            const Scalar rmax = t.ra( i ) > t.rb( i ) ? t.ra( i ) : t.rb( i );
            const Scalar reach = ( Scalar( 1 ) + c.range ) * ( c.division_radius + rmax );
            int lo[3], hi[3];
            for ( int d = 0; d < 3; ++d )
            {
                lo[d] = geom.cell_coordinate( d, ( a[d] < b[d] ? a[d] : b[d] ) - reach );
                hi[d] = geom.cell_coordinate( d, ( a[d] > b[d] ? a[d] : b[d] ) + reach );
            }
            const Scalar perf = perfusion( t.flow( i ), c.perfusion_half );
            const Scalar blood = t.blood( i );
            Scalar F[3] = { 0, 0, 0 }, grad[3] = { 0, 0, 0 };
            Scalar sensed = 0, delivered = 0;
            for ( int cz = lo[2]; cz <= hi[2]; ++cz )
                for ( int cy = lo[1]; cy <= hi[1]; ++cy )
                {
                    // Row-major cells: the run of cells lo[0]..hi[0] of one row is one run of slots.
                    const int row = geom.linear_index( 0, cy, cz );
                    for ( int slot = offsets( row + lo[0] ); slot < offsets( row + hi[0] + 1 ); ++slot )
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
            for ( int d = 0; d < 3; ++d )
            {
                t.f( i, d ) += F[d];
                t.grad( i, d ) = grad[d];
            }
            t.taf( i ) = sensed;
            t.delivered( i ) = delivered;
        } );
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

// ---------------------------------------------------------------------------------------------
// Exchange of oxygen and TAF
// ---------------------------------------------------------------------------------------------

//! Exchange rate of cell i (1/s): (D sum_j g_ij + D B_i) / V_i + uptake for oxygen, D_T sum_j g_ij / V_i +
//! decay for TAF; 0 for cells that do not exchange.
template <class Scalar, class MemorySpace>
KOKKOS_INLINE_FUNCTION Scalar exchange_rate_of( const CellViews<Scalar, MemorySpace>& cells,
                                                const Workspace<Scalar, MemorySpace>& w, const Constants<Scalar>& c,
                                                int i, bool oxygen )
{
    if ( !is_alive( cells.state( i ) ) )
        return Scalar( 0 );
    Scalar g = 0;
    const int k = w.contact_count( i ) < c.max_contacts ? w.contact_count( i ) : c.max_contacts;
    for ( int q = 0; q < k; ++q )
        g += w.conductance( i, q );
    const Scalar volume = sphere_volume_of_radius( cells.radius( i ) );
    return oxygen ? ( c.oxygen_diffusion * ( g + w.supply_rate( i ) ) ) / volume + c.oxygen_uptake
                  : c.taf_diffusion * g / volume + c.taf_decay;
}

/*!
  \brief The pseudo-time steps of the exchange, kept on the device: tau = sweep_fraction / max_i(rate_i)
  with rate_i = (D sum_j g_ij + D B_i) / V_i + uptake (oxygen) or D_T sum_j g_ij / V_i + decay (TAF), the
  largest explicit step that keeps every concentration non-negative. One uniform step for all cells, so
  each pair exchanges exactly opposite amounts.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace>
void exchange_steps( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int n,
                     const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w )
{
    const auto out = w.exchange_rate;
    Kokkos::View<Scalar, MemorySpace> oxygen_rate( out.data() );
    Kokkos::View<Scalar, MemorySpace> taf_rate( out.data() + 1 );
    Kokkos::parallel_reduce(
        "morula::angio::oxygen_rate", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, Scalar& r ) {
            const Scalar v = exchange_rate_of( cells, w, c, i, true );
            r = v > r ? v : r;
        },
        Kokkos::Max<Scalar, MemorySpace>( oxygen_rate ) );
    Kokkos::parallel_reduce(
        "morula::angio::taf_rate", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, Scalar& r ) {
            const Scalar v = exchange_rate_of( cells, w, c, i, false );
            r = v > r ? v : r;
        },
        Kokkos::Max<Scalar, MemorySpace>( taf_rate ) );
}

/*!
  \brief One explicit exchange sweep from (o_in, t_in) to (o_out, t_out): diffusion between contacts,
  vessel supply, uptake by live cells (halved when hypoxic), TAF production by hypoxic cells and decay.
  Dead cells keep their values. With sources and sinks off, sum_i V_i c_i is conserved to rounding.
*/
template <class ExecutionSpace, class Scalar, class MemorySpace, class In, class Out>
void exchange_sweep( const ExecutionSpace& exec, const CellViews<Scalar, MemorySpace>& cells, int n,
                     const Constants<Scalar>& c, const Workspace<Scalar, MemorySpace>& w, const In& o_in,
                     const In& t_in, const Out& o_out, const Out& t_out )
{
    const auto contact = w.contact;
    const auto conductance = w.conductance;
    const auto count = w.contact_count;
    const auto level = w.supply_level;
    const auto rate = w.supply_rate;
    const auto steps = w.exchange_rate;
    const auto counters = w.counters;
    Kokkos::parallel_for(
        "morula::angio::exchange_sweep", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            const Scalar oi = o_in( i ), ti = t_in( i );
            const std::int32_t s = cells.state( i );
            if ( !is_alive( s ) )
            {
                o_out( i ) = oi;
                t_out( i ) = ti;
                return;
            }
            Scalar so = 0, st = 0;
            const int k = count( i ) < c.max_contacts ? count( i ) : c.max_contacts;
            for ( int q = 0; q < k; ++q )
            {
                const int j = contact( i, q );
                const Scalar g = conductance( i, q );
                so += g * ( o_in( j ) - oi );
                st += g * ( t_in( j ) - ti );
            }
            const Scalar volume = sphere_volume_of_radius( cells.radius( i ) );
            const Scalar tau_o = c.sweep_fraction / steps( 0 );
            const Scalar tau_t = c.sweep_fraction / steps( 1 );
            const bool hypoxic = s == cell_hypoxic;
            const Scalar uptake = hypoxic ? c.hypoxic_uptake : c.oxygen_uptake;
            const Scalar o = oi + tau_o * ( c.oxygen_diffusion * ( so + level( i ) - rate( i ) * oi ) / volume - uptake * oi );
            const Scalar tn = ti + tau_t * ( c.taf_diffusion * st / volume - c.taf_decay * ti +
                                             ( hypoxic ? c.taf_production : Scalar( 0 ) ) );
            if ( !( o >= Scalar( 0 ) ) || !( tn >= Scalar( 0 ) ) || !compat::isfinite( o ) || !compat::isfinite( tn ) )
                Kokkos::atomic_add( &counters( counter_negative ), 1LL );
            o_out( i ) = o;
            t_out( i ) = tn;
        } );
}

// ---------------------------------------------------------------------------------------------
// Motion, tube growth, life cycle, compaction
// ---------------------------------------------------------------------------------------------

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
