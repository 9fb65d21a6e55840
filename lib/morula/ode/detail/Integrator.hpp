/*!
  \file Integrator.hpp
  \brief One system's whole integration - RKF45, BDF of orders 1-5 and the switching between them, with
         output at the sampling times - written once over VectorOps (thread or team per system).

  This file holds the driver loop and the data it works on; each method lives in its own file:
    Workspace.hpp           where a system's vectors live (layout, slots, addressing)
    ModelInterface.hpp      the model's right-hand side and Jacobian
    Rkf45.hpp               one RKF45 step and its step-size rule
    StiffnessDetection.hpp  when to switch RKF45 -> BDF and back
    Bdf.hpp                 one BDF step, its order/step selection and dense output
    NewtonSolve.hpp         Jacobian, Newton matrix I - c J, its factorisation and solve
    BiCGStab.hpp            the sparse iterative solve
  RKF45 steps are clipped to land on sampling times; BDF steps are not (BDF samples by dense output).
*/
#ifndef MORULA_ODE_DETAIL_INTEGRATOR_HPP
#define MORULA_ODE_DETAIL_INTEGRATOR_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/Bdf.hpp>
#include <morula/ode/detail/ModelInterface.hpp>
#include <morula/ode/detail/NewtonSolve.hpp>
#include <morula/ode/detail/Rkf45.hpp>
#include <morula/ode/detail/StiffnessDetection.hpp>
#include <morula/ode/detail/VectorOps.hpp>
#include <morula/ode/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

//! The scalars of SolverOptions a kernel needs (plain data, copied into the functor).
struct DeviceOptions
{
    Method method = Method::automatic;
    ErrorNorm norm = ErrorNorm::mixed;
    double rtol = 1e-6;
    double initial_step = 1e-3;
    double stiffness_threshold = 1e-6;
    int stiffness_check_interval = 20;
    int bdf_max_order = 5;
    double bdf_fixed_step = 0.0;
    double newton_tolerance = 0.0;
    int max_newton_iterations = 4;
    int fixed_step_max_newton_iterations = 10000;
    long max_steps = 10000000;
    LinearKind linear = LinearKind::dense_pivoted;
    bool start_in_bdf = false; // the device-wide mode hands a stiff system over in BDF
};

//! Per-system scalar state of the integrator (replicated in every thread of a team).
struct IntegratorState
{
    double t, dt;
    int sample;            // next sample index to fill
    bool in_bdf;
    // BDF
    int order, n_equal_steps, steps_since_check;
    double h, lu_c;        // lu_c: the c the current factorisation was made for (< 0: none)
    bool jacobian_valid, jacobian_current;
    bool k1_valid;         // RKF45: k1 = f(x) still valid (x unchanged since)
    double h_rho;          // RKF45: dt times the estimated dominant eigenvalue (automatic mode)
    StiffnessCounter stiffness;
    bool done;             // no further step: every sample filled, or an error (counters[stat_status])
    long counters[stat_count];
};

/*!
  The integrator for one system. All members are Views or scalars so the struct is captured by value.
  `integrate` is called by one thread (ThreadOps) or by every thread of a team (TeamOps). `Model` is a
  MassActionSystem or any type with the interface of ModelInterface.hpp.
*/
template <class MemorySpace, class Model = MassActionSystem<MemorySpace>>
struct SystemIntegrator : SystemWorkspace<MemorySpace>
{
    using memory_space = MemorySpace;
    using System = Model;
    using State = IntegratorState;
    using SystemWorkspace<MemorySpace>::map;
    using SystemWorkspace<MemorySpace>::at;
    using SystemWorkspace<MemorySpace>::vec;
    using SystemWorkspace<MemorySpace>::cv;

    System sys;
    DeviceOptions opt;
    Kokkos::View<const double*, MemorySpace> atol;       // one per species
    Kokkos::View<const double*, MemorySpace> sample_times;
    Kokkos::View<const int*, MemorySpace> saved_species;
    Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace> initial_states; // (systems, species)
    Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace> rate_constants; // (systems, reactions) or empty
    Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace> output;              // (systems, samples, saved)
    Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace> statistics;             // (systems, stat_count)
    double t_start = 0.0;

    //! f = f(x) of system s with its own parameters, counted.
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void rhs( const Ops& ops, long s, State& st, const Strided<double>& x, const Strided<double>& f ) const
    {
        model_rhs( ops, sys, cv( at( s, map.constants ) ), cv( x ), at( s, map.rates ), f );
        ++st.counters[stat_rhs_evaluations];
    }

    template <class Ops>
    KOKKOS_INLINE_FUNCTION void record_state( const Ops& ops, long s, int sample, const Strided<double>& x ) const
    {
        const int saved = static_cast<int>( saved_species.extent( 0 ) );
        ops.for_each( saved, [&]( int j ) { output( s, sample, j ) = x[saved_species( j )]; } );
    }

    //! Solver-wide tiny step: the step can no longer change t.
    KOKKOS_INLINE_FUNCTION static bool step_underflows( double t, double dt )
    {
        const double at = t < 0 ? -t : t;
        return !( dt > 4.0e-16 * ( at > 1.0 ? at : 1.0 ) );
    }

    /*!
      Starts system s at t_start: its initial state and rate constants into the workspace, the samples at
      t_start, BDF's start when the run begins in BDF.
    */
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void begin( const Ops& ops, long s, State& st ) const
    {
        const int n = map.n;
        const int m = map.m;
        const int nsamples = static_cast<int>( sample_times.extent( 0 ) );
        for ( int c = 0; c < stat_count; ++c )
            st.counters[c] = 0;
        const auto x = vec( s, slot_x );
        const auto k = at( s, map.constants );
        const bool own_constants = rate_constants.extent( 0 ) > 0;
        ops.for_each( n > m ? n : m, [&]( int j ) {
            if ( j < n )
                x[j] = initial_states( s, j );
            if ( j < m )
                k[j] = own_constants ? rate_constants( s, j ) : sys.rate_constants( j );
        } );
        st.t = t_start;
        st.dt = opt.initial_step;
        st.sample = 0;
        st.k1_valid = false;
        st.h_rho = 0.0;
        st.stiffness.reset();
        st.in_bdf = false;
        st.order = 1;
        st.h = opt.initial_step;
        st.lu_c = -1.0;
        st.jacobian_valid = st.jacobian_current = false;
        st.n_equal_steps = st.steps_since_check = 0;
        st.done = false;
        while ( st.sample < nsamples && sample_times( st.sample ) <= st.t )
            record_state( ops, s, st.sample++, x );
        if ( opt.method == Method::bdf || opt.start_in_bdf )
            bdf_start( *this, ops, s, st, opt.bdf_fixed_step > 0.0 ? opt.bdf_fixed_step : opt.initial_step );
    }

    /*!
      Steps system s until the samples [0, stop) are filled, or the integration ends (every sample filled,
      or an error: st.done, the status in st.counters[stat_status]). Pausing at a sample changes nothing:
      BDF's steps are bounded by the last sample time of the whole list wherever the run pauses, and
      everything the next step reads is in st and the system's workspace, so runs to stop = 1, 2, ...
      take the same steps as one run to the end.
    */
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void run( const Ops& ops, long s, State& st, int stop ) const
    {
        if ( st.done )
            return;
        const int n = map.n;
        const int nsamples = static_cast<int>( sample_times.extent( 0 ) );
        const auto x = vec( s, slot_x );
        const double t_end = nsamples > 0 ? sample_times( nsamples - 1 ) : t_start;
        stop = stop < nsamples ? stop : nsamples;

        SolverStatus status = SolverStatus::success;
        while ( st.sample < stop )
        {
            if ( st.counters[stat_steps] + st.counters[stat_rejected] >= opt.max_steps )
            {
                status = SolverStatus::max_steps;
                break;
            }
            if ( !st.in_bdf )
            {
                const double target = sample_times( st.sample );
                const double room = target - st.t;
                const bool clipped = st.dt >= room;
                const double dt = clipped ? room : st.dt;
                if ( step_underflows( st.t, dt ) && !clipped )
                {
                    status = SolverStatus::step_too_small;
                    break;
                }
                double dt_new = dt;
                if ( rkf45_attempt( *this, ops, s, st, dt, dt_new ) )
                {
                    ++st.counters[stat_steps];
                    ++st.counters[stat_rkf_steps];
                    st.t = clipped ? target : st.t + dt;
                    // A step shortened to land on a sample says little about the step the solution allows.
                    st.dt = clipped ? ( dt_new > st.dt ? dt_new : st.dt ) : dt_new;
                    while ( st.sample < nsamples && sample_times( st.sample ) <= st.t )
                        record_state( ops, s, st.sample++, x );
                    if ( opt.method == Method::automatic && ++st.steps_since_check >= rkf45_stiffness_check_interval )
                    {
                        st.steps_since_check = 0;
                        st.h_rho = rkf45_stiffness( *this, ops, s, st, dt );
                        if ( st.stiffness.stiff_enough( st.h_rho ) )
                        {
                            ++st.counters[stat_switches_to_bdf];
                            bdf_start( *this, ops, s, st, opt.bdf_fixed_step > 0.0 ? opt.bdf_fixed_step : st.dt );
                        }
                    }
                }
                else
                {
                    ++st.counters[stat_rejected];
                    st.dt = dt_new;
                    if ( opt.method == Method::automatic && dt_new < opt.stiffness_threshold )
                    {
                        ++st.counters[stat_switches_to_bdf];
                        st.stiffness.reset();
                        bdf_start( *this, ops, s, st, opt.bdf_fixed_step > 0.0 ? opt.bdf_fixed_step : dt );
                    }
                }
                continue;
            }

            status = bdf_step( *this, ops, s, st, t_end );
            if ( status != SolverStatus::success )
                break;
            ++st.counters[stat_steps];
            ++st.counters[stat_bdf_steps];
            bdf_dense_output( *this, ops, s, st );
            if ( opt.method == Method::automatic && ++st.steps_since_check >= opt.stiffness_check_interval )
            {
                st.steps_since_check = 0;
                const double rho = spectral_radius_bound( *this, ops, s, st );
                if ( rho * st.h <= bdf_to_rkf45_h_rho )
                {
                    // x is D_0 already; RKF45 resumes with BDF's step.
                    ++st.counters[stat_switches_to_rkf];
                    st.in_bdf = false;
                    st.dt = st.h;
                    st.k1_valid = false;
                }
            }
        }
        if ( status == SolverStatus::success && st.sample < nsamples )
            return; // paused at `stop`
        if ( status == SolverStatus::success )
        {
            const double bad = ops.max( n, [&]( int j ) { return x[j] - x[j] == 0.0 ? 0.0 : 1.0; } );
            if ( bad != 0.0 )
                status = SolverStatus::not_finite;
        }
        st.counters[stat_status] = static_cast<long>( status );
        st.done = true;
    }

    //! Writes system s's status and counters to `statistics`.
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void report( const Ops& ops, long s, const State& st ) const
    {
        ops.single( [&]() {
            for ( int c = 0; c < stat_count; ++c )
                statistics( s, c ) = st.counters[c];
        } );
    }

    //! Integrates system s from t_start through the last sampling time.
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void integrate( const Ops& ops, long s ) const
    {
        State st;
        begin( ops, s, st );
        run( ops, s, st, static_cast<int>( sample_times.extent( 0 ) ) );
        report( ops, s, st );
    }
};

} // namespace morula::ode::detail

#endif
