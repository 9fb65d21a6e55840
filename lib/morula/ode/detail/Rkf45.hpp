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
#include <morula/ode/detail/FehlbergTableau.hpp>
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
    // Fehlberg's coefficients, named for the unrolled stages (FehlbergTableau.hpp).
    constexpr double a21 = fehlberg_a( 1, 0 );
    constexpr double a31 = fehlberg_a( 2, 0 ), a32 = fehlberg_a( 2, 1 );
    constexpr double a41 = fehlberg_a( 3, 0 ), a42 = fehlberg_a( 3, 1 ), a43 = fehlberg_a( 3, 2 );
    constexpr double a51 = fehlberg_a( 4, 0 ), a52 = fehlberg_a( 4, 1 ), a53 = fehlberg_a( 4, 2 ), a54 = fehlberg_a( 4, 3 );
    constexpr double a61 = fehlberg_a( 5, 0 ), a62 = fehlberg_a( 5, 1 ), a63 = fehlberg_a( 5, 2 ), a64 = fehlberg_a( 5, 3 ),
                     a65 = fehlberg_a( 5, 4 );
    constexpr double b41 = fehlberg_b4( 0 ), b43 = fehlberg_b4( 2 ), b44 = fehlberg_b4( 3 ), b45 = fehlberg_b4( 4 );
    constexpr double b51 = fehlberg_b5( 0 ), b53 = fehlberg_b5( 2 ), b54 = fehlberg_b5( 3 ), b55 = fehlberg_b5( 4 ),
                     b56 = fehlberg_b5( 5 );
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
