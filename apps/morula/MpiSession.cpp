#include "MpiSession.hpp"

#include <morula/core/Error.hpp>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace morula::app
{
namespace
{
bool g_active = false;
int g_rank = 0;
int g_size = 1;

// Set by OpenMPI's mpirun, MPICH's hydra, MVAPICH and PMIx launchers (srun --mpi=pmix).
bool launched_by_mpi()
{
    for ( const char* v : { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE" } )
        if ( std::getenv( v ) )
            return true;
    return false;
}
} // namespace

MpiSession::MpiSession( int& argc, char**& argv )
{
#if MORULA_HAVE_MPI
    if ( !launched_by_mpi() )
        return;
    MPI_Init( &argc, &argv );
    g_active = true;
    MPI_Comm_rank( MPI_COMM_WORLD, &g_rank );
    MPI_Comm_size( MPI_COMM_WORLD, &g_size );
    if ( g_rank != 0 && !std::freopen( "/dev/null", "w", stdout ) )
        std::fprintf( stderr, "morula: rank %d: could not silence stdout\n", g_rank );
#else
    (void)argc;
    (void)argv;
    if ( launched_by_mpi() && std::getenv( "OMPI_COMM_WORLD_RANK" ) && std::getenv( "OMPI_COMM_WORLD_RANK" )[0] == '0' )
        std::fprintf( stderr, "morula: warning: started by an MPI launcher, but this morula was built without MPI: "
                              "every process runs the whole model alone\n" );
#endif
}

MpiSession::~MpiSession()
{
#if MORULA_HAVE_MPI
    if ( g_active )
        MPI_Finalize();
#endif
}

bool MpiSession::active() { return g_active; }
int MpiSession::rank() { return g_rank; }
int MpiSession::size() { return g_size; }

void MpiSession::check_on_root( const std::function<void()>& check )
{
    std::string message;
    if ( g_rank == 0 )
    {
        try
        {
            check();
        }
        catch ( const core::InputError& e )
        {
            if ( !g_active )
                throw;
            message = e.what();
        }
    }
#if MORULA_HAVE_MPI
    if ( g_active )
    {
        long length = static_cast<long>( message.size() );
        MPI_Bcast( &length, 1, MPI_LONG, 0, comm() );
        message.resize( static_cast<std::size_t>( length ) );
        MPI_Bcast( message.data(), static_cast<int>( length ), MPI_CHAR, 0, comm() );
    }
#endif
    if ( !message.empty() )
        throw core::InputError( message );
}

void MpiSession::abort( int code )
{
#if MORULA_HAVE_MPI
    if ( g_active && g_size > 1 )
        MPI_Abort( MPI_COMM_WORLD, code );
#endif
    (void)code;
}

} // namespace morula::app
