// morula.Angiogenesis: tumour cells and vessel tubes (angio::TumourAngiogenesis, one rank), built from the
// configuration `morula angiogenesis` reads (apps/morula/AngioSetup.hpp), with the command's angiogenic
// switch before every step, so that a configuration gives the same run here as on the command line, bit
// for bit.
#include "ModelRun.hpp"

#include <AngioSetup.hpp>

#include <morula/angio/TumourAngiogenesis.hpp>
#include <morula/angio/TumourAngiogenesisCheckpoint.hpp>
#include <morula/io/AngioSnapshots.hpp>

#include <Kokkos_Core.hpp>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace morula::python
{
namespace
{
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;

py::dict report_dict( const angio::TumourAngiogenesisReport& r )
{
    py::dict d;
    d["step"] = r.step;
    d["divisions"] = r.divisions;
    d["removed"] = r.removed;
    d["new_tubes"] = r.new_tubes;
    d["sprouts"] = r.sprouts;
    d["anastomoses"] = r.anastomoses;
    d["sorted"] = r.sorted;
    return d;
}

// The settings and the host start, a base class so that they are made before the driver.
struct AngioStartHolder
{
    explicit AngioStartHolder( const app::AngioSettings& s )
        : settings( s )
        , start( app::make_angiogenesis_start( s, "morula.Angiogenesis" ) )
    {
    }
    app::AngioSettings settings;
    app::AngioStart start;
};

template <class Scalar>
class AngioRun : private AngioStartHolder, public ModelRun<angio::TumourAngiogenesis<Scalar, MemorySpace>>
{
    using base = ModelRun<angio::TumourAngiogenesis<Scalar, MemorySpace>>;
    using cells_type = angio::TumourCells<Scalar, MemorySpace>;
    using tubes_type = angio::VesselTubes<Scalar, MemorySpace>;

  public:
    using report_type = typename base::report_type;

    explicit AngioRun( const app::AngioSettings& s )
        : AngioStartHolder( s )
        , base( "morula.Angiogenesis", cells_type( start.cells ), tubes_type( start.tubes ),
                app::angiogenesis_box<Scalar>( s ), start.parameters )
        , m_switch( s, start )
    {
        start.cells = {}; // the driver holds its own copies
        start.tubes = {};
    }

    const app::AngioSettings& settings() const { return AngioStartHolder::settings; }

    // step() and advance() apply the angiogenic switch before every step, as the command does (they hide
    // ModelRun's, which bind_model_run calls through the derived type).
    report_type step( bool timed )
    {
        report_type r;
        {
            py::gil_scoped_release unlocked;
            m_switch.before_step( this->model() );
            r = this->model().step( this->exec(), timed );
        }
        this->changed();
        return r;
    }
    report_type advance( long long n )
    {
        if ( n < 0 )
            throw core::InputError( core::detail::concat( "morula.Angiogenesis.advance: n = ", n, " (expected >= 0)" ) );
        report_type total;
        {
            py::gil_scoped_release unlocked;
            auto& m = this->model();
            // Step by step while the switch is pending (it is checked before every step), then in one go.
            for ( ; n > 0 && m_switch.pending( m ); --n )
            {
                m_switch.before_step( m );
                const auto r = m.step( this->exec(), false );
                total.merge( r );
                total.step = r.step;
            }
            if ( n > 0 )
            {
                const auto r = m.advance( this->exec(), n );
                total.merge( r );
                total.step = r.step;
            }
        }
        this->changed();
        return total;
    }

    void snapshot( const std::string& prefix )
    {
        auto& series = m_snapshots.at( prefix, [&] { return std::make_unique<io::AngioSnapshotWriter>( prefix ); } );
        series.write( app::angiogenesis_frame( this->model() ) );
    }

  private:
    app::AngiogenicSwitch m_switch;
    SnapshotSeriesSet<io::AngioSnapshotWriter> m_snapshots;
};

template <class Scalar>
void bind_run( py::module_& m, const char* name )
{
    using Run = AngioRun<Scalar>;
    py::class_<Run> c( m, name );
    bind_model_run( c, report_dict );
    c.def_property_readonly( "time", []( Run& r ) { return r.model().time(); }, "hours since the start" )
        .def_property_readonly( "cells", []( Run& r ) { return r.model().num_cells(); } )
        .def_property_readonly( "tubes", []( Run& r ) { return r.model().num_tubes(); } )
        .def_property_readonly( "divisions", []( Run& r ) { return r.model().divisions(); } )
        .def_property_readonly( "sprouts", []( Run& r ) { return r.model().sprouts(); } )
        .def_property_readonly( "anastomoses", []( Run& r ) { return r.model().anastomoses(); } )
        .def_property_readonly( "sprouting", []( Run& r ) { return r.model().parameters().vessels.sprouting; },
                                "whether vessels sprout now (the angiogenic switch turns it on)" )
        .def_property_readonly( "precision", []( Run& ) { return std::is_same_v<Scalar, float> ? "float" : "double"; } )
        .def_property_readonly( "box", []( Run& r ) {
            const auto& b = r.settings().box;
            return py::make_tuple( b[0], b[1], b[2] );
        } )
        .def_property_readonly( "steps", []( Run& r ) { return r.settings().steps; },
                                "the configuration's `steps` (what `morula angiogenesis` would run)" )
        .def_property_readonly( "output_every", []( Run& r ) { return r.settings().output_every; } )
        .def( "snapshot", &Run::snapshot, py::arg( "prefix" ),
              "writes cells and tubes as the frame <prefix>_<step>.h5 of the series <prefix>.xmf (HDF5 + XDMF, "
              "the command's files); the first call with a prefix starts its series" );
    // Arrays of the cells and tubes in use (the first `cells` / `tubes` rows of the Views).
    auto cell_array = [&c]( const char* name, auto get, int width ) {
        c.def_property_readonly( name, [name, get, width]( Run& r ) {
            const auto& cells = r.model().cells();
            std::vector<std::int64_t> shape{ r.model().num_cells() };
            if ( width > 1 )
                shape.push_back( width );
            return r.array( get( cells ), shape, name );
        } );
    };
    auto tube_array = [&c]( const char* name, auto get, int width ) {
        c.def_property_readonly( name, [name, get, width]( Run& r ) {
            const auto& tubes = r.model().tubes();
            std::vector<std::int64_t> shape{ r.model().num_tubes() };
            if ( width > 1 )
                shape.push_back( width );
            return r.array( get( tubes ), shape, name );
        } );
    };
    using C = angio::TumourCells<Scalar, MemorySpace>;
    using T = angio::VesselTubes<Scalar, MemorySpace>;
    cell_array( "cell_positions", []( const C& x ) { return x.positions(); }, 3 );
    cell_array( "cell_radius", []( const C& x ) { return x.radii(); }, 1 );
    cell_array( "cell_age", []( const C& x ) { return x.ages(); }, 1 );
    cell_array( "cell_oxygen", []( const C& x ) { return x.oxygen(); }, 1 );
    cell_array( "cell_taf", []( const C& x ) { return x.taf(); }, 1 );
    cell_array( "cell_pressure", []( const C& x ) { return x.pressures(); }, 1 );
    cell_array( "cell_state", []( const C& x ) { return x.states(); }, 1 );
    cell_array( "cell_id", []( const C& x ) { return x.ids(); }, 1 );
    tube_array( "tube_end_a", []( const T& x ) { return x.end_a(); }, 3 );
    tube_array( "tube_end_b", []( const T& x ) { return x.end_b(); }, 3 );
    tube_array( "tube_radius_a", []( const T& x ) { return x.radius_a(); }, 1 );
    tube_array( "tube_radius_b", []( const T& x ) { return x.radius_b(); }, 1 );
    tube_array( "tube_flow", []( const T& x ) { return x.flow(); }, 1 );
    tube_array( "tube_blood_oxygen", []( const T& x ) { return x.blood_oxygen(); }, 1 );
    tube_array( "tube_taf", []( const T& x ) { return x.taf(); }, 1 );
    tube_array( "tube_parent", []( const T& x ) { return x.parents(); }, 1 );
    tube_array( "tube_flags", []( const T& x ) { return x.flags(); }, 1 );
    tube_array( "tube_id", []( const T& x ) { return x.ids(); }, 1 );
}
} // namespace

void bind_angiogenesis( py::module_& m )
{
    bind_run<double>( m, "_AngiogenesisDouble" );
    bind_run<float>( m, "_AngiogenesisFloat" );
    m.def(
        "_make_angiogenesis",
        []( const std::string& json, const std::string& name ) -> py::object {
            app::AngioSettings s;
            app::read_angiogenesis_config_text( json, name, s );
            Session::get().require( "morula.Angiogenesis" );
            if ( s.precision == "float" )
                return py::cast( std::make_unique<AngioRun<float>>( s ) );
            return py::cast( std::make_unique<AngioRun<double>>( s ) );
        },
        py::arg( "json" ), py::arg( "name" ) );
}
} // namespace morula::python
