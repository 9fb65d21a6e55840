#include <morula/core/Error.hpp>
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/detail/ModelParsing.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace morula::ode
{

namespace
{
using core::detail::concat;

//! Builds the network line by line; names the source and line in every message.
class TextParser
{
  public:
    explicit TextParser( const std::string& source )
    {
        m_net.source = source;
    }

    void line( int number, const std::string& raw )
    {
        m_line = number;
        const std::string text = detail::trim( raw.substr( 0, raw.find( '#' ) ) );
        if ( text.empty() )
            return;
        if ( text.find( "->" ) != std::string::npos )
            reaction( text );
        else if ( text.compare( 0, 4, "init" ) == 0 && text.size() > 4 && std::isspace( (unsigned char)text[4] ) )
            init( text.substr( 5 ) );
        else if ( text.find( '=' ) != std::string::npos )
            setting( text );
        else
            fail( "cannot read '", text,
                  "'; expected a reaction ('A + B -> C, k=0.3'), an initial value ('init A = 1') or a setting "
                  "('sample_times = ...', 'save = ...', 'atol = ...', 'rtol = ...')" );
    }

    ReactionNetwork finish()
    {
        m_net.initial_state.assign( m_net.species_names.size(), 0.0 );
        for ( const Pending& p : m_inits )
        {
            m_line = p.line;
            const auto it = m_index.find( p.name );
            if ( it == m_index.end() )
                fail( "initial value for unknown species '", p.name,
                      "'; expected a species that appears in some reaction" );
            m_net.initial_state[it->second] = p.value;
        }
        for ( const Pending& p : m_saved )
        {
            m_line = p.line;
            const auto it = m_index.find( p.name );
            if ( it == m_index.end() )
                fail( "saved species '", p.name, "' is unknown; expected a species that appears in some reaction" );
            m_net.settings.saved_species.push_back( it->second );
        }
        if ( m_net.reactions.empty() )
            throw core::InputError( m_net.source + ": no reactions; expected at least one line 'A -> B, k=1'" );
        validate( m_net );
        return std::move( m_net );
    }

  private:
    struct Pending
    {
        std::string name;
        double value = 0.0;
        int line = 0;
    };

    template <class... Args>
    [[noreturn]] void fail( Args&&... args ) const
    {
        throw core::InputError( concat( m_net.source, ":", m_line, ": ", std::forward<Args>( args )... ) );
    }

    double number( const std::string& token, const char* what ) const
    {
        double v = 0.0;
        if ( !detail::parse_number( detail::trim( token ), v ) )
            fail( what, " '", detail::trim( token ), "' is not a number; expected a finite decimal like 0.3 or 1e-3" );
        return v;
    }

    int species( const std::string& name )
    {
        const auto it = m_index.find( name );
        if ( it != m_index.end() )
            return it->second;
        const int index = m_net.species_count();
        m_index.emplace( name, index );
        m_net.species_names.push_back( name );
        return index;
    }

    std::vector<StoichiometryTerm> side( const std::string& text, const char* side_name )
    {
        std::vector<StoichiometryTerm> terms;
        const std::string t = detail::trim( text );
        if ( t.empty() )
            return terms;
        std::size_t pos = 0;
        while ( true )
        {
            const std::size_t plus = t.find( '+', pos );
            const std::string term = detail::trim( t.substr( pos, plus == std::string::npos ? plus : plus - pos ) );
            if ( term.empty() )
                fail( "empty term among the ", side_name, "s '", t, "'; expected terms like 'A' or '2 A' joined by '+'" );
            std::size_t digits = 0;
            while ( digits < term.size() && std::isdigit( (unsigned char)term[digits] ) )
                ++digits;
            int coefficient = 1;
            if ( digits > 0 && !detail::parse_count( term.substr( 0, digits ), coefficient ) )
                fail( "coefficient in '", term, "' is too large" );
            const std::string name = detail::trim( term.substr( digits ) );
            if ( !detail::is_identifier( name ) )
                fail( "cannot read the ", side_name, " term '", term,
                      "'; expected an optional positive integer coefficient and a species name "
                      "([A-Za-z_][A-Za-z0-9_]*), e.g. '2 A'" );
            if ( coefficient < 1 )
                fail( "coefficient ", coefficient, " in '", term, "'; expected an integer >= 1" );
            const int s = species( name );
            for ( const StoichiometryTerm& other : terms )
                if ( other.species == s )
                    fail( "species '", name, "' is listed twice among the ", side_name,
                          "s; expected each species once per side (write '2 ", name, "')" );
            terms.push_back( { s, coefficient } );
            if ( plus == std::string::npos )
                break;
            pos = plus + 1;
        }
        return terms;
    }

    void reaction( const std::string& text )
    {
        const std::size_t arrow = text.find( "->" );
        std::string left = text.substr( 0, arrow );
        std::string right = text.substr( arrow + 2 );
        if ( right.find( "->" ) != std::string::npos )
            fail( "two '->' in one line; expected one reaction per line" );

        Reaction reaction;
        const std::size_t colon = left.find( ':' );
        if ( colon != std::string::npos )
        {
            reaction.name = detail::trim( left.substr( 0, colon ) );
            if ( !detail::is_identifier( reaction.name ) )
                fail( "reaction label '", reaction.name, "' is not a name; expected [A-Za-z_][A-Za-z0-9_]* before ':'" );
            if ( !m_labels.insert( reaction.name ).second )
                fail( "reaction label '", reaction.name, "' is used twice; expected unique labels" );
            left = left.substr( colon + 1 );
        }

        const std::size_t comma = right.find( ',' );
        if ( comma == std::string::npos )
            fail( "missing rate constant; expected ', k=<value>' after the products, e.g. 'A -> B, k=0.3'" );
        const std::string rate = detail::trim( right.substr( comma + 1 ) );
        right = right.substr( 0, comma );

        const std::size_t eq = rate.find( '=' );
        if ( eq == std::string::npos || detail::trim( rate.substr( 0, eq ) ) != "k" )
            fail( "cannot read the rate '", rate, "'; expected 'k=<value>'" );
        reaction.rate_constant = number( rate.substr( eq + 1 ), "rate constant" );
        if ( reaction.rate_constant < 0.0 )
            fail( "rate constant k=", reaction.rate_constant, " is negative; expected a value >= 0" );

        reaction.reactants = side( left, "reactant" );
        reaction.products = side( right, "product" );
        if ( reaction.reactants.empty() && reaction.products.empty() )
            fail( "reaction with neither reactants nor products; expected at least one side" );
        m_net.reactions.push_back( std::move( reaction ) );
    }

    void init( const std::string& text )
    {
        const std::size_t eq = text.find( '=' );
        if ( eq == std::string::npos )
            fail( "cannot read 'init ", text, "'; expected 'init <species> = <value>'" );
        const std::string name = detail::trim( text.substr( 0, eq ) );
        if ( !detail::is_identifier( name ) )
            fail( "'", name, "' is not a species name; expected 'init <species> = <value>'" );
        const double value = number( text.substr( eq + 1 ), "initial value" );
        if ( value < 0.0 )
            fail( "initial value ", value, " of '", name, "' is negative; expected a value >= 0" );
        for ( const Pending& p : m_inits )
            if ( p.name == name )
                fail( "second initial value for '", name, "' (the first is on line ", p.line,
                      "); expected one 'init' per species" );
        m_inits.push_back( { name, value, m_line } );
    }

    std::vector<std::string> list( const std::string& text ) const
    {
        std::vector<std::string> items;
        std::size_t pos = 0;
        while ( true )
        {
            const std::size_t comma = text.find( ',', pos );
            items.push_back( detail::trim( text.substr( pos, comma == std::string::npos ? comma : comma - pos ) ) );
            if ( items.back().empty() )
                fail( "empty item in the list '", text, "'; expected values separated by ','" );
            if ( comma == std::string::npos )
                return items;
            pos = comma + 1;
        }
    }

    //! The most sample times a linspace(...) may produce (with the ones before it).
    static constexpr std::size_t max_linspace_samples = 10000000;

    void sample_times( const std::string& value )
    {
        std::vector<double>& times = m_net.settings.sample_times;
        if ( value.compare( 0, 9, "linspace(" ) == 0 )
        {
            if ( value.back() != ')' )
                fail( "cannot read '", value, "'; expected 'linspace(<first>, <last>, <count>)'" );
            const std::vector<std::string> args = list( value.substr( 9, value.size() - 10 ) );
            int count = 0;
            if ( args.size() != 3 || !detail::parse_count( args[2], count ) || count < 2 )
                fail( "cannot read '", value,
                      "'; expected 'linspace(<first>, <last>, <count>)' with an integer count >= 2" );
            // A count is a few characters that can ask for gigabytes (the saved trajectory holds a state per
            // sample and system): a bound, not an allocation failure deep in the solver.
            if ( std::size_t( count ) > max_linspace_samples - times.size() )
                fail( "linspace count ", count, " gives more than ", max_linspace_samples,
                      " sample times; expected at most that many (sample a shorter run, or split it)" );
            const double first = number( args[0], "linspace start" );
            const double last = number( args[1], "linspace end" );
            if ( !( last > first ) )
                fail( "linspace end ", last, " is not greater than its start ", first );
            for ( int i = 0; i < count; ++i )
                times.push_back( i + 1 == count ? last : first + ( last - first ) * i / ( count - 1 ) );
        }
        else
            for ( const std::string& item : list( value ) )
                times.push_back( number( item, "sample time" ) );
        for ( std::size_t i = 0; i < times.size(); ++i )
        {
            if ( times[i] < 0.0 )
                fail( "sample time ", times[i], " is negative; expected times >= 0" );
            if ( i > 0 && !( times[i] > times[i - 1] ) )
                fail( "sample time ", times[i], " does not follow ", times[i - 1], "; expected strictly increasing times" );
        }
    }

    void setting( const std::string& text )
    {
        const std::size_t eq = text.find( '=' );
        const std::string key = detail::trim( text.substr( 0, eq ) );
        const std::string value = detail::trim( text.substr( eq + 1 ) );
        if ( key != "sample_times" && key != "save" && key != "atol" && key != "rtol" )
            fail( "unknown setting '", key, "'; expected sample_times, save, atol or rtol (or a reaction with '->')" );
        if ( !m_settings.insert( key ).second )
            fail( "setting '", key, "' is given twice; expected it once" );
        if ( value.empty() )
            fail( "setting '", key, "' has no value" );
        if ( key == "sample_times" )
            sample_times( value );
        else if ( key == "save" )
        {
            for ( const std::string& name : list( value ) )
            {
                if ( !detail::is_identifier( name ) )
                    fail( "'", name, "' is not a species name; expected 'save = A, B'" );
                for ( const Pending& p : m_saved )
                    if ( p.name == name )
                        fail( "species '", name, "' is saved twice" );
                m_saved.push_back( { name, 0.0, m_line } );
            }
        }
        else
        {
            const double v = number( value, key.c_str() );
            if ( !( v > 0.0 ) )
                fail( key, " = ", v, " is not positive; expected a tolerance > 0" );
            if ( key == "atol" )
                m_net.settings.absolute_tolerances = { v };
            else
                m_net.settings.relative_tolerance = v;
        }
    }

    ReactionNetwork m_net;
    std::unordered_map<std::string, int> m_index;
    std::unordered_set<std::string> m_labels;
    std::unordered_set<std::string> m_settings;
    std::vector<Pending> m_inits;
    std::vector<Pending> m_saved;
    int m_line = 0;
};
} // namespace

ReactionNetwork parse_text_model( const std::string& text, const std::string& source )
{
    TextParser parser( source );
    const std::vector<std::string> lines = detail::split_lines( text );
    for ( std::size_t i = 0; i < lines.size(); ++i )
        parser.line( static_cast<int>( i ) + 1, lines[i] );
    return parser.finish();
}

ReactionNetwork read_text_model( const std::string& path )
{
    return parse_text_model( detail::read_file( path ), path );
}

ReactionNetwork read_model( const std::string& path )
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status status = fs::status( path, ec );
    if ( ec || !fs::exists( status ) )
        throw core::InputError( "model '" + path + "' does not exist; expected a model file or a LASSIE folder" );
    if ( fs::is_directory( status ) )
        return read_folder_model( path );
    std::string ext = fs::path( path ).extension().string();
    std::transform( ext.begin(), ext.end(), ext.begin(), []( unsigned char c ) { return std::tolower( c ); } );
    if ( ext == ".xml" || ext == ".sbml" )
        return read_sbml_model( path );
    return read_text_model( path );
}

} // namespace morula::ode
