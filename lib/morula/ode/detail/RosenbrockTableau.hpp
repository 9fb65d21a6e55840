/*!
  \file RosenbrockTableau.hpp
  \brief Coefficients of the Rosenbrock methods of the batched register-resident solver, in the
         transformed form of Hairer & Wanner's RODAS code.

  A step of an s-stage method with the transformed coefficients (autonomous system, W = I/(h gamma) - J):

      W K_i = f( x + sum_{j<i} a_ij K_j ) + sum_{j<i} (c_ij / h) K_j,      i = 1..s
      x_new = x + sum_{j<s} a_sj K_j + K_s,     error estimate K_s

  Rodas4 and Rodas5P are stiffly accurate: their last two (Rodas4) or three (Rodas5P) rows of a are the
  previous row plus one more unit coefficient, so x_new is the last stage's argument plus K_s, and the
  embedded solution is the argument of the last stage (error = K_s). Mass action's f has no explicit time
  dependence, so the d_i (time-derivative) coefficients are not needed.

  Dense output (SampleOutput::dense): inside an accepted step from x to x_new, at t + theta h,

      x(theta) = (1 - theta) x + theta (x_new + (1 - theta) (D_0 + theta (D_1 + theta D_2))),
      D_r = sum_i h_ri K_i,

  with two rows of h (D_2 = 0) for Rodas4 (an interpolant of order 3: RODAS's continuous output, whose
  d_ri are these h_ri with the opposite sign) and three for Rodas5P (order 4). The orders were checked by
  halving the step on a nonlinear problem against a DOP853 reference at 1e-13: the error at theta = 0.3,
  0.5, 0.7 fell 14x (Rodas4) and 30x (Rodas5P) per halving. Rosenbrock23's interpolant is ode23s's own,
  x + h (theta (1 - theta) k1 + theta (theta - 2d) k2) / (1 - 2d) (order 2).

  Sources (the numbers are the published ones):
  - Rodas4: E. Hairer and G. Wanner, Solving Ordinary Differential Equations II, 2nd ed., Springer 1996,
    Section VI.4 (Table 4.2 "RODAS"; the Fortran code RODAS, method choice 1), gamma = 0.25.
  - Rodas5P: G. Steinebach, "Construction of Rosenbrock-Wanner method Rodas5P and numerical benchmarks
    within the Julia Differential Equations package", BIT Numerical Mathematics 63, 27 (2023); the
    coefficients as distributed with OrdinaryDiffEq.jl (rosenbrock_tableaus.jl).
  - Rosenbrock23: L. F. Shampine and M. W. Reichelt, "The MATLAB ODE Suite", SIAM J. Sci. Comput. 18
    (1997) 1-22, Section 4 (the method of ode23s): d = 1/(2 + sqrt 2), e32 = 6 + sqrt 2; it is written
    out in RosenbrockBatch.hpp because its stages do not have the form above.
*/
#ifndef MORULA_ODE_DETAIL_ROSENBROCKTABLEAU_HPP
#define MORULA_ODE_DETAIL_ROSENBROCKTABLEAU_HPP

#include <Kokkos_Core.hpp>

namespace morula::ode::detail
{

/*!
  A dense-output sample as recorded: where nonnegativity is enforced (SolverOptions::nonnegativity) an
  interpolated value below 0 is recorded as 0. The steps' states passed the domain check, but an
  interpolant between two nonnegative states can undershoot 0 within the tolerance (float Rosenbrock23 on
  Robertson: B = -4.7e-8 with atol 1e-6). The exact solution is nonnegative, so max(0, v) is never farther
  from it than v: the sample only gets closer to the solution.
*/
template <class Real>
KOKKOS_INLINE_FUNCTION Real dense_sample_value( Real v, bool nonnegative )
{
    return nonnegative && v < Real( 0 ) ? Real( 0 ) : v;
}

//! Rodas4 (Hairer & Wanner): 6 stages, order 4, embedded order 3.
struct Rodas4Tableau
{
    static constexpr int stages = 6;
    static constexpr int order = 4;          // of x_new
    static constexpr int error_order = 3;    // of the embedded solution: the controller's exponent is 1/(3+1)
    static constexpr double gamma = 0.25;
    // a(i, j) and c(i, j) for j < i (row 0 is empty), as a switch over the nonzero entries: in unrolled
    // loops every index is a constant and the compiler folds the coefficient into the instruction (and
    // drops the zeros); where a loop is not unrolled (nvcc's host pass ignores the unroll pragma) the
    // switch is a jump, where a local constexpr array was rebuilt on the stack at every call (11x slower on
    // the host, measured); a static array member would need a device copy on GPU backends.
    KOKKOS_INLINE_FUNCTION static constexpr double a( int i, int j )
    {
        switch ( i * stages + j )
        {
        case 6: return 1.544;
        case 12: return 0.9466785280815826;
        case 13: return 0.2557011698983284;
        case 18: return 3.314825187068521;
        case 19: return 2.896124015972201;
        case 20: return 0.9986419139977817;
        case 24: return 1.221224509226641;
        case 25: return 6.019134481288629;
        case 26: return 12.53708332932087;
        case 27: return -0.6878860361058950;
        case 30: return 1.221224509226641;
        case 31: return 6.019134481288629;
        case 32: return 12.53708332932087;
        case 33: return -0.6878860361058950;
        case 34: return 1;
        default: return 0.0;
        }
    }
    static constexpr int dense_rows = 2;
    //! The dense output's h(r, i), r < dense_rows (OrdinaryDiffEq.jl's Rodas4 tableau; RODAS's d with sign flipped).
    KOKKOS_INLINE_FUNCTION static constexpr double h( int r, int i )
    {
        switch ( r * stages + i )
        {
        case 0: return 10.12623508344586;
        case 1: return -7.487995877610167;
        case 2: return -34.80091861555747;
        case 3: return -7.992771707568823;
        case 4: return 1.025137723295662;
        case 6: return -0.6762803392801253;
        case 7: return 6.087714651680015;
        case 8: return 16.43084320892478;
        case 9: return 24.76722511418386;
        case 10: return -6.594389125716872;
        default: return 0.0;
        }
    }
    KOKKOS_INLINE_FUNCTION static constexpr double c( int i, int j )
    {
        switch ( i * stages + j )
        {
        case 6: return -5.6688;
        case 12: return -2.430093356833875;
        case 13: return -0.2063599157091915;
        case 18: return -0.1073529058151375;
        case 19: return -9.594562251023355;
        case 20: return -20.47028614809616;
        case 24: return 7.496443313967647;
        case 25: return -10.24680431464352;
        case 26: return -33.99990352819905;
        case 27: return 11.70890893206160;
        case 30: return 8.083246795921522;
        case 31: return -7.981132988064893;
        case 32: return -31.52159432874371;
        case 33: return 16.31930543123136;
        case 34: return -6.058818238834054;
        default: return 0.0;
        }
    }
};

//! Rodas5P (Steinebach 2023): 8 stages, order 5, embedded order 4.
struct Rodas5PTableau
{
    static constexpr int stages = 8;
    static constexpr int order = 5;
    static constexpr int error_order = 4;
    static constexpr double gamma = 0.21193756319429014;
    KOKKOS_INLINE_FUNCTION static constexpr double a( int i, int j )
    {
        switch ( i * stages + j )
        {
        case 8: return 3.0;
        case 16: return 2.849394379747939;
        case 17: return 0.45842242204463923;
        case 24: return -6.954028509809101;
        case 25: return 2.489845061869568;
        case 26: return -10.358996098473584;
        case 32: return 2.8029986275628964;
        case 33: return 0.5072464736228206;
        case 34: return -0.3988312541770524;
        case 35: return -0.04721187230404641;
        case 40: return -7.502846399306121;
        case 41: return 2.561846144803919;
        case 42: return -11.627539656261098;
        case 43: return -0.18268767659942256;
        case 44: return 0.030198172008377946;
        case 48: return -7.502846399306121;
        case 49: return 2.561846144803919;
        case 50: return -11.627539656261098;
        case 51: return -0.18268767659942256;
        case 52: return 0.030198172008377946;
        case 53: return 1;
        case 56: return -7.502846399306121;
        case 57: return 2.561846144803919;
        case 58: return -11.627539656261098;
        case 59: return -0.18268767659942256;
        case 60: return 0.030198172008377946;
        case 61: return 1;
        case 62: return 1;
        default: return 0.0;
        }
    }
    static constexpr int dense_rows = 3;
    //! The dense output's h(r, i), r < dense_rows (as distributed with OrdinaryDiffEq.jl).
    KOKKOS_INLINE_FUNCTION static constexpr double h( int r, int i )
    {
        switch ( r * stages + i )
        {
        case 0: return 25.948786856663858;
        case 1: return -2.5579724845846235;
        case 2: return 10.433815404888879;
        case 3: return -2.3679251022685204;
        case 4: return 0.524948541321073;
        case 5: return 1.1241088310450404;
        case 6: return 0.4272876194431874;
        case 7: return -0.17202221070155493;
        case 8: return -9.91568850695171;
        case 9: return -0.9689944594115154;
        case 10: return 3.0438037242978453;
        case 11: return -24.495224566215796;
        case 12: return 20.176138334709044;
        case 13: return 15.98066361424651;
        case 14: return -6.789040303419874;
        case 15: return -6.710236069923372;
        case 16: return 11.419903575922262;
        case 17: return 2.8879645146136994;
        case 18: return 72.92137995996029;
        case 19: return 80.12511834622643;
        case 20: return -52.072871366152654;
        case 21: return -59.78993625266729;
        case 22: return -0.15582684282751913;
        case 23: return 4.883087185713722;
        default: return 0.0;
        }
    }
    KOKKOS_INLINE_FUNCTION static constexpr double c( int i, int j )
    {
        switch ( i * stages + j )
        {
        case 8: return -14.155112264123755;
        case 16: return -17.97296035885952;
        case 17: return -2.859693295451294;
        case 24: return 147.12150275711716;
        case 25: return -1.41221402718213;
        case 26: return 71.68940251302358;
        case 32: return 165.43517024871676;
        case 33: return -0.4592823456491126;
        case 34: return 42.90938336958603;
        case 35: return -5.961986721573306;
        case 40: return 24.854864614690072;
        case 41: return -3.0009227002832186;
        case 42: return 47.4931110020768;
        case 43: return 5.5814197821558125;
        case 44: return -0.6610691825249471;
        case 48: return 30.91273214028599;
        case 49: return -3.1208243349937974;
        case 50: return 77.79954646070892;
        case 51: return 34.28646028294783;
        case 52: return -19.097331116725623;
        case 53: return -28.087943162872662;
        case 56: return 37.80277123390563;
        case 57: return -3.2571969029072276;
        case 58: return 112.26918849496327;
        case 59: return 66.9347231244047;
        case 60: return -40.06618937091002;
        case 61: return -54.66780262877968;
        case 62: return -9.48861652309627;
        default: return 0.0;
        }
    }
};

//! Rosenbrock23 (Shampine & Reichelt's ode23s): order 2, error estimate of order 3, L-stable.
struct Rosenbrock23Constants
{
    static constexpr int order = 2;
    static constexpr int error_order = 2; // the controller's exponent is 1/3
    static constexpr double d = 0.29289321881345247559915563789515;  // 1 / (2 + sqrt 2)
    static constexpr double e32 = 7.4142135623730950488016887242097; // 6 + sqrt 2
};

} // namespace morula::ode::detail

#endif
