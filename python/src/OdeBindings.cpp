// morula.ode: reaction networks (text, LASSIE folder, SBML) and the batched ODE solver, with per-system
// initial states and rate constants from numpy and the samples back as an Array (no copy on the host).
#include "Arrays.hpp"
#include "Bindings.hpp"
#include "Session.hpp"

#include <morula/core/Error.hpp>
#include <morula/ode/MassActionSystem.hpp>
#include <morula/ode/ModelReaders.hpp>
#include <morula/ode/OdeSolver.hpp>
#include <morula/ode/ReactionNetwork.hpp>
#include <morula/ode/SolverOptions.hpp>

#include <Kokkos_Core.hpp>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace morula::python
{
namespace
{
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;
using core::InputError;

template <class Enum>
Enum choose( const std::string& argument, const std::string& value, const std::map<std::string, Enum>& choices )
{
    const auto it = choices.find( value );
    if ( it != choices.end() )
        return it->second;
    std::string names;
    for ( const auto& [name, e] : choices )
        names += ( names.empty() ? "'" : ", '" ) + name + "'";
    throw InputError( core::detail::concat( "morula.ode.solve: ", argument, " = '", value, "' is not one of ", names ) );
}

// The ODE result with what it was asked for: samples and statistics stay where the solver left them
// (released at morula.finalize(), like every Kokkos allocation the module holds).
struct OdeSolution
{
    OdeSolution()
        : key( Session::get().remember( [this] { result = {}; } ) )
    {
    }
    OdeSolution( const OdeSolution& ) = delete;
    OdeSolution& operator=( const OdeSolution& ) = delete;
    ~OdeSolution() { Session::get().forget( key ); }

    std::size_t key;
    ode::OdeResult<MemorySpace> result;
    std::vector<double> times;       // the list every system shares, or every system's row one after the other
    long time_rows = 0;              // > 0: `times` holds this many rows (per-system times)
    std::vector<int> saved;
    std::vector<std::string> species;
    std::shared_ptr<const long long> generation = std::make_shared<long long>( 0 ); // results never change
};

// A (systems, columns) matrix in the solver's memory space from a numpy array (any order: copied, as the
// solver copies its inputs to the device anyway). `columns` names what each row must hold.
Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>
device_matrix( const py::array_t<double, py::array::f_style | py::array::forcecast>& a, long systems, int columns,
               const char* argument, const std::string& columns_are )
{
    if ( a.ndim() != 2 || a.shape( 0 ) != systems || a.shape( 1 ) != columns )
    {
        std::string shape = "(";
        for ( py::ssize_t r = 0; r < a.ndim(); ++r )
            shape += ( r ? ", " : "" ) + std::to_string( a.shape( r ) );
        throw InputError( core::detail::concat( "morula.ode.solve: ", argument, " has shape ", shape, ( a.ndim() == 1 ? ",)" : ")" ),
                                  "; expected (", systems, ", ", columns, "): one row per system, one column per ",
                                  columns_are ) );
    }
    Kokkos::View<const double**, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
        a.data(), std::size_t( systems ), std::size_t( columns ) );
    const std::string label = argument;
    Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> out( label, std::size_t( systems ), std::size_t( columns ) );
    Kokkos::deep_copy( out, host );
    return out;
}

long rows_of( const py::object& a )
{
    if ( a.is_none() )
        return -1;
    py::array arr = py::array::ensure( a );
    if ( !arr || arr.ndim() != 2 )
        throw InputError( "morula.ode.solve: initial_states and rate_constants must be 2-D arrays (systems, columns)" );
    return static_cast<long>( arr.shape( 0 ) );
}

std::unique_ptr<OdeSolution> solve( const ode::ReactionNetwork& network, py::object times, py::object initial_states,
                   py::object rate_constants, const std::string& method, std::optional<std::string> mode,
                   const std::string& precision, std::optional<double> rtol, std::optional<std::vector<double>> atol,
                   std::optional<std::vector<int>> saved, double t_start, std::optional<long> max_steps,
                   const std::string& stiff_method, const std::string& layout, const std::string& sample_output )
{
    Session::get().require( "morula.ode.solve" );
    ode::validate( network );
    const int species = network.species_count();
    const int reactions = network.reaction_count();

    const long x_rows = rows_of( initial_states ), k_rows = rows_of( rate_constants );
    if ( x_rows >= 0 && k_rows >= 0 && x_rows != k_rows )
        throw InputError( core::detail::concat( "morula.ode.solve: initial_states has ", x_rows, " rows and rate_constants ", k_rows,
                                  "; expected one row per system in both" ) );
    // times: a list for every system, or a 2-D array with a row per system (each system's own end time).
    py::array time_rows; // a default py::array is an empty array, not a null handle: `per_system` says
    bool per_system = false;
    if ( !times.is_none() )
    {
        py::array a = py::array::ensure( times );
        if ( a && a.ndim() == 2 )
            time_rows = a, per_system = true;
        else if ( a && a.ndim() > 2 )
            throw InputError( core::detail::concat( "morula.ode.solve: times has ", a.ndim(),
                                                    " dimensions; expected a list, or a 2-D array with a row per system" ) );
    }
    const long t_rows = per_system ? static_cast<long>( time_rows.shape( 0 ) ) : -1;
    for ( const auto& [rows, name] : { std::make_pair( x_rows, "initial_states" ), std::make_pair( k_rows, "rate_constants" ) } )
        if ( t_rows >= 0 && rows >= 0 && rows != t_rows )
            throw InputError( core::detail::concat( "morula.ode.solve: times has ", t_rows, " rows and ", name, " ", rows,
                                                    "; expected one row per system in both" ) );
    const long systems = x_rows >= 0 ? x_rows : k_rows >= 0 ? k_rows : t_rows >= 0 ? t_rows : 1;
    if ( systems < 1 )
        throw InputError( "morula.ode.solve: no systems (the arrays have 0 rows)" );

    // Options: Morula's defaults, then the network file's settings, then the arguments (as the command).
    ode::SolverOptions o;
    if ( network.settings.relative_tolerance )
        o.relative_tolerance = *network.settings.relative_tolerance;
    if ( !network.settings.absolute_tolerances.empty() )
        o.absolute_tolerance = network.settings.absolute_tolerances;
    if ( rtol )
        o.relative_tolerance = *rtol;
    if ( atol )
        o.absolute_tolerance = *atol;
    if ( max_steps )
        o.max_steps = *max_steps;
    o.method = choose<ode::Method>( "method", method,
                                    { { "auto", ode::Method::automatic },
                                      { "rkf45", ode::Method::rkf45 },
                                      { "bdf", ode::Method::bdf },
                                      { "rodas5p", ode::Method::rodas5p },
                                      { "rodas4", ode::Method::rodas4 },
                                      { "rosenbrock23", ode::Method::rosenbrock23 } } );
    o.stiff_method = choose<ode::Method>( "stiff_method", stiff_method,
                                          { { "auto", ode::Method::automatic }, { "bdf", ode::Method::bdf },
                                            { "rodas5p", ode::Method::rodas5p } } );
    if ( o.method != ode::Method::automatic && o.stiff_method != ode::Method::automatic )
        throw InputError( "morula.ode.solve: stiff_method chooses what method='auto' uses while stiff; it does not "
                          "apply to method='" + method + "'" );
    o.mode = mode ? choose<ode::ExecutionMode>( "mode", *mode,
                                                { { "batched", ode::ExecutionMode::batched },
                                                  { "fine", ode::ExecutionMode::fine_grained },
                                                  { "device", ode::ExecutionMode::device_wide } } )
                  : ode::default_execution_mode( systems, species, reactions, o );
    o.batched_layout = choose<ode::BatchedLayout>( "layout", layout,
                                                   { { "auto", ode::BatchedLayout::automatic },
                                                     { "interleaved", ode::BatchedLayout::interleaved },
                                                     { "on-chip", ode::BatchedLayout::on_chip } } );
    o.sample_output = choose<ode::SampleOutput>( "sample_output", sample_output,
                                                 { { "auto", ode::SampleOutput::automatic },
                                                   { "dense", ode::SampleOutput::dense },
                                                   { "steps", ode::SampleOutput::step_to_sample } } );
    o.precision = choose<ode::Precision>(
        "precision", precision,
        { { "double", ode::Precision::double_precision }, { "single", ode::Precision::single_precision } } );

    std::vector<double> sample_times = times.is_none() ? network.settings.sample_times
                                       : per_system    ? std::vector<double>{}
                                                       : times.cast<std::vector<double>>();
    if ( sample_times.empty() && !per_system )
        throw InputError( core::detail::concat( "morula.ode.solve: no sample times: give times=[...] (", network.source,
                                  " has none)" ) );
    const std::vector<int> saved_species = saved ? *saved : network.settings.saved_species;

    ode::MassActionSystem<MemorySpace> system( network );
    ode::OdeSolver<ExecutionSpace> solver( system, o );
    using Matrix = Kokkos::View<const double**, Kokkos::LayoutLeft, MemorySpace>;
    Matrix x0, k;
    if ( !initial_states.is_none() )
        x0 = device_matrix( initial_states.cast<py::array_t<double, py::array::f_style | py::array::forcecast>>(),
                            systems, species, "initial_states", "species" );
    else
    {
        Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> h( "initial_states", std::size_t( systems ),
                                                                         std::size_t( species ) );
        for ( long s = 0; s < systems; ++s )
            for ( int j = 0; j < species; ++j )
                h( s, j ) = network.initial_state[std::size_t( j )];
        Kokkos::View<double**, Kokkos::LayoutLeft, MemorySpace> d( "initial_states", std::size_t( systems ),
                                                                   std::size_t( species ) );
        Kokkos::deep_copy( d, h );
        x0 = d;
    }
    if ( !rate_constants.is_none() )
        k = device_matrix( rate_constants.cast<py::array_t<double, py::array::f_style | py::array::forcecast>>(),
                           systems, reactions, "rate_constants", "reaction" );

    Matrix system_times;
    if ( per_system )
    {
        const auto rows = time_rows.cast<py::array_t<double, py::array::f_style | py::array::forcecast>>();
        system_times = device_matrix( rows, systems, static_cast<int>( rows.shape( 1 ) ), "times", "sample" );
        // Row after row, as Solution.times gives them back, from the (column-major) host array itself.
        const py::ssize_t columns = rows.shape( 1 );
        for ( long s = 0; s < systems; ++s )
            for ( py::ssize_t i = 0; i < columns; ++i )
                sample_times.push_back( rows.data()[s + i * systems] );
    }

    auto solution = std::make_unique<OdeSolution>();
    OdeSolution& out = *solution;
    {
        py::gil_scoped_release unlocked;
        ExecutionSpace exec;
        out.result = per_system ? solver.solve( exec, x0, k, system_times, saved_species, t_start )
                               : solver.solve( exec, x0, k, sample_times, saved_species, t_start );
        exec.fence();
    }
    out.times = sample_times;
    out.time_rows = per_system ? systems : 0;
    if ( saved_species.empty() )
        for ( int j = 0; j < species; ++j )
            out.saved.push_back( j );
    else
        out.saved = saved_species;
    for ( int j : out.saved )
        out.species.push_back( network.species_names[std::size_t( j )] );
    return solution;
}

std::vector<double> rate_constants_of( const ode::ReactionNetwork& n )
{
    std::vector<double> k;
    for ( const auto& r : n.reactions )
        k.push_back( r.rate_constant );
    return k;
}
} // namespace

void bind_ode( py::module_& parent )
{
    py::module_ m = parent.def_submodule( "ode", "mass-action reaction networks and their batched ODE solver" );

    py::class_<ode::ReactionNetwork>( m, "ReactionNetwork", "a mass-action reaction network" )
        .def_property_readonly( "species", []( const ode::ReactionNetwork& n ) { return n.species_names; } )
        .def_property_readonly( "num_species", &ode::ReactionNetwork::species_count )
        .def_property_readonly( "num_reactions", &ode::ReactionNetwork::reaction_count )
        .def_property_readonly( "initial_state",
                                []( const ode::ReactionNetwork& n ) { return py::array( py::cast( n.initial_state ) ); } )
        .def_property_readonly( "rate_constants",
                                []( const ode::ReactionNetwork& n ) { return py::array( py::cast( rate_constants_of( n ) ) ); } )
        .def_property_readonly( "sample_times", []( const ode::ReactionNetwork& n ) { return n.settings.sample_times; } )
        .def_property_readonly( "source", []( const ode::ReactionNetwork& n ) { return n.source; } )
        .def( "__repr__", []( const ode::ReactionNetwork& n ) {
            return core::detail::concat( "morula.ode.ReactionNetwork('", n.source, "': ", n.species_count(), " species, ",
                           n.reaction_count(), " reactions)" );
        } );

    m.def( "parse_text", &ode::parse_text_model, py::arg( "text" ), py::arg( "source" ) = "<text>",
           "a network from the text format (docs/models/ode.md)" );
    m.def( "read_model", &ode::read_model, py::arg( "path" ),
           "a network from a text model, a LASSIE folder or an SBML file (by what `path` is)" );

    py::class_<OdeSolution>( m, "Solution", "what solve() returns: samples, statistics, status per system" )
        .def_property_readonly( "samples",
                                []( const OdeSolution& s ) {
                                    Session::get().require( "morula.ode.Solution.samples" );
                                    const auto& v = s.result.samples;
                                    return Array( v,
                                                  { std::int64_t( v.extent( 0 ) ), std::int64_t( v.extent( 1 ) ),
                                                    std::int64_t( v.extent( 2 ) ) },
                                                  s.generation, "morula.ode.Solution.samples" );
                                },
                                "(systems, samples, saved species); NaN where a failed system did not reach" )
        .def_property_readonly( "statistics",
                                []( const OdeSolution& s ) {
                                    Session::get().require( "morula.ode.Solution.statistics" );
                                    const auto& v = s.result.statistics;
                                    return Array( v, { std::int64_t( v.extent( 0 ) ), std::int64_t( v.extent( 1 ) ) },
                                                  s.generation, "morula.ode.Solution.statistics" );
                                },
                                "(systems, columns): status, then the counters named by statistics_columns" )
        .def_property_readonly( "status",
                                []( const OdeSolution& s ) {
                                    Session::get().require( "morula.ode.Solution.status" );
                                    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), s.result.statistics );
                                    std::vector<std::string> status;
                                    for ( std::size_t i = 0; i < h.extent( 0 ); ++i )
                                        status.push_back( ode::to_string( ode::SolverStatus( h( i, ode::stat_status ) ) ) );
                                    return status;
                                },
                                "per system: 'success', 'max_steps', 'step_too_small', ..." )
        .def_property_readonly(
            "times",
            []( const OdeSolution& s ) -> py::object {
                if ( s.time_rows == 0 )
                    return py::cast( s.times );
                const py::ssize_t columns = static_cast<py::ssize_t>( s.times.size() ) / s.time_rows;
                py::array_t<double> a( { static_cast<py::ssize_t>( s.time_rows ), columns } );
                std::copy( s.times.begin(), s.times.end(), a.mutable_data() );
                return std::move( a );
            },
            "the sample times: a list, or (systems, samples) when each system had its own" )
        .def_property_readonly( "saved_species", []( const OdeSolution& s ) { return s.saved; } )
        .def_property_readonly( "species", []( const OdeSolution& s ) { return s.species; } );

    static_assert( ode::stat_count == 12, "statistics_columns names every column of ode::StatisticsColumn" );
    m.attr( "statistics_columns" ) =
        std::vector<std::string>{ "status", "steps", "rejected", "rkf_steps", "bdf_steps", "switches_to_bdf",
                                  "switches_to_rkf", "newton_iterations", "jacobians", "factorizations",
                                  "rhs_evaluations", "linear_iterations" };

    m.def( "solve", &solve, py::arg( "network" ), py::arg( "times" ) = py::none(), py::arg( "initial_states" ) = py::none(),
           py::arg( "rate_constants" ) = py::none(), py::arg( "method" ) = "auto", py::arg( "mode" ) = py::none(),
           py::arg( "precision" ) = "double", py::arg( "rtol" ) = py::none(), py::arg( "atol" ) = py::none(),
           py::arg( "saved" ) = py::none(), py::arg( "t_start" ) = 0.0, py::arg( "max_steps" ) = py::none(),
           py::arg( "stiff_method" ) = "auto", py::arg( "layout" ) = "auto", py::arg( "sample_output" ) = "auto",
           "integrates one system (the network's own state and rates) or a batch: initial_states (systems, species) "
           "and/or rate_constants (systems, reactions) as arrays; times a list for every system or a (systems, "
           "samples) array, each system's own times (its own end time); the GIL is released while it runs" );
}
} // namespace morula::python
