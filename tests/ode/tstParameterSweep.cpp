// Parameter sweeps (ode/ParameterSweep.hpp): tables and ranges resolve to the right quantities, grids and
// draws are what the documentation says, and every kind of bad input is refused with a message naming
// the file, line and column (or the range) before any work.
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/ParameterSweep.hpp>

#include "HostTestUtils.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace
{
using namespace morula::ode;
using morula_test::scratch;
using morula_test::write;

// Robertson's network with a labelled third reaction: species A, B, C; reactions R0, R1, R2 = "back".
ReactionNetwork robertson()
{
    return parse_text_model( "A -> B, k=0.04\n2 B -> B + C, k=3e7\nback: B + C -> A + C, k=1e4\ninit A = 1\n", "rob.txt" );
}

TEST( ParameterSweep, columns_resolve_to_species_reactions_and_labels )
{
    const ReactionNetwork net = robertson();
    const SweepColumn a = resolve_sweep_column( net, "A", "here" );
    EXPECT_EQ( a.kind, SweepColumn::Kind::initial_value );
    EXPECT_EQ( a.index, 0 );
    const SweepColumn r1 = resolve_sweep_column( net, "R1", "here" );
    EXPECT_EQ( r1.kind, SweepColumn::Kind::rate_constant );
    EXPECT_EQ( r1.index, 1 );
    const SweepColumn back = resolve_sweep_column( net, "back", "here" );
    EXPECT_EQ( back.kind, SweepColumn::Kind::rate_constant );
    EXPECT_EQ( back.index, 2 );
    EXPECT_EQ( resolve_sweep_column( net, "R2", "here" ).index, 2 );
    EXPECT_INPUT_ERROR( resolve_sweep_column( net, "k3", "sweep.csv:1: column 2" ), "sweep.csv:1: column 2", "'k3'",
                        "species A, B, C", "R0 to R2", "back" );
    EXPECT_INPUT_ERROR( resolve_sweep_column( net, "R3", "x" ), "'R3'", "R0 to R2" );
    // A species called like a reaction index is ambiguous.
    const ReactionNetwork odd = parse_text_model( "R0 -> X, k=1\ninit R0 = 1\n", "odd.txt" );
    EXPECT_INPUT_ERROR( resolve_sweep_column( odd, "R0", "x" ), "names both a species and a reaction",
                        "(species R0 and reaction R0)" );
    // A reaction labelled like another reaction's index: two reactions, not a species.
    const ReactionNetwork labels = parse_text_model( "A -> B, k=1\nR0: B -> A, k=2\ninit A = 1\n", "labels.txt" );
    EXPECT_INPUT_ERROR( resolve_sweep_column( labels, "R0", "x" ), "'R0' names two reactions", "(reaction R1 and reaction R0)",
                        "rename the reaction labelled 'R0'" );
}

// `t_end` is each system's end time: a column of its own kind that fill_systems leaves out of the rates
// and states; a table remembers each system's line for messages; a model with a species or reaction named
// t_end makes the name ambiguous.
TEST( ParameterSweep, t_end_column_is_the_end_time )
{
    const ReactionNetwork net = robertson();
    const SweepColumn end = resolve_sweep_column( net, "t_end", "here" );
    EXPECT_EQ( end.kind, SweepColumn::Kind::end_time );
    const auto dir = scratch( "sweep_end_time" );
    write( dir / "t.csv", "R2,t_end,A\n# a comment line\n1e4,40,1\n\n2e4,4e5,0.5\n" );
    const std::string path = ( dir / "t.csv" ).string();
    const ParameterSweep sweep = read_sweep_table( path, net );
    ASSERT_EQ( sweep.systems, 2 );
    EXPECT_EQ( sweep.end_time_column(), 1 );
    EXPECT_EQ( sweep.value( 1, 1 ), 4e5 );
    EXPECT_EQ( sweep.where( 0 ), path + ":3" );
    EXPECT_EQ( sweep.where( 1 ), path + ":5" );
    std::vector<double> k, x;
    fill_systems( sweep, net, 0, 2, k, x );
    EXPECT_EQ( k, ( std::vector<double>{ 0.04, 3e7, 1e4, 0.04, 3e7, 2e4 } ) );
    EXPECT_EQ( x, ( std::vector<double>{ 1, 0, 0, 0.5, 0, 0 } ) );
    write( dir / "bad.csv", "t_end\n-1\n" );
    EXPECT_INPUT_ERROR( read_sweep_table( ( dir / "bad.csv" ).string(), net ), "bad.csv:2: column 1 (t_end)", "negative end time '-1'" );
    const ParameterSweep ranges = make_range_sweep( net, { parse_sweep_range( "t_end=log:1:1e4:5" ) }, 0, 1, 1000 );
    EXPECT_EQ( ranges.end_time_column(), 0 );
    EXPECT_EQ( ranges.value( 4, 0 ), 1e4 );
    EXPECT_EQ( ranges.where( 3 ), "--sweep, system 3" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "t_end=linear:-1:2:3" ), "LOW -1 is negative", "end times" );
    const ReactionNetwork clash = parse_text_model( "t_end -> X, k=1\ninit t_end = 1\n", "clash.txt" );
    EXPECT_INPUT_ERROR( resolve_sweep_column( clash, "t_end", "x" ), "'t_end' is the column of the systems' end times",
                        "clash.txt", "rename it in the model" );
    EXPECT_INPUT_ERROR( resolve_sweep_column( net, "k9", "x" ), "or t_end (each system's end time)" );
}

TEST( ParameterSweep, table_sets_rates_and_initial_values_per_system )
{
    const ReactionNetwork net = robertson();
    const auto dir = scratch( "sweep_table" );
    write( dir / "t.csv", "# k3 and the start of A\nR2, \"A\"\n1e4,1\n\n0,0.5\r\n2.5e3 , 2\n" );
    const ParameterSweep sweep = read_sweep_table( ( dir / "t.csv" ).string(), net );
    ASSERT_EQ( sweep.systems, 3 );
    ASSERT_EQ( sweep.columns.size(), 2u );
    std::vector<double> k, x0;
    fill_systems( sweep, net, 1, 2, k, x0 );
    ASSERT_EQ( k.size(), 6u );
    ASSERT_EQ( x0.size(), 6u );
    // System 1: k3 = 0, A = 0.5; other quantities the model's.
    EXPECT_EQ( k[0], 0.04 );
    EXPECT_EQ( k[1], 3e7 );
    EXPECT_EQ( k[2], 0.0 );
    EXPECT_EQ( x0[0], 0.5 );
    EXPECT_EQ( x0[1], 0.0 );
    // System 2.
    EXPECT_EQ( k[5], 2.5e3 );
    EXPECT_EQ( x0[3], 2.0 );
}

TEST( ParameterSweep, table_bad_input_names_file_line_and_column )
{
    const ReactionNetwork net = robertson();
    const auto dir = scratch( "sweep_bad" );
    const std::string path = ( dir / "t.csv" ).string();
    const auto refused = [&]( const std::string& text ) {
        write( path, text );
        return morula_test::error_of( [&] { read_sweep_table( path, net ); } );
    };
    auto expect_parts = []( const std::string& message, std::vector<std::string> parts ) {
        for ( const std::string& p : parts )
            EXPECT_NE( message.find( p ), std::string::npos ) << "'" << p << "' not in: " << message;
    };
    expect_parts( refused( "R0,R1\n1,2\n3\n" ), { "t.csv:3:", "1 value", "header (line 1) has 2 columns" } );
    expect_parts( refused( "R0,R1\n1,2,3\n" ), { "t.csv:2:", "3 values" } );
    expect_parts( refused( "R0,R1\n1,-2\n" ), { "t.csv:2: column 2 (R1)", "negative rate constant '-2'", ">= 0" } );
    expect_parts( refused( "R0,A\n1,nan\n" ), { "t.csv:2: column 2 (A)", "NaN initial value" } );
    expect_parts( refused( "R0\ninf\n" ), { "t.csv:2: column 1 (R0)", "infinite rate constant" } );
    expect_parts( refused( "R0\n1x\n" ), { "t.csv:2: column 1 (R0)", "'1x' is not a number" } );
    expect_parts( refused( "R0,C,zz\n" ), { "t.csv:1: column 3", "'zz'" } );
    expect_parts( refused( "R2,back\n1,2\n" ), { "t.csv:1: column 2", "same rate constant as 'R2'" } );
    expect_parts( refused( "# nothing\nR0,R1\n" ), { "t.csv:2: a header and no rows" } );
    expect_parts( refused( "\n# only comments\n" ), { "t.csv: empty" } );
    expect_parts( refused( "R0,,R1\n" ), { "column 2: empty name" } );
    EXPECT_INPUT_ERROR( read_sweep_table( ( dir / "missing.csv" ).string(), net ), "missing.csv" );
}

TEST( ParameterSweep, grid_ranges_are_a_cartesian_product_with_exact_ends )
{
    const ReactionNetwork net = robertson();
    const std::vector<SweepRange> ranges = { parse_sweep_range( "R2=log:1e-2:1e4:7" ), parse_sweep_range( "A=linear:0:1:3" ) };
    EXPECT_EQ( ranges[0].spacing, SweepSpacing::log );
    EXPECT_EQ( ranges[0].points, 7 );
    const ParameterSweep sweep = make_range_sweep( net, ranges, 0, 1, 1000 );
    ASSERT_EQ( sweep.systems, 21 );
    // The first range varies slowest: systems 0..2 share k3 = 1e-2, A = 0, 0.5, 1.
    EXPECT_EQ( sweep.value( 0, 0 ), 1e-2 );
    EXPECT_EQ( sweep.value( 2, 0 ), 1e-2 );
    EXPECT_EQ( sweep.value( 0, 1 ), 0.0 );
    EXPECT_EQ( sweep.value( 1, 1 ), 0.5 );
    EXPECT_EQ( sweep.value( 2, 1 ), 1.0 );
    EXPECT_EQ( sweep.value( 20, 0 ), 1e4 ); // the upper end exactly, not 10^(log10 ...)
    for ( long s = 0; s < 7; ++s )
        EXPECT_NEAR( std::log10( sweep.value( 3 * s, 0 ) ), -2.0 + s, 1e-12 );
    // --batch equal to the grid is fine, anything else is refused; so is a grid beyond the memory limit.
    EXPECT_EQ( make_range_sweep( net, ranges, 21, 1, 1000 ).systems, 21 );
    EXPECT_INPUT_ERROR( make_range_sweep( net, ranges, 20, 1, 1000 ), "--batch 20", "has 21 systems" );
    EXPECT_INPUT_ERROR( make_range_sweep( net, ranges, 0, 1, 20 ), "more than 20 systems" );
    EXPECT_INPUT_ERROR( make_range_sweep( net, { parse_sweep_range( "R0=linear:1:1:1" ), parse_sweep_range( "R0=linear:2:2:1" ) }, 0, 1, 9 ),
                        "same rate constant as 'R0'" );
    EXPECT_INPUT_ERROR( make_range_sweep( net, {}, 5, 1, 9 ), "no ranges" );
}

TEST( ParameterSweep, random_ranges_draw_reproducibly_within_bounds )
{
    const ReactionNetwork net = robertson();
    const std::vector<SweepRange> ranges = { parse_sweep_range( "R0=uniform:0.036:0.044" ),
                                             parse_sweep_range( "back=log-uniform:1:1e4" ) };
    EXPECT_INPUT_ERROR( make_range_sweep( net, ranges, 0, 7, 1000 ), "need --batch N" );
    EXPECT_INPUT_ERROR( make_range_sweep( net, ranges, 5000, 7, 1000 ), "--batch 5000", "more than 1000" );
    const ParameterSweep a = make_range_sweep( net, ranges, 1000, 7, 100000 );
    const ParameterSweep b = make_range_sweep( net, ranges, 1000, 7, 100000 );
    const ParameterSweep c = make_range_sweep( net, ranges, 1000, 8, 100000 );
    ASSERT_EQ( a.systems, 1000 );
    EXPECT_EQ( a.values, b.values );
    EXPECT_NE( a.values, c.values );
    std::set<int> decades;
    double mean = 0;
    for ( long s = 0; s < a.systems; ++s )
    {
        EXPECT_GE( a.value( s, 0 ), 0.036 );
        EXPECT_LE( a.value( s, 0 ), 0.044 );
        EXPECT_GE( a.value( s, 1 ), 1.0 );
        EXPECT_LE( a.value( s, 1 ), 1e4 );
        mean += a.value( s, 0 ) / double( a.systems );
        decades.insert( int( std::floor( std::log10( a.value( s, 1 ) ) ) ) );
    }
    // Uniform: the mean within 4 standard errors (0.008 / sqrt(12 * 1000) = 7.3e-5) of the middle.
    EXPECT_NEAR( mean, 0.04, 4 * 7.3e-5 );
    // Log-uniform over four decades: 250 expected per decade; every decade drawn.
    EXPECT_EQ( decades, ( std::set<int>{ 0, 1, 2, 3 } ) );
    // Random ranges over a grid: one draw per grid system.
    const ParameterSweep mixed =
        make_range_sweep( net, { parse_sweep_range( "R1=linear:1e7:3e7:3" ), parse_sweep_range( "R0=uniform:0:1" ) }, 0, 3, 100 );
    EXPECT_EQ( mixed.systems, 3 );
    EXPECT_NE( mixed.value( 0, 1 ), mixed.value( 1, 1 ) );
}

TEST( ParameterSweep, range_syntax_errors_name_the_range )
{
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2" ), "--sweep 'R2'", "NAME=SPACING:LOW:HIGH" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=geometric:1:2:3" ), "unknown spacing 'geometric'", "log-uniform" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=log:1:2" ), "needs LOW:HIGH:POINTS" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=uniform:1:2:3" ), "takes LOW:HIGH" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=log:0:2:3" ), "needs LOW > 0" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=linear:-1:2:3" ), "LOW -1 is negative" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=linear:3:2:3" ), "LOW 3 is above HIGH 2" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=linear:1:nan:3" ), "HIGH 'nan' is not a finite number" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=linear:1:2:0" ), "POINTS '0'" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=linear:1:2:1" ), "one point needs LOW == HIGH" );
    EXPECT_INPUT_ERROR( parse_sweep_range( "R2=linear:1:2:x", "sweep" ), "sweep 'R2=linear:1:2:x'" );
}

} // namespace
