// One function per part of the module, each in its own file (they compile in parallel).
#ifndef MORULA_PYTHON_BINDINGS_HPP
#define MORULA_PYTHON_BINDINGS_HPP

#include <morula/core/PhaseTimer.hpp>

#include <pybind11/pybind11.h>

namespace morula::python
{
//! A driver's times() as a dict: seconds per phase, counts, timed steps and their total.
inline pybind11::dict times_dict( const core::PhaseTimer& t )
{
    pybind11::dict phases, counts, d;
    for ( int i = 0; i < t.num_phases(); ++i )
        phases[pybind11::str( t.phase_name( i ) )] = t.seconds( i );
    for ( int i = 0; i < t.num_counts(); ++i )
        counts[pybind11::str( t.count_name( i ) )] = t.count( i );
    d["phases"] = phases;
    d["counts"] = counts;
    d["steps"] = t.steps();
    d["total"] = t.total();
    return d;
}

void bind_epidermis( pybind11::module_& m );
void bind_proliferation( pybind11::module_& m );
void bind_lattice( pybind11::module_& m );
void bind_angiogenesis( pybind11::module_& m );
void bind_ode( pybind11::module_& m );
void bind_grid( pybind11::module_& m );
} // namespace morula::python

#endif
