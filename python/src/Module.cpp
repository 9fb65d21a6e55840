// morula._morula: the compiled part of the Python package `morula` (python/morula/__init__.py).
#include "Arrays.hpp"
#include "Bindings.hpp"
#include "Session.hpp"

#include <morula/Config.hpp>
#include <morula/core/BuildInfo.hpp>
#include <morula/core/Error.hpp>

#include <Kokkos_Core.hpp>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace morula::python;

namespace
{
py::dict build_info()
{
    py::dict d;
    d["version"] = morula::core::version();
    d["kokkos_version"] = morula::core::kokkos_version();
    d["backends"] = morula::core::kokkos_backends();
    d["default_execution_space"] = std::string( Kokkos::DefaultExecutionSpace::name() );
    d["default_memory_space"] = std::string( Kokkos::DefaultExecutionSpace::memory_space::name() );
    d["hdf5"] = bool( MORULA_HAVE_HDF5 );
    d["sbml"] = bool( MORULA_HAVE_SBML );
    d["mpi"] = bool( MORULA_HAVE_MPI );
    d["kokkos_kernels"] = bool( MORULA_HAVE_KOKKOSKERNELS );
    d["precisions"] = std::vector<std::string>{ "float", "double" };
    d["summary"] = morula::core::build_summary();
    return d;
}
} // namespace

PYBIND11_MODULE( _morula, m )
{
    m.doc() = "Morula's kernels and models (the compiled part of the package `morula`)";
    m.attr( "__version__" ) = MORULA_VERSION_STRING;

    // core::InputError is a std::invalid_argument, which pybind11 raises as ValueError with its message.
    // I/O failures are OSError.
    py::register_exception_translator( []( std::exception_ptr p ) {
        try
        {
            if ( p )
                std::rethrow_exception( p );
        }
        catch ( const morula::core::IoError& e )
        {
            PyErr_SetString( PyExc_OSError, e.what() );
        }
    } );

    m.def( "build_info", &build_info, "what this module was built with: version, Kokkos, backends, packages" );
    m.def(
        "initialize", []( const std::vector<std::string>& args ) { Session::get().initialize( args ); },
        py::arg( "args" ) = std::vector<std::string>{},
        "initialise Kokkos with command-line style arguments (done on first use when not called)" );
    m.def( "finalize", [] { Session::get().finalize(); },
           "release every model and array, then finalise Kokkos; nothing of the module works afterwards" );
    m.def( "is_initialized", [] { return Session::get().initialized(); } );
    m.def( "is_finalized", [] { return Session::get().finalized(); } );
    m.def( "fence", [] {
        Session::get().require( "morula.fence()" );
        Kokkos::fence();
    } );

    bind_arrays( m );
    bind_epidermis( m );
    bind_proliferation( m );
    bind_lattice( m );
    bind_angiogenesis( m );
    bind_ode( m );
    bind_grid( m );
}
