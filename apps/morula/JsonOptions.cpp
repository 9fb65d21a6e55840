#include "JsonOptions.hpp"

#include <morula/core/Error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

namespace morula::app
{
using core::InputError;

void apply_json_options( CLI::App& cmd, const std::string& path, const std::set<std::string>& input_files )
{
    std::ifstream in( path );
    if ( !in )
        throw InputError( "--config '" + path + "': cannot read the file" );
    nlohmann::json j;
    try
    {
        j = nlohmann::json::parse( in );
    }
    catch ( const nlohmann::json::exception& e )
    {
        // parse_error, and out_of_range for a number beyond double (1e999: found by fuzzing)
        throw InputError( "--config '" + path + "': not valid JSON: " + e.what() );
    }
    if ( !j.is_object() )
        throw InputError( "--config '" + path + "': expected a JSON object of options, got " + j.type_name() );
    const std::string command = ( cmd.get_parent() && cmd.get_parent()->get_parent() ? cmd.get_parent()->get_name() + " " : "" ) + cmd.get_name();
    // Iterators, not a structured binding: C++17 does not let the lambda below capture one (clang refuses).
    for ( auto item = j.begin(); item != j.end(); ++item )
    {
        const std::string& key = item.key();
        const nlohmann::json& value = item.value();
        const std::string where = "--config '" + path + "': key '" + key + "'";
        std::string name = key;
        std::replace( name.begin(), name.end(), '_', '-' );
        CLI::Option* op = name == "config" ? nullptr : cmd.get_option_no_throw( "--" + name );
        if ( !op && name != "config" && name != "help" )
            op = cmd.get_option_no_throw( name ); // a positional
        if ( !op || op == cmd.get_help_ptr() )
            throw InputError( where + " is no option of `morula " + command +
                              "` (keys are its options without the dashes; --help lists them)" );
        std::vector<std::string> inputs;
        auto text = [&]( const nlohmann::json& v ) {
            if ( v.is_string() )
                inputs.push_back( v.get<std::string>() );
            else if ( v.is_number() || v.is_boolean() )
                inputs.push_back( v.dump() );
            else
                throw InputError( where + ": expected a string, number or boolean" +
                                  std::string( value.is_array() ? " in the array" : " or an array of them" ) +
                                  ", got " + v.type_name() );
        };
        if ( value.is_array() )
            std::for_each( value.begin(), value.end(), text );
        else
            text( value );
        if ( inputs.empty() )
            throw InputError( where + ": an empty array" );
        if ( input_files.count( name ) )
            for ( auto& file : inputs )
                if ( !file.empty() && std::filesystem::path( file ).is_relative() )
                    file = ( std::filesystem::path( path ).parent_path() / file ).string();
        if ( inputs.size() > 1 && op->get_items_expected_max() < int( inputs.size() ) )
            throw InputError( where + ": one value expected, got an array of " + std::to_string( inputs.size() ) );
        if ( op->count() > 0 )
            continue; // the command line wins
        try
        {
            op->add_result( inputs );
            op->run_callback();
        }
        catch ( const CLI::ParseError& e )
        {
            throw InputError( where + ": " + e.what() );
        }
    }
}

} // namespace morula::app
