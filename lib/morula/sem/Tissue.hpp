/*!
  \file Tissue.hpp
  \brief Storage of a tissue of subcellular elements: elements and cells in structure-of-arrays Views
  whose capacities grow without losing data.
*/
#ifndef MORULA_SEM_TISSUE_HPP
#define MORULA_SEM_TISSUE_HPP

#include <morula/core/Error.hpp>
#include <morula/core/HostCopy.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/io/Checkpoint.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace morula::sem
{

//! Element types: only type-1 elements adhere to the basement membrane.
enum ElementType : int
{
    element_free = 0,
    element_membrane = 1
};

//! Number of gene-network species per cell (Christley et al. 2010: N, D, B, Ovol2, Ovol1, c-Myc).
inline constexpr int gene_species = ode::gene_species_count;

/*!
  \brief A tissue on the host: elements grouped by cell (cell 0's elements first, then cell 1's, ...),
  the format of initial conditions, tests and output.
*/
struct HostTissue
{
    std::vector<double> positions;   //!< 3 per element
    std::vector<int> type;           //!< per element
    std::vector<int> cell_elements;  //!< per cell: its number of elements, in cell order
    std::vector<double> species;     //!< gene_species per cell, cell-major (empty: all zero)

    std::size_t elements() const { return type.size(); }
    std::size_t cells() const { return cell_elements.size(); }

    //! Throws core::InputError naming `where` unless the arrays are consistent.
    void validate( const std::string& where ) const
    {
        using core::detail::concat;
        if ( positions.size() != 3 * type.size() )
            throw core::InputError( concat( where, ": ", positions.size(),
                                            " position values for ", type.size(),
                                            " elements (expected 3 per element)" ) );
        long long total = 0;
        for ( std::size_t c = 0; c < cell_elements.size(); ++c )
        {
            if ( cell_elements[c] < 1 )
                throw core::InputError( concat( where, ": cell ", c, " has ", cell_elements[c],
                                                " elements (expected at least 1)" ) );
            total += cell_elements[c];
        }
        if ( total != static_cast<long long>( type.size() ) )
            throw core::InputError( concat( where, ": the cells hold ", total, " elements but ",
                                            type.size(), " are given" ) );
        if ( !species.empty() && species.size() != gene_species * cell_elements.size() )
            throw core::InputError( concat( where, ": ", species.size(), " species values for ",
                                            cell_elements.size(), " cells (expected ",
                                            gene_species, " per cell)" ) );
        for ( std::size_t i = 0; i < positions.size(); ++i )
            if ( !std::isfinite( positions[i] ) )
                throw core::InputError( concat( where, ": element ", i / 3,
                                                " has a non-finite coordinate" ) );
        for ( std::size_t i = 0; i < type.size(); ++i )
            if ( type[i] != element_free && type[i] != element_membrane )
                throw core::InputError( concat( where, ": element ", i, " has type ", type[i],
                                                " (expected 0 or 1)" ) );
        for ( std::size_t i = 0; i < species.size(); ++i )
            if ( !std::isfinite( species[i] ) || species[i] < 0 )
                throw core::InputError( concat( where, ": cell ", i / gene_species, " species ",
                                                i % gene_species, " = ", species[i],
                                                " (expected a finite value >= 0)" ) );
    }
};

/*!
  \brief Elements and cells of a tissue in device Views.

  Elements are grouped by cell: cell c owns elements [cell_offset(c), cell_offset(c) + cell_count(c)),
  and element_cell(i) names the owner of element i. Positions, centres and species are LayoutLeft, so
  that one component (one species) of consecutive elements (cells) is contiguous. Gene-network species
  are double whatever Scalar is: the network is small and its slow species (Delta decays at 0.006)
  integrate over 10^5 steps.

  Capacities grow geometrically and keep every entry (reserve()); View handles fetched before a
  reserve() refer to the old storage.
*/
template <class Scalar, class MemorySpace>
class Tissue
{
  public:
    using scalar_type = Scalar;
    using memory_space = MemorySpace;
    using position_view = Kokkos::View<Scalar* [3], Kokkos::LayoutLeft, MemorySpace>;
    using scalar_view = Kokkos::View<Scalar*, MemorySpace>;
    using int_view = Kokkos::View<int*, MemorySpace>;
    using species_view = Kokkos::View<double* [gene_species], Kokkos::LayoutLeft, MemorySpace>;

    Tissue() = default;

    //! Copies a host tissue to the device (validated first).
    explicit Tissue( const HostTissue& host ) { assign( host ); }

    int num_elements() const { return m_num_elements; }
    int num_cells() const { return m_num_cells; }
    int element_capacity() const { return static_cast<int>( m_x.extent( 0 ) ); }
    int cell_capacity() const { return static_cast<int>( m_offset.extent( 0 ) ); }

    const position_view& positions() const { return m_x; }
    const int_view& element_cell() const { return m_cell; }
    const int_view& element_type() const { return m_type; }
    const int_view& cell_offset() const { return m_offset; }
    const int_view& cell_count() const { return m_count; }
    const position_view& centres() const { return m_centre; }   //!< set by compute_cell_geometry
    const scalar_view& adhesion() const { return m_adhesion; }  //!< sum of |z| over type-1 elements
    const species_view& species() const { return m_species; }

    //! Ensures the capacities, copying every stored entry (x1.5 growth beyond the request).
    void reserve( int elements, int cells )
    {
        if ( elements > element_capacity() )
        {
            const int cap = grown( element_capacity(), elements );
            Kokkos::resize( m_x, cap );
            Kokkos::resize( m_cell, cap );
            Kokkos::resize( m_type, cap );
        }
        if ( cells > cell_capacity() )
        {
            const int cap = grown( cell_capacity(), cells );
            Kokkos::resize( m_offset, cap );
            Kokkos::resize( m_count, cap );
            Kokkos::resize( m_centre, cap );
            Kokkos::resize( m_adhesion, cap );
            Kokkos::resize( m_species, cap );
        }
    }

    //! Sets the counts after a device-side change (growth, division); capacities must suffice.
    void set_counts( int elements, int cells )
    {
        if ( elements > element_capacity() || cells > cell_capacity() || elements < 0 || cells < 0 )
            throw core::InputError( core::detail::concat(
                "Tissue::set_counts: ", elements, " elements and ", cells,
                " cells exceed the capacities ", element_capacity(), " and ", cell_capacity() ) );
        m_num_elements = elements;
        m_num_cells = cells;
    }

    /*!
      \brief Swaps in element arrays of the same capacity (time stepping writes new positions into a
      spare array; growth and division write a regrouped copy of all three). Counts: set_counts().
    */
    void swap_elements( position_view& x, int_view& cell, int_view& type )
    {
        if ( x.extent( 0 ) != cell.extent( 0 ) || x.extent( 0 ) != type.extent( 0 ) )
            throw core::InputError( "Tissue::swap_elements: the arrays differ in length" );
        std::swap( m_x, x );
        std::swap( m_cell, cell );
        std::swap( m_type, type );
    }
    void swap_positions( position_view& x )
    {
        if ( x.extent( 0 ) != m_x.extent( 0 ) )
            throw core::InputError( "Tissue::swap_positions: the spare array has another capacity" );
        std::swap( m_x, x );
    }

    //! Replaces the contents with a host tissue.
    void assign( const HostTissue& host )
    {
        host.validate( "Tissue" );
        const int n = static_cast<int>( host.elements() );
        const int m = static_cast<int>( host.cells() );
        if ( m_x.extent( 0 ) == 0 )
            allocate( n > 0 ? n : 1, m > 0 ? m : 1 );
        reserve( n, m );
        std::vector<int> cell( n ), offset( m );
        for ( int c = 0, e = 0; c < m; ++c )
        {
            offset[c] = e;
            for ( int k = 0; k < host.cell_elements[c]; ++k, ++e )
                cell[e] = c;
        }
        core::copy_from_host( host.positions, n, m_x );
        core::copy_from_host( cell, n, m_cell );
        core::copy_from_host( host.type, n, m_type );
        core::copy_from_host( offset, m, m_offset );
        core::copy_from_host( host.cell_elements, m, m_count );
        if ( host.species.empty() )
            core::copy_from_host( std::vector<double>( gene_species * static_cast<std::size_t>( m ), 0.0 ), m,
                                  m_species );
        else
            core::copy_from_host( host.species, m, m_species );
        m_num_elements = n;
        m_num_cells = m;
    }

    //! Copies the tissue to the host (elements grouped by cell, in cell order).
    HostTissue to_host() const
    {
        HostTissue h;
        std::vector<int> offset;
        core::copy_to_host( m_count, m_num_cells, h.cell_elements );
        core::copy_to_host( m_offset, m_num_cells, offset );
        core::copy_to_host( m_species, m_num_cells, h.species );
        // Each cell's elements are one block at its offset, but the blocks need not follow cell order:
        // copy every element up to the end of the last block, then gather in cell order.
        std::size_t end = 0;
        for ( int c = 0; c < m_num_cells; ++c )
            end = std::max( end, static_cast<std::size_t>( offset[c] + h.cell_elements[c] ) );
        std::vector<double> x;
        std::vector<int> type;
        core::copy_to_host( m_x, end, x );
        core::copy_to_host( m_type, end, type );
        h.positions.reserve( 3 * static_cast<std::size_t>( m_num_elements ) );
        h.type.reserve( m_num_elements );
        for ( int c = 0; c < m_num_cells; ++c )
            for ( int k = 0; k < h.cell_elements[c]; ++k )
            {
                const std::size_t e = offset[c] + k;
                h.positions.insert( h.positions.end(), x.begin() + 3 * e, x.begin() + 3 * e + 3 );
                h.type.push_back( type[e] );
            }
        return h;
    }

    /*!
      \brief Writes every stored entry under `prefix` ("tissue/"): the capacities, the elements' positions,
      cells and types, the cells' offsets, counts, centres, adhesion and species, in storage order.
    */
    void checkpoint( io::CheckpointWriter& out, const std::string& prefix ) const
    {
        out.put_scalar( prefix + "element_capacity", element_capacity() );
        out.put_scalar( prefix + "cell_capacity", cell_capacity() );
        out.put_field( prefix + "positions", m_x, m_num_elements );
        out.put_field( prefix + "element_cell", m_cell, m_num_elements );
        out.put_field( prefix + "element_type", m_type, m_num_elements );
        out.put_field( prefix + "cell_offset", m_offset, m_num_cells );
        out.put_field( prefix + "cell_count", m_count, m_num_cells );
        out.put_field( prefix + "centres", m_centre, m_num_cells );
        out.put_field( prefix + "adhesion", m_adhesion, m_num_cells );
        out.put_field( prefix + "species", m_species, m_num_cells );
    }

    /*!
      \brief Replaces the contents with a checkpoint's (written by checkpoint() with the same prefix), at
      the checkpoint's capacities, so that later growth allocates exactly as the checkpointed run did.
      The cell table is checked first (every cell a block of its own elements inside the element
      count); nothing changes if the checkpoint is refused.
      \throws core::InputError naming the checkpoint file and entry for a missing entry, another scalar
      type or shape, or an inconsistent cell table
    */
    void restart( const io::CheckpointReader& in, const std::string& prefix )
    {
        using core::detail::concat;
        const std::vector<int> cell = in.get<int>( prefix + "element_cell" );
        const std::vector<int> type = in.get<int>( prefix + "element_type" );
        const std::vector<int> offset = in.get<int>( prefix + "cell_offset" );
        const std::vector<int> count = in.get<int>( prefix + "cell_count" );
        const int n = static_cast<int>( cell.size() );
        const int m = static_cast<int>( count.size() );
        const int element_cap = in.scalar<int>( prefix + "element_capacity" );
        const int cell_cap = in.scalar<int>( prefix + "cell_capacity" );
        if ( type.size() != cell.size() || offset.size() != count.size() )
            in.fail( concat( "'", prefix, "' holds ", cell.size(), " element cells but ", type.size(),
                             " element types, or ", offset.size(), " cell offsets but ", count.size(), " counts" ) );
        if ( element_cap < std::max( n, 1 ) || cell_cap < std::max( m, 1 ) )
            in.fail( concat( "'", prefix, "' capacities ", element_cap, " elements and ", cell_cap,
                             " cells are below the ", n, " elements and ", m, " cells it holds" ) );
        long long total = 0;
        for ( int c = 0; c < m; ++c )
        {
            if ( count[c] < 1 || offset[c] < 0 || offset[c] > n - count[c] )
                in.fail( concat( "'", prefix, "cell_offset/cell_count': cell ", c, " has elements [", offset[c],
                                 ", ", static_cast<long long>( offset[c] ) + count[c], ") outside the ", n,
                                 " elements" ) );
            for ( int e = offset[c]; e < offset[c] + count[c]; ++e )
                if ( cell[e] != c )
                    in.fail( concat( "'", prefix, "element_cell': element ", e, " names cell ", cell[e],
                                     " but lies in the block of cell ", c ) );
            total += count[c];
        }
        if ( total != n )
            in.fail( concat( "'", prefix, "cell_count': the cells hold ", total, " elements, the tissue ", n ) );
        for ( int e = 0; e < n; ++e )
            if ( type[e] != element_free && type[e] != element_membrane )
                in.fail( concat( "'", prefix, "element_type': element ", e, " has type ", type[e],
                                 " (expected 0 or 1)" ) );
        // Read into new arrays first: a refused entry leaves this tissue as it was.
        Tissue t;
        t.allocate( element_cap, cell_cap );
        in.get_field( prefix + "positions", t.m_x, n );
        core::copy_from_host( cell, n, t.m_cell );
        core::copy_from_host( type, n, t.m_type );
        core::copy_from_host( offset, m, t.m_offset );
        core::copy_from_host( count, m, t.m_count );
        in.get_field( prefix + "centres", t.m_centre, m );
        in.get_field( prefix + "adhesion", t.m_adhesion, m );
        in.get_field( prefix + "species", t.m_species, m );
        t.m_num_elements = n;
        t.m_num_cells = m;
        *this = std::move( t );
    }

  private:
    static int grown( int current, int requested )
    {
        const long long g = static_cast<long long>( current ) + current / 2 + 16;
        const long long want = g > requested ? g : requested;
        if ( want > INT32_MAX )
            throw core::CapacityError( core::detail::concat(
                "Tissue: ", requested, " entries exceed the 32-bit index range" ) );
        return static_cast<int>( want );
    }

    void allocate( int elements, int cells )
    {
        m_x = position_view( "morula::sem::element_positions", elements );
        m_cell = int_view( "morula::sem::element_cell", elements );
        m_type = int_view( "morula::sem::element_type", elements );
        m_offset = int_view( "morula::sem::cell_offset", cells );
        m_count = int_view( "morula::sem::cell_count", cells );
        m_centre = position_view( "morula::sem::cell_centre", cells );
        m_adhesion = scalar_view( "morula::sem::cell_adhesion", cells );
        m_species = species_view( "morula::sem::cell_species", cells );
    }

    position_view m_x;
    int_view m_cell;
    int_view m_type;
    int_view m_offset;
    int_view m_count;
    position_view m_centre;
    scalar_view m_adhesion;
    species_view m_species;
    int m_num_elements = 0;
    int m_num_cells = 0;
};

} // namespace morula::sem

#endif
