#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/ReactionNetwork.hpp>
#include <morula/ode/SyntheticNetwork.hpp>

#include "HostTestUtils.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

namespace
{
namespace fs = std::filesystem;
using namespace morula::ode;
using morula::core::InputError;
using morula_test::scratch;
using morula_test::write;
using morula_test::error_of;

const std::string data_dir = MORULA_ODE_TEST_DATA;

std::vector<std::pair<int, int>> terms( const std::vector<StoichiometryTerm>& side )
{
    std::vector<std::pair<int, int>> out;
    for ( const StoichiometryTerm& t : side )
        out.emplace_back( t.species, t.coefficient );
    std::sort( out.begin(), out.end() );
    return out;
}

using Terms = std::vector<std::pair<int, int>>;

//! Exact equality, ignoring only the order of terms within a side (a matrix row has none) and the source.
void expect_same( const ReactionNetwork& a, const ReactionNetwork& b )
{
    EXPECT_EQ( a.species_names, b.species_names );
    EXPECT_EQ( a.initial_state, b.initial_state );
    ASSERT_EQ( a.reaction_count(), b.reaction_count() );
    for ( int r = 0; r < a.reaction_count(); ++r )
    {
        EXPECT_EQ( terms( a.reactions[r].reactants ), terms( b.reactions[r].reactants ) ) << "reaction " << r;
        EXPECT_EQ( terms( a.reactions[r].products ), terms( b.reactions[r].products ) ) << "reaction " << r;
        EXPECT_EQ( a.reactions[r].rate_constant, b.reactions[r].rate_constant ) << "reaction " << r;
        EXPECT_EQ( a.reactions[r].name, b.reactions[r].name ) << "reaction " << r;
    }
    EXPECT_EQ( a.settings.sample_times, b.settings.sample_times );
    EXPECT_EQ( a.settings.saved_species, b.settings.saved_species );
    EXPECT_EQ( a.settings.absolute_tolerances, b.settings.absolute_tolerances );
    EXPECT_EQ( a.settings.relative_tolerance, b.settings.relative_tolerance );
}

// --- text format ------------------------------------------------------------------------------------------

TEST( OdeTextModel, ParsesReactionsInitialValuesAndSettings )
{
    const ReactionNetwork net = parse_text_model( "# header\n"
                                                  "R1: A + B -> C, k=0.3\n"
                                                  "2 A -> B, k=1e-3   # dimer\n"
                                                  "A -> , k=0.1\n"
                                                  "\n"
                                                  "-> A, k=2\n"
                                                  "C -> 2A + D, k = 5\n"
                                                  "init A = 1.0\n"
                                                  "init C = 0.25\n"
                                                  "sample_times = 0, 1, 2.5\n"
                                                  "save = A, D\n"
                                                  "rtol = 1e-6\n"
                                                  "atol = 1e-9\n",
                                                  "inline.txt" );
    EXPECT_EQ( net.source, "inline.txt" );
    EXPECT_EQ( net.species_names, ( std::vector<std::string>{ "A", "B", "C", "D" } ) );
    EXPECT_EQ( net.initial_state, ( std::vector<double>{ 1.0, 0.0, 0.25, 0.0 } ) );
    ASSERT_EQ( net.reaction_count(), 5 );
    EXPECT_EQ( net.reactions[0].name, "R1" );
    EXPECT_EQ( terms( net.reactions[0].reactants ), ( Terms{ { 0, 1 }, { 1, 1 } } ) );
    EXPECT_EQ( terms( net.reactions[0].products ), ( Terms{ { 2, 1 } } ) );
    EXPECT_EQ( net.reactions[0].rate_constant, 0.3 );
    EXPECT_EQ( net.reactions[1].name, "" );
    EXPECT_EQ( terms( net.reactions[1].reactants ), ( Terms{ { 0, 2 } } ) );
    EXPECT_EQ( terms( net.reactions[1].products ), ( Terms{ { 1, 1 } } ) );
    EXPECT_EQ( net.reactions[1].rate_constant, 1e-3 );
    EXPECT_EQ( terms( net.reactions[2].reactants ), ( Terms{ { 0, 1 } } ) );
    EXPECT_TRUE( net.reactions[2].products.empty() );
    EXPECT_EQ( net.reactions[2].rate_constant, 0.1 );
    EXPECT_TRUE( net.reactions[3].reactants.empty() );
    EXPECT_EQ( terms( net.reactions[3].products ), ( Terms{ { 0, 1 } } ) );
    EXPECT_EQ( net.reactions[3].rate_constant, 2.0 );
    EXPECT_EQ( terms( net.reactions[4].reactants ), ( Terms{ { 2, 1 } } ) );
    EXPECT_EQ( terms( net.reactions[4].products ), ( Terms{ { 0, 2 }, { 3, 1 } } ) );
    EXPECT_EQ( net.reactions[4].rate_constant, 5.0 );
    EXPECT_EQ( net.settings.sample_times, ( std::vector<double>{ 0.0, 1.0, 2.5 } ) );
    EXPECT_EQ( net.settings.saved_species, ( std::vector<int>{ 0, 3 } ) );
    EXPECT_EQ( net.settings.absolute_tolerances, ( std::vector<double>{ 1e-9 } ) );
    ASSERT_TRUE( net.settings.relative_tolerance.has_value() );
    EXPECT_EQ( *net.settings.relative_tolerance, 1e-6 );
}

TEST( OdeTextModel, ReadsTheDataFileWithLinspace )
{
    const ReactionNetwork net = read_text_model( data_dir + "/model.txt" );
    EXPECT_EQ( net.species_names, ( std::vector<std::string>{ "A", "B", "C" } ) );
    EXPECT_EQ( net.initial_state, ( std::vector<double>{ 1.0, 0.5, 0.0 } ) );
    EXPECT_EQ( net.reaction_count(), 4 );
    ASSERT_EQ( net.settings.sample_times.size(), 11u );
    for ( int i = 0; i < 11; ++i )
        EXPECT_DOUBLE_EQ( net.settings.sample_times[i], 5.0 * i );
    EXPECT_EQ( net.settings.sample_times.back(), 50.0 );
}

TEST( OdeTextModel, EveryErrorNamesFileAndLine )
{
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B\n", "model.txt" ), "model.txt:1:", "missing rate constant" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\nA -> B, k=-1\n", "model.txt" ), "model.txt:2:", "negative" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\n\nA + A -> B, k=1\n", "model.txt" ), "model.txt:3:",
                        "'A' is listed twice among the reactants" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B + 2 B, k=1\n", "model.txt" ), "model.txt:1:", "products" );
    EXPECT_INPUT_ERROR( parse_text_model( "0 A -> B, k=1\n", "model.txt" ), "model.txt:1:", "coefficient 0" );
    EXPECT_INPUT_ERROR( parse_text_model( "1.5 A -> B, k=1\n", "model.txt" ), "model.txt:1:",
                        "cannot read the reactant term '1.5 A'" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> -1 B, k=1\n", "model.txt" ), "model.txt:1:", "product term" );
    EXPECT_INPUT_ERROR( parse_text_model( "A + -> B, k=1\n", "model.txt" ), "model.txt:1:", "empty term" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=abc\n", "model.txt" ), "model.txt:1:", "not a number" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=nan\n", "model.txt" ), "model.txt:1:", "not a number" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1 2\n", "model.txt" ), "model.txt:1:", "not a number" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, q=1\n", "model.txt" ), "model.txt:1:", "expected 'k=<value>'" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B -> C, k=1\n", "model.txt" ), "model.txt:1:", "two '->'" );
    EXPECT_INPUT_ERROR( parse_text_model( " -> , k=1\n", "model.txt" ), "model.txt:1:", "neither reactants nor products" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\n# c\ninit Z = 1\n", "model.txt" ), "model.txt:3:",
                        "unknown species 'Z'" );
    EXPECT_INPUT_ERROR( parse_text_model( "init A = 1\nA -> B, k=1\ninit A = 2\n", "model.txt" ), "model.txt:3:",
                        "second initial value" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\ninit A = -1\n", "model.txt" ), "model.txt:2:", "negative" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\nfoo bar\n", "model.txt" ), "model.txt:2:", "cannot read" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\nfoo = 3\n", "model.txt" ), "model.txt:2:", "unknown setting 'foo'" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\nsample_times = 0, 2, 1\n", "model.txt" ), "model.txt:2:",
                        "strictly increasing" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\nsample_times = linspace(0, 1)\n", "model.txt" ),
                        "model.txt:2:", "linspace" );
    // A count of a few characters that asks for gigabytes (found by fuzzing: 999999911 sample times); 10^7 is
    // still accepted.
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\nsample_times = linspace(2, 50, 999999911)\n", "model.txt" ),
                        "model.txt:2:", "linspace count 999999911 gives more than 10000000 sample times" );
    EXPECT_EQ( parse_text_model( "A -> B, k=1\nsample_times = linspace(0, 1, 10000000)\n", "model.txt" )
                   .settings.sample_times.size(),
               10000000u );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\nrtol = 1e-3\nrtol = 1e-4\n", "model.txt" ), "model.txt:3:",
                        "given twice" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\natol = 0\n", "model.txt" ), "model.txt:2:", "not positive" );
    EXPECT_INPUT_ERROR( parse_text_model( "A -> B, k=1\nsave = Q\n", "model.txt" ), "model.txt:2:", "'Q' is unknown" );
    EXPECT_INPUT_ERROR( parse_text_model( "R1: A -> B, k=1\nR1: B -> A, k=1\n", "model.txt" ), "model.txt:2:",
                        "label 'R1' is used twice" );
    EXPECT_INPUT_ERROR( parse_text_model( "# nothing\n", "model.txt" ), "model.txt", "no reactions" );
    EXPECT_INPUT_ERROR( read_text_model( data_dir + "/no_such_model.txt" ), "no_such_model.txt" );
}

// --- LASSIE / cupSODA folder ------------------------------------------------------------------------------

TEST( OdeFolderModel, ReadsTheDataFolder )
{
    const ReactionNetwork net = read_folder_model( data_dir + "/lassie" );
    const ReactionNetwork text = read_text_model( data_dir + "/model.txt" );
    EXPECT_EQ( net.species_names, text.species_names );
    EXPECT_EQ( net.initial_state, text.initial_state );
    ASSERT_EQ( net.reaction_count(), text.reaction_count() );
    for ( int r = 0; r < net.reaction_count(); ++r )
    {
        EXPECT_EQ( terms( net.reactions[r].reactants ), terms( text.reactions[r].reactants ) );
        EXPECT_EQ( terms( net.reactions[r].products ), terms( text.reactions[r].products ) );
        EXPECT_EQ( net.reactions[r].rate_constant, text.reactions[r].rate_constant );
    }
    EXPECT_EQ( net.settings.sample_times, ( std::vector<double>{ 0, 5, 10 } ) );
    EXPECT_EQ( net.settings.saved_species, ( std::vector<int>{ 0, 2 } ) );
    EXPECT_EQ( net.settings.absolute_tolerances, ( std::vector<double>{ 1e-9 } ) );
    EXPECT_EQ( net.settings.relative_tolerance, 1e-6 );
}

TEST( OdeFolderModel, WriteThenReadIsExact )
{
    ReactionNetwork text = read_text_model( data_dir + "/model.txt" );
    text.settings.saved_species = { 2, 0 };
    text.settings.absolute_tolerances = { 1e-10, 2e-10, 3e-10 };
    text.settings.relative_tolerance = 1.0 / 3.0;
    const fs::path dir = scratch( "round_trip_text" );
    write( dir / "volume", "1e-15\n" ); // a stale file must not survive the writer
    write_folder_model( text, dir.string() );
    expect_same( read_folder_model( dir.string() ), text );

    // Doubles with all 17 significant digits, unnamed reactions, no settings.
    const ReactionNetwork synthetic = generate_synthetic_network( 40, 120, 7 );
    const fs::path dir2 = scratch( "round_trip_synthetic" );
    write_folder_model( synthetic, dir2.string() );
    EXPECT_FALSE( fs::exists( dir2 / "reaction_names" ) );
    expect_same( read_folder_model( dir2.string() ), synthetic );

    // Writing over an earlier model removes its optional files.
    write_folder_model( synthetic, dir.string() );
    expect_same( read_folder_model( dir.string() ), synthetic );
}

TEST( OdeFolderModel, StochasticModelIsConvertedToConcentrations )
{
    const fs::path dir = scratch( "stochastic" );
    write( dir / "left_side", "1\t0\t0\n2\t0\t0\n1\t1\t0\n0\t0\t0\n" );
    write( dir / "right_side", "0\t1\t0\n0\t0\t1\n0\t0\t1\n1\t0\t0\n" );
    write( dir / "c_vector", "0.5\n3e-9\n2e-9\n40\n" );
    write( dir / "M_0", "6000\t1200\t0\n" );
    write( dir / "modelkind", "stochastic\n" );
    write( dir / "volume", "1e-15\n" );
    const ReactionNetwork net = read_folder_model( dir.string() );
    // N_A V = 6.02214076e23 * 1e-15 = 6.02214076e8; k = c (N_A V)^(order-1) / prod a_j!.
    const double nav = 6.02214076e23 * 1e-15;
    EXPECT_DOUBLE_EQ( net.reactions[0].rate_constant, 0.5 );            // A -> B, order 1
    EXPECT_DOUBLE_EQ( net.reactions[1].rate_constant, 3e-9 * nav / 2 ); // 2A -> C: 0.903321114
    EXPECT_DOUBLE_EQ( net.reactions[2].rate_constant, 2e-9 * nav );     // A + B -> C: 1.204428152
    EXPECT_DOUBLE_EQ( net.reactions[3].rate_constant, 40 / nav );       // -> A, order 0
    EXPECT_DOUBLE_EQ( net.initial_state[0], 6000 / nav );
    EXPECT_DOUBLE_EQ( net.initial_state[1], 1200 / nav );
    EXPECT_EQ( net.initial_state[2], 0.0 );
    EXPECT_EQ( net.species_names, ( std::vector<std::string>{ "S0", "S1", "S2" } ) );
}

TEST( OdeFolderModel, EveryErrorNamesFileLineAndColumn )
{
    const std::map<std::string, std::string> good = { { "left_side", "1\t0\n0\t1\n" },
                                                      { "right_side", "0\t1\n1\t0\n" },
                                                      { "c_vector", "0.1\n0.2\n" },
                                                      { "M_0", "1\t0\n" },
                                                      { "alphabet", "X\tY\n" } };
    int case_number = 0;
    auto folder = [&]( std::map<std::string, std::string> changes ) {
        const fs::path dir = scratch( "bad_folder_" + std::to_string( case_number++ ) );
        std::map<std::string, std::string> files = good;
        for ( const auto& [name, text] : changes )
            files[name] = text;
        for ( const auto& [name, text] : files )
            if ( text != "<absent>" )
                write( dir / name, text );
        return dir.string();
    };
    EXPECT_NO_THROW( read_folder_model( folder( {} ) ) );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "left_side", "1\t0\n0\t-1\n" } } ) ), "left_side:2:",
                        "column 2", "non-negative integer" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "left_side", "1\t0\n0\t1.5\n" } } ) ), "left_side:2:",
                        "column 2" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "right_side", "0\t1\n1\t0\t0\n" } } ) ), "right_side:2:",
                        "3 columns; expected 2" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "right_side", "0\t1\n" } } ) ), "right_side", "1 rows" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "left_side", "1\t0\n\n0\t1\n" } } ) ), "left_side:2:",
                        "blank line" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "c_vector", "0.1\n" } } ) ), "c_vector", "1 rate constants" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "c_vector", "0.1\t0.2\n" } } ) ), "c_vector:1:",
                        "2 values on one line" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "c_vector", "0.1\n-0.2\n" } } ) ), "c_vector:2:", "negative" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "c_vector", "0.1\nx\n" } } ) ), "c_vector:2:", "column 1",
                        "'x' is not a number" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "c_vector", "<absent>" } } ) ),
                        "neither 'c_vector' nor 'c_matrix'" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "c_matrix", "0.1\t0.2\n" } } ) ),
                        "both 'c_vector' and 'c_matrix'" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "M_0", "1\n" } } ) ), "M_0:1:", "1 values; expected 2" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "M_0", "<absent>" }, { "MX_0", "1\t0\n2\t0\n" } } ) ),
                        "MX_0", "2 lines" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "alphabet", "X\tY\tZ\n" } } ) ), "alphabet", "3 names" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "M_feed", "0\t5\n" } } ) ), "M_feed:1:", "column 2",
                        "'Y'", "non-zero" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "volume", "1e-15\n" } } ) ), "'volume' file but no 'modelkind'" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "modelkind", "stochastic\n" } } ) ), "no 'volume' file" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "modelkind", "exact\n" } } ) ), "modelkind:1:" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "modelkind", "stochastic\n" }, { "volume", "-1\n" } } ) ),
                        "volume:1:", "not positive" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "t_vector", "0\n2\n1\n" } } ) ), "t_vector:3:",
                        "strictly increasing" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "cs_vector", "0\n5\n" } } ) ), "cs_vector:2:" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "atol_vector", "1e-9\n1e-9\n1e-9\n" } } ) ), "atol_vector",
                        "3 tolerances" );
    EXPECT_INPUT_ERROR( read_folder_model( folder( { { "reaction_names", "a\n" } } ) ), "reaction_names",
                        "1 lines; expected 2" );
    EXPECT_INPUT_ERROR( read_folder_model( data_dir + "/no_such_folder" ), "no_such_folder" );
}

// --- SBML -------------------------------------------------------------------------------------------------

TEST( OdeSbmlModel, MassActionWithCompartmentVolumeAndLocalParameters )
{
    if ( !MORULA_HAVE_SBML )
        GTEST_SKIP() << "Morula was built without libsbml";
    const ReactionNetwork net = read_sbml_model( data_dir + "/mass_action_l3.xml" );
    EXPECT_EQ( net.species_names, ( std::vector<std::string>{ "A", "B", "C", "D", "E" } ) );
    // A concentration 1; B amount 3 in size 2 -> 1.5; C 0; D amount 4 (hasOnlySubstanceUnits) -> 2; E 0.1.
    EXPECT_EQ( net.initial_state, ( std::vector<double>{ 1.0, 1.5, 0.0, 2.0, 0.1 } ) );
    // The law v is in amount/time and d[X]/dt = (b - a) v / V with V = 2, so k = (law without species) / 2:
    //   R1  cell * k1 * A * B, k1 = 0.5:           2 * 0.5 / 2 = 0.5
    //   R2  kg * C, kg = 0.4:                      0.4 / 2 = 0.2
    //   R3  cell * (kf * A^2 - kr * D), kf = 3:   forward 2 * 3 / 2 = 3;
    //       D is an amount (2 [D]), kr = 0.25:    reverse 2 * 0.25 * 2 / 2 = 0.5
    //   R4  0.6:                                   0.6 / 2 = 0.3
    //   R5  cell * kcat * E * A, kcat = 10:        2 * 10 / 2 = 10, E joins both sides as a catalyst
    ASSERT_EQ( net.reaction_count(), 6 );
    const std::vector<std::string> names = { "R1", "R2", "R3", "R3_reverse", "R4", "R5" };
    const std::vector<double> k = { 0.5, 0.2, 3.0, 0.5, 0.3, 10.0 };
    const std::vector<Terms> left = { { { 0, 1 }, { 1, 1 } }, { { 2, 1 } }, { { 0, 2 } }, { { 3, 1 } }, {},
                                      { { 0, 1 }, { 4, 1 } } };
    const std::vector<Terms> right = { { { 2, 1 } }, { { 0, 1 } }, { { 3, 1 } }, { { 0, 2 } }, { { 2, 1 } },
                                       { { 2, 1 }, { 4, 1 } } };
    for ( int r = 0; r < 6; ++r )
    {
        EXPECT_EQ( net.reactions[r].name, names[r] );
        EXPECT_DOUBLE_EQ( net.reactions[r].rate_constant, k[r] ) << names[r];
        EXPECT_EQ( terms( net.reactions[r].reactants ), left[r] ) << names[r];
        EXPECT_EQ( terms( net.reactions[r].products ), right[r] ) << names[r];
    }
    EXPECT_EQ( read_model( data_dir + "/mass_action_l3.xml" ).reaction_count(), 6 );
}

TEST( OdeSbmlModel, NonMassActionLawsAreListedInOneError )
{
    if ( !MORULA_HAVE_SBML )
        GTEST_SKIP() << "Morula was built without libsbml";
    const std::string message = error_of( [] { read_sbml_model( data_dir + "/michaelis_menten.xml" ); } );
    EXPECT_NE( message.find( "michaelis_menten.xml" ), std::string::npos ) << message;
    EXPECT_NE( message.find( "2 problems" ), std::string::npos ) << message;
    EXPECT_NE( message.find( "reaction 'R1' (Vmax * S / (Km + S))" ), std::string::npos ) << message;
    EXPECT_NE( message.find( "divides by 'Km + S'" ), std::string::npos ) << message;
    EXPECT_NE( message.find( "reaction 'R3'" ), std::string::npos ) << message;
    EXPECT_NE( message.find( "stoichiometry 1 but exponent 2" ), std::string::npos ) << message;
    EXPECT_EQ( message.find( "'R2'" ), std::string::npos ) << message;
}

TEST( OdeSbmlModel, RulesEventsAndFixedSpeciesAreRejected )
{
    if ( !MORULA_HAVE_SBML )
        GTEST_SKIP() << "Morula was built without libsbml";
    const fs::path dir = scratch( "sbml" );
    const std::string head = R"(<?xml version="1.0" encoding="UTF-8"?>
<sbml xmlns="http://www.sbml.org/sbml/level3/version1/core" level="3" version="1"><model id="m">
<listOfCompartments><compartment id="c" size="1" constant="true"/></listOfCompartments>
<listOfSpecies>
<species id="S" compartment="c" initialConcentration="1" hasOnlySubstanceUnits="false" boundaryCondition="true" constant="false"/>
<species id="P" compartment="c" initialConcentration="0" hasOnlySubstanceUnits="false" boundaryCondition="false" constant="false"/>
</listOfSpecies>
<listOfParameters><parameter id="k" value="1" constant="false"/></listOfParameters>
<listOfRules><assignmentRule variable="k"><math xmlns="http://www.w3.org/1998/Math/MathML"><cn>2</cn></math></assignmentRule></listOfRules>
<listOfReactions><reaction id="R1" reversible="false" fast="false">
<listOfReactants><speciesReference species="S" stoichiometry="1" constant="true"/></listOfReactants>
<kineticLaw><math xmlns="http://www.w3.org/1998/Math/MathML"><apply><times/><ci>k</ci><ci>S</ci></apply></math></kineticLaw>
</reaction></listOfReactions></model></sbml>
)";
    write( dir / "fixed.xml", head );
    EXPECT_INPUT_ERROR( read_sbml_model( ( dir / "fixed.xml" ).string() ), "fixed.xml", "assignment rule for 'k'",
                        "parameter 'k' is not constant", "species 'S' has boundaryCondition=true" );
    write( dir / "broken.xml", "<sbml><model" );
    EXPECT_INPUT_ERROR( read_sbml_model( ( dir / "broken.xml" ).string() ), "broken.xml" );
    EXPECT_INPUT_ERROR( read_sbml_model( ( dir / "missing.xml" ).string() ), "missing.xml" );
}

TEST( OdeSbmlModel, WithoutLibsbmlTheReaderSaysSo )
{
#if MORULA_HAVE_SBML
    GTEST_SKIP() << "Morula was built with libsbml";
#else
    EXPECT_INPUT_ERROR( read_sbml_model( data_dir + "/mass_action_l3.xml" ), "without libsbml", "libsbml5-dev" );
    EXPECT_INPUT_ERROR( read_model( data_dir + "/mass_action_l3.xml" ), "without libsbml" );
#endif
}

TEST( OdeReadModel, ChoosesTheReaderByPath )
{
    EXPECT_EQ( read_model( data_dir + "/model.txt" ).reaction_count(), 4 );
    EXPECT_EQ( read_model( data_dir + "/lassie" ).reaction_count(), 4 );
    EXPECT_INPUT_ERROR( read_model( data_dir + "/nothing_here" ), "nothing_here", "does not exist" );
}

// --- validate ---------------------------------------------------------------------------------------------

TEST( OdeValidate, RejectsEachMalformedCase )
{
    const ReactionNetwork good = parse_text_model( "R1: A + B -> C, k=1\nC -> A, k=2\n", "net" );
    EXPECT_NO_THROW( validate( good ) );
    auto broken = [&]( const std::function<void( ReactionNetwork& )>& change ) {
        ReactionNetwork n = good;
        change( n );
        return n;
    };
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.reactions[0].reactants[0].species = 3; } ) ),
                        "net: reaction 'R1'", "outside [0, 3)" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.reactions[1].products[0].species = -1; } ) ),
                        "reaction R1", "outside" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.reactions[0].products[0].coefficient = 0; } ) ),
                        "coefficient of 'C' is 0" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.reactions[0].reactants[1].species = 0; } ) ),
                        "'A' appears twice among the reactants" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.reactions[1].rate_constant = -1; } ) ),
                        "rate constant is -1" );
    EXPECT_INPUT_ERROR(
        validate( broken( []( ReactionNetwork& n ) { n.reactions[1].rate_constant = std::nan( "" ); } ) ),
        "rate constant is nan" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.initial_state[2] = -0.5; } ) ),
                        "initial value of species 'C'" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.initial_state[0] = HUGE_VAL; } ) ),
                        "initial value of species 'A'" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.initial_state.pop_back(); } ) ),
                        "2 initial values for 3 species" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.species_names[2] = "A"; } ) ),
                        "'A' is used twice" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.species_names[1] = ""; } ) ),
                        "species 1 has an empty name" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.settings.sample_times = { 0, 1, 1 }; } ) ),
                        "strictly increasing" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.settings.sample_times = { -1, 1 }; } ) ),
                        "sample time 0 is -1" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.settings.saved_species = { 0, 3 }; } ) ),
                        "saved species index 3" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.settings.saved_species = { 1, 1 }; } ) ),
                        "'B' is listed twice" );
    EXPECT_INPUT_ERROR(
        validate( broken( []( ReactionNetwork& n ) { n.settings.absolute_tolerances = { 1e-9, 1e-9 }; } ) ),
        "2 absolute tolerances for 3 species" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.settings.absolute_tolerances = { 0 }; } ) ),
                        "absolute tolerance 0" );
    EXPECT_INPUT_ERROR( validate( broken( []( ReactionNetwork& n ) { n.settings.relative_tolerance = -1e-3; } ) ),
                        "relative tolerance" );
}

// A side's order must fit the compiled system's int (found writing the fuzz targets; the inputs are in
// tests/fuzz/regressions/reactions_text and lassie_folder): every reader, and the compilation, say so.
TEST( OdeValidate, RejectsAnOrderBeyondAnInt )
{
    EXPECT_INPUT_ERROR( parse_text_model( "2147483647 A + 2147483647 B -> C, k=1\n", "order.txt" ),
                        "order.txt", "the reactant coefficients sum to 4294967294; expected at most 2147483647" );
    const fs::path dir = scratch( "order_overflow" );
    write( dir / "left_side", "1000000000 1000000000 1000000000 0\n" );
    write( dir / "right_side", "0 0 0 1\n" );
    write( dir / "c_vector", "1\n" );
    write( dir / "M_0", "1 1 1 0\n" );
    EXPECT_INPUT_ERROR( read_folder_model( dir.string() ), "reactant coefficients sum to 3000000000" );
}

} // namespace
