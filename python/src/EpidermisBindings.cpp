// morula.Epidermis: the 3D epidermis model (sem::Epidermis) built from the configuration `morula
// epidermis` reads (apps/morula/EpidermisSetup.hpp), so that a configuration gives the same run here as on
// the command line, bit for bit.
#include "Arrays.hpp"
#include "Bindings.hpp"
#include "Session.hpp"

#include <EpidermisSetup.hpp>

#include <morula/io/Checkpoint.hpp>
#include <morula/sem/Epidermis.hpp>
#include <morula/sem/EpidermisCheckpoint.hpp>
#include <morula/sem/Initializers.hpp>

#include <Kokkos_Core.hpp>
#include <pybind11/stl.h>

#include <string>

namespace morula::python
{
namespace
{
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;

py::dict report_dict( const sem::EpidermisReport& r )
{
    py::dict d;
    d["step"] = r.step;
    d["grown"] = r.grown;
    d["divisions"] = r.divisions;
    return d;
}

py::dict times_dict( const core::PhaseTimer& t )
{
    py::dict phases, counts, d;
    for ( int i = 0; i < t.num_phases(); ++i )
        phases[py::str( t.phase_name( i ) )] = t.seconds( i );
    for ( int i = 0; i < t.num_counts(); ++i )
        counts[py::str( t.count_name( i ) )] = t.count( i );
    d["phases"] = phases;
    d["counts"] = counts;
    d["steps"] = t.steps();
    d["total"] = t.total();
    return d;
}

template <class Scalar>
class EpidermisRun
{
  public:
    using model_type = sem::Epidermis<Scalar, MemorySpace>;

    explicit EpidermisRun( const app::EpidermisSettings& s )
        : m_settings( s )
        , m_params( app::epidermis_parameters( s ) )
        , m_layer( sem::monolayer<Scalar>( app::monolayer_spec( s ), m_params.mechanics ) )
        , m_model( "morula.Epidermis", sem::Tissue<Scalar, MemorySpace>( m_layer.tissue ), m_layer.box, m_params )
    {
    }

    model_type& model() { return m_model.get(); }
    const app::EpidermisSettings& settings() const { return m_settings; }
    const sem::Monolayer<Scalar>& layer() const { return m_layer; }

    py::dict step( bool timed )
    {
        sem::EpidermisReport r;
        {
            py::gil_scoped_release unlocked;
            r = model().step( m_exec, timed );
        }
        m_model.changed();
        return report_dict( r );
    }
    py::dict advance( long long n )
    {
        if ( n < 0 )
            throw core::InputError( core::detail::concat( "morula.Epidermis.advance: n = ", n, " (expected >= 0)" ) );
        sem::EpidermisReport r;
        {
            py::gil_scoped_release unlocked;
            r = model().advance( m_exec, n );
        }
        m_model.changed();
        return report_dict( r );
    }
    void checkpoint( const std::string& path ) { io::write_checkpoint( model(), path ); }
    void restart( const std::string& path )
    {
        io::restart_from_checkpoint( model(), path );
        m_model.changed();
    }

    template <class View>
    Array array( const View& v, std::vector<std::int64_t> shape, const char* what )
    {
        return Array( v, std::move( shape ), m_model.generation(), std::string( "morula.Epidermis." ) + what );
    }

    Array cell_states()
    {
        auto states = model().cell_states( m_exec );
        return array( states, { model().tissue().num_cells() }, "cell_states()" );
    }
    void update_geometry()
    {
        model().update_geometry( m_exec );
        m_exec.fence();
    }

  private:
    app::EpidermisSettings m_settings;
    sem::EpidermisParameters m_params;
    sem::Monolayer<Scalar> m_layer;
    Owned<model_type> m_model;
    ExecutionSpace m_exec;
};

template <class Scalar>
void bind_run( py::module_& m, const char* name )
{
    using Run = EpidermisRun<Scalar>;
    py::class_<Run>( m, name )
        .def( "step", &Run::step, py::arg( "timed" ) = false,
              "one step (timed: fenced phases, their seconds added to times()); returns its report" )
        .def( "advance", &Run::advance, py::arg( "n" ),
              "n untimed steps, without the GIL while the device works; returns their merged report" )
        .def_property_readonly( "steps_done", []( Run& r ) { return r.model().steps_done(); } )
        .def_property_readonly( "time", []( Run& r ) { return r.model().time(); } )
        .def_property_readonly( "divisions", []( Run& r ) { return r.model().divisions(); } )
        .def_property_readonly( "cells", []( Run& r ) { return r.model().tissue().num_cells(); } )
        .def_property_readonly( "elements", []( Run& r ) { return r.model().tissue().num_elements(); } )
        .def_property_readonly( "precision", []( Run& ) { return std::is_same_v<Scalar, float> ? "float" : "double"; } )
        .def_property_readonly( "box", []( Run& r ) {
            const auto& b = r.layer().box;
            return py::make_tuple( double( b.length( 0 ) ), double( b.length( 1 ) ), double( b.length( 2 ) ) );
        } )
        .def_property_readonly( "footprint", []( Run& r ) { return double( r.layer().footprint ); } )
        .def_property_readonly( "steps", []( Run& r ) { return r.settings().steps; },
                                "the configuration's `steps` (what `morula epidermis` would run)" )
        .def_property_readonly( "output_every", []( Run& r ) { return r.settings().output_every; } )
        .def( "times", []( Run& r ) { return times_dict( r.model().times() ); } )
        .def( "reset_times", []( Run& r ) { r.model().reset_times(); } )
        .def( "checkpoint", &Run::checkpoint, py::arg( "path" ), "writes the whole state (HDF5)" )
        .def( "restart", &Run::restart, py::arg( "path" ),
              "resumes from a checkpoint of a model made from the same configuration" )
        .def( "update_geometry", &Run::update_geometry, "computes the cells' centres and adhesion" )
        .def( "cell_states", &Run::cell_states, "each cell's state (0 basal, 1 suprabasal), computed now" )
        .def_property_readonly( "positions", []( Run& r ) {
            const auto& t = r.model().tissue();
            return r.array( t.positions(), { t.num_elements(), 3 }, "positions" );
        } )
        .def_property_readonly( "element_cell", []( Run& r ) {
            const auto& t = r.model().tissue();
            return r.array( t.element_cell(), { t.num_elements() }, "element_cell" );
        } )
        .def_property_readonly( "element_type", []( Run& r ) {
            const auto& t = r.model().tissue();
            return r.array( t.element_type(), { t.num_elements() }, "element_type" );
        } )
        .def_property_readonly( "cell_offset", []( Run& r ) {
            const auto& t = r.model().tissue();
            return r.array( t.cell_offset(), { t.num_cells() }, "cell_offset" );
        } )
        .def_property_readonly( "cell_count", []( Run& r ) {
            const auto& t = r.model().tissue();
            return r.array( t.cell_count(), { t.num_cells() }, "cell_count" );
        } )
        .def_property_readonly( "centres", []( Run& r ) {
            const auto& t = r.model().tissue();
            return r.array( t.centres(), { t.num_cells(), 3 }, "centres" );
        } )
        .def_property_readonly( "species", []( Run& r ) {
            const auto& t = r.model().tissue();
            return r.array( t.species(), { t.num_cells(), std::int64_t( sem::gene_species ) }, "species" );
        } );
}
} // namespace

void bind_epidermis( py::module_& m )
{
    bind_run<double>( m, "_EpidermisDouble" );
    bind_run<float>( m, "_EpidermisFloat" );
    m.def(
        "_make_epidermis",
        []( const std::string& json, const std::string& name ) -> py::object {
            app::EpidermisSettings s;
            app::read_epidermis_config_text( json, name, s );
            Session::get().require( "morula.Epidermis" );
            if ( s.precision == "float" )
                return py::cast( std::make_unique<EpidermisRun<float>>( s ) );
            return py::cast( std::make_unique<EpidermisRun<double>>( s ) );
        },
        py::arg( "json" ), py::arg( "name" ) );
}
} // namespace morula::python
