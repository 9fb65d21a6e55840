/*!
  \file detail/SbmlKineticLaw.hpp
  \brief For Morula's own .cpp files only: an SBML kinetic law's math as a polynomial in the species, and
         the test that one of its terms is a mass-action rate of the reaction it belongs to.

  Reading the SBML document (species, compartments, what the reader refuses) is SbmlModel.cpp's; this
  is the translation of one law's MathML into Morula's terms.
*/
#ifndef MORULA_ODE_DETAIL_SBMLKINETICLAW_HPP
#define MORULA_ODE_DETAIL_SBMLKINETICLAW_HPP

#include <morula/Config.hpp>

#if MORULA_HAVE_SBML
#include <sbml/SBMLTypes.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace morula::ode::detail
{

//! coefficient * prod species^exponent; the coefficient gathers numbers, parameters and compartment sizes.
struct Monomial
{
    double coefficient = 1.0;
    std::map<std::string, int> exponents;
};
using Polynomial = std::vector<Monomial>; // a sum of monomials

//! Species id -> exponent or stoichiometry: one side of a reaction.
using Side = std::map<std::string, int>;

struct SpeciesInfo
{
    int index = 0;
    double volume = 1.0;         // size of its compartment
    std::string compartment;
    bool only_substance = false; // hasOnlySubstanceUnits: its symbol in math is an amount, not a concentration
};

//! The math as SBML Level 3 infix text, for messages.
std::string sbml_formula( const LIBSBML_CPP_NAMESPACE_QUALIFIER ASTNode* node );

/*!
  Expands the law's math into a sum of monomials. Only +, -, *, / by a constant and integer powers of
  numbers, parameters (local ones first), compartments and species are accepted; otherwise returns false
  and says why in `why` ("the law ...").
*/
bool expand_kinetic_law( const LIBSBML_CPP_NAMESPACE_QUALIFIER Model& model,
                         const LIBSBML_CPP_NAMESPACE_QUALIFIER KineticLaw& law,
                         const std::unordered_map<std::string, SpeciesInfo>& species, Polynomial& out, std::string& why );

//! Sums monomials with the same species exponents ("k1*A + k2*A" is one mass-action term).
Polynomial combine_like_terms( const Polynomial& p );

/*!
  Checks that `term` is k * prod_{reactants} X^a; a species of the law that is no reactant is a catalyst
  and joins both sides with its exponent, which leaves its net change and the rate law exactly as written.
*/
bool match_mass_action( const Monomial& term, const Side& reactants, const Side& products, Side& left, Side& right,
                        std::string& why );

} // namespace morula::ode::detail

#endif
#endif
