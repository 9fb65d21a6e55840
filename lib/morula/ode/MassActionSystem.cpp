#include <morula/ode/MassActionSystem.hpp>

#include <algorithm>
#include <map>
#include <utility>

namespace morula::ode
{

MassActionStructure compile_mass_action( const ReactionNetwork& network )
{
    validate( network );
    MassActionStructure s;
    s.species = network.species_count();
    s.reactions = network.reaction_count();
    s.initial_state = network.initial_state;
    const int n = s.species;

    // Reactant factors by reaction.
    s.reactant_offsets.push_back( 0 );
    for ( const Reaction& r : network.reactions )
    {
        int order = 0;
        for ( const StoichiometryTerm& t : r.reactants )
        {
            s.reactant_species.push_back( t.species );
            s.reactant_order.push_back( t.coefficient );
            order += t.coefficient;
        }
        s.max_order = std::max( s.max_order, order );
        s.reactant_offsets.push_back( static_cast<int>( s.reactant_species.size() ) );
        s.rate_constants.push_back( r.rate_constant );
    }

    // Net stoichiometry nu_ir = b_ir - a_ir, by reaction (species ascending) and by species.
    std::vector<std::vector<std::pair<int, double>>> by_species( n );
    s.reaction_term_offsets.push_back( 0 );
    for ( int r = 0; r < s.reactions; ++r )
    {
        std::map<int, int> net;
        for ( const StoichiometryTerm& t : network.reactions[r].reactants )
            net[t.species] -= t.coefficient;
        for ( const StoichiometryTerm& t : network.reactions[r].products )
            net[t.species] += t.coefficient;
        for ( const auto& [species, nu] : net )
        {
            if ( nu == 0 )
                continue; // a catalyst: its own rate of change is untouched by r
            s.reaction_term_species.push_back( species );
            s.reaction_term_coefficient.push_back( nu );
            by_species[species].emplace_back( r, nu );
        }
        s.reaction_term_offsets.push_back( static_cast<int>( s.reaction_term_species.size() ) );
    }
    s.species_term_offsets.push_back( 0 );
    for ( int i = 0; i < n; ++i )
    {
        for ( const auto& [r, nu] : by_species[i] )
        {
            s.species_term_reaction.push_back( r );
            s.species_term_coefficient.push_back( nu );
        }
        s.species_term_offsets.push_back( static_cast<int>( s.species_term_reaction.size() ) );
    }

    // Jacobian: J_iq = sum over reactions r changing i with q among r's reactants of nu_ir d rate_r/d x_q.
    // Row i's nonzeros in ascending column order, the diagonal always present.
    s.jacobian_row_offsets.push_back( 0 );
    s.jacobian_contribution_offsets.push_back( 0 );
    for ( int i = 0; i < n; ++i )
    {
        std::map<int, std::vector<std::pair<int, int>>> row; // column -> (reaction, factor position)
        row[i];
        for ( const auto& [r, nu] : by_species[i] )
        {
            (void)nu;
            for ( int p = s.reactant_offsets[r]; p < s.reactant_offsets[r + 1]; ++p )
                row[s.reactant_species[p]].emplace_back( r, p );
        }
        for ( const auto& [q, contributions] : row )
        {
            if ( q == i )
                s.jacobian_diagonal.push_back( static_cast<int>( s.jacobian_columns.size() ) );
            s.jacobian_columns.push_back( q );
            for ( const auto& [r, p] : contributions )
            {
                s.contribution_reaction.push_back( r );
                s.contribution_factor.push_back( p );
                const auto it = std::find_if( by_species[i].begin(), by_species[i].end(),
                                              [r = r]( const auto& e ) { return e.first == r; } );
                s.contribution_coefficient.push_back( it->second );
            }
            s.jacobian_contribution_offsets.push_back( static_cast<int>( s.contribution_reaction.size() ) );
        }
        s.jacobian_row_offsets.push_back( static_cast<int>( s.jacobian_columns.size() ) );
    }
    return s;
}

} // namespace morula::ode
