/*!
  \file DiffusionRules.hpp
  \brief Move probabilities per species, site type and axis, and the site types particles cannot enter.

  In the multiparticle model of Roberts et al. (2009) a particle makes one independent choice per axis and time
  step: one site in the negative direction, stay, or one site in the positive direction, with
  probabilities (p_-1, p_0, p_+1) that sum to 1. With p_-1 = p_+1 = p on every axis the particles
  diffuse with D = lambda^2 (1 - p_0) / (2 tau) = lambda^2 p / tau (lattice spacing lambda, step tau).

  DiffusionRules is the host-side description; DeviceRules is what kernels read. A move is decided by
  comparing a 32-bit hashed random integer with two integer thresholds (p_-1 2^32 and
  2^32 - p_+1 2^32), so the decision is exact integer arithmetic on every backend.
*/
#ifndef MORULA_LATTICE_DIFFUSIONRULES_HPP
#define MORULA_LATTICE_DIFFUSIONRULES_HPP

#include <morula/core/Error.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace morula::lattice
{

//! Probabilities of one move along one axis: one site down, stay, one site up.
struct MoveProbabilities
{
    double minus = 0;
    double stay = 1;
    double plus = 0;
};

/*!
  \brief The isotropic probabilities of a species with diffusion coefficient `diffusion` on a lattice
  of spacing `spacing` stepped by `time_step` (any consistent units): p_-1 = p_+1 = D tau / lambda^2.
  \throws core::InputError if D is negative or larger than lambda^2 / (2 tau) (p_0 would be negative)
*/
inline MoveProbabilities probabilities_for_diffusion( double diffusion, double spacing, double time_step )
{
    if ( !( diffusion >= 0 ) || !( spacing > 0 ) || !( time_step > 0 ) || !std::isfinite( diffusion ) )
        throw core::InputError( core::detail::concat( "diffusion coefficient ", diffusion, ", spacing ", spacing,
                                                      ", time step ", time_step,
                                                      ": expected D >= 0, spacing > 0, time step > 0" ) );
    const double p = diffusion * time_step / ( spacing * spacing );
    if ( p > 0.5 )
        throw core::InputError( core::detail::concat(
            "diffusion coefficient ", diffusion, " is too large for spacing ", spacing, " and time step ", time_step,
            ": the largest the lattice can represent is spacing^2 / (2 time step) = ",
            spacing * spacing / ( 2 * time_step ) ) );
    return { p, 1 - 2 * p, p };
}

/*!
  \brief Host-side rules: per species (0-based), site type (0..15) and axis, the move probabilities;
  and the set of blocked site types (obstacles), which particles never enter: a move onto one is
  refused and the particle stays. Every species starts immobile on every type.
*/
class DiffusionRules
{
  public:
    explicit DiffusionRules( int species )
        : m_species( species )
        , m_p( std::size_t( species > 0 ? species : 0 ) * max_site_types * 3 )
    {
        if ( species < 1 || species > 16383 )
            throw core::InputError( core::detail::concat( "DiffusionRules: ", species,
                                                          " species; expected 1..16383" ) );
    }

    int species() const { return m_species; }

    //! \throws core::InputError naming species, type and axis if a probability is negative or not
    //! finite, or the three do not sum to 1 (within 1e-9)
    void set( int species, int site_type, int axis, const MoveProbabilities& p )
    {
        check_index( species, site_type, axis );
        const double sum = p.minus + p.stay + p.plus;
        if ( !( p.minus >= 0 ) || !( p.stay >= 0 ) || !( p.plus >= 0 ) || !std::isfinite( sum ) ||
             std::abs( sum - 1 ) > 1e-9 )
            throw core::InputError( core::detail::concat(
                "DiffusionRules: species ", species, ", site type ", site_type, ", axis ", "xyz"[axis],
                ": probabilities (", p.minus, ", ", p.stay, ", ", p.plus,
                ") must be non-negative and sum to 1 (sum ", sum, ")" ) );
        m_p[slot( species, site_type, axis )] = p;
    }

    //! The same probabilities on every site type.
    void set( int species, int axis, const MoveProbabilities& p )
    {
        for ( int t = 0; t < max_site_types; ++t )
            set( species, t, axis, p );
    }

    //! p_-1 = p_+1 = p on every axis and site type: D = lambda^2 p / tau.
    void set_isotropic( int species, double p )
    {
        for ( int a = 0; a < 3; ++a )
            set( species, a, MoveProbabilities{ p, 1 - 2 * p, p } );
    }

    void block( int site_type )
    {
        check_index( 0, site_type, 0 );
        m_blocked |= 1u << site_type;
    }
    bool blocked( int site_type ) const { return ( m_blocked >> site_type ) & 1u; }
    std::uint32_t blocked_mask() const { return m_blocked; }

    const MoveProbabilities& get( int species, int site_type, int axis ) const
    {
        check_index( species, site_type, axis );
        return m_p[slot( species, site_type, axis )];
    }

  private:
    std::size_t slot( int s, int t, int a ) const
    {
        return ( std::size_t( s ) * max_site_types + std::size_t( t ) ) * 3 + std::size_t( a );
    }
    void check_index( int s, int t, int a ) const
    {
        if ( s < 0 || s >= m_species || t < 0 || t >= max_site_types || a < 0 || a > 2 )
            throw core::InputError( core::detail::concat( "DiffusionRules: species ", s, " (of ", m_species,
                                                          "), site type ", t, " (0..15), axis ", a,
                                                          " (0..2): out of range" ) );
    }

    int m_species;
    std::vector<MoveProbabilities> m_p;
    std::uint32_t m_blocked = 0;
};

/*!
  \brief What the kernels read: integer thresholds per (class, site type, axis) and a map from particle
  code to class (species), so a code may be a species number or a tracer id.
*/
template <class MemorySpace>
struct DeviceRules
{
    //! [((class * 16 + type) * 3 + axis) * 2 + {0: below -> move -1, 1: at or above -> move +1}]
    Kokkos::View<const std::uint64_t*, MemorySpace> thresholds;
    //! class (0-based species) of each particle code; index 0 (empty) unused
    Kokkos::View<const std::uint16_t*, MemorySpace> class_of_code;
    std::uint32_t blocked_types = 0;

    KOKKOS_FORCEINLINE_FUNCTION bool blocked( std::uint32_t type ) const
    {
        return ( blocked_types >> type ) & 1u;
    }

    //! -1, 0 or +1 for a particle with `code` on a site of `type` along `axis` given 32 random bits.
    KOKKOS_FORCEINLINE_FUNCTION int move( std::uint32_t code, std::uint32_t type, int axis,
                                          std::uint32_t random ) const
    {
        const std::size_t base =
            ( ( std::size_t( class_of_code( code ) ) * max_site_types + type ) * 3 + std::size_t( axis ) ) * 2;
        const std::uint64_t r = random;
        return r < thresholds( base ) ? -1 : ( r >= thresholds( base + 1 ) ? 1 : 0 );
    }
};

namespace detail
{
//! p 2^32 rounded to the nearest integer, in [0, 2^32].
inline std::uint64_t probability_threshold( double p )
{
    return static_cast<std::uint64_t>( std::llround( std::ldexp( p, 32 ) ) );
}
} // namespace detail

/*!
  \brief Copies `rules` to `MemorySpace` with the code-to-class map `class_of_code` (entry c is the
  0-based species of particle code c; entry 0 is ignored).
*/
template <class MemorySpace>
DeviceRules<MemorySpace> make_device_rules( const DiffusionRules& rules,
                                            const std::vector<std::uint16_t>& class_of_code )
{
    const std::size_t n = std::size_t( rules.species() ) * max_site_types * 3;
    Kokkos::View<std::uint64_t*, MemorySpace> thr( "lattice_move_thresholds", 2 * n );
    auto h_thr = Kokkos::create_mirror_view( thr );
    for ( int s = 0; s < rules.species(); ++s )
        for ( int t = 0; t < max_site_types; ++t )
            for ( int a = 0; a < 3; ++a )
            {
                const auto& p = rules.get( s, t, a );
                const std::size_t base = ( ( std::size_t( s ) * max_site_types + t ) * 3 + a ) * 2;
                const std::uint64_t lo = detail::probability_threshold( p.minus );
                const std::uint64_t up = detail::probability_threshold( p.plus );
                h_thr( base ) = lo;
                // Rounding may make p_-1 + p_+1 exceed 1 by an ulp; never let the ranges overlap.
                h_thr( base + 1 ) = std::max( lo, ( std::uint64_t( 1 ) << 32 ) - up );
            }
    Kokkos::deep_copy( thr, h_thr );
    Kokkos::View<std::uint16_t*, MemorySpace> cls( "lattice_class_of_code", class_of_code.size() );
    auto h_cls = Kokkos::create_mirror_view( cls );
    for ( std::size_t c = 0; c < class_of_code.size(); ++c )
    {
        if ( c > 0 && class_of_code[c] >= rules.species() )
            throw core::InputError( core::detail::concat( "lattice: particle code ", c, " maps to species ",
                                                          class_of_code[c], " but the rules have ",
                                                          rules.species(), " species" ) );
        h_cls( c ) = class_of_code[c];
    }
    Kokkos::deep_copy( cls, h_cls );
    return { thr, cls, rules.blocked_mask() };
}

} // namespace morula::lattice

#endif
