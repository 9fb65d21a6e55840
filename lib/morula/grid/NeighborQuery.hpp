/*!
  \file NeighborQuery.hpp
  \brief Device-side neighbour search through a built UniformGrid.
*/
#ifndef MORULA_GRID_NEIGHBORQUERY_HPP
#define MORULA_GRID_NEIGHBORQUERY_HPP

#include <morula/grid/GridGeometry.hpp>

#include <Kokkos_Core.hpp>

#include <limits>
#include <type_traits>

namespace morula::grid
{

namespace detail
{
/*!
  How a stencil walk finds its runs of cells: read from the query at run time (`from_query`, what
  every public call does), or fixed at compile time to one cell ordering. A GPU kernel's register count
  is the largest over all the paths it contains, so NeighborReduction's kernels are compiled once per
  ordering on GPUs and chosen at launch: no kernel carries another ordering's walk, which makes the
  kernels faster (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): fifth pass").
  for_each_particle keeps `from_query`, since the user's function names the neighbours' type.
*/
enum class StencilOrder
{
    from_query,
    row_major,
    morton_rows,
    morton
};

/*!
  How a stencil walk reads its candidates, fixed at compile time with the ordering by kernels that are
  compiled once per walk (the neighbour-list fills): as the query says at run time (`from_query`: the four
  readers, sorted or through the permutation, per-cell image shift or per-pair minimum image, in one
  kernel), or in cell order, or through the permutation, with per-cell image shifts.
*/
enum class DataAccess
{
    from_query,
    sorted,
    through_permutation
};

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

/*!
  d = x_i - x_j, minus the run's image shift when Shifted, and |d|^2: the arithmetic of every traversal
  with per-cell image shifts (NeighborQuery::GlobalSource, NeighborReduction's groups and batched pairs),
  so that they all visit the same pairs with the same offsets, bit for bit.
*/
template <bool Shifted, class Scalar>
KOKKOS_FORCEINLINE_FUNCTION Scalar pair_offset( Scalar xi, Scalar yi, Scalar zi, Scalar xj, Scalar yj, Scalar zj,
                                                Scalar sx, Scalar sy, Scalar sz, Scalar& dx, Scalar& dy, Scalar& dz )
{
    dx = xi - xj;
    dy = yi - yj;
    dz = zi - zj;
    if constexpr ( Shifted )
    {
        dx -= sx;
        dy -= sy;
        dz -= sz;
    }
    return distance_squared( dx, dy, dz );
}
} // namespace detail

namespace detail
{
struct QueryAccess;
} // namespace detail

/*!
  \brief Visits the neighbours of a particle or a point through the sorted uniform grid.

  Obtained from UniformGrid::query(positions); trivially copyable, so kernels capture it by value.
  `positions` must be the array the grid was built from, or that array after UniformGrid::permute().

  Neighbours are the particles j != i with |d|^2 <= radius^2, where d = x_i - x_j is reduced to the
  minimum image along periodic axes and radius <= cutoff() (the grid's cell edge bound). Both sides are
  rounded in Scalar: radius * radius, and |d|^2 summed x, y, z by detail::distance_squared(); a
  reference that squares a double cutoff and rounds it once differs by an ulp at the boundary. Each pair is
  found once per side. With row-major and morton_rows cells the three cells of each stencil row are one
  contiguous range of sorted slots, so a query reads nine ranges instead of 27 cells.
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
                   const index_view& permutation, const index_view& cell_key, CellOrdering ordering,
                   const PositionView& positions, bool data_sorted, bool min_image_per_pair,
                   int num_particles )
        : m_geom( geometry )
        , m_offsets( cell_offsets )
        , m_perm( permutation )
        , m_cell_key( cell_key )
        , m_x( positions )
        , m_sorted( data_sorted )
        , m_row_major( ordering == CellOrdering::row_major )
        , m_whole_rows( ordering != CellOrdering::morton )
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

    KOKKOS_INLINE_FUNCTION const GridGeometry<Scalar>& geometry() const { return m_geom; }

    //! Start of every cell in sorted order (entry num_cells() is the number of particles).
    KOKKOS_INLINE_FUNCTION const index_view& cell_offsets() const { return m_offsets; }
    //! Whether the positions are in cell order (queries then need no indirection).
    KOKKOS_INLINE_FUNCTION bool data_sorted() const { return m_sorted; }
    //! Whether cells are numbered row-major (x fastest).
    KOKKOS_INLINE_FUNCTION bool row_major() const { return m_row_major; }
    //! Whether each row of cells along x has consecutive cell keys (row_major and morton_rows), so that
    //! a stencil row is one run of sorted slots.
    KOKKOS_INLINE_FUNCTION bool whole_rows() const { return m_whole_rows; }
    //! Whether distances take the per-pair minimum image (periodic axes with fewer than 3 cells, or
    //! periodic positions outside the box) instead of a per-cell image shift.
    KOKKOS_INLINE_FUNCTION bool per_pair_minimum_image() const { return m_min_image; }

    //! Coordinate d of particle i, as stored in the queried positions.
    KOKKOS_INLINE_FUNCTION Scalar position( int i, int d ) const { return m_x( i, d ); }

    //! Particle index stored in sorted slot k (k itself once the data are permuted).
    KOKKOS_INLINE_FUNCTION int particle( int slot ) const
    {
        return m_sorted ? slot : m_perm( slot );
    }

    //! Position in cell_offsets() of the cell whose row-major linear index is `linear` (its rank in the
    //! sorted cell order).
    KOKKOS_INLINE_FUNCTION int cell_rank( int linear ) const
    {
        return m_row_major ? linear : m_cell_key( linear );
    }

    /*!
      \brief Calls f(j, dx, dy, dz, r2) for every neighbour j of particle i within radius (<= cutoff()),
      with (dx, dy, dz) = x_i - x_j (minimum image) and r2 = |d|^2.
    */
    template <detail::StencilOrder Order = detail::StencilOrder::from_query, class F>
    KOKKOS_INLINE_FUNCTION void for_each_neighbor( int i, Scalar radius, F&& f ) const
    {
        const Scalar xi = m_x( i, 0 );
        const Scalar yi = m_x( i, 1 );
        const Scalar zi = m_x( i, 2 );
        dispatch<Order>( m_min_image, i, xi, yi, zi, radius * radius, f );
    }

    //! for_each_neighbor(i, cutoff(), f).
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each_neighbor( int i, F&& f ) const
    {
        for_each_neighbor( i, m_geom.cutoff, f );
    }

    /*!
      for_each_neighbor(i, radius, f) with the walk fixed at compile time: the cell ordering (Order, which
      must be the query's unless from_query) and how candidates are read (Access, which must match
      data_sorted() unless from_query, and then the query must not use the per-pair minimum image). A
      kernel compiled for one walk holds no other walk's registers (see detail::with_stencil_walk()).
    */
    template <detail::StencilOrder Order, detail::DataAccess Access, class F>
    KOKKOS_INLINE_FUNCTION void for_each_neighbor_as( int i, Scalar radius, F&& f ) const
    {
        if constexpr ( Access == detail::DataAccess::from_query )
            for_each_neighbor<Order>( i, radius, f );
        else
            visit_stencil<false, Order>( i, m_x( i, 0 ), m_x( i, 1 ), m_x( i, 2 ), radius * radius,
                                         GlobalSource<Access == detail::DataAccess::sorted, false>{ *this }, f );
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
    // The stencil walk's parts: internal (they name detail types and may change with the walk). The
    // library's other walks (NeighborReduction) and the benchmarks' experiments reach them through
    // detail::QueryAccess.
    friend struct detail::QueryAccess;

    //! The query's cell ordering as a stencil walk names it (for kernels compiled per ordering).
    KOKKOS_INLINE_FUNCTION detail::StencilOrder stencil_order() const
    {
        return m_row_major ? detail::StencilOrder::row_major
                           : ( m_whole_rows ? detail::StencilOrder::morton_rows : detail::StencilOrder::morton );
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
      \brief The stencil walk behind every query, reading candidates through `source`.

      `source.scan(piece, slot_begin, slot_end, self, xi, yi, zi, sx, sy, sz, r2max, f)` visits the
      sorted slots [slot_begin, slot_end), one run of cells; `piece` names the run within the stencil
      (see visit_cell_stencil). (sx, sy, sz) is the image shift of the run (x_j + s is the image of x_j
      near x_i).
    */
    template <bool MinImage, detail::StencilOrder Order = detail::StencilOrder::from_query, class Source, class F>
    KOKKOS_INLINE_FUNCTION void visit_stencil( int self, Scalar xi, Scalar yi, Scalar zi,
                                               Scalar r2max, const Source& source, F& f ) const
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
        visit_cell_stencil<Order>( ix, iy, iz, below, above, r2max,
                            [&]( int piece, int begin, int end, Scalar sx, Scalar sy, Scalar sz ) {
                                source.scan( piece, begin, end, self, xi, yi, zi, sx, sy, sz, r2max, f );
                            } );
    }

    /*!
      \brief The runs of sorted slots that can hold neighbours of points in cell (ix, iy, iz) whose
      distances to the cell's faces are at least below[d] and above[d] (all zero: no pruning).

      Calls run(piece, slot_begin, slot_end, sx, sy, sz) for each run, in a fixed order (rows oz, then
      oy, from -1 to 1; with whole rows (row-major and morton_rows cells), within a row the cell reached
      by wrapping below x = 0, then the unwrapped run, then the cell reached by wrapping above; with
      Z-order cells the row's cells from ox = -1 to 1, one run each). `piece` is the row index
      (oz + 1) * 3 + (oy + 1) times 3, plus 0, 1 or 2 for the three runs of a whole row (1 for every
      Z-order cell). (sx, sy, sz) is the run's image shift. Cells, and whole rows,
      whose nearest point is farther than sqrt(r2max) are skipped: with cells about one cutoff wide
      this prunes about a quarter of the candidates of one particle (27 cells -> 20.6 on average).
      Points whose bounds are smaller (a group of particles, with the smallest distances of any of
      them) get a superset of the runs each would get alone, in the same order.
      `Order` fixes the cell ordering at compile time (it must be the query's); the default reads it.
    */
    template <detail::StencilOrder Order = detail::StencilOrder::from_query, class Run>
    KOKKOS_INLINE_FUNCTION void visit_cell_stencil( int ix, int iy, int iz, const Scalar ( &below )[3],
                                                    const Scalar ( &above )[3], Scalar r2max,
                                                    const Run& run ) const
    {
        const int nx = m_geom.ncell[0];
        const int ny = m_geom.ncell[1];
        const bool periodic_x = m_geom.is_periodic( 0 );
        const Scalar lx = m_geom.box.length( 0 );
        const Scalar zero = Scalar( 0 );
        using detail::StencilOrder;
        const bool whole_rows = Order == StencilOrder::from_query ? m_whole_rows : Order != StencilOrder::morton;
        const bool row_major = Order == StencilOrder::from_query ? m_row_major : Order == StencilOrder::row_major;
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
                const int piece = 3 * ( 3 * ( oz + 1 ) + ( oy + 1 ) );
                if ( whole_rows )
                {
                    // Key of the row's first cell; the row's cells follow it.
                    const int row_linear = nx * ( cy + ny * cz );
                    const int row = row_major ? row_linear : m_cell_key( row_linear );
                    // Whether the cells left and right of the particle's column can hold neighbours.
                    const bool left = below[0] * below[0] + row_d2 <= r2max;
                    const bool right = above[0] * above[0] + row_d2 <= r2max;
                    int lo = ix, hi = ix; // unwrapped run of cells [lo, hi]
                    if ( periodic_x && nx < 3 )
                    {
                        lo = 0;
                        hi = nx - 1;
                    }
                    else
                    {
                        if ( left && ix > 0 )
                            lo = ix - 1;
                        if ( right && ix + 1 < nx )
                            hi = ix + 1;
                    }
                    if ( periodic_x && nx >= 3 && left && ix == 0 )
                        run( piece, m_offsets( row + nx - 1 ), m_offsets( row + nx ), -lx, sy, sz );
                    run( piece + 1, m_offsets( row + lo ), m_offsets( row + hi + 1 ), zero, sy, sz );
                    if ( periodic_x && nx >= 3 && right && ix == nx - 1 )
                        run( piece + 2, m_offsets( row ), m_offsets( row + 1 ), lx, sy, sz );
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
                        run( piece + 1, m_offsets( key ), m_offsets( key + 1 ), sx, sy, sz );
                    }
                }
            }
        }
    }

    /*!
      Reads candidates from the queried positions (through the permutation unless the data are
      sorted); the shift (or, with MinImage, the per-pair minimum image) is applied to x_i - x_j.
    */
    template <bool Sorted, bool MinImage>
    struct GlobalSource
    {
        const NeighborQuery& q;

        template <class F>
        KOKKOS_INLINE_FUNCTION void scan( int, int begin, int end, int self, Scalar xi, Scalar yi,
                                          Scalar zi, Scalar sx, Scalar sy, Scalar sz, Scalar r2max,
                                          F& f ) const
        {
            // Most runs need no image shift; they take the loop without the subtractions.
            if ( MinImage || ( sx == Scalar( 0 ) && sy == Scalar( 0 ) && sz == Scalar( 0 ) ) )
                run<false>( begin, end, self, xi, yi, zi, sx, sy, sz, r2max, f );
            else
                run<true>( begin, end, self, xi, yi, zi, sx, sy, sz, r2max, f );
        }

        template <bool Shifted, class F>
        KOKKOS_INLINE_FUNCTION void run( int begin, int end, int self, Scalar xi, Scalar yi,
                                         Scalar zi, Scalar sx, Scalar sy, Scalar sz, Scalar r2max,
                                         F& f ) const
        {
            for ( int k = begin; k < end; ++k )
            {
                const int j = Sorted ? k : q.m_perm( k );
                if ( j == self )
                    continue;
                Scalar dx, dy, dz, r2;
                if constexpr ( MinImage )
                {
                    dx = q.m_geom.box.minimum_image( 0, xi - q.m_x( j, 0 ) );
                    dy = q.m_geom.box.minimum_image( 1, yi - q.m_x( j, 1 ) );
                    dz = q.m_geom.box.minimum_image( 2, zi - q.m_x( j, 2 ) );
                    r2 = detail::distance_squared( dx, dy, dz );
                }
                else
                    r2 = detail::pair_offset<Shifted>( xi, yi, zi, q.m_x( j, 0 ), q.m_x( j, 1 ), q.m_x( j, 2 ), sx,
                                                       sy, sz, dx, dy, dz );
                if ( r2 <= r2max )
                    f( j, dx, dy, dz, r2 );
            }
        }
    };

    template <detail::StencilOrder Order = detail::StencilOrder::from_query, class F>
    KOKKOS_INLINE_FUNCTION void dispatch( bool min_image, int self, Scalar xi, Scalar yi,
                                          Scalar zi, Scalar r2max, F& f ) const
    {
        if ( m_sorted )
        {
            if ( min_image )
                visit_stencil<true, Order>( self, xi, yi, zi, r2max, GlobalSource<true, true>{ *this }, f );
            else
                visit_stencil<false, Order>( self, xi, yi, zi, r2max, GlobalSource<true, false>{ *this }, f );
        }
        else
        {
            if ( min_image )
                visit_stencil<true, Order>( self, xi, yi, zi, r2max, GlobalSource<false, true>{ *this }, f );
            else
                visit_stencil<false, Order>( self, xi, yi, zi, r2max, GlobalSource<false, false>{ *this }, f );
        }
    }

    GridGeometry<Scalar> m_geom;
    index_view m_offsets;
    index_view m_perm;
    index_view m_cell_key;
    PositionView m_x;
    bool m_sorted = false;
    bool m_row_major = true;
    bool m_whole_rows = true;
    bool m_min_image = false;
    int m_num_particles = 0;
    Kokkos::Array<Scalar, 3> m_face_margin{};
};

namespace detail
{
/*!
  \brief The parts of NeighborQuery's stencil walk, for the library's other walks (NeighborReduction) and
  the benchmarks' experiments. Internal, no stable interface.
*/
struct QueryAccess
{
    //! The query's own candidate source (as visit_stencil's `source`), to wrap.
    template <bool Sorted, bool MinImage, class Query>
    KOKKOS_INLINE_FUNCTION static auto global_source( const Query& q )
    {
        return typename Query::template GlobalSource<Sorted, MinImage>{ q };
    }

    template <class Query>
    KOKKOS_INLINE_FUNCTION static StencilOrder stencil_order( const Query& q )
    {
        return q.stencil_order();
    }
    template <class Query>
    KOKKOS_INLINE_FUNCTION static bool neighbor_cell( const Query& q, int d, int c, int o, int& nc,
                                                      typename Query::scalar_type& shift )
    {
        return q.neighbor_cell( d, c, o, nc, shift );
    }
    template <class Query>
    KOKKOS_INLINE_FUNCTION static void face_distances( const Query& q, int d, int c, typename Query::scalar_type x,
                                                       typename Query::scalar_type& below,
                                                       typename Query::scalar_type& above )
    {
        q.face_distances( d, c, x, below, above );
    }
    template <bool MinImage, StencilOrder Order = StencilOrder::from_query, class Query, class Source, class F>
    KOKKOS_INLINE_FUNCTION static void visit_stencil( const Query& q, int self, typename Query::scalar_type xi,
                                                      typename Query::scalar_type yi, typename Query::scalar_type zi,
                                                      typename Query::scalar_type r2max, const Source& source, F& f )
    {
        q.template visit_stencil<MinImage, Order>( self, xi, yi, zi, r2max, source, f );
    }
    template <StencilOrder Order = StencilOrder::from_query, class Query, class Run>
    KOKKOS_INLINE_FUNCTION static void
    visit_cell_stencil( const Query& q, int ix, int iy, int iz, const typename Query::scalar_type ( &below )[3],
                        const typename Query::scalar_type ( &above )[3], typename Query::scalar_type r2max, const Run& run )
    {
        q.template visit_cell_stencil<Order>( ix, iy, iz, below, above, r2max, run );
    }
};

/*!
  Calls launch(std::integral_constant<StencilOrder, O>{}) with the query's ordering O on GPUs (one kernel
  per ordering, so that no kernel carries the registers of another ordering's walk), and with
  StencilOrder::from_query on host backends (one kernel: less to compile, and a CPU's registers are not
  shared with other threads).
*/
template <class ExecutionSpace, class Query, class Launch>
void with_stencil_order( const ExecutionSpace&, const Query& query, const Launch& launch )
{
    if constexpr ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible )
        launch( std::integral_constant<StencilOrder, StencilOrder::from_query>{} );
    else
        switch ( QueryAccess::stencil_order( query ) )
        {
        case StencilOrder::row_major:
            launch( std::integral_constant<StencilOrder, StencilOrder::row_major>{} );
            break;
        case StencilOrder::morton_rows:
            launch( std::integral_constant<StencilOrder, StencilOrder::morton_rows>{} );
            break;
        default:
            launch( std::integral_constant<StencilOrder, StencilOrder::morton>{} );
            break;
        }
}

/*!
  Calls launch(order, access) with integral constants of StencilOrder and DataAccess that fit the query:
  on GPUs its ordering and whether its data are in cell order (one kernel per walk, as with_stencil_order,
  and the readers of sorted and permuted data apart), or (from_query, from_query) where the query uses the
  per-pair minimum image (rare: periodic axes of fewer than 3 cells, periodic positions outside the box);
  on host backends (from_query, from_query): one kernel.
*/
template <class ExecutionSpace, class Query, class Launch>
void with_stencil_walk( const ExecutionSpace& exec, const Query& query, const Launch& launch )
{
    using any_access = std::integral_constant<DataAccess, DataAccess::from_query>;
    if constexpr ( Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecutionSpace::memory_space>::accessible )
        launch( std::integral_constant<StencilOrder, StencilOrder::from_query>{}, any_access{} );
    else if ( query.per_pair_minimum_image() )
        launch( std::integral_constant<StencilOrder, StencilOrder::from_query>{}, any_access{} );
    else
        with_stencil_order( exec, query, [&]( auto order ) {
            if ( query.data_sorted() )
                launch( order, std::integral_constant<DataAccess, DataAccess::sorted>{} );
            else
                launch( order, std::integral_constant<DataAccess, DataAccess::through_permutation>{} );
        } );
}
} // namespace detail

} // namespace morula::grid

#endif
