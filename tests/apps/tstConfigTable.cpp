// The apps' declarative config table: every declared key read into its field with its range checked,
// absent keys left at their defaults, unknown keys refused naming the file and key, the first bad value in
// table order reported, and keys the caller does not want (given on the command line) left unread.
#include "ConfigFile.hpp"

#include <morula/core/Error.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace
{
using morula::app::ConfigTable;

std::string write_config( const std::string& name, const std::string& text )
{
    const std::string path = "config_table_" + name + ".json";
    std::ofstream( path ) << text;
    return path;
}

struct Settings
{
    double rate = 1.5;
    long steps = 10;
    int sweeps = 2;
    bool progress = true;
    std::string mode = "split";
    std::string output = "out";
    double box[3] = { 1, 1, 1 };
    std::vector<double> morse = { 0, 0, 0, 0 };
    std::optional<double> skin;
    std::vector<std::string> names;
};

ConfigTable table_of( Settings& s )
{
    ConfigTable t;
    t.number( "rate", s.rate, 0, 10 )
        .integer( "steps", s.steps, 0, 1000000 )
        .integer( "sweeps", s.sweeps, 1, 8 )
        .flag( "progress", s.progress )
        .choice( "mode", s.mode, { "split", "fused" } )
        .text( "output", s.output )
        .numbers( "box", s.box, 3, 1e-300 )
        .numbers( "morse", s.morse, 4, 0 )
        .number( "skin", s.skin, 1e-300 )
        .custom( "names", [&s]( const morula::app::ConfigFile& c, const std::string& key ) {
            for ( const auto& o : c.objects( key, { "name" } ) )
                s.names.push_back( o.text( "name" ) );
        } );
    return t;
}

std::string error_of( const ConfigTable& t, const std::string& path )
{
    try
    {
        t.read( path );
    }
    catch ( const morula::core::InputError& e )
    {
        return e.what();
    }
    return "";
}
} // namespace

TEST( config_table, reads_every_declared_key_into_its_field )
{
    Settings s;
    const auto path = write_config( "all", R"({"rate": 2.5, "steps": 123456, "sweeps": 8, "progress": false,
        "mode": "fused", "output": "run", "box": [1, 2, 3], "morse": [0.5, 1, 2, 4], "skin": 3,
        "names": [{"name": "a"}, {"name": "b"}]})" );
    const auto t = table_of( s );
    EXPECT_EQ( t.keys().size(), 10u );
    t.read( path );
    EXPECT_EQ( s.rate, 2.5 );
    EXPECT_EQ( s.steps, 123456 );
    EXPECT_EQ( s.sweeps, 8 );
    EXPECT_FALSE( s.progress );
    EXPECT_EQ( s.mode, "fused" );
    EXPECT_EQ( s.output, "run" );
    EXPECT_EQ( s.box[0], 1 );
    EXPECT_EQ( s.box[2], 3 );
    EXPECT_EQ( s.morse, ( std::vector<double>{ 0.5, 1, 2, 4 } ) );
    ASSERT_TRUE( s.skin.has_value() );
    EXPECT_EQ( *s.skin, 3 );
    EXPECT_EQ( s.names, ( std::vector<std::string>{ "a", "b" } ) );
    std::remove( path.c_str() );
}

TEST( config_table, absent_keys_keep_their_defaults )
{
    Settings s;
    const auto path = write_config( "some", R"({"steps": 0})" );
    table_of( s ).read( path );
    EXPECT_EQ( s.steps, 0 );
    EXPECT_EQ( s.rate, 1.5 );
    EXPECT_EQ( s.sweeps, 2 );
    EXPECT_EQ( s.mode, "split" );
    EXPECT_FALSE( s.skin.has_value() );
    std::remove( path.c_str() );
}

TEST( config_table, refuses_unknown_keys_and_bad_values_naming_them )
{
    Settings s;
    const auto t = table_of( s );
    const auto unknown = write_config( "unknown", R"({"rate": 1, "ratee": 2})" );
    const auto e1 = error_of( t, unknown );
    EXPECT_NE( e1.find( unknown ), std::string::npos ) << e1;
    EXPECT_NE( e1.find( "unknown key 'ratee'" ), std::string::npos ) << e1;
    // Two bad values: the first in the table's order is the one reported, and nothing after it is read.
    const auto bad = write_config( "bad", R"({"mode": "sideways", "sweeps": 9, "output": "x"})" );
    const auto e2 = error_of( t, bad );
    EXPECT_NE( e2.find( "sweeps" ), std::string::npos ) << e2;
    EXPECT_EQ( e2.find( "sideways" ), std::string::npos ) << e2;
    EXPECT_EQ( s.output, "out" );
    const auto range = write_config( "range", R"({"rate": 11})" );
    EXPECT_NE( error_of( t, range ).find( "rate" ), std::string::npos );
    const auto count = write_config( "count", R"({"box": [1, 2]})" );
    EXPECT_NE( error_of( t, count ).find( "box" ), std::string::npos );
    for ( const auto& p : { unknown, bad, range, count } )
        std::remove( p.c_str() );
}

TEST( config_table, keys_not_wanted_are_not_read_or_checked )
{
    Settings s;
    const auto path = write_config( "wanted", R"({"rate": 99, "steps": 7})" );
    // "rate" was given on the command line: its value in the file is neither read nor checked.
    table_of( s ).read( path, []( const std::string& key ) { return key != "rate"; } );
    EXPECT_EQ( s.rate, 1.5 );
    EXPECT_EQ( s.steps, 7 );
    std::remove( path.c_str() );
}
