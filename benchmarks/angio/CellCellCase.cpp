// angio_benchmark --case cellcell: the paper's random cells without tubes, phase by phase, with the roofline
// records of every timed phase.

#include "Census.hpp"
#include "Common.hpp"
#include "Inputs.hpp"
#include "Output.hpp"
#include "WorkCounts.hpp"

#include <common/BenchmarkUtils.hpp>

#include <morula/core/Box.hpp>

#include <Kokkos_Core.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <string>

namespace angio_bench
{

template <class Scalar>
void cellcell( const exec_space& exec, const Settings& s, const char* precision, nlohmann::json& rows,
               nlohmann::json& kernels )
{
    const char* which = "cellcell";
    for ( const int n : s.cells )
    {
        const double edge = random_box_edge( n, s.cell_radius, s.volume_fraction );
        const auto host = random_cells( n, edge, s.cell_radius, s.seed );
        const auto box = core::Box<Scalar>::cube( static_cast<Scalar>( edge ), core::Boundary::closed );
        std::optional<Model<Scalar>> m;
        auto build = [&]( bool atomic, int sweeps, int sort_every ) {
            m.reset(); // free the previous model before allocating the next
            auto p = random_input_parameters( s );
            p.atomic_cell_cell = atomic;
            p.exchange.sweeps = sweeps;
            p.sort_every = sort_every;
            m.emplace( Cells<Scalar>( host ), Tubes<Scalar>( angio::HostTubes{} ), box, p );
            make_ready( exec, *m );
        };
        auto add = [&]( const std::string& phase, const Stats& t, nlohmann::json extra = nlohmann::json::object(),
                        const std::string& notes = "" ) {
            print_row( which, precision, n, 0, phase, t, notes );
            nlohmann::json r = record( which, precision, n, 0, phase, t );
            r["box_edge_um"] = edge;
            r["volume_fraction"] = s.volume_fraction;
            r.update( extra );
            rows.push_back( r );
        };

        // Model A: both sides, one sweep, sorted at every build. Its data are in grid order after the
        // first build, as they are (nearly) in a running simulation.
        build( false, 1, 1 );
        const Stats grid_sort = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::build_grid( *m, exec ); } );
        PhaseAccess::interact_cells( *m, exec );
        const Stats both = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::interact_cells( *m, exec ); } );
        const auto counts = first_n_to_host( m->workspace().contact_count, n );
        const long long pairs = sum_of( counts ) / 2; // every contact is listed by both of its cells
        const long long max_contacts = max_of( counts );
        // Roofline counts of this state (cells in grid order, contacts listed), outside the timed runs.
        // The atomic and the many-sweep models below start from the same cells: the same pairs and contacts.
        const CellCensus census = census_cells( *m );
        PhaseAccess::interact_tubes_and_cells( *m, exec ); // vessel supply 0 without tubes
        const Stats ex1 = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::exchange( *m, exec ); } );
        check_counters( exec, *m );
        // Motion from the same positions and forces every run (it moves the cells and adds wall forces).
        using vector_view = typename Cells<Scalar>::vector_view;
        vector_view saved( "saved_positions", m->cells().positions().extent( 0 ) );
        Kokkos::deep_copy( exec, saved, m->cells().positions() );
        const Stats motion = morula::bench::time_phase(
            exec, s.warmup, s.runs,
            [&] {
                Kokkos::deep_copy( exec, m->cells().positions(), saved );
                PhaseAccess::interact_cells( *m, exec );
            },
            [&] { PhaseAccess::move( *m, exec ); } );
        saved = vector_view();

        // Model B: atomics (pairs once, j > i).
        build( true, 1, 1 );
        const Stats atomic = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::interact_cells( *m, exec ); } );
        const long long pairs_atomic = sum_of( first_n_to_host( m->workspace().contact_count, n ) ) / 2;

        // Model C: `sweeps` sweeps, sorted only at its first build (so its later builds only bin).
        build( false, s.sweeps, 1 << 30 );
        const Stats grid_only = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::build_grid( *m, exec ); } );
        PhaseAccess::interact_cells( *m, exec );
        PhaseAccess::interact_tubes_and_cells( *m, exec );
        const Stats exS = morula::bench::time_phase( exec, s.warmup, s.runs, [&] { PhaseAccess::exchange( *m, exec ); } );
        check_counters( exec, *m );
        m.reset();

        if ( pairs_atomic != pairs )
            std::printf( "warning: %d cells: %lld contact pairs from both sides, %lld with atomics\n", n, pairs,
                         pairs_atomic );
        const double per_cell = 2.0 * pairs / n;
        add( "grid_build_sort", grid_sort, { { "sorted", true } }, "cells already in grid order" );
        add( "grid_build", grid_only, { { "sorted", false } }, "binning only" );
        add( "cell_cell_both_sides", both,
             { { "pairs", pairs },
               { "contacts_per_cell", per_cell },
               { "max_contacts_per_cell", max_contacts },
               { "pairs_per_s", pairs / both.median() } },
             format( "%.3g pairs/s, %.1f contacts/cell", pairs / both.median(), per_cell ) );
        add( "cell_cell_atomic", atomic,
             { { "pairs", pairs_atomic },
               { "pairs_per_s", pairs_atomic / atomic.median() },
               { "speedup_both_sides_vs_atomic", atomic.median() / both.median() } },
             format( "%.3g pairs/s; speed-up both sides vs atomics %.2fx", pairs_atomic / atomic.median(),
                     atomic.median() / both.median() ) );
        add( "exchange_1_sweep", ex1, { { "sweeps", 1 } }, "pseudo-time steps + 1 sweep" );
        // Per sweep: the whole exchange over its sweeps, and the marginal cost of a sweep (without the
        // two reductions that find the pseudo-time steps).
        const double per_sweep = exS.median() / s.sweeps;
        const double marginal = s.sweeps > 1 ? ( exS.median() - ex1.median() ) / ( s.sweeps - 1 ) : per_sweep;
        add( "exchange_" + std::to_string( s.sweeps ) + "_sweeps", exS,
             { { "sweeps", s.sweeps }, { "seconds_per_sweep", per_sweep }, { "marginal_seconds_per_sweep", marginal } },
             format( "%.4f ms/sweep (marginal %.4f ms)", 1e3 * per_sweep, 1e3 * marginal ) );
        add( "motion", motion );

        nlohmann::json par = { { "case", which },
                               { "cells", n },
                               { "box_edge_um", edge },
                               { "volume_fraction", s.volume_fraction },
                               { "census", census.to_json() } };
        add_kernel( kernels, "build_grid_sort", work_build_grid<Scalar>( census, true ), grid_sort, par );
        add_kernel( kernels, "build_grid", work_build_grid<Scalar>( census, false ), grid_only, par );
        add_kernel( kernels, "interact_cells", work_cell_cell<Scalar>( census, false ), both, par );
        add_kernel( kernels, "interact_cells_atomic", work_cell_cell<Scalar>( census, true ), atomic, par );
        nlohmann::json par1 = par;
        par1["sweeps"] = 1;
        add_kernel( kernels, "exchange_1_sweep", work_exchange<Scalar>( census, 1 ), ex1, par1 );
        nlohmann::json parS = par;
        parS["sweeps"] = s.sweeps;
        add_kernel( kernels, "exchange", work_exchange<Scalar>( census, s.sweeps ), exS, parS );
        add_kernel( kernels, "move", work_move<Scalar>( census ), motion, par );
    }
}

template void cellcell<float>( const exec_space&, const Settings&, const char*, nlohmann::json&, nlohmann::json& );
template void cellcell<double>( const exec_space&, const Settings&, const char*, nlohmann::json&, nlohmann::json& );

} // namespace angio_bench
