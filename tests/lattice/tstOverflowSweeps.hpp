// The parallel overflow placement (fixed-point sweeps, lattice/detail/OverflowSweeps.hpp) against the sequential kernel
// (lattice/detail/PlaceOverflow.hpp), its reference: after every pass of crowded lattices (60% of the
// slots and more; 2, 4 and 8 slots; split and fused passes; periodic and reflecting faces; obstacles)
// the two give the same site words, tracer displacements, overflow counts and placement logs bit for bit.
// A nearly full lattice makes the tables fail, so that the index-order scan runs between the sweeps.
#include "LatticeTestUtils.hpp"

#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace morula_test_overflow_sweeps
{
using namespace morula::lattice;
using morula_test_lattice::EngineAccess;
using morula_test_lattice::to_host;

struct SweepsCase
{
    double fill;           // particles per slot of the open sites
    LatticeBoundary boundary;
    PassScheme scheme;
    int extent;
    int steps;
    double obstacles = 0; // volume fraction of type-2 spheres (blocked)
    bool radix_sort = false; // every list by the radix sort (else the default: every list by counting)
    int epoch_limit = 255;   // the sweeps' stamps reset after this many sweeps (then a sweep of every entry)
    // Sweeps that list their changes and compute a worklist: the library's default (these lists are too
    // short for it: never), never, the late sweeps (the default rule without its minimum list size), or
    // every sweep, the first included.
    enum class Listed
    {
        by_default,
        never,
        late,
        every
    } listed = Listed::by_default;
    // Split passes x, y and z without placement between them, then one placement of the gathered list, in
    // which one key can occur twice (the placement orders such entries by code and move).
    bool gather_passes = false;
};

struct SweepsStats
{
    double entries = 0, sweeps = 0, scans = 0, listed = 0, repeated_keys = 0;
    int max_sweeps = 0;
};

template <int Slots>
SweepsStats check_sweeps_equal_sequential( const SweepsCase& c )
{
    using layout = SiteLayout<Slots>;
    const LatticeShape shape( c.extent, c.extent + 2, c.extent - 1, c.boundary );
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.25 );
    rules.block( 2 );
    Lattice<Slots, TEST_MEMSPACE> start( shape );
    std::size_t open = shape.sites();
    if ( c.obstacles > 0 )
        open -= place_sphere_obstacles( TEST_EXECSPACE(), start, 1.5, c.obstacles, 2, 5 ).sites;
    const std::size_t particles = std::size_t( c.fill * double( open * Slots ) );
    const std::size_t tracers = std::min<std::size_t>( particles, layout::max_code - 1 );
    const CodeMap codes = place_particles( start, { particles }, { tracers }, rules, 31 );
    const auto words = to_host( start );
    auto make = [&]( OverflowPlacement placement ) {
        Lattice<Slots, TEST_MEMSPACE> lattice( shape );
        morula_test_lattice::from_host( lattice, words );
        DiffusionOptions opt;
        opt.scheme = c.scheme;
        opt.seed = 17;
        opt.placement = placement;
        auto model = std::make_unique<LatticeDiffusion<Slots, TEST_EXECSPACE>>( TEST_EXECSPACE(), lattice, rules, codes, opt );
        EngineAccess::engine( *model ).record_placements();
        return model;
    };
    auto sequential = make( OverflowPlacement::sequential );
    auto parallel = make( OverflowPlacement::parallel );
    if ( c.radix_sort )
        EngineAccess::engine( *parallel ).overflow_sweeps_engine().set_counting_sort_from( ~std::size_t( 0 ) );
    EngineAccess::engine( *parallel ).overflow_sweeps_engine().set_epoch_limit( c.epoch_limit );
    auto& sweeps_engine = EngineAccess::engine( *parallel ).overflow_sweeps_engine();
    if ( c.listed == SweepsCase::Listed::never )
        sweeps_engine.set_changed_list_limit( 0 );
    else if ( c.listed == SweepsCase::Listed::late )
        sweeps_engine.set_changed_list_limit( 65536, 16, 0 );
    else if ( c.listed == SweepsCase::Listed::every )
        sweeps_engine.set_changed_list_limit( ~std::size_t( 0 ), 1, 0 );
    EXPECT_EQ( EngineAccess::engine( *parallel ).overflow_placement(), OverflowPlacement::parallel );
    SweepsStats stats;
    const int n[3] = { shape.nx, shape.ny, shape.nz };
    auto compare = [&]( int step, int pass ) {
        auto& es = EngineAccess::engine( *sequential );
        auto& er = EngineAccess::engine( *parallel );
        const std::size_t count = es.pending_overflows( TEST_EXECSPACE() );
        ASSERT_EQ( count, er.pending_overflows( TEST_EXECSPACE() ) ) << "step " << step << " pass " << pass;
        sequential->place_overflow( TEST_EXECSPACE() );
        parallel->place_overflow( TEST_EXECSPACE() );
        ASSERT_EQ( to_host( sequential->lattice() ), to_host( parallel->lattice() ) ) << "step " << step << " pass " << pass;
        ASSERT_EQ( sequential->overflows(), parallel->overflows() );
        auto ds = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), sequential->displacements() );
        auto dr = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), parallel->displacements() );
        ASSERT_EQ( ds.extent( 0 ), dr.extent( 0 ) );
        for ( std::size_t k = 0; k < ds.extent( 0 ); ++k )
            for ( int a = 0; a < 3; ++a )
                ASSERT_EQ( ds( k, a ), dr( k, a ) ) << "tracer " << k << " axis " << a << " step " << step;
        auto ks = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), es.overflow_keys() );
        auto kr = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), er.overflow_keys() );
        auto ms = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), es.overflow_moves() );
        auto ps = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), es.placed_sites() );
        auto pr = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), er.placed_sites() );
        for ( std::size_t i = 0; i < count; ++i )
        {
            stats.repeated_keys += i > 0 && ks( i ) == ks( i - 1 );
            ASSERT_EQ( ks( i ), kr( i ) ) << "entry " << i << " of " << count;
            ASSERT_EQ( ps( i ), pr( i ) ) << "entry " << i << " of " << count;
            // a placement beyond the 5^3 cube around the origin came from the index-order scan
            const std::uint64_t o = detail::move_origin( ks( i ) >> 8, ms( i ), n[0], n[1], n[2] );
            const std::uint64_t plane = std::uint64_t( n[0] ) * std::uint64_t( n[1] );
            const std::uint64_t oc[3] = { o % n[0], ( o / n[0] ) % n[1], o / plane };
            const std::uint64_t pc[3] = { ps( i ) % n[0], ( ps( i ) / n[0] ) % n[1], ps( i ) / plane };
            bool far = false;
            for ( int a = 0; a < 3; ++a )
            {
                int d = std::abs( int( pc[a] ) - int( oc[a] ) );
                if ( c.boundary == LatticeBoundary::periodic )
                    d = std::min( d, n[a] - d );
                far = far || d > 2;
            }
            stats.scans += far;
        }
        stats.entries += double( count );
        stats.sweeps += er.overflow_sweeps();
        stats.max_sweeps = std::max( stats.max_sweeps, er.overflow_sweeps() );
        stats.listed += er.overflow_sweeps_engine().listed_sweeps();
    };
    for ( int step = 0; step < c.steps; ++step )
    {
        if ( c.scheme == PassScheme::split )
            for ( int axis = 0; axis < 3; ++axis )
            {
                sequential->split_pass( TEST_EXECSPACE(), axis );
                parallel->split_pass( TEST_EXECSPACE(), axis );
                if ( c.gather_passes && axis < 2 )
                    continue;
                compare( step, axis );
                if ( ::testing::Test::HasFatalFailure() )
                    return stats;
            }
        else
        {
            sequential->fused_pass( TEST_EXECSPACE() );
            parallel->fused_pass( TEST_EXECSPACE() );
            compare( step, 3 );
            if ( ::testing::Test::HasFatalFailure() )
                return stats;
        }
        sequential->complete_step();
        parallel->complete_step();
    }
    EXPECT_EQ( sequential->code_counts( TEST_EXECSPACE() ), parallel->code_counts( TEST_EXECSPACE() ) );
    std::printf( "%d slots %-5s %-10s fill %.2f obstacles %.2f: %.0f entries, %.0f sweeps (at most %d per pass, %.0f "
                 "from listed changes), %.0f placed by the scan\n",
                 Slots, to_string( c.scheme ), to_string( c.boundary ), c.fill, c.obstacles, stats.entries, stats.sweeps,
                 stats.max_sweeps, stats.listed, stats.scans );
    EXPECT_GT( stats.entries, 100 );
    EXPECT_GT( stats.sweeps, 0 );
    if ( c.listed == SweepsCase::Listed::never || c.listed == SweepsCase::Listed::by_default )
        EXPECT_EQ( stats.listed, 0 );
    if ( c.listed == SweepsCase::Listed::every )
        EXPECT_GT( stats.listed, 0 );
    if ( c.gather_passes )
        EXPECT_GT( stats.repeated_keys, 0 ); // the case this option is for

    return stats;
}

template <int Slots>
void check_crowded_cases()
{
    using Listed = SweepsCase::Listed;
    // Every sweep over the range of entries (the default for lists this short), and the late sweeps from
    // listed changes (the rule long lists get by default).
    for ( auto listed : { Listed::by_default, Listed::late } )
        for ( auto boundary : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
            for ( auto scheme : { PassScheme::split, PassScheme::fused } )
                for ( double fill : { 0.6, 0.8, 0.95 } )
                {
                    SweepsCase c{ fill, boundary, scheme, 16, 4 };
                    c.listed = listed;
                    check_sweeps_equal_sequential<Slots>( c );
                    if ( ::testing::Test::HasFatalFailure() )
                        return;
                }
    check_sweeps_equal_sequential<Slots>( { 0.7, LatticeBoundary::periodic, PassScheme::split, 16, 4, 0.2 } );
    check_sweeps_equal_sequential<Slots>( { 0.7, LatticeBoundary::reflecting, PassScheme::fused, 16, 4, 0.2 } );
    // The lists above are sorted by counting per bucket of sites (the default); the radix sort, the
    // other order the placement can start from, forced here for every list:
    check_sweeps_equal_sequential<Slots>( { 0.8, LatticeBoundary::periodic, PassScheme::split, 16, 3, 0, true } );
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::reflecting, PassScheme::fused, 16, 3, 0.1, true } );
    // Sweeps after the first recompute only the entries whose checked sites changed claimants (stamps of
    // the previous sweep); the stamps reset every 255 sweeps, and the sweep after a reset computes every
    // entry. Resets after every sweep and after every other one:
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::periodic, PassScheme::split, 16, 3, 0, false, 1 } );
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::reflecting, PassScheme::fused, 16, 3, 0.1, false, 2 } );
    // Sweeps from listed changes (the claim lists rebuilt from the changes, the worklist from the rows of
    // sites around them): never, and for every sweep, the first included; periodic and reflecting faces,
    // axes shorter than the 7 sites a worklist row spans, obstacles, stamps reset in between, the radix sort.
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::periodic, PassScheme::split, 16, 3, 0, false, 255, Listed::never } );
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::periodic, PassScheme::split, 16, 3, 0, false, 255, Listed::every } );
    check_sweeps_equal_sequential<Slots>( { 0.8, LatticeBoundary::reflecting, PassScheme::fused, 16, 3, 0.1, false, 255, Listed::every } );
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::periodic, PassScheme::fused, 6, 4, 0, false, 255, Listed::every } );
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::reflecting, PassScheme::split, 6, 4, 0, false, 255, Listed::every } );
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::periodic, PassScheme::split, 16, 3, 0, true, 2, Listed::every } );
    check_sweeps_equal_sequential<Slots>( { 0.95, LatticeBoundary::reflecting, PassScheme::split, 16, 3, 0.1, false, 3, Listed::late } );
    // A list gathered over three passes (repeated keys), placed over the range and from listed changes.
    check_sweeps_equal_sequential<Slots>( { 0.9, LatticeBoundary::periodic, PassScheme::split, 16, 3, 0, false, 255, Listed::by_default, true } );
    check_sweeps_equal_sequential<Slots>( { 0.9, LatticeBoundary::reflecting, PassScheme::split, 16, 3, 0.1, false, 255, Listed::every, true } );
    check_sweeps_equal_sequential<Slots>( { 0.9, LatticeBoundary::periodic, PassScheme::split, 16, 3, 0, false, 255, Listed::late, true } );
}

TEST( TEST_CATEGORY, lattice_overflow_sweeps_equal_sequential_two_slots ) { check_crowded_cases<2>(); }
TEST( TEST_CATEGORY, lattice_overflow_sweeps_equal_sequential_four_slots ) { check_crowded_cases<4>(); }
TEST( TEST_CATEGORY, lattice_overflow_sweeps_equal_sequential_eight_slots ) { check_crowded_cases<8>(); }

// Nearly full: whole 5^3 cubes fill, the tables fail and the index-order scan places entries in the
// middle of the sweeps; small periodic extents (the cube wraps onto itself) and reflecting ones.
TEST( TEST_CATEGORY, lattice_overflow_sweeps_run_the_scan_on_a_nearly_full_lattice )
{
    double scans = 0;
    for ( auto boundary : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
        for ( auto scheme : { PassScheme::split, PassScheme::fused } )
        {
            scans += check_sweeps_equal_sequential<2>( { 0.995, boundary, scheme, 9, 6 } ).scans;
            scans += check_sweeps_equal_sequential<4>( { 0.995, boundary, scheme, 6, 6 } ).scans;
            scans += check_sweeps_equal_sequential<2>( { 0.99, boundary, scheme, 5, 6, 0.1 } ).scans;
            scans += check_sweeps_equal_sequential<2>( { 0.995, boundary, scheme, 9, 3, 0, false, 3 } ).scans;
            scans += check_sweeps_equal_sequential<2>( { 0.995, boundary, scheme, 9, 4, 0, false, 255, SweepsCase::Listed::every } ).scans;
            scans += check_sweeps_equal_sequential<2>( { 0.995, boundary, scheme, 9, 4, 0, false, 255, SweepsCase::Listed::late } ).scans;
            if ( ::testing::Test::HasFatalFailure() )
                return;
        }
    EXPECT_GT( scans, 0 );
}

} // namespace morula_test_overflow_sweeps
