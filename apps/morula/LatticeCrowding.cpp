#include "LatticeCrowding.hpp"
#include "LatticeDriver.hpp"
#include "LatticeSetup.hpp"
#include "MpiSession.hpp"
#include "MsdPlot.hpp"

#include <morula/core/Error.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>

namespace morula::app
{
namespace
{
using core::InputError;
using core::detail::concat;
namespace lat = morula::lattice;

// %g: 0.95, not 0.94999999999999996, in messages.
std::string short_number( double v )
{
    char text[32];
    std::snprintf( text, sizeof text, "%g", v );
    return text;
}

double free_diffusion( const LatticeSettings& s, const SpeciesSettings& sp )
{
    double sum = 0;
    for ( const auto& p : sp.p )
        sum += p.minus + p.plus;
    return s.spacing_nm * s.spacing_nm * sum / ( 6 * s.time_step_ns ) * 1e3; // nm^2/us
}

// The species' counts scaled to `total` in their configured proportions: cumulative rounding, so the
// counts add up to `total` exactly and the same config gives the same counts everywhere.
void scale_counts( LatticeSettings& p, long long total )
{
    long long configured = 0;
    for ( const auto& sp : p.species )
        configured += sp.count;
    long long cumulative = 0, placed = 0;
    for ( auto& sp : p.species )
    {
        cumulative += sp.count;
        const long long upto = std::llround( double( total ) * double( cumulative ) / double( configured ) );
        sp.count = long( upto - placed );
        placed = upto;
        if ( sp.tracers >= 0 )
            sp.tracers = std::min( sp.tracers, sp.count );
    }
}

struct PointResult
{
    std::vector<double> d_eff;          // nm^2/us, per species
    std::vector<std::size_t> tracers;   // per species
    std::vector<long> particles;        // per species
    double seconds = 0;
};

template <int Slots>
PointResult run_point( const LatticeSettings& p )
{
    Kokkos::DefaultExecutionSpace space;
    const int nspecies = int( p.species.size() );
    PointResult r;
    auto start = make_lattice_start<Slots>( space, p, MpiSession::size() );
    std::optional<LatticeModel<Slots>> driver;
    start_model( driver, space, start.lattice, lattice_rules( p ), start.codes, lattice_options( p ) );
    start.lattice = {};
    auto& model = *driver;
    std::vector<std::vector<std::pair<double, double>>> msd( static_cast<std::size_t>( nspecies ) );
    r.tracers.assign( std::size_t( nspecies ), 0 );
    const double lambda2 = p.spacing_nm * p.spacing_nm;
    const auto t0 = std::chrono::steady_clock::now();
    for ( long done = 0; done < p.steps; )
    {
        const long n = std::min( p.sample_every, p.steps - done );
        model.advance( space, n );
        done += n;
        space.fence();
        const double t_s = double( done ) * p.time_step_ns * 1e-9;
        for ( int i = 0; i < nspecies; ++i )
        {
            const auto m = model.msd( i ); // collective on slabs
            r.tracers[std::size_t( i )] = m.tracers;
            if ( m.tracers > 0 )
                msd[std::size_t( i )].emplace_back( t_s, m.total() * lambda2 );
        }
    }
    r.seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
    unsigned long long on_lattice = 0;
    for ( auto c : model.code_counts( space ) ) // also re-checks every invariant
        on_lattice += c;
    if ( on_lattice != model.particles() )
        throw core::CapacityError( "particles were lost: a bug, please report it" );
    for ( int i = 0; i < nspecies; ++i )
    {
        r.d_eff.push_back( diffusion_from_msd( msd[std::size_t( i )] ) * 1e-6 ); // nm^2/s -> nm^2/us
        r.particles.push_back( p.species[std::size_t( i )].count );
    }
    return r;
}

unsigned long long max_tracer_ids( long capacity )
{
    if ( capacity == 2 )
        return lat::SiteLayout<2>::max_code;
    if ( capacity == 4 )
        return lat::SiteLayout<4>::max_code;
    return lat::SiteLayout<8>::max_code;
}

PointResult run_point_any( const LatticeSettings& p )
{
    if ( p.capacity == 2 )
        return run_point<2>( p );
    if ( p.capacity == 4 )
        return run_point<4>( p );
    return run_point<8>( p );
}
} // namespace

double diffusion_from_msd( const std::vector<std::pair<double, double>>& t_msd )
{
    double num = 0, den = 0;
    for ( const auto& [t, m] : t_msd )
        num += m * t, den += t * t;
    return den > 0 ? num / ( 6 * den ) : std::numeric_limits<double>::quiet_NaN();
}

std::vector<LatticeSettings> crowding_points( const LatticeSettings& s )
{
    const bool by_slots = !s.sweep_slot_fraction.empty();
    if ( by_slots && !s.sweep_obstacle_fraction.empty() )
        throw InputError( "config: keys 'sweep_slot_fraction' and 'sweep_obstacle_fraction' both given; a sweep varies one of them" );
    const char* key = by_slots ? "sweep_slot_fraction" : "sweep_obstacle_fraction";
    const std::vector<double>& values = by_slots ? s.sweep_slot_fraction : s.sweep_obstacle_fraction;
    if ( !s.tracers )
        throw InputError( concat( "config: key '", key, "' measures the tracers' D_eff, but 'tracers' = false" ) );
    if ( !s.snapshots.empty() )
        throw InputError( concat( "config: key 'snapshots': not with a crowding sweep (key '", key, "')" ) );
    if ( !by_slots && s.obstacles.size() != 1 )
        throw InputError( concat( "config: key 'sweep_obstacle_fraction' varies obstacles[0]'s volume fraction; expected "
                                  "exactly one obstacle class in 'obstacles', found ", s.obstacles.size() ) );
    long long configured = 0;
    for ( const auto& sp : s.species )
        configured += sp.count;
    if ( configured <= 0 )
        throw InputError( concat( "config: key 'species': the counts set the mix of the sweep (key '", key,
                                  "'); expected at least one particle" ) );
    const double sites = double( s.size[0] ) * double( s.size[1] ) * double( s.size[2] );
    const double slots = sites * double( s.capacity );
    std::vector<LatticeSettings> points;
    for ( std::size_t k = 0; k < values.size(); ++k )
    {
        const std::string item = concat( "config: key '", key, "'[", k, "] = ", short_number( values[k] ) );
        LatticeSettings p = s;
        p.sweep_slot_fraction.clear();
        p.sweep_obstacle_fraction.clear();
        double obstacle_fraction = 0;
        for ( const auto& ob : s.obstacles )
            obstacle_fraction += ob.volume_fraction;
        if ( by_slots )
        {
            if ( !( values[k] > 0 ) )
                throw InputError( concat( item, ": expected a fraction of the slots in (0, 1]" ) );
            scale_counts( p, std::llround( values[k] * slots ) );
        }
        else
        {
            p.obstacles[0].volume_fraction = values[k];
            obstacle_fraction = values[k];
        }
        long long total = 0;
        for ( const auto& sp : p.species )
            total += sp.count;
        // The obstacles' sites hold no particle: what is left must take them all.
        const double free_slots = slots * ( 1 - obstacle_fraction );
        if ( double( total ) > free_slots )
            throw InputError( concat( item, ": ", total, " particles cannot fit the ", std::llround( free_slots ),
                                      " slots the obstacles leave (", std::llround( slots ), " slots, obstacles ",
                                      short_number( obstacle_fraction ), " of the volume)" ) );
        // One id per particle when every particle is a tracer: checked here so that no point runs first.
        const bool marked = std::any_of( p.species.begin(), p.species.end(), []( const SpeciesSettings& sp ) { return sp.tracers >= 0; } );
        const unsigned long long max_ids = max_tracer_ids( s.capacity );
        if ( !marked && (unsigned long long)( total ) > max_ids )
            throw InputError( concat( item, ": ", total, " particles, each a tracer, need more ids than the ", max_ids,
                                      " capacity ", s.capacity, " has; give each species a 'tracers' count (the rest crowd without ids)" ) );
        refuse_lattice_beyond_memory( p, item, MpiSession::size() );
        points.push_back( std::move( p ) );
    }
    return points;
}

void run_crowding_sweep( const LatticeSettings& s )
{
    const std::vector<LatticeSettings> points = crowding_points( s ); // every point checked first
    const bool by_slots = !s.sweep_slot_fraction.empty();
    const std::vector<double>& values = by_slots ? s.sweep_slot_fraction : s.sweep_obstacle_fraction;
    const char* quantity = by_slots ? "slot_fraction" : "obstacle_fraction";
    const bool root = MpiSession::rank() == 0;
    const std::size_t nspecies = s.species.size();
    const std::string csv_path = s.output + "_crowding.csv";
    std::ofstream csv;
    if ( root )
    {
        csv.open( csv_path );
        if ( !csv )
            throw core::IoError( "config: key 'output': cannot write '" + csv_path + "'" );
        csv.precision( 10 );
        csv << quantity << ",species,particles,tracers,D0_nm2_per_us,D_eff_nm2_per_us,D_eff_over_D0\n";
    }
    std::printf( "crowding sweep: %zu points of %s, lattice %ld x %ld x %ld, capacity %ld, %ld steps each%s\n",
                 points.size(), quantity, s.size[0], s.size[1], s.size[2], s.capacity, s.steps,
                 MpiSession::size() > 1 ? concat( ", ", MpiSession::size(), " MPI ranks" ).c_str() : "" );
    std::vector<PlotSeries> series( nspecies );
    for ( std::size_t i = 0; i < nspecies; ++i )
        series[i].name = s.species[i].name;
    if ( !series.empty() )
        series[0].reference = 1;
    for ( std::size_t k = 0; k < points.size(); ++k )
    {
        const PointResult r = run_point_any( points[k] );
        std::printf( "%s %g:", quantity, values[k] );
        for ( std::size_t i = 0; i < nspecies; ++i )
        {
            const double d0 = free_diffusion( points[k], points[k].species[i] );
            const double ratio = r.d_eff[i] / d0;
            std::printf( "%s '%s' D_eff/D0 = %.4f (%ld particles, %zu tracers)", i ? ";" : "", s.species[i].name.c_str(),
                         ratio, r.particles[i], r.tracers[i] );
            if ( root )
                csv << values[k] << ',' << s.species[i].name << ',' << r.particles[i] << ',' << r.tracers[i] << ','
                    << d0 << ',' << r.d_eff[i] << ',' << ratio << '\n';
            if ( std::isfinite( ratio ) )
                series[i].points.emplace_back( values[k], ratio );
        }
        std::printf( "; %.3g s\n", r.seconds );
        std::fflush( stdout );
    }
    if ( !root )
        return;
    csv.close();
    if ( !csv )
        throw core::IoError( "config: key 'output': writing '" + csv_path + "' failed" );
    std::printf( "D_eff/D0: %s\n", csv_path.c_str() );
    PlotAxes axes;
    axes.title = concat( "crowding: lattice ", s.size[0], "x", s.size[1], "x", s.size[2], ", capacity ", s.capacity );
    axes.x_label = by_slots ? "fraction of the slots filled" : "obstacle volume fraction";
    axes.y_label = "D_eff / D0";
    axes.reference_label = "dashed: free diffusion";
    const std::string png = s.output + "_crowding.png";
    if ( write_line_plot( png, axes, series ) )
        std::printf( "plot: %s\n", png.c_str() );
    else
        std::printf( "plot skipped: this morula was built without cairo (the CSV has the data)\n" );
}
} // namespace morula::app
