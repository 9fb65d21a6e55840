// A small new model on Morula's driver framework (core::ModelDriver, core/Driver.hpp): bacterial
// cultures in many wells of a chemostat plate, each growing logistically at its own rate r_i to the
// carrying capacity K while the medium is diluted at rate D,
//
//     dN_i/dt = r_i N_i (1 - N_i / K) - D N_i,
//
// stepped by explicit Euler in two phases. The model writes only its state and its phases; the
// framework gives it step(exec, timed), advance(exec, n), the step count, the phase timer with its
// profiling regions ("example::Chemostat::growth", ...) and the merged report of an advance.
//
//   new_model [wells]   runs to steady state, prints the phase times and checks every well against the
//                       analytic steady state N_i* = K (1 - D / r_i) (exit 1 if any is off)
#include <morula/Morula.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

// 1. The phases, declared once: indices in step order, the scope and the names of the profiling regions.
struct ChemostatPhase
{
    enum : int
    {
        growth, // each well's net growth rate
        update  // the Euler update, summing the biomass
    };
    static constexpr const char* scope = "example::Chemostat";
    static constexpr const char* names[] = { "growth", "update" };
};

// 2. What a step reports; merge() says how advance() sums its steps.
struct ChemostatReport : morula::core::StepReport
{
    double biomass = 0; // after the step
    void merge( const ChemostatReport& later ) { biomass = later.biomass; }
};

// 3. The model: its state (Views in the memory space it is given) and its step as phases.
template <class MemorySpace>
class Chemostat : public morula::core::ModelDriver<Chemostat<MemorySpace>, ChemostatPhase, ChemostatReport>
{
  public:
    Chemostat( int wells, double capacity, double dilution, double dt )
        : m_cells( "example::cells", wells )
        , m_rate( "example::rate", wells )
        , m_net( "example::net", wells )
        , m_capacity( capacity )
        , m_dilution( dilution )
        , m_dt( dt )
    {
        if ( wells <= 0 || !( capacity > 0 ) || !( dilution >= 0 ) || !( dt > 0 ) )
            throw morula::core::InputError( "Chemostat: wells, capacity and dt must be > 0, dilution >= 0" );
        auto rate = Kokkos::create_mirror_view( m_rate );
        for ( int i = 0; i < wells; ++i )
            rate( i ) = 1.0 + 0.5 * i / wells; // growth rates from 1 to 1.5 per hour, all above D
        Kokkos::deep_copy( m_rate, rate );
        Kokkos::deep_copy( m_cells, 0.01 * capacity ); // a small inoculum in every well
    }

    // The step, phase by phase; `phase( index, op )` runs op as that phase (timed when the step is).
    // Public: nvcc allows device lambdas in public member functions only.
    template <class ExecutionSpace, class Phases>
    void step_phases( const ExecutionSpace& exec, Phases& phase, ChemostatReport& report )
    {
        const auto cells = m_cells, rate = m_rate, net = m_net;
        const double K = m_capacity, D = m_dilution, dt = m_dt;
        const Kokkos::RangePolicy<ExecutionSpace> wells( exec, 0, static_cast<int>( cells.extent( 0 ) ) );
        phase( ChemostatPhase::growth, [&] {
            Kokkos::parallel_for( "example::Chemostat::growth", wells, KOKKOS_LAMBDA( int i ) {
                net( i ) = rate( i ) * cells( i ) * ( 1.0 - cells( i ) / K ) - D * cells( i );
            } );
        } );
        report.biomass = phase( ChemostatPhase::update, [&] {
            double sum = 0;
            Kokkos::parallel_reduce(
                "example::Chemostat::update", wells,
                KOKKOS_LAMBDA( int i, double& s ) {
                    cells( i ) += dt * net( i );
                    s += cells( i );
                },
                sum );
            return sum;
        } );
    }

    const Kokkos::View<double*, MemorySpace>& cells() const { return m_cells; }
    const Kokkos::View<double*, MemorySpace>& rates() const { return m_rate; }

  private:
    Kokkos::View<double*, MemorySpace> m_cells, m_rate, m_net;
    double m_capacity, m_dilution, m_dt;
};

int main( int argc, char* argv[] )
{
    Kokkos::ScopeGuard guard( argc, argv );
    using exec = Kokkos::DefaultExecutionSpace;
    const int wells = argc > 1 ? std::atoi( argv[1] ) : 96 * 100;
    const double K = 1e9, D = 0.4, dt = 0.01; // cells per ml, per hour, hours
    Chemostat<exec::memory_space> plate( wells, K, D, dt );
    static_assert( morula::core::is_driver_v<Chemostat<exec::memory_space>, exec> );

    const exec space;
    plate.advance( space, 100 );     // warm-up: one hour, untimed
    for ( int s = 0; s < 100; ++s ) // one timed hour
        plate.step( space, true );
    const auto rest = plate.advance( space, 5800 ); // to 60 hours
    const auto& t = plate.times();
    std::printf( "%d wells, %lld steps, biomass %.6g cells/ml\n", wells, plate.steps_done(), rest.biomass );
    std::printf( "per timed step: growth %.2f us, update %.2f us (%s)\n",
                 1e6 * t.seconds( ChemostatPhase::growth ) / t.steps(),
                 1e6 * t.seconds( ChemostatPhase::update ) / t.steps(), exec::name() );

    // Each well's fixed point of the Euler map is the ODE's steady state N* = K (1 - D / r).
    auto cells = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), plate.cells() );
    auto rates = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), plate.rates() );
    double worst = 0;
    for ( int i = 0; i < wells; ++i )
    {
        const double steady = K * ( 1.0 - D / rates( i ) );
        worst = std::fmax( worst, std::fabs( cells( i ) - steady ) / steady );
    }
    std::printf( "largest relative distance from the analytic steady state: %.2e\n", worst );
    if ( !( worst < 1e-6 ) || plate.steps_done() != 6000 )
    {
        std::printf( "FAILED: expected every well within 1e-6 of K (1 - D / r) after 6000 steps\n" );
        return 1;
    }
    return 0;
}
