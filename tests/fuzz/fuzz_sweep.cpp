/*
  Fuzz target: parameter sweeps (ode/ParameterSweep.hpp) against a fixed network (Robertson with a labelled
  reaction: species A, B, C; reactions R0, R1, R2 = "back"): the input as a sweep table (read_sweep_table, then
  fill_systems of every system and the end-time column), and each of its lines as a range
  (`NAME=SPACING:LOW:HIGH[:POINTS]`, parse_sweep_range) combined by make_range_sweep with at most 10^5
  systems (10 random draws when no grid), as `morula ode run --sweep-table` and `--sweep` read them.
*/
#include "FuzzSupport.hpp"

#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/ParameterSweep.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace
{
const morula::ode::ReactionNetwork& network()
{
    static const auto net = morula::ode::parse_text_model(
        "A -> B, k=0.04\n2 B -> B + C, k=3e7\nback: B + C -> A + C, k=1e4\ninit A = 1\n", "rob.txt" );
    return net;
}

// Every value a sweep hands on must be what its readers promised: finite and >= 0.
void check_values( const morula::ode::ParameterSweep& sweep )
{
    std::vector<double> k, x;
    morula::ode::fill_systems( sweep, network(), 0, sweep.systems, k, x );
    for ( const double v : sweep.values )
        if ( !std::isfinite( v ) || v < 0 )
            std::abort();
    if ( sweep.values.size() != std::size_t( sweep.systems ) * sweep.columns.size() )
        std::abort();
    ( void )sweep.where( sweep.systems - 1 );
    ( void )sweep.end_time_column();
}
} // namespace

extern "C" int LLVMFuzzerInitialize( int* argc, char*** argv )
{
    morula::fuzz::initialize( argc, argv, "sweep" );
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput( const std::uint8_t* data, std::size_t size )
{
    static const auto path = morula::fuzz::scratch_dir() / "sweep.csv";
    morula::fuzz::write_file( path, data, size );
    morula::fuzz::expect_only_input_errors( [&] { check_values( morula::ode::read_sweep_table( path.string(), network() ) ); } );
    const std::string text( reinterpret_cast<const char*>( data ), size );
    morula::fuzz::expect_only_input_errors( [&] {
        std::vector<morula::ode::SweepRange> ranges;
        std::size_t start = 0;
        while ( start <= text.size() && ranges.size() < 8 )
        {
            const std::size_t end = text.find( '\n', start );
            const std::string line = text.substr( start, end == std::string::npos ? std::string::npos : end - start );
            if ( !line.empty() )
                ranges.push_back( morula::ode::parse_sweep_range( line ) );
            if ( end == std::string::npos )
                break;
            start = end + 1;
        }
        bool grid = false;
        for ( const auto& r : ranges )
            grid = grid || r.points > 0;
        check_values( morula::ode::make_range_sweep( network(), ranges, grid ? 0 : 10, 7, 100000 ) );
    } );
    return 0;
}
