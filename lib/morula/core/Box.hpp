/*!
  \file Box.hpp
  \brief Axis-aligned simulation box with a boundary kind per axis and minimum-image displacements.
*/
#ifndef MORULA_CORE_BOX_HPP
#define MORULA_CORE_BOX_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>

namespace morula::core
{

//! What happens at the two faces of the box along one axis.
enum class Boundary : int
{
    periodic, //!< Leaving through one face re-enters through the other; distances use the minimum image.
    closed,   //!< Particles must stay inside [lo, hi]; a position outside is an error.
    open      //!< Particles may leave the box; they are kept and still found as neighbours.
};

//! Name of a boundary kind as used in configuration files ("periodic", "closed", "open").
inline const char* to_string( Boundary b )
{
    switch ( b )
    {
    case Boundary::periodic:
        return "periodic";
    case Boundary::closed:
        return "closed";
    case Boundary::open:
        return "open";
    }
    return "unknown";
}

//! Parses "periodic", "closed" or "open"; anything else is an InputError naming the value.
inline Boundary boundary_from_string( const std::string& s )
{
    if ( s == "periodic" )
        return Boundary::periodic;
    if ( s == "closed" )
        return Boundary::closed;
    if ( s == "open" )
        return Boundary::open;
    throw InputError( "unknown boundary kind '" + s +
                      "': expected 'periodic', 'closed' or 'open'" );
}

/*!
  \brief Axis-aligned box [lo, hi) with a per-axis boundary kind.

  Trivially copyable, so kernels take it by value. Displacements follow the convention
  d = x_i - x_j, reduced to the minimum image along periodic axes.
*/
template <class Scalar>
struct Box
{
    using scalar_type = Scalar;

    Kokkos::Array<Scalar, 3> lo{};       //!< Lower corner.
    Kokkos::Array<Scalar, 3> hi{};       //!< Upper corner.
    Kokkos::Array<Boundary, 3> boundary{ //!< Boundary kind per axis.
                                         Boundary::closed, Boundary::closed, Boundary::closed };

    Box() = default;

    //! Box with the same boundary kind on every axis.
    Box( Kokkos::Array<Scalar, 3> lo_, Kokkos::Array<Scalar, 3> hi_, Boundary b = Boundary::closed )
        : lo( lo_ ), hi( hi_ ), boundary{ b, b, b }
    {
    }

    //! Box with a boundary kind per axis.
    Box( Kokkos::Array<Scalar, 3> lo_, Kokkos::Array<Scalar, 3> hi_, Kokkos::Array<Boundary, 3> b )
        : lo( lo_ ), hi( hi_ ), boundary( b )
    {
    }

    //! Cube [0, edge)^3 with one boundary kind.
    static Box cube( Scalar edge, Boundary b = Boundary::closed )
    {
        return Box( { 0, 0, 0 }, { edge, edge, edge }, b );
    }

    //! Edge length along axis d.
    KOKKOS_INLINE_FUNCTION Scalar length( int d ) const { return hi[d] - lo[d]; }

    KOKKOS_INLINE_FUNCTION bool is_periodic( int d ) const
    {
        return boundary[d] == Boundary::periodic;
    }

    /*!
      \brief Reduces a displacement d = x_i - x_j along axis `axis` to its minimum image.

      Exact for any number of box lengths, so positions need not be wrapped into the box. Non-periodic
      axes return d unchanged.
    */
    KOKKOS_INLINE_FUNCTION Scalar minimum_image( int axis, Scalar d ) const
    {
        if ( boundary[axis] != Boundary::periodic )
            return d;
        const Scalar L = hi[axis] - lo[axis];
        return d - L * compat::nearbyint( d / L );
    }

    //! Throws InputError unless every axis has finite lo < hi.
    void validate( const std::string& where ) const
    {
        for ( int d = 0; d < 3; ++d )
        {
            if ( !std::isfinite( static_cast<double>( lo[d] ) ) ||
                 !std::isfinite( static_cast<double>( hi[d] ) ) )
                throw InputError( detail::concat( where, ": box axis ", "xyz"[d],
                                                  " has a non-finite bound [", lo[d], ", ",
                                                  hi[d], "]" ) );
            if ( !( lo[d] < hi[d] ) )
                throw InputError( detail::concat(
                    where, ": box axis ", "xyz"[d], " is empty or inverted: lo = ", lo[d],
                    ", hi = ", hi[d], " (expected lo < hi)" ) );
        }
    }
};

} // namespace morula::core

#endif
