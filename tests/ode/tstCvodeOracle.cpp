/*!
  \file tstCvodeOracle.cpp
  \brief Checks the CVODE oracle itself, before anything is checked against it: its analytic Jacobian
         against finite differences, its solutions against closed forms and against published values
         of Robertson's problem, its linear-solver variants against each other, and its folder reader.
*/
#include <CvodeOracle.hpp>
#include <RobertsonReference.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

using morula::ode::Reaction;
using morula::ode::ReactionNetwork;
using morula::test::cvode_solve;
using morula::test::OracleOptions;

ReactionNetwork make_network( int species, const std::vector<double>& x0 )
{
    ReactionNetwork network;
    for ( int s = 0; s < species; ++s )
    {
        network.species_names.push_back( "S" + std::to_string( s ) );
    }
    network.initial_state = x0;
    network.source = "tstCvodeOracle";
    return network;
}

void add_reaction( ReactionNetwork& network, std::vector<morula::ode::StoichiometryTerm> reactants,
                   std::vector<morula::ode::StoichiometryTerm> products, double k )
{
    Reaction r;
    r.reactants = std::move( reactants );
    r.products = std::move( products );
    r.rate_constant = k;
    network.reactions.push_back( std::move( r ) );
}

// |got - want| <= rel |want| + abs, with a message naming the sample and component.
void expect_close( double got, double want, double rel, double abs, const std::string& what )
{
    EXPECT_LE( std::abs( got - want ), rel * std::abs( want ) + abs )
        << what << ": got " << got << ", want " << want << ", relative error "
        << std::abs( got - want ) / std::max( std::abs( want ), 1e-300 );
}

ReactionNetwork robertson()
{
    namespace rb = morula::test::robertson;
    auto network = make_network( 3, { rb::kInitial[0], rb::kInitial[1], rb::kInitial[2] } );
    add_reaction( network, { { 0, 1 } }, { { 1, 1 } }, rb::kRate1 );                     // A -> B
    add_reaction( network, { { 1, 2 } }, { { 2, 1 }, { 1, 1 } }, rb::kRate2 );           // 2B -> C + B
    add_reaction( network, { { 1, 1 }, { 2, 1 } }, { { 0, 1 }, { 2, 1 } }, rb::kRate3 ); // B + C -> A + C
    return network;
}

// Random network of reaction order <= 3 (some zero-order sources, some 2A, 3A, A+B, A+2B), with
// catalysts (a species on both sides) so that B - A has zeros where A does not.
ReactionNetwork random_network( int species, int reactions, unsigned seed, int max_order = 3 )
{
    std::mt19937 rng( seed );
    std::uniform_real_distribution<double> unit( 0.0, 1.0 );
    std::uniform_int_distribution<int> pick( 0, species - 1 );
    std::vector<double> x0( species );
    for ( auto& x : x0 )
    {
        x = unit( rng );
    }
    auto network = make_network( species, x0 );
    for ( int r = 0; r < reactions; ++r )
    {
        std::vector<int> a( species, 0 );
        std::vector<int> b( species, 0 );
        const int order = std::uniform_int_distribution<int>( 0, max_order )( rng );
        for ( int i = 0; i < order; ++i )
        {
            ++a[pick( rng )];
        }
        const int produced = std::uniform_int_distribution<int>( 0, 2 )( rng );
        for ( int i = 0; i < produced; ++i )
        {
            ++b[pick( rng )];
        }
        std::vector<morula::ode::StoichiometryTerm> reactants;
        std::vector<morula::ode::StoichiometryTerm> products;
        for ( int s = 0; s < species; ++s )
        {
            if ( a[s] > 0 )
            {
                reactants.push_back( { s, a[s] } );
            }
            if ( b[s] > 0 )
            {
                products.push_back( { s, b[s] } );
            }
        }
        add_reaction( network, reactants, products, std::pow( 10.0, -3.0 * unit( rng ) ) );
    }
    return network;
}

} // namespace

// -------------------------------------------------------------------------------------------------------
// The model: right-hand side on a hand example, Jacobian against finite differences
// -------------------------------------------------------------------------------------------------------
TEST( CvodeOracle, RhsMatchesHandComputedMassAction )
{
    // 2A + B -> C (k = 2), C -> A (k = 0.5), -> B (k = 0.1, zero order)
    auto network = make_network( 3, { 0.3, 0.7, 0.2 } );
    add_reaction( network, { { 0, 2 }, { 1, 1 } }, { { 2, 1 } }, 2.0 );
    add_reaction( network, { { 2, 1 } }, { { 0, 1 } }, 0.5 );
    add_reaction( network, {}, { { 1, 1 } }, 0.1 );
    const std::vector<double> x = { 0.3, 0.7, 0.2 };
    const double r1 = 2.0 * 0.3 * 0.3 * 0.7;
    const double r2 = 0.5 * 0.2;
    const double r3 = 0.1;
    const auto dx = morula::test::mass_action_rhs( network, x );
    ASSERT_EQ( dx.size(), 3u );
    EXPECT_DOUBLE_EQ( dx[0], -2.0 * r1 + r2 );
    EXPECT_DOUBLE_EQ( dx[1], -r1 + r3 );
    EXPECT_DOUBLE_EQ( dx[2], r1 - r2 );
}

TEST( CvodeOracle, AnalyticJacobianMatchesCentralDifferences )
{
    for ( unsigned seed = 1; seed <= 5; ++seed )
    {
        const auto network = random_network( 7, 20, seed );
        std::mt19937 rng( 100 + seed );
        std::uniform_real_distribution<double> unit( 0.05, 2.0 );
        std::vector<double> x( 7 );
        for ( auto& v : x )
        {
            v = unit( rng );
        }
        // One state with exact zeros: the analytic form must not divide by x_j there.
        for ( int variant = 0; variant < 2; ++variant )
        {
            if ( variant == 1 )
            {
                x[0] = 0.0;
                x[3] = 0.0;
            }
            const auto jac = morula::test::mass_action_jacobian( network, x );
            for ( int j = 0; j < 7; ++j )
            {
                // Central differences of a polynomial of degree <= 3: the error is h^2 f'''/6, so h = 1e-4
                // leaves about 1e-8 truncation and 1e-12 rounding.
                const double h = 1e-4;
                auto xp = x;
                auto xm = x;
                xp[j] += h;
                xm[j] -= h;
                const auto fp = morula::test::mass_action_rhs( network, xp );
                const auto fm = morula::test::mass_action_rhs( network, xm );
                for ( int i = 0; i < 7; ++i )
                {
                    const double fd = ( fp[i] - fm[i] ) / ( 2.0 * h );
                    expect_close( jac[i * 7 + j], fd, 1e-6, 1e-7,
                                  "seed " + std::to_string( seed ) + " variant " + std::to_string( variant ) +
                                      " J(" + std::to_string( i ) + "," + std::to_string( j ) + ")" );
                }
            }
        }
    }
}

// -------------------------------------------------------------------------------------------------------
// Closed-form solutions
// -------------------------------------------------------------------------------------------------------
TEST( CvodeOracle, FirstOrderDecay )
{
    // A -> B: a = a0 exp(-k t), b = b0 + a0 - a.
    const double k = 0.7;
    const double a0 = 2.0;
    const double b0 = 0.25;
    auto network = make_network( 2, { a0, b0 } );
    add_reaction( network, { { 0, 1 } }, { { 1, 1 } }, k );
    const std::vector<double> times = { 0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0 };
    const auto samples = cvode_solve( network, times );
    ASSERT_EQ( samples.size(), times.size() );
    for ( std::size_t s = 0; s < times.size(); ++s )
    {
        const double a = a0 * std::exp( -k * times[s] );
        expect_close( samples[s][0], a, 1e-8, 1e-13, "A at t = " + std::to_string( times[s] ) );
        expect_close( samples[s][1], b0 + a0 - a, 1e-8, 1e-13, "B at t = " + std::to_string( times[s] ) );
    }
}

TEST( CvodeOracle, ReversibleIsomerisation )
{
    // A <-> B (kf, kb): a = a_eq + (a0 - a_eq) exp(-(kf + kb) t), a_eq = kb (a0 + b0) / (kf + kb).
    const double kf = 3.0;
    const double kb = 1.2;
    const double a0 = 1.0;
    const double b0 = 0.4;
    auto network = make_network( 2, { a0, b0 } );
    add_reaction( network, { { 0, 1 } }, { { 1, 1 } }, kf );
    add_reaction( network, { { 1, 1 } }, { { 0, 1 } }, kb );
    const std::vector<double> times = { 0.0, 0.05, 0.2, 0.5, 1.0, 3.0, 10.0 };
    const auto samples = cvode_solve( network, times );
    const double a_eq = kb * ( a0 + b0 ) / ( kf + kb );
    for ( std::size_t s = 0; s < times.size(); ++s )
    {
        const double a = a_eq + ( a0 - a_eq ) * std::exp( -( kf + kb ) * times[s] );
        expect_close( samples[s][0], a, 1e-8, 1e-13, "A at t = " + std::to_string( times[s] ) );
        expect_close( samples[s][1], a0 + b0 - a, 1e-8, 1e-13, "B at t = " + std::to_string( times[s] ) );
    }
}

TEST( CvodeOracle, SecondOrderHeterodimerWithUnequalInitialValues )
{
    // A + B -> C, rate k a b. With d = a0 - b0 != 0, b = a - d at all times, so
    //   da/dt = -k a (a - d),   1 / (a (a - d)) = (1/d) (1/(a - d) - 1/a),
    //   (1/d) ln((a - d) / a) = -k t + (1/d) ln(b0 / a0)   =>   1 - d/a = (b0/a0) exp(-d k t)
    //   a(t) = d a0 / (a0 - b0 exp(-d k t)) = (a0 - b0) a0 / (a0 - b0 exp(-(a0 - b0) k t)),
    // b(t) = a(t) - d = d b0 E / (a0 - b0 E) with E = exp(-d k t) (the form without cancellation),
    // c(t) = c0 + a0 - a(t).
    const double k = 1.7;
    const double a0 = 1.0;
    const double b0 = 0.6;
    const double c0 = 0.1;
    auto network = make_network( 3, { a0, b0, c0 } );
    add_reaction( network, { { 0, 1 }, { 1, 1 } }, { { 2, 1 } }, k );
    const std::vector<double> times = { 0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0 };
    const auto samples = cvode_solve( network, times );
    const double d = a0 - b0;
    for ( std::size_t s = 0; s < times.size(); ++s )
    {
        const double e = std::exp( -d * k * times[s] );
        const double a = d * a0 / ( a0 - b0 * e );
        const double b = d * b0 * e / ( a0 - b0 * e );
        expect_close( samples[s][0], a, 1e-8, 1e-13, "A at t = " + std::to_string( times[s] ) );
        // B decays by 2000x over the run; the global error relative to its current value grows past
        // rtol (1.1e-8 at t = 10), so it gets one more digit of slack.
        expect_close( samples[s][1], b, 1e-7, 1e-13, "B at t = " + std::to_string( times[s] ) );
        expect_close( samples[s][2], c0 + a0 - a, 1e-8, 1e-13, "C at t = " + std::to_string( times[s] ) );
    }
}

TEST( CvodeOracle, SecondOrderDimerisation )
{
    // 2A -> B with mass-action rate k a^2; each event consumes two A, so
    //   da/dt = -2 k a^2  =>  a(t) = a0 / (1 + 2 k a0 t),   b(t) = b0 + (a0 - a(t)) / 2.
    const double k = 0.8;
    const double a0 = 1.5;
    const double b0 = 0.0;
    auto network = make_network( 2, { a0, b0 } );
    add_reaction( network, { { 0, 2 } }, { { 1, 1 } }, k );
    const std::vector<double> times = { 0.0, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0 };
    const auto samples = cvode_solve( network, times );
    for ( std::size_t s = 0; s < times.size(); ++s )
    {
        const double a = a0 / ( 1.0 + 2.0 * k * a0 * times[s] );
        expect_close( samples[s][0], a, 1e-8, 1e-13, "A at t = " + std::to_string( times[s] ) );
        expect_close( samples[s][1], b0 + 0.5 * ( a0 - a ), 1e-8, 1e-13, "B at t = " + std::to_string( times[s] ) );
    }
}

// -------------------------------------------------------------------------------------------------------
// Robertson's problem against published values
// -------------------------------------------------------------------------------------------------------
namespace
{
// y2 falls to 1e-13, so the absolute tolerance must sit far below it for relative accuracy there.
OracleOptions robertson_options()
{
    OracleOptions options;
    options.relative_tolerance = 1e-10;
    options.absolute_tolerance = 1e-24;
    return options;
}
} // namespace

TEST( CvodeOracle, RobertsonMatchesPublishedReferenceValues )
{
    namespace rb = morula::test::robertson;
    const std::vector<double> times = { rb::kHairerWannerTime, rb::kSundialsTime, rb::kTestSetTime };
    const auto samples = cvode_solve( robertson(), times, robertson_options() );
    for ( int i = 0; i < 3; ++i )
    {
        const std::string c = "y" + std::to_string( i + 1 );
        // Hairer & Wanner give 10 digits: rounding alone is up to 5e-10 relative.
        expect_close( samples[0][i], rb::kHairerWannerState[i], 1e-6, 0.0, c + " at t = 40 (Hairer & Wanner)" );
        expect_close( samples[1][i], rb::kSundialsState[i], rb::kSundialsAccuracy, 0.0,
                      c + " at t = 4e10 (SUNDIALS cvRoberts_dns)" );
        expect_close( samples[2][i], rb::kTestSetState[i], 1e-6, 0.0, c + " at t = 1e11 (Test Set for IVP Solvers)" );
    }
}

TEST( CvodeOracle, RobertsonMatchesDecadeTable )
{
    namespace rb = morula::test::robertson;
    std::vector<double> times( rb::kDecadeTimes, rb::kDecadeTimes + rb::kDecadeCount );
    times.insert( times.begin(), 0.0 );
    const auto samples = cvode_solve( robertson(), times, robertson_options() );
    ASSERT_EQ( samples.size(), times.size() );
    EXPECT_EQ( samples[0], std::vector<double>( { 1.0, 0.0, 0.0 } ) );
    for ( int s = 0; s < rb::kDecadeCount; ++s )
    {
        for ( int i = 0; i < 3; ++i )
        {
            expect_close( samples[s + 1][i], rb::kDecadeStates[s][i], 1e-6, 0.0,
                          "y" + std::to_string( i + 1 ) + " at t = " + std::to_string( rb::kDecadeTimes[s] ) );
        }
        // y1 + y2 + y3 = 1 is a linear invariant that BDF preserves to rounding and Newton tolerance.
        EXPECT_NEAR( samples[s + 1][0] + samples[s + 1][1] + samples[s + 1][2], 1.0, 1e-12 );
    }
}

// -------------------------------------------------------------------------------------------------------
// Interface behaviour
// -------------------------------------------------------------------------------------------------------
TEST( CvodeOracle, SamplesAtStartAndRepeatedTimes )
{
    auto network = make_network( 2, { 1.0, 0.0 } );
    add_reaction( network, { { 0, 1 } }, { { 1, 1 } }, 1.0 );
    const auto samples = cvode_solve( network, { 0.0, 0.0, 1.0, 1.0 } );
    ASSERT_EQ( samples.size(), 4u );
    EXPECT_EQ( samples[0], network.initial_state );
    EXPECT_EQ( samples[1], network.initial_state );
    expect_close( samples[2][0], std::exp( -1.0 ), 1e-8, 0.0, "A at t = 1" );
    EXPECT_EQ( samples[2], samples[3] );
}

TEST( CvodeOracle, RejectsBadInputAndReportsCvodeFailures )
{
    auto network = make_network( 2, { 1.0, 0.0 } );
    add_reaction( network, { { 0, 1 } }, { { 1, 1 } }, 1.0 );
    EXPECT_THROW( cvode_solve( network, { 1.0, 0.5 } ), std::invalid_argument );
    EXPECT_THROW( cvode_solve( network, { -1.0 } ), std::invalid_argument );
    auto bad = network;
    bad.reactions[0].reactants[0].species = 5;
    EXPECT_THROW( cvode_solve( bad, { 1.0 } ), std::invalid_argument );
    bad = network;
    bad.initial_state.pop_back();
    EXPECT_THROW( cvode_solve( bad, { 1.0 } ), std::invalid_argument );

    // Robertson to 1e11 in at most 10 steps per output cannot succeed: CVODE returns CV_TOO_MUCH_WORK.
    OracleOptions options = robertson_options();
    options.max_steps = 10;
    try
    {
        cvode_solve( robertson(), { 1e11 }, options );
        ADD_FAILURE() << "expected std::runtime_error";
    }
    catch ( const std::runtime_error& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "CV_TOO_MUCH_WORK" ), std::string::npos ) << e.what();
    }
}

TEST( CvodeOracle, LinearSolverVariantsAgree )
{
    // The benchmark's KLU and SPGMR paths against the dense oracle on a random order-<=2 network.
    const auto network = random_network( 40, 60, 7, 2 );
    const std::vector<double> times = { 0.0, 0.1, 1.0, 10.0, 100.0 };
    morula::test::CvodeSettings settings;
    settings.relative_tolerance = 1e-10;
    settings.absolute_tolerance = 1e-14;
    const auto dense = morula::test::cvode_integrate( network, times, settings );
    std::vector<morula::test::CvodeLinearSolver> others = { morula::test::CvodeLinearSolver::spgmr };
    if ( morula::test::cvode_has_klu() )
    {
        others.push_back( morula::test::CvodeLinearSolver::klu );
    }
    for ( auto solver : others )
    {
        settings.linear_solver = solver;
        morula::test::CvodeStatistics statistics;
        const auto got = morula::test::cvode_integrate( network, times, settings, &statistics );
        EXPECT_GT( statistics.steps, 0 );
        for ( std::size_t s = 0; s < times.size(); ++s )
        {
            for ( std::size_t i = 0; i < dense[s].size(); ++i )
            {
                expect_close( got[s][i], dense[s][i], 1e-6, 1e-10,
                              std::string( solver == morula::test::CvodeLinearSolver::klu ? "KLU" : "SPGMR" ) +
                                  " sample " + std::to_string( s ) + " species " + std::to_string( i ) );
            }
        }
    }
}

// -------------------------------------------------------------------------------------------------------
// LASSIE folder reader
// -------------------------------------------------------------------------------------------------------
namespace
{
struct TempDir
{
    std::filesystem::path path;
    explicit TempDir( const std::string& name )
        : path( std::filesystem::temp_directory_path() / ( "morula_oracle_" + name ) )
    {
        std::filesystem::remove_all( path );
        std::filesystem::create_directories( path );
    }
    ~TempDir() { std::filesystem::remove_all( path ); }
    void write( const std::string& file, const std::string& text ) const
    {
        std::ofstream( path / file ) << text;
    }
};

void write_valid_folder( const TempDir& dir )
{
    // A + B -> C (k = 2), C -> A + B (k = 0.5), 2A -> D (k = 0.1)
    dir.write( "left_side", "1 1 0 0\n0 0 1 0\n2 0 0 0\n" );
    dir.write( "right_side", "0 0 1 0\n1 1 0 0\n0 0 0 1\n\n" );
    dir.write( "c_vector", "2\n0.5\n1e-1\n" );
    dir.write( "MX_0", "1.0 0.5\t0 0\n" );
    dir.write( "t_vector", "0\n0.5\n1\n2\n" );
    dir.write( "alphabet", "A B C D\n" );
    dir.write( "cs_vector", "0\n2\n" );
}
} // namespace

TEST( CvodeOracle, ReadsLassieFolder )
{
    TempDir dir( "valid" );
    write_valid_folder( dir );
    const auto model = morula::test::read_lassie_folder( dir.path.string() );
    const auto& n = model.network;
    EXPECT_EQ( n.species_names, std::vector<std::string>( { "A", "B", "C", "D" } ) );
    ASSERT_EQ( n.reaction_count(), 3 );
    EXPECT_EQ( n.reactions[2].reactants.size(), 1u );
    EXPECT_EQ( n.reactions[2].reactants[0].species, 0 );
    EXPECT_EQ( n.reactions[2].reactants[0].coefficient, 2 );
    EXPECT_DOUBLE_EQ( n.reactions[2].rate_constant, 0.1 );
    EXPECT_EQ( n.initial_state, std::vector<double>( { 1.0, 0.5, 0.0, 0.0 } ) );
    EXPECT_EQ( model.sample_times, std::vector<double>( { 0.0, 0.5, 1.0, 2.0 } ) );
    EXPECT_EQ( n.settings.sample_times, model.sample_times );
    EXPECT_EQ( n.settings.saved_species, std::vector<int>( { 0, 2 } ) );
    const auto samples = cvode_solve( n, model.sample_times );
    EXPECT_EQ( samples.size(), 4u );

    // Without an alphabet, species are named S0.. in column order.
    std::filesystem::remove( dir.path / "alphabet" );
    EXPECT_EQ( morula::test::read_lassie_folder( dir.path.string() ).network.species_names[3], "S3" );
}

TEST( CvodeOracle, RejectsMalformedLassieFolders )
{
    const std::vector<std::pair<std::string, std::string>> breakages = {
        { "left_side", "1 1 0 0\n0 0 1\n2 0 0 0\n" }, // ragged row
        { "right_side", "0 0 1 0\n1 1 0 0\n" },       // M differs
        { "left_side", "1 1.5 0 0\n0 0 1 0\n2 0 0 0\n" }, // fractional coefficient
        { "left_side", "1 x 0 0\n0 0 1 0\n2 0 0 0\n" },   // not a number
        { "c_vector", "2\n0.5\n" },                   // too few rates
        { "c_vector", "2\n-0.5\n1\n" },               // negative rate
        { "MX_0", "1 2 3\n" },                        // too few initial values
        { "t_vector", "0\n2\n1\n" },                  // decreasing times
        { "alphabet", "A B C\n" },                    // too few names
        { "cs_vector", "7\n" },                       // index out of range
    };
    for ( const auto& [file, text] : breakages )
    {
        TempDir dir( "broken" );
        write_valid_folder( dir );
        dir.write( file, text );
        EXPECT_THROW( morula::test::read_lassie_folder( dir.path.string() ), std::runtime_error )
            << file << ": " << text;
    }
    TempDir missing( "missing" );
    write_valid_folder( missing );
    std::filesystem::remove( missing.path / "t_vector" );
    EXPECT_THROW( morula::test::read_lassie_folder( missing.path.string() ), std::runtime_error );
}
