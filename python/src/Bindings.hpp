// One function per part of the module, each in its own file (they compile in parallel).
#ifndef MORULA_PYTHON_BINDINGS_HPP
#define MORULA_PYTHON_BINDINGS_HPP

#include <pybind11/pybind11.h>

namespace morula::python
{
void bind_epidermis( pybind11::module_& m );
void bind_ode( pybind11::module_& m );
void bind_grid( pybind11::module_& m );
} // namespace morula::python

#endif
