#include "LatticeTestUtils.hpp"

#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <type_traits>
#include <vector>

namespace morula_test_lattice
{

// Three species with different, partly asymmetric probabilities that also depend on the site type.
inline DiffusionRules mixed_rules( int species )
{
    DiffusionRules rules( species );
    for ( int s = 0; s < species; ++s )
        for ( int t = 0; t < 16; ++t )
            for ( int a = 0; a < 3; ++a )
            {
                const double up = 0.05 + 0.1 * ( ( s + t + a ) % 4 );
                const double down = 0.05 + 0.08 * ( ( 2 * s + a ) % 3 );
                rules.set( s, t, a, { down, 1 - up - down, up } );
            }
    rules.block( 1 );
    return rules;
}

// The kernels against the scatter reference, pass by pass, for a mixed boundary and obstacles.
template <int Slots>
void check_split_passes_against_reference()
{
    LatticeShape shape( 9, 6, 5 );
    shape.boundary = { LatticeBoundary::periodic, LatticeBoundary::reflecting, LatticeBoundary::periodic };
    const int species = std::min( 3, int( SiteLayout<Slots>::max_code ) );
    const auto rules = mixed_rules( species );
    // Sparse enough that no site ever overflows in these steps (asserted below).
    auto words = patterned_lattice<Slots>( shape, species, 7, 1, { 3, 20, 21, 100, 150 } );
    // A few site types other than 0 that particles may enter, with their own probabilities.
    for ( std::size_t s = 5; s < words.size(); s += 11 )
        if ( SiteLayout<Slots>::type( words[s] ) == 0 )
            words[s] |= SiteLayout<Slots>::empty_site( 2 );
    Lattice<Slots, TEST_MEMSPACE> lattice( shape );
    from_host( lattice, words );
    DiffusionOptions opt;
    opt.seed = 77;
    LatticeDiffusion<Slots, TEST_EXECSPACE> model( TEST_EXECSPACE(), lattice, rules, opt );
    for ( std::uint32_t step = 0; step < 6; ++step )
    {
        for ( int axis = 0; axis < 3; ++axis )
        {
            model.split_pass( TEST_EXECSPACE(), axis );
            model.place_overflow( TEST_EXECSPACE() );
            const auto [expected, extras] = reference_split_pass<Slots>( words, shape, rules, opt.seed, step, axis );
            ASSERT_EQ( extras, 0 );
            words = expected;
            ASSERT_EQ( to_host( model.lattice() ), words ) << "step " << step << " axis " << axis;
        }
        model.complete_step();
    }
    EXPECT_EQ( model.overflows(), 0u );
}

TEST( TEST_CATEGORY, lattice_split_passes_match_the_scatter_reference )
{
    check_split_passes_against_reference<2>();
    check_split_passes_against_reference<4>();
    check_split_passes_against_reference<8>();
}

// Every particle is still there after many steps at high occupancy, with walls and obstacles, for
// every capacity and both schemes; the overflow list really was used.
template <int Slots>
void check_conservation( PassScheme scheme, LatticeBoundary boundary )
{
    LatticeShape shape( 12, 10, 8, boundary );
    const int species = std::min( 5, int( SiteLayout<Slots>::max_code ) );
    DiffusionRules rules( species );
    for ( int s = 0; s < species; ++s )
        rules.set_isotropic( s, 0.1 + 0.08 * s );
    rules.block( 1 );
    Lattice<Slots, TEST_MEMSPACE> lattice( shape );
    const auto obstacles = place_sphere_obstacles( TEST_EXECSPACE(), lattice, 1.5, 0.1, 1, 5 );
    EXPECT_GE( obstacles.fraction, 0.1 );
    // Fill 70% of all free slots: sites overflow all the time.
    const std::size_t room = ( lattice.size() - obstacles.sites ) * Slots;
    std::vector<std::size_t> count( species, std::size_t( 0.7 * double( room ) ) / species );
    place_particles( lattice, count, rules, 3, ParticleCodes::species );
    DiffusionOptions opt;
    opt.scheme = scheme;
    opt.seed = 11;
    LatticeDiffusion<Slots, TEST_EXECSPACE> model( TEST_EXECSPACE(), lattice, rules, opt );
    const auto before = model.code_counts( TEST_EXECSPACE() );
    for ( int s = 0; s < species; ++s )
        ASSERT_EQ( before[s + 1], count[s] );
    model.advance( TEST_EXECSPACE(), 25 );
    // code_counts also re-checks the invariants: no particle on an obstacle, no gaps, valid codes.
    const auto after = model.code_counts( TEST_EXECSPACE() );
    EXPECT_EQ( before, after ) << "particles were lost or created (Slots " << Slots << ", " << to_string( scheme ) << ")";
    EXPECT_GT( model.overflows(), 0u ) << "the test did not exercise the overflow list";
}

TEST( TEST_CATEGORY, lattice_conserves_particles_under_overflow_walls_and_obstacles )
{
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
        for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
        {
            check_conservation<2>( scheme, b );
            check_conservation<4>( scheme, b );
            check_conservation<8>( scheme, b );
        }
}

// Tracer bookkeeping: initial position + unwrapped displacement lands on the final position, through
// periodic faces (modulo the extent), reflecting faces (exactly) and overflow placements.
template <PassScheme Scheme>
void check_tracer_displacements()
{
    LatticeShape shape( 7, 5, 6 );
    shape.boundary = { LatticeBoundary::periodic, LatticeBoundary::reflecting, LatticeBoundary::periodic };
    DiffusionRules rules( 2 );
    rules.set_isotropic( 0, 0.5 );
    rules.set( 1, 0, { 0.1, 0.5, 0.4 } ); // drifts along +x
    rules.set( 1, 1, { 0.3, 0.4, 0.3 } );
    rules.set( 1, 2, { 0.25, 0.5, 0.25 } );
    Lattice<2, TEST_MEMSPACE> lattice( shape );
    const std::size_t n = shape.sites(); // half of the slots: frequent overflows
    const auto species = place_particles( lattice, { n / 2, n - n / 2 }, rules, 9, ParticleCodes::tracers );
    const auto p0 = tracer_positions<2>( to_host( lattice ), shape, 1, std::uint32_t( n ) );
    DiffusionOptions opt;
    opt.scheme = Scheme;
    LatticeDiffusion<2, TEST_EXECSPACE> model( TEST_EXECSPACE(), lattice, rules, species, opt );
    model.advance( TEST_EXECSPACE(), 40 );
    EXPECT_GT( model.overflows(), 0u );
    const auto p1 = tracer_positions<2>( to_host( model.lattice() ), shape, 1, std::uint32_t( n ) );
    auto d = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), model.displacements() );
    expect_unwrapped( p0, d, p1, shape, 1, std::uint32_t( n ) );
    long drift = 0;
    for ( std::size_t c = 1; c <= n; ++c )
        if ( species[c - 1] == 1 )
            drift += d( c, 0 );
    // 40 steps of +0.3 per step on average along x for the drifting species.
    EXPECT_GT( double( drift ) / double( n - n / 2 ), 0.3 * 40 * 0.8 );
}

TEST( TEST_CATEGORY, lattice_tracer_displacements_unwrap_periodic_faces_and_overflows )
{
    check_tracer_displacements<PassScheme::split>();
    check_tracer_displacements<PassScheme::fused>();
}

// The driver owns its state and moves with it: a driver moved mid-run (construction, then assignment over
// another driver) continues the run bit for bit, sites and tracer displacements, at half of the slots
// (overflows every pass); copies are refused (they would share the lattice's Views).
TEST( TEST_CATEGORY, lattice_driver_moves_mid_run )
{
    using Driver = LatticeDiffusion<2, TEST_EXECSPACE>;
    static_assert( !std::is_copy_constructible_v<Driver> && !std::is_copy_assignable_v<Driver> );
    static_assert( std::is_move_constructible_v<Driver> && std::is_move_assignable_v<Driver> );
    TEST_EXECSPACE exec;
    LatticeShape shape( 7, 5, 6 );
    shape.boundary = { LatticeBoundary::periodic, LatticeBoundary::reflecting, LatticeBoundary::periodic };
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.5 );
    Lattice<2, TEST_MEMSPACE> initial( shape );
    const std::size_t n = shape.sites();
    const auto species = place_particles( initial, { n }, rules, 4, ParticleCodes::tracers );
    auto copy_of_initial = [&] {
        Lattice<2, TEST_MEMSPACE> l( shape );
        Kokkos::deep_copy( l.sites(), initial.sites() );
        return l;
    };
    Driver straight( exec, copy_of_initial(), rules, species, {} );
    Driver first( exec, copy_of_initial(), rules, species, {} );
    straight.advance( exec, 3 );
    first.advance( exec, 3 );
    Driver second( std::move( first ) );
    straight.advance( exec, 2 );
    second.advance( exec, 2 );
    Driver third( exec, copy_of_initial(), rules, species, {} );
    third.advance( exec, 1 ); // another state, replaced whole by the assignment
    third = std::move( second );
    EXPECT_EQ( third.steps_done(), 5 );
    straight.advance( exec, 4 );
    third.advance( exec, 4 );
    EXPECT_GT( straight.overflows(), 0u ) << "the case did not crowd the lattice";
    EXPECT_EQ( third.overflows(), straight.overflows() );
    const auto a = to_host( straight.lattice() );
    const auto b = to_host( third.lattice() );
    ASSERT_EQ( a.size(), b.size() );
    for ( std::size_t i = 0; i < a.size(); ++i )
        ASSERT_EQ( a[i], b[i] ) << "site " << i;
    auto da = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), straight.displacements() );
    auto db = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), third.displacements() );
    for ( std::size_t c = 1; c <= n; ++c )
        for ( int d = 0; d < 3; ++d )
            ASSERT_EQ( db( c, d ), da( c, d ) ) << "tracer " << c;
}

// FNV-1a of the words: a fingerprint of the whole lattice.
inline std::uint64_t fingerprint( const std::vector<site_word>& w )
{
    std::uint64_t h = 1469598103934665603ULL;
    for ( auto x : w )
        for ( int b = 0; b < 4; ++b )
            h = ( h ^ ( ( x >> ( 8 * b ) ) & 0xFF ) ) * 1099511628211ULL;
    return h;
}

template <int Slots>
std::vector<site_word> reproducibility_run( PassScheme scheme, bool on_host )
{
    LatticeShape shape( 20, 16, 12 );
    shape.boundary[2] = LatticeBoundary::reflecting;
    const int species = std::min( 3, int( SiteLayout<Slots>::max_code ) );
    const auto rules = mixed_rules( species );
    auto run = [&]( auto exec ) {
        using Exec = decltype( exec );
        Lattice<Slots, typename Exec::memory_space> lattice( shape );
        place_sphere_obstacles( exec, lattice, 2.0, 0.15, 1, 21 );
        const std::size_t n = lattice.size() * Slots / 2; // overflows in every pass
        place_particles( lattice, std::vector<std::size_t>( species, n / species ), rules, 4, ParticleCodes::species );
        DiffusionOptions opt;
        opt.scheme = scheme;
        opt.seed = 2026;
        LatticeDiffusion<Slots, Exec> model( exec, lattice, rules, opt );
        model.advance( exec, 10 );
        EXPECT_GT( model.overflows(), 0u );
        return to_host( model.lattice() );
    };
    return on_host ? run( Kokkos::DefaultHostExecutionSpace() ) : run( TEST_EXECSPACE() );
}

// The same seed gives the same lattice, bit for bit, on this backend and on the host backend, and the
// fingerprint recorded from the first run (Serial, Kokkos 3.4); OpenMP and CUDA builds reproduce it.
template <int Slots>
void check_reproducibility( PassScheme scheme, std::uint64_t recorded )
{
    const auto device = reproducibility_run<Slots>( scheme, false );
    const auto host = reproducibility_run<Slots>( scheme, true );
    EXPECT_EQ( device, host );
    const std::uint64_t f = fingerprint( device );
    EXPECT_EQ( f, recorded ) << "Slots " << Slots << " " << to_string( scheme ) << ": fingerprint 0x" << std::hex << f;
}

TEST( TEST_CATEGORY, lattice_results_are_identical_on_every_backend )
{
    check_reproducibility<2>( PassScheme::split, 0xbfeaeee4b88090e0ULL );
    check_reproducibility<4>( PassScheme::split, 0x3f4148a130262bf1ULL );
    check_reproducibility<8>( PassScheme::split, 0xfc4511370d53cc81ULL );
    check_reproducibility<2>( PassScheme::fused, 0x9e9128d34f431b00ULL );
    check_reproducibility<4>( PassScheme::fused, 0xe426efd6c866f45dULL );
    check_reproducibility<8>( PassScheme::fused, 0x6bfc07435e6d6313ULL );
}

TEST( TEST_CATEGORY, lattice_obstacles_reach_the_volume_fraction )
{
    for ( double fraction : { 0.1, 0.2, 0.3 } )
    {
        Lattice<4, TEST_MEMSPACE> lattice( LatticeShape( 40, 40, 40 ) );
        const auto r = place_sphere_obstacles( TEST_EXECSPACE(), lattice, 3.0, fraction, 2, 8 );
        EXPECT_GE( r.fraction, fraction );
        EXPECT_LE( r.fraction, fraction + 4.19 * 27 / 64000.0 ); // at most one sphere over
        const auto w = to_host( lattice );
        const auto typed = std::count_if( w.begin(), w.end(), []( site_word x ) { return SiteLayout<4>::type( x ) == 2; } );
        EXPECT_EQ( std::size_t( typed ), r.sites );
    }
    Lattice<4, TEST_MEMSPACE> lattice( LatticeShape( 10, 10, 10 ) );
    EXPECT_THROW( place_sphere_obstacles( TEST_EXECSPACE(), lattice, 2.0, 1.0, 1, 1 ), morula::core::InputError );
    EXPECT_THROW( place_sphere_obstacles( TEST_EXECSPACE(), lattice, 0.0, 0.1, 1, 1 ), morula::core::InputError );
    EXPECT_THROW( place_sphere_obstacles( TEST_EXECSPACE(), lattice, 2.0, 0.1, 0, 1 ), morula::core::InputError );
    place_sphere_obstacles( TEST_EXECSPACE(), lattice, 2.0, 0.6, 1, 1 );
    // Type 2 cannot take 50% more: only 40% of the sites are still type 0.
    EXPECT_THROW( place_sphere_obstacles( TEST_EXECSPACE(), lattice, 2.0, 0.5, 2, 1 ), morula::core::InputError );
}

TEST( TEST_CATEGORY, lattice_rejects_bad_lattices_and_too_many_particles )
{
    LatticeShape shape( 4, 4, 4 );
    DiffusionRules rules( 2 );
    rules.block( 1 );
    Lattice<2, TEST_MEMSPACE> lattice( shape );
    EXPECT_THROW( place_particles( lattice, { 100, 29 }, rules, 1, ParticleCodes::species ), morula::core::InputError );
    EXPECT_NO_THROW( place_particles( lattice, { 100, 28 }, rules, 1, ParticleCodes::species ) ); // exactly full
    // A code beyond the species, a particle on an obstacle, a gap between slots: all rejected.
    using L = SiteLayout<2>;
    for ( site_word bad : { L::with_code( 0, 0, 3 ), L::with_code( L::empty_site( 1 ), 0, 1 ), L::with_code( 0, 1, 1 ) } )
    {
        Lattice<2, TEST_MEMSPACE> l( shape );
        std::vector<site_word> w( shape.sites(), 0 );
        w[17] = bad;
        from_host( l, w );
        EXPECT_THROW( ( LatticeDiffusion<2, TEST_EXECSPACE>( TEST_EXECSPACE(), l, rules ) ), morula::core::InputError );
    }
    // Tracer ids must each appear once.
    Lattice<2, TEST_MEMSPACE> l( shape );
    std::vector<site_word> w( shape.sites(), 0 );
    w[0] = L::with_code( L::with_code( 0, 0, 1 ), 1, 1 );
    from_host( l, w );
    EXPECT_THROW( ( LatticeDiffusion<2, TEST_EXECSPACE>( TEST_EXECSPACE(), l, rules, std::vector<int>{ 0 } ) ),
                  morula::core::InputError );
    EXPECT_THROW( LatticeShape( 0, 4, 4 ), morula::core::InputError );
}

// The driver shape (core/Driver.hpp).
static_assert( morula::core::is_driver_v<LatticeDiffusion<2, TEST_EXECSPACE>, TEST_EXECSPACE> );
static_assert( morula::core::is_driver_v<LatticeDiffusion<8, TEST_EXECSPACE>, TEST_EXECSPACE> );

// step() takes one step, timed or not (a bool, never a step count), and fills times() only when timed;
// advance() takes several and gives the same lattice.
TEST( TEST_CATEGORY, lattice_step_takes_one_step_and_times_it_only_when_asked )
{
    TEST_EXECSPACE exec;
    using Phase = LatticeDiffusionPhase;
    const LatticeShape shape( 8, 6, 5 );
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.3 );
    Lattice<4, TEST_MEMSPACE> lattice( shape );
    place_particles( lattice, { 400 }, rules, 3, ParticleCodes::species ); // 1.7 per site: overflows
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
    {
        Lattice<4, TEST_MEMSPACE> a( shape ), b( shape );
        Kokkos::deep_copy( a.sites(), lattice.sites() );
        Kokkos::deep_copy( b.sites(), lattice.sites() );
        DiffusionOptions opt;
        opt.scheme = scheme;
        LatticeDiffusion<4, TEST_EXECSPACE> model( exec, a, rules, opt );
        LatticeDiffusion<4, TEST_EXECSPACE> twin( exec, b, rules, opt );
        const auto& t = model.times();
        EXPECT_EQ( model.steps_done(), 0 );
        ASSERT_EQ( t.num_phases(), 4 ); // halo and sync: what slabs over several ranks add
        EXPECT_EQ( t.phase_name( Phase::passes ), "passes" );
        EXPECT_EQ( t.phase_name( Phase::overflow ), "overflow" );
        EXPECT_EQ( t.phase_name( Phase::halo ), "halo" );
        EXPECT_EQ( t.phase_name( Phase::sync ), "sync" );

        auto report = model.step( exec );
        EXPECT_EQ( report.step, 0 );
        EXPECT_EQ( model.steps_done(), 1 );
        EXPECT_EQ( t.steps(), 0 );
        EXPECT_EQ( t.total(), 0.0 );

        report = model.step( exec, true );
        EXPECT_EQ( report.step, 1 );
        EXPECT_EQ( model.steps_done(), 2 );
        EXPECT_EQ( t.steps(), 1 );
        EXPECT_GT( t.seconds( Phase::passes ), 0.0 );
        EXPECT_GT( t.seconds( "overflow" ), 0.0 );
        // one rank: nothing travels, nothing waits for another rank, no count on the host
        EXPECT_EQ( t.seconds( Phase::halo ), 0.0 );
        EXPECT_EQ( t.seconds( Phase::sync ), 0.0 );
        EXPECT_EQ( t.count( LatticeDiffusionCount::halo_bytes ), 0 );
        EXPECT_EQ( report.halo_bytes + report.overflow_events + report.overflow_entries + report.overflow_scans, 0 );
        const double timed = t.total();

        report = model.step( exec );
        EXPECT_EQ( report.step, 2 );
        EXPECT_EQ( t.steps(), 1 );
        EXPECT_EQ( t.total(), timed );

        twin.advance( exec, 3 );
        EXPECT_EQ( twin.steps_done(), 3 );
        EXPECT_EQ( to_host( twin.lattice() ), to_host( model.lattice() ) ) << to_string( scheme );
        EXPECT_GT( model.overflows(), 0u );
        EXPECT_EQ( twin.overflows(), model.overflows() );

        model.reset_times();
        EXPECT_EQ( t.steps(), 0 );
        EXPECT_EQ( t.total(), 0.0 );
        EXPECT_EQ( model.steps_done(), 3 ); // the step number that keys the moves stays
    }
}

} // namespace morula_test_lattice
