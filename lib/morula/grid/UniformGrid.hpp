/*!
  \file UniformGrid.hpp
  \brief Sorted uniform grid (cell lists): bins particles into cells of edge >= cutoff with a stable
  counting sort, and answers neighbour queries through NeighborQuery.
*/
#ifndef MORULA_GRID_UNIFORMGRID_HPP
#define MORULA_GRID_UNIFORMGRID_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/SoA.hpp>
#include <morula/core/detail/Gather.hpp>
#include <morula/grid/GridGeometry.hpp>
#include <morula/grid/NeighborQuery.hpp>
#include <morula/grid/detail/BucketSort.hpp>
#include <morula/grid/detail/GridBuild.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::grid
{

//! Options of a UniformGrid.
struct GridOptions
{
    //! Cell numbering, which is also the particle order after permute().
    CellOrdering ordering = CellOrdering::row_major;
    //! Upper bound on the number of cells (4 bytes of offsets each); more is a CapacityError.
    std::int64_t max_cells = std::int64_t( 1 ) << 28;
};

/*!
  \brief Uniform grid over a Box, rebuilt from positions as often as they change.

  build() computes each particle's cell, the stable permutation that sorts particles by cell (a
  two-level counting sort, see detail/GridBuild.hpp: no comparison sort except for buckets too large
  for scratch memory) and the start offset of every cell. permute() applies the permutation to particle data, so that neighbours
  in space become neighbours in memory; query() returns the device handle that visits neighbours.

  \tparam Scalar float or double (positions and cutoff)
  \tparam MemorySpace where the grid's arrays live; kernels run on the execution space passed to build()
*/
template <class Scalar, class MemorySpace>
class UniformGrid
{
  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using index_view = Kokkos::View<int*, MemorySpace>;
    using pair_view = Kokkos::View<std::uint64_t*, MemorySpace>;

    UniformGrid() = default;

    /*!
      \param box simulation box (validated)
      \param cutoff largest neighbour radius to be queried (> 0)
      \param options cell numbering (CellOrdering) and the cell budget (max_cells)
    */
    UniformGrid( const Box<Scalar>& box, Scalar cutoff, const GridOptions& options = {} )
        : m_options( options )
    {
        if ( options.max_cells < 1 || options.max_cells > INT_MAX - 1 )
            throw core::InputError( core::detail::concat(
                "UniformGrid: GridOptions::max_cells = ", options.max_cells,
                " is outside [1, ", INT_MAX - 1, "]" ) );
        m_geometry = GridGeometry<Scalar>( box, cutoff, options.max_cells, "UniformGrid" );
        if ( options.ordering != CellOrdering::row_major &&
             options.ordering != CellOrdering::morton &&
             options.ordering != CellOrdering::morton_rows )
            throw core::InputError( core::detail::concat(
                "UniformGrid: GridOptions::ordering = ", static_cast<int>( options.ordering ),
                " is not a CellOrdering" ) );
        // Morton codes interleave 10 bits per axis (x does not enter them with whole rows).
        if ( options.ordering != CellOrdering::row_major )
            for ( int d = options.ordering == CellOrdering::morton_rows ? 1 : 0; d < 3; ++d )
                if ( m_geometry.ncell[d] > detail::max_morton_cells_per_axis )
                    throw core::CapacityError( core::detail::concat(
                        "UniformGrid: Morton ordering (", to_string( options.ordering ), ") supports at most ",
                        detail::max_morton_cells_per_axis, " cells along ", "xyz"[d], "; axis ", "xyz"[d],
                        " has ", m_geometry.ncell[d], "; use CellOrdering::row_major" ) );
        m_offsets = index_view( "morula::grid::cell_offsets", m_geometry.num_cells() + 1 );
        m_status = index_view( "morula::grid::build_status", detail::status_size );
    }

    const GridGeometry<Scalar>& geometry() const { return m_geometry; }
    const GridOptions& options() const { return m_options; }
    int num_cells() const { return m_geometry.num_cells(); }
    int num_particles() const { return m_num_particles; }

    /*!
      \brief Bins the first n particles of `positions` (anything indexable as positions(i, d)).
      \throws core::InputError if n is negative or exceeds the positions, or if a position is NaN or
      infinite, or lies outside the box along a closed axis; the message names the first such particle.
    */
    template <class ExecutionSpace, class PositionView>
    void build( const ExecutionSpace& exec, const PositionView& positions, int n )
    {
        static_assert( Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                       "UniformGrid::build: the execution space cannot access the grid's memory" );
        compat::ScopedRegion region( "morula::grid::UniformGrid::build" );
        if ( n < 0 || static_cast<std::size_t>( n ) > positions.extent( 0 ) )
            throw core::InputError( core::detail::concat(
                "UniformGrid::build: n = ", n, " particles requested but the positions hold ",
                positions.extent( 0 ) ) );
        if ( m_options.ordering != CellOrdering::row_major && m_cell_key.extent( 0 ) == 0 )
            m_cell_key = detail::morton_cell_keys<ExecutionSpace, MemorySpace>(
                exec, m_geometry, m_options.ordering == CellOrdering::morton_rows );

        const int ncells = m_geometry.num_cells();
        constexpr bool host_backend =
            Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                       typename ExecutionSpace::memory_space>::accessible;
        const detail::BucketLayout layout =
            detail::choose_buckets( ncells, n, host_backend, exec.concurrency() );
        detail::ensure_extent( m_cell_of, n, "morula::grid::particle_cell" );
        detail::ensure_extent( m_perm, n, "morula::grid::permutation" );
        detail::ensure_extent( m_pairs, n, "morula::grid::bucket_pairs" );
        detail::ensure_extent( m_bucket_base, layout.num_buckets + 1, "morula::grid::bucket_base" );
        detail::ensure_extent( m_counters, layout.num_counters(), "morula::grid::bucket_counters" );
        detail::ensure_extent( m_oversized, layout.num_buckets, "morula::grid::oversized" );

        // Checking whether the input is already in cell order costs about a fifth of the count pass on
        // a GPU and pays only when it is. Check while it keeps paying, and otherwise every
        // order_probe_interval-th build: a run whose data stop moving gets the fast path within that
        // many builds, and a run whose particles always move pays for one check in that many.
        const bool check_order = m_identity || m_builds_since_order_check + 1 >= order_probe_interval;
        m_builds_since_order_check = check_order ? 0 : m_builds_since_order_check + 1;
        detail::reset_build( exec, m_status, m_counters, layout.num_counters(), m_offsets, ncells,
                             n, check_order );
        detail::count_buckets( exec, m_geometry, positions, n, m_cell_key, layout, m_counters,
                               m_cell_of, m_status, check_order );
        detail::scan_counters( exec, layout, m_counters, m_bucket_base );
        detail::scatter_to_buckets( exec, n, layout, m_counters, m_cell_of, m_pairs, m_status );
        detail::sort_buckets( exec, layout, ncells, m_bucket_base, m_pairs, m_cell_of, m_perm, m_offsets,
                              m_oversized, m_status );
        int status[detail::status_size];
        read_status( exec, status );
        m_num_particles = n;
        // Positions already in cell order: the permutation is the identity, queries need no
        // indirection and permute() has nothing to do.
        m_identity = status[detail::unsorted] == 0;
        m_data_sorted = m_identity;
        m_periodic_outside = status[detail::periodic_outside] != 0;
        if ( status[detail::first_bad_particle] != INT_MAX )
            throw_bad_particle( positions, status[detail::first_bad_particle] );
        if ( status[detail::num_oversized] > 0 )
            detail::sort_oversized_buckets( exec, status[detail::num_oversized], layout, ncells,
                                            m_bucket_base, m_pairs, m_perm, m_offsets,
                                            m_oversized, m_scratch_pairs );
    }

    /*!
      \brief Permutes every field of `data` into cell order (entry k becomes old entry
      permutation(k)); afterwards queries read the data directly, without indirection.
      \throws core::InputError if data.size() differs from the number of particles built.
    */
    template <class ExecutionSpace, class... Types>
    void permute( const ExecutionSpace& exec, core::SoA<MemorySpace, Types...>& data )
    {
        check_size( data.size(), "permute" );
        if ( !m_identity )
            data.permute( exec, m_perm );
        m_data_sorted = true;
    }

    template <class ExecutionSpace, class S, class... Extra>
    void permute( const ExecutionSpace& exec, core::Particles<S, MemorySpace, Extra...>& data )
    {
        permute( exec, static_cast<core::SoA<MemorySpace, S[3], Extra...>&>( data ) );
    }

    /*!
      \brief permute() for SoA storage holding the particles built first and other entries after them
      (a distributed run's ghosts): the first num_particles() entries go into cell order, the rest keep
      their rows.
      \throws core::InputError if data.size() is less than the number of particles built.
    */
    template <class ExecutionSpace, class... Types>
    void permute_leading( const ExecutionSpace& exec, core::SoA<MemorySpace, Types...>& data )
    {
        if ( data.size() < static_cast<std::size_t>( m_num_particles ) )
            throw core::InputError( core::detail::concat( "UniformGrid::permute_leading: the data hold ",
                                                          data.size(), " entries, fewer than the ",
                                                          m_num_particles, " particles built" ) );
        if ( !m_identity )
            data.permute_leading( exec, m_perm, static_cast<std::size_t>( m_num_particles ) );
        m_data_sorted = true;
    }

    template <class ExecutionSpace, class S, class... Extra>
    void permute_leading( const ExecutionSpace& exec, core::Particles<S, MemorySpace, Extra...>& data )
    {
        permute_leading( exec, static_cast<core::SoA<MemorySpace, S[3], Extra...>&>( data ) );
    }

    /*!
      \brief Permutes one View (rank 1 or 2, first extent >= number of particles) in place through a
      temporary copy. Does not mark the data as sorted: call set_data_sorted(true) once every array
      the queries read (the positions) is permuted.
    */
    template <class ExecutionSpace, class View>
    void permute_view( const ExecutionSpace& exec, const View& v ) const
    {
        if ( v.extent( 0 ) < static_cast<std::size_t>( m_num_particles ) )
            throw core::InputError( core::detail::concat(
                "UniformGrid::permute_view: the View '", v.label(), "' has ", v.extent( 0 ),
                " entries, fewer than the ", m_num_particles, " particles built" ) );
        compat::ScopedRegion region( "morula::grid::UniformGrid::permute_view" );
        if ( m_identity )
            return;
        const int n = m_num_particles;
        if constexpr ( View::rank == 1 )
        {
            Kokkos::View<typename View::non_const_value_type*, MemorySpace> tmp(
                Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::grid::permute_tmp" ),
                n );
            core::detail::gather( exec, n, m_perm, v, tmp );
            Kokkos::deep_copy( exec, Kokkos::subview( v, std::make_pair( 0, n ) ), tmp );
        }
        else
        {
            static_assert( View::rank == 2, "permute_view takes rank-1 or rank-2 Views" );
            Kokkos::View<typename View::non_const_value_type**, typename View::array_layout,
                         MemorySpace>
                tmp( Kokkos::view_alloc( Kokkos::WithoutInitializing,
                                         "morula::grid::permute_tmp" ),
                     n, v.extent( 1 ) );
            core::detail::gather( exec, n, m_perm, v, tmp );
            Kokkos::deep_copy( exec, Kokkos::subview( v, std::make_pair( 0, n ), Kokkos::ALL ),
                               tmp );
        }
    }

    /*!
      Whether the last build found its input already in cell order: the permutation is then the
      identity, the data count as sorted, and permute() and permute_view() do nothing.

      A build checks the order when the build before it found order, and otherwise every
      order_probe_interval-th build (the first build always): input that is in cell order (data permuted
      at a build, and no particle has changed cell since) is found within that many builds and then at
      every build while it stays so. A build that does not check sorts in full, which gives the same
      permutation and offsets.
    */
    bool permutation_is_identity() const { return m_identity; }

    //! See permutation_is_identity().
    static constexpr int order_probe_interval = 8;

    //! Declares whether the positions queries read are in cell order (after permuting them).
    void set_data_sorted( bool sorted ) { m_data_sorted = sorted; }
    bool data_sorted() const { return m_data_sorted; }

    //! Device handle for neighbour queries over `positions` (see NeighborQuery).
    template <class PositionView>
    NeighborQuery<Scalar, MemorySpace, PositionView> query( const PositionView& positions ) const
    {
        bool min_image = m_periodic_outside;
        for ( int d = 0; d < 3; ++d )
            min_image = min_image || ( m_geometry.is_periodic( d ) && m_geometry.ncell[d] < 3 );
        return NeighborQuery<Scalar, MemorySpace, PositionView>(
            m_geometry, m_offsets, m_perm, m_cell_key, m_options.ordering, positions, m_data_sorted,
            min_image, m_num_particles );
    }

    //! Start of every cell in sorted order; entry num_cells() is the number of particles.
    index_view cell_offsets() const { return m_offsets; }
    //! Sorted slot -> particle index, valid in [0, num_particles()).
    index_view permutation() const { return m_perm; }
    //! Particle -> cell key (the cell's position in the cell order), valid in [0, num_particles()).
    index_view particle_cells() const { return m_cell_of; }
    //! Row-major cell index -> cell key for the Morton orderings; empty for row-major ordering.
    index_view cell_keys() const { return m_cell_key; }

  private:
    void check_size( std::size_t n, const char* what ) const
    {
        if ( n != static_cast<std::size_t>( m_num_particles ) )
            throw core::InputError( core::detail::concat( "UniformGrid::", what, ": the data hold ",
                                                          n, " entries but the grid was built for ",
                                                          m_num_particles, " particles" ) );
    }

    template <class ExecutionSpace>
    void read_status( const ExecutionSpace& exec, int* status ) const
    {
        Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
            status, detail::status_size );
        Kokkos::deep_copy( exec, host, m_status );
        exec.fence();
    }

    template <class PositionView>
    [[noreturn]] void throw_bad_particle( const PositionView& x, int i ) const
    {
        // One coordinate at a time: a row of a LayoutLeft View is not contiguous.
        Scalar p[3];
        for ( int d = 0; d < 3; ++d )
        {
            typename PositionView::non_const_value_type v{};
            Kokkos::deep_copy( v, Kokkos::subview( x, i, d ) );
            p[d] = static_cast<Scalar>( v );
        }
        const auto& box = m_geometry.box;
        for ( int d = 0; d < 3; ++d )
            if ( !std::isfinite( static_cast<double>( p[d] ) ) )
                throw core::InputError( core::detail::concat(
                    "UniformGrid::build: particle ", i, " has a non-finite position (", p[0],
                    ", ", p[1], ", ", p[2], "); positions must be finite" ) );
        for ( int d = 0; d < 3; ++d )
            if ( box.boundary[d] == Boundary::closed && !( p[d] >= box.lo[d] && p[d] <= box.hi[d] ) )
                throw core::InputError( core::detail::concat(
                    "UniformGrid::build: particle ", i, " at (", p[0], ", ", p[1], ", ", p[2],
                    ") lies outside the closed box along ", "xyz"[d], ": ", p[d], " not in [",
                    box.lo[d], ", ", box.hi[d], "]" ) );
        throw core::InputError( core::detail::concat( "UniformGrid::build: particle ", i,
                                                      " has an invalid position" ) );
    }

    GridGeometry<Scalar> m_geometry;
    GridOptions m_options;
    index_view m_offsets;
    index_view m_perm;
    index_view m_cell_of;
    index_view m_cell_key;
    index_view m_bucket_base;
    index_view m_counters;
    index_view m_oversized;
    index_view m_status;
    pair_view m_pairs;
    pair_view m_scratch_pairs;
    int m_num_particles = 0;
    bool m_data_sorted = false;
    bool m_identity = false; //!< the last build found its input in cell order
    int m_builds_since_order_check = order_probe_interval; //!< the first build checks
    bool m_periodic_outside = false;
};

} // namespace morula::grid

#endif
