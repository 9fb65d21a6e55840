/*!
  \file NeighborListFill.hpp
  \brief Writing the CSR neighbour list.
*/
#ifndef MORULA_GRID_DETAIL_NEIGHBORLISTFILL_HPP
#define MORULA_GRID_DETAIL_NEIGHBORLISTFILL_HPP


#include <morula/core/LaunchPolicy.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace morula::grid::detail
{

//! Writes every particle's neighbours at indices(offsets(i)) onwards, in the order of
//! NeighborQuery::for_each_neighbor.
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

} // namespace morula::grid::detail

#endif
