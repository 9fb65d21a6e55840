// Entry point of the MPI unit-test executables: MPI and Kokkos are initialised once around all tests;
// rank 0 prints the usual GoogleTest report, the other ranks only their failures, and the exit status
// is the same on every rank (one rank failing fails all). A test that fails on a rank aborts every rank
// (MPI_Abort) once it has been reported: the other ranks may be waiting for that one in a collective or a
// receive it will never post (an exception on one rank), and would otherwise hang until the test's
// timeout, several times over in CI (each rank count and transport).
#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <mpi.h>

#include <cstdio>

namespace
{
// Failure lines of ranks other than 0, prefixed with the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener
{
  public:
    explicit RankFailurePrinter( int rank ) : m_rank( rank ) {}
    void OnTestPartResult( const ::testing::TestPartResult& r ) override
    {
        if ( r.failed() )
            std::fprintf( stderr, "[rank %d] %s:%d: failure\n%s\n", m_rank,
                          r.file_name() ? r.file_name() : "?", r.line_number(), r.summary() );
    }
    void OnTestEnd( const ::testing::TestInfo& info ) override
    {
        if ( info.result()->Failed() )
            std::fprintf( stderr, "[rank %d] FAILED %s.%s\n", m_rank, info.test_suite_name(),
                          info.name() );
    }

  private:
    int m_rank;
};

// After every other listener has reported a failed test: abort all ranks (see the top of the file).
class AbortOnFailure : public ::testing::EmptyTestEventListener
{
  public:
    explicit AbortOnFailure( int rank ) : m_rank( rank ) {}
    void OnTestEnd( const ::testing::TestInfo& info ) override
    {
        if ( !info.result()->Failed() )
            return;
        std::fprintf( stderr, "[rank %d] %s.%s failed: aborting every rank (the others may wait for this one)\n",
                      m_rank, info.test_suite_name(), info.name() );
        std::fflush( stdout );
        std::fflush( stderr );
        MPI_Abort( MPI_COMM_WORLD, 1 );
    }

  private:
    int m_rank;
};
} // namespace

int main( int argc, char* argv[] )
{
    MPI_Init( &argc, &argv );
    int rank = 0;
    MPI_Comm_rank( MPI_COMM_WORLD, &rank );
    int failed = 0;
    {
        Kokkos::ScopeGuard guard( argc, argv );
        ::testing::InitGoogleTest( &argc, argv );
        if ( rank != 0 )
        {
            auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
            delete listeners.Release( listeners.default_result_printer() );
            listeners.Append( new RankFailurePrinter( rank ) );
        }
        ::testing::UnitTest::GetInstance()->listeners().Append( new AbortOnFailure( rank ) );
        failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    }
    int any_failed = 0;
    MPI_Allreduce( &failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD );
    if ( rank == 0 && any_failed && !failed )
        std::fprintf( stderr, "another rank failed (see its [rank N] lines)\n" );
    MPI_Finalize();
    return any_failed;
}
