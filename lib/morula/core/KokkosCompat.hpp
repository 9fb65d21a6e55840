/*!
  \file KokkosCompat.hpp
  \brief The one place where Morula bridges Kokkos 3.4 and Kokkos 4.x.

  Every difference between the Kokkos versions Morula supports (Debian 12's 3.4.01 and 4.x, with the
  legacy or the mdspan-based View) is absorbed here; no other file tests KOKKOS_VERSION.
*/
#ifndef MORULA_CORE_KOKKOSCOMPAT_HPP
#define MORULA_CORE_KOKKOSCOMPAT_HPP

#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#if KOKKOS_VERSION >= 40000
#define MORULA_KOKKOS_4 1
#else
#define MORULA_KOKKOS_4 0
#endif

// Kokkos' Graph gained a node that captures a CUDA stream's work (GraphNodeRef::cuda_capture) after 4.6.00:
// the develop snapshot 4.6.99 and 4.7 have it.
#if defined( KOKKOS_ENABLE_CUDA ) && KOKKOS_VERSION >= 40699
#define MORULA_HAVE_CUDA_GRAPH_CAPTURE 1
#include <Kokkos_Graph.hpp>
#else
#define MORULA_HAVE_CUDA_GRAPH_CAPTURE 0
#endif

//! Asks the compiler to unroll the next loop: fully on a GPU (a loop over a register array must be
//! unrolled for the array to stay in registers there), by up to 16 on a CPU, as GCC's pragma does. Clang
//! on a CPU used to get the full unroll too: it compiled the ODE tests 1.5 times slower than with 16
//! (tstOdeRosenbrock under ASan, 441 against 289 s) and warned 150 times per file that it could not.
#if defined( __CUDACC__ ) || defined( __HIPCC__ )
#define MORULA_UNROLL _Pragma( "unroll" )
#elif defined( __clang__ )
#define MORULA_UNROLL _Pragma( "unroll 16" )
#elif defined( __GNUC__ )
#define MORULA_UNROLL _Pragma( "GCC unroll 16" )
#else
#define MORULA_UNROLL
#endif

namespace morula::compat
{

// Math functions moved out of Kokkos::Experimental in Kokkos 4.0.
#if MORULA_KOKKOS_4
using Kokkos::cbrt;
using Kokkos::cos;
using Kokkos::exp;
using Kokkos::fabs;
using Kokkos::floor;
using Kokkos::fmax;
using Kokkos::fmin;
using Kokkos::isfinite;
using Kokkos::log;
using Kokkos::nearbyint;
using Kokkos::pow;
using Kokkos::sin;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::cbrt;
using Kokkos::Experimental::cos;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::floor;
using Kokkos::Experimental::fmax;
using Kokkos::Experimental::fmin;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::log;
using Kokkos::Experimental::nearbyint;
using Kokkos::Experimental::pow;
using Kokkos::Experimental::sin;
using Kokkos::Experimental::sqrt;
#endif

//! Index of the lowest set bit of x (x != 0): one instruction on GPUs and x86 (Kokkos 4's
//! countr_zero_builtin; Kokkos 3.4, Debian's Serial build, has no bit functions, and GCC's builtin is it).
KOKKOS_INLINE_FUNCTION int lowest_set_bit( std::uint32_t x )
{
#if KOKKOS_VERSION >= 40100
    return Kokkos::Experimental::countr_zero_builtin( x );
#elif defined( __CUDA_ARCH__ ) || defined( __HIP_DEVICE_COMPILE__ )
    return __ffs( x ) - 1;
#else
    return __builtin_ctz( x );
#endif
}

//! Named profiling region (Kokkos Tools, Nsight) that closes when it goes out of scope.
//! Kokkos 4 has Kokkos::Profiling::ScopedRegion; 3.4 only has push/popRegion.
class ScopedRegion
{
  public:
    explicit ScopedRegion( const std::string& name )
    {
        Kokkos::Profiling::pushRegion( name );
    }
    ~ScopedRegion() { end(); }
    //! Closes the region before the end of the scope (once).
    void end()
    {
        if ( m_open )
            Kokkos::Profiling::popRegion();
        m_open = false;
    }
    ScopedRegion( const ScopedRegion& ) = delete;
    ScopedRegion& operator=( const ScopedRegion& ) = delete;

  private:
    bool m_open = true;
};

//! Host mirror type of a View (HostMirror in 3.4, host_mirror_type in both).
template <class ViewType>
using host_mirror_t = typename ViewType::host_mirror_type;

//! Sorts a 1D View on `exec` (Kokkos 3.4 only sorts on the View's default execution space).
template <class ExecutionSpace, class View>
void sort( const ExecutionSpace& exec, const View& v )
{
#if MORULA_KOKKOS_4
    Kokkos::sort( exec, v );
#else
    exec.fence();
    Kokkos::sort( v );
#endif
}

//! Kokkos::BinSort over keys(i, ...) with `op`, for comparisons against Kokkos' own binning.
template <class KeyView, class BinOp>
class BinSort
{
  public:
    using sort_type = Kokkos::BinSort<KeyView, BinOp>;

    template <class ExecutionSpace>
    BinSort( const ExecutionSpace& exec, const KeyView& keys, const BinOp& op )
#if MORULA_KOKKOS_4
        : m_sort( exec, keys, op, false )
#else
        : m_sort( keys, op, false )
#endif
    {
        (void)exec;
    }

    template <class ExecutionSpace>
    void create_permute_vector( const ExecutionSpace& exec )
    {
#if MORULA_KOKKOS_4
        m_sort.create_permute_vector( exec );
#else
        exec.fence();
        m_sort.create_permute_vector();
#endif
    }

    auto permute_vector() const { return m_sort.get_permute_vector(); }

  private:
    sort_type m_sort;
};

/*!
  \brief Page-locked host memory of the GPU backend (plain host memory without one): where messages of
  device buffers are staged for an MPI without GPU support, because copies to and from it run at the
  PCIe link's speed (several times those of pageable memory). HIP's space left Experimental in 4.0.
*/
#if defined( KOKKOS_ENABLE_CUDA )
using HostPinnedSpace = Kokkos::CudaHostPinnedSpace;
#elif defined( KOKKOS_ENABLE_HIP ) && MORULA_KOKKOS_4
using HostPinnedSpace = Kokkos::HIPHostPinnedSpace;
#elif defined( KOKKOS_ENABLE_HIP )
using HostPinnedSpace = Kokkos::Experimental::HIPHostPinnedSpace;
#else
using HostPinnedSpace = Kokkos::HostSpace;
#endif

//! HIP's device memory (Experimental before Kokkos 4.0), where the build has HIP.
#if defined( KOKKOS_ENABLE_HIP ) && MORULA_KOKKOS_4
using HIPSpace = Kokkos::HIPSpace;
#elif defined( KOKKOS_ENABLE_HIP )
using HIPSpace = Kokkos::Experimental::HIPSpace;
#endif

/*!
  \brief An instance of `exec`'s execution space whose work may run concurrently with exec's: its own
  stream on a GPU backend, so that a halo exchange on it overlaps the interior forces on exec. On CUDA
  and HIP (Kokkos >= 4.2) the stream has the device's highest priority: the block scheduler then hands
  the exchange's small kernels (pack, unpack, NCCL's) the next free multiprocessors instead of queueing
  them behind the thousands of blocks of a force kernel launched before them. Other device backends
  of Kokkos 4 get partition_space's stream. On host backends, and with Kokkos 3.4, exec itself: host
  kernels run one after the other on the calling thread anyway, and a partition of OpenMP would split
  its threads. Work on the two instances is ordered only by fences.
*/
template <class ExecutionSpace>
ExecutionSpace concurrent_instance( const ExecutionSpace& exec )
{
#if defined( KOKKOS_ENABLE_CUDA ) && KOKKOS_VERSION >= 40200
    if constexpr ( std::is_same_v<ExecutionSpace, Kokkos::Cuda> )
    {
        int least = 0, greatest = 0;
        cudaStream_t stream = nullptr;
        if ( cudaDeviceGetStreamPriorityRange( &least, &greatest ) == cudaSuccess &&
             cudaStreamCreateWithPriority( &stream, cudaStreamDefault, greatest ) == cudaSuccess )
            return Kokkos::Cuda( stream, Kokkos::Impl::ManageStream::yes );
    }
#endif
#if defined( KOKKOS_ENABLE_HIP ) && KOKKOS_VERSION >= 40200
    if constexpr ( std::is_same_v<ExecutionSpace, Kokkos::HIP> )
    {
        int least = 0, greatest = 0;
        hipStream_t stream = nullptr;
        if ( hipDeviceGetStreamPriorityRange( &least, &greatest ) == hipSuccess &&
             hipStreamCreateWithPriority( &stream, hipStreamDefault, greatest ) == hipSuccess )
            return Kokkos::HIP( stream, Kokkos::Impl::ManageStream::yes );
    }
#endif
#if MORULA_KOKKOS_4
    constexpr bool host =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible;
    if constexpr ( !host )
        return Kokkos::Experimental::partition_space( exec, 1 )[0];
#endif
    return exec;
}

/*!
  \brief Whether work enqueued on an instance of ExecutionSpace can be captured into a device graph and
  replayed (core::StepGraph): CUDA with Kokkos >= 4.6.99. Elsewhere the work is relaunched kernel by kernel.
*/
template <class ExecutionSpace>
inline constexpr bool has_device_graph =
#if MORULA_HAVE_CUDA_GRAPH_CAPTURE
    std::is_same_v<ExecutionSpace, Kokkos::Cuda>;
#else
    false;
#endif

//! A device graph holding the kernels that op(exec) enqueued (only where has_device_graph holds).
template <class ExecutionSpace>
class DeviceGraph
{
};

#if MORULA_HAVE_CUDA_GRAPH_CAPTURE
template <>
class DeviceGraph<Kokkos::Cuda>
{
  public:
    //! Captures op(exec)'s work on exec's stream into a graph node and instantiates the graph; op's kernels
    //! do not run now.
    template <class Op>
    DeviceGraph( const Kokkos::Cuda& exec, const Op& op )
        : m_graph( Kokkos::Experimental::create_graph( exec, [&]( const auto& root ) {
            root.cuda_capture( exec, [op]( const Kokkos::Cuda& stream ) { op( stream ); } );
        } ) )
        , m_buffers( buffers_of( exec ) )
    {
        m_graph.instantiate();
    }

    /*!
      Whether the graph may run on exec: the same instance (stream) it was captured on, whose buffers are
      the ones the captured kernels point at. Kokkos' CUDA instance keeps reduction and team scratch
      buffers that it frees and reallocates when a later kernel needs more; a graph captured before that
      would write into freed memory, so it must be captured again.
    */
    bool runs_on( const Kokkos::Cuda& exec ) const { return buffers_of( exec ) == m_buffers; }

    //! Runs the captured work on exec's stream, after the work already enqueued there.
    void submit( const Kokkos::Cuda& exec ) const { m_graph.submit( exec ); }

  private:
    // The instance and the addresses of its scratch buffers (Kokkos internals, hence here).
    static std::vector<const void*> buffers_of( const Kokkos::Cuda& exec )
    {
        const auto* in = exec.impl_internal_space_instance();
        std::vector<const void*> b{ in, in->m_scratchSpace, in->m_scratchFlags, in->m_scratchUnified,
                                    in->m_scratchFunctor };
        for ( int i = 0; i < in->m_n_team_scratch; ++i )
            b.push_back( in->m_team_scratch_ptr[i] );
        return b;
    }

    Kokkos::Experimental::Graph<Kokkos::Cuda> m_graph;
    std::vector<const void*> m_buffers;
};
#endif

//! Version string of the Kokkos Morula was compiled against, e.g. "3.4.1" or "4.6.99".
inline std::string kokkos_version_string()
{
    return std::to_string( KOKKOS_VERSION / 10000 ) + "." +
           std::to_string( KOKKOS_VERSION / 100 % 100 ) + "." +
           std::to_string( KOKKOS_VERSION % 100 );
}

} // namespace morula::compat

#endif
