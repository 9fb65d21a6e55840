/*!
  \file OdeSolver.hpp
  \brief Integrates a mass-action system - one large copy or many small ones - from t_start through a
         list of sampling times, with RKF45/BDF switching, on any Kokkos execution space.

  \code
  auto network = morula::ode::read_model( "model.txt" );
  morula::ode::MassActionSystem<Kokkos::DefaultExecutionSpace::memory_space> system( network );
  morula::ode::OdeSolver<Kokkos::DefaultExecutionSpace> solver( system, options );
  auto result = solver.solve( exec, { 0.0, 1.0, 10.0 } );    // one system: the network's own x0 and k
  auto result = solver.solve( exec, x0, k, times, saved );    // (systems x species), (systems x reactions)
  \endcode
  Results stay on the device until the caller copies them (result.samples: systems x samples x saved).
  To stop after a sample, checkpoint and resume the same integration, use OdeIntegration (OdeIntegration.hpp).
*/
#ifndef MORULA_ODE_ODESOLVER_HPP
#define MORULA_ODE_ODESOLVER_HPP

#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/OdeResult.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/BatchIntegration.hpp>
#include <morula/ode/detail/DeviceWideDriver.hpp>
#include <morula/ode/detail/DeviceWideIntegration.hpp>
#include <morula/ode/detail/Integrator.hpp>
#include <morula/ode/detail/RosenbrockBatch.hpp>
#include <morula/ode/detail/SampleTimes.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <string>
#include <vector>

namespace morula::ode
{

template <class ExecutionSpace, class MemorySpace, class Model>
class OdeIntegration;

/*!
  `Model` is a MassActionSystem (the default) or any type with the interface described in
  detail/ModelInterface.hpp (e.g. EpidermisGeneNetwork); the device-wide mode is for mass-action systems.
*/
template <class ExecutionSpace, class MemorySpace = typename ExecutionSpace::memory_space,
          class Model = MassActionSystem<MemorySpace>>
class OdeSolver
{
  public:
    using execution_space = ExecutionSpace;
    using memory_space = MemorySpace;
    using model_type = Model;
    static constexpr bool is_mass_action = std::is_same<Model, MassActionSystem<MemorySpace>>::value;
    using matrix_type = Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>;
    //! Sample times with a row per system: (systems, samples).
    using times_type = Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>;

    OdeSolver( const Model& system, const SolverOptions& options )
        : m_system( system )
        , m_options( options )
    {
        m_options.validate( system.species );
        check_rosenbrock_network();
        m_linear = resolve_linear_solver();
        m_device.method = options.method;
        m_device.norm = options.error_norm;
        m_device.rtol = options.relative_tolerance;
        m_device.initial_step = options.initial_step;
        m_device.stiffness_threshold = options.stiffness_threshold;
        m_device.stiffness_check_interval = options.stiffness_check_interval;
        m_device.bdf_max_order = options.bdf_fixed_step > 0.0 ? 1 : options.bdf_max_order;
        m_device.bdf_fixed_step = options.bdf_fixed_step;
        m_device.newton_tolerance = options.newton_tolerance;
        m_device.max_newton_iterations = options.max_newton_iterations;
        m_device.fixed_step_max_newton_iterations = options.fixed_step_max_newton_iterations;
        m_device.max_steps = options.max_steps;
        m_device.linear = m_linear;
        // The general path's Rosenbrock methods run in double: nonnegativity only where asked for.
        m_device.nonnegative = options.nonnegativity == Nonnegativity::enforced;
        m_device.dense_output = samples_by_dense_output( options );
        // Method::automatic with Rodas5P for stiff stretches where the register kernel cannot run them.
        if constexpr ( is_mass_action )
            m_device.stiff_rosenbrock = options.method == Method::automatic &&
                                        automatic_stiff_method( options, system.species, system.reactions, true ) == Method::rodas5p &&
                                        !uses_register_kernel();
        m_device.on_chip_lanes = resolve_on_chip_lanes();
        m_atol = Kokkos::View<double*, MemorySpace>( "morula::ode::atol", options.absolute_tolerance.size() );
        Kokkos::deep_copy( m_atol, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                       options.absolute_tolerance.data(), options.absolute_tolerance.size() ) );
    }

    const SolverOptions& options() const { return m_options; }
    detail::LinearKind linear_solver() const { return m_linear; }
    //! Vector lanes per system of the batched mode's on-chip layout, or 0 when it does not run on chip
    //! (the interleaved layout, the register kernel, the fine-grained and device-wide modes).
    int on_chip_lanes() const { return m_device.on_chip_lanes; }
    const Model& system() const { return m_system; }

    /*!
      Integrates `initial_states.extent(0)` systems. `rate_constants` is (systems, reactions) or empty
      (every system uses the network's constants). `saved_species` empty means all species.
      \throws core::InputError for inconsistent extents, bad sampling times or species indices.
    */
    OdeResult<MemorySpace> solve( const ExecutionSpace& exec, const matrix_type& initial_states,
                                  const matrix_type& rate_constants, const std::vector<double>& sample_times,
                                  const std::vector<int>& saved_species = {}, double t_start = 0.0 )
    {
        const std::vector<int> saved = checked_inputs( initial_states, rate_constants, sample_times, saved_species, t_start );
        compat::ScopedRegion region( "morula::ode::OdeSolver::solve" );
        return solve_checked( exec, initial_states, rate_constants, detail::shared_sample_times<MemorySpace>( sample_times ),
                              [&]() { return sample_times; }, saved, t_start );
    }

    /*!
      As above with each system's own sample times: row s of `sample_times` (systems x samples, LayoutLeft) is
      system s's list, strictly increasing and >= t_start; every system has the same number of samples. This
      is how systems get their own end times: each integrates to its own last time, and its samples are its
      own solution there (RKF45 ends a step on it; BDF and, by default, the Rosenbrock methods fill it from their
      interpolants; each system's last time ends its last step).
      \throws core::InputError as above, naming the first system whose times are not allowed
    */
    OdeResult<MemorySpace> solve( const ExecutionSpace& exec, const matrix_type& initial_states,
                                  const matrix_type& rate_constants, const times_type& sample_times,
                                  const std::vector<int>& saved_species = {}, double t_start = 0.0 )
    {
        const std::vector<int> saved = checked_inputs( exec, initial_states, rate_constants, sample_times, saved_species, t_start );
        compat::ScopedRegion region( "morula::ode::OdeSolver::solve" );
        return solve_checked( exec, initial_states, rate_constants, detail::per_system_sample_times<MemorySpace>( sample_times ),
                              [&]() { return first_row( sample_times ); }, saved, t_start );
    }

    /*!
      The two solves above into `result`: its Views are reused where their extents are this solve's
      (systems x samples x saved species, systems x stat_count), else replaced by new ones, so that a loop
      of solves of one size (a fit, a host code's time steps) allocates its results once. Every entry is
      overwritten; copies of the Views taken before the call see the new values. Returns `result`.
    */
    OdeResult<MemorySpace>& solve( const ExecutionSpace& exec, const matrix_type& initial_states,
                                   const matrix_type& rate_constants, const std::vector<double>& sample_times,
                                   OdeResult<MemorySpace>& result, const std::vector<int>& saved_species = {},
                                   double t_start = 0.0 )
    {
        const std::vector<int> saved = checked_inputs( initial_states, rate_constants, sample_times, saved_species, t_start );
        compat::ScopedRegion region( "morula::ode::OdeSolver::solve" );
        result = solve_checked( exec, initial_states, rate_constants, detail::shared_sample_times<MemorySpace>( sample_times ),
                                [&]() { return sample_times; }, saved, t_start, result );
        return result;
    }

    OdeResult<MemorySpace>& solve( const ExecutionSpace& exec, const matrix_type& initial_states,
                                   const matrix_type& rate_constants, const times_type& sample_times,
                                   OdeResult<MemorySpace>& result, const std::vector<int>& saved_species = {},
                                   double t_start = 0.0 )
    {
        const std::vector<int> saved = checked_inputs( exec, initial_states, rate_constants, sample_times, saved_species, t_start );
        compat::ScopedRegion region( "morula::ode::OdeSolver::solve" );
        result = solve_checked( exec, initial_states, rate_constants, detail::per_system_sample_times<MemorySpace>( sample_times ),
                                [&]() { return first_row( sample_times ); }, saved, t_start, result );
        return result;
    }

    //! One system with the network's own initial state and rate constants.
    OdeResult<MemorySpace> solve( const ExecutionSpace& exec, const std::vector<double>& sample_times,
                                  const std::vector<int>& saved_species = {}, double t_start = 0.0 )
    {
        Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> x0( "morula::ode::x0", 1, m_system.species );
        auto row = Kokkos::subview( x0, 0, Kokkos::ALL );
        Kokkos::deep_copy( exec, row, m_system.initial_state );
        exec.fence();
        return solve( exec, x0, matrix_type(), sample_times, saved_species, t_start );
    }

  private:
    template <class, class, class>
    friend class OdeIntegration;

    //! Checks solve()'s inputs; returns the saved species (all when `saved_species` is empty).
    std::vector<int> checked_inputs( const matrix_type& initial_states, const matrix_type& rate_constants,
                                     const std::vector<double>& sample_times, const std::vector<int>& saved_species,
                                     double t_start ) const
    {
        check_times( sample_times, t_start );
        return checked_systems( initial_states, rate_constants, saved_species );
    }

    //! The same with a row of sample times per system (checked on the device).
    std::vector<int> checked_inputs( const ExecutionSpace& exec, const matrix_type& initial_states,
                                     const matrix_type& rate_constants, const times_type& sample_times,
                                     const std::vector<int>& saved_species, double t_start ) const
    {
        if ( !std::isfinite( t_start ) )
            throw core::InputError( core::detail::concat( "OdeSolver::solve: t_start = ", t_start, "; expected a finite time" ) );
        const std::vector<int> saved = checked_systems( initial_states, rate_constants, saved_species );
        detail::check_per_system_sample_times( exec, sample_times, static_cast<long>( initial_states.extent( 0 ) ), t_start,
                                               "OdeSolver::solve" );
        return saved;
    }

    //! System s = 0's row of per-system sample times, on the host (the device-wide mode's one system).
    static std::vector<double> first_row( const times_type& times ) { return detail::host_row( times, 0 ); }

    //! Runs validated inputs on the path the options choose; `host_times` gives the times as a host list
    //! for the device-wide mode (one system), which steps from the host.
    template <class HostTimes>
    OdeResult<MemorySpace> solve_checked( const ExecutionSpace& exec, const matrix_type& initial_states,
                                          const matrix_type& rate_constants, const detail::SampleTimes<MemorySpace>& times,
                                          const HostTimes& host_times, const std::vector<int>& saved, double t_start,
                                          const OdeResult<MemorySpace>& reuse = {} )
    {
        using core::InputError;
        using core::detail::concat;
        const long systems = static_cast<long>( initial_states.extent( 0 ) );
        if ( m_options.mode == ExecutionMode::device_wide )
        {
            if ( systems != 1 )
                throw InputError( concat( "OdeSolver::solve: the device-wide mode integrates one system; got ", systems,
                                          " (use the batched or fine-grained mode for several)" ) );
            if constexpr ( is_mass_action )
                return solve_device_wide( exec, initial_states, rate_constants, host_times(), saved, t_start );
            else
                throw InputError( "OdeSolver::solve: the device-wide mode is for mass-action systems; use the "
                                  "fine-grained or batched mode for this model" );
        }
        if constexpr ( is_mass_action )
            if ( uses_register_kernel() )
                return solve_rosenbrock( exec, initial_states, rate_constants, times, saved, t_start, reuse );
        return launch( exec, initial_states, rate_constants, times, saved, t_start,
                       m_options.mode == ExecutionMode::fine_grained, m_device, reuse );
    }

    //! The checks of the systems' inputs and the saved species common to both forms of sample times.
    std::vector<int> checked_systems( const matrix_type& initial_states, const matrix_type& rate_constants,
                                      const std::vector<int>& saved_species ) const
    {
        using core::InputError;
        using core::detail::concat;
        const long systems = static_cast<long>( initial_states.extent( 0 ) );
        const int n = m_system.species, m = m_system.reactions;
        if ( static_cast<int>( initial_states.extent( 1 ) ) != n )
            throw InputError( concat( "OdeSolver::solve: initial_states has ", initial_states.extent( 1 ),
                                      " columns; the network has ", n, " species" ) );
        if ( rate_constants.extent( 0 ) != 0 &&
             ( static_cast<long>( rate_constants.extent( 0 ) ) != systems || static_cast<int>( rate_constants.extent( 1 ) ) != m ) )
            throw InputError( concat( "OdeSolver::solve: rate_constants is ", rate_constants.extent( 0 ), " x ",
                                      rate_constants.extent( 1 ), "; expected ", systems, " x ", m, " or empty" ) );
        std::vector<int> saved = saved_species;
        if ( saved.empty() )
            for ( int i = 0; i < n; ++i )
                saved.push_back( i );
        for ( std::size_t j = 0; j < saved.size(); ++j )
            if ( saved[j] < 0 || saved[j] >= n )
                throw InputError( concat( "OdeSolver::solve: saved species index ", saved[j], " (entry ", j,
                                          ") is outside [0, ", n, ")" ) );

        return saved;
    }

    //! Allocates the result and runs the batched (one thread per system) or team (one team per system)
    //! integrator kernel; inputs are already validated.
    OdeResult<MemorySpace> launch( const ExecutionSpace& exec, const matrix_type& initial_states,
                                   const matrix_type& rate_constants, const detail::SampleTimes<MemorySpace>& sample_times,
                                   const std::vector<int>& saved, double t_start, bool team,
                                   const detail::DeviceOptions& device_options, const OdeResult<MemorySpace>& reuse = {} )
    {
        detail::BatchIntegration<ExecutionSpace, MemorySpace, Model> batch(
            exec, m_system, device_options, m_atol, m_options.team_size, team, initial_states, rate_constants, sample_times,
            saved, t_start, false, m_workspace, m_pivots, reuse );
        m_workspace = batch.workspace();
        m_pivots = batch.pivots();
        batch.run_to_end( exec );
        return batch.result();
    }

    /*!
      The device-wide mode: RKF45 with one kernel per stage over all species and the step decided on the
      device (detail/DeviceWideDriver.hpp); the host reads the status only between runs of attempts. A
      stiff system (the paper's eps_s rule or three stiff estimates in a row) continues from its current
      state in the team integrator, starting in BDF.
    */
    OdeResult<MemorySpace> solve_device_wide( const ExecutionSpace& exec, const matrix_type& initial_states,
                                              const matrix_type& rate_constants, const std::vector<double>& times,
                                              const std::vector<int>& saved, double t_start )
    {
        if ( !m_device_wide )
            m_device_wide = std::make_shared<detail::DeviceWideDriver<ExecutionSpace, MemorySpace>>( m_system, m_options, m_atol );
        const auto x0 = Kokkos::subview( initial_states, 0, Kokkos::ALL );
        auto run = [&]( const auto& k ) {
            detail::DeviceWideIntegration<ExecutionSpace, MemorySpace> integration(
                exec, m_device_wide, m_system, m_options, m_device, m_atol, x0, k, times, saved, t_start, false );
            integration.advance( exec, static_cast<int>( times.size() ) );
            return integration.result( exec );
        };
        return rate_constants.extent( 0 ) > 0 ? run( Kokkos::subview( rate_constants, 0, Kokkos::ALL ) )
                                              : run( m_system.rate_constants );
    }

    /*!
      Whether solve() runs the register-resident batched kernel: a Rosenbrock method, or Method::automatic
      where automatic_stiff_method() picks Rodas5P for the stiff stretches (the RKF45 <-> Rodas5P kernel).
    */
    bool uses_register_kernel() const
    {
        if constexpr ( is_mass_action )
            return ( is_rosenbrock( m_options.method ) && m_options.mode == ExecutionMode::batched &&
                     m_system.species <= rosenbrock_max_species && m_system.reactions <= rosenbrock_max_reactions ) ||
                   ( m_options.method == Method::automatic &&
                     automatic_stiff_method( m_options, m_system.species, m_system.reactions, true ) == Method::rodas5p &&
                     register_kernel_refusal( m_options, m_system.species, m_system.reactions, true ).empty() );
        else
            return false;
    }

    //! The Rosenbrock methods' register-resident kernels need a mass-action network of bounded size (and
    //! method automatic with stiff_method rodas5p the cases automatic_stiff_method() accepts).
    void check_rosenbrock_network() const
    {
        using core::detail::concat;
        if ( m_options.method == Method::automatic )
        {
            if constexpr ( is_mass_action )
                automatic_stiff_method( m_options, m_system.species, m_system.reactions, true ); // throws
            else
                automatic_stiff_method( m_options, m_system.species, 0, false );
            return;
        }
        if ( !is_rosenbrock( m_options.method ) )
            return;
        if ( !is_mass_action )
            throw core::InputError( "ODE solver: the Rosenbrock methods are for mass-action networks; use method "
                                    "bdf or automatic for this model" );
        if ( m_options.precision == Precision::double_precision )
            return;
        // Single precision is the register kernel's only (the general path runs in double).
        if ( m_system.species > rosenbrock_max_species || m_system.reactions > rosenbrock_max_reactions )
            throw core::InputError( concat( "ODE solver: single precision is the batched Rosenbrock kernel's, for "
                                            "networks of up to ", rosenbrock_max_species, " species and ",
                                            rosenbrock_max_reactions, " reactions; this one has ", m_system.species,
                                            " species and ", m_system.reactions, " reactions (use double precision)" ) );
    }

    //! The batched Rosenbrock kernel of the method and precision in the options, in one leg.
    OdeResult<MemorySpace> solve_rosenbrock( const ExecutionSpace& exec, const matrix_type& initial_states,
                                             const matrix_type& rate_constants, const detail::SampleTimes<MemorySpace>& times,
                                             const std::vector<int>& saved, double t_start, const OdeResult<MemorySpace>& reuse )
    {
        detail::RosenbrockIntegration<ExecutionSpace, MemorySpace> run( exec, m_system, m_options, m_atol, initial_states,
                                                                        rate_constants, times, saved, t_start, false, reuse );
        run.run_to_end( exec );
        return run.result();
    }

    /*!
      The batched mode's layout on the general path (SolverOptions::batched_layout): the lanes per system
      on chip, or 0 for the interleaved layout. `automatic` takes the rule of automatic_batched_on_chip();
      on_chip asked for where a system's arrays do not fit a team's scratch memory is refused, naming the
      sizes.
    */
    int resolve_on_chip_lanes() const
    {
        if ( m_options.mode != ExecutionMode::batched || m_options.batched_layout == BatchedLayout::interleaved ||
             m_linear == detail::LinearKind::dense_kokkos_batched || uses_register_kernel() )
            return 0;
        const bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
        const int n = m_system.species, m = m_system.reactions;
        const detail::WorkspaceMap map( n, m, false, m_system.jacobian_nonzeros_count );
        const std::string refusal = detail::on_chip_refusal<ExecutionSpace, MemorySpace, Model>( map );
        if ( m_options.batched_layout == BatchedLayout::automatic && ( !automatic_batched_on_chip( !host, n, m ) || !refusal.empty() ) )
            return 0;
        if ( !refusal.empty() )
            throw core::InputError( refusal );
        if ( host )
            return 1;
        if ( m_options.batched_lanes > 0 )
            return m_options.batched_lanes;
        int lanes = 4;
        while ( lanes < n && lanes < 32 )
            lanes *= 2;
        return lanes;
    }

    detail::LinearKind resolve_linear_solver() const
    {
        switch ( m_options.linear_solver )
        {
        case LinearSolver::dense_lu: return detail::LinearKind::dense_pivoted;
        case LinearSolver::sparse_iterative: return detail::LinearKind::sparse_bicgstab;
        case LinearSolver::kokkos_batched:
#if MORULA_HAVE_KOKKOSKERNELS
            return detail::LinearKind::dense_kokkos_batched;
#else
            throw core::InputError( "ODE solver: linear solver 'kokkos_batched' needs Morula built with Kokkos "
                                    "Kernels (Morula_ENABLE_KOKKOSKERNELS); use 'dense_lu'" );
#endif
        case LinearSolver::automatic: break;
        }
        if ( m_options.mode != ExecutionMode::batched && m_system.species > m_options.dense_limit )
            return detail::LinearKind::sparse_bicgstab;
        return detail::LinearKind::dense_pivoted;
    }

    static void check_times( const std::vector<double>& times, double t_start )
    {
        using core::detail::concat;
        if ( !std::isfinite( t_start ) )
            throw core::InputError( concat( "OdeSolver::solve: t_start = ", t_start, "; expected a finite time" ) );
        for ( std::size_t i = 0; i < times.size(); ++i )
        {
            if ( !std::isfinite( times[i] ) || times[i] < t_start )
                throw core::InputError( concat( "OdeSolver::solve: sample time ", i, " = ", times[i],
                                                "; expected a finite time >= t_start (", t_start, ")" ) );
            if ( i > 0 && !( times[i] > times[i - 1] ) )
                throw core::InputError( concat( "OdeSolver::solve: sample times must increase strictly; time ", i,
                                                " = ", times[i], " follows ", times[i - 1] ) );
        }
    }

    Model m_system;
    SolverOptions m_options;
    detail::LinearKind m_linear;
    detail::DeviceOptions m_device;
    Kokkos::View<double*, MemorySpace> m_atol;
    Kokkos::View<double*, MemorySpace> m_workspace;
    Kokkos::View<int*, MemorySpace> m_pivots;
    //! The device-wide mode's buffers and captured graphs, kept between solves (shared by copies of the
    //! solver, which must not solve concurrently).
    std::shared_ptr<detail::DeviceWideDriver<ExecutionSpace, MemorySpace>> m_device_wide;
};

} // namespace morula::ode

#endif
