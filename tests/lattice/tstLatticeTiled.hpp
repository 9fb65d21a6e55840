// The tiled split passes against the gather passes that define the model (issue #22): pass by pass,
// the same lattice words, the same overflow entries (key, code, move; the list's order is free) and the
// same tracer displacements, bit for bit, on crowded lattices with obstacles, walls and tracers.
#include "LatticeTestUtils.hpp"

#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

namespace morula_test_lattice
{

template <int Slots>
using TiledModel = LatticeDiffusion<Slots, TEST_EXECSPACE>;

// The pending overflow entries of a model, sorted (the list is filled by atomics in any order).
template <int Slots>
std::vector<std::tuple<std::uint64_t, std::uint32_t, int>> pending_entries( const TiledModel<Slots>& model )
{
    const std::size_t n = model.pending_overflows( TEST_EXECSPACE() );
    auto keys = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), model.overflow_keys() );
    auto codes = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), model.placed_codes() );
    auto moves = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), model.overflow_moves() );
    std::vector<std::tuple<std::uint64_t, std::uint32_t, int>> e;
    for ( std::size_t i = 0; i < n; ++i )
        e.emplace_back( keys( i ), codes( i ), int( moves( i ) ) );
    std::sort( e.begin(), e.end() );
    return e;
}

template <int Slots>
std::vector<int> host_displacements( const TiledModel<Slots>& model )
{
    auto d = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), model.displacements() );
    std::vector<int> v;
    for ( std::size_t c = 0; c < d.extent( 0 ); ++c )
        for ( int a = 0; a < 3; ++a )
            v.push_back( d( c, a ) );
    return v;
}

/*
  A lattice of `shape` with obstacles (type 1, blocked) on about 10% of the sites, a second open type
  (2) with its own probabilities, `per_site` particles per site of two species plus tracers, stepped by
  a gather model and a tiled model side by side.
*/
template <int Slots>
void check_tiled_against_gather( const LatticeShape& shape, double per_site, int steps, bool obstacles )
{
    using L = SiteLayout<Slots>;
    DiffusionRules rules( 2 );
    for ( int t = 0; t < 16; ++t )
        for ( int a = 0; a < 3; ++a )
        {
            rules.set( 0, t, a, { 0.3, 0.4, 0.3 } );
            rules.set( 1, t, a, { 0.05 + 0.1 * ( ( t + a ) % 3 ), 0.45, 0.5 - 0.1 * ( ( t + a ) % 3 ) } );
        }
    rules.block( 1 );
    Lattice<Slots, TEST_MEMSPACE> lattice( shape );
    std::size_t blocked = 0;
    if ( obstacles && shape.sites() > 64 )
        blocked = place_sphere_obstacles( TEST_EXECSPACE(), lattice, 1.2, 0.1, 1, 17 ).sites;
    // On the host: a second open site type (2) on every seventh site, then `per_site` particles per site
    // (at most 70% of the open slots) at random open sites with room: species codes 1 and 2, and tracer
    // codes 3, 4, ... (as many as the code width leaves), each on one particle.
    auto w = to_host( lattice );
    for ( std::size_t i = 0; i < w.size(); i += 7 )
        if ( L::type( w[i] ) == 0 )
            w[i] = L::empty_site( 2 );
    const std::size_t open = shape.sites() - blocked;
    const std::size_t particles = std::min( std::size_t( per_site * double( shape.sites() ) ), open * Slots * 7 / 10 );
    const std::size_t tracers = std::min<std::size_t>( L::max_code - 2, particles / 4 );
    std::mt19937_64 gen( 1234 + Slots );
    for ( std::size_t p = 0; p < particles; ++p )
    {
        const std::uint32_t code = p < tracers ? std::uint32_t( 3 + p ) : std::uint32_t( 1 + gen() % 2 );
        for ( ;; )
        {
            const std::size_t i = std::size_t( gen() % w.size() );
            const int n = L::count( w[i] );
            if ( L::type( w[i] ) == 1 || n == Slots )
                continue;
            w[i] = L::with_code( w[i], n, code );
            break;
        }
    }
    Lattice<Slots, TEST_MEMSPACE> fresh( shape );
    from_host( fresh, w );
    const CodeMap codes = CodeMap::marked( 2, std::vector<int>( tracers, 1 ) );

    DiffusionOptions gather_opt;
    gather_opt.seed = 77;
    gather_opt.kernels = PassKernels::gather;
    DiffusionOptions tiled_opt = gather_opt;
    tiled_opt.kernels = PassKernels::tiled;
    Lattice<Slots, TEST_MEMSPACE> copy( shape );
    Kokkos::deep_copy( copy.sites(), fresh.sites() );
    TiledModel<Slots> gather( TEST_EXECSPACE(), fresh, rules, codes, gather_opt );
    TiledModel<Slots> tiled( TEST_EXECSPACE(), copy, rules, codes, tiled_opt );
    std::size_t entries = 0;
    for ( int s = 0; s < steps; ++s )
    {
        for ( int axis = 0; axis < 3; ++axis )
        {
            gather.split_pass( TEST_EXECSPACE(), axis );
            tiled.split_pass( TEST_EXECSPACE(), axis );
            ASSERT_EQ( to_host( gather.lattice() ), to_host( tiled.lattice() ) )
                << "Slots " << Slots << ", step " << s << ", axis " << axis;
            const auto eg = pending_entries<Slots>( gather );
            ASSERT_EQ( eg, pending_entries<Slots>( tiled ) ) << "Slots " << Slots << ", step " << s << ", axis " << axis;
            entries += eg.size();
            ASSERT_EQ( host_displacements<Slots>( gather ), host_displacements<Slots>( tiled ) )
                << "Slots " << Slots << ", step " << s << ", axis " << axis;
            gather.place_overflow( TEST_EXECSPACE() );
            tiled.place_overflow( TEST_EXECSPACE() );
            ASSERT_EQ( to_host( gather.lattice() ), to_host( tiled.lattice() ) );
            ASSERT_EQ( host_displacements<Slots>( gather ), host_displacements<Slots>( tiled ) );
        }
        gather.complete_step();
        tiled.complete_step();
    }
    if ( per_site >= 0.5 * Slots && shape.sites() > 64 )
        EXPECT_GT( entries, 0u ) << "Slots " << Slots << ", " << shape.nx << "x" << shape.ny << "x" << shape.nz
                             << ": the crowded case did not overflow";
    EXPECT_EQ( gather.code_counts( TEST_EXECSPACE() ), tiled.code_counts( TEST_EXECSPACE() ) );
}

template <int Slots>
void check_tiled_cases()
{
    // Row segments longer than a GPU tile (300 > 256), runs with a remainder (11, 13 = 8 + 3, 8 + 5),
    // axes of extent 1 and 2 (a site is its own periodic neighbour, or both neighbours are one site).
    const double crowded = 0.65 * Slots; // 65% of the slots: overflows in every pass
    for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
    {
        LatticeShape big( 300, 5, 11, b );
        check_tiled_against_gather<Slots>( big, 0.41, 2, true );
        check_tiled_against_gather<Slots>( big, crowded, 2, true );
        LatticeShape odd( 13, 9, 17, b );
        odd.boundary[1] = b == LatticeBoundary::periodic ? LatticeBoundary::reflecting : LatticeBoundary::periodic;
        check_tiled_against_gather<Slots>( odd, crowded, 3, true );
        check_tiled_against_gather<Slots>( odd, 0.41, 3, false );
        check_tiled_against_gather<Slots>( LatticeShape( 2, 1, 3, b ), crowded, 4, false );
        check_tiled_against_gather<Slots>( LatticeShape( 1, 2, 1, b ), crowded, 4, false );
    }
}

TEST( TEST_CATEGORY, lattice_tiled_split_passes_equal_the_gather_bit_for_bit )
{
    check_tiled_cases<2>();
    check_tiled_cases<4>();
    check_tiled_cases<8>();
}

} // namespace morula_test_lattice
