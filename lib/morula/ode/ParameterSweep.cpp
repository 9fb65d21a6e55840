#include <morula/core/Error.hpp>
#include <morula/ode/ParameterSweep.hpp>
#include <morula/ode/detail/ModelParsing.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <random>

namespace morula::ode
{
namespace
{
using core::InputError;
using core::detail::concat;

std::string lower( std::string s )
{
    for ( char& c : s )
        c = char( std::tolower( static_cast<unsigned char>( c ) ) );
    return s;
}

// Up to 12 names, then a count: enough to see what the model calls things without flooding the terminal.
std::string name_list( const ReactionNetwork& network )
{
    std::string s = "species ";
    const int n = network.species_count();
    for ( int i = 0; i < n && i < 12; ++i )
        s += ( i ? ", " : "" ) + network.species_names[std::size_t( i )];
    if ( n > 12 )
        s += concat( ", ... (", n, " in all)" );
    s += concat( "; reactions R0 to R", network.reaction_count() - 1 );
    int named = 0;
    for ( const Reaction& r : network.reactions )
        if ( !r.name.empty() && named < 12 )
            s += ( named++ ? ", " : " or by name: " ) + r.name;
    return s;
}

// "R<digits>" as a reaction index, or -1.
int reaction_index( const std::string& name )
{
    if ( name.size() < 2 || name[0] != 'R' )
        return -1;
    int index = 0;
    return detail::parse_count( name.substr( 1 ), index ) ? index : -1;
}

// What a value of `column` may be: finite and >= 0 (a rate constant, a concentration). Empty when fine.
std::string value_problem( double v )
{
    if ( std::isnan( v ) )
        return "NaN";
    if ( !std::isfinite( v ) )
        return "infinite";
    if ( v < 0 )
        return "negative";
    return {};
}

const char* quantity( const SweepColumn& c )
{
    switch ( c.kind )
    {
    case SweepColumn::Kind::rate_constant: return "rate constant";
    case SweepColumn::Kind::initial_value: return "initial value";
    case SweepColumn::Kind::end_time: break;
    }
    return "end time";
}

// One CSV field: trimmed, one pair of double quotes removed.
std::string field( const std::string& raw )
{
    std::string f = detail::trim( raw );
    if ( f.size() >= 2 && f.front() == '"' && f.back() == '"' )
        f = detail::trim( f.substr( 1, f.size() - 2 ) );
    return f;
}

std::vector<std::string> split_csv( const std::string& line )
{
    std::vector<std::string> fields;
    std::size_t start = 0;
    while ( true )
    {
        const std::size_t comma = line.find( ',', start );
        fields.push_back( field( line.substr( start, comma == std::string::npos ? std::string::npos : comma - start ) ) );
        if ( comma == std::string::npos )
            return fields;
        start = comma + 1;
    }
}

void refuse_repeated( const std::vector<SweepColumn>& columns, const SweepColumn& c, const std::string& where )
{
    for ( const SweepColumn& other : columns )
        if ( other.kind == c.kind && other.index == c.index )
            throw InputError( concat( where, ": '", c.name, "' sets the same ", quantity( c ), " as '", other.name,
                                      "'; expected each quantity once" ) );
}

} // namespace

SweepColumn resolve_sweep_column( const ReactionNetwork& network, const std::string& name, const std::string& where )
{
    if ( name == end_time_column_name )
    {
        bool named = std::find( network.species_names.begin(), network.species_names.end(), name ) != network.species_names.end();
        for ( const Reaction& r : network.reactions )
            named = named || r.name == name;
        if ( named )
            throw InputError( concat( where, ": '", name, "' is the column of the systems' end times, and the model '",
                                      network.source, "' has a species or reaction of that name too; rename it in the model" ) );
        return { SweepColumn::Kind::end_time, 0, name };
    }
    std::vector<SweepColumn> found;
    for ( int i = 0; i < network.species_count(); ++i )
        if ( network.species_names[std::size_t( i )] == name )
            found.push_back( { SweepColumn::Kind::initial_value, i, name } );
    for ( int r = 0; r < network.reaction_count(); ++r )
        if ( network.reactions[std::size_t( r )].name == name )
            found.push_back( { SweepColumn::Kind::rate_constant, r, name } );
    const int index = reaction_index( name );
    if ( index >= 0 && index < network.reaction_count() )
    {
        const bool same = !found.empty() && found.back().kind == SweepColumn::Kind::rate_constant && found.back().index == index;
        if ( !same )
            found.push_back( { SweepColumn::Kind::rate_constant, index, name } );
    }
    if ( found.size() == 1 )
        return found.front();
    if ( found.empty() )
    {
        if ( index >= network.reaction_count() )
            throw InputError( concat( where, ": '", name, "': the model '", network.source, "' has reactions R0 to R",
                                      network.reaction_count() - 1 ) );
        throw InputError( concat( where, ": '", name, "' is not a species or reaction of the model '", network.source,
                                  "'; expected one of: ", name_list( network ), "; or t_end (each system's end time)" ) );
    }
    // Ambiguous: say what it names (a species and a reaction, or two reactions: one by its label, one by R<i>).
    std::string meanings;
    bool species = false;
    for ( std::size_t f = 0; f < found.size(); ++f )
    {
        species = species || found[f].kind == SweepColumn::Kind::initial_value;
        meanings += concat( f == 0 ? "" : f + 1 == found.size() ? " and " : ", ",
                            found[f].kind == SweepColumn::Kind::initial_value ? "species " : "reaction R", found[f].kind ==
                            SweepColumn::Kind::initial_value ? name : std::to_string( found[f].index ) );
    }
    throw InputError( concat( where, ": '", name, "' names ", species ? "both a species and a reaction" : "two reactions",
                              " of the model '", network.source, "' (", meanings, "); ",
                              species ? "name the reaction by index (R<i>)" : "rename the reaction labelled '" + name + "'" ) );
}

SweepRange parse_sweep_range( const std::string& text, const std::string& option )
{
    const auto fail = [&]( const std::string& why ) -> InputError {
        return InputError( concat( option, " '", text, "': ", why ) );
    };
    const std::size_t eq = text.find( '=' );
    if ( eq == std::string::npos || detail::trim( text.substr( 0, eq ) ).empty() )
        throw fail( "expected NAME=SPACING:LOW:HIGH[:POINTS], e.g. R2=log:1e-2:1e4:13 or A=uniform:0.5:1.5" );
    SweepRange range;
    range.text = text;
    range.name = detail::trim( text.substr( 0, eq ) );
    std::vector<std::string> parts;
    {
        const std::string rest = text.substr( eq + 1 );
        std::size_t start = 0;
        while ( true )
        {
            const std::size_t colon = rest.find( ':', start );
            parts.push_back( detail::trim( rest.substr( start, colon == std::string::npos ? std::string::npos : colon - start ) ) );
            if ( colon == std::string::npos )
                break;
            start = colon + 1;
        }
    }
    const std::string spacing = lower( parts[0] );
    if ( spacing == "linear" || spacing == "lin" )
        range.spacing = SweepSpacing::linear;
    else if ( spacing == "log" )
        range.spacing = SweepSpacing::log;
    else if ( spacing == "uniform" || spacing == "random" )
        range.spacing = SweepSpacing::uniform;
    else if ( spacing == "log-uniform" || spacing == "loguniform" )
        range.spacing = SweepSpacing::log_uniform;
    else
        throw fail( concat( "unknown spacing '", parts[0], "'; expected linear, log, uniform or log-uniform" ) );
    const bool grid = range.spacing == SweepSpacing::linear || range.spacing == SweepSpacing::log;
    if ( grid && parts.size() != 4 )
        throw fail( concat( "a ", parts[0], " range needs LOW:HIGH:POINTS after the spacing" ) );
    if ( !grid && parts.size() != 3 )
        throw fail( concat( "a ", parts[0], " range takes LOW:HIGH after the spacing (one draw per system)" ) );
    if ( !detail::parse_number( parts[1], range.low ) || !std::isfinite( range.low ) )
        throw fail( concat( "LOW '", parts[1], "' is not a finite number" ) );
    if ( !detail::parse_number( parts[2], range.high ) || !std::isfinite( range.high ) )
        throw fail( concat( "HIGH '", parts[2], "' is not a finite number" ) );
    if ( range.low < 0 )
        throw fail( concat( "LOW ", parts[1], " is negative; rate constants, initial values and end times are >= 0" ) );
    if ( range.low > range.high )
        throw fail( concat( "LOW ", parts[1], " is above HIGH ", parts[2] ) );
    const bool logarithmic = range.spacing == SweepSpacing::log || range.spacing == SweepSpacing::log_uniform;
    if ( logarithmic && range.low <= 0 )
        throw fail( concat( "a ", parts[0], " range needs LOW > 0" ) );
    if ( grid )
    {
        int points = 0;
        if ( !detail::parse_count( parts[3], points ) || points < 1 )
            throw fail( concat( "POINTS '", parts[3], "' is not a count >= 1" ) );
        if ( points == 1 && range.low != range.high )
            throw fail( "one point needs LOW == HIGH; expected POINTS >= 2 for a range" );
        range.points = points;
    }
    return range;
}

ParameterSweep read_sweep_table( const std::string& path, const ReactionNetwork& network )
{
    const std::vector<std::string> lines = detail::split_lines( detail::read_file( path ) );
    ParameterSweep sweep;
    sweep.source = path;
    std::size_t header_line = 0;
    for ( std::size_t l = 0; l < lines.size(); ++l )
    {
        const std::string line = detail::trim( lines[l] );
        if ( line.empty() || line[0] == '#' )
            continue;
        const std::string where = concat( path, ":", l + 1 );
        const std::vector<std::string> fields = split_csv( line );
        if ( sweep.columns.empty() )
        {
            header_line = l + 1;
            for ( std::size_t c = 0; c < fields.size(); ++c )
            {
                const std::string col_where = concat( where, ": column ", c + 1 );
                if ( fields[c].empty() )
                    throw InputError( concat( col_where, ": empty name; expected a species or reaction name" ) );
                SweepColumn column = resolve_sweep_column( network, fields[c], col_where );
                refuse_repeated( sweep.columns, column, col_where );
                sweep.columns.push_back( column );
            }
            continue;
        }
        if ( fields.size() != sweep.columns.size() )
            throw InputError( concat( where, ": ", fields.size(), " value", fields.size() == 1 ? "" : "s", "; the header (line ",
                                      header_line, ") has ", sweep.columns.size(), " column",
                                      sweep.columns.size() == 1 ? "" : "s" ) );
        for ( std::size_t c = 0; c < fields.size(); ++c )
        {
            const SweepColumn& column = sweep.columns[c];
            const std::string col_where = concat( where, ": column ", c + 1, " (", column.name, ")" );
            double v = 0;
            const std::string token = lower( fields[c] );
            if ( token == "nan" || token == "+nan" || token == "-nan" )
                v = std::numeric_limits<double>::quiet_NaN();
            else if ( token == "inf" || token == "+inf" || token == "infinity" || token == "-inf" || token == "-infinity" )
                v = token[0] == '-' ? -HUGE_VAL : HUGE_VAL;
            else if ( !detail::parse_number( fields[c], v ) )
                throw InputError( concat( col_where, ": '", fields[c], "' is not a number" ) );
            const std::string problem = value_problem( v );
            if ( !problem.empty() )
                throw InputError( concat( col_where, ": ", problem, " ", quantity( column ), " '", fields[c],
                                          "'; expected a finite number >= 0" ) );
            sweep.values.push_back( v );
        }
        ++sweep.systems;
        sweep.lines.push_back( static_cast<long>( l + 1 ) );
    }
    if ( sweep.columns.empty() )
        throw InputError( concat( path, ": empty; expected a header of species or reaction names, then one row per system" ) );
    if ( sweep.systems == 0 )
        throw InputError( concat( path, ":", header_line, ": a header and no rows; expected one row of values per system" ) );
    return sweep;
}

ParameterSweep make_range_sweep( const ReactionNetwork& network, const std::vector<SweepRange>& ranges,
                                 long random_systems, std::uint64_t seed, long max_systems )
{
    ParameterSweep sweep;
    sweep.source = "--sweep";
    if ( ranges.empty() )
        throw InputError( "--sweep: no ranges; expected at least one NAME=SPACING:LOW:HIGH[:POINTS]" );
    // The grid's size, refusing overflow before multiplying.
    long grid = 1;
    bool any_grid = false;
    for ( const SweepRange& r : ranges )
    {
        SweepColumn column = resolve_sweep_column( network, r.name, concat( "--sweep '", r.text, "'" ) );
        refuse_repeated( sweep.columns, column, concat( "--sweep '", r.text, "'" ) );
        sweep.columns.push_back( column );
        if ( r.points > 0 )
        {
            any_grid = true;
            if ( grid > max_systems / r.points )
                throw InputError( concat( "--sweep: the grid of ranges has more than ", max_systems,
                                          " systems (the most this machine can hold); expected fewer points" ) );
            grid *= r.points;
        }
    }
    if ( any_grid )
    {
        if ( random_systems != 0 && random_systems != grid )
            throw InputError( concat( "--batch ", random_systems, ": the grid of --sweep ranges has ", grid,
                                      " systems; give no --batch or --batch ", grid ) );
        sweep.systems = grid;
    }
    else
    {
        if ( random_systems < 1 )
            throw InputError( "--sweep: random ranges only (uniform, log-uniform) need --batch N, the number of systems to draw" );
        if ( random_systems > max_systems )
            throw InputError( concat( "--batch ", random_systems, ": more than ", max_systems,
                                      " systems (the most this machine can hold)" ) );
        sweep.systems = random_systems;
    }

    const std::size_t ncol = ranges.size();
    sweep.values.assign( std::size_t( sweep.systems ) * ncol, 0.0 );
    std::mt19937_64 rng( seed );
    for ( long s = 0; s < sweep.systems; ++s )
    {
        long rest = s; // the grid index, the last grid range varying fastest
        for ( std::size_t c = ncol; c-- > 0; )
        {
            const SweepRange& r = ranges[c];
            if ( r.points == 0 )
                continue;
            const long k = rest % r.points;
            rest /= r.points;
            double v = r.low;
            if ( r.points > 1 )
            {
                const double f = double( k ) / double( r.points - 1 );
                if ( r.spacing == SweepSpacing::linear )
                    v = k == r.points - 1 ? r.high : r.low + ( r.high - r.low ) * f;
                else
                    v = k == r.points - 1 ? r.high : r.low * std::pow( r.high / r.low, f );
            }
            sweep.values[std::size_t( s ) * ncol + c] = v;
        }
        for ( std::size_t c = 0; c < ncol; ++c )
        {
            const SweepRange& r = ranges[c];
            if ( r.points != 0 )
                continue;
            const double u = double( rng() >> 11 ) * 0x1.0p-53;
            double v = r.spacing == SweepSpacing::uniform
                           ? r.low + ( r.high - r.low ) * u
                           : r.low * std::pow( r.high / r.low, u );
            sweep.values[std::size_t( s ) * ncol + c] = std::min( v, r.high );
        }
    }
    return sweep;
}

std::string ParameterSweep::where( long system ) const
{
    if ( std::size_t( system ) < lines.size() )
        return concat( source, ":", lines[std::size_t( system )] );
    return concat( source, ", system ", system );
}

void fill_systems( const ParameterSweep& sweep, const ReactionNetwork& network, long first, long count,
                   std::vector<double>& rate_constants, std::vector<double>& initial_states )
{
    const std::size_t m = std::size_t( network.reaction_count() ), n = std::size_t( network.species_count() );
    rate_constants.resize( std::size_t( count ) * m );
    initial_states.resize( std::size_t( count ) * n );
    for ( long s = 0; s < count; ++s )
    {
        for ( std::size_t r = 0; r < m; ++r )
            rate_constants[std::size_t( s ) * m + r] = network.reactions[r].rate_constant;
        for ( std::size_t i = 0; i < n; ++i )
            initial_states[std::size_t( s ) * n + i] = network.initial_state[i];
        for ( std::size_t c = 0; c < sweep.columns.size(); ++c )
        {
            const SweepColumn& column = sweep.columns[c];
            const double v = sweep.value( first + s, c );
            if ( column.kind == SweepColumn::Kind::rate_constant )
                rate_constants[std::size_t( s ) * m + std::size_t( column.index )] = v;
            else if ( column.kind == SweepColumn::Kind::initial_value )
                initial_states[std::size_t( s ) * n + std::size_t( column.index )] = v;
        }
    }
}

} // namespace morula::ode
