#include "SemTestUtils.hpp"

#include <morula/core/Box.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/ode/OdeSolver.hpp>
#include <morula/sem/Epidermis.hpp>
#include <morula/sem/GeneCoupling.hpp>
#include <morula/sem/Initializers.hpp>
#include <morula/sem/SemMechanics.hpp>
#include <morula/sem/TissueGrowth.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace morula_test_sem
{
namespace sem = morula::sem;
namespace ode = morula::ode;
using morula::core::Boundary;
using morula::core::Box;
using ETissue = sem::Tissue<double, TEST_MEMSPACE>;

Box<double> open_box()
{
    return Box<double>( { 0, 0, 0 }, { 4, 4, 4 }, Boundary::open );
}

const std::vector<std::array<double, 3>>& cell20()
{
    static const auto cell = sem::relaxed_cell( 20, sem::SemParameters{}.intra );
    return cell;
}

// An isolated, adherent cell's network (no neighbours, A from its type-1 elements, G = 0.4) integrated
// by the epidermis model's RK2 reaches the steady state that an independent high-accuracy integration
// (the variable-order BDF of morula::ode at rtol 1e-10) reaches.
TEST( TEST_CATEGORY, sem_isolated_cell_gene_network_reaches_reference_steady_state )
{
    HostTissue h;
    add_cell( h, cell20(), { 2, 2, 0.55 }, 5 );
    ETissue t( h );
    sem::SemMechanics<double, TEST_MEMSPACE> mech( open_box(), sem::SemParameters{} );
    sem::GeneCoupling<double, TEST_MEMSPACE> genes( open_box(), sem::GeneCouplingParameters{} );
    TEST_EXECSPACE exec;
    mech.compute_cell_geometry( exec, t );
    mech.prepare( exec, t );
    genes.compute_inputs( exec, t, mech.grid_box() );
    auto in = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), genes.inputs() );
    const double A = in( 0, ode::input_adhesion );
    double expected_A = 0;
    for ( std::size_t i = 0; i < h.elements(); ++i )
        if ( h.type[i] == 1 )
            expected_A += std::fabs( h.positions[3 * i + 2] );
    EXPECT_NEAR( A, expected_A, 1e-12 );
    EXPECT_EQ( in( 0, ode::input_mean_D ), 0.0 );
    EXPECT_EQ( in( 0, ode::input_tgf_beta ), 0.4 );
    for ( int s = 0; s < 30000; ++s ) // t = 3000: Delta (decay 0.006) is within 1e-7 of its limit
        genes.step( exec, t, 0.1, sem::TimeScheme::runge_kutta2 );
    auto y = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), t.species() );

    using Gene = ode::EpidermisGeneNetwork<TEST_MEMSPACE>;
    ode::SolverOptions o;
    o.relative_tolerance = 1e-10;
    o.absolute_tolerance = { 1e-14 };
    o.mode = ode::ExecutionMode::batched;
    Gene model( ode::EpidermisGeneParameters{}, { 0.0, 0.0, 0.0, A, 0.4 } );
    ode::OdeSolver<TEST_EXECSPACE, TEST_MEMSPACE, Gene> solver( model, o );
    auto r = solver.solve( exec, { 0.0, 1.0e5 } );
    auto ref = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), r.samples );
    auto st = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), r.statistics );
    ASSERT_EQ( st( 0, ode::stat_status ), 0 );
    for ( int s = 0; s < sem::gene_species; ++s )
        EXPECT_NEAR( y( 0, s ), ref( 0, 1, s ), 1e-6 * ( 1 + std::fabs( ref( 0, 1, s ) ) ) ) << "species " << s;
    // Adherent: the basal state (Ovol2 above Ovol1).
    EXPECT_GT( y( 0, ode::gene_O2 ), y( 0, ode::gene_O1 ) );
}

// Neighbour inputs: cells whose centres lie within the cutoff, averaged (the paper's code) or
// distributed (each cell hands 1/n_j of its Notch, Delta, complex to each of its n_j neighbours).
TEST( TEST_CATEGORY, sem_neighbor_inputs_average_and_distribute )
{
    HostTissue h;
    // Three cells in a row, 0.6 apart: the middle one has two neighbours, the ends one each.
    for ( int c = 0; c < 3; ++c )
        add_cell( h, cell20(), { 1.0 + 0.6 * c, 2, 2 } );
    h.species.assign( 3 * sem::gene_species, 0.0 );
    for ( int c = 0; c < 3; ++c )
        for ( int s = 0; s < 3; ++s )
            h.species[sem::gene_species * c + s] = 1.0 + 10.0 * c + s; // N, D, B
    for ( const auto mode : { sem::NeighborCoupling::average, sem::NeighborCoupling::distribute } )
    {
        ETissue t( h );
        sem::SemMechanics<double, TEST_MEMSPACE> mech( open_box(), sem::SemParameters{} );
        sem::GeneCouplingParameters gp;
        gp.coupling = mode;
        sem::GeneCoupling<double, TEST_MEMSPACE> genes( open_box(), gp );
        TEST_EXECSPACE exec;
        mech.compute_cell_geometry( exec, t );
        mech.prepare( exec, t );
        genes.compute_inputs( exec, t, mech.grid_box() );
        auto in = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), genes.inputs() );
        auto n = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), genes.neighbor_counts() );
        EXPECT_EQ( n( 0 ), 1 );
        EXPECT_EQ( n( 1 ), 2 );
        EXPECT_EQ( n( 2 ), 1 );
        auto X = [&]( int c, int s ) { return 1.0 + 10.0 * c + s; };
        for ( int s = 0; s < 3; ++s )
        {
            if ( mode == sem::NeighborCoupling::average )
            {
                EXPECT_DOUBLE_EQ( in( 0, s ), X( 1, s ) );
                EXPECT_DOUBLE_EQ( in( 1, s ), 0.5 * ( X( 0, s ) + X( 2, s ) ) );
                EXPECT_DOUBLE_EQ( in( 2, s ), X( 1, s ) );
            }
            else
            {
                EXPECT_DOUBLE_EQ( in( 0, s ), 0.5 * X( 1, s ) );
                EXPECT_DOUBLE_EQ( in( 1, s ), X( 0, s ) + X( 2, s ) );
                EXPECT_DOUBLE_EQ( in( 2, s ), 0.5 * X( 1, s ) );
                // Distribution conserves the total handed out.
                EXPECT_NEAR( in( 0, s ) + in( 1, s ) + in( 2, s ), X( 0, s ) + X( 1, s ) + X( 2, s ), 1e-12 );
            }
        }
    }
}

// Growth and division bookkeeping: a basal cell of 39 elements grows to 40 and divides into two of 20
// (lower half keeps the types, upper half loses them, species halved exactly); a basal cell of 25
// grows to 26 with the new element at its centre; a suprabasal cell is untouched; no element is lost.
TEST( TEST_CATEGORY, sem_growth_and_division_bookkeeping )
{
    HostTissue h;
    auto blob = [&]( int n, std::array<double, 3> at, int seed ) {
        std::vector<std::array<double, 3>> c( n );
        for ( int k = 0; k < n; ++k )
            c[k] = { 0.3 * std::sin( 1.7 * k + seed ), 0.3 * std::cos( 2.3 * k + seed ), 0.01 * k + 0.001 * seed };
        add_cell( h, c, at, 6 );
    };
    blob( 39, { 1, 1, 0.4 }, 0 );
    blob( 25, { 2.5, 1, 0.4 }, 1 );
    blob( 30, { 1, 2.5, 0.4 }, 2 );
    h.species.assign( 3 * sem::gene_species, 0.0 );
    const double values[3][sem::gene_species] = { { 0.3, 17.0, 0.01, 1.4, 0.27, 0.52 },
                                                  { 0.2, 29.0, 0.02, 1.1, 0.5, 0.6 },
                                                  { 0.3, 19.0, 0.03, 0.45, 1.66, 0.79 } };
    for ( int c = 0; c < 3; ++c )
        for ( int s = 0; s < sem::gene_species; ++s )
            h.species[sem::gene_species * c + s] = values[c][s];
    ETissue t( h );
    const int capacity_before = t.element_capacity();
    sem::SemMechanics<double, TEST_MEMSPACE> mech( open_box(), sem::SemParameters{} );
    TEST_EXECSPACE exec;
    mech.compute_cell_geometry( exec, t );
    const auto centres = rows( t.centres(), 3 );
    sem::TissueGrowthParameters gp; // division at 40
    sem::TissueGrowth<double, TEST_MEMSPACE> growth( gp );
    const auto report = growth.apply( exec, t, true );
    EXPECT_EQ( report.grown, 2 );
    EXPECT_EQ( report.divisions, 1 );
    ASSERT_EQ( t.num_cells(), 4 );
    ASSERT_EQ( t.num_elements(), 39 + 25 + 30 + 2 );
    EXPECT_GE( t.element_capacity(), t.num_elements() );
    (void)capacity_before;
    const auto out = t.to_host();
    EXPECT_EQ( out.cell_elements, ( std::vector<int>{ 20, 26, 30, 20 } ) );
    // Offsets and owners agree.
    auto owner = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), t.element_cell() );
    auto off = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), t.cell_offset() );
    for ( int c = 0; c < 4; ++c )
        for ( int k = 0; k < out.cell_elements[c]; ++k )
            EXPECT_EQ( owner( off( c ) + k ), c );
    // Cell 0 (mother) and 3 (daughter): the mother's elements all lie below the daughter's, the
    // daughter has no type-1 element, and together they hold the 39 old elements plus the centre one.
    auto elements_of = [&]( int c ) {
        int b = 0;
        for ( int q = 0; q < c; ++q )
            b += out.cell_elements[q];
        std::vector<int> idx( out.cell_elements[c] );
        std::iota( idx.begin(), idx.end(), b );
        return idx;
    };
    double mother_top = -1e9, daughter_bottom = 1e9;
    int mother_adhesive = 0;
    for ( int e : elements_of( 0 ) )
    {
        mother_top = std::max( mother_top, out.positions[3 * e + 2] );
        mother_adhesive += out.type[e];
    }
    for ( int e : elements_of( 3 ) )
    {
        daughter_bottom = std::min( daughter_bottom, out.positions[3 * e + 2] );
        EXPECT_EQ( out.type[e], 0 );
    }
    EXPECT_LE( mother_top, daughter_bottom );
    EXPECT_EQ( mother_adhesive, 6 ); // the 6 lowest were the adhesive ones
    std::vector<std::array<double, 3>> before, after;
    for ( int e = 0; e < 39; ++e )
        before.push_back( { h.positions[3 * e], h.positions[3 * e + 1], h.positions[3 * e + 2] } );
    before.push_back( centres[0] );
    for ( int c : { 0, 3 } )
        for ( int e : elements_of( c ) )
            after.push_back( { out.positions[3 * e], out.positions[3 * e + 1], out.positions[3 * e + 2] } );
    std::sort( before.begin(), before.end() );
    std::sort( after.begin(), after.end() );
    EXPECT_EQ( before, after );
    // Cell 1 grew by one element at its centre, placed last.
    const auto e1 = elements_of( 1 );
    for ( int d = 0; d < 3; ++d )
        EXPECT_EQ( out.positions[3 * e1.back() + d], centres[1][d] );
    EXPECT_EQ( out.type[e1.back()], 0 );
    // Species: halved exactly for mother and daughter, unchanged for the others.
    for ( int s = 0; s < sem::gene_species; ++s )
    {
        EXPECT_EQ( out.species[s], 0.5 * values[0][s] );
        EXPECT_EQ( out.species[3 * sem::gene_species + s], 0.5 * values[0][s] );
        EXPECT_EQ( out.species[sem::gene_species + s], values[1][s] );
        EXPECT_EQ( out.species[2 * sem::gene_species + s], values[2][s] );
    }
}

// Growth events reuse their element arrays: with the capacity reserved up front, the second event
// writes into the arrays the tissue held before the first (no allocation per event), and the
// bookkeeping stays right.
TEST( TEST_CATEGORY, sem_growth_events_reuse_their_element_arrays )
{
    HostTissue h;
    for ( int c = 0; c < 2; ++c )
        add_cell( h, cell20(), { 1.0 + 1.5 * c, 1.0, 0.55 }, 5 );
    ETissue t( h );
    t.reserve( 200, 20 ); // room for both events: no capacity change
    sem::SemMechanics<double, TEST_MEMSPACE> mech( open_box(), sem::SemParameters{} );
    sem::TissueGrowthParameters gp;
    gp.division_elements = 100; // grow only
    sem::TissueGrowth<double, TEST_MEMSPACE> growth( gp );
    TEST_EXECSPACE exec;
    const auto first_arrays = t.positions(); // keeps them alive: a fresh allocation cannot reuse them
    mech.compute_cell_geometry( exec, t );
    EXPECT_EQ( growth.apply( exec, t, false ).grown, 2 );
    EXPECT_NE( t.positions().data(), first_arrays.data() );
    mech.compute_cell_geometry( exec, t );
    EXPECT_EQ( growth.apply( exec, t, false ).grown, 2 );
    EXPECT_EQ( t.positions().data(), first_arrays.data() ) << "the second event allocated new arrays";
    EXPECT_EQ( t.num_elements(), 44 );
    EXPECT_EQ( t.to_host().cell_elements, ( std::vector<int>{ 22, 22 } ) );
}

// The full model on a small periodic monolayer: cells grow and divide, the element bookkeeping holds
// at every event, positions stay finite, and two runs give identical results (deterministic).
TEST( TEST_CATEGORY, sem_full_model_small_run_is_consistent_and_deterministic )
{
    sem::MonolayerSpec spec;
    spec.cells = 9;
    spec.seed = 7;
    sem::EpidermisParameters p;
    p.model = sem::EpidermisModel::full;
    p.growth.interval = 40;
    p.growth.division_elements = 24;
    const auto layer = sem::monolayer<double>( spec, p.mechanics );
    auto run = [&]() -> HostTissue {
        sem::Epidermis<double, TEST_MEMSPACE> model( ETissue( layer.tissue ), layer.box, p );
        TEST_EXECSPACE exec;
        long long grown = 0;
        for ( int s = 0; s < 400; ++s )
        {
            const auto r = model.step( exec );
            grown += r.grown;
            if ( model.tissue().num_elements() != 9 * 20 + grown )
                ADD_FAILURE() << "step " << s << ": " << model.tissue().num_elements() << " elements, expected "
                              << 9 * 20 + grown;
        }
        return model.tissue().to_host();
    };
    const auto a = run();
    const auto b = run();
    EXPECT_GT( a.cells(), 9u );
    EXPECT_EQ( a.positions, b.positions );
    EXPECT_EQ( a.species, b.species );
    for ( double v : a.positions )
        ASSERT_TRUE( std::isfinite( v ) );
    int adhesive = 0;
    for ( int v : a.type )
        adhesive += v;
    EXPECT_EQ( adhesive, 9 * spec.adhesive_elements ); // adhesive elements stay with the mothers
}

static_assert( morula::core::is_driver_v<sem::Epidermis<double, TEST_MEMSPACE>, TEST_EXECSPACE> );
static_assert( morula::core::is_driver_v<sem::Epidermis<float, TEST_MEMSPACE>, TEST_EXECSPACE> );

// Timing changes nothing: a run timed from its third step equals an untimed one bit for bit, and its
// times() hold every phase of the timed steps only (growth events included).
TEST( TEST_CATEGORY, sem_epidermis_timed_steps_fill_every_phase_and_change_nothing )
{
    sem::MonolayerSpec spec;
    spec.cells = 9;
    sem::EpidermisParameters p;
    p.model = sem::EpidermisModel::full;
    p.growth.interval = 5;
    const auto layer = sem::monolayer<double>( spec, p.mechanics );
    sem::Epidermis<double, TEST_MEMSPACE> plain( ETissue( layer.tissue ), layer.box, p );
    sem::Epidermis<double, TEST_MEMSPACE> timed( ETissue( layer.tissue ), layer.box, p );
    TEST_EXECSPACE exec;
    for ( int s = 0; s < 12; ++s )
    {
        EXPECT_EQ( plain.step( exec ).step, s );
        EXPECT_EQ( timed.step( exec, s >= 2 ).step, s );
    }
    EXPECT_EQ( timed.steps_done(), 12 );
    EXPECT_EQ( plain.times().steps(), 0 );
    EXPECT_EQ( plain.times().total(), 0.0 );
    const auto& t = timed.times();
    EXPECT_EQ( t.steps(), 10 );
    for ( int phase : { sem::EpidermisPhase::geometry, sem::EpidermisPhase::mechanics, sem::EpidermisPhase::genes,
                        sem::EpidermisPhase::growth } )
        EXPECT_GT( t.seconds( phase ), 0.0 ) << t.phase_name( phase );
    const auto a = plain.tissue().to_host();
    const auto b = timed.tissue().to_host();
    EXPECT_EQ( a.positions, b.positions );
    EXPECT_EQ( a.species, b.species );
    timed.reset_times();
    EXPECT_EQ( timed.times().total(), 0.0 );
}

// The default time step is stable for Table 1's parameters: a periodic monolayer of touching cells
// under RK2 with dt = 0.01 settles on the membrane (its energy falls) and comes to rest.
TEST( TEST_CATEGORY, sem_default_time_step_is_stable_on_a_monolayer )
{
    sem::MonolayerSpec spec;
    spec.cells = 16;
    sem::SemParameters p;
    const auto layer = sem::monolayer<double>( spec, p );
    ETissue t( layer.tissue );
    sem::SemMechanics<double, TEST_MEMSPACE> m( layer.box, p );
    TEST_EXECSPACE exec;
    const double e0 = m.potential_energy( exec, t );
    for ( int s = 0; s < 2000; ++s )
        m.step( exec, t );
    const double e1 = m.potential_energy( exec, t );
    EXPECT_LT( e1, e0 );
    Kokkos::View<double* [3], Kokkos::LayoutLeft, TEST_MEMSPACE> v( "v", t.num_elements() );
    m.velocities( exec, t, v );
    EXPECT_LT( max_abs( rows( v, t.num_elements() ) ), 1e-2 );
}

TEST( TEST_CATEGORY, sem_monolayer_rejects_bad_input )
{
    sem::SemParameters p;
    sem::MonolayerSpec s;
    s.cells = 50;
    s.box_x = 2;
    s.box_y = 2;
    try
    {
        sem::monolayer<double>( s, p );
        FAIL() << "expected an InputError";
    }
    catch ( const morula::core::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "do not fit" ), std::string::npos ) << e.what();
    }
    s = sem::MonolayerSpec{};
    s.adhesive_elements = 21;
    EXPECT_THROW( sem::monolayer<double>( s, p ), morula::core::InputError );
    s = sem::MonolayerSpec{};
    s.cells = 0;
    EXPECT_THROW( sem::monolayer<double>( s, p ), morula::core::InputError );
    sem::GeneCouplingParameters gp;
    gp.neighbor_cutoff = 5;
    const auto layer = sem::monolayer<double>( sem::MonolayerSpec{}, p );
    EXPECT_THROW( ( sem::GeneCoupling<double, TEST_MEMSPACE>( Box<double>( { 0, 0, 0 }, { 3, 3, 3 },
                                                                         { Boundary::periodic, Boundary::periodic, Boundary::open } ),
                                                             gp ) ),
                  morula::core::InputError );
}

} // namespace morula_test_sem
