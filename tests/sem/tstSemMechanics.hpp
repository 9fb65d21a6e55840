#include "SemTestUtils.hpp"

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/sem/Initializers.hpp>
#include <morula/sem/SemMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace morula_test_sem
{
using morula::core::Boundary;
using morula::core::Box;
using morula::sem::TimeScheme;
using morula::sem::SemMechanics;
using morula::sem::SemParameters;
using Tissue = morula::sem::Tissue<double, TEST_MEMSPACE>;
using Mechanics = SemMechanics<double, TEST_MEMSPACE>;

const std::vector<std::array<double, 3>>& template_cell()
{
    static const auto cell = morula::sem::relaxed_cell( 20, SemParameters{}.intra );
    return cell;
}

Box<double> periodic_box( double lx, double ly )
{
    return Box<double>( { 0, 0, 0 }, { lx, ly, 4 }, { Boundary::periodic, Boundary::periodic, Boundary::open } );
}

// Four cells squeezed together (so that inter-cell repulsion acts), one of them across the periodic x
// boundary, no membrane-adhesive elements.
HostTissue crowded_cells()
{
    HostTissue h;
    const auto& c = template_cell();
    add_cell( h, c, { 0.05, 1.0, 1.0 } );
    add_cell( h, c, { 0.47, 1.05, 1.02 } );
    add_cell( h, c, { 0.25, 1.42, 0.98 } );
    add_cell( h, c, { 2.68, 1.2, 1.1 } ); // near x = L = 2.7: interacts through the boundary
    return h;
}

std::vector<std::array<double, 3>> velocities( Mechanics& m, Tissue& t, bool brute )
{
    Kokkos::View<double* [3], Kokkos::LayoutLeft, TEST_MEMSPACE> v( "v", t.num_elements() );
    m.velocities( TEST_EXECSPACE(), t, v, brute );
    return rows( v, t.num_elements() );
}

// The relaxed template is a local minimum: all intra-cell forces vanish; its spacing lies near the
// potential's minimum.
TEST( TEST_CATEGORY, sem_relaxed_cell_is_at_rest )
{
    HostTissue h;
    add_cell( h, template_cell(), { 1, 1, 1 } );
    Tissue t( h );
    Mechanics m( periodic_box( 3, 3 ), SemParameters{} );
    EXPECT_LT( max_abs( velocities( m, t, true ) ), 1e-9 );
    double dmin = 1e9;
    const auto& c = template_cell();
    for ( std::size_t i = 0; i < c.size(); ++i )
        for ( std::size_t j = i + 1; j < c.size(); ++j )
            dmin = std::min( dmin, std::hypot( c[i][0] - c[j][0], c[i][1] - c[j][1], c[i][2] - c[j][2] ) );
    EXPECT_GT( dmin, 0.1 );
    EXPECT_LT( dmin, SemParameters{}.intra.minimum() );
}

// Newton's third law: without the membrane, every pair force appears with both signs, so the
// velocities sum to zero; the Verlet list finds exactly the brute-force pairs (periodic images too).
TEST( TEST_CATEGORY, sem_forces_obey_newtons_third_law_and_match_brute_force )
{
    Tissue t( crowded_cells() );
    Mechanics m( periodic_box( 2.7, 2.7 ), SemParameters{} );
    const auto list = velocities( m, t, false );
    const auto brute = velocities( m, t, true );
    double sum[3] = { 0, 0, 0 }, scale = 0;
    for ( std::size_t i = 0; i < list.size(); ++i )
        for ( int d = 0; d < 3; ++d )
        {
            EXPECT_NEAR( list[i][d], brute[i][d], 1e-12 * ( 1 + std::fabs( brute[i][d] ) ) );
            sum[d] += list[i][d];
            scale += std::fabs( list[i][d] );
        }
    EXPECT_GT( scale, 1.0 ); // the cells do push each other
    for ( int d = 0; d < 3; ++d )
        EXPECT_LT( std::fabs( sum[d] ), 1e-12 * scale );
}

// Periodicity: translating every element by a box period (and by any vector in x, y) leaves every
// force unchanged.
TEST( TEST_CATEGORY, sem_forces_are_invariant_under_periodic_translation )
{
    const HostTissue h = crowded_cells();
    Mechanics m( periodic_box( 2.7, 2.7 ), SemParameters{} );
    Tissue t0( h );
    const auto v0 = velocities( m, t0, false );
    for ( const std::array<double, 2> shift : { std::array<double, 2>{ 2.7, 0 }, { 0, -2.7 }, { 5.4, 2.7 }, { 1.234, -0.77 } } )
    {
        HostTissue s = h;
        for ( std::size_t i = 0; i < s.elements(); ++i )
        {
            s.positions[3 * i] += shift[0];
            s.positions[3 * i + 1] += shift[1];
        }
        Tissue t( s );
        Mechanics ms( periodic_box( 2.7, 2.7 ), SemParameters{} );
        const auto v = velocities( ms, t, false );
        for ( std::size_t i = 0; i < v.size(); ++i )
            for ( int d = 0; d < 3; ++d )
                EXPECT_NEAR( v[i][d], v0[i][d], 1e-10 * ( 1 + std::fabs( v0[i][d] ) ) );
    }
}

// The centre of a cell split across the periodic boundary is its true centre (wrapped into the box).
TEST( TEST_CATEGORY, sem_cell_centre_unwraps_periodic_boundary )
{
    HostTissue h;
    add_cell( h, template_cell(), { 2.68, 0.01, 1.0 } ); // straddles x = L and y = 0
    Tissue t( h );
    Mechanics m( periodic_box( 2.7, 2.7 ), SemParameters{} );
    m.compute_cell_geometry( TEST_EXECSPACE(), t );
    const auto c = rows( t.centres(), 1 );
    EXPECT_NEAR( c[0][0], 2.68, 1e-12 );
    EXPECT_NEAR( c[0][1], 0.01, 1e-12 );
    EXPECT_NEAR( c[0][2], 1.0, 1e-12 );
}

// Gradient flow: with a small Euler step the total potential never increases.
TEST( TEST_CATEGORY, sem_potential_decreases_monotonically_under_gradient_flow )
{
    HostTissue h = crowded_cells();
    // Squash the cells a little so that they are far from rest, and make some elements adhesive.
    for ( std::size_t i = 0; i < h.elements(); ++i )
        h.positions[3 * i + 2] = 1.0 + 0.7 * ( h.positions[3 * i + 2] - 1.0 );
    for ( std::size_t i = 0; i < h.elements(); i += 7 )
        h.type[i] = 1;
    Tissue t( h );
    SemParameters p;
    p.integrator = TimeScheme::euler;
    p.time_step = 1e-3;
    Mechanics m( periodic_box( 2.7, 2.7 ), p );
    double previous = m.potential_energy( TEST_EXECSPACE(), t );
    const double first = previous;
    EXPECT_NEAR( previous, m.potential_energy( TEST_EXECSPACE(), t, true ), 1e-10 * std::fabs( previous ) );
    // The positive Morse force jumps from |V'(r0)| to 0 where V_inter crosses zero (r0): a pair that
    // crosses r0 within a step can raise the energy by at most |V'(r0)| times its change in distance.
    // Away from such crossings the energy of the gradient flow must fall.
    const double jump = std::fabs( p.inter.derivative( p.inter.zero_crossing() ) );
    int rises = 0;
    for ( int s = 0; s < 400; ++s )
    {
        const auto before = rows( t.positions(), t.num_elements() );
        m.step( TEST_EXECSPACE(), t );
        const auto after = rows( t.positions(), t.num_elements() );
        double moved = 0;
        for ( std::size_t i = 0; i < before.size(); ++i )
            moved = std::max( moved, std::hypot( after[i][0] - before[i][0], after[i][1] - before[i][1],
                                                 after[i][2] - before[i][2] ) );
        const double e = m.potential_energy( TEST_EXECSPACE(), t );
        ASSERT_LE( e, previous + 2.0 * jump * 2.0 * moved ) << "step " << s;
        rises += e > previous;
        previous = e;
    }
    EXPECT_LT( rises, 40 ); // rare
    EXPECT_LT( previous, first - 0.01 );
}

// A single cell from a perturbed start relaxes to a stable shape (RK2, default time step): the
// velocities vanish, the shape stops changing, and it has the template's energy.
TEST( TEST_CATEGORY, sem_single_cell_relaxes_to_stable_shape )
{
    HostTissue h;
    auto cell = template_cell();
    for ( std::size_t k = 0; k < cell.size(); ++k )
        for ( int d = 0; d < 3; ++d )
            cell[k][d] *= 1.0 + 0.15 * std::sin( 3.0 * k + d ); // distorted
    add_cell( h, cell, { 1.5, 1.5, 1.5 } );
    Tissue t( h );
    Mechanics m( periodic_box( 3, 3 ), SemParameters{} );
    for ( int s = 0; s < 30000; ++s )
        m.step( TEST_EXECSPACE(), t );
    const auto v = velocities( m, t, true );
    EXPECT_LT( max_abs( v ), 1e-5 ); // from |v| ~ 1 at the start
    const auto a = rows( t.positions(), t.num_elements() );
    for ( int s = 0; s < 1000; ++s )
        m.step( TEST_EXECSPACE(), t );
    const auto b = rows( t.positions(), t.num_elements() );
    double moved = 0;
    for ( std::size_t i = 0; i < a.size(); ++i )
        for ( int d = 0; d < 3; ++d )
            moved = std::max( moved, std::fabs( a[i][d] - b[i][d] ) );
    EXPECT_LT( moved, 1e-4 ); // in 1000 steps, for a cell 0.5 across
    // Every element within the cell's size of the centre, none coincident.
    const double e = m.potential_energy( TEST_EXECSPACE(), t, true );
    EXPECT_LT( e, 0.0 );
}

// Two cells pushed into each other separate until no two of their elements are closer than the
// repulsive range r0 (the zero of the intercellular Morse potential), and then stop. The positive
// Morse force jumps from |V'(r0)| = 1.49 to 0 at r0, so a pair that the cells' own elastic relaxation
// keeps pressed together ends in a two-step chatter around r0, at most dt |V'(r0)| deep: the test
// checks that bound at two time steps, and that the cells themselves come to rest.
TEST( TEST_CATEGORY, sem_two_pushed_cells_separate_to_repulsion_range )
{
    // Push the second cell along x until one of its elements is 0.025 from one of the first cell's
    // (cells are about 0.5 across; their elements interleave without touching down to about 0.3).
    const auto& c0 = template_cell();
    auto closest = [&]( double shift ) {
        double dmin = 1e9;
        for ( const auto& a : c0 )
            for ( const auto& b : c0 )
                dmin = std::min( dmin, std::hypot( b[0] + shift - a[0], b[1] - a[1], b[2] - a[2] ) );
        return dmin;
    };
    double shift = 0.5;
    while ( closest( shift ) > 0.025 )
        shift -= 0.0005;
    for ( const double dt : { 0.01, 0.001 } )
    {
        HostTissue h;
        add_cell( h, c0, { 1.5, 1.5, 1.5 } );
        add_cell( h, c0, { 1.5 + shift, 1.5, 1.5 } );
        Tissue t( h );
        SemParameters p;
        p.time_step = dt;
        Mechanics m( periodic_box( 4, 4 ), p );
        const int steps = static_cast<int>( 40 / dt );
        const int last = static_cast<int>( 10 / dt );
        for ( int s = 0; s < steps - last; ++s )
            m.step( TEST_EXECSPACE(), t );
        m.compute_cell_geometry( TEST_EXECSPACE(), t );
        const auto c_before = rows( t.centres(), 2 );
        for ( int s = 0; s < last; ++s )
            m.step( TEST_EXECSPACE(), t );
        const auto x = rows( t.positions(), t.num_elements() );
        double dmin = 1e9;
        for ( int i = 0; i < 20; ++i )
            for ( int j = 20; j < 40; ++j )
                dmin = std::min( dmin, std::hypot( x[i][0] - x[j][0], x[i][1] - x[j][1], x[i][2] - x[j][2] ) );
        const double r0 = p.inter.zero_crossing();
        const double chatter = dt * std::fabs( p.inter.derivative( r0 ) );
        EXPECT_GE( dmin, r0 - chatter ) << "dt " << dt;
        EXPECT_LT( dmin, 1.5 * r0 ) << "dt " << dt; // nothing pushes them further than the range
        m.compute_cell_geometry( TEST_EXECSPACE(), t );
        const auto c = rows( t.centres(), 2 );
        EXPECT_GT( c[1][0] - c[0][0], shift + 0.01 ) << "dt " << dt;
        for ( int k = 0; k < 2; ++k )
            for ( int d = 0; d < 3; ++d )
                EXPECT_NEAR( c[k][d], c_before[k][d], 2e-3 * dt / 0.01 ) << "dt " << dt << ": cell " << k << " still moving";
        // Newton's third law: the pair's mean position did not move (no membrane).
        double mean = 0;
        for ( const auto& a : x )
            mean += a[0] / x.size();
        EXPECT_NEAR( mean, 1.5 + shift / 2, 1e-9 );
    }
}

// Adhesive elements settle at the membrane potential's minimum height.
TEST( TEST_CATEGORY, sem_adhesive_cell_settles_on_membrane )
{
    HostTissue h;
    add_cell( h, template_cell(), { 1.5, 1.5, 0.6 }, 5 );
    Tissue t( h );
    SemParameters p;
    Mechanics m( periodic_box( 3, 3 ), p );
    for ( int s = 0; s < 8000; ++s )
        m.step( TEST_EXECSPACE(), t );
    EXPECT_LT( max_abs( velocities( m, t, true ) ), 1e-3 );
    const auto out = t.to_host();
    double zmin = 1e9;
    for ( std::size_t i = 0; i < out.elements(); ++i )
        if ( out.type[i] == 1 )
            zmin = std::min( zmin, out.positions[3 * i + 2] );
    EXPECT_GT( zmin, 0.5 * p.membrane.minimum() );
    EXPECT_LT( zmin, 1.5 * p.membrane.minimum() );
}

// One Euler step equals positions + dt * velocities(). The step's stages sum a cell's intra-cell pairs
// once per pair on host backends (detail::IntraCellFunctor) and per element on GPUs; velocities()
// always per element. On the host the two agree bit for bit (each element receives its pairs in the
// same order, with exactly opposite signs); on a GPU both are per element, equal up to the rounding of
// fused multiply-adds in the test's own sum.
TEST( TEST_CATEGORY, sem_step_equals_positions_plus_dt_velocities )
{
    constexpr bool host =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename TEST_EXECSPACE::memory_space>::accessible;
    for ( const bool periodic : { true, false } )
    {
        SCOPED_TRACE( periodic ? "periodic" : "open" );
        SemParameters p;
        p.integrator = TimeScheme::euler;
        const auto box = periodic ? periodic_box( 2.7, 2.7 )
                                  : Box<double>( { 0, 0, 0 }, { 2.7, 2.7, 4 },
                                                 { Boundary::open, Boundary::open, Boundary::open } );
        // In the open box the fourth cell sits at its periodic image, next to the first: pressed too.
        HostTissue h = crowded_cells();
        if ( !periodic )
            for ( std::size_t i = 60; i < h.elements(); ++i )
                h.positions[3 * i] -= 2.7;
        Tissue t( h );
        Mechanics m( box, p );
        const int n = t.num_elements();
        const auto v = velocities( m, t, false );
        const auto x0 = rows( t.positions(), n );
        m.step( TEST_EXECSPACE(), t );
        const auto x1 = rows( t.positions(), n );
        double moved = 0;
        for ( int i = 0; i < n; ++i )
            for ( int d = 0; d < 3; ++d )
            {
                const double expected = x0[i][d] + p.time_step * v[i][d];
                if ( host )
                    EXPECT_EQ( x1[i][d], expected ) << "element " << i << ", axis " << d;
                else
                    EXPECT_NEAR( x1[i][d], expected, 1e-15 * ( 1 + std::fabs( expected ) ) );
                moved = std::max( moved, std::fabs( x1[i][d] - x0[i][d] ) );
            }
        EXPECT_GT( moved, 1e-4 ); // the crowded cells do move
    }
}

// The element list's skin: unset, the backend's default (3 cutoffs on a GPU, 1 on host backends, each
// measured best there); set, as given. The forces equal the brute force whatever the skin, from a thin
// one to one of six cutoffs: a list with any skin holds every pair within the cutoff.
TEST( TEST_CATEGORY, sem_skin_defaults_per_backend_and_forces_do_not_depend_on_it )
{
    constexpr bool host =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename TEST_EXECSPACE::memory_space>::accessible;
    const double expected = host ? 1.0 : 3.0;
    EXPECT_EQ( morula::sem::default_skin_factor<TEST_EXECSPACE>(), expected );
    const Mechanics unset( periodic_box( 2.7, 2.7 ), SemParameters{} );
    ASSERT_TRUE( unset.parameters().skin_factor.has_value() );
    EXPECT_EQ( *unset.parameters().skin_factor, expected );
    for ( const double skin : { 0.25, 1.0, 3.0, 6.0 } )
    {
        SCOPED_TRACE( skin );
        SemParameters p;
        p.skin_factor = skin;
        Tissue t( crowded_cells() );
        Mechanics m( periodic_box( 2.7, 2.7 ), p );
        EXPECT_EQ( *m.parameters().skin_factor, skin );
        const auto list = velocities( m, t, false );
        const auto brute = velocities( m, t, true );
        for ( std::size_t i = 0; i < list.size(); ++i )
            for ( int d = 0; d < 3; ++d )
                EXPECT_NEAR( list[i][d], brute[i][d], 1e-12 * ( 1 + std::fabs( brute[i][d] ) ) );
    }
    for ( const double bad : { 0.0, -1.0, std::nan( "" ), std::numeric_limits<double>::infinity() } )
    {
        SemParameters p;
        p.skin_factor = bad;
        EXPECT_THROW( Mechanics( periodic_box( 2.7, 2.7 ), p ), morula::core::InputError ) << bad;
    }
}

TEST( TEST_CATEGORY, sem_rejects_bad_input )
{
    SemParameters p;
    p.time_step = 0;
    EXPECT_THROW( Mechanics( periodic_box( 3, 3 ), p ), morula::core::InputError );
    p = SemParameters{};
    p.inter.xi1 = -1;
    EXPECT_THROW( Mechanics( periodic_box( 3, 3 ), p ), morula::core::InputError );
    // A periodic box shorter than twice the cutoff plus skin.
    EXPECT_THROW( Mechanics( periodic_box( 0.1, 3 ), SemParameters{} ), morula::core::InputError );
    // z must be open.
    EXPECT_THROW( Mechanics( Box<double>::cube( 3, Boundary::periodic ), SemParameters{} ),
                  morula::core::InputError );
    HostTissue bad;
    add_cell( bad, template_cell(), { 1, 1, 1 } );
    bad.type[3] = 7;
    EXPECT_THROW( Tissue{ bad }, morula::core::InputError );
}

} // namespace morula_test_sem
