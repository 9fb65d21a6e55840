// Shared by the lattice tests: an independent host implementation of one pass (a scatter over
// particles, where the library gathers per destination), and helpers to build small lattices.
#ifndef MORULA_TESTS_LATTICE_LATTICETESTUTILS_HPP
#define MORULA_TESTS_LATTICE_LATTICETESTUTILS_HPP

#include <morula/core/HashedRng.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/Lattice.hpp>
#include <morula/lattice/SiteWord.hpp>
#include <morula/lattice/detail/EngineAccess.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

namespace morula_test_lattice
{
using namespace morula::lattice;
//! A driver's engine, for tests that look inside a step.
using EngineAccess = morula::lattice::detail::EngineAccess;

template <int Slots, class MemorySpace>
std::vector<site_word> to_host( const Lattice<Slots, MemorySpace>& l )
{
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), l.sites() );
    return std::vector<site_word>( h.data(), h.data() + h.extent( 0 ) );
}

template <int Slots, class MemorySpace>
void from_host( Lattice<Slots, MemorySpace>& l, const std::vector<site_word>& w )
{
    auto h = Kokkos::create_mirror_view( l.sites() );
    for ( std::size_t i = 0; i < w.size(); ++i )
        h( i ) = w[i];
    Kokkos::deep_copy( l.sites(), h );
}

// The move of one particle, decided as the model specifies: 32 hashed bits against p 2^32.
inline int reference_move( const DiffusionRules& rules, int species, std::uint32_t type, int axis, std::uint32_t r )
{
    const auto& p = rules.get( species, int( type ), axis );
    const std::uint64_t lo = detail::probability_threshold( p.minus );
    const std::uint64_t hi = std::max( lo, ( std::uint64_t( 1 ) << 32 ) - detail::probability_threshold( p.plus ) );
    return r < lo ? -1 : ( r >= hi ? 1 : 0 );
}

// Coordinates of a move target along one axis, or -1 when a reflecting face refuses it.
inline int target_coordinate( int c, int m, int n, LatticeBoundary b )
{
    int t = c + m;
    if ( t >= 0 && t < n )
        return t;
    if ( b == LatticeBoundary::reflecting )
        return -1;
    return ( t % n + n ) % n;
}

/*
  One split pass along `axis` as a scatter: every particle computes its destination; each destination
  then receives, in this order, stayers, up-movers (from below), down-movers (from above), each group
  in slot order. Codes are species + 1 unless `species_of_code` maps them. Returns the new words and
  the number of particles that did not fit (the test setups avoid them).
*/
template <int Slots>
std::pair<std::vector<site_word>, int> reference_split_pass( const std::vector<site_word>& in, const LatticeShape& shape,
                                                             const DiffusionRules& rules, std::uint64_t seed,
                                                             std::uint32_t step, int axis,
                                                             const std::vector<int>& species_of_code = {} )
{
    using L = SiteLayout<Slots>;
    const morula::core::HashedRng rng( seed );
    const int n[3] = { shape.nx, shape.ny, shape.nz };
    std::vector<std::vector<std::tuple<int, int, std::uint32_t>>> arrivals( in.size() );
    for ( int z = 0; z < shape.nz; ++z )
        for ( int y = 0; y < shape.ny; ++y )
            for ( int x = 0; x < shape.nx; ++x )
            {
                const std::size_t s = shape.index( x, y, z );
                for ( int k = 0; k < Slots; ++k )
                {
                    const std::uint32_t code = L::code( in[s], k );
                    if ( !code )
                        continue;
                    const std::uint64_t b = rng.bits( s, std::uint32_t( axis * 4 + k / 2 ), step );
                    const std::uint32_t r = ( k & 1 ) ? std::uint32_t( b ) : std::uint32_t( b >> 32 );
                    const int species = species_of_code.empty() ? int( code ) - 1 : species_of_code[code];
                    int m = reference_move( rules, species, L::type( in[s] ), axis, r );
                    int c[3] = { x, y, z };
                    if ( m )
                    {
                        const int t = target_coordinate( c[axis], m, n[axis], shape.boundary[axis] );
                        int cc[3] = { x, y, z };
                        cc[axis] = t;
                        if ( t < 0 || rules.blocked( int( L::type( in[shape.index( cc[0], cc[1], cc[2] )] ) ) ) )
                            m = 0;
                        else
                            c[axis] = t;
                    }
                    arrivals[shape.index( c[0], c[1], c[2] )].emplace_back( m == 0 ? 0 : m == 1 ? 1 : 2, k, code );
                }
            }
    std::vector<site_word> out( in.size() );
    int extras = 0;
    for ( std::size_t d = 0; d < in.size(); ++d )
    {
        auto& a = arrivals[d];
        std::stable_sort( a.begin(), a.end(), []( const auto& p, const auto& q ) {
            return std::get<0>( p ) < std::get<0>( q ) ||
                   ( std::get<0>( p ) == std::get<0>( q ) && std::get<1>( p ) < std::get<1>( q ) );
        } );
        out[d] = L::empty_site( L::type( in[d] ) );
        for ( std::size_t i = 0; i < a.size(); ++i )
            if ( i < std::size_t( Slots ) )
                out[d] = L::with_code( out[d], int( i ), std::get<2>( a[i] ) );
            else
                ++extras;
    }
    return { out, extras };
}

// Species-code lattice with `per_site_fill` particles on every `stride`-th open site (deterministic).
template <int Slots>
std::vector<site_word> patterned_lattice( const LatticeShape& shape, int species, int stride, int per_site_fill,
                                          const std::vector<std::size_t>& obstacle_sites = {} )
{
    using L = SiteLayout<Slots>;
    std::vector<site_word> w( shape.sites(), L::empty_site( 0 ) );
    for ( auto s : obstacle_sites )
        w[s] = L::empty_site( 1 );
    int next = 0;
    for ( std::size_t s = 0; s < w.size(); s += std::size_t( stride ) )
    {
        if ( L::type( w[s] ) != 0 )
            continue;
        for ( int k = 0; k < per_site_fill; ++k )
            w[s] = L::with_code( w[s], k, std::uint32_t( 1 + ( next++ % species ) ) );
    }
    return w;
}

// Site coordinates of the particles with codes first..last (tracers), {-1, -1, -1} for codes not found;
// indexed by code.
template <int Slots>
std::vector<std::array<int, 3>> tracer_positions( const std::vector<site_word>& w, const LatticeShape& shape,
                                                  std::uint32_t first, std::uint32_t last )
{
    std::vector<std::array<int, 3>> p( last + 1, { -1, -1, -1 } );
    for ( int z = 0; z < shape.nz; ++z )
        for ( int y = 0; y < shape.ny; ++y )
            for ( int x = 0; x < shape.nx; ++x )
                for ( int k = 0; k < Slots; ++k )
                {
                    const std::uint32_t c = SiteLayout<Slots>::code( w[shape.index( x, y, z )], k );
                    if ( c >= first && c <= last )
                        p[c] = { x, y, z };
                }
    return p;
}

// Start + unwrapped displacement = end for every tracer code first..last (modulo the extent on periodic
// axes, exactly on reflecting ones). `d` is a host view indexed (code, axis).
template <class Displacements>
void expect_unwrapped( const std::vector<std::array<int, 3>>& start, const Displacements& d,
                       const std::vector<std::array<int, 3>>& end, const LatticeShape& shape, std::uint32_t first,
                       std::uint32_t last )
{
    for ( std::uint32_t c = first; c <= last; ++c )
        for ( int a = 0; a < 3; ++a )
        {
            const int n = shape.extent( a );
            const int moved = start[c][a] + d( c, a );
            if ( shape.boundary[a] == LatticeBoundary::periodic )
                ASSERT_EQ( ( ( moved % n ) + n ) % n, end[c][a] ) << "tracer " << c << " axis " << a;
            else
                ASSERT_EQ( moved, end[c][a] ) << "tracer " << c << " axis " << a;
        }
}

} // namespace morula_test_lattice

#endif
