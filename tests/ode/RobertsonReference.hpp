/*!
  \file RobertsonReference.hpp
  \brief Reference values for Robertson's stiff chemical kinetics problem, with where each comes from,
         for the CVODE oracle's tests and for Morula's own ODE solver tests.

  The problem (H. H. Robertson, 1966), as mass action on species A, B, C:

      A     -> B          k1 = 0.04
      B + B -> C + B      k2 = 3e7     (net 2B -> C + B: B is consumed once, C produced once)
      B + C -> A + C      k3 = 1e4

      y1' = -0.04 y1 + 1e4 y2 y3
      y2' =  0.04 y1 - 1e4 y2 y3 - 3e7 y2^2
      y3' =  3e7 y2^2,                         y(0) = (1, 0, 0), y1 + y2 + y3 = 1 for all t.

  Three kinds of values, in decreasing authority:
    1. Published reference solutions (kTestSet*, kHairerWanner*, kSundials*): copied from the cited
       source, digit for digit.
    2. A decade table (kDecade*) computed by us, because no source we could find publishes
       high-accuracy values at the classic output times 0.4 * 10^k; how it was computed and what it was
       checked against is stated below. Use it at relative tolerances of 1e-8 or looser.
  Component order everywhere: { y1 (A), y2 (B), y3 (C) }.
*/
#ifndef MORULA_TESTS_ODE_ROBERTSONREFERENCE_HPP
#define MORULA_TESTS_ODE_ROBERTSONREFERENCE_HPP

namespace morula::test::robertson
{

constexpr double kRate1 = 0.04; // A -> B
constexpr double kRate2 = 3e7;  // B + B -> C + B
constexpr double kRate3 = 1e4;  // B + C -> A + C
constexpr double kInitial[3] = { 1.0, 0.0, 0.0 };

// --- 1a. Test Set for IVP Solvers (Bari), problem ROBER ----------------------------------------------
// F. Mazzia and C. Magherini, "Test Set for Initial Value Problem Solvers", release 2.4, February 2008,
// Department of Mathematics, University of Bari and INdAM; problem ROBER ("Problem ROBERTSON", ODE of
// dimension 3, integration interval [0, 1e11]), reference solution at the end point:
// https://archimede.uniba.it/~testset/problems/rober.php (formerly http://www.dm.uniba.it/~testset/).
// Quoted with the same 16 digits in several public code bases (e.g. the tests of the Julia package
// ODE.jl, citing the copy of the test set at http://www.unige.ch/~hairer/testset/testset.html).
constexpr double kTestSetTime = 1e11;
constexpr double kTestSetState[3] = { 0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050e+00 };

// --- 1b. Hairer & Wanner, value at t = 40 --------------------------------------------------------------
// E. Hairer and G. Wanner, "Solving Ordinary Differential Equations II: Stiff and Differential-Algebraic
// Problems", 2nd ed., Springer 1996, Robertson's problem, y(40), 10 significant digits. Caveat: we took
// these digits from several independent public code bases that cite the book (they agree digit for
// digit; one cites Sec. IV.1), not from the printed page, so section and table are unverified; they
// agree with the decade table below in all 10 digits.
constexpr double kHairerWannerTime = 40.0;
constexpr double kHairerWannerState[3] = { 0.7158270687, 9.185534764e-6, 0.2841637457 };

// --- 1c. SUNDIALS cvRoberts_dns example, t = 4e10 ------------------------------------------------------
// SUNDIALS (LLNL), examples/cvode/serial/cvRoberts_dns.c, function check_ans(): "reference solution
// computed using a relative tolerance of 1e-8 and absolute tolerance of 1e-14"
// (https://github.com/LLNL/sundials/blob/main/examples/cvode/serial/cvRoberts_dns.c). Because of that
// tolerance it is only good to about 1e-6 relative: it differs from the decade table by 8.5e-7 in y1
// and y2. Compare with it at 2e-6, not tighter.
constexpr double kSundialsTime = 4e10;
constexpr double kSundialsState[3] = { 5.2083495894337328e-08, 2.0833399429795671e-13, 9.9999994791629776e-01 };
constexpr double kSundialsAccuracy = 2e-6;

// --- 2. Decade table, t = 0.4 * 10^k, k = 0..11, and t = 1e11 -------------------------------------------
// Computed for Morula with SciPy 1.10.1 solve_ivp(method = "Radau", analytic Jacobian, rtol = 1e-13,
// atol = (1e-20, 1e-26, 1e-20)) in one integration from t = 0 through all output times (Debian
// python3-scipy). Checks of its accuracy:
//   - the same run with rtol = 1e-12 agrees to 4.6e-13 relative in every entry;
//   - at t = 1e11 it matches the Test Set value (1a) to 1e-12 relative in all three components;
//   - at t = 40 it matches Hairer & Wanner (1b) in all 10 published digits;
//   - at t = 4e10 it is 8.5e-7 from the SUNDIALS value (1c), within that value's own tolerance;
//   - at t = 0.4 ... 4e5 it agrees to 1e-10 or better with independent high-accuracy runs found in
//     public code (a Radau rtol = 1e-13 fixture, and MIPAV's Java port of CVODE run at rtol = 1e-12).
// SUNDIALS' printed cvRoberts_dns.out (rtol = 1e-4) and LSODE's demo are too coarse to serve here
// (4 digits; their late-time values are off by up to 30%).
constexpr int kDecadeCount = 13;
constexpr double kDecadeTimes[kDecadeCount] = { 0.4, 4.0, 40.0, 4e2, 4e3, 4e4, 4e5, 4e6, 4e7, 4e8, 4e9, 4e10, 1e11 };
constexpr double kDecadeStates[kDecadeCount][3] = {
    { 9.8517211386098902e-01, 3.3863953789748981e-05, 1.4794022185220572e-02 },
    { 9.0551867858425394e-01, 2.2404756875601968e-05, 9.4458916658870934e-02 },
    { 7.1582706871940582e-01, 9.1855347645578033e-06, 2.8416374574583025e-01 },
    { 4.5051866847110605e-01, 3.2229014416746483e-06, 5.4947810862745416e-01 },
    { 1.8320225777671187e-01, 8.9423712527760546e-07, 8.1679684798616337e-01 },
    { 3.8983377085483072e-02, 1.6217683159096875e-07, 9.6101646073768765e-01 },
    { 4.9382745209799774e-03, 1.9849940879544345e-08, 9.9506170562908258e-01 },
    { 5.1680960149264456e-04, 2.0682944912252741e-09, 9.9948318833021499e-01 },
    { 5.2030718441213756e-05, 2.0813357318928601e-10, 9.9994796907342709e-01 },
    { 5.2077021035730456e-06, 2.0830915594153044e-11, 9.9999479227707022e-01 },
    { 5.2082766114345141e-07, 2.0833117166039953e-12, 9.9999947917025922e-01 },
    { 5.2083451767986753e-08, 2.0833381779252558e-13, 9.9999994791634372e-01 },
    { 2.0833401496990488e-08, 8.3333607703257693e-14, 9.9999997916651895e-01 },
};

} // namespace morula::test::robertson

#endif
