/*!
  \file AngioParameters.hpp
  \brief Parameters of the tumour growth and angiogenesis model (Worecki and Wcisło 2012, after Wcisło et al. 2009),
  with units, defaults and the checks that keep the explicit updates stable.

  Units: length in micrometres (μm), time in hours (h) for the cell and vessel life cycle, seconds (s)
  for the quasi-steady exchange of oxygen and TAF, force in nanonewtons (nN), pressure in nN/μm² (kPa).
  Oxygen and TAF are dimensionless concentrations: oxygen relative to arterial blood (1), TAF relative
  to an arbitrary reference in which the thresholds below are given. docs/models/angiogenesis.md gives
  the source or reasoning for every value.
*/
#ifndef MORULA_ANGIO_ANGIOPARAMETERS_HPP
#define MORULA_ANGIO_ANGIOPARAMETERS_HPP

#include <morula/core/Error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace morula::angio
{

//! Mechanics of cells and tubes: semi-harmonic contact forces and overdamped motion.
struct CellMechanicsParameters
{
    double repulsion = 10;       //!< nN/μm: force per μm of overlap of two cells (or a cell and a tube/wall)
    double adhesion = 1;         //!< nN/μm: slope of the attractive branch between touching cells
    double adhesion_range = 0.2; //!< attraction acts out to (1 + range)(r_i + r_j); also the exchange range
    double friction = 10;        //!< nN h/μm: drag of a cell of reference_radius (scales with the radius)
    double reference_radius = 5; //!< μm
    double wall_stiffness = 10;  //!< nN/μm: barrier force per μm a cell reaches past a wall
};

/*!
  \brief Quasi-steady exchange of oxygen and TAF between touching cells and from perfused tubes.

  A contact between cells i and j (or a cell and a tube) conducts G = sqrt(2) D rho w, with rho the
  reduced radius r_i r_j / (r_i + r_j) and w in [0, 1] the contact weight (1 when touching, falling to
  0 at the end of the adhesion range). sqrt(2) makes a close-packed tissue of equal cells diffuse with
  the continuum coefficient D (docs/models/angiogenesis.md). Each step makes `sweeps` explicit sweeps in
  a pseudo-time: both species relax towards their steady state, which is what the cells see, because
  the physical relaxation (L^2 / D, seconds) is far shorter than a step. The pseudo-time step is the same for
  all cells (so every pair exchanges exactly opposite amounts) and is recomputed on the device every step
  as sweep_fraction times the largest step that keeps all concentrations non-negative.
*/
struct ExchangeParameters
{
    double oxygen_diffusion = 2000; //!< μm²/s, oxygen in tissue
    double oxygen_uptake = 0.2;     //!< 1/s per unit concentration by a live cell: penetration sqrt(D/q) = 100 μm
    double hypoxic_uptake_factor = 0.5; //!< uptake of a hypoxic cell relative to a normoxic one
    double taf_diffusion = 100;     //!< μm²/s, VEGF-like factor in tissue
    double taf_decay = 5e-4;        //!< 1/s: half-life 23 min
    double taf_production = 1e-3;   //!< 1/s (concentration per second) by a hypoxic cell
    int sweeps = 64;                //!< exchange sweeps per step (relaxation lag ~2-5 h at the default uptake)
    double sweep_fraction = 0.5;    //!< pseudo-time step as a fraction of the largest that keeps values >= 0
    int max_contacts = 32;          //!< width of a cell's contact list; more live neighbours is a CapacityError
};

//! Growth, division, hypoxia and death of cells.
struct LifeCycleParameters
{
    double division_radius = 6.3;   //!< μm: a Mature cell of this radius divides (two cells of radius / 2^(1/3))
    double growth_rate = 29;        //!< μm³/h: volume growth of a normoxic cell (doubling 18 h at radius 5)
    double growth_spread = 0.25;    //!< each cell grows at growth_rate (1 + spread u), u uniform in [-1, 1) per cell
    double maturation_age = 6;      //!< h: New -> Mature
    double hypoxia_threshold = 0.1; //!< oxygen below which a live cell turns Hypoxic (and does not grow)
    double recovery_threshold = 0.15; //!< oxygen at or above which a Hypoxic cell recovers
    double hypoxic_survival = 12;   //!< h: a cell Hypoxic this long dies
    double max_age = 1000;          //!< h: a cell this old dies
    double max_pressure = 0.5;      //!< nN/μm²: no growth above this contact pressure
    double lysis_rate = 50;         //!< μm³/h: volume a dead cell loses
    double lysis_radius = 2;        //!< μm: a dead cell this small is removed
};

//! Vessel tubes: blood flow, oxygen delivery, sprouting and tip growth.
struct VesselParameters
{
    double inflow = 1;                 //!< flow into each inlet tube (relative units)
    double perfusion_half = 0.05;      //!< flow at which a tube delivers half its oxygen conductance
    double blood_oxygen_length = 3000; //!< μm: blood oxygen falls as exp(-path length / this)
    double wall_conductance = 1;       //!< tube-cell exchange relative to a cell-cell contact
    bool sprouting = true;             //!< angiogenesis on or off
    double sprout_taf = 0.05;          //!< sensed TAF at or above which a tube may sprout
    double sprout_rate = 0.05;         //!< 1/h: sprouting rate of a tube above the threshold
    double sprout_refractory = 24;     //!< h between two sprouts of one tube
    double sprout_radius = 3;          //!< μm
    double sprout_length = 5;          //!< μm: length of a new sprout
    double tip_speed = 5;              //!< μm/h: extension of a tip in TAF
    double tip_taf = 0.01;             //!< sensed TAF below which a tip stops extending
    double tip_persistence = 0.5;      //!< weight of the tip's own direction against the TAF gradient
    double max_tube_length = 20;       //!< μm: a longer tip is split in two tubes
    double tube_repulsion = 10;        //!< nN/μm: tube-cell and tube-tube overlap force
};

//! Everything the model needs.
struct AngioParameters
{
    double time_step = 0.1; //!< h
    CellMechanicsParameters mechanics;
    ExchangeParameters exchange;
    LifeCycleParameters life;
    VesselParameters vessels;
    std::uint64_t seed = 1;      //!< of the hashed RNG (division axes, sprouting)
    int sort_every = 10;         //!< permute cells into grid order every this many steps (0: never)
    int max_tubes_per_cell = 32; //!< width of the per-cell tube lists (Algorithm 5)
    bool atomic_cell_cell = false; //!< cell-cell pairs once with atomics instead of from both sides

    //! Radius of a new daughter cell: the division radius / 2^(1/3).
    double daughter_radius() const { return life.division_radius / std::cbrt( 2.0 ); }

    //! Throws core::InputError naming the first parameter out of range (as `where: name = value`).
    void validate( const std::string& where ) const
    {
        auto fail = [&]( const char* name, double v, const char* expected ) {
            throw core::InputError(
                core::detail::concat( where, ": ", name, " = ", v, " (expected ", expected, ")" ) );
        };
        auto positive = [&]( const char* name, double v ) {
            if ( !std::isfinite( v ) || !( v > 0 ) )
                fail( name, v, "a finite value > 0" );
        };
        auto non_negative = [&]( const char* name, double v ) {
            if ( !std::isfinite( v ) || !( v >= 0 ) )
                fail( name, v, "a finite value >= 0" );
        };
        auto fraction = [&]( const char* name, double v ) {
            if ( !std::isfinite( v ) || !( v >= 0 && v <= 1 ) )
                fail( name, v, "a value in [0, 1]" );
        };
        positive( "time_step", time_step );
        positive( "mechanics.repulsion", mechanics.repulsion );
        non_negative( "mechanics.adhesion", mechanics.adhesion );
        non_negative( "mechanics.adhesion_range", mechanics.adhesion_range );
        positive( "mechanics.friction", mechanics.friction );
        positive( "mechanics.reference_radius", mechanics.reference_radius );
        non_negative( "mechanics.wall_stiffness", mechanics.wall_stiffness );
        positive( "exchange.oxygen_diffusion", exchange.oxygen_diffusion );
        non_negative( "exchange.oxygen_uptake", exchange.oxygen_uptake );
        fraction( "exchange.hypoxic_uptake_factor", exchange.hypoxic_uptake_factor );
        positive( "exchange.taf_diffusion", exchange.taf_diffusion );
        non_negative( "exchange.taf_decay", exchange.taf_decay );
        non_negative( "exchange.taf_production", exchange.taf_production );
        if ( exchange.sweeps < 0 || exchange.sweeps > 10000 )
            fail( "exchange.sweeps", exchange.sweeps, "an integer in [0, 10000]" );
        if ( !( exchange.sweep_fraction > 0 && exchange.sweep_fraction <= 1 ) )
            fail( "exchange.sweep_fraction", exchange.sweep_fraction, "a value in (0, 1]" );
        if ( exchange.max_contacts < 1 || exchange.max_contacts > 1000 )
            fail( "exchange.max_contacts", exchange.max_contacts, "an integer in [1, 1000]" );
        positive( "life.division_radius", life.division_radius );
        non_negative( "life.growth_rate", life.growth_rate );
        if ( !( life.growth_spread >= 0 && life.growth_spread < 1 ) )
            fail( "life.growth_spread", life.growth_spread, "a value in [0, 1)" );
        non_negative( "life.maturation_age", life.maturation_age );
        fraction( "life.hypoxia_threshold", life.hypoxia_threshold );
        if ( !( life.recovery_threshold >= life.hypoxia_threshold && life.recovery_threshold <= 1 ) )
            fail( "life.recovery_threshold", life.recovery_threshold,
                  "a value in [hypoxia_threshold, 1]" );
        positive( "life.hypoxic_survival", life.hypoxic_survival );
        positive( "life.max_age", life.max_age );
        non_negative( "life.max_pressure", life.max_pressure );
        positive( "life.lysis_rate", life.lysis_rate );
        if ( !( life.lysis_radius > 0 && life.lysis_radius < daughter_radius() ) )
            fail( "life.lysis_radius", life.lysis_radius, "a value in (0, division_radius / 2^(1/3))" );
        positive( "vessels.inflow", vessels.inflow );
        positive( "vessels.perfusion_half", vessels.perfusion_half );
        positive( "vessels.blood_oxygen_length", vessels.blood_oxygen_length );
        non_negative( "vessels.wall_conductance", vessels.wall_conductance );
        non_negative( "vessels.sprout_taf", vessels.sprout_taf );
        non_negative( "vessels.sprout_rate", vessels.sprout_rate );
        non_negative( "vessels.sprout_refractory", vessels.sprout_refractory );
        positive( "vessels.sprout_radius", vessels.sprout_radius );
        positive( "vessels.sprout_length", vessels.sprout_length );
        non_negative( "vessels.tip_speed", vessels.tip_speed );
        non_negative( "vessels.tip_taf", vessels.tip_taf );
        fraction( "vessels.tip_persistence", vessels.tip_persistence );
        if ( !( vessels.max_tube_length >= 2 * vessels.sprout_length ) || !std::isfinite( vessels.max_tube_length ) )
            fail( "vessels.max_tube_length", vessels.max_tube_length, "a finite value >= 2 sprout_length" );
        non_negative( "vessels.tube_repulsion", vessels.tube_repulsion );
        if ( sort_every < 0 )
            fail( "sort_every", sort_every, "0 (never) or an integer >= 1" );
        if ( max_tubes_per_cell < 1 || max_tubes_per_cell > 1024 )
            fail( "max_tubes_per_cell", max_tubes_per_cell, "an integer in [1, 1024]" );
        // Overdamped explicit motion of a close-packed cell with 12 springs is stable below
        // dt k / gamma = 1/4; keep a margin (docs/models/angiogenesis.md).
        const double gamma_min = mechanics.friction * daughter_radius() / mechanics.reference_radius;
        const double stiffness = std::max( { mechanics.repulsion, mechanics.wall_stiffness, vessels.tube_repulsion } );
        if ( time_step * stiffness / gamma_min > 0.15 )
            throw core::InputError( core::detail::concat(
                where, ": time_step x stiffness / friction = ", time_step * stiffness / gamma_min,
                " for the smallest cell (time_step = ", time_step, " h, stiffness = ", stiffness,
                " nN/um, friction = ", gamma_min,
                " nN h/um); expected <= 0.15 for stable overdamped motion: lower time_step or the stiffnesses, "
                "or raise mechanics.friction" ) );
    }
};

} // namespace morula::angio

#endif
