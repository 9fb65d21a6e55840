// Robertson's problem as a mass-action network, for the ODE benchmarks: A -> B (0.04), 2B -> B + C (3e7),
// B + C -> A + C (1e4), all of A at the start.
#ifndef MORULA_BENCHMARKS_ODE_ROBERTSONNETWORK_HPP
#define MORULA_BENCHMARKS_ODE_ROBERTSONNETWORK_HPP

#include <morula/ode/ReactionNetwork.hpp>

namespace morula::bench
{

inline ode::ReactionNetwork robertson_network()
{
    ode::ReactionNetwork net;
    net.species_names = { "A", "B", "C" };
    net.initial_state = { 1.0, 0.0, 0.0 };
    net.reactions.resize( 3 );
    net.reactions[0].reactants = { { 0, 1 } };
    net.reactions[0].products = { { 1, 1 } };
    net.reactions[0].rate_constant = 0.04;
    net.reactions[1].reactants = { { 1, 2 } };
    net.reactions[1].products = { { 1, 1 }, { 2, 1 } };
    net.reactions[1].rate_constant = 3e7;
    net.reactions[2].reactants = { { 1, 1 }, { 2, 1 } };
    net.reactions[2].products = { { 0, 1 }, { 2, 1 } };
    net.reactions[2].rate_constant = 1e4;
    net.source = "robertson";
    return net;
}

} // namespace morula::bench

#endif
