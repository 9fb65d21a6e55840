// morula.Box and morula.UniformGrid: the sorted uniform grid (cell lists) on another code's particles.
// Positions come in without a copy from anything that speaks DLPack (numpy, CuPy, PyTorch, JAX, a
// morula.Array) or the buffer protocol, in the build's memory space; neighbour counts and the CSR
// neighbour list go out as morula.Array.
#include "Arrays.hpp"
#include "Bindings.hpp"
#include "Session.hpp"

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/UniformGrid.hpp>

#include <Kokkos_Core.hpp>
#include <pybind11/stl.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace morula::python
{
using GridExecutionSpace = Kokkos::DefaultExecutionSpace;
using GridMemorySpace = GridExecutionSpace::memory_space;

//! Positions read in place: a (n, 3) View over the caller's memory and what keeps that memory alive.
template <class Scalar>
struct PositionsIn
{
    using view_type = Kokkos::View<const Scalar**, Kokkos::LayoutStride, GridMemorySpace,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    view_type view;
    py::object owner;                        //!< the Python object the memory belongs to
    std::shared_ptr<DLManagedTensor> tensor; //!< a consumed DLPack tensor, deleted when let go
};

namespace detail
{
inline std::string grid_what( const char* argument ) { return std::string( "morula.UniformGrid." ) + argument; }

template <class Scalar>
PositionsIn<Scalar> positions_from_dlpack( const py::object& array, const char* argument )
{
    py::object capsule_object = array.attr( "__dlpack__" )();
    PyObject* capsule = capsule_object.ptr();
    if ( !PyCapsule_IsValid( capsule, "dltensor" ) )
        throw core::InputError( grid_what( argument ) + ": __dlpack__() did not return an unused DLPack capsule" );
    auto* t = static_cast<DLManagedTensor*>( PyCapsule_GetPointer( capsule, "dltensor" ) );
    // The tensor is ours from here on (the DLPack protocol): rename the capsule, delete it when done.
    PyCapsule_SetName( capsule, "used_dltensor" );
    std::shared_ptr<DLManagedTensor> tensor( t, []( DLManagedTensor* p ) {
        if ( p->deleter )
            p->deleter( p );
    } );
    const DLTensor& d = t->dl_tensor;
    const DLDevice expected = morula::python::detail::dlpack_device<GridMemorySpace>();
    const bool host_ok = expected.device_type == kDLCPU &&
                         ( d.device.device_type == kDLCPU || d.device.device_type == kDLCUDAHost ||
                           d.device.device_type == kDLCUDAManaged || d.device.device_type == kDLROCMHost );
    if ( !host_ok && ( d.device.device_type != expected.device_type || d.device.device_id != expected.device_id ) )
        throw core::InputError( core::detail::concat( grid_what( argument ), ": the array is on DLPack device (",
                                                      int( d.device.device_type ), ", ", d.device.device_id,
                                                      "); this build's grid reads memory of device (",
                                                      int( expected.device_type ), ", ", expected.device_id,
                                                      ") (", GridMemorySpace::name(), ")" ) );
    if ( d.dtype.code != kDLFloat || d.dtype.bits != 8 * sizeof( Scalar ) || d.dtype.lanes != 1 )
        throw core::InputError( core::detail::concat(
            grid_what( argument ), ": the array holds ", d.dtype.code == kDLFloat ? "float" : "non-float", int( d.dtype.bits ),
            " values; expected float", 8 * sizeof( Scalar ),
            " (the grid's precision: make the grid with the other precision, or convert the array)" ) );
    if ( d.ndim != 2 || d.shape[1] != 3 )
        throw core::InputError( core::detail::concat( grid_what( argument ), ": the array has ", d.ndim,
                                                      " dimensions", d.ndim >= 2 ? " and shape[1] = " : "",
                                                      d.ndim >= 2 ? std::to_string( d.shape[1] ) : std::string(),
                                                      "; expected shape (n, 3)" ) );
    const std::int64_t s0 = d.strides ? d.strides[0] : 3, s1 = d.strides ? d.strides[1] : 1;
    PositionsIn<Scalar> in;
    in.view = typename PositionsIn<Scalar>::view_type(
        reinterpret_cast<const Scalar*>( static_cast<const char*>( d.data ) + d.byte_offset ),
        Kokkos::LayoutStride( std::size_t( d.shape[0] ), std::size_t( s0 ), 3, std::size_t( s1 ) ) );
    in.owner = array;
    in.tensor = std::move( tensor );
    return in;
}

template <class Scalar>
PositionsIn<Scalar> positions_from_buffer( const py::object& array, const char* argument )
{
    if constexpr ( !Kokkos::SpaceAccessibility<Kokkos::HostSpace, GridMemorySpace>::accessible )
        throw core::InputError( core::detail::concat( grid_what( argument ),
                                                      ": the grid reads device memory (", GridMemorySpace::name(),
                                                      "); give an array with __dlpack__ on that device" ) );
    else
    {
        py::buffer buffer = py::reinterpret_borrow<py::buffer>( array );
        py::buffer_info info = buffer.request();
        if ( info.format != py::format_descriptor<Scalar>::format() || info.itemsize != sizeof( Scalar ) )
            throw core::InputError( core::detail::concat( grid_what( argument ), ": the buffer holds format '", info.format,
                                                          "'; expected float", 8 * sizeof( Scalar ),
                                                          " (the grid's precision)" ) );
        if ( info.ndim != 2 || info.shape[1] != 3 )
            throw core::InputError( grid_what( argument ) + ": the buffer is not of shape (n, 3)" );
        if ( info.strides[0] % info.itemsize || info.strides[1] % info.itemsize )
            throw core::InputError( grid_what( argument ) + ": the buffer's strides are not whole elements" );
        PositionsIn<Scalar> in;
        in.view = typename PositionsIn<Scalar>::view_type(
            static_cast<const Scalar*>( info.ptr ),
            Kokkos::LayoutStride( std::size_t( info.shape[0] ), std::size_t( info.strides[0] / info.itemsize ), 3,
                                  std::size_t( info.strides[1] / info.itemsize ) ) );
        in.owner = array;
        return in;
    }
}

template <class Scalar>
PositionsIn<Scalar> positions_in( const py::object& array, const char* argument )
{
    if ( py::hasattr( array, "__dlpack__" ) )
        return positions_from_dlpack<Scalar>( array, argument );
    if ( PyObject_CheckBuffer( array.ptr() ) )
        return positions_from_buffer<Scalar>( array, argument );
    throw core::InputError( grid_what( argument ) +
                            ": expected an array with __dlpack__ or the buffer protocol, shape (n, 3)" );
}

//! counts(i) = the neighbours of particle i within `radius` (a kernel: external linkage for nvcc).
template <class Query>
Kokkos::View<int*, GridMemorySpace> count_neighbors( const GridExecutionSpace& exec, const Query& query, int n,
                                                     typename Query::scalar_type radius )
{
    Kokkos::View<int*, GridMemorySpace> counts( "morula::python::neighbor_counts", std::size_t( n ) );
    Kokkos::parallel_for(
        "morula::python::count_neighbors", core::LaunchRange<GridExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) { counts( i ) = query.count_neighbors( i, radius ); } );
    return counts;
}
} // namespace detail

template <class Scalar>
class GridHandle
{
  public:
    using grid_type = grid::UniformGrid<Scalar, GridMemorySpace>;

    GridHandle( const core::Box<double>& box, double cutoff, grid::CellOrdering ordering )
        : m_box( narrowed( box ) )
        , m_cutoff( static_cast<Scalar>( cutoff ) )
        , m_grid( "morula.UniformGrid", m_box, m_cutoff, grid::GridOptions{ ordering } )
    {
    }

    void build( const py::object& positions )
    {
        auto in = detail::positions_in<Scalar>( positions, "build" );
        const auto n = in.view.extent( 0 );
        if ( n > std::size_t( INT_MAX ) )
            throw core::InputError( core::detail::concat( "morula.UniformGrid.build: ", n, " particles; at most ", INT_MAX ) );
        m_grid.get().build( m_exec, in.view, int( n ) );
        m_exec.fence();
        m_positions = std::move( in );
        m_built = true;
        m_grid.changed();
    }

    Array neighbor_counts( std::optional<double> radius )
    {
        const auto& g = built( "neighbor_counts" );
        auto counts = detail::count_neighbors( m_exec, g.query( m_positions.view ), g.num_particles(),
                                               checked_radius( radius, "neighbor_counts" ) );
        m_exec.fence();
        return Array( counts, { std::int64_t( counts.extent( 0 ) ) }, m_grid.generation(),
                      "morula.UniformGrid.neighbor_counts()" );
    }

    py::tuple neighbor_list( std::optional<double> radius )
    {
        const auto& g = built( "neighbor_list" );
        grid::NeighborList<Scalar, GridMemorySpace> list;
        list.build( m_exec, g.query( m_positions.view ), checked_radius( radius, "neighbor_list" ) );
        m_exec.fence();
        auto offsets = list.offsets();
        auto indices = list.indices();
        const std::int64_t n = g.num_particles();
        Array o( offsets, { n + 1 }, m_grid.generation(), "morula.UniformGrid.neighbor_list() offsets" );
        Array i( indices, { std::int64_t( list.num_pairs() ) }, m_grid.generation(),
                 "morula.UniformGrid.neighbor_list() indices" );
        return py::make_tuple( o, i );
    }

    Array index_array( typename grid_type::index_view v, std::int64_t n, const char* what )
    {
        built( what );
        return Array( v, { n }, m_grid.generation(), std::string( "morula.UniformGrid." ) + what );
    }

    grid_type& grid() { return m_grid.get(); }
    std::uintptr_t positions_pointer() const { return reinterpret_cast<std::uintptr_t>( m_positions.view.data() ); }
    double cutoff() const { return double( m_cutoff ); }

  private:
    static core::Box<Scalar> narrowed( const core::Box<double>& b )
    {
        Kokkos::Array<Scalar, 3> lo, hi;
        Kokkos::Array<core::Boundary, 3> kinds;
        for ( int d = 0; d < 3; ++d )
        {
            lo[d] = Scalar( b.lo[d] );
            hi[d] = Scalar( b.hi[d] );
            kinds[d] = b.boundary[d];
        }
        return core::Box<Scalar>( lo, hi, kinds );
    }
    const grid_type& built( const char* what )
    {
        if ( !m_built )
            throw core::InputError( std::string( "morula.UniformGrid." ) + what + ": build(positions) first" );
        return m_grid.get();
    }
    Scalar checked_radius( std::optional<double> radius, const char* what ) const
    {
        const double r = radius ? *radius : double( m_cutoff );
        if ( !( r > 0 ) || Scalar( r ) > m_cutoff )
            throw core::InputError( core::detail::concat( "morula.UniformGrid.", what, ": radius = ", r,
                                                          "; expected 0 < radius <= the grid's cutoff ", double( m_cutoff ) ) );
        return Scalar( r );
    }

    core::Box<Scalar> m_box;
    Scalar m_cutoff;
    Owned<grid_type> m_grid;
    PositionsIn<Scalar> m_positions;
    bool m_built = false;
    GridExecutionSpace m_exec;
};

namespace
{
core::Boundary boundary_of( const std::string& name )
{
    if ( name == "periodic" )
        return core::Boundary::periodic;
    if ( name == "closed" )
        return core::Boundary::closed;
    if ( name == "open" )
        return core::Boundary::open;
    throw core::InputError( "morula.Box: boundary '" + name + "' is not one of 'periodic', 'closed', 'open'" );
}

core::Box<double> make_box( std::array<double, 3> lo, std::array<double, 3> hi, py::object boundary )
{
    Kokkos::Array<core::Boundary, 3> kinds;
    if ( py::isinstance<py::str>( boundary ) )
        kinds[0] = kinds[1] = kinds[2] = boundary_of( boundary.cast<std::string>() );
    else
    {
        const auto names = boundary.cast<std::vector<std::string>>();
        if ( names.size() != 3 )
            throw core::InputError( core::detail::concat( "morula.Box: boundary has ", names.size(),
                                                          " entries; expected one name or three (x, y, z)" ) );
        for ( int d = 0; d < 3; ++d )
            kinds[d] = boundary_of( names[std::size_t( d )] );
    }
    core::Box<double> box( { lo[0], lo[1], lo[2] }, { hi[0], hi[1], hi[2] }, kinds );
    box.validate( "morula.Box" );
    return box;
}

grid::CellOrdering ordering_of( const std::string& name )
{
    if ( name == "row_major" )
        return grid::CellOrdering::row_major;
    if ( name == "morton" )
        return grid::CellOrdering::morton;
    if ( name == "morton_rows" )
        return grid::CellOrdering::morton_rows;
    throw core::InputError( "morula.UniformGrid: ordering '" + name + "' is not one of 'row_major', 'morton', 'morton_rows'" );
}

template <class Scalar>
void bind_grid( py::module_& m, const char* name )
{
    using H = GridHandle<Scalar>;
    py::class_<H>( m, name )
        .def( "build", &H::build, py::arg( "positions" ),
              "bins (n, 3) positions read in place (DLPack or buffer protocol, the grid's precision)" )
        .def( "neighbor_counts", &H::neighbor_counts, py::arg( "radius" ) = py::none(),
              "each particle's neighbours within radius (default: the cutoff), as an Array" )
        .def( "neighbor_list", &H::neighbor_list, py::arg( "radius" ) = py::none(),
              "the CSR list (offsets (n + 1), indices) of neighbours within radius, as Arrays" )
        .def_property_readonly( "cell_offsets", []( H& h ) {
            return h.index_array( h.grid().cell_offsets(), h.grid().num_cells() + 1, "cell_offsets" );
        } )
        .def_property_readonly( "permutation", []( H& h ) {
            return h.index_array( h.grid().permutation(), h.grid().num_particles(), "permutation" );
        } )
        .def_property_readonly( "particle_cells", []( H& h ) {
            return h.index_array( h.grid().particle_cells(), h.grid().num_particles(), "particle_cells" );
        } )
        .def_property_readonly( "num_cells", []( H& h ) { return h.grid().num_cells(); } )
        .def_property_readonly( "num_particles", []( H& h ) { return h.grid().num_particles(); } )
        .def_property_readonly( "cells_per_axis", []( H& h ) {
            const auto& g = h.grid().geometry();
            return py::make_tuple( g.ncell[0], g.ncell[1], g.ncell[2] );
        } )
        .def_property_readonly( "cutoff", &H::cutoff )
        .def_property_readonly( "positions_pointer", &H::positions_pointer,
                                "address of the positions the grid reads (the caller's memory: no copy)" );
}
} // namespace

void bind_grid( py::module_& m )
{
    py::class_<core::Box<double>>( m, "Box", "a box with periodic, closed or open faces along each axis" )
        .def( py::init( &make_box ), py::arg( "lo" ), py::arg( "hi" ), py::arg( "boundary" ) = "closed" )
        .def_property_readonly( "lo", []( const core::Box<double>& b ) { return py::make_tuple( b.lo[0], b.lo[1], b.lo[2] ); } )
        .def_property_readonly( "hi", []( const core::Box<double>& b ) { return py::make_tuple( b.hi[0], b.hi[1], b.hi[2] ); } )
        .def_property_readonly( "boundary", []( const core::Box<double>& b ) {
            return py::make_tuple( core::to_string( b.boundary[0] ), core::to_string( b.boundary[1] ),
                                   core::to_string( b.boundary[2] ) );
        } );
    bind_grid<double>( m, "_UniformGridDouble" );
    bind_grid<float>( m, "_UniformGridFloat" );
    m.def(
        "_make_grid",
        []( const core::Box<double>& box, double cutoff, const std::string& precision, const std::string& ordering ) -> py::object {
            Session::get().require( "morula.UniformGrid" );
            if ( precision == "float" )
                return py::cast( std::make_unique<GridHandle<float>>( box, cutoff, ordering_of( ordering ) ) );
            if ( precision == "double" )
                return py::cast( std::make_unique<GridHandle<double>>( box, cutoff, ordering_of( ordering ) ) );
            throw core::InputError( "morula.UniformGrid: precision '" + precision + "' is not one of 'double', 'float'" );
        },
        py::arg( "box" ), py::arg( "cutoff" ), py::arg( "precision" ), py::arg( "ordering" ) );
}
} // namespace morula::python
