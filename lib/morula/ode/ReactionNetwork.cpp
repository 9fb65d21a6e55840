#include <morula/core/Error.hpp>
#include <morula/ode/ReactionNetwork.hpp>

#include <cmath>
#include <set>

namespace morula::ode
{

void validate( const ReactionNetwork& network )
{
    using core::InputError;
    using core::detail::concat;
    const std::string& src = network.source.empty() ? std::string( "reaction network" ) : network.source;
    const int n = network.species_count();
    std::set<std::string> names;
    for ( int i = 0; i < n; ++i )
    {
        if ( network.species_names[i].empty() )
            throw InputError( concat( src, ": species ", i, " has an empty name" ) );
        if ( !names.insert( network.species_names[i] ).second )
            throw InputError( concat( src, ": species name '", network.species_names[i], "' appears twice" ) );
    }
    if ( static_cast<int>( network.initial_state.size() ) != n )
        throw InputError( concat( src, ": ", network.initial_state.size(), " initial values for ", n, " species" ) );
    for ( int i = 0; i < n; ++i )
        if ( !( std::isfinite( network.initial_state[i] ) && network.initial_state[i] >= 0.0 ) )
            throw InputError( concat( src, ": initial value of species '", network.species_names[i], "' is ",
                                      network.initial_state[i], "; expected a finite value >= 0" ) );
    for ( int r = 0; r < network.reaction_count(); ++r )
    {
        const Reaction& reaction = network.reactions[r];
        const std::string label = reaction.name.empty() ? concat( "R", r ) : reaction.name;
        if ( !( std::isfinite( reaction.rate_constant ) && reaction.rate_constant >= 0.0 ) )
            throw InputError( concat( src, ": reaction ", label, ": rate constant ", reaction.rate_constant,
                                      "; expected a finite value >= 0" ) );
        for ( const auto* side : { &reaction.reactants, &reaction.products } )
        {
            std::set<int> seen;
            for ( const StoichiometryTerm& t : *side )
            {
                if ( t.species < 0 || t.species >= n )
                    throw InputError( concat( src, ": reaction ", label, ": species index ", t.species,
                                              " outside [0, ", n, ")" ) );
                if ( t.coefficient < 1 )
                    throw InputError( concat( src, ": reaction ", label, ": stoichiometry ", t.coefficient, " of '",
                                              network.species_names[t.species], "'; expected an integer >= 1" ) );
                if ( !seen.insert( t.species ).second )
                    throw InputError( concat( src, ": reaction ", label, ": species '", network.species_names[t.species],
                                              "' appears twice on one side; give it once with its total coefficient" ) );
            }
        }
    }
}

} // namespace morula::ode
