/*!
  \file CodeMap.hpp
  \brief What the particle codes of a lattice stand for: species without ids, tracers with ids, or both.

  A site slot holds a code of 14, 7 or 3 bits (2, 4 or 8 slots), so one id per particle is possible only
  for small populations (16383, 127 or 7 particles). Crowding experiments need many particles but only
  some followed: codes 1..species_codes are particles of a species that carry no id (they crowd and
  are counted, never followed), and the codes after them are tracers, one particle each, whose
  unwrapped displacements give mean square displacements at any capacity.
*/
#ifndef MORULA_LATTICE_CODEMAP_HPP
#define MORULA_LATTICE_CODEMAP_HPP

#include <cstdint>
#include <utility>
#include <vector>

namespace morula::lattice
{

struct CodeMap
{
    //! Codes 1..species_codes: particles of species code - 1 without ids.
    int species_codes = 0;
    //! Code species_codes + t (t = 1, 2, ...): one tracer of species species_of_tracer[t - 1].
    std::vector<int> species_of_tracer;

    //! Every particle is of a species, none has an id.
    static CodeMap species( int n ) { return { n, {} }; }
    //! Every particle has an id (codes 1..n).
    static CodeMap tracers( std::vector<int> species_of_tracer ) { return { 0, std::move( species_of_tracer ) }; }
    //! Species codes 1..n for the crowd, then one code per tracer.
    static CodeMap marked( int n, std::vector<int> species_of_tracer ) { return { n, std::move( species_of_tracer ) }; }

    bool tracking() const { return !species_of_tracer.empty(); }
    std::uint32_t first_tracer_code() const { return std::uint32_t( species_codes ) + 1u; }
    std::uint32_t max_code() const { return std::uint32_t( species_codes ) + std::uint32_t( species_of_tracer.size() ); }
};

} // namespace morula::lattice

#endif
