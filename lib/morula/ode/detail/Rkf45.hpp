/*!
  \file Rkf45.hpp
  \brief One RKF45 step of one system (Fehlberg's 4(5) pair) and its accept/reject and step-size rule.

  Paper norm (LASSIE: Tangherloni et al., BMC Bioinformatics 18:246, 2017, eq. (3) and the text after
  it): ER_j = |w_j - u_j| / dt <= eps_j for every j, keep u, dt *= min_j 0.84 (eps_j/ER_j)^(1/4) (growth
  capped at 5). Mixed norm: RMS of |w - u| / (atol + rtol max(|x|,|w|)) <= 1, keep w, dt *= 0.9
  err^(-1/5) within [0.2, 5].

  `rkf45_attempt` works on the integrator `in` of Integrator.hpp and uses its `map.n`, `vec(s, slot)`,
  `rhs(ops, s, st, x, f)`, `opt.norm`, `opt.rtol` and `atol`, and the state's `k1_valid`.
*/
#ifndef MORULA_ODE_DETAIL_RKF45_HPP
#define MORULA_ODE_DETAIL_RKF45_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

/*!
  RKF45's accept/reject decision and next step from the reduced error measure q: max_j ER_j / eps_j for
  the paper's rule, sum_j (|w_j - u_j| / sc_j)^2 over n species for the mixed norm. Shared by the
  thread/team integrator and the device-wide driver, so both modes take the same steps.
*/
KOKKOS_INLINE_FUNCTION bool rkf45_step_control( bool paper, double q, int n, double dt, double& dt_new )
{
    if ( paper )
    {
        // dt min_j 0.84 (eps_j / ER_j)^(1/4) = dt 0.84 (max_j ER_j / eps_j)^(-1/4), growth capped at 5
        double delta = q > 0.0 ? 0.84 * compat::pow( q, -0.25 ) : 5.0;
        if ( !( delta <= 5.0 ) ) // also catches NaN
            delta = q > 0.0 ? 5.0 : 0.1;
        dt_new = dt * delta;
        return q <= 1.0;
    }
    const double err = n > 0 ? compat::sqrt( q / n ) : 0.0;
    double factor = err > 0.0 ? 0.9 * compat::pow( err, -0.2 ) : 5.0;
    factor = factor > 5.0 ? 5.0 : ( factor < 0.2 ? 0.2 : factor );
    if ( !( err == err ) )
        factor = 0.2;
    dt_new = dt * factor;
    return err <= 1.0;
}

/*!
  One RKF45 attempt of size dt from (t, x) of system s. Returns true when accepted (x updated); `dt_new`
  is the proposed next step in both cases.
*/
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION bool rkf45_attempt( const Integrator& in, const Ops& ops, long s, typename Integrator::State& st,
                                           double dt, double& dt_new )
{
    // Fehlberg's coefficients (Fehlberg 1969, NASA TR R-315, Table III).
    constexpr double a21 = 1.0 / 4.0;
    constexpr double a31 = 3.0 / 32.0, a32 = 9.0 / 32.0;
    constexpr double a41 = 1932.0 / 2197.0, a42 = -7200.0 / 2197.0, a43 = 7296.0 / 2197.0;
    constexpr double a51 = 439.0 / 216.0, a52 = -8.0, a53 = 3680.0 / 513.0, a54 = -845.0 / 4104.0;
    constexpr double a61 = -8.0 / 27.0, a62 = 2.0, a63 = -3544.0 / 2565.0, a64 = 1859.0 / 4104.0, a65 = -11.0 / 40.0;
    constexpr double b41 = 25.0 / 216.0, b43 = 1408.0 / 2565.0, b44 = 2197.0 / 4104.0, b45 = -1.0 / 5.0;
    constexpr double b51 = 16.0 / 135.0, b53 = 6656.0 / 12825.0, b54 = 28561.0 / 56430.0, b55 = -9.0 / 50.0, b56 = 2.0 / 55.0;
    const int n = in.map.n;
    const auto x = in.vec( s, slot_x );
    const auto k1 = in.vec( s, slot_stage_k1 ), k2 = in.vec( s, slot_stage_k1 + 1 ), k3 = in.vec( s, slot_stage_k1 + 2 ),
               k4 = in.vec( s, slot_stage_k1 + 3 ), k5 = in.vec( s, slot_stage_k1 + 4 ), k6 = in.vec( s, slot_stage_k1 + 5 );
    const auto y = in.vec( s, slot_stage_input );
    const auto xn = in.vec( s, slot_new_state );
    if ( !st.k1_valid )
    {
        in.rhs( ops, s, st, x, k1 );
        st.k1_valid = true;
    }
    ops.for_each( n, [&]( int j ) { y[j] = x[j] + dt * a21 * k1[j]; } );
    in.rhs( ops, s, st, y, k2 );
    ops.for_each( n, [&]( int j ) { y[j] = x[j] + dt * ( a31 * k1[j] + a32 * k2[j] ); } );
    in.rhs( ops, s, st, y, k3 );
    ops.for_each( n, [&]( int j ) { y[j] = x[j] + dt * ( a41 * k1[j] + a42 * k2[j] + a43 * k3[j] ); } );
    in.rhs( ops, s, st, y, k4 );
    ops.for_each( n, [&]( int j ) { y[j] = x[j] + dt * ( a51 * k1[j] + a52 * k2[j] + a53 * k3[j] + a54 * k4[j] ); } );
    in.rhs( ops, s, st, y, k5 );
    ops.for_each( n, [&]( int j ) {
        y[j] = x[j] + dt * ( a61 * k1[j] + a62 * k2[j] + a63 * k3[j] + a64 * k4[j] + a65 * k5[j] );
    } );
    in.rhs( ops, s, st, y, k6 );

    const bool paper = in.opt.norm == ErrorNorm::paper;
    const double rtol = in.opt.rtol;
    const auto& atol = in.atol;
    const int atol_count = static_cast<int>( atol.extent( 0 ) );
    auto tol_of = [&]( int j ) { return atol( atol_count == 1 ? 0 : j ); };
    // u (4th order) and w (5th order); the kept one goes to xn; the error term is |w - u|.
    auto measure = [&]( int j ) {
        const double u = x[j] + dt * ( b41 * k1[j] + b43 * k3[j] + b44 * k4[j] + b45 * k5[j] );
        const double w = x[j] + dt * ( b51 * k1[j] + b53 * k3[j] + b54 * k4[j] + b55 * k5[j] + b56 * k6[j] );
        const double e = compat::fabs( w - u );
        if ( paper )
        {
            xn[j] = u;
            return e / dt / tol_of( j ); // ER_j / eps_j
        }
        xn[j] = w;
        const double ax = compat::fabs( x[j] ), aw = compat::fabs( w );
        const double sc = tol_of( j ) + rtol * ( ax > aw ? ax : aw );
        const double r = e / sc;
        return r * r;
    };
    double q = paper ? ops.max( n, measure ) : ops.sum( n, measure );
    ops.barrier();
    const bool accepted = rkf45_step_control( paper, q, n, dt, dt_new );
    if ( accepted )
    {
        ops.for_each( n, [&]( int j ) { x[j] = xn[j]; } );
        st.k1_valid = false;
    }
    return accepted;
}

} // namespace morula::ode::detail

#endif
