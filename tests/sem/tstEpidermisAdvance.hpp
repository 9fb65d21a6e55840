#include "SemTestUtils.hpp"

#include <morula/core/Box.hpp>
#include <morula/sem/Epidermis.hpp>
#include <morula/sem/GeneCoupling.hpp>
#include <morula/sem/Initializers.hpp>
#include <morula/sem/SemMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace morula_test_sem_advance
{
namespace sem = morula::sem;
using morula::sem::HostTissue;

struct Case
{
    sem::EpidermisModel model = sem::EpidermisModel::full;
    bool periodic = true;
    double skin_factor = 1.0;
    sem::NeighborCoupling coupling = sem::NeighborCoupling::average;
    sem::TimeScheme integrator = sem::TimeScheme::runge_kutta2;
};

template <class Scalar>
sem::Epidermis<Scalar, TEST_MEMSPACE> make_model( const Case& c )
{
    sem::MonolayerSpec spec;
    spec.cells = 12;
    spec.seed = 3;
    spec.periodic = c.periodic;
    sem::EpidermisParameters p;
    p.model = c.model;
    p.growth.interval = 25;          // several growth events inside one advance()
    p.growth.division_elements = 23; // and divisions among them
    p.mechanics.skin_factor = c.skin_factor;
    p.mechanics.integrator = c.integrator;
    p.genes.coupling = c.coupling;
    const auto layer = sem::monolayer<Scalar>( spec, p.mechanics );
    return sem::Epidermis<Scalar, TEST_MEMSPACE>( sem::Tissue<Scalar, TEST_MEMSPACE>( layer.tissue ), layer.box, p );
}

// advance(n) in pieces equals n plain steps bit for bit: positions, species, cells, list builds.
template <class Scalar>
sem::EpidermisChunkStats check_advance_equals_steps( const Case& c, int steps )
{
    auto plain = make_model<Scalar>( c );
    auto fast = make_model<Scalar>( c );
    TEST_EXECSPACE exec;
    for ( int s = 0; s < steps; ++s )
        plain.step( exec );
    // Pieces of odd lengths, so that chunks end at arbitrary steps and both position buffers start chunks.
    int done = 0;
    for ( const int piece : { 1, 37, 5, 64, 200 } )
    {
        const int n = std::min( piece, steps - done );
        fast.advance( exec, n );
        done += n;
        EXPECT_EQ( fast.steps_done(), done );
    }
    fast.advance( exec, steps - done );
    EXPECT_EQ( fast.steps_done(), plain.steps_done() );
    const HostTissue a = plain.tissue().to_host();
    const HostTissue b = fast.tissue().to_host();
    EXPECT_EQ( a.cell_elements, b.cell_elements );
    EXPECT_EQ( a.type, b.type );
    EXPECT_TRUE( a.positions == b.positions ) << "positions differ";
    EXPECT_TRUE( a.species == b.species ) << "species differ";
    EXPECT_EQ( plain.mechanics().list_builds(), fast.mechanics().list_builds() );
    EXPECT_EQ( plain.divisions(), fast.divisions() );
    const auto& st = fast.chunk_stats();
    EXPECT_GT( st.chunk_steps, 0 );
    EXPECT_EQ( st.chunk_steps + st.plain_steps, steps );
    std::printf( "  %d steps: %lld list builds, %lld chunks (%lld steps, %lld failed, %lld wasted), %lld plain, "
                 "%lld records\n",
                 steps, fast.mechanics().list_builds(), st.chunks, st.chunk_steps, st.failed, st.wasted,
                 st.plain_steps, st.captures );
    return st;
}

TEST( TEST_CATEGORY, sem_advance_equals_steps_every_model_boundary_and_precision )
{
    for ( const auto model :
          { sem::EpidermisModel::movement, sem::EpidermisModel::gene_network, sem::EpidermisModel::full } )
        for ( const bool periodic : { true, false } )
        {
            Case c;
            c.model = model;
            c.periodic = periodic;
            SCOPED_TRACE( std::string( sem::to_string( model ) ) + ( periodic ? " periodic" : " open" ) );
            check_advance_equals_steps<double>( c, 250 );
            check_advance_equals_steps<float>( c, 250 );
        }
}

TEST( TEST_CATEGORY, sem_advance_equals_steps_with_distribute_coupling_and_euler )
{
    Case c;
    c.model = sem::EpidermisModel::full;
    c.coupling = sem::NeighborCoupling::distribute;
    check_advance_equals_steps<double>( c, 160 );
    c.integrator = sem::TimeScheme::euler;
    check_advance_equals_steps<double>( c, 160 );
    c.coupling = sem::NeighborCoupling::average;
    check_advance_equals_steps<float>( c, 160 );
}

// A tiny skin makes the element list due every few steps: chunks fail and hand their failing step to a
// plain step, and the result is still that of the plain run.
TEST( TEST_CATEGORY, sem_advance_with_failing_chunks_equals_steps )
{
    for ( const bool periodic : { true, false } )
    {
        Case c;
        c.periodic = periodic;
        c.skin_factor = 0.2;
        const auto st = check_advance_equals_steps<double>( c, 300 );
        EXPECT_GT( st.failed, 0 );
        EXPECT_GT( st.wasted, 0 );
        const auto sf = check_advance_equals_steps<float>( c, 300 );
        EXPECT_GT( sf.failed, 0 );
    }
}

// The cell-centre list holds every pair within its radius (minimum image), and the inputs count exactly
// the cells within the cutoff: both against brute force over all pairs.
template <class Scalar>
void check_cell_list( bool periodic )
{
    sem::MonolayerSpec spec;
    spec.cells = 40;
    spec.seed = 11;
    spec.periodic = periodic;
    sem::EpidermisParameters p;
    const auto layer = sem::monolayer<Scalar>( spec, p.mechanics );
    sem::Tissue<Scalar, TEST_MEMSPACE> t( layer.tissue );
    sem::SemMechanics<Scalar, TEST_MEMSPACE> mech( layer.box, p.mechanics );
    sem::GeneCoupling<Scalar, TEST_MEMSPACE> genes( layer.box, p.genes );
    TEST_EXECSPACE exec;
    mech.compute_cell_geometry( exec, t );
    genes.compute_inputs( exec, t, mech.grid_box() );
    const int m = t.num_cells();
    const auto centres = morula_test_sem::rows( t.centres(), m );
    const auto list = genes.neighbor_list();
    const auto offsets = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), list.offsets );
    const auto indices = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), list.indices );
    const auto counts = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), genes.neighbor_counts() );
    const auto box = layer.box;
    const Scalar radius = genes.list_radius();
    const Scalar cutoff = static_cast<Scalar>( p.genes.neighbor_cutoff );
    int total_within = 0;
    for ( int c = 0; c < m; ++c )
    {
        std::vector<int> listed( indices.data() + offsets( c ), indices.data() + offsets( c + 1 ) );
        std::sort( listed.begin(), listed.end() );
        std::vector<int> expected;
        int within = 0;
        for ( int j = 0; j < m; ++j )
        {
            if ( j == c )
                continue;
            Scalar r2 = 0;
            for ( int d = 0; d < 3; ++d )
            {
                const Scalar v = box.minimum_image( d, Scalar( centres[c][d] ) - Scalar( centres[j][d] ) );
                r2 += v * v;
            }
            if ( r2 <= radius * radius )
                expected.push_back( j );
            within += r2 <= cutoff * cutoff ? 1 : 0;
        }
        EXPECT_EQ( listed, expected ) << "cell " << c;
        EXPECT_EQ( counts( c ), within ) << "cell " << c;
        total_within += within;
    }
    EXPECT_GT( total_within, 2 * m ); // a monolayer: cells have several neighbours
    EXPECT_EQ( genes.list_builds(), 1 );
    // A second call with unmoved centres reuses the list.
    genes.compute_inputs( exec, t, mech.grid_box() );
    EXPECT_EQ( genes.list_builds(), 1 );
}

TEST( TEST_CATEGORY, sem_cell_neighbor_list_equals_brute_force )
{
    check_cell_list<double>( true );
    check_cell_list<double>( false );
    check_cell_list<float>( true );
    check_cell_list<float>( false );
}

} // namespace morula_test_sem_advance
