// morula.Lattice: multiparticle lattice diffusion (lattice::LatticeDiffusion, one rank), built from the
// configuration `morula lattice` reads (apps/morula/LatticeSetup.hpp), so that a configuration gives the
// same lattice and the same run here as on the command line, bit for bit. One class per capacity (2, 4
// or 8 particles per site: the site word's layout is a compile-time parameter of every kernel).
#include "ModelRun.hpp"

#include <LatticeSetup.hpp>

#include <morula/io/LatticeSnapshots.hpp>
#include <morula/lattice/LatticeCheckpoint.hpp>
#include <morula/lattice/LatticeDiffusion.hpp>

#include <Kokkos_Core.hpp>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace morula::python
{
namespace
{
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
namespace lat = morula::lattice;

py::dict report_dict( const lat::LatticeDiffusionReport& r )
{
    py::dict d;
    d["step"] = r.step;
    d["overflow_events"] = r.overflow_events;
    d["overflow_entries"] = r.overflow_entries;
    d["overflow_scans"] = r.overflow_scans;
    return d;
}

// The settings and the initial lattice, a base class so that they are made before the driver.
template <int Slots>
struct LatticeStartHolder
{
    explicit LatticeStartHolder( const app::LatticeSettings& s )
        : settings( s )
        , start( app::make_lattice_start<Slots>( ExecutionSpace(), s ) )
    {
    }
    app::LatticeSettings settings;
    app::LatticeStart<Slots> start;
};

template <int Slots>
class LatticeRun : private LatticeStartHolder<Slots>, public ModelRun<lat::LatticeDiffusion<Slots, ExecutionSpace>>
{
    using holder = LatticeStartHolder<Slots>;
    using base = ModelRun<lat::LatticeDiffusion<Slots, ExecutionSpace>>;
    using layout = lat::SiteLayout<Slots>;

  public:
    explicit LatticeRun( const app::LatticeSettings& s )
        : holder( s )
        , base( "morula.Lattice", ExecutionSpace(), holder::start.lattice, app::lattice_rules( s ), holder::start.codes,
                app::lattice_options( s ) )
    {
        holder::start.lattice = {}; // the driver holds its own copy
    }

    const app::LatticeSettings& settings() const { return holder::settings; }
    const std::vector<lat::ObstaclePlacement>& obstacles() const { return holder::start.obstacles; }

    //! The sites' words, a host copy shaped (nz, ny, nx): x varies fastest, as in the lattice.
    py::array_t<std::uint32_t> sites()
    {
        const auto words = this->model().gather( this->exec() );
        const auto& shape = this->model().shape();
        py::array_t<std::uint32_t> out( { shape.nz, shape.ny, shape.nx } );
        std::copy( words.data(), words.data() + words.extent( 0 ), out.mutable_data() );
        return out;
    }
    //! Particles per site, from the same copy: (nz, ny, nx).
    py::array_t<std::uint8_t> occupancy()
    {
        const auto words = this->model().gather( this->exec() );
        const auto& shape = this->model().shape();
        py::array_t<std::uint8_t> out( { shape.nz, shape.ny, shape.nx } );
        auto* o = out.mutable_data();
        for ( std::size_t i = 0; i < words.extent( 0 ); ++i )
            o[i] = std::uint8_t( layout::count( words( i ) ) );
        return out;
    }
    //! Each tracer's displacement in sites since the start, (tracers + 1, 3): row = tracer code (row 0 unused).
    py::array_t<int> displacements()
    {
        const auto d = this->model().gather_displacements();
        py::array_t<int> out( { std::int64_t( d.extent( 0 ) ), std::int64_t( 3 ) } );
        auto* o = out.mutable_data();
        for ( std::size_t i = 0; i < d.extent( 0 ); ++i )
            for ( int a = 0; a < 3; ++a )
                o[3 * i + a] = d( i, a );
        return out;
    }
    //! The site words as the frame <prefix>_<step>.h5, the command's frame (time in seconds).
    void snapshot( const std::string& prefix )
    {
        const auto& shape = this->model().shape();
        auto& series = m_snapshots.at( prefix, [&] {
            return std::make_unique<io::LatticeSnapshotWriter>( prefix, shape.nx, shape.ny, shape.nz,
                                                                settings().spacing_nm, Slots );
        } );
        const long long step = this->model().steps_done();
        series.write_view( step, double( step ) * settings().time_step_ns * 1e-9, this->model().gather( this->exec() ) );
    }
    py::dict msd( int species )
    {
        if ( species < 0 || species >= int( settings().species.size() ) )
            throw core::InputError( core::detail::concat( "morula.Lattice.msd: species = ", species, "; expected 0 to ",
                                                          settings().species.size() - 1 ) );
        const auto m = this->model().msd( species );
        py::dict d;
        d["tracers"] = m.tracers;
        d["per_axis"] = py::make_tuple( m.per_axis[0], m.per_axis[1], m.per_axis[2] );
        d["total"] = m.total();
        return d;
    }

  private:
    SnapshotSeriesSet<io::LatticeSnapshotWriter> m_snapshots;
};

template <int Slots>
void bind_run( py::module_& m, const char* name )
{
    using Run = LatticeRun<Slots>;
    py::class_<Run> c( m, name );
    bind_model_run( c, report_dict );
    c.def_property_readonly( "capacity", []( Run& ) { return Slots; } )
        .def_property_readonly( "shape", []( Run& r ) {
            const auto& s = r.model().shape();
            return py::make_tuple( s.nx, s.ny, s.nz );
        } )
        .def_property_readonly( "particles", []( Run& r ) { return r.model().particles(); } )
        .def_property_readonly( "overflows", []( Run& r ) { return r.model().overflows(); },
                                "particles placed from the overflow list so far" )
        .def_property_readonly( "tracking", []( Run& r ) { return r.model().tracking(); } )
        .def_property_readonly( "species", []( Run& r ) {
            std::vector<std::string> names;
            for ( const auto& sp : r.settings().species )
                names.push_back( sp.name );
            return names;
        } )
        .def_property_readonly( "spacing_nm", []( Run& r ) { return r.settings().spacing_nm; } )
        .def_property_readonly( "time_step_ns", []( Run& r ) { return r.settings().time_step_ns; } )
        .def_property_readonly( "steps", []( Run& r ) { return r.settings().steps; },
                                "the configuration's `steps` (what `morula lattice` would run)" )
        .def_property_readonly( "sample_every", []( Run& r ) { return r.settings().sample_every; } )
        .def_property_readonly( "obstacles", []( Run& r ) {
            py::list out;
            for ( const auto& o : r.obstacles() )
            {
                py::dict d;
                d["spheres"] = o.spheres;
                d["sites"] = o.sites;
                d["volume_fraction"] = o.fraction;
                out.append( d );
            }
            return out;
        } )
        .def( "code_counts", []( Run& r ) { return r.model().code_counts( r.exec() ); },
              "particles with each code (index = code, 0 unused); re-checks every invariant" )
        .def( "msd", &Run::msd, py::arg( "species" ),
              "mean square displacement of the species' tracers in sites^2: {tracers, per_axis, total}" )
        .def( "snapshot", &Run::snapshot, py::arg( "prefix" ),
              "writes the site words as the frame <prefix>_<step>.h5 (HDF5, the command's files); the first call "
              "with a prefix starts its series" )
        .def( "sites", &Run::sites, "the site words (uint32), a host copy shaped (nz, ny, nx)" )
        .def( "occupancy", &Run::occupancy, "particles per site, a host copy shaped (nz, ny, nx)" )
        .def( "displacements", &Run::displacements,
              "each tracer's displacement in sites, (codes, 3), row = tracer code (row 0 unused)" );
}
} // namespace

void bind_lattice( py::module_& m )
{
    bind_run<2>( m, "_Lattice2" );
    bind_run<4>( m, "_Lattice4" );
    bind_run<8>( m, "_Lattice8" );
    m.def(
        "_make_lattice",
        []( const std::string& json, const std::string& name ) -> py::object {
            app::LatticeSettings s = app::default_lattice_settings();
            app::read_lattice_config_text( json, name, s );
            Session::get().require( "morula.Lattice" );
            if ( s.capacity == 2 )
                return py::cast( std::make_unique<LatticeRun<2>>( s ) );
            if ( s.capacity == 4 )
                return py::cast( std::make_unique<LatticeRun<4>>( s ) );
            return py::cast( std::make_unique<LatticeRun<8>>( s ) );
        },
        py::arg( "json" ), py::arg( "name" ) );
}
} // namespace morula::python
