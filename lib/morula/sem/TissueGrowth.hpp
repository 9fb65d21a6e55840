/*!
  \file TissueGrowth.hpp
  \brief Growth and division of SEM cells on the device: basal cells gain an element at their centre
  every `interval` steps; a cell that reaches `division_elements` splits into two. New element and
  cell indices come from parallel prefix sums; nothing is copied to the host but two totals.
*/
#ifndef MORULA_SEM_TISSUEGROWTH_HPP
#define MORULA_SEM_TISSUEGROWTH_HPP

#include <morula/core/Error.hpp>
#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/ode/EpidermisGeneNetwork.hpp>
#include <morula/sem/Tissue.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace morula::sem
{

/*!
  \brief Which cells grow. The paper grows cells "with a low Delta expression, implying ... low Ovol1
  and high Ovol2" - the basal state. With Table 2's network the two criteria disagree (an adherent cell
  settles at higher Delta than a suprabasal one; docs/models/epidermis.md), so both are offered and the
  state itself is the default.
*/
enum class GrowthRule : int
{
    basal_state, //!< Ovol2 >= Ovol1
    low_delta    //!< Delta < delta_threshold
};

struct TissueGrowthParameters
{
    int interval = 2000;         //!< steps between growth events (the paper's 2000)
    int division_elements = 40;  //!< a cell with this many elements divides (the paper's 40)
    GrowthRule rule = GrowthRule::basal_state;
    double delta_threshold = 20; //!< for GrowthRule::low_delta

    void validate( const std::string& where ) const
    {
        if ( interval < 1 )
            throw core::InputError( core::detail::concat( where, ": growth interval = ", interval,
                                                          " steps (expected >= 1)" ) );
        if ( division_elements < 2 )
            throw core::InputError( core::detail::concat( where, ": division_elements = ",
                                                          division_elements, " (expected >= 2)" ) );
    }
};

//! What one growth event did.
struct GrowthReport
{
    int grown = 0;     //!< cells that gained an element
    int divisions = 0; //!< cells that divided (= cells added)
};

/*!
  \brief True for a cell in the basal state: Ovol2 >= Ovol1 when the gene network runs, otherwise a
  cell that has membrane-adhesive elements (A > 0).
*/
template <class SpeciesView, class AdhesionView>
KOKKOS_INLINE_FUNCTION bool is_basal( const SpeciesView& species, const AdhesionView& adhesion, int c,
                                      bool gene_network )
{
    return gene_network ? species( c, ode::gene_O2 ) >= species( c, ode::gene_O1 )
                        : adhesion( c ) > 0;
}

/*!
  \brief Growth and division. Division splits the cell's elements by height: the lower half (ties by
  index) stays with the mother, keeps its element types and thereby its membrane adhesion; the upper
  half forms the daughter, whose elements all become type 0, so it is free to leave the membrane - the
  asymmetric, perpendicular division that stratifies the epidermis. Positions are unchanged (the
  forces push the daughters apart); both daughters get half of the mother's species.
  The daughter of mother c is appended at index num_cells + (number of dividing cells before c), so
  results do not depend on thread order.
*/
template <class Scalar, class MemorySpace>
class TissueGrowth
{
  public:
    using tissue_type = Tissue<Scalar, MemorySpace>;

    explicit TissueGrowth( const TissueGrowthParameters& p )
        : m_params( p )
    {
        p.validate( "TissueGrowth" );
    }

    const TissueGrowthParameters& parameters() const { return m_params; }

    //! True after step `step_count` (1-based) when a growth event is due.
    bool due( long long step_count ) const { return step_count > 0 && step_count % m_params.interval == 0; }

    /*!
      \brief One growth event; centres must be current (SemMechanics::compute_cell_geometry).
      Capacities grow as needed; the element arrays are regrouped, so neighbour lists built before are
      stale afterwards.
    */
    template <class ExecutionSpace>
    GrowthReport apply( const ExecutionSpace& exec, tissue_type& t, bool gene_network );

  private:
    TissueGrowthParameters m_params;
    Kokkos::View<int*, MemorySpace> m_flags, m_daughter, m_new_count, m_new_offset;
    // The element arrays a growth event writes into, then swaps with the tissue's (of its capacity).
    typename tissue_type::position_view m_spare_x;
    typename tissue_type::int_view m_spare_cell, m_spare_type;
};

template <class Scalar, class MemorySpace>
template <class ExecutionSpace>
GrowthReport TissueGrowth<Scalar, MemorySpace>::apply( const ExecutionSpace& exec, tissue_type& t,
                                                       bool gene_network )
{
    compat::ScopedRegion region( "morula::sem::TissueGrowth::apply" );
    using policy = core::LaunchRange<ExecutionSpace>;
    const int m = t.num_cells();
    const int n = t.num_elements();
    if ( static_cast<int>( m_flags.extent( 0 ) ) < m + 1 )
    {
        m_flags = Kokkos::View<int*, MemorySpace>( "morula::sem::growth_flags", 2 * m + 16 );
        m_daughter = Kokkos::View<int*, MemorySpace>( "morula::sem::daughter_index", 2 * m + 16 );
    }
    // 1. Who grows and who divides; daughters numbered by a prefix sum over dividing mothers.
    auto flags = m_flags;
    auto daughter = m_daughter;
    auto count = t.cell_count();
    auto species = t.species();
    auto adhesion = t.adhesion();
    const int limit = m_params.division_elements;
    const bool low_delta = m_params.rule == GrowthRule::low_delta;
    const double threshold = m_params.delta_threshold;
    int divisions = 0;
    Kokkos::parallel_scan(
        "morula::sem::growth_flags", policy( exec, 0, m ),
        KOKKOS_LAMBDA( const int c, int& before, const bool final_pass ) {
            const bool grows = low_delta ? species( c, ode::gene_D ) < threshold
                                         : is_basal( species, adhesion, c, gene_network );
            const int grown = count( c ) + ( grows ? 1 : 0 );
            const bool divides = grown >= limit;
            if ( final_pass )
            {
                flags( c ) = ( grows ? 1 : 0 ) | ( divides ? 2 : 0 );
                daughter( c ) = divides ? m + before : -1;
            }
            before += divides ? 1 : 0;
        },
        divisions );
    int grown_cells = 0;
    Kokkos::parallel_reduce(
        "morula::sem::count_grown", policy( exec, 0, m ),
        KOKKOS_LAMBDA( const int c, int& g ) { g += flags( c ) & 1; }, grown_cells );
    if ( grown_cells == 0 && divisions == 0 )
        return {};
    const int m_new = m + divisions;
    // 2. New element counts and offsets of every cell, mothers first, then daughters.
    t.reserve( n + grown_cells, m_new );
    count = t.cell_count();
    species = t.species();
    if ( static_cast<int>( m_new_count.extent( 0 ) ) < m_new + 1 )
    {
        m_new_count = Kokkos::View<int*, MemorySpace>( "morula::sem::new_count", m_new + m_new / 2 + 16 );
        m_new_offset = Kokkos::View<int*, MemorySpace>( "morula::sem::new_offset", m_new + m_new / 2 + 16 );
    }
    auto new_count = m_new_count;
    auto new_offset = m_new_offset;
    Kokkos::parallel_for(
        "morula::sem::new_counts", policy( exec, 0, m ), KOKKOS_LAMBDA( const int c ) {
            const int total = count( c ) + ( flags( c ) & 1 );
            if ( flags( c ) & 2 )
            {
                new_count( c ) = total / 2;
                new_count( daughter( c ) ) = total - total / 2;
            }
            else
                new_count( c ) = total;
        } );
    int total_elements = 0;
    Kokkos::parallel_scan(
        "morula::sem::new_offsets", policy( exec, 0, m_new ),
        KOKKOS_LAMBDA( const int c, int& before, const bool final_pass ) {
            if ( final_pass )
                new_offset( c ) = before;
            before += new_count( c );
        },
        total_elements );
    // 3. Scatter every element (and the new ones) into regrouped arrays of the tissue's capacity: spare
    //    arrays kept between events, swapped with the tissue's (so each event reuses the last one's
    //    arrays, and only a larger capacity allocates).
    const int capacity = t.element_capacity();
    if ( static_cast<int>( m_spare_x.extent( 0 ) ) != capacity )
    {
        using Kokkos::view_alloc;
        using Kokkos::WithoutInitializing;
        m_spare_x = typename tissue_type::position_view(
            view_alloc( WithoutInitializing, std::string( "morula::sem::element_positions" ) ), capacity );
        m_spare_cell = typename tissue_type::int_view(
            view_alloc( WithoutInitializing, std::string( "morula::sem::element_cell" ) ), capacity );
        m_spare_type = typename tissue_type::int_view(
            view_alloc( WithoutInitializing, std::string( "morula::sem::element_type" ) ), capacity );
    }
    auto nx = m_spare_x;
    auto ncell = m_spare_cell;
    auto ntype = m_spare_type;
    auto x = t.positions();
    auto type = t.element_type();
    auto offset = t.cell_offset();
    auto centre = t.centres();
    Kokkos::parallel_for(
        "morula::sem::regroup_elements", policy( exec, 0, m ), KOKKOS_LAMBDA( const int c ) {
            const int b = offset( c );
            const int old_n = count( c );
            const int total = old_n + ( flags( c ) & 1 );
            const bool divides = ( flags( c ) & 2 ) != 0;
            const int half = total / 2;
            const int d = daughter( c );
            // Element k < old_n is stored element b + k; k == old_n is the new one at the centre.
            auto coord = [&]( const int k, const int axis ) -> Scalar {
                return k < old_n ? x( b + k, axis ) : centre( c, axis );
            };
            for ( int k = 0; k < total; ++k )
            {
                int slot = k;
                int owner = c;
                int element_type = k < old_n ? type( b + k ) : int( element_free );
                if ( divides )
                {
                    // Rank by height, ties by index: the lower half stays with the mother.
                    const Scalar zk = coord( k, 2 );
                    int rank = 0;
                    for ( int q = 0; q < total; ++q )
                    {
                        const Scalar zq = coord( q, 2 );
                        rank += ( zq < zk || ( zq == zk && q < k ) ) ? 1 : 0;
                    }
                    slot = rank;
                    if ( rank >= half )
                    {
                        slot = rank - half;
                        owner = d;
                        element_type = element_free;
                    }
                }
                const int e = new_offset( owner ) + slot;
                for ( int axis = 0; axis < 3; ++axis )
                    nx( e, axis ) = coord( k, axis );
                ncell( e ) = owner;
                ntype( e ) = element_type;
            }
            if ( divides )
                for ( int s = 0; s < gene_species; ++s )
                {
                    const double half_amount = 0.5 * species( c, s );
                    species( c, s ) = half_amount;
                    species( d, s ) = half_amount;
                }
        } );
    Kokkos::parallel_for(
        "morula::sem::new_cell_table", policy( exec, 0, m_new ), KOKKOS_LAMBDA( const int c ) {
            offset( c ) = new_offset( c );
            count( c ) = new_count( c );
        } );
    t.swap_elements( m_spare_x, m_spare_cell, m_spare_type );
    t.set_counts( total_elements, m_new );
    exec.fence();
    return { grown_cells, divisions };
}

} // namespace morula::sem

#endif
