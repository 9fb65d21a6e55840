// Roofline figures of one timed kernel (issue #8): the bytes it must move and the floating-point
// operations it must do, both counted analytically from the algorithm, with the measured time give its
// arithmetic intensity, achieved GB/s and GFLOP/s. The fraction of the applicable roof needs the
// machine's measured roofs, so the suite runner (benchmarks/roofline/run_suite.py) adds it from the
// roofline probe of the same run.
//
// Counting rules (docs/roofline.md, with every kernel's count):
// - bytes: compulsory memory traffic of one run of the kernel. Every array element the algorithm has to
//   read counts once, every element it writes once (a read-modify-write twice). Data re-read from cache
//   (a neighbour's position seen by 27 cells) counts once: the count is what a perfect cache would move.
//   Scratch that stays in registers, shared memory or a few kilobytes of cache is not counted.
// - flops: floating-point additions, subtractions, multiplications, divisions and square roots count 1
//   each, a fused multiply-add 2 (Nsight Compute's convention for FFMA/DFMA), transcendental functions
//   (exp, pow, log) 1 each; comparisons, min/max and integer arithmetic are not counted. Counts that
//   depend on the data (neighbour pairs, reactions fired) are taken from the run itself.
#ifndef MORULA_BENCHMARKS_ROOFLINE_HPP
#define MORULA_BENCHMARKS_ROOFLINE_HPP

#include "BenchmarkUtils.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace morula::bench
{

//! Analytic work of one kernel run, with a one-line reason for the count.
struct WorkCount
{
    double bytes = 0;
    double flops = 0;
    //! "float", "double", or "none" for kernels without floating-point work (sorting, scans, copies).
    std::string precision = "none";
    std::string basis;
};

template <class Scalar>
constexpr const char* precision_name()
{
    return sizeof( Scalar ) == 4 ? "float" : "double";
}

/*!
  The record every benchmark appends to its result file's "kernels" array:
  family (grid, mechanics, sem, ode, lattice, angio), kernel name, the counts, the time statistics,
  arithmetic intensity (flop/byte), GB/s and GFLOP/s at the median time, and the problem parameters.
*/
inline nlohmann::json kernel_record( const std::string& family, const std::string& kernel,
                                     const WorkCount& work, const Stats& time,
                                     nlohmann::json parameters = nlohmann::json::object() )
{
    if ( !( work.bytes > 0 ) )
        throw std::logic_error( "kernel_record(" + family + "/" + kernel + "): bytes must be > 0" );
    if ( work.flops < 0 )
        throw std::logic_error( "kernel_record(" + family + "/" + kernel + "): negative flops" );
    if ( work.flops > 0 && work.precision == "none" )
        throw std::logic_error( "kernel_record(" + family + "/" + kernel +
                                "): floating-point work needs a precision" );
    const double t = time.median();
    return { { "family", family },
             { "kernel", kernel },
             { "precision", work.precision },
             { "bytes", work.bytes },
             { "flops", work.flops },
             { "count_basis", work.basis },
             { "time", time.to_json() },
             { "arithmetic_intensity", work.flops / work.bytes },
             { "gbytes_per_s", work.bytes / t / 1e9 },
             { "gflops_per_s", work.flops / t / 1e9 },
             { "parameters", std::move( parameters ) } };
}

} // namespace morula::bench

#endif
