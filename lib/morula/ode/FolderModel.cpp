// LASSIE / cupSODA input folders (github.com/aresio/LASSIE src/c++/simulator.cu and header/Reader.h;
// github.com/aresio/cupSODA stoc2det.cpp): one file per array, named by what it holds.
#include <morula/core/Error.hpp>
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/detail/ModelParsing.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

namespace morula::ode
{

namespace
{
namespace fs = std::filesystem;
using core::detail::concat;

// The SI value (exact since 2019). LASSIE uses 6.022e23 and cupSODA 6.0221415e23, so their converted numbers
// differ from Morula's in the 5th and 8th digit respectively.
constexpr double avogadro = 6.02214076e23;

//! One file of the folder: its non-blank lines, each split at whitespace, with line numbers for messages.
struct Table
{
    std::string path;
    std::vector<std::vector<std::string>> rows;
    std::vector<int> line_numbers;

    template <class... Args>
    [[noreturn]] void fail( std::size_t row, Args&&... args ) const
    {
        throw core::InputError( concat( path, ":", line_numbers[row], ": ", std::forward<Args>( args )... ) );
    }
};

bool present( const std::string& dir, const char* name )
{
    std::error_code ec;
    return fs::is_regular_file( fs::path( dir ) / name, ec );
}

//! Trailing blank lines are what every editor and numpy.savetxt leave; a blank line before data would
//! shift every later row to the wrong reaction in LASSIE, so it is rejected.
Table load( const std::string& dir, const char* name )
{
    Table table;
    table.path = ( fs::path( dir ) / name ).string();
    const std::vector<std::string> lines = detail::split_lines( detail::read_file( table.path ) );
    int blank = 0;
    for ( std::size_t i = 0; i < lines.size(); ++i )
    {
        std::vector<std::string> tokens = detail::split_whitespace( lines[i] );
        if ( tokens.empty() )
        {
            if ( blank == 0 )
                blank = static_cast<int>( i ) + 1;
            continue;
        }
        if ( blank != 0 )
            throw core::InputError( concat( table.path, ":", blank, ": blank line before more data on line ", i + 1,
                                            "; expected no blank lines except at the end" ) );
        table.rows.push_back( std::move( tokens ) );
        table.line_numbers.push_back( static_cast<int>( i ) + 1 );
    }
    return table;
}

double value_at( const Table& t, std::size_t row, std::size_t col, const char* what )
{
    double v = 0.0;
    if ( !detail::parse_number( t.rows[row][col], v ) )
        t.fail( row, "column ", col + 1, ": '", t.rows[row][col], "' is not a number; expected ", what );
    return v;
}

//! A file with one value per line (c_vector, t_vector, atol_vector, cs_vector).
std::vector<double> column_file( const Table& t, const char* what )
{
    std::vector<double> values;
    for ( std::size_t r = 0; r < t.rows.size(); ++r )
    {
        if ( t.rows[r].size() != 1 )
            t.fail( r, t.rows[r].size(), " values on one line; expected one ", what,
                    " per line (LASSIE reads only the first)" );
        values.push_back( value_at( t, r, 0, what ) );
    }
    return values;
}

//! A file with one line of `count` values (M_0, MX_0, M_feed, one-row c_matrix).
std::vector<double> row_file( const Table& t, std::size_t count, const char* what, const char* count_name )
{
    if ( t.rows.size() != 1 )
        throw core::InputError( concat( t.path, ": ", t.rows.size(), " lines; expected one line of ", count, " ",
                                        what, "s separated by tabs (Morula reads one network, not one per cupSODA "
                                        "thread)" ) );
    if ( t.rows[0].size() != count )
        t.fail( 0, t.rows[0].size(), " values; expected ", count, " (", count_name, ")" );
    std::vector<double> values;
    for ( std::size_t c = 0; c < count; ++c )
        values.push_back( value_at( t, 0, c, what ) );
    return values;
}

double single_value( const Table& t, const char* what )
{
    if ( t.rows.size() != 1 || t.rows[0].size() != 1 )
        throw core::InputError( concat( t.path, ": expected a single ", what, " on the first line" ) );
    return value_at( t, 0, 0, what );
}

std::vector<std::vector<int>> matrix( const Table& t, std::size_t species )
{
    std::vector<std::vector<int>> rows;
    for ( std::size_t r = 0; r < t.rows.size(); ++r )
    {
        if ( t.rows[r].size() != species )
            t.fail( r, t.rows[r].size(), " columns; expected ", species, " (one per species, as on the first line of ",
                    "left_side)" );
        std::vector<int> row;
        for ( std::size_t c = 0; c < species; ++c )
        {
            // LASSIE writes "%d" but reads with strtod, so "1.0" or "1e0" mean 1; 1.5 or -1 mean nothing.
            const double v = value_at( t, r, c, "a non-negative integer stoichiometry" );
            if ( v < 0.0 || v != std::floor( v ) || v > 1.0e9 )
                t.fail( r, "column ", c + 1, ": '", t.rows[r][c], "' is not a non-negative integer stoichiometry" );
            row.push_back( static_cast<int>( v ) );
        }
        rows.push_back( std::move( row ) );
    }
    return rows;
}

void check_nonnegative( const Table& t, const std::vector<double>& values, bool row_layout, const char* what )
{
    for ( std::size_t i = 0; i < values.size(); ++i )
        if ( values[i] < 0.0 )
        {
            if ( row_layout )
                t.fail( 0, "column ", i + 1, ": ", what, " ", values[i], " is negative; expected >= 0" );
            t.fail( i, what, " ", values[i], " is negative; expected >= 0" );
        }
}

void write_text( const fs::path& path, const std::string& text )
{
    std::ofstream out( path, std::ios::binary | std::ios::trunc );
    out << text;
    out.close();
    if ( !out )
        throw core::IoError( "cannot write '" + path.string() + "'" );
}
} // namespace

ReactionNetwork read_folder_model( const std::string& dir )
{
    std::error_code ec;
    if ( !fs::is_directory( dir, ec ) )
        throw core::InputError( "'" + dir + "' is not a folder; expected a LASSIE / cupSODA input folder" );
    for ( const char* required : { "left_side", "right_side" } )
        if ( !present( dir, required ) )
            throw core::InputError( concat( dir, ": no file '", required, "'; a LASSIE / cupSODA folder needs ",
                                            "left_side, right_side, c_vector (or c_matrix) and M_0 (or MX_0)" ) );
    auto one_of = [&]( const char* a, const char* b ) {
        const bool has_a = present( dir, a ), has_b = present( dir, b );
        if ( has_a && has_b )
            throw core::InputError( concat( dir, ": both '", a, "' and '", b, "'; expected only one of them" ) );
        if ( !has_a && !has_b )
            throw core::InputError( concat( dir, ": neither '", a, "' nor '", b, "'; expected one of them" ) );
        return has_a ? a : b;
    };
    const char* rates_file = one_of( "c_vector", "c_matrix" );
    const char* initial_file = one_of( "M_0", "MX_0" );

    ReactionNetwork net;
    net.source = dir;

    const Table left = load( dir, "left_side" );
    const Table right = load( dir, "right_side" );
    std::optional<Table> alphabet;
    if ( present( dir, "alphabet" ) )
        alphabet = load( dir, "alphabet" );
    const Table initial = load( dir, initial_file );

    // The number of species comes from the first row of left_side, as in LASSIE and cupSODA; a model
    // without reactions takes it from the alphabet or the initial values.
    std::size_t species = 0;
    if ( !left.rows.empty() )
        species = left.rows[0].size();
    else if ( alphabet )
        for ( const auto& row : alphabet->rows )
            species += row.size();
    else if ( !initial.rows.empty() )
        species = initial.rows[0].size();

    const std::vector<std::vector<int>> a = matrix( left, species );
    const std::vector<std::vector<int>> b = matrix( right, species );
    if ( a.size() != b.size() )
        throw core::InputError( concat( right.path, ": ", b.size(), " rows but left_side has ", a.size(),
                                        "; expected one row per reaction in both" ) );

    if ( alphabet )
    {
        for ( const auto& row : alphabet->rows )
            for ( const std::string& name : row )
                net.species_names.push_back( name );
        if ( net.species_names.size() != species )
            throw core::InputError( concat( alphabet->path, ": ", net.species_names.size(), " names; expected ",
                                            species, " (one per column of left_side)" ) );
    }
    else
        for ( std::size_t s = 0; s < species; ++s )
            net.species_names.push_back( concat( "S", s ) );

    const Table rates = load( dir, rates_file );
    const std::vector<double> c = rates_file == std::string( "c_vector" )
                                      ? column_file( rates, "rate constant" )
                                      : row_file( rates, a.size(), "rate constant", "one per reaction" );
    if ( c.size() != a.size() )
        throw core::InputError( concat( rates.path, ": ", c.size(), " rate constants; expected ", a.size(),
                                        " (one per row of left_side)" ) );
    check_nonnegative( rates, c, rates_file != std::string( "c_vector" ), "rate constant" );

    net.initial_state = row_file( initial, species, "initial value", "one per species" );
    check_nonnegative( initial, net.initial_state, true, "initial value" );

    if ( present( dir, "M_feed" ) )
    {
        const Table feed = load( dir, "M_feed" );
        const std::vector<double> f = row_file( feed, species, "feed value", "one per species" );
        for ( std::size_t s = 0; s < species; ++s )
            if ( f[s] != 0.0 )
                feed.fail( 0, "column ", s + 1, " (species '", net.species_names[s], "'): feed ", f[s],
                           " is non-zero; LASSIE and cupSODA hold a fed species constant at that value, which a "
                           "Morula network cannot express; expected all zeros (or no M_feed file)" );
    }

    // modelkind: LASSIE assumes "deterministic" when the file is missing but cupSODA assumes "stochastic", so
    // a volume without a modelkind is ambiguous and rejected rather than guessed.
    bool stochastic = false;
    if ( present( dir, "modelkind" ) )
    {
        const Table kind = load( dir, "modelkind" );
        const std::string word = kind.rows.empty() ? std::string() : kind.rows[0][0];
        if ( kind.rows.size() != 1 || kind.rows[0].size() != 1 ||
             ( word != "deterministic" && word != "concentration" && word != "stochastic" && word != "number" ) )
            throw core::InputError( concat( kind.path, ":1: expected one word: deterministic, concentration, ",
                                            "stochastic or number" ) );
        stochastic = word == "stochastic" || word == "number";
    }
    else if ( present( dir, "volume" ) )
        throw core::InputError( concat( dir, ": a 'volume' file but no 'modelkind'; LASSIE would read the model as "
                                        "deterministic and cupSODA as stochastic; add modelkind" ) );

    if ( stochastic )
    {
        if ( !present( dir, "volume" ) )
            throw core::InputError( concat( dir, ": modelkind is stochastic but there is no 'volume' file; expected "
                                            "the volume (litres) to convert molecule counts to concentrations" ) );
        const Table vol = load( dir, "volume" );
        const double volume = single_value( vol, "volume" );
        if ( !( volume > 0.0 ) )
            vol.fail( 0, "volume ", volume, " is not positive; expected a volume > 0" );
        // Molecules to molar concentration, and stochastic constants c to deterministic k
        // (Gillespie 1977): k = c (N_A V)^(order-1) / prod_j a_j!, the formula cupSODA's stoc2det.cpp uses.
        const double nav = avogadro * volume;
        for ( double& x : net.initial_state )
            x /= nav;
        net.reactions.resize( a.size() );
        for ( std::size_t r = 0; r < a.size(); ++r )
        {
            int order = 0;
            double factorials = 1.0;
            for ( int coefficient : a[r] )
            {
                order += coefficient;
                for ( int i = 2; i <= coefficient; ++i )
                    factorials *= i;
            }
            net.reactions[r].rate_constant = c[r] * std::pow( nav, order - 1 ) / factorials;
        }
    }
    else
    {
        net.reactions.resize( a.size() );
        for ( std::size_t r = 0; r < a.size(); ++r )
            net.reactions[r].rate_constant = c[r];
    }

    for ( std::size_t r = 0; r < a.size(); ++r )
        for ( std::size_t s = 0; s < species; ++s )
        {
            if ( a[r][s] > 0 )
                net.reactions[r].reactants.push_back( { static_cast<int>( s ), a[r][s] } );
            if ( b[r][s] > 0 )
                net.reactions[r].products.push_back( { static_cast<int>( s ), b[r][s] } );
        }

    if ( present( dir, "t_vector" ) )
    {
        const Table t = load( dir, "t_vector" );
        net.settings.sample_times = column_file( t, "sampling time" );
        for ( std::size_t i = 0; i < net.settings.sample_times.size(); ++i )
        {
            const double ti = net.settings.sample_times[i];
            if ( ti < 0.0 || ( i > 0 && !( ti > net.settings.sample_times[i - 1] ) ) )
                t.fail( i, "sampling time ", ti, "; expected times >= 0, strictly increasing" );
        }
    }
    if ( present( dir, "cs_vector" ) )
    {
        const Table t = load( dir, "cs_vector" );
        for ( std::size_t i = 0; i < t.rows.size(); ++i )
        {
            int s = 0;
            if ( t.rows[i].size() != 1 || !detail::parse_count( t.rows[i][0], s ) ||
                 s >= static_cast<int>( species ) )
                t.fail( i, "expected one species index in [0, ", species, ") per line" );
            for ( int other : net.settings.saved_species )
                if ( other == s )
                    t.fail( i, "species index ", s, " is listed twice" );
            net.settings.saved_species.push_back( s );
        }
    }
    if ( present( dir, "atol_vector" ) )
    {
        const Table t = load( dir, "atol_vector" );
        net.settings.absolute_tolerances = column_file( t, "absolute tolerance" );
        const std::size_t n = net.settings.absolute_tolerances.size();
        if ( n != 1 && n != species )
            throw core::InputError( concat( t.path, ": ", n, " tolerances; expected one per species (", species,
                                            ") or one for all" ) );
        for ( std::size_t i = 0; i < n; ++i )
            if ( !( net.settings.absolute_tolerances[i] > 0.0 ) )
                t.fail( i, "absolute tolerance ", net.settings.absolute_tolerances[i], " is not > 0" );
    }
    if ( present( dir, "rtol" ) )
    {
        const Table t = load( dir, "rtol" );
        net.settings.relative_tolerance = single_value( t, "relative tolerance" );
        if ( !( *net.settings.relative_tolerance > 0.0 ) )
            t.fail( 0, "relative tolerance ", *net.settings.relative_tolerance, " is not > 0" );
    }
    if ( present( dir, "reaction_names" ) )
    {
        // Morula's own file: one name per line, an empty line for an unnamed reaction, so it is read raw.
        const std::string path = ( fs::path( dir ) / "reaction_names" ).string();
        std::vector<std::string> names = detail::split_lines( detail::read_file( path ) );
        if ( names.size() != net.reactions.size() )
            throw core::InputError( concat( path, ": ", names.size(), " lines; expected ", net.reactions.size(),
                                            " (one per reaction, empty for an unnamed one)" ) );
        for ( std::size_t r = 0; r < names.size(); ++r )
            net.reactions[r].name = detail::trim( names[r] );
    }

    validate( net );
    return net;
}

void write_folder_model( const ReactionNetwork& network, const std::string& dir )
{
    validate( network );
    for ( const std::string& name : network.species_names )
        if ( detail::split_whitespace( name ).size() != 1 )
            throw core::InputError( concat( network.source, ": species name '", name,
                                            "' contains white space, which the alphabet file cannot hold" ) );
    for ( const Reaction& r : network.reactions )
        if ( r.name != detail::trim( r.name ) || r.name.find( '\n' ) != std::string::npos )
            throw core::InputError( concat( network.source, ": reaction name '", r.name,
                                            "' has surrounding white space or a line break, which the reaction_names "
                                            "file cannot hold" ) );

    std::error_code ec;
    fs::create_directories( dir, ec );
    if ( !fs::is_directory( dir, ec ) )
        throw core::IoError( "cannot create the folder '" + dir + "'" );
    const fs::path root( dir );

    // Optional files left over from an earlier model would change what read_folder_model returns.
    for ( const char* stale : { "c_matrix", "MX_0", "M_feed", "volume", "t_vector", "cs_vector", "atol_vector", "rtol",
                                "reaction_names" } )
        fs::remove( root / stale, ec );

    const std::size_t n = network.species_names.size();
    auto matrix_text = [&]( bool reactants ) {
        std::string text;
        for ( const Reaction& r : network.reactions )
        {
            std::vector<int> row( n, 0 );
            for ( const StoichiometryTerm& t : reactants ? r.reactants : r.products )
                row[t.species] = t.coefficient;
            for ( std::size_t s = 0; s < n; ++s )
                text += ( s ? "\t" : "" ) + std::to_string( row[s] );
            text += "\n";
        }
        return text;
    };
    auto join = [&]( const auto& values, const char* separator, auto format ) {
        std::string text;
        for ( std::size_t i = 0; i < values.size(); ++i )
            text += ( i ? separator : "" ) + format( values[i] );
        return text + "\n";
    };
    auto exact = []( double v ) { return detail::format_exact( v ); };

    write_text( root / "left_side", matrix_text( true ) );
    write_text( root / "right_side", matrix_text( false ) );
    std::vector<double> c;
    for ( const Reaction& r : network.reactions )
        c.push_back( r.rate_constant );
    write_text( root / "c_vector", c.empty() ? std::string() : join( c, "\n", exact ) );
    write_text( root / "M_0", join( network.initial_state, "\t", exact ) );
    write_text( root / "alphabet", join( network.species_names, "\t", []( const std::string& s ) { return s; } ) );
    write_text( root / "modelkind", "deterministic\n" );

    const RunSettings& settings = network.settings;
    if ( !settings.sample_times.empty() )
        write_text( root / "t_vector", join( settings.sample_times, "\n", exact ) );
    if ( !settings.saved_species.empty() )
        write_text( root / "cs_vector",
                    join( settings.saved_species, "\n", []( int s ) { return std::to_string( s ); } ) );
    if ( !settings.absolute_tolerances.empty() )
        write_text( root / "atol_vector", join( settings.absolute_tolerances, "\n", exact ) );
    if ( settings.relative_tolerance )
        write_text( root / "rtol", exact( *settings.relative_tolerance ) + "\n" );
    bool named = false;
    for ( const Reaction& r : network.reactions )
        named = named || !r.name.empty();
    if ( named )
    {
        std::string text;
        for ( const Reaction& r : network.reactions )
            text += r.name + "\n";
        write_text( root / "reaction_names", text );
    }
}

} // namespace morula::ode
