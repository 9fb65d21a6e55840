/*!
  \file RosenbrockGeneral.hpp
  \brief The Rosenbrock methods (Rodas5P, Rodas4, Rosenbrock23) on the general path: one system's attempt
         over its workspace vectors, thread or team per system (Integrator.hpp), for networks of any size
         and any model with a Jacobian - where the register-resident kernel (RosenbrockBatch.hpp) cannot
         hold the system, and in the fine-grained mode.

  The same methods, error norm and step-size rule as the register kernel (mixed norm; next step
  h min(5, max(0.2, 0.9 err^(-1/(q+1)))), no growth right after a rejection; samples inside a step by dense
  output, or with SampleOutput::step_to_sample a step that would pass the next sample ends on it), built from the BDF path's linear algebra: the Jacobian into the workspace and
  M = I - c J factorised once per attempt (dense pivoted LU, KokkosBatched LU, or BiCGStab on the sparse
  pattern, as `opt.linear` says; the Jacobian is evaluated once per state, so a retry after a rejection
  reuses it), c = h gamma for Rodas and h d for Rosenbrock23. W = I/(h gamma) - J is
  M / (h gamma), so a stage K = W^-1 b is c M^-1 b. The controller's power is taken in double here (the
  register kernel takes it in float to spare FP64 instructions), so the two paths' steps agree to round-off,
  not bit for bit.

  Workspace slots while a Rosenbrock method runs (no RKF45 or BDF state is live then): the state in slot 0,
  the stages K_0..K_{S-1} in slots 1..8, the stage input and then the new state in 9, the right-hand side
  being solved in 10, f(x) in 11 (valid while `st.k1_valid`: kept across a rejection, the state unchanged).
*/
#ifndef MORULA_ODE_DETAIL_ROSENBROCKGENERAL_HPP
#define MORULA_ODE_DETAIL_ROSENBROCKGENERAL_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/NewtonSolve.hpp>
#include <morula/ode/detail/RosenbrockTableau.hpp>
#include <morula/ode/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

#include <limits>

namespace morula::ode::detail
{

enum RosenbrockSlot : int
{
    slot_rosenbrock_stage = 1,     // K_0 .. K_7 in 1..8
    slot_rosenbrock_input = 9,     // the stage input u, then the new state
    slot_rosenbrock_rhs = 10,      // the right-hand side being solved
    slot_rosenbrock_f = 11         // f(x)
};

KOKKOS_INLINE_FUNCTION bool is_rosenbrock_method( Method m )
{
    return m == Method::rodas5p || m == Method::rodas4 || m == Method::rosenbrock23;
}

//! The order of a Rosenbrock method's error estimate (the controller's exponent is 1/(q+1)).
KOKKOS_INLINE_FUNCTION int rosenbrock_error_order( Method m )
{
    return m == Method::rodas5p ? Rodas5PTableau::error_order
           : m == Method::rodas4 ? Rodas4Tableau::error_order
                                 : Rosenbrock23Constants::error_order;
}

//! The outcome of one attempt: whether W could be factorised, the squared error norm (NaN when not), and
//! whether the new state stays in the domain (every species >= 0 where nonnegativity is enforced).
struct RosenbrockAttempt
{
    bool factored = false;
    bool inside = true;
    double norm2 = 0.0;
};

/*!
  The mixed error norm squared, mean_i (e_i / sc_i)^2 with sc_i = atol_i + rtol max(|x_i|, |x_new,i|) (a
  species with scale 0 counts 0 for no error, infinity for any), and the domain check, of the new state
  in `xn` and the error in `e`.
*/
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION void rosenbrock_measure( const Integrator& in, const Ops& ops, const Strided<double>& x,
                                                const Strided<double>& xn, const Strided<double>& e, RosenbrockAttempt& a )
{
    const int n = in.map.n;
    const double rtol = in.opt.rtol;
    const auto& atol = in.atol;
    const bool one = atol.extent( 0 ) == 1;
    const double sum = ops.sum( n, [&]( int j ) {
        const double ax = compat::fabs( x[j] ), an = compat::fabs( xn[j] );
        const double sc = atol( one ? 0 : j ) + rtol * ( ax > an ? ax : an );
        const double r = sc > 0.0 ? e[j] / sc : ( e[j] == 0.0 ? 0.0 : std::numeric_limits<double>::infinity() );
        return r * r;
    } );
    a.norm2 = n > 0 ? sum / n : 0.0;
    if ( in.opt.nonnegative )
        a.inside = ops.max( n, [&]( int j ) { return xn[j] < 0.0 ? 1.0 : 0.0; } ) == 0.0;
}

/*!
  What every attempt starts with: f(x) into slot 11 unless it is still valid, the Jacobian at x unless it is
  current (a retry after a rejection: x unchanged), and M = I - c J factorised. A singular M gives an
  attempt with `factored` false and a NaN norm (the caller shrinks the step).
*/
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION RosenbrockAttempt rosenbrock_factor( const Integrator& in, const Ops& ops, long s,
                                                            typename Integrator::State& st, double c )
{
    const auto x = in.vec( s, slot_x );
    RosenbrockAttempt a;
    if ( !st.k1_valid )
    {
        in.rhs( ops, s, st, x, in.vec( s, slot_rosenbrock_f ) );
        st.k1_valid = true;
    }
    if ( !st.jacobian_current )
        evaluate_jacobian( in, ops, s, st, x );
    a.factored = form_newton_matrix( in, ops, s, st, c );
    if ( !a.factored )
        a.norm2 = std::numeric_limits<double>::quiet_NaN();
    return a;
}

/*!
  One attempt of a stiffly accurate Rodas method (Rodas4, Rodas5P) of step h from x: the new state into
  slot 9, its error estimate (the last stage) in slot 8 at most. f(x) is in slot 11 when st.k1_valid.
*/
template <class Tableau, class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION RosenbrockAttempt rodas_attempt( const Integrator& in, const Ops& ops, long s,
                                                        typename Integrator::State& st, double h )
{
    constexpr int S = Tableau::stages;
    const int n = in.map.n;
    const auto x = in.vec( s, slot_x );
    const auto u = in.vec( s, slot_rosenbrock_input );
    const auto b = in.vec( s, slot_rosenbrock_rhs );
    const auto fx = in.vec( s, slot_rosenbrock_f );
    const double c = h * Tableau::gamma;
    RosenbrockAttempt a = rosenbrock_factor( in, ops, s, st, c );
    if ( !a.factored )
        return a;
    const double inverse_h = 1.0 / h;
    for ( int stage = 0; stage < S; ++stage )
    {
        if ( stage == 0 )
            ops.for_each( n, [&]( int j ) { b[j] = fx[j]; } );
        else
        {
            ops.for_each( n, [&]( int j ) {
                double sum = x[j];
                for ( int l = 0; l < stage; ++l )
                    sum += Tableau::a( stage, l ) * in.vec( s, slot_rosenbrock_stage + l )[j];
                u[j] = sum;
            } );
            in.rhs( ops, s, st, u, b );
            ops.for_each( n, [&]( int j ) {
                double sum = 0.0;
                for ( int l = 0; l < stage; ++l )
                    sum += Tableau::c( stage, l ) * in.vec( s, slot_rosenbrock_stage + l )[j];
                b[j] += sum * inverse_h;
            } );
        }
        if ( !newton_solve( in, ops, s, st, b ) )
        {
            a.factored = false; // the iterative solver did not converge: a smaller step is retried
            a.norm2 = std::numeric_limits<double>::quiet_NaN();
            return a;
        }
        const auto K = in.vec( s, slot_rosenbrock_stage + stage );
        ops.for_each( n, [&]( int j ) { K[j] = c * b[j]; } );
    }
    // Stiffly accurate: x_new = u_{S-1} + K_{S-1}, and K_{S-1} is the error estimate.
    const auto last = in.vec( s, slot_rosenbrock_stage + S - 1 );
    ops.for_each( n, [&]( int j ) { u[j] += last[j]; } );
    rosenbrock_measure( in, ops, x, u, last, a );
    return a;
}

/*!
  One attempt of Shampine and Reichelt's Rosenbrock23 of step h from x (W = I - h d J = M with c = h d):
    k1 = W^-1 F0,  F1 = f(x + h/2 k1),  k2 = W^-1 (F1 - k1) + k1,  x_new = x + h k2,
    F2 = f(x_new),  k3 = W^-1 (F2 - e32 (k2 - F1) - 2 (k1 - F0)),  error = h/6 (k1 - 2 k2 + k3).
  F2 goes to slot 12 (the caller makes it f(x) after an accepted step: first same as last).
*/
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION RosenbrockAttempt rosenbrock23_attempt( const Integrator& in, const Ops& ops, long s,
                                                               typename Integrator::State& st, double h )
{
    using C = Rosenbrock23Constants;
    const int n = in.map.n;
    const auto x = in.vec( s, slot_x );
    const auto k1 = in.vec( s, slot_rosenbrock_stage ), k2 = in.vec( s, slot_rosenbrock_stage + 1 ),
               k3 = in.vec( s, slot_rosenbrock_stage + 2 ), F1 = in.vec( s, slot_rosenbrock_stage + 3 ),
               error = in.vec( s, slot_rosenbrock_stage + 4 );
    const auto u = in.vec( s, slot_rosenbrock_input );
    const auto fx = in.vec( s, slot_rosenbrock_f );
    const auto F2 = in.vec( s, slot_rosenbrock_f + 1 );
    RosenbrockAttempt a = rosenbrock_factor( in, ops, s, st, h * C::d );
    if ( !a.factored )
        return a;
    bool solved = true;
    ops.for_each( n, [&]( int j ) { k1[j] = fx[j]; } );
    solved = newton_solve( in, ops, s, st, k1 ) && solved;
    ops.for_each( n, [&]( int j ) { u[j] = x[j] + 0.5 * h * k1[j]; } );
    in.rhs( ops, s, st, u, F1 );
    ops.for_each( n, [&]( int j ) { k2[j] = F1[j] - k1[j]; } );
    solved = newton_solve( in, ops, s, st, k2 ) && solved;
    ops.for_each( n, [&]( int j ) {
        k2[j] += k1[j];
        u[j] = x[j] + h * k2[j];
    } );
    in.rhs( ops, s, st, u, F2 );
    ops.for_each( n, [&]( int j ) { k3[j] = F2[j] - C::e32 * ( k2[j] - F1[j] ) - 2.0 * ( k1[j] - fx[j] ); } );
    solved = newton_solve( in, ops, s, st, k3 ) && solved;
    if ( !solved )
    {
        a.factored = false;
        a.norm2 = std::numeric_limits<double>::quiet_NaN();
        return a;
    }
    const double sixth = h / 6.0;
    ops.for_each( n, [&]( int j ) { error[j] = sixth * ( k1[j] - 2.0 * k2[j] + k3[j] ); } );
    rosenbrock_measure( in, ops, x, u, error, a );
    return a;
}

//! One attempt of Rosenbrock method `method`: the new state in slot 9.
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION RosenbrockAttempt rosenbrock_attempt( const Integrator& in, const Ops& ops, long s,
                                                             typename Integrator::State& st, double h, Method method )
{
    switch ( method )
    {
    case Method::rodas5p: return rodas_attempt<Rodas5PTableau>( in, ops, s, st, h );
    case Method::rodas4: return rodas_attempt<Rodas4Tableau>( in, ops, s, st, h );
    default: break;
    }
    return rosenbrock23_attempt( in, ops, s, st, h );
}

/*!
  Dense output of a stiffly accurate Rodas method: species i of the state at t + theta h inside the accepted
  step from x (slot 0, not yet overwritten) to x_new (slot 9), from the step's stages K (slots 1..S)
  (RosenbrockTableau.hpp).
*/
template <class Tableau, class Integrator>
KOKKOS_INLINE_FUNCTION double rodas_dense_value( const Integrator& in, long s, double theta, int i )
{
    double d[3] = { 0.0, 0.0, 0.0 };
    for ( int l = 0; l < Tableau::stages; ++l )
    {
        const double k = in.vec( s, slot_rosenbrock_stage + l )[i];
        for ( int r = 0; r < Tableau::dense_rows; ++r )
            d[r] += Tableau::h( r, l ) * k;
    }
    const double x0 = in.vec( s, slot_x )[i], x1 = in.vec( s, slot_rosenbrock_input )[i];
    const double rest = 1.0 - theta;
    return rest * x0 + theta * ( x1 + rest * ( d[0] + theta * ( d[1] + theta * d[2] ) ) );
}

/*!
  Dense output of the step just accepted (before x is overwritten): species i at t + theta h, by the
  method's continuous extension; Rosenbrock23's is ode23s's, x + h (theta (1 - theta) k1 + theta (theta - 2d)
  k2) / (1 - 2d), from its k1 and k2 (slots 1 and 2).
*/
template <class Integrator>
KOKKOS_INLINE_FUNCTION double rosenbrock_dense_value( const Integrator& in, long s, Method method, double theta, double h, int i )
{
    switch ( method )
    {
    case Method::rodas5p: return rodas_dense_value<Rodas5PTableau>( in, s, theta, i );
    case Method::rodas4: return rodas_dense_value<Rodas4Tableau>( in, s, theta, i );
    default: break;
    }
    using C = Rosenbrock23Constants;
    const double k1 = in.vec( s, slot_rosenbrock_stage )[i], k2 = in.vec( s, slot_rosenbrock_stage + 1 )[i];
    return in.vec( s, slot_x )[i] + h / ( 1.0 - 2.0 * C::d ) * ( theta * ( 1.0 - theta ) * k1 + theta * ( theta - 2.0 * C::d ) * k2 );
}

/*!
  Hairer and Wanner's first step, 0.01 ||x|| / ||f(x)|| in the mixed norm's scale (1e-6 when either is
  below 1e-5), at most `span` (the run's length): the register kernel's rule. f(x) is in slot 11.
*/
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION double rosenbrock_first_step( const Integrator& in, const Ops& ops, long s, double span )
{
    const int n = in.map.n;
    const auto x = in.vec( s, slot_x );
    const auto f = in.vec( s, slot_rosenbrock_f );
    const double rtol = in.opt.rtol;
    const auto& atol = in.atol;
    const bool one = atol.extent( 0 ) == 1;
    auto scaled = [&]( const Strided<double>& v, int j ) {
        const double sc = atol( one ? 0 : j ) + rtol * compat::fabs( x[j] );
        return sc > 0.0 ? ( v[j] / sc ) * ( v[j] / sc ) : 0.0; // a species at zero with atol 0 says nothing
    };
    const double d0 = n > 0 ? compat::sqrt( ops.sum( n, [&]( int j ) { return scaled( x, j ); } ) / n ) : 0.0;
    const double d1 = n > 0 ? compat::sqrt( ops.sum( n, [&]( int j ) { return scaled( f, j ); } ) / n ) : 0.0;
    double h = ( d0 < 1e-5 || d1 < 1e-5 ) ? 1e-6 : 0.01 * d0 / d1;
    if ( span > 0.0 && h > span )
        h = span;
    return h;
}

/*!
  The next step after an accepted attempt of `step` with squared error norm `norm2`: 0.9 err^(-1/(q+1))
  within [0.2, 5], at most 1 right after a rejection; a step shortened to end on a sample keeps at least
  the step the controller had (`h`).
*/
KOKKOS_INLINE_FUNCTION double rosenbrock_accepted_step( double norm2, int error_order, double step, double h,
                                                        bool ends_on_sample, bool after_rejection )
{
    double factor = 0.9 * compat::pow( norm2 > 1e-20 ? norm2 : 1e-20, -0.5 / ( error_order + 1 ) );
    factor = factor > 5.0 ? 5.0 : ( factor < 0.2 ? 0.2 : factor );
    if ( after_rejection && factor > 1.0 )
        factor = 1.0;
    const double proposed = step * factor;
    return ends_on_sample ? ( proposed > h ? proposed : h ) : proposed;
}

//! The factor on a rejected attempt's step: from the error (at least 0.2), 0.25 when the error is not
//! finite, 0.5 when only the domain check failed.
KOKKOS_INLINE_FUNCTION double rosenbrock_rejected_factor( double norm2, int error_order )
{
    if ( norm2 <= 1.0 )
        return 0.5;
    if ( !compat::isfinite( norm2 ) )
        return 0.25;
    const double f = 0.9 * compat::pow( norm2, -0.5 / ( error_order + 1 ) );
    return f > 0.2 ? f : 0.2;
}

} // namespace morula::ode::detail

#endif
