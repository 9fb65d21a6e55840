/*!
  \file SolverOptions.hpp
  \brief What the ODE integrators are asked to do (method, tolerances, BDF settings, stiffness switching,
         linear solver, execution mode) and what they report back per system.
*/
#ifndef MORULA_ODE_SOLVEROPTIONS_HPP
#define MORULA_ODE_SOLVEROPTIONS_HPP

#include <morula/core/Error.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace morula::ode
{

enum class Method
{
    /*!
      RKF45 while not stiff, a stiff method while stiff, with switching back (LASSIE's scheme). The stiff
      method is SolverOptions::stiff_method; by default the measured rule of automatic_stiff_method():
      Rodas5P in the register-resident batched kernel for small mass-action networks, BDF otherwise.
    */
    automatic,
    rkf45,     //!< RKF45 only (fails with status step_too_small where the problem is stiff)
    bdf,       //!< BDF only
    /*!
      Rosenbrock methods (one Jacobian and one LU of W = I/(h gamma) - J per step, no Newton iteration),
      for batches of small mass-action networks (up to 8 species and 16 reactions) in the batched mode:
      one thread per system with its state and matrices in registers (detail/RosenbrockBatch.hpp).
      Rodas5P (Steinebach 2023): order 5, 8 stages, the most accurate per step at tight tolerances.
    */
    rodas5p,
    rodas4,      //!< Rodas4 (Hairer & Wanner): order 4, 6 stages
    rosenbrock23 //!< Rosenbrock23 (Shampine & Reichelt's ode23s): order 2, 3 stages, for loose tolerances
};

//! True for the Rosenbrock methods (the register-resident batched kernel, or the general path).
inline bool is_rosenbrock( Method m ) { return m == Method::rodas5p || m == Method::rodas4 || m == Method::rosenbrock23; }

/*!
  The largest network the register-resident Rosenbrock kernels take (species, reactions). A 16-species
  kernel would not keep its W matrix (256 numbers) in registers, and its unrolled LU and stages multiply
  the compile time of every translation unit that solves; larger networks, other models and the
  fine-grained mode run the Rosenbrock methods on the general path (detail/RosenbrockGeneral.hpp).
*/
constexpr int rosenbrock_max_species = 8;
constexpr int rosenbrock_max_reactions = 16;

//! The arithmetic of a system's state and stages (time, step and error norm are double either way).
enum class Precision
{
    double_precision,
    single_precision //!< float state, rates and matrices: the Rosenbrock methods only
};

enum class ErrorNorm
{
    /*!
      The LASSIE rule: ER_j = |w_j - u_j| / dt must be <= eps_j for every species, the 4th-order u is
      kept, and the next step is dt min_j 0.84 (eps_j / ER_j)^(1/4). Absolute per unit time: eps_j is
      `absolute_tolerance`; relative_tolerance is not used by RKF45 in this mode.
    */
    paper,
    /*!
      The recommended default: err = RMS_j |w_j - u_j| / (atol_j + rtol max(|x_j|, |w_j|)) <= 1, the
      5th-order w is kept (local extrapolation) and the next step is dt 0.9 err^(-1/5) within [0.2, 5].
    */
    mixed
};

//! How BDF's Newton systems (I - c J) dy = b are solved.
enum class LinearSolver
{
    automatic,       //!< batched: dense pivoted LU; fine-grained: dense up to `dense_limit` species, BiCGStab above
    dense_lu,        //!< Morula's dense LU with partial pivoting (serial per thread or team-parallel)
    kokkos_batched,  //!< KokkosBatched LU + Trsv (no pivoting); needs Morula built with Kokkos Kernels
    sparse_iterative //!< CSR Jacobian, Jacobi-preconditioned BiCGStab (team mode only)
};

//! How systems map onto the execution space.
enum class ExecutionMode
{
    /*!
      One system per thread; every per-system array is interleaved (system index fastest) so neighbouring
      threads read neighbouring addresses. For many small systems (10^3-10^7 copies of a network).
    */
    batched,
    /*!
      One system per team: the team's threads work in parallel over species, reactions, Jacobian nonzeros
      and matrix rows, with team reductions for norms and step control replicated in every thread, so a
      whole integration is one kernel with no host round trip. For one large network (or a few).
    */
    fine_grained,
    /*!
      One system spread over the whole device, LASSIE's fine-grained scheme: each RKF45 stage is one kernel
      over all species, the error norm one reduction, and the step decided on the device, so runs of
      attempts go without the host (replayed as device graphs where there are any). When the system turns stiff it is handed over, from the current state, to the
      fine-grained (team) integrator in BDF, which may switch back to RKF45 within the team. For one large
      network (thousands of species) whose team would be limited by one multiprocessor.
    */
    device_wide
};

/*!
  Batched Rosenbrock methods: whether an attempt whose new state has a negative species is rejected (and
  the step halved), as CVODE's constraints option does for u_i >= 0. Mass-action concentrations stay
  nonnegative in the exact solution, and a step that leaves one negative can make the ODE's own solution
  blow up (Robertson with a small k3: from B < 0 the 3e7 B^2 term drives B to minus infinity; in single
  precision at rtol 1e-3 a few hundred of 8.4M such systems ended with step_too_small). `automatic`:
  enforced in single precision, not in double, where it is not needed and where it would change healthy
  runs' steps (B's round-off below zero with k3 near 0 at rtol 1e-6 / atol 1e-12: Rosenbrock23's
  rejections 18 -> 363 over the k3 sweep's first 1000 systems; docs/performance.md).
*/
enum class Nonnegativity
{
    automatic, //!< enforced in single precision, off in double
    enforced,
    off
};

/*!
  The batched mode's general path (networks beyond the register kernel, BDF, models other than mass
  action): where each system's vectors and matrices live while it integrates.
*/
enum class BatchedLayout
{
    //! on_chip on host backends, and on GPU backends for networks of 20 species up whose arrays fit a
    //! team's scratch memory; interleaved otherwise (automatic_batched_on_chip())
    automatic,
    //! one thread per system, its arrays in device memory interleaved by system (coalesced across a warp)
    interleaved,
    //! one team thread per system whose vector lanes share its loops (`batched_lanes`), its arrays in the
    //! team's scratch memory (shared memory on a GPU) for the whole run; on host backends one lane
    on_chip
};

/*!
  How the Rosenbrock methods (and Method::automatic's Rodas5P stretches) fill the samples that fall between
  two of their steps. RKF45 ends a step on every sample; BDF always fills them from its interpolating
  polynomial.
*/
enum class SampleOutput
{
    //! dense, except in the register kernel on a GPU in double precision with few samples
    //! (samples_by_dense_output())
    automatic,
    /*!
      Steps pass sample times; a sample inside a step is the method's continuous extension there, from the
      step's own stages (Rodas5P order 4, Rodas4 order 3, Rosenbrock23 order 2; Hairer & Wanner's RODAS and
      Shampine & Reichelt's ode23s interpolants), so sampling densely costs no steps. Only the last sample
      time (a system's end time) ends a step. Where nonnegativity is enforced an interpolated species is
      recorded as 0 where the interpolant undershoots 0 (within the tolerance; the steps' states passed the
      domain check), which only moves the sample closer to the exact, nonnegative solution.
    */
    dense,
    //! A step that would pass a sample ends on it: every sample is the method's own solution there (more
    //! steps when samples are dense: each one cuts a step short)
    step_to_sample
};

struct SolverOptions
{
    Method method = Method::automatic;
    ErrorNorm error_norm = ErrorNorm::mixed;
    std::vector<double> absolute_tolerance{ 1e-12 }; //!< one value for all species, or one per species
    double relative_tolerance = 1e-6;
    double initial_step = 1e-3;          //!< first RKF45 (or BDF) step
    double stiffness_threshold = 1e-6;   //!< eps_s: a rejected RKF45 step proposing dt < eps_s switches to BDF
    int stiffness_check_interval = 20;   //!< BDF steps between checks whether RKF45 would be stable again
    int bdf_max_order = 5;               //!< 1..5
    double bdf_fixed_step = 0.0;         //!< > 0: the paper's fixed-step BDF (order 1 forced, no error test)
    double newton_tolerance = 0.0;       //!< fixed-step mode: max |dy| to stop Newton (paper 1e-6); 0 = auto
    int max_newton_iterations = 4;       //!< adaptive mode: per attempt (then the step is retried)
    int fixed_step_max_newton_iterations = 10000; //!< fixed-step mode (the paper's max_it)
    long max_steps = 10000000;           //!< accepted + rejected steps per system before giving up
    LinearSolver linear_solver = LinearSolver::automatic;
    //! Automatic linear solver in the fine-grained mode: dense LU up to this many species; BiCGStab is
    //! faster above (docs/performance.md, "Newton linear solver crossover (fine-grained, BDF only)").
    int dense_limit = 16;
    ExecutionMode mode = ExecutionMode::batched;
    Precision precision = Precision::double_precision;
    Nonnegativity nonnegativity = Nonnegativity::automatic; //!< batched Rosenbrock methods only
    SampleOutput sample_output = SampleOutput::automatic; //!< Rosenbrock methods: samples inside steps or steps ending on them
    /*!
      What Method::automatic switches to while a system is stiff: `automatic` (the measured rule of
      automatic_stiff_method()), `bdf` (the general path, any network and mode: LASSIE's scheme), or
      `rodas5p` (the register-resident batched kernel where it can run, else the general path; refused
      where neither can).
    */
    Method stiff_method = Method::automatic;
    int team_size = 0;                   //!< fine-grained mode: threads per team (0: Kokkos chooses)
    BatchedLayout batched_layout = BatchedLayout::automatic;
    //! Batched mode on chip: vector lanes per system on a GPU, a power of two up to 32 (0: the species
    //! rounded up to a power of two, 4 to 32). Host backends run a system's loops in one thread.
    int batched_lanes = 0;
    //! Device-wide mode: RKF45 attempts launched between two reads of the device-side status by the host
    //! (the step is decided on the device); 0 picks 1 to 32 from the steps expected to be left. The
    //! results do not depend on it: attempts after the integration stopped return at once.
    int device_wide_attempts_per_sync = 0;
    //! Device-wide mode: replay each run of attempts as one captured device graph where the backend has
    //! them (core::StepGraph; CUDA with Kokkos >= 4.6.99), else launch every kernel. Same results.
    bool device_wide_graphs = true;
    //! Device-wide mode: threads (vector lanes) that share one species' right-hand side, each taking some
    //! of its reaction terms (a power of two up to 32; 0: 8 on GPUs, 1 on host backends). A species' terms
    //! are chains of dependent loads; spreading them over lanes shortens the longest chain, which bounds a
    //! stage kernel. On a GPU the terms' sum is then a tree over the lanes instead of left to right.
    int device_wide_lanes = 0;

    //! LASSIE's published settings (paper, Results): RKF eps = 1e-12, first-order BDF with step 0.1,
    //! Newton tolerance 1e-6 and at most 10^4 iterations, first RKF step 1e-3, eps_s = 1e-6.
    static SolverOptions paper()
    {
        SolverOptions o;
        o.error_norm = ErrorNorm::paper;
        o.absolute_tolerance = { 1e-12 };
        o.bdf_max_order = 1;
        o.bdf_fixed_step = 0.1;
        o.newton_tolerance = 1e-6;
        o.fixed_step_max_newton_iterations = 10000;
        o.initial_step = 1e-3;
        o.stiffness_threshold = 1e-6;
        return o;
    }

    //! \throws core::InputError naming the option and the value when out of range.
    void validate( int species ) const
    {
        using core::InputError;
        using core::detail::concat;
        auto positive = []( double v ) { return std::isfinite( v ) && v > 0.0; };
        if ( absolute_tolerance.size() != 1 && static_cast<int>( absolute_tolerance.size() ) != species )
            throw InputError( concat( "ODE solver: absolute_tolerance has ", absolute_tolerance.size(),
                                      " values; expected 1 or one per species (", species, ")" ) );
        for ( std::size_t i = 0; i < absolute_tolerance.size(); ++i )
            if ( !( std::isfinite( absolute_tolerance[i] ) && absolute_tolerance[i] >= 0.0 ) )
                throw InputError( concat( "ODE solver: absolute_tolerance[", i, "] = ", absolute_tolerance[i],
                                          "; expected a finite value >= 0" ) );
        if ( !( std::isfinite( relative_tolerance ) && relative_tolerance >= 0.0 && relative_tolerance < 1.0 ) )
            throw InputError( concat( "ODE solver: relative_tolerance = ", relative_tolerance,
                                      "; expected a value in [0, 1)" ) );
        if ( error_norm == ErrorNorm::mixed && relative_tolerance == 0.0 )
            for ( double a : absolute_tolerance )
                if ( a == 0.0 )
                    throw InputError( "ODE solver: absolute and relative tolerance are both 0; the mixed "
                                      "error norm needs atol > 0 or rtol > 0" );
        if ( error_norm == ErrorNorm::paper )
            for ( double a : absolute_tolerance )
                if ( a == 0.0 )
                    throw InputError( "ODE solver: the paper's error rule needs absolute_tolerance > 0 "
                                      "(eps_j in ER_j <= eps_j)" );
        if ( !positive( initial_step ) )
            throw InputError( concat( "ODE solver: initial_step = ", initial_step, "; expected > 0" ) );
        if ( !( std::isfinite( stiffness_threshold ) && stiffness_threshold >= 0.0 ) )
            throw InputError( concat( "ODE solver: stiffness_threshold = ", stiffness_threshold,
                                      "; expected a finite value >= 0" ) );
        if ( stiffness_check_interval < 1 )
            throw InputError( concat( "ODE solver: stiffness_check_interval = ", stiffness_check_interval,
                                      "; expected >= 1" ) );
        if ( bdf_max_order < 1 || bdf_max_order > 5 )
            throw InputError( concat( "ODE solver: bdf_max_order = ", bdf_max_order, "; expected 1 to 5" ) );
        if ( !( std::isfinite( bdf_fixed_step ) && bdf_fixed_step >= 0.0 ) )
            throw InputError( concat( "ODE solver: bdf_fixed_step = ", bdf_fixed_step,
                                      "; expected 0 (adaptive) or a positive step" ) );
        if ( bdf_fixed_step > 0.0 && !positive( newton_tolerance ) )
            throw InputError( concat( "ODE solver: newton_tolerance = ", newton_tolerance,
                                      "; the fixed-step BDF needs a positive Newton tolerance" ) );
        if ( max_newton_iterations < 1 || fixed_step_max_newton_iterations < 1 )
            throw InputError( "ODE solver: the Newton iteration limits must be >= 1" );
        if ( max_steps < 1 )
            throw InputError( concat( "ODE solver: max_steps = ", max_steps, "; expected >= 1" ) );
        if ( dense_limit < 1 )
            throw InputError( concat( "ODE solver: dense_limit = ", dense_limit, "; expected >= 1" ) );
        if ( device_wide_attempts_per_sync < 0 )
            throw InputError( concat( "ODE solver: device_wide_attempts_per_sync = ", device_wide_attempts_per_sync,
                                      "; expected >= 0 (0: chosen from the steps left)" ) );
        if ( device_wide_lanes < 0 || device_wide_lanes > 32 ||
             ( device_wide_lanes & ( device_wide_lanes - 1 ) ) != 0 )
            throw InputError( concat( "ODE solver: device_wide_lanes = ", device_wide_lanes,
                                      "; expected 0 (automatic) or a power of two up to 32" ) );
        if ( team_size < 0 )
            throw InputError( concat( "ODE solver: team_size = ", team_size, "; expected >= 0" ) );
        if ( batched_lanes < 0 || batched_lanes > 32 || ( batched_lanes & ( batched_lanes - 1 ) ) != 0 )
            throw InputError( concat( "ODE solver: batched_lanes = ", batched_lanes,
                                      "; expected 0 (automatic) or a power of two up to 32" ) );
        if ( batched_layout == BatchedLayout::on_chip && mode != ExecutionMode::batched )
            throw InputError( "ODE solver: batched_layout on_chip is a layout of the batched mode; the fine-grained and "
                              "device-wide modes keep a system's arrays in device memory" );
        if ( batched_layout == BatchedLayout::on_chip && linear_solver == LinearSolver::kokkos_batched )
            throw InputError( "ODE solver: batched_layout on_chip solves with Morula's dense LU (its lanes share the "
                              "rows); linear solver kokkos_batched runs in the interleaved layout" );
        if ( is_rosenbrock( method ) && mode == ExecutionMode::device_wide )
            throw InputError( "ODE solver: the Rosenbrock methods (rodas5p, rodas4, rosenbrock23) run in the batched "
                              "(one system per thread) and fine-grained (one system per team) modes; the device-wide "
                              "mode is RKF45's, with BDF for stiff stretches (use method automatic, or mode fine)" );
        if ( precision == Precision::single_precision && mode != ExecutionMode::batched )
            throw InputError( "ODE solver: single precision is the batched Rosenbrock kernel's (mode batched, networks "
                              "of up to 8 species and 16 reactions); the fine-grained mode runs in double" );
        if ( is_rosenbrock( method ) && error_norm != ErrorNorm::mixed )
            throw InputError( "ODE solver: the Rosenbrock methods use the mixed error norm; the paper norm is "
                              "RKF45's (method automatic or rkf45)" );
        if ( precision == Precision::single_precision && !is_rosenbrock( method ) )
            throw InputError( "ODE solver: single precision is implemented for the Rosenbrock methods (rodas5p, "
                              "rodas4, rosenbrock23); RKF45 and BDF run in double" );
        if ( stiff_method != Method::automatic && stiff_method != Method::bdf && stiff_method != Method::rodas5p )
            throw InputError( "ODE solver: stiff_method (what method automatic uses while stiff) must be automatic, bdf "
                              "or rodas5p" );
        if ( linear_solver == LinearSolver::sparse_iterative && mode == ExecutionMode::batched )
            throw InputError( "ODE solver: the sparse iterative linear solver needs the fine-grained or "
                              "device-wide mode" );
    }
};

//! Whether the Rosenbrock methods reject attempts that turn a species negative (SolverOptions::nonnegativity).
inline bool nonnegativity_enforced( const SolverOptions& o )
{
    return o.nonnegativity == Nonnegativity::enforced ||
           ( o.nonnegativity == Nonnegativity::automatic && o.precision == Precision::single_precision );
}

/*!
  SampleOutput::automatic in the register-resident kernel on a GPU with one method (not Method::automatic's
  switching kernel) in double precision: dense output from this many sample times (t = 0 included). The
  dense kernel holds its interpolant's vectors in registers (Rodas5P for 3 species in double: 148 instead of
  126, 13 warps per multiprocessor instead of 16), which pays once samples would cut steps short. Measured
  on an H200, 1M Robertson systems, rtol 1e-6 (docs/performance.md, "Dense output"): Rodas5P with 8 samples
  2.6% slower dense, with 16 4.8% faster, with 32 / 64 / 100 1.25x / 1.52x / 1.94x faster; the switching
  kernel was faster dense from 8 samples (5%, up to 1.25x at 100). In single precision dense output was
  faster at 8 samples already (float Rosenbrock23, 8.4M Robertson systems at rtol 1e-3: 14.1 against
  16.0 ms, 39.5 against 41.9 steps; Rodas5P 30.3 against 35.4 ms; docs/performance.md, "The float
  kernel"), so it is dense at every count.
*/
constexpr int automatic_register_dense_min_samples = 16;

/*!
  Whether the Rosenbrock methods fill samples inside their steps by dense output (SampleOutput) in a run
  with `samples` sample times, `register_kernel_on_gpu` when they run in the register-resident kernel on a
  GPU backend. `automatic`: not in the register kernel on a GPU with one Rosenbrock method in double
  precision and fewer than automatic_register_dense_min_samples samples; dense everywhere else.
*/
inline bool samples_by_dense_output( const SolverOptions& o, bool register_kernel_on_gpu = false, int samples = 0 )
{
    if ( o.sample_output != SampleOutput::automatic )
        return o.sample_output == SampleOutput::dense;
    return !register_kernel_on_gpu || o.method == Method::automatic || o.precision == Precision::single_precision ||
           samples >= automatic_register_dense_min_samples;
}

/*!
  BatchedLayout::automatic's rule, measured (docs/performance.md, "The batched mode on chip"):
  - host backends: on chip for every network. There a system's slice is contiguous in its thread's
    scratch memory and stays in the cache, where the interleaved layout puts each of its elements a whole
    batch apart; with one lane the arithmetic is the same in the same order (bit for bit). On one core
    (Serial): Robertson's BDF 3.0-3.2x faster, network10 10-11x, network30 20-24x.
  - GPU backends: on chip from 20 species up (H200: network20 1.14-1.16x faster than interleaved, network30
    1.3-2.0x, network40 3-7x), interleaved below (network10 1.2-2.9x slower on chip, Robertson's BDF
    2.75x: a small system's serial work runs on a few lanes of a warp instead of on one of 32 systems'
    threads, and scratch memory holds too few systems to hide latency).
  Where a system's arrays do not fit a GPU team's scratch memory (about 44 species) the solver keeps the
  interleaved layout.
*/
constexpr int automatic_on_chip_min_species = 20;
inline bool automatic_batched_on_chip( bool device_backend, int species, int /*reactions*/ )
{
    return !device_backend || species >= automatic_on_chip_min_species;
}

/*!
  Why the register-resident kernel cannot take Method::automatic's stiff stretches for this run, in words,
  or an empty string when it can: a batched mass-action run in double precision with the mixed error norm
  and adaptive steps, on a network of at most rosenbrock_max_species species and rosenbrock_max_reactions
  reactions.
*/
inline std::string register_kernel_refusal( const SolverOptions& o, int species, int reactions, bool mass_action )
{
    using core::detail::concat;
    if ( !mass_action )
        return "a mass-action network (this model has other kinetic laws)";
    if ( o.mode != ExecutionMode::batched )
        return "the batched mode (one system per thread)";
    if ( o.precision != Precision::double_precision )
        return "double precision (RKF45 and BDF run in double)";
    if ( o.error_norm != ErrorNorm::mixed )
        return "the mixed error norm";
    if ( o.bdf_fixed_step > 0.0 )
        return "adaptive steps (not the fixed-step BDF)";
    if ( species > rosenbrock_max_species || reactions > rosenbrock_max_reactions )
        return concat( "a network of at most ", rosenbrock_max_species, " species and ", rosenbrock_max_reactions,
                       " reactions; this one has ", species, " and ", reactions );
    return {};
}

/*!
  Why the general path cannot take Method::automatic's stiff stretches in Rodas5P, in words, or an empty
  string when it can: a mass-action network in double precision, the mixed error norm, adaptive steps, and
  the batched or fine-grained mode (the device-wide mode hands stiff stretches to a team in BDF).
*/
inline std::string general_rosenbrock_refusal( const SolverOptions& o, bool mass_action )
{
    if ( !mass_action )
        return "a mass-action network (this model has other kinetic laws)";
    if ( o.mode == ExecutionMode::device_wide )
        return "the batched or fine-grained mode (the device-wide mode's stiff stretches run in BDF)";
    if ( o.precision != Precision::double_precision )
        return "double precision";
    if ( o.error_norm != ErrorNorm::mixed )
        return "the mixed error norm";
    if ( o.bdf_fixed_step > 0.0 )
        return "adaptive steps (not the fixed-step BDF)";
    return {};
}

//! The largest network whose stiff stretches Method::automatic gives to Rodas5P on the general path (the
//! largest measured: docs/performance.md, "Per-system end times and the Rosenbrock methods on the general
//! path"); larger ones keep BDF until measured.
constexpr int automatic_general_rodas5p_max_species = 30;

/*!
  The stiff method Method::automatic hands a stiff stretch to: Method::rodas5p (RKF45 <-> Rodas5P: in the
  register-resident batched kernel, detail/RosenbrockBatch.hpp, where it can run, else on the general path,
  Integrator.hpp) or Method::bdf (the general path's BDF). With stiff_method = automatic the rule is the one
  measured (docs/performance.md, "Work-precision study", "Method automatic in the register kernel" and
  "Per-system end times and the Rosenbrock methods on the general path"; one CPU core, time per system at
  equal error against SciPy Radau):
  - at most 4 species and 8 reactions (the 3 x 8 and 4 x 8 kernels): Rodas5P at every tolerance (Robertson:
    as fast as Rodas5P alone and 4.1-5.4x faster than RKF45 <-> BDF from error 1e-4 to 1e-6, which reaches
    nothing tighter within rtol 1e-8; the Brusselator, never stiff: 1.3-1.6x faster than RKF45 <-> BDF, the
    register RKF45 being cheaper than the general one; on an H200 8.4M Robertson systems 37x faster);
  - 5-8 species or 9-16 reactions (the 8 x 16 kernel): Rodas5P at rtol <= 1e-6, BDF above. At errors
    1e-3 .. 1e-5 the two were within 1.8x either way (the 8-species network 1.3x for Rodas5P, the
    Oregonator 1.5-1.8x for BDF); at rtol 1e-6 RKF45 <-> BDF delivers 1.7e-5 and 6.8e-5 where the register
    kernel delivers 1.9e-7 and 1.6e-6, and below 2e-6 on the Oregonator only the Rosenbrock paths got there;
  - beyond the register kernel, in the batched mode, up to automatic_general_rodas5p_max_species species:
    Rodas5P on the general path at rtol <= 1e-6, BDF above (the 10- and 30-species networks: the same picture
    as the 8 x 16 kernel's);
  - larger networks, the fine-grained and device-wide modes, other models, the paper's error norm or
    fixed-step BDF, single precision: BDF.
  A non-stiff system never leaves RKF45 in either; detection costs one extra right-hand side every 5
  RKF45 steps, as with BDF. stiff_method = rodas5p asks for Rodas5P wherever the register kernel or the
  general path can run it.
  \throws core::InputError when stiff_method is rodas5p and neither can run this case.
*/
inline Method automatic_stiff_method( const SolverOptions& o, int species, int reactions, bool mass_action )
{
    if ( o.method != Method::automatic || o.stiff_method == Method::bdf )
        return Method::bdf;
    const std::string refusal = register_kernel_refusal( o, species, reactions, mass_action );
    const std::string general = general_rosenbrock_refusal( o, mass_action );
    if ( o.stiff_method == Method::rodas5p )
    {
        if ( !refusal.empty() && !general.empty() )
            throw core::InputError( "ODE solver: stiff_method rodas5p (method automatic, Rodas5P while stiff) needs " + general );
        return Method::rodas5p;
    }
    if ( refusal.empty() )
    {
        if ( species <= 4 && reactions <= 8 )
            return Method::rodas5p;
        return o.relative_tolerance <= 1e-6 ? Method::rodas5p : Method::bdf;
    }
    if ( general.empty() && o.mode == ExecutionMode::batched && species <= automatic_general_rodas5p_max_species &&
         o.relative_tolerance <= 1e-6 )
        return Method::rodas5p;
    return Method::bdf;
}

/*!
  The execution mode a run takes when none is asked for: a batch maps one copy to one thread; one system
  gets a team up to 2048 species and the whole device (one kernel per stage) from 4096 up, the crossover
  measured on the H100 (docs/performance.md); the Rosenbrock methods, and Method::automatic where its
  stiff method in the batched mode would be Rodas5P, run one system per thread, one system too (a small
  network's solve is serial arithmetic in registers; a team would idle). `morula ode run` and the Python
  module both resolve it here, from options whose tolerances are already set.
*/
inline ExecutionMode default_execution_mode( long systems, int species, int reactions, const SolverOptions& options )
{
    constexpr int device_wide_species = 4096;
    if ( systems > 1 )
        return ExecutionMode::batched;
    if ( is_rosenbrock( options.method ) )
    {
        // A network the register kernel holds, or single precision (the register kernel's only: a network
        // too large for it is then refused with that reason), runs batched; a larger one gets a team.
        const bool fits = species <= rosenbrock_max_species && reactions <= rosenbrock_max_reactions;
        return fits || options.precision == Precision::single_precision ? ExecutionMode::batched
                                                                        : ExecutionMode::fine_grained;
    }
    if ( options.method == Method::automatic )
    {
        SolverOptions batched = options;
        batched.mode = ExecutionMode::batched;
        if ( automatic_stiff_method( batched, species, reactions, true ) == Method::rodas5p &&
             register_kernel_refusal( batched, species, reactions, true ).empty() )
            return ExecutionMode::batched;
    }
    return species >= device_wide_species ? ExecutionMode::device_wide : ExecutionMode::fine_grained;
}

//! The outcome of one system's integration.
enum class SolverStatus : int
{
    success = 0,
    max_steps = 1,        //!< max_steps reached before t_end
    step_too_small = 2,   //!< the step fell below 1e-14 (t + dt == t) or RKF45-only met stiffness
    newton_failure = 3,   //!< fixed-step BDF: Newton did not converge within the iteration limit
    singular_matrix = 4,  //!< a zero pivot in I - cJ
    not_finite = 5        //!< a NaN or infinity appeared in the state
};

inline const char* to_string( SolverStatus s )
{
    switch ( s )
    {
    case SolverStatus::success: return "success";
    case SolverStatus::max_steps: return "max_steps";
    case SolverStatus::step_too_small: return "step_too_small";
    case SolverStatus::newton_failure: return "newton_failure";
    case SolverStatus::singular_matrix: return "singular_matrix";
    case SolverStatus::not_finite: return "not_finite";
    }
    return "unknown";
}

//! Counters reported per system (index into SolverStatistics' columns).
enum StatisticsColumn : int
{
    stat_status = 0,
    stat_steps,            //!< accepted steps (RKF45 + BDF)
    stat_rejected,         //!< rejected attempts (error test or Newton failure)
    stat_rkf_steps,        //!< accepted RKF45 steps
    //! accepted steps of the stiff method: BDF, or Rodas5P where Method::automatic runs the register
    //! kernel (automatic_stiff_method()); the pure Rosenbrock methods leave it 0
    stat_bdf_steps,
    stat_switches_to_bdf, //!< switches from RKF45 to the stiff method (BDF or Rodas5P)
    stat_switches_to_rkf,
    stat_newton_iterations,
    stat_jacobians,
    stat_factorizations,
    stat_rhs_evaluations,
    stat_linear_iterations, //!< BiCGStab iterations (sparse solver)
    stat_count
};

} // namespace morula::ode

#endif
