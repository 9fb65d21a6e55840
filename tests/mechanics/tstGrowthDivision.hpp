#include "MechanicsTestUtils.hpp"

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/Initializers.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace morula_test_mechanics
{
using morula::core::Boundary;
using morula::core::Box;
using morula::mechanics::AgentProperties;
using morula::mechanics::GrowthDivision;
using morula::mechanics::GrowthParameters;
using morula::mechanics::MechanicsParameters;
using morula::mechanics::SphereAgents;
using morula::mechanics::SphereMechanics;

constexpr double pi = 3.14159265358979323846;

double volume_of( double d ) { return pi / 6 * d * d * d; }

// Every agent above the division diameter divides once: the number doubles, volume and centre of
// mass are kept exactly (to rounding), daughters get fresh consecutive ids, and the capacity grows
// without losing any agent. The others grow by growth_rate x time_step in volume.
TEST( TEST_CATEGORY, growth_division_conserves_volume_and_mass_centre )
{
    AgentProperties<double> props;
    props.diameter = 31; // > 30.05: divides
    auto agents = morula::mechanics::lattice_agents<double, TEST_MEMSPACE>( TEST_EXECSPACE(), 5, 20.0, props );
    // Make every third agent small, so that it grows instead.
    {
        auto d = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), agents.diameters() );
        for ( std::size_t i = 0; i < agents.size(); i += 3 )
            d( i ) = 20;
        Kokkos::deep_copy( agents.diameters(), d );
    }
    const auto before = to_host( agents );
    const std::size_t capacity = agents.capacity();
    GrowthParameters<double> gp;
    GrowthDivision<double, TEST_MEMSPACE> growth( gp );
    const int divisions = growth.step( TEST_EXECSPACE(), agents, 0 );
    const auto after = to_host( agents );

    int expected_divisions = 0;
    double v_before = 0, v_after = 0, c_dividers_before[3] = {};
    for ( const auto& a : before )
    {
        const bool divides = a.diameter > 30.05;
        expected_divisions += divides;
        v_before += volume_of( a.diameter ) + ( divides ? 0 : gp.growth_rate * gp.time_step );
        for ( int k = 0; k < 3; ++k )
            if ( divides )
                c_dividers_before[k] += volume_of( a.diameter ) * a.x[k];
    }
    EXPECT_EQ( divisions, expected_divisions );
    ASSERT_EQ( after.size(), before.size() + divisions );
    EXPECT_GT( agents.capacity(), capacity );
    double c_dividers_after[3] = {};
    std::set<std::int64_t> ids;
    for ( const auto& a : after )
    {
        v_after += volume_of( a.diameter );
        ids.insert( a.id );
    }
    EXPECT_NEAR( v_after, v_before, 1e-10 * v_before );
    EXPECT_EQ( ids.size(), after.size() );
    EXPECT_EQ( *ids.rbegin(), static_cast<std::int64_t>( after.size() ) - 1 );
    EXPECT_EQ( agents.next_id(), static_cast<std::int64_t>( after.size() ) );

    // Per mother: the pair keeps the mother's volume and volume-weighted centre; ratio in [0.9, 1.1].
    const auto old = by_id( before );
    const auto now = by_id( after );
    int checked = 0;
    for ( std::size_t k = 0; k < after.size(); ++k )
    {
        const auto& d = after[k];
        if ( d.id < static_cast<std::int64_t>( before.size() ) )
            continue;
        // Daughters are appended in the order of their mothers' ids.
        const std::int64_t rank = d.id - static_cast<std::int64_t>( before.size() );
        std::int64_t mother = -1, seen = -1;
        for ( const auto& [id, a] : old )
            if ( a.diameter > 30.05 && ++seen == rank )
            {
                mother = id;
                break;
            }
        ASSERT_GE( mother, 0 );
        const auto& m0 = old.at( mother );
        const auto& m1 = now.at( mother );
        const double v1 = volume_of( m1.diameter ), v2 = volume_of( d.diameter );
        EXPECT_NEAR( v1 + v2, volume_of( m0.diameter ), 1e-10 * volume_of( m0.diameter ) );
        EXPECT_GE( v2 / v1, 0.9 - 1e-12 );
        EXPECT_LE( v2 / v1, 1.1 + 1e-12 );
        double sep = 0;
        for ( int c = 0; c < 3; ++c )
        {
            EXPECT_NEAR( ( v1 * m1.x[c] + v2 * d.x[c] ) / ( v1 + v2 ), m0.x[c], 1e-10 );
            sep += ( d.x[c] - m1.x[c] ) * ( d.x[c] - m1.x[c] );
            c_dividers_after[c] += v1 * m1.x[c] + v2 * d.x[c];
        }
        EXPECT_NEAR( std::sqrt( sep ), 0.25 * 0.5 * m0.diameter, 1e-10 ); // a quarter of the radius
        EXPECT_EQ( d.adherence, m0.adherence );
        EXPECT_EQ( d.density, m0.density );
        ++checked;
    }
    EXPECT_EQ( checked, divisions );
    // Summed over all mothers and daughters: the volume-weighted centre of the dividing cells is kept.
    for ( int c = 0; c < 3; ++c )
        EXPECT_NEAR( c_dividers_after[c], c_dividers_before[c], 1e-9 * std::abs( c_dividers_before[c] ) + 1e-6 );
}

// A small proliferation run (growth, division, grid, forces, displacement) gives the same agents,
// compared by id, with and without sorting the agents in Z-order (every step, every third step) or in
// row-major cell order: sorting changes only
// the memory order and the order of the force sums.
TEST( TEST_CATEGORY, proliferation_same_with_and_without_zorder_sorting )
{
    std::vector<std::map<std::int64_t, HostAgent<double>>> runs;
    std::vector<int> totals;
    for ( int sort_every : { 0, 1, 3, -1 } )
    {
        auto agents = morula::mechanics::lattice_agents<double, TEST_MEMSPACE>( TEST_EXECSPACE(), 4, 20.0, {} );
        MechanicsParameters<double> mp;
        mp.sort_every = sort_every < 0 ? 1 : sort_every;
        if ( sort_every < 0 ) // sorted every step in row-major cell order instead of Z-order
            mp.ordering = morula::grid::CellOrdering::row_major;
        SphereMechanics<double, TEST_MEMSPACE> mech( Box<double>( { 0, 0, 0 }, { 60, 60, 60 }, Boundary::open ), mp );
        GrowthDivision<double, TEST_MEMSPACE> growth( GrowthParameters<double>{} );
        int total = 0;
        for ( int step = 0; step < 10; ++step )
        {
            total += growth.step( TEST_EXECSPACE(), agents, step );
            mech.update_grid( TEST_EXECSPACE(), agents );
            mech.compute_displacements( TEST_EXECSPACE(), agents );
            mech.apply_displacements( TEST_EXECSPACE(), agents );
        }
        runs.push_back( by_id( to_host( agents ) ) );
        totals.push_back( total );
    }
    EXPECT_EQ( totals[0], 64 ); // every cell divided once (daughters need ~140 steps to regrow)
    for ( std::size_t r = 1; r < runs.size(); ++r )
    {
        EXPECT_EQ( totals[r], totals[0] );
        ASSERT_EQ( runs[r].size(), runs[0].size() );
        for ( const auto& [id, a] : runs[0] )
        {
            const auto& b = runs[r].at( id );
            EXPECT_NEAR( b.diameter, a.diameter, 1e-9 ) << "id " << id;
            for ( int k = 0; k < 3; ++k )
                EXPECT_NEAR( b.x[k], a.x[k], 1e-8 ) << "id " << id << " run " << r;
        }
    }
}

TEST( TEST_CATEGORY, growth_division_no_agents )
{
    SphereAgents<double, TEST_MEMSPACE> agents( "empty", 0 );
    GrowthDivision<double, TEST_MEMSPACE> growth( GrowthParameters<double>{} );
    EXPECT_EQ( growth.step( TEST_EXECSPACE(), agents, 0 ), 0 );
    EXPECT_EQ( agents.size(), 0u );
}

TEST( TEST_CATEGORY, growth_division_bad_parameters )
{
    GrowthParameters<double> gp;
    gp.division_diameter = 0;
    try
    {
        GrowthDivision<double, TEST_MEMSPACE> g( gp );
        FAIL() << "division_diameter 0 was accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "division_diameter = 0" ), std::string::npos ) << e.what();
    }
    gp = {};
    gp.growth_rate = -1;
    EXPECT_THROW( ( GrowthDivision<double, TEST_MEMSPACE>( gp ) ), morula::core::InputError );
    AgentProperties<double> props;
    props.mass = 0;
    EXPECT_THROW( ( morula::mechanics::lattice_agents<double, TEST_MEMSPACE>( TEST_EXECSPACE(), 2, 1.0, props ) ),
                  morula::core::InputError );
}

} // namespace morula_test_mechanics
