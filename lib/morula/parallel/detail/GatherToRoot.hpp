/*!
  \file GatherToRoot.hpp
  \brief Every rank's host values concatenated in rank order on one rank (a distributed checkpoint's
  gather), and a failure of that rank's write announced to all.
*/
#ifndef MORULA_PARALLEL_DETAIL_GATHERTOROOT_HPP
#define MORULA_PARALLEL_DETAIL_GATHERTOROOT_HPP

#include <morula/core/Error.hpp>

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace morula::parallel::detail
{

/*!
  \brief `root` gets every rank's `mine`, concatenated in rank order; the other ranks get an empty
  vector. Collective. Counts travel in values of T (a contiguous MPI type of sizeof(T) bytes), so the
  limit is INT_MAX values in all, checked on every rank alike.
  \throws core::CapacityError (every rank) past that limit
*/
template <class T>
std::vector<T> gather_to_root( MPI_Comm comm, const std::vector<T>& mine, int root = 0 )
{
    static_assert( std::is_trivially_copyable_v<T>, "gather_to_root copies bytes" );
    int size = 1, rank = 0;
    MPI_Comm_size( comm, &size );
    MPI_Comm_rank( comm, &rank );
    const long long my_count = static_cast<long long>( mine.size() );
    std::vector<long long> counts( size );
    MPI_Allgather( &my_count, 1, MPI_LONG_LONG, counts.data(), 1, MPI_LONG_LONG, comm );
    long long total = 0;
    std::vector<int> icounts( size ), displs( size );
    for ( int r = 0; r < size; ++r )
    {
        displs[r] = static_cast<int>( total < INT_MAX ? total : 0 );
        icounts[r] = static_cast<int>( counts[r] < INT_MAX ? counts[r] : 0 );
        total += counts[r];
    }
    if ( total > INT_MAX )
        throw core::CapacityError( core::detail::concat( "gather_to_root: ", total, " values of ", sizeof( T ),
                                                         " bytes exceed MPI's int counts" ) );
    MPI_Datatype type;
    MPI_Type_contiguous( static_cast<int>( sizeof( T ) ), MPI_BYTE, &type );
    MPI_Type_commit( &type );
    std::vector<T> all( rank == root ? static_cast<std::size_t>( total ) : 0 );
    MPI_Gatherv( mine.data(), static_cast<int>( my_count ), type, all.data(), icounts.data(), displs.data(), type,
                 root, comm );
    MPI_Type_free( &type );
    return all;
}

} // namespace morula::parallel::detail

#endif
