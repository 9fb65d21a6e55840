/*!
  \file OdeIntegration.hpp
  \brief One integration of a batch (or of one large system) that can stop at a sample, be written to a
         checkpoint and resumed from it, taking the same steps as if it had never stopped.

  \code
  morula::ode::OdeSolver<Exec> solver( system, options );
  morula::ode::OdeIntegration<Exec> run( solver, exec, x0, k, times );  // times: the whole run's samples
  run.advance( exec, 100 );                      // 100 samples on: [0, 100) filled, every system paused after them
  morula::io::write_checkpoint( run, "run.ckpt.h5" );
  // ... later, in another process:
  morula::ode::OdeIntegration<Exec> again( solver, exec, x0, k, times );   // the same inputs
  morula::io::restart_from_checkpoint( again, "run.ckpt.h5" );
  again.advance_to( exec, again.sample_count() ); // == one OdeSolver::solve over `times`, bit for bit
  auto result = again.result( exec );
  \endcode

  The integration is defined by its whole list of sample times: BDF never steps past the last one, so a
  run over t1..tk is not the first half of a run over t1..t2k, but a run over t1..t2k paused after tk
  is. Each system's state at a pause is everything its next step reads: the state vector, t, the RKF45
  step and stiffness counters, the BDF step, order and difference array, the Jacobian and the factorised
  Newton matrix with its pivots (kept across the pause, as the uninterrupted run keeps them), and the
  statistics; in the device-wide mode also the RKF45 phase's device status, both state buffers and the
  stage rows, and after the hand-over to BDF the team integrator's state.
*/
#ifndef MORULA_ODE_ODEINTEGRATION_HPP
#define MORULA_ODE_ODEINTEGRATION_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/ode/OdeResult.hpp>
#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/detail/BatchIntegration.hpp>
#include <morula/ode/detail/DeviceWideIntegration.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace morula::ode
{

template <class ExecutionSpace, class MemorySpace = typename ExecutionSpace::memory_space,
          class Model = MassActionSystem<MemorySpace>>
class OdeIntegration
{
  public:
    using Solver = OdeSolver<ExecutionSpace, MemorySpace, Model>;
    using matrix_type = typename Solver::matrix_type;
    static constexpr const char* checkpoint_model = "ode";

    /*!
      The integration `solver.solve( exec, initial_states, rate_constants, sample_times, saved, t_start )`
      would run, not started yet. The solver's system, options and these inputs are the run's
      parameters: a checkpoint is restored only into an integration made from the same ones.
      \throws core::InputError as OdeSolver::solve
    */
    OdeIntegration( const Solver& solver, const ExecutionSpace& exec, const matrix_type& initial_states,
                    const matrix_type& rate_constants, const std::vector<double>& sample_times,
                    const std::vector<int>& saved_species = {}, double t_start = 0.0 )
        : m_solver( solver )
        , m_initial_states( initial_states )
        , m_rate_constants( rate_constants )
        , m_times( sample_times )
        , m_sample_count( static_cast<int>( sample_times.size() ) )
        , m_t_start( t_start )
    {
        m_saved = m_solver.checked_inputs( initial_states, rate_constants, sample_times, saved_species, t_start );
        start( exec, detail::shared_sample_times<MemorySpace>( sample_times ), sample_times );
    }

    /*!
      The integration with a row of sample times per system (`solver.solve` with a times_type): each
      system runs to its own last time. The checkpoint's parameter 'sample_times' holds every row.
      \throws core::InputError as OdeSolver::solve
    */
    OdeIntegration( const Solver& solver, const ExecutionSpace& exec, const matrix_type& initial_states,
                    const matrix_type& rate_constants, const typename Solver::times_type& sample_times,
                    const std::vector<int>& saved_species = {}, double t_start = 0.0 )
        : m_solver( solver )
        , m_initial_states( initial_states )
        , m_rate_constants( rate_constants )
        , m_time_rows( sample_times )
        , m_sample_count( static_cast<int>( sample_times.extent( 1 ) ) )
        , m_t_start( t_start )
    {
        m_saved = m_solver.checked_inputs( exec, initial_states, rate_constants, sample_times, saved_species, t_start );
        // The rows stay on the device; a checkpoint copies them to the host when it records them.
        // System 0's row as a list: the device-wide mode's one system steps from the host.
        const bool device_wide = m_solver.m_options.mode == ExecutionMode::device_wide && sample_times.extent( 0 ) > 0;
        start( exec, detail::per_system_sample_times<MemorySpace>( sample_times ),
               device_wide ? detail::host_row( sample_times, 0 ) : std::vector<double>() );
    }

    //! The number of sample times of the whole run.
    int sample_count() const { return m_sample_count; }
    //! Samples [0, samples_done()) are filled (or were never reached by a system that failed).
    int samples_done() const { return m_samples_done; }
    bool finished() const { return m_samples_done >= sample_count(); }

    /*!
      \brief Integrates every system over the next `n` samples (a count, as every driver's advance()).
      \throws core::InputError if n < 0 or more than the samples left (naming both)
    */
    void advance( const ExecutionSpace& exec, long long n )
    {
        const long long left = sample_count() - m_samples_done;
        if ( n < 0 || n > left )
            throw core::InputError( core::detail::concat( "OdeIntegration::advance: n = ", n, " samples; expected 0 to ",
                                                          left, " (the samples left of ", sample_count(), ")" ) );
        advance_to( exec, m_samples_done + static_cast<int>( n ) );
    }

    //! Integrates every system until the samples before `stop` are filled (an absolute sample index;
    //! stop > sample_count(): all; stop <= samples_done(): nothing).
    void advance_to( const ExecutionSpace& exec, int stop )
    {
        stop = stop < sample_count() ? stop : sample_count();
        if ( stop <= m_samples_done && m_started )
            return;
        compat::ScopedRegion region( "morula::ode::OdeIntegration::advance" );
        if ( m_batch )
            m_batch->advance( exec, stop );
        else if ( m_rosenbrock )
            m_rosenbrock->advance( exec, stop );
        else
            m_device_wide->advance( exec, stop );
        m_started = true;
        m_samples_done = stop > m_samples_done ? stop : m_samples_done;
    }

    //! The samples so far (NaN where not reached yet) and each system's statistics so far (status
    //! success while a system is paused), as OdeSolver::solve returns them at the end.
    OdeResult<MemorySpace> result( const ExecutionSpace& exec ) const
    {
        if ( m_batch )
            return m_batch->result();
        if ( m_rosenbrock )
            return m_rosenbrock->result();
        return m_device_wide->result( exec );
    }

    //! checkpoint( exec, out ) on a default instance of the execution space (io::write_checkpoint's call).
    void checkpoint( io::CheckpointWriter& out ) const { checkpoint( ExecutionSpace(), out ); }

    /*!
      Writes the run's parameters (under "run/") and its whole state. Fences `exec` (the instance the run
      advanced on) and copies from the device.
    */
    void checkpoint( const ExecutionSpace& exec, io::CheckpointWriter& out ) const
    {
        exec.fence();
        put_parameters( out );
        out.put_scalar( "samples_done", static_cast<std::int32_t>( m_samples_done ) );
        out.put_scalar( "started", static_cast<std::uint8_t>( m_started ? 1 : 0 ) );
        if ( m_batch )
            m_batch->checkpoint( exec, out, "batch/" );
        else if ( m_rosenbrock )
            m_rosenbrock->checkpoint( exec, out, "rosenbrock/" );
        else
            m_device_wide->checkpoint( exec, out );
    }

    /*!
      Resumes from a checkpoint of an integration with the same parameters.
      \throws core::InputError naming the file and the first parameter that differs, with both values
    */
    void restart( const io::CheckpointReader& in )
    {
        const ExecutionSpace exec;
        check_parameters( in );
        const int done = in.scalar<std::int32_t>( "samples_done" );
        if ( done < 0 || done > sample_count() )
            in.fail( core::detail::concat( "'samples_done' = ", done, "; expected 0 to ", sample_count() ) );
        if ( m_batch )
            m_batch->restart( exec, in, "batch/" );
        else if ( m_rosenbrock )
            m_rosenbrock->restart( exec, in, "rosenbrock/" );
        else
            m_device_wide->restart( exec, in, done );
        m_samples_done = done;
        m_started = in.scalar<std::uint8_t>( "started" ) != 0;
    }

  private:
    using Batch = detail::BatchIntegration<ExecutionSpace, MemorySpace, Model>;
    using DeviceWide = detail::DeviceWideIntegration<ExecutionSpace, MemorySpace>;
    using Rosenbrock = detail::RosenbrockIntegration<ExecutionSpace, MemorySpace>;

    //! Makes the integration of the path the options choose, from validated inputs; `first_times` is
    //! system 0's list on the host (the device-wide mode integrates one system, stepping from the host).
    void start( const ExecutionSpace& exec, const detail::SampleTimes<MemorySpace>& times, const std::vector<double>& first_times )
    {
        const auto& options = m_solver.m_options;
        const matrix_type& initial_states = m_initial_states;
        const matrix_type& rate_constants = m_rate_constants;
        const double t_start = m_t_start;
        if ( m_solver.uses_register_kernel() )
        {
            if constexpr ( Solver::is_mass_action ) // the solver refused any other model
                m_rosenbrock = std::make_unique<Rosenbrock>( exec, m_solver.m_system, options, m_solver.m_atol, initial_states,
                                                             rate_constants, times, m_saved, t_start, true );
        }
        else if ( options.mode == ExecutionMode::device_wide )
        {
            if ( initial_states.extent( 0 ) != 1 )
                throw core::InputError( core::detail::concat( "OdeIntegration: the device-wide mode integrates one system; got ",
                                                              initial_states.extent( 0 ) ) );
            if constexpr ( Solver::is_mass_action )
            {
                auto driver = std::make_shared<detail::DeviceWideDriver<ExecutionSpace, MemorySpace>>(
                    m_solver.m_system, options, m_solver.m_atol );
                const auto x0 = Kokkos::subview( initial_states, 0, Kokkos::ALL );
                if ( rate_constants.extent( 0 ) > 0 )
                    m_device_wide = std::make_unique<DeviceWide>( exec, driver, m_solver.m_system, options, m_solver.m_device,
                                                                  m_solver.m_atol, x0, Kokkos::subview( rate_constants, 0, Kokkos::ALL ),
                                                                  first_times, m_saved, t_start, true );
                else
                    m_device_wide = std::make_unique<DeviceWide>( exec, driver, m_solver.m_system, options, m_solver.m_device,
                                                                  m_solver.m_atol, x0, m_solver.m_system.rate_constants, first_times,
                                                                  m_saved, t_start, true );
            }
            else
                throw core::InputError( "OdeIntegration: the device-wide mode is for mass-action systems" );
        }
        else
            m_batch = std::make_unique<Batch>( exec, m_solver.m_system, m_solver.m_device, m_solver.m_atol, options.team_size,
                                               options.mode == ExecutionMode::fine_grained, initial_states, rate_constants,
                                               times, m_saved, t_start, true );
    }

    // Every input that changes the run, as the checkpoint stores it.
    struct Parameters
    {
        std::vector<std::pair<std::string, std::vector<double>>> reals;
        std::vector<std::pair<std::string, std::vector<std::int64_t>>> integers;
    };

    Parameters parameters() const
    {
        const SolverOptions& o = m_solver.m_options;
        const long systems = static_cast<long>( m_initial_states.extent( 0 ) );
        const int n = m_solver.m_system.species, m = m_solver.m_system.reactions;
        Parameters p;
        auto x0 = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_initial_states );
        std::vector<double> x( static_cast<std::size_t>( systems ) * n );
        for ( long s = 0; s < systems; ++s )
            for ( int j = 0; j < n; ++j )
                x[s * n + j] = x0( s, j );
        std::vector<double> k( static_cast<std::size_t>( systems ) * m );
        if ( m_rate_constants.extent( 0 ) > 0 )
        {
            auto kk = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_rate_constants );
            for ( long s = 0; s < systems; ++s )
                for ( int r = 0; r < m; ++r )
                    k[s * m + r] = kk( s, r );
        }
        else
        {
            auto kk = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_solver.m_system.rate_constants );
            for ( long s = 0; s < systems; ++s )
                for ( int r = 0; r < m; ++r )
                    k[s * m + r] = kk( r );
        }
        p.integers = {
            { "systems", { systems } },
            { "species", { n } },
            { "reactions", { m } },
            { "mode", { static_cast<std::int64_t>( o.mode ) } },
            { "method", { static_cast<std::int64_t>( o.method ) } },
            // The path method automatic takes while stiff (BDF or Rodas5P in the register kernel): runs on the
            // two paths keep different state, so a restart must take the same one.
            { "stiff_method", { static_cast<std::int64_t>( stiff_path() ) } },
            { "error_norm", { static_cast<std::int64_t>( o.error_norm ) } },
            { "linear_solver", { static_cast<std::int64_t>( m_solver.m_linear ) } },
            { "team_size", { o.team_size } },
            { "stiffness_check_interval", { o.stiffness_check_interval } },
            { "bdf_max_order", { o.bdf_max_order } },
            { "max_newton_iterations", { o.max_newton_iterations } },
            { "fixed_step_max_newton_iterations", { o.fixed_step_max_newton_iterations } },
            { "max_steps", { o.max_steps } },
            { "device_wide_lanes", { o.device_wide_lanes } },
            { "saved_species", std::vector<std::int64_t>( m_saved.begin(), m_saved.end() ) },
        };
        // Only a single-precision run records its precision, so that checkpoints of double runs keep the
        // parameter list they had before single precision existed (check_parameters treats a missing
        // "precision" as double).
        if ( o.precision != Precision::double_precision )
            p.integers.push_back( { "precision", { static_cast<std::int64_t>( o.precision ) } } );
        // Likewise only the batched mode's on-chip layout on a GPU records its lanes: their reductions round
        // differently from one thread's loops, so such a run resumes in the layout it started in. On a host
        // backend (one lane) both layouts are the same arithmetic, and a checkpoint resumes in either.
        if ( recorded_on_chip_lanes() > 0 )
            p.integers.push_back( { "on_chip_lanes", { recorded_on_chip_lanes() } } );
        // Runs whose Rosenbrock steps pass samples (dense output) record it; checkpoints without it were
        // written by runs whose Rosenbrock steps ended on every sample, as step_to_sample's still do.
        if ( samples_densely() )
            p.integers.push_back( { "sample_output", { static_cast<std::int64_t>( SampleOutput::dense ) } } );
        p.reals = {
            { "t_start", { m_t_start } },
            { "sample_times", recorded_times() },
            { "absolute_tolerance", o.absolute_tolerance },
            { "relative_tolerance", { o.relative_tolerance } },
            { "initial_step", { o.initial_step } },
            { "stiffness_threshold", { o.stiffness_threshold } },
            { "bdf_fixed_step", { o.bdf_fixed_step } },
            { "newton_tolerance", { o.newton_tolerance } },
            { "initial_states", x },
            { "rate_constants", k },
        };
        return p;
    }

    //! The run's times as a checkpoint records them: the shared list, or every system's row one after the other.
    std::vector<double> recorded_times() const
    {
        if ( m_time_rows.extent( 0 ) == 0 )
            return m_times;
        const auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), m_time_rows );
        std::vector<double> rows( host.size() );
        for ( std::size_t s = 0; s < host.extent( 0 ); ++s )
            for ( std::size_t i = 0; i < host.extent( 1 ); ++i )
                rows[s * host.extent( 1 ) + i] = host( s, i );
        return rows;
    }

    //! Method::automatic's resolved stiff method (rodas5p in the register kernel or on the general path, else
    //! bdf); the other methods record their own.
    Method stiff_path() const
    {
        const auto& o = m_solver.m_options;
        if ( o.method != Method::automatic )
            return o.method;
        return m_solver.uses_register_kernel() || m_solver.m_device.stiff_rosenbrock ? Method::rodas5p : Method::bdf;
    }

    //! Whether a Rosenbrock method takes steps in this run (alone, or as method automatic's stiff method)
    //! and fills the samples inside them by dense output.
    bool samples_densely() const
    {
        constexpr bool on_gpu = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
        return samples_by_dense_output( m_solver.m_options, on_gpu && m_solver.uses_register_kernel(), m_sample_count ) &&
               ( is_rosenbrock( m_solver.m_options.method ) || stiff_path() == Method::rodas5p );
    }

    void put_parameters( io::CheckpointWriter& out ) const
    {
        const Parameters p = parameters();
        for ( const auto& e : p.integers )
            out.put( "run/" + e.first, e.second );
        for ( const auto& e : p.reals )
            out.put( "run/" + e.first, e.second );
    }

    template <class T>
    static std::string describe( const std::vector<T>& v, std::size_t at )
    {
        // The shortest of 15 or 17 digits that reads back as the same value.
        auto text = []( T x ) {
            std::ostringstream s;
            s.precision( 15 );
            s << x;
            std::istringstream back( s.str() );
            T y{};
            back >> y;
            if ( !( y == x ) )
            {
                s.str( "" );
                s.precision( 17 );
                s << x;
            }
            return s.str();
        };
        if ( v.size() == 1 )
            return text( v[0] );
        if ( at < v.size() )
            return text( v[at] ) + " (entry " + std::to_string( at ) + " of " + std::to_string( v.size() ) + ")";
        return std::to_string( v.size() ) + " values";
    }

    template <class T>
    static void compare( const io::CheckpointReader& in, const std::string& name, const std::vector<T>& mine )
    {
        const std::vector<T> theirs = in.get<T>( "run/" + name );
        std::size_t at = 0;
        while ( at < mine.size() && at < theirs.size() && ( mine[at] == theirs[at] || ( mine[at] != mine[at] && theirs[at] != theirs[at] ) ) )
            ++at;
        if ( at == mine.size() && at == theirs.size() )
            return;
        const std::size_t shown = mine.size() == theirs.size() ? at : std::size_t( -1 );
        in.fail( "parameter '" + name + "' is " + describe( theirs, shown ) + " in the checkpoint but " +
                 describe( mine, shown ) + " in this run; a run resumes only with the parameters it was started with" );
    }

    //! The on-chip lanes a checkpoint records: the solver's on a GPU backend, none on a host backend.
    int recorded_on_chip_lanes() const
    {
        return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible ? 0 : m_solver.on_chip_lanes();
    }

    void check_parameters( const io::CheckpointReader& in ) const
    {
        const Parameters p = parameters();
        if ( in.has( "run/precision" ) && m_solver.m_options.precision == Precision::double_precision )
            compare( in, "precision", std::vector<std::int64_t>{ static_cast<std::int64_t>( Precision::double_precision ) } );
        if ( in.has( "run/on_chip_lanes" ) && recorded_on_chip_lanes() == 0 )
            compare( in, "on_chip_lanes", std::vector<std::int64_t>{ 0 } );
        // Method, mode and stiff path first (they decide whether a Rosenbrock method runs at all), then how it samples.
        for ( const auto& e : p.integers )
            if ( e.first != "sample_output" )
                compare( in, e.first, e.second );
        if ( in.has( "run/sample_output" ) != samples_densely() )
            in.fail( samples_densely()
                         ? "it was written by a run whose Rosenbrock steps end on every sample (sample_output "
                           "step_to_sample, or a checkpoint written before dense output); this run fills samples by "
                           "dense output; a run resumes only with the parameters it was started with"
                         : "it was written by a run that fills samples by the Rosenbrock methods' dense output; this "
                           "run ends their steps on every sample (sample_output step_to_sample); a run resumes only "
                           "with the parameters it was started with" );
        if ( samples_densely() )
            compare( in, "sample_output", std::vector<std::int64_t>{ static_cast<std::int64_t>( SampleOutput::dense ) } );
        for ( const auto& e : p.reals )
            compare( in, e.first, e.second );
    }

    Solver m_solver;
    matrix_type m_initial_states, m_rate_constants;
    std::vector<double> m_times;                  // the run's list (shared times)
    typename Solver::times_type m_time_rows;      // or a row per system, on the device
    int m_sample_count = 0;
    std::vector<int> m_saved;
    double m_t_start = 0.0;
    bool m_started = false;
    int m_samples_done = 0;
    std::unique_ptr<Batch> m_batch;
    std::unique_ptr<Rosenbrock> m_rosenbrock;
    std::unique_ptr<DeviceWide> m_device_wide;
};

} // namespace morula::ode

#endif
