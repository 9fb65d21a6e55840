#include "LatticeConfig.hpp"
#include "ConfigFile.hpp"

#include <morula/core/Error.hpp>
#include <morula/lattice/DiffusionRules.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace morula::app
{
namespace
{
using core::InputError;
using core::detail::concat;
namespace lat = morula::lattice;

// (p_-1, p_0, p_+1) of one axis from the config: non-negative (checked by ConfigFile) and summing to 1.
lat::MoveProbabilities probabilities_from( const std::string& where, const std::vector<double>& v )
{
    const double sum = v[0] + v[1] + v[2];
    if ( std::abs( sum - 1 ) > 1e-9 )
    {
        char msg[256];
        std::snprintf( msg, sizeof msg, ": probabilities (%g, %g, %g) sum to %.12g; expected (p_-1, p_0, p_+1) summing to 1",
                       v[0], v[1], v[2], sum );
        throw InputError( where + msg );
    }
    return { v[0], v[1], v[2] };
}

// Every key, each declared once; `path` names the file (or the text's name) in the checks' messages.
ConfigTable lattice_table( LatticeSettings& s, const std::string& path )
{
    const double big = ConfigTable::huge;
    ConfigTable t;
    t.custom( "size",
              [&s]( const ConfigFile& c, const std::string& key ) {
                  const auto v = c.integers( key, 3, 1, 1 << 20 );
                  s.size = { v[0], v[1], v[2] };
              } )
        .number( "spacing_nm", s.spacing_nm, 1e-300, big )
        .number( "time_step_ns", s.time_step_ns, 1e-300, big )
        .custom( "boundary",
                 [&s]( const ConfigFile& c, const std::string& key ) {
                     s.boundary = c.choices( key, 3, { "periodic", "reflecting" } );
                 } )
        .custom( "capacity",
                 [&s, path]( const ConfigFile& c, const std::string& key ) {
                     s.capacity = c.integer( key, 2, 8 );
                     if ( s.capacity != 2 && s.capacity != 4 && s.capacity != 8 )
                         throw InputError( concat( "config '", path, "': key 'capacity' = ", s.capacity, " must be 2, 4 or 8" ) );
                 } )
        .choice( "scheme", s.scheme, { "split", "fused" } )
        .choice( "kernels", s.kernels, { "automatic", "compacted", "tiled", "gather" } )
        .integer( "steps", s.steps, 0, 4000000000L )
        .integer( "sample_every", s.sample_every, 1, 4000000000L )
        .integer( "seed", s.seed, 0, 9007199254740991L )
        .flag( "tracers", s.tracers )
        .text( "output", s.output )
        .text( "snapshots", s.snapshots )
        .integer( "snapshot_every", s.snapshot_every, 0, 4000000000L )
        .flag( "progress", s.progress )
        // A crowding sweep's points: fractions in [0, 1]; numbers() refuses an empty array (no points).
        .custom( "sweep_slot_fraction",
                 [&s]( const ConfigFile& c, const std::string& key ) { s.sweep_slot_fraction = c.numbers( key, 0, 0, 1 ); } )
        .custom( "sweep_obstacle_fraction",
                 [&s]( const ConfigFile& c, const std::string& key ) { s.sweep_obstacle_fraction = c.numbers( key, 0, 0, 1 ); } )
        // after spacing_nm and time_step_ns: a diffusion coefficient is checked against them
        .custom( "species",
                 [&s, path, big]( const ConfigFile& c, const std::string& key ) {
                    s.species.clear();
                    const auto list = c.objects( key, { "name", "count", "tracers", "diffusion_nm2_per_us", "probabilities" } );
                    for ( std::size_t i = 0; i < list.size(); ++i )
                    {
                        const auto& o = list[i];
                        const std::string item = concat( key, "[", i, "]" );
                        SpeciesSettings sp;
                        sp.name = o.has( "name" ) ? o.text( "name" ) : concat( "species ", i + 1 );
                        if ( !o.has( "count" ) )
                            throw InputError( concat( "config '", path, "': key '", item, ".count' is missing" ) );
                        sp.count = o.integer( "count", 0, 1L << 40 );
                        if ( o.has( "tracers" ) )
                            sp.tracers = o.integer( "tracers", 0, sp.count );
                        if ( o.has( "diffusion_nm2_per_us" ) == o.has( "probabilities" ) )
                            throw InputError( concat( "config '", path, "': ", item,
                                                      " needs exactly one of 'diffusion_nm2_per_us' and 'probabilities'" ) );
                        if ( o.has( "diffusion_nm2_per_us" ) )
                        {
                            const double d = o.number( "diffusion_nm2_per_us", 0, big );
                            const double max_d = s.spacing_nm * s.spacing_nm / ( 2 * s.time_step_ns ) * 1e3;
                            if ( d > max_d )
                                throw InputError( concat( "config '", path, "': key '", item, ".diffusion_nm2_per_us' = ", d,
                                                          " is larger than the lattice allows: spacing^2 / (2 time step) = ",
                                                          max_d, " nm^2/us" ) );
                            const auto p = lat::probabilities_for_diffusion( d * 1e-3, s.spacing_nm, s.time_step_ns );
                            sp.p = { p, p, p };
                        }
                        else
                        {
                            // one triple [p_-1, p_0, p_+1] for every axis
                            const auto v = o.numbers( "probabilities", 3, 0, 1 );
                            sp.p.fill( probabilities_from( concat( "config '", path, "': key '", item, ".probabilities'" ), v ) );
                        }
                        s.species.push_back( sp );
                    }
                 } )
        .custom( "obstacles",
                 [&s, path, big]( const ConfigFile& c, const std::string& key ) {
                    const auto list = c.objects( key, { "radius_nm", "volume_fraction" }, true );
                    for ( const auto& o : list )
                    {
                        ObstacleSettings ob;
                        ob.radius_nm = o.number( "radius_nm", 1e-300, big );
                        ob.volume_fraction = o.number( "volume_fraction", 0, 1 );
                        s.obstacles.push_back( ob );
                    }
                    if ( s.obstacles.size() > 15 )
                        throw InputError( concat( "config '", path, "': key 'obstacles' has ", s.obstacles.size(),
                                                  " classes; at most 15 (site types 1..15)" ) );
                 } );
    return t;
}
} // namespace

void read_lattice_config( const std::string& path, LatticeSettings& s ) { lattice_table( s, path ).read( path ); }

void read_lattice_config_text( const std::string& json, const std::string& name, LatticeSettings& s )
{
    lattice_table( s, name ).read_text( json, name );
}

} // namespace morula::app
