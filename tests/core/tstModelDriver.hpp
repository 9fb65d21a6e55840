#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace morula_test_model_driver
{
using namespace morula;

// A model written on the framework as a user would: first-order decay dx/dt = -k x of n independent
// values, explicit Euler, in two phases (the rates, then the update), so that the exact answer after s
// steps is x0 (1 - k dt)^s and the phases' order matters.
struct DecayPhase
{
    enum : int
    {
        rates,
        update
    };
    static constexpr const char* scope = "test::Decay";
    static constexpr const char* names[] = { "rates", "update" };
    static constexpr const char* counts[] = { "values" };
};

struct DecayReport : core::StepReport
{
    double total = 0;   // sum of the values after the step
    long long updates = 0;
    void merge( const DecayReport& other )
    {
        total = other.total; // the last step's
        updates += other.updates;
    }
};

template <class MemorySpace>
class Decay : public core::ModelDriver<Decay<MemorySpace>, DecayPhase, DecayReport>
{
  public:
    Decay( int n, double k, double dt )
        : m_x( "test::Decay::x", n )
        , m_rate( "test::Decay::rate", n )
        , m_k( k )
        , m_dt( dt )
    {
        Kokkos::deep_copy( m_x, 1.0 );
    }

    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, DecayReport& report )
    {
        const auto x = m_x;
        const auto rate = m_rate;
        const double k = m_k, dt = m_dt;
        const int n = static_cast<int>( x.extent( 0 ) );
        phase( DecayPhase::rates, [&] {
            Kokkos::parallel_for( "test::Decay::rates", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
                                  KOKKOS_LAMBDA( int i ) { rate( i ) = k * x( i ); } );
        } );
        report.total = phase( DecayPhase::update, [&] {
            double sum = 0;
            Kokkos::parallel_reduce(
                "test::Decay::update", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
                KOKKOS_LAMBDA( int i, double& s ) {
                    x( i ) -= dt * rate( i );
                    s += x( i );
                },
                sum );
            return sum;
        } );
        report.updates = n;
        phase.add( 0, n );
    }

    std::vector<double> values() const
    {
        auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_x );
        return std::vector<double>( h.data(), h.data() + h.extent( 0 ) );
    }

    void restart_at( long long step ) { this->set_steps_done( step ); }

  private:
    Kokkos::View<double*, MemorySpace> m_x, m_rate;
    double m_k, m_dt;
};

static_assert( core::is_driver_v<Decay<TEST_MEMSPACE>, TEST_EXECSPACE> );

// A model that synchronises its own way around timed phases (a distributed driver adds a barrier).
struct CountedPhase
{
    enum : int
    {
        only
    };
    static constexpr const char* scope = "test::Counted";
    static constexpr const char* names[] = { "only" };
};

class Counted : public core::ModelDriver<Counted, CountedPhase, core::StepReport>
{
  public:
    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace&, Phases& phase, core::StepReport& )
    {
        phase( CountedPhase::only, [&] { ++ran; } );
    }
    template <class ExecutionSpace>
    void timing_sync( const ExecutionSpace& exec )
    {
        exec.fence();
        ++syncs;
    }
    int ran = 0, syncs = 0;
};

TEST( TEST_CATEGORY, model_driver_steps_match_the_exact_euler_solution )
{
    const double k = 3.0, dt = 0.01;
    Decay<TEST_MEMSPACE> model( 1000, k, dt );
    for ( int s = 0; s < 50; ++s )
    {
        const auto r = model.step( TEST_EXECSPACE() );
        EXPECT_EQ( r.step, s );
    }
    EXPECT_EQ( model.steps_done(), 50 );
    const double exact = std::pow( 1.0 - k * dt, 50 );
    for ( double v : model.values() )
        EXPECT_NEAR( v, exact, 1e-14 );
}

TEST( TEST_CATEGORY, model_driver_timed_and_untimed_steps_take_one_path )
{
    Decay<TEST_MEMSPACE> plain( 777, 0.5, 0.1 ), timed( 777, 0.5, 0.1 );
    for ( int s = 0; s < 20; ++s )
    {
        const auto a = plain.step( TEST_EXECSPACE() );
        const auto b = timed.step( TEST_EXECSPACE(), true );
        EXPECT_EQ( a.total, b.total ); // bit for bit
    }
    EXPECT_EQ( plain.values(), timed.values() );

    // Untimed steps leave the timer alone; timed ones fill every phase, by the declared names.
    EXPECT_EQ( plain.times().steps(), 0 );
    EXPECT_EQ( plain.times().total(), 0.0 );
    EXPECT_EQ( plain.times().count( "values" ), 0 );
    EXPECT_EQ( timed.times().steps(), 20 );
    EXPECT_EQ( timed.times().scope(), "test::Decay" );
    EXPECT_EQ( timed.times().phase_name( DecayPhase::rates ), "rates" );
    EXPECT_EQ( timed.times().phase_name( DecayPhase::update ), "update" );
    EXPECT_GT( timed.times().seconds( "rates" ), 0.0 );
    EXPECT_GT( timed.times().seconds( "update" ), 0.0 );
    EXPECT_EQ( timed.times().count( "values" ), 20 * 777 );

    timed.reset_times();
    EXPECT_EQ( timed.times().total(), 0.0 );
    EXPECT_EQ( timed.times().steps(), 0 );
    EXPECT_EQ( timed.steps_done(), 20 ); // the step count is the model's, not the timer's
}

TEST( TEST_CATEGORY, model_driver_advance_is_n_steps_with_merged_reports )
{
    Decay<TEST_MEMSPACE> stepped( 300, 2.0, 0.05 ), advanced( 300, 2.0, 0.05 );
    DecayReport last;
    for ( int s = 0; s < 17; ++s )
        last = stepped.step( TEST_EXECSPACE() );
    const auto total = advanced.advance( TEST_EXECSPACE(), 17 );
    EXPECT_EQ( stepped.values(), advanced.values() );
    EXPECT_EQ( total.step, 16 );
    EXPECT_EQ( total.total, last.total );
    EXPECT_EQ( total.updates, 17 * 300 );
    EXPECT_EQ( advanced.times().steps(), 0 ); // untimed

    // Zero steps: nothing happens, the report names the last step taken.
    const auto none = advanced.advance( TEST_EXECSPACE(), 0 );
    EXPECT_EQ( none.step, 16 );
    EXPECT_EQ( none.updates, 0 );
    EXPECT_EQ( advanced.steps_done(), 17 );

    try
    {
        advanced.advance( TEST_EXECSPACE(), -3 );
        FAIL() << "advance(-3) did not throw";
    }
    catch ( const core::InputError& e )
    {
        const std::string what = e.what();
        EXPECT_NE( what.find( "test::Decay::advance" ), std::string::npos ) << what;
        EXPECT_NE( what.find( "-3" ), std::string::npos ) << what;
    }
    EXPECT_EQ( advanced.steps_done(), 17 );
}

TEST( TEST_CATEGORY, model_driver_restart_sets_the_step_count )
{
    Decay<TEST_MEMSPACE> model( 10, 1.0, 0.1 );
    model.restart_at( 41 );
    EXPECT_EQ( model.steps_done(), 41 );
    EXPECT_EQ( model.step( TEST_EXECSPACE() ).step, 41 );
    EXPECT_EQ( model.advance( TEST_EXECSPACE(), 3 ).step, 44 );
}

TEST( TEST_CATEGORY, model_driver_timed_phases_use_the_models_synchronisation )
{
    Counted model;
    model.step( TEST_EXECSPACE() );
    EXPECT_EQ( model.ran, 1 );
    EXPECT_EQ( model.syncs, 0 ); // untimed: no synchronisation
    model.step( TEST_EXECSPACE(), true );
    EXPECT_EQ( model.ran, 2 );
    EXPECT_EQ( model.syncs, 2 ); // before and after the one phase
    model.advance( TEST_EXECSPACE(), 4 );
    EXPECT_EQ( model.ran, 6 );
    EXPECT_EQ( model.syncs, 2 );
    EXPECT_EQ( model.times().steps(), 1 );
}

} // namespace morula_test_model_driver
