#include "Config.hpp"

#include <morula/core/Error.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace morula::app
{
using core::InputError;
using core::detail::concat;

Config Config::from_file( const std::string& path, const std::set<std::string>& known_keys )
{
    std::ifstream in( path );
    if ( !in )
        throw InputError( "config '" + path + "': cannot open the file" );
    Config c;
    c.m_path = path;
    try
    {
        c.m_json = nlohmann::json::parse( in );
    }
    catch ( const nlohmann::json::parse_error& e )
    {
        // e.what() names the line and column.
        throw InputError( "config '" + path + "': not valid JSON: " + e.what() );
    }
    if ( !c.m_json.is_object() )
        throw InputError( "config '" + path + "': expected a JSON object {\"key\": value, ...}" );
    for ( const auto& item : c.m_json.items() )
        if ( !known_keys.count( item.key() ) )
        {
            std::string list;
            for ( const auto& k : known_keys )
                list += ( list.empty() ? "" : ", " ) + k;
            throw InputError( "config '" + path + "': unknown key '" + item.key() +
                              "' (known keys: " + list + ")" );
        }
    return c;
}

std::string Config::where( const std::string& key ) const
{
    return "config '" + m_path + "': key '" + key + "'";
}

double Config::number( const std::string& key, double min, double max ) const
{
    const auto& v = m_json.at( key );
    if ( !v.is_number() )
        throw InputError( where( key ) + " must be a number, got " + v.dump() );
    const double x = v.get<double>();
    if ( !std::isfinite( x ) || x < min || x > max )
        throw InputError( concat( where( key ), " = ", x, " is outside [", min, ", ", max, "]" ) );
    return x;
}

long Config::integer( const std::string& key, long min, long max ) const
{
    const auto& v = m_json.at( key );
    if ( !v.is_number_integer() )
        throw InputError( where( key ) + " must be an integer, got " + v.dump() );
    const long x = v.get<long>();
    if ( x < min || x > max )
        throw InputError( concat( where( key ), " = ", x, " is outside [", min, ", ", max, "]" ) );
    return x;
}

std::string Config::choice( const std::string& key, const std::set<std::string>& allowed ) const
{
    const auto& v = m_json.at( key );
    std::string list;
    for ( const auto& a : allowed )
        list += ( list.empty() ? "'" : ", '" ) + a + "'";
    if ( !v.is_string() || !allowed.count( v.get<std::string>() ) )
        throw InputError( where( key ) + " = " + v.dump() + " is not one of " + list );
    return v.get<std::string>();
}

std::string Config::text( const std::string& key ) const
{
    const auto& v = m_json.at( key );
    if ( !v.is_string() || v.get<std::string>().empty() )
        throw InputError( where( key ) + " must be a non-empty string, got " + v.dump() );
    return v.get<std::string>();
}

} // namespace morula::app
