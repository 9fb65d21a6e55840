/*!
  \file NeighborListFill.hpp
  \brief What the CSR and ELL neighbour lists share: the radius check, writing the CSR list, and the
  reference positions behind needs_rebuild().
*/
#ifndef MORULA_GRID_DETAIL_NEIGHBORLISTFILL_HPP
#define MORULA_GRID_DETAIL_NEIGHBORLISTFILL_HPP

#include <morula/core/Box.hpp>
#include <morula/core/Error.hpp>
#include <morula/core/LaunchPolicy.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace morula::grid::detail
{

/*!
  Returns cutoff + skin after checking it: cutoff > 0, skin >= 0, finite, and within the grid's cutoff
  (`grid_cutoff`). `who` names the calling build in the message.
*/
template <class Scalar>
Scalar checked_list_radius( const char* who, Scalar cutoff, Scalar skin, Scalar grid_cutoff )
{
    if ( !( cutoff > 0 ) || !( skin >= 0 ) || !std::isfinite( double( cutoff + skin ) ) )
        throw core::InputError( core::detail::concat( who, ": need cutoff > 0 and skin >= 0, got cutoff = ",
                                                      cutoff, ", skin = ", skin ) );
    const Scalar radius = cutoff + skin;
    if ( radius > grid_cutoff )
        throw core::InputError( core::detail::concat(
            who, ": cutoff + skin = ", radius, " exceeds the grid's cutoff ", grid_cutoff,
            "; build the grid with a cutoff of at least cutoff + skin" ) );
    return radius;
}

//! Writes every particle's neighbours at indices(offsets(i)) onwards, in the order of
//! NeighborQuery::for_each_neighbor. One kernel for every walk, unlike the ELL fills: this one is bound by
//! its scattered stores (one L2 transaction per entry), and one kernel per walk (detail::with_stencil_walk)
//! was slightly slower (docs/performance.md, "Neighbour kernels at the hardware limit (issue #25): sixth pass").
template <class ExecutionSpace, class Query, class OffsetView, class IndexView, class Scalar>
void fill_neighbor_list( const ExecutionSpace& exec, const Query& query, int n, Scalar radius,
                         const OffsetView& offsets, const IndexView& indices )
{
    using offset_type = typename OffsetView::non_const_value_type;
    Kokkos::parallel_for(
        "morula::grid::neighbor_fill", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            offset_type k = offsets( i );
            query.for_each_neighbor( i, radius, [&]( const int j, Scalar, Scalar, Scalar, Scalar ) {
                indices( k++ ) = j;
            } );
        } );
}

/*!
  Positions at build time (for needs_rebuild): copies the query's n positions into `reference`,
  growing it when it is too small.
*/
template <class ExecutionSpace, class Query, class PositionView>
void save_reference_positions( const ExecutionSpace& exec, const Query& query, int n,
                               PositionView& reference )
{
    if ( reference.extent( 0 ) < static_cast<std::size_t>( n ) )
        reference = PositionView(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "morula::grid::neighbor_reference" ), n );
    auto ref = reference;
    Kokkos::parallel_for(
        "morula::grid::neighbor_reference", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i ) {
            for ( int d = 0; d < 3; ++d )
                ref( i, d ) = query.position( i, d );
        } );
}

/*!
  True when some particle i < n of x has moved more than skin / 2 (minimum image in `box`) from
  reference(i); a list built with that skin may then miss a pair within its cutoff. Always true
  without skin. `who` names the list in the message when x holds fewer than n particles.
*/
template <class ExecutionSpace, class PositionView, class ReferenceView, class Scalar>
bool moved_beyond_half_skin( const char* who, const ExecutionSpace& exec, const PositionView& x,
                             const ReferenceView& ref, int n, const core::Box<Scalar>& box,
                             Scalar skin )
{
    if ( !( skin > 0 ) )
        return true;
    if ( x.extent( 0 ) < static_cast<std::size_t>( n ) )
        throw core::InputError( core::detail::concat( who, "::needs_rebuild: positions hold ",
                                                      x.extent( 0 ), " particles, the list was built for ",
                                                      n ) );
    const Scalar limit2 = ( skin / 2 ) * ( skin / 2 );
    int moved = 0;
    Kokkos::parallel_reduce(
        "morula::grid::neighbor_displacement", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
        KOKKOS_LAMBDA( const int i, int& any ) {
            Scalar r2 = 0;
            for ( int d = 0; d < 3; ++d )
            {
                const Scalar dd = box.minimum_image( d, x( i, d ) - ref( i, d ) );
                r2 += dd * dd;
            }
            if ( !( r2 <= limit2 ) )
                any = 1;
        },
        Kokkos::Max<int>( moved ) );
    return moved > 0; // the Max identity is INT_MIN
}

} // namespace morula::grid::detail

#endif
