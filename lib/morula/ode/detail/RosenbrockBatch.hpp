/*!
  \file RosenbrockBatch.hpp
  \brief The batched Rosenbrock solver for small mass-action networks: one thread integrates one system
         from the start to its last sample in one kernel, with its state, Jacobian, factorised W matrix
         and stage vectors in registers (SmallMassAction.hpp), and its own step size.

  Why this shape (issue #45; DiffEqGPU's EnsembleGPUKernel, Utkarsh et al. 2024, does the same for
  Julia): a Rosenbrock method needs one Jacobian and one LU of W = I/(h gamma) - J per step and no
  Newton iteration, so a step is a fixed sequence of arithmetic with no data-dependent loop; with the
  system size fixed at compile time nothing of one system's work touches memory except its inputs, the
  samples it writes and the network's tables (the same for all threads, read from the kernel's parameter
  block). The general batched BDF path (Integrator.hpp) keeps its per-system vectors and matrices in
  global memory, interleaved by system, for networks of any size.

  Step control: the mixed error norm err = RMS_i e_i / (atol_i + rtol max(|x_i|, |x_new,i|)) over the
  network's species, err <= 1 accepts; the next step is h min(5, max(0.2, 0.9 err^(-1/(q+1)))) with q
  the order of the error estimate (no growth right after a rejection). Samples inside a step are the
  method's dense output there (SampleOutput::dense, RosenbrockTableau.hpp), computed from the stages of the
  step that passes them, so sampling costs no steps; only the system's end time ends a step. With
  SampleOutput::step_to_sample (and always in the switching kernel's RKF45 stretches) a step that would pass
  the next sample time ends on it (the step the controller wanted is kept for after the sample). The first step is Hairer and Wanner's estimate
  0.01 ||x|| / ||f(x)|| in the same norm. Time and step are double whatever `Real` is; the
  error norm is double in double precision (its reciprocal scales and the controller's power computed to
  float precision: they steer the step size, not the solution) and float in single precision, and it is
  kept squared (no square root per step). With SolverOptions::nonnegativity in force (single precision by
  default) an attempt whose new state has a negative species is rejected and the step halved.
*/
#ifndef MORULA_ODE_DETAIL_ROSENBROCKBATCH_HPP
#define MORULA_ODE_DETAIL_ROSENBROCKBATCH_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/OdeResult.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/BatchIntegration.hpp>
#include <morula/ode/detail/RosenbrockTableau.hpp>
#include <morula/ode/detail/SampleTimes.hpp>
#include <morula/ode/detail/SmallMassAction.hpp>
#include <morula/ode/detail/StiffnessDetection.hpp>
#include <morula/ode/detail/FehlbergTableau.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace morula::ode::detail
{

//! One attempt of a stiffly accurate Rodas method (Rodas4, Rodas5P) from x with step h.
template <class Tableau>
struct RodasStep
{
    static constexpr int error_order = Tableau::error_order;
    static constexpr bool first_same_as_last = false;
    static constexpr int dense_rows = Tableau::dense_rows;

    //! Dense output: x at t + theta h inside the step from x to x_new whose D_r are `dense` (RosenbrockTableau.hpp).
    template <class Real, int N>
    KOKKOS_INLINE_FUNCTION static Real interpolate( const Real ( &x )[N], const Real ( &xnew )[N], const Real ( &dense )[dense_rows][N],
                                                    double theta, double /*h*/, int i )
    {
        const Real th = static_cast<Real>( theta ), rest = Real( 1 ) - th;
        Real tail = dense[dense_rows - 1][i];
        MORULA_UNROLL
        for ( int r = dense_rows - 2; r >= 0; --r )
            tail = dense[r][i] + th * tail;
        return rest * x[i] + th * ( xnew[i] + rest * tail );
    }

    /*!
      Fills x_new and the error estimate; `fx` is f(x), `J` the Jacobian at x. Returns false when W is
      singular (the caller retries with a smaller step). `fnew` is not written (no FSAL). With `want_dense`
      (a sample lies inside the step) also the dense output's D_r = sum_i h_ri K_i.
    */
    template <class Real, int N, int M>
    KOKKOS_INLINE_FUNCTION static bool attempt( const SmallMassAction<N, M>& net, const Real ( &k )[M], const Real ( &x )[N],
                                                const Real ( &fx )[N], const Real ( &J )[N][N], double h,
                                                Real ( &xnew )[N], Real ( &err )[N], Real ( & /*fnew*/ )[N], long& rhs_count,
                                                bool want_dense, Real ( &dense )[dense_rows][N] )
    {
        constexpr int S = Tableau::stages;
        Real W[N][N];
        int pivot[N];
        // One division per attempt: 1/h, and 1/(h gamma) from it by a constant.
        const Real inverse_h = Real( 1 ) / static_cast<Real>( h );
        const Real diagonal = inverse_h * static_cast<Real>( 1.0 / Tableau::gamma );
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            MORULA_UNROLL
            for ( int j = 0; j < N; ++j )
                W[i][j] = ( i == j ? diagonal : Real( 0 ) ) - J[i][j];
        if ( !small_lu_factor( W, pivot ) )
            return false;
        Real K[S][N];
        MORULA_UNROLL
        for ( int stage = 0; stage < S; ++stage )
        {
            Real u[N], b[N];
            if ( stage == 0 )
            {
                MORULA_UNROLL
                for ( int i = 0; i < N; ++i )
                    u[i] = x[i], b[i] = fx[i];
            }
            else
            {
                MORULA_UNROLL
                for ( int i = 0; i < N; ++i )
                {
                    Real s = x[i];
                    MORULA_UNROLL
                    for ( int j = 0; j < stage; ++j )
                        s += static_cast<Real>( Tableau::a( stage, j ) ) * K[j][i];
                    u[i] = s;
                }
                small_rhs( net, k, u, b );
                ++rhs_count;
                MORULA_UNROLL
                for ( int i = 0; i < N; ++i )
                {
                    Real s = 0;
                    MORULA_UNROLL
                    for ( int j = 0; j < stage; ++j )
                        s += static_cast<Real>( Tableau::c( stage, j ) ) * K[j][i];
                    b[i] += s * inverse_h;
                }
            }
            // The dense output's D_r = sum_l h_rl K_l: the earlier stages' share before the last solve, so
            // that they are dead during it (their registers free), the last stage's after it.
            if ( stage == S - 1 && want_dense )
                MORULA_UNROLL
                for ( int r = 0; r < dense_rows; ++r )
                    MORULA_UNROLL
                    for ( int i = 0; i < N; ++i )
                    {
                        Real d = 0;
                        MORULA_UNROLL
                        for ( int l = 0; l < S - 1; ++l )
                            d += static_cast<Real>( Tableau::h( r, l ) ) * K[l][i];
                        dense[r][i] = d;
                    }
            small_lu_solve( W, pivot, b );
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
                K[stage][i] = b[i];
            if ( stage == S - 1 )
                MORULA_UNROLL
                for ( int i = 0; i < N; ++i )
                {
                    xnew[i] = u[i] + b[i];
                    err[i] = b[i];
                    if ( want_dense )
                        MORULA_UNROLL
                        for ( int r = 0; r < dense_rows; ++r )
                            dense[r][i] += static_cast<Real>( Tableau::h( r, S - 1 ) ) * b[i];
                }
        }
        return true;
    }
};

/*!
  One attempt of Shampine and Reichelt's Rosenbrock23 (ode23s) for an autonomous system, W = I - h d J:
    k1 = W^-1 F0,  F1 = f(x + h/2 k1),  k2 = W^-1 (F1 - k1) + k1,  x_new = x + h k2,
    F2 = f(x_new),  k3 = W^-1 (F2 - e32 (k2 - F1) - 2 (k1 - F0)),  error = h/6 (k1 - 2 k2 + k3).
  F2 is f at the new state: the next step's F0 when this one is accepted.
*/
struct Rosenbrock23Step
{
    static constexpr int error_order = Rosenbrock23Constants::error_order;
    static constexpr bool first_same_as_last = true;
    static constexpr int dense_rows = 2; // k1 and k2

    //! ode23s's continuous extension: x + h (theta (1 - theta) k1 + theta (theta - 2d) k2) / (1 - 2d).
    template <class Real, int N>
    KOKKOS_INLINE_FUNCTION static Real interpolate( const Real ( &x )[N], const Real ( & /*xnew*/ )[N], const Real ( &dense )[dense_rows][N],
                                                    double theta, double h, int i )
    {
        constexpr double d = Rosenbrock23Constants::d;
        const Real c1 = static_cast<Real>( h * theta * ( 1.0 - theta ) / ( 1.0 - 2.0 * d ) );
        const Real c2 = static_cast<Real>( h * theta * ( theta - 2.0 * d ) / ( 1.0 - 2.0 * d ) );
        return x[i] + c1 * dense[0][i] + c2 * dense[1][i];
    }

    template <class Real, int N, int M>
    KOKKOS_INLINE_FUNCTION static bool attempt( const SmallMassAction<N, M>& net, const Real ( &k )[M], const Real ( &x )[N],
                                                const Real ( &fx )[N], const Real ( &J )[N][N], double h,
                                                Real ( &xnew )[N], Real ( &err )[N], Real ( &fnew )[N], long& rhs_count,
                                                bool want_dense, Real ( &dense )[dense_rows][N] )
    {
        using C = Rosenbrock23Constants;
        Real W[N][N];
        int pivot[N];
        const Real hd = static_cast<Real>( h * C::d );
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            MORULA_UNROLL
            for ( int j = 0; j < N; ++j )
                W[i][j] = ( i == j ? Real( 1 ) : Real( 0 ) ) - hd * J[i][j];
        if ( !small_lu_factor( W, pivot ) )
            return false;
        const Real hr = static_cast<Real>( h );
        Real k1[N], k2[N], F1[N], u[N];
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            k1[i] = fx[i];
        small_lu_solve( W, pivot, k1 );
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            u[i] = x[i] + Real( 0.5 ) * hr * k1[i];
        small_rhs( net, k, u, F1 );
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            k2[i] = F1[i] - k1[i];
        small_lu_solve( W, pivot, k2 );
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
        {
            k2[i] += k1[i];
            xnew[i] = x[i] + hr * k2[i];
        }
        small_rhs( net, k, xnew, fnew );
        rhs_count += 2;
        Real k3[N];
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            k3[i] = fnew[i] - static_cast<Real>( C::e32 ) * ( k2[i] - F1[i] ) - Real( 2 ) * ( k1[i] - fx[i] );
        small_lu_solve( W, pivot, k3 );
        const Real sixth = hr * static_cast<Real>( 1.0 / 6.0 );
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            err[i] = sixth * ( k1[i] - Real( 2 ) * k2[i] + k3[i] );
        if ( want_dense )
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
                dense[0][i] = k1[i], dense[1][i] = k2[i];
        return true;
    }
};

/*!
  One attempt of Fehlberg's 4(5) pair from x with step h, for Method::automatic's non-stiff stretches in
  the register kernel: x_new is the 5th-order solution w (local extrapolation, as the general path's mixed
  norm keeps it) and err = w - u with the exact b5 - b4 weights. k1 = f(x) is given; five right-hand sides.
*/
template <class Real, int N, int M>
KOKKOS_INLINE_FUNCTION void small_rkf45_attempt( const SmallMassAction<N, M>& net, const Real ( &k )[M], const Real ( &x )[N],
                                                 const Real ( &fx )[N], double h, Real ( &xnew )[N], Real ( &err )[N],
                                                 long& rhs_count )
{
    Real K[6][N];
    const Real hr = static_cast<Real>( h );
    MORULA_UNROLL
    for ( int i = 0; i < N; ++i )
        K[0][i] = fx[i];
    MORULA_UNROLL
    for ( int stage = 1; stage < 6; ++stage )
    {
        Real u[N];
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
        {
            Real sum = 0;
            MORULA_UNROLL
            for ( int l = 0; l < stage; ++l )
                sum += static_cast<Real>( fehlberg_a( stage, l ) ) * K[l][i];
            u[i] = x[i] + hr * sum;
        }
        small_rhs( net, k, u, K[stage] );
    }
    rhs_count += 5;
    MORULA_UNROLL
    for ( int i = 0; i < N; ++i )
    {
        Real w = 0, e = 0;
        MORULA_UNROLL
        for ( int l = 0; l < 6; ++l )
        {
            w += static_cast<Real>( fehlberg_b5( l ) ) * K[l][i];
            e += static_cast<Real>( fehlberg_e( l ) ) * K[l][i];
        }
        xnew[i] = x[i] + hr * w;
        err[i] = hr * e;
    }
}

/*!
  Method::automatic in the register kernel: the state a system carries between attempts besides x, f(x),
  t and h - whether it is in its stiff stretch (Rodas5P) or not (RKF45), the run of stiffness estimates
  (StiffnessDetection.hpp's rules, the same as the general path's RKF45 <-> BDF) and the accepted steps
  since the last check - and the switching counters it reports.
*/
struct SwitchingState
{
    bool stiff = false;
    StiffnessCounter counter;
    int since_check = 0;
    long rkf_steps = 0, stiff_steps = 0, to_stiff = 0, to_rkf = 0;
};

/*!
  The kernel: thread s integrates system s through samples [begin, stop). On the first leg it starts
  from the initial state; on later legs it loads what the previous leg stored in `state` (a row per
  system: x, f(x), t, the step the controller proposed, the after-rejection flag); with `state` empty
  the run is one leg to the last sample. The Jacobian is evaluated before every attempt at the state
  stepped from (after a rejection again, at the same state), so a resumed run evaluates it where the
  uninterrupted run did and takes the same steps bit for bit. In one leg the kernel writes every entry of
  its system's samples and statistics row itself - NaN for the samples a stopped system did not reach,
  0 for the counters this method does not have - so the result needs no fill before the launch (on an
  H200 the fills of 8.4M Robertson systems' 2.4 GB of results took 1.2-1.6 ms, the float kernel 14.1 ms);
  on later legs the caller has filled them (RosenbrockIntegration, resumable).

  With `Switching` (Method::automatic, automatic_stiff_method() == rodas5p) a system starts in RKF45
  (small_rkf45_attempt, no Jacobian) and moves to the Rosenbrock step by the general path's rules
  (StiffnessDetection.hpp): a rejected RKF45 attempt proposing a step below `stiffness_threshold`, or
  rkf45_stiff_step_count estimates h rho >= rkf45_stiff_h_rho in a row, one every
  rkf45_stiffness_check_interval accepted steps (one extra right-hand side each). While stiff, after every
  `stiffness_check_interval` accepted steps the next attempt's Jacobian gives the Gershgorin bound rho of
  its spectrum; rho h <= bdf_to_rkf45_h_rho hands the system back to RKF45 (that Jacobian is then unused).
  Both methods keep the step size across a switch and use the same error norm and controller (each with
  its own estimate's order). The two code paths of a warp run one after the other where its systems are
  in different stretches; a stiff ensemble spends almost all its steps in the Rosenbrock one.
*/
template <class MemorySpace, class Real, int N, int M, class Step, bool Switching = false, bool Dense = false>
struct RosenbrockBatchKernel
{
    using matrix_type = Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>;
    SmallMassAction<N, M> net;
    matrix_type initial_states;
    matrix_type rate_constants; // (systems, reactions) or empty: default_rates for all
    Kokkos::View<const double*, MemorySpace> default_rates;
    SampleTimes<MemorySpace> times; // one list for all systems, or a row per system
    Kokkos::View<const int*, MemorySpace> saved;
    Kokkos::View<const double*, MemorySpace> atol; // 1 or one per species
    double rtol = 0;
    double t_start = 0;
    long max_steps = 0;
    Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace> samples;
    Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace> statistics;
    Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> state; // (systems, 2 species + 3) or empty
    int begin = 0;
    int stop = 0;
    bool first = true;
    double inverse_species = 1; // 1 / net.species, so that the norms multiply
    bool nonnegative = false; // reject an attempt that turns a species negative (SolverOptions::nonnegativity)
    double stiffness_threshold = 0; // Switching: SolverOptions::stiffness_threshold
    int stiffness_check_interval = 1; // Switching: SolverOptions::stiffness_check_interval

    //! Columns of a system's row in `state`: x, f(x), t, h, the after-rejection flag, and with Switching
    //! the stiff flag, the stiffness counter's two runs and the steps since the last check.
    KOKKOS_INLINE_FUNCTION static int state_columns( int species ) { return 2 * species + ( Switching ? 7 : 3 ); }

    //! Whether the attempt's new state keeps every species nonnegative (always true when not enforced).
    KOKKOS_INLINE_FUNCTION bool in_domain( const Real ( &xnew )[N] ) const
    {
        bool inside = true;
        if ( nonnegative )
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
                inside = inside && !( xnew[i] < Real( 0 ) );
        return inside;
    }

    //! Gershgorin's bound on J's spectral radius: the largest row sum of |J_ij| (padding rows are 0).
    KOKKOS_INLINE_FUNCTION static double spectral_radius_bound( const Real ( &J )[N][N] )
    {
        double rho = 0;
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
        {
            double row = 0;
            MORULA_UNROLL
            for ( int j = 0; j < N; ++j )
                row += compat::fabs( static_cast<double>( J[i][j] ) );
            rho = compat::fmax( rho, row );
        }
        return rho;
    }

    //! h rho ~ h |f(x + e) - f(x)| / |e| after an accepted RKF45 step to x (e its error vector; fx = f(x)).
    KOKKOS_INLINE_FUNCTION double rkf45_h_rho( const Real ( &k )[M], const Real ( &x )[N], const Real ( &fx )[N],
                                               const Real ( &err )[N], double h, long& rhs ) const
    {
        Real y[N], fy[N];
        double den = 0;
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
        {
            y[i] = x[i] + err[i];
            den += static_cast<double>( err[i] ) * static_cast<double>( err[i] );
        }
        if ( !( den > 0.0 ) )
            return 0.0;
        small_rhs( net, k, y, fy );
        ++rhs;
        double num = 0;
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
        {
            const double d = static_cast<double>( fy[i] ) - static_cast<double>( fx[i] );
            num += d * d;
        }
        return h * compat::sqrt( num / den );
    }

    //! Each species' absolute tolerance, read once per system into registers.
    KOKKOS_INLINE_FUNCTION void load_atol( double ( &a )[N] ) const
    {
        const bool one = atol.extent( 0 ) == 1;
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            a[i] = i < net.species ? atol( one ? 0 : i ) : 0.0;
    }

    KOKKOS_INLINE_FUNCTION double scale( double a, double x, double y ) const
    {
        return a + rtol * compat::fmax( compat::fabs( x ), compat::fabs( y ) );
    }

    /*!
      1 / sc to float precision where sc is within float's range, else by a double division: the norm only
      steers the step size (a relative error of 1e-7 in it moves no decision that matters), and a double
      division is a long instruction sequence on GPUs where a float one is short.
    */
    KOKKOS_INLINE_FUNCTION static double reciprocal_scale( double sc )
    {
        return ( sc > 1e-37 && sc < 1e37 ) ? static_cast<double>( 1.0f / static_cast<float>( sc ) ) : 1.0 / sc;
    }

    /*!
      The square of the error norm, mean_i (e_i / sc_i)^2: the step is accepted when it is at most 1, and
      the controller takes its power directly, so no square root is needed. (An error beyond 1e154
      tolerances overflows it to infinity: treated as a non-finite error, as an infinite one is.)
    */
    KOKKOS_INLINE_FUNCTION double error_norm_squared( const double ( &a )[N], const Real ( &x )[N], const Real ( &xnew )[N],
                                                      const Real ( &err )[N] ) const
    {
        if constexpr ( std::is_same<Real, float>::value )
        {
            // Single precision: the norm in float too (a float state and error are only known to float
            // precision; each widening to double and back was an FP64-pipe conversion). An error beyond
            // 1e19 tolerances overflows the square to infinity: rejected as a non-finite error.
            const float relative = static_cast<float>( rtol );
            float sum = 0;
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
                if ( i < net.species )
                {
                    const float sc = static_cast<float>( a[i] ) + relative * compat::fmax( compat::fabs( x[i] ), compat::fabs( xnew[i] ) );
                    const float e = sc > 0 ? fast_divide( err[i], sc ) : ( err[i] == 0.0f ? 0.0f : std::numeric_limits<float>::infinity() );
                    sum += e * e;
                }
            return static_cast<double>( sum * static_cast<float>( inverse_species ) );
        }
        double sum = 0;
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            if ( i < net.species )
            {
                // With atol 0 a species at zero has scale 0: no error there is exact, any is infinite.
                const double sc = scale( a[i], x[i], xnew[i] );
                const double e = sc > 0 ? static_cast<double>( err[i] ) * reciprocal_scale( sc )
                                        : ( err[i] == Real( 0 ) ? 0.0 : std::numeric_limits<double>::infinity() );
                sum += e * e;
            }
        return sum * inverse_species;
    }

    //! Hairer and Wanner's first guess 0.01 ||x|| / ||f|| (1e-6 when either is tiny), at most `span`.
    KOKKOS_INLINE_FUNCTION double first_step( const double ( &a )[N], const Real ( &x )[N], const Real ( &f )[N],
                                              double span ) const
    {
        double d0 = 0, d1 = 0;
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            if ( i < net.species )
            {
                const double sc = scale( a[i], x[i], x[i] );
                if ( sc > 0 ) // a species at zero with atol 0 says nothing about the scale
                {
                    d0 += ( x[i] / sc ) * ( x[i] / sc );
                    d1 += ( f[i] / sc ) * ( f[i] / sc );
                }
            }
        d0 = compat::sqrt( d0 * inverse_species );
        d1 = compat::sqrt( d1 * inverse_species );
        double h = ( d0 < 1e-5 || d1 < 1e-5 ) ? 1e-6 : 0.01 * d0 / d1;
        if ( span > 0 && h > span )
            h = span;
        return h;
    }

    /*!
      The next step after an accepted attempt of `step` with squared error norm `norm2`: the controller's
      factor 0.9 norm^(-1/(q+1)) within [0.2, 5], at most 1 right after a rejection. Its power is taken in
      float, of the squared norm (`exponent` = -1/(2(q+1))): it only scales the next step (its 1e-7 relative
      error is nothing there), and a double pow is a long sequence of FP64 instructions.
    */
    KOKKOS_INLINE_FUNCTION static double accepted_step( double norm2, float exponent, double step, double h,
                                                        bool ends_on_sample, bool after_rejection )
    {
        double factor = 0.9 * static_cast<double>( compat::pow( static_cast<float>( compat::fmax( norm2, 1e-20 ) ), exponent ) );
        factor = compat::fmin( 5.0, compat::fmax( 0.2, factor ) );
        if ( after_rejection && factor > 1.0 )
            factor = 1.0;
        const double proposed = step * factor;
        // A step shortened to end on a sample says little about the step the solution allows.
        return ends_on_sample ? compat::fmax( h, proposed ) : proposed;
    }

    //! The factor on a rejected attempt's step: from the error (at least 0.2), 0.25 when the error is not
    //! finite, 0.5 when only the domain check failed.
    KOKKOS_INLINE_FUNCTION static double rejected_factor( double norm2, float exponent )
    {
        return !( norm2 <= 1.0 ) ? ( compat::isfinite( norm2 ) ? compat::fmax( 0.2, 0.9 * static_cast<double>( compat::pow( static_cast<float>( norm2 ), exponent ) ) ) : 0.25 ) : 0.5;
    }

    /*!
      Switching only: one RKF45 attempt of `step` from (t, x, f(x)) and its accept/reject, with the
      stiffness rules that move the system to the Rosenbrock step. Returns false when the system stops
      (its `status` set: the step underflowed or the error was not finite).
    */
    KOKKOS_INLINE_FUNCTION bool rkf45_attempt( const double ( &a )[N], const Real ( &k )[M], Real ( &x )[N], Real ( &fx )[N],
                                               double step, bool ends_on_sample, double target, double& t, double& h,
                                               bool& after_rejection, long& steps, long& rejected, long& rhs,
                                               SwitchingState& sw, SolverStatus& status ) const
    {
        constexpr float exponent = -0.5f / 5; // RKF45's error estimate is of order 4
        Real xnew[N], err[N];
        small_rkf45_attempt( net, k, x, fx, step, xnew, err, rhs );
        const double norm2 = error_norm_squared( a, x, xnew, err );
        if ( norm2 <= 1.0 && in_domain( xnew ) ) // false for NaN
        {
            ++steps;
            ++sw.rkf_steps;
            t = ends_on_sample ? target : t + step;
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
                x[i] = xnew[i];
            small_rhs( net, k, x, fx );
            ++rhs;
            h = accepted_step( norm2, exponent, step, h, ends_on_sample, after_rejection );
            after_rejection = false;
            if ( ++sw.since_check >= rkf45_stiffness_check_interval )
            {
                sw.since_check = 0;
                if ( sw.counter.stiff_enough( rkf45_h_rho( k, x, fx, err, step, rhs ) ) )
                {
                    sw.stiff = true;
                    ++sw.to_stiff;
                }
            }
            return true;
        }
        ++rejected;
        h = step * rejected_factor( norm2, exponent );
        after_rejection = true;
        if ( !( t + h > t ) )
        {
            status = compat::isfinite( norm2 ) ? SolverStatus::step_too_small : SolverStatus::not_finite;
            return false;
        }
        if ( h < stiffness_threshold ) // LASSIE's rule: RKF45 asks for a step below eps_s
        {
            sw.stiff = true;
            ++sw.to_stiff;
            sw.counter.reset();
            sw.since_check = 0;
        }
        return true;
    }

    KOKKOS_INLINE_FUNCTION void record( long s, int sample, const Real ( &x )[N] ) const
    {
        for ( int j = 0; j < static_cast<int>( saved.extent( 0 ) ); ++j )
        {
            const int species = saved( j );
            Real v = 0;
            MORULA_UNROLL
            for ( int q = 0; q < N; ++q )
                if ( q == species )
                    v = x[q];
            samples( s, sample, j ) = static_cast<double>( v );
        }
    }

    /*!
      Sample `sample` inside the accepted step of `h` from x to x_new, at t + theta h (Step::interpolate);
      where nonnegativity is enforced, an interpolant below 0 is recorded as 0 (dense_sample_value).
    */
    KOKKOS_INLINE_FUNCTION void record_dense( long s, int sample, const Real ( &x )[N], const Real ( &xnew )[N],
                                              const Real ( &dense )[Step::dense_rows][N], double theta, double h ) const
    {
        Real y[N];
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            y[i] = dense_sample_value( Step::interpolate( x, xnew, dense, theta, h, i ), nonnegative );
        record( s, sample, y );
    }

    KOKKOS_INLINE_FUNCTION void operator()( const long s ) const
    {
        Real x[N], k[M], fx[N];
        double a[N];
        load_atol( a );
        const bool own_rates = rate_constants.extent( 0 ) > 0;
        for ( int r = 0; r < M; ++r )
            k[r] = r < net.reactions ? static_cast<Real>( own_rates ? rate_constants( s, r ) : default_rates( r ) ) : Real( 0 );
        const int n = net.species;
        long steps = 0, rejected = 0, jacobians = 0, factorizations = 0, rhs = 0;
        double t = t_start, h = 0;
        bool after_rejection = false;
        SwitchingState sw; // Switching only: starts in RKF45
        if ( first )
        {
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
                x[i] = i < n ? static_cast<Real>( initial_states( s, i ) ) : Real( 0 );
            small_rhs( net, k, x, fx );
            rhs = 1;
            h = first_step( a, x, fx, times.last( s, t_start ) - t_start );
        }
        else
        {
            if ( statistics( s, stat_status ) != static_cast<long>( SolverStatus::success ) )
                return; // stopped on an earlier leg
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
            {
                x[i] = i < n ? static_cast<Real>( state( s, i ) ) : Real( 0 );
                fx[i] = i < n ? static_cast<Real>( state( s, n + i ) ) : Real( 0 );
            }
            t = state( s, 2 * n );
            h = state( s, 2 * n + 1 );
            after_rejection = state( s, 2 * n + 2 ) != 0.0;
            if constexpr ( Switching )
            {
                sw.stiff = state( s, 2 * n + 3 ) != 0.0;
                sw.counter.stiff = static_cast<int>( state( s, 2 * n + 4 ) );
                sw.counter.nonstiff = static_cast<int>( state( s, 2 * n + 5 ) );
                sw.since_check = static_cast<int>( state( s, 2 * n + 6 ) );
                sw.rkf_steps = statistics( s, stat_rkf_steps );
                sw.stiff_steps = statistics( s, stat_bdf_steps );
                sw.to_stiff = statistics( s, stat_switches_to_bdf );
                sw.to_rkf = statistics( s, stat_switches_to_rkf );
            }
            steps = statistics( s, stat_steps );
            rejected = statistics( s, stat_rejected );
            jacobians = statistics( s, stat_jacobians );
            factorizations = statistics( s, stat_factorizations );
            rhs = statistics( s, stat_rhs_evaluations );
        }

        SolverStatus status = SolverStatus::success;
        bool last_failure_singular = false;
        constexpr float exponent = -0.5f / ( Step::error_order + 1 ); // of the squared norm (accepted_step)
        const double t_end = times.last( s, t_start );
        // Every sample before t is filled (on a later leg: the ones the previous leg's last step passed, by
        // its dense output); the loop records the one at t, if any, when it gets there.
        int next = begin;
        while ( next < stop && times( s, next ) < t )
            ++next;
        while ( next < stop )
        {
            if ( times( s, next ) <= t )
            {
                record( s, next++, x );
                continue;
            }
            if ( steps + rejected >= max_steps )
            {
                status = SolverStatus::max_steps;
                break;
            }
            if constexpr ( Switching )
                if ( !sw.stiff )
                {
                    // RKF45 ends a step on every sample (it has no interpolant here).
                    const double target = times( s, next );
                    const bool ends_on_sample = t + h >= target;
                    const double step = ends_on_sample ? target - t : h;
                    if ( !rkf45_attempt( a, k, x, fx, step, ends_on_sample, target, t, h, after_rejection, steps,
                                         rejected, rhs, sw, status ) )
                        break;
                    continue;
                }
            // With dense output only the system's end time ends a step; else the next sample does.
            const double target = Dense ? t_end : times( s, next );
            const bool ends_on_sample = t + h >= target;
            const double step = ends_on_sample ? target - t : h;
            // The Jacobian is evaluated before every attempt, again after a rejection (at the same x,
            // so the same matrix), instead of being kept: it is dead once W is formed, which frees its
            // N^2 registers during the stages. Rejections are a few percent of the attempts.
            Real J[N][N];
            small_jacobian( net, k, x, J );
            ++jacobians;
            if constexpr ( Switching )
                if ( sw.since_check >= stiffness_check_interval )
                {
                    sw.since_check = 0;
                    if ( spectral_radius_bound( J ) * h <= bdf_to_rkf45_h_rho )
                    {
                        sw.stiff = false; // back to RKF45 with the step the controller proposed
                        ++sw.to_rkf;
                        continue;
                    }
                }
            // A sample strictly inside the attempt: its stages also give the interpolant's D_r.
            const bool passes_sample = Dense && times( s, next ) < t + step;
            Real xnew[N], err[N], fnew[N], dense[Step::dense_rows][N];
            ++factorizations;
            const bool factored = Step::attempt( net, k, x, fx, J, step, xnew, err, fnew, rhs, passes_sample, dense );
            const double norm2 = factored ? error_norm_squared( a, x, xnew, err ) : std::numeric_limits<double>::quiet_NaN();
            // The domain check: a negative concentration, even one within the tolerance, can send the
            // solution of a mass-action ODE to minus infinity; the attempt is rejected and the step halved.
            const bool inside = in_domain( xnew );
            if ( norm2 <= 1.0 && inside ) // false for NaN
            {
                ++steps;
                if constexpr ( Switching )
                {
                    ++sw.stiff_steps;
                    ++sw.since_check;
                }
                const double t_old = t;
                t = ends_on_sample ? target : t + step;
                if ( passes_sample ) // the samples strictly inside the step, before x is overwritten
                    for ( ; next < times.count() && times( s, next ) < t; ++next )
                        record_dense( s, next, x, xnew, dense, ( times( s, next ) - t_old ) / step, step );
                MORULA_UNROLL
                for ( int i = 0; i < N; ++i )
                    x[i] = xnew[i];
                if constexpr ( Step::first_same_as_last )
                {
                    MORULA_UNROLL
                    for ( int i = 0; i < N; ++i )
                        fx[i] = fnew[i];
                }
                else
                {
                    small_rhs( net, k, x, fx );
                    ++rhs;
                }
                h = accepted_step( norm2, exponent, step, h, ends_on_sample, after_rejection );
                after_rejection = false;
            }
            else
            {
                ++rejected;
                last_failure_singular = !factored;
                h = step * rejected_factor( norm2, exponent );
                after_rejection = true;
                if ( !( t + h > t ) )
                {
                    status = last_failure_singular ? SolverStatus::singular_matrix
                             : compat::isfinite( norm2 ) ? SolverStatus::step_too_small
                                                        : SolverStatus::not_finite;
                    break;
                }
            }
        }
        if ( state.extent( 0 ) > 0 )
        {
            for ( int i = 0; i < n; ++i )
            {
                Real xi = 0, fi = 0;
                MORULA_UNROLL
                for ( int q = 0; q < N; ++q )
                    if ( q == i )
                        xi = x[q], fi = fx[q];
                state( s, i ) = static_cast<double>( xi ); // exact: a float widens to double and back
                state( s, n + i ) = static_cast<double>( fi );
            }
            state( s, 2 * n ) = t;
            state( s, 2 * n + 1 ) = h;
            state( s, 2 * n + 2 ) = after_rejection ? 1.0 : 0.0;
            if constexpr ( Switching )
            {
                state( s, 2 * n + 3 ) = sw.stiff ? 1.0 : 0.0;
                state( s, 2 * n + 4 ) = sw.counter.stiff;
                state( s, 2 * n + 5 ) = sw.counter.nonstiff;
                state( s, 2 * n + 6 ) = sw.since_check;
            }
        }
        else
            // One leg: what the loop did not reach, stopped, is NaN (with state, the caller filled it).
            for ( int q = next; q < times.count(); ++q )
                for ( int j = 0; j < static_cast<int>( saved.extent( 0 ) ); ++j )
                    samples( s, q, j ) = std::numeric_limits<double>::quiet_NaN();
        // Every column, the ones without a counter here too (rkf_steps ... switches_to_rkf are 0 without
        // Switching; Newton and linear iterations always).
        statistics( s, stat_rkf_steps ) = sw.rkf_steps;
        statistics( s, stat_bdf_steps ) = sw.stiff_steps;
        statistics( s, stat_switches_to_bdf ) = sw.to_stiff;
        statistics( s, stat_switches_to_rkf ) = sw.to_rkf;
        statistics( s, stat_newton_iterations ) = 0;
        statistics( s, stat_linear_iterations ) = 0;
        statistics( s, stat_status ) = static_cast<long>( status );
        statistics( s, stat_steps ) = steps;
        statistics( s, stat_rejected ) = rejected;
        statistics( s, stat_jacobians ) = jacobians;
        statistics( s, stat_factorizations ) = factorizations;
        statistics( s, stat_rhs_evaluations ) = rhs;
    }
};

/*!
  A mass-action network's reactant and stoichiometry tables on the host (a few hundred numbers), copied from
  the system's device Views once per solve: both the capacity's choice (fits_factors) and the kernel's
  tables (small_mass_action) read them.
*/
template <class MemorySpace>
struct HostReactionTables
{
    template <class T>
    using table = decltype( Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), std::declval<const Kokkos::View<T*, MemorySpace>&>() ) );

    template <class View>
    static auto host( const View& v )
    {
        return Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), v );
    }

    explicit HostReactionTables( const MassActionSystem<MemorySpace>& system )
        : species( system.species )
        , reactions( system.reactions )
        , reactant_offsets( host( system.reactant_offsets ) )
        , reactant_species( host( system.reactant_species ) )
        , reactant_order( host( system.reactant_order ) )
        , term_offsets( host( system.species_term_offsets ) )
        , term_reaction( host( system.species_term_reaction ) )
        , term_coefficient( host( system.species_term_coefficient ) )
    {
    }

    int species = 0, reactions = 0;
    table<int> reactant_offsets, reactant_species, reactant_order, term_offsets, term_reaction;
    table<double> term_coefficient;
};

template <int N, int M, class MemorySpace>
SmallMassAction<N, M> small_mass_action( const HostReactionTables<MemorySpace>& tables )
{
    const auto& reactant_offsets = tables.reactant_offsets;
    const auto& reactant_species = tables.reactant_species;
    const auto& reactant_order = tables.reactant_order;
    const auto& term_offsets = tables.term_offsets;
    const auto& term_reaction = tables.term_reaction;
    const auto& term_coefficient = tables.term_coefficient;
    SmallMassAction<N, M> net;
    net.species = tables.species;
    net.reactions = tables.reactions;
    for ( int r = 0; r < tables.reactions; ++r )
        for ( int p = reactant_offsets( r ); p < reactant_offsets( r + 1 ); ++p )
            net.order[r][reactant_species( p )] = static_cast<unsigned char>( net.order[r][reactant_species( p )] + reactant_order( p ) );
    for ( int i = 0; i < tables.species; ++i )
        for ( int t = term_offsets( i ); t < term_offsets( i + 1 ); ++t )
            net.change[i][term_reaction( t )] += term_coefficient( t );
    for ( int i = 0; i < N; ++i )
        for ( int r = 0; r < M; ++r )
            net.change_float[i][r] = static_cast<float>( net.change[i][r] );
    for ( int r = 0; r < M; ++r )
    {
        int f = 0;
        for ( int q = 0; q < N; ++q )
            if ( net.order[r][q] > 0 )
            {
                if ( f == 2 )
                {
                    // Only in the factored capacities; the dispatch sends such networks to the large one.
                    if ( SmallMassAction<N, M>::factored )
                        throw std::logic_error( "small_mass_action: a reaction with more than two reactant species in a factored capacity" );
                    break;
                }
                net.factor_species[r][f] = q;
                net.factor_power[r][f] = net.order[r][q];
                ++f;
            }
        for ( ; f < 2; ++f )
        {
            net.factor_species[r][f] = N;
            net.factor_power[r][f] = 0;
        }
    }
    return net;
}

template <int N, int M, class MemorySpace>
SmallMassAction<N, M> small_mass_action( const MassActionSystem<MemorySpace>& system )
{
    return small_mass_action<N, M>( HostReactionTables<MemorySpace>( system ) );
}

//! Whether every reaction of the network has at most two reactant species (SmallMassAction::factored).
template <class MemorySpace>
bool fits_factors( const HostReactionTables<MemorySpace>& tables )
{
    const auto& offsets = tables.reactant_offsets;
    const auto& species = tables.reactant_species;
    for ( int r = 0; r < tables.reactions; ++r )
    {
        int distinct = 0;
        for ( int p = offsets( r ); p < offsets( r + 1 ); ++p )
        {
            bool seen = false;
            for ( int o = offsets( r ); o < p; ++o )
                seen = seen || species( o ) == species( p );
            distinct += seen ? 0 : 1;
        }
        if ( distinct > 2 )
            return false;
    }
    return true;
}

template <class MemorySpace>
bool fits_factors( const MassActionSystem<MemorySpace>& system )
{
    return fits_factors( HostReactionTables<MemorySpace>( system ) );
}

/*!
  A batch integrated by the Rosenbrock kernel of the method, precision and smallest capacity (3 x 8, 4 x 8 or
  8 x 16 species x reactions, up to rosenbrock_max_species x rosenbrock_max_reactions) that hold it, as
  OdeSolver::solve runs it (one leg) or OdeIntegration (legs between samples, checkpointed). Method::automatic
  (where automatic_stiff_method() says rodas5p) runs the switching RKF45 <-> Rodas5P kernel, in double.
  Inputs are validated by OdeSolver.
*/
template <class ExecutionSpace, class MemorySpace>
class RosenbrockIntegration
{
  public:
    using matrix_type = Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>;

    RosenbrockIntegration( const ExecutionSpace& exec, const MassActionSystem<MemorySpace>& system, const SolverOptions& options,
                           const Kokkos::View<double*, MemorySpace>& atol, const matrix_type& initial_states,
                           const matrix_type& rate_constants, const SampleTimes<MemorySpace>& sample_times,
                           const std::vector<int>& saved, double t_start, bool resumable,
                           const OdeResult<MemorySpace>& reuse = {} )
        : m_sample_count( sample_times.count() )
        , m_systems( static_cast<long>( initial_states.extent( 0 ) ) )
        , m_species( system.species )
    {
        // One leg: the kernel writes every entry (RosenbrockBatchKernel); legs: filled here.
        m_result = result_storage( exec, reuse, m_systems, sample_times.count(), saved.size(), resumable );
        if ( resumable )
            m_state = Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace>(
                "morula::ode::rosenbrock_state", m_systems, 2 * m_species + ( options.method == Method::automatic ? 7 : 3 ) );
        const auto saved_view = to_device<int, MemorySpace>( "morula::ode::saved_species", saved );
        // One launcher per (precision, method, capacity, sample output): the choice is made here, once. Dense
        // output is a kernel of its own: its interpolant's vectors would cost the kernel that ends steps on
        // samples registers (on an H200, Rodas5P 3 x 8 in double 125 -> 153, float Rosenbrock23 71 -> 84:
        // fewer warps per multiprocessor, 20-45% slower, measured) even where no sample lies inside a step.
        const HostReactionTables<MemorySpace> tables( system );
        auto make = [&]( auto real, auto step, auto capacity, auto switching, auto dense ) {
            using Real = decltype( real );
            using Step = decltype( step );
            constexpr int N = decltype( capacity )::species;
            constexpr int M = decltype( capacity )::reactions;
            RosenbrockBatchKernel<MemorySpace, Real, N, M, Step, decltype( switching )::value, decltype( dense )::value> kernel{
                small_mass_action<N, M>( tables ), initial_states, rate_constants, system.rate_constants, sample_times, saved_view, atol,
                options.relative_tolerance, t_start, options.max_steps, m_result.samples, m_result.statistics, m_state };
            kernel.inverse_species = 1.0 / system.species;
            kernel.nonnegative = nonnegativity_enforced( options );
            kernel.stiffness_threshold = options.stiffness_threshold;
            kernel.stiffness_check_interval = options.stiffness_check_interval;
            m_launch = [kernel, systems = m_systems]( const ExecutionSpace& space, int begin, int stop, bool first ) mutable {
                kernel.begin = begin;
                kernel.stop = stop;
                kernel.first = first;
                // The functor (with the tables) in constant memory, not in the kernel's arguments: there
                // the tables read at run-time offsets cost registers (core::LaunchConstantRange; float
                // Rosenbrock23 64 -> 70, Rodas5P in double 127 -> 134 on sm_90). One launch per solve or leg.
                Kokkos::parallel_for( "morula::ode::rosenbrock_batch", core::LaunchConstantRange<ExecutionSpace>( space, 0, systems ), kernel );
            };
        };
        const bool factored = fits_factors( tables );
        auto in_capacity = [&]( auto real, auto step, auto switching, auto dense ) {
            // Three species (Robertson and the many small networks like it) get their own capacity: in the
            // 4-species one the padding species cost a third of the LU, the solves and the stage registers.
            // Both keep a reaction's reactants as two factors (SmallMassAction::factored).
            if ( system.species <= 3 && system.reactions <= 8 && factored )
                make( real, step, Capacity<3, 8>{}, switching, dense );
            else if ( system.species <= 4 && system.reactions <= 8 && factored )
                make( real, step, Capacity<4, 8>{}, switching, dense );
            else if ( system.species <= rosenbrock_max_species && system.reactions <= rosenbrock_max_reactions )
                make( real, step, Capacity<rosenbrock_max_species, rosenbrock_max_reactions>{}, switching, dense );
            else
                throw core::InputError( core::detail::concat( "ODE solver: the Rosenbrock methods take networks of up to ",
                                                              rosenbrock_max_species, " species and ", rosenbrock_max_reactions,
                                                              " reactions; this one has ", system.species, " and ",
                                                              system.reactions ) );
        };
        auto in_method = [&]( auto real, auto dense ) {
            switch ( options.method )
            {
            case Method::rodas4: in_capacity( real, RodasStep<Rodas4Tableau>{}, std::false_type{}, dense ); break;
            case Method::rosenbrock23: in_capacity( real, Rosenbrock23Step{}, std::false_type{}, dense ); break;
            case Method::rodas5p: in_capacity( real, RodasStep<Rodas5PTableau>{}, std::false_type{}, dense ); break;
            default: throw core::InputError( "RosenbrockIntegration: not a Rosenbrock method" );
            }
        };
        auto in_precision = [&]( auto dense ) {
            if ( options.method == Method::automatic ) // RKF45 <-> Rodas5P, double only (automatic_stiff_method)
                in_capacity( double{}, RodasStep<Rodas5PTableau>{}, std::true_type{}, dense );
            else if ( options.precision == Precision::single_precision )
                in_method( float{}, dense );
            else
                in_method( double{}, dense );
        };
        constexpr bool on_gpu = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
        if ( samples_by_dense_output( options, on_gpu, sample_times.count() ) )
            in_precision( std::true_type{} );
        else
            in_precision( std::false_type{} );
    }

    //! The whole integration in one kernel (OdeSolver::solve).
    void run_to_end( const ExecutionSpace& exec ) { launch( exec, m_sample_count ); }

    //! Steps every system until samples [0, stop) are filled (or it stopped on an error); resumable only.
    void advance( const ExecutionSpace& exec, int stop )
    {
        stop = stop < m_sample_count ? stop : m_sample_count;
        if ( m_started && stop <= m_samples_done )
            return;
        launch( exec, stop );
    }

    const OdeResult<MemorySpace>& result() const { return m_result; }

    //! Writes the state under `prefix`: each system's row (x, f(x), t, step, flag), samples, statistics.
    void checkpoint( const ExecutionSpace& exec, io::CheckpointWriter& out, const std::string& prefix ) const
    {
        exec.fence();
        out.put_scalar( prefix + "started", static_cast<std::uint8_t>( m_started ? 1 : 0 ) );
        out.put_scalar( prefix + "samples_done", static_cast<std::int32_t>( m_samples_done ) );
        out.put( prefix + "rosenbrock_state", host_values<double>( m_state ), { m_state.extent( 1 ), m_state.extent( 0 ) } );
        out.put( prefix + "samples", host_values<double>( m_result.samples ),
                 { m_result.samples.extent( 2 ), m_result.samples.extent( 1 ), m_result.samples.extent( 0 ) } );
        out.put( prefix + "statistics", host_values<std::int64_t>( m_result.statistics ),
                 { m_result.statistics.extent( 1 ), m_result.statistics.extent( 0 ) } );
    }

    //! Restores what checkpoint() wrote under `prefix` into this integration, made from the same inputs.
    void restart( const ExecutionSpace& exec, const io::CheckpointReader& in, const std::string& prefix )
    {
        const int done = in.scalar<std::int32_t>( prefix + "samples_done" );
        if ( done < 0 || done > m_sample_count )
            in.fail( core::detail::concat( "'", prefix, "samples_done' = ", done, "; expected 0 to ", m_sample_count ) );
        read_values( in, prefix + "rosenbrock_state", m_state );
        read_values( in, prefix + "samples", m_result.samples );
        read_values( in, prefix + "statistics", m_result.statistics );
        exec.fence();
        m_started = in.scalar<std::uint8_t>( prefix + "started" ) != 0;
        m_samples_done = done;
    }

  private:
    void launch( const ExecutionSpace& exec, int stop )
    {
        m_launch( exec, m_started ? m_samples_done : 0, stop, !m_started );
        m_started = true;
        m_samples_done = stop;
    }

    // A View's elements in its LayoutLeft order, on the host, as T.
    template <class T, class View>
    static std::vector<T> host_values( const View& v )
    {
        const auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), v );
        std::vector<T> values( host.size() );
        for ( std::size_t i = 0; i < values.size(); ++i )
            values[i] = static_cast<T>( host.data()[i] );
        return values;
    }

    // Reads an array written by checkpoint() into v, after checking its shape (reversed extents).
    template <class View>
    static void read_values( const io::CheckpointReader& in, const std::string& name, const View& v )
    {
        using T = typename View::non_const_value_type;
        std::vector<std::size_t> shape;
        for ( int r = static_cast<int>( View::rank ) - 1; r >= 0; --r )
            shape.push_back( v.extent( r ) );
        if ( in.dims( name ) != shape )
            in.fail( core::detail::concat( "'", name, "' does not have the shape of this integration's array (",
                                           v.size(), " values)" ) );
        auto host = Kokkos::create_mirror_view( Kokkos::HostSpace(), v );
        if constexpr ( std::is_same<T, double>::value )
        {
            const auto values = in.get<double>( name );
            for ( std::size_t i = 0; i < values.size(); ++i )
                host.data()[i] = values[i];
        }
        else
        {
            const auto values = in.get<std::int64_t>( name );
            for ( std::size_t i = 0; i < values.size(); ++i )
                host.data()[i] = static_cast<T>( values[i] );
        }
        Kokkos::deep_copy( v, host );
    }

    OdeResult<MemorySpace> m_result;
    Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> m_state;
    std::function<void( const ExecutionSpace&, int, int, bool )> m_launch;
    int m_sample_count = 0;
    long m_systems = 0;
    int m_species = 0;
    bool m_started = false;
    int m_samples_done = 0;
};

} // namespace morula::ode::detail

#endif
