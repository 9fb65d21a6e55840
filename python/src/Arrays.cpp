#include "Arrays.hpp"

#include <pybind11/stl.h>

#include <sstream>

namespace morula::python
{
namespace
{
// A numpy array over `data` (shape, strides in elements) whose base keeps `kept` alive.
py::array numpy_over( void* data, const py::dtype& dtype, const std::vector<std::int64_t>& shape,
                      const std::vector<std::int64_t>& strides, std::shared_ptr<KeptAllocation> kept )
{
    std::vector<py::ssize_t> s( shape.begin(), shape.end() ), b;
    for ( auto stride : strides )
        b.push_back( static_cast<py::ssize_t>( stride * dtype.itemsize() ) );
    auto* holder = new std::shared_ptr<KeptAllocation>( std::move( kept ) );
    py::capsule base( holder, []( void* p ) { delete static_cast<std::shared_ptr<KeptAllocation>*>( p ); } );
    return py::array( dtype, s, b, data, base );
}

// A DLPack capsule that nobody consumed deletes its tensor; a consumer renames it "used_dltensor" and
// calls the deleter itself when done (the DLPack protocol).
void delete_unused_capsule( PyObject* capsule )
{
    if ( PyCapsule_IsValid( capsule, "dltensor" ) )
    {
        auto* tensor = static_cast<DLManagedTensor*>( PyCapsule_GetPointer( capsule, "dltensor" ) );
        if ( tensor && tensor->deleter )
            tensor->deleter( tensor );
    }
    else
        PyErr_Clear();
}
} // namespace

std::string Array::device() const
{
    switch ( m_device.device_type )
    {
    case kDLCPU: return "host";
    case kDLCUDA: return "cuda:" + std::to_string( m_device.device_id );
    case kDLCUDAManaged: return "cuda_managed:" + std::to_string( m_device.device_id );
    case kDLCUDAHost: return "cuda_host";
    case kDLROCM: return "rocm:" + std::to_string( m_device.device_id );
    case kDLROCMHost: return "rocm_host";
    default: return "device type " + std::to_string( int( m_device.device_type ) );
    }
}

void Array::check() const
{
    Session::get().require( m_what.c_str() );
    if ( stale() )
        throw StaleArrayError( "morula: " + m_what +
                               " is stale: its model stepped, restarted or resized since the array was taken "
                               "(the data may have moved); take the array again" );
}

py::array Array::numpy() const
{
    check();
    if ( !m_host_accessible )
        throw py::type_error( "morula: " + m_what + " lives in device memory (" + device() +
                              "): read it through DLPack (cupy.from_dlpack, torch.from_dlpack) or copy it with "
                              "to_host()" );
    Kokkos::fence(); // kernels that write it may still run (an OpenMP or CUDA-managed space)
    return numpy_over( m_data, m_dtype, m_shape, m_strides, m_kept );
}

py::array Array::to_host() const
{
    check();
    Kokkos::fence();
    auto [kept, data] = m_mirror();
    // The mirror has the View's layout; copy() gives a compact C-ordered array of the live part.
    return numpy_over( data, m_dtype, m_shape, m_strides, std::move( kept ) ).attr( "copy" )();
}

py::capsule Array::dlpack() const
{
    check();
    Kokkos::fence(); // the consumer may read on any stream: every kernel that writes the memory has ended
    auto* context = new detail::DLPackContext;
    context->kept = m_kept;
    context->shape = m_shape;
    context->strides = m_strides;
    DLTensor& t = context->tensor.dl_tensor;
    t.data = m_data;
    t.device = m_device;
    t.ndim = static_cast<int>( m_shape.size() );
    t.dtype = m_type;
    t.shape = context->shape.data();
    t.strides = context->strides.data();
    t.byte_offset = 0;
    context->tensor.manager_ctx = context;
    context->tensor.deleter = []( DLManagedTensor* self ) {
        delete static_cast<detail::DLPackContext*>( self->manager_ctx );
    };
    return py::capsule( &context->tensor, "dltensor", &delete_unused_capsule );
}

void bind_arrays( py::module_& m )
{
    py::register_exception<StaleArrayError>( m, "StaleArrayError", PyExc_RuntimeError );
    py::class_<Array>( m, "Array",
                       "An array of a model's state, without a copy: numpy reads it (host memory), DLPack "
                       "consumers read it anywhere. It raises StaleArrayError once the model has stepped, "
                       "restarted or resized since it was taken." )
        .def_property_readonly( "shape", [](const Array& a) { return py::tuple( py::cast( a.shape() ) ); } )
        .def_property_readonly( "strides", [](const Array& a) { return py::tuple( py::cast( a.strides() ) ); },
                                "strides in elements" )
        .def_property_readonly( "dtype", &Array::dtype )
        .def_property_readonly( "device", &Array::device )
        .def_property_readonly( "pointer", &Array::pointer, "address of the first element" )
        .def_property_readonly( "stale", &Array::stale )
        .def( "numpy", &Array::numpy, "the memory as a numpy array, no copy (host memory only)" )
        .def( "to_host", &Array::to_host, "a compact copy in host memory, from any memory space" )
        .def( "__array__", []( const Array& a, py::object dtype, py::object copy ) {
                  py::array out = a.numpy();
                  if ( !dtype.is_none() && !out.dtype().is( py::dtype::from_args( dtype ) ) )
                      return py::array( out.attr( "astype" )( dtype ) );
                  return out;
              },
              py::arg( "dtype" ) = py::none(), py::arg( "copy" ) = py::none() )
        .def( "__dlpack__", []( const Array& a, py::object /*stream*/ ) { return a.dlpack(); },
              py::arg( "stream" ) = py::none() )
        .def( "__dlpack_device__", &Array::dlpack_device )
        .def( "__len__", []( const Array& a ) { return a.shape().empty() ? 0 : a.shape()[0]; } )
        .def( "__getitem__", []( const Array& a, py::object key ) { return a.numpy()[key]; } )
        .def( "__setitem__", []( const Array& a, py::object key, py::object value ) { a.numpy()[key] = value; } )
        .def( "__repr__", []( const Array& a ) {
            std::ostringstream s;
            s << "morula.Array(shape=" << py::str( py::tuple( py::cast( a.shape() ) ) ).cast<std::string>()
              << ", dtype=" << py::str( a.dtype() ).cast<std::string>() << ", device=" << a.device()
              << ( a.stale() ? ", stale" : "" ) << ")";
            return s.str();
        } );
}
} // namespace morula::python
