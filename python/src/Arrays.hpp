// Arrays out of Morula without copies: a View's memory handed to Python as `morula.Array`, which numpy
// reads through __array__ (host memory) and any DLPack consumer through __dlpack__ (host or device
// memory: numpy, CuPy, PyTorch, JAX). The Array keeps the View's allocation alive, and it knows the
// generation of its owner's state when it was made: after a step, restart or resize that may have
// moved, reordered or reallocated the data, using it raises morula.StaleArrayError instead of reading
// stale memory (HOOMD-blue's rule for its local snapshots).
#ifndef MORULA_PYTHON_ARRAYS_HPP
#define MORULA_PYTHON_ARRAYS_HPP

#include "Session.hpp"

#include <Kokkos_Core.hpp>
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace morula::python
{
namespace py = pybind11;

//! Raised when an Array is used after its owner's data changed (see the file comment).
class StaleArrayError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/*!
  Holds a copy of a View (so its allocation lives on) until the last user lets go. At finalize() the
  copy is leaked on purpose: the process is ending or Kokkos is gone, and freeing a Kokkos allocation
  after Kokkos::finalize aborts, while a numpy array may still point into it.
*/
class KeptAllocation
{
  public:
    template <class View>
    explicit KeptAllocation( const View& v )
        : m_view( std::make_shared<View>( v ) )
    {
        m_key = Session::get().remember( [this] { leak(); } );
    }
    KeptAllocation( const KeptAllocation& ) = delete;
    KeptAllocation& operator=( const KeptAllocation& ) = delete;
    ~KeptAllocation()
    {
        if ( m_view )
            Session::get().forget( m_key );
    }

  private:
    void leak() { new std::shared_ptr<void>( std::move( m_view ) ); }
    std::shared_ptr<void> m_view;
    std::size_t m_key = 0;
};

namespace detail
{
//! The DLPack device of a memory space; a space with none (and not host-accessible) does not compile.
template <class MemorySpace>
DLDevice dlpack_device()
{
#if defined( KOKKOS_ENABLE_CUDA )
    if constexpr ( std::is_same_v<MemorySpace, Kokkos::CudaSpace> )
        return { kDLCUDA, Kokkos::Cuda().cuda_device() };
    else if constexpr ( std::is_same_v<MemorySpace, Kokkos::CudaUVMSpace> )
        return { kDLCUDAManaged, Kokkos::Cuda().cuda_device() };
    else if constexpr ( std::is_same_v<MemorySpace, Kokkos::CudaHostPinnedSpace> )
        return { kDLCUDAHost, 0 };
    else
#elif defined( KOKKOS_ENABLE_HIP )
    if constexpr ( std::is_same_v<MemorySpace, Kokkos::HIPSpace> )
        return { kDLROCM, Kokkos::HIP().hip_device() };
    else if constexpr ( std::is_same_v<MemorySpace, Kokkos::HIPHostPinnedSpace> )
        return { kDLROCMHost, 0 };
    else
#endif
    {
        // Only in the branch no GPU space took: a CudaSpace must not reach this assertion.
        static_assert( Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible,
                       "a memory space without a DLPack device type" );
        return { kDLCPU, 0 };
    }
}

template <class T>
DLDataType dlpack_type()
{
    static_assert( std::is_arithmetic_v<T>, "DLPack export of a non-arithmetic type" );
    const std::uint8_t code = std::is_floating_point_v<T> ? kDLFloat : std::is_signed_v<T> ? kDLInt : kDLUInt;
    return { code, static_cast<std::uint8_t>( 8 * sizeof( T ) ), 1 };
}

//! What a DLPack capsule owns: the allocation and the shape and strides the tensor points at.
struct DLPackContext
{
    std::shared_ptr<KeptAllocation> kept;
    std::vector<std::int64_t> shape, strides;
    DLManagedTensor tensor{};
};
} // namespace detail

/*!
  An array of a View's elements as Python sees it: `shape` (the live part, which may be shorter than
  the View's capacity), strides in elements, the element type, the device, and the owner's generation.
*/
class Array
{
  public:
    template <class View>
    Array( const View& v, std::vector<std::int64_t> shape, std::shared_ptr<const long long> owner_generation,
           std::string what )
        : m_kept( std::make_shared<KeptAllocation>( v ) )
        , m_data( const_cast<typename View::non_const_value_type*>( v.data() ) )
        , m_shape( std::move( shape ) )
        , m_device( detail::dlpack_device<typename View::memory_space>() )
        , m_type( detail::dlpack_type<typename View::non_const_value_type>() )
        , m_dtype( py::dtype::of<typename View::non_const_value_type>() )
        , m_generation( *owner_generation )
        , m_owner_generation( std::move( owner_generation ) )
        , m_what( std::move( what ) )
    {
        for ( std::size_t r = 0; r < m_shape.size(); ++r )
            m_strides.push_back( static_cast<std::int64_t>( v.stride( r ) ) );
        m_host_accessible = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible;
        // A host copy of the whole allocation (capacity included), taken when asked for.
        m_mirror = [v]() {
            auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), v );
            return std::make_pair( std::make_shared<KeptAllocation>( host ),
                                   static_cast<void*>( const_cast<typename View::non_const_value_type*>( host.data() ) ) );
        };
    }

    const std::vector<std::int64_t>& shape() const { return m_shape; }
    const std::vector<std::int64_t>& strides() const { return m_strides; } //!< in elements
    py::dtype dtype() const { return m_dtype; }
    std::uintptr_t pointer() const { return reinterpret_cast<std::uintptr_t>( m_data ); }
    bool host_accessible() const { return m_host_accessible; }
    std::pair<int, int> dlpack_device() const { return { int( m_device.device_type ), m_device.device_id }; }
    std::string device() const;
    bool stale() const { return *m_owner_generation != m_generation; }

    //! The memory as a numpy array, no copy (host-accessible memory only); raises when stale.
    py::array numpy() const;
    //! A copy in host memory, from any memory space; raises when stale.
    py::array to_host() const;
    //! A DLPack capsule ("dltensor") of the memory, no copy; raises when stale.
    py::capsule dlpack() const;

  private:
    void check() const;
    std::shared_ptr<KeptAllocation> m_kept;
    void* m_data;
    std::vector<std::int64_t> m_shape, m_strides;
    DLDevice m_device;
    DLDataType m_type;
    py::dtype m_dtype;
    long long m_generation;
    std::shared_ptr<const long long> m_owner_generation;
    std::string m_what;
    bool m_host_accessible = true;
    std::function<std::pair<std::shared_ptr<KeptAllocation>, void*>()> m_mirror;
};

//! Binds morula.Array and morula.StaleArrayError.
void bind_arrays( py::module_& m );
} // namespace morula::python

#endif
