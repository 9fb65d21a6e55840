/*!
  \file Output.hpp
  \brief How angio_benchmark reports: result rows (printed and in the JSON file) and roofline records.
*/
#ifndef MORULA_BENCHMARKS_ANGIO_OUTPUT_HPP
#define MORULA_BENCHMARKS_ANGIO_OUTPUT_HPP

#include "Common.hpp"

#include <common/BenchmarkUtils.hpp>
#include <common/Roofline.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

namespace angio_bench
{

using morula::bench::WorkCount;

//! One result row: what was timed, where, and its statistics.
inline nlohmann::json record( const char* which, const char* precision, int cells, int tubes,
                              const std::string& phase, const Stats& t )
{
    nlohmann::json r = t.to_json();
    r["case"] = which;
    r["precision"] = precision;
    r["cells"] = cells;
    r["tubes"] = tubes;
    r["phase"] = phase;
    return r;
}

//! The header of the printed rows.
inline void print_header()
{
    std::printf( "%-9s %-6s %8s %6s  %-26s %12s %12s %12s  %s\n", "case", "prec", "cells", "tubes", "phase",
                 "median ms", "min ms", "max ms", "notes" );
}

//! One printed row: the phase's median, min and max in ms and notes.
inline void print_row( const char* which, const char* precision, int cells, int tubes, const std::string& phase,
                       const Stats& t, const std::string& notes = "" )
{
    std::printf( "%-9s %-6s %8d %6d  %-26s %12.4f %12.4f %12.4f  %s\n", which, precision, cells, tubes,
                 phase.c_str(), 1e3 * t.median(), 1e3 * t.min(), 1e3 * t.max(), notes.c_str() );
    std::fflush( stdout );
}

//! printf into a std::string (notes of a row).
inline std::string format( const char* fmt, double a, double b = 0, double c = 0 )
{
    char buf[256];
    std::snprintf( buf, sizeof buf, fmt, a, b, c );
    return buf;
}

//! Appends one roofline record and prints its figures.
inline void add_kernel( nlohmann::json& kernels, const std::string& name, const WorkCount& w, const Stats& t,
                        const nlohmann::json& parameters )
{
    kernels.push_back( morula::bench::kernel_record( "angio", name, w, t, parameters ) );
    const auto& r = kernels.back();
    std::printf( "    roofline %-26s %10.4f ms  %9.3e B  %9.3e flop  AI %6.3f  %8.2f GB/s  %8.2f GFLOP/s\n",
                 name.c_str(), 1e3 * t.median(), w.bytes, w.flops, r["arithmetic_intensity"].get<double>(),
                 r["gbytes_per_s"].get<double>(), r["gflops_per_s"].get<double>() );
    std::fflush( stdout );
}

} // namespace angio_bench

#endif
