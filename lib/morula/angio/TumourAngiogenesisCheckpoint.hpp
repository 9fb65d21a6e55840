/*!
  \file TumourAngiogenesisCheckpoint.hpp
  \brief Checkpoint and restart of angio::TumourAngiogenesis: the whole state of a run in an
  io::CheckpointWriter, and a driver made from the same parameters resumed from it, so that the resumed
  run continues bit for bit where the checkpointed one stopped.

  What a checkpoint of model "angiogenesis" holds:
  - every field of the first size() cells and tubes (cells/..., tubes/...: positions, velocities, forces,
    radii, ages, hypoxic times, oxygen, TAF, pressures, states and ids; ends, radii, parents, flags,
    attachments, flow, blood oxygen, delivered oxygen, sensed TAF and its gradient, forces, last sprout
    times, Murray sums, contacts and ids), in the model's Scalar, their capacities and next ids;
  - the clock: the step count, the model time, the grid builds (which of them sort the cells), the
    cumulative divisions, sprouts and anastomoses;
  - the state of the angiogenic switch (vessels.sprouting, which set_sprouting() turns on during a run),
    the tube grid's reach (set from the initial tubes) and the precision;
  - every parameter and the box, which a restart compares with its own.

  The random numbers need no state of their own: core::HashedRng draws from (id, sub-index, step, seed),
  and the step and seed are in the checkpoint. The scratch arrays of a step (contact and tube lists,
  the second concentration buffer, the exchange's pseudo-time steps, the counters) are all written
  before they are read within a step, the cell grid and the tube grid are rebuilt every step from the
  positions, and the captured exchange graphs are dropped on restart and captured anew: none of them is
  saved, and none of them changes the continuation.
*/
#ifndef MORULA_ANGIO_TUMOURANGIOGENESISCHECKPOINT_HPP
#define MORULA_ANGIO_TUMOURANGIOGENESISCHECKPOINT_HPP

#include <morula/angio/TumourAngiogenesis.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace morula::angio
{
namespace detail
{

//! A parameter as a checkpoint keeps it: its name (the key of AngioParameters, "exchange.sweeps") and value.
struct CheckpointParameter
{
    const char* name;
    double value;
    //! Whether a restart may change it: list widths only decide whether a step fits, not what it computes.
    bool may_change = false;
};

//! Every parameter of `p` but the seed (an integer of 64 bits, kept apart) and vessels.sprouting (the
//! angiogenic switch: state, not a parameter, once a run has begun).
inline std::vector<CheckpointParameter> checkpoint_parameters( const AngioParameters& p )
{
    return {
        { "time_step", p.time_step },
        { "mechanics.repulsion", p.mechanics.repulsion },
        { "mechanics.adhesion", p.mechanics.adhesion },
        { "mechanics.adhesion_range", p.mechanics.adhesion_range },
        { "mechanics.friction", p.mechanics.friction },
        { "mechanics.reference_radius", p.mechanics.reference_radius },
        { "mechanics.wall_stiffness", p.mechanics.wall_stiffness },
        { "exchange.oxygen_diffusion", p.exchange.oxygen_diffusion },
        { "exchange.oxygen_uptake", p.exchange.oxygen_uptake },
        { "exchange.hypoxic_uptake_factor", p.exchange.hypoxic_uptake_factor },
        { "exchange.taf_diffusion", p.exchange.taf_diffusion },
        { "exchange.taf_decay", p.exchange.taf_decay },
        { "exchange.taf_production", p.exchange.taf_production },
        { "exchange.sweeps", static_cast<double>( p.exchange.sweeps ) },
        { "exchange.sweep_fraction", p.exchange.sweep_fraction },
        { "exchange.max_contacts", static_cast<double>( p.exchange.max_contacts ), true },
        { "life.division_radius", p.life.division_radius },
        { "life.growth_rate", p.life.growth_rate },
        { "life.growth_spread", p.life.growth_spread },
        { "life.maturation_age", p.life.maturation_age },
        { "life.hypoxia_threshold", p.life.hypoxia_threshold },
        { "life.recovery_threshold", p.life.recovery_threshold },
        { "life.hypoxic_survival", p.life.hypoxic_survival },
        { "life.max_age", p.life.max_age },
        { "life.max_pressure", p.life.max_pressure },
        { "life.lysis_rate", p.life.lysis_rate },
        { "life.lysis_radius", p.life.lysis_radius },
        { "vessels.inflow", p.vessels.inflow },
        { "vessels.perfusion_half", p.vessels.perfusion_half },
        { "vessels.blood_oxygen_length", p.vessels.blood_oxygen_length },
        { "vessels.wall_conductance", p.vessels.wall_conductance },
        { "vessels.sprout_taf", p.vessels.sprout_taf },
        { "vessels.sprout_rate", p.vessels.sprout_rate },
        { "vessels.sprout_refractory", p.vessels.sprout_refractory },
        { "vessels.sprout_radius", p.vessels.sprout_radius },
        { "vessels.sprout_length", p.vessels.sprout_length },
        { "vessels.tip_speed", p.vessels.tip_speed },
        { "vessels.tip_taf", p.vessels.tip_taf },
        { "vessels.tip_persistence", p.vessels.tip_persistence },
        { "vessels.max_tube_length", p.vessels.max_tube_length },
        { "vessels.tube_repulsion", p.vessels.tube_repulsion },
        { "sort_every", static_cast<double>( p.sort_every ) },
        { "max_tubes_per_cell", static_cast<double>( p.max_tubes_per_cell ), true },
        { "atomic_cell_cell", p.atomic_cell_cell ? 1.0 : 0.0 },
    };
}

//! Checkpoint names of the fields of TumourCells and VesselTubes, in field order.
inline constexpr const char* cell_field_names[] = { "position", "velocity",     "force",  "radius",
                                                    "age",      "hypoxic_time", "oxygen", "taf",
                                                    "pressure", "state",        "id" };
inline constexpr const char* tube_field_names[] = { "end_a",        "end_b",       "radius_a",  "radius_b",
                                                    "parent",       "flags",       "attach",    "flow",
                                                    "blood_oxygen", "delivered",   "taf",       "taf_gradient",
                                                    "force",        "last_sprout", "children_r3", "contacts",
                                                    "id" };

//! Every field of the first size() entries of `s`, as `<group>/<name>`, with its capacity and next id.
template <class Storage, std::size_t... I>
void put_storage( io::CheckpointWriter& out, const std::string& group, const Storage& s, const char* const* names,
                  std::index_sequence<I...> )
{
    out.put_scalar( group + "/size", static_cast<std::uint64_t>( s.size() ) );
    out.put_scalar( group + "/capacity", static_cast<std::uint64_t>( s.capacity() ) );
    out.put_scalar( group + "/next_id", static_cast<std::int64_t>( s.next_id() ) );
    ( out.put_field( group + "/" + names[I], s.template get<I>(), s.size() ), ... );
}

//! New storage of the checkpoint's size and capacity holding `<group>/...` (every field's type and shape
//! checked by the reader).
template <class Storage, std::size_t... I>
Storage get_storage( const io::CheckpointReader& in, const std::string& group, const std::string& label,
                     const char* const* names, std::index_sequence<I...> )
{
    const auto n = in.scalar<std::uint64_t>( group + "/size" );
    const auto capacity = in.scalar<std::uint64_t>( group + "/capacity" );
    if ( capacity < n )
        in.fail( core::detail::concat( group, "/capacity = ", capacity, " is less than ", group, "/size = ", n ) );
    Storage s( label, static_cast<std::size_t>( n ), static_cast<std::size_t>( capacity ) );
    ( in.get_field( group + "/" + names[I], s.template get<I>(), s.size() ), ... );
    s.set_next_id( in.scalar<std::int64_t>( group + "/next_id" ) );
    return s;
}

} // namespace detail

/*!
  \brief Writes the whole state (see TumourAngiogenesisCheckpoint.hpp) into `out`; copies from the device
  (core::copy_to_host fences). Call between steps.
*/
template <class Scalar, class MemorySpace>
void TumourAngiogenesis<Scalar, MemorySpace>::checkpoint( io::CheckpointWriter& out ) const
{
    out.put_text( "precision", sizeof( Scalar ) == 4 ? "float" : "double" );
    out.put_scalar( "step", static_cast<std::int64_t>( this->steps_done() ) );
    out.put_scalar( "time", m_time );
    out.put_scalar( "grid_builds", static_cast<std::int64_t>( m_builds ) );
    out.put_scalar( "pending_lysed", static_cast<std::int32_t>( m_pending_lysed ) );
    out.put_scalar( "divisions", static_cast<std::int64_t>( m_divisions ) );
    out.put_scalar( "sprouts", static_cast<std::int64_t>( m_sprouts ) );
    out.put_scalar( "anastomoses", static_cast<std::int64_t>( m_anastomoses ) );
    out.put_scalar( "sprouting", static_cast<std::uint8_t>( m_params.vessels.sprouting ? 1 : 0 ) );
    out.put_scalar( "tube_reach", m_tube_reach );
    for ( const auto& p : detail::checkpoint_parameters( m_params ) )
        out.put_scalar( std::string( "parameters/" ) + p.name, p.value );
    out.put_scalar( "parameters/seed", static_cast<std::uint64_t>( m_params.seed ) );
    out.put( "box/lo", std::vector<Scalar>{ m_box.lo[0], m_box.lo[1], m_box.lo[2] } );
    out.put( "box/hi", std::vector<Scalar>{ m_box.hi[0], m_box.hi[1], m_box.hi[2] } );
    detail::put_storage( out, "cells", m_cells, detail::cell_field_names,
                         std::make_index_sequence<cells_type::num_fields>{} );
    detail::put_storage( out, "tubes", m_tubes, detail::tube_field_names,
                         std::make_index_sequence<tubes_type::num_fields>{} );
}

/*!
  \brief Resumes this model, made from the run's parameters and box (its cells and tubes may differ: they
  are replaced), from the checkpoint `in`: afterwards steps continue the checkpointed run bit for bit.

  Cells and tubes get the checkpoint's sizes and capacities; the step count, clock, counters, the
  angiogenic switch and the tube grid's reach are restored, the captured exchange graphs dropped.
  Nothing changes if the checkpoint is refused.
  \throws core::InputError naming the checkpoint file if it holds another precision, another box, or
  parameters other than this model's (naming the parameter and both values; only the list widths
  exchange.max_contacts and max_tubes_per_cell may differ, since they decide whether a step fits and
  not what it computes), or entries of the wrong type or shape
*/
template <class Scalar, class MemorySpace>
void TumourAngiogenesis<Scalar, MemorySpace>::restart( const io::CheckpointReader& in )
{
    const std::string precision = sizeof( Scalar ) == 4 ? "float" : "double";
    if ( in.text( "precision" ) != precision )
        in.fail( core::detail::concat( "it holds a ", in.text( "precision" ), " run; this model is ", precision ) );
    for ( const auto& p : detail::checkpoint_parameters( m_params ) )
    {
        const double saved = in.scalar<double>( std::string( "parameters/" ) + p.name );
        // Bit for bit: the checkpointed run computed with exactly these values (NaN cannot pass validate()).
        if ( !p.may_change && saved != p.value )
            in.fail( core::detail::concat( "parameter ", p.name, " = ", saved, " in the checkpoint but ", p.value,
                                           " in this run; a restart continues the same run" ) );
    }
    const auto seed = in.scalar<std::uint64_t>( "parameters/seed" );
    if ( seed != m_params.seed )
        in.fail( core::detail::concat( "parameter seed = ", seed, " in the checkpoint but ", m_params.seed,
                                       " in this run; a restart continues the same run" ) );
    const auto lo = in.get<Scalar>( "box/lo" ), hi = in.get<Scalar>( "box/hi" );
    if ( lo.size() != 3 || hi.size() != 3 )
        in.fail( "box/lo and box/hi must hold 3 values each" );
    for ( int d = 0; d < 3; ++d )
        if ( lo[d] != m_box.lo[d] || hi[d] != m_box.hi[d] )
            in.fail( core::detail::concat( "the box along ", "xyz"[d], " is [", lo[d], ", ", hi[d],
                                           "] in the checkpoint but [", m_box.lo[d], ", ", m_box.hi[d],
                                           "] in this run" ) );
    const auto step = in.scalar<std::int64_t>( "step" );
    const auto builds = in.scalar<std::int64_t>( "grid_builds" );
    const auto pending = in.scalar<std::int32_t>( "pending_lysed" );
    if ( step < 0 || builds < 0 || pending < 0 )
        in.fail( core::detail::concat( "step = ", step, ", grid_builds = ", builds, ", pending_lysed = ", pending,
                                       " (expected values >= 0)" ) );
    const double time = in.scalar<double>( "time" );
    const auto divisions = in.scalar<std::int64_t>( "divisions" );
    const auto sprouts = in.scalar<std::int64_t>( "sprouts" );
    const auto anastomoses = in.scalar<std::int64_t>( "anastomoses" );
    const bool sprouting = in.scalar<std::uint8_t>( "sprouting" ) != 0;
    const Scalar reach = in.scalar<Scalar>( "tube_reach" );
    if ( !( reach > 0 ) )
        in.fail( core::detail::concat( "tube_reach = ", reach, " (expected a value > 0)" ) );
    auto cells = detail::get_storage<cells_type>( in, "cells", "morula::angio::cells", detail::cell_field_names,
                                                  std::make_index_sequence<cells_type::num_fields>{} );
    auto tubes = detail::get_storage<tubes_type>( in, "tubes", "morula::angio::tubes", detail::tube_field_names,
                                                  std::make_index_sequence<tubes_type::num_fields>{} );
    if ( static_cast<std::size_t>( pending ) > cells.size() )
        in.fail( core::detail::concat( "pending_lysed = ", pending, " exceeds the ", cells.size(), " cells" ) );
    static_assert( std::size( detail::cell_field_names ) == cells_type::num_fields, "a name per cell field" );
    static_assert( std::size( detail::tube_field_names ) == tubes_type::num_fields, "a name per tube field" );

    // Everything read and checked: only now does the model change.
    m_cells = std::move( cells );
    m_tubes = std::move( tubes );
    this->set_steps_done( step );
    m_time = time;
    m_builds = builds;
    m_pending_lysed = pending;
    m_divisions = divisions;
    m_sprouts = sprouts;
    m_anastomoses = anastomoses;
    if ( reach != m_tube_reach )
    {
        m_tube_reach = reach;
        m_tube_grid = std::make_unique<grid_type>( m_box, m_tube_reach, m_tube_grid->options() );
    }
    m_params.vessels.sprouting = sprouting;
    m_constants.sprouting = sprouting;
    // The graphs froze the arrays just replaced (and the constants): capture again on the next steps.
    for ( auto& g : m_exchange_graphs )
    {
        g.graph.invalidate();
        g.last_use = -1;
    }
}

} // namespace morula::angio

#endif
