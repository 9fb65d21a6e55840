#include "LatticeSetup.hpp"

#include <morula/core/Error.hpp>
#include <morula/core/MemoryInfo.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

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

void refuse_lattice_beyond_memory( const LatticeSettings& s, const std::string& what, int ranks )
{
    using memory_space = Kokkos::DefaultExecutionSpace::memory_space;
    const double available = core::available_memory_bytes<memory_space>();
    if ( !( available > 0 ) )
        return; // unknown: nothing to compare with
    const double sites = double( s.size[0] ) * double( s.size[1] ) * double( s.size[2] );
    double particles = 0, tracers = 0;
    for ( const auto& sp : s.species )
    {
        particles += double( sp.count );
        tracers += sp.tracers >= 0 ? double( sp.tracers ) : s.tracers ? double( sp.count ) : 0.0;
    }
    // On one rank the initial lattice is the driver's. On slabs every rank builds the whole lattice
    // first, then cuts its thickest slab with 6 ghost planes for the driver, with its particles in the
    // same proportion; tracer ids are global, every rank keeps a displacement for each.
    double share = 1, whole_start = 0;
    if ( ranks > 1 )
    {
        share = std::min( double( s.size[2] ), std::ceil( double( s.size[2] ) / ranks ) + 6 ) / double( s.size[2] );
        whole_start = 4.0 * sites;
    }
    const double need =
        whole_start + lattice::diffusion_memory_bytes( share * sites, share * particles, tracers, s.scheme == "fused" );
    auto refuse = [&]( double bytes, double memory, const char* per, const char* source ) {
        char figures[240];
        std::snprintf( figures, sizeof figures, "%.3g GB (%s), more than the %.3g GB %s", bytes / 1e9, per,
                       memory / 1e9, source );
        throw InputError( concat( what, ": ", std::llround( sites ), " sites with ", std::llround( particles ),
                                  " particles need at least ", figures,
                                  ranks > 1 ? concat( " (each of ", ranks, " ranks)" ) : std::string(),
                                  "; use a smaller lattice" ) );
    };
    if ( need > available )
        refuse( need, available, "on one rank 13 bytes per site, 13 per particle, 20 per tracer",
                core::available_memory_source<memory_space>() );
    // On a GPU the particles are placed in a host copy of the whole lattice (4 bytes per site).
    const double host = core::host_memory_bytes();
    if ( !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible && host > 0 && 4.0 * sites > host )
        refuse( 4.0 * sites, host, "a host copy of 4 bytes per site to place the particles", "of this machine's memory" );
}

template <int Slots>
LatticeStart<Slots> make_lattice_start( const Kokkos::DefaultExecutionSpace& space, const LatticeSettings& s, int ranks )
{
    refuse_lattice_beyond_memory( s,
                                  concat( "config: key 'size' = [", s.size[0], ", ", s.size[1], ", ", s.size[2], "]" ),
                                  ranks );
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

template LatticeStart<2> make_lattice_start<2>( const Kokkos::DefaultExecutionSpace&, const LatticeSettings&, int );
template LatticeStart<4> make_lattice_start<4>( const Kokkos::DefaultExecutionSpace&, const LatticeSettings&, int );
template LatticeStart<8> make_lattice_start<8>( const Kokkos::DefaultExecutionSpace&, const LatticeSettings&, int );
} // namespace morula::app
