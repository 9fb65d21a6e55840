// LatticeDiffusion's checkpoint on slabs and restart: one file in the single-rank layout, written
// from rank 0, that resumes at any rank count. A checkpoint after N steps on 2 ranks (1 when the test
// runs on one), restarted on all the test's ranks (1, 2 or 4), on one rank (MPI_COMM_SELF) and by the
// single-rank LatticeDiffusion, gives after N more steps the lattice, overflow count, displacements and
// checkpoint entries of an uninterrupted single-rank run of 2N steps, bit for bit; so does a single-rank
// checkpoint resumed on all ranks. Crowded (overflows on both sides of the restart), obstacles,
// periodic and reflecting z, split and fused passes. Other parameters are refused on every rank; a
// checkpoint that cannot be written fails on every rank.
#include <morula/Config.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/lattice/Initializers.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>
#include <morula/parallel/LatticeSlabs.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace morula_test_distributed_lattice_checkpoint
{
using namespace morula::lattice;
using morula::io::CheckpointWriter;
using morula::parallel::slab_of_rank;

int rank_in( MPI_Comm comm )
{
    int r = 0;
    MPI_Comm_rank( comm, &r );
    return r;
}
int size_of( MPI_Comm comm )
{
    int s = 1;
    MPI_Comm_size( comm, &s );
    return s;
}

// A file name of this test run: the ctest runs of one executable (rank counts, transports) may overlap.
std::string file_for( const std::string& name )
{
    const char* transport = std::getenv( "MORULA_TRANSPORT" );
    return morula::core::detail::concat( "morula_distributed_lattice_checkpoint_", name, "_np", size_of( MPI_COMM_WORLD ),
                                         "_", transport ? transport : "auto", "_", TEST_EXECSPACE::name(), ".h5" );
}

struct Case
{
    PassScheme scheme = PassScheme::split;
    LatticeBoundary z_boundary = LatticeBoundary::periodic;
    PassKernels kernels = PassKernels::automatic;
    int steps = 6; // N
};

std::string describe( const Case& c, int slots )
{
    return morula::core::detail::concat( slots, " slots, ", to_string( c.scheme ), ", z ", to_string( c.z_boundary ),
                                         ", ", to_string( c.kernels ), " kernels, ", size_of( MPI_COMM_WORLD ), " ranks" );
}

// The same crowded lattice on every rank: obstacles fixed, particles (60% of the free slots, three
// species, one drifting across the slab faces) placed with `placement_seed`.
template <int Slots>
struct Crowd
{
    LatticeShape shape;
    DiffusionRules rules{ 3 };
    Lattice<Slots, TEST_MEMSPACE> lattice;
    CodeMap codes;

    Crowd( LatticeBoundary z_boundary, std::uint64_t placement_seed )
        : shape( 12, 7, 24 )
    {
        shape.boundary = { LatticeBoundary::periodic, LatticeBoundary::reflecting, z_boundary };
        rules.set_isotropic( 0, 0.45 );
        rules.set_isotropic( 1, 0.2 );
        rules.set( 2, 0, { 0.1, 0.5, 0.4 } );
        rules.set( 2, 1, { 0.3, 0.4, 0.3 } );
        rules.set( 2, 2, { 0.05, 0.45, 0.5 } );
        rules.block( 1 );
        lattice = Lattice<Slots, TEST_MEMSPACE>( shape );
        const auto obstacles = place_sphere_obstacles( TEST_EXECSPACE(), lattice, 1.2, 0.08, 1, 17 );
        const std::size_t n = std::size_t( 0.6 * double( ( lattice.size() - obstacles.sites ) * Slots ) ) / 3;
        const std::vector<std::size_t> count( 3, n );
        if ( Slots == 2 )
            codes = CodeMap::tracers( place_particles( lattice, count, rules, placement_seed, ParticleCodes::tracers ) );
        else
            codes = place_particles( lattice, count, std::vector<std::size_t>( 3, Slots == 4 ? 10 : 1 ), rules,
                                     placement_seed );
    }

    // A copy of the whole lattice, or of planes [begin, end) of it.
    Lattice<Slots, TEST_MEMSPACE> planes( int begin, int end ) const
    {
        LatticeShape s = shape;
        s.nz = end - begin;
        Lattice<Slots, TEST_MEMSPACE> l( s, "test_slab" );
        const std::size_t plane = std::size_t( s.nx ) * std::size_t( s.ny );
        Kokkos::deep_copy( l.sites(), Kokkos::subview( lattice.sites(), Kokkos::make_pair( plane * begin, plane * end ) ) );
        return l;
    }
    Lattice<Slots, TEST_MEMSPACE> whole() const { return planes( 0, shape.nz ); }
};

DiffusionOptions options_of( const Case& c, std::uint64_t seed = 29 )
{
    DiffusionOptions opt;
    opt.scheme = c.scheme;
    opt.kernels = c.kernels;
    opt.seed = seed;
    return opt;
}

template <int Slots>
using Dist = LatticeDiffusion<Slots, TEST_EXECSPACE>;
static_assert( morula::io::is_checkpointable_v<Dist<2>> );
static_assert( morula::io::is_checkpointable_v<Dist<8>> );

// This rank's driver on `comm` over `crowd`'s lattice.
template <int Slots>
Dist<Slots> distributed( MPI_Comm comm, const Crowd<Slots>& crowd, const DiffusionOptions& opt )
{
    const auto mine = slab_of_rank( crowd.shape.nz, rank_in( comm ), size_of( comm ) );
    return Dist<Slots>( TEST_EXECSPACE(), comm, crowd.shape, crowd.planes( mine.begin, mine.end ), crowd.rules,
                        crowd.codes, opt );
}

// What an uninterrupted single-rank run reached: compared with every resumed run.
template <int Slots>
struct Reference
{
    std::vector<site_word> sites;
    unsigned long long overflows = 0, overflows_at_checkpoint = 0;
    std::vector<int> displacement;
    morula::io::CheckpointEntries entries;
};

template <int Slots>
std::vector<int> host_displacements( const Kokkos::View<int* [3], Kokkos::HostSpace>& d )
{
    std::vector<int> v;
    morula::core::copy_to_host( d, d.extent( 0 ), v );
    return v;
}

// A resumed distributed run against the reference, on every rank of `comm`.
template <int Slots>
void expect_same_as_reference( const Dist<Slots>& d, const Reference<Slots>& ref, const char* what )
{
    SCOPED_TRACE( what );
    const TEST_EXECSPACE exec;
    const auto got = d.gather( exec );
    std::size_t differ = 0;
    for ( std::size_t i = 0; i < got.extent( 0 ); ++i )
        differ += got( i ) != ref.sites[i];
    EXPECT_EQ( differ, 0u ) << "sites differ from the uninterrupted run";
    EXPECT_EQ( d.overflows(), ref.overflows );
    if ( !ref.displacement.empty() )
        EXPECT_EQ( host_displacements<Slots>( d.gather_displacements() ), ref.displacement );
    CheckpointWriter out( Dist<Slots>::checkpoint_model );
    d.checkpoint( out );
    if ( rank_in( d.comm() ) == 0 )
        EXPECT_EQ( morula::io::first_difference( out.entries(), ref.entries ), "" );
    else
        EXPECT_TRUE( out.entries().empty() );
}

#if MORULA_HAVE_HDF5

template <int Slots>
void check_restarts( const Case& c )
{
    SCOPED_TRACE( describe( c, Slots ) );
    using Single = LatticeDiffusion<Slots, TEST_EXECSPACE>;
    const TEST_EXECSPACE exec;
    const int world = size_of( MPI_COMM_WORLD ), me = rank_in( MPI_COMM_WORLD );
    const Crowd<Slots> start( c.z_boundary, 5 ), other( c.z_boundary, 6 );
    const auto opt = options_of( c );
    const std::string path = file_for( morula::core::detail::concat( Slots, "_", to_string( c.scheme ), "_",
                                                                     to_string( c.z_boundary ) ) );
    const std::string single_path = file_for( morula::core::detail::concat( Slots, "_", to_string( c.scheme ), "_",
                                                                            to_string( c.z_boundary ), "_single" ) );

    // The uninterrupted single-rank run, on every rank.
    Reference<Slots> ref;
    {
        Single single( exec, start.whole(), start.rules, start.codes, opt );
        single.advance( exec, c.steps );
        ref.overflows_at_checkpoint = single.overflows();
        if ( me == 0 )
            morula::io::write_checkpoint( single, single_path );
        single.advance( exec, c.steps );
        morula::core::copy_to_host( single.lattice().sites(), start.shape.sites(), ref.sites );
        ref.overflows = single.overflows();
        if ( single.tracking() )
            morula::core::copy_to_host( single.displacements(), single.displacements().extent( 0 ), ref.displacement );
        CheckpointWriter out( Single::checkpoint_model );
        single.checkpoint( out );
        ref.entries = out.entries();
    }
    EXPECT_GT( ref.overflows_at_checkpoint, 0u );
    EXPECT_GT( ref.overflows, ref.overflows_at_checkpoint );

    // The uninterrupted distributed run writes the single-rank checkpoint.
    {
        auto d = distributed( MPI_COMM_WORLD, start, opt );
        d.advance( exec, 2 * c.steps );
        expect_same_as_reference( d, ref, "uninterrupted on all ranks" );
    }

    // N steps on 2 ranks (or 1), checkpointed from their rank 0.
    const int writers = world >= 2 ? 2 : 1;
    MPI_Comm first = MPI_COMM_NULL;
    MPI_Comm_split( MPI_COMM_WORLD, me < writers ? 0 : MPI_UNDEFINED, me, &first );
    if ( first != MPI_COMM_NULL )
    {
        auto d = distributed( first, start, opt );
        d.advance( exec, c.steps );
        d.write_checkpoint( path );
        MPI_Comm_free( &first );
    }
    MPI_Barrier( MPI_COMM_WORLD );

    // Resumed on every rank, on one rank, and by the single-rank driver, each from another placement.
    for ( const std::string& from : { path, single_path } )
    {
        const bool distributed_file = from == path;
        {
            auto d = distributed( MPI_COMM_WORLD, other, opt );
            morula::io::restart_from_checkpoint( d, from );
            EXPECT_EQ( d.steps_done(), c.steps );
            EXPECT_EQ( d.overflows(), ref.overflows_at_checkpoint );
            d.advance( exec, c.steps );
            expect_same_as_reference( d, ref, distributed_file ? "checkpoint of 2 ranks resumed on all ranks"
                                                                : "single-rank checkpoint resumed on all ranks" );
        }
        {
            auto d = distributed( MPI_COMM_SELF, other, opt );
            morula::io::restart_from_checkpoint( d, from );
            d.advance( exec, c.steps );
            expect_same_as_reference( d, ref, distributed_file ? "checkpoint of 2 ranks resumed on one rank"
                                                                : "single-rank checkpoint resumed on one rank" );
        }
        {
            Single s( exec, other.whole(), other.rules, other.codes, opt );
            morula::io::restart_from_checkpoint( s, from );
            s.advance( exec, c.steps );
            std::vector<site_word> sites;
            morula::core::copy_to_host( s.lattice().sites(), start.shape.sites(), sites );
            EXPECT_EQ( sites, ref.sites ) << "resumed by the single-rank driver";
            EXPECT_EQ( s.overflows(), ref.overflows );
            CheckpointWriter out( Single::checkpoint_model );
            s.checkpoint( out );
            EXPECT_EQ( morula::io::first_difference( out.entries(), ref.entries ), "" );
        }
    }
    MPI_Barrier( MPI_COMM_WORLD );
    if ( me == 0 )
    {
        std::remove( path.c_str() );
        std::remove( single_path.c_str() );
    }
}

TEST( TEST_CATEGORY, distributed_lattice_checkpoint_resumes_at_any_rank_count )
{
    for ( auto b : { LatticeBoundary::periodic, LatticeBoundary::reflecting } )
    {
        check_restarts<2>( { PassScheme::split, b } );
        check_restarts<4>( { PassScheme::fused, b } );
    }
    check_restarts<2>( { PassScheme::fused, LatticeBoundary::periodic, PassKernels::gather } );
    check_restarts<8>( { PassScheme::split, LatticeBoundary::periodic, PassKernels::compacted } );
}

// Every rank refuses a checkpoint of other parameters with the same message, and keeps its state; a
// checkpoint that cannot be written fails on every rank.
TEST( TEST_CATEGORY, distributed_lattice_checkpoint_refuses_on_every_rank )
{
    const TEST_EXECSPACE exec;
    const Case c;
    const Crowd<2> start( c.z_boundary, 5 );
    const std::string path = file_for( "refuse" );
    {
        auto d = distributed( MPI_COMM_WORLD, start, options_of( c ) );
        d.advance( exec, 2 );
        d.write_checkpoint( path );
    }
    auto refused = [&]( const DiffusionOptions& opt ) {
        auto d = distributed( MPI_COMM_WORLD, start, opt );
        std::string message;
        try
        {
            morula::io::restart_from_checkpoint( d, path );
        }
        catch ( const morula::core::InputError& e )
        {
            message = e.what();
        }
        EXPECT_EQ( d.steps_done(), message.empty() ? 2 : 0 );
        return message;
    };
    const auto seed = refused( options_of( c, 30 ) );
    EXPECT_NE( seed.find( path ), std::string::npos ) << seed;
    EXPECT_NE( seed.find( "seed 29, this run has 30" ), std::string::npos ) << seed;
    auto fused = options_of( c );
    fused.scheme = PassScheme::fused;
    const auto scheme = refused( fused );
    EXPECT_NE( scheme.find( "pass scheme split, this run has fused" ), std::string::npos ) << scheme;

    // another kernel family is the same run
    auto gather = options_of( c );
    gather.kernels = PassKernels::gather;
    EXPECT_EQ( refused( gather ), "" );

    auto d = distributed( MPI_COMM_WORLD, start, options_of( c ) );
    const std::string nowhere = "no_such_folder_for_checkpoints/lattice.h5";
    try
    {
        d.write_checkpoint( nowhere );
        ADD_FAILURE() << "no exception";
    }
    catch ( const morula::core::IoError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( nowhere ), std::string::npos ) << e.what();
    }
    MPI_Barrier( MPI_COMM_WORLD );
    if ( rank_in( MPI_COMM_WORLD ) == 0 )
        std::remove( path.c_str() );
}

#endif

} // namespace morula_test_distributed_lattice_checkpoint
