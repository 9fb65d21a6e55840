/*!
  \file LatticeCheckpoint.hpp
  \brief What a checkpoint of the lattice diffusion model holds, the same for LatticeDiffusion on one rank
  and on slabs (one layout: a checkpoint written at any rank count resumes at any other), and the checks a
  restart makes.

  A step is a pure function of the lattice, the seed and the step number (the hashed RNG keys every move
  and every overflow placement on them), so the whole state between steps is:

  | entry | type, shape | what |
  | --- | --- | --- |
  | `step` | int64 | completed steps: the step number of the next random moves |
  | `lattice/sites` | uint32 [sites] | every site word (type and particle codes), x fastest |
  | `overflow/total` | uint64 | particles that went through the overflow list (a running count) |
  | `tracers/displacement` | int32 [codes + 1, 3] | unwrapped displacement of each tracer code (tracer codes only) |

  and the parameters the continuation depends on, which a restart requires to be those of the driver it
  resumes (a different one is refused, naming it and both values): `lattice/slots`, `lattice/extents`,
  `lattice/boundary`, `options/seed`, `options/scheme`, `rules/thresholds` (the move probabilities as
  the kernels' integer thresholds), `rules/blocked_types`, `codes/species_codes`,
  `codes/species_of_tracer`. The kernel family (DiffusionOptions::kernels) is not recorded: every
  family gives the same lattice bit for bit, so a run may resume with another. A restart also requires
  the checkpoint's site types (the obstacles) and its number of particles of every code to be those of
  the driver it resumes, which was built from the same configuration.

  The overflow list is empty between steps and is not saved; nor are the timers (a measurement).
*/
#ifndef MORULA_LATTICE_LATTICECHECKPOINT_HPP
#define MORULA_LATTICE_LATTICECHECKPOINT_HPP

#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionOptions.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace morula::lattice
{

//! The model name of lattice checkpoints (both drivers).
inline constexpr const char* lattice_checkpoint_model = "lattice";

namespace detail
{

//! What a checkpoint holds besides the parameters (see the file's table).
struct LatticeCheckpointState
{
    std::uint32_t step = 0;
    std::vector<site_word> sites;
    unsigned long long overflows = 0;
    std::vector<int> displacement; //!< (code, axis) row-major; empty without tracer codes
};

inline std::string boundary_text( const LatticeShape& s )
{
    return core::detail::concat( to_string( s.boundary[0] ), " ", to_string( s.boundary[1] ), " ",
                                 to_string( s.boundary[2] ) );
}

//! The thresholds the kernels compare 32 random bits with, on the host.
template <class MemorySpace>
std::vector<std::uint64_t> host_thresholds( const DeviceRules<MemorySpace>& rules )
{
    std::vector<std::uint64_t> t;
    core::copy_to_host( rules.thresholds, rules.thresholds.extent( 0 ), t );
    return t;
}

/*!
  \brief Records the parameters of a lattice run: `slots`, the whole lattice's shape, the options that
  change the run (seed, scheme), the rules the kernels use and the code map.
*/
template <class MemorySpace>
void put_lattice_parameters( io::CheckpointWriter& out, int slots, const LatticeShape& shape,
                             const DiffusionOptions& options, const DeviceRules<MemorySpace>& rules,
                             const CodeMap& codes )
{
    out.put_scalar( "lattice/slots", std::int32_t( slots ) );
    out.put( "lattice/extents", std::vector<std::int32_t>{ shape.nx, shape.ny, shape.nz } );
    out.put_text( "lattice/boundary", boundary_text( shape ) );
    out.put_scalar( "options/seed", std::uint64_t( options.seed ) );
    out.put_text( "options/scheme", to_string( options.scheme ) );
    out.put( "rules/thresholds", host_thresholds( rules ) );
    out.put_scalar( "rules/blocked_types", std::uint32_t( rules.blocked_types ) );
    out.put_scalar( "codes/species_codes", std::int32_t( codes.species_codes ) );
    out.put( "codes/species_of_tracer",
             std::vector<std::int32_t>( codes.species_of_tracer.begin(), codes.species_of_tracer.end() ) );
}

//! Records the state (see the file's table).
inline void put_lattice_state( io::CheckpointWriter& out, const LatticeCheckpointState& state )
{
    out.put_scalar( "step", static_cast<long long>( state.step ) );
    out.put( "lattice/sites", state.sites );
    out.put_scalar( "overflow/total", static_cast<std::uint64_t>( state.overflows ) );
    if ( !state.displacement.empty() )
        out.put( "tracers/displacement", state.displacement, { state.displacement.size() / 3, 3 } );
}

//! Refuses the checkpoint unless `a` (the checkpoint's) equals `b` (this run's), naming the parameter.
template <class T>
void require_same( const io::CheckpointReader& in, const std::string& parameter, const T& a, const T& b )
{
    if ( !( a == b ) )
        in.fail( core::detail::concat( "it was written with ", parameter, " ", a, ", this run has ", b,
                                       ": a restart continues the same run" ) );
}

//! "(p_-1, p_0, p_+1)" from a pair of thresholds.
inline std::string probabilities_of( std::uint64_t below, std::uint64_t at_or_above )
{
    const double lo = std::ldexp( double( below ), -32 );
    const double up = std::ldexp( double( ( std::uint64_t( 1 ) << 32 ) - at_or_above ), -32 );
    char text[96]; // the thresholds are p 2^32 rounded: 9 digits show the rounding, 6 the probability
    std::snprintf( text, sizeof text, "(%.6g, %.6g, %.6g)", lo, 1 - lo - up, up );
    return text;
}

/*!
  \brief Refuses (core::InputError naming the checkpoint, the parameter and both values) a checkpoint
  whose parameters differ from those of the run that resumes from it.
*/
template <class MemorySpace>
void check_lattice_parameters( const io::CheckpointReader& in, int slots, const LatticeShape& shape,
                               const DiffusionOptions& options, const DeviceRules<MemorySpace>& rules,
                               const CodeMap& codes )
{
    require_same( in, "capacity (particles per site)", int( in.scalar<std::int32_t>( "lattice/slots" ) ), slots );
    const auto extents = in.get<std::int32_t>( "lattice/extents" );
    if ( extents.size() != 3 )
        in.fail( core::detail::concat( "'lattice/extents' has ", extents.size(), " values; expected 3" ) );
    const auto size_text = []( int x, int y, int z ) { return core::detail::concat( x, " x ", y, " x ", z ); };
    require_same( in, "lattice size", size_text( extents[0], extents[1], extents[2] ),
                  size_text( shape.nx, shape.ny, shape.nz ) );
    require_same( in, "boundaries (x y z)", in.text( "lattice/boundary" ), boundary_text( shape ) );
    require_same( in, "pass scheme", in.text( "options/scheme" ), std::string( to_string( options.scheme ) ) );
    require_same( in, "seed", in.scalar<std::uint64_t>( "options/seed" ), std::uint64_t( options.seed ) );
    require_same( in, "species codes (species without ids)", int( in.scalar<std::int32_t>( "codes/species_codes" ) ),
                  codes.species_codes );
    const auto tracers = in.get<std::int32_t>( "codes/species_of_tracer" );
    require_same( in, "number of tracers", tracers.size(), codes.species_of_tracer.size() );
    for ( std::size_t t = 0; t < tracers.size(); ++t )
        if ( tracers[t] != codes.species_of_tracer[t] )
            require_same( in, core::detail::concat( "the species of tracer ", t + 1 ), int( tracers[t] ),
                          codes.species_of_tracer[t] );
    const auto thresholds = in.get<std::uint64_t>( "rules/thresholds" );
    const auto here = host_thresholds( rules );
    constexpr std::size_t per_species = std::size_t( max_site_types ) * 3 * 2;
    require_same( in, "number of species", thresholds.size() / per_species, here.size() / per_species );
    if ( thresholds.size() != here.size() )
        in.fail( core::detail::concat( "'rules/thresholds' has ", thresholds.size(), " values; expected ",
                                       here.size() ) );
    for ( std::size_t i = 0; i < here.size(); i += 2 )
        if ( thresholds[i] != here[i] || thresholds[i + 1] != here[i + 1] )
        {
            const std::size_t k = i / 2, axis = k % 3, type = ( k / 3 ) % max_site_types, species = k / 3 / max_site_types;
            require_same( in,
                          core::detail::concat( "move probabilities (p_-1, p_0, p_+1) of species ", species,
                                                " on site type ", type, " along ", "xyz"[axis] ),
                          probabilities_of( thresholds[i], thresholds[i + 1] ), probabilities_of( here[i], here[i + 1] ) );
        }
    require_same( in, "blocked site types (bit mask)", in.scalar<std::uint32_t>( "rules/blocked_types" ),
                  std::uint32_t( rules.blocked_types ) );
}

/*!
  \brief The state of a checkpoint of a lattice of `shape` with codes up to `max_code` (tracer
  displacements when `tracking`), after checking every site word: no code above max_code, no particle
  on a blocked site type, no gap between slots.
*/
template <int Slots>
LatticeCheckpointState read_lattice_state( const io::CheckpointReader& in, const LatticeShape& shape,
                                           std::uint32_t max_code, std::uint32_t blocked_types, bool tracking )
{
    using layout = SiteLayout<Slots>;
    LatticeCheckpointState s;
    const long long step = in.scalar<long long>( "step" );
    if ( step < 0 || step > 0xFFFFFFFFll )
        in.fail( core::detail::concat( "'step' = ", step, " is outside [0, 4294967295]" ) );
    s.step = std::uint32_t( step );
    s.overflows = in.scalar<std::uint64_t>( "overflow/total" );
    if ( in.rows( "lattice/sites" ) != shape.sites() )
        in.fail( core::detail::concat( "'lattice/sites' has ", in.rows( "lattice/sites" ), " sites; the lattice ",
                                       shape.sites() ) );
    s.sites = in.get<site_word>( "lattice/sites" );
    for ( std::size_t i = 0; i < s.sites.size(); ++i )
    {
        const site_word w = s.sites[i];
        const int n = layout::count( w );
        bool bad = n > 0 && ( ( blocked_types >> layout::type( w ) ) & 1u );
        for ( int k = 0; k < Slots; ++k )
            bad = bad || layout::code( w, k ) > max_code || ( k >= n && layout::code( w, k ) != 0 );
        if ( bad )
            in.fail( core::detail::concat( "site ", i, " (word ", w, ") breaks the lattice rules: a code above ",
                                           max_code, ", a particle on a blocked site type or a gap between slots" ) );
    }
    if ( tracking )
    {
        const std::size_t rows = std::size_t( max_code ) + 1;
        const auto& dims = in.dims( "tracers/displacement" );
        if ( dims.size() != 2 || dims[0] != rows || dims[1] != 3 )
            in.fail( core::detail::concat( "'tracers/displacement' is not ", rows, " x 3" ) );
        s.displacement = in.get<int>( "tracers/displacement" );
    }
    else if ( in.has( "tracers/displacement" ) )
        in.fail( "it holds tracer displacements, this run has no tracer codes" );
    return s;
}

//! Particles per code (index = code) of host site words.
template <int Slots>
std::vector<unsigned long long> count_codes( const site_word* sites, std::size_t n, std::uint32_t max_code )
{
    using layout = SiteLayout<Slots>;
    std::vector<unsigned long long> counts( std::size_t( max_code ) + 1, 0ull );
    for ( std::size_t i = 0; i < n; ++i )
        for ( int k = 0; k < layout::count( sites[i] ); ++k )
            ++counts[layout::code( sites[i], k )];
    return counts;
}

/*!
  \brief Refuses a checkpoint whose site types differ from those of this run (`here`: `n` words of this
  run starting at global site `first`): the obstacles are parameters of the run.
*/
template <int Slots>
void check_site_types( const io::CheckpointReader& in, const std::vector<site_word>& checkpoint, const site_word* here,
                       std::size_t first, std::size_t n, const LatticeShape& shape )
{
    using layout = SiteLayout<Slots>;
    std::size_t differ = 0, at = 0;
    for ( std::size_t i = n; i-- > 0; )
        if ( layout::type( checkpoint[first + i] ) != layout::type( here[i] ) )
        {
            ++differ;
            at = i;
        }
    if ( differ )
    {
        const std::size_t g = first + at, nx = std::size_t( shape.nx ), ny = std::size_t( shape.ny );
        in.fail( core::detail::concat( "its site types (obstacles) differ from this run's at ", differ,
                                       " sites, the first at (", g % nx, ", ", ( g / nx ) % ny, ", ", g / ( nx * ny ),
                                       "): type ", layout::type( checkpoint[g] ), " in the checkpoint, ",
                                       layout::type( here[at] ), " here" ) );
    }
}

//! Refuses a checkpoint with another number of particles of some code than this run.
inline void check_code_counts( const io::CheckpointReader& in, const std::vector<unsigned long long>& checkpoint,
                               const std::vector<unsigned long long>& here )
{
    for ( std::size_t c = 1; c < here.size() && c < checkpoint.size(); ++c )
        if ( checkpoint[c] != here[c] )
            in.fail( core::detail::concat( "it holds ", checkpoint[c], " particles of code ", c, ", this run ", here[c],
                                           ": the species counts or tracers differ" ) );
}

} // namespace detail
} // namespace morula::lattice

#endif
