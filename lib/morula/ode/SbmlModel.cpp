// Mass-action SBML through libsbml. Only this file includes libsbml, so it stays a private dependency.
#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/ode/ModelReaders.hpp>

#if MORULA_HAVE_SBML
#include <morula/ode/detail/ModelParsing.hpp>

#include <sbml/SBMLTypes.h>

#include <cmath>
#include <cstdlib>
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
LIBSBML_CPP_NAMESPACE_USE
// morula::ode::Reaction hides libsbml's Reaction inside this namespace.
using SbmlReaction = ::LIBSBML_CPP_NAMESPACE_QUALIFIER Reaction;

//! coefficient * prod species^exponent; the coefficient gathers numbers, parameters and compartment sizes.
struct Monomial
{
    double coefficient = 1.0;
    std::map<std::string, int> exponents;
};
using Polynomial = std::vector<Monomial>; // a sum of monomials

struct SpeciesInfo
{
    int index = 0;
    double volume = 1.0;         // size of its compartment
    std::string compartment;
    bool only_substance = false; // hasOnlySubstanceUnits: its symbol in math is an amount, not a concentration
};

std::string formula( const ASTNode* node )
{
    if ( node == nullptr )
        return "(no math)";
    char* text = SBML_formulaToL3String( node );
    std::string result = text ? text : "?";
    std::free( text );
    return result;
}

//! Expands a kinetic law into a sum of monomials, or says why it cannot: only +, -, *, / by a constant and
//! integer powers of numbers, parameters, compartments and species are accepted.
class LawAnalyzer
{
  public:
    LawAnalyzer( const Model& model, const KineticLaw& law, const std::unordered_map<std::string, SpeciesInfo>& species )
        : m_model( model )
        , m_law( law )
        , m_species( species )
    {
    }

    bool analyze( const ASTNode* node, Polynomial& out )
    {
        if ( node == nullptr )
            return fail( "has no math" );
        const ASTNodeType_t type = node->getType();
        const unsigned n = node->getNumChildren();
        if ( node->isInteger() ) // getReal() is meant for real nodes only (and gives 0 for <cn type="integer">)
        {
            out = { Monomial{ static_cast<double>( node->getInteger() ), {} } };
            return true;
        }
        if ( node->isRational() )
        {
            out = { Monomial{ static_cast<double>( node->getNumerator() ) / node->getDenominator(), {} } };
            return true;
        }
        if ( node->isReal() || type == AST_NAME_AVOGADRO )
        {
            out = { Monomial{ node->getReal(), {} } };
            return true;
        }
        switch ( type )
        {
        case AST_NAME:
            return name( node->getName() ? node->getName() : "", out );
        case AST_TIMES:
        {
            out = { Monomial{} };
            for ( unsigned i = 0; i < n; ++i )
            {
                Polynomial factor;
                if ( !analyze( node->getChild( i ), factor ) )
                    return false;
                out = multiply( out, factor );
            }
            return true;
        }
        case AST_PLUS:
        {
            out.clear();
            for ( unsigned i = 0; i < n; ++i )
            {
                Polynomial term;
                if ( !analyze( node->getChild( i ), term ) )
                    return false;
                out.insert( out.end(), term.begin(), term.end() );
            }
            return true;
        }
        case AST_MINUS:
        {
            if ( n != 1 && n != 2 )
                return fail( "has a '-' with ", n, " operands" );
            Polynomial a, b;
            if ( !analyze( node->getChild( 0 ), a ) )
                return false;
            if ( n == 1 )
            {
                out = negate( a );
                return true;
            }
            if ( !analyze( node->getChild( 1 ), b ) )
                return false;
            out = a;
            for ( const Monomial& m : negate( b ) )
                out.push_back( m );
            return true;
        }
        case AST_DIVIDE:
        {
            Polynomial a, b;
            if ( n != 2 || !analyze( node->getChild( 0 ), a ) || !analyze( node->getChild( 1 ), b ) )
                return n == 2 ? false : fail( "has a '/' with ", n, " operands" );
            if ( b.size() != 1 || !b[0].exponents.empty() )
                return fail( "divides by '", formula( node->getChild( 1 ) ),
                             "', which is not a constant (mass action divides only by constants)" );
            if ( b[0].coefficient == 0.0 )
                return fail( "divides by zero ('", formula( node->getChild( 1 ) ), "')" );
            out = a;
            for ( Monomial& m : out )
                m.coefficient /= b[0].coefficient;
            return true;
        }
        case AST_POWER:
        case AST_FUNCTION_POWER:
        {
            Polynomial base, exponent;
            if ( n != 2 || !analyze( node->getChild( 0 ), base ) || !analyze( node->getChild( 1 ), exponent ) )
                return n == 2 ? false : fail( "has a power with ", n, " operands" );
            const double e = exponent.size() == 1 && exponent[0].exponents.empty() ? exponent[0].coefficient : -1.0;
            if ( !( e >= 0.0 && e <= 64.0 && e == std::floor( e ) ) )
                return fail( "raises to the power '", formula( node->getChild( 1 ) ),
                             "', which is not a constant integer in [0, 64]" );
            if ( base.size() != 1 )
                return fail( "raises the sum '", formula( node->getChild( 0 ) ), "' to a power" );
            Monomial m;
            for ( int i = 0; i < static_cast<int>( e ); ++i )
                m = multiply( { m }, base )[0];
            out = { m };
            return true;
        }
        default:
            return fail( "uses '", formula( node ), "', which is not a product of constants and species" );
        }
    }

    const std::string& why() const { return m_why; }

  private:
    template <class... Args>
    bool fail( Args&&... args )
    {
        m_why = concat( "the law ", std::forward<Args>( args )... );
        return false;
    }

    bool name( const std::string& id, Polynomial& out )
    {
        // A local parameter hides a global symbol of the same id (SBML L2 and L3).
        const Parameter* local = m_law.getLocalParameter( id );
        if ( local == nullptr )
            local = m_law.getParameter( id );
        if ( local != nullptr )
        {
            if ( !local->isSetValue() )
                return fail( "uses the local parameter '", id, "', which has no value" );
            out = { Monomial{ local->getValue(), {} } };
            return true;
        }
        const auto s = m_species.find( id );
        if ( s != m_species.end() )
        {
            Monomial m;
            m.exponents[id] = 1;
            // The symbol of an hasOnlySubstanceUnits species is its amount: volume * concentration.
            if ( s->second.only_substance )
                m.coefficient = s->second.volume;
            out = { m };
            return true;
        }
        if ( const Parameter* p = m_model.getParameter( id ) )
        {
            if ( !p->isSetValue() )
                return fail( "uses the parameter '", id, "', which has no value" );
            out = { Monomial{ p->getValue(), {} } };
            return true;
        }
        if ( const Compartment* c = m_model.getCompartment( id ) )
        {
            if ( !c->isSetSize() )
                return fail( "uses the compartment '", id, "', which has no size" );
            out = { Monomial{ c->getSize(), {} } };
            return true;
        }
        return fail( "uses '", id, "', which is neither a parameter, a species nor a compartment" );
    }

    static Polynomial negate( Polynomial p )
    {
        for ( Monomial& m : p )
            m.coefficient = -m.coefficient;
        return p;
    }

    static Polynomial multiply( const Polynomial& a, const Polynomial& b )
    {
        Polynomial product;
        for ( const Monomial& x : a )
            for ( const Monomial& y : b )
            {
                Monomial m = x;
                m.coefficient *= y.coefficient;
                for ( const auto& [s, e] : y.exponents )
                    m.exponents[s] += e;
                product.push_back( std::move( m ) );
            }
        return product;
    }

    const Model& m_model;
    const KineticLaw& m_law;
    const std::unordered_map<std::string, SpeciesInfo>& m_species;
    std::string m_why;
};

//! Sums monomials with the same species exponents ("k1*A + k2*A" is one mass-action term).
Polynomial combine( const Polynomial& p )
{
    std::map<std::map<std::string, int>, double> terms;
    std::vector<std::map<std::string, int>> order;
    for ( const Monomial& m : p )
    {
        std::map<std::string, int> key;
        for ( const auto& [s, e] : m.exponents )
            if ( e != 0 )
                key[s] = e;
        if ( terms.find( key ) == terms.end() )
            order.push_back( key );
        terms[key] += m.coefficient;
    }
    Polynomial out;
    for ( const auto& key : order )
        out.push_back( Monomial{ terms[key], key } );
    return out;
}

using Side = std::map<std::string, int>;

//! Checks that `term` is k * prod_{reactants} X^a; a species of the law that is no reactant is a catalyst
//! and joins both sides with its exponent, which leaves its net change and the rate law exactly as written.
bool match( const Monomial& term, const Side& reactants, const Side& products, Side& left, Side& right,
            std::string& why )
{
    left = reactants;
    right = products;
    for ( const auto& [s, a] : reactants )
    {
        const auto it = term.exponents.find( s );
        const int e = it == term.exponents.end() ? 0 : it->second;
        if ( e != a )
        {
            why = concat( "reactant '", s, "' has stoichiometry ", a, " but exponent ", e, " in the law" );
            return false;
        }
    }
    for ( const auto& [s, e] : term.exponents )
    {
        if ( e < 0 )
        {
            why = concat( "species '", s, "' has the negative exponent ", e, " in the law" );
            return false;
        }
        if ( reactants.count( s ) == 0 )
        {
            left[s] += e;
            right[s] += e;
        }
    }
    return true;
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
    const Model* model = doc->getModel();
    if ( model == nullptr )
        throw core::InputError( "'" + path + "' has no <model>" );
    if ( doc->getLevel() < 2 )
        throw core::InputError( concat( "'", path, "' is SBML Level ", doc->getLevel(),
                                        "; expected Level 2 or 3 (convert it, e.g. with libsbml's converters)" ) );

    std::vector<std::string> problems;
    auto problem = [&]( auto&&... args ) { problems.push_back( concat( args... ) ); };

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

    ReactionNetwork net;
    net.source = path;
    std::unordered_map<std::string, SpeciesInfo> species;
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

    for ( unsigned i = 0; i < model->getNumReactions(); ++i )
    {
        const SbmlReaction* r = model->getReaction( i );
        const std::string& id = r->getId();
        const KineticLaw* law = r->getKineticLaw();
        const ASTNode* math = law != nullptr && law->isSetMath() ? law->getMath() : nullptr;
        auto reject = [&]( const std::string& why ) {
            problem( "reaction '", id, "' (", law == nullptr ? std::string( "no kinetic law" ) : formula( math ),
                     "): ", why );
        };
        if ( math == nullptr )
        {
            reject( "no kinetic law; expected a mass-action law" );
            continue;
        }
        if ( r->isSetFast() && r->getFast() )
        {
            reject( "fast=\"true\" asks for a quasi-steady-state treatment; expected fast=\"false\"" );
            continue;
        }

        Side reactants, products;
        std::string why;
        auto collect = [&]( const ListOf* list, Side& side ) {
            for ( unsigned j = 0; j < list->size(); ++j )
            {
                const auto* ref = static_cast<const SpeciesReference*>( list->get( j ) );
                if ( ref->isSetStoichiometryMath() )
                    why = concat( "species '", ref->getSpecies(), "' has stoichiometryMath; expected a number" );
                else if ( doc->getLevel() >= 3 && !ref->isSetStoichiometry() )
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
            continue;
        }

        LawAnalyzer analyzer( *model, *law, species );
        Polynomial expanded;
        if ( !analyzer.analyze( math, expanded ) )
        {
            reject( analyzer.why() );
            continue;
        }
        const Polynomial terms = combine( expanded );

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
                continue;
            }
            Part p;
            if ( !match( terms[0], reactants, products, p.left, p.right, why ) )
            {
                reject( why + "; expected k * (each reactant ^ its stoichiometry)" );
                continue;
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
            if ( !match( fwd, reactants, products, f.left, f.right, why ) )
            {
                reject( "forward term: " + why + "; expected kf * prod(reactants) - kr * prod(products)" );
                continue;
            }
            if ( !match( rev, products, reactants, b.left, b.right, why ) )
            {
                reject( "reverse term: " + why + "; expected kf * prod(reactants) - kr * prod(products)" );
                continue;
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
            continue;
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
