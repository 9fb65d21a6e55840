/*!
  \file Integrator.hpp
  \brief One system's whole integration - RKF45, BDF of orders 1-5 and the switching between them, with
         output at the sampling times - written once over VectorOps (thread or team per system).

  RKF45: Fehlberg's 4(5) pair. Paper norm: ER_j = |w_j - u_j| / dt <= eps_j, keep u, dt *= min_j
  0.84 (eps_j/ER_j)^(1/4) (growth capped at 5). Mixed norm: RMS of |w - u| / (atol + rtol max(|x|,|w|))
  <= 1, keep w, dt *= 0.9 err^(-1/5) within [0.2, 5]. RKF45 steps are clipped to land on sampling times.

  BDF: variable-step, variable-order (1..max) backward differentiation in the backward-difference form of
  Shampine and Reichelt (The MATLAB ODE Suite, 1997) with kappa = 0 (plain BDF): the difference array
  D_0..D_{q+2}, predictor sum_{i<=q} D_i, Newton on (I - c J) with c = h / gamma_q and the analytic
  Jacobian (re-evaluated only when Newton fails to converge), local error (1/(q+1)) d, order change after
  q+1 equal steps, step change by the interpolation matrices R(q, factor) U(q). Samples between steps come
  from the BDF interpolating polynomial (dense output), so sampling never shortens a BDF step.
  Fixed-step mode (the paper's setting: q = 1, dt = 0.1): Newton to max |dy| < eps_NR with the Jacobian
  evaluated once per step, no error test.

  Switching (Method::automatic): RKF45 -> BDF when a rejected RKF45 step proposes dt < eps_s (LASSIE's
  rule), or when three consecutive stiffness estimates (every 5 accepted steps: dt |f(x + e) - f(x)| / |e|
  with e = w - u) reach 2.0 - the paper's rule alone fires only for eigenvalues beyond 2.5/eps_s.
  BDF -> RKF45 when, at a check every `stiffness_check_interval` BDF steps, the Gershgorin bound on |lambda|
  (max row sum of |J|) times the BDF step is at most 1, well inside RKF45's stability interval.
*/
#ifndef MORULA_ODE_DETAIL_INTEGRATOR_HPP
#define MORULA_ODE_DETAIL_INTEGRATOR_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/DenseLu.hpp>
#include <morula/ode/detail/MassActionKernels.hpp>
#include <morula/ode/detail/VectorOps.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

constexpr int bdf_max_order_supported = 5;
// Stiffness detection thresholds (RKF45's real stability interval is about [-3, 0]): RKF45 -> BDF after
// this many consecutive checks with dt rho above the first bound; BDF -> RKF45 when the Gershgorin bound
// times h is below the second, well inside the interval so the two rules do not alternate.
constexpr double rkf45_stiff_h_rho = 2.0;
constexpr int rkf45_stiff_step_count = 3;          // consecutive stiff checks
constexpr int rkf45_stiffness_check_interval = 5;  // accepted RKF45 steps between checks
constexpr double bdf_to_rkf45_h_rho = 1.0;

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

//! Linear solver actually used (SolverOptions::automatic resolved on the host).
enum class LinearKind : int
{
    dense_pivoted,
    dense_kokkos_batched,
    sparse_bicgstab
};

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

//! Where each per-system array starts inside one system's slice of the workspace (in elements).
struct WorkspaceMap
{
    int n = 0, m = 0;
    int vectors = 0;          // number of length-n vectors
    long matrix_length = 0;   // n*n (dense) or nonzeros (sparse)
    long rates = 0, constants = 0, jacobian = 0, newton_matrix = 0, per_system = 0;

    WorkspaceMap() = default;
    WorkspaceMap( int species, int reactions, bool sparse, long nonzeros )
        : n( species ), m( reactions )
    {
        vectors = sparse ? 25 : 15;
        matrix_length = sparse ? nonzeros : long( n ) * n;
        rates = long( vectors ) * n;
        constants = rates + m;
        jacobian = constants + m;
        newton_matrix = jacobian + matrix_length;
        per_system = newton_matrix + matrix_length;
    }
};

// Vector slots. RKF45 and BDF share them: the current state is slot 0 in both (BDF's D_0).
enum Slot : int
{
    slot_x = 0,          // state (RKF45) = D_0 (BDF)
    slot_stage_k1 = 1,   // RKF45 stages k1..k6 in 1..6 (BDF's D_1..D_6 while in BDF)
    slot_stage_input = 7,
    slot_new_state = 8,
    slot_bdf_y = 8,      // BDF: Newton iterate (RKF45's new state is not live in BDF)
    slot_bdf_d = 9,
    slot_bdf_f = 10,     // BDF: f, then the Newton right-hand side, then dy
    slot_bdf_scale = 11,
    slot_bdf_psi = 12,
    slot_bdf_predict = 13,
    slot_tmp = 14,
    slot_krylov = 15     // BiCGStab: 15..23 and the inverse diagonal in 24
};

/*!
  How the integrator talks to a model. A model has `species`, `reactions` (the length of its per-system
  parameter vector, also the length of its scratch vector), `jacobian_nonzeros_count`, the Views
  `jacobian_row_offsets`, `jacobian_columns`, `jacobian_diagonal` (CSR pattern, diagonal stored),
  `rate_constants` (default parameters) and `initial_state`, and either member functions
  `rhs(ops, params, x, scratch, f)`, `jacobian_values(ops, params, x, values)` and
  `dense_jacobian(ops, params, x, J)` (a general model, e.g. EpidermisGeneNetwork), or the overloads
  below (MassActionSystem, whose kernels live in MassActionKernels.hpp).
*/
template <class Ops, class Model>
KOKKOS_INLINE_FUNCTION void model_rhs( const Ops& ops, const Model& model, const Strided<const double>& params,
                                       const Strided<const double>& x, const Strided<double>& scratch,
                                       const Strided<double>& f )
{
    model.rhs( ops, params, x, scratch, f );
}
template <class Ops, class MemorySpace>
KOKKOS_INLINE_FUNCTION void model_rhs( const Ops& ops, const MassActionSystem<MemorySpace>& model,
                                       const Strided<const double>& params, const Strided<const double>& x,
                                       const Strided<double>& scratch, const Strided<double>& f )
{
    evaluate_rhs( ops, model, params, x, scratch, f );
}
template <class Ops, class Model>
KOKKOS_INLINE_FUNCTION void model_jacobian_values( const Ops& ops, const Model& model, const Strided<const double>& params,
                                                   const Strided<const double>& x, const Strided<double>& values )
{
    model.jacobian_values( ops, params, x, values );
}
template <class Ops, class MemorySpace>
KOKKOS_INLINE_FUNCTION void model_jacobian_values( const Ops& ops, const MassActionSystem<MemorySpace>& model,
                                                   const Strided<const double>& params, const Strided<const double>& x,
                                                   const Strided<double>& values )
{
    evaluate_jacobian_values( ops, model, params, x, values );
}
template <class Ops, class Model>
KOKKOS_INLINE_FUNCTION void model_dense_jacobian( const Ops& ops, const Model& model, const Strided<const double>& params,
                                                  const Strided<const double>& x, const Strided<double>& J )
{
    model.dense_jacobian( ops, params, x, J );
}
template <class Ops, class MemorySpace>
KOKKOS_INLINE_FUNCTION void model_dense_jacobian( const Ops& ops, const MassActionSystem<MemorySpace>& model,
                                                  const Strided<const double>& params, const Strided<const double>& x,
                                                  const Strided<double>& J )
{
    evaluate_dense_jacobian( ops, model, params, x, J );
}

/*!
  The integrator for one system. All members are Views or scalars so the struct is captured by value.
  `integrate` is called by one thread (ThreadOps) or by every thread of a team (TeamOps).
*/
template <class MemorySpace, class Model = MassActionSystem<MemorySpace>>
struct SystemIntegrator
{
    using System = Model;
    System sys;
    DeviceOptions opt;
    WorkspaceMap map;
    Kokkos::View<double*, MemorySpace> workspace;
    Kokkos::View<int*, MemorySpace> pivots;
    Kokkos::View<const double*, MemorySpace> atol;       // one per species
    Kokkos::View<const double*, MemorySpace> sample_times;
    Kokkos::View<const int*, MemorySpace> saved_species;
    Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace> initial_states; // (systems, species)
    Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace> rate_constants; // (systems, reactions) or empty
    Kokkos::View<double***, Kokkos::LayoutLeft, MemorySpace> output;              // (systems, samples, saved)
    Kokkos::View<long**, Kokkos::LayoutLeft, MemorySpace> statistics;             // (systems, stat_count)
    double t_start = 0.0;
    long systems = 1;
    bool interleaved = true;

    // ----- addressing -------------------------------------------------------------------------------
    KOKKOS_INLINE_FUNCTION Strided<double> at( long s, long offset ) const
    {
        if ( interleaved )
            return { workspace.data() + offset * systems + s, static_cast<std::ptrdiff_t>( systems ) };
        return { workspace.data() + s * map.per_system + offset, 1 };
    }
    KOKKOS_INLINE_FUNCTION Strided<double> vec( long s, int slot ) const { return at( s, long( slot ) * map.n ); }
    KOKKOS_INLINE_FUNCTION Strided<int> pivot_vec( long s ) const
    {
        if ( interleaved )
            return { pivots.data() + s, static_cast<std::ptrdiff_t>( systems ) };
        return { pivots.data() + s * map.n, 1 };
    }
    KOKKOS_INLINE_FUNCTION static Strided<const double> cv( const Strided<double>& v ) { return { v.data, v.stride }; }

    // ----- per-system scalar state (replicated in every thread of a team) --------------------------
    struct State
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
        long counters[stat_count];
    };

    // ----- small helpers ---------------------------------------------------------------------------
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

    // ----- RKF45 -------------------------------------------------------------------------------------
    /*!
      One RKF45 attempt of size dt from (t, x). Returns true when accepted (x updated); `dt_new` is the
      proposed next step in both cases.
    */
    template <class Ops>
    KOKKOS_INLINE_FUNCTION bool rkf45_attempt( const Ops& ops, long s, State& st, double dt, double& dt_new ) const
    {
        // Fehlberg's coefficients (Fehlberg 1969, NASA TR R-315, Table III).
        constexpr double a21 = 1.0 / 4.0;
        constexpr double a31 = 3.0 / 32.0, a32 = 9.0 / 32.0;
        constexpr double a41 = 1932.0 / 2197.0, a42 = -7200.0 / 2197.0, a43 = 7296.0 / 2197.0;
        constexpr double a51 = 439.0 / 216.0, a52 = -8.0, a53 = 3680.0 / 513.0, a54 = -845.0 / 4104.0;
        constexpr double a61 = -8.0 / 27.0, a62 = 2.0, a63 = -3544.0 / 2565.0, a64 = 1859.0 / 4104.0, a65 = -11.0 / 40.0;
        constexpr double b41 = 25.0 / 216.0, b43 = 1408.0 / 2565.0, b44 = 2197.0 / 4104.0, b45 = -1.0 / 5.0;
        constexpr double b51 = 16.0 / 135.0, b53 = 6656.0 / 12825.0, b54 = 28561.0 / 56430.0, b55 = -9.0 / 50.0, b56 = 2.0 / 55.0;
        const int n = map.n;
        const auto x = vec( s, slot_x );
        const auto k1 = vec( s, slot_stage_k1 ), k2 = vec( s, slot_stage_k1 + 1 ), k3 = vec( s, slot_stage_k1 + 2 ),
                   k4 = vec( s, slot_stage_k1 + 3 ), k5 = vec( s, slot_stage_k1 + 4 ), k6 = vec( s, slot_stage_k1 + 5 );
        const auto y = vec( s, slot_stage_input );
        const auto xn = vec( s, slot_new_state );
        if ( !st.k1_valid )
        {
            rhs( ops, s, st, x, k1 );
            st.k1_valid = true;
        }
        ops.for_each( n, [&]( int j ) { y[j] = x[j] + dt * a21 * k1[j]; } );
        rhs( ops, s, st, y, k2 );
        ops.for_each( n, [&]( int j ) { y[j] = x[j] + dt * ( a31 * k1[j] + a32 * k2[j] ); } );
        rhs( ops, s, st, y, k3 );
        ops.for_each( n, [&]( int j ) { y[j] = x[j] + dt * ( a41 * k1[j] + a42 * k2[j] + a43 * k3[j] ); } );
        rhs( ops, s, st, y, k4 );
        ops.for_each( n, [&]( int j ) { y[j] = x[j] + dt * ( a51 * k1[j] + a52 * k2[j] + a53 * k3[j] + a54 * k4[j] ); } );
        rhs( ops, s, st, y, k5 );
        ops.for_each( n, [&]( int j ) {
            y[j] = x[j] + dt * ( a61 * k1[j] + a62 * k2[j] + a63 * k3[j] + a64 * k4[j] + a65 * k5[j] );
        } );
        rhs( ops, s, st, y, k6 );

        const bool paper = opt.norm == ErrorNorm::paper;
        const double rtol = opt.rtol;
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

    /*!
      dt times an estimate of the dominant eigenvalue's modulus after an accepted RKF45 step:
      rho ~ |f(x + e) - f(x)| / |e| with e = w - u, the step's error vector (Shampine's idea, as in
      Hairer's DOPRI5 test). When stability limits the step, e is dominated by the stiff modes, so the
      quotient picks out their eigenvalue. Costs two RHS evaluations, one of which (f(x)) is the next
      step's k1 and is kept.
    */
    template <class Ops>
    KOKKOS_INLINE_FUNCTION double rkf45_stiffness( const Ops& ops, long s, State& st, double dt ) const
    {
        constexpr double e1 = 1.0 / 360.0, e3 = -128.0 / 4275.0, e4 = -2197.0 / 75240.0, e5 = 1.0 / 50.0, e6 = 2.0 / 55.0;
        const int n = map.n;
        const auto x = vec( s, slot_x );
        const auto k1 = vec( s, slot_stage_k1 ), k3 = vec( s, slot_stage_k1 + 2 ), k4 = vec( s, slot_stage_k1 + 3 ),
                   k5 = vec( s, slot_stage_k1 + 4 ), k6 = vec( s, slot_stage_k1 + 5 );
        const auto y = vec( s, slot_stage_input ), fy = vec( s, slot_tmp );
        const double den = ops.sum( n, [&]( int j ) {
            const double e = dt * ( e1 * k1[j] + e3 * k3[j] + e4 * k4[j] + e5 * k5[j] + e6 * k6[j] );
            y[j] = x[j] + e;
            return e * e;
        } );
        ops.barrier();
        if ( !( den > 0.0 ) )
            return 0.0;
        rhs( ops, s, st, y, fy );
        rhs( ops, s, st, x, k1 );
        st.k1_valid = true;
        const double num = ops.sum( n, [&]( int j ) {
            const double v = fy[j] - k1[j];
            return v * v;
        } );
        return dt * compat::sqrt( num / den );
    }

    // ----- BDF ---------------------------------------------------------------------------------------
    KOKKOS_INLINE_FUNCTION static double bdf_gamma( int q )
    {
        double g = 0.0;
        for ( int i = 1; i <= q; ++i )
            g += 1.0 / i;
        return g;
    }
    KOKKOS_INLINE_FUNCTION static double bdf_error_constant( int q ) { return 1.0 / ( q + 1 ); }

    //! Rescales the differences D_0..D_q for a step multiplied by `factor`: D <- (R U)^T D with
    //! R_ij = prod_{m=1..i} (m - 1 - factor j) / m and U = R at factor 1: the difference rescaling of
    //! Shampine & Reichelt's variable-step NDF/BDF (The MATLAB ODE Suite, 1997), as SciPy's BDF does it
    //! (scipy/integrate/_ivp/bdf.py, compute_R and change_D).
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void bdf_change_differences( const Ops& ops, long s, int q, double factor ) const
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
        const auto D0 = vec( s, 0 );
        const int n = map.n;
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
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void bdf_start( const Ops& ops, long s, State& st, double h ) const
    {
        const int n = map.n;
        const auto D1 = vec( s, 1 );
        const auto f = vec( s, slot_bdf_f );
        rhs( ops, s, st, vec( s, slot_x ), f );
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

    template <class Ops>
    KOKKOS_INLINE_FUNCTION void evaluate_jacobian( const Ops& ops, long s, State& st, const Strided<double>& x ) const
    {
        const auto k = cv( at( s, map.constants ) );
        if ( opt.linear == LinearKind::sparse_bicgstab )
            model_jacobian_values( ops, sys, k, cv( x ), at( s, map.jacobian ) );
        else
            model_dense_jacobian( ops, sys, k, cv( x ), at( s, map.jacobian ) );
        st.jacobian_valid = true;
        st.jacobian_current = true;
        st.lu_c = -1.0;
        ++st.counters[stat_jacobians];
    }

    //! Forms I - c J and factorises it (dense) or prepares the Jacobi preconditioner (sparse).
    template <class Ops>
    KOKKOS_INLINE_FUNCTION bool form_newton_matrix( const Ops& ops, long s, State& st, double c ) const
    {
        const int n = map.n;
        const auto J = at( s, map.jacobian );
        const auto M = at( s, map.newton_matrix );
        ++st.counters[stat_factorizations];
        st.lu_c = c;
        if ( opt.linear == LinearKind::sparse_bicgstab )
        {
            const auto dinv = vec( s, slot_krylov + 9 );
            double bad = 0.0;
            ops.for_each( n, [&]( int i ) {
                for ( int z = sys.jacobian_row_offsets( i ); z < sys.jacobian_row_offsets( i + 1 ); ++z )
                    M[z] = -c * J[z];
                const int d = sys.jacobian_diagonal( i );
                M[d] += 1.0;
                dinv[i] = 1.0 / M[d];
            } );
            bad = ops.max( n, [&]( int i ) { return dinv[i] - dinv[i] == 0.0 ? 0.0 : 1.0; } );
            return bad == 0.0;
        }
        ops.for_each( n, [&]( int i ) {
            for ( int q = 0; q < n; ++q )
                M[i * n + q] = ( i == q ? 1.0 : 0.0 ) - c * J[i * n + q];
        } );
#if MORULA_HAVE_KOKKOSKERNELS
        if ( opt.linear == LinearKind::dense_kokkos_batched )
            return lu_factor_kokkos_batched<MemorySpace>( ops, n, M );
#endif
        return lu_factor_pivoted( ops, n, M, pivot_vec( s ) );
    }

    //! b <- (I - cJ)^{-1} b. Returns false when the iterative solver does not converge.
    template <class Ops>
    KOKKOS_INLINE_FUNCTION bool newton_solve( const Ops& ops, long s, State& st, const Strided<double>& b ) const
    {
        const int n = map.n;
        const auto M = at( s, map.newton_matrix );
        if ( opt.linear == LinearKind::sparse_bicgstab )
            return bicgstab( ops, s, st, b );
#if MORULA_HAVE_KOKKOSKERNELS
        if ( opt.linear == LinearKind::dense_kokkos_batched )
        {
            lu_solve_kokkos_batched<MemorySpace>( ops, n, M, b );
            return true;
        }
#endif
        lu_solve_pivoted( ops, n, M, pivot_vec( s ), b );
        return true;
    }

    template <class Ops>
    KOKKOS_INLINE_FUNCTION void spmv( const Ops& ops, const Strided<double>& M, const Strided<double>& x,
                                      const Strided<double>& y ) const
    {
        ops.for_each( map.n, [&]( int i ) {
            double v = 0.0;
            for ( int z = sys.jacobian_row_offsets( i ); z < sys.jacobian_row_offsets( i + 1 ); ++z )
                v += M[z] * x[sys.jacobian_columns( z )];
            y[i] = v;
        } );
    }

    /*!
      Jacobi-preconditioned BiCGStab (van der Vorst 1992) for (I - cJ) x = b, x0 = 0, to
      ||r|| <= 1e-10 ||b||. b is overwritten by x.
    */
    template <class Ops>
    KOKKOS_INLINE_FUNCTION bool bicgstab( const Ops& ops, long s, State& st, const Strided<double>& b ) const
    {
        const int n = map.n;
        const auto M = at( s, map.newton_matrix );
        const auto r = vec( s, slot_krylov ), r0 = vec( s, slot_krylov + 1 ), p = vec( s, slot_krylov + 2 ),
                   v = vec( s, slot_krylov + 3 ), ph = vec( s, slot_krylov + 4 ), sh = vec( s, slot_krylov + 5 ),
                   tt = vec( s, slot_krylov + 6 ), x = vec( s, slot_krylov + 7 ), sv = vec( s, slot_krylov + 8 ),
                   dinv = vec( s, slot_krylov + 9 );
        ops.for_each( n, [&]( int i ) {
            r[i] = b[i];
            r0[i] = b[i];
            p[i] = 0.0;
            v[i] = 0.0;
            x[i] = 0.0;
        } );
        const double bnorm = compat::sqrt( ops.sum( n, [&]( int i ) { return b[i] * b[i]; } ) );
        bool converged = bnorm == 0.0;
        const double tol = 1e-10 * bnorm;
        double rho = 1.0, alpha = 1.0, omega = 1.0;
        const int max_iterations = n + 50;
        for ( int it = 0; it < max_iterations && !converged; ++it )
        {
            ++st.counters[stat_linear_iterations];
            const double rho_new = ops.sum( n, [&]( int i ) { return r0[i] * r[i]; } );
            if ( rho_new == 0.0 || !( rho_new == rho_new ) )
                break;
            const double beta = ( rho_new / rho ) * ( alpha / omega );
            ops.for_each( n, [&]( int i ) {
                p[i] = r[i] + beta * ( p[i] - omega * v[i] );
                ph[i] = dinv[i] * p[i];
            } );
            spmv( ops, M, ph, v );
            const double r0v = ops.sum( n, [&]( int i ) { return r0[i] * v[i]; } );
            if ( r0v == 0.0 )
                break;
            alpha = rho_new / r0v;
            ops.for_each( n, [&]( int i ) {
                sv[i] = r[i] - alpha * v[i];
                sh[i] = dinv[i] * sv[i];
            } );
            const double snorm = compat::sqrt( ops.sum( n, [&]( int i ) { return sv[i] * sv[i]; } ) );
            if ( snorm <= tol )
            {
                ops.for_each( n, [&]( int i ) { x[i] += alpha * ph[i]; } );
                converged = true;
                break;
            }
            spmv( ops, M, sh, tt );
            const double ts = ops.sum( n, [&]( int i ) { return tt[i] * sv[i]; } );
            const double t2 = ops.sum( n, [&]( int i ) { return tt[i] * tt[i]; } );
            if ( t2 == 0.0 )
                break;
            omega = ts / t2;
            ops.for_each( n, [&]( int i ) {
                x[i] += alpha * ph[i] + omega * sh[i];
                r[i] = sv[i] - omega * tt[i];
            } );
            const double rnorm = compat::sqrt( ops.sum( n, [&]( int i ) { return r[i] * r[i]; } ) );
            converged = rnorm <= tol;
            rho = rho_new;
            if ( omega == 0.0 )
                break;
        }
        ops.for_each( n, [&]( int i ) { b[i] = x[i]; } );
        return converged;
    }

    //! RMS of v_j / scale_j (optionally times a constant).
    template <class Ops>
    KOKKOS_INLINE_FUNCTION double rms( const Ops& ops, const Strided<double>& v, const Strided<double>& scale, double c ) const
    {
        const int n = map.n;
        if ( n == 0 )
            return 0.0;
        const double ss = ops.sum( n, [&]( int j ) {
            const double e = c * v[j] / scale[j];
            return e * e;
        } );
        return compat::sqrt( ss / n );
    }

    //! One accepted BDF step (with internal retries). Returns a SolverStatus (success when accepted).
    template <class Ops>
    KOKKOS_INLINE_FUNCTION SolverStatus bdf_step( const Ops& ops, long s, State& st, double t_end ) const
    {
        const int n = map.n;
        const bool fixed = opt.bdf_fixed_step > 0.0;
        const int maxit = fixed ? opt.fixed_step_max_newton_iterations : opt.max_newton_iterations;
        const double rtol = opt.rtol;
        const int atol_count = static_cast<int>( atol.extent( 0 ) );
        const auto D0 = vec( s, 0 );
        const auto y = vec( s, slot_bdf_y ), d = vec( s, slot_bdf_d ), f = vec( s, slot_bdf_f ),
                   scale = vec( s, slot_bdf_scale ), psi = vec( s, slot_bdf_psi ), yp = vec( s, slot_bdf_predict );
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
                bdf_change_differences( ops, s, st.order, factor );
                st.h = t_end - st.t;
                st.lu_c = -1.0;
            }
            if ( step_underflows( st.t, st.h ) )
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
                evaluate_jacobian( ops, s, st, yp );
            if ( st.lu_c != c )
                if ( !form_newton_matrix( ops, s, st, c ) )
                    return SolverStatus::singular_matrix;

            // Newton: (I - cJ) dy = c f(y) - psi - d
            bool converged = false;
            double dy_norm_old = -1.0;
            int iterations = 0;
            for ( int k = 0; k < maxit; ++k )
            {
                ++iterations;
                rhs( ops, s, st, y, f );
                ops.for_each( n, [&]( int j ) { f[j] = c * f[j] - psi[j] - d[j]; } );
                if ( !newton_solve( ops, s, st, f ) )
                    break;
                double dy_norm;
                if ( fixed )
                    dy_norm = ops.max( n, [&]( int j ) { return compat::fabs( f[j] ); } );
                else
                    dy_norm = rms( ops, f, scale, 1.0 );
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
                    evaluate_jacobian( ops, s, st, yp );
                    continue;
                }
                bdf_change_differences( ops, s, st.order, 0.5 );
                st.h *= 0.5;
                st.n_equal_steps = 0;
                st.lu_c = -1.0;
                continue;
            }
            if ( fixed )
                break;
            safety = 0.9 * ( 2 * maxit + 1 ) / ( 2 * maxit + iterations );
            ops.for_each( n, [&]( int j ) { scale[j] = atol( atol_count == 1 ? 0 : j ) + rtol * compat::fabs( y[j] ); } );
            error_norm = rms( ops, d, scale, bdf_error_constant( q ) );
            if ( error_norm > 1.0 || !( error_norm == error_norm ) )
            {
                ++st.counters[stat_rejected];
                double factor = error_norm == error_norm ? safety * compat::pow( error_norm, -1.0 / ( q + 1 ) ) : 0.2;
                factor = factor < 0.2 ? 0.2 : factor;
                bdf_change_differences( ops, s, q, factor );
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
        const double err_m = q > 1 ? rms( ops, D0.offset( long( q ) * n ), scale, bdf_error_constant( q - 1 ) ) : inf;
        const double err_p = q < opt.bdf_max_order ? rms( ops, D0.offset( long( q + 2 ) * n ), scale, bdf_error_constant( q + 1 ) ) : inf;
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
        bdf_change_differences( ops, s, st.order, factor );
        st.h *= factor;
        st.n_equal_steps = 0;
        st.lu_c = -1.0;
        return SolverStatus::success;
    }

    //! Fills every sample in (t_old, t] from the BDF interpolating polynomial through the last q+1 points.
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void bdf_dense_output( const Ops& ops, long s, State& st ) const
    {
        const int nsamples = static_cast<int>( sample_times.extent( 0 ) );
        const int n = map.n;
        const int saved = static_cast<int>( saved_species.extent( 0 ) );
        const auto D0 = vec( s, 0 );
        const int q = st.order;
        while ( st.sample < nsamples && sample_times( st.sample ) <= st.t )
        {
            const double ts = sample_times( st.sample );
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

    //! Gershgorin bound on the spectral radius of J (max row sum of |J_ij|), from a fresh Jacobian.
    template <class Ops>
    KOKKOS_INLINE_FUNCTION double spectral_radius_bound( const Ops& ops, long s, State& st ) const
    {
        const int n = map.n;
        evaluate_jacobian( ops, s, st, vec( s, slot_x ) );
        const auto J = at( s, map.jacobian );
        const bool sparse = opt.linear == LinearKind::sparse_bicgstab;
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

    //! Integrates system s from t_start through the last sampling time.
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void integrate( const Ops& ops, long s ) const
    {
        const int n = map.n;
        const int m = map.m;
        const int nsamples = static_cast<int>( sample_times.extent( 0 ) );
        State st;
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
        while ( st.sample < nsamples && sample_times( st.sample ) <= st.t )
            record_state( ops, s, st.sample++, x );
        const double t_end = nsamples > 0 ? sample_times( nsamples - 1 ) : t_start;
        if ( opt.method == Method::bdf || opt.start_in_bdf )
            bdf_start( ops, s, st, opt.bdf_fixed_step > 0.0 ? opt.bdf_fixed_step : opt.initial_step );

        SolverStatus status = SolverStatus::success;
        while ( st.sample < nsamples )
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
                if ( rkf45_attempt( ops, s, st, dt, dt_new ) )
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
                        st.h_rho = rkf45_stiffness( ops, s, st, dt );
                        if ( st.stiffness.stiff_enough( st.h_rho ) )
                        {
                            ++st.counters[stat_switches_to_bdf];
                            bdf_start( ops, s, st, opt.bdf_fixed_step > 0.0 ? opt.bdf_fixed_step : st.dt );
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
                        bdf_start( ops, s, st, opt.bdf_fixed_step > 0.0 ? opt.bdf_fixed_step : dt );
                    }
                }
                continue;
            }

            status = bdf_step( ops, s, st, t_end );
            if ( status != SolverStatus::success )
                break;
            ++st.counters[stat_steps];
            ++st.counters[stat_bdf_steps];
            bdf_dense_output( ops, s, st );
            if ( opt.method == Method::automatic && ++st.steps_since_check >= opt.stiffness_check_interval )
            {
                st.steps_since_check = 0;
                const double rho = spectral_radius_bound( ops, s, st );
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
        if ( status == SolverStatus::success )
        {
            const double bad = ops.max( n, [&]( int j ) { return x[j] - x[j] == 0.0 ? 0.0 : 1.0; } );
            if ( bad != 0.0 )
                status = SolverStatus::not_finite;
        }
        st.counters[stat_status] = static_cast<long>( status );
        ops.single( [&]() {
            for ( int c = 0; c < stat_count; ++c )
                statistics( s, c ) = st.counters[c];
        } );
    }
};

} // namespace morula::ode::detail

#endif
