/*!
  \file BiCGStab.hpp
  \brief Jacobi-preconditioned BiCGStab for one sparse system over VectorOps (thread or team), and the
         CSR matrix-vector product it needs: the BDF Newton solve when n x n dense storage is too much.

  The matrix shares the model's Jacobian pattern: row i's entries are M[z] for z in
  [row_offsets(i), row_offsets(i + 1)), in column columns(z). row_offsets and columns are anything
  callable as f(i) on the device (the model's Views).
*/
#ifndef MORULA_ODE_DETAIL_BICGSTAB_HPP
#define MORULA_ODE_DETAIL_BICGSTAB_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/detail/VectorOps.hpp>

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

//! Length-n vectors BiCGStab keeps besides b and the inverse diagonal.
constexpr int bicgstab_work_vectors = 9;

//! y = M x for M in the CSR pattern (row_offsets, columns).
template <class Ops, class RowOffsets, class Columns>
KOKKOS_INLINE_FUNCTION void csr_multiply( const Ops& ops, int n, const RowOffsets& row_offsets, const Columns& columns,
                                          const Strided<double>& M, const Strided<double>& x, const Strided<double>& y )
{
    ops.for_each( n, [&]( int i ) {
        double v = 0.0;
        for ( int z = row_offsets( i ); z < row_offsets( i + 1 ); ++z )
            v += M[z] * x[columns( z )];
        y[i] = v;
    } );
}

/*!
  Jacobi-preconditioned BiCGStab (H. A. van der Vorst, SIAM J. Sci. Stat. Comput. 13(2):631-644, 1992,
  right-preconditioned with K = diag(M)) for M x = b from x0 = 0, until ||r|| <= relative_tolerance ||b||
  (r the recurrence residual) or `max_iterations` iterations. b is overwritten by the last iterate, also
  when the solver gives up. `dinv` holds 1 / M_ii; `work` holds bicgstab_work_vectors vectors of length
  n, vector v at work.offset(v n). Every iteration adds one to `iterations`.

  Returns true when converged (at once for b = 0), false at the iteration limit or on a breakdown
  (rho = r0.r, r0.v or t.t exactly zero, or a NaN).
*/
template <class Ops, class RowOffsets, class Columns>
KOKKOS_INLINE_FUNCTION bool bicgstab_jacobi( const Ops& ops, int n, const RowOffsets& row_offsets, const Columns& columns,
                                             const Strided<double>& M, const Strided<double>& dinv,
                                             const Strided<double>& work, const Strided<double>& b,
                                             double relative_tolerance, int max_iterations, long& iterations )
{
    const auto r = work, r0 = work.offset( long( 1 ) * n ), p = work.offset( long( 2 ) * n ),
               v = work.offset( long( 3 ) * n ), ph = work.offset( long( 4 ) * n ), sh = work.offset( long( 5 ) * n ),
               tt = work.offset( long( 6 ) * n ), x = work.offset( long( 7 ) * n ), sv = work.offset( long( 8 ) * n );
    ops.for_each( n, [&]( int i ) {
        r[i] = b[i];
        r0[i] = b[i];
        p[i] = 0.0;
        v[i] = 0.0;
        x[i] = 0.0;
    } );
    const double bnorm = compat::sqrt( ops.sum( n, [&]( int i ) { return b[i] * b[i]; } ) );
    bool converged = bnorm == 0.0;
    const double tol = relative_tolerance * bnorm;
    double rho = 1.0, alpha = 1.0, omega = 1.0;
    for ( int it = 0; it < max_iterations && !converged; ++it )
    {
        ++iterations;
        const double rho_new = ops.sum( n, [&]( int i ) { return r0[i] * r[i]; } );
        if ( rho_new == 0.0 || !( rho_new == rho_new ) )
            break;
        const double beta = ( rho_new / rho ) * ( alpha / omega );
        ops.for_each( n, [&]( int i ) {
            p[i] = r[i] + beta * ( p[i] - omega * v[i] );
            ph[i] = dinv[i] * p[i];
        } );
        csr_multiply( ops, n, row_offsets, columns, M, ph, v );
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
        csr_multiply( ops, n, row_offsets, columns, M, sh, tt );
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

} // namespace morula::ode::detail

#endif
