/*!
  \file DenseLu.hpp
  \brief Dense LU factorisation and solve of one system's Newton matrix over VectorOps: Morula's own
         with partial pivoting, and KokkosBatched's (no pivoting) for comparison and choice.

  The matrix is row-major in a Strided vector (element (i, j) at index i n + j), so in batched mode the
  same (i, j) of neighbouring systems are neighbours in memory and a warp's loads coalesce.
*/
#ifndef MORULA_ODE_DETAIL_DENSELU_HPP
#define MORULA_ODE_DETAIL_DENSELU_HPP

#include <morula/Config.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/ode/detail/VectorOps.hpp>

#include <Kokkos_Core.hpp>

#if MORULA_HAVE_KOKKOSKERNELS
#include <KokkosBatched_LU_Decl.hpp>
#include <KokkosBatched_LU_Serial_Impl.hpp>
#include <KokkosBatched_LU_Team_Impl.hpp>
#include <KokkosBatched_Trsv_Decl.hpp>
#include <KokkosBatched_Trsv_Serial_Impl.hpp>
#include <KokkosBatched_Trsv_Team_Impl.hpp>
#endif

namespace morula::ode::detail
{

/*!
  Right-looking LU with partial pivoting, in place: A = P L U with unit-diagonal L below the diagonal.
  Every thread finds the pivot itself (the same answer from the same data, so no broadcast); the trailing
  update is one parallel loop over rows per column. Returns false on an exactly zero pivot column.
*/
template <class Ops>
KOKKOS_INLINE_FUNCTION bool lu_factor_pivoted( const Ops& ops, int n, const Strided<double>& A, const Strided<int>& pivot )
{
    for ( int k = 0; k < n; ++k )
    {
        int p = k;
        double best = compat::fabs( A[k * n + k] );
        for ( int i = k + 1; i < n; ++i )
        {
            const double v = compat::fabs( A[i * n + k] );
            if ( v > best )
            {
                best = v;
                p = i;
            }
        }
        if ( best == 0.0 )
            return false;
        ops.single( [&]() { pivot[k] = p; } );
        if ( p != k )
            ops.for_each( n, [&]( int j ) {
                const double t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            } );
        const double inv = 1.0 / A[k * n + k];
        ops.for_each( n - k - 1, [&]( int ii ) {
            const int i = k + 1 + ii;
            const double l = A[i * n + k] * inv;
            A[i * n + k] = l;
            for ( int j = k + 1; j < n; ++j )
                A[i * n + j] -= l * A[k * n + j];
        } );
    }
    return true;
}

//! Solves A x = b with the factors of lu_factor_pivoted; b is overwritten by x. Column-oriented
//! substitutions so that each column's update is one parallel loop.
template <class Ops>
KOKKOS_INLINE_FUNCTION void lu_solve_pivoted( const Ops& ops, int n, const Strided<double>& A,
                                              const Strided<int>& pivot, const Strided<double>& b )
{
    ops.single( [&]() {
        for ( int k = 0; k < n; ++k )
        {
            const int p = pivot[k];
            if ( p != k )
            {
                const double t = b[k];
                b[k] = b[p];
                b[p] = t;
            }
        }
    } );
    for ( int j = 0; j < n - 1; ++j )
    {
        const double bj = b[j];
        ops.for_each( n - j - 1, [&]( int ii ) { b[j + 1 + ii] -= A[( j + 1 + ii ) * n + j] * bj; } );
    }
    for ( int j = n - 1; j >= 0; --j )
    {
        ops.single( [&]() { b[j] /= A[j * n + j]; } );
        const double bj = b[j];
        ops.for_each( j, [&]( int i ) { b[i] -= A[i * n + j] * bj; } );
    }
}

#if MORULA_HAVE_KOKKOSKERNELS
//! Unmanaged strided 2D/1D views over one system's matrix and vector, as KokkosBatched takes them.
template <class MemorySpace>
using StridedMatrixView = Kokkos::View<double**, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class MemorySpace>
using StridedVectorView = Kokkos::View<double*, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class MemorySpace>
KOKKOS_INLINE_FUNCTION StridedMatrixView<MemorySpace> as_matrix( int n, const Strided<double>& A )
{
    return StridedMatrixView<MemorySpace>( A.data, Kokkos::LayoutStride( n, n * A.stride, n, A.stride ) );
}
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION StridedVectorView<MemorySpace> as_vector( int n, const Strided<double>& b )
{
    return StridedVectorView<MemorySpace>( b.data, Kokkos::LayoutStride( n, b.stride ) );
}

//! KokkosBatched LU without pivoting (Algo::LU::Unblocked), serial or team by Ops. Returns false when a
//! pivot is zero or not finite (KokkosBatched itself does not check).
template <class MemorySpace, class Ops>
KOKKOS_INLINE_FUNCTION bool lu_factor_kokkos_batched( const Ops& ops, int n, const Strided<double>& A )
{
    auto Av = as_matrix<MemorySpace>( n, A );
    if constexpr ( std::is_same<Ops, ThreadOps>::value )
        KokkosBatched::SerialLU<KokkosBatched::Algo::LU::Unblocked>::invoke( Av );
    else
        KokkosBatched::TeamLU<typename std::decay<decltype( ops.member )>::type, KokkosBatched::Algo::LU::Unblocked>::invoke( ops.member, Av );
    ops.barrier();
    for ( int k = 0; k < n; ++k )
    {
        const double d = A[k * n + k];
        if ( !( d != 0.0 && d - d == 0.0 ) )
            return false;
    }
    return true;
}

template <class MemorySpace, class Ops>
KOKKOS_INLINE_FUNCTION void lu_solve_kokkos_batched( const Ops& ops, int n, const Strided<double>& A, const Strided<double>& b )
{
    using namespace KokkosBatched;
    auto Av = as_matrix<MemorySpace>( n, A );
    auto bv = as_vector<MemorySpace>( n, b );
    if constexpr ( std::is_same<Ops, ThreadOps>::value )
    {
        SerialTrsv<Uplo::Lower, Trans::NoTranspose, Diag::Unit, Algo::Trsv::Unblocked>::invoke( 1.0, Av, bv );
        SerialTrsv<Uplo::Upper, Trans::NoTranspose, Diag::NonUnit, Algo::Trsv::Unblocked>::invoke( 1.0, Av, bv );
    }
    else
    {
        using Member = typename std::decay<decltype( ops.member )>::type;
        TeamTrsv<Member, Uplo::Lower, Trans::NoTranspose, Diag::Unit, Algo::Trsv::Unblocked>::invoke( ops.member, 1.0, Av, bv );
        ops.barrier();
        TeamTrsv<Member, Uplo::Upper, Trans::NoTranspose, Diag::NonUnit, Algo::Trsv::Unblocked>::invoke( ops.member, 1.0, Av, bv );
    }
    ops.barrier();
}
#endif

} // namespace morula::ode::detail

#endif
