/*!
  \file TumourCells.hpp
  \brief Spherical tumour cells in structure-of-arrays Views, their life-cycle states, and a host copy
  for input and output.
*/
#ifndef MORULA_ANGIO_TUMOURCELLS_HPP
#define MORULA_ANGIO_TUMOURCELLS_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/SoA.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::angio
{

//! Life-cycle state of a cell (Worecki and Wcisło 2012, section 2).
enum CellState : std::int32_t
{
    cell_new = 0,     //!< just divided; grows, cannot divide
    cell_mature = 1,  //!< old enough to divide
    cell_hypoxic = 2, //!< short of oxygen: produces TAF, does not grow
    cell_dead = 3,    //!< by age or prolonged hypoxia: shrinks (lysis), still takes up space
    cell_lysed = 4    //!< shrunk away: removed at the end of the step (never seen outside a step)
};

//! Name of a state as written in CSV headers and docs.
inline const char* to_string( CellState s )
{
    switch ( s )
    {
    case cell_new: return "new";
    case cell_mature: return "mature";
    case cell_hypoxic: return "hypoxic";
    case cell_dead: return "dead";
    case cell_lysed: return "lysed";
    }
    return "unknown";
}

//! Live cells take up oxygen, exchange and may grow; dead and lysed ones do not.
KOKKOS_INLINE_FUNCTION bool is_alive( std::int32_t state ) { return state <= cell_hypoxic; }

//! Cells on the host, one entry per cell (positions, velocities, forces: x, y, z per cell).
struct HostCells
{
    std::vector<double> position, velocity, force; // 3 per cell
    std::vector<double> radius, age, hypoxic_time, oxygen, taf, pressure;
    std::vector<std::int32_t> state;
    std::vector<std::int64_t> id;

    std::size_t size() const { return radius.size(); }

    //! Appends a cell at rest.
    void add( const double x[3], double r, double age_h, std::int32_t s, double o2, double taf_c,
              std::int64_t cell_id )
    {
        for ( int d = 0; d < 3; ++d )
        {
            position.push_back( x[d] );
            velocity.push_back( 0 );
            force.push_back( 0 );
        }
        radius.push_back( r );
        age.push_back( age_h );
        hypoxic_time.push_back( 0 );
        oxygen.push_back( o2 );
        taf.push_back( taf_c );
        pressure.push_back( 0 );
        state.push_back( s );
        id.push_back( cell_id );
    }

    //! Throws core::InputError naming `where`, the cell and the field when sizes or values are wrong.
    void validate( const std::string& where ) const
    {
        const std::size_t n = size();
        auto sized = [&]( std::size_t got, std::size_t want, const char* field ) {
            if ( got != want )
                throw core::InputError( core::detail::concat( where, ": cells.", field, " has ", got,
                                                              " entries, expected ", want ) );
        };
        sized( position.size(), 3 * n, "position" );
        sized( velocity.size(), 3 * n, "velocity" );
        sized( force.size(), 3 * n, "force" );
        sized( age.size(), n, "age" );
        sized( hypoxic_time.size(), n, "hypoxic_time" );
        sized( oxygen.size(), n, "oxygen" );
        sized( taf.size(), n, "taf" );
        sized( pressure.size(), n, "pressure" );
        sized( state.size(), n, "state" );
        sized( id.size(), n, "id" );
        for ( std::size_t i = 0; i < n; ++i )
        {
            for ( int d = 0; d < 3; ++d )
                if ( !std::isfinite( position[3 * i + d] ) )
                    throw core::InputError( core::detail::concat( where, ": cell ", i, " has a non-finite position" ) );
            if ( !( radius[i] > 0 ) || !std::isfinite( radius[i] ) )
                throw core::InputError( core::detail::concat( where, ": cell ", i, " has radius ", radius[i],
                                                              " (expected a finite value > 0)" ) );
            if ( state[i] < cell_new || state[i] > cell_dead )
                throw core::InputError( core::detail::concat( where, ": cell ", i, " has state ", state[i],
                                                              " (expected 0 new, 1 mature, 2 hypoxic or 3 dead)" ) );
            if ( !( oxygen[i] >= 0 ) || !( taf[i] >= 0 ) || !std::isfinite( oxygen[i] ) || !std::isfinite( taf[i] ) )
                throw core::InputError( core::detail::concat( where, ": cell ", i, " has oxygen ", oxygen[i],
                                                              " and TAF ", taf[i], " (expected finite values >= 0)" ) );
        }
    }
};

/*!
  \brief Tumour cells: fields 0 position, 1 velocity, 2 force (Scalar[3] each, x, y and z contiguous),
  3 radius, 4 age, 5 hypoxic_time, 6 oxygen, 7 TAF, 8 pressure (Scalar), 9 state (CellState), 10 id.

  Ids are unique and survive every permutation; daughters get next_id(), next_id() + 1, ... The volume is
  4/3 pi r^3 of the radius, never stored separately.
*/
template <class Scalar, class MemorySpace>
class TumourCells
    : public core::Particles<Scalar, MemorySpace, Scalar[3], Scalar[3], Scalar, Scalar, Scalar, Scalar,
                             Scalar, Scalar, std::int32_t, std::int64_t>
{
    using base = core::Particles<Scalar, MemorySpace, Scalar[3], Scalar[3], Scalar, Scalar, Scalar, Scalar,
                                 Scalar, Scalar, std::int32_t, std::int64_t>;

  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using vector_view = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace>;
    using scalar_view = Kokkos::View<Scalar*, Kokkos::LayoutLeft, MemorySpace>;
    using state_view = Kokkos::View<std::int32_t*, Kokkos::LayoutLeft, MemorySpace>;
    using id_view = Kokkos::View<std::int64_t*, Kokkos::LayoutLeft, MemorySpace>;

    TumourCells() = default;
    explicit TumourCells( std::string label, std::size_t size = 0, std::size_t capacity = 0 )
        : base( std::move( label ), size, capacity )
    {
    }

    //! Device copy of host cells (validated).
    explicit TumourCells( const HostCells& h )
        : base( "morula::angio::cells", h.size() )
    {
        h.validate( "TumourCells" );
        assign( h );
    }

    const vector_view& velocities() const { return this->template get<1>(); }
    const vector_view& forces() const { return this->template get<2>(); }
    const scalar_view& radii() const { return this->template get<3>(); }
    const scalar_view& ages() const { return this->template get<4>(); }
    const scalar_view& hypoxic_times() const { return this->template get<5>(); }
    const scalar_view& oxygen() const { return this->template get<6>(); }
    const scalar_view& taf() const { return this->template get<7>(); }
    const scalar_view& pressures() const { return this->template get<8>(); }
    const state_view& states() const { return this->template get<9>(); }
    const id_view& ids() const { return this->template get<10>(); }

    std::int64_t next_id() const { return m_next_id; }
    void set_next_id( std::int64_t id ) { m_next_id = id; }

    //! Copies the first size() cells to the host.
    HostCells to_host() const
    {
        HostCells h;
        const std::size_t n = this->size();
        core::copy_to_host( this->positions(), n, h.position );
        core::copy_to_host( velocities(), n, h.velocity );
        core::copy_to_host( forces(), n, h.force );
        core::copy_to_host( radii(), n, h.radius );
        core::copy_to_host( ages(), n, h.age );
        core::copy_to_host( hypoxic_times(), n, h.hypoxic_time );
        core::copy_to_host( oxygen(), n, h.oxygen );
        core::copy_to_host( taf(), n, h.taf );
        core::copy_to_host( pressures(), n, h.pressure );
        core::copy_to_host( states(), n, h.state );
        core::copy_to_host( ids(), n, h.id );
        return h;
    }

  private:
    void assign( const HostCells& h )
    {
        const std::size_t n = h.size();
        core::copy_from_host( h.position, n, this->positions() );
        core::copy_from_host( h.velocity, n, velocities() );
        core::copy_from_host( h.force, n, forces() );
        core::copy_from_host( h.radius, n, radii() );
        core::copy_from_host( h.age, n, ages() );
        core::copy_from_host( h.hypoxic_time, n, hypoxic_times() );
        core::copy_from_host( h.oxygen, n, oxygen() );
        core::copy_from_host( h.taf, n, taf() );
        core::copy_from_host( h.pressure, n, pressures() );
        core::copy_from_host( h.state, n, states() );
        core::copy_from_host( h.id, n, ids() );
        m_next_id = core::next_free_id( h.id );
    }

    std::int64_t m_next_id = 0;
};

} // namespace morula::angio

#endif
