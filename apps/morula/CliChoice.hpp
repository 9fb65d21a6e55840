// Enum options of the `morula` commands: a CLI11 transformer from the names a user types to the
// library's enum, with one message listing them, so that no command writes a string-to-enum chain.
#ifndef MORULA_APP_CLICHOICE_HPP
#define MORULA_APP_CLICHOICE_HPP

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

namespace morula::app
{

/*!
  A transformer for an option bound to an enum: `name` becomes the enumerator's value, anything else is
  refused with "--option: 'value': expected a, b or c" (exit status 2, like every malformed command line).
  CLI11's CheckedTransformer would also accept the enumerators' numbers and print them in its message.
*/
template <class Enum>
CLI::Validator cli_choice( const std::vector<std::pair<std::string, Enum>>& names )
{
    std::string list, braces;
    for ( std::size_t i = 0; i < names.size(); ++i )
    {
        list += ( i == 0 ? "" : ( i + 1 == names.size() ? " or " : ", " ) ) + names[i].first;
        braces += ( i == 0 ? "" : "|" ) + names[i].first;
    }
    return CLI::Validator(
        [names, list]( std::string& value ) -> std::string {
            for ( const auto& [name, e] : names )
                if ( value == name )
                {
                    value = std::to_string( static_cast<long long>( e ) );
                    return {};
                }
            return "'" + value + "': expected " + list;
        },
        "{" + braces + "}" );
}

} // namespace morula::app

#endif
