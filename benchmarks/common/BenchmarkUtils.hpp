// Shared by Morula's benchmark programs: repeated timing with warm-up, statistics, and a description of
// the machine, backend and compiler for the JSON result files (benchmarks/results/*.json).
#ifndef MORULA_BENCHMARKS_BENCHMARKUTILS_HPP
#define MORULA_BENCHMARKS_BENCHMARKUTILS_HPP

#include <morula/core/BuildInfo.hpp>

#include <Kokkos_Core.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#if defined( KOKKOS_ENABLE_CUDA )
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#endif
#if defined( KOKKOS_ENABLE_HIP )
#include <hip/hip_runtime.h>
#endif

namespace morula::bench
{

//! Times of repeated runs of one phase, in seconds.
struct Stats
{
    std::vector<double> samples;

    double min() const { return *std::min_element( samples.begin(), samples.end() ); }
    double max() const { return *std::max_element( samples.begin(), samples.end() ); }
    double median() const
    {
        std::vector<double> s = samples;
        std::sort( s.begin(), s.end() );
        const std::size_t n = s.size();
        return n % 2 ? s[n / 2] : 0.5 * ( s[n / 2 - 1] + s[n / 2] );
    }
    nlohmann::json to_json() const
    {
        return { { "runs", samples.size() },
                 { "min_s", min() },
                 { "median_s", median() },
                 { "max_s", max() } };
    }
};

/*!
  Runs `setup` then `body` warmup + runs times; only `body` is timed, between two fences of `exec`.
  `setup` restores whatever the body changes, so that every timed run does the same work.
*/
template <class ExecutionSpace, class Setup, class Body>
Stats time_phase( const ExecutionSpace& exec, int warmup, int runs, Setup&& setup, Body&& body )
{
    Stats stats;
    for ( int r = 0; r < warmup + runs; ++r )
    {
        setup();
        exec.fence();
        const auto t0 = std::chrono::steady_clock::now();
        body();
        exec.fence();
        const auto t1 = std::chrono::steady_clock::now();
        if ( r >= warmup )
            stats.samples.push_back( std::chrono::duration<double>( t1 - t0 ).count() );
    }
    return stats;
}

template <class ExecutionSpace, class Body>
Stats time_phase( const ExecutionSpace& exec, int warmup, int runs, Body&& body )
{
    return time_phase( exec, warmup, runs, [] {}, body );
}

/*!
  For the hardware-counter cross-check (benchmarks/roofline/ncu_crosscheck.py): when the environment
  variable MORULA_PROFILE_KERNEL names `kernel`, runs `setup` and then `body` once more between
  cudaProfilerStart and cudaProfilerStop, so that `ncu --profile-from-start off` measures exactly the
  kernels of that one run. Does nothing otherwise, and on backends without a profiler API.
*/
template <class ExecutionSpace, class Setup, class Body>
void profile_once( const ExecutionSpace& exec, const char* kernel, Setup&& setup, Body&& body )
{
    const char* wanted = std::getenv( "MORULA_PROFILE_KERNEL" );
    if ( wanted == nullptr || std::string( wanted ) != kernel )
        return;
    setup();
    exec.fence();
#if defined( KOKKOS_ENABLE_CUDA )
    cudaProfilerStart();
#endif
    body();
    exec.fence();
#if defined( KOKKOS_ENABLE_CUDA )
    cudaProfilerStop();
#endif
    std::printf( "profiled one run of %s\n", kernel );
}

template <class ExecutionSpace, class Body>
void profile_once( const ExecutionSpace& exec, const char* kernel, Body&& body )
{
    profile_once( exec, kernel, [] {}, body );
}

// Copy bandwidth (read + write bytes per second) of a plain parallel copy of 2 x 1 GiB.
template <class ExecutionSpace>
double copy_bandwidth( const ExecutionSpace& exec, int runs )
{
    using mem = typename ExecutionSpace::memory_space;
    const int n = 1 << 27;
    Kokkos::View<double*, mem> a( "copy_a", n ), b( "copy_b", n );
    Kokkos::deep_copy( exec, a, 1.0 );
    const Stats s = time_phase( exec, 2, runs, [&] {
        Kokkos::parallel_for(
            "copy", Kokkos::RangePolicy<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const int i ) { b( i ) = a( i ); } );
    } );
    return 2.0 * 8.0 * n / s.median();
}

inline std::string cpu_model()
{
    std::ifstream in( "/proc/cpuinfo" );
    std::string line;
    while ( std::getline( in, line ) )
        if ( line.rfind( "model name", 0 ) == 0 )
        {
            const auto p = line.find( ':' );
            return p == std::string::npos ? line : line.substr( p + 2 );
        }
    return "unknown CPU";
}

//! Name of the device the default execution space runs on (the CPU model for host backends).
inline std::string device_name()
{
#if defined( KOKKOS_ENABLE_CUDA )
    if ( std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>::value )
    {
        int dev = 0;
        cudaGetDevice( &dev );
        cudaDeviceProp prop;
        cudaGetDeviceProperties( &prop, dev );
        return prop.name;
    }
#endif
#if defined( KOKKOS_ENABLE_HIP )
    if ( std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::HIP>::value )
    {
        int dev = 0;
        (void)hipGetDevice( &dev );
        hipDeviceProp_t prop;
        (void)hipGetDeviceProperties( &prop, dev );
        return prop.name;
    }
#endif
    return cpu_model();
}

inline std::string compiler()
{
    std::string c;
#if defined( __NVCC__ )
    c = "nvcc " + std::to_string( __CUDACC_VER_MAJOR__ ) + "." +
        std::to_string( __CUDACC_VER_MINOR__ ) + " + ";
#endif
#if defined( __clang__ )
    c += "clang " __clang_version__;
#elif defined( __GNUC__ )
    c += "gcc " __VERSION__;
#endif
    return c;
}

inline std::string utc_now()
{
    const std::time_t t = std::time( nullptr );
    char buf[32];
    std::strftime( buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime( &t ) );
    return buf;
}

//! The host instruction-set extensions this translation unit was compiled for: CPU roofs and kernels are
//! empirical, so they are those of this code generation (x86-64 baseline unless -march was given).
inline std::string host_isa()
{
    std::string isa;
#if defined( __x86_64__ )
    isa = "x86-64";
#elif defined( __aarch64__ )
    isa = "aarch64";
#endif
#if defined( __SSE2__ )
    isa += " sse2";
#endif
#if defined( __AVX__ )
    isa += " avx";
#endif
#if defined( __AVX2__ )
    isa += " avx2";
#endif
#if defined( __FMA__ )
    isa += " fma";
#endif
#if defined( __AVX512F__ )
    isa += " avx512f";
#endif
#if defined( __ARM_FEATURE_SVE )
    isa += " sve";
#endif
    return isa;
}

//! Where and with what a benchmark ran, for the header of every result file.
template <class ExecutionSpace>
nlohmann::json machine_info( const ExecutionSpace& exec )
{
    char host[256] = "unknown";
    gethostname( host, sizeof host );
    return { { "hostname", host },
             { "cpu", cpu_model() },
             { "hardware_threads", std::thread::hardware_concurrency() },
             { "backend", ExecutionSpace::name() },
             { "concurrency", exec.concurrency() },
             { "device", device_name() },
             { "kokkos_version", morula::core::kokkos_version() },
             { "morula", morula::core::build_summary() },
             { "compiler", compiler() },
             { "host_isa", host_isa() },
             { "date", utc_now() } };
}

inline void write_json( const std::string& path, const nlohmann::json& j )
{
    std::ofstream out( path );
    if ( !out )
        throw std::runtime_error( "cannot write benchmark results to '" + path + "'" );
    out << j.dump( 2 ) << "\n";
}

} // namespace morula::bench

#endif
