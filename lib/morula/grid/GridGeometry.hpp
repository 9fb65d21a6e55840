/*!
  \file GridGeometry.hpp
  \brief Cell layout of a uniform grid over a Box: cell sizes, counts, and point-to-cell mapping.
*/
#ifndef MORULA_GRID_GRIDGEOMETRY_HPP
#define MORULA_GRID_GRIDGEOMETRY_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace morula::grid
{

using core::Boundary;
using core::Box;

//! How cells are numbered, which is the order particles end up in after a permute.
enum class CellOrdering : int
{
    row_major,  //!< x fastest, then y, then z: the three cells of a stencil row are contiguous.
    morton,     //!< Z-order (Morton) rank of (ix, iy, iz): nearby cells are nearby in memory.
    /*!
      Rows of cells along x kept whole, the rows in Z-order of (iy, iz). A stencil row is one run of
      slots, as with row_major, so neighbour queries take the row-major traversal; the nine rows of a
      stencil are near each other in memory, as with morton, except that locality along x is a row's.
    */
    morton_rows
};

//! The name of a cell ordering in configuration files and output: "row-major", "morton", "morton-rows".
inline const char* to_string( CellOrdering o )
{
    switch ( o )
    {
    case CellOrdering::row_major: return "row-major";
    case CellOrdering::morton: return "morton";
    case CellOrdering::morton_rows: return "morton-rows";
    }
    return "unknown";
}

//! The ordering named `name` (as to_string writes it); false when there is none.
inline bool parse_cell_ordering( const std::string& name, CellOrdering& ordering )
{
    for ( const auto o : { CellOrdering::row_major, CellOrdering::morton, CellOrdering::morton_rows } )
        if ( name == to_string( o ) )
        {
            ordering = o;
            return true;
        }
    return false;
}

/*!
  \brief Geometry of a uniform grid: every cell edge is at least the neighbour cutoff, so all neighbours
  of a particle lie in its own cell and the 26 around it.

  Cell edges are slightly longer than the cutoff (by a relative margin of 8 eps (n + 2), about 1e-13 in
  double and 1e-4 in float): rounding in the point-to-cell mapping then can never place two points
  within the cutoff more than one cell apart, even when they sit exactly on cell faces.
*/
template <class Scalar>
struct GridGeometry
{
    using scalar_type = Scalar;

    Box<Scalar> box;                      //!< The simulation box.
    Scalar cutoff = 0;                    //!< Neighbour radius the grid guarantees.
    Kokkos::Array<int, 3> ncell{};        //!< Cells per axis (>= 1).
    Kokkos::Array<Scalar, 3> cell_size{}; //!< Cell edge per axis (>= cutoff unless ncell == 1).
    Kokkos::Array<Scalar, 3> inv_cell_size{};

    GridGeometry() = default;

    /*!
      \brief Lays cells over `box` for neighbour radius `cutoff`.
      \throws core::InputError for a non-positive or non-finite cutoff or an empty/inverted box.
      \throws core::CapacityError when the grid would have more than max_cells cells.
    */
    GridGeometry( const Box<Scalar>& box_, Scalar cutoff_, std::int64_t max_cells,
                  const std::string& where )
        : box( box_ ), cutoff( cutoff_ )
    {
        box.validate( where );
        if ( !( cutoff > 0 ) || !std::isfinite( static_cast<double>( cutoff ) ) )
            throw core::InputError( core::detail::concat(
                where, ": cutoff must be positive and finite, got ", cutoff ) );
        std::int64_t total = 1;
        for ( int d = 0; d < 3; ++d )
        {
            const double L = static_cast<double>( box.length( d ) );
            const double ratio = L / static_cast<double>( cutoff );
            const double margin =
                8.0 * std::numeric_limits<Scalar>::epsilon() * ( ratio + 2.0 );
            double n = std::floor( ratio / ( 1.0 + margin ) );
            if ( !( n >= 1.0 ) )
                n = 1.0;
            if ( n > static_cast<double>( max_cells ) )
                throw core::CapacityError( core::detail::concat(
                    where, ": axis ", "xyz"[d], " would need ", n, " cells (box length ", L,
                    " / cutoff ", cutoff, "), more than max_cells = ", max_cells,
                    "; use a larger cutoff or raise GridOptions::max_cells" ) );
            ncell[d] = static_cast<int>( n );
            cell_size[d] = static_cast<Scalar>( L / n );
            inv_cell_size[d] = static_cast<Scalar>( n / L );
            // A position just below box.hi must map below n: rounded up to n, a periodic axis would wrap
            // it to cell 0, where the walks' per-cell image shifts put it a box length from its
            // neighbours. (x - lo) * inv never exceeds (hi - lo) * inv in floating point (rounding is
            // monotone), so lowering inv by ulps until that product is below n is enough; the cells
            // grow by about an ulp, far inside the margin above. Done here, not in cell_coordinate(): a test
            // there changed GPU kernels' register allocation, and their speed with it (docs/performance.md,
            // "Neighbour kernels at the hardware limit (issue #25): seventh pass").
            const Scalar span = box.hi[d] - box.lo[d];
            while ( ncell[d] > 1 && span * inv_cell_size[d] >= static_cast<Scalar>( ncell[d] ) )
                inv_cell_size[d] = std::nextafter( inv_cell_size[d], Scalar( 0 ) );
            total *= ncell[d];
            if ( total > max_cells )
                throw core::CapacityError( core::detail::concat(
                    where, ": the grid would need more than max_cells = ", max_cells,
                    " cells (box ", box.length( 0 ), " x ", box.length( 1 ), " x ",
                    box.length( 2 ), ", cutoff ", cutoff,
                    "); use a larger cutoff or raise GridOptions::max_cells" ) );
        }
    }

    KOKKOS_INLINE_FUNCTION int num_cells() const { return ncell[0] * ncell[1] * ncell[2]; }

    KOKKOS_INLINE_FUNCTION bool is_periodic( int d ) const { return box.is_periodic( d ); }

    //! True when x lies in [lo, hi) along axis d.
    KOKKOS_INLINE_FUNCTION bool inside( int d, Scalar x ) const
    {
        return x >= box.lo[d] && x < box.hi[d];
    }

    /*!
      \brief Cell coordinate of x along axis d, always in [0, ncell[d]).

      Periodic axes wrap positions outside the box; open axes put them in the outermost cell (which
      keeps every pair within the cutoff in adjacent cells, because the mapping stays monotone); closed
      axes never see such positions (the build rejects them). The mapping is monotone in x for
      positions inside the box, which is what makes the rounding margin above sufficient.
    */
    KOKKOS_INLINE_FUNCTION int cell_coordinate( int d, Scalar x ) const
    {
        Scalar q = ( x - box.lo[d] ) * inv_cell_size[d];
        const Scalar n = static_cast<Scalar>( ncell[d] );
        if ( box.boundary[d] == Boundary::periodic && !( q >= Scalar( 0 ) && q < n ) )
            q -= n * compat::floor( q / n );
        q = compat::fmin( compat::fmax( q, Scalar( 0 ) ), n - Scalar( 1 ) );
        return static_cast<int>( q );
    }

    //! Row-major linear index of cell (ix, iy, iz).
    KOKKOS_INLINE_FUNCTION int linear_index( int ix, int iy, int iz ) const
    {
        return ix + ncell[0] * ( iy + ncell[1] * iz );
    }
};

} // namespace morula::grid

#endif
