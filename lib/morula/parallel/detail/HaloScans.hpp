/*!
  \file HaloScans.hpp
  \brief The scans a Halo builds its export lists with: which owned particles lie near a face, which
  directions they go to, the export lists per direction, and their renumbering after a sort.
*/
#ifndef MORULA_PARALLEL_DETAIL_HALOSCANS_HPP
#define MORULA_PARALLEL_DETAIL_HALOSCANS_HPP

#include <morula/core/KokkosCompat.hpp>
#include <morula/core/LaunchPolicy.hpp>
#include <morula/parallel/CartesianDecomposition.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>

namespace morula::parallel
{

namespace detail
{

//! What a kernel needs to decide where an owned particle must be sent.
template <class Scalar>
struct HaloSendRule
{
    Kokkos::Array<Scalar, 3> low_limit{};  //!< Send towards -axis if x < lo + h ...
    Kokkos::Array<Scalar, 3> high_limit{}; //!< ... towards +axis if x >= hi - h ...
    Kokkos::Array<int, 3> has_low{};       //!< ... and a neighbour exists that way.
    Kokkos::Array<int, 3> has_high{};
    std::uint32_t slot_exists = 0; //!< Bit s: direction slot s has a neighbour.

    /*!
      The most directions one particle goes to: 7 (a corner's three faces, three edges and the corner)
      where every subdomain is at least twice the halo width thick, up to 26 where a thin one has
      particles within the halo width of both its faces on an axis.
    */
    int max_directions() const
    {
        int product = 1;
        for ( int a = 0; a < 3; ++a )
        {
            const bool both = has_low[a] && has_high[a] && !( low_limit[a] <= high_limit[a] );
            product *= both ? 3 : ( has_low[a] || has_high[a] ? 2 : 1 );
        }
        return product - 1;
    }

    //! Bit s set when the particle at (x, y, z) goes to direction slot s.
    KOKKOS_INLINE_FUNCTION std::uint32_t mask( Scalar x, Scalar y, Scalar z ) const
    {
        const Scalar p[3] = { x, y, z };
        int low[3], high[3];
        int near = 0;
        for ( int a = 0; a < 3; ++a )
        {
            low[a] = has_low[a] && p[a] < low_limit[a];
            high[a] = has_high[a] && p[a] >= high_limit[a];
            near |= low[a] | high[a];
        }
        // Most particles are near no face: skip the 26 directions, which the halo's scan would test twice
        // per agent (docs/performance.md, "Design choices measured (moved from source comments, issue #46)").
        if ( !near )
            return 0u;
        std::uint32_t m = 0;
        for ( int s = 0; s < num_directions; ++s )
        {
            const auto d = direction_of_slot( s );
            bool go = true;
            for ( int a = 0; a < 3; ++a )
                go = go && ( d[a] == 0 || ( d[a] < 0 ? low[a] : high[a] ) );
            if ( go )
                m |= std::uint32_t( 1 ) << s;
        }
        return m & slot_exists;
    }
};

/*!
  \brief One scan over the owned particles: the particles with a non-empty send mask (those near a
  face), in particle order, with their masks: boundary(j), boundary_mask(j) for j < the returned count.
  The export scan below then runs over these few (a surface's worth), not over every particle 26 times.
*/
template <class ExecutionSpace, class Scalar, class PositionView, class IndexView, class MaskView>
std::size_t halo_boundary_particles( const ExecutionSpace& exec, std::size_t n, const HaloSendRule<Scalar>& rule,
                                     const PositionView& x, const IndexView& boundary, const MaskView& boundary_mask )
{
    if ( n == 0 )
        return 0;
    int count = 0;
    Kokkos::parallel_scan(
        "morula::parallel::halo_boundary_particles", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t i, int& update, const bool final ) {
            const std::uint32_t m = rule.mask( x( i, 0 ), x( i, 1 ), x( i, 2 ) );
            if ( final && m != 0u )
            {
                boundary( update ) = static_cast<int>( i );
                boundary_mask( update ) = m;
            }
            update += m != 0u ? 1 : 0;
        },
        count );
    return static_cast<std::size_t>( count );
}

/*!
  \brief The direction slots that have a neighbour, in slot order (what the export scan runs over),
  and for each the first slot whose offset it also sets (the slots without a neighbour before it).
*/
struct ExportSlots
{
    Kokkos::Array<int, num_directions> slot{};       //!< the q-th slot with a neighbour
    Kokkos::Array<int, num_directions> first_slot{}; //!< slots first_slot[q] .. slot[q] start where slot[q] does
    int count = 0;

    explicit ExportSlots( std::uint32_t slot_exists )
    {
        int previous = -1;
        for ( int s = 0; s < num_directions; ++s )
            if ( ( slot_exists >> s ) & 1u )
            {
                slot[count] = s;
                first_slot[count] = previous + 1;
                previous = s;
                ++count;
            }
    }
};

/*!
  \brief One exclusive scan over (slot, boundary particle) pairs, slot-major, over the slots that have a
  neighbour only (2 of 26 for a 2 x 1 x 1 decomposition whose other axes wrap in the rank's own grid):
  offsets(s) is the first export row of slot s, offsets(26) the total; export row r gets its particle and
  slot (the export Views hold at least HaloSendRule::max_directions() m rows). Atomics-free and
  deterministic: rows are in slot order, then particle order.
*/
template <class ExecutionSpace, class MaskView, class OffsetView, class IndexView>
void halo_export_scan( const ExecutionSpace& exec, std::size_t m, const ExportSlots& slots, const IndexView& boundary,
                       const MaskView& boundary_mask, const OffsetView& offsets, const IndexView& index,
                       const IndexView& slot )
{
    const std::size_t total = m * static_cast<std::size_t>( slots.count );
    if ( total == 0 )
    {
        Kokkos::deep_copy( exec, offsets, 0 );
        return;
    }
    // 32-bit division where it fits (the scan divides every item by m).
    const bool narrow = total < std::size_t( INT_MAX );
    const int last_slot = slots.slot[slots.count - 1];
    const auto scan = KOKKOS_LAMBDA( const std::size_t k, int& update, const bool final ) {
        const std::size_t q = narrow ? static_cast<std::size_t>( static_cast<unsigned>( k ) / static_cast<unsigned>( m ) )
                                     : k / m;
        const std::size_t j = k - q * m;
        const int s = slots.slot[q];
        const int flag = ( boundary_mask( j ) >> s ) & 1u;
        if ( final )
        {
            if ( j == 0 )
                for ( int t = slots.first_slot[q]; t <= s; ++t ) // slots without a neighbour start here too
                    offsets( t ) = update;
            if ( flag )
            {
                index( update ) = boundary( j );
                slot( update ) = s;
            }
            if ( k + 1 == total )
                for ( int t = last_slot + 1; t <= num_directions; ++t )
                    offsets( t ) = update + flag;
        }
        update += flag;
    };
    Kokkos::parallel_scan( "morula::parallel::halo_export_scan", core::LaunchRange<ExecutionSpace>( exec, 0, total ),
                           scan );
}

/*!
  \brief After owned particle i became old particle perm(i), i < n: new_index(perm(i)) = i, then every
  entry of the export index list (rows) and of the boundary list (m entries) maps to its new index.
*/
template <class ExecutionSpace, class PermutationView, class IndexView>
void renumber( const ExecutionSpace& exec, std::size_t n, const PermutationView& perm, const IndexView& new_index,
               std::size_t rows, const IndexView& export_index, std::size_t m, const IndexView& boundary )
{
    if ( n == 0 )
        return;
    Kokkos::parallel_for(
        "morula::parallel::halo_new_index", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const std::size_t i ) { new_index( perm( i ) ) = static_cast<int>( i ); } );
    Kokkos::parallel_for(
        "morula::parallel::halo_renumber", core::LaunchRange<ExecutionSpace>( exec, 0, rows + m ),
        KOKKOS_LAMBDA( const std::size_t k ) {
            if ( k < rows )
                export_index( k ) = new_index( export_index( k ) );
            else
                boundary( k - rows ) = new_index( boundary( k - rows ) );
        } );
}

} // namespace detail

} // namespace morula::parallel

#endif
