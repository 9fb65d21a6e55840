/*!
  \file SmallMassAction.hpp
  \brief A small mass-action network (at most N species and M reactions, both fixed at compile time) as
         dense tables, with its right-hand side, analytic Jacobian and a pivoted LU whose every array index
         is a compile-time constant, so that one system's state, Jacobian and factorised matrix can live in
         registers.

  The sparse CSR form of MassActionSystem indexes the state with species numbers read from memory; on a
  GPU an array indexed at run time goes to local memory. Here every loop over species runs to N and is
  unrolled (a species is picked by selects, never by an index), the tables (the same for every system)
  are read through the constant cache (the kernel's functor is in constant memory:
  core::LaunchConstantRange), and a species beyond the network's real size is a zero
  row: it never changes and costs a few multiplications by zero. The loops over reactions run to the
  network's count. One kernel per (N, M) capacity; the batched Rosenbrock solver picks the smallest that
  holds the network.
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

//! The capacities (reactions) whose reactants are kept as factors: SmallMassAction::factored.
constexpr int max_factored_reactions = 8;

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
    //! tables to float is an FP64-pipe instruction, and the float kernels did one per table entry
    //! used in every right-hand side and Jacobian (issue #45 float speed).
    float change_float[N][M] = {};

    /*!
      Capacities of up to `max_factored_reactions` reactions keep each reaction's reactants as at most two
      factors x_s^a (species increasing) besides the order table, and small_rhs / small_jacobian use them:
      a rate is k (x_s1^a1) (x_s2^a2), two species picked by selects, instead of a power of every species
      (each an order byte read at a run-time offset and selects), with the same products and so the same
      rounding. Unrolling the reaction loop as well (so that k and the tables' offsets are constants) was
      measured and dropped: ptxas kept the tables of all 8 reactions in registers (Rodas5P 3 x 8 in double
      126 -> 189 registers, float Rosenbrock23 72 -> 76 with spills). The large capacity keeps the order
      table. A network with a reaction of more than two reactant species goes to the large capacity
      (`fits_factors`).
    */
    static constexpr bool factored = M <= max_factored_reactions;
    //! factor_species[r][f]: species of reaction r's f-th factor, increasing in f; N (none) past the last.
    int factor_species[M][2] = {};
    //! factor_power[r][f]: its power (0 for none).
    int factor_power[M][2] = {};

    template <class Real>
    KOKKOS_INLINE_FUNCTION Real coefficient( int i, int r ) const
    {
        if constexpr ( std::is_same<Real, float>::value )
            return change_float[i][r];
        else
            return static_cast<Real>( change[i][r] );
    }
};

/*!
  a / b in single precision where a result within a few units in the last place is enough (the error norm
  that steers the step size, the pivots' reciprocals of the float LU): on CUDA and HIP devices the fast
  division (a reciprocal and a multiply), elsewhere a / b. IEEE division on a GPU is a longer sequence with
  a branch to a slow path.
*/
KOKKOS_INLINE_FUNCTION float fast_divide( float a, float b )
{
#if defined( __CUDA_ARCH__ ) || defined( __HIP_DEVICE_COMPILE__ )
    return __fdividef( a, b );
#else
    return a / b;
#endif
}

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

//! x[s] picked by selects (no run-time index into x, which would put it in local memory); 1 for s = N.
template <class Real, int N>
KOKKOS_INLINE_FUNCTION Real pick_species( const Real ( &x )[N], int s )
{
    Real v = 1;
    MORULA_UNROLL
    for ( int q = 0; q < N; ++q )
        v = q == s ? x[q] : v;
    return v;
}

/*!
  f = (B - A)^T [k o x^A] over the dense tables. Factored capacities take reaction r's rate as
  (k_r x_s1^a1) x_s2^a2, the order table's product without its factors of 1 (so the same rounding). The loop
  runs over the network's reactions, so k[r] is indexed at run time and sits in local memory on a GPU
  (cached; unrolled loops cost more registers, see SmallMassAction::factored).
*/
template <class Real, int N, int M>
KOKKOS_INLINE_FUNCTION void small_rhs( const SmallMassAction<N, M>& net, const Real ( &k )[M], const Real ( &x )[N],
                                       Real ( &f )[N] )
{
    MORULA_UNROLL
    for ( int i = 0; i < N; ++i )
        f[i] = 0;
    if constexpr ( SmallMassAction<N, M>::factored )
    {
        for ( int r = 0; r < net.reactions; ++r )
        {
            const Real rate = k[r] * small_power( pick_species( x, net.factor_species[r][0] ), net.factor_power[r][0] ) *
                              small_power( pick_species( x, net.factor_species[r][1] ), net.factor_power[r][1] );
            MORULA_UNROLL
            for ( int i = 0; i < N; ++i )
                f[i] += net.template coefficient<Real>( i, r ) * rate;
        }
    }
    else
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
    if constexpr ( SmallMassAction<N, M>::factored )
    {
        // The two nonzero columns of reaction r's row of d rate / d x, as the order table's prefix and
        // suffix products give them (the same rounding): at s1, (k_r x_s2^a2) a1 x_s1^(a1-1); at s2,
        // (k_r x_s1^a1) a2 x_s2^(a2-1).
        for ( int r = 0; r < net.reactions; ++r )
        {
            const int s1 = net.factor_species[r][0], s2 = net.factor_species[r][1];
            const int a1 = net.factor_power[r][0], a2 = net.factor_power[r][1];
            const Real x1 = pick_species( x, s1 ), x2 = pick_species( x, s2 );
            const Real d1 = k[r] * small_power( x2, a2 ) * static_cast<Real>( a1 ) * small_power( x1, a1 - 1 );
            const Real d2 = k[r] * small_power( x1, a1 ) * static_cast<Real>( a2 ) * small_power( x2, a2 - 1 );
            MORULA_UNROLL
            for ( int q = 0; q < N; ++q )
            {
                const Real d = q == s1 ? d1 : ( q == s2 ? d2 : Real( 0 ) );
                MORULA_UNROLL
                for ( int i = 0; i < N; ++i )
                    J[i][q] += net.template coefficient<Real>( i, r ) * d;
            }
        }
    }
    else
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
        Real inverse;
        if constexpr ( std::is_same<Real, float>::value )
            inverse = fast_divide( 1.0f, A[k][k] );
        else
            inverse = Real( 1 ) / A[k][k];
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
        // The interchange as selects: written as a conditional swap, nvcc turned it into b[pivot[k]] and
        // put b in local memory (12 local loads and stores per solve in the float Rosenbrock23 kernel).
        const int p = pivot[k];
        const Real bk = b[k];
        Real pivot_value = bk;
        MORULA_UNROLL
        for ( int i = k + 1; i < N; ++i )
        {
            const Real bi = b[i];
            pivot_value = i == p ? bi : pivot_value;
            b[i] = i == p ? bk : bi;
        }
        b[k] = pivot_value;
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
