// Shared by the distributed benchmarks: one GPU per rank (node-local rank mod visible devices), the
// max and mean of a per-rank value over the ranks, and a main() skeleton that starts MPI and Kokkos in
// that order and ends every rank when one fails.
#ifndef MORULA_BENCHMARKS_PARALLEL_MPIBENCHMARKUTILS_HPP
#define MORULA_BENCHMARKS_PARALLEL_MPIBENCHMARKUTILS_HPP

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace morula::bench::mpi
{

inline int rank( MPI_Comm comm = MPI_COMM_WORLD )
{
    int r = 0;
    MPI_Comm_rank( comm, &r );
    return r;
}

inline int size( MPI_Comm comm = MPI_COMM_WORLD )
{
    int s = 1;
    MPI_Comm_size( comm, &s );
    return s;
}

//! Node-local rank (ranks sharing memory with this one).
inline int local_rank()
{
    MPI_Comm node;
    MPI_Comm_split_type( MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node );
    const int r = rank( node );
    MPI_Comm_free( &node );
    return r;
}

//! Devices visible to this process before Kokkos starts (0 for host backends).
inline int visible_devices()
{
    int n = 0;
#if defined( KOKKOS_ENABLE_CUDA )
    if ( cudaGetDeviceCount( &n ) != cudaSuccess )
        n = 0;
#elif defined( KOKKOS_ENABLE_HIP )
    if ( hipGetDeviceCount( &n ) != hipSuccess )
        n = 0;
#endif
    return n;
}

//! max and mean of x over the ranks, on rank 0.
inline void reduce( double x, MPI_Comm comm, double& max, double& mean )
{
    double sum = 0;
    MPI_Reduce( &x, &max, 1, MPI_DOUBLE, MPI_MAX, 0, comm );
    MPI_Reduce( &x, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm );
    mean = sum / size( comm );
}

/*!
  \brief Initialises Kokkos on this rank's GPU (node-local rank mod visible devices, unless the command
  line names --kokkos-device-id), runs `body(device_id)` and finalises Kokkos. An exception on one rank
  aborts all (the others may wait in a collective call). Returns the largest return code over the ranks.
  MPI must be initialised; the caller finalises it.
*/
template <class Body>
int run_on_rank_device( int argc, char* argv[], Body&& body )
{
    const int devices = visible_devices();
    int device_id = -1;
    std::vector<std::string> args( argv, argv + argc );
    bool named = false;
    for ( const auto& a : args )
        named = named || a.rfind( "--kokkos-device-id", 0 ) == 0;
    const int lrank = local_rank();
    if ( devices > 0 && !named )
    {
        device_id = lrank % devices;
        args.push_back( "--kokkos-device-id=" + std::to_string( device_id ) );
    }
    std::vector<char*> kargv;
    for ( auto& a : args )
        kargv.push_back( a.data() );
    kargv.push_back( nullptr );
    int kargc = static_cast<int>( args.size() );
    Kokkos::initialize( kargc, kargv.data() );
    int rc = 0;
    try
    {
        rc = body( device_id );
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "rank %d: %s\n", rank(), e.what() );
        std::fflush( stderr );
        MPI_Abort( MPI_COMM_WORLD, 1 );
    }
    Kokkos::finalize();
    int global = 0;
    MPI_Allreduce( &rc, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD );
    return global;
}

} // namespace morula::bench::mpi

#endif
