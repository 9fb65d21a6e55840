#include "LatticeSetup.hpp"

#include <morula/core/Error.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <algorithm>
#include <cstdint>

namespace morula::app
{
namespace lat = morula::lattice;
using core::InputError;
using core::detail::concat;

LatticeSettings default_lattice_settings()
{
    LatticeSettings s;
    s.species = { { "fast", 2000, -1, {} }, { "slow", 2000, -1, {} } };
    s.species[0].p.fill( lat::probabilities_for_diffusion( 100e-3, s.spacing_nm, s.time_step_ns ) );
    s.species[1].p.fill( lat::probabilities_for_diffusion( 10e-3, s.spacing_nm, s.time_step_ns ) );
    return s;
}

lat::LatticeShape lattice_shape( const LatticeSettings& s )
{
    lat::LatticeShape shape( int( s.size[0] ), int( s.size[1] ), int( s.size[2] ) );
    for ( int a = 0; a < 3; ++a )
        shape.boundary[a] = s.boundary[a] == "periodic" ? lat::LatticeBoundary::periodic : lat::LatticeBoundary::reflecting;
    return shape;
}

lat::DiffusionRules lattice_rules( const LatticeSettings& s )
{
    lat::DiffusionRules rules( int( s.species.size() ) );
    for ( std::size_t i = 0; i < s.species.size(); ++i )
        for ( int a = 0; a < 3; ++a )
            rules.set( int( i ), a, s.species[i].p[a] );
    for ( std::size_t k = 0; k < s.obstacles.size(); ++k )
        rules.block( int( k + 1 ) );
    return rules;
}

lat::DiffusionOptions lattice_options( const LatticeSettings& s )
{
    lat::DiffusionOptions opt;
    opt.scheme = s.scheme == "fused" ? lat::PassScheme::fused : lat::PassScheme::split;
    opt.seed = std::uint64_t( s.seed );
    opt.kernels = s.kernels == "compacted" ? lat::PassKernels::compacted
                  : s.kernels == "tiled"   ? lat::PassKernels::tiled
                  : s.kernels == "gather"  ? lat::PassKernels::gather
                                           : lat::PassKernels::automatic;
    return opt;
}

template <int Slots>
LatticeStart<Slots> make_lattice_start( const Kokkos::DefaultExecutionSpace& space, const LatticeSettings& s )
{
    const auto rules = lattice_rules( s );
    LatticeStart<Slots> start{ lat::Lattice<Slots, Kokkos::DefaultExecutionSpace::memory_space>( lattice_shape( s ) ), {}, {} };
    auto& lattice = start.lattice;
    for ( std::size_t k = 0; k < s.obstacles.size(); ++k )
    {
        try
        {
            start.obstacles.push_back( lat::place_sphere_obstacles(
                space, lattice, s.obstacles[k].radius_nm / s.spacing_nm, s.obstacles[k].volume_fraction,
                std::uint32_t( k + 1 ), std::uint64_t( s.seed ) * 31 + k ) );
        }
        catch ( const InputError& e )
        {
            throw InputError( concat( "config: key 'obstacles[", k, "].volume_fraction' = ", s.obstacles[k].volume_fraction,
                                      ": ", e.what() ) );
        }
    }
    std::vector<std::size_t> counts, marked_counts;
    std::size_t total = 0;
    // Marked tracers: some particles of a species carry ids, the others crowd without (any capacity);
    // otherwise every particle is a tracer ("tracers": true) or none is.
    bool marked = false;
    for ( const auto& sp : s.species )
    {
        counts.push_back( std::size_t( sp.count ) );
        total += std::size_t( sp.count );
        marked = marked || sp.tracers >= 0;
        marked_counts.push_back( std::size_t( std::max( 0L, sp.tracers ) ) );
    }
    if ( marked && !s.tracers )
        throw InputError( "config: key 'tracers' = false, but species give 'tracers' counts; remove one of them" );
    if ( !marked && s.tracers && total > lat::SiteLayout<Slots>::max_code )
        throw InputError( concat( "config: key 'tracers' = true needs one id per particle, at most ",
                                  lat::SiteLayout<Slots>::max_code, " with capacity ", Slots, "; the species have ",
                                  total, " particles (give each species a 'tracers' count to follow some of them, set "
                                         "\"tracers\": false to run without MSD, or use capacity 2)" ) );
    try
    {
        if ( marked )
            start.codes = lat::place_particles( lattice, counts, marked_counts, rules, std::uint64_t( s.seed ) );
        else if ( s.tracers )
            start.codes = lat::CodeMap::tracers(
                lat::place_particles( lattice, counts, rules, std::uint64_t( s.seed ), lat::ParticleCodes::tracers ) );
        else
        {
            lat::place_particles( lattice, counts, rules, std::uint64_t( s.seed ), lat::ParticleCodes::species );
            start.codes = lat::CodeMap::species( int( s.species.size() ) );
        }
    }
    catch ( const InputError& e )
    {
        throw InputError( concat( "config: key 'species' (counts", marked ? " and tracers" : "", "): ", e.what() ) );
    }
    return start;
}

template LatticeStart<2> make_lattice_start<2>( const Kokkos::DefaultExecutionSpace&, const LatticeSettings& );
template LatticeStart<4> make_lattice_start<4>( const Kokkos::DefaultExecutionSpace&, const LatticeSettings& );
template LatticeStart<8> make_lattice_start<8>( const Kokkos::DefaultExecutionSpace&, const LatticeSettings& );
} // namespace morula::app
