// SBML documents -> ReactionNetwork through libsbml: what the reader refuses, species and compartments,
// and each reaction's kinetic law turned into one or two mass-action reactions (the law's math itself is
// detail/SbmlKineticLaw.hpp's). Only these two files include libsbml, so it stays a private dependency.
#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/ode/ModelReaders.hpp>

#if MORULA_HAVE_SBML
#include <morula/ode/detail/ModelParsing.hpp>
#include <morula/ode/detail/SbmlKineticLaw.hpp>

#include <sbml/SBMLTypes.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>
#endif

namespace morula::ode
{

#if MORULA_HAVE_SBML
namespace
{
using core::detail::concat;
using detail::Monomial;
using detail::Polynomial;
using detail::Side;
using detail::SpeciesInfo;
LIBSBML_CPP_NAMESPACE_USE
// morula::ode::Reaction hides libsbml's Reaction inside this namespace.
using SbmlReaction = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Reaction;
using SpeciesTable = std::unordered_map<std::string, SpeciesInfo>;

// Every reason the model cannot be read, so that one error lists them all.
struct Problems
{
    std::vector<std::string> list;
    template <class... Args>
    void operator()( Args&&... args )
    {
        list.push_back( concat( args... ) );
    }
};

// The document itself: readable, valid, a model, Level 2 or 3.
std::unique_ptr<SBMLDocument> read_document( const std::string& path )
{
    std::error_code ec;
    if ( !std::filesystem::is_regular_file( path, ec ) )
        throw core::InputError( "cannot open the SBML file '" + path + "'" );
    std::unique_ptr<SBMLDocument> doc( readSBMLFromFile( path.c_str() ) );
    if ( !doc )
        throw core::InputError( "libsbml could not read '" + path + "'" );
    {
        std::string errors;
        for ( unsigned i = 0; i < doc->getNumErrors(); ++i )
        {
            const SBMLError* e = doc->getError( i );
            if ( e->isError() || e->isFatal() )
                errors += concat( "\n  ", path, ":", e->getLine(), ": ", detail::trim( e->getMessage() ) );
        }
        if ( !errors.empty() )
            throw core::InputError( "'" + path + "' is not valid SBML:" + errors );
    }
    if ( doc->getModel() == nullptr )
        throw core::InputError( "'" + path + "' has no <model>" );
    if ( doc->getLevel() < 2 )
        throw core::InputError( concat( "'", path, "' is SBML Level ", doc->getLevel(),
                                        "; expected Level 2 or 3 (convert it, e.g. with libsbml's converters)" ) );
    return doc;
}

// What changes values outside the reactions, which a network of mass-action reactions cannot express.
void refuse_non_reaction_dynamics( const Model* model, Problems& problem )
{
    for ( unsigned i = 0; i < model->getNumRules(); ++i )
    {
        const Rule* r = model->getRule( i );
        problem( r->isAlgebraic() ? "an algebraic rule" : r->isRate() ? "a rate rule" : "an assignment rule",
                 r->isAlgebraic() ? std::string() : " for '" + r->getVariable() + "'",
                 ": rules change values outside the reactions; expected none" );
    }
    for ( unsigned i = 0; i < model->getNumEvents(); ++i )
        problem( "event '", model->getEvent( i )->getId(), "': events change values at run time; expected none" );
    for ( unsigned i = 0; i < model->getNumInitialAssignments(); ++i )
        problem( "initial assignment to '", model->getInitialAssignment( i )->getSymbol(),
                 "': expected plain initial values" );
    if ( model->isSetConversionFactor() )
        problem( "the model has a conversionFactor; expected none (species amounts change as the reactions say)" );
    for ( unsigned i = 0; i < model->getNumParameters(); ++i )
        if ( !model->getParameter( i )->getConstant() )
            problem( "parameter '", model->getParameter( i )->getId(),
                     "' is not constant; expected constant parameters" );
}

// Species in model order: names and initial concentrations into `net`, compartment sizes into the table.
SpeciesTable read_species( const Model* model, ReactionNetwork& net, Problems& problem )
{
    SpeciesTable species;
    for ( unsigned i = 0; i < model->getNumSpecies(); ++i )
    {
        const Species* s = model->getSpecies( i );
        const std::string& id = s->getId();
        SpeciesInfo info;
        info.index = static_cast<int>( i );
        info.compartment = s->getCompartment();
        info.only_substance = s->getHasOnlySubstanceUnits();
        const Compartment* c = model->getCompartment( info.compartment );
        if ( c == nullptr || !c->isSetSize() || !( c->getSize() > 0.0 ) || !std::isfinite( c->getSize() ) )
            problem( "species '", id, "': its compartment '", info.compartment,
                     "' has no positive size; expected a size to convert amounts and rates to concentrations" );
        else if ( !c->getConstant() )
            problem( "compartment '", info.compartment, "' is not constant; expected a constant size" );
        else
            info.volume = c->getSize();
        if ( s->getBoundaryCondition() || s->getConstant() )
            problem( "species '", id, "' has ", s->getBoundaryCondition() ? "boundaryCondition" : "constant",
                     "=true; Morula networks have no fixed species: make it an ordinary species or replace it by a "
                     "parameter" );
        if ( s->isSetConversionFactor() )
            problem( "species '", id, "' has a conversionFactor; expected none" );
        double x0 = 0.0;
        if ( s->isSetInitialConcentration() )
            x0 = s->getInitialConcentration();
        else if ( s->isSetInitialAmount() )
            x0 = s->getInitialAmount() / info.volume;
        else
            problem( "species '", id, "' has neither initialConcentration nor initialAmount" );
        net.species_names.push_back( id );
        net.initial_state.push_back( x0 );
        species.emplace( id, info );
    }
    return species;
}

// One SBML reaction -> one mass-action reaction (one term) or two (forward minus reverse), appended to
// `net`; or a problem saying why not.
void read_reaction( const SbmlReaction* r, const Model* model, unsigned level, const SpeciesTable& species,
                    ReactionNetwork& net, Problems& problem )
{
    const std::string& id = r->getId();
    const KineticLaw* law = r->getKineticLaw();
    const ASTNode* math = law != nullptr && law->isSetMath() ? law->getMath() : nullptr;
    auto reject = [&]( const std::string& why ) {
        problem( "reaction '", id, "' (", law == nullptr ? std::string( "no kinetic law" ) : detail::sbml_formula( math ),
                 "): ", why );
    };
    if ( math == nullptr )
    {
        reject( "no kinetic law; expected a mass-action law" );
        return;
    }
    if ( r->isSetFast() && r->getFast() )
    {
        reject( "fast=\"true\" asks for a quasi-steady-state treatment; expected fast=\"false\"" );
        return;
    }

    Side reactants, products;
    std::string why;
    auto collect = [&]( const ListOf* list, Side& side ) {
        for ( unsigned j = 0; j < list->size(); ++j )
        {
            const auto* ref = static_cast<const SpeciesReference*>( list->get( j ) );
            if ( ref->isSetStoichiometryMath() )
                why = concat( "species '", ref->getSpecies(), "' has stoichiometryMath; expected a number" );
            else if ( level >= 3 && !ref->isSetStoichiometry() )
                why = concat( "species '", ref->getSpecies(), "' has no stoichiometry" );
            else if ( species.count( ref->getSpecies() ) == 0 )
                why = concat( "refers to the unknown species '", ref->getSpecies(), "'" );
            else
            {
                const double v = ref->getStoichiometry();
                if ( !( v >= 0.0 && v <= 1.0e6 && v == std::floor( v ) ) )
                    why = concat( "species '", ref->getSpecies(), "' has the stoichiometry ", v,
                                  "; expected a non-negative integer" );
                else if ( v > 0.0 )
                    side[ref->getSpecies()] += static_cast<int>( v );
            }
        }
    };
    collect( r->getListOfReactants(), reactants );
    collect( r->getListOfProducts(), products );
    if ( !why.empty() )
    {
        reject( why );
        return;
    }

    Polynomial expanded;
    if ( !detail::expand_kinetic_law( *model, *law, species, expanded, why ) )
    {
        reject( why );
        return;
    }
    const Polynomial terms = detail::combine_like_terms( expanded );

    // One term: forward only. Two terms of opposite sign: forward minus reverse, split into two reactions.
    // The reversible attribute is informational in SBML (the law alone fixes the dynamics), so it is not
    // consulted.
    struct Part
    {
        Side left, right;
        double coefficient;
        std::string name;
    };
    std::vector<Part> parts;
    if ( terms.size() == 1 )
    {
        if ( terms[0].coefficient < 0.0 )
        {
            reject( "the law is negative (a rate constant times species must be >= 0)" );
            return;
        }
        Part p;
        if ( !detail::match_mass_action( terms[0], reactants, products, p.left, p.right, why ) )
        {
            reject( why + "; expected k * (each reactant ^ its stoichiometry)" );
            return;
        }
        p.coefficient = terms[0].coefficient;
        p.name = id;
        parts.push_back( std::move( p ) );
    }
    else if ( terms.size() == 2 && ( terms[0].coefficient < 0.0 ) != ( terms[1].coefficient < 0.0 ) )
    {
        const Monomial& fwd = terms[0].coefficient >= 0.0 ? terms[0] : terms[1];
        const Monomial& rev = terms[0].coefficient >= 0.0 ? terms[1] : terms[0];
        Part f, b;
        if ( !detail::match_mass_action( fwd, reactants, products, f.left, f.right, why ) )
        {
            reject( "forward term: " + why + "; expected kf * prod(reactants) - kr * prod(products)" );
            return;
        }
        if ( !detail::match_mass_action( rev, products, reactants, b.left, b.right, why ) )
        {
            reject( "reverse term: " + why + "; expected kf * prod(reactants) - kr * prod(products)" );
            return;
        }
        f.coefficient = fwd.coefficient;
        b.coefficient = -rev.coefficient;
        f.name = id;
        b.name = id + "_reverse";
        parts.push_back( std::move( f ) );
        parts.push_back( std::move( b ) );
    }
    else
    {
        reject( concat( "the law expands to ", terms.size(),
                        " terms; expected one mass-action term, or forward minus reverse" ) );
        return;
    }

    // The law is in amount/time; a species' concentration changes by (b - a) * law / V, so every species whose
    // amount changes must share one compartment size V, and k = coefficient / V.
    bool ok = true;
    for ( Part& p : parts )
    {
        std::string first;
        double volume = 0.0;
        std::vector<StoichiometryTerm> left, right;
        for ( const auto& [s, a] : p.left )
            left.push_back( { species.at( s ).index, a } );
        for ( const auto& [s, b] : p.right )
            right.push_back( { species.at( s ).index, b } );
        std::map<std::string, int> net_change;
        for ( const auto& [s, a] : p.left )
            net_change[s] -= a;
        for ( const auto& [s, b] : p.right )
            net_change[s] += b;
        for ( const auto& [s, d] : net_change )
        {
            if ( d == 0 )
                continue;
            const SpeciesInfo& info = species.at( s );
            if ( first.empty() )
            {
                first = s;
                volume = info.volume;
            }
            else if ( info.volume != volume )
            {
                reject( concat( "species '", first, "' (compartment size ", volume, ") and '", s,
                                "' (compartment '", info.compartment, "', size ", info.volume,
                                ") both change; one rate constant per reaction needs one compartment size" ) );
                ok = false;
                break;
            }
        }
        if ( !ok )
            break; // recorded in `problems`, which makes the reader throw below
        Reaction out;
        out.reactants = std::move( left );
        out.products = std::move( right );
        out.rate_constant = first.empty() ? p.coefficient : p.coefficient / volume;
        out.name = p.name;
        net.reactions.push_back( std::move( out ) );
    }
}

} // namespace
#endif

ReactionNetwork read_sbml_model( const std::string& path )
{
#if !MORULA_HAVE_SBML
    throw core::InputError( "'" + path + "' is an SBML model, but this Morula was built without libsbml; install "
                            "libsbml (Debian/Ubuntu: libsbml5-dev; Spack: libsbml) and reconfigure with "
                            "-DMorula_ENABLE_SBML=ON" );
#else
    const std::unique_ptr<SBMLDocument> doc = read_document( path );
    const Model* model = doc->getModel();
    Problems problem;
    refuse_non_reaction_dynamics( model, problem );
    ReactionNetwork net;
    net.source = path;
    const SpeciesTable species = read_species( model, net, problem );
    for ( unsigned i = 0; i < model->getNumReactions(); ++i )
        read_reaction( model->getReaction( i ), model, doc->getLevel(), species, net, problem );

    const std::vector<std::string>& problems = problem.list;
    if ( !problems.empty() )
    {
        std::string message = concat( "'", path, "' cannot be read as a mass-action network (", problems.size(),
                                      problems.size() == 1 ? " problem" : " problems", "):" );
        for ( const std::string& p : problems )
            message += "\n  - " + p;
        throw core::InputError( message );
    }
    validate( net );
    return net;
#endif
}

} // namespace morula::ode
