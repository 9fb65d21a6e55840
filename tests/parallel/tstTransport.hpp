#include <morula/core/Error.hpp>
#include <morula/parallel/Transport.hpp>

#include <ParallelTestUtils.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace morula_test_transport
{
using morula::parallel::Transport;
using namespace morula_test_parallel;

// The automatic choice (and MORULA_TRANSPORT's, when the test runs under it) is the documented one,
// and a TransportContext reports it for its communicator.
TEST( TEST_CATEGORY, transport_automatic_choice_is_reported )
{
    const std::string want = expected_transport_name();
    EXPECT_EQ( std::string( to_string( morula::parallel::select_transport<TEST_MEMSPACE>( MPI_COMM_WORLD ) ) ),
               want );
    morula::parallel::TransportContext context( MPI_COMM_WORLD );
    EXPECT_EQ( std::string( to_string( context.transport<TEST_MEMSPACE>() ) ), want );
}

// Forced choices: staged works on any memory; GPU-aware on host memory is host memory; host on device
// memory, NCCL without the build or on host memory, IPC on host memory are refused with a message
// saying why; names that are no transport are refused naming the accepted ones.
TEST( TEST_CATEGORY, transport_forced_choices )
{
    using morula::parallel::select_transport;
    constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, TEST_MEMSPACE>::accessible;
    EXPECT_EQ( select_transport<TEST_MEMSPACE>( MPI_COMM_WORLD, Transport::staged ), Transport::staged );
    EXPECT_EQ( select_transport<TEST_MEMSPACE>( MPI_COMM_WORLD, Transport::gpu_aware ),
               host ? Transport::host_memory : Transport::gpu_aware );
    if ( host )
        EXPECT_EQ( select_transport<TEST_MEMSPACE>( MPI_COMM_WORLD, Transport::host_memory ), Transport::host_memory );
    else
        EXPECT_THROW( select_transport<TEST_MEMSPACE>( MPI_COMM_WORLD, Transport::host_memory ),
                      morula::core::InputError );
    if ( !morula::parallel::nccl_built() || !morula::parallel::nccl_memory_space<TEST_MEMSPACE>() )
    {
        try
        {
            select_transport<TEST_MEMSPACE>( MPI_COMM_WORLD, Transport::nccl );
            ADD_FAILURE() << "NCCL chosen where it cannot run";
        }
        catch ( const morula::core::InputError& e )
        {
            EXPECT_NE( std::string( e.what() ).find( "transport nccl" ), std::string::npos ) << e.what();
        }
    }
    if ( !morula::parallel::ipc_built() || !morula::parallel::nccl_memory_space<TEST_MEMSPACE>() )
    {
        try
        {
            select_transport<TEST_MEMSPACE>( MPI_COMM_WORLD, Transport::ipc );
            ADD_FAILURE() << "IPC chosen where it cannot run";
        }
        catch ( const morula::core::InputError& e )
        {
            EXPECT_NE( std::string( e.what() ).find( "transport ipc" ), std::string::npos ) << e.what();
        }
    }
    else // every test rank runs on one node
        EXPECT_EQ( select_transport<TEST_MEMSPACE>( MPI_COMM_WORLD, Transport::ipc ), Transport::ipc );
    EXPECT_EQ( morula::parallel::parse_transport( "ipc", "test" ), Transport::ipc );
    EXPECT_EQ( morula::parallel::parse_transport( "automatic", "test" ), std::nullopt );
    EXPECT_EQ( morula::parallel::parse_transport( "staged", "test" ), Transport::staged );
    EXPECT_EQ( morula::parallel::parse_transport( "nccl", "test" ), Transport::nccl );
    try
    {
        morula::parallel::parse_transport( "infiniband", "config key 'transport'" );
        ADD_FAILURE() << "an unknown transport was accepted";
    }
    catch ( const morula::core::InputError& e )
    {
        const std::string what = e.what();
        EXPECT_NE( what.find( "config key 'transport'" ), std::string::npos ) << what;
        EXPECT_NE( what.find( "infiniband" ), std::string::npos ) << what;
        EXPECT_NE( what.find( "staged" ), std::string::npos ) << what;
    }
}

} // namespace morula_test_transport
