/*!
  \file cvode_benchmark.cpp
  \brief CVODE baseline for mass-action models in the LASSIE/cupSODA folder format: the counterpart of
         lsoda_reference.py, with SUNDIALS CVODE (BDF, Newton) in place of SciPy's LSODA.

  Usage:
    morula_cvode_benchmark MODEL_DIR [--repeats 5] [--rtol 1e-6] [--atol 1e-12] [--max-steps 10000]
                           [--linear-solver auto|dense|klu|spgmr] [--csv trajectory.csv]
    morula_cvode_benchmark --robertson-ensemble SYSTEMS [--sweep rates|k3] [--t-end 1e5] [--rtol] [--atol]

  The second form is issue #45's CPU baseline: SYSTEMS Robertson systems with the rates ode_benchmark
  --case robertson gives them (every rate +-10% from seed 7, or k3 evenly over [0, 1e4]), each integrated
  by CVODE (dense LU, analytic Jacobian) one after another on one core, over the same 8 sample times;
  one call of the oracle per system, setup included, as a code integrating one system at a time does.

  Defaults follow the LASSIE paper's LSODA settings (rtol 1e-6, atol 1e-12, at most 1e4 internal steps
  per output interval). Linear solver "auto": dense LU with the analytic Jacobian for N <= 512; above
  that, KLU with the analytic sparse Jacobian when SUNDIALS has KLU (mass-action Jacobians are as
  sparse as the network, and dense LU costs N^3 per setup), otherwise matrix-free SPGMR with analytic
  Jacobian-vector products and no preconditioner. Each timed run includes the solver setup, as a call
  of odeint does; one untimed warm-up run precedes them. Prints one JSON line.
*/
#include <CvodeOracle.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace
{

struct Arguments
{
    std::string model;
    int repeats = 5;
    double rtol = 1e-6;
    double atol = 1e-12;
    long max_steps = 10000;
    std::string linear_solver = "auto";
    std::string csv;
    long ensemble = 0;           // --robertson-ensemble: systems (0: the model-folder form)
    std::string sweep = "rates"; // rates | k3
    double t_end = 1e5;
};

[[noreturn]] void usage( const std::string& message )
{
    std::cerr << "morula_cvode_benchmark: " << message << "\n"
              << "usage: morula_cvode_benchmark MODEL_DIR [--repeats N] [--rtol X] [--atol X] [--max-steps N]\n"
              << "                              [--linear-solver auto|dense|klu|spgmr] [--csv FILE]\n";
    std::exit( 2 );
}

Arguments parse( int argc, char** argv )
{
    Arguments a;
    for ( int i = 1; i < argc; ++i )
    {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string
        {
            if ( i + 1 >= argc )
            {
                usage( arg + " needs a value" );
            }
            return argv[++i];
        };
        try
        {
            if ( arg == "--repeats" )
            {
                a.repeats = std::stoi( value() );
            }
            else if ( arg == "--rtol" )
            {
                a.rtol = std::stod( value() );
            }
            else if ( arg == "--atol" )
            {
                a.atol = std::stod( value() );
            }
            else if ( arg == "--max-steps" )
            {
                a.max_steps = std::stol( value() );
            }
            else if ( arg == "--linear-solver" )
            {
                a.linear_solver = value();
            }
            else if ( arg == "--csv" )
            {
                a.csv = value();
            }
            else if ( arg == "--robertson-ensemble" )
            {
                a.ensemble = std::stol( value() );
            }
            else if ( arg == "--sweep" )
            {
                a.sweep = value();
            }
            else if ( arg == "--t-end" )
            {
                a.t_end = std::stod( value() );
            }
            else if ( arg == "-h" || arg == "--help" )
            {
                usage( "help" );
            }
            else if ( !arg.empty() && arg[0] == '-' )
            {
                usage( "unknown option " + arg );
            }
            else if ( a.model.empty() )
            {
                a.model = arg;
            }
            else
            {
                usage( "more than one model folder" );
            }
        }
        catch ( const std::logic_error& )
        {
            usage( "bad value for " + arg );
        }
    }
    if ( a.model.empty() && a.ensemble == 0 )
    {
        usage( "no model folder (or --robertson-ensemble SYSTEMS)" );
    }
    if ( a.ensemble < 0 || ( a.sweep != "rates" && a.sweep != "k3" ) )
    {
        usage( "--robertson-ensemble needs a count >= 1 and --sweep rates or k3" );
    }
    if ( a.repeats < 1 )
    {
        usage( "--repeats must be >= 1" );
    }
    return a;
}

std::string json_string( const std::string& s )
{
    std::string out = "\"";
    for ( char c : s )
    {
        if ( c == '"' || c == '\\' )
        {
            out += '\\';
            out += c;
        }
        else if ( static_cast<unsigned char>( c ) < 0x20 )
        {
            char buffer[8];
            std::snprintf( buffer, sizeof buffer, "\\u%04x", c );
            out += buffer;
        }
        else
        {
            out += c;
        }
    }
    return out + "\"";
}

// Shortest of 15 or 17 significant digits that reads back exactly: 1e-06, not 9.9999999999999995e-07.
std::string json_number( double x )
{
    for ( int digits : { 15, 17 } )
    {
        std::ostringstream os;
        os.precision( digits );
        os << x;
        if ( digits == 17 || std::stod( os.str() ) == x )
        {
            return os.str();
        }
    }
    return {};
}

// Issue #45's ensemble, one system after another (see the file comment).
int robertson_ensemble( const Arguments& args )
{
    morula::ode::ReactionNetwork net;
    net.species_names = { "A", "B", "C" };
    net.initial_state = { 1.0, 0.0, 0.0 };
    net.reactions.resize( 3 );
    net.reactions[0].reactants = { { 0, 1 } };
    net.reactions[0].products = { { 1, 1 } };
    net.reactions[1].reactants = { { 1, 2 } };
    net.reactions[1].products = { { 1, 1 }, { 2, 1 } };
    net.reactions[2].reactants = { { 1, 1 }, { 2, 1 } };
    net.reactions[2].products = { { 0, 1 }, { 2, 1 } };
    const double base[3] = { 0.04, 3e7, 1e4 };
    const std::vector<double> times{ 0.0, 0.4, 4.0, 40.0, 400.0, 4e3, 4e4, args.t_end };
    morula::test::CvodeSettings settings;
    settings.relative_tolerance = args.rtol;
    settings.absolute_tolerance = args.atol;
    settings.max_steps = args.max_steps;
    settings.linear_solver = morula::test::CvodeLinearSolver::dense;
    std::mt19937_64 rng( 7 ); // the same draws, in the same order, as ode_benchmark's
    long steps = 0, failed = 0;
    double mass_error = 0;
    const auto start = std::chrono::steady_clock::now();
    for ( long s = 0; s < args.ensemble; ++s )
    {
        for ( int r = 0; r < 3; ++r )
            net.reactions[r].rate_constant = args.sweep == "k3" ? base[r] : base[r] * ( 0.9 + 0.2 * ( ( rng() >> 11 ) * 0x1.0p-53 ) );
        if ( args.sweep == "k3" )
            net.reactions[2].rate_constant = args.ensemble > 1 ? 1e4 * double( s ) / double( args.ensemble - 1 ) : 1e4;
        morula::test::CvodeStatistics statistics;
        try
        {
            const auto x = morula::test::cvode_integrate( net, times, settings, &statistics );
            mass_error = std::max( mass_error, std::fabs( x.back()[0] + x.back()[1] + x.back()[2] - 1.0 ) );
            steps += statistics.steps;
        }
        catch ( const std::exception& )
        {
            ++failed;
        }
    }
    const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count();
    std::cout << "{\"case\": \"robertson_ensemble\", \"method\": \"CVODE BDF\", \"linear_solver\": \"dense\", "
              << "\"systems\": " << args.ensemble << ", \"sweep\": " << json_string( args.sweep )
              << ", \"t_end\": " << json_number( args.t_end ) << ", \"rtol\": " << json_number( args.rtol )
              << ", \"atol\": " << json_number( args.atol ) << ", \"seconds\": " << json_number( seconds )
              << ", \"seconds_per_system\": " << json_number( seconds / double( args.ensemble ) )
              << ", \"mean_steps\": " << json_number( double( steps ) / double( args.ensemble ) )
              << ", \"failed_systems\": " << failed << ", \"max_mass_error\": " << json_number( mass_error )
              << ", \"threads\": 1, \"sundials\": " << json_string( morula::test::sundials_version() ) << "}" << std::endl;
    return failed == 0 ? 0 : 1;
}

} // namespace

int main( int argc, char** argv )
{
    using morula::test::CvodeLinearSolver;
    const Arguments args = parse( argc, argv );
    if ( args.ensemble > 0 )
    {
        try
        {
            return robertson_ensemble( args );
        }
        catch ( const std::exception& e )
        {
            std::cerr << "morula_cvode_benchmark: " << e.what() << "\n";
            return 1;
        }
    }
    try
    {
        const auto model = morula::test::read_lassie_folder( args.model );
        const int n = model.network.species_count();

        morula::test::CvodeSettings settings;
        settings.relative_tolerance = args.rtol;
        settings.absolute_tolerance = args.atol;
        settings.max_steps = args.max_steps;
        std::string solver = args.linear_solver;
        if ( solver == "auto" )
        {
            solver = n <= 512 ? "dense" : ( morula::test::cvode_has_klu() ? "klu" : "spgmr" );
        }
        if ( solver == "dense" )
        {
            settings.linear_solver = CvodeLinearSolver::dense;
        }
        else if ( solver == "klu" )
        {
            settings.linear_solver = CvodeLinearSolver::klu;
        }
        else if ( solver == "spgmr" )
        {
            settings.linear_solver = CvodeLinearSolver::spgmr;
        }
        else
        {
            usage( "unknown linear solver " + solver );
        }

        morula::test::CvodeStatistics statistics;
        auto samples = morula::test::cvode_integrate( model.network, model.sample_times, settings, &statistics );
        std::vector<double> runs;
        for ( int r = 0; r < args.repeats; ++r )
        {
            const auto start = std::chrono::steady_clock::now();
            samples = morula::test::cvode_integrate( model.network, model.sample_times, settings, &statistics );
            runs.push_back( std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count() );
        }
        auto sorted = runs;
        std::sort( sorted.begin(), sorted.end() );
        const std::size_t h = sorted.size() / 2;
        const double median = sorted.size() % 2 == 1 ? sorted[h] : 0.5 * ( sorted[h - 1] + sorted[h] );

        if ( !args.csv.empty() )
        {
            std::ofstream out( args.csv );
            out.precision( 17 );
            out << "time";
            for ( const auto& name : model.network.species_names )
            {
                out << ',' << name;
            }
            out << '\n';
            for ( std::size_t s = 0; s < samples.size(); ++s )
            {
                out << model.sample_times[s];
                for ( double v : samples[s] )
                {
                    out << ',' << v;
                }
                out << '\n';
            }
            if ( !out )
            {
                throw std::runtime_error( "cannot write " + args.csv );
            }
        }

        std::string name = args.model;
        while ( name.size() > 1 && name.back() == '/' )
        {
            name.pop_back();
        }
        name = name.substr( name.find_last_of( '/' ) + 1 );
        std::ostringstream json;
        json << "{\"model\": " << json_string( name ) << ", \"species\": " << n
             << ", \"reactions\": " << model.network.reaction_count() << ", \"samples\": " << samples.size()
             << ", \"method\": \"CVODE BDF\", \"linear_solver\": " << json_string( solver )
             << ", \"jacobian\": \"analytic\", \"rtol\": " << json_number( args.rtol )
             << ", \"atol\": " << json_number( args.atol ) << ", \"max_steps\": " << args.max_steps
             << ", \"steps\": " << statistics.steps << ", \"rhs_evaluations\": " << statistics.rhs_evaluations
             << ", \"jacobian_evaluations\": " << statistics.jacobian_evaluations
             << ", \"linear_setups\": " << statistics.linear_setups
             << ", \"error_test_failures\": " << statistics.error_test_failures
             << ", \"median_s\": " << json_number( median ) << ", \"runs\": [";
        for ( std::size_t r = 0; r < runs.size(); ++r )
        {
            json << ( r ? ", " : "" ) << json_number( runs[r] );
        }
        json << "], \"sundials\": " << json_string( morula::test::sundials_version() ) << "}";
        std::cout << json.str() << std::endl;
    }
    catch ( const std::exception& e )
    {
        std::cerr << "morula_cvode_benchmark: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
