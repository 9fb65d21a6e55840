// morula.Epidermis: the 3D epidermis model (sem::Epidermis) built from the configuration `morula
// epidermis` reads (apps/morula/EpidermisSetup.hpp), so that a configuration gives the same run here as on
// the command line, bit for bit.
#include "ModelRun.hpp"

#include <EpidermisSetup.hpp>

#include <morula/io/TissueSnapshots.hpp>
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

// What the model is made from, kept beside it (the box and footprint are the monolayer's): a base class
// so that it is built before the model (bases are constructed in order).
template <class Scalar>
struct EpidermisStart
{
    explicit EpidermisStart( const app::EpidermisSettings& s )
        : settings( s )
        , params( app::epidermis_parameters( s ) )
        , layer( sem::monolayer<Scalar>( app::monolayer_spec( s ), params.mechanics ) )
    {
    }
    app::EpidermisSettings settings;
    sem::EpidermisParameters params;
    sem::Monolayer<Scalar> layer;
};

template <class Scalar>
class EpidermisRun : private EpidermisStart<Scalar>, public ModelRun<sem::Epidermis<Scalar, MemorySpace>>
{
    using start = EpidermisStart<Scalar>;
    using base = ModelRun<sem::Epidermis<Scalar, MemorySpace>>;

  public:
    explicit EpidermisRun( const app::EpidermisSettings& s )
        : start( s )
        , base( "morula.Epidermis", sem::Tissue<Scalar, MemorySpace>( start::layer.tissue ), start::layer.box,
                start::params )
    {
    }

    const app::EpidermisSettings& settings() const { return start::settings; }
    const sem::Monolayer<Scalar>& layer() const { return start::layer; }

    Array cell_states()
    {
        auto states = this->model().cell_states( this->exec() );
        return this->array( states, { this->model().tissue().num_cells() }, "cell_states()" );
    }
    void update_geometry()
    {
        this->model().update_geometry( this->exec() );
        this->exec().fence();
    }
    //! The state as a frame of the series `prefix`, the command's frame (centres updated first).
    void snapshot( const std::string& prefix )
    {
        auto& series = m_snapshots.at( prefix, [&] { return std::make_unique<io::TissueSnapshotWriter>( prefix ); } );
        series.write( app::epidermis_frame( this->model(), this->exec() ) );
    }

  private:
    SnapshotSeriesSet<io::TissueSnapshotWriter> m_snapshots;
};

template <class Scalar>
void bind_run( py::module_& m, const char* name )
{
    using Run = EpidermisRun<Scalar>;
    py::class_<Run> c( m, name );
    bind_model_run( c, report_dict );
    c.def_property_readonly( "time", []( Run& r ) { return r.model().time(); } )
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
        .def( "update_geometry", &Run::update_geometry, "computes the cells' centres and adhesion" )
        .def( "snapshot", &Run::snapshot, py::arg( "prefix" ),
              "writes the state as the frame <prefix>_<step>.h5 of the series <prefix>.xmf (HDF5 + XDMF, the "
              "command's files); the first call with a prefix starts its series" )
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
