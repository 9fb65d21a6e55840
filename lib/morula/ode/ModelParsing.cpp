#include <morula/core/Error.hpp>
#include <morula/ode/detail/ModelParsing.hpp>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <locale>
#include <sstream>

namespace morula::ode::detail
{

std::string trim( const std::string& s )
{
    const char* space = " \t\r\n\f\v";
    const std::size_t first = s.find_first_not_of( space );
    if ( first == std::string::npos )
        return {};
    const std::size_t last = s.find_last_not_of( space );
    return s.substr( first, last - first + 1 );
}

std::vector<std::string> split_whitespace( const std::string& s )
{
    std::vector<std::string> tokens;
    const char* space = " \t\r\n\f\v";
    std::size_t pos = s.find_first_not_of( space );
    while ( pos != std::string::npos )
    {
        const std::size_t end = s.find_first_of( space, pos );
        tokens.push_back( s.substr( pos, end == std::string::npos ? std::string::npos : end - pos ) );
        pos = end == std::string::npos ? end : s.find_first_not_of( space, end );
    }
    return tokens;
}

bool parse_number( const std::string& token, double& value )
{
    if ( token.empty() )
        return false;
    // strtod also takes "inf", "nan", "0x1p3" and leading spaces; a model file number is plain decimal.
    bool digit = false;
    for ( char c : token )
    {
        if ( c >= '0' && c <= '9' )
            digit = true;
        else if ( c != '+' && c != '-' && c != '.' && c != 'e' && c != 'E' )
            return false;
    }
    if ( !digit || token[0] == 'e' || token[0] == 'E' )
        return false;
    // Overflow gives an infinity, which is rejected; underflow to a subnormal or zero is kept as read.
    char* end = nullptr;
    const double v = std::strtod( token.c_str(), &end );
    if ( end != token.c_str() + token.size() || !std::isfinite( v ) )
        return false;
    value = v;
    return true;
}

bool parse_count( const std::string& token, int& value )
{
    if ( token.empty() || token.size() > 10 )
        return false;
    long long v = 0;
    for ( char c : token )
    {
        if ( c < '0' || c > '9' )
            return false;
        v = v * 10 + ( c - '0' );
    }
    if ( v > INT_MAX )
        return false;
    value = static_cast<int>( v );
    return true;
}

bool is_identifier( const std::string& token )
{
    if ( token.empty() )
        return false;
    for ( std::size_t i = 0; i < token.size(); ++i )
    {
        const char c = token[i];
        const bool alpha = ( c >= 'A' && c <= 'Z' ) || ( c >= 'a' && c <= 'z' ) || c == '_';
        const bool digit = c >= '0' && c <= '9';
        if ( !alpha && !( digit && i > 0 ) )
            return false;
    }
    return true;
}

std::string read_file( const std::string& path )
{
    std::ifstream in( path, std::ios::binary );
    if ( !in )
        throw core::InputError( "cannot open '" + path + "' for reading" );
    std::ostringstream os;
    os << in.rdbuf();
    if ( in.bad() )
        throw core::InputError( "error while reading '" + path + "'" );
    return os.str();
}

std::vector<std::string> split_lines( const std::string& text )
{
    std::vector<std::string> lines;
    std::size_t pos = 0;
    while ( pos < text.size() )
    {
        const std::size_t end = text.find( '\n', pos );
        if ( end == std::string::npos )
        {
            lines.push_back( text.substr( pos ) );
            break;
        }
        lines.push_back( text.substr( pos, end - pos ) );
        pos = end + 1;
    }
    return lines;
}

std::string format_exact( double value )
{
    std::ostringstream os;
    os.imbue( std::locale::classic() );
    os.precision( std::numeric_limits<double>::max_digits10 );
    os << value;
    return os.str();
}

} // namespace morula::ode::detail
