/*!
  \file NewtonSolve.hpp
  \brief The linear algebra of BDF's Newton iteration for one system: the analytic Jacobian, the
         Newton matrix I - c J formed and factorised (dense LU, pivoted or KokkosBatched) or prepared for
         Jacobi-preconditioned BiCGStab (sparse), and the solve (I - c J) dy = b.

  The functions work on the integrator `in` of Integrator.hpp: its `map`, `at(s, offset)`,
  `vec(s, slot)`, `pivot_vec(s)`, `cv(v)`, `sys` (the model, see ModelInterface.hpp) and `opt.linear`,
  and the state's `lu_c`, `jacobian_valid`, `jacobian_current` and counters.
*/
#ifndef MORULA_ODE_DETAIL_NEWTONSOLVE_HPP
#define MORULA_ODE_DETAIL_NEWTONSOLVE_HPP

#include <morula/Config.hpp>
#include <morula/ode/SolverOptions.hpp>
#include <morula/ode/detail/BiCGStab.hpp>
#include <morula/ode/detail/DenseLu.hpp>
#include <morula/ode/detail/ModelInterface.hpp>
#include <morula/ode/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

//! Linear solver actually used (SolverOptions::automatic resolved on the host).
enum class LinearKind : int
{
    dense_pivoted,
    dense_kokkos_batched,
    sparse_bicgstab
};

//! BiCGStab's stopping rule inside Newton: ||r|| <= 1e-10 ||b||, at most n + 50 iterations.
constexpr double newton_bicgstab_tolerance = 1e-10;
constexpr int newton_bicgstab_extra_iterations = 50;

//! The Jacobian at x into the workspace, dense or on the sparse pattern as the linear solver needs it.
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION void evaluate_jacobian( const Integrator& in, const Ops& ops, long s,
                                               typename Integrator::State& st, const Strided<double>& x )
{
    const auto k = in.cv( in.at( s, in.map.constants ) );
    if ( in.opt.linear == LinearKind::sparse_bicgstab )
        model_jacobian_values( ops, in.sys, k, in.cv( x ), in.at( s, in.map.jacobian ) );
    else
        model_dense_jacobian( ops, in.sys, k, in.cv( x ), in.at( s, in.map.jacobian ) );
    st.jacobian_valid = true;
    st.jacobian_current = true;
    st.lu_c = -1.0;
    ++st.counters[stat_jacobians];
}

//! Forms I - c J and factorises it (dense) or prepares the Jacobi preconditioner (sparse).
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION bool form_newton_matrix( const Integrator& in, const Ops& ops, long s,
                                                typename Integrator::State& st, double c )
{
    const int n = in.map.n;
    const auto J = in.at( s, in.map.jacobian );
    const auto M = in.at( s, in.map.newton_matrix );
    ++st.counters[stat_factorizations];
    st.lu_c = c;
    if ( in.opt.linear == LinearKind::sparse_bicgstab )
    {
        const auto& sys = in.sys;
        const auto dinv = in.vec( s, slot_krylov + bicgstab_work_vectors );
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
    if ( in.opt.linear == LinearKind::dense_kokkos_batched )
        return lu_factor_kokkos_batched<typename Integrator::memory_space>( ops, n, M );
#endif
    return lu_factor_pivoted( ops, n, M, in.pivot_vec( s ) );
}

//! b <- (I - cJ)^{-1} b. Returns false when the iterative solver does not converge.
template <class Integrator, class Ops>
KOKKOS_INLINE_FUNCTION bool newton_solve( const Integrator& in, const Ops& ops, long s, typename Integrator::State& st,
                                          const Strided<double>& b )
{
    const int n = in.map.n;
    const auto M = in.at( s, in.map.newton_matrix );
    if ( in.opt.linear == LinearKind::sparse_bicgstab )
        return bicgstab_jacobi( ops, n, in.sys.jacobian_row_offsets, in.sys.jacobian_columns, M,
                                in.vec( s, slot_krylov + bicgstab_work_vectors ), in.vec( s, slot_krylov ), b,
                                newton_bicgstab_tolerance, n + newton_bicgstab_extra_iterations,
                                st.counters[stat_linear_iterations] );
#if MORULA_HAVE_KOKKOSKERNELS
    if ( in.opt.linear == LinearKind::dense_kokkos_batched )
    {
        lu_solve_kokkos_batched<typename Integrator::memory_space>( ops, n, M, b );
        return true;
    }
#endif
    lu_solve_pivoted( ops, n, M, in.pivot_vec( s ), b );
    return true;
}

} // namespace morula::ode::detail

#endif
