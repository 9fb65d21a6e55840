// LatticeDiffusion's checkpoint and restart: a run of 2N steps and a run of N steps, a checkpoint file,
// a fresh driver (another particle placement) restarted from it and N more steps give the same state bit
// for bit (every checkpoint entry, the lattice, the overflow count, the tracer displacements), at 60% of
// the slots (the overflow list busy on both sides of the restart), with obstacles and walls, for 2, 4
// and 8 slots, split and fused passes and every kernel family, a restart with another family included.
// A checkpoint of another model or of other parameters is refused with a message naming the file, the
// parameter and both values.
#include "LatticeTestUtils.hpp"

#include <morula/Config.hpp>
#include <morula/core/Driver.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/lattice/DisplacementIncrements.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace morula_test_lattice_checkpoint
{
using namespace morula::lattice;
using morula::io::CheckpointReader;
using morula::io::CheckpointWriter;
using morula_test_lattice::to_host;

std::string file_for( const std::string& name )
{
    return "morula_lattice_checkpoint_" + name + "_" + TEST_EXECSPACE::name() + ".h5";
}

// Expects `f` to throw core::InputError with a message containing every part.
template <class F>
void expect_refused( F&& f, const std::vector<std::string>& parts )
{
    try
    {
        f();
        ADD_FAILURE() << "no exception; expected one naming: " << parts.front();
    }
    catch ( const morula::core::InputError& e )
    {
        for ( const auto& p : parts )
            EXPECT_NE( std::string( e.what() ).find( p ), std::string::npos ) << e.what() << "\n  lacks: " << p;
    }
}

// How the codes of a case are chosen: one id per particle (2 slots), or marked tracers in a crowd.
enum class Codes
{
    tracers,
    marked
};

struct Case
{
    PassScheme scheme = PassScheme::split;
    PassKernels kernels = PassKernels::automatic;
    PassKernels resume_kernels = PassKernels::automatic; // the restarted driver's
    LatticeBoundary y_boundary = LatticeBoundary::reflecting;
    int steps = 7; // N: the checkpoint after N of 2N steps
};

std::string describe( const Case& c, int slots )
{
    return morula::core::detail::concat( slots, " slots, ", to_string( c.scheme ), ", ", to_string( c.kernels ),
                                         " kernels resumed with ", to_string( c.resume_kernels ), ", y ",
                                         to_string( c.y_boundary ) );
}

// A crowded lattice with obstacles (the same for every placement seed) and the particles of
// `placement_seed`: 60% of the free slots, three species, ids for every particle or marked tracers.
template <int Slots>
struct Crowd
{
    LatticeShape shape;
    DiffusionRules rules{ 3 };
    Lattice<Slots, TEST_MEMSPACE> lattice;
    CodeMap codes;

    Crowd( LatticeBoundary y_boundary, std::uint64_t placement_seed, double fill = 0.6 )
        : shape( 12, 10, 9 )
    {
        shape.boundary = { LatticeBoundary::periodic, y_boundary, LatticeBoundary::periodic };
        rules.set_isotropic( 0, 0.4 );
        rules.set_isotropic( 1, 0.15 );
        rules.set( 2, 0, { 0.1, 0.5, 0.4 } ); // drifts along +x and +z: crosses the periodic faces
        rules.set( 2, 1, { 0.3, 0.4, 0.3 } );
        rules.set( 2, 2, { 0.05, 0.45, 0.5 } );
        rules.block( 1 );
        lattice = Lattice<Slots, TEST_MEMSPACE>( shape );
        const auto obstacles = place_sphere_obstacles( TEST_EXECSPACE(), lattice, 1.2, 0.08, 1, 17 );
        const std::size_t n = std::size_t( fill * double( ( lattice.size() - obstacles.sites ) * Slots ) ) / 3;
        const std::vector<std::size_t> count( 3, n );
        if ( Slots == 2 )
            codes = CodeMap::tracers( place_particles( lattice, count, rules, placement_seed, ParticleCodes::tracers ) );
        else
        {
            const std::size_t per_species = Slots == 4 ? 12 : 1; // 8 slots: codes 1..7, 3 species + 3 tracers
            codes = place_particles( lattice, count, std::vector<std::size_t>( 3, per_species ), rules, placement_seed );
        }
    }
};

template <int Slots>
DiffusionOptions options_of( const Case& c, PassKernels kernels )
{
    DiffusionOptions opt;
    opt.scheme = c.scheme;
    opt.kernels = kernels;
    opt.seed = 41;
    return opt;
}

template <int Slots>
std::vector<int> host_displacements( const LatticeDiffusion<Slots, TEST_EXECSPACE>& m )
{
    std::vector<int> d;
    morula::core::copy_to_host( m.displacements(), m.displacements().extent( 0 ), d );
    return d;
}

#if MORULA_HAVE_HDF5

template <int Slots>
void check_resume( const Case& c )
{
    SCOPED_TRACE( describe( c, Slots ) );
    using Model = LatticeDiffusion<Slots, TEST_EXECSPACE>;
    static_assert( morula::core::is_driver_v<Model, TEST_EXECSPACE> );
    static_assert( morula::io::is_checkpointable_v<Model> );
    const TEST_EXECSPACE exec;
    const std::string path = file_for( std::to_string( Slots ) + "_" + to_string( c.scheme ) + "_" +
                                       to_string( c.kernels ) + "_" + to_string( c.resume_kernels ) );
    const Crowd<Slots> start( c.y_boundary, 5 );
    auto copy = [&]( const Crowd<Slots>& from ) {
        Lattice<Slots, TEST_MEMSPACE> l( from.shape );
        Kokkos::deep_copy( l.sites(), from.lattice.sites() );
        return l;
    };

    Model full( exec, copy( start ), start.rules, start.codes, options_of<Slots>( c, c.kernels ) );
    full.advance( exec, 2 * c.steps );

    Model first( exec, copy( start ), start.rules, start.codes, options_of<Slots>( c, c.kernels ) );
    first.advance( exec, c.steps );
    morula::io::write_checkpoint( first, path );

    // Another placement of the same particles on the same obstacles: the restart must replace it.
    const Crowd<Slots> other( c.y_boundary, 6 );
    ASSERT_EQ( other.codes.species_of_tracer, start.codes.species_of_tracer );
    Model resumed( exec, copy( other ), other.rules, other.codes, options_of<Slots>( c, c.resume_kernels ) );
    ASSERT_NE( to_host( resumed.lattice() ), to_host( first.lattice() ) );
    morula::io::restart_from_checkpoint( resumed, path );
    EXPECT_EQ( resumed.steps_done(), c.steps );
    EXPECT_EQ( to_host( resumed.lattice() ), to_host( first.lattice() ) );
    EXPECT_EQ( resumed.overflows(), first.overflows() );
    EXPECT_EQ( host_displacements( resumed ), host_displacements( first ) );
    resumed.advance( exec, c.steps );

    EXPECT_EQ( resumed.steps_done(), full.steps_done() );
    EXPECT_EQ( to_host( resumed.lattice() ), to_host( full.lattice() ) );
    EXPECT_EQ( resumed.overflows(), full.overflows() );
    EXPECT_EQ( host_displacements( resumed ), host_displacements( full ) );
    EXPECT_EQ( resumed.code_counts( exec ), full.code_counts( exec ) );
    EXPECT_EQ( resumed.msd( 2 ).per_axis, full.msd( 2 ).per_axis );
    CheckpointWriter a( Model::checkpoint_model ), b( Model::checkpoint_model );
    full.checkpoint( a );
    resumed.checkpoint( b );
    EXPECT_EQ( morula::io::first_difference( a.entries(), b.entries() ), "" );
    // the overflow list was busy before and after the checkpoint
    EXPECT_GT( first.overflows(), 0u );
    EXPECT_GT( full.overflows(), first.overflows() );
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, lattice_checkpoint_resumes_bit_for_bit_two_slots )
{
    check_resume<2>( { PassScheme::split, PassKernels::compacted, PassKernels::compacted } );
    check_resume<2>( { PassScheme::split, PassKernels::tiled, PassKernels::tiled, LatticeBoundary::periodic } );
    check_resume<2>( { PassScheme::split, PassKernels::gather, PassKernels::gather } );
    check_resume<2>( { PassScheme::fused, PassKernels::tiled, PassKernels::tiled } );
    check_resume<2>( { PassScheme::fused, PassKernels::gather, PassKernels::gather, LatticeBoundary::periodic } );
    // another kernel family after the restart: the same run
    check_resume<2>( { PassScheme::split, PassKernels::compacted, PassKernels::gather } );
    check_resume<2>( { PassScheme::fused, PassKernels::gather, PassKernels::tiled } );
}

TEST( TEST_CATEGORY, lattice_checkpoint_resumes_bit_for_bit_four_slots )
{
    check_resume<4>( { PassScheme::split, PassKernels::compacted, PassKernels::compacted } );
    check_resume<4>( { PassScheme::split, PassKernels::tiled, PassKernels::compacted, LatticeBoundary::periodic } );
    check_resume<4>( { PassScheme::split, PassKernels::gather, PassKernels::tiled } );
    check_resume<4>( { PassScheme::fused, PassKernels::tiled, PassKernels::tiled, LatticeBoundary::reflecting, 4 } );
    check_resume<4>( { PassScheme::fused, PassKernels::gather, PassKernels::gather } );
}

TEST( TEST_CATEGORY, lattice_checkpoint_resumes_bit_for_bit_eight_slots )
{
    check_resume<8>( { PassScheme::split, PassKernels::automatic, PassKernels::automatic } );
    check_resume<8>( { PassScheme::split, PassKernels::compacted, PassKernels::tiled } );
    check_resume<8>( { PassScheme::split, PassKernels::gather, PassKernels::gather, LatticeBoundary::periodic } );
    check_resume<8>( { PassScheme::fused, PassKernels::tiled, PassKernels::gather } );
}

// Several restarts in a row (a checkpoint every 3 steps, each resumed by a fresh driver) end where one
// uninterrupted run ends; a checkpoint written twice from the same state is the same file.
TEST( TEST_CATEGORY, lattice_checkpoint_chain_of_restarts )
{
    using Model = LatticeDiffusion<4, TEST_EXECSPACE>;
    const TEST_EXECSPACE exec;
    const Case c{ PassScheme::split, PassKernels::compacted, PassKernels::compacted };
    const Crowd<4> start( LatticeBoundary::periodic, 9 );
    Model full( exec, start.lattice, start.rules, start.codes, options_of<4>( c, c.kernels ) );
    Lattice<4, TEST_MEMSPACE> copy( start.shape );
    Kokkos::deep_copy( copy.sites(), start.lattice.sites() );
    const std::string path = file_for( "chain" );
    // every piece made from the initial state: the restart replaces it
    Model piece( exec, copy, start.rules, start.codes, options_of<4>( c, c.kernels ) );
    for ( int k = 0; k < 5; ++k )
    {
        if ( k > 0 )
        {
            Model next( exec, copy, start.rules, start.codes, options_of<4>( c, c.kernels ) );
            morula::io::restart_from_checkpoint( next, path );
            next.advance( exec, 3 );
            morula::io::write_checkpoint( next, path );
        }
        else
        {
            piece.advance( exec, 3 );
            morula::io::write_checkpoint( piece, path );
        }
    }
    full.advance( exec, 15 );
    const CheckpointReader last( path, Model::checkpoint_model );
    CheckpointWriter expected( Model::checkpoint_model );
    full.checkpoint( expected );
    EXPECT_EQ( morula::io::first_difference( last.entries(), expected.entries() ), "" );
    const std::string again = file_for( "chain_again" );
    morula::io::write_checkpoint( full, again );
    EXPECT_EQ( morula::io::first_difference( CheckpointReader( again, Model::checkpoint_model ).entries(),
                                             last.entries() ),
               "" );
    std::remove( path.c_str() );
    std::remove( again.c_str() );
}

// A DisplacementIncrements sampler checkpointed next to its lattice (windows of 3 steps, the checkpoint
// after 2 of 4 windows) gives the uninterrupted run's statistics bit for bit; one of another species is
// refused.
TEST( TEST_CATEGORY, lattice_checkpoint_resumes_displacement_increments )
{
    using Model = LatticeDiffusion<4, TEST_EXECSPACE>;
    const TEST_EXECSPACE exec;
    const Case c{ PassScheme::fused, PassKernels::tiled, PassKernels::tiled };
    const Crowd<4> start( LatticeBoundary::periodic, 5 );
    auto copy = [&]( const Crowd<4>& from ) {
        Lattice<4, TEST_MEMSPACE> l( from.shape );
        Kokkos::deep_copy( l.sites(), from.lattice.sites() );
        return l;
    };
    const std::string path = file_for( "increments" );
    Model full( exec, copy( start ), start.rules, start.codes, options_of<4>( c, c.kernels ) );
    DisplacementIncrements full_inc( start.codes );
    full_inc.sample( full.displacements() );
    for ( int w = 0; w < 4; ++w )
    {
        full.advance( exec, 3 );
        full_inc.sample( full.displacements() );
    }
    {
        Model first( exec, copy( start ), start.rules, start.codes, options_of<4>( c, c.kernels ) );
        DisplacementIncrements inc( start.codes );
        inc.sample( first.displacements() );
        for ( int w = 0; w < 2; ++w )
        {
            first.advance( exec, 3 );
            inc.sample( first.displacements() );
        }
        CheckpointWriter out( Model::checkpoint_model );
        first.checkpoint( out );
        inc.checkpoint( out, "increments/" );
        out.write( path );
    }
    const Crowd<4> other( LatticeBoundary::periodic, 6 );
    Model resumed( exec, copy( other ), other.rules, other.codes, options_of<4>( c, c.kernels ) );
    DisplacementIncrements inc( other.codes );
    const CheckpointReader in( path, Model::checkpoint_model );
    resumed.restart( in );
    inc.restart( in, "increments/" );
    for ( int w = 0; w < 2; ++w )
    {
        resumed.advance( exec, 3 );
        inc.sample( resumed.displacements() );
    }
    EXPECT_EQ( inc.samples(), full_inc.samples() );
    for ( int a = 0; a < 3; ++a )
    {
        EXPECT_EQ( inc.axis( a ).mean, full_inc.axis( a ).mean );
        EXPECT_EQ( inc.axis( a ).se_mean, full_inc.axis( a ).se_mean );
        EXPECT_EQ( inc.axis( a ).msd, full_inc.axis( a ).msd );
        EXPECT_EQ( inc.axis( a ).se_msd, full_inc.axis( a ).se_msd );
    }
    DisplacementIncrements species_one( other.codes, 1 );
    expect_refused( [&] { species_one.restart( in, "increments/" ); },
                    { path, "'increments/species' = -1: this sampler follows species 1" } );
    std::remove( path.c_str() );
}

// Checkpoints of another model, of other parameters or with entries of another type are refused, and
// the driver keeps its state.
TEST( TEST_CATEGORY, lattice_checkpoint_refuses_other_runs )
{
    using Model2 = LatticeDiffusion<2, TEST_EXECSPACE>;
    using Model4 = LatticeDiffusion<4, TEST_EXECSPACE>;
    const TEST_EXECSPACE exec;
    const Case c{ PassScheme::split, PassKernels::gather, PassKernels::gather };
    const std::string path = file_for( "refuse" );
    const Crowd<2> start( LatticeBoundary::reflecting, 5 );
    auto fresh = [&]( const Crowd<2>& crowd, DiffusionOptions opt ) {
        Lattice<2, TEST_MEMSPACE> l( crowd.shape );
        Kokkos::deep_copy( l.sites(), crowd.lattice.sites() );
        return Model2( exec, l, crowd.rules, crowd.codes, opt );
    };
    const auto opt = options_of<2>( c, c.kernels );
    {
        auto m = fresh( start, opt );
        m.advance( exec, 2 );
        morula::io::write_checkpoint( m, path );
    }

    // another model
    const std::string other_model = file_for( "refuse_epidermis" );
    {
        CheckpointWriter w( "epidermis" );
        w.put_scalar( "step", 3ll );
        w.write( other_model );
    }
    {
        auto m = fresh( start, opt );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, other_model ); },
                        { other_model, "epidermis", "lattice" } );
    }
    // another seed, scheme, capacity, size, boundary, probabilities
    {
        auto o = opt;
        o.seed = 42;
        auto m = fresh( start, o );
        const auto before = to_host( m.lattice() );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, path ); }, { path, "seed 41", "has 42" } );
        EXPECT_EQ( to_host( m.lattice() ), before );
        EXPECT_EQ( m.steps_done(), 0 );
    }
    {
        auto o = opt;
        o.scheme = PassScheme::fused;
        auto m = fresh( start, o );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, path ); },
                        { path, "pass scheme split", "has fused" } );
    }
    {
        Crowd<4> four( LatticeBoundary::reflecting, 5 );
        Model4 m( exec, four.lattice, four.rules, four.codes, options_of<4>( c, c.kernels ) );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, path ); },
                        { path, "capacity (particles per site) 2", "has 4" } );
    }
    {
        Crowd<2> walls( LatticeBoundary::periodic, 5 );
        auto m = fresh( walls, opt );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, path ); },
                        { path, "boundaries (x y z) periodic reflecting periodic", "has periodic periodic periodic" } );
    }
    {
        Crowd<2> slower( LatticeBoundary::reflecting, 5 );
        slower.rules.set_isotropic( 1, 0.125 );
        auto m = fresh( slower, opt );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, path ); },
                        { path, "move probabilities (p_-1, p_0, p_+1) of species 1 on site type 0 along x",
                          "(0.15, 0.7, 0.15)", "(0.125, 0.75, 0.125)" } );
    }
    {
        // fewer particles: the tracers differ
        Crowd<2> fewer( LatticeBoundary::reflecting, 5, 0.5 );
        auto m = fresh( fewer, opt );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, path ); }, { path, "number of tracers" } );
    }
    {
        // other obstacles (site types), the same particles per code
        Crowd<2> moved( LatticeBoundary::reflecting, 5 );
        Lattice<2, TEST_MEMSPACE> l( moved.shape );
        place_sphere_obstacles( exec, l, 1.2, 0.08, 1, 18 );
        place_particles( l, std::vector<std::size_t>( 3, moved.codes.species_of_tracer.size() / 3 ), moved.rules, 5,
                         ParticleCodes::tracers );
        Model2 m( exec, l, moved.rules, moved.codes, opt );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, path ); },
                        { path, "site types (obstacles) differ from this run's" } );
    }
    {
        // the same obstacles with another type number
        Crowd<2> blocked2( LatticeBoundary::reflecting, 5 );
        blocked2.rules.block( 2 );
        auto m = fresh( blocked2, opt );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, path ); },
                        { path, "blocked site types (bit mask) 2", "has 6" } );
    }
    {
        // an entry of another type (the lattice keeps exact types: a float or int64 where int32 belongs)
        const std::string typed = file_for( "refuse_type" );
        CheckpointWriter w( Model2::checkpoint_model );
        w.put_scalar( "lattice/slots", std::int64_t( 2 ) );
        w.write( typed );
        auto m = fresh( start, opt );
        expect_refused( [&] { morula::io::restart_from_checkpoint( m, typed ); },
                        { typed, "lattice/slots", "int64", "int32" } );
        std::remove( typed.c_str() );
    }
    // and the right run resumes
    {
        auto m = fresh( start, opt );
        morula::io::restart_from_checkpoint( m, path );
        EXPECT_EQ( m.steps_done(), 2 );
    }
    std::remove( path.c_str() );
    std::remove( other_model.c_str() );
}

#endif

// Without files: the entries of two drivers in the same state are the same, whatever their kernels.
TEST( TEST_CATEGORY, lattice_checkpoint_entries_ignore_the_kernels )
{
    const TEST_EXECSPACE exec;
    const Crowd<2> start( LatticeBoundary::reflecting, 5 );
    const Case c{};
    Lattice<2, TEST_MEMSPACE> copy( start.shape );
    Kokkos::deep_copy( copy.sites(), start.lattice.sites() );
    LatticeDiffusion<2, TEST_EXECSPACE> a( exec, start.lattice, start.rules, start.codes,
                                           options_of<2>( c, PassKernels::compacted ) );
    LatticeDiffusion<2, TEST_EXECSPACE> b( exec, copy, start.rules, start.codes, options_of<2>( c, PassKernels::gather ) );
    a.advance( exec, 3 );
    b.advance( exec, 3 );
    CheckpointWriter wa( "lattice" ), wb( "lattice" );
    a.checkpoint( wa );
    b.checkpoint( wb );
    EXPECT_EQ( morula::io::first_difference( wa.entries(), wb.entries() ), "" );
    EXPECT_EQ( wa.entries().count( "lattice/sites" ), 1u );
    EXPECT_EQ( wa.entries().count( "tracers/displacement" ), 1u );
}

} // namespace morula_test_lattice_checkpoint
