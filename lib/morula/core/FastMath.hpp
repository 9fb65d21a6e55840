/*!
  \file FastMath.hpp
  \brief Reciprocal, square root and reciprocal square root for inner loops: the GPUs' hardware
  approximations in float (about 2 ulp) and their refined reciprocal square root in double (1 ulp); the
  correctly rounded operations on CPUs.

  The IEEE-exact float division and square root of CUDA and HIP cost a dozen instructions and a
  branch each; in a force loop where a warp's lanes diverge (some have an overlapping neighbour,
  some not) that cost is paid by the whole warp. Use these only where a relative error of a few ulp
  is acceptable.
*/
#ifndef MORULA_CORE_FASTMATH_HPP
#define MORULA_CORE_FASTMATH_HPP

#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

namespace morula::core
{

KOKKOS_FORCEINLINE_FUNCTION float fast_rsqrt( float x )
{
#if defined( __CUDA_ARCH__ ) || defined( __HIP_DEVICE_COMPILE__ )
    return rsqrtf( x );
#else
    return 1.0f / compat::sqrt( x );
#endif
}

//! In double on GPUs the hardware estimate refined by Newton steps (CUDA's rsqrt, within 1 ulp) instead of
//! a square root and a division, each with a slow-path branch, which made the sphere forces in double
//! faster (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): fifth pass").
KOKKOS_FORCEINLINE_FUNCTION double fast_rsqrt( double x )
{
#if defined( __CUDA_ARCH__ ) || defined( __HIP_DEVICE_COMPILE__ )
    return ::rsqrt( x );
#else
    return 1.0 / compat::sqrt( x );
#endif
}

KOKKOS_FORCEINLINE_FUNCTION float fast_reciprocal( float x )
{
#if defined( __CUDA_ARCH__ ) || defined( __HIP_DEVICE_COMPILE__ )
    return __fdividef( 1.0f, x );
#else
    return 1.0f / x;
#endif
}

KOKKOS_FORCEINLINE_FUNCTION double fast_reciprocal( double x ) { return 1.0 / x; }

//! Square root of x > 0 (x * rsqrt(x) on GPUs in float; x = 0 gives NaN there, so callers must exclude it).
KOKKOS_FORCEINLINE_FUNCTION float fast_sqrt_positive( float x )
{
#if defined( __CUDA_ARCH__ ) || defined( __HIP_DEVICE_COMPILE__ )
    return x * rsqrtf( x );
#else
    return compat::sqrt( x );
#endif
}

KOKKOS_FORCEINLINE_FUNCTION double fast_sqrt_positive( double x ) { return compat::sqrt( x ); }

} // namespace morula::core

#endif
