// Checkpoint and restart of sem::Epidermis: a run of N steps, a checkpoint, a fresh driver restarted from
// it and N more steps equals the uninterrupted run of 2N steps bit for bit, whatever the path (step() or
// advance()), precision, boundary or model; checkpoints of another model, precision or parameters are
// refused with messages that name the file and the difference.
#include "SemTestUtils.hpp"

#include <morula/Config.hpp>
#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/sem/Epidermis.hpp>
#include <morula/sem/Initializers.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include "ExpectError.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace morula_test_sem_checkpoint
{
namespace sem = morula::sem;
namespace io = morula::io;
using morula::sem::HostTissue;

static_assert( io::is_checkpointable_v<sem::Epidermis<double, TEST_MEMSPACE>> &&
                   io::is_checkpointable_v<sem::Epidermis<float, TEST_MEMSPACE>>,
               "the epidermis driver has the checkpoint shape" );

#if MORULA_HAVE_HDF5

std::string file_for( const std::string& test )
{
    return "morula_epidermis_checkpoint_" + test + "_" + TEST_EXECSPACE::name() + ".h5";
}

using morula_test::expect_error;

struct Case
{
    sem::EpidermisModel model = sem::EpidermisModel::full;
    bool periodic = true;
    sem::TimeScheme integrator = sem::TimeScheme::runge_kutta2;
    sem::NeighborCoupling coupling = sem::NeighborCoupling::average;
    bool advance = false;        // advance() instead of step()
    bool resume_advance = false; // the resumed part by advance() (the others by `advance`)
    int growth_interval = 10;
    double skin_factor = 1.0;
};

sem::EpidermisParameters parameters( const Case& c )
{
    sem::EpidermisParameters p;
    p.model = c.model;
    // Growth every 10 steps and division at 22 elements: the 20-element cells divide at step 20 and their
    // daughters again every ~110 steps, so divisions fall on both sides of the restart.
    p.growth.interval = c.growth_interval;
    p.growth.division_elements = 22;
    // A skin of one cutoff: the element list is rebuilt every few steps, so a checkpoint falls mid
    // rebuild interval.
    p.mechanics.skin_factor = c.skin_factor;
    p.mechanics.integrator = c.integrator;
    p.genes.coupling = c.coupling;
    return p;
}

sem::MonolayerSpec layout( const Case& c )
{
    sem::MonolayerSpec spec;
    spec.cells = 9;
    spec.seed = 3;
    spec.periodic = c.periodic;
    // Cells a little closer than relaxed: a dense layer whose cells push each other from the start.
    spec.gap = -0.05;
    return spec;
}

// The monolayer of a layout, made once (relaxing the cell template on the host takes a while); the tests
// vary no parameter it depends on.
template <class Scalar>
const sem::Monolayer<Scalar>& layer_of( const sem::MonolayerSpec& spec )
{
    static std::map<std::tuple<bool, int, std::uint64_t>, sem::Monolayer<Scalar>> made;
    const auto key = std::make_tuple( spec.periodic, spec.cells, spec.seed );
    auto it = made.find( key );
    if ( it == made.end() )
        it = made.emplace( key, sem::monolayer<Scalar>( spec, sem::SemParameters{} ) ).first;
    return it->second;
}

// The driver of the case; `fresh` starts it from another, smaller tissue in the same box (what a restart
// must replace entirely: element and cell counts, capacities, species).
template <class Scalar>
sem::Epidermis<Scalar, TEST_MEMSPACE> make_model( const Case& c, bool fresh = false,
                                                   const sem::EpidermisParameters* override = nullptr )
{
    const auto p = override ? *override : parameters( c );
    const auto& layer = layer_of<Scalar>( layout( c ) );
    HostTissue tissue = layer.tissue;
    if ( fresh )
    {
        auto other = layout( c );
        other.cells = 4;
        other.seed = 7;
        tissue = layer_of<Scalar>( other ).tissue;
        tissue.species.assign( tissue.species.size(), 1.5 );
    }
    return sem::Epidermis<Scalar, TEST_MEMSPACE>( sem::Tissue<Scalar, TEST_MEMSPACE>( tissue ), layer.box, p );
}

template <class Model>
void run( Model& model, int steps, bool advance )
{
    TEST_EXECSPACE exec;
    if ( advance )
        model.advance( exec, steps );
    else
        for ( int s = 0; s < steps; ++s )
            model.step( exec );
}

template <class Model>
io::CheckpointEntries state_of( const Model& model )
{
    io::CheckpointWriter out( Model::checkpoint_model );
    model.checkpoint( out );
    return out.entries();
}

// The tissue, species and counters of two drivers are the same bit for bit.
template <class Model>
void expect_same_run( const Model& a, const Model& b )
{
    EXPECT_EQ( io::first_difference( state_of( a ), state_of( b ) ), "" );
    EXPECT_EQ( a.steps_done(), b.steps_done() );
    EXPECT_EQ( a.divisions(), b.divisions() );
    EXPECT_EQ( a.mechanics().list_builds(), b.mechanics().list_builds() );
    EXPECT_EQ( a.genes().list_builds(), b.genes().list_builds() );
    EXPECT_EQ( a.tissue().element_capacity(), b.tissue().element_capacity() );
    EXPECT_EQ( a.tissue().cell_capacity(), b.tissue().cell_capacity() );
    const HostTissue x = a.tissue().to_host();
    const HostTissue y = b.tissue().to_host();
    EXPECT_EQ( x.cell_elements, y.cell_elements );
    EXPECT_EQ( x.type, y.type );
    EXPECT_TRUE( x.positions == y.positions ) << "positions differ";
    EXPECT_TRUE( x.species == y.species ) << "species differ";
}

struct Resumed
{
    long long divisions_before = 0, divisions_after = 0;
    long long builds_before = 0, builds_after = 0;
    long long chunk_steps = 0; //!< steps of the resumed part replayed in chunks
};

// first + second steps uninterrupted against first steps, a checkpoint, a fresh driver restarted from it
// and second more steps.
template <class Scalar>
Resumed check_resume( const Case& c, int first, int second, const std::string& name )
{
    const bool resume_advance = c.advance || c.resume_advance;
    auto whole = make_model<Scalar>( c );
    run( whole, first + second, c.advance );

    auto part = make_model<Scalar>( c );
    run( part, first, c.advance );
    const std::string path = file_for( name );
    io::write_checkpoint( part, path );

    auto resumed = make_model<Scalar>( c, true );
    io::restart_from_checkpoint( resumed, path );
    // The restored state is the checkpointed one, lists and bound included (they are written again).
    EXPECT_EQ( io::first_difference( state_of( part ), state_of( resumed ) ), "" ) << "right after the restart";
    EXPECT_EQ( resumed.steps_done(), first );
    run( resumed, second, resume_advance );
    expect_same_run( whole, resumed );
    std::remove( path.c_str() );

    Resumed r;
    r.chunk_steps = resumed.chunk_stats().chunk_steps;
    r.divisions_before = part.divisions();
    r.divisions_after = resumed.divisions() - part.divisions();
    r.builds_before = part.mechanics().list_builds();
    r.builds_after = resumed.mechanics().list_builds() - part.mechanics().list_builds();
    std::printf( "  %s: %lld + %lld divisions, %lld + %lld element-list builds, %d cells at the end, %lld steps "
                 "in chunks after the restart\n",
                 name.c_str(), r.divisions_before, r.divisions_after, r.builds_before, r.builds_after,
                 resumed.tissue().num_cells(), r.chunk_steps );
    return r;
}

// The hard regime: a dense growing tissue with divisions and list rebuilds on both sides of the restart,
// taken mid growth interval and mid rebuild interval, by step() and by advance() (whose resumed part
// replays chunks recorded anew), float and double, periodic and open.
TEST( TEST_CATEGORY, sem_epidermis_restart_continues_bit_for_bit )
{
    for ( const bool periodic : { true, false } )
        for ( const bool advance : { false, true } )
        {
            Case c;
            c.periodic = periodic;
            c.advance = advance;
            const bool single = advance == periodic; // each path and boundary in both precisions
            const std::string name = std::string( periodic ? "periodic" : "open" ) +
                                     ( advance ? "_advance" : "_step" ) + ( single ? "_float" : "_double" );
            SCOPED_TRACE( name );
            const auto r = single ? check_resume<float>( c, 97, 100, name ) : check_resume<double>( c, 97, 100, name );
            EXPECT_GT( r.divisions_before, 0 );
            EXPECT_GT( r.divisions_after, 0 );
            EXPECT_GT( r.builds_before, 1 );
            EXPECT_GT( r.builds_after, 1 );
            if ( advance )
                EXPECT_GT( r.chunk_steps, 0 );
        }
}

// Checkpoints right after a growth event with divisions (both lists invalid, the tissue regrouped) and
// right before one.
TEST( TEST_CATEGORY, sem_epidermis_restart_at_growth_events )
{
    Case c;
    c.advance = true;
    const auto r = check_resume<double>( c, 20, 50, "after_division" );
    EXPECT_GT( r.divisions_before, 0 );
    check_resume<double>( c, 139, 11, "before_growth" );
    c.periodic = false;
    check_resume<float>( c, 130, 20, "open_after_growth" );
}

// With the default skin (3 cutoffs) the element list lasts long enough for advance() to replay long chunks
// on both sides of the restart: the resumed driver records its chunks anew and replays them.
TEST( TEST_CATEGORY, sem_epidermis_restart_replays_new_chunks )
{
    Case c;
    c.advance = true;
    c.skin_factor = 3.0;
    c.growth_interval = 40;
    for ( const bool periodic : { true, false } )
    {
        c.periodic = periodic;
        const auto d = check_resume<double>( c, 75, 90, periodic ? "long_chunks_periodic" : "long_chunks_open" );
        EXPECT_GT( d.divisions_after, 0 );
        EXPECT_GT( d.chunk_steps, 30 );
        const auto f = check_resume<float>( c, 75, 90, periodic ? "long_chunks_periodic_float" : "long_chunks_open_float" );
        EXPECT_GT( f.chunk_steps, 30 );
    }
}

// A run by step() resumed by advance() (and the other way round) is still the same run: the chunks are
// recorded anew and equal plain steps.
TEST( TEST_CATEGORY, sem_epidermis_restart_switches_step_and_advance )
{
    Case c;
    c.resume_advance = true;
    EXPECT_GT( check_resume<double>( c, 61, 60, "step_then_advance" ).chunk_steps, 0 );
    EXPECT_GT( check_resume<float>( c, 61, 60, "step_then_advance_float" ).chunk_steps, 0 );
}

// The other models and schemes: the gene network with the `distribute` coupling and Euler, the movement
// model.
TEST( TEST_CATEGORY, sem_epidermis_restart_other_models_and_schemes )
{
    Case c;
    c.model = sem::EpidermisModel::gene_network;
    c.coupling = sem::NeighborCoupling::distribute;
    c.integrator = sem::TimeScheme::euler;
    c.advance = true;
    check_resume<double>( c, 47, 50, "gene_network_distribute_euler" );
    c.model = sem::EpidermisModel::movement;
    c.periodic = false;
    check_resume<float>( c, 47, 50, "movement_open" );
    c.model = sem::EpidermisModel::full;
    c.advance = false;
    const auto r = check_resume<double>( c, 13, 40, "full_euler_distribute" );
    EXPECT_GT( r.divisions_after, 0 );
}

// A checkpoint is refused, with the file and the difference named, when it is another model's, of the
// other precision or of other parameters; a refused restart leaves the driver as it was.
TEST( TEST_CATEGORY, sem_epidermis_restart_refuses_other_checkpoints )
{
    Case c;
    auto model = make_model<double>( c );
    run( model, 5, false );
    const std::string path = file_for( "refuse" );
    io::write_checkpoint( model, path );

    // Another model's checkpoint.
    const std::string lattice = file_for( "refuse_lattice" );
    {
        io::CheckpointWriter out( "lattice" );
        out.put_scalar( "step", 5LL );
        out.write( lattice );
    }
    auto fresh = make_model<double>( c, true );
    const auto before = state_of( fresh );
    expect_error<morula::core::InputError>( [&] { io::restart_from_checkpoint( fresh, lattice ); },
                                            { lattice, "a checkpoint of model 'lattice', not of 'epidermis'" } );
    std::remove( lattice.c_str() );

    // The other precision.
    auto single = make_model<float>( c );
    expect_error<morula::core::InputError>( [&] { io::restart_from_checkpoint( single, path ); },
                                            { path, "written by a double run; this run is float" } );

    // Other parameters: each message names the parameter and both values.
    auto p = parameters( c );
    p.growth.interval = 11;
    auto other_growth = make_model<double>( c, true, &p );
    expect_error<morula::core::InputError>(
        [&] { io::restart_from_checkpoint( other_growth, path ); },
        { path, "parameter 'growth.interval' is 10 in the checkpoint but 11 in this run" } );
    p = parameters( c );
    p.mechanics.time_step = 0.005;
    auto other_dt = make_model<double>( c, true, &p );
    expect_error<morula::core::InputError>(
        [&] { io::restart_from_checkpoint( other_dt, path ); },
        { path, "parameter 'mechanics.time_step' is 0.01 in the checkpoint but 0.005 in this run" } );
    p = parameters( c );
    p.mechanics.integrator = sem::TimeScheme::euler;
    auto other_scheme = make_model<double>( c, true, &p );
    expect_error<morula::core::InputError>(
        [&] { io::restart_from_checkpoint( other_scheme, path ); },
        { path, "parameter 'mechanics.integrator' is rk2 in the checkpoint but euler in this run" } );
    p = parameters( c );
    p.model = sem::EpidermisModel::gene_network;
    auto other_model = make_model<double>( c, true, &p );
    expect_error<morula::core::InputError>(
        [&] { io::restart_from_checkpoint( other_model, path ); },
        { path, "parameter 'model' is full in the checkpoint but gene_network in this run" } );
    // Another skin (the list's order is the forces' sum order); an unset skin is checked as the value
    // this backend fills in, so a checkpoint of another backend's default is refused by name too.
    p = parameters( c );
    p.mechanics.skin_factor = 2.0;
    auto other_skin = make_model<double>( c, true, &p );
    expect_error<morula::core::InputError>(
        [&] { io::restart_from_checkpoint( other_skin, path ); },
        { path, "parameter 'mechanics.skin_factor' is 1 in the checkpoint but 2 in this run" } );
    p = parameters( c );
    p.mechanics.skin_factor.reset();
    auto default_skin = make_model<double>( c, true, &p );
    if ( sem::default_skin_factor<TEST_EXECSPACE>() == 1.0 )
        EXPECT_NO_THROW( io::restart_from_checkpoint( default_skin, path ) );
    else
        expect_error<morula::core::InputError>(
            [&] { io::restart_from_checkpoint( default_skin, path ); },
            { path, "parameter 'mechanics.skin_factor' is 1 in the checkpoint but 3 in this run" } );
    Case open = c;
    open.periodic = false;
    auto other_box = make_model<double>( open, true );
    expect_error<morula::core::InputError>( [&] { io::restart_from_checkpoint( other_box, path ); },
                                            { path, "parameter 'box.boundary.x' is periodic in the checkpoint but "
                                                    "open in this run" } );

    // A cell table that does not fit the elements (a damaged file) is refused before anything changes.
    const std::string damaged = file_for( "refuse_damaged" );
    {
        auto entries = io::detail::read_checkpoint_file( path );
        auto& count = entries.at( "tissue/cell_count" );
        const int huge = 1000;
        std::memcpy( count.bytes.data(), &huge, sizeof( int ) );
        io::detail::write_checkpoint_file( damaged, entries );
    }
    expect_error<morula::core::InputError>( [&] { io::restart_from_checkpoint( fresh, damaged ); },
                                            { damaged, "cell 0 has elements [0, 1000) outside the" } );
    std::remove( damaged.c_str() );
    EXPECT_EQ( io::first_difference( before, state_of( fresh ) ), "" ) << "a refused restart changed the driver";

    // Parameters that do not change this model's run are not compared: a movement run ignores growth.
    Case movement = c;
    movement.model = sem::EpidermisModel::movement;
    auto moving = make_model<double>( movement );
    run( moving, 5, false );
    io::write_checkpoint( moving, path );
    p = parameters( movement );
    p.growth.interval = 99;
    auto moving_again = make_model<double>( movement, true, &p );
    io::restart_from_checkpoint( moving_again, path );
    EXPECT_EQ( moving_again.steps_done(), 5 );
    std::remove( path.c_str() );
}

#endif

} // namespace morula_test_sem_checkpoint
