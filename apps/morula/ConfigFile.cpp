#include "ConfigFile.hpp"

#include <morula/core/Error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>

namespace morula::app
{
using core::InputError;
using core::detail::concat;

namespace
{
//! Whether the JSON integer `v` lies in [min, max], compared in its own signedness.
bool fits( const nlohmann::json& v, long min, long max )
{
    if ( v.is_number_unsigned() )
        return max >= 0 && v.get<std::uint64_t>() <= static_cast<std::uint64_t>( max ) &&
               ( min <= 0 || v.get<std::uint64_t>() >= static_cast<std::uint64_t>( min ) );
    const auto x = v.get<std::int64_t>();
    return x >= min && x <= max;
}
} // namespace

ConfigFile ConfigFile::from_file( const std::string& path, const std::set<std::string>& known_keys )
{
    std::ifstream in( path );
    if ( !in )
        throw InputError( "config '" + path + "': cannot open the file" );
    std::ostringstream text;
    text << in.rdbuf();
    return from_text( text.str(), path, known_keys );
}

ConfigFile ConfigFile::from_text( const std::string& json, const std::string& path,
                                  const std::set<std::string>& known_keys )
{
    ConfigFile c;
    c.m_path = path;
    // The parser reports a number too large for a double without its place: remember the last key it
    // read, so that the error names it (and its line).
    std::string last_key;
    const auto note_keys = [&last_key]( int, nlohmann::json::parse_event_t event, nlohmann::json& parsed ) {
        if ( event == nlohmann::json::parse_event_t::key )
            last_key = parsed.get<std::string>();
        return true;
    };
    try
    {
        c.m_json = nlohmann::json::parse( json, note_keys );
    }
    catch ( const nlohmann::json::parse_error& e )
    {
        // e.what() names the line and column.
        throw InputError( "config '" + path + "': not valid JSON: " + e.what() );
    }
    catch ( const nlohmann::json::out_of_range& e )
    {
        // "number overflow parsing '1e400'": the token, found in the text after the key, gives the line.
        const std::string what = e.what();
        const auto q0 = what.find( '\'' ), q1 = what.rfind( '\'' );
        const std::string token = q0 != std::string::npos && q1 > q0 ? what.substr( q0 + 1, q1 - q0 - 1 ) : "";
        const std::string& t = json;
        const auto key_at = last_key.empty() ? std::string::npos : t.find( '"' + last_key + '"' );
        const auto at = token.empty() ? std::string::npos : t.find( token, key_at == std::string::npos ? 0 : key_at );
        const std::string line =
            at == std::string::npos ? std::string() : concat( " (line ", 1 + std::count( t.begin(), t.begin() + long( at ), '\n' ), ")" );
        throw InputError( "config '" + path + "': key '" + last_key + "'" + line + " = " +
                          ( token.empty() ? std::string( "a number" ) : token ) +
                          " is too large for a double (expected a finite number)" );
    }
    if ( !c.m_json.is_object() )
        throw InputError( "config '" + path + "': expected a JSON object {\"key\": value, ...}" );
    check_keys( c.m_json, known_keys, path, "" );
    return c;
}

void ConfigFile::check_keys( const nlohmann::json& j, const std::set<std::string>& known_keys, const std::string& path,
                         const std::string& prefix )
{
    for ( const auto& item : j.items() )
        if ( !known_keys.count( item.key() ) )
        {
            std::string list;
            for ( const auto& k : known_keys )
                list += ( list.empty() ? "" : ", " ) + k;
            throw InputError( "config '" + path + "': unknown key '" + prefix + item.key() +
                              "' (known keys: " + list + ")" );
        }
}

std::string ConfigFile::where( const std::string& key ) const
{
    return "config '" + m_path + "': key '" + m_prefix + key + "'";
}

const nlohmann::json& ConfigFile::value( const std::string& key ) const
{
    // A required key inside an array's object ("vessels": [ {} ]) reaches a getter without a has() check.
    const auto it = m_json.find( key );
    if ( it == m_json.end() )
        throw InputError( where( key ) + " is missing (it is required here)" );
    return *it;
}

double ConfigFile::number( const std::string& key, double min, double max ) const
{
    const auto& v = value( key );
    if ( !v.is_number() )
        throw InputError( where( key ) + " must be a number, got " + v.dump() );
    const double x = v.get<double>();
    if ( !std::isfinite( x ) || x < min || x > max )
        throw InputError( concat( where( key ), " = ", x, " is outside [", min, ", ", max, "]" ) );
    return x;
}

long ConfigFile::integer( const std::string& key, long min, long max ) const
{
    const auto& v = value( key );
    if ( !v.is_number_integer() )
        throw InputError( where( key ) + " must be an integer, got " + v.dump() );
    // An unsigned value beyond a long's range would wrap (18446744073709551615 read as -1): compare first,
    // and name the value as written.
    if ( !fits( v, min, max ) )
        throw InputError( concat( where( key ), " = ", v.dump(), " is outside [", min, ", ", max, "]" ) );
    return v.get<long>();
}

std::string ConfigFile::choice( const std::string& key, const std::set<std::string>& allowed ) const
{
    const auto& v = value( key );
    std::string list;
    for ( const auto& a : allowed )
        list += ( list.empty() ? "'" : ", '" ) + a + "'";
    if ( !v.is_string() || !allowed.count( v.get<std::string>() ) )
        throw InputError( where( key ) + " = " + v.dump() + " is not one of " + list );
    return v.get<std::string>();
}

std::string ConfigFile::text( const std::string& key ) const
{
    const auto& v = value( key );
    if ( !v.is_string() || v.get<std::string>().empty() )
        throw InputError( where( key ) + " must be a non-empty string, got " + v.dump() );
    return v.get<std::string>();
}

bool ConfigFile::flag( const std::string& key ) const
{
    const auto& v = value( key );
    if ( !v.is_boolean() )
        throw InputError( where( key ) + " must be true or false, got " + v.dump() );
    return v.get<bool>();
}

std::vector<double> ConfigFile::numbers( const std::string& key, std::size_t count, double min, double max ) const
{
    const auto& v = value( key );
    if ( !v.is_array() || ( count && v.size() != count ) || v.empty() )
        throw InputError( concat( where( key ), " must be an array of ", count ? std::to_string( count ) : "some",
                                  " numbers, got ", v.dump() ) );
    std::vector<double> out;
    for ( std::size_t i = 0; i < v.size(); ++i )
    {
        const auto& e = v[i];
        const double x = e.is_number() ? e.get<double>() : std::nan( "" );
        if ( !e.is_number() || !std::isfinite( x ) || x < min || x > max )
            throw InputError( concat( where( key ), "[", i, "] = ", e.dump(), " must be a number in [", min, ", ", max,
                                      "]" ) );
        out.push_back( x );
    }
    return out;
}

std::vector<long> ConfigFile::integers( const std::string& key, std::size_t count, long min, long max ) const
{
    const auto& v = value( key );
    if ( !v.is_array() || v.size() != count )
        throw InputError( concat( where( key ), " must be an array of ", count, " integers, got ", v.dump() ) );
    std::vector<long> out;
    for ( std::size_t i = 0; i < count; ++i )
    {
        const auto& e = v[i];
        if ( !e.is_number_integer() || !fits( e, min, max ) )
            throw InputError( concat( where( key ), "[", i, "] = ", e.dump(), " must be an integer in [", min, ", ",
                                      max, "]" ) );
        out.push_back( e.get<long>() );
    }
    return out;
}

std::vector<std::string> ConfigFile::choices( const std::string& key, std::size_t count,
                                          const std::set<std::string>& allowed ) const
{
    const auto& v = value( key );
    std::string list;
    for ( const auto& a : allowed )
        list += ( list.empty() ? "'" : ", '" ) + a + "'";
    auto one = [&]( const nlohmann::json& e, const std::string& at ) {
        if ( !e.is_string() || !allowed.count( e.get<std::string>() ) )
            throw InputError( where( key ) + at + " = " + e.dump() + " is not one of " + list );
        return e.get<std::string>();
    };
    if ( v.is_string() )
        return std::vector<std::string>( count, one( v, "" ) );
    if ( !v.is_array() || v.size() != count )
        throw InputError( concat( where( key ), " must be one of ", list, " or an array of ", count, " of them, got ",
                                  v.dump() ) );
    std::vector<std::string> out;
    for ( std::size_t i = 0; i < count; ++i )
        out.push_back( one( v[i], concat( "[", i, "]" ) ) );
    return out;
}

std::vector<ConfigFile> ConfigFile::objects( const std::string& key, const std::set<std::string>& known_keys,
                                     bool allow_empty ) const
{
    const auto& v = value( key );
    if ( !v.is_array() || ( v.empty() && !allow_empty ) )
        throw InputError( where( key ) + " must be a" + ( allow_empty ? "n" : " non-empty" ) +
                          " array of objects, got " + v.dump() );
    std::vector<ConfigFile> out;
    for ( std::size_t i = 0; i < v.size(); ++i )
    {
        ConfigFile c;
        c.m_path = m_path;
        c.m_prefix = concat( m_prefix, key, "[", i, "]." );
        if ( !v[i].is_object() )
            throw InputError( concat( where( key ), "[", i, "] must be an object {\"key\": value, ...}, got ",
                                      v[i].dump() ) );
        c.m_json = v[i];
        check_keys( c.m_json, known_keys, m_path, c.m_prefix );
        out.push_back( std::move( c ) );
    }
    return out;
}

} // namespace morula::app
