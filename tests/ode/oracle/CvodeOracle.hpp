/*!
  \file CvodeOracle.hpp
  \brief An independent reference integrator for mass-action networks, built on SUNDIALS CVODE (BDF,
         Newton, direct linear algebra, analytic Jacobian). The ODE tests use it as an oracle for
         Morula's own integrators, and benchmarks/ode/cvode_benchmark uses it as the CVODE baseline.

  Nothing here shares code with lib/morula/ode beyond the ReactionNetwork type: the right-hand side,
  the Jacobian and the folder reader are written again from the definitions, so that a mistake in the
  library cannot hide behind the same mistake in its oracle.
*/
#ifndef MORULA_TESTS_ODE_ORACLE_CVODEORACLE_HPP
#define MORULA_TESTS_ODE_ORACLE_CVODEORACLE_HPP

#include <morula/ode/ReactionNetwork.hpp>

#include <string>
#include <vector>

namespace morula::test
{

//! Tight defaults: the oracle should be far more accurate than the solvers it checks.
struct OracleOptions
{
    double relative_tolerance = 1e-10;
    double absolute_tolerance = 1e-14;
    long max_steps = 1000000; // per output interval (CVodeSetMaxNumSteps)
};

//! Integrates `network` from t0 = 0 with CVODE BDF, a dense direct linear solver and the analytic
//! Jacobian, and returns the full state at each of `sample_times` (non-decreasing, >= 0; a sample at
//! t == 0 is the initial state). Throws std::invalid_argument for a malformed network or sample times,
//! std::runtime_error naming CVODE's return flag when the integration fails.
std::vector<std::vector<double>> cvode_solve( const morula::ode::ReactionNetwork& network,
                                              const std::vector<double>& sample_times,
                                              const OracleOptions& options = {} );

// --- finer control, for the benchmark ----------------------------------------------------------------

enum class CvodeLinearSolver
{
    dense, // SUNDIALS dense LU with the analytic dense Jacobian
    klu,   // SuiteSparse KLU with the analytic Jacobian in CSC form (only if SUNDIALS has KLU)
    spgmr  // matrix-free GMRES, no preconditioner, analytic Jacobian-vector products
};

struct CvodeSettings
{
    double relative_tolerance = 1e-10;
    double absolute_tolerance = 1e-14;
    long max_steps = 1000000;
    CvodeLinearSolver linear_solver = CvodeLinearSolver::dense;
};

//! CVODE's own counters after a run (CVodeGet*), for reports and comparisons.
struct CvodeStatistics
{
    long steps = 0;
    long rhs_evaluations = 0;
    long jacobian_evaluations = 0; // dense/KLU: Jacobian builds; SPGMR: Jacobian-vector products
    long linear_setups = 0;
    long error_test_failures = 0;
    long nonlinear_iterations = 0;
    long nonlinear_convergence_failures = 0;
};

//! cvode_solve with a choice of linear solver; fills `statistics` when it is not null.
std::vector<std::vector<double>> cvode_integrate( const morula::ode::ReactionNetwork& network,
                                                  const std::vector<double>& sample_times,
                                                  const CvodeSettings& settings,
                                                  CvodeStatistics* statistics = nullptr );

//! True when the SUNDIALS the oracle was built against provides the KLU linear solver.
bool cvode_has_klu();

//! SUNDIALS_VERSION of the headers the oracle was built with, for benchmark reports.
std::string sundials_version();

// --- the model as the oracle sees it, exposed so that the tests can check it directly ------------

//! dX/dt = (B - A)^T [k o X^A] at state x (size N).
std::vector<double> mass_action_rhs( const morula::ode::ReactionNetwork& network, const std::vector<double>& x );

//! d(dX_i/dt)/dX_j at state x, row-major N x N, from the analytic derivative of each rate
//! k prod_l x_l^a_l (no division by x_j, so it is exact at zero concentrations too).
std::vector<double> mass_action_jacobian( const morula::ode::ReactionNetwork& network,
                                          const std::vector<double>& x );

// --- LASSIE / cupSODA model folders ------------------------------------------------------------------

struct LassieModel
{
    morula::ode::ReactionNetwork network; // settings.sample_times and saved_species filled too
    std::vector<double> sample_times;     // t_vector
};

//! Reads a LASSIE/cupSODA model folder: left_side and right_side (M rows of N non-negative integers),
//! c_vector (M rate constants), MX_0 (N initial values, on one line or several), t_vector (sampling
//! times), and the optional alphabet (N species names) and cs_vector (indices of saved species).
//! Other files of the format (M_feed, atol_vector, rtol, modelkind, ...) are ignored. Throws
//! std::runtime_error naming the file and line on missing files or malformed content.
LassieModel read_lassie_folder( const std::string& directory );

} // namespace morula::test

#endif
