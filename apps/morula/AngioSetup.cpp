#include "AngioSetup.hpp"
#include "ConfigFile.hpp"

#include <morula/angio/Initializers.hpp>
#include <morula/core/Error.hpp>

#include <cstdint>
#include <set>

namespace morula::app
{
namespace
{
const std::set<std::string> vessel_keys{ "points", "radius" };

ConfigTable angiogenesis_table( AngioSettings& s )
{
    constexpr double big = ConfigTable::huge;
    auto& p = s.p;
    ConfigTable t;
    t.choice( "precision", s.precision, { "float", "double" } )
        .numbers( "box", s.box, 3, 1e-300 )
        .numbers( "tumour_centre", s.tumour_centre, 3, -big )
        .number( "tumour_radius", s.tumour_radius, 0 )
        .number( "cell_radius", s.cell_radius, 1e-300 )
        .custom( "vessels",
                 [&s]( const ConfigFile& c, const std::string& key ) {
                     s.vessels.clear();
                     for ( const auto& v : c.objects( key, vessel_keys, true ) )
                     {
                         AngioSettings::Vessel vessel;
                         vessel.points = v.numbers( "points", 0, -big, big );
                         if ( v.has( "radius" ) )
                             vessel.radius = v.number( "radius", 1e-300, big );
                         s.vessels.push_back( vessel );
                     }
                 } )
        .integer( "steps", s.steps, 0, 1000000000 )
        .number( "dt", p.time_step, 1e-300 )
        .integer( "output_every", s.output_every, 0, 1000000000 )
        .integer( "seed", s.seed, 0, 9007199254740991L )
        .number( "angiogenic_switch", s.angiogenic_switch, 0 )
        .text( "output", s.output )
        .flag( "progress", s.progress )
        .number( "repulsion", p.mechanics.repulsion, 0 )
        .number( "adhesion", p.mechanics.adhesion, 0 )
        .number( "adhesion_range", p.mechanics.adhesion_range, 0 )
        .number( "friction", p.mechanics.friction, 0 )
        .number( "reference_radius", p.mechanics.reference_radius, 0 )
        .number( "wall_stiffness", p.mechanics.wall_stiffness, 0 )
        .number( "oxygen_diffusion", p.exchange.oxygen_diffusion, 0 )
        .number( "oxygen_uptake", p.exchange.oxygen_uptake, 0 )
        .number( "hypoxic_uptake_factor", p.exchange.hypoxic_uptake_factor, 0 )
        .number( "taf_diffusion", p.exchange.taf_diffusion, 0 )
        .number( "taf_decay", p.exchange.taf_decay, 0 )
        .number( "taf_production", p.exchange.taf_production, 0 )
        .integer( "sweeps", p.exchange.sweeps, 0, 10000 )
        .number( "sweep_fraction", p.exchange.sweep_fraction, 0 )
        .integer( "max_contacts", p.exchange.max_contacts, 1, 1000 )
        .number( "division_radius", p.life.division_radius, 0 )
        .number( "growth_rate", p.life.growth_rate, 0 )
        .number( "growth_spread", p.life.growth_spread, 0 )
        .number( "maturation_age", p.life.maturation_age, 0 )
        .number( "hypoxia_threshold", p.life.hypoxia_threshold, 0 )
        .number( "recovery_threshold", p.life.recovery_threshold, 0 )
        .number( "hypoxic_survival", p.life.hypoxic_survival, 0 )
        .number( "max_age", p.life.max_age, 0 )
        .number( "max_pressure", p.life.max_pressure, 0 )
        .number( "lysis_rate", p.life.lysis_rate, 0 )
        .number( "lysis_radius", p.life.lysis_radius, 0 )
        .number( "inflow", p.vessels.inflow, 0 )
        .number( "perfusion_half", p.vessels.perfusion_half, 0 )
        .number( "blood_oxygen_length", p.vessels.blood_oxygen_length, 0 )
        .number( "wall_conductance", p.vessels.wall_conductance, 0 )
        .flag( "sprouting", p.vessels.sprouting )
        .number( "sprout_taf", p.vessels.sprout_taf, 0 )
        .number( "sprout_rate", p.vessels.sprout_rate, 0 )
        .number( "sprout_refractory", p.vessels.sprout_refractory, 0 )
        .number( "sprout_radius", p.vessels.sprout_radius, 0 )
        .number( "sprout_length", p.vessels.sprout_length, 0 )
        .number( "tip_speed", p.vessels.tip_speed, 0 )
        .number( "tip_taf", p.vessels.tip_taf, 0 )
        .number( "tip_persistence", p.vessels.tip_persistence, 0 )
        .number( "max_tube_length", p.vessels.max_tube_length, 0 )
        .number( "tube_repulsion", p.vessels.tube_repulsion, 0 )
        .integer( "sort_every", p.sort_every, 0, 1000000000 )
        .integer( "max_tubes_per_cell", p.max_tubes_per_cell, 1, 1024 )
        .flag( "atomic_cell_cell", p.atomic_cell_cell );
    return t;
}
} // namespace

void read_angiogenesis_config( const std::string& path, AngioSettings& s )
{
    angiogenesis_table( s ).read( path );
}

void read_angiogenesis_config_text( const std::string& json, const std::string& name, AngioSettings& s )
{
    angiogenesis_table( s ).read_text( json, name );
}

AngioStart make_angiogenesis_start( const AngioSettings& s, const std::string& where )
{
    AngioStart start;
    angio::AngioParameters p = s.p;
    p.seed = static_cast<std::uint64_t>( s.seed );
    const bool sprouting = p.vessels.sprouting;
    p.vessels.sprouting = sprouting && s.angiogenic_switch <= 0;
    p.validate( where );

    angio::HostTubes tubes;
    for ( std::size_t k = 0; k < s.vessels.size(); ++k )
        tubes.add_vessel( s.vessels[k].points, s.vessels[k].radius, p.vessels.max_tube_length,
                          core::detail::concat( where, ": vessels[", k, "]" ) );
    angio::HostCells cells;
    // The tumour's sphere against the box before any cell is placed: a radius far beyond the box would
    // otherwise place (radius / cell spacing)^3 cells before the check below sees one outside.
    for ( int d = 0; d < 3 && s.tumour_radius > 0; ++d )
        if ( !( s.tumour_centre[d] - s.tumour_radius >= 0 && s.tumour_centre[d] + s.tumour_radius <= s.box[d] ) )
            throw core::InputError( core::detail::concat(
                where, ": the tumour (tumour_centre, tumour_radius) reaches outside the box along ", "xyz"[d],
                " (centre ", s.tumour_centre[d], ", radius ", s.tumour_radius, ", box [0, ", s.box[d], "])" ) );
    if ( s.tumour_radius > 0 )
    {
        angio::ClusterSpec cluster;
        for ( int d = 0; d < 3; ++d )
            cluster.centre[d] = s.tumour_centre[d];
        cluster.radius = s.tumour_radius;
        cluster.cell_radius = s.cell_radius;
        cluster.seed = p.seed;
        angio::add_cluster( cells, cluster );
    }
    for ( std::size_t i = 0; i < cells.size(); ++i )
        for ( int d = 0; d < 3; ++d )
            if ( !( cells.position[3 * i + d] >= 0 && cells.position[3 * i + d] <= s.box[d] ) )
                throw core::InputError( core::detail::concat(
                    where, ": the tumour (tumour_centre, tumour_radius) reaches outside the box along ", "xyz"[d],
                    " (cell at ", cells.position[3 * i + d], ", box [0, ", s.box[d], "])" ) );

    start.parameters = p;
    start.sprouting = sprouting;
    start.cells = std::move( cells );
    start.tubes = std::move( tubes );
    return start;
}
} // namespace morula::app
