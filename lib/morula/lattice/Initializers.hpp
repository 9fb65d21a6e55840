/*!
  \file Initializers.hpp
  \brief Building a lattice: spherical obstacles at a target volume fraction, and particles at random.
*/
#ifndef MORULA_LATTICE_INITIALIZERS_HPP
#define MORULA_LATTICE_INITIALIZERS_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HashedRng.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace morula::lattice
{

//! What place_sphere_obstacles achieved.
struct ObstaclePlacement
{
    std::size_t spheres = 0; //!< spheres placed (they may overlap each other)
    std::size_t sites = 0;   //!< sites of the obstacle type afterwards
    double fraction = 0;     //!< sites / all sites
};

namespace detail
{
template <int Slots, class MemorySpace>
struct MarkSpheres
{
    using layout = SiteLayout<Slots>;
    Kokkos::View<site_word*, MemorySpace> sites;
    core::HashedRng rng;
    std::size_t first_sphere;
    double radius;
    int width; // of the bounding cube, in sites
    int n[3];
    bool periodic[3];
    std::uint32_t type;

    template <class Member>
    KOKKOS_INLINE_FUNCTION void operator()( const Member& team ) const
    {
        const std::size_t sphere = first_sphere + std::size_t( team.league_rank() );
        double centre[3];
        for ( int a = 0; a < 3; ++a )
            centre[a] = rng.uniform<double>( sphere, std::uint32_t( a ), 0 ) * n[a];
        const int w = width;
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, w * w * w ), [&]( const int q ) {
            int c[3] = { q % w, ( q / w ) % w, q / ( w * w ) };
            double r2 = 0;
            bool inside = true;
            for ( int a = 0; a < 3; ++a )
            {
                c[a] += int( morula::compat::floor( centre[a] - radius ) );
                const double delta = c[a] - centre[a];
                r2 += delta * delta;
                if ( periodic[a] )
                    c[a] = ( ( c[a] % n[a] ) + n[a] ) % n[a];
                else
                    inside = inside && c[a] >= 0 && c[a] < n[a];
            }
            if ( inside && r2 <= radius * radius )
                Kokkos::atomic_compare_exchange(
                    &sites( std::size_t( c[0] ) + std::size_t( n[0] ) * ( c[1] + std::size_t( n[1] ) * c[2] ) ),
                    layout::empty_site( 0 ), layout::empty_site( type ) );
        } );
    }
};

template <int Slots, class ExecutionSpace>
std::size_t count_sites_of_type( const ExecutionSpace& exec,
                                 const Kokkos::View<site_word*, typename ExecutionSpace::memory_space>& sites,
                                 std::uint32_t type, bool require_empty, std::size_t* particles = nullptr )
{
    using layout = SiteLayout<Slots>;
    std::size_t count = 0;
    Kokkos::parallel_reduce(
        "morula::lattice::count_type",
        core::LaunchRange<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, sites.extent( 0 ) ),
        KOKKOS_LAMBDA( const std::size_t i, std::size_t& c ) {
            c += layout::type( sites( i ) ) == type && ( !require_empty || layout::empty( sites( i ) ) );
        },
        count );
    std::size_t occupied = 0;
    if ( particles )
        Kokkos::parallel_reduce(
            "morula::lattice::count_particles",
            core::LaunchRange<ExecutionSpace, Kokkos::IndexType<std::size_t>>( exec, 0, sites.extent( 0 ) ),
            KOKKOS_LAMBDA( const std::size_t i, std::size_t& p ) { p += std::size_t( layout::count( sites( i ) ) ); },
            occupied );
    if ( particles )
        *particles = occupied;
    return count;
}
} // namespace detail

/*!
  \brief Turns empty sites of type 0 into `obstacle_type` by placing spheres of `radius` (lattice
  units; a site belongs to a sphere when its centre is within the radius, across periodic faces) at
  uniformly random centres until at least `target_fraction` of all sites have that type. Spheres may
  overlap; the last one overshoots the target by at most its volume. Deterministic for a seed.
  Place obstacles before particles.
  \throws core::InputError if the radius is not positive, the lattice already holds particles, or the
  target cannot be reached (fraction outside [0, 1), or more than the type-0 sites left)
*/
template <int Slots, class ExecutionSpace>
ObstaclePlacement place_sphere_obstacles( const ExecutionSpace& exec,
                                          Lattice<Slots, typename ExecutionSpace::memory_space>& lattice,
                                          double radius, double target_fraction, std::uint32_t obstacle_type,
                                          std::uint64_t seed )
{
    using core::detail::concat;
    const auto& shape = lattice.shape();
    const double total = double( lattice.size() );
    if ( !( radius > 0 ) || !std::isfinite( radius ) || radius > 1e5 )
        throw core::InputError( concat( "obstacles: radius ", radius, " (lattice units) must be in (0, 1e5]" ) );
    if ( obstacle_type == 0 || obstacle_type >= std::uint32_t( max_site_types ) )
        throw core::InputError( concat( "obstacles: site type ", obstacle_type, " must be in 1..15" ) );
    if ( !( target_fraction >= 0 ) || !( target_fraction < 1 ) )
        throw core::InputError( concat( "obstacles: volume fraction ", target_fraction, " cannot be reached; expected [0, 1)" ) );
    std::size_t particles = 0;
    const std::size_t free0 = detail::count_sites_of_type<Slots>( exec, lattice.sites(), 0, true, &particles );
    if ( particles )
        throw core::InputError( concat( "obstacles: the lattice already holds ", particles,
                                        " particles; place obstacles first" ) );
    ObstaclePlacement result;
    result.sites = detail::count_sites_of_type<Slots>( exec, lattice.sites(), obstacle_type, false );
    const std::size_t target = std::size_t( std::ceil( target_fraction * total ) );
    if ( target > result.sites + free0 )
        throw core::InputError( concat( "obstacles: volume fraction ", target_fraction, " cannot be reached: ",
                                        target, " sites needed, only ", result.sites + free0,
                                        " empty sites of type 0 left" ) );
    const double volume = std::max( 1.0, 4.0 / 3.0 * 3.14159265358979323846 * radius * radius * radius );
    const int width = int( std::ceil( 2 * radius ) ) + 2;
    detail::MarkSpheres<Slots, typename ExecutionSpace::memory_space> mark{
        lattice.sites(), core::HashedRng( seed ), 0, radius, width,
        { shape.nx, shape.ny, shape.nz },
        { shape.boundary[0] == LatticeBoundary::periodic, shape.boundary[1] == LatticeBoundary::periodic,
          shape.boundary[2] == LatticeBoundary::periodic },
        obstacle_type };
    const double max_spheres = 1000.0 * ( total / volume + 1 );
    while ( result.sites < target )
    {
        const std::size_t free = detail::count_sites_of_type<Slots>( exec, lattice.sites(), 0, true );
        // New sites a sphere adds on average shrink with the free fraction; aim at half the gap.
        const double per_sphere = volume * double( free ) / total;
        const std::size_t batch = std::size_t(
            std::min( 1e7, std::max( 1.0, 0.5 * double( target - result.sites ) / std::max( per_sphere, 1e-3 ) ) ) );
        if ( double( result.spheres + batch ) > max_spheres || free == 0 )
            throw core::InputError( concat( "obstacles: volume fraction ", target_fraction, " with radius ", radius,
                                            " cannot be reached: ", result.sites, " of ", target, " sites after ",
                                            result.spheres, " spheres" ) );
        mark.first_sphere = result.spheres;
        Kokkos::parallel_for( "morula::lattice::mark_spheres",
                              core::LaunchTeam<ExecutionSpace>( exec, int( batch ), Kokkos::AUTO ), mark );
        result.spheres += batch;
        result.sites = detail::count_sites_of_type<Slots>( exec, lattice.sites(), obstacle_type, false );
    }
    result.fraction = double( result.sites ) / total;
    return result;
}

//! How place_particles numbers particles.
enum class ParticleCodes
{
    species, //!< code = species + 1
    tracers  //!< code = 1, 2, 3, ... in placement order: one id per particle
};

namespace detail
{
/*!
  Puts count[s] particles of each species s at random open sites with a free slot; particle k of species
  s (j-th overall) gets code_of(s, k, j). Checks the room first.
*/
template <int Slots, class MemorySpace, class CodeOf>
void place_coded_particles( Lattice<Slots, MemorySpace>& lattice, const std::vector<std::size_t>& count,
                            const DiffusionRules& rules, std::uint64_t seed, const CodeOf& code_of )
{
    using layout = SiteLayout<Slots>;
    using core::detail::concat;
    const std::size_t n = std::accumulate( count.begin(), count.end(), std::size_t( 0 ) );
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), lattice.sites() );
    const std::size_t sites = h.extent( 0 );
    std::size_t room = 0;
    for ( std::size_t i = 0; i < sites; ++i )
        if ( !rules.blocked( int( layout::type( h( i ) ) ) ) )
            room += std::size_t( Slots - layout::count( h( i ) ) );
    if ( n > room )
        throw core::InputError( concat( "place_particles: ", n, " particles but only ", room,
                                        " free slots on open sites (", Slots, " per site)" ) );
    const core::HashedRng rng( seed );
    auto try_put = [&]( std::size_t i, std::uint32_t code ) {
        const site_word w = h( i );
        const int c = layout::count( w );
        if ( rules.blocked( int( layout::type( w ) ) ) || c == Slots )
            return false;
        h( i ) = layout::with_code( w, c, code );
        return true;
    };
    std::size_t j = 0;
    for ( std::size_t s = 0; s < count.size(); ++s )
        for ( std::size_t k = 0; k < count[s]; ++k, ++j )
        {
            const std::uint32_t code = code_of( s, k, j );
            bool placed = false;
            std::size_t i = 0;
            for ( std::uint32_t attempt = 0; attempt < 64 && !placed; ++attempt )
            {
                i = std::size_t( rng.bits( j, attempt, 0 ) % sites );
                placed = try_put( i, code );
            }
            for ( std::size_t k2 = 1; !placed; ++k2 ) // room > 0 is guaranteed by the count above
                placed = try_put( ( i + k2 ) % sites, code );
        }
    Kokkos::deep_copy( lattice.sites(), h );
}
} // namespace detail

/*!
  \brief Puts count[s] particles of each species s at uniformly random open sites with a free slot
  (the hashed RNG decides; after 64 refused draws a particle takes the next site with room in index
  order). Deterministic for a seed. Runs on the host: setup, not a kernel.
  \return the species of each tracer (tracer codes), or an empty vector (species codes)
  \throws core::InputError if there are more particles than free slots on open sites, or more
  species or tracers than the site's code width allows
*/
template <int Slots, class MemorySpace>
std::vector<int> place_particles( Lattice<Slots, MemorySpace>& lattice, const std::vector<std::size_t>& count,
                                  const DiffusionRules& rules, std::uint64_t seed, ParticleCodes codes )
{
    using layout = SiteLayout<Slots>;
    using core::detail::concat;
    const std::size_t n = std::accumulate( count.begin(), count.end(), std::size_t( 0 ) );
    if ( count.size() != std::size_t( rules.species() ) )
        throw core::InputError( concat( "place_particles: ", count.size(), " counts for ", rules.species(), " species" ) );
    if ( codes == ParticleCodes::tracers && n > layout::max_code )
        throw core::InputError( concat( "place_particles: ", n, " tracers, but a site with ", Slots,
                                        " slots holds ids up to ", layout::max_code ) );
    if ( codes == ParticleCodes::species && count.size() > layout::max_code )
        throw core::InputError( concat( "place_particles: ", count.size(), " species, but a site with ", Slots,
                                        " slots tells only ", layout::max_code, " apart" ) );
    detail::place_coded_particles( lattice, count, rules, seed, [&]( std::size_t s, std::size_t, std::size_t j ) {
        return codes == ParticleCodes::tracers ? std::uint32_t( j + 1 ) : std::uint32_t( s + 1 );
    } );
    std::vector<int> species_of_tracer;
    if ( codes == ParticleCodes::tracers )
        for ( std::size_t s = 0; s < count.size(); ++s )
            species_of_tracer.insert( species_of_tracer.end(), count[s], int( s ) );
    return species_of_tracer;
}

/*!
  \brief Marked tracers in a crowd: puts count[s] particles of each species s as place_particles does, of
  which the first tracers[s] carry ids (codes after the species codes, CodeMap::marked) and the others
  the species code s + 1, so a crowded lattice of any capacity has tracers to follow.
  \throws core::InputError as place_particles, or if tracers[s] > count[s], or if the species and
  tracers need more codes than a slot holds (with 8 slots: 7 in all)
*/
template <int Slots, class MemorySpace>
CodeMap place_particles( Lattice<Slots, MemorySpace>& lattice, const std::vector<std::size_t>& count,
                         const std::vector<std::size_t>& tracers, const DiffusionRules& rules, std::uint64_t seed )
{
    using layout = SiteLayout<Slots>;
    using core::detail::concat;
    if ( count.size() != std::size_t( rules.species() ) || tracers.size() != count.size() )
        throw core::InputError( concat( "place_particles: ", count.size(), " counts and ", tracers.size(),
                                        " tracer counts for ", rules.species(), " species" ) );
    CodeMap map = CodeMap::marked( rules.species(), {} );
    for ( std::size_t s = 0; s < count.size(); ++s )
    {
        if ( tracers[s] > count[s] )
            throw core::InputError( concat( "place_particles: species ", s, " has ", count[s], " particles but ",
                                            tracers[s], " tracers" ) );
        map.species_of_tracer.insert( map.species_of_tracer.end(), tracers[s], int( s ) );
    }
    if ( map.max_code() > layout::max_code )
        throw core::InputError( concat( "place_particles: ", rules.species(), " species and ",
                                        map.species_of_tracer.size(), " tracers need codes up to ", map.max_code(),
                                        ", but a site with ", Slots, " slots holds codes 1..", layout::max_code ) );
    std::vector<std::uint32_t> first_tracer_of_species( count.size() );
    std::uint32_t next = map.first_tracer_code();
    for ( std::size_t s = 0; s < count.size(); ++s )
    {
        first_tracer_of_species[s] = next;
        next += std::uint32_t( tracers[s] );
    }
    detail::place_coded_particles( lattice, count, rules, seed, [&]( std::size_t s, std::size_t k, std::size_t ) {
        return k < tracers[s] ? first_tracer_of_species[s] + std::uint32_t( k ) : std::uint32_t( s + 1 );
    } );
    return map;
}

} // namespace morula::lattice

#endif
