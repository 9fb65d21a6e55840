// LatticeDiffusion on slabs over MPI ranks: slabs along z give the single-rank lattice bit for bit, through
// overflows, obstacles, walls, periodic wraps and tracer displacements; bad slab layouts are refused on
// every rank before anything is communicated.
#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>
#include <morula/lattice/detail/EngineAccess.hpp>
#include <morula/parallel/LatticeSlabs.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace morula_test_distributed_lattice
{
using namespace morula::lattice;
using morula::parallel::slab_of_rank;
using Count = morula::lattice::LatticeDiffusionCount;

int world_rank()
{
    int r = 0;
    MPI_Comm_rank( MPI_COMM_WORLD, &r );
    return r;
}
int world_size()
{
    int s = 1;
    MPI_Comm_size( MPI_COMM_WORLD, &s );
    return s;
}

// Planes [begin, end) of a lattice as a lattice of their own.
template <int Slots>
Lattice<Slots, TEST_MEMSPACE> slab_of( const Lattice<Slots, TEST_MEMSPACE>& whole, int begin, int end )
{
    LatticeShape s = whole.shape();
    s.nz = end - begin;
    Lattice<Slots, TEST_MEMSPACE> slab( s, "test_slab" );
    const std::size_t plane = std::size_t( s.nx ) * std::size_t( s.ny );
    Kokkos::deep_copy( slab.sites(), Kokkos::subview( whole.sites(), Kokkos::make_pair( plane * begin, plane * end ) ) );
    return slab;
}

struct Case
{
    PassScheme scheme = PassScheme::split;
    LatticeBoundary z_boundary = LatticeBoundary::periodic;
    int nx = 9;
    int nz = 24;
    double fill = 0.7; // of the free slots
    PassKernels kernels = PassKernels::automatic; // of the slabs and of the single rank
    bool tracers = false;
    bool marked = false; // species codes for the crowd plus a few marked tracers per species (CodeMap)
    int steps = 20;
    bool expect_scans = false; // some particle needs the index-order scan over all slabs
    //! How the slabs place their overflow lists (the single rank always places them sequentially).
    OverflowPlacement slab_placement = OverflowPlacement::automatic;
    //! The slabs' parallel placement lists every sweep's changes and computes worklists (by default only
    //! lists of 2^20 entries do), so that the worklists' sites in ghost planes are checked too.
    bool listed_sweeps = false;
    SlabTurns slab_turns = SlabTurns::automatic;
};

std::string describe( const Case& c, int slots )
{
    return morula::core::detail::concat( slots, " slots, ", to_string( c.scheme ), " (", to_string( c.kernels ), "), z ",
                                         to_string( c.z_boundary ), ", nx ", c.nx, ", nz ", c.nz, ", fill ", c.fill, c.tracers ? ", tracers" : "", c.marked ? ", marked tracers" : "", ", ",
                                         world_size(), " ranks, slabs place ", to_string( c.slab_placement ), " ",
                                         to_string( c.slab_turns ),
                                         c.listed_sweeps ? ", every sweep listed" : "" );
}

// Every rank builds the same lattice, steps it alone and distributed over MPI_COMM_WORLD, and compares
// after every step: the sites, and at the end the overflow count and the tracer displacements.
template <int Slots>
void check_against_single_rank( const Case& c )
{
    SCOPED_TRACE( describe( c, Slots ) );
    TEST_EXECSPACE exec;
    LatticeShape shape( c.nx, 7, c.nz );
    shape.boundary = { LatticeBoundary::periodic, LatticeBoundary::reflecting, c.z_boundary };
    const int species = 3;
    DiffusionRules rules( species );
    rules.set_isotropic( 0, 0.45 );
    rules.set_isotropic( 1, 0.2 );
    rules.set( 2, 0, { 0.1, 0.5, 0.4 } ); // drifts along +x
    rules.set( 2, 1, { 0.3, 0.4, 0.3 } );
    rules.set( 2, 2, { 0.05, 0.45, 0.5 } ); // and along +z: crosses slab faces and the periodic wrap
    rules.block( 1 );
    Lattice<Slots, TEST_MEMSPACE> whole( shape );
    const auto obstacles = place_sphere_obstacles( exec, whole, 1.2, 0.08, 1, 17 );
    const std::size_t room = ( whole.size() - obstacles.sites ) * Slots;
    std::size_t n = std::size_t( c.fill * double( room ) );
    if ( c.tracers )
        n = std::min<std::size_t>( n, SiteLayout<Slots>::max_code );
    std::vector<std::size_t> count( species, n / species );
    CodeMap codes;
    if ( c.marked )
    {
        const std::size_t per_species = std::min<std::size_t>( 20, ( SiteLayout<Slots>::max_code - species ) / species );
        codes = place_particles( whole, count, std::vector<std::size_t>( species, per_species ), rules, 5 );
    }
    else
    {
        const auto species_of_tracer =
            place_particles( whole, count, rules, 5, c.tracers ? ParticleCodes::tracers : ParticleCodes::species );
        codes = c.tracers ? CodeMap::tracers( species_of_tracer ) : CodeMap::species( species );
    }

    DiffusionOptions opt;
    opt.scheme = c.scheme;
    opt.kernels = c.kernels;
    opt.seed = 23;
    Lattice<Slots, TEST_MEMSPACE> copy( shape );
    Kokkos::deep_copy( copy.sites(), whole.sites() );
    LatticeDiffusion<Slots, TEST_EXECSPACE> single( exec, copy, rules, codes, [&] {
        DiffusionOptions o = opt;
        o.placement = OverflowPlacement::sequential;
        return o;
    }() );
    const auto mine = slab_of_rank( shape.nz, world_rank(), world_size() );
    const auto slab = slab_of( whole, mine.begin, mine.end );
    opt.placement = c.slab_placement;
    opt.slab_turns = c.slab_turns;
    LatticeDiffusion<Slots, TEST_EXECSPACE> dist( exec, MPI_COMM_WORLD, shape, slab, rules, codes, opt );
    if ( c.listed_sweeps )
        morula::lattice::detail::EngineAccess::engine( dist ).overflow_sweeps_engine().set_changed_list_limit(
            ~std::size_t( 0 ), 1, 0 );
    ASSERT_EQ( dist.particles(), single.particles() );
    for ( int step = 1; step <= c.steps; ++step )
    {
        single.step( exec );
        dist.step( exec, true );
        const auto expected = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), single.lattice().sites() );
        const auto got = dist.gather( exec );
        std::size_t differ = 0, first = 0;
        for ( std::size_t i = got.extent( 0 ); i-- > 0; )
            if ( got( i ) != expected( i ) )
            {
                ++differ;
                first = i;
            }
        ASSERT_EQ( differ, 0u ) << "step " << step << ": " << differ << " sites differ, the first at index " << first
                                << " (z = " << first / ( std::size_t( shape.nx ) * shape.ny ) << ")";
    }
    EXPECT_EQ( dist.overflows(), single.overflows() );
    if ( c.fill >= 0.5 )
        EXPECT_GT( single.overflows(), 0u ) << "the case did not exercise the overflow placement";
    const auto counts = dist.code_counts( exec );
    EXPECT_EQ( counts, single.code_counts( exec ) );
    if ( codes.tracking() )
    {
        const auto expected = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), single.displacements() );
        const auto got = dist.gather_displacements();
        ASSERT_EQ( got.extent( 0 ), expected.extent( 0 ) );
        for ( std::size_t t = 1; t < got.extent( 0 ); ++t )
            for ( int a = 0; a < 3; ++a )
                ASSERT_EQ( got( t, a ), expected( t, a ) ) << "tracer " << t << " axis " << a;
        const auto m = dist.msd( 0 );
        const auto m1 = single.msd( 0 );
        EXPECT_EQ( m.tracers, m1.tracers );
        EXPECT_EQ( m.total(), m1.total() );
    }
    // Slabs placing together with swept lists: some neighbour's placements near a face displaced
    // entries of a speculated list (the sweeps resumed), or the case tested less than it says.
    if ( world_size() > 1 && c.fill >= 0.6 && c.slab_placement == OverflowPlacement::parallel &&
         c.slab_turns != SlabTurns::in_turn )
        EXPECT_GT( morula::lattice::detail::EngineAccess::engine( dist ).overflow_sweeps_engine().resumed_speculations(), 0 )
            << "no speculated list took a neighbour's placements";
    const auto& t = dist.times();
    EXPECT_EQ( t.steps(), c.steps );
    if ( c.expect_scans && world_size() > 1 )
        EXPECT_GT( t.count( Count::overflow_scans ), 0 ) << "the case did not exercise the scan over all slabs";
    if ( world_size() > 1 )
    {
        EXPECT_GT( t.count( Count::halo_bytes ), 0 );
        if ( c.fill >= 0.5 )
            EXPECT_GT( t.count( Count::overflow_events ), 0 );
    }
}

TEST( TEST_CATEGORY, distributed_lattice_split_matches_single_rank_bitwise )
{
    for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
    {
        Case c;
        c.z_boundary = b;
        check_against_single_rank<2>( c );
        check_against_single_rank<4>( c );
        check_against_single_rank<8>( c );
    }
}

TEST( TEST_CATEGORY, distributed_lattice_fused_matches_single_rank_bitwise )
{
    for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
    {
        Case c;
        c.scheme = PassScheme::fused;
        c.z_boundary = b;
        // species 2 drifts into the top wall and fills it: its overflows find no room within 3 sites
        c.expect_scans = b == LatticeBoundary::reflecting;
        check_against_single_rank<2>( c );
        check_against_single_rank<4>( c );
    }
}

// Rows of whole quads (12 sites), so that the compacted passes run on the slabs, on sparse and crowded
// lattices: the compacted fused pass marks the destinations that the particles of the ghost planes next
// to a slab's faces reach, and copies the rest.
TEST( TEST_CATEGORY, distributed_lattice_compacted_passes_match_single_rank )
{
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
        for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
        {
            Case c;
            c.nx = 12;
            c.scheme = scheme;
            c.z_boundary = b;
            c.kernels = PassKernels::compacted;
            for ( double fill : { 0.01, 0.1, 0.7 } )
            {
                c.fill = fill;
                c.steps = fill < 0.5 ? 40 : 20;
                check_against_single_rank<2>( c );
                check_against_single_rank<8>( c );
            }
        }
}

// Uneven slabs (25 planes over 2 or 4 ranks), tracer ids and their displacements summed over ranks.
TEST( TEST_CATEGORY, distributed_lattice_tracers_and_uneven_slabs )
{
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
    {
        Case c;
        c.scheme = scheme;
        c.nz = 25;
        c.tracers = true;
        c.fill = 0.5;
        c.steps = 30;
        check_against_single_rank<2>( c );
    }
}

// Marked tracers among species codes (CodeMap::marked), 4 and 8 slots, crowded, both schemes.
TEST( TEST_CATEGORY, distributed_lattice_marked_tracers )
{
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
    {
        Case c;
        c.scheme = scheme;
        c.marked = true;
        c.fill = 0.8;
        c.steps = 15;
        check_against_single_rank<4>( c );
        check_against_single_rank<8>( c );
    }
}

// Nearly full (95% of the free slots): placements chain through several ranks in one pass, and land
// on the neighbours' planes.
TEST( TEST_CATEGORY, distributed_lattice_crowded )
{
    Case c;
    c.fill = 0.95;
    c.steps = 10;
    check_against_single_rank<2>( c );
    check_against_single_rank<4>( c );
}

// The slabs place their lists in parallel (lattice/detail/OverflowSweeps.hpp), the single rank in order:
// the same lattice bit for bit, with the turns stopped and resumed at entries that need the scan over all
// slabs (fused, reflecting z), crowded and nearly full, tracers.
TEST( TEST_CATEGORY, distributed_lattice_overflow_sweeps_match_single_rank )
{
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
        for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
        {
            Case c;
            c.scheme = scheme;
            c.z_boundary = b;
            c.slab_placement = OverflowPlacement::parallel;
            c.expect_scans = scheme == PassScheme::fused && b == LatticeBoundary::reflecting;
            check_against_single_rank<2>( c );
            check_against_single_rank<4>( c );
            c.fill = 0.95;
            c.expect_scans = false;
            check_against_single_rank<2>( c );
            c.fill = 0.6;
            c.tracers = true;
            check_against_single_rank<2>( c );
            // every sweep from listed changes (stamped sites in ghost planes, z wrapping over the slabs)
            c.fill = 0.9;
            c.tracers = false;
            c.listed_sweeps = true;
            check_against_single_rank<2>( c );
            check_against_single_rank<4>( c );
        }
}

// The slabs with entries in turn (SlabTurns::in_turn; the other tests place together, the default):
// sequential and parallel lists, crowded, nearly full, the scan over all slabs, tracers.
TEST( TEST_CATEGORY, distributed_lattice_slabs_in_turn_match_single_rank )
{
    for ( auto scheme : { PassScheme::split, PassScheme::fused } )
        for ( auto placement : { OverflowPlacement::sequential, OverflowPlacement::parallel } )
        {
            Case c;
            c.scheme = scheme;
            c.z_boundary = LatticeBoundary::reflecting;
            c.slab_turns = SlabTurns::in_turn;
            c.slab_placement = placement;
            c.expect_scans = scheme == PassScheme::fused;
            check_against_single_rank<2>( c );
            c.expect_scans = false;
            c.steps = 10;
            c.fill = 0.95;
            check_against_single_rank<4>( c );
            c.fill = 0.6;
            c.tracers = true;
            check_against_single_rank<2>( c );
        }
}

// On one rank (MPI_COMM_SELF) the distributed driver is the single-rank model.
TEST( TEST_CATEGORY, distributed_lattice_on_one_rank )
{
    TEST_EXECSPACE exec;
    LatticeShape shape( 6, 5, 4 );
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.3 );
    Lattice<4, TEST_MEMSPACE> whole( shape );
    place_particles( whole, { 80 }, rules, 2, ParticleCodes::species );
    Lattice<4, TEST_MEMSPACE> copy( shape );
    Kokkos::deep_copy( copy.sites(), whole.sites() );
    LatticeDiffusion<4, TEST_EXECSPACE> single( exec, copy, rules );
    LatticeDiffusion<4, TEST_EXECSPACE> dist( exec, MPI_COMM_SELF, shape, whole, rules );
    single.advance( exec, 15 );
    dist.advance( exec, 15 );
    const auto expected = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), single.lattice().sites() );
    const auto got = dist.gather( exec );
    for ( std::size_t i = 0; i < got.extent( 0 ); ++i )
        ASSERT_EQ( got( i ), expected( i ) ) << "site " << i;
}

// One driver on one rank and on slabs: parallel::owned_slab() cuts this rank's slab from the whole
// lattice every rank holds, and the slab driver built from it steps a crowded lattice (83% of the
// slots full, overflows across the slab faces) exactly as the one-rank driver; the one-rank blocks
// (split_pass, ...) refuse on several ranks, whose passes exchange planes.
TEST( TEST_CATEGORY, lattice_driver_on_slabs_cut_from_a_whole_lattice )
{
    TEST_EXECSPACE exec;
    const int ranks = world_size(), rank = world_rank();
    LatticeShape shape( 6, 5, 4 * ranks, LatticeBoundary::reflecting );
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.3 );
    Lattice<2, TEST_MEMSPACE> whole( shape );
    place_particles( whole, { std::size_t( 200 * ranks ) }, rules, 3, ParticleCodes::species );
    Lattice<2, TEST_MEMSPACE> copy( shape );
    Kokkos::deep_copy( copy.sites(), whole.sites() );
    LatticeDiffusion<2, TEST_EXECSPACE> single( exec, copy, rules );
    LatticeDiffusion<2, TEST_EXECSPACE> slabs( exec, MPI_COMM_WORLD, shape,
                                               morula::parallel::owned_slab( exec, whole, rank, ranks ), rules );
    EXPECT_EQ( single.size(), 1 );
    EXPECT_EQ( slabs.size(), ranks );
    EXPECT_EQ( slabs.rank(), rank );
    EXPECT_EQ( slabs.slab().first, slab_of_rank( shape.nz, rank, ranks ).begin );
    EXPECT_EQ( slabs.slab().second, slab_of_rank( shape.nz, rank, ranks ).end );
    EXPECT_EQ( slabs.particles(), std::size_t( 200 * ranks ) );
    single.advance( exec, 12 );
    slabs.advance( exec, 12 );
    EXPECT_GT( single.overflows(), 0u ) << "the case did not crowd the lattice";
    EXPECT_EQ( slabs.overflows(), single.overflows() );
    const auto expected = single.gather( exec );
    const auto got = slabs.gather( exec );
    for ( std::size_t i = 0; i < got.extent( 0 ); ++i )
        ASSERT_EQ( got( i ), expected( i ) ) << "site " << i;
    if ( ranks > 1 )
    {
        EXPECT_THROW( slabs.split_pass( exec, 0 ), morula::core::InputError );
        EXPECT_THROW( slabs.complete_step(), morula::core::InputError );
        // a cut whose slabs are thinner than the placement's reach is named before any copy
        Lattice<2, TEST_MEMSPACE> thin( LatticeShape( 6, 5, 2 * ranks, LatticeBoundary::reflecting ) );
        EXPECT_THROW( morula::parallel::owned_slab( exec, thin, rank, ranks ), morula::core::InputError );
    }
    else
    {
        EXPECT_NO_THROW( slabs.split_pass( exec, 0 ) );
        // On one rank, too, the driver steps a copy of the lattice it is given (the caller's stays its own).
        const auto before = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), whole.sites() );
        LatticeDiffusion<2, TEST_EXECSPACE> alone( exec, MPI_COMM_WORLD, shape, whole, rules );
        alone.advance( exec, 3 );
        const auto after = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), whole.sites() );
        const auto stepped = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), alone.lattice().sites() );
        bool moved = false;
        for ( std::size_t i = 0; i < after.extent( 0 ); ++i )
        {
            ASSERT_EQ( after( i ), before( i ) ) << "site " << i << " of the caller's lattice changed";
            moved = moved || stepped( i ) != before( i );
        }
        EXPECT_TRUE( moved ) << "the driver's lattice did not change";
    }
}

// Refused on every rank alike, before any communication (a rank that did not throw would hang).
TEST( TEST_CATEGORY, distributed_lattice_rejects_bad_slabs )
{
    TEST_EXECSPACE exec;
    const int ranks = world_size();
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.2 );
    auto construct = [&]( LatticeShape whole, int slab_planes ) {
        LatticeShape s = whole;
        s.nz = slab_planes;
        Lattice<2, TEST_MEMSPACE> slab( s );
        LatticeDiffusion<2, TEST_EXECSPACE> d( exec, MPI_COMM_WORLD, whole, slab, rules );
    };
    auto message_of = [&]( LatticeShape whole, int slab_planes ) {
        try
        {
            construct( whole, slab_planes );
        }
        catch ( const morula::core::InputError& e )
        {
            return std::string( e.what() );
        }
        return std::string();
    };
    // Slabs of 2 planes: thinner than the overflow placement's reach (one rank holds the whole lattice,
    // which may be that thin).
    LatticeShape thin( 8, 8, 2 * ranks, LatticeBoundary::reflecting );
    const auto m = message_of( thin, 2 );
    if ( ranks > 1 )
    {
        EXPECT_NE( m.find( "at least 3 planes" ), std::string::npos ) << m;
        EXPECT_NE( m.find( "use at most" ), std::string::npos ) << m;
    }
    else
        EXPECT_TRUE( m.empty() ) << m;
    // This rank's slab has the wrong number of planes.
    LatticeShape fine( 8, 8, 6 * ranks, LatticeBoundary::reflecting );
    const auto w = message_of( fine, 5 );
    EXPECT_NE( w.find( "its slab of the 8 x 8 x " ), std::string::npos ) << w;
    // Two ranks on a periodic z of 8 planes: a slab of 4 and its 6 ghost planes would wrap onto itself;
    // the same lattice with walls is fine.
    if ( ranks == 2 )
    {
        const auto p = message_of( LatticeShape( 8, 8, 8, LatticeBoundary::periodic ), 4 );
        EXPECT_NE( p.find( "wrap onto itself" ), std::string::npos ) << p;
        EXPECT_TRUE( message_of( LatticeShape( 8, 8, 8, LatticeBoundary::reflecting ), 4 ).empty() );
    }
}

// The driver shape (core/Driver.hpp).
static_assert( morula::core::is_driver_v<LatticeDiffusion<2, TEST_EXECSPACE>, TEST_EXECSPACE> );
static_assert( morula::core::is_driver_v<LatticeDiffusion<8, TEST_EXECSPACE>, TEST_EXECSPACE> );

// step() takes one step, timed or not; a timed step adds its phases and counts to times() (the counts
// those of its report), an untimed one adds nothing; advance() takes several and gives the same lattice.
TEST( TEST_CATEGORY, distributed_lattice_step_takes_one_step_and_times_it_only_when_asked )
{
    using Phase = morula::lattice::LatticeDiffusionPhase;
    TEST_EXECSPACE exec;
    const int ranks = world_size();
    const LatticeShape shape( 9, 7, 6 * ranks );
    DiffusionRules rules( 1 );
    rules.set_isotropic( 0, 0.4 );
    Lattice<2, TEST_MEMSPACE> whole( shape );
    place_particles( whole, { shape.sites() * 3 / 2 }, rules, 9, ParticleCodes::species ); // 75% full: overflows
    const auto mine = slab_of_rank( shape.nz, world_rank(), ranks );
    LatticeDiffusion<2, TEST_EXECSPACE> dist( exec, MPI_COMM_WORLD, shape, slab_of( whole, mine.begin, mine.end ),
                                                         rules );
    LatticeDiffusion<2, TEST_EXECSPACE> twin( exec, MPI_COMM_WORLD, shape, slab_of( whole, mine.begin, mine.end ),
                                                         rules );
    const auto& t = dist.times();
    ASSERT_EQ( t.num_phases(), 4 );
    EXPECT_EQ( t.phase_name( Phase::passes ), "passes" );
    EXPECT_EQ( t.phase_name( Phase::overflow ), "overflow" );
    EXPECT_EQ( t.count_name( Count::overflow_scans ), "overflow_scans" );

    auto report = dist.step( exec );
    EXPECT_EQ( report.step, 0 );
    EXPECT_EQ( dist.steps_done(), 1 );
    EXPECT_EQ( t.steps(), 0 );
    EXPECT_EQ( t.total(), 0.0 );
    for ( int c = 0; c < t.num_counts(); ++c )
        EXPECT_EQ( t.count( c ), 0 ) << t.count_name( c );

    report = dist.step( exec, true );
    EXPECT_EQ( report.step, 1 );
    EXPECT_EQ( dist.steps_done(), 2 );
    EXPECT_EQ( t.steps(), 1 );
    EXPECT_GT( t.seconds( Phase::passes ), 0.0 );
    EXPECT_GT( t.seconds( Phase::overflow ), 0.0 );
    EXPECT_EQ( t.count( Count::halo_bytes ), report.halo_bytes );
    EXPECT_EQ( t.count( Count::overflow_events ), report.overflow_events );
    EXPECT_EQ( t.count( Count::overflow_entries ), report.overflow_entries );
    EXPECT_EQ( t.count( Count::overflow_scans ), report.overflow_scans );
    if ( ranks > 1 )
    {
        EXPECT_GT( t.seconds( Phase::halo ), 0.0 );
        EXPECT_GT( report.halo_bytes, 0 );
        EXPECT_GT( report.overflow_entries, 0 );
    }
    const double timed = t.total();
    const long long bytes = t.count( Count::halo_bytes );

    report = dist.step( exec );
    EXPECT_EQ( report.step, 2 );
    EXPECT_EQ( t.steps(), 1 );
    EXPECT_EQ( t.total(), timed );
    EXPECT_EQ( t.count( Count::halo_bytes ), bytes );

    twin.advance( exec, 3 );
    EXPECT_EQ( twin.steps_done(), 3 );
    const auto expected = twin.gather( exec );
    const auto got = dist.gather( exec );
    for ( std::size_t i = 0; i < got.extent( 0 ); ++i )
        ASSERT_EQ( got( i ), expected( i ) ) << "site " << i;

    dist.reset_times();
    EXPECT_EQ( t.steps(), 0 );
    EXPECT_EQ( t.count( Count::halo_bytes ), 0 );
}

} // namespace morula_test_distributed_lattice
