/*!
  \file StiffnessDetection.hpp
  \brief When Method::automatic switches between RKF45 and BDF: the thresholds, the run of stiff
         estimates RKF45 needs before it hands over, and the two estimates of the dominant eigenvalue.

  RKF45 -> BDF when a rejected RKF45 step proposes dt < eps_s (LASSIE's rule: Tangherloni et al. 2017,
  phase P4), or when three consecutive stiffness estimates (every 5 accepted steps: dt |f(x + e) - f(x)|
  / |e| with e = w - u) reach 2.0 - the paper's rule alone fires only for eigenvalues beyond 2.5/eps_s.
  BDF -> RKF45 when, at a check every `stiffness_check_interval` BDF steps, the Gershgorin bound on
  |lambda| (max row sum of |J|) times the BDF step is at most 1, well inside RKF45's stability interval.

  The estimates work on the integrator `in` of Integrator.hpp (its `map.n`, `vec(s, slot)`, `at(s, offset)`,
  `rhs(...)`, `sys` and `opt.linear`).
*/
#ifndef MORULA_ODE_DETAIL_STIFFNESSDETECTION_HPP
#define MORULA_ODE_DETAIL_STIFFNESSDETECTION_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/detail/FehlbergTableau.hpp>
#include <morula/ode/detail/NewtonSolve.hpp>
#include <morula/ode/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

// Stiffness detection thresholds (RKF45's real stability interval is about [-3, 0]): RKF45 -> BDF after
// this many consecutive checks with dt rho above the first bound; BDF -> RKF45 when the Gershgorin bound
// times h is below the second, well inside the interval so the two rules do not alternate.
constexpr double rkf45_stiff_h_rho = 2.0;
constexpr int rkf45_stiff_step_count = 3;          // consecutive stiff checks
constexpr int rkf45_stiffness_check_interval = 5;  // accepted RKF45 steps between checks
constexpr double bdf_to_rkf45_h_rho = 1.0;

//! Consecutive RKF45 stiffness checks: rkf45_stiff_step_count estimates of dt rho >= rkf45_stiff_h_rho in a
//! row ask for BDF; two non-stiff checks in a row reset the count.
struct StiffnessCounter
{
    int stiff = 0, nonstiff = 0;

    KOKKOS_INLINE_FUNCTION bool stiff_enough( double h_rho )
    {
        if ( h_rho >= rkf45_stiff_h_rho )
        {
            nonstiff = 0;
            if ( ++stiff >= rkf45_stiff_step_count )
            {
                stiff = 0;
                return true;
            }
        }
        else if ( ++nonstiff >= 2 )
            stiff = 0;
        return false;
    }
    KOKKOS_INLINE_FUNCTION void reset() { stiff = nonstiff = 0; }
};

/*!
  dt times an estimate of the dominant eigenvalue's modulus after an accepted RKF45 step:
  rho ~ |f(x + e) - f(x)| / |e| with e = w - u, the step's error vector (Shampine's idea, as in
  Hairer's DOPRI5 test). When stability limits the step, e is dominated by the stiff modes, so the
  quotient picks out their eigenvalue. Costs two RHS evaluations, one of which (f(x)) is the next
  step's k1 and is kept.
*/
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION double rkf45_stiffness( const Integrator& in, const Ops& ops, long s,
                                               typename Integrator::State& st, double dt )
{
    // e_i = b5_i - b4_i of Fehlberg's pair: dt sum_i e_i k_i = w - u.
    constexpr double e1 = fehlberg_e( 0 ), e3 = fehlberg_e( 2 ), e4 = fehlberg_e( 3 ), e5 = fehlberg_e( 4 ),
                     e6 = fehlberg_e( 5 );
    const int n = in.map.n;
    const auto x = in.vec( s, slot_x );
    const auto k1 = in.vec( s, slot_stage_k1 ), k3 = in.vec( s, slot_stage_k1 + 2 ), k4 = in.vec( s, slot_stage_k1 + 3 ),
               k5 = in.vec( s, slot_stage_k1 + 4 ), k6 = in.vec( s, slot_stage_k1 + 5 );
    const auto y = in.vec( s, slot_stage_input ), fy = in.vec( s, slot_tmp );
    const double den = ops.sum( n, [&]( int j ) {
        const double e = dt * ( e1 * k1[j] + e3 * k3[j] + e4 * k4[j] + e5 * k5[j] + e6 * k6[j] );
        y[j] = x[j] + e;
        return e * e;
    } );
    ops.barrier();
    if ( !( den > 0.0 ) )
        return 0.0;
    in.rhs( ops, s, st, y, fy );
    in.rhs( ops, s, st, x, k1 );
    st.k1_valid = true;
    const double num = ops.sum( n, [&]( int j ) {
        const double v = fy[j] - k1[j];
        return v * v;
    } );
    return dt * compat::sqrt( num / den );
}

//! Gershgorin bound on the spectral radius of J (max row sum of |J_ij|), from a fresh Jacobian at x.
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION double spectral_radius_bound( const Integrator& in, const Ops& ops, long s,
                                                     typename Integrator::State& st )
{
    const int n = in.map.n;
    evaluate_jacobian( in, ops, s, st, in.vec( s, slot_x ) );
    const auto J = in.at( s, in.map.jacobian );
    const bool sparse = in.opt.linear == LinearKind::sparse_bicgstab;
    const auto& sys = in.sys;
    return ops.max( n, [&]( int i ) {
        double r = 0.0;
        if ( sparse )
            for ( int z = sys.jacobian_row_offsets( i ); z < sys.jacobian_row_offsets( i + 1 ); ++z )
                r += compat::fabs( J[z] );
        else
            for ( int q = 0; q < n; ++q )
                r += compat::fabs( J[i * n + q] );
        return r;
    } );
}

} // namespace morula::ode::detail

#endif
