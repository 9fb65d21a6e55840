// Checkpoint and restart of an ODE integration: a run paused after sample k, written to a file, restored
// into a fresh integration and finished equals the uninterrupted run (and OdeSolver::solve) bit for bit,
// in every sample and statistic, in every mode and linear solver.
#include <OdeTestUtils.hpp>

#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/ode/OdeIntegration.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace
{
using namespace morula;
using Exec = TEST_EXECSPACE;
using Mem = TEST_MEMSPACE;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Mem>;
using Integration = ode::OdeIntegration<Exec, Mem>;
using Solver = ode::OdeSolver<Exec, Mem>;

#if MORULA_HAVE_HDF5

std::string scratch( const std::string& test )
{
    return std::string( "morula_ode_checkpoint_" ) + test + "_" + Exec::name() + ".h5";
}

// Robertson to 1e5 and beyond: 0 and 12 log-spaced samples up to 4e7, where BDF runs at high order
// with steps of 1e5 and more.
std::vector<double> robertson_times( int count = 24 )
{
    std::vector<double> t{ 0.0 };
    for ( int i = 0; i < count; ++i )
        t.push_back( 1e-5 * std::pow( 10.0, 12.6 * i / ( count - 1 ) ) );
    return t;
}

// systems copies of a network, rate constants of copy s scaled by 1 + 0.2 (s / systems - 0.5) per reaction
// (a different factor per reaction), the network's initial state.
struct Batch
{
    Matrix x0, k;
};
Batch batch_of( const ode::ReactionNetwork& net, long systems )
{
    const int n = net.species_count(), m = net.reaction_count();
    Batch b{ Matrix( "x0", systems, n ), Matrix( "k", systems, m ) };
    auto x0 = Kokkos::create_mirror_view( b.x0 );
    auto k = Kokkos::create_mirror_view( b.k );
    for ( long s = 0; s < systems; ++s )
    {
        for ( int j = 0; j < n; ++j )
            x0( s, j ) = net.initial_state[j];
        for ( int r = 0; r < m; ++r )
            k( s, r ) = net.reactions[r].rate_constant * ( 1.0 + 0.2 * ( double( ( s * ( r + 3 ) ) % systems ) / systems - 0.5 ) );
    }
    Kokkos::deep_copy( b.x0, x0 );
    Kokkos::deep_copy( b.k, k );
    return b;
}

io::CheckpointEntries entries_of( const Integration& run )
{
    io::CheckpointWriter out( Integration::checkpoint_model );
    run.checkpoint( out );
    return out.entries();
}

// Every sample (NaN compared as NaN) and every statistic equal bit for bit.
void expect_same( const ode::OdeResult<Mem>& a, const ode::OdeResult<Mem>& b, const std::string& what )
{
    const test::HostResult<Mem> x( a ), y( b );
    ASSERT_EQ( x.samples.size(), y.samples.size() ) << what;
    EXPECT_EQ( 0, std::memcmp( x.samples.data(), y.samples.data(), x.samples.size() * sizeof( double ) ) ) << what;
    ASSERT_EQ( x.statistics.size(), y.statistics.size() ) << what;
    for ( std::size_t i = 0; i < x.statistics.size(); ++i )
        EXPECT_EQ( x.statistics.data()[i], y.statistics.data()[i] ) << what << ": statistic " << i;
}

/*
  For each pause point k: a run paused at k, checkpointed to a file, restored into a fresh integration of
  the same inputs and finished equals the uninterrupted run (checkpoint entries, samples, statistics);
  the uninterrupted run equals OdeSolver::solve. Returns the uninterrupted run's result on the host.
*/
test::HostResult<Mem> check_restarts( const ode::ReactionNetwork& net, const ode::SolverOptions& options,
                                      const Batch& b, const std::vector<double>& times, const std::vector<int>& pauses,
                                      const std::string& name, bool own_constants = true )
{
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    Solver solver( system, options );
    const Matrix k = own_constants ? b.k : Matrix();
    const auto reference = solver.solve( exec, b.x0, k, times );
    Integration full( solver, exec, b.x0, k, times );
    full.advance_to( exec, static_cast<int>( times.size() ) );
    EXPECT_TRUE( full.finished() );
    expect_same( full.result( exec ), reference, name + ": OdeIntegration vs OdeSolver::solve" );
    const auto full_entries = entries_of( full );
    const std::string path = scratch( name );
    for ( const int k_pause : pauses )
    {
        const std::string what = name + ", paused after sample " + std::to_string( k_pause );
        {
            Integration first( solver, exec, b.x0, k, times );
            first.advance_to( exec, k_pause );
            EXPECT_EQ( first.samples_done(), k_pause );
            io::write_checkpoint( first, path );
        }
        // The fresh integration has run elsewhere first (another pause, or to the end): the restart must
        // replace all of its state, not only what the pause at k_pause left different.
        Integration resumed( solver, exec, b.x0, k, times );
        resumed.advance_to( exec, ( k_pause + 3 ) % static_cast<int>( times.size() + 1 ) );
        io::restart_from_checkpoint( resumed, path );
        EXPECT_EQ( resumed.samples_done(), k_pause );
        resumed.advance_to( exec, static_cast<int>( times.size() ) );
        EXPECT_EQ( io::first_difference( full_entries, entries_of( resumed ) ), "" ) << what;
        expect_same( resumed.result( exec ), reference, what );
    }
    std::remove( path.c_str() );
    return test::HostResult<Mem>( reference );
}

// Pause points 0, stride, 2 stride, ... and the last two (stride 1: every sample). Team runs on a host
// backend with several threads are slow on a loaded machine, so the team cases take a stride.
std::vector<int> every_sample( const std::vector<double>& times, int stride = 1 )
{
    std::vector<int> k;
    const int n = static_cast<int>( times.size() );
    for ( int i = 0; i <= n; ++i )
        if ( i % stride == 0 || i >= n - 1 )
            k.push_back( i );
    return k;
}

// The state a checkpoint holds at sample k (for asserting what was live across the pause).
struct PausedState
{
    std::vector<std::int32_t> order;
    std::vector<std::uint8_t> flags; // (systems, 6): in_bdf, jacobian_valid, jacobian_current, k1_valid, done
};
PausedState paused_state( const Solver& solver, const Batch& b, const std::vector<double>& times, int k )
{
    Exec exec;
    Integration run( solver, exec, b.x0, b.k, times );
    run.advance_to( exec, k );
    io::CheckpointWriter out( Integration::checkpoint_model );
    run.checkpoint( out );
    PausedState p;
    const auto& e = out.entries();
    const auto& o = e.at( "batch/state/bdf_order" );
    p.order.resize( o.bytes.size() / 4 );
    std::memcpy( p.order.data(), o.bytes.data(), o.bytes.size() );
    const auto& f = e.at( "batch/state/flags" );
    p.flags.assign( f.bytes.begin(), f.bytes.end() );
    return p;
}

// The Rosenbrock methods' register-resident kernel paused at every sample, in double and float: the
// state it stores (x, f(x), t, the proposed step, the rejection flag) is all its next step reads.
TEST( TEST_CATEGORY, ode_checkpoint_rosenbrock_bit_identical_at_every_sample )
{
    const auto net = test::robertson_network();
    const auto times = robertson_times();
    const Batch b = batch_of( net, 24 );
    for ( auto method : { ode::Method::rodas5p, ode::Method::rodas4, ode::Method::rosenbrock23 } )
        for ( auto precision : { ode::Precision::double_precision, ode::Precision::single_precision } )
        {
            ode::SolverOptions o;
            o.method = method;
            o.precision = precision;
            o.relative_tolerance = precision == ode::Precision::single_precision ? 1e-3 : 1e-6;
            o.absolute_tolerance = { precision == ode::Precision::single_precision ? 1e-6 : 1e-10 };
            const std::string name = "rosenbrock_" + std::to_string( static_cast<int>( method ) ) + "_" +
                                     std::to_string( static_cast<int>( precision ) );
            const auto r = check_restarts( net, o, b, times, every_sample( times, 3 ), name );
            for ( long s = 0; s < 24; ++s )
            {
                ASSERT_EQ( r.status( s ), ode::SolverStatus::success ) << name << " system " << s;
                EXPECT_GT( r.stat( ode::stat_steps, s ), 20 ) << name;
            }
        }
    // A checkpoint of a float run does not restart a double run.
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    ode::SolverOptions single;
    single.method = ode::Method::rodas5p;
    single.precision = ode::Precision::single_precision;
    ode::SolverOptions twice = single;
    twice.precision = ode::Precision::double_precision;
    Solver solver_float( system, single ), solver_double( system, twice );
    const std::string path = scratch( "rosenbrock_precision" );
    {
        Integration run( solver_float, exec, b.x0, b.k, times );
        run.advance_to( exec, 5 );
        io::write_checkpoint( run, path );
    }
    Integration other( solver_double, exec, b.x0, b.k, times );
    try
    {
        io::restart_from_checkpoint( other, path );
        ADD_FAILURE() << "a float checkpoint restarted a double run";
    }
    catch ( const core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "precision" ), std::string::npos ) << e.what();
    }
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, ode_checkpoint_batched_robertson_bit_identical_at_every_sample )
{
    const auto net = test::robertson_network();
    const auto times = robertson_times();
    const Batch b = batch_of( net, 24 );
    ode::SolverOptions o;
    o.mode = ode::ExecutionMode::batched;
    o.stiff_method = ode::Method::bdf; // the general path's BDF state (the register kernel's is tested below)
    o.relative_tolerance = 1e-6;
    o.absolute_tolerance = { 1e-10 };
    const auto r = check_restarts( net, o, b, times, every_sample( times ), "batched_robertson" );
    for ( long s = 0; s < 24; ++s )
    {
        ASSERT_EQ( r.status( s ), ode::SolverStatus::success ) << s;
        EXPECT_GE( r.stat( ode::stat_switches_to_bdf, s ), 1 ) << s;
        EXPECT_GT( r.stat( ode::stat_bdf_steps, s ), 0 ) << s;
    }
    // Mass stays 1 at the end (the run is a real Robertson integration).
    EXPECT_NEAR( r.samples( 0, times.size() - 1, 0 ) + r.samples( 0, times.size() - 1, 1 ) + r.samples( 0, times.size() - 1, 2 ),
                 1.0, 1e-6 );

    // At a late pause every system is in BDF above order 1 with a Jacobian it keeps using after the
    // restart: what the checkpoint holds is what the next step reads.
    ode::MassActionSystem<Mem> system( net );
    Solver solver( system, o );
    const PausedState p = paused_state( solver, b, times, 18 );
    int high_order = 0, reused = 0;
    for ( std::size_t s = 0; s < p.order.size(); ++s )
    {
        EXPECT_EQ( p.flags[s * 6], 1 ) << "system " << s << " is in BDF at t = " << times[17];
        high_order += p.order[s] > 1;
        reused += p.flags[s * 6 + 1];
    }
    EXPECT_GT( high_order, 0 );
    EXPECT_GT( reused, 0 );
}

// The batched mode's two layouts of the general path (BatchedLayout): a run checkpointed in one and restored
// in the other. On a host backend (one lane: the same arithmetic) it finishes bit for bit as the
// uninterrupted run of either; on a GPU the layouts round differently, so the restore is refused, naming
// 'on_chip_lanes'. Each layout's own checkpoints restart bit for bit (check_restarts).
TEST( TEST_CATEGORY, ode_checkpoint_across_batched_layouts )
{
    constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
    const auto net = test::robertson_network();
    const auto times = robertson_times( 12 );
    const Batch b = batch_of( net, 6 );
    ode::SolverOptions o;
    o.mode = ode::ExecutionMode::batched;
    o.method = ode::Method::bdf;
    o.relative_tolerance = 1e-7;
    o.absolute_tolerance = { 1e-12 };
    ode::SolverOptions on_chip = o, interleaved = o;
    on_chip.batched_layout = ode::BatchedLayout::on_chip;
    interleaved.batched_layout = ode::BatchedLayout::interleaved;
    check_restarts( net, on_chip, b, times, { 0, 5, 11, 12 }, "on_chip_layout" );
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    for ( const bool from_on_chip : { true, false } )
    {
        Solver writer( system, from_on_chip ? on_chip : interleaved ), reader( system, from_on_chip ? interleaved : on_chip );
        const std::string what = from_on_chip ? "on chip -> interleaved" : "interleaved -> on chip";
        const std::string path = scratch( "across_layouts" );
        {
            Integration first( writer, exec, b.x0, b.k, times );
            first.advance_to( exec, 5 );
            io::write_checkpoint( first, path );
        }
        Integration resumed( reader, exec, b.x0, b.k, times );
        try
        {
            io::restart_from_checkpoint( resumed, path );
            EXPECT_TRUE( host ) << what << ": accepted on a GPU";
            resumed.advance_to( exec, static_cast<int>( times.size() ) );
            expect_same( resumed.result( exec ), reader.solve( exec, b.x0, b.k, times ), what );
            expect_same( resumed.result( exec ), writer.solve( exec, b.x0, b.k, times ), what + " (the writer's layout)" );
        }
        catch ( const core::InputError& e )
        {
            EXPECT_FALSE( host ) << what << ": " << e.what();
            EXPECT_NE( std::string( e.what() ).find( "on_chip_lanes" ), std::string::npos ) << what << ": " << e.what();
        }
        std::remove( path.c_str() );
    }
}

// The Rosenbrock methods' dense output across a restart: Robertson sampled densely in its fast transient
// (many samples inside one step, so pauses fall inside steps and a leg fills samples of the next), in the
// register kernel and on the general path; then a checkpoint of a dense-output run offered to a run that
// ends steps on samples, and the other way round: refused, naming sample_output.
TEST( TEST_CATEGORY, ode_checkpoint_dense_output )
{
    const auto net = test::robertson_network();
    std::vector<double> times{ 0.0 };
    for ( int i = 0; i < 30; ++i )
        times.push_back( 1e-6 * std::pow( 10.0, 5.0 * i / 29 ) );
    const Batch b = batch_of( net, 4 );
    ode::SolverOptions o;
    o.method = ode::Method::rodas5p;
    o.relative_tolerance = 1e-8;
    o.absolute_tolerance = { 1e-14 };
    o.sample_output = ode::SampleOutput::dense;
    for ( const auto mode : { ode::ExecutionMode::batched, ode::ExecutionMode::fine_grained } )
    {
        o.mode = mode;
        check_restarts( net, o, b, times, every_sample( times, 3 ),
                        mode == ode::ExecutionMode::batched ? "dense_register" : "dense_general" );
    }
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    ode::SolverOptions stepped = o;
    stepped.sample_output = ode::SampleOutput::step_to_sample;
    for ( const bool from_dense : { true, false } )
    {
        Solver writer( system, from_dense ? o : stepped ), reader( system, from_dense ? stepped : o );
        const std::string path = scratch( "across_sample_outputs" );
        {
            Integration first( writer, exec, b.x0, b.k, times );
            first.advance_to( exec, 10 );
            io::write_checkpoint( first, path );
        }
        Integration resumed( reader, exec, b.x0, b.k, times );
        try
        {
            io::restart_from_checkpoint( resumed, path );
            ADD_FAILURE() << ( from_dense ? "dense -> steps" : "steps -> dense" ) << ": accepted";
        }
        catch ( const core::InputError& e )
        {
            EXPECT_NE( std::string( e.what() ).find( "sample_output" ), std::string::npos ) << e.what();
        }
        std::remove( path.c_str() );
    }
}

TEST( TEST_CATEGORY, ode_checkpoint_fine_grained_dense_and_sparse )
{
    const auto net = test::robertson_network();
    const auto times = robertson_times( 12 );
    const Batch b = batch_of( net, 5 );
    ode::SolverOptions o;
    o.mode = ode::ExecutionMode::fine_grained;
    o.absolute_tolerance = { 1e-10 };
    o.linear_solver = ode::LinearSolver::dense_lu;
    check_restarts( net, o, b, times, every_sample( times, 2 ), "fine_dense" );
    o.linear_solver = ode::LinearSolver::sparse_iterative;
    check_restarts( net, o, b, times, { 1, 4, 7, 11 }, "fine_sparse" );
#if MORULA_HAVE_KOKKOSKERNELS
    o.linear_solver = ode::LinearSolver::kokkos_batched;
    check_restarts( net, o, b, times, { 3, 8 }, "fine_kokkos_batched" );
    o.mode = ode::ExecutionMode::batched;
    check_restarts( net, o, b, times, { 3, 8 }, "batched_kokkos_batched" );
#endif
}

// The Rosenbrock methods on the general path (fine-grained: one team per system), written to a file at a
// pause and resumed: the checkpoint holds f(x) in the workspace and the after-rejection flag.
TEST( TEST_CATEGORY, ode_checkpoint_general_rosenbrock )
{
    const auto net = test::robertson_network();
    const auto times = robertson_times( 10 );
    const Batch b = batch_of( net, 3 );
    for ( const auto method : { ode::Method::rodas5p, ode::Method::rosenbrock23 } )
    {
        ode::SolverOptions o;
        o.method = method;
        o.mode = ode::ExecutionMode::fine_grained;
        o.absolute_tolerance = { 1e-10 };
        check_restarts( net, o, b, times, every_sample( times, 2 ),
                        method == ode::Method::rodas5p ? "general_rodas5p" : "general_rosenbrock23" );
    }
}

TEST( TEST_CATEGORY, ode_checkpoint_switching_both_ways_near_the_pause )
{
    // The network of ode_switches_back_to_rkf45_when_stiffness_ends, sampled densely so that the switches
    // to BDF and back to RKF45 fall next to pause points; every pause point is tried.
    const auto net = test::network( { "F", "G", "S", "P" },
                                    { test::reaction( { { 0, 1 }, { 1, 1 } }, { { 2, 1 } }, 1e5 ),
                                      test::reaction( { { 2, 1 } }, { { 3, 1 } }, 0.5 ),
                                      test::reaction( { { 3, 1 } }, { { 2, 1 } }, 0.25 ) },
                                    { 1.0, 1.0, 0.0, 0.0 } );
    std::vector<double> times{ 0.0 };
    for ( int i = 0; i < 30; ++i )
        times.push_back( 1e-5 * std::pow( 10.0, 6.6 * i / 29 ) );
    const Batch b = batch_of( net, 6 );
    ode::SolverOptions o;
    o.stiff_method = ode::Method::bdf; // RKF45 <-> BDF in both modes
    o.relative_tolerance = 1e-8;
    o.stiffness_check_interval = 5;
    for ( const auto mode : { ode::ExecutionMode::batched, ode::ExecutionMode::fine_grained } )
    {
        o.mode = mode;
        const bool batched = mode == ode::ExecutionMode::batched;
        const auto r = check_restarts( net, o, b, times, every_sample( times, batched ? 1 : 3 ),
                                       batched ? "switching_batched" : "switching_fine" );
        for ( long s = 0; s < 6; ++s )
        {
            ASSERT_EQ( r.status( s ), ode::SolverStatus::success );
            EXPECT_GE( r.stat( ode::stat_switches_to_bdf, s ), 1 );
            EXPECT_GE( r.stat( ode::stat_switches_to_rkf, s ), 1 );
        }
    }
}

TEST( TEST_CATEGORY, ode_checkpoint_fixed_step_bdf_and_failed_systems )
{
    // The paper's fixed-step BDF, and a batch in which systems stop on max_steps at different samples:
    // a stopped system stays stopped across the restart with its status and NaN samples.
    const auto net = test::robertson_network();
    const auto times = robertson_times( 10 );
    const Batch b = batch_of( net, 4 );
    ode::SolverOptions paper = ode::SolverOptions::paper();
    paper.mode = ode::ExecutionMode::batched;
    check_restarts( net, paper, b, { 0.0, 0.5, 1.0, 2.0, 5.0 }, { 1, 2, 3, 4 }, "paper_fixed_step" );
    ode::SolverOptions o;
    o.stiff_method = ode::Method::bdf;
    o.max_steps = 300;
    const auto r = check_restarts( net, o, b, times, every_sample( times ), "max_steps" );
    EXPECT_EQ( r.status( 0 ), ode::SolverStatus::max_steps );
}

TEST( TEST_CATEGORY, ode_checkpoint_automatic_register_kernel_both_ways )
{
    // Method::automatic in the register kernel (RKF45 <-> Rodas5P): F + G -> S at 1e5 with G in excess and
    // G -> W at rate 1 is stiff until t ~ 10 and not after; every pause point is tried, so the state row's
    // stiff flag, stiffness runs and steps since the last check all cross a restart. Then a batch stopped
    // by max_steps (Robertson, whose systems need more than 40 steps).
    const auto net = test::network( { "F", "G", "S", "W" },
                                    { test::reaction( { { 0, 1 }, { 1, 1 } }, { { 2, 1 } }, 1e5 ),
                                      test::reaction( { { 1, 1 } }, { { 3, 1 } }, 1.0 ) },
                                    { 1.0, 2.0, 0.0, 0.0 } );
    std::vector<double> times{ 0.0 };
    for ( int i = 0; i < 24; ++i )
        times.push_back( 1e-5 * std::pow( 10.0, 6.6 * i / 23 ) );
    const Batch b = batch_of( net, 6 );
    ode::SolverOptions o;
    o.relative_tolerance = 1e-8;
    o.absolute_tolerance = { 1e-16 };
    o.stiffness_check_interval = 5;
    ASSERT_EQ( ode::automatic_stiff_method( o, 4, 2, true ), ode::Method::rodas5p );
    const auto r = check_restarts( net, o, b, times, every_sample( times ), "automatic_register" );
    for ( long s = 0; s < 6; ++s )
    {
        ASSERT_EQ( r.status( s ), ode::SolverStatus::success );
        EXPECT_GE( r.stat( ode::stat_switches_to_bdf, s ), 1 );
        EXPECT_GE( r.stat( ode::stat_switches_to_rkf, s ), 1 );
        EXPECT_EQ( r.stat( ode::stat_newton_iterations, s ), 0 );
    }
    const auto robertson = test::robertson_network();
    ode::SolverOptions few;
    few.max_steps = 40;
    const auto f = check_restarts( robertson, few, batch_of( robertson, 4 ), robertson_times( 10 ),
                                   every_sample( robertson_times( 10 ) ), "automatic_register_max_steps" );
    EXPECT_EQ( f.status( 0 ), ode::SolverStatus::max_steps );
}

TEST( TEST_CATEGORY, ode_checkpoint_device_wide_in_both_phases )
{
    // Robertson in the device-wide mode: RKF45 over the device first, then the hand-over to the team
    // integrator's BDF; pauses in the RKF45 phase, at the hand-over and in the BDF phase.
    const auto net = test::robertson_network();
    const auto times = robertson_times( 16 );
    const Batch b = batch_of( net, 1 );
    ode::SolverOptions o;
    o.mode = ode::ExecutionMode::device_wide;
    o.absolute_tolerance = { 1e-10 };
    const auto r = check_restarts( net, o, b, times, every_sample( times ), "device_wide", false );
    ASSERT_EQ( r.status(), ode::SolverStatus::success );
    EXPECT_GE( r.stat( ode::stat_switches_to_bdf ), 1 );
    EXPECT_GT( r.stat( ode::stat_rkf_steps ), 0 );
    EXPECT_GT( r.stat( ode::stat_bdf_steps ), 0 );
    // A non-stiff device-wide run that stays in RKF45 (paused and resumed in that phase only).
    const auto chain = test::network( { "A", "B" }, { test::reaction( { { 0, 1 } }, { { 1, 1 } }, 1.0 ) }, { 1.0, 0.0 } );
    check_restarts( chain, o, batch_of( chain, 1 ), { 0.0, 0.25, 0.5, 1.0, 2.0, 4.0 }, { 0, 1, 3, 5, 6 }, "device_wide_rkf", true );
}

TEST( TEST_CATEGORY, ode_checkpoint_refuses_other_runs )
{
    const auto net = test::robertson_network();
    const auto times = robertson_times( 8 );
    const Batch b = batch_of( net, 3 );
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    ode::SolverOptions o;
    Solver solver( system, o );
    const std::string path = scratch( "refusals" );
    {
        Integration run( solver, exec, b.x0, b.k, times );
        run.advance_to( exec, 4 );
        io::write_checkpoint( run, path );
    }
    auto message = [&]( Integration& run ) -> std::string {
        try
        {
            io::restart_from_checkpoint( run, path );
        }
        catch ( const core::InputError& e )
        {
            return e.what();
        }
        return "";
    };
    // Another tolerance: the parameter, both values and the file are named.
    ode::SolverOptions tighter = o;
    tighter.relative_tolerance = 1e-8;
    Solver other_solver( system, tighter );
    Integration tight( other_solver, exec, b.x0, b.k, times );
    const std::string m1 = message( tight );
    EXPECT_NE( m1.find( "relative_tolerance" ), std::string::npos ) << m1;
    EXPECT_NE( m1.find( path ), std::string::npos ) << m1;
    EXPECT_NE( m1.find( "1e-06" ), std::string::npos ) << m1;
    EXPECT_NE( m1.find( "1e-08" ), std::string::npos ) << m1;
    // Other rate constants of one system.
    const Batch other = batch_of( net, 3 );
    auto k = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), other.k );
    k( 2, 1 ) *= 2.0;
    Kokkos::deep_copy( other.k, k );
    Integration changed( solver, exec, b.x0, other.k, times );
    const std::string m2 = message( changed );
    EXPECT_NE( m2.find( "rate_constants" ), std::string::npos ) << m2;
    // Other sample times (the end of the run defines BDF's last step).
    auto longer = times;
    longer.push_back( 1e8 );
    Integration extended( solver, exec, b.x0, b.k, longer );
    EXPECT_NE( message( extended ).find( "sample_times" ), std::string::npos );
    // Another mode.
    ode::SolverOptions fine = o;
    fine.mode = ode::ExecutionMode::fine_grained;
    Solver fine_solver( system, fine );
    Integration fine_run( fine_solver, exec, b.x0, b.k, times );
    EXPECT_NE( message( fine_run ).find( "'mode'" ), std::string::npos );
    // The same method (automatic) on the other stiff path: the register kernel's state is not BDF's.
    ode::SolverOptions with_bdf = o;
    with_bdf.stiff_method = ode::Method::bdf;
    Solver bdf_solver( system, with_bdf );
    Integration bdf_run( bdf_solver, exec, b.x0, b.k, times );
    const std::string m4 = message( bdf_run );
    EXPECT_NE( m4.find( "'stiff_method'" ), std::string::npos ) << m4;
    // Another model's checkpoint.
    {
        io::CheckpointWriter lattice( "lattice" );
        lattice.put_scalar( "step", std::int64_t( 3 ) );
        lattice.write( path );
    }
    Integration same( solver, exec, b.x0, b.k, times );
    const std::string m3 = message( same );
    EXPECT_NE( m3.find( "lattice" ), std::string::npos ) << m3;
    EXPECT_NE( m3.find( path ), std::string::npos ) << m3;
    std::remove( path.c_str() );
}

// Per-system sample times (each system its own end): a run paused after every sample, checkpointed and
// resumed equals the uninterrupted run, on the register kernel and the general batched path; a restart
// with one system's end moved is refused naming 'sample_times' (every row is a parameter of the run).
TEST( TEST_CATEGORY, ode_checkpoint_per_system_times )
{
    const auto net = test::robertson_network();
    const long systems = 4;
    const int samples = 7;
    const Batch b = batch_of( net, systems );
    Matrix rows( "times", systems, samples );
    auto h = Kokkos::create_mirror_view( rows );
    for ( long s = 0; s < systems; ++s )
        for ( int i = 0; i < samples; ++i )
            h( s, i ) = i == 0 ? 0.0 : 1e-4 * std::pow( 10.0, ( 3.0 + 2.0 * s ) * i / ( samples - 1 ) ); // ends 0.1 to 1e5
    Kokkos::deep_copy( rows, h );
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    for ( const auto stiff : { ode::Method::automatic, ode::Method::bdf } )
    {
        ode::SolverOptions o;
        o.mode = ode::ExecutionMode::batched;
        o.stiff_method = stiff; // automatic: Rodas5P in the register kernel; bdf: the general path
        Solver solver( system, o );
        const std::string name = stiff == ode::Method::bdf ? "per_system_times_bdf" : "per_system_times_rodas5p";
        const auto reference = solver.solve( exec, b.x0, b.k, rows );
        Integration full( solver, exec, b.x0, b.k, rows );
        full.advance_to( exec, samples );
        expect_same( full.result( exec ), reference, name + ": OdeIntegration vs OdeSolver::solve" );
        const auto full_entries = entries_of( full );
        const std::string path = scratch( name );
        for ( int pause = 0; pause <= samples; ++pause )
        {
            {
                Integration first( solver, exec, b.x0, b.k, rows );
                first.advance_to( exec, pause );
                io::write_checkpoint( first, path );
            }
            Integration resumed( solver, exec, b.x0, b.k, rows );
            io::restart_from_checkpoint( resumed, path );
            resumed.advance_to( exec, samples );
            EXPECT_EQ( io::first_difference( full_entries, entries_of( resumed ) ), "" ) << name << ", pause " << pause;
            expect_same( resumed.result( exec ), reference, name + ", paused after sample " + std::to_string( pause ) );
        }
        Matrix moved( "moved", systems, samples );
        Kokkos::deep_copy( moved, rows );
        auto hm = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), moved );
        hm( 2, samples - 1 ) *= 2.0;
        Kokkos::deep_copy( moved, hm );
        Integration other( solver, exec, b.x0, b.k, moved );
        std::string message;
        try
        {
            io::restart_from_checkpoint( other, path );
        }
        catch ( const core::InputError& e )
        {
            message = e.what();
        }
        EXPECT_NE( message.find( "parameter 'sample_times'" ), std::string::npos ) << message;
        EXPECT_NE( message.find( "(entry " + std::to_string( 2 * samples + samples - 1 ) + " of " + std::to_string( systems * samples ) ),
                   std::string::npos )
            << message;
        std::remove( path.c_str() );
    }
}

TEST( TEST_CATEGORY, ode_checkpoint_general_model_gene_network )
{
    // A model other than mass action (the epidermis gene network, one system per cell with its own
    // inputs) through the same OdeIntegration, batched and fine-grained, paused at every sample.
    using Gene = ode::EpidermisGeneNetwork<Mem>;
    using GeneIntegration = ode::OdeIntegration<Exec, Mem, Gene>;
    const int cells = 16, n = ode::gene_species_count;
    Matrix x0( "x0", cells, n ), in( "in", cells, ode::input_count );
    auto hx = Kokkos::create_mirror_view( x0 );
    auto hin = Kokkos::create_mirror_view( in );
    for ( int c = 0; c < cells; ++c )
    {
        for ( int i = 0; i < n; ++i )
            hx( c, i ) = 0.1 + 0.05 * ( ( c * 7 + i * 3 ) % 11 );
        for ( int j = 0; j < ode::input_count; ++j )
            hin( c, j ) = j == ode::input_adhesion ? 0.7 * ( c % 5 ) : 0.1 * ( ( c + j ) % 7 );
    }
    Kokkos::deep_copy( x0, hx );
    Kokkos::deep_copy( in, hin );
    const std::vector<double> times{ 0.0, 0.5, 1.0, 5.0, 10.0, 50.0, 100.0, 500.0 };
    Exec exec;
    Gene model;
    const std::string path = scratch( "gene_network" );
    for ( const auto mode : { ode::ExecutionMode::batched, ode::ExecutionMode::fine_grained } )
    {
        ode::SolverOptions o;
        o.relative_tolerance = 1e-7;
        o.mode = mode;
        ode::OdeSolver<Exec, Mem, Gene> solver( model, o );
        const auto reference = solver.solve( exec, x0, in, times );
        for ( int k = 0; k <= static_cast<int>( times.size() ); ++k )
        {
            {
                GeneIntegration first( solver, exec, x0, in, times );
                first.advance_to( exec, k );
                io::write_checkpoint( first, path );
            }
            GeneIntegration resumed( solver, exec, x0, in, times );
            io::restart_from_checkpoint( resumed, path );
            resumed.advance_to( exec, static_cast<int>( times.size() ) );
            expect_same( resumed.result( exec ), reference, "gene network, paused after sample " + std::to_string( k ) );
        }
    }
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, ode_checkpoint_files_are_byte_deterministic )
{
    // Two runs to the same pause write the same entries (the workspace holds no stale memory).
    const auto net = test::robertson_network();
    const auto times = robertson_times( 8 );
    const Batch b = batch_of( net, 7 );
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    ode::SolverOptions o;
    Solver solver( system, o );
    Integration a( solver, exec, b.x0, b.k, times ), c( solver, exec, b.x0, b.k, times );
    a.advance_to( exec, 5 );
    c.advance_to( exec, 2 );
    c.advance_to( exec, 5 );
    EXPECT_EQ( io::first_difference( entries_of( a ), entries_of( c ) ), "" );
}

// advance( exec, n ) counts samples, as every driver's advance() counts steps; advance_to() takes a
// sample index. checkpoint( exec, out ) fences the caller's instance and writes what checkpoint( out ) does.
TEST( TEST_CATEGORY, ode_integration_advance_counts_samples )
{
    const auto net = test::robertson_network();
    const auto times = robertson_times( 8 ); // 9 samples
    const Batch b = batch_of( net, 5 );
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    ode::SolverOptions o;
    Solver solver( system, o );
    Integration counted( solver, exec, b.x0, b.k, times ), indexed( solver, exec, b.x0, b.k, times );
    counted.advance( exec, 3 );
    counted.advance( exec, 0 );
    counted.advance( exec, 2 );
    EXPECT_EQ( counted.samples_done(), 5 );
    indexed.advance_to( exec, 5 );
    indexed.advance_to( exec, 2 ); // an index already passed: nothing
    EXPECT_EQ( indexed.samples_done(), 5 );
    io::CheckpointWriter mine( Integration::checkpoint_model );
    counted.checkpoint( exec, mine );
    EXPECT_EQ( io::first_difference( mine.entries(), entries_of( indexed ) ), "" );
    for ( const long long bad : { -1LL, 5LL } ) // 4 samples left
    {
        try
        {
            counted.advance( exec, bad );
            ADD_FAILURE() << "advance( exec, " << bad << " ) did not throw";
        }
        catch ( const core::InputError& e )
        {
            const std::string what = e.what();
            EXPECT_NE( what.find( "n = " + std::to_string( bad ) ), std::string::npos ) << what;
            EXPECT_NE( what.find( "expected 0 to 4" ), std::string::npos ) << what;
        }
    }
    EXPECT_EQ( counted.samples_done(), 5 );
    counted.advance( exec, 4 );
    EXPECT_TRUE( counted.finished() );
    indexed.advance_to( exec, 100 ); // past the end: all of them
    expect_same( counted.result( exec ), indexed.result( exec ), "advance and advance_to" );
}

#else

// Without HDF5 a checkpoint is refused up front, naming what is missing and how to get it.
TEST( TEST_CATEGORY, ode_checkpoint_needs_hdf5 )
{
    const auto net = test::robertson_network();
    const std::vector<double> times{ 0.0, 1.0, 10.0 };
    Kokkos::View<double**, Kokkos::LayoutLeft, Mem> x0( "x0", 1, 3 );
    Kokkos::deep_copy( x0, 0.5 );
    Exec exec;
    ode::MassActionSystem<Mem> system( net );
    Solver solver( system, ode::SolverOptions() );
    Integration run( solver, exec, x0, Matrix(), times );
    run.advance_to( exec, 1 );
    try
    {
        io::write_checkpoint( run, "morula_ode_checkpoint_without_hdf5.h5" );
        ADD_FAILURE() << "a checkpoint was written without HDF5";
    }
    catch ( const core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "without HDF5" ), std::string::npos ) << e.what();
        EXPECT_NE( std::string( e.what() ).find( "Morula_ENABLE_HDF5=ON" ), std::string::npos ) << e.what();
    }
}

#endif

} // namespace
