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
  RKF45 steps are clipped to land on sampling times; BDF steps are not (BDF samples by dense output), nor
  are the Rosenbrock methods' unless SampleOutput::step_to_sample asks for it (their own dense output).
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
#include <morula/ode/detail/RosenbrockGeneral.hpp>
#include <morula/ode/detail/SampleTimes.hpp>
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
    bool nonnegative = false;  // Rosenbrock methods: reject an attempt that turns a species negative
    bool dense_output = true;  // Rosenbrock methods: samples inside steps by dense output (SampleOutput::dense)
    bool stiff_rosenbrock = false; // Method::automatic: stiff stretches in Rodas5P, not BDF (automatic_stiff_method)
    int on_chip_lanes = 0;         // batched mode: > 0 runs the on-chip layout with this many lanes per system
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
    bool k1_valid;         // RKF45: k1 = f(x) still valid (x unchanged since); Rosenbrock: f(x) in its slot
    bool after_rejection;  // Rosenbrock: the last attempt was rejected (no step growth on the next)
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
    SampleTimes<MemorySpace> sample_times; // one list for all systems, or a row per system
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

    //! Sample `sample` inside the Rosenbrock step of `h` just accepted (x not yet overwritten), at t + theta h
    //! (not below 0 where nonnegativity is enforced: dense_sample_value).
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void record_dense( const Ops& ops, long s, int sample, Method method, double theta, double h ) const
    {
        const int saved = static_cast<int>( saved_species.extent( 0 ) );
        ops.for_each( saved, [&]( int j ) {
            output( s, sample, j ) = dense_sample_value( rosenbrock_dense_value( *this, s, method, theta, h, saved_species( j ) ), opt.nonnegative );
        } );
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
        const int nsamples = sample_times.count();
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
        st.after_rejection = false;
        while ( st.sample < nsamples && sample_times( s, st.sample ) <= st.t )
            record_state( ops, s, st.sample++, x );
        if ( is_rosenbrock_method( opt.method ) )
        {
            // f(x) and the Rosenbrock methods' own first step (the register kernel's rule, not initial_step).
            rhs( ops, s, st, x, vec( s, slot_rosenbrock_f ) );
            st.k1_valid = true;
            st.dt = rosenbrock_first_step( *this, ops, s, sample_times.last( s, t_start ) - t_start );
        }
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
        const int nsamples = sample_times.count();
        const auto x = vec( s, slot_x );
        const double t_end = sample_times.last( s, t_start );
        stop = stop < nsamples ? stop : nsamples;

        SolverStatus status = SolverStatus::success;
        while ( st.sample < stop )
        {
            if ( st.counters[stat_steps] + st.counters[stat_rejected] >= opt.max_steps )
            {
                status = SolverStatus::max_steps;
                break;
            }
            if ( is_rosenbrock_method( opt.method ) )
            {
                status = rosenbrock_step( ops, s, st, opt.method );
                if ( status != SolverStatus::success )
                    break;
                continue;
            }
            if ( st.in_bdf && opt.stiff_rosenbrock )
            {
                // Method::automatic's stiff stretch in Rodas5P (the register kernel's rule): every
                // stiffness_check_interval accepted steps the Gershgorin bound of J at the current state
                // decides whether RKF45 would be stable again with the step Rodas5P proposes; that
                // Jacobian is then the next attempt's.
                if ( st.steps_since_check >= opt.stiffness_check_interval )
                {
                    st.steps_since_check = 0;
                    if ( spectral_radius_bound( *this, ops, s, st ) * st.dt <= bdf_to_rkf45_h_rho )
                    {
                        ++st.counters[stat_switches_to_rkf];
                        st.in_bdf = false;
                        st.k1_valid = false; // RKF45's k1 slot does not hold f(x)
                        continue;
                    }
                }
                const long accepted = st.counters[stat_steps];
                status = rosenbrock_step( ops, s, st, Method::rodas5p );
                if ( status != SolverStatus::success )
                    break;
                if ( st.counters[stat_steps] > accepted )
                {
                    ++st.counters[stat_bdf_steps];
                    ++st.steps_since_check;
                }
                continue;
            }
            if ( !st.in_bdf )
            {
                const double target = sample_times( s, st.sample );
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
                    while ( st.sample < nsamples && sample_times( s, st.sample ) <= st.t )
                        record_state( ops, s, st.sample++, x );
                    if ( opt.method == Method::automatic && ++st.steps_since_check >= rkf45_stiffness_check_interval )
                    {
                        st.steps_since_check = 0;
                        st.h_rho = rkf45_stiffness( *this, ops, s, st, dt );
                        if ( st.stiffness.stiff_enough( st.h_rho ) )
                        {
                            ++st.counters[stat_switches_to_bdf];
                            stiff_start( ops, s, st, opt.bdf_fixed_step > 0.0 ? opt.bdf_fixed_step : st.dt );
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
                        stiff_start( ops, s, st, opt.bdf_fixed_step > 0.0 ? opt.bdf_fixed_step : dt );
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

    /*!
      One attempt of the Rosenbrock method in opt.method (RosenbrockGeneral.hpp) from (t, x): toward the
      system's last sample time with dense output (opt.dense_output; the samples the accepted step passes
      are its interpolant there), else toward the next sample, ending on it when the step would pass it.
      On acceptance the samples reached are recorded; they may lie beyond the leg's `stop` (a later leg
      finds them filled: every sample at or before t is). Returns success unless the step can no longer
      move t (then why: a singular W, a non-finite error, or the step underflowed).
    */
    template <class Ops>
    KOKKOS_INLINE_FUNCTION SolverStatus rosenbrock_step( const Ops& ops, long s, State& st, Method method ) const
    {
        const int n = map.n;
        const int nsamples = sample_times.count();
        const int q = rosenbrock_error_order( method );
        const double target = opt.dense_output ? sample_times.last( s, t_start ) : sample_times( s, st.sample );
        const bool ends_on_sample = st.t + st.dt >= target;
        const double step = ends_on_sample ? target - st.t : st.dt;
        const RosenbrockAttempt a = rosenbrock_attempt( *this, ops, s, st, step, method );
        if ( a.norm2 <= 1.0 && a.inside ) // false for NaN
        {
            ++st.counters[stat_steps];
            const double t_old = st.t;
            st.t = ends_on_sample ? target : st.t + step;
            // Samples strictly inside the step, from its stages before x is overwritten.
            while ( st.sample < nsamples && sample_times( s, st.sample ) < st.t )
            {
                record_dense( ops, s, st.sample, method, ( sample_times( s, st.sample ) - t_old ) / step, step );
                ++st.sample;
            }
            const auto x = vec( s, slot_x ), xn = vec( s, slot_rosenbrock_input );
            const auto f_new = vec( s, slot_rosenbrock_f + 1 ), fx = vec( s, slot_rosenbrock_f );
            const bool fsal = method == Method::rosenbrock23; // f at the new state is its F2
            ops.for_each( n, [&]( int j ) {
                x[j] = xn[j];
                if ( fsal )
                    fx[j] = f_new[j];
            } );
            st.k1_valid = fsal;
            st.jacobian_current = false; // J was the old state's
            st.dt = rosenbrock_accepted_step( a.norm2, q, step, st.dt, ends_on_sample, st.after_rejection );
            st.after_rejection = false;
            while ( st.sample < nsamples && sample_times( s, st.sample ) <= st.t )
                record_state( ops, s, st.sample++, x );
            return SolverStatus::success;
        }
        ++st.counters[stat_rejected];
        st.dt = step * rosenbrock_rejected_factor( a.norm2, q );
        st.after_rejection = true;
        if ( !( st.t + st.dt > st.t ) )
            return !a.factored ? SolverStatus::singular_matrix
                   : compat::isfinite( a.norm2 ) ? SolverStatus::step_too_small
                                                 : SolverStatus::not_finite;
        return SolverStatus::success;
    }

    /*!
      Method::automatic's switch to its stiff method: BDF from the current state with step h, or Rodas5P
      (opt.stiff_rosenbrock) with RKF45's step, which the Rosenbrock step control takes over as it is.
    */
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void stiff_start( const Ops& ops, long s, State& st, double h ) const
    {
        if ( !opt.stiff_rosenbrock )
        {
            bdf_start( *this, ops, s, st, h );
            return;
        }
        st.in_bdf = true;
        st.k1_valid = false; // f(x) goes to the Rosenbrock slot
        st.jacobian_current = false;
        st.after_rejection = false;
        st.steps_since_check = 0;
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
        run( ops, s, st, sample_times.count() );
        report( ops, s, st );
    }
};

} // namespace morula::ode::detail

#endif
