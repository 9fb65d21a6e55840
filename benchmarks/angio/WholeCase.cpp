// angio_benchmark --case whole: the full model, a tumour beside two vessels, every phase of every step
// fenced and timed through the driver's times(); then the same steps untimed (no fence inside a step but
// the model's own host reads), through advance() with the exchange replayed from graphs, and plainly with
// every kernel launched one by one. The untimed runs must end bit for bit alike.

#include "Common.hpp"
#include "Inputs.hpp"
#include "Output.hpp"

#include <common/BenchmarkUtils.hpp>

#include <morula/core/Box.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

namespace angio_bench
{

//! Cells per state, the range of oxygen and TAF, and the sprouted tubes: one copy to the host.
template <class Scalar>
nlohmann::json describe( const Model<Scalar>& m )
{
    const auto c = m.cells().to_host();
    const auto t = m.tubes().to_host();
    long long states[5] = { 0, 0, 0, 0, 0 };
    double o_min = 1e300, o_max = 0, o_sum = 0, taf_max = 0;
    for ( std::size_t i = 0; i < c.size(); ++i )
    {
        ++states[std::min( std::max( c.state[i], 0 ), 4 )];
        o_min = std::min( o_min, c.oxygen[i] );
        o_max = std::max( o_max, c.oxygen[i] );
        o_sum += c.oxygen[i];
        taf_max = std::max( taf_max, c.taf[i] );
    }
    long long sprouted = 0;
    double sensed_max = 0;
    for ( std::size_t i = 0; i < t.size(); ++i )
    {
        sprouted += ( t.flags[i] & angio::tube_sprouted ) ? 1 : 0;
        sensed_max = std::max( sensed_max, t.taf[i] );
    }
    return { { "new", states[angio::cell_new] },
             { "mature", states[angio::cell_mature] },
             { "hypoxic", states[angio::cell_hypoxic] },
             { "dead", states[angio::cell_dead] },
             { "oxygen_min", c.size() ? o_min : 0.0 },
             { "oxygen_mean", c.size() ? o_sum / c.size() : 0.0 },
             { "oxygen_max", o_max },
             { "taf_max", taf_max },
             { "tube_taf_sensed_max", sensed_max },
             { "sprouted_tubes", sprouted } };
}

template <class Scalar>
void whole( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows )
{
    const char* which = "whole";
    const WholeInput in = whole_input( s );
    const int n0 = static_cast<int>( in.cells.size() ), m0 = static_cast<int>( in.tubes.size() );
    const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( s.edge ), core::Boundary::closed );
    // The model's phases in its order, then their sum.
    std::vector<std::string> names;
    std::vector<Stats> per_phase;
    Stats wall, untimed_graphs, untimed_plain;
    bool untimed_equal = true;
    std::vector<int> final_cells, final_tubes;
    long long divisions = 0, sprouts = 0, anastomoses = 0;
    nlohmann::json final_state; // of the last run: what the model was doing, for reading the timings
    for ( int r = 0; r < s.runs; ++r )
    {
        Model<Scalar> m( Cells<Scalar>( in.cells ), Tubes<Scalar>( in.tubes ), box, in.params );
        for ( int k = 0; k < s.warmup_steps; ++k )
            m.step( exec );
        m.reset_times();
        exec.fence();
        const auto t0 = std::chrono::steady_clock::now();
        for ( int k = 0; k < s.steps; ++k )
            m.step( exec, true );
        exec.fence();
        const double seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        const auto& t = m.times();
        if ( names.empty() )
        {
            for ( int p = 0; p < t.num_phases(); ++p )
                names.push_back( t.phase_name( p ) );
            names.push_back( "total" );
            per_phase.resize( names.size() );
        }
        for ( int p = 0; p < t.num_phases(); ++p )
            per_phase[p].samples.push_back( t.seconds( p ) / s.steps );
        per_phase.back().samples.push_back( t.total() / s.steps );
        wall.samples.push_back( seconds / s.steps );
        final_cells.push_back( m.num_cells() );
        final_tubes.push_back( m.num_tubes() );
        divisions = m.divisions();
        sprouts = m.sprouts();
        anastomoses = m.anastomoses();
        if ( r == s.runs - 1 )
            final_state = describe( m );
        // The same steps untimed: advance() (exchange graphs on), then one by one with graphs off.
        Model<Scalar> g( Cells<Scalar>( in.cells ), Tubes<Scalar>( in.tubes ), box, in.params );
        Model<Scalar> p( Cells<Scalar>( in.cells ), Tubes<Scalar>( in.tubes ), box, in.params );
        p.set_step_graphs( false );
        g.advance( exec, s.warmup_steps );
        p.advance( exec, s.warmup_steps );
        exec.fence();
        const auto g0 = std::chrono::steady_clock::now();
        g.advance( exec, s.steps );
        exec.fence();
        const auto g1 = std::chrono::steady_clock::now();
        p.advance( exec, s.steps );
        exec.fence();
        const auto p1 = std::chrono::steady_clock::now();
        untimed_graphs.samples.push_back( std::chrono::duration<double>( g1 - g0 ).count() / s.steps );
        untimed_plain.samples.push_back( std::chrono::duration<double>( p1 - g1 ).count() / s.steps );
        const auto gc = g.cells().to_host(), pc = p.cells().to_host();
        untimed_equal = untimed_equal && gc.id == pc.id && gc.position == pc.position && gc.oxygen == pc.oxygen &&
                        gc.taf == pc.taf && gc.radius == pc.radius && g.num_tubes() == p.num_tubes() &&
                        g.num_cells() == m.num_cells();
        if ( r == 0 )
            std::printf( "%-9s %-6s untimed run: %lld exchange graphs captured in %d steps\n", which, precision,
                         g.graph_captures(), s.warmup_steps + s.steps );
    }
    bool same = true;
    for ( int r = 1; r < s.runs; ++r )
        same = same && final_cells[r] == final_cells[0] && final_tubes[r] == final_tubes[0];
    if ( !same )
        std::printf( "warning: runs from the same initial state ended with different cell or tube counts\n" );
    auto extra = [&]( nlohmann::json& r ) {
        r["unit"] = "seconds per step";
        r["steps"] = s.steps;
        r["warmup_steps"] = s.warmup_steps;
        r["cluster_radius_um"] = s.cluster_radius;
        r["box_edge_um"] = s.edge;
        r["vessel_radius_um"] = s.vessel_radius;
        r["vessel_offset_um"] = in.vessel_offset;
        r["final_cells"] = final_cells.back();
        r["final_tubes"] = final_tubes.back();
        r["final_counts_equal_across_runs"] = same;
        r["final_state_last_run"] = final_state;
    };
    const double total = per_phase.back().median();
    for ( std::size_t p = 0; p < names.size(); ++p )
    {
        nlohmann::json r = record( which, precision, n0, m0, names[p], per_phase[p] );
        extra( r );
        r["share_of_total"] = per_phase[p].median() / total;
        rows.push_back( r );
        print_row( which, precision, n0, m0, std::string( names[p] ) + " /step", per_phase[p],
                   format( "%.1f%%", 100 * per_phase[p].median() / total ) );
    }
    nlohmann::json r = record( which, precision, n0, m0, "wall", wall );
    extra( r );
    r["steps_per_s"] = 1 / wall.median();
    r["divisions_last_run"] = divisions;
    r["sprouts_last_run"] = sprouts;
    r["anastomoses_last_run"] = anastomoses;
    r["note"] = "wall clock of the timed steps (every phase fenced) per step";
    rows.push_back( r );
    print_row( which, precision, n0, m0, "wall /step", wall,
               format( "%.1f steps/s; final %.0f cells, %.0f tubes", 1 / wall.median(), double( final_cells.back() ),
                       double( final_tubes.back() ) ) );
    for ( auto [name, stats, note] :
          { std::make_tuple( "untimed_advance", &untimed_graphs,
                             "wall clock per step of advance(): no fences, exchange replayed from graphs" ),
            std::make_tuple( "untimed_plain", &untimed_plain,
                             "wall clock per step of untimed step() calls with graphs off: every kernel launched" ) } )
    {
        nlohmann::json u = record( which, precision, n0, m0, name, *stats );
        extra( u );
        u["steps_per_s"] = 1 / stats->median();
        u["untimed_runs_bit_identical"] = untimed_equal;
        u["note"] = note;
        rows.push_back( u );
        print_row( which, precision, n0, m0, std::string( name ) + " /step", *stats,
                   format( "%.1f steps/s", 1 / stats->median() ) +
                       ( untimed_equal ? "; graphs == plain bit for bit" : "; MISMATCH: graphs != plain" ) );
    }
    std::printf( "%-9s %-6s after %d + %d steps (last run): %lld divisions, %lld sprouts, %lld anastomoses; %s\n",
                 which, precision, s.warmup_steps, s.steps, divisions, sprouts, anastomoses, final_state.dump().c_str() );
    std::fflush( stdout );
}

template void whole<float>( const exec_space&, const Settings&, const char*, nlohmann::json& );
template void whole<double>( const exec_space&, const Settings&, const char*, nlohmann::json& );

} // namespace angio_bench
