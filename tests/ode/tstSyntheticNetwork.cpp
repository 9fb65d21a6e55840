#include <morula/core/Error.hpp>
#include <morula/ode/SyntheticNetwork.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace
{
using namespace morula::ode;

bool same( const ReactionNetwork& a, const ReactionNetwork& b )
{
    if ( a.species_names != b.species_names || a.initial_state != b.initial_state ||
         a.reaction_count() != b.reaction_count() )
        return false;
    for ( int r = 0; r < a.reaction_count(); ++r )
    {
        const Reaction& x = a.reactions[r];
        const Reaction& y = b.reactions[r];
        if ( x.rate_constant != y.rate_constant || x.reactants.size() != y.reactants.size() ||
             x.products.size() != y.products.size() )
            return false;
        for ( std::size_t i = 0; i < x.reactants.size(); ++i )
            if ( x.reactants[i].species != y.reactants[i].species ||
                 x.reactants[i].coefficient != y.reactants[i].coefficient )
                return false;
        for ( std::size_t i = 0; i < x.products.size(); ++i )
            if ( x.products[i].species != y.products[i].species ||
                 x.products[i].coefficient != y.products[i].coefficient )
                return false;
    }
    return true;
}

int molecules( const std::vector<StoichiometryTerm>& side )
{
    int n = 0;
    for ( const StoichiometryTerm& t : side )
        n += t.coefficient;
    return n;
}

TEST( OdeSynthetic, SameSeedSameNetworkOtherSeedOtherNetwork )
{
    const ReactionNetwork a = generate_synthetic_network( 64, 256, 42 );
    const ReactionNetwork b = generate_synthetic_network( 64, 256, 42 );
    const ReactionNetwork c = generate_synthetic_network( 64, 256, 43 );
    EXPECT_TRUE( same( a, b ) );
    EXPECT_FALSE( same( a, c ) );
    EXPECT_EQ( a.source, "synthetic(species=64, reactions=256, seed=42)" );
    EXPECT_TRUE( a.settings.sample_times.empty() );
}

TEST( OdeSynthetic, SizesRangesAndOrders )
{
    const int n = 100, m = 20000;
    const ReactionNetwork net = generate_synthetic_network( n, m, 2024 );
    ASSERT_EQ( net.species_count(), n );
    ASSERT_EQ( net.reaction_count(), m );
    EXPECT_EQ( net.species_names.front(), "S0" );
    EXPECT_EQ( net.species_names.back(), "S99" );
    for ( double x : net.initial_state )
    {
        EXPECT_GE( x, 0.0 );
        EXPECT_LT( x, 1.0 );
    }
    int first_order = 0, distinct_pairs = 0;
    int product_counts[3] = { 0, 0, 0 };
    double log_sum = 0.0;
    for ( const Reaction& r : net.reactions )
    {
        const int order = molecules( r.reactants );
        ASSERT_GE( order, 1 );
        ASSERT_LE( order, 2 );
        first_order += order == 1;
        distinct_pairs += r.reactants.size() == 2;
        const int p = molecules( r.products );
        ASSERT_LE( p, 2 );
        ++product_counts[p];
        ASSERT_GE( r.rate_constant, 1e-8 );
        ASSERT_LT( r.rate_constant, 1.0 );
        log_sum += std::log10( r.rate_constant );
    }
    // The documented draws: order 1 with probability 1/2, A + B (B != A) with 1/4, 0/1/2 product molecules
    // with 1/3 each, log10 k uniform in [-8, 0) (mean -4). Bounds are about 5 standard deviations.
    EXPECT_NEAR( first_order / double( m ), 0.5, 0.02 );
    EXPECT_NEAR( distinct_pairs / double( m ), 0.25, 0.02 );
    for ( int count : product_counts )
        EXPECT_NEAR( count / double( m ), 1.0 / 3.0, 0.02 );
    EXPECT_NEAR( log_sum / m, -4.0, 0.1 );
    EXPECT_NO_THROW( validate( net ) );
}

TEST( OdeSynthetic, OneSpeciesAndNoReactions )
{
    const ReactionNetwork one = generate_synthetic_network( 1, 50, 5 );
    for ( const Reaction& r : one.reactions )
        EXPECT_EQ( r.reactants.size(), 1u );
    EXPECT_EQ( generate_synthetic_network( 3, 0, 5 ).reaction_count(), 0 );
    EXPECT_THROW( generate_synthetic_network( 0, 5, 1 ), morula::core::InputError );
    EXPECT_THROW( generate_synthetic_network( 5, -1, 1 ), morula::core::InputError );
}

TEST( OdeSynthetic, FixedValuesForOneSeed )
{
    // std::mt19937_64 and Morula's mappings are fully specified, so these values must hold on every platform;
    // a change here means every published synthetic benchmark changes too.
    const ReactionNetwork net = generate_synthetic_network( 4, 3, 1 );
    const std::uint64_t first = std::mt19937_64( 1 )();
    EXPECT_EQ( net.initial_state[0], static_cast<double>( first >> 11 ) * 0x1.0p-53 );
    EXPECT_EQ( net.initial_state[0], 0x1.122deafddb434p-3 ); // 0.13387664401253263
    // Reactions: 2 S0 -> ; S0 -> S1 + S3 ; 2 S1 -> S0 + S3.
    ASSERT_EQ( net.reaction_count(), 3 );
    EXPECT_EQ( net.reactions[0].reactants.size(), 1u );
    EXPECT_EQ( net.reactions[0].reactants[0].species, 0 );
    EXPECT_EQ( net.reactions[0].reactants[0].coefficient, 2 );
    EXPECT_TRUE( net.reactions[0].products.empty() );
    EXPECT_EQ( net.reactions[0].rate_constant, 0x1.7ba4fd66646c1p-12 ); // 0.00036205720098179619
    EXPECT_EQ( net.reactions[1].products.size(), 2u );
    EXPECT_EQ( net.reactions[2].rate_constant, 0.0098158124561962667 );
}

} // namespace
