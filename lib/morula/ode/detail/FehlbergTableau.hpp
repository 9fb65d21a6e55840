/*!
  \file FehlbergTableau.hpp
  \brief Fehlberg's 4(5) pair (Fehlberg 1969, NASA TR R-315, Table III): the one copy of its coefficients,
  read by the per-system RKF45 step, the device-wide kernels and the stiffness estimate.

  Functions with a switch over the nonzero entries, as RosenbrockTableau.hpp's: a kernel may index them
  with a run-time stage number, which a static constexpr member array cannot be in CUDA or HIP device
  code; a local constexpr array was rebuilt on the stack at every call where a loop is not unrolled
  (nvcc's host pass ignores the unroll pragma; 11x slower for the Rosenbrock tableaus on the host),
  a switch is a jump. Called with constant arguments they are constant expressions, so the named
  coefficients of the unrolled step are compile-time values (the same bits as any other spelling).
*/
#ifndef MORULA_ODE_DETAIL_FEHLBERGTABLEAU_HPP
#define MORULA_ODE_DETAIL_FEHLBERGTABLEAU_HPP

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

//! a_{i+1, l+1}: stage i's weight of stage l's slope (l < i; zero otherwise).
KOKKOS_INLINE_FUNCTION constexpr double fehlberg_a( int i, int l )
{
    switch ( i * 8 + l )
    {
    case 8: return 1.0 / 4.0;
    case 16: return 3.0 / 32.0;
    case 17: return 9.0 / 32.0;
    case 24: return 1932.0 / 2197.0;
    case 25: return -7200.0 / 2197.0;
    case 26: return 7296.0 / 2197.0;
    case 32: return 439.0 / 216.0;
    case 33: return -8.0;
    case 34: return 3680.0 / 513.0;
    case 35: return -845.0 / 4104.0;
    case 40: return -8.0 / 27.0;
    case 41: return 2.0;
    case 42: return -3544.0 / 2565.0;
    case 43: return 1859.0 / 4104.0;
    case 44: return -11.0 / 40.0;
    default: return 0.0;
    }
}

//! Weight of stage l in the 4th-order solution u.
KOKKOS_INLINE_FUNCTION constexpr double fehlberg_b4( int l )
{
    switch ( l )
    {
    case 0: return 25.0 / 216.0;
    case 2: return 1408.0 / 2565.0;
    case 3: return 2197.0 / 4104.0;
    case 4: return -1.0 / 5.0;
    default: return 0.0;
    }
}

//! Weight of stage l in the 5th-order solution w.
KOKKOS_INLINE_FUNCTION constexpr double fehlberg_b5( int l )
{
    switch ( l )
    {
    case 0: return 16.0 / 135.0;
    case 2: return 6656.0 / 12825.0;
    case 3: return 28561.0 / 56430.0;
    case 4: return -9.0 / 50.0;
    case 5: return 2.0 / 55.0;
    default: return 0.0;
    }
}

//! b5 - b4 of stage l as exact fractions (the error vector w - u = dt sum_l e_l k_l), not the rounded
//! difference of the rounded weights.
KOKKOS_INLINE_FUNCTION constexpr double fehlberg_e( int l )
{
    switch ( l )
    {
    case 0: return 1.0 / 360.0;
    case 2: return -128.0 / 4275.0;
    case 3: return -2197.0 / 75240.0;
    case 4: return 1.0 / 50.0;
    case 5: return 2.0 / 55.0;
    default: return 0.0;
    }
}

} // namespace morula::ode::detail

#endif
