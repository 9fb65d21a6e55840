#include "EpidermisSetup.hpp"
#include "ConfigFile.hpp"

#include <morula/core/Error.hpp>

#include <cstdint>

namespace morula::app
{
namespace
{
ConfigTable epidermis_table( EpidermisSettings& s )
{
    const double big = ConfigTable::huge;
    ConfigTable t;
    t.choice( "model", s.model, { "movement", "gene_network", "full" } )
     .choice( "precision", s.precision, { "float", "double" } )
     .integer( "cells", s.cells, 1, 10000000 )
     .integer( "elements_per_cell", s.elements_per_cell, 1, 10000 )
     .integer( "adhesive_elements", s.adhesive_elements, 0, 10000 )
     .choice( "boundary", s.boundary, { "periodic", "none" } )
     .number( "box_x", s.box_x, 0, big )
     .number( "box_y", s.box_y, 0, big )
     .integer( "steps", s.steps, 0, 1000000000 )
     .number( "dt", s.dt, 1e-300, big )
     .choice( "integrator", s.integrator, { "rk2", "euler" } )
     .integer( "output_every", s.output_every, 0, 1000000000 )
     .integer( "seed", s.seed, 0, 9007199254740991L )
     .text( "output", s.output )
     .number( "neighbor_cutoff", s.neighbor_cutoff, 1e-300, big )
     .choice( "coupling", s.coupling, { "average", "distribute" } )
     .number( "tgf_beta", s.tgf_beta, 0, big )
     .integer( "growth_interval", s.growth_interval, 1, 1000000000 )
     .integer( "division_elements", s.division_elements, 2, 10000 )
     .choice( "growth_rule", s.growth_rule, { "basal_state", "low_delta" } )
     .number( "delta_threshold", s.delta_threshold, 0, big )
     .numbers( "intra", s.intra, 4, 0, big )
     .numbers( "inter", s.inter, 4, 0, big )
     .numbers( "membrane", s.membrane, 4, 0, big )
     .number( "inter_cutoff", s.inter_cutoff, 0, big )
     .number( "skin_factor", s.skin_factor, 1e-300, big )
     .flag( "progress", s.progress );
    return t;
}

sem::MorsePotential morse( const std::vector<double>& v ) { return { v[0], v[1], v[2], v[3] }; }
} // namespace

void read_epidermis_config( const std::string& path, EpidermisSettings& s ) { epidermis_table( s ).read( path ); }

void read_epidermis_config_text( const std::string& json, const std::string& name, EpidermisSettings& s )
{
    epidermis_table( s ).read_text( json, name );
}

sem::EpidermisParameters epidermis_parameters( const EpidermisSettings& s )
{
    sem::EpidermisParameters p;
    p.model = s.model == "movement" ? sem::EpidermisModel::movement
              : s.model == "gene_network" ? sem::EpidermisModel::gene_network : sem::EpidermisModel::full;
    p.mechanics.intra = morse( s.intra );
    p.mechanics.inter = morse( s.inter );
    p.mechanics.membrane = morse( s.membrane );
    p.mechanics.inter_cutoff = s.inter_cutoff;
    p.mechanics.skin_factor = s.skin_factor;
    p.mechanics.time_step = s.dt;
    p.mechanics.integrator = s.integrator == "euler" ? sem::TimeScheme::euler : sem::TimeScheme::runge_kutta2;
    p.genes.neighbor_cutoff = s.neighbor_cutoff;
    p.genes.tgf_beta = s.tgf_beta;
    p.genes.coupling = s.coupling == "distribute" ? sem::NeighborCoupling::distribute : sem::NeighborCoupling::average;
    p.growth.interval = static_cast<int>( s.growth_interval );
    p.growth.division_elements = static_cast<int>( s.division_elements );
    p.growth.rule = s.growth_rule == "low_delta" ? sem::GrowthRule::low_delta : sem::GrowthRule::basal_state;
    p.growth.delta_threshold = s.delta_threshold;
    p.validate( "morula epidermis" );
    if ( s.adhesive_elements > s.elements_per_cell )
        throw core::InputError( core::detail::concat( "morula epidermis: adhesive_elements = ", s.adhesive_elements,
                                                      " exceeds elements_per_cell = ", s.elements_per_cell ) );
    if ( p.model == sem::EpidermisModel::full && s.division_elements <= s.elements_per_cell )
        throw core::InputError( core::detail::concat(
            "morula epidermis: division_elements = ", s.division_elements,
            " must exceed elements_per_cell = ", s.elements_per_cell, " (cells would divide at once)" ) );
    return p;
}

sem::MonolayerSpec monolayer_spec( const EpidermisSettings& s )
{
    sem::MonolayerSpec spec;
    spec.cells = static_cast<int>( s.cells );
    spec.elements_per_cell = static_cast<int>( s.elements_per_cell );
    spec.adhesive_elements = static_cast<int>( s.adhesive_elements );
    spec.periodic = s.boundary == "periodic";
    spec.box_x = s.box_x;
    spec.box_y = s.box_y;
    spec.seed = static_cast<std::uint64_t>( s.seed );
    return spec;
}
} // namespace morula::app
