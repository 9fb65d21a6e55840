// Latency and bandwidth between two ranks for the buffers Morula's halo exchange sends (issue #11's
// scaling model needs both): device Views moved the way the library moves them (the decomposition's
// transport: NCCL on the execution space's stream, GPU-aware MPI, or staged through page-locked host
// buffers: copy out, MPI, copy in; each message through detail::exchange_buffers and a fence), and
// plain host buffers through MPI for comparison.
//
//   mpiexec -n 2 mpi_pingpong_benchmark [--min-bytes 8] [--max-bytes 67108864] [--reps 50]
//       [--transport automatic|staged|gpu-aware|nccl] [--out f.json]
//
// For each size (powers of 4): --reps round trips after 5 untimed ones; the one-way time is half the
// median round trip. Latency = the one-way time of the smallest message; bandwidth = bytes / one-way
// time of the largest. Ranks beyond the first two wait.
#include "MpiBenchmarkUtils.hpp"

#include <common/BenchmarkUtils.hpp>

#include <morula/Morula.hpp>
#include <morula/Parallel.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace pingpong
{
using morula::bench::Stats;
namespace mpi = morula::bench::mpi;

struct Settings
{
    long long min_bytes = 8;
    long long max_bytes = 64ll << 20;
    int reps = 50;
    std::string out;
};

// One-way seconds per message of `bytes` between ranks 0 and 1: `send(bytes, peer)` and
// `recv(bytes, peer)` move one message including any staging.
template <class Send, class Recv>
Stats one_way( long long bytes, int reps, Send&& send, Recv&& recv )
{
    const int me = mpi::rank();
    Stats s;
    for ( int r = 0; r < reps + 5; ++r )
    {
        MPI_Barrier( MPI_COMM_WORLD );
        const auto t0 = std::chrono::steady_clock::now();
        if ( me == 0 )
        {
            send( bytes, 1 );
            recv( bytes, 1 );
        }
        else if ( me == 1 )
        {
            recv( bytes, 0 );
            send( bytes, 0 );
        }
        const double rtt = std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        if ( r >= 5 )
            s.samples.push_back( rtt / 2 );
    }
    return s;
}

template <class ExecutionSpace>
int run( const ExecutionSpace& exec, const Settings& set )
{
    using mem = typename ExecutionSpace::memory_space;
    namespace parallel = morula::parallel;
    const parallel::TransportContext context( MPI_COMM_WORLD );
    const auto transport = context.transport<mem>();
    if ( transport == parallel::Transport::nccl )
        context.nccl(); // collective: made by every rank, also those that only wait
    // The library's message buffers (device rows, page-locked host copies for staging) and its exchange.
    parallel::detail::MessageBuffers<mem> buffers;
    buffers.send_bytes( std::size_t( set.max_bytes ) );
    buffers.recv_bytes( std::size_t( set.max_bytes ) );
    std::vector<char> plain( std::size_t( set.max_bytes ) );
    const int tag = 7;

    // One message of b bytes (rows of one byte) to or from `peer`, complete on return.
    auto one_message = [&]( long long b, int peer, bool sending ) {
        parallel::detail::CommPlan plan;
        const parallel::detail::Message m{ peer, 0, 0, std::size_t( b ) };
        ( sending ? plan.sends : plan.recvs ).push_back( m );
        ( sending ? plan.send_rows : plan.recv_rows ) = std::size_t( b );
        parallel::detail::exchange_buffers( exec, context, transport, plan, tag, 1, buffers );
        exec.fence();
    };
    auto dev_send = [&]( long long b, int peer ) { one_message( b, peer, true ); };
    auto dev_recv = [&]( long long b, int peer ) { one_message( b, peer, false ); };
    auto host_send = [&]( long long b, int peer ) { MPI_Send( plain.data(), int( b ), MPI_BYTE, peer, tag, MPI_COMM_WORLD ); };
    auto host_recv = [&]( long long b, int peer ) {
        MPI_Recv( plain.data(), int( b ), MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE );
    };

    nlohmann::json rows = nlohmann::json::array();
    double lat_dev = 0, lat_host = 0, bw_dev = 0, bw_host = 0;
    for ( long long b = set.min_bytes; b <= set.max_bytes; b *= 4 )
    {
        const Stats d = one_way( b, set.reps, dev_send, dev_recv );
        const Stats h = one_way( b, set.reps, host_send, host_recv );
        if ( b == set.min_bytes )
        {
            lat_dev = d.median();
            lat_host = h.median();
        }
        bw_dev = double( b ) / d.median();
        bw_host = double( b ) / h.median();
        if ( mpi::rank() == 0 )
            std::printf( "%12lld bytes: device buffers %9.2f us (%8.3f GB/s), host buffers %9.2f us (%8.3f GB/s)\n", b,
                         1e6 * d.median(), 1e-9 * double( b ) / d.median(), 1e6 * h.median(),
                         1e-9 * double( b ) / h.median() );
        rows.push_back( { { "bytes", b }, { "device_buffers", d.to_json() }, { "host_buffers", h.to_json() } } );
    }
    if ( mpi::rank() == 0 )
    {
        std::printf( "latency (%lld bytes): device buffers %.2f us, host %.2f us; bandwidth (%lld bytes): device "
                     "buffers %.2f GB/s, host %.2f GB/s; transport of device buffers: %s\n",
                     set.min_bytes, 1e6 * lat_dev, 1e6 * lat_host, set.max_bytes, 1e-9 * bw_dev, 1e-9 * bw_host,
                     morula::parallel::to_string( transport ) );
        if ( !set.out.empty() )
        {
            nlohmann::json j = { { "benchmark", "mpi_pingpong_benchmark" },
                                 { "machine", morula::bench::machine_info( exec ) },
                                 { "execution_space", ExecutionSpace::name() },
                                 { "mpi_ranks", mpi::size() },
                                 { "transport_device_buffers", morula::parallel::to_string( transport ) },
                                 { "note", "one-way time = half the median round trip between ranks 0 and 1; device "
                                           "buffers include staging copies when the transport is staged" },
                                 { "latency_s", { { "device_buffers", lat_dev }, { "host_buffers", lat_host } } },
                                 { "bandwidth_bytes_per_s", { { "device_buffers", bw_dev }, { "host_buffers", bw_host } } },
                                 { "sizes", rows } };
            morula::bench::write_json( set.out, j );
            std::printf( "wrote %s\n", set.out.c_str() );
        }
    }
    return 0;
}

} // namespace pingpong

int main( int argc, char* argv[] )
{
    MPI_Init( &argc, &argv );
    pingpong::Settings set;
    CLI::App app( "MPI latency and bandwidth between two ranks for device and host buffers" );
    app.add_option( "--min-bytes", set.min_bytes, "Smallest message" )->check( CLI::Range( 1LL, 1LL << 30 ) );
    app.add_option( "--max-bytes", set.max_bytes, "Largest message" )->check( CLI::Range( 1LL, 1LL << 30 ) );
    app.add_option( "--reps", set.reps, "Timed round trips per size" )->check( CLI::Range( 1, 100000 ) );
    std::string transport = "automatic";
    app.add_option( "--transport", transport, "automatic, staged, gpu-aware, nccl or ipc (sets MORULA_TRANSPORT)" )
        ->check( CLI::IsMember( { "automatic", "staged", "gpu-aware", "nccl", "ipc" } ) );
    app.add_option( "--out", set.out, "JSON result file (written by rank 0)" );
    app.allow_extras(); // --kokkos-* arguments
    try
    {
        app.parse( argc, argv );
    }
    catch ( const CLI::ParseError& e )
    {
        const int rc = morula::bench::mpi::rank() == 0 ? app.exit( e ) : ( e.get_exit_code() == 0 ? 0 : 1 );
        MPI_Finalize();
        return rc;
    }
    if ( morula::bench::mpi::size() < 2 || set.min_bytes > set.max_bytes )
    {
        if ( morula::bench::mpi::rank() == 0 )
            std::fprintf( stderr, "mpi_pingpong_benchmark: needs 2 ranks and --min-bytes <= --max-bytes\n" );
        MPI_Finalize();
        return 2;
    }
    if ( transport != "automatic" )
        setenv( "MORULA_TRANSPORT", transport.c_str(), 1 );
    const int rc = morula::bench::mpi::run_on_rank_device(
        argc, argv, [&]( int ) { return pingpong::run( Kokkos::DefaultExecutionSpace(), set ); } );
    MPI_Finalize();
    return rc;
}
