/*!
  \file EllNeighborList.hpp
  \brief Neighbour list in ELL layout (a fixed capacity of entries per particle), built in one sweep
  through the grid and interleaved in slices so that a GPU warp reads and writes it coalesced.
*/
#ifndef MORULA_GRID_ELLNEIGHBORLIST_HPP
#define MORULA_GRID_ELLNEIGHBORLIST_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborList.hpp>
#include <morula/grid/detail/NeighborListFill.hpp>
#include <morula/grid/detail/StagedListFill.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace morula::grid
{

/*!
  \brief Device view of an EllNeighborList: particle i has count(i) neighbours, neighbor(i, k) for
  k < count(i), in the order of NeighborQuery::for_each_neighbor (the CSR list's order).

  Entry k of particle i is stored at ((i / S) * capacity + k) * S + i % S for a slice width S (32 on
  GPUs, 1 on host spaces): the k-th entries of a warp's 32 particles are adjacent, so a sweep with one
  thread per particle reads them in one transaction, and a host thread reads its particle's entries
  contiguously.
*/
template <class MemorySpace>
struct EllNeighborListView
{
    using index_type = std::int64_t;

    Kokkos::View<const int*, MemorySpace> counts;
    Kokkos::View<const int*, MemorySpace> indices;
    index_type capacity = 0; //!< entries per particle
    int slice_shift = 0;     //!< log2 of the slice width S

    KOKKOS_INLINE_FUNCTION int count( int i ) const { return counts( i ); }

    //! Where entry k of particle i is stored.
    KOKKOS_INLINE_FUNCTION index_type slot( int i, int k ) const
    {
        const index_type slice = i >> slice_shift;
        const index_type lane = i & ( ( 1 << slice_shift ) - 1 );
        return ( ( slice * capacity + k ) << slice_shift ) + lane;
    }

    KOKKOS_INLINE_FUNCTION int neighbor( int i, int k ) const { return indices( slot( i, k ) ); }

    //! Calls f(j) for every listed neighbour j of particle i, in list order.
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( int i, F&& f ) const
    {
        const int c = counts( i );
        const index_type stride = index_type( 1 ) << slice_shift;
        index_type s = slot( i, 0 );
        // A warp's k-th entries are one line, so one load per step keeps the memory busy; four loads in
        // flight, as the CSR visit does, were slower here
        // (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): second pass").
        for ( int k = 0; k < c; ++k, s += stride )
            f( indices( s ) );
    }
};

//! The listed neighbours of an ELL list, handed to the function of for_each_listed_particle().
template <class MemorySpace, class ExecutionSpace>
using EllListedNeighbors = BasicListedNeighbors<EllNeighborListView<MemorySpace>, ExecutionSpace>;

namespace detail
{
//! log2 of the ELL slice width for lists built and swept by ExecutionSpace: a warp (32) where the space
//! cannot reach host memory (GPUs; on AMD's 64-wide wavefronts each half reads whole 128-byte lines),
//! 1 on host spaces, where one thread sweeps one particle's entries.
template <class ExecutionSpace>
constexpr int ell_slice_shift()
{
    return Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible ? 0 : 5;
}

//! fill_ell_list() through the walk Order / Access (NeighborQuery::for_each_neighbor_as).
template <StencilOrder Order, DataAccess Access, class ExecutionSpace, class Query, class CountView,
          class IndexView, class Scalar>
int fill_ell_list_as( const ExecutionSpace& exec, const Query& query, int n, Scalar radius,
                      std::int64_t capacity, int slice_shift, const CountView& counts,
                      const IndexView& indices )
{
    using index_type = std::int64_t;
    int largest = 0;
    Kokkos::parallel_reduce(
        "morula::grid::neighbor_fill_ell", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, int& max_count ) {
            const index_type stride = index_type( 1 ) << slice_shift;
            index_type s = ( ( index_type( i >> slice_shift ) * capacity ) << slice_shift ) +
                           ( i & ( int( stride ) - 1 ) );
            int k = 0;
            query.template for_each_neighbor_as<Order, Access>(
                i, radius, [&]( const int j, Scalar, Scalar, Scalar, Scalar ) {
                    if ( k < capacity )
                        indices( s ) = j;
                    s += stride;
                    ++k;
                } );
            counts( i ) = k;
            if ( k > max_count )
                max_count = k;
        },
        Kokkos::Max<int>( largest ) );
    return n > 0 ? largest : 0;
}

/*!
  One sweep through the grid: writes the first `capacity` neighbours of every particle into `list`
  (ELL layout), every particle's full count into counts, and returns the largest count. A count above
  the capacity means that particle's entries were cut short. On GPUs one kernel per walk
  (detail::with_stencil_walk): one kernel for all walks held every walk's registers, and was slower
  (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): sixth pass").
*/
template <class ExecutionSpace, class Query, class CountView, class IndexView, class Scalar>
int fill_ell_list( const ExecutionSpace& exec, const Query& query, int n, Scalar radius,
                   std::int64_t capacity, int slice_shift, const CountView& counts,
                   const IndexView& indices )
{
    int largest = 0;
    with_stencil_walk( exec, query, [&]( auto order, auto access ) {
        largest = fill_ell_list_as<decltype( order )::value, decltype( access )::value>(
            exec, query, n, radius, capacity, slice_shift, counts, indices );
    } );
    return largest;
}

//! The ELL fill for ExecutionSpace: staged on GPUs (StagedListFill.hpp), direct on host spaces.
template <class ExecutionSpace, class Query, class CountView, class IndexView, class Scalar>
int fill_ell( const ExecutionSpace& exec, const Query& query, int n, Scalar radius,
              std::int64_t capacity, int slice_shift, const CountView& counts, const IndexView& indices )
{
    if constexpr ( stages_list_fill<ExecutionSpace>() )
        return fill_ell_list_staged( exec, query, n, radius, capacity, slice_shift, counts, indices );
    else
        return fill_ell_list( exec, query, n, radius, capacity, slice_shift, counts, indices );
}
} // namespace detail

/*!
  \brief Neighbour list in ELL layout, built in one sweep through the grid.

  build() lists, for each particle, every other particle within cutoff + skin, exactly as NeighborList
  does (same neighbours, same order), but into a fixed capacity of entries per particle, so that each
  particle knows where to write without a counting sweep and a prefix sum first: a rebuild is one sweep.
  The capacity is the largest count seen so far plus an eighth; a build in which some particle has more
  neighbours grows it and sweeps again (nothing is lost). The first build counts first to size it.

  Memory: n x capacity ints, against (number of pairs) ints for the CSR list; with evenly spread
  particles about 1.5x the CSR list. Where particles cluster, capacity follows the densest spot:
  prefer the CSR list there, or NeighborList::assign() from this list for a one-pass CSR build.

  The list stays valid while no particle has moved more than skin / 2 since the build
  (needs_rebuild()); a new grid build or a permute renumbers particles and needs a new list.
*/
template <class Scalar, class MemorySpace>
class EllNeighborList
{
  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using index_type = std::int64_t;
    using count_view = Kokkos::View<int*, MemorySpace>;
    using index_view = Kokkos::View<int*, MemorySpace>;
    using positions_type = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace>;

    EllNeighborList() = default;

    /*!
      \brief Sets the capacity (entries per particle) for the next build, for callers that know a bound
      and want the first build to take one sweep. A build still grows it when a particle has more.
      \throws core::InputError for a negative capacity.
    */
    void reserve( int capacity )
    {
        if ( capacity < 0 )
            throw core::InputError( core::detail::concat(
                "EllNeighborList::reserve: capacity must be >= 0, got ", capacity ) );
        m_capacity = capacity;
    }

    /*!
      \brief Lists all pairs within cutoff + skin for the particles of `query`.
      \throws core::InputError if cutoff <= 0, skin < 0 or cutoff + skin exceeds the grid's cutoff.
    */
    template <class ExecutionSpace, class Query>
    void build( const ExecutionSpace& exec, const Query& query, Scalar cutoff, Scalar skin = 0 )
    {
        static_assert( Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                       "EllNeighborList::build: the execution space cannot access the list's memory" );
        const Scalar radius =
            detail::checked_list_radius( "EllNeighborList::build", cutoff, skin, query.cutoff() );
        compat::ScopedRegion region( "morula::grid::EllNeighborList::build" );
        const int n = query.num_particles();
        const int shift = detail::ell_slice_shift<ExecutionSpace>();
        if ( m_counts.extent( 0 ) < static_cast<std::size_t>( n ) )
            m_counts = count_view( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                       "morula::grid::ell_neighbor_counts" ),
                                   n );
        if ( m_capacity == 0 )
        {
            // No capacity yet: count first (a fill with capacity 0 writes nothing).
            const int largest =
                detail::fill_ell_list( exec, query, n, radius, 0, shift, m_counts, m_indices );
            m_capacity = padded_capacity( largest );
        }
        ensure_storage( n, shift );
        int largest =
            detail::fill_ell( exec, query, n, radius, m_capacity, shift, m_counts, m_indices );
        if ( largest > m_capacity )
        {
            // Some particle's entries were cut short: grow and sweep again.
            m_capacity = padded_capacity( largest );
            ensure_storage( n, shift );
            largest = detail::fill_ell( exec, query, n, radius, m_capacity, shift, m_counts, m_indices );
        }
        m_slice_shift = shift;
        m_largest_count = largest;
        m_num_particles = n;
        m_cutoff = cutoff;
        m_skin = skin;
        m_box = query.geometry().box;
        if ( skin > 0 )
            detail::save_reference_positions( exec, query, n, m_reference );
    }

    /*!
      \brief True when some particle moved more than skin / 2 (minimum image) since the build, so that
      a pair may have come within the cutoff unlisted. Always true for a list built without skin.
    */
    template <class ExecutionSpace, class PositionView>
    bool needs_rebuild( const ExecutionSpace& exec, const PositionView& x ) const
    {
        return detail::moved_beyond_half_skin( "EllNeighborList", exec, x, m_reference,
                                               m_num_particles, m_box, m_skin );
    }

    EllNeighborListView<MemorySpace> view() const
    {
        return { m_counts, m_indices, m_capacity, m_slice_shift };
    }
    count_view counts() const { return m_counts; }
    index_view indices() const { return m_indices; }
    int num_particles() const { return m_num_particles; }
    //! Entries per particle.
    int capacity() const { return m_capacity; }
    //! The largest neighbour count of the last build.
    int largest_count() const { return m_largest_count; }
    //! log2 of the slice width (see EllNeighborListView).
    int slice_shift() const { return m_slice_shift; }
    Scalar cutoff() const { return m_cutoff; }
    Scalar skin() const { return m_skin; }
    const core::Box<Scalar>& box() const { return m_box; }
    //! Positions at the last build (valid for a list built with skin).
    positions_type reference_positions() const { return m_reference; }

  private:
    //! The capacity for a largest count: an eighth more, so that small changes need no regrowth, and
    //! a multiple of 4.
    static int padded_capacity( int largest )
    {
        const std::int64_t c = ( ( std::int64_t( largest ) + largest / 8 + 4 ) + 3 ) / 4 * 4;
        return static_cast<int>( c < std::numeric_limits<int>::max() ? c : largest );
    }

    void ensure_storage( int n, int shift )
    {
        const index_type slices = ( index_type( n ) + ( index_type( 1 ) << shift ) - 1 ) >> shift;
        const index_type entries = ( slices * m_capacity ) << shift;
        if ( static_cast<index_type>( m_indices.extent( 0 ) ) < entries )
        {
            m_indices = index_view(); // free before allocating the larger one
            m_indices = index_view( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                        "morula::grid::ell_neighbor_indices" ),
                                    entries );
        }
    }

    count_view m_counts;
    index_view m_indices;
    positions_type m_reference;
    core::Box<Scalar> m_box;
    int m_capacity = 0;
    int m_largest_count = 0;
    int m_slice_shift = 0;
    int m_num_particles = 0;
    Scalar m_cutoff = 0;
    Scalar m_skin = 0;
};

} // namespace morula::grid

#endif
