// StepTimeline: what one unfenced step of a distributed benchmark did, and when: the host's entry to and
// exit from every profiling region (Morula's ScopedRegions), every kernel launch and every fence, and,
// on CUDA, when the main execution space instance's stream reached each of those points (an event
// recorded on that stream, timed after the step). Nothing is fenced in between, so the step runs as in
// production; the records show what waits on what:
// - a fence (or a deep copy to the host) that lasts long is the host waiting for the GPU or a peer;
// - a gap between a kernel's end and the next kernel's start on the stream is the GPU waiting (for the
//   host, a message, or work on another instance).
// Kernels launched on other instances (the ghost exchange's) get host times only.
//
// Benchmark code: the callbacks are plain function pointers, so the recorder is one global object,
// installed for the recorded step only.
#ifndef MORULA_BENCH_STEPTIMELINE_HPP
#define MORULA_BENCH_STEPTIMELINE_HPP

#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <nlohmann/json.hpp>

#if defined( KOKKOS_ENABLE_CUDA )
#include <cuda_runtime.h>
#endif

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::bench::timeline
{

struct Record
{
    std::string kind; // push, pop, kernel_begin, kernel_end, fence_begin, fence_end
    std::string name;
    double host_us = 0;
    int event = -1; // index of the stream event, or -1
    bool main_instance = false;
};

struct State
{
    bool active = false;
    std::uint32_t main_device_id = 0;
    std::chrono::steady_clock::time_point t0;
    std::vector<Record> records;
    std::vector<std::string> region_stack;
    std::vector<std::pair<std::string, bool>> kernels; // name, on the main instance
    std::vector<std::string> fences;
#if defined( KOKKOS_ENABLE_CUDA )
    cudaStream_t stream = nullptr;
    std::vector<cudaEvent_t> events;
    std::size_t next_event = 0;
#endif
};

inline State& state()
{
    static State s;
    return s;
}

inline void add( const std::string& kind, const std::string& name, bool on_stream, bool main_instance )
{
    auto& s = state();
    if ( !s.active )
        return;
    Record r;
    r.kind = kind;
    r.name = name;
    r.main_instance = main_instance;
    r.host_us = std::chrono::duration<double, std::micro>( std::chrono::steady_clock::now() - s.t0 ).count();
#if defined( KOKKOS_ENABLE_CUDA )
    if ( on_stream && s.next_event < s.events.size() )
    {
        cudaEventRecord( s.events[s.next_event], s.stream );
        r.event = static_cast<int>( s.next_event++ );
    }
#else
    (void)on_stream;
#endif
    s.records.push_back( r );
}

#if MORULA_KOKKOS_4
inline void on_push( const char* name )
{
    state().region_stack.emplace_back( name );
    add( "push", name, true, true );
}
inline void on_pop()
{
    auto& s = state();
    const std::string name = s.region_stack.empty() ? std::string( "?" ) : s.region_stack.back();
    if ( !s.region_stack.empty() )
        s.region_stack.pop_back();
    add( "pop", name, true, true );
}
inline void on_kernel_begin( const char* name, const std::uint32_t dev, std::uint64_t* id )
{
    auto& s = state();
    const bool main = dev == s.main_device_id;
    *id = s.kernels.size();
    s.kernels.emplace_back( name, main );
    add( "kernel_begin", name, main, main );
}
inline void on_kernel_end( const std::uint64_t id )
{
    auto& s = state();
    const auto& k = s.kernels.at( id );
    add( "kernel_end", k.first, k.second, k.second );
}
inline void on_fence_begin( const char* name, const std::uint32_t dev, std::uint64_t* id )
{
    auto& s = state();
    *id = s.fences.size();
    s.fences.emplace_back( name );
    add( "fence_begin", name, false, dev == s.main_device_id );
}
inline void on_fence_end( const std::uint64_t id ) { add( "fence_end", state().fences.at( id ), false, false ); }
#endif

//! Whether this build can record a timeline (Kokkos 4's tool callbacks).
constexpr bool available() { return MORULA_KOKKOS_4 != 0; }

#if MORULA_KOKKOS_4
inline void no_global_fencing( const std::uint32_t, Kokkos::Tools::Experimental::ToolSettings* settings )
{
    settings->requires_global_fencing = false;
}
#endif

/*!
  Call before Kokkos::initialize(): tells Kokkos that the recorder needs no fence around each kernel
  (by default a tool's callbacks come with one, which would serialise the step being recorded). Kokkos
  asks for a tool's settings only while it initializes.
*/
inline void prepare()
{
#if MORULA_KOKKOS_4
    Kokkos::Tools::Experimental::set_request_tool_settings_callback( no_global_fencing );
#endif
}

//! Starts recording what runs on `exec` (the main instance) and anywhere else.
template <class ExecutionSpace>
void start( const ExecutionSpace& exec )
{
#if MORULA_KOKKOS_4
    exec.fence();
    auto& s = state();
    s = State{};
    s.main_device_id = Kokkos::Tools::Experimental::device_id( exec );
#if defined( KOKKOS_ENABLE_CUDA )
    if constexpr ( std::is_same_v<ExecutionSpace, Kokkos::Cuda> )
    {
        s.stream = exec.cuda_stream();
        s.events.resize( 4096 );
        for ( auto& e : s.events )
            cudaEventCreate( &e );
    }
#endif
    namespace tools = Kokkos::Tools::Experimental;
    tools::set_request_tool_settings_callback( nullptr ); // asked at initialization only
    tools::set_push_region_callback( on_push );
    tools::set_pop_region_callback( on_pop );
    tools::set_begin_parallel_for_callback( on_kernel_begin );
    tools::set_end_parallel_for_callback( on_kernel_end );
    tools::set_begin_parallel_reduce_callback( on_kernel_begin );
    tools::set_end_parallel_reduce_callback( on_kernel_end );
    tools::set_begin_parallel_scan_callback( on_kernel_begin );
    tools::set_end_parallel_scan_callback( on_kernel_end );
    tools::set_begin_fence_callback( on_fence_begin );
    tools::set_end_fence_callback( on_fence_end );
    s.t0 = std::chrono::steady_clock::now();
    s.active = true;
    add( "start", "step", true, true );
#else
    (void)exec;
#endif
}

/*!
  Stops recording (after a fence on `exec`), removes the callbacks and returns the records as JSON:
  host_us from the start, gpu_us (the main stream's time at the record, from the first event) where an
  event was recorded.
*/
template <class ExecutionSpace>
nlohmann::json stop( const ExecutionSpace& exec )
{
    nlohmann::json out = nlohmann::json::array();
#if MORULA_KOKKOS_4
    auto& s = state();
    add( "stop", "step", true, true );
    s.active = false;
    exec.fence();
    namespace tools = Kokkos::Tools::Experimental;
    tools::set_push_region_callback( nullptr );
    tools::set_pop_region_callback( nullptr );
    tools::set_begin_parallel_for_callback( nullptr );
    tools::set_end_parallel_for_callback( nullptr );
    tools::set_begin_parallel_reduce_callback( nullptr );
    tools::set_end_parallel_reduce_callback( nullptr );
    tools::set_begin_parallel_scan_callback( nullptr );
    tools::set_end_parallel_scan_callback( nullptr );
    tools::set_begin_fence_callback( nullptr );
    tools::set_end_fence_callback( nullptr );
    for ( const auto& r : s.records )
    {
        nlohmann::json j = { { "kind", r.kind }, { "name", r.name }, { "host_us", r.host_us },
                             { "main_instance", r.main_instance } };
#if defined( KOKKOS_ENABLE_CUDA )
        if ( r.event >= 0 )
        {
            float ms = 0;
            cudaEventElapsedTime( &ms, s.events[0], s.events[r.event] );
            j["gpu_us"] = 1e3 * double( ms );
        }
#endif
        out.push_back( j );
    }
#if defined( KOKKOS_ENABLE_CUDA )
    for ( auto& e : s.events )
        cudaEventDestroy( e );
#endif
    s = State{};
#else
    (void)exec;
#endif
    return out;
}

} // namespace morula::bench::timeline

#endif
