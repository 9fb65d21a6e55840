/*!
  \file MsdSample.hpp
  \brief The mean square displacement of a species' tracers, from their unwrapped displacements.
*/
#ifndef MORULA_LATTICE_MSDSAMPLE_HPP
#define MORULA_LATTICE_MSDSAMPLE_HPP

#include <morula/lattice/CodeMap.hpp>

#include <array>
#include <cstddef>

namespace morula::lattice
{

//! Mean square displacement of the tracers of one species, per axis, in lattice units squared.
struct MsdSample
{
    std::size_t tracers = 0;
    std::array<double, 3> per_axis{ 0, 0, 0 };
    double total() const { return per_axis[0] + per_axis[1] + per_axis[2]; }
};

/*!
  \brief Mean square displacement of the tracers of `species` from host displacements (row = code; the
  tracers' codes and species from `codes`). Shared by the single-rank and the distributed models.
*/
template <class HostDisplacements>
MsdSample msd_of_tracers( const HostDisplacements& h, const CodeMap& codes, int species )
{
    MsdSample m;
    const std::size_t first = codes.first_tracer_code();
    for ( std::size_t t = 0; t < codes.species_of_tracer.size(); ++t )
        if ( codes.species_of_tracer[t] == species )
        {
            ++m.tracers;
            for ( int a = 0; a < 3; ++a )
                m.per_axis[a] += double( h( first + t, a ) ) * double( h( first + t, a ) );
        }
    if ( m.tracers )
        for ( auto& v : m.per_axis )
            v /= double( m.tracers );
    return m;
}

} // namespace morula::lattice

#endif
