/*!
  \file detail/CodeClasses.hpp
  \brief The species of every particle code of a CodeMap, checked against the rules and the capacity of
  a site: what the device rules look up for each particle.
*/
#ifndef MORULA_LATTICE_DETAIL_CODECLASSES_HPP
#define MORULA_LATTICE_DETAIL_CODECLASSES_HPP

#include <morula/core/Error.hpp>
#include <morula/lattice/CodeMap.hpp>
#include <morula/lattice/DiffusionRules.hpp>
#include <morula/lattice/SiteWord.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace morula::lattice::detail
{

struct CodeClasses
{
    CodeMap map;
    std::vector<std::uint16_t> class_of_code; //!< the species of each code (0 unused)
};

//! \throws core::InputError if `map` names more species than `rules` has, a tracer of an unknown
//! species, or codes beyond what a site of `Slots` slots holds
template <int Slots>
CodeClasses code_classes( const DiffusionRules& rules, const CodeMap& map )
{
    using core::detail::concat;
    using layout = SiteLayout<Slots>;
    if ( map.species_codes < 0 || map.species_codes > rules.species() )
        throw core::InputError( concat( "LatticeDiffusion: ", map.species_codes, " species codes for ",
                                        rules.species(), " species" ) );
    if ( map.max_code() == 0 || map.max_code() > layout::max_code )
        throw core::InputError( concat( "LatticeDiffusion: ", map.species_codes, " species code(s) and ",
                                        map.species_of_tracer.size(), " tracer(s); a site with ", Slots,
                                        " slots holds codes 1..", layout::max_code ) );
    CodeClasses c{ map, std::vector<std::uint16_t>( map.max_code() + 1 ) };
    for ( int s = 0; s < map.species_codes; ++s )
        c.class_of_code[s + 1] = std::uint16_t( s );
    for ( std::size_t t = 0; t < map.species_of_tracer.size(); ++t )
    {
        if ( map.species_of_tracer[t] < 0 || map.species_of_tracer[t] >= rules.species() )
            throw core::InputError( concat( "LatticeDiffusion: tracer ", t + 1, " has species ",
                                            map.species_of_tracer[t], "; expected 0..", rules.species() - 1 ) );
        c.class_of_code[map.first_tracer_code() + t] = std::uint16_t( map.species_of_tracer[t] );
    }
    return c;
}

} // namespace morula::lattice::detail

#endif
