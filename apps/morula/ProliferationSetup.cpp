#include "ProliferationSetup.hpp"
#include "ConfigFile.hpp"

#include <morula/core/Error.hpp>
#include <morula/grid/GridGeometry.hpp>
#include <morula/mechanics/Initializers.hpp>

#include <cstdint>
#include <utility>

namespace morula::app
{
namespace
{
ConfigTable proliferation_table( ProliferationSettings& s )
{
    const double big = ConfigTable::huge;
    ConfigTable t;
    t.choice( "scenario", s.scenario, { "division", "static" } )
     .choice( "precision", s.precision, { "float", "double" } )
     .integer( "cells_per_axis", s.cells_per_axis, 1, 1000 )
     .number( "spacing", s.spacing, 1e-300, big )
     .integer( "agents", s.agents, 1, 500000000 )
     .number( "neighbors", s.neighbors, 1e-3, 1e4 )
     .number( "diameter", s.diameter, 1e-300, big )
     .number( "adherence", s.adherence, 0, big )
     .number( "mass", s.mass, 1e-300, big )
     .number( "division_diameter", s.division_diameter, 1e-300, big )
     .number( "growth_rate", s.growth_rate, 0, big )
     .number( "time_step", s.time_step, 1e-300, big )
     .number( "max_displacement", s.max_displacement, 0, big )
     .number( "repulsion", s.repulsion, 0, big )
     .number( "attraction", s.attraction, 0, big )
     .number( "radius_extension", s.radius_extension, 0, big )
     .integer( "sort_every", s.sort_every, 0, 1000000 )
     .choice( "ordering", s.ordering, { "morton", "morton-rows", "row-major" } )
     .integer( "agents_per_thread", s.agents_per_thread, 0, 4 )
     .integer( "steps", s.steps, 0, 100000000 )
     .integer( "seed", s.seed, 0, 9007199254740991L )
     .text( "output", s.output )
     .text( "snapshots", s.snapshots )
     .integer( "snapshot_every", s.snapshot_every, 0, 100000000 )
     .flag( "progress", s.progress );
    return t;
}
} // namespace

void read_proliferation_config( const std::string& path, ProliferationSettings& s )
{
    proliferation_table( s ).read( path );
}

void read_proliferation_config_text( const std::string& json, const std::string& name, ProliferationSettings& s )
{
    proliferation_table( s ).read_text( json, name );
}

template <class Scalar>
ProliferationSetup<Scalar> make_proliferation_setup( const ProliferationSettings& s,
                                                     const Kokkos::DefaultExecutionSpace& space )
{
    using mem = Kokkos::DefaultExecutionSpace::memory_space;
    mechanics::AgentProperties<Scalar> props;
    props.diameter = Scalar( s.diameter );
    props.adherence = Scalar( s.adherence );
    props.mass = Scalar( s.mass );
    mechanics::MechanicsParameters<Scalar> mp;
    mp.force.repulsion = Scalar( s.repulsion );
    mp.force.attraction = Scalar( s.attraction );
    mp.force.radius_extension = Scalar( s.radius_extension );
    mp.time_step = Scalar( s.time_step );
    mp.max_displacement = Scalar( s.max_displacement );
    mp.sort_every = static_cast<int>( s.sort_every );
    if ( !grid::parse_cell_ordering( s.ordering, mp.ordering ) )
        throw core::InputError( "proliferation: unknown ordering '" + s.ordering + "'" );
    mp.particles_per_thread = static_cast<int>( s.agents_per_thread );

    core::Box<Scalar> box;
    std::optional<mechanics::GrowthParameters<Scalar>> growth;
    mechanics::SphereAgents<Scalar, mem> agents;
    if ( s.scenario == "division" )
    {
        const Scalar extent = Scalar( s.spacing * ( s.cells_per_axis - 1 ) );
        box = core::Box<Scalar>( { 0, 0, 0 }, { extent, extent, extent }, core::Boundary::open );
        agents = mechanics::lattice_agents<Scalar, mem>( space, static_cast<int>( s.cells_per_axis ),
                                                         Scalar( s.spacing ), props );
        mechanics::GrowthParameters<Scalar> gp;
        gp.division_diameter = Scalar( s.division_diameter );
        gp.growth_rate = Scalar( s.growth_rate );
        gp.time_step = Scalar( s.time_step );
        gp.seed = static_cast<std::uint64_t>( s.seed );
        growth = gp;
    }
    else
    {
        // Agents locked in place (benchmark B): the box sets the mean number of interacting neighbours.
        mp.max_displacement = 0;
        const double edge = mechanics::box_edge_for_neighbors(
            s.agents, s.neighbors, s.diameter + 2 * s.radius_extension );
        box = core::Box<Scalar>::cube( Scalar( edge ), core::Boundary::periodic );
        agents = mechanics::random_agents<Scalar, mem>( space, static_cast<int>( s.agents ), box,
                                                        props, static_cast<std::uint64_t>( s.seed ) );
    }
    return { box, mp, growth, std::move( agents ) };
}

template ProliferationSetup<float> make_proliferation_setup<float>( const ProliferationSettings&,
                                                                    const Kokkos::DefaultExecutionSpace& );
template ProliferationSetup<double> make_proliferation_setup<double>( const ProliferationSettings&,
                                                                      const Kokkos::DefaultExecutionSpace& );
} // namespace morula::app
