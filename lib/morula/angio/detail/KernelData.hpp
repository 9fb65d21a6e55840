/*!
  \file KernelData.hpp
  \brief What every kernel of the tumour/angiogenesis model takes: the constants of a step, the scratch
  Views, the cell and tube fields as kernel handles, and the slots of the step counters the host reads
  once per step. The kernels themselves are in CellCellKernels.hpp, TubeKernels.hpp, ExchangeKernels.hpp
  and UpdateKernels.hpp.
*/
#ifndef MORULA_ANGIO_DETAIL_KERNELDATA_HPP
#define MORULA_ANGIO_DETAIL_KERNELDATA_HPP

#include <morula/angio/AngioParameters.hpp>
#include <morula/angio/TumourCells.hpp>
#include <morula/angio/VesselTubes.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
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
    Kokkos::View<int, MemorySpace> num_cells; // the cell count of the step, for kernels launched over the capacity
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

} // namespace morula::angio::detail

#endif
