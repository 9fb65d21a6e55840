// What every model class of the module does the same way, so that no binding writes it again: the driver
// owned by the session, `step()` and `advance(n)` without the GIL (each bumps the state generation, so
// that the arrays taken before go stale), the phase times, checkpoint and restart, and arrays of its state.
// A model's binding adds its construction from the command's settings and its own properties.
#ifndef MORULA_PYTHON_MODELRUN_HPP
#define MORULA_PYTHON_MODELRUN_HPP

#include "Arrays.hpp"
#include "Bindings.hpp"
#include "Session.hpp"

#include <morula/core/Error.hpp>
#include <morula/io/Checkpoint.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace morula::python
{

/*!
  The snapshot series a model writes from Python, one writer per prefix: a model's first snapshot() with
  a prefix starts that series (removing the frames of an earlier series with the prefix, as the command
  does when it starts), later ones add frames to it. The files are the command's: `<prefix>_<step>.h5`
  per frame and, for the particle models, the XDMF index `<prefix>.xmf`.
*/
template <class Writer>
class SnapshotSeriesSet
{
  public:
    //! The series of `prefix`, made by `make()` (a std::unique_ptr<Writer>) on first use.
    template <class Make>
    Writer& at( const std::string& prefix, Make make )
    {
        if ( prefix.empty() )
            throw core::InputError( "snapshot: the prefix is empty (expected a path such as 'out/run')" );
        auto it = m_series.find( prefix );
        if ( it == m_series.end() )
            it = m_series.emplace( prefix, make() ).first;
        return *it->second;
    }

  private:
    std::map<std::string, std::unique_ptr<Writer>> m_series;
};

template <class Model>
class ModelRun
{
  public:
    using model_type = Model;
    using execution_space = Kokkos::DefaultExecutionSpace;
    using report_type = decltype( std::declval<Model&>().step( std::declval<const execution_space&>(), false ) );

    //! `name` (e.g. "morula.Epidermis") names the model in errors and in its arrays' descriptions.
    template <class... Args>
    explicit ModelRun( const char* name, Args&&... args )
        : m_name( name )
        , m_model( name, std::forward<Args>( args )... )
    {
    }

    model_type& model() { return m_model.get(); }
    //! Marks the model's arrays as moved: the Arrays taken before go stale.
    void changed() { m_model.changed(); }
    const execution_space& exec() const { return m_exec; }

    report_type step( bool timed )
    {
        report_type r;
        {
            py::gil_scoped_release unlocked;
            r = model().step( m_exec, timed );
        }
        m_model.changed();
        return r;
    }
    report_type advance( long long n )
    {
        if ( n < 0 )
            throw core::InputError( core::detail::concat( m_name, ".advance: n = ", n, " (expected >= 0)" ) );
        report_type r;
        {
            py::gil_scoped_release unlocked;
            r = model().advance( m_exec, n );
        }
        m_model.changed();
        return r;
    }
    void checkpoint( const std::string& path ) { io::write_checkpoint( model(), path ); }
    void restart( const std::string& path )
    {
        io::restart_from_checkpoint( model(), path );
        m_model.changed();
    }

    //! An Array over `v` (shape as given), stale after the model's next change.
    template <class View>
    Array array( const View& v, std::vector<std::int64_t> shape, const char* what )
    {
        return Array( v, std::move( shape ), m_model.generation(), std::string( m_name ) + "." + what );
    }

  private:
    const char* m_name;
    Owned<model_type> m_model;
    execution_space m_exec;
};

//! Binds what every model class shares onto `c`; `report(r)` turns a step's report into a dict.
template <class Run, class Report>
void bind_model_run( py::class_<Run>& c, Report report )
{
    c.def(
         "step", [report]( Run& r, bool timed ) { return report( r.step( timed ) ); }, py::arg( "timed" ) = false,
         "one step (timed: fenced phases, their seconds added to times()); returns its report" )
        .def(
            "advance", [report]( Run& r, long long n ) { return report( r.advance( n ) ); }, py::arg( "n" ),
            "n untimed steps, without the GIL while the device works; returns their merged report" )
        .def_property_readonly( "steps_done", []( Run& r ) { return r.model().steps_done(); } )
        .def( "times", []( Run& r ) { return times_dict( r.model().times() ); },
              "seconds per phase of the timed steps, counts, their number and total" )
        .def( "reset_times", []( Run& r ) { r.model().reset_times(); } )
        .def( "checkpoint", &Run::checkpoint, py::arg( "path" ), "writes the whole state (HDF5)" )
        .def( "restart", &Run::restart, py::arg( "path" ),
              "resumes from a checkpoint of a model made from the same configuration" );
}
} // namespace morula::python

#endif
