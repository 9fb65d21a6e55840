/*!
  \file ReactionNetwork.hpp
  \brief A mass-action reaction network as the host sees it: species, reactions with integer
         stoichiometries and one rate constant each, initial state, and the run settings that model
         files may carry (sampling times, saved species, tolerances).

  Every reader (text, LASSIE/cupSODA folder, SBML) and the synthetic generator produce this one type;
  MassActionSystem compiles it into the sparse device structures the integrators use.
*/
#ifndef MORULA_ODE_REACTIONNETWORK_HPP
#define MORULA_ODE_REACTIONNETWORK_HPP

#include <optional>
#include <string>
#include <vector>

namespace morula::ode
{

//! One species with its stoichiometric coefficient in a reaction (coefficient >= 1).
struct StoichiometryTerm
{
    int species = 0;
    int coefficient = 1;
};

//! R: sum a_j S_j --k--> sum b_j S_j. Each species appears at most once per side.
struct Reaction
{
    std::vector<StoichiometryTerm> reactants; // A row: mass-action rate k * prod X_j^a_j
    std::vector<StoichiometryTerm> products;  // B row
    double rate_constant = 0.0;
    std::string name; // optional (SBML id, text-model label); empty means "R<index>"
};

//! Settings a model file may carry alongside the network; every field is optional and the command line
//! overrides it.
struct RunSettings
{
    std::vector<double> sample_times;        // strictly increasing, >= 0
    std::vector<int> saved_species;          // indices into species_names; empty means all
    std::vector<double> absolute_tolerances; // one per species, or one for all
    std::optional<double> relative_tolerance;
};

struct ReactionNetwork
{
    std::vector<std::string> species_names; // unique, non-empty
    std::vector<Reaction> reactions;
    std::vector<double> initial_state; // one per species (concentrations), >= 0
    RunSettings settings;
    std::string source; // where it came from, for messages ("model.txt", "synthetic(seed=3)")

    int species_count() const { return static_cast<int>( species_names.size() ); }
    int reaction_count() const { return static_cast<int>( reactions.size() ); }
};

//! Throws core::InputError naming `network.source` and the reaction or species when the network is
//! malformed: species index out of range, coefficient < 1, a species twice on one side, negative or
//! non-finite rate constant or initial value, duplicate or empty species names, wrong initial_state size;
//! and when the settings are inconsistent: sample times negative or not strictly increasing, a saved species
//! out of range or listed twice, absolute tolerances neither one nor one per species, a tolerance <= 0.
void validate( const ReactionNetwork& network );

} // namespace morula::ode

#endif
