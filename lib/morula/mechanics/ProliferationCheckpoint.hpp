/*!
  \file ProliferationCheckpoint.hpp
  \brief The checkpoint layout of the proliferation model, on one rank and over several
  (mechanics::Proliferation with a decomposition), so that a checkpoint of any rank count restarts on any
  other.

  Entries (Scalar: float32 or float64, the run's precision; a float run refuses a double checkpoint):
  - "step" (int64): steps done; it is also the step index of the growth's counter-based RNG, whose
    seed is a parameter;
  - "agents/position" (n x 3), "agents/diameter", "agents/adherence", "agents/density" (n), "agents/id"
    (int64, n), in memory order (a distributed run's owned agents rank after rank), "agents/next_id"
    and "agents/capacity" (int64);
  - "parameters/...": the box, the mechanics and the growth parameters, compared on restart: a
    checkpoint of other parameters is refused, naming the parameter and both values;
  - one rank: "mechanics/grid_builds" and, once built, "mechanics/grid_lo", "mechanics/grid_hi",
    "mechanics/grid_cutoff": the grid's updates (the sort's phase) and its box and cell size (which
    follow the agents along open axes and only grow, and decide the cell order);
  - distributed: "distributed/ranks", "distributed/dims" (int32) and per rank (rank order)
    "distributed/owned", "distributed/capacity", "distributed/grid_builds" (int64),
    "distributed/has_grid" (uint8), "distributed/grid_lo", "distributed/grid_hi" (ranks x 3),
    "distributed/grid_cutoff"; the sort's and migration's progress "distributed/steps_since_sort"
    (int32), "distributed/sorted_once", "distributed/migrated_once" (uint8).

  A restart on the same kind of run (one rank, or the same ranks and decomposition) restores every
  rank's agents in their order and its grid: it continues the saved run exactly. Otherwise each rank
  keeps the agents it owns (the first step migrates them anyway) over new grids, sorted at the same
  steps: the continuation then equals the saved run's to round-off, as a distributed run equals one
  rank.
*/
#ifndef MORULA_MECHANICS_PROLIFERATIONCHECKPOINT_HPP
#define MORULA_MECHANICS_PROLIFERATIONCHECKPOINT_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/grid/GridGeometry.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/mechanics/GrowthDivision.hpp>
#include <morula/mechanics/SphereAgents.hpp>
#include <morula/mechanics/SphereMechanics.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace morula::mechanics
{

//! The model name in proliferation checkpoints, of one rank and distributed runs alike.
inline constexpr const char* proliferation_checkpoint_model = "proliferation";

/*!
  \brief Agents on the host in checkpoint order: position holds x, y, z of each agent in turn
  (core::copy_to_host's order).
*/
template <class Scalar>
struct HostAgents
{
    std::vector<Scalar> position;
    std::vector<Scalar> diameter;
    std::vector<Scalar> adherence;
    std::vector<Scalar> density;
    std::vector<std::int64_t> id;

    std::size_t size() const { return id.size(); }

    //! Appends agent i of `other`.
    void push_back( const HostAgents& other, std::size_t i )
    {
        position.insert( position.end(), other.position.begin() + 3 * i, other.position.begin() + 3 * i + 3 );
        diameter.push_back( other.diameter[i] );
        adherence.push_back( other.adherence[i] );
        density.push_back( other.density[i] );
        id.push_back( other.id[i] );
    }
};

namespace detail
{

//! The first n agents of `a` on the host.
template <class Scalar, class MemorySpace>
HostAgents<Scalar> agents_to_host( const SphereAgents<Scalar, MemorySpace>& a, std::size_t n )
{
    HostAgents<Scalar> h;
    core::copy_to_host( a.positions(), n, h.position );
    core::copy_to_host( a.diameters(), n, h.diameter );
    core::copy_to_host( a.adherence(), n, h.adherence );
    core::copy_to_host( a.densities(), n, h.density );
    core::copy_to_host( a.ids(), n, h.id );
    return h;
}

//! New agents labelled `label` holding `h`, with capacity max(capacity, h.size()) and next id `next_id`.
template <class Scalar, class MemorySpace>
SphereAgents<Scalar, MemorySpace> agents_from_host( const std::string& label, const HostAgents<Scalar>& h,
                                                    std::size_t capacity, std::int64_t next_id )
{
    const std::size_t n = h.size();
    SphereAgents<Scalar, MemorySpace> a( label, n, std::max( capacity, n ) );
    core::copy_from_host( h.position, n, a.positions() );
    core::copy_from_host( h.diameter, n, a.diameters() );
    core::copy_from_host( h.adherence, n, a.adherence() );
    core::copy_from_host( h.density, n, a.densities() );
    core::copy_from_host( h.id, n, a.ids() );
    a.set_next_id( next_id );
    return a;
}

//! The agents' entries of the layout above.
template <class Scalar>
void put_agents( io::CheckpointWriter& out, const HostAgents<Scalar>& h, std::int64_t next_id, std::size_t capacity )
{
    const std::size_t n = h.size();
    out.put( "agents/position", h.position, { n, 3 } );
    out.put( "agents/diameter", h.diameter );
    out.put( "agents/adherence", h.adherence );
    out.put( "agents/density", h.density );
    out.put( "agents/id", h.id );
    out.put_scalar( "agents/next_id", next_id );
    out.put_scalar( "agents/capacity", static_cast<std::int64_t>( capacity ) );
}

//! `name` holds `dims` (else the reader's error naming the entry).
inline void expect_shape( const io::CheckpointReader& in, const std::string& name,
                          const std::vector<std::size_t>& dims )
{
    const auto& got = in.dims( name );
    if ( got == dims )
        return;
    std::ostringstream g, e;
    for ( std::size_t i = 0; i < got.size(); ++i )
        g << ( i ? " x " : "" ) << got[i];
    for ( std::size_t i = 0; i < dims.size(); ++i )
        e << ( i ? " x " : "" ) << dims[i];
    in.fail( "'" + name + "' has shape " + ( got.empty() ? std::string( "scalar" ) : g.str() ) + " (expected " +
             e.str() + ")" );
}

/*!
  \brief The agents of a checkpoint, with their next id and capacity, checked: consistent shapes,
  and a next id above every id (new agents must not reuse one).
*/
template <class Scalar>
HostAgents<Scalar> get_agents( const io::CheckpointReader& in, std::int64_t& next_id, std::size_t& capacity )
{
    HostAgents<Scalar> h;
    // Positions first: of another precision, their type error names both types before anything else.
    h.position = in.get<Scalar>( "agents/position" );
    const std::size_t n = in.rows( "agents/position" );
    expect_shape( in, "agents/position", { n, 3 } );
    for ( const char* name : { "agents/diameter", "agents/adherence", "agents/density", "agents/id" } )
        expect_shape( in, name, { n } );
    h.diameter = in.get<Scalar>( "agents/diameter" );
    h.adherence = in.get<Scalar>( "agents/adherence" );
    h.density = in.get<Scalar>( "agents/density" );
    h.id = in.get<std::int64_t>( "agents/id" );
    next_id = in.scalar<std::int64_t>( "agents/next_id" );
    const std::int64_t cap = in.scalar<std::int64_t>( "agents/capacity" );
    if ( cap < 0 )
        in.fail( core::detail::concat( "agents/capacity = ", cap, " (expected >= 0)" ) );
    capacity = static_cast<std::size_t>( cap );
    const auto largest = std::max_element( h.id.begin(), h.id.end() );
    if ( next_id < 0 || ( largest != h.id.end() && next_id <= *largest ) )
        in.fail( core::detail::concat( "agents/next_id = ", next_id, " is not above the largest id ",
                                       largest != h.id.end() ? *largest : std::int64_t( -1 ),
                                       ": new agents would reuse an id" ) );
    return h;
}

//! A value as a message shows it: floating point with every digit that tells values apart.
template <class T>
std::string checkpoint_value_text( const T& v )
{
    std::ostringstream s;
    if constexpr ( std::is_floating_point_v<T> )
        s << std::setprecision( std::numeric_limits<T>::max_digits10 );
    s << v;
    return s.str();
}

//! Fails unless the checkpoint's `saved` equals this run's `current` of parameter `name`.
template <class T>
void require_same_parameter( const io::CheckpointReader& in, const std::string& name, const T& saved,
                             const T& current )
{
    if ( !( saved == current ) )
        in.fail( "parameter '" + name + "' is " + checkpoint_value_text( saved ) + " in the checkpoint but " +
                 checkpoint_value_text( current ) + " in this run" );
}

inline const char* ordering_name( grid::CellOrdering o ) { return grid::to_string( o ); }

inline std::string boundary_names( const Kokkos::Array<core::Boundary, 3>& b )
{
    return std::string( core::to_string( b[0] ) ) + "," + core::to_string( b[1] ) + "," + core::to_string( b[2] );
}

//! The parameters a continuation depends on (names as the configuration's keys where it has them).
template <class Scalar>
void put_proliferation_parameters( io::CheckpointWriter& out, const core::Box<Scalar>& box,
                                   const MechanicsParameters<Scalar>& mp,
                                   const std::optional<GrowthParameters<Scalar>>& growth )
{
    out.put( "parameters/box_lo", std::vector<Scalar>{ box.lo[0], box.lo[1], box.lo[2] } );
    out.put( "parameters/box_hi", std::vector<Scalar>{ box.hi[0], box.hi[1], box.hi[2] } );
    out.put_text( "parameters/boundary", boundary_names( box.boundary ) );
    out.put_scalar( "parameters/repulsion", mp.force.repulsion );
    out.put_scalar( "parameters/attraction", mp.force.attraction );
    out.put_scalar( "parameters/radius_extension", mp.force.radius_extension );
    out.put_scalar( "parameters/time_step", mp.time_step );
    out.put_scalar( "parameters/max_displacement", mp.max_displacement );
    out.put_scalar( "parameters/sort_every", static_cast<std::int32_t>( mp.sort_every ) );
    out.put_text( "parameters/ordering", ordering_name( mp.ordering ) );
    out.put_scalar( "parameters/growth", static_cast<std::uint8_t>( growth ? 1 : 0 ) );
    if ( growth )
    {
        out.put_scalar( "parameters/division_diameter", growth->division_diameter );
        out.put_scalar( "parameters/growth_rate", growth->growth_rate );
        out.put_scalar( "parameters/growth_time_step", growth->time_step );
        out.put_scalar( "parameters/seed", growth->seed );
    }
}

//! Refuses a checkpoint whose parameters differ from this run's, naming the first such parameter.
template <class Scalar>
void check_proliferation_parameters( const io::CheckpointReader& in, const core::Box<Scalar>& box,
                                     const MechanicsParameters<Scalar>& mp,
                                     const std::optional<GrowthParameters<Scalar>>& growth )
{
    // The precision first, for a message that says so (the exact-type checks would name an entry).
    const auto position = in.entries().find( "agents/position" );
    constexpr io::CheckpointType scalar_type = io::checkpoint_type_of<Scalar>();
    if ( position != in.entries().end() && position->second.type != scalar_type )
        in.fail( std::string( "the agents are " ) + io::to_string( position->second.type ) +
                 " ('agents/position'), but this run's precision is " + io::to_string( scalar_type ) );
    const auto lo = in.get<Scalar>( "parameters/box_lo" );
    const auto hi = in.get<Scalar>( "parameters/box_hi" );
    expect_shape( in, "parameters/box_lo", { 3 } );
    expect_shape( in, "parameters/box_hi", { 3 } );
    for ( int d = 0; d < 3; ++d )
    {
        const std::string axis( 1, "xyz"[d] );
        require_same_parameter( in, "box lo " + axis, lo[d], box.lo[d] );
        require_same_parameter( in, "box hi " + axis, hi[d], box.hi[d] );
    }
    require_same_parameter( in, "boundary", in.text( "parameters/boundary" ), boundary_names( box.boundary ) );
    require_same_parameter( in, "repulsion", in.scalar<Scalar>( "parameters/repulsion" ), mp.force.repulsion );
    require_same_parameter( in, "attraction", in.scalar<Scalar>( "parameters/attraction" ), mp.force.attraction );
    require_same_parameter( in, "radius_extension", in.scalar<Scalar>( "parameters/radius_extension" ),
                            mp.force.radius_extension );
    require_same_parameter( in, "time_step", in.scalar<Scalar>( "parameters/time_step" ), mp.time_step );
    require_same_parameter( in, "max_displacement", in.scalar<Scalar>( "parameters/max_displacement" ),
                            mp.max_displacement );
    require_same_parameter( in, "sort_every", in.scalar<std::int32_t>( "parameters/sort_every" ),
                            static_cast<std::int32_t>( mp.sort_every ) );
    require_same_parameter( in, "ordering", in.text( "parameters/ordering" ), std::string( ordering_name( mp.ordering ) ) );
    const bool saved_growth = in.scalar<std::uint8_t>( "parameters/growth" ) != 0;
    if ( saved_growth != growth.has_value() )
        in.fail( std::string( "growth and division are " ) + ( saved_growth ? "on" : "off" ) +
                 " in the checkpoint but " + ( growth ? "on" : "off" ) +
                 " in this run (scenario 'division' against 'static')" );
    if ( !growth )
        return;
    require_same_parameter( in, "division_diameter", in.scalar<Scalar>( "parameters/division_diameter" ),
                            growth->division_diameter );
    require_same_parameter( in, "growth_rate", in.scalar<Scalar>( "parameters/growth_rate" ), growth->growth_rate );
    require_same_parameter( in, "growth time_step", in.scalar<Scalar>( "parameters/growth_time_step" ),
                            growth->time_step );
    require_same_parameter( in, "seed", in.scalar<std::uint64_t>( "parameters/seed" ), growth->seed );
}

//! The checkpoint's step count, which must also fit the growth RNG's 32-bit step index.
inline long long get_proliferation_step( const io::CheckpointReader& in )
{
    const long long step = in.scalar<long long>( "step" );
    if ( step < 0 || step > static_cast<long long>( std::numeric_limits<std::uint32_t>::max() ) )
        in.fail( core::detail::concat( "step = ", step, " (expected 0 to ", std::numeric_limits<std::uint32_t>::max(),
                                       ")" ) );
    return step;
}

/*!
  \brief The sort's progress of a run that built its grid `builds` times and sorts every `sort_every`
  builds, the first included: steps since the last sort (sort_every when the next build sorts), and
  whether it sorted at all. It converts the single-rank count into DistributedSphereMechanics' terms.
*/
inline void sort_progress( long long builds, int sort_every, int& since_sort, bool& sorted_once )
{
    sorted_once = sort_every > 0 && builds > 0;
    if ( !sorted_once )
    {
        since_sort = 0;
        return;
    }
    // The last sort was at build k floor((builds - 1) / k).
    since_sort = static_cast<int>( builds - sort_every * ( ( builds - 1 ) / sort_every ) );
}

} // namespace detail
} // namespace morula::mechanics

#endif
