/*!
  \file NeighborQuery.hpp
  \brief Device-side neighbour search through a built UniformGrid.
*/
#ifndef MORULA_GRID_NEIGHBORQUERY_HPP
#define MORULA_GRID_NEIGHBORQUERY_HPP

#include <morula/grid/GridGeometry.hpp>

#include <Kokkos_Core.hpp>

#include <limits>

namespace morula::grid
{

namespace detail
{
//! Squared length of (dx, dy, dz), accumulated x, y, z in this order (so that every caller, the brute
//! force of the tests included, rounds the same way).
template <class Scalar>
KOKKOS_FORCEINLINE_FUNCTION Scalar distance_squared( Scalar dx, Scalar dy, Scalar dz )
{
    Scalar r2 = dx * dx;
    r2 += dy * dy;
    r2 += dz * dz;
    return r2;
}
} // namespace detail

/*!
  \brief Visits the neighbours of a particle or a point through the sorted uniform grid.

  Obtained from UniformGrid::query(positions); trivially copyable, so kernels capture it by value.
  `positions` must be the array the grid was built from, or that array after UniformGrid::permute().

  Neighbours are the particles j != i with |d|^2 <= radius^2, where d = x_i - x_j is reduced to the
  minimum image along periodic axes and radius <= cutoff() (the grid's cell edge bound). Each pair is
  found once per side. With row-major cells the three cells of each stencil row are one contiguous
  range of sorted slots, so a query reads nine ranges instead of 27 cells.
*/
template <class Scalar, class MemorySpace, class PositionView>
class NeighborQuery
{
  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using index_view = Kokkos::View<const int*, MemorySpace>;

    NeighborQuery() = default;

    NeighborQuery( const GridGeometry<Scalar>& geometry, const index_view& cell_offsets,
                   const index_view& permutation, const index_view& cell_key,
                   const PositionView& positions, bool data_sorted, bool min_image_per_pair,
                   int num_particles )
        : m_geom( geometry )
        , m_offsets( cell_offsets )
        , m_perm( permutation )
        , m_cell_key( cell_key )
        , m_x( positions )
        , m_sorted( data_sorted )
        , m_row_major( cell_key.extent( 0 ) == 0 )
        , m_min_image( min_image_per_pair )
        , m_num_particles( num_particles )
    {
        // A few ulp of the largest coordinate: the rounding of a face position and a difference.
        for ( int d = 0; d < 3; ++d )
        {
            const Scalar lo = geometry.box.lo[d] < 0 ? -geometry.box.lo[d] : geometry.box.lo[d];
            m_face_margin[d] = Scalar( 8 ) * std::numeric_limits<Scalar>::epsilon() *
                               ( lo + geometry.box.length( d ) + geometry.cell_size[d] );
        }
    }

    //! Largest radius the grid supports.
    KOKKOS_INLINE_FUNCTION Scalar cutoff() const { return m_geom.cutoff; }

    KOKKOS_INLINE_FUNCTION int num_particles() const { return m_num_particles; }

    const GridGeometry<Scalar>& geometry() const { return m_geom; }

    //! Coordinate d of particle i, as stored in the queried positions.
    KOKKOS_INLINE_FUNCTION Scalar position( int i, int d ) const { return m_x( i, d ); }

    //! Particle index stored in sorted slot k (k itself once the data are permuted).
    KOKKOS_INLINE_FUNCTION int particle( int slot ) const
    {
        return m_sorted ? slot : m_perm( slot );
    }

    /*!
      \brief Calls f(j, dx, dy, dz, r2) for every neighbour j of particle i within radius (<= cutoff()),
      with (dx, dy, dz) = x_i - x_j (minimum image) and r2 = |d|^2.
    */
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each_neighbor( int i, Scalar radius, F&& f ) const
    {
        const Scalar xi = m_x( i, 0 );
        const Scalar yi = m_x( i, 1 );
        const Scalar zi = m_x( i, 2 );
        dispatch( m_min_image, i, xi, yi, zi, radius * radius, f );
    }

    //! for_each_neighbor(i, cutoff(), f).
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each_neighbor( int i, F&& f ) const
    {
        for_each_neighbor( i, m_geom.cutoff, f );
    }

    //! Calls f(j, dx, dy, dz, r2) for every particle j within radius of the point p (d = p - x_j).
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each_neighbor_of_point( Scalar px, Scalar py, Scalar pz,
                                                            Scalar radius, F&& f ) const
    {
        bool min_image = m_min_image;
        // A point outside the box on a periodic axis is found through its wrapped cell; its distances
        // then need the per-pair minimum image.
        min_image = min_image || ( m_geom.is_periodic( 0 ) && !m_geom.inside( 0, px ) ) ||
                    ( m_geom.is_periodic( 1 ) && !m_geom.inside( 1, py ) ) ||
                    ( m_geom.is_periodic( 2 ) && !m_geom.inside( 2, pz ) );
        dispatch( min_image, -1, px, py, pz, radius * radius, f );
    }

    //! Number of neighbours of particle i within radius (<= cutoff()).
    KOKKOS_INLINE_FUNCTION int count_neighbors( int i, Scalar radius ) const
    {
        int count = 0;
        for_each_neighbor( i, radius, [&]( int, Scalar, Scalar, Scalar, Scalar ) { ++count; } );
        return count;
    }

    KOKKOS_INLINE_FUNCTION int count_neighbors( int i ) const
    {
        return count_neighbors( i, m_geom.cutoff );
    }

  private:
    template <class F>
    KOKKOS_INLINE_FUNCTION void dispatch( bool min_image, int self, Scalar xi, Scalar yi,
                                          Scalar zi, Scalar r2max, F& f ) const
    {
        if ( m_sorted )
        {
            if ( min_image )
                walk<true, true>( self, xi, yi, zi, r2max, f );
            else
                walk<true, false>( self, xi, yi, zi, r2max, f );
        }
        else
        {
            if ( min_image )
                walk<false, true>( self, xi, yi, zi, r2max, f );
            else
                walk<false, false>( self, xi, yi, zi, r2max, f );
        }
    }

    /*!
      Neighbour cell along axis d of cell coordinate c at offset o in {-1, 0, 1}. On periodic axes with
      at least 3 cells the coordinate wraps and `shift` is the image offset of particles found there
      (their image is x_j + shift). With 1 or 2 cells each distinct cell is visited once and distances
      use the per-pair minimum image instead. Returns false when there is no such cell.
    */
    KOKKOS_INLINE_FUNCTION bool neighbor_cell( int d, int c, int o, int& nc,
                                               Scalar& shift ) const
    {
        const int n = m_geom.ncell[d];
        shift = Scalar( 0 );
        nc = c + o;
        if ( !m_geom.is_periodic( d ) )
            return nc >= 0 && nc < n;
        if ( n >= 3 )
        {
            if ( nc < 0 )
            {
                nc += n;
                shift = -m_geom.box.length( d );
            }
            else if ( nc >= n )
            {
                nc -= n;
                shift = m_geom.box.length( d );
            }
            return true;
        }
        if ( o < 0 || ( n == 1 && o > 0 ) )
            return false;
        nc = ( c + o ) % n;
        return true;
    }

    template <bool Sorted, bool MinImage, bool Shifted, class F>
    KOKKOS_INLINE_FUNCTION void scan_slots( int begin, int end, int self, Scalar xi, Scalar yi,
                                            Scalar zi, Scalar sx, Scalar sy, Scalar sz,
                                            Scalar r2max, F& f ) const
    {
        for ( int k = begin; k < end; ++k )
        {
            const int j = Sorted ? k : m_perm( k );
            if ( j == self )
                continue;
            Scalar dx = xi - m_x( j, 0 );
            Scalar dy = yi - m_x( j, 1 );
            Scalar dz = zi - m_x( j, 2 );
            if constexpr ( MinImage )
            {
                dx = m_geom.box.minimum_image( 0, dx );
                dy = m_geom.box.minimum_image( 1, dy );
                dz = m_geom.box.minimum_image( 2, dz );
            }
            else if constexpr ( Shifted )
            {
                dx -= sx;
                dy -= sy;
                dz -= sz;
            }
            const Scalar r2 = detail::distance_squared( dx, dy, dz );
            if ( r2 <= r2max )
                f( j, dx, dy, dz, r2 );
        }
    }

    //! Scans the slots of cells [cell_begin, cell_end) (one contiguous run of sorted slots).
    template <bool Sorted, bool MinImage, class F>
    KOKKOS_INLINE_FUNCTION void scan_cells( int cell_begin, int cell_end, int self, Scalar xi,
                                            Scalar yi, Scalar zi, Scalar sx, Scalar sy, Scalar sz,
                                            Scalar r2max, F& f ) const
    {
        const int begin = m_offsets( cell_begin );
        const int end = m_offsets( cell_end );
        // Most ranges need no periodic image shift; they take the loop without the subtractions.
        if ( MinImage || ( sx == Scalar( 0 ) && sy == Scalar( 0 ) && sz == Scalar( 0 ) ) )
            scan_slots<Sorted, MinImage, false>( begin, end, self, xi, yi, zi, sx, sy, sz, r2max,
                                                 f );
        else
            scan_slots<Sorted, MinImage, true>( begin, end, self, xi, yi, zi, sx, sy, sz, r2max,
                                                f );
    }

    /*!
      Lower bounds on the distance from coordinate x (in cell c along axis d) to the cells below and
      above, shrunk by a rounding margin so that they never exceed the true distances. Zero where the
      stencil cannot be pruned (per-pair minimum image: the cell coordinate may be of a wrapped
      position).
    */
    KOKKOS_INLINE_FUNCTION void face_distances( int d, int c, Scalar x, Scalar& below,
                                                Scalar& above ) const
    {
        const Scalar face = m_geom.box.lo[d] + static_cast<Scalar>( c ) * m_geom.cell_size[d];
        const Scalar lo = x - face - m_face_margin[d];
        const Scalar hi = face + m_geom.cell_size[d] - x - m_face_margin[d];
        below = lo > Scalar( 0 ) ? lo : Scalar( 0 );
        above = hi > Scalar( 0 ) ? hi : Scalar( 0 );
    }

    /*!
      Visits the stencil of the cell holding (xi, yi, zi). Cells (and whole rows) whose nearest point
      is farther than the radius are skipped: with cells about one cutoff wide this prunes about a
      quarter of the candidates (27 cells -> 20.6 on average).
    */
    template <bool Sorted, bool MinImage, class F>
    KOKKOS_INLINE_FUNCTION void walk( int self, Scalar xi, Scalar yi, Scalar zi, Scalar r2max,
                                      F& f ) const
    {
        const int ix = m_geom.cell_coordinate( 0, xi );
        const int iy = m_geom.cell_coordinate( 1, yi );
        const int iz = m_geom.cell_coordinate( 2, zi );
        Scalar below[3] = { 0, 0, 0 };
        Scalar above[3] = { 0, 0, 0 };
        if constexpr ( !MinImage )
        {
            face_distances( 0, ix, xi, below[0], above[0] );
            face_distances( 1, iy, yi, below[1], above[1] );
            face_distances( 2, iz, zi, below[2], above[2] );
        }
        const int nx = m_geom.ncell[0];
        const int ny = m_geom.ncell[1];
        const bool periodic_x = m_geom.is_periodic( 0 );
        const Scalar lx = m_geom.box.length( 0 );
        const Scalar zero = Scalar( 0 );
        for ( int oz = -1; oz <= 1; ++oz )
        {
            int cz;
            Scalar sz;
            if ( !neighbor_cell( 2, iz, oz, cz, sz ) )
                continue;
            const Scalar dz = oz < 0 ? below[2] : ( oz > 0 ? above[2] : zero );
            for ( int oy = -1; oy <= 1; ++oy )
            {
                int cy;
                Scalar sy;
                if ( !neighbor_cell( 1, iy, oy, cy, sy ) )
                    continue;
                const Scalar dy = oy < 0 ? below[1] : ( oy > 0 ? above[1] : zero );
                const Scalar row_d2 = dy * dy + dz * dz;
                if ( row_d2 > r2max )
                    continue;
                if ( m_row_major )
                {
                    const int row = nx * ( cy + ny * cz );
                    // Whether the cells left and right of the particle's column can hold neighbours.
                    const bool left = below[0] * below[0] + row_d2 <= r2max;
                    const bool right = above[0] * above[0] + row_d2 <= r2max;
                    if ( !periodic_x )
                    {
                        const int lo = ix > 0 && left ? ix - 1 : ix;
                        const int hi = ix + 1 < nx && right ? ix + 1 : ix;
                        scan_cells<Sorted, MinImage>( row + lo, row + hi + 1, self, xi, yi, zi,
                                                      zero, sy, sz, r2max, f );
                    }
                    else if ( nx < 3 )
                    {
                        scan_cells<Sorted, MinImage>( row, row + nx, self, xi, yi, zi, zero, sy,
                                                      sz, r2max, f );
                    }
                    else if ( ix == 0 )
                    {
                        if ( left )
                            scan_cells<Sorted, MinImage>( row + nx - 1, row + nx, self, xi, yi,
                                                          zi, -lx, sy, sz, r2max, f );
                        scan_cells<Sorted, MinImage>( row, row + ( right ? 2 : 1 ), self, xi, yi,
                                                      zi, zero, sy, sz, r2max, f );
                    }
                    else if ( ix == nx - 1 )
                    {
                        scan_cells<Sorted, MinImage>( row + nx - ( left ? 2 : 1 ), row + nx, self,
                                                      xi, yi, zi, zero, sy, sz, r2max, f );
                        if ( right )
                            scan_cells<Sorted, MinImage>( row, row + 1, self, xi, yi, zi, lx, sy,
                                                          sz, r2max, f );
                    }
                    else
                    {
                        scan_cells<Sorted, MinImage>( row + ix - ( left ? 1 : 0 ),
                                                      row + ix + ( right ? 2 : 1 ), self, xi, yi,
                                                      zi, zero, sy, sz, r2max, f );
                    }
                }
                else
                {
                    for ( int ox = -1; ox <= 1; ++ox )
                    {
                        int cx;
                        Scalar sx;
                        if ( !neighbor_cell( 0, ix, ox, cx, sx ) )
                            continue;
                        const Scalar ddx = ox < 0 ? below[0] : ( ox > 0 ? above[0] : zero );
                        if ( ddx * ddx + row_d2 > r2max )
                            continue;
                        const int key = m_cell_key( m_geom.linear_index( cx, cy, cz ) );
                        scan_cells<Sorted, MinImage>( key, key + 1, self, xi, yi, zi, sx, sy, sz,
                                                      r2max, f );
                    }
                }
            }
        }
    }

    GridGeometry<Scalar> m_geom;
    index_view m_offsets;
    index_view m_perm;
    index_view m_cell_key;
    PositionView m_x;
    bool m_sorted = false;
    bool m_row_major = true;
    bool m_min_image = false;
    int m_num_particles = 0;
    Kokkos::Array<Scalar, 3> m_face_margin{};
};

} // namespace morula::grid

#endif
