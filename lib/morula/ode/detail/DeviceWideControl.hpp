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

//! Rows of the device-wide stage buffer (8, n): k1 lives in row 0 or row dw_k1_alt (the stiffness check
//! computes the next step's k1 = f(x_new) before the step is accepted, so the current k1 must survive a
//! rejection), k2..k6 in rows 1..5, f(x + e) of the stiffness estimate in row dw_row_perturbed.
constexpr int dw_stage_rows = 8;
constexpr int dw_row_perturbed = 6;
constexpr int dw_k1_alt = 7;

//! One device-wide integration's state between attempts; lives in device memory, read back by the host
//! only every few attempts. Plain data (copied as bytes between host and device).
struct DeviceWideStatus
{
    double t = 0.0;  //!< time of the current state
    double dt = 0.0; //!< the step RKF45 proposes next
    double h = 0.0;  //!< the step of the pending attempt (dt, or clipped to the next sample time)
    long steps = 0, rejected = 0, rhs_evaluations = 0;
    int sample = 0;             //!< the first sample not yet reached
    int record_begin = 0;       //!< samples [record_begin, record_end) are reached but not yet written
    int record_end = 0;
    int clipped = 0;            //!< the pending attempt ends on a sample time
    int current = 0;            //!< which of the two state buffers holds x
    int k1_row = 0;             //!< stage row holding k1 = f(x): 0 or dw_k1_alt
    int k1_valid = 0;           //!< k1 already holds f(x) (after a stiffness check)
    int since_check = 0;        //!< accepted steps since the last stiffness check
    int stiff = 0, nonstiff = 0; //!< StiffnessCounter's run lengths
    int stopped = 0;            //!< no further attempt: all samples reached, a handover or an error
    int handover = 0;           //!< continue in the team integrator's BDF
    int status = 0;             //!< SolverStatus: success, max_steps or step_too_small
    int stop_sample = 0;        //!< pause once the samples before this one are reached (a leg of a paused run)
};

//! What the control needs besides the status: fixed for one solve.
struct DeviceWideParameters
{
    int n = 0;            //!< species
    int samples = 0;      //!< sample times
    bool paper = false;   //!< ErrorNorm::paper
    bool automatic = false; //!< Method::automatic (stiffness checks and handover)
    double stiffness_threshold = 0.0;
    long max_steps = 0;
};

/*!
  Sets up the next attempt: stops when every sample is reached, on a handover, at max_steps, or when the
  step fell below round-off; otherwise the attempt's step h is dt clipped to the next sample time.
*/
KOKKOS_INLINE_FUNCTION void device_wide_prepare( DeviceWideStatus& s, const DeviceWideParameters& p, const double* times )
{
    if ( s.stopped )
        return;
    if ( s.handover || s.sample >= p.samples || s.sample >= s.stop_sample )
    {
        s.stopped = 1;
        return;
    }
    if ( s.steps + s.rejected >= p.max_steps )
    {
        s.stopped = 1;
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
        s.stopped = 1;
        s.status = static_cast<int>( SolverStatus::step_too_small );
        return;
    }
    s.h = h;
    s.clipped = clipped ? 1 : 0;
}

/*!
  Whether this attempt's kernels should also prepare the stiffness estimate: it is due if the attempt is
  accepted and completes a run of rkf45_stiffness_check_interval accepted steps.
*/
KOKKOS_INLINE_FUNCTION bool device_wide_check_due( const DeviceWideStatus& s, const DeviceWideParameters& p )
{
    return !s.stopped && p.automatic && s.since_check == rkf45_stiffness_check_interval - 1;
}

/*!
  The decision after one attempt from its reduced error measure q (and, when the check was due, the
  stiffness estimate's |e|^2 = den and |f(x + e) - f(x)|^2 = num): accept or reject, the next step, t,
  the samples reached, the stiffness counters; then prepares the next attempt.
*/
KOKKOS_INLINE_FUNCTION void device_wide_control( DeviceWideStatus& s, const DeviceWideParameters& p, const double* times,
                                                 double q, double den, double num )
{
    if ( s.stopped )
        return;
    const bool check = device_wide_check_due( s, p );
    s.rhs_evaluations += ( s.k1_valid ? 0 : 1 ) + 5;
    s.record_begin = s.record_end = s.sample;
    double dt_new = 0.0;
    const bool accepted = rkf45_step_control( p.paper, q, p.n, s.h, dt_new );
    if ( !accepted )
    {
        ++s.rejected;
        s.dt = dt_new;
        if ( p.automatic && dt_new < p.stiffness_threshold )
            s.handover = 1;
        device_wide_prepare( s, p, times );
        return;
    }
    s.current = 1 - s.current;
    s.k1_valid = 0;
    ++s.steps;
    s.t = s.clipped ? times[s.sample] : s.t + s.h;
    s.dt = s.clipped ? ( dt_new < s.dt ? s.dt : dt_new ) : dt_new; // std::max(dt_new, dt) when clipped
    while ( s.sample < p.samples && times[s.sample] <= s.t )
        ++s.sample;
    s.record_end = s.sample;
    if ( check )
    {
        s.since_check = 0;
        double h_rho = 0.0;
        if ( den > 0.0 )
        {
            // The check's f(x_new) is the next step's k1, written to the other k1 row.
            s.rhs_evaluations += 2;
            s.k1_row = s.k1_row == 0 ? dw_k1_alt : 0;
            s.k1_valid = 1;
            h_rho = s.h * compat::sqrt( num / den );
        }
        StiffnessCounter counter{ s.stiff, s.nonstiff };
        if ( counter.stiff_enough( h_rho ) )
            s.handover = 1;
        s.stiff = counter.stiff;
        s.nonstiff = counter.nonstiff;
    }
    else if ( p.automatic )
        ++s.since_check;
    device_wide_prepare( s, p, times );
}

} // namespace morula::ode::detail

#endif
