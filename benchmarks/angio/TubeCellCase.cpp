// angio_benchmark --case tubecell: the paper's random cells with dense random tubes; blood flow, tube-tube
// and tube-cell timed, with their roofline records.

#include "Census.hpp"
#include "Common.hpp"
#include "Inputs.hpp"
#include "Output.hpp"
#include "WorkCounts.hpp"

#include <common/BenchmarkUtils.hpp>

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <string>

namespace angio_bench
{

template <class Scalar>
void tubecell( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows,
               nlohmann::json& kernels )
{
    const char* which = "tubecell";
    for ( const int n : s.cells )
        for ( const int mt : s.tubes )
        {
            const double edge = random_box_edge( n, s.cell_radius, s.volume_fraction );
            const auto host = random_cells( n, edge, s.cell_radius, s.seed );
            const auto host_tubes = random_tubes( mt, edge, s.seed );
            const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( edge ), core::Boundary::closed );
            std::optional<Model<Scalar>> m;
            int width = s.max_tubes_per_cell;
            for ( ;; )
            {
                try
                {
                    m.reset();
                    auto p = random_input_parameters( s );
                    p.max_tubes_per_cell = width;
                    m.emplace( Cells<Scalar>( host ), Tubes<Scalar>( host_tubes ), box, p );
                    make_ready( exec, *m );
                    break;
                }
                catch ( const core::CapacityError& e )
                {
                    if ( 2 * width > 1024 )
                        throw;
                    std::printf( "  %s; retrying with max_tubes_per_cell = %d\n", e.what(), 2 * width );
                    width *= 2;
                }
            }
            const Stats flow =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::update_blood_flow( *m, exec ); } );
            const Stats tube_tube =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::interact_tubes( *m, exec ); } );
            const Stats tube_cell =
                morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::interact_tubes_and_cells( *m, exec ); } );
            check_counters( exec, *m );
            const auto per_cell = first_n_to_host( m->workspace().tube_count, n );
            const long long cell_tube_contacts = sum_of( per_cell );
            const long long max_per_cell = max_of( per_cell );
            const long long tube_pairs = sum_of( first_n_to_host( m->tubes().contacts(), mt ) ) / 2;
            const TubeCensus census = census_tubes( exec, *m ); // roofline counts, outside the timed runs
            m.reset();

            const double total = flow.median() + tube_tube.median() + tube_cell.median();
            const double share = tube_tube.median() / total;
            auto add = [&]( const std::string& phase, const Stats& t, nlohmann::json extra, const std::string& notes ) {
                print_row( which, precision, n, mt, phase, t, notes );
                nlohmann::json r = record( which, precision, n, mt, phase, t );
                r["box_edge_um"] = edge;
                r["max_tubes_per_cell"] = width;
                r.update( extra );
                rows.push_back( r );
            };
            add( "blood_flow", flow, nlohmann::json::object(), "" );
            add( "tube_grid_and_tube_tube", tube_tube,
                 { { "touching_tube_pairs", tube_pairs }, { "share_of_tube_phases", share } },
                 format( "%.1f%% of the tube phases, %.0f touching tube pairs", 100 * share, double( tube_pairs ) ) );
            add( "tube_cell_alg5_alg6", tube_cell,
                 { { "cell_tube_contacts", cell_tube_contacts }, { "max_tubes_of_a_cell", max_per_cell } },
                 format( "%.0f cell-tube contacts, at most %.0f per cell (list width %.0f)",
                         double( cell_tube_contacts ), double( max_per_cell ), double( width ) ) );
            // The sum of the three medians (not a separately timed run).
            Stats sum;
            sum.samples = { total };
            nlohmann::json r = record( which, precision, n, mt, "tube_phases_total", sum );
            r["note"] = "sum of the medians of blood_flow, tube_grid_and_tube_tube and tube_cell_alg5_alg6";
            r["tube_tube_share"] = share;
            r["max_tubes_per_cell"] = width;
            rows.push_back( r );
            print_row( which, precision, n, mt, "tube_phases_total", sum,
                       format( "sum of medians; tube-tube %.1f%% (paper: 29%% at 9996 tubes)", 100 * share ) );

            const nlohmann::json par = { { "case", which },
                                         { "cells", n },
                                         { "tubes", mt },
                                         { "box_edge_um", edge },
                                         { "volume_fraction", s.volume_fraction },
                                         { "max_tubes_per_cell", width },
                                         { "census", census.to_json() } };
            add_kernel( kernels, "update_blood_flow", work_blood_flow<Scalar>( census ), flow, par );
            add_kernel( kernels, "interact_tubes", work_tube_tube<Scalar>( census ), tube_tube, par );
            add_kernel( kernels, "interact_tubes_and_cells", work_tube_cell<Scalar>( census ), tube_cell, par );
        }
}

template void tubecell<float>( const exec_space&, const Settings&, const char*, nlohmann::json&, nlohmann::json& );
template void tubecell<double>( const exec_space&, const Settings&, const char*, nlohmann::json&, nlohmann::json& );

} // namespace angio_bench
