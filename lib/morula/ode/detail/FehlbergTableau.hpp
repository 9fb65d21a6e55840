/*!
  \file FehlbergTableau.hpp
  \brief Fehlberg's 4(5) pair (Fehlberg 1969, NASA TR R-315, Table III): the one copy of its coefficients,
  read by the per-system RKF45 step, the device-wide kernels and the stiffness estimate.

  Functions with local constant arrays rather than static member arrays: a kernel may index them with a
  run-time stage number, which a static constexpr member cannot be in CUDA or HIP device code. Called
  with constant arguments they are constant expressions, so the named coefficients of the unrolled step
  are the same compile-time values as before (the same bits).
*/
#ifndef MORULA_ODE_DETAIL_FEHLBERGTABLEAU_HPP
#define MORULA_ODE_DETAIL_FEHLBERGTABLEAU_HPP

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

//! a_{i+1, l+1}: stage i's weight of stage l's slope (l < i; zero otherwise).
KOKKOS_INLINE_FUNCTION constexpr double fehlberg_a( int i, int l )
{
    constexpr double a[6][5] = { { 0, 0, 0, 0, 0 },
                                 { 1.0 / 4.0, 0, 0, 0, 0 },
                                 { 3.0 / 32.0, 9.0 / 32.0, 0, 0, 0 },
                                 { 1932.0 / 2197.0, -7200.0 / 2197.0, 7296.0 / 2197.0, 0, 0 },
                                 { 439.0 / 216.0, -8.0, 3680.0 / 513.0, -845.0 / 4104.0, 0 },
                                 { -8.0 / 27.0, 2.0, -3544.0 / 2565.0, 1859.0 / 4104.0, -11.0 / 40.0 } };
    return a[i][l];
}

//! Weight of stage l in the 4th-order solution u.
KOKKOS_INLINE_FUNCTION constexpr double fehlberg_b4( int l )
{
    constexpr double b[6] = { 25.0 / 216.0, 0, 1408.0 / 2565.0, 2197.0 / 4104.0, -1.0 / 5.0, 0 };
    return b[l];
}

//! Weight of stage l in the 5th-order solution w.
KOKKOS_INLINE_FUNCTION constexpr double fehlberg_b5( int l )
{
    constexpr double b[6] = { 16.0 / 135.0, 0, 6656.0 / 12825.0, 28561.0 / 56430.0, -9.0 / 50.0, 2.0 / 55.0 };
    return b[l];
}

//! b5 - b4 of stage l as exact fractions (the error vector w - u = dt sum_l e_l k_l), not the rounded
//! difference of the rounded weights.
KOKKOS_INLINE_FUNCTION constexpr double fehlberg_e( int l )
{
    constexpr double e[6] = { 1.0 / 360.0, 0, -128.0 / 4275.0, -2197.0 / 75240.0, 1.0 / 50.0, 2.0 / 55.0 };
    return e[l];
}

} // namespace morula::ode::detail

#endif
