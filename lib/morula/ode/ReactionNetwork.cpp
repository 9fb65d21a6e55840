#include <morula/core/Error.hpp>
#include <morula/ode/ReactionNetwork.hpp>

#include <cmath>
#include <limits>
#include <unordered_set>

namespace morula::ode
{

namespace
{
std::string reaction_label( const Reaction& reaction, int index )
{
    if ( reaction.name.empty() )
        return core::detail::concat( "reaction R", index );
    return core::detail::concat( "reaction '", reaction.name, "' (index ", index, ")" );
}

void check_side( const ReactionNetwork& network, const Reaction& reaction, int index,
                 const std::vector<StoichiometryTerm>& side, const char* side_name )
{
    using core::detail::concat;
    std::unordered_set<int> seen;
    for ( const StoichiometryTerm& term : side )
    {
        if ( term.species < 0 || term.species >= network.species_count() )
            throw core::InputError( concat( network.source, ": ", reaction_label( reaction, index ), ": ",
                                            side_name, " species index ", term.species, " is outside [0, ",
                                            network.species_count(), ")" ) );
        const std::string& name = network.species_names[term.species];
        if ( term.coefficient < 1 )
            throw core::InputError( concat( network.source, ": ", reaction_label( reaction, index ), ": ",
                                            side_name, " coefficient of '", name, "' is ", term.coefficient,
                                            "; expected an integer >= 1 (leave the species out instead of 0)" ) );
        if ( !seen.insert( term.species ).second )
            throw core::InputError( concat( network.source, ": ", reaction_label( reaction, index ), ": species '",
                                            name, "' appears twice among the ", side_name,
                                            "s; expected each species at most once per side (add the coefficients)" ) );
    }
    // A side's order (the sum of its coefficients) is an int in the compiled system: "2147483647 A +
    // 2147483647 B -> C" overflowed it (tests/fuzz/regressions/reactions_text).
    long long order = 0;
    for ( const StoichiometryTerm& term : side )
        order += term.coefficient;
    if ( order > std::numeric_limits<int>::max() )
        throw core::InputError( concat( network.source, ": ", reaction_label( reaction, index ), ": the ", side_name,
                                        " coefficients sum to ", order, "; expected at most ",
                                        std::numeric_limits<int>::max() ) );
}
} // namespace

void validate( const ReactionNetwork& network )
{
    using core::detail::concat;
    const int n = network.species_count();
    const std::string& src = network.source;

    std::unordered_set<std::string> names;
    for ( int s = 0; s < n; ++s )
    {
        const std::string& name = network.species_names[s];
        if ( name.empty() )
            throw core::InputError( concat( src, ": species ", s, " has an empty name; expected a non-empty name" ) );
        if ( !names.insert( name ).second )
            throw core::InputError( concat( src, ": species name '", name, "' is used twice (second time at index ",
                                            s, "); expected unique names" ) );
    }

    if ( static_cast<int>( network.initial_state.size() ) != n )
        throw core::InputError( concat( src, ": ", network.initial_state.size(), " initial values for ", n,
                                        " species; expected one per species" ) );
    for ( int s = 0; s < n; ++s )
    {
        const double x = network.initial_state[s];
        if ( !std::isfinite( x ) || x < 0.0 )
            throw core::InputError( concat( src, ": initial value of species '", network.species_names[s], "' is ", x,
                                            "; expected a finite value >= 0" ) );
    }

    for ( int r = 0; r < network.reaction_count(); ++r )
    {
        const Reaction& reaction = network.reactions[r];
        check_side( network, reaction, r, reaction.reactants, "reactant" );
        check_side( network, reaction, r, reaction.products, "product" );
        if ( !std::isfinite( reaction.rate_constant ) || reaction.rate_constant < 0.0 )
            throw core::InputError( concat( src, ": ", reaction_label( reaction, r ), ": rate constant is ",
                                            reaction.rate_constant, "; expected a finite value >= 0" ) );
    }

    const RunSettings& settings = network.settings;
    for ( std::size_t i = 0; i < settings.sample_times.size(); ++i )
    {
        const double t = settings.sample_times[i];
        if ( !std::isfinite( t ) || t < 0.0 )
            throw core::InputError( concat( src, ": sample time ", i, " is ", t, "; expected a finite value >= 0" ) );
        if ( i > 0 && !( t > settings.sample_times[i - 1] ) )
            throw core::InputError( concat( src, ": sample time ", i, " (", t, ") is not greater than the previous one (",
                                            settings.sample_times[i - 1], "); expected strictly increasing times" ) );
    }
    std::unordered_set<int> saved;
    for ( int s : settings.saved_species )
    {
        if ( s < 0 || s >= n )
            throw core::InputError( concat( src, ": saved species index ", s, " is outside [0, ", n, ")" ) );
        if ( !saved.insert( s ).second )
            throw core::InputError( concat( src, ": species '", network.species_names[s],
                                            "' is listed twice among the saved species" ) );
    }
    const std::size_t n_atol = settings.absolute_tolerances.size();
    if ( n_atol > 1 && n_atol != static_cast<std::size_t>( n ) )
        throw core::InputError( concat( src, ": ", n_atol, " absolute tolerances for ", n,
                                        " species; expected none, one for all, or one per species" ) );
    for ( double atol : settings.absolute_tolerances )
        if ( !std::isfinite( atol ) || !( atol > 0.0 ) )
            throw core::InputError( concat( src, ": absolute tolerance ", atol, " is not a finite value > 0" ) );
    if ( settings.relative_tolerance &&
         ( !std::isfinite( *settings.relative_tolerance ) || !( *settings.relative_tolerance > 0.0 ) ) )
        throw core::InputError( concat( src, ": relative tolerance ", *settings.relative_tolerance,
                                        " is not a finite value > 0" ) );
}

} // namespace morula::ode
