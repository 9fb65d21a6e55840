// The lattice when sites fill: tracers must diffuse isotropically, without drift and never faster than
// free particles at any occupancy (0.01 particles per site up to 60% of the slots), with 2, 4 and 8
// slots, split and fused passes, periodic and reflecting faces; overflowed particles must be sent back
// and relocated with no preferred direction; marked tracers in a crowd of particles without ids.
//
// Before the overflow placement was made symmetric, its first choice was always the site below
// (0, 0, -1): crowded tracers drifted along -z (MSD_z twice MSD_x at 0.19 particles per site with 2
// slots). The drift and isotropy checks below fail on that code, and on placements processed always in
// ascending site order (earlier entries take the free slots below later ones: a drift along +x, +y, +z
// at 80% of the slots).
#include "LatticeTestUtils.hpp"

#include <morula/core/Error.hpp>
#include <morula/lattice/DisplacementIncrements.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

namespace morula_test_lattice_crowding
{
using namespace morula::lattice;
using morula_test_lattice::EngineAccess;
using morula_test_lattice::expect_unwrapped;
using morula_test_lattice::to_host;
using morula_test_lattice::tracer_positions;

constexpr double z_limit = 4.5; // standard errors: a false alarm about once in 10^5 checks

struct CrowdCase
{
    double occupancy;   // particles per site
    LatticeBoundary boundary;
    PassScheme scheme;
    int extent;         // sites per axis
    int windows;        // windows per replica
    int window_steps;
    int replicas = 1;   // independent lattices (seeds), for capacities with few tracer codes
};

// Moves with p = 0.25 each way on every axis: a free particle's increment over w steps has mean 0 and
// mean square 0.5 w per axis.
constexpr double q = 0.25;

template <int Slots>
void check_crowded_tracers( const CrowdCase& c )
{
    using layout = SiteLayout<Slots>;
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, q );
    const LatticeShape shape( c.extent, c.extent, c.extent, c.boundary );
    const std::size_t particles = std::size_t( std::llround( c.occupancy * double( shape.sites() ) ) );
    const std::size_t tracers = std::min<std::size_t>( particles, layout::max_code - 1 );
    DisplacementIncrements inc( CodeMap::marked( 1, std::vector<int>( tracers, 0 ) ) );
    unsigned long long overflows = 0;
    for ( int r = 0; r < c.replicas; ++r )
    {
        Lattice<Slots, TEST_MEMSPACE> lattice( shape );
        const CodeMap codes = place_particles( lattice, { particles }, { tracers }, rules, 100 + r );
        DiffusionOptions opt;
        opt.scheme = c.scheme;
        opt.seed = 7 + r;
        LatticeDiffusion<Slots, TEST_EXECSPACE> model( TEST_EXECSPACE(), lattice, rules, codes, opt );
        const auto before_counts = model.code_counts( TEST_EXECSPACE() );
        inc.restart();
        inc.sample( model.displacements() );
        for ( int w = 0; w < c.windows; ++w )
        {
            model.advance( TEST_EXECSPACE(), c.window_steps );
            inc.sample( model.displacements() );
        }
        ASSERT_EQ( model.code_counts( TEST_EXECSPACE() ), before_counts ); // nobody lost, nobody duplicated
        overflows += model.overflows();
    }
    const double free_axis = 2 * q * c.window_steps;
    const auto total = inc.total();
    std::printf( "%d slots, %.2f per site, %s, %s: %zu samples, %llu overflows; D/D0 = %.4f +- %.4f; "
                 "MSD per axis / free %.4f %.4f %.4f; drift per window %.3f %.3f %.3f\n",
                 Slots, c.occupancy, to_string( c.boundary ), to_string( c.scheme ), inc.samples(), overflows,
                 total.msd / ( 3 * free_axis ), total.se_msd / ( 3 * free_axis ), inc.axis( 0 ).msd / free_axis,
                 inc.axis( 1 ).msd / free_axis, inc.axis( 2 ).msd / free_axis, inc.axis( 0 ).mean, inc.axis( 1 ).mean,
                 inc.axis( 2 ).mean );
    for ( int a = 0; a < 3; ++a )
    {
        const auto x = inc.axis( a );
        EXPECT_LT( std::abs( x.mean ), z_limit * x.se_mean ) << "drift along " << "xyz"[a];
        for ( int b = a + 1; b < 3; ++b )
        {
            const auto y = inc.axis( b );
            EXPECT_LT( std::abs( x.msd - y.msd ), z_limit * std::hypot( x.se_msd, y.se_msd ) )
                << "MSD along " << "xyz"[a] << " and " << "xyz"[b];
        }
    }
    // Exclusion can only slow a tracer down.
    EXPECT_LT( total.msd, 3 * free_axis + z_limit * total.se_msd ) << "faster than free diffusion";
    if ( c.occupancy <= 0.011 ) // nearly free: the rare rejections cost less than 1%
        EXPECT_GT( total.msd, 0.99 * 3 * free_axis - z_limit * total.se_msd );
    if ( c.occupancy >= 0.4 * Slots ) // the crowded cases must actually crowd
        EXPECT_GT( overflows, 100u );
}

// The case first: 2 slots at 0.19 per site (ten times the paper's recommended maximum), where
// MSD_z was twice MSD_x.
TEST( TEST_CATEGORY, lattice_crowded_tracers_two_slots )
{
    check_crowded_tracers<2>( { 0.19, LatticeBoundary::periodic, PassScheme::split, 20, 20, 20 } );
    check_crowded_tracers<2>( { 0.01, LatticeBoundary::periodic, PassScheme::split, 32, 20, 20 } );
    check_crowded_tracers<2>( { 0.41, LatticeBoundary::periodic, PassScheme::split, 20, 15, 20 } );
    check_crowded_tracers<2>( { 1.2, LatticeBoundary::periodic, PassScheme::split, 20, 15, 20 } );
    check_crowded_tracers<2>( { 1.2, LatticeBoundary::reflecting, PassScheme::split, 20, 15, 20 } );
    // 80% of the slots: placements processed always in ascending order drifted along +x, +y, +z here
    check_crowded_tracers<2>( { 1.6, LatticeBoundary::periodic, PassScheme::split, 20, 15, 20 } );
    check_crowded_tracers<2>( { 1.6, LatticeBoundary::periodic, PassScheme::fused, 16, 15, 20 } );
    check_crowded_tracers<2>( { 0.41, LatticeBoundary::periodic, PassScheme::fused, 16, 10, 20 } );
    check_crowded_tracers<2>( { 1.2, LatticeBoundary::reflecting, PassScheme::fused, 16, 10, 20 } );
}

TEST( TEST_CATEGORY, lattice_crowded_tracers_four_slots )
{
    check_crowded_tracers<4>( { 0.01, LatticeBoundary::periodic, PassScheme::split, 24, 40, 20 } );
    check_crowded_tracers<4>( { 0.41, LatticeBoundary::periodic, PassScheme::split, 16, 50, 20 } );
    check_crowded_tracers<4>( { 2.4, LatticeBoundary::periodic, PassScheme::split, 16, 50, 20 } );
    check_crowded_tracers<4>( { 2.4, LatticeBoundary::reflecting, PassScheme::split, 16, 50, 20 } );
    check_crowded_tracers<4>( { 2.4, LatticeBoundary::periodic, PassScheme::fused, 12, 40, 20 } );
}

// 8 slots tell only 7 codes apart: one for the crowd, six tracers, followed over many windows and
// two independent lattices.
TEST( TEST_CATEGORY, lattice_crowded_tracers_eight_slots )
{
    check_crowded_tracers<8>( { 0.41, LatticeBoundary::periodic, PassScheme::split, 10, 100, 20, 2 } );
    check_crowded_tracers<8>( { 4.8, LatticeBoundary::periodic, PassScheme::split, 10, 100, 20, 2 } );
    check_crowded_tracers<8>( { 4.8, LatticeBoundary::reflecting, PassScheme::split, 10, 100, 20, 2 } );
    check_crowded_tracers<8>( { 4.8, LatticeBoundary::periodic, PassScheme::fused, 8, 60, 20, 2 } );
}

// Where overflowed particles land. Every entry's rejected move (the move that brought it to the full
// site) and its placement (offset from the site it came from, minimum image) are recorded over many
// passes of a crowded lattice. Moves must be rejected equally in each direction, most particles must
// go back to their origin, and relocations must have no preferred direction or axis.
template <int Slots>
void check_placements_are_symmetric( PassScheme scheme )
{
    const LatticeShape shape( 12, 12, 12 );
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, q );
    Lattice<Slots, TEST_MEMSPACE> lattice( shape );
    place_particles( lattice, { shape.sites() * Slots * 6 / 10 }, rules, 3, ParticleCodes::species );
    DiffusionOptions opt;
    opt.scheme = scheme;
    opt.seed = 11;
    LatticeDiffusion<Slots, TEST_EXECSPACE> model( TEST_EXECSPACE(), lattice, rules, opt );
    EngineAccess::engine( model ).record_placements();
    const int n[3] = { shape.nx, shape.ny, shape.nz };
    // per axis: rejected moves +1 / -1; relocations with offset > 0 / < 0; net displacement sums
    std::array<std::array<double, 2>, 3> rejected{}, relocated{};
    std::array<double, 3> net{}, net2{};
    double entries = 0, returned = 0;
    auto record = [&]( std::size_t count ) {
        auto keys = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), EngineAccess::engine( model ).overflow_keys() );
        auto moves = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), EngineAccess::engine( model ).overflow_moves() );
        auto placed = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), EngineAccess::engine( model ).placed_sites() );
        for ( std::size_t i = 0; i < count; ++i )
        {
            const std::uint64_t origin = detail::move_origin( keys( i ) >> 8, moves( i ), n[0], n[1], n[2] );
            const std::uint64_t o[3] = { origin % 12, ( origin / 12 ) % 12, origin / 144 };
            const std::uint64_t p[3] = { placed( i ) % 12, ( placed( i ) / 12 ) % 12, placed( i ) / 144 };
            bool home = true;
            ++entries;
            for ( int a = 0; a < 3; ++a )
            {
                const int m = detail::move_component( moves( i ), a );
                if ( m )
                    rejected[a][m > 0 ? 0 : 1] += 1;
                int off = int( p[a] ) - int( o[a] );
                off = 2 * off > n[a] ? off - n[a] : ( 2 * off < -n[a] ? off + n[a] : off );
                if ( off )
                {
                    relocated[a][off > 0 ? 0 : 1] += 1;
                    home = false;
                }
                // what the overflow did to the particle: from the full site to where it landed
                net[a] += off - m;
                net2[a] += double( off - m ) * double( off - m );
            }
            returned += home;
        }
    };
    for ( int step = 0; step < 40; ++step )
    {
        if ( scheme == PassScheme::split )
            for ( int axis = 0; axis < 3; ++axis )
            {
                model.split_pass( TEST_EXECSPACE(), axis );
                const std::size_t count = EngineAccess::engine( model ).pending_overflows( TEST_EXECSPACE() );
                model.place_overflow( TEST_EXECSPACE() );
                record( count );
            }
        else
        {
            model.fused_pass( TEST_EXECSPACE() );
            const std::size_t count = EngineAccess::engine( model ).pending_overflows( TEST_EXECSPACE() );
            model.place_overflow( TEST_EXECSPACE() );
            record( count );
        }
        model.complete_step();
    }
    std::printf( "%d slots %s: %.0f entries, %.0f back at their origin; rejected +/- x %.0f/%.0f y %.0f/%.0f z %.0f/%.0f; "
                 "relocated +/- x %.0f/%.0f y %.0f/%.0f z %.0f/%.0f\n",
                 Slots, to_string( scheme ), entries, returned, rejected[0][0], rejected[0][1], rejected[1][0],
                 rejected[1][1], rejected[2][0], rejected[2][1], relocated[0][0], relocated[0][1], relocated[1][0],
                 relocated[1][1], relocated[2][0], relocated[2][1] );
    ASSERT_GT( entries, 2000 );
    EXPECT_GT( returned, 0.5 * entries ); // a rejected move mostly just does not happen
    // Two counts that should be equal: their difference within z_limit sigma of a symmetric binomial.
    auto equal_counts = [&]( double a, double b, const char* what, int axis ) {
        EXPECT_LT( std::abs( a - b ), z_limit * std::sqrt( a + b ) + 1 ) << what << " along " << "xyz"[axis];
    };
    for ( int a = 0; a < 3; ++a )
    {
        equal_counts( rejected[a][0], rejected[a][1], "rejected moves up/down", a );
        equal_counts( relocated[a][0], relocated[a][1], "relocations up/down", a );
        const double mean = net[a] / entries;
        const double se = std::sqrt( ( net2[a] / entries - mean * mean ) / entries );
        EXPECT_LT( std::abs( mean ), z_limit * se ) << "net displacement by overflows along " << "xyz"[a];
        for ( int b = a + 1; b < 3; ++b )
        {
            equal_counts( rejected[a][0] + rejected[a][1], rejected[b][0] + rejected[b][1], "rejections per axis", b );
            equal_counts( relocated[a][0] + relocated[a][1], relocated[b][0] + relocated[b][1], "relocations per axis", b );
        }
    }
}

TEST( TEST_CATEGORY, lattice_overflow_placements_are_symmetric )
{
    check_placements_are_symmetric<2>( PassScheme::split );
    check_placements_are_symmetric<2>( PassScheme::fused );
    check_placements_are_symmetric<4>( PassScheme::split );
    check_placements_are_symmetric<8>( PassScheme::fused );
}

// Marked tracers in a crowd: particles without ids crowd, the tracers are followed (positions =
// start + displacement, modulo the periodic extent), species counts are conserved, and the MSD counts
// the tracers only.
TEST( TEST_CATEGORY, lattice_marked_tracers_in_a_crowd )
{
    LatticeShape shape( 10, 9, 8 );
    shape.boundary[1] = LatticeBoundary::reflecting;
    DiffusionRules rules( 2 );
    rules.set_isotropic( 0, 0.3 );
    rules.set( 1, 0, { 0.1, 0.5, 0.4 } );
    rules.set( 1, 1, { 0.2, 0.6, 0.2 } );
    rules.set( 1, 2, { 0.25, 0.5, 0.25 } );
    Lattice<4, TEST_MEMSPACE> lattice( shape );
    const CodeMap codes = place_particles( lattice, { 1000, 800 }, { 40, 30 }, rules, 5 );
    ASSERT_EQ( codes.species_codes, 2 );
    ASSERT_EQ( codes.species_of_tracer.size(), 70u );
    EXPECT_EQ( codes.first_tracer_code(), 3u );
    const auto p0 = tracer_positions<4>( to_host( lattice ), shape, codes.first_tracer_code(), codes.max_code() );
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
    {
        Lattice<4, TEST_MEMSPACE> copy( shape );
        Kokkos::deep_copy( copy.sites(), lattice.sites() );
        DiffusionOptions opt;
        opt.scheme = scheme;
        LatticeDiffusion<4, TEST_EXECSPACE> model( TEST_EXECSPACE(), copy, rules, codes, opt );
        const auto counts0 = model.code_counts( TEST_EXECSPACE() );
        EXPECT_EQ( counts0[1], 960u );
        EXPECT_EQ( counts0[2], 770u );
        model.advance( TEST_EXECSPACE(), 30 );
        EXPECT_GT( model.overflows(), 0u );
        EXPECT_EQ( model.code_counts( TEST_EXECSPACE() ), counts0 );
        const auto p1 =
            tracer_positions<4>( to_host( model.lattice() ), shape, codes.first_tracer_code(), codes.max_code() );
        auto d = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), model.displacements() );
        expect_unwrapped( p0, d, p1, shape, codes.first_tracer_code(), codes.max_code() );
        for ( std::uint32_t c = 1; c < codes.first_tracer_code(); ++c ) // species codes are not followed
            for ( int a = 0; a < 3; ++a )
                EXPECT_EQ( d( c, a ), 0 );
        EXPECT_EQ( model.msd( 0 ).tracers, 40u );
        EXPECT_EQ( model.msd( 1 ).tracers, 30u );
    }
    // Bad requests are refused with what was wrong.
    Lattice<8, TEST_MEMSPACE> small( LatticeShape( 4, 4, 4 ) );
    EXPECT_THROW( place_particles( small, { 10, 10 }, { 3, 3 }, rules, 1 ), morula::core::InputError ); // 2 + 6 > 7
    EXPECT_THROW( place_particles( small, { 10, 10 }, { 11, 0 }, rules, 1 ), morula::core::InputError );
    Lattice<4, TEST_MEMSPACE> twice( LatticeShape( 4, 4, 4 ) );
    morula_test_lattice::from_host( twice, std::vector<site_word>( 64, SiteLayout<4>::with_code( 0, 0, 3 ) ) );
    EXPECT_THROW( ( LatticeDiffusion<4, TEST_EXECSPACE>( TEST_EXECSPACE(), twice, rules, CodeMap::marked( 2, { 0 } ),
                                                         DiffusionOptions{} ) ),
                  morula::core::InputError ); // tracer code 3 on 64 particles
}

} // namespace morula_test_lattice_crowding
