#include <morula/core/Error.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <gtest/gtest.h>

namespace morula_test_lattice_layout
{
using namespace morula::lattice;

template <int Slots>
void check_layout( int bits, std::uint32_t max_code )
{
    using L = SiteLayout<Slots>;
    EXPECT_EQ( L::bits_per_slot, bits );
    EXPECT_EQ( L::max_code, max_code );
    // Fill every slot with a different code, the largest in the last: all readable, type intact.
    site_word w = L::empty_site( 13 );
    for ( int k = 0; k < Slots; ++k )
    {
        EXPECT_EQ( L::count( w ), k );
        w = L::with_code( w, k, k == Slots - 1 ? max_code : std::uint32_t( 1 + k % max_code ) );
    }
    EXPECT_EQ( L::count( w ), Slots );
    EXPECT_EQ( L::type( w ), 13u );
    EXPECT_FALSE( L::empty( w ) );
    for ( int k = 0; k < Slots - 1; ++k )
        EXPECT_EQ( L::code( w, k ), std::uint32_t( 1 + k % max_code ) );
    EXPECT_EQ( L::code( w, Slots - 1 ), max_code );
    EXPECT_TRUE( L::empty( L::empty_site( 15 ) ) );
    EXPECT_EQ( L::type( L::empty_site( 15 ) ), 15u );
    // The paper's figure 1: type in bits 28-31, slot 0 in the lowest bits.
    EXPECT_EQ( L::with_code( 0, 0, 1 ), 1u );
    EXPECT_EQ( L::empty_site( 1 ), 1u << 28 );
    EXPECT_EQ( L::with_code( 0, 1, 1 ), 1u << bits );
}

TEST( TEST_CATEGORY, lattice_site_layout_matches_the_paper )
{
    check_layout<2>( 14, 16383 );
    check_layout<4>( 7, 127 );
    check_layout<8>( 3, 7 );
}

// Seed 002's free-diffusion runs: 2 nm spacing, 10 ns steps, D from 200 down to 0.01 nm^2/us give
// p = 0.5 ... 2.5e-5.
TEST( TEST_CATEGORY, lattice_probabilities_for_the_paper_diffusion_coefficients )
{
    const double d[] = { 200, 100, 50, 25, 10, 5, 1, 0.1, 0.01 };
    const double p[] = { 0.5, 0.25, 0.125, 0.0625, 0.025, 0.0125, 2.5e-3, 2.5e-4, 2.5e-5 };
    for ( int i = 0; i < 9; ++i )
    {
        // nm^2/us -> nm^2/ns: 1e-3
        const auto m = probabilities_for_diffusion( d[i] * 1e-3, 2.0, 10.0 );
        EXPECT_NEAR( m.plus, p[i], 1e-15 * p[i] + 1e-18 );
        EXPECT_NEAR( m.minus, p[i], 1e-15 * p[i] + 1e-18 );
        EXPECT_NEAR( m.stay, 1 - 2 * p[i], 1e-15 );
        // 2^-32 resolution: the smallest p is represented to 1e-5 relative.
        EXPECT_NEAR( double( detail::probability_threshold( p[i] ) ) / 4294967296.0, p[i], 1e-5 * p[i] );
    }
    EXPECT_THROW( probabilities_for_diffusion( 0.2001, 2.0, 10.0 ), morula::core::InputError );
    EXPECT_THROW( probabilities_for_diffusion( -1, 2.0, 10.0 ), morula::core::InputError );
}

TEST( TEST_CATEGORY, lattice_rules_reject_bad_probabilities )
{
    DiffusionRules rules( 2 );
    EXPECT_NO_THROW( rules.set( 1, 3, 2, { 0.2, 0.5, 0.3 } ) );
    EXPECT_EQ( rules.get( 1, 3, 2 ).plus, 0.3 );
    EXPECT_EQ( rules.get( 0, 3, 2 ).stay, 1.0 ); // default: immobile
    try
    {
        rules.set( 1, 3, 2, { 0.2, 0.5, 0.4 } );
        FAIL() << "a sum of 1.1 was accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "sum to 1" ), std::string::npos ) << e.what();
        EXPECT_NE( std::string( e.what() ).find( "species 1, site type 3, axis z" ), std::string::npos ) << e.what();
    }
    EXPECT_THROW( rules.set( 0, 0, 0, { -0.1, 1.0, 0.1 } ), morula::core::InputError );
    EXPECT_THROW( rules.set( 2, 0, 0, { 0, 1, 0 } ), morula::core::InputError );  // species out of range
    EXPECT_THROW( rules.set( 0, 16, 0, { 0, 1, 0 } ), morula::core::InputError ); // type out of range
    EXPECT_THROW( rules.block( 16 ), morula::core::InputError );
    EXPECT_THROW( DiffusionRules( 0 ), morula::core::InputError );
    rules.block( 5 );
    EXPECT_TRUE( rules.blocked( 5 ) );
    EXPECT_FALSE( rules.blocked( 4 ) );
}

} // namespace morula_test_lattice_layout
