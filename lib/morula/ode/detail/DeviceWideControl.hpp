/*!
  \file DeviceWideControl.hpp
  \brief The device-wide mode's step control as data on the device: the status of one integration (t, the
         step, the next sample, the counters, why it stopped) and the functions that advance it after
         each RKF45 attempt, callable on the host and in a one-thread kernel alike.

  The host used to read the error norm back after every attempt and decide accept/reject, the next step,
  t, the samples and the stiffness checks itself; the same decisions now run on the device from the
  reduced values the kernels leave in device scalars, so a run of attempts needs no host in between.
  Everything here is the same double arithmetic as that host loop (tests/ode/DeviceWideReference.hpp
  keeps it as the reference the tests compare against).
*/
#ifndef MORULA_ODE_DETAIL_DEVICEWIDECONTROL_HPP
#define MORULA_ODE_DETAIL_DEVICEWIDECONTROL_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/Rkf45.hpp>
#include <morula/ode/detail/StiffnessDetection.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

//! Rows of the device-wide stage buffer (7, n): k1..k6 in rows 0..5, f(x + e) of the stiffness estimate in
//! row dw_row_perturbed.
constexpr int dw_stage_rows = 7;
constexpr int dw_row_perturbed = 6;

//! One device-wide integration's state between attempts; lives in device memory, read back by the host
//! only every few attempts. Plain data (copied as bytes between host and device).
struct DeviceWideStatus
{
    double t = 0.0;  //!< time of the current state
    double dt = 0.0; //!< the step RKF45 proposes next
    double h = 0.0;  //!< the step of the pending attempt (dt, or clipped to the next sample time)
    double check_h = 0.0, check_den = 0.0; //!< the pending stiffness estimate's step and |e|^2
    long steps = 0, rejected = 0, rhs_evaluations = 0;
    int sample = 0;              //!< the first sample not yet reached
    int record_begin = 0;        //!< samples [record_begin, record_end) are reached but not yet written
    int record_end = 0;
    int clipped = 0;             //!< the pending attempt ends on a sample time
    int current = 0;             //!< which of the two state buffers holds x
    int k1_valid = 0;            //!< row 0 already holds f(x) (after a stiffness estimate)
    int since_check = 0;         //!< accepted steps since the last stiffness check
    int stiff = 0, nonstiff = 0; //!< StiffnessCounter's run lengths
    //! A stiffness estimate is due for the last accepted step: the next begin kernel evaluates f(x + e)
    //! (with k1 = f(x), which it computes anyway) and the next control resolves it - before anything else,
    //! discarding that attempt if the estimate hands over to BDF - so the estimate costs no kernel of its own.
    int check_pending = 0;
    int idle = 0;    //!< no further attempt (every sample reached, a handover, an error); once a pending
                     //!< estimate is resolved the integration stops
    int stopped = 0; //!< nothing left to do: every kernel returns at once
    int handover = 0; //!< continue in the team integrator's BDF
    int status = 0;  //!< SolverStatus: success, max_steps or step_too_small
};

//! What the control needs besides the status: fixed for one solve.
struct DeviceWideParameters
{
    int n = 0;              //!< species
    int samples = 0;        //!< sample times
    bool paper = false;     //!< ErrorNorm::paper
    bool automatic = false; //!< Method::automatic (stiffness checks and handover)
    double stiffness_threshold = 0.0;
    long max_steps = 0;
};

/*!
  Sets up the next attempt: idle when every sample is reached, on a handover, at max_steps, or when the
  step fell below round-off; otherwise the attempt's step h is dt clipped to the next sample time.
*/
KOKKOS_INLINE_FUNCTION void device_wide_prepare( DeviceWideStatus& s, const DeviceWideParameters& p, const double* times )
{
    if ( s.handover || s.sample >= p.samples )
    {
        s.idle = 1;
        return;
    }
    if ( s.steps + s.rejected >= p.max_steps )
    {
        s.idle = 1;
        s.status = static_cast<int>( SolverStatus::max_steps );
        return;
    }
    const double target = times[s.sample];
    const bool clipped = s.dt >= target - s.t;
    const double h = clipped ? target - s.t : s.dt;
    const double at = compat::fabs( s.t );
    const double scale = 1.0 < at ? at : 1.0; // std::max(1.0, |t|)
    if ( !clipped && !( h > 4.0e-16 * scale ) )
    {
        s.idle = 1;
        s.status = static_cast<int>( SolverStatus::step_too_small );
        return;
    }
    s.h = h;
    s.clipped = clipped ? 1 : 0;
}

//! Whether an attempt runs now (its stage kernels do work).
KOKKOS_INLINE_FUNCTION bool device_wide_attempting( const DeviceWideStatus& s ) { return !s.stopped && !s.idle; }

/*!
  Whether this attempt's last kernel should also prepare the stiffness estimate (x_new + e and |e|^2): it
  is due if the attempt is accepted and completes a run of rkf45_stiffness_check_interval accepted steps.
*/
KOKKOS_INLINE_FUNCTION bool device_wide_check_due( const DeviceWideStatus& s, const DeviceWideParameters& p )
{
    return device_wide_attempting( s ) && p.automatic && s.since_check == rkf45_stiffness_check_interval - 1;
}

//! Feeds one estimate dt rho into the run of stiff estimates; true asks for BDF.
KOKKOS_INLINE_FUNCTION bool device_wide_stiff( DeviceWideStatus& s, double h_rho )
{
    StiffnessCounter counter{ s.stiff, s.nonstiff };
    const bool stiff = counter.stiff_enough( h_rho );
    s.stiff = counter.stiff;
    s.nonstiff = counter.nonstiff;
    return stiff;
}

/*!
  The decision after one attempt: first a pending stiffness estimate of the previous step from
  num = |f(x + e) - f(x)|^2 (a handover discards this attempt: the state is the one the estimate was for);
  then accept or reject from the attempt's reduced error measure q, the next step, t, the samples reached
  and, for the stiffness estimate, |e|^2 = den; then prepares the next attempt.
*/
KOKKOS_INLINE_FUNCTION void device_wide_control( DeviceWideStatus& s, const DeviceWideParameters& p, const double* times,
                                                 double q, double den, double num )
{
    if ( s.stopped )
        return;
    bool k1_from_check = false;
    if ( s.check_pending )
    {
        // The estimate's f(x) is this attempt's k1: both RHS evaluations count here.
        s.check_pending = 0;
        s.rhs_evaluations += 2;
        k1_from_check = true;
        if ( device_wide_stiff( s, s.check_h * compat::sqrt( num / s.check_den ) ) )
        {
            s.handover = 1;
            s.status = static_cast<int>( SolverStatus::success );
            s.k1_valid = 1;
            s.stopped = 1;
            return;
        }
    }
    if ( s.idle )
    {
        s.stopped = 1;
        return;
    }
    s.rhs_evaluations += ( s.k1_valid || k1_from_check ? 0 : 1 ) + 5;
    if ( k1_from_check )
        s.k1_valid = 1;
    s.record_begin = s.record_end = s.sample;
    double dt_new = 0.0;
    const bool accepted = rkf45_step_control( p.paper, q, p.n, s.h, dt_new );
    if ( !accepted )
    {
        ++s.rejected;
        s.dt = dt_new;
        if ( p.automatic && dt_new < p.stiffness_threshold )
            s.handover = 1;
    }
    else
    {
        s.current = 1 - s.current;
        s.k1_valid = 0;
        ++s.steps;
        s.t = s.clipped ? times[s.sample] : s.t + s.h;
        s.dt = s.clipped ? ( dt_new < s.dt ? s.dt : dt_new ) : dt_new; // std::max(dt_new, dt) when clipped
        while ( s.sample < p.samples && times[s.sample] <= s.t )
            ++s.sample;
        s.record_end = s.sample;
        if ( p.automatic && ++s.since_check >= rkf45_stiffness_check_interval )
        {
            s.since_check = 0;
            if ( den > 0.0 )
            {
                s.check_pending = 1;
                s.check_h = s.h;
                s.check_den = den;
            }
            else
                device_wide_stiff( s, 0.0 ); // never stiff: counts as a non-stiff estimate
        }
    }
    device_wide_prepare( s, p, times );
    if ( s.idle && !s.check_pending )
        s.stopped = 1;
}

} // namespace morula::ode::detail

#endif
