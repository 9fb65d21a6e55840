// Empirical roofline probe (issue #8), in the manner of the Empirical Roofline Tool (Yang et al. 2018) that
// Hesam et al. (2021) used, written in Kokkos so that it measures whichever backend Morula was built with:
//
// - memory: STREAM copy (b = a) and triad (a = b + s c) over arrays far larger than any cache, and a
//   sweep of working-set sizes with ERT's read-modify-write kernel (a = alpha a + ..., repeated over
//   the working set inside one kernel so that small sets are timed without launch overhead); the sweep's
//   plateau below the last-level cache (L2 on a GPU) is the cache roof;
// - arithmetic: independent chains of fused multiply-adds in registers, float and double, for a few
//   chain counts (instruction-level parallelism, SIMD width); the best is the peak.
//
// Every kernel's result is checked against its closed form, so a compiler that elided work would be
// caught rather than reported as a fast machine. Writes one JSON file with the roofs.
//
//   roofline_probe [--dram-mib 1024] [--runs 10] [--warmup 3] [--space device|host] [--quick] [--out F]
#include "../common/BenchmarkUtils.hpp"
#include "../common/Roofline.hpp"

#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h> // sysconf: cache sizes where sysfs has none

namespace roofline
{
using morula::bench::Stats;

struct Settings
{
    double dram_mib = 1024;   // per array
    double sweep_min_kib = 64;
    double sweep_max_mib = 1024;
    // Traffic of one timed sample of the sweep: enough that a kernel launch (a few microseconds on a
    // GPU) is under 1% of it; 0 picks 2 GiB on a GPU and 0.25 GiB on a CPU.
    double bytes_per_sample_gib = 0;
    int runs = 10;
    int warmup = 3;
    std::string space = "device";
    std::string out = "roofline_probe.json";
    bool quick = false;
};

template <class ExecutionSpace>
constexpr bool is_host_space()
{
    return Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;
}

void check( bool ok, const std::string& what )
{
    if ( !ok )
        throw std::runtime_error( "roofline_probe: result check failed: " + what +
                                  " (the compiler may have elided work; the figures would be wrong)" );
}

// ---------------------------------------------------------------------------------------------------
// STREAM copy and triad over device memory.
template <class ExecutionSpace>
nlohmann::json stream( const ExecutionSpace& exec, const Settings& set, double& copy_gbs, double& triad_gbs )
{
    using mem = typename ExecutionSpace::memory_space;
    const long n = static_cast<long>( set.dram_mib * 1024 * 1024 / sizeof( double ) );
    Kokkos::View<double*, mem> a( "probe_a", n ), b( "probe_b", n ), c( "probe_c", n );
    Kokkos::deep_copy( exec, a, 1.0 );
    Kokkos::deep_copy( exec, b, 2.0 );
    Kokkos::deep_copy( exec, c, 0.5 );
    using policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<long>>;

    const Stats copy = morula::bench::time_phase( exec, set.warmup, set.runs, [&] {
        Kokkos::parallel_for(
            "roofline::copy", policy( exec, 0, n ), KOKKOS_LAMBDA( const long i ) { b( i ) = a( i ); } );
    } );
    const double s = 0.25;
    // The triad writes a from b and c, which it never changes: every run does the same work.
    const Stats triad = morula::bench::time_phase( exec, set.warmup, set.runs, [&] {
        Kokkos::parallel_for(
            "roofline::triad", policy( exec, 0, n ),
            KOKKOS_LAMBDA( const long i ) { a( i ) = b( i ) + s * c( i ); } );
    } );
    double errors = 0;
    Kokkos::parallel_reduce(
        "roofline::check_triad", policy( exec, 0, n ),
        KOKKOS_LAMBDA( const long i, double& e ) { e += ( a( i ) != 1.0 + s * 0.5 ) + ( b( i ) != 1.0 ); },
        errors );
    check( errors == 0, "copy/triad values" );

    // STREAM's convention: copy moves 16 bytes per element, triad 24 (the write-allocate read of a
    // cache-based CPU is not counted, as in STREAM).
    copy_gbs = 16.0 * n / copy.median() / 1e9;
    triad_gbs = 24.0 * n / triad.median() / 1e9;
    nlohmann::json j = { { "array_bytes", 8.0 * n },
                         { "copy", copy.to_json() },
                         { "triad", triad.to_json() },
                         { "copy_gbytes_per_s", copy_gbs },
                         { "triad_gbytes_per_s", triad_gbs } };
    j["copy"]["bytes"] = 16.0 * n;
    j["triad"]["bytes"] = 24.0 * n;
    j["triad"]["flops"] = 2.0 * n;
    return j;
}

// ---------------------------------------------------------------------------------------------------
// ERT's read-modify-write kernel over a working set of n doubles, `trials` times inside one kernel.
// Work item w owns elements w, w + P, w + 2P, ... on a GPU (coalesced), or a contiguous chunk on a CPU
// (one cache-friendly stream per thread). The trial loop is outside the element loop, whose trip count
// is only known at run time, so the values cannot stay in registers between trials.
template <class ExecutionSpace>
struct ReadModifyWrite
{
    using mem = typename ExecutionSpace::memory_space;
    Kokkos::View<double*, mem> a;
    long n;
    long items;
    int trials;
    double alpha, beta, gamma;
    static constexpr bool contiguous_chunks = is_host_space<ExecutionSpace>();

    KOKKOS_INLINE_FUNCTION void operator()( const long w ) const
    {
        long begin, end, stride;
        if ( contiguous_chunks )
        {
            const long chunk = ( n + items - 1 ) / items;
            begin = w * chunk;
            end = begin + chunk < n ? begin + chunk : n;
            stride = 1;
        }
        else
        {
            begin = w;
            end = n;
            stride = items;
        }
        // a(k) also reads its successor's value from the previous trial: a dependence of distance
        // (+1 trial, -1 element) that makes interchanging the two loops illegal (GCC's -O3 interchanges
        // the plain a = alpha a + beta and then measures registers, not memory). With alpha = beta = 1/2
        // every element stays equal and gains exactly gamma per trial, which the check verifies.
        // The last element has no successor and reads itself; it is peeled off so that the element loop
        // has no branch and vectorises.
        if ( begin >= end )
            return;
        const long last = begin + ( end - 1 - begin ) / stride * stride;
        for ( int t = 0; t < trials; ++t )
        {
            for ( long k = begin; k < last; k += stride )
                a( k ) = alpha * a( k ) + beta * a( k + stride ) + gamma;
            a( last ) = alpha * a( last ) + beta * a( last ) + gamma;
        }
    }
};

template <class ExecutionSpace>
nlohmann::json bandwidth_sweep( const ExecutionSpace& exec, const Settings& set, double& cache_gbs,
                                double& cache_bytes, double& largest_gbs )
{
    using mem = typename ExecutionSpace::memory_space;
    const double alpha = 0.5, beta = 0.5, gamma = 1.0 / 1024; // exact in binary: a_t = 1 + t / 1024
    nlohmann::json points = nlohmann::json::array();
    cache_gbs = 0;
    cache_bytes = 0;
    largest_gbs = 0;
    // Work items: a few per hardware thread on a CPU; on a GPU enough to fill it, but at least 8
    // elements each so that the element loop is a loop.
    const long gpu_items = std::max( 1, exec.concurrency() ) * 2L;
    for ( double bytes = set.sweep_min_kib * 1024; bytes <= set.sweep_max_mib * 1024 * 1024 * 1.0001;
          bytes *= 2 )
    {
        const long n = static_cast<long>( bytes / 8 );
        const long items = is_host_space<ExecutionSpace>()
                               ? std::max( 1L, std::min<long>( n / 64, exec.concurrency() ) )
                               : std::max( 1L, std::min( gpu_items, n / 8 ) );
        const double sample_gib =
            set.bytes_per_sample_gib > 0 ? set.bytes_per_sample_gib : is_host_space<ExecutionSpace>() ? 0.25 : 2.0;
        const int trials =
            static_cast<int>( std::max( 1.0, std::ceil( sample_gib * 1073741824.0 / ( 16.0 * n ) ) ) );
        Kokkos::View<double*, mem> a( "probe_rmw", n );
        ReadModifyWrite<ExecutionSpace> f{ a, n, items, trials, alpha, beta, gamma };
        const Stats st = morula::bench::time_phase(
            exec, set.warmup, set.runs, [&] { Kokkos::deep_copy( exec, a, 1.0 ); },
            [&] {
                Kokkos::parallel_for( "roofline::rmw",
                                      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<long>>( exec, 0, items ),
                                      f );
            } );
        double err = 0;
        const double expect = 1.0 + trials * gamma;
        Kokkos::parallel_reduce(
            "roofline::check_rmw", Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<long>>( exec, 0, n ),
            KOKKOS_LAMBDA( const long i, double& e ) { e += a( i ) != expect; }, err );
        check( err == 0, "read-modify-write values at " + std::to_string( bytes ) + " bytes" );
        const double gbs = 16.0 * n * trials / st.median() / 1e9;
        points.push_back( { { "working_set_bytes", bytes },
                            { "work_items", items },
                            { "trials", trials },
                            { "time", st.to_json() },
                            { "gbytes_per_s", gbs },
                            { "gflops_per_s", 4.0 * n * trials / st.median() / 1e9 } } );
        std::printf( "  rmw %10.0f KiB: %9.1f GB/s (%d trials)\n", bytes / 1024, gbs, trials );
        std::fflush( stdout );
        largest_gbs = gbs;
    }
    return points;
}

// The cache roof: the best sweep point whose working set fits in the last-level cache (half of it, so
// that the set stays resident); the sweep is kept in the file for the whole curve.
double last_level_cache_bytes()
{
#if defined( KOKKOS_ENABLE_CUDA )
    if ( std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>::value )
    {
        int dev = 0;
        cudaGetDevice( &dev );
        cudaDeviceProp prop;
        cudaGetDeviceProperties( &prop, dev );
        return prop.l2CacheSize;
    }
#endif
#if defined( KOKKOS_ENABLE_HIP )
    if ( std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::HIP>::value )
    {
        int dev = 0;
        (void)hipGetDevice( &dev );
        hipDeviceProp_t prop;
        (void)hipGetDeviceProperties( &prop, dev );
        return prop.l2CacheSize;
    }
#endif
    // CPU: the largest cache index in sysfs (per socket or per core complex).
    double best = 0;
    for ( int index = 0; index < 8; ++index )
    {
        std::ifstream in( "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string( index ) + "/size" );
        std::string s;
        if ( !( in >> s ) )
            continue;
        double v = std::atof( s.c_str() );
        if ( s.back() == 'K' )
            v *= 1024;
        else if ( s.back() == 'M' )
            v *= 1024 * 1024;
        best = std::max( best, v );
    }
#if defined( _SC_LEVEL3_CACHE_SIZE )
    // No cache in sysfs (some virtual machines, containers): glibc's own reading of CPUID.
    if ( best <= 0 )
        for ( int name : { _SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL4_CACHE_SIZE } )
            best = std::max( best, double( sysconf( name ) ) );
#endif
    return best;
}

// ---------------------------------------------------------------------------------------------------
// Peak arithmetic: each work item runs Lanes independent chains x = x a + b for `steps` steps.
template <class Scalar, int Lanes, class ExecutionSpace>
struct FmaChains
{
    using mem = typename ExecutionSpace::memory_space;
    Kokkos::View<Scalar*, mem> out;
    int steps;
    Scalar a, b;

    KOKKOS_INLINE_FUNCTION void operator()( const long w ) const
    {
        Scalar x[Lanes];
        for ( int l = 0; l < Lanes; ++l )
            x[l] = Scalar( 1 ) + Scalar( l ) / Scalar( Lanes ) + Scalar( w % 7 );
        for ( int s = 0; s < steps; ++s )
            for ( int l = 0; l < Lanes; ++l )
                x[l] = x[l] * a + b;
        Scalar sum = 0;
        for ( int l = 0; l < Lanes; ++l )
            sum += x[l];
        out( w ) = sum;
    }
};

template <class Scalar, int Lanes, class ExecutionSpace>
double fma_rate( const ExecutionSpace& exec, const Settings& set, long items, int steps, nlohmann::json& log )
{
    using mem = typename ExecutionSpace::memory_space;
    Kokkos::View<Scalar*, mem> out( "probe_fma", items );
    // a < 1 makes every chain converge to b / (1 - a) = 1, whatever its start: after `steps` steps each
    // lane is 1 + a^steps (x_0 - 1), so a wrong (skipped) chain shows.
    const Scalar a = Scalar( 0.999 ), b = Scalar( 0.001 );
    FmaChains<Scalar, Lanes, ExecutionSpace> f{ out, steps, a, b };
    const Stats st = morula::bench::time_phase( exec, set.warmup, set.runs, [&] {
        Kokkos::parallel_for( "roofline::fma",
                              Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<long>>( exec, 0, items ), f );
    } );
    double worst = 0;
    Kokkos::parallel_reduce(
        "roofline::check_fma", Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<long>>( exec, 0, items ),
        KOKKOS_LAMBDA( const long w, double& e ) {
            const double decay = morula::compat::pow( 0.999, double( steps ) );
            double expect = 0;
            for ( int l = 0; l < Lanes; ++l )
                expect += 1.0 + decay * ( double( l ) / Lanes + double( w % 7 ) );
            const double rel = morula::compat::fabs( double( out( w ) ) - expect ) / expect;
            e = rel > e ? rel : e;
        },
        Kokkos::Max<double>( worst ) );
    check( worst < ( sizeof( Scalar ) == 4 ? 2e-3 : 1e-9 ), "FMA chains" );
    const double flops = ( 2.0 * Lanes * steps + Lanes ) * items;
    const double gflops = flops / st.median() / 1e9;
    log.push_back( { { "precision", morula::bench::precision_name<Scalar>() },
                     { "lanes", Lanes },
                     { "steps", steps },
                     { "work_items", items },
                     { "flops", flops },
                     { "time", st.to_json() },
                     { "gflops_per_s", gflops } } );
    std::printf( "  fma %-6s %2d chains: %10.1f GFLOP/s\n", morula::bench::precision_name<Scalar>(), Lanes,
                 gflops );
    std::fflush( stdout );
    return gflops;
}

template <class Scalar, class ExecutionSpace>
double fma_peak( const ExecutionSpace& exec, const Settings& set, nlohmann::json& log )
{
    const long items = is_host_space<ExecutionSpace>() ? 64L * std::max( 1, exec.concurrency() )
                                                       : 8L * std::max( 1, exec.concurrency() );
    const int steps = set.quick ? 256 : ( is_host_space<ExecutionSpace>() ? 16384 : 4096 );
    double best = 0;
    best = std::max( best, fma_rate<Scalar, 8>( exec, set, items, steps, log ) );
    best = std::max( best, fma_rate<Scalar, 16>( exec, set, items, steps, log ) );
    best = std::max( best, fma_rate<Scalar, 32>( exec, set, items, steps, log ) );
    return best;
}

template <class ExecutionSpace>
void run( const ExecutionSpace& exec, const Settings& set )
{
    nlohmann::json machine = morula::bench::machine_info( exec );
    if ( is_host_space<ExecutionSpace>() )
        machine["device"] = morula::bench::cpu_model();
    std::printf( "%s\nroofline probe: %s on %s\n", morula::core::build_summary().c_str(), ExecutionSpace::name(),
                 machine["device"].get<std::string>().c_str() );

    double copy_gbs = 0, triad_gbs = 0;
    const nlohmann::json dram = stream( exec, set, copy_gbs, triad_gbs );
    std::printf( "  copy %.1f GB/s, triad %.1f GB/s over %.0f MiB arrays\n", copy_gbs, triad_gbs, set.dram_mib );

    double cache_gbs = 0, cache_bytes = 0, largest_gbs = 0;
    const double llc = last_level_cache_bytes();
    nlohmann::json sweep = bandwidth_sweep( exec, set, cache_gbs, cache_bytes, largest_gbs );
    for ( const auto& p : sweep )
        if ( p["working_set_bytes"].get<double>() <= 0.5 * llc && p["gbytes_per_s"].get<double>() > cache_gbs )
        {
            cache_gbs = p["gbytes_per_s"];
            cache_bytes = p["working_set_bytes"];
        }

    nlohmann::json fma_log = nlohmann::json::array();
    const double peak_float = fma_peak<float>( exec, set, fma_log );
    const double peak_double = fma_peak<double>( exec, set, fma_log );

    const nlohmann::json roofs = {
        { "dram_copy_gbytes_per_s", copy_gbs },
        { "dram_triad_gbytes_per_s", triad_gbs },
        { "cache_gbytes_per_s", cache_gbs },
        { "cache_working_set_bytes", cache_bytes },
        { "last_level_cache_bytes", llc },
        { "largest_sweep_gbytes_per_s", largest_gbs },
        { "fma_gflops_float", peak_float },
        { "fma_gflops_double", peak_double },
        { "ridge_float_flop_per_byte", peak_float / copy_gbs },
        { "ridge_double_flop_per_byte", peak_double / copy_gbs } };
    std::printf( "roofs: copy %.1f GB/s, cache %.1f GB/s (%.0f KiB set, LLC %.0f KiB), FMA float %.1f, double %.1f "
                 "GFLOP/s\n",
                 copy_gbs, cache_gbs, cache_bytes / 1024, llc / 1024, peak_float, peak_double );

    const nlohmann::json result = { { "benchmark", "roofline_probe" },
                                    { "machine", machine },
                                    { "settings",
                                      { { "runs", set.runs },
                                        { "warmup", set.warmup },
                                        { "dram_array_mib", set.dram_mib },
                                        { "quick", set.quick } } },
                                    { "roofs", roofs },
                                    { "stream", dram },
                                    { "bandwidth_sweep", sweep },
                                    { "fma", fma_log } };
    morula::bench::write_json( set.out, result );
    std::printf( "wrote %s\n", set.out.c_str() );
}

} // namespace roofline

int main( int argc, char* argv[] )
{
    roofline::Settings set;
    CLI::App app( "Morula roofline probe: memory bandwidth (copy, triad, cache sweep) and FMA peak" );
    app.add_option( "--dram-mib", set.dram_mib, "Size of each STREAM array in MiB" )->check( CLI::Range( 1.0, 65536.0 ) );
    app.add_option( "--sweep-min-kib", set.sweep_min_kib, "Smallest working set of the sweep in KiB" )
        ->check( CLI::Range( 4.0, 1048576.0 ) );
    app.add_option( "--sweep-max-mib", set.sweep_max_mib, "Largest working set of the sweep in MiB" )
        ->check( CLI::Range( 0.01, 65536.0 ) );
    app.add_option( "--sample-gib", set.bytes_per_sample_gib,
                    "Traffic of one timed sample of the cache sweep in GiB (0: 2 on a GPU, 0.25 on a CPU)" )
        ->check( CLI::Range( 0.0, 64.0 ) );
    app.add_option( "--runs", set.runs, "Timed runs per kernel" )->check( CLI::Range( 1, 1000 ) );
    app.add_option( "--warmup", set.warmup, "Untimed runs before timing" )->check( CLI::Range( 0, 100 ) );
    app.add_option( "--space", set.space, "device (default execution space) or host" )
        ->check( CLI::IsMember( { "device", "host" } ) );
    app.add_flag( "--quick", set.quick, "Small sizes for a smoke test (figures not meaningful)" );
    app.add_option( "--out", set.out, "JSON result file" );
    CLI11_PARSE( app, argc, argv );
    if ( set.quick )
    {
        set.dram_mib = std::min( set.dram_mib, 16.0 );
        set.sweep_max_mib = std::min( set.sweep_max_mib, 4.0 );
        set.sweep_min_kib = std::max( set.sweep_min_kib, 256.0 );
        set.bytes_per_sample_gib = 0.0625;
        set.runs = std::min( set.runs, 3 );
        set.warmup = std::min( set.warmup, 1 );
    }

    Kokkos::ScopeGuard guard( argc, argv );
    try
    {
        if ( set.space == "device" )
            roofline::run( Kokkos::DefaultExecutionSpace(), set );
        else
            roofline::run( Kokkos::DefaultHostExecutionSpace(), set );
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "%s\n", e.what() );
        return 1;
    }
    return 0;
}
