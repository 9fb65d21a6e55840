// The command-line overrides every stepping subcommand declares its options through: given options win
// over the file's values, options not given leave them, flags set their value, checks still refuse.
#include "../../apps/morula/CliOverrides.hpp"

#include <CLI/CLI.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace
{
using morula::app::make_cli_overrides;

struct Settings
{
    long steps = 10;
    double dt = 0.5;
    std::string precision = "double";
    std::string output = "run";
    bool progress = true;
};

// Parses `args` for a command with the four options and the flag; returns the settings after apply()
// over `from_file`.
Settings parse( std::vector<std::string> args, const Settings& from_file )
{
    CLI::App app( "test" );
    CLI::App* cmd = app.add_subcommand( "model", "a model" );
    auto o = make_cli_overrides<Settings>( *cmd );
    o->option( "--steps", &Settings::steps, "steps" )->check( CLI::Range( 0L, 1000L ) );
    o->option( "--dt", &Settings::dt, "time step" )->check( CLI::PositiveNumber );
    o->option( "--precision", &Settings::precision, "float or double" )
        ->check( CLI::IsMember( { "float", "double" } ) );
    o->option( "--output", &Settings::output, "prefix" );
    o->flag( "--no-progress", &Settings::progress, false, "no progress bar" );
    Settings s = from_file;
    cmd->callback( [o, &s] { o->apply( s ); } );
    std::string line = "model";
    for ( const auto& a : args )
        line += " " + a;
    app.parse( line, false );
    return s;
}

TEST( CliOverrides, given_options_win_over_the_file_and_others_keep_it )
{
    Settings file;
    file.steps = 99;
    file.dt = 0.25;
    file.output = "from_file";
    const Settings s = parse( { "--steps", "7", "--precision", "float" }, file );
    EXPECT_EQ( s.steps, 7 );
    EXPECT_EQ( s.precision, "float" );
    EXPECT_EQ( s.dt, 0.25 );           // not given: the file's value
    EXPECT_EQ( s.output, "from_file" ); // not given: the file's value
    EXPECT_TRUE( s.progress );
}

// An option given with the struct's default value still overrides a file that set another one (the
// given value, not a comparison with the default, decides).
TEST( CliOverrides, an_option_given_with_the_default_value_still_overrides )
{
    Settings file;
    file.steps = 99;
    file.progress = true;
    const Settings s = parse( { "--steps", "10", "--no-progress" }, file );
    EXPECT_EQ( s.steps, 10 );
    EXPECT_FALSE( s.progress );
}

TEST( CliOverrides, checks_refuse_bad_values_naming_the_option )
{
    const Settings file;
    try
    {
        parse( { "--steps", "5000" }, file );
        FAIL() << "--steps 5000 was accepted";
    }
    catch ( const CLI::ValidationError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "--steps" ), std::string::npos ) << e.what();
    }
    EXPECT_THROW( parse( { "--precision", "half" }, file ), CLI::ValidationError );
    EXPECT_THROW( parse( { "--dt", "-1" }, file ), CLI::ValidationError );
}

} // namespace
