/*!
  \file Bdf.hpp
  \brief One system's BDF of orders 1-5: start, one accepted step with its retries, order and step
         selection, and the dense output between steps.

  Variable-step, variable-order (1..max) backward differentiation in the backward-difference form of
  L. F. Shampine and M. W. Reichelt, "The MATLAB ODE Suite", SIAM J. Sci. Comput. 18(1):1-22, 1997,
  section 2 (the NDFs of ode15s, here with kappa = 0: plain BDF), as SciPy's BDF implements it
  (scipy/integrate/_ivp/bdf.py): the difference array D_0..D_{q+2}, predictor sum_{i<=q} D_i, Newton on
  (I - c J) with c = h / gamma_q and the analytic Jacobian (re-evaluated only when Newton fails to
  converge), local error (1/(q+1)) d, order change after q+1 equal steps, step change by the
  interpolation matrices R(q, factor) U(q). Samples between steps come from the BDF interpolating
  polynomial (dense output), so sampling never shortens a BDF step.
  Fixed-step mode (LASSIE's setting: q = 1, dt = 0.1): Newton to max |dy| < eps_NR with the Jacobian
  evaluated once per step, no error test.

  The functions work on the integrator `in` of Integrator.hpp: its `map.n`, `vec(s, slot)`, `rhs(...)`,
  `step_underflows(t, h)`, `opt`, `atol`, `sample_times`, `saved_species` and `output`, and the BDF part
  of its per-system state.
*/
#ifndef MORULA_ODE_DETAIL_BDF_HPP
#define MORULA_ODE_DETAIL_BDF_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/NewtonSolve.hpp>
#include <morula/ode/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

constexpr int bdf_max_order_supported = 5;

//! gamma_q = sum_{i=1..q} 1/i.
KOKKOS_INLINE_FUNCTION double bdf_gamma( int q )
{
    double g = 0.0;
    for ( int i = 1; i <= q; ++i )
        g += 1.0 / i;
    return g;
}
KOKKOS_INLINE_FUNCTION double bdf_error_constant( int q ) { return 1.0 / ( q + 1 ); }

//! RMS of c v_j / scale_j over n components.
template <class Ops>
KOKKOS_INLINE_FUNCTION double scaled_rms( const Ops& ops, int n, const Strided<double>& v, const Strided<double>& scale,
                                          double c )
{
    if ( n == 0 )
        return 0.0;
    const double ss = ops.sum( n, [&]( int j ) {
        const double e = c * v[j] / scale[j];
        return e * e;
    } );
    return compat::sqrt( ss / n );
}

/*!
  Rescales the differences D_0..D_q for a step multiplied by `factor`: D <- (R U)^T D with
  R_ij = prod_{m=1..i} (m - 1 - factor j) / m = (1/i!) prod_{m=0..i-1} (m - factor j) and U = R at
  factor 1 - the change of step size in backward-difference form of Shampine & Reichelt (1997),
  section 2, where it is derived for the NDFs and BDFs alike (the matrices R and U there; SciPy's
  compute_R and change_D).
*/
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION void bdf_change_differences( const Integrator& in, const Ops& ops, long s, int q, double factor )
{
    constexpr int K = bdf_max_order_supported + 1;
    double R[K][K], U[K][K], RU[K][K];
    for ( int j = 0; j <= q; ++j )
    {
        R[0][j] = 1.0;
        U[0][j] = 1.0;
    }
    for ( int i = 1; i <= q; ++i )
        for ( int j = 0; j <= q; ++j )
        {
            R[i][j] = R[i - 1][j] * ( i - 1 - factor * j ) / i;
            U[i][j] = U[i - 1][j] * ( i - 1 - 1.0 * j ) / i;
        }
    for ( int i = 0; i <= q; ++i )
        for ( int j = 0; j <= q; ++j )
        {
            double v = 0.0;
            for ( int l = 0; l <= q; ++l )
                v += R[i][l] * U[l][j];
            RU[i][j] = v;
        }
    const auto D0 = in.vec( s, 0 );
    const int n = in.map.n;
    ops.for_each( n, [&]( int c ) {
        double old[K], neu[K];
        for ( int i = 0; i <= q; ++i )
            old[i] = D0.offset( long( i ) * n )[c];
        for ( int j = 0; j <= q; ++j )
        {
            double v = 0.0;
            for ( int i = 0; i <= q; ++i )
                v += RU[i][j] * old[i];
            neu[j] = v;
        }
        for ( int j = 0; j <= q; ++j )
            D0.offset( long( j ) * n )[c] = neu[j];
    } );
}

//! (Re)starts BDF at the current (t, x): order 1, D_1 = h f(x).
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION void bdf_start( const Integrator& in, const Ops& ops, long s, typename Integrator::State& st,
                                       double h )
{
    const int n = in.map.n;
    const auto D1 = in.vec( s, 1 );
    const auto f = in.vec( s, slot_bdf_f );
    in.rhs( ops, s, st, in.vec( s, slot_x ), f );
    ops.for_each( n, [&]( int j ) { D1[j] = h * f[j]; } );
    st.order = 1;
    st.h = h;
    st.n_equal_steps = 0;
    st.steps_since_check = 0;
    st.lu_c = -1.0;
    st.jacobian_valid = false;
    st.jacobian_current = false;
    st.in_bdf = true;
}

//! One accepted BDF step (with internal retries). Returns a SolverStatus (success when accepted).
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION SolverStatus bdf_step( const Integrator& in, const Ops& ops, long s,
                                              typename Integrator::State& st, double t_end )
{
    const auto& opt = in.opt;
    const auto& atol = in.atol;
    const int n = in.map.n;
    const bool fixed = opt.bdf_fixed_step > 0.0;
    const int maxit = fixed ? opt.fixed_step_max_newton_iterations : opt.max_newton_iterations;
    const double rtol = opt.rtol;
    const int atol_count = static_cast<int>( atol.extent( 0 ) );
    const auto D0 = in.vec( s, 0 );
    const auto y = in.vec( s, slot_bdf_y ), d = in.vec( s, slot_bdf_d ), f = in.vec( s, slot_bdf_f ),
               scale = in.vec( s, slot_bdf_scale ), psi = in.vec( s, slot_bdf_psi ), yp = in.vec( s, slot_bdf_predict );
    const double eps = 2.220446049250313e-16;
    const double newton_tol = fixed ? opt.newton_tolerance
                                    : ( rtol > 0.0 ? compat::fmax( 10.0 * eps / rtol, compat::fmin( 0.03, compat::sqrt( rtol ) ) ) : 0.03 );
    double error_norm = 0.0, safety = 0.9;
    for ( ;; )
    {
        if ( st.counters[stat_steps] + st.counters[stat_rejected] >= opt.max_steps )
            return SolverStatus::max_steps;
        if ( st.t + st.h > t_end )
        {
            const double factor = ( t_end - st.t ) / st.h;
            bdf_change_differences( in, ops, s, st.order, factor );
            st.h = t_end - st.t;
            st.lu_c = -1.0;
        }
        if ( in.step_underflows( st.t, st.h ) )
            return SolverStatus::step_too_small;
        const int q = st.order;
        const double gq = bdf_gamma( q );
        ops.for_each( n, [&]( int j ) {
            double pred = 0.0, ps = 0.0, g = 0.0;
            for ( int i = 0; i <= q; ++i )
            {
                const double Di = D0.offset( long( i ) * n )[j];
                pred += Di;
                if ( i > 0 )
                {
                    g += 1.0 / i;
                    ps += g * Di;
                }
            }
            yp[j] = pred;
            y[j] = pred;
            psi[j] = ps / gq;
            d[j] = 0.0;
            scale[j] = atol( atol_count == 1 ? 0 : j ) + rtol * compat::fabs( pred );
        } );
        const double c = st.h / gq;
        if ( fixed || !st.jacobian_valid )
            evaluate_jacobian( in, ops, s, st, yp );
        if ( st.lu_c != c )
            if ( !form_newton_matrix( in, ops, s, st, c ) )
                return SolverStatus::singular_matrix;

        // Newton: (I - cJ) dy = c f(y) - psi - d
        bool converged = false;
        double dy_norm_old = -1.0;
        int iterations = 0;
        for ( int k = 0; k < maxit; ++k )
        {
            ++iterations;
            in.rhs( ops, s, st, y, f );
            ops.for_each( n, [&]( int j ) { f[j] = c * f[j] - psi[j] - d[j]; } );
            if ( !newton_solve( in, ops, s, st, f ) )
                break;
            double dy_norm;
            if ( fixed )
                dy_norm = ops.max( n, [&]( int j ) { return compat::fabs( f[j] ); } );
            else
                dy_norm = scaled_rms( ops, n, f, scale, 1.0 );
            if ( !( dy_norm == dy_norm ) )
                break;
            const double rate = dy_norm_old >= 0.0 ? dy_norm / dy_norm_old : -1.0;
            if ( !fixed && rate >= 0.0 &&
                 ( rate >= 1.0 || compat::pow( rate, double( maxit - k ) ) / ( 1.0 - rate ) * dy_norm > newton_tol ) )
                break;
            ops.for_each( n, [&]( int j ) {
                y[j] += f[j];
                d[j] += f[j];
            } );
            if ( fixed ? dy_norm < newton_tol
                       : ( dy_norm == 0.0 || ( rate >= 0.0 && rate / ( 1.0 - rate ) * dy_norm < newton_tol ) ) )
            {
                converged = true;
                break;
            }
            dy_norm_old = dy_norm;
        }
        st.counters[stat_newton_iterations] += iterations;
        if ( !converged )
        {
            if ( fixed )
                return SolverStatus::newton_failure;
            ++st.counters[stat_rejected];
            if ( !st.jacobian_current )
            {
                evaluate_jacobian( in, ops, s, st, yp );
                continue;
            }
            bdf_change_differences( in, ops, s, st.order, 0.5 );
            st.h *= 0.5;
            st.n_equal_steps = 0;
            st.lu_c = -1.0;
            continue;
        }
        if ( fixed )
            break;
        safety = 0.9 * ( 2 * maxit + 1 ) / ( 2 * maxit + iterations );
        ops.for_each( n, [&]( int j ) { scale[j] = atol( atol_count == 1 ? 0 : j ) + rtol * compat::fabs( y[j] ); } );
        error_norm = scaled_rms( ops, n, d, scale, bdf_error_constant( q ) );
        if ( error_norm > 1.0 || !( error_norm == error_norm ) )
        {
            ++st.counters[stat_rejected];
            double factor = error_norm == error_norm ? safety * compat::pow( error_norm, -1.0 / ( q + 1 ) ) : 0.2;
            factor = factor < 0.2 ? 0.2 : factor;
            bdf_change_differences( in, ops, s, q, factor );
            st.h *= factor;
            st.n_equal_steps = 0;
            st.lu_c = -1.0;
            continue;
        }
        break;
    }

    // Accepted: update the differences. D_{q+2} = d - D_{q+1}; D_{q+1} = d; D_i += D_{i+1}, i = q..0.
    const int q = st.order;
    ops.for_each( n, [&]( int j ) {
        const double dj = d[j];
        D0.offset( long( q + 2 ) * n )[j] = dj - D0.offset( long( q + 1 ) * n )[j];
        D0.offset( long( q + 1 ) * n )[j] = dj;
        for ( int i = q; i >= 0; --i )
            D0.offset( long( i ) * n )[j] += D0.offset( long( i + 1 ) * n )[j];
    } );
    st.t += st.h;
    st.jacobian_current = false;
    ++st.n_equal_steps;
    if ( fixed || st.n_equal_steps < q + 1 )
        return SolverStatus::success;

    // Order and step selection from the error estimates at orders q-1, q, q+1.
    const double inf = 1e300;
    const double err_m = q > 1 ? scaled_rms( ops, n, D0.offset( long( q ) * n ), scale, bdf_error_constant( q - 1 ) ) : inf;
    const double err_p = q < opt.bdf_max_order ? scaled_rms( ops, n, D0.offset( long( q + 2 ) * n ), scale, bdf_error_constant( q + 1 ) ) : inf;
    auto gain = [&]( double e, int p ) { return e >= inf ? 0.0 : ( e > 0.0 ? compat::pow( e, -1.0 / p ) : 1e300 ); };
    const double fm = gain( err_m, q ), f0 = gain( error_norm, q + 1 ), fp = gain( err_p, q + 2 );
    int delta = 0;
    double best = f0;
    if ( fm > best )
    {
        best = fm;
        delta = -1;
    }
    if ( fp > best )
    {
        best = fp;
        delta = 1;
    }
    st.order = q + delta;
    double factor = safety * best;
    factor = factor > 10.0 ? 10.0 : factor;
    bdf_change_differences( in, ops, s, st.order, factor );
    st.h *= factor;
    st.n_equal_steps = 0;
    st.lu_c = -1.0;
    return SolverStatus::success;
}

//! Fills every sample in (t_old, t] from the BDF interpolating polynomial through the last q+1 points.
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION void bdf_dense_output( const Integrator& in, const Ops& ops, long s, typename Integrator::State& st )
{
    const auto& sample_times = in.sample_times;
    const auto& saved_species = in.saved_species;
    const auto& output = in.output;
    const int nsamples = sample_times.count();
    const int n = in.map.n;
    const int saved = static_cast<int>( saved_species.extent( 0 ) );
    const auto D0 = in.vec( s, 0 );
    const int q = st.order;
    while ( st.sample < nsamples && sample_times( s, st.sample ) <= st.t )
    {
        const double ts = sample_times( s, st.sample );
        double p[bdf_max_order_supported + 1];
        double prod = 1.0;
        for ( int j = 0; j < q; ++j )
        {
            prod *= ( ts - ( st.t - st.h * j ) ) / ( st.h * ( 1 + j ) );
            p[j] = prod;
        }
        const int sample = st.sample;
        ops.for_each( saved, [&]( int jj ) {
            const int c = saved_species( jj );
            double v = D0[c];
            for ( int j = 0; j < q; ++j )
                v += p[j] * D0.offset( long( j + 1 ) * n )[c];
            output( s, sample, jj ) = v;
        } );
        ++st.sample;
    }
}

} // namespace morula::ode::detail

#endif
