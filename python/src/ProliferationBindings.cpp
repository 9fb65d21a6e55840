// morula.Proliferation: sphere cells that grow, divide and push each other (mechanics::Proliferation, one
// rank), built from the configuration `morula proliferation` reads (apps/morula/ProliferationSetup.hpp),
// so that a configuration gives the same run here as on the command line, bit for bit.
#include "ModelRun.hpp"

#include <ProliferationSetup.hpp>

#include <morula/io/AgentSnapshots.hpp>
#include <morula/mechanics/Proliferation.hpp>

#include <Kokkos_Core.hpp>
#include <pybind11/stl.h>

#include <string>
#include <type_traits>
#include <utility>

namespace morula::python
{
namespace
{
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;

py::dict report_dict( const mechanics::ProliferationReport& r )
{
    py::dict d;
    d["step"] = r.step;
    d["divisions"] = r.divisions;
    d["sorted"] = r.sorted;
    d["interacting_pairs"] = r.interactions;
    return d;
}

template <class Scalar>
class ProliferationRun : public ModelRun<mechanics::Proliferation<Scalar, MemorySpace>>
{
    using base = ModelRun<mechanics::Proliferation<Scalar, MemorySpace>>;

  public:
    explicit ProliferationRun( const app::ProliferationSettings& s )
        : base( "morula.Proliferation", make_model( s ) )
        , m_settings( s )
    {
        // As the command on one rank: every step counts its interacting pairs (its report says so).
        this->model().set_count_interactions( true );
        m_first_id = this->model().agents().next_id();
    }

    const app::ProliferationSettings& settings() const { return m_settings; }
    //! Divisions since the model was made (a restart keeps counting from its checkpoint, as the command).
    long long divisions() { return this->model().agents().next_id() - m_first_id; }
    //! The agents as a frame of the series `prefix`, the command's frame (time = step x time_step).
    void snapshot( const std::string& prefix )
    {
        auto& series = m_snapshots.at( prefix, [&] { return std::make_unique<io::AgentSnapshotWriter>( prefix ); } );
        const auto& a = this->model().agents();
        const long long step = this->model().steps_done();
        series.write_views( step, double( step ) * m_settings.time_step, a.positions(), a.diameters(), a.ids(),
                            a.size() );
    }

  private:
    static typename base::model_type make_model( const app::ProliferationSettings& s )
    {
        auto setup = app::make_proliferation_setup<Scalar>( s, ExecutionSpace() );
        return typename base::model_type( std::move( setup.agents ), setup.box, setup.mechanics, setup.growth );
    }

    app::ProliferationSettings m_settings;
    std::int64_t m_first_id = 0;
    SnapshotSeriesSet<io::AgentSnapshotWriter> m_snapshots;
};

template <class Scalar>
void bind_run( py::module_& m, const char* name )
{
    using Run = ProliferationRun<Scalar>;
    py::class_<Run> c( m, name );
    bind_model_run( c, report_dict );
    c.def_property_readonly( "agents", []( Run& r ) { return r.model().agents().size(); } )
        .def_property_readonly( "divisions", &Run::divisions )
        .def( "snapshot", &Run::snapshot, py::arg( "prefix" ),
              "writes the agents as the frame <prefix>_<step>.h5 of the series <prefix>.xmf (HDF5 + XDMF, the "
              "command's files); the first call with a prefix starts its series" )
        .def_property_readonly( "next_id", []( Run& r ) { return r.model().agents().next_id(); } )
        .def_property_readonly( "precision", []( Run& ) { return std::is_same_v<Scalar, float> ? "float" : "double"; } )
        .def_property_readonly( "scenario", []( Run& r ) { return r.settings().scenario; } )
        .def_property_readonly( "box", []( Run& r ) {
            const auto& b = r.model().box();
            return py::make_tuple( py::make_tuple( double( b.lo[0] ), double( b.lo[1] ), double( b.lo[2] ) ),
                                   py::make_tuple( double( b.hi[0] ), double( b.hi[1] ), double( b.hi[2] ) ) );
        } )
        .def_property_readonly( "steps", []( Run& r ) { return r.settings().steps; },
                                "the configuration's `steps` (what `morula proliferation` would run)" )
        .def_property_readonly( "positions", []( Run& r ) {
            const auto& a = r.model().agents();
            return r.array( a.positions(), { std::int64_t( a.size() ), 3 }, "positions" );
        } )
        .def_property_readonly( "diameters", []( Run& r ) {
            const auto& a = r.model().agents();
            return r.array( a.diameters(), { std::int64_t( a.size() ) }, "diameters" );
        } )
        .def_property_readonly( "ids", []( Run& r ) {
            const auto& a = r.model().agents();
            return r.array( a.ids(), { std::int64_t( a.size() ) }, "ids" );
        } );
}
} // namespace

void bind_proliferation( py::module_& m )
{
    bind_run<double>( m, "_ProliferationDouble" );
    bind_run<float>( m, "_ProliferationFloat" );
    m.def(
        "_make_proliferation",
        []( const std::string& json, const std::string& name ) -> py::object {
            app::ProliferationSettings s;
            app::read_proliferation_config_text( json, name, s );
            Session::get().require( "morula.Proliferation" );
            if ( s.precision == "float" )
                return py::cast( std::make_unique<ProliferationRun<float>>( s ) );
            return py::cast( std::make_unique<ProliferationRun<double>>( s ) );
        },
        py::arg( "json" ), py::arg( "name" ) );
}
} // namespace morula::python
