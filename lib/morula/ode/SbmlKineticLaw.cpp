// An SBML kinetic law's math -> a polynomial in the species, and the mass-action test of its terms.
#include <morula/Config.hpp>

#if MORULA_HAVE_SBML
#include <morula/core/Error.hpp>
#include <morula/ode/detail/SbmlKineticLaw.hpp>

#include <cmath>
#include <cstdlib>
#include <utility>

namespace morula::ode::detail
{
LIBSBML_CPP_NAMESPACE_USE
using core::detail::concat;

namespace
{

//! expand_kinetic_law's recursion over the law's AST; `why()` after a false return.
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
                return fail( "divides by '", sbml_formula( node->getChild( 1 ) ),
                             "', which is not a constant (mass action divides only by constants)" );
            if ( b[0].coefficient == 0.0 )
                return fail( "divides by zero ('", sbml_formula( node->getChild( 1 ) ), "')" );
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
                return fail( "raises to the power '", sbml_formula( node->getChild( 1 ) ),
                             "', which is not a constant integer in [0, 64]" );
            if ( base.size() != 1 )
                return fail( "raises the sum '", sbml_formula( node->getChild( 0 ) ), "' to a power" );
            Monomial m;
            for ( int i = 0; i < static_cast<int>( e ); ++i )
                m = multiply( { m }, base )[0];
            out = { m };
            return true;
        }
        default:
            return fail( "uses '", sbml_formula( node ), "', which is not a product of constants and species" );
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

} // namespace

std::string sbml_formula( const ASTNode* node )
{
    if ( node == nullptr )
        return "(no math)";
    char* text = SBML_formulaToL3String( node );
    std::string result = text ? text : "?";
    std::free( text );
    return result;
}

bool expand_kinetic_law( const Model& model, const KineticLaw& law,
                         const std::unordered_map<std::string, SpeciesInfo>& species, Polynomial& out, std::string& why )
{
    LawAnalyzer analyzer( model, law, species );
    if ( analyzer.analyze( law.getMath(), out ) )
        return true;
    why = analyzer.why();
    return false;
}

Polynomial combine_like_terms( const Polynomial& p )
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

bool match_mass_action( const Monomial& term, const Side& reactants, const Side& products, Side& left, Side& right,
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

} // namespace morula::ode::detail
#endif
