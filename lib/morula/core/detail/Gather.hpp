/*!
  \file Gather.hpp
  \brief out(k) = in(perm(k)) for rank-1 and rank-2 Views: the kernel behind every permute.
*/
#ifndef MORULA_CORE_DETAIL_GATHER_HPP
#define MORULA_CORE_DETAIL_GATHER_HPP

#include <morula/core/LaunchPolicy.hpp>

#include <Kokkos_Core.hpp>

namespace morula::core::detail
{

//! out(k, ...) = in(perm(k), ...) for k in [0, n). A free function: nvcc rejects extended lambdas in
//! private member functions.
template <class ExecutionSpace, class PermView, class InView, class OutView>
void gather( const ExecutionSpace& exec, std::size_t n, const PermView& perm, const InView& in,
             const OutView& out )
{
    static_assert( InView::rank == 1 || InView::rank == 2, "gather takes rank-1 or rank-2 Views" );
    if constexpr ( InView::rank == 1 )
    {
        Kokkos::parallel_for(
            "morula::gather", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const std::size_t k ) { out( k ) = in( perm( k ) ); } );
    }
    else
    {
        const int nc = static_cast<int>( in.extent( 1 ) );
        Kokkos::parallel_for(
            "morula::gather", core::LaunchRange<ExecutionSpace>( exec, 0, n ),
            KOKKOS_LAMBDA( const std::size_t k ) {
                const auto src = perm( k );
                for ( int c = 0; c < nc; ++c )
                    out( k, c ) = in( src, c );
            } );
    }
}

} // namespace morula::core::detail

#endif
