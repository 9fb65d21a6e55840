/*!
  \file NeighborList.hpp
  \brief Compressed-sparse-row (CSR) neighbour list built through the uniform grid, with a skin for
  reuse over several steps (Verlet list).
*/
#ifndef MORULA_GRID_NEIGHBORLIST_HPP
#define MORULA_GRID_NEIGHBORLIST_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/grid/NeighborReduction.hpp>
#include <morula/grid/NeighborSweep.hpp>
#include <morula/grid/detail/NeighborListFill.hpp>
#include <morula/grid/detail/StagedListFill.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace morula::grid
{

/*!
  \brief Device view of a NeighborList: the neighbours of particle i are
  indices(offsets(i)) ... indices(offsets(i + 1) - 1), in a deterministic order.
*/
template <class MemorySpace>
struct NeighborListView
{
    using offset_type = std::int64_t;

    Kokkos::View<const offset_type*, MemorySpace> offsets;
    Kokkos::View<const int*, MemorySpace> indices;

    KOKKOS_INLINE_FUNCTION int count( int i ) const
    {
        return static_cast<int>( offsets( i + 1 ) - offsets( i ) );
    }
    KOKKOS_INLINE_FUNCTION offset_type begin( int i ) const { return offsets( i ); }
    KOKKOS_INLINE_FUNCTION offset_type end( int i ) const { return offsets( i + 1 ); }
    KOKKOS_INLINE_FUNCTION int neighbor( offset_type k ) const { return indices( k ); }

    //! Calls f(j) for every listed neighbour j of particle i, in list order.
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( int i, F&& f ) const
    {
        const offset_type e = offsets( i + 1 );
        offset_type k = offsets( i );
        // Four loads in flight before the calls (the calls keep their order): each lane's entries are
        // its own line, and one outstanding load per thread left the memory system waiting
        // (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): second pass").
        for ( ; k + 4 <= e; k += 4 )
        {
            const int j0 = indices( k ), j1 = indices( k + 1 ), j2 = indices( k + 2 ),
                      j3 = indices( k + 3 );
            f( j0 );
            f( j1 );
            f( j2 );
            f( j3 );
        }
        for ( ; k < e; ++k )
            f( indices( k ) );
    }
};

/*!
  \brief The listed neighbours of one particle, handed to the function of
  for_each_listed_particle(). `ListView` is a NeighborListView or an EllNeighborListView.
*/
template <class ListView, class ExecutionSpace>
class BasicListedNeighbors
{
  public:
    KOKKOS_INLINE_FUNCTION BasicListedNeighbors( const ListView& list, int i )
        : m_list( list ), m_i( i )
    {
    }

    KOKKOS_INLINE_FUNCTION int particle() const { return m_i; }
    KOKKOS_INLINE_FUNCTION int count() const { return m_list.count( m_i ); }

    //! Calls f(j) for every listed neighbour j, in list order.
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each( F&& f ) const
    {
        m_list.for_each( m_i, f );
    }

  private:
    const ListView& m_list;
    int m_i;
};

//! The listed neighbours of a CSR list (NeighborList).
template <class MemorySpace, class ExecutionSpace>
using ListedNeighbors = BasicListedNeighbors<NeighborListView<MemorySpace>, ExecutionSpace>;

/*!
  \brief Runs f(i, neighbours) for every particle i < n of a neighbour list, in parallel, one thread per
  particle, where `neighbours` is a BasicListedNeighbors<ListView, ExecutionSpace> (for a CSR list,
  ListedNeighbors<MemorySpace, ExecutionSpace>; for an ELL list, EllListedNeighbors<MemorySpace,
  ExecutionSpace>); call `neighbours.for_each([&](int j) { ... })`.
*/
template <class ExecutionSpace, class ListView, class Functor>
void for_each_listed_particle( const ExecutionSpace& exec, const ListView& list, int n,
                               const Functor& f,
                               const std::string& label = "morula::grid::for_each_listed_particle" )
{
    using neighbors_type = BasicListedNeighbors<ListView, ExecutionSpace>;
    Kokkos::parallel_for(
        label, core::LaunchRange<ExecutionSpace>( exec, 0, n ), KOKKOS_LAMBDA( const int i ) {
            const neighbors_type nb( list, i );
            f( i, nb );
        } );
}

namespace detail
{
//! NeighborReduction kernel: count(i) = the number of neighbours of i.
template <class Scalar, class CountView>
struct NeighborCount
{
    using accumulator_type = int;
    CountView count;

    KOKKOS_INLINE_FUNCTION void init( int, int& ) const {}
    KOKKOS_INLINE_FUNCTION void pair( int, int, Scalar, Scalar, Scalar, Scalar, int& c ) const { ++c; }
    template <class Neighbors>
    KOKKOS_INLINE_FUNCTION void finish( int i, int& c, const Neighbors& ) const
    {
        count( i ) = c;
    }
};
} // namespace detail

/*!
  \brief CSR neighbour list: count, exclusive scan, fill.

  build() lists, for each particle, every other particle within cutoff + skin (found through a
  NeighborQuery whose grid cutoff is at least that). The list stays valid while no particle has moved
  more than skin / 2 since the build, which needs_rebuild() checks; a new grid build or a permute
  renumbers particles and needs a new list.
*/
template <class Scalar, class MemorySpace>
class NeighborList
{
  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using offset_type = std::int64_t;
    using offset_view = Kokkos::View<offset_type*, MemorySpace>;
    using index_view = Kokkos::View<int*, MemorySpace>;
    using positions_type = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace>;

    NeighborList() = default;

    /*!
      \brief Lists all pairs within cutoff + skin for the particles of `query`.
      \throws core::InputError if cutoff <= 0, skin < 0 or cutoff + skin exceeds the grid's cutoff.
    */
    template <class ExecutionSpace, class Query>
    void build( const ExecutionSpace& exec, const Query& query, Scalar cutoff, Scalar skin = 0 )
    {
        static_assert( Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                       "NeighborList::build: the execution space cannot access the list's memory" );
        const Scalar radius =
            detail::checked_list_radius( "NeighborList::build", cutoff, skin, query.cutoff() );
        compat::ScopedRegion region( "morula::grid::NeighborList::build" );
        const int n = query.num_particles();
        ensure_offsets( n );
        auto offsets = m_offsets;
        Kokkos::deep_copy( exec, Kokkos::subview( offsets, n ), offset_type( 0 ) );
        // Counted through NeighborReduction: on GPUs, with sorted data, several particles of a cell per thread.
        m_count.run( exec, query, detail::NeighborCount<Scalar, offset_view>{ offsets }, radius, n,
                     "morula::grid::neighbor_count" );
        offset_type total = 0;
        Kokkos::parallel_scan(
            "morula::grid::neighbor_scan", core::LaunchRange<ExecutionSpace>( exec, 0, n + 1 ),
            KOKKOS_LAMBDA( const int i, offset_type& update, const bool final_pass ) {
                const offset_type c = offsets( i );
                if ( final_pass )
                    offsets( i ) = update;
                update += c;
            },
            total );
        ensure_indices( total );
        detail::fill_neighbor_list( exec, query, n, radius, offsets, m_indices );
        m_num_particles = n;
        m_num_pairs = total;
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
        return detail::moved_beyond_half_skin( "NeighborList", exec, x, m_reference, m_num_particles,
                                               m_box, m_skin );
    }

    /*!
      \brief Makes this CSR list a copy of another list of the same particles (an EllNeighborList):
      same neighbours in the same order, same cutoff, skin and reference positions. An ELL list built
      in one pass and copied here is the one-pass way to a CSR list, at the cost of holding both.
    */
    template <class ExecutionSpace, class OtherList>
    void assign( const ExecutionSpace& exec, const OtherList& other )
    {
        compat::ScopedRegion region( "morula::grid::NeighborList::assign" );
        const int n = other.num_particles();
        ensure_offsets( n );
        auto offsets = m_offsets;
        const auto source = other.view();
        offset_type total = 0;
        Kokkos::parallel_scan(
            "morula::grid::neighbor_assign_scan", core::LaunchRange<ExecutionSpace>( exec, 0, n + 1 ),
            KOKKOS_LAMBDA( const int i, offset_type& update, const bool final_pass ) {
                const offset_type c = i < n ? source.count( i ) : 0;
                if ( final_pass )
                    offsets( i ) = update;
                update += c;
            },
            total );
        ensure_indices( total );
        auto indices = m_indices;
        if constexpr ( detail::stages_list_fill<ExecutionSpace>() )
            detail::copy_list_to_csr_staged( exec, source, n, offsets, indices );
        else
            Kokkos::parallel_for(
                "morula::grid::neighbor_assign_copy", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
                KOKKOS_LAMBDA( const int i ) {
                    offset_type k = offsets( i );
                    source.for_each( i, [&]( const int j ) { indices( k++ ) = j; } );
                } );
        m_num_particles = n;
        m_num_pairs = total;
        m_cutoff = other.cutoff();
        m_skin = other.skin();
        m_box = other.box();
        if ( m_skin > 0 )
        {
            const auto ref = other.reference_positions();
            if ( m_reference.extent( 0 ) < static_cast<std::size_t>( n ) )
                m_reference = positions_type( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                                  "morula::grid::neighbor_reference" ),
                                              n );
            Kokkos::deep_copy( exec,
                               Kokkos::subview( m_reference, std::make_pair( 0, n ), Kokkos::ALL ),
                               Kokkos::subview( ref, std::make_pair( 0, n ), Kokkos::ALL ) );
        }
    }

    /*!
      \brief The count pass's NeighborReduction: a caller may set its particles_per_thread() and
      pair_batching() (defaults: automatic, which is one per thread on host backends, and pairs inline).
      The list is the same whatever they are. On 16 host cores (OpenMP, 1M points, about 29 neighbours)
      a clang 14 build counted 1.7-1.9x faster with 3 particles per thread and batched pairs, where a
      gcc 12 build (the CUDA build's host compiler) was 1.4-3x slower with more than one per thread
      (docs/performance.md, issue #25); the host default stays at one.
    */
    NeighborReduction<MemorySpace>& counting() { return m_count; }

    NeighborListView<MemorySpace> view() const { return { m_offsets, m_indices }; }
    offset_view offsets() const { return m_offsets; }
    index_view indices() const { return m_indices; }
    int num_particles() const { return m_num_particles; }
    offset_type num_pairs() const { return m_num_pairs; }
    Scalar cutoff() const { return m_cutoff; }
    Scalar skin() const { return m_skin; }
    const core::Box<Scalar>& box() const { return m_box; }
    //! Positions at the last build (valid for a list built with skin).
    positions_type reference_positions() const { return m_reference; }

  private:
    //! Offsets for n particles (n + 1 entries); grows only.
    void ensure_offsets( int n )
    {
        if ( m_offsets.extent( 0 ) < static_cast<std::size_t>( n ) + 1 )
            m_offsets = offset_view( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                         "morula::grid::neighbor_offsets" ),
                                     n + 1 );
    }

    //! Room for `total` entries, with an eighth more so that small growth needs no reallocation.
    void ensure_indices( offset_type total )
    {
        if ( m_indices.extent( 0 ) < static_cast<std::size_t>( total ) )
            m_indices = index_view( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                                        "morula::grid::neighbor_indices" ),
                                    total + total / 8 );
    }

    NeighborReduction<MemorySpace> m_count; // the count pass and its group arrays
    offset_view m_offsets;
    index_view m_indices;
    positions_type m_reference;
    core::Box<Scalar> m_box;
    int m_num_particles = 0;
    offset_type m_num_pairs = 0;
    Scalar m_cutoff = 0;
    Scalar m_skin = 0;
};

} // namespace morula::grid

#endif
