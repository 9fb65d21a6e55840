/*!
  \file detail/AgreeOnError.hpp
  \brief Local checks that every rank must pass together: if one rank refuses, every rank throws, so
  that none goes on to a collective call the others have left.
*/
#ifndef MORULA_PARALLEL_DETAIL_AGREEONERROR_HPP
#define MORULA_PARALLEL_DETAIL_AGREEONERROR_HPP

#include <morula/core/Error.hpp>

#include <mpi.h>

#include <exception>
#include <string>

namespace morula::parallel::detail
{

/*!
  \brief Runs `check` on every rank of `comm` (collective). If it throws on some ranks, every rank
  throws: the lowest failing rank its own exception, the others core::InputError (core::IoError when
  that rank's was not an InputError) with that rank's message.
*/
template <class F>
void agree_on_error( MPI_Comm comm, F&& check )
{
    int rank = 0, size = 1;
    MPI_Comm_rank( comm, &rank );
    MPI_Comm_size( comm, &size );
    std::exception_ptr error;
    std::string message;
    int kind = 0; // 1: InputError, 2: anything else
    try
    {
        check();
    }
    catch ( const core::InputError& e )
    {
        error = std::current_exception();
        message = e.what();
        kind = 1;
    }
    catch ( const std::exception& e )
    {
        error = std::current_exception();
        message = e.what();
        kind = 2;
    }
    int first = kind ? rank : size;
    MPI_Allreduce( MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm );
    if ( first == size )
        return;
    int header[2] = { kind, int( message.size() ) };
    MPI_Bcast( header, 2, MPI_INT, first, comm );
    message.resize( std::size_t( header[1] ) );
    MPI_Bcast( message.data(), header[1], MPI_CHAR, first, comm );
    if ( rank == first )
        std::rethrow_exception( error );
    if ( header[0] == 1 )
        throw core::InputError( message );
    throw core::IoError( message );
}

} // namespace morula::parallel::detail

#endif
