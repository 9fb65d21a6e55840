// The batched mode's on-chip layout (SolverOptions::batched_layout, detail::OnChipIntegrate): a system per
// team thread, its loops over the thread's vector lanes, its workspace in team scratch memory. On a host
// backend (one lane) it must give the interleaved layout's results bit for bit; on a GPU its lanes' sums
// round differently, so there it must agree within the tolerances. Both at the hard end: a 10-species
// network with rates over five decades and bimolecular bindings, a 12-species chain over 11 decades, a
// 40-species chain whose rows outnumber the lanes, Robertson to 1e11 with BDF; every method of the general
// path; paused runs bit for bit; and the refusals.
#include <OdeTestUtils.hpp>
#include <RobertsonReference.hpp>

#include <morula/ode/OdeIntegration.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace
{
using namespace morula;
using Exec = TEST_EXECSPACE;
using Mem = TEST_MEMSPACE;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Mem>;

constexpr bool kHostBackend = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;

// The work-precision study's network10 (benchmarks/ode/work_precision/models/network10.txt): a fast
// reversible chain, two reversible bindings, slow conversions and a slow loop; eigenvalues from about -1e3
// to -1e-2.
ode::ReactionNetwork network10()
{
    using test::reaction;
    return test::network(
        { "S0", "S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9" },
        { reaction( { { 0, 1 } }, { { 1, 1 } }, 1 ),         reaction( { { 1, 1 } }, { { 0, 1 } }, 1e2 ),
          reaction( { { 1, 1 } }, { { 2, 1 } }, 1e3 ),       reaction( { { 2, 1 } }, { { 1, 1 } }, 1e1 ),
          reaction( { { 2, 1 }, { 3, 1 } }, { { 4, 1 } }, 1e2 ), reaction( { { 4, 1 } }, { { 2, 1 }, { 3, 1 } }, 1e-1 ),
          reaction( { { 4, 1 } }, { { 5, 1 } }, 1e1 ),       reaction( { { 5, 1 } }, { { 6, 1 } }, 1e-1 ),
          reaction( { { 6, 1 } }, { { 5, 1 } }, 1e-2 ),      reaction( { { 5, 1 }, { 7, 1 } }, { { 8, 1 } }, 1e3 ),
          reaction( { { 8, 1 } }, { { 5, 1 }, { 7, 1 } }, 1 ), reaction( { { 8, 1 } }, { { 9, 1 } }, 1e-2 ),
          reaction( { { 9, 1 } }, { { 0, 1 } }, 1e-2 ),      reaction( { { 6, 1 } }, { { 7, 1 } }, 1 ),
          reaction( { { 7, 1 } }, { { 3, 1 } }, 1e-1 ),      reaction( { { 3, 1 } }, {}, 1e-2 ) },
        { 1.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.2, 0.0, 0.0 } );
}

ode::SolverOptions layout_options( ode::Method method, ode::BatchedLayout layout, double rtol, double atol )
{
    auto o = test::options_with( method, ode::ExecutionMode::batched, rtol, atol );
    o.batched_layout = layout;
    return o;
}

// Each system's rates: the network's times a factor in [0.9, 1.1) that differs per system and reaction.
std::vector<std::vector<double>> spread_rates( const ode::ReactionNetwork& net, long systems )
{
    std::vector<std::vector<double>> k( systems );
    for ( long s = 0; s < systems; ++s )
        for ( std::size_t r = 0; r < net.reactions.size(); ++r )
            k[s].push_back( net.reactions[r].rate_constant * ( 0.9 + 0.2 * double( ( s * 13 + r * 7 ) % 31 ) / 31.0 ) );
    return k;
}

struct MethodRun
{
    ode::Method method;
    ode::Method stiff_method;
    const char* what;
};

const MethodRun kRuns[] = { { ode::Method::bdf, ode::Method::automatic, "bdf" },
                      { ode::Method::rodas5p, ode::Method::automatic, "rodas5p" },
                      { ode::Method::rodas4, ode::Method::automatic, "rodas4" },
                      { ode::Method::rosenbrock23, ode::Method::automatic, "rosenbrock23" },
                      { ode::Method::automatic, ode::Method::automatic, "automatic (RKF45 <-> Rodas5P)" },
                      { ode::Method::automatic, ode::Method::bdf, "automatic (RKF45 <-> BDF)" } };

// 37 copies of network10 with their own rates, every method of the general path (RKF45 alone would take
// ~10^5 steps on this stiff network; the automatic runs cover its stretches), on chip against interleaved:
// the same numbers bit for bit on a host backend, within the tolerances on a GPU.
TEST( TEST_CATEGORY, on_chip_layout_matches_interleaved_on_network10 )
{
    const auto net = network10();
    const std::vector<double> times{ 0.0, 1e-3, 0.1, 1.0, 10.0, 100.0, 1000.0 };
    const long systems = 37;
    const auto k = spread_rates( net, systems );
    for ( const MethodRun& run : kRuns )
    {
        const double rtol = run.method == ode::Method::rkf45 || run.method == ode::Method::rosenbrock23 ? 1e-6 : 1e-8;
        const double atol = 1e-14;
        auto interleaved = layout_options( run.method, ode::BatchedLayout::interleaved, rtol, atol );
        interleaved.stiff_method = run.stiff_method;
        auto on_chip = interleaved;
        on_chip.batched_layout = ode::BatchedLayout::on_chip;
        {
            ode::MassActionSystem<Mem> system( net );
            EXPECT_EQ( ode::OdeSolver<Exec>( system, interleaved ).on_chip_lanes(), 0 ) << run.what;
            const int lanes = ode::OdeSolver<Exec>( system, on_chip ).on_chip_lanes();
            EXPECT_EQ( lanes, kHostBackend ? 1 : 16 ) << run.what << ": 10 species take 16 lanes on a GPU, one on a host";
        }
        const auto a = test::solve_batch<Exec>( net, interleaved, times, systems, k );
        const auto b = test::solve_batch<Exec>( net, on_chip, times, systems, k );
        for ( long s = 0; s < systems; ++s )
        {
            ASSERT_EQ( a.status( int( s ) ), ode::SolverStatus::success ) << run.what << " system " << s;
            ASSERT_EQ( b.status( int( s ) ), ode::SolverStatus::success ) << run.what << " system " << s;
            for ( std::size_t t = 0; t < times.size(); ++t )
                for ( int i = 0; i < net.species_count(); ++i )
                {
                    const double x = a.samples( s, t, i ), y = b.samples( s, t, i );
                    if ( kHostBackend )
                        ASSERT_EQ( x, y ) << run.what << " system " << s << " t=" << times[t] << " S" << i;
                    else
                        ASSERT_NEAR( x, y, 200 * rtol * std::fabs( x ) + 1e-12 ) << run.what << " system " << s << " t=" << times[t] << " S" << i;
                }
            if ( kHostBackend )
                for ( int c = 0; c < ode::stat_count; ++c )
                    EXPECT_EQ( a.statistics( s, c ), b.statistics( s, c ) ) << run.what << " system " << s << " statistic " << c;
            else
                EXPECT_NEAR( double( a.stat( ode::stat_steps, int( s ) ) ), double( b.stat( ode::stat_steps, int( s ) ) ),
                             0.1 * double( a.stat( ode::stat_steps, int( s ) ) ) + 3 )
                    << run.what << " system " << s;
        }
    }
}

// The stiff chains against Bateman on chip: 12 species (11 decades of rates) in the automatic lanes and in
// 4 lanes (three rows per lane), 40 species (more rows than a warp's 32 lanes); Rodas5P and BDF; the
// chain's total conserved.
TEST( TEST_CATEGORY, on_chip_layout_stiff_chains_against_bateman )
{
    const std::vector<double> times{ 0.0, 1e-4, 1e-2, 1.0, 100.0, 1e4, 1e6 };
    struct Case
    {
        int length;
        int lanes;
    };
    for ( const Case c : { Case{ 12, 0 }, Case{ 12, 4 }, Case{ 40, 0 } } )
        for ( const auto method : { ode::Method::rodas5p, ode::Method::bdf } )
        {
            std::vector<double> k;
            const auto net = test::stiff_chain( c.length, k );
            auto o = layout_options( method, ode::BatchedLayout::on_chip, 1e-8, 1e-16 );
            o.batched_lanes = c.lanes;
            const std::string what = std::to_string( c.length ) + " species, lanes " + std::to_string( c.lanes ) + ", " +
                                     ( method == ode::Method::bdf ? "bdf" : "rodas5p" );
            ode::MassActionSystem<Mem> system( net );
            // Global error over 11 decades at rtol 1e-8: Rodas5P within 1e-6 (as on the other paths), BDF's
            // within 1e-5 (1.9e-6 measured on both layouts: A1 at t = 1e-4, A10 at 1e6).
            const double relative = method == ode::Method::bdf ? 1e-5 : 1e-6;
            // 40 species: 3898 doubles (31 KB) per system, within a GPU team's 40 KB of scratch memory; a
            // network that is not is refused (on_chip_layout_refusals).
            try
            {
                ode::OdeSolver<Exec> probe( system, o );
                const auto r = test::solve_batch<Exec>( net, o, times, 3 );
                if ( !kHostBackend )
                    EXPECT_EQ( probe.on_chip_lanes(), c.lanes > 0 ? c.lanes : ( c.length > 16 ? 32 : 16 ) ) << what;
                for ( int s = 0; s < 3; ++s )
                {
                    ASSERT_EQ( r.status( s ), ode::SolverStatus::success ) << what;
                    for ( std::size_t t = 0; t < times.size(); ++t )
                    {
                        const auto exact = test::bateman( k, times[t], c.length );
                        double total = 0;
                        for ( int i = 0; i < c.length; ++i )
                        {
                            EXPECT_NEAR( r.samples( s, t, i ), exact[i], relative * exact[i] + 1e-12 ) << what << " t=" << times[t] << " A" << i + 1;
                            total += r.samples( s, t, i );
                        }
                        EXPECT_NEAR( total, 1.0, 1e-12 ) << what << " t=" << times[t];
                    }
                }
            }
            catch ( const core::InputError& e )
            {
                EXPECT_FALSE( kHostBackend ) << what << ": " << e.what();
                EXPECT_GT( c.length, 32 ) << what << ": refused " << e.what();
                EXPECT_NE( std::string( e.what() ).find( "bytes of team scratch memory per system" ), std::string::npos ) << e.what();
            }
        }
}

// Robertson through 13 decades with BDF (the general path: the Rosenbrock methods would take the register
// kernel) on chip, against the reference table; A + B + C = 1.
TEST( TEST_CATEGORY, on_chip_layout_robertson_bdf_through_eleven_decades )
{
    namespace rob = test::robertson;
    const auto net = test::robertson_network();
    const std::vector<double> times( rob::kDecadeTimes, rob::kDecadeTimes + rob::kDecadeCount );
    const double rtol = 1e-8;
    const auto r = test::solve_batch<Exec>( net, layout_options( ode::Method::bdf, ode::BatchedLayout::on_chip, rtol, 1e-20 ), times, 5 );
    for ( int s = 0; s < 5; ++s )
    {
        ASSERT_EQ( r.status( s ), ode::SolverStatus::success );
        for ( int t = 0; t < rob::kDecadeCount; ++t )
        {
            double total = 0;
            for ( int i = 0; i < 3; ++i )
            {
                const double want = rob::kDecadeStates[t][i];
                EXPECT_NEAR( r.samples( s, t, i ), want, 500 * rtol * want ) << "t=" << times[t] << " species " << i;
                total += r.samples( s, t, i );
            }
            EXPECT_NEAR( total, 1.0, 1e-13 ) << "t=" << times[t];
        }
    }
}

// Paused after every sample and resumed (each system's workspace copied out of scratch memory and back at
// every pause): bit for bit the one-leg run, for BDF (its differences, Jacobian and factors cross the pause),
// Rodas5P and the automatic switching.
TEST( TEST_CATEGORY, on_chip_layout_resumes_bit_for_bit )
{
    const auto net = network10();
    const std::vector<double> times{ 0.0, 1e-3, 0.1, 1.0, 10.0, 100.0, 1000.0 };
    const long systems = 5;
    const auto k = spread_rates( net, systems );
    Matrix x0( "x0", systems, net.species_count() ), rates( "k", systems, net.reaction_count() );
    auto hx = Kokkos::create_mirror_view( x0 );
    auto hk = Kokkos::create_mirror_view( rates );
    for ( long s = 0; s < systems; ++s )
    {
        for ( int i = 0; i < net.species_count(); ++i )
            hx( s, i ) = net.initial_state[i];
        for ( int r = 0; r < net.reaction_count(); ++r )
            hk( s, r ) = k[s][r];
    }
    Kokkos::deep_copy( x0, hx );
    Kokkos::deep_copy( rates, hk );
    for ( const MethodRun& run : kRuns )
    {
        if ( run.method == ode::Method::rodas4 || run.method == ode::Method::rosenbrock23 )
            continue;
        auto o = layout_options( run.method, ode::BatchedLayout::on_chip, 1e-8, 1e-14 );
        o.stiff_method = run.stiff_method;
        Exec exec;
        ode::MassActionSystem<Mem> system( net );
        ode::OdeSolver<Exec> solver( system, o );
        const auto whole = test::HostResult<Mem>( solver.solve( exec, x0, rates, times ) );
        ode::OdeIntegration<Exec, Mem> legs( solver, exec, x0, rates, times );
        for ( int stop = 0; stop <= static_cast<int>( times.size() ); ++stop )
            legs.advance_to( exec, stop );
        const auto resumed = test::HostResult<Mem>( legs.result( exec ) );
        EXPECT_EQ( 0, std::memcmp( whole.samples.data(), resumed.samples.data(), whole.samples.size() * sizeof( double ) ) ) << run.what;
        for ( std::size_t i = 0; i < whole.statistics.size(); ++i )
            EXPECT_EQ( whole.statistics.data()[i], resumed.statistics.data()[i] ) << run.what << ", statistic " << i;
    }
}

// BatchedLayout::automatic: on chip on host backends, and on a GPU from 20 species (the measured crossover)
// while the arrays fit; interleaved below on a GPU.
TEST( TEST_CATEGORY, on_chip_layout_automatic_rule )
{
    EXPECT_TRUE( ode::automatic_batched_on_chip( false, 3, 3 ) );
    EXPECT_FALSE( ode::automatic_batched_on_chip( true, 19, 40 ) );
    EXPECT_TRUE( ode::automatic_batched_on_chip( true, 20, 32 ) );
    std::vector<double> k;
    for ( const int length : { 10, 20, 40 } )
    {
        const auto net = test::stiff_chain( length, k );
        ode::MassActionSystem<Mem> system( net );
        const auto o = layout_options( ode::Method::bdf, ode::BatchedLayout::automatic, 1e-6, 1e-12 );
        const int expected = kHostBackend ? 1 : length < 20 ? 0 : 32;
        EXPECT_EQ( ode::OdeSolver<Exec>( system, o ).on_chip_lanes(), expected ) << length << " species";
        // The register kernel's networks never take the layout.
        auto rosenbrock = layout_options( ode::Method::rodas5p, ode::BatchedLayout::on_chip, 1e-6, 1e-12 );
        const auto small = test::stiff_chain( 5, k );
        ode::MassActionSystem<Mem> small_system( small );
        EXPECT_EQ( ode::OdeSolver<Exec>( small_system, rosenbrock ).on_chip_lanes(), 0 );
    }
}

// What the layout refuses, naming the option and the value: lanes that are not a power of two up to 32, the
// layout outside the batched mode, KokkosBatched's team LU; on a GPU a network whose arrays do not fit a
// team's scratch memory (automatic then keeps the interleaved layout and runs).
TEST( TEST_CATEGORY, on_chip_layout_refusals )
{
    std::vector<double> k;
    const auto net = test::stiff_chain( 12, k );
    ode::MassActionSystem<Mem> system( net );
    auto expect_refused = [&]( const ode::SolverOptions& o, const std::string& words ) {
        try
        {
            ode::OdeSolver<Exec> solver( system, o );
            ADD_FAILURE() << "accepted; expected an error naming '" << words << "'";
        }
        catch ( const core::InputError& e )
        {
            EXPECT_NE( std::string( e.what() ).find( words ), std::string::npos ) << e.what();
        }
    };
    for ( const int lanes : { -1, 3, 12, 64 } )
    {
        auto o = layout_options( ode::Method::bdf, ode::BatchedLayout::on_chip, 1e-6, 1e-12 );
        o.batched_lanes = lanes;
        expect_refused( o, "batched_lanes = " + std::to_string( lanes ) );
    }
    auto fine = layout_options( ode::Method::bdf, ode::BatchedLayout::on_chip, 1e-6, 1e-12 );
    fine.mode = ode::ExecutionMode::fine_grained;
    expect_refused( fine, "on_chip is a layout of the batched mode" );
    auto kokkos_lu = layout_options( ode::Method::bdf, ode::BatchedLayout::on_chip, 1e-6, 1e-12 );
    kokkos_lu.linear_solver = ode::LinearSolver::kokkos_batched;
    expect_refused( kokkos_lu, "kokkos_batched" );

    // 64 species: about 9000 doubles per system, beyond the 40 KB of scratch memory Kokkos gives a GPU team.
    const auto big = test::stiff_chain( 64, k );
    ode::MassActionSystem<Mem> big_system( big );
    const auto asked = layout_options( ode::Method::bdf, ode::BatchedLayout::on_chip, 1e-6, 1e-12 );
    if ( kHostBackend )
        EXPECT_EQ( ode::OdeSolver<Exec>( big_system, asked ).on_chip_lanes(), 1 );
    else
    {
        try
        {
            const auto r = test::solve_batch<Exec>( big, asked, { 0.0, 1.0 } );
            ADD_FAILURE() << "64 species on chip accepted on a GPU";
        }
        catch ( const core::InputError& e )
        {
            EXPECT_NE( std::string( e.what() ).find( "bytes of team scratch memory per system (64 species" ), std::string::npos )
                << e.what();
        }
        const auto automatic = layout_options( ode::Method::bdf, ode::BatchedLayout::automatic, 1e-6, 1e-12 );
        EXPECT_EQ( ode::OdeSolver<Exec>( big_system, automatic ).on_chip_lanes(), 0 ) << "automatic keeps it interleaved";
        const auto r = test::solve_batch<Exec>( big, automatic, { 0.0, 1.0 } );
        EXPECT_EQ( r.status(), ode::SolverStatus::success );
    }
}

} // namespace
