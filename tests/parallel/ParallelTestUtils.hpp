// Helpers shared by the parallel tests: a particle type with several kinds of fields, host access and
// all-gathers of (id, position).
#ifndef MORULA_TEST_PARALLEL_UTILS_HPP
#define MORULA_TEST_PARALLEL_UTILS_HPP

#include <morula/core/SoA.hpp>
#include <morula/parallel/Transport.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace morula_test_parallel
{

/*
  The name of the transport the library must report for TEST_MEMSPACE, worked out here from
  MORULA_TRANSPORT and the documented rules (not by calling select_transport): a forced choice is
  that choice (GPU-aware on host memory is host memory); automatic is host memory for host-accessible
  data, else NCCL where built and every rank has a GPU of its own, else CUDA/HIP IPC where every rank
  is on this node, else GPU-aware MPI where the library says so, else staged. Collective (the device
  and node checks gather over MPI_COMM_WORLD).
*/
inline std::string expected_transport_name()
{
    constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, TEST_MEMSPACE>::accessible;
    const char* env = std::getenv( "MORULA_TRANSPORT" );
    const std::string want = env ? env : "automatic";
    const bool distinct = morula::parallel::detail::ranks_on_distinct_devices( MPI_COMM_WORLD );
    if ( want == "staged" )
        return "staged through host";
    if ( want == "nccl" )
        return morula::parallel::detail::nccl_library_name;
    if ( want == "ipc" )
        return morula::parallel::detail::ipc_library_name;
    if ( want == "host" || ( want == "gpu-aware" && host ) )
        return "host memory";
    if ( want == "gpu-aware" )
        return "GPU-aware";
    if ( host )
        return "host memory";
    if ( morula::parallel::nccl_built() && morula::parallel::nccl_memory_space<TEST_MEMSPACE>() && distinct )
        return morula::parallel::detail::nccl_library_name;
    const bool one_node = morula::parallel::detail::ranks_on_one_node( MPI_COMM_WORLD );
    if ( morula::parallel::ipc_built() && morula::parallel::nccl_memory_space<TEST_MEMSPACE>() && one_node )
        return morula::parallel::detail::ipc_library_name;
    return morula::parallel::mpi_gpu_aware() ? "GPU-aware" : "staged through host";
}

// Fields: position, id, a double and an int pair that are functions of the id (they must travel).
template <class Scalar>
using TestParticles = morula::core::Particles<Scalar, TEST_MEMSPACE, std::int64_t, double, int[2]>;

inline double tag_of( std::int64_t id ) { return 0.5 * static_cast<double>( id ) + 0.25; }
inline int pair0_of( std::int64_t id ) { return static_cast<int>( id % 7 ); }
inline int pair1_of( std::int64_t id ) { return -static_cast<int>( id ); }

template <class Scalar>
struct HostParticle
{
    std::int64_t id;
    Scalar x[3];
};

// Writes host particles into entries [0, n) of the SoA (size set to n), with the id-derived fields.
template <class Scalar>
void upload( TestParticles<Scalar>& p, const std::vector<HostParticle<Scalar>>& h )
{
    p.resize( h.size() );
    auto x = Kokkos::create_mirror_view( p.template get<0>() );
    auto id = Kokkos::create_mirror_view( p.template get<1>() );
    auto tag = Kokkos::create_mirror_view( p.template get<2>() );
    auto pair = Kokkos::create_mirror_view( p.template get<3>() );
    for ( std::size_t i = 0; i < h.size(); ++i )
    {
        for ( int a = 0; a < 3; ++a )
            x( i, a ) = h[i].x[a];
        id( i ) = h[i].id;
        tag( i ) = tag_of( h[i].id );
        pair( i, 0 ) = pair0_of( h[i].id );
        pair( i, 1 ) = pair1_of( h[i].id );
    }
    Kokkos::deep_copy( p.template get<0>(), x );
    Kokkos::deep_copy( p.template get<1>(), id );
    Kokkos::deep_copy( p.template get<2>(), tag );
    Kokkos::deep_copy( p.template get<3>(), pair );
}

// Entries [begin, end) back on the host; counts entries whose id-derived fields are wrong.
template <class Scalar>
std::vector<HostParticle<Scalar>> download( const TestParticles<Scalar>& p, std::size_t begin,
                                            std::size_t end, int& bad_fields )
{
    auto x = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), p.template get<0>() );
    auto id = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), p.template get<1>() );
    auto tag = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), p.template get<2>() );
    auto pair = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), p.template get<3>() );
    std::vector<HostParticle<Scalar>> h;
    for ( std::size_t i = begin; i < end; ++i )
    {
        h.push_back( { id( i ), { x( i, 0 ), x( i, 1 ), x( i, 2 ) } } );
        if ( tag( i ) != tag_of( id( i ) ) || pair( i, 0 ) != pair0_of( id( i ) ) ||
             pair( i, 1 ) != pair1_of( id( i ) ) )
            ++bad_fields;
    }
    return h;
}

// Entries that differ (id or position; the other fields are checked against the id by download()).
template <class Scalar>
int differences( const std::vector<HostParticle<Scalar>>& a, const std::vector<HostParticle<Scalar>>& b )
{
    int d = a.size() != b.size();
    for ( std::size_t i = 0; i < std::min( a.size(), b.size() ); ++i )
    {
        d += a[i].id != b[i].id;
        for ( int k = 0; k < 3; ++k )
            d += a[i].x[k] != b[i].x[k];
    }
    return d;
}

// Every rank's particles, with the rank that holds them.
template <class Scalar>
std::vector<std::pair<int, HostParticle<Scalar>>> allgather( MPI_Comm comm,
                                                             const std::vector<HostParticle<Scalar>>& mine )
{
    int size = 0;
    MPI_Comm_size( comm, &size );
    std::vector<double> send;
    for ( const auto& p : mine )
    {
        send.push_back( static_cast<double>( p.id ) );
        for ( int a = 0; a < 3; ++a )
            send.push_back( static_cast<double>( p.x[a] ) );
    }
    int n = static_cast<int>( send.size() );
    std::vector<int> counts( size ), displs( size, 0 );
    MPI_Allgather( &n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm );
    for ( int r = 1; r < size; ++r )
        displs[r] = displs[r - 1] + counts[r - 1];
    std::vector<double> all( displs[size - 1] + counts[size - 1] );
    MPI_Allgatherv( send.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE,
                    comm );
    std::vector<std::pair<int, HostParticle<Scalar>>> out;
    for ( int r = 0; r < size; ++r )
        for ( int k = displs[r]; k < displs[r] + counts[r]; k += 4 )
            out.push_back( { r,
                             { static_cast<std::int64_t>( all[k] ),
                               { static_cast<Scalar>( all[k + 1] ), static_cast<Scalar>( all[k + 2] ),
                                 static_cast<Scalar>( all[k + 3] ) } } } );
    return out;
}

inline int comm_size()
{
    int s = 0;
    MPI_Comm_size( MPI_COMM_WORLD, &s );
    return s;
}

//! Ranks per axis 2 x (size / 2) x 1 where the size is even, else size x 1 x 1 (one rank: 1 x 1 x 1).
inline std::array<int, 3> two_way_dims()
{
    const int s = comm_size();
    return s % 2 == 0 ? std::array<int, 3>{ 2, s / 2, 1 } : std::array<int, 3>{ s, 1, 1 };
}

inline int comm_rank()
{
    int r = 0;
    MPI_Comm_rank( MPI_COMM_WORLD, &r );
    return r;
}

// Sum over ranks.
inline long long sum_all( long long v )
{
    long long s = 0;
    MPI_Allreduce( &v, &s, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD );
    return s;
}

} // namespace morula_test_parallel

#endif
