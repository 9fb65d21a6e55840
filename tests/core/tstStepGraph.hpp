#include <morula/core/Error.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/core/StepGraph.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace morula_test_step_graph
{
using morula::core::LaunchRange;
using morula::core::StepGraph;
using View = Kokkos::View<double*, TEST_MEMSPACE>;
using Scalar0 = Kokkos::View<double, TEST_MEMSPACE>;

// One "step" of dependent kernels: a stage that reads a device scalar written by a reduction of the
// previous stage, as a time step's kernels do (the graph must keep their order).
void step( const TEST_EXECSPACE& exec, const View& x, const View& y, const Scalar0& largest )
{
    const int n = static_cast<int>( x.extent( 0 ) );
    Kokkos::parallel_for(
        "test_step_graph_stage", LaunchRange<TEST_EXECSPACE>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) { y( i ) = 0.5 * x( i ) + x( ( i + 1 ) % n ) / ( 1.0 + largest() ); } );
    Kokkos::parallel_reduce(
        "test_step_graph_max", LaunchRange<TEST_EXECSPACE>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, double& m ) { m = y( i ) > m ? y( i ) : m; },
        Kokkos::Max<double, TEST_MEMSPACE>( largest ) );
    Kokkos::deep_copy( exec, x, y );
}

std::vector<double> to_host( const View& v )
{
    const auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), v );
    return std::vector<double>( h.data(), h.data() + h.extent( 0 ) );
}

View initial( int n )
{
    View x( "x", n );
    // The product in long: n reaches 2^20, and i * 7919 overflows an int from i = 271183 (UBSan).
    Kokkos::parallel_for(
        "test_step_graph_init", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ),
        KOKKOS_LAMBDA( const int i ) { x( i ) = 1.0 + double( long( i ) * 7919 % 101 ) / 3.0; } );
    return x;
}

// Adds 1 to the first `length` entries (a free function: CUDA lambdas cannot sit inside test bodies' lambdas).
void add_one( const TEST_EXECSPACE& exec, const View& x, int length )
{
    Kokkos::parallel_for(
        "test_step_graph_add", LaunchRange<TEST_EXECSPACE>( exec, 0, length ),
        KOKKOS_LAMBDA( const int i ) { x( i ) += 1.0; } );
}

// Replays of the recorded steps (a device graph on CUDA with Kokkos >= 4.6.99, relaunches elsewhere)
// give bit for bit what launching the steps one by one gives, over many replays.
TEST( TEST_CATEGORY, step_graph_replays_equal_plain_launches )
{
    const int n = 4099, steps_per_replay = 3, replays = 20;
    TEST_EXECSPACE exec;
    View xa = initial( n ), ya( "ya", n ), xb = initial( n ), yb( "yb", n );
    Scalar0 la( "la" ), lb( "lb" );
    // The plain run.
    for ( int s = 0; s < steps_per_replay * replays; ++s )
        step( exec, xa, ya, la );
    // The replayed run: its first steps run plainly (kernels must have run once before a capture).
    step( exec, xb, yb, lb );
    StepGraph<TEST_EXECSPACE> graph;
    EXPECT_FALSE( graph.recorded() );
    graph.record( [=]( const TEST_EXECSPACE& e ) {
        for ( int s = 0; s < steps_per_replay; ++s )
            step( e, xb, yb, lb );
    } );
    EXPECT_TRUE( graph.recorded() );
    EXPECT_FALSE( graph.captured() );
    for ( int s = 1; s < steps_per_replay; ++s )
        step( exec, xb, yb, lb );
    for ( int r = 1; r < replays; ++r )
        graph.replay( exec );
    exec.fence();
    EXPECT_EQ( graph.captured(), StepGraph<TEST_EXECSPACE>::uses_device_graph() );
    EXPECT_EQ( graph.captures(), StepGraph<TEST_EXECSPACE>::uses_device_graph() ? 1 : 0 );
    const auto a = to_host( xa ), b = to_host( xb );
    ASSERT_EQ( a.size(), b.size() );
    for ( int i = 0; i < n; ++i )
        ASSERT_EQ( a[i], b[i] ) << i;
    // The values moved (the steps did something), and the device scalar followed.
    EXPECT_NE( a[0], to_host( initial( n ) )[0] );
    double ha = 0, hb = 0;
    Kokkos::deep_copy( ha, la );
    Kokkos::deep_copy( hb, lb );
    EXPECT_EQ( ha, hb );
}

// invalidate() drops the graph: the next replay captures again, with the Views op sees then.
TEST( TEST_CATEGORY, step_graph_invalidate_recaptures )
{
    const int n = 257;
    TEST_EXECSPACE exec;
    View x = initial( n ), y( "y", n );
    Scalar0 largest( "largest" );
    step( exec, x, y, largest );
    int length = n;
    StepGraph<TEST_EXECSPACE> graph;
    // op reads host state (length) at each capture or relaunch; invalidate() makes a graph see its change.
    graph.record( [&]( const TEST_EXECSPACE& e ) { add_one( e, x, length ); } );
    const auto before = to_host( x );
    graph.replay( exec );
    length = 100;
    graph.invalidate();
    graph.replay( exec );
    exec.fence();
    const auto after = to_host( x );
    for ( int i = 0; i < n; ++i )
        EXPECT_EQ( after[i], before[i] + ( i < 100 ? 2.0 : 1.0 ) ) << i;
    EXPECT_EQ( graph.captures(), StepGraph<TEST_EXECSPACE>::uses_device_graph() ? 2 : 0 );
}

// A reduction of 64 doubles per value: it needs far more of Kokkos' reduction scratch than any step's
// scalar reductions, so on CUDA the instance frees and reallocates its scratch buffer.
struct WideHistogram
{
    using value_type = double[];
    unsigned value_count = 64;
    int n = 0;

    KOKKOS_FUNCTION void operator()( const int i, double* v ) const { v[i % value_count] += 1.0; }
    KOKKOS_FUNCTION void init( double* v ) const
    {
        for ( unsigned k = 0; k < value_count; ++k )
            v[k] = 0.0;
    }
    KOKKOS_FUNCTION void join( double* v, const double* w ) const
    {
        for ( unsigned k = 0; k < value_count; ++k )
            v[k] += w[k];
    }
};

// A graph whose reductions point at a scratch buffer that a later kernel made Kokkos reallocate is
// captured again before it runs: its replays still equal the plain run.
TEST( TEST_CATEGORY, step_graph_recaptures_after_scratch_reallocation )
{
    const int n = 1 << 20, replays = 4;
    TEST_EXECSPACE exec;
    View xa = initial( n ), ya( "ya", n ), xb = initial( n ), yb( "yb", n );
    Scalar0 la( "la" ), lb( "lb" );
    for ( int s = 0; s < replays; ++s )
        step( exec, xa, ya, la );
    step( exec, xb, yb, lb );
    StepGraph<TEST_EXECSPACE> graph;
    graph.record( [=]( const TEST_EXECSPACE& e ) { step( e, xb, yb, lb ); } );
    graph.replay( exec );
    EXPECT_EQ( graph.current( exec ), StepGraph<TEST_EXECSPACE>::uses_device_graph() );
    std::vector<double> histogram( 64 );
    WideHistogram wide;
    wide.n = n;
    Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> result( histogram.data(), 64 );
    Kokkos::parallel_reduce( "test_step_graph_wide", Kokkos::RangePolicy<TEST_EXECSPACE>( exec, 0, n ), wide, result );
    EXPECT_EQ( histogram[5], static_cast<double>( n / 64 ) );
    // On CUDA the wide reduction grew the scratch buffer the graph's reduction used.
    EXPECT_FALSE( graph.current( exec ) );
    for ( int r = 2; r < replays; ++r )
        graph.replay( exec );
    exec.fence();
    EXPECT_EQ( graph.captures(), StepGraph<TEST_EXECSPACE>::uses_device_graph() ? 2 : 0 );
    const auto a = to_host( xa ), b = to_host( xb );
    for ( int i = 0; i < n; ++i )
        ASSERT_EQ( a[i], b[i] ) << i;
}

TEST( TEST_CATEGORY, step_graph_without_recording_throws )
{
    StepGraph<TEST_EXECSPACE> graph;
    EXPECT_THROW( graph.replay( TEST_EXECSPACE() ), morula::core::InputError );
}

} // namespace morula_test_step_graph
