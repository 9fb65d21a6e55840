// The register kernels' mass-action tables (detail/SmallMassAction.hpp): the small capacities keep each
// reaction's reactants as at most two factors x_s^a (issue #45, float speed); their right-hand side and
// Jacobian must equal, bit for bit, those of the order table the large capacity keeps, for every kind of
// reaction a mass-action network has (orders 0 to 3, one or two reactant species, none). A reaction of
// three reactant species does not fit the factors and goes to the large capacity.
#include "OdeTestUtils.hpp"

#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/detail/RosenbrockBatch.hpp>
#include <morula/ode/detail/SmallMassAction.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace morula_test_small_mass_action
{
using namespace morula;
using morula::test::network;
using morula::test::reaction;

// Three species, eight reactions: 2A + B -> C, 0 -> A, C -> A + B, A + C -> 2B, 3B -> A and Robertson's three.
ode::ReactionNetwork every_kind_of_reaction()
{
    return network( { "A", "B", "C" },
                    { reaction( { { 0, 2 }, { 1, 1 } }, { { 2, 1 } }, 1.5 ), reaction( {}, { { 0, 1 } }, 0.3 ),
                      reaction( { { 2, 1 } }, { { 0, 1 }, { 1, 1 } }, 2.0 ), reaction( { { 0, 1 }, { 2, 1 } }, { { 1, 2 } }, 0.7 ),
                      reaction( { { 1, 3 } }, { { 0, 1 } }, 0.1 ), reaction( { { 0, 1 } }, { { 1, 1 } }, 0.04 ),
                      reaction( { { 1, 2 } }, { { 1, 1 }, { 2, 1 } }, 3e7 ),
                      reaction( { { 1, 1 }, { 2, 1 } }, { { 0, 1 }, { 2, 1 } }, 1e4 ) },
                    { 1.0, 0.5, 0.25 } );
}

// small_rhs and small_jacobian of the factored capacity (N x 8) against the order table's (8 x 16) at random
// states (zeros and large values among them), in precision Real.
template <class Real, int N>
void expect_factors_equal_the_order_table( const ode::ReactionNetwork& net, unsigned seed )
{
    using Host = Kokkos::HostSpace;
    const ode::MassActionSystem<Host> system( net );
    const auto small = ode::detail::small_mass_action<N, 8>( system );
    const auto large = ode::detail::small_mass_action<8, 16>( system );
    static_assert( decltype( small )::factored && !decltype( large )::factored, "the capacities under test" );
    std::mt19937_64 rng( seed );
    std::uniform_real_distribution<double> unit( 0.0, 2.0 );
    Real k_small[8] = {}, k_large[16] = {};
    for ( int r = 0; r < system.reactions; ++r )
        k_small[r] = k_large[r] = static_cast<Real>( net.reactions[r].rate_constant * unit( rng ) );
    for ( int trial = 0; trial < 200; ++trial )
    {
        Real x_small[N] = {}, x_large[8] = {};
        for ( int i = 0; i < system.species; ++i )
        {
            const int kind = trial % 5;
            const double v = kind == 0 && i == trial % system.species ? 0.0 : ( kind == 1 ? 1e3 * unit( rng ) : unit( rng ) );
            x_small[i] = x_large[i] = static_cast<Real>( v );
        }
        Real f_small[N], f_large[8], J_small[N][N], J_large[8][8];
        ode::detail::small_rhs( small, k_small, x_small, f_small );
        ode::detail::small_rhs( large, k_large, x_large, f_large );
        ode::detail::small_jacobian( small, k_small, x_small, J_small );
        ode::detail::small_jacobian( large, k_large, x_large, J_large );
        for ( int i = 0; i < N; ++i )
        {
            EXPECT_EQ( f_small[i], f_large[i] ) << "trial " << trial << " species " << i;
            for ( int q = 0; q < N; ++q )
                EXPECT_EQ( J_small[i][q], J_large[i][q] ) << "trial " << trial << " J(" << i << ", " << q << ")";
        }
    }
}

TEST( TEST_CATEGORY, small_mass_action_factors_give_the_order_tables_rates_bit_for_bit )
{
    const auto net = every_kind_of_reaction();
    EXPECT_TRUE( ode::detail::fits_factors( ode::MassActionSystem<Kokkos::HostSpace>( net ) ) );
    expect_factors_equal_the_order_table<double, 3>( net, 1 );
    expect_factors_equal_the_order_table<float, 3>( net, 2 );
    expect_factors_equal_the_order_table<double, 4>( net, 3 );
    expect_factors_equal_the_order_table<float, 4>( net, 4 );
    expect_factors_equal_the_order_table<double, 3>( test::robertson_network(), 5 );
}

// A + B + C -> A + B: C' = -A B C, so C = exp(-A0 B0 t) with A and B constant. Three reactant species do not
// fit two factors: the small capacity refuses the table, the dispatch takes the large one, and the solve
// is right.
TEST( TEST_CATEGORY, small_mass_action_three_reactant_species_go_to_the_large_capacity )
{
    const auto net = network( { "A", "B", "C" }, { reaction( { { 0, 1 }, { 1, 1 }, { 2, 1 } }, { { 0, 1 }, { 1, 1 } }, 1.0 ) },
                              { 1.0, 2.0, 1.0 } );
    const ode::MassActionSystem<Kokkos::HostSpace> system( net );
    EXPECT_FALSE( ode::detail::fits_factors( system ) );
    EXPECT_THROW( ( ode::detail::small_mass_action<3, 8>( system ) ), std::logic_error );
    EXPECT_NO_THROW( ( ode::detail::small_mass_action<8, 16>( system ) ) );
    const std::vector<double> times{ 0.0, 0.25, 0.5, 1.0 };
    for ( auto method : { ode::Method::rodas5p, ode::Method::rosenbrock23 } )
    {
        const auto options = test::options_with( method, ode::ExecutionMode::batched, 1e-8, 1e-12 );
        const auto r = test::solve_batch<TEST_EXECSPACE>( net, options, times, 2 );
        ASSERT_EQ( r.status(), ode::SolverStatus::success );
        for ( long s = 0; s < 2; ++s )
            for ( std::size_t t = 0; t < times.size(); ++t )
            {
                EXPECT_NEAR( r.samples( s, t, 0 ), 1.0, 1e-12 );
                EXPECT_NEAR( r.samples( s, t, 1 ), 2.0, 1e-12 );
                EXPECT_NEAR( r.samples( s, t, 2 ), std::exp( -2.0 * times[t] ), 1e-6 ) << "t=" << times[t];
            }
    }
}

} // namespace morula_test_small_mass_action
