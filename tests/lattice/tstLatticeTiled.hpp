// The tiled and compacted passes against the gather passes that define the model (issue #22): pass by
// pass, the same lattice words, the same overflow entries (key, code, move; the list's order is free) and
// the same tracer displacements, bit for bit, on crowded lattices with obstacles, walls and tracers; and
// step() by step().
#include "LatticeTestUtils.hpp"

#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

namespace morula_test_lattice
{

template <int Slots>
using TiledModel = LatticeDiffusion<Slots, TEST_EXECSPACE>;

// The pending overflow entries of a model, sorted (the list is filled by atomics in any order).
template <int Slots>
std::vector<std::tuple<std::uint64_t, std::uint32_t, int>> pending_entries( const TiledModel<Slots>& model )
{
    const std::size_t n = EngineAccess::engine( model ).pending_overflows( TEST_EXECSPACE() );
    auto keys = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), EngineAccess::engine( model ).overflow_keys() );
    auto codes = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), EngineAccess::engine( model ).placed_codes() );
    auto moves = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), EngineAccess::engine( model ).overflow_moves() );
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
// Runs pass `axis` (3: fused) of `model` over its planes in pieces, interior planes first, as a slab of
// a distributed lattice does while its ghost planes travel (detail::SlabDiffusion::pass_planes).
template <int Slots>
void pass_in_pieces( TiledModel<Slots>& model, int axis, int nz )
{
    const int cuts[4] = { 0, std::min( 1, nz ), std::max( std::min( 1, nz ), nz - 1 ), nz };
    EngineAccess::engine( model ).pass_planes( TEST_EXECSPACE(), axis, cuts[1], cuts[2] );
    EngineAccess::engine( model ).pass_planes( TEST_EXECSPACE(), axis, cuts[0], cuts[1] );
    EngineAccess::engine( model ).pass_planes( TEST_EXECSPACE(), axis, cuts[2], cuts[3] );
    EngineAccess::engine( model ).end_pass( axis );
}

template <int Slots>
void check_tiled_against_gather( const LatticeShape& shape, double per_site, int steps, bool obstacles,
                                 PassScheme scheme, PassKernels kernels, bool in_pieces = false,
                                 const detail::TeamShapes& teams = {} )
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
    gather_opt.scheme = scheme;
    gather_opt.kernels = PassKernels::gather;
    DiffusionOptions tiled_opt = gather_opt;
    tiled_opt.kernels = kernels;
    Lattice<Slots, TEST_MEMSPACE> copy( shape );
    Kokkos::deep_copy( copy.sites(), fresh.sites() );
    TiledModel<Slots> gather( TEST_EXECSPACE(), fresh, rules, codes, gather_opt );
    TiledModel<Slots> tiled( TEST_EXECSPACE(), copy, rules, codes, tiled_opt );
    EngineAccess::engine( tiled ).set_team_shapes( teams );
    EXPECT_EQ( gather.split_kernels(), PassKernels::gather );
    // what runs: compacted passes where rows hold whole quads, else the gather (split) or the tiled fused pass
    const bool quads = shape.nx % 4 == 0;
    const PassKernels split_expected =
        kernels == PassKernels::compacted ? ( quads ? PassKernels::compacted : PassKernels::gather ) : kernels;
    ASSERT_EQ( tiled.split_kernels(), split_expected ) << shape.nx;
    const PassKernels fused_expected =
        kernels == PassKernels::compacted ? ( quads ? PassKernels::compacted : PassKernels::tiled ) : kernels;
    ASSERT_EQ( tiled.fused_kernels(), fused_expected ) << shape.nx;
    std::size_t entries = 0;
    for ( int s = 0; s < steps; ++s )
    {
        const int passes = scheme == PassScheme::split ? 3 : 1;
        for ( int axis = 0; axis < passes; ++axis )
        {
            if ( scheme == PassScheme::split )
            {
                gather.split_pass( TEST_EXECSPACE(), axis );
                if ( in_pieces )
                    pass_in_pieces<Slots>( tiled, axis, shape.nz );
                else
                    tiled.split_pass( TEST_EXECSPACE(), axis );
            }
            else
            {
                gather.fused_pass( TEST_EXECSPACE() );
                if ( in_pieces )
                    pass_in_pieces<Slots>( tiled, 3, shape.nz );
                else
                    tiled.fused_pass( TEST_EXECSPACE() );
            }
            ASSERT_EQ( to_host( gather.lattice() ), to_host( tiled.lattice() ) )
                << to_string( scheme ) << ", Slots " << Slots << ", step " << s << ", axis " << axis;
            const auto eg = pending_entries<Slots>( gather );
            ASSERT_EQ( eg, pending_entries<Slots>( tiled ) ) << to_string( scheme ) << ", Slots " << Slots << ", step " << s << ", axis " << axis;
            entries += eg.size();
            ASSERT_EQ( host_displacements<Slots>( gather ), host_displacements<Slots>( tiled ) )
                << to_string( scheme ) << ", Slots " << Slots << ", step " << s << ", axis " << axis;
            gather.place_overflow( TEST_EXECSPACE() );
            tiled.place_overflow( TEST_EXECSPACE() );
            ASSERT_EQ( to_host( gather.lattice() ), to_host( tiled.lattice() ) );
            ASSERT_EQ( host_displacements<Slots>( gather ), host_displacements<Slots>( tiled ) );
        }
        gather.complete_step();
        tiled.complete_step();
    }
    if ( per_site >= 0.5 * Slots && shape.sites() > 64 )
        EXPECT_GT( entries, 0u ) << to_string( scheme ) << ", Slots " << Slots << ", " << shape.nx << "x" << shape.ny << "x" << shape.nz
                             << ": the crowded case did not overflow";
    EXPECT_EQ( gather.code_counts( TEST_EXECSPACE() ), tiled.code_counts( TEST_EXECSPACE() ) );

    // step(): the same lattice, displacements and overflow count after every step.
    for ( int s = 0; s < steps; ++s )
    {
        gather.step( TEST_EXECSPACE() );
        tiled.step( TEST_EXECSPACE() );
        ASSERT_EQ( to_host( gather.lattice() ), to_host( tiled.lattice() ) ) << to_string( scheme ) << ", Slots " << Slots << ", step() " << s;
        ASSERT_EQ( host_displacements<Slots>( gather ), host_displacements<Slots>( tiled ) )
            << to_string( scheme ) << ", Slots " << Slots << ", step() " << s;
        ASSERT_EQ( gather.overflows(), tiled.overflows() ) << to_string( scheme ) << ", Slots " << Slots << ", step() " << s;
    }
    EXPECT_EQ( EngineAccess::engine( tiled ).unplaced(), 0u );
}

template <int Slots>
void check_tiled_cases( PassScheme scheme, PassKernels kernels )
{
    // Row segments and boxes longer than a GPU tile (300 > 256 > 32), runs and boxes with a remainder
    // (11, 13 = 8 + 3, 8 + 5), axes of extent 1 and 2 (a site is its own periodic neighbour, or both
    // neighbours are one site). The compacted kernels need rows of whole quads: the odd shapes get nx
    // rounded up to a multiple of 4 (12, 4, 4: one quad is a whole periodic row, its apron words its
    // own), and once as they are (the gather then runs).
    const double crowded = 0.65 * Slots; // 65% of the slots: overflows in every pass
    const bool quads = kernels == PassKernels::compacted;
    for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
    {
        LatticeShape big( 300, 5, 11, b );
        check_tiled_against_gather<Slots>( big, 0.41, 2, true, scheme, kernels );
        check_tiled_against_gather<Slots>( big, crowded, 2, true, scheme, kernels );
        LatticeShape odd( quads ? 12 : 13, 9, 17, b );
        odd.boundary[1] = b == LatticeBoundary::periodic ? LatticeBoundary::reflecting : LatticeBoundary::periodic;
        check_tiled_against_gather<Slots>( odd, crowded, 3, true, scheme, kernels );
        check_tiled_against_gather<Slots>( odd, 0.41, 3, false, scheme, kernels );
        check_tiled_against_gather<Slots>( LatticeShape( quads ? 4 : 2, 1, 3, b ), crowded, 4, false, scheme, kernels );
        check_tiled_against_gather<Slots>( LatticeShape( quads ? 4 : 1, 2, 1, b ), crowded, 4, false, scheme, kernels );
        if ( quads )
            check_tiled_against_gather<Slots>( LatticeShape( 13, 9, 17, b ), crowded, 2, true, scheme, kernels );
    }
}

TEST( TEST_CATEGORY, lattice_tiled_split_passes_equal_the_gather_bit_for_bit )
{
    check_tiled_cases<2>( PassScheme::split, PassKernels::tiled );
    check_tiled_cases<4>( PassScheme::split, PassKernels::tiled );
    check_tiled_cases<8>( PassScheme::split, PassKernels::tiled );
}

TEST( TEST_CATEGORY, lattice_compacted_split_passes_equal_the_gather_bit_for_bit )
{
    check_tiled_cases<2>( PassScheme::split, PassKernels::compacted );
    check_tiled_cases<4>( PassScheme::split, PassKernels::compacted );
    check_tiled_cases<8>( PassScheme::split, PassKernels::compacted );
}

/*
  Teams of 1, 3 and 7 quads per work item (on a GPU 256 work items: team edges in the middle of rows) and
  team overflow buffers of 0, 1 and 2 entries (every crowded team's buffer full, the rest pushed
  directly to the list), for the compacted split passes, in one launch and over plane ranges. (With the
  default shapes the crowded 2- and 4-slot cases above gather their entries per team, the others do not.)
*/
TEST( TEST_CATEGORY, lattice_compacted_passes_with_small_teams_and_buffers_equal_the_gather_bit_for_bit )
{
    const detail::TeamShapes small[] = { { 1, 0 }, { 3, 1 }, { 7, 2 } };
    for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
        for ( const auto& t : small )
        {
            LatticeShape shape( 12, 9, 17, b );
            shape.boundary[1] = b == LatticeBoundary::periodic ? LatticeBoundary::reflecting : LatticeBoundary::periodic;
            check_tiled_against_gather<2>( shape, 0.65 * 2, 2, true, PassScheme::split, PassKernels::compacted, false, t );
            check_tiled_against_gather<4>( shape, 0.9 * 4, 2, true, PassScheme::split, PassKernels::compacted, false, t );
            check_tiled_against_gather<8>( shape, 0.65 * 8, 2, false, PassScheme::split, PassKernels::compacted, false, t );
            check_tiled_against_gather<2>( LatticeShape( 8, 4, 6, b ), 0.65 * 2, 2, true, PassScheme::split,
                                           PassKernels::compacted, true, t );
        }
}

TEST( TEST_CATEGORY, lattice_tiled_fused_pass_equals_the_gather_bit_for_bit )
{
    check_tiled_cases<2>( PassScheme::fused, PassKernels::tiled );
    check_tiled_cases<4>( PassScheme::fused, PassKernels::tiled );
    check_tiled_cases<8>( PassScheme::fused, PassKernels::tiled );
}

/*
  The compacted fused pass: the shapes above (crowded, and 0.41 particles per site, where most
  destinations are marked), sparse lattices where most sites are neither a particle's site nor the end
  of a move (0.003 and 0.02 particles per site: a destination is marked with probability of about 0.6%
  and 4%), queues of 1, 3 and 7 places per work item (the marks of a team taken in several rounds), 1, 2
  and 3 chunks of marks per work item, 1, 2 and 4 source quads per work item of the marks (the last work
  items with fewer), and the pass over plane ranges as a slab runs it.
*/
TEST( TEST_CATEGORY, lattice_compacted_fused_pass_equals_the_gather_bit_for_bit )
{
    check_tiled_cases<2>( PassScheme::fused, PassKernels::compacted );
    check_tiled_cases<4>( PassScheme::fused, PassKernels::compacted );
    check_tiled_cases<8>( PassScheme::fused, PassKernels::compacted );
    const detail::TeamShapes teams[] = { {}, { 1, 0, 2, 1 }, { 3, 0, 4, 2 }, { 7, 0, 1, 3 } };
    for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
        for ( const auto& t : teams )
            for ( double per_site : { 0.003, 0.02 } )
            {
                LatticeShape shape( 68, 13, 10, b ); // 2210 quads: 4 per work item leave a remainder
                shape.boundary[2] = b == LatticeBoundary::periodic ? LatticeBoundary::reflecting : LatticeBoundary::periodic;
                check_tiled_against_gather<2>( shape, per_site, 3, true, PassScheme::fused, PassKernels::compacted, false, t );
                check_tiled_against_gather<8>( shape, per_site, 2, false, PassScheme::fused, PassKernels::compacted, false, t );
                check_tiled_against_gather<4>( LatticeShape( 16, 8, 7, b ), per_site, 2, true, PassScheme::fused,
                                               PassKernels::compacted, true, t );
            }
}

// Coordinates of indices [0, count) by `fast` (columns 0-2) and `wide` (columns 3-5), on the device. (Not
// in the test's body: nvcc refuses device lambdas in a gtest TestBody, a private member function.)
inline Kokkos::View<int* [6], TEST_MEMSPACE> coordinates_on_device( const detail::RowMajorIndex& fast,
                                                                     const detail::RowMajorIndex& wide, std::size_t count )
{
    Kokkos::View<int* [6], TEST_MEMSPACE> got( "coordinates", count );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, int( count ) ), KOKKOS_LAMBDA( const int i ) {
            fast.coordinates( std::size_t( i ), got( i, 0 ), got( i, 1 ), got( i, 2 ) );
            wide.coordinates( std::size_t( i ), got( i, 3 ), got( i, 4 ), got( i, 5 ) );
        } );
    return got;
}

// The compacted kernels' coordinates of a flat index (FastDivisor while indices fit 32 bits) against the
// 64-bit division they replace, at row and plane edges, for site and quad indices and rows of one site.
TEST( TEST_CATEGORY, lattice_row_major_index_decomposes_like_the_division )
{
    const std::pair<int, int> shapes[] = { { 12, 9 }, { 4, 1 }, { 1, 7 }, { 256, 256 }, { 1000, 3 } };
    for ( const auto& shape : shapes )
    {
        const std::size_t count = std::size_t( shape.first ) * std::size_t( shape.second ) * 13;
        const auto fast = detail::RowMajorIndex::of( shape.first, shape.second, count );
        auto wide = fast;
        wide.fits_32_bits = false;
        ASSERT_TRUE( fast.fits_32_bits );
        const auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), coordinates_on_device( fast, wide, count ) );
        for ( std::size_t i = 0; i < count; ++i )
        {
            const int x = int( i % std::size_t( shape.first ) );
            const int y = int( ( i / std::size_t( shape.first ) ) % std::size_t( shape.second ) );
            const int z = int( i / ( std::size_t( shape.first ) * std::size_t( shape.second ) ) );
            ASSERT_EQ( h( i, 0 ), x ) << i;
            ASSERT_EQ( h( i, 1 ), y ) << i;
            ASSERT_EQ( h( i, 2 ), z ) << i;
            ASSERT_EQ( h( i, 3 ), x ) << i;
            ASSERT_EQ( h( i, 4 ), y ) << i;
            ASSERT_EQ( h( i, 5 ), z ) << i;
        }
    }
    EXPECT_FALSE( detail::RowMajorIndex::of( 4096, 4096, std::size_t( 4096 ) * 4096 * 257 ).fits_32_bits );
}

// The automatic fused pass: compacted on sparse lattices with rows of whole quads, tiled when crowded or
// when the rows do not hold whole quads.
TEST( TEST_CATEGORY, lattice_automatic_fused_pass_follows_the_density )
{
    for ( double per_site : { 0.003, 0.5 } )
        for ( int nx : { 32, 30 } )
        {
            const LatticeShape shape( nx, 16, 16 );
            Lattice<2, TEST_MEMSPACE> lattice( shape );
            DiffusionRules rules( 1 );
            rules.set_isotropic( 0, 0.2 );
            place_particles( lattice, { std::size_t( per_site * double( shape.sites() ) ) }, rules, 7, ParticleCodes::species );
            DiffusionOptions opt;
            opt.scheme = PassScheme::fused;
            TiledModel<2> model( TEST_EXECSPACE(), lattice, rules, opt );
            const bool compacted = per_site < detail::SlabDiffusion<2, TEST_EXECSPACE>::compacted_fused_max_density && nx % 4 == 0;
            EXPECT_EQ( model.fused_kernels(), compacted ? PassKernels::compacted : PassKernels::tiled ) << per_site << " " << nx;
        }
}

/*
  A pass run over its planes in pieces (interior first, then the first and the last plane) equals the
  pass in one launch, with the kernels that slabs use (compacted passes, the gather): what a
  distributed slab relies on to overlap its ghost planes' exchange.
*/
TEST( TEST_CATEGORY, lattice_passes_over_plane_ranges_equal_one_launch )
{
    for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
    {
        const LatticeShape shape( 12, 9, 7, b );
        check_tiled_against_gather<2>( shape, 0.65 * 2, 2, true, PassScheme::split, PassKernels::compacted, true );
        check_tiled_against_gather<4>( shape, 0.41, 2, true, PassScheme::split, PassKernels::gather, true );
        check_tiled_against_gather<8>( shape, 0.65 * 8, 2, true, PassScheme::split, PassKernels::compacted, true );
        check_tiled_against_gather<2>( shape, 0.65 * 2, 2, true, PassScheme::fused, PassKernels::gather, true );
        check_tiled_against_gather<2>( shape, 0.65 * 2, 2, true, PassScheme::fused, PassKernels::compacted, true );
        check_tiled_against_gather<4>( LatticeShape( 8, 4, 2, b ), 0.65 * 4, 2, false, PassScheme::split,
                                       PassKernels::compacted, true );
    }
    // Planes outside the owned range, and the tiled kernels (whole lattices only), are refused.
    Lattice<2, TEST_MEMSPACE> lattice( LatticeShape( 8, 8, 8 ) );
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.2 );
    DiffusionOptions tiled_opt;
    tiled_opt.kernels = PassKernels::tiled;
    TiledModel<2> tiled( TEST_EXECSPACE(), lattice, rules, tiled_opt );
    EXPECT_THROW( EngineAccess::engine( tiled ).pass_planes( TEST_EXECSPACE(), 0, 0, 4 ), morula::core::InputError );
    EXPECT_THROW( EngineAccess::engine( tiled ).pass_planes( TEST_EXECSPACE(), 0, 0, 9 ), morula::core::InputError );
    EXPECT_THROW( EngineAccess::engine( tiled ).pass_planes( TEST_EXECSPACE(), 4, 0, 8 ), morula::core::InputError );
}

// The code histogram (team-scratch bins, then one atomic per bin and team) against a count on the host,
// with species codes below and tracer codes above the scratch bins (2 slots: 16383 codes).
TEST( TEST_CATEGORY, lattice_code_counts_match_a_host_count )
{
    using L = SiteLayout<2>;
    const LatticeShape shape( 64, 40, 30 );
    DiffusionRules rules( 3 );
    Lattice<2, TEST_MEMSPACE> lattice( shape );
    const std::size_t tracers = 2000; // codes 4 .. 2003: past the 256 scratch bins
    place_particles( lattice, { 30000, 20000, 25000 }, rules, 3, ParticleCodes::species );
    auto w = to_host( lattice );
    std::vector<unsigned long long> expected( 4 + tracers, 0 );
    std::size_t next = 0;
    for ( auto& word : w )
        for ( int k = 0; k < 2; ++k )
        {
            const std::uint32_t c = L::code( word, k );
            if ( c == 0 )
                break;
            if ( c == 1 && next < tracers && k == 0 ) // a species-0 particle becomes tracer 4 + next
            {
                word = ( word & ~( L::slot_mask << 0 ) ) | std::uint32_t( 4 + next++ );
                ++expected[word & L::slot_mask];
            }
            else
                ++expected[c];
        }
    ASSERT_EQ( next, tracers );
    from_host( lattice, w );
    const CodeMap codes = CodeMap::marked( 3, std::vector<int>( tracers, 0 ) );
    TiledModel<2> model( TEST_EXECSPACE(), lattice, rules, codes, DiffusionOptions{} );
    EXPECT_EQ( model.split_kernels(), PassKernels::compacted ); // the default on rows of whole quads
    EXPECT_EQ( model.fused_kernels(), PassKernels::tiled );
    EXPECT_EQ( model.code_counts( TEST_EXECSPACE() ), expected );
    EXPECT_EQ( model.particles(), 75000u );
}

} // namespace morula_test_lattice
