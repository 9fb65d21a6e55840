/*!
  \file SmallMassAction.hpp
  \brief A small mass-action network (at most N species and M reactions, both fixed at compile time) as
         dense tables, with its right-hand side, analytic Jacobian and a pivoted LU whose every array index
         is a compile-time constant, so that one system's state, Jacobian and factorised matrix can live in
         registers.

  The sparse CSR form of MassActionSystem indexes the state with species numbers read from memory; on a
  GPU an array indexed at run time goes to local memory. Here every loop runs to N or M and is unrolled,
  the tables (the same for every system) are read at constant offsets from the kernel's parameter block,
  and a species or reaction beyond the network's real size is a zero row: it never changes and costs a
  few multiplications by zero. One kernel per (N, M) capacity; the batched Rosenbrock solver picks the
  smallest that holds the network.
*/
#ifndef MORULA_ODE_DETAIL_SMALLMASSACTION_HPP
#define MORULA_ODE_DETAIL_SMALLMASSACTION_HPP

#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace morula::ode::detail
{

//! A (species, reactions) capacity of the kernels, as a type.
template <int N, int M>
struct Capacity
{
    static constexpr int species = N;
    static constexpr int reactions = M;
};

template <int N, int M>
struct SmallMassAction
{
    static constexpr int max_species = N;
    static constexpr int max_reactions = M;
    int species = 0;
    int reactions = 0;
    //! order[r][q]: the power of species q in reaction r's rate (0 if q is not a reactant).
    unsigned char order[M][N] = {};
    //! change[i][r]: the net change of species i per unit of reaction r's rate.
    double change[N][M] = {};
    //! The same table rounded to float for the single-precision kernels: converting a double read from the
    //! parameter block to float is an FP64-pipe instruction, and the float kernels did one per table entry
    //! used in every right-hand side and Jacobian (issue #45 float speed).
    float change_float[N][M] = {};

    template <class Real>
    KOKKOS_INLINE_FUNCTION Real coefficient( int i, int r ) const
    {
        if constexpr ( std::is_same<Real, float>::value )
            return change_float[i][r];
        else
            return static_cast<Real>( change[i][r] );
    }
};

//! x^a for a small non-negative integer a (exact for a <= 2, no pow call).
template <class Real>
KOKKOS_INLINE_FUNCTION Real small_power( Real x, int a )
{
    // The orders of mass action are 0, 1 or 2 nearly always: selects there (the order is the same for
    // every thread, read from the tables), the loop only beyond.
    if ( a <= 2 )
        return a == 0 ? Real( 1 ) : ( a == 1 ? x : x * x );
    Real p = x * x;
    for ( int i = 2; i < a; ++i )
        p *= x;
    return p;
}

/*!
  f = (B - A)^T [k o x^A] over the dense tables. The loop over reactions runs to the network's count, so
  k[r] is indexed at run time and sits in local memory on a GPU (cached; 64 bytes of stack at 8 reactions).
  Unrolling it to the capacity M with a uniform branch past the last reaction (to keep k in registers) made
  the device build of ode_benchmark, which instantiates every capacity, method and precision, run past 280 s
  where it took 172 s (probably the 8 x 16 kernels), so it was reverted unmeasured (issue #45 speed).
*/
template <class Real, int N, int M>
KOKKOS_INLINE_FUNCTION void small_rhs( const SmallMassAction<N, M>& net, const Real ( &k )[M], const Real ( &x )[N],
                                       Real ( &f )[N] )
{
    MORULA_UNROLL
    for ( int i = 0; i < N; ++i )
        f[i] = 0;
    for ( int r = 0; r < net.reactions; ++r )
    {
        Real rate = k[r];
        MORULA_UNROLL
        for ( int q = 0; q < N; ++q )
            rate *= small_power( x[q], net.order[r][q] );
        MORULA_UNROLL
        for ( int i = 0; i < N; ++i )
            f[i] += net.template coefficient<Real>( i, r ) * rate;
    }
}

/*!
  The analytic Jacobian J(i, q) = sum_r change(i, r) d rate_r / d x_q, with
  d rate_r / d x_q = k_r a_rq x_q^(a_rq - 1) prod_{q' != q} x_q'^(a_rq') (the product of the other
  factors from a prefix and a suffix product, so no division: exact at x_q = 0).
*/
template <class Real, int N, int M>
KOKKOS_INLINE_FUNCTION void small_jacobian( const SmallMassAction<N, M>& net, const Real ( &k )[M], const Real ( &x )[N],
                                            Real ( &J )[N][N] )
{
    MORULA_UNROLL
    for ( int i = 0; i < N; ++i )
        MORULA_UNROLL
        for ( int q = 0; q < N; ++q )
            J[i][q] = 0;
    for ( int r = 0; r < net.reactions; ++r )
    {
        Real before[N], after[N]; // products of the factors of species < q and > q
        Real p = k[r];
        MORULA_UNROLL
        for ( int q = 0; q < N; ++q )
        {
            before[q] = p;
            p *= small_power( x[q], net.order[r][q] );
        }
        p = 1;
        MORULA_UNROLL
        for ( int q = N - 1; q >= 0; --q )
        {
            after[q] = p;
            p *= small_power( x[q], net.order[r][q] );
        }
        MORULA_UNROLL
        for ( int q = 0; q < N; ++q )
        {
            const int a = net.order[r][q];
            const Real d = a == 0 ? Real( 0 ) : before[q] * after[q] * static_cast<Real>( a ) * small_power( x[q], a - 1 );
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
                J[i][q] += net.template coefficient<Real>( i, r ) * d;
        }
    }
}

/*!
  In-place LU with partial pivoting of an N x N matrix whose indices are all constants after unrolling:
  the pivot row is found by comparison and swapped in by selects, so no element is addressed by a
  run-time index. `pivot[k]` records the row swapped with row k (columns k..N-1 only, as LINPACK's dgefa). The diagonal keeps the reciprocal of
  each pivot, so that the solves (eight per Rodas5P step) multiply instead of divide: a double division
  is a long instruction sequence on GPUs. Returns false on an exactly zero pivot.
*/
template <class Real, int N>
KOKKOS_INLINE_FUNCTION bool small_lu_factor( Real ( &A )[N][N], int ( &pivot )[N] )
{
    MORULA_UNROLL
    for ( int k = 0; k < N; ++k )
    {
        int p = k;
        Real best = compat::fabs( A[k][k] );
        MORULA_UNROLL
        for ( int i = k + 1; i < N; ++i )
        {
            const Real v = compat::fabs( A[i][k] );
            if ( v > best )
            {
                best = v;
                p = i;
            }
        }
        pivot[k] = p;
        if ( !( best > 0 ) )
            return false;
        // Swap only columns k..N-1 (LINPACK's dgefa): the multipliers of the earlier columns stay where
        // they were computed, because small_lu_solve applies each interchange just before that column's
        // elimination. Swapping whole rows (LAPACK's dgetrf) needs all interchanges applied to b first;
        // with the interleaved solve it gave wrong solutions whenever a row swap happened after the
        // first column (non-mass-conserving networks such as the Oregonator; issue #45 work-precision study).
        MORULA_UNROLL
        for ( int i = k + 1; i < N; ++i )
            if ( i == p )
                MORULA_UNROLL
                for ( int j = k; j < N; ++j )
                {
                    const Real t = A[k][j];
                    A[k][j] = A[i][j];
                    A[i][j] = t;
                }
        const Real inverse = Real( 1 ) / A[k][k];
        A[k][k] = inverse;
        MORULA_UNROLL
        for ( int i = k + 1; i < N; ++i )
        {
            const Real l = A[i][k] * inverse;
            A[i][k] = l;
            MORULA_UNROLL
            for ( int j = k + 1; j < N; ++j )
                A[i][j] -= l * A[k][j];
        }
    }
    return true;
}

//! Solves A x = b in place (b becomes x) with the factors, reciprocal pivots and pivots of small_lu_factor.
template <class Real, int N>
KOKKOS_INLINE_FUNCTION void small_lu_solve( const Real ( &LU )[N][N], const int ( &pivot )[N], Real ( &b )[N] )
{
    MORULA_UNROLL
    for ( int k = 0; k < N; ++k )
    {
        MORULA_UNROLL
        for ( int i = k + 1; i < N; ++i )
            if ( i == pivot[k] )
            {
                const Real t = b[k];
                b[k] = b[i];
                b[i] = t;
            }
        MORULA_UNROLL
        for ( int i = k + 1; i < N; ++i )
            b[i] -= LU[i][k] * b[k];
    }
    MORULA_UNROLL
    for ( int k = N - 1; k >= 0; --k )
    {
        Real s = b[k];
        MORULA_UNROLL
        for ( int j = k + 1; j < N; ++j )
            s -= LU[k][j] * b[j];
        b[k] = s * LU[k][k]; // the reciprocal of the pivot (small_lu_factor)
    }
}

} // namespace morula::ode::detail

#endif
