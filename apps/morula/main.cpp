// The `morula` command-line program. Each model is a subcommand (`morula <model> --help`); the
// library does the work, this file only parses arguments and reports errors.
#include "AngioCommand.hpp"
#include "Checkpointing.hpp"
#include "EpidermisCommand.hpp"
#include "GridCommand.hpp"
#include "LatticeCommand.hpp"
#include "MpiSession.hpp"
#include "OdeCommand.hpp"
#include "ProliferationCommand.hpp"

#include <morula/core/BuildInfo.hpp>
#include <morula/core/Error.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

int main( int argc, char* argv[] )
{
    CLI::App app( "morula: multicellular and biochemical simulation kernels on Kokkos" );
    app.require_subcommand( 1 );
    app.set_version_flag( "--version", morula::core::version() );
    app.allow_extras( false );
    morula::app::add_grid_command( app );
    morula::app::add_proliferation_command( app );
    morula::app::add_lattice_command( app );
    morula::app::add_ode_command( app );
    morula::app::add_epidermis_command( app );
    morula::app::add_angiogenesis_command( app );

    // Under an MPI launcher, MPI first (Kokkos maps ranks to GPUs), then Kokkos, which reads its own
    // flags (--kokkos-num-threads, --kokkos-device-id, ...) and removes them; finalised in reverse.
    morula::app::MpiSession mpi( argc, argv );
    // Kokkos reads its own flags and removes the --kokkos-* ones; it also answers a bare --help / -h
    // with 40 lines of its options (Kokkos 3.4), which would come before the command's own help. It
    // gets the arguments without those (CLI11 still sees them); --kokkos-help still shows its options.
    std::vector<char*> kokkos_argv;
    for ( int i = 0; i < argc; ++i )
        if ( std::strcmp( argv[i], "--help" ) != 0 && std::strcmp( argv[i], "-h" ) != 0 )
            kokkos_argv.push_back( argv[i] );
    int kokkos_argc = static_cast<int>( kokkos_argv.size() );
    kokkos_argv.push_back( nullptr );
    Kokkos::ScopeGuard guard( kokkos_argc, kokkos_argv.data() );
    // What Kokkos removed (--kokkos-*) is gone from CLI11's view too; --help and -h stay where they were.
    std::vector<char*> cli_argv;
    for ( int i = 0; i < argc; ++i )
    {
        const bool help = std::strcmp( argv[i], "--help" ) == 0 || std::strcmp( argv[i], "-h" ) == 0;
        const bool kept = std::find( kokkos_argv.begin(), kokkos_argv.begin() + kokkos_argc, argv[i] ) !=
                          kokkos_argv.begin() + kokkos_argc;
        if ( help || kept )
            cli_argv.push_back( argv[i] );
    }
    argc = static_cast<int>( cli_argv.size() );
    cli_argv.push_back( nullptr );
    argv = cli_argv.data();
    try
    {
        app.parse( argc, argv );
    }
    catch ( const CLI::ParseError& e )
    {
        // --help and --version exit 0; every malformed command line is bad input, like an InputError.
        return app.exit( e ) == 0 ? 0 : 2;
    }
    catch ( const morula::app::StoppedBySignal& stop )
    {
        // SIGTERM/SIGINT/SIGUSR1: the run wrote its checkpoint after the step it was in.
        if ( morula::app::MpiSession::rank() == 0 )
            std::fprintf( stderr, "morula: stopped by a signal; checkpoint written to '%s' (resume with --restart)\n",
                          stop.checkpoint.c_str() );
        return morula::app::exit_status_stopped;
    }
    catch ( const morula::core::InputError& e )
    {
        // Bad input is found on every rank alike: rank 0 reports it and all exit.
        if ( morula::app::MpiSession::rank() == 0 )
            std::fprintf( stderr, "morula: error: %s\n", e.what() );
        return 2;
    }
    catch ( const std::exception& e )
    {
        // A failure on one rank (core::IoError: a file this rank could not write; CapacityError; anything
        // else): the others may be waiting for it in MPI, so abort them all.
        std::fprintf( stderr, "morula: error%s: %s\n",
                      morula::app::MpiSession::size() > 1
                          ? ( " on rank " + std::to_string( morula::app::MpiSession::rank() ) ).c_str()
                          : "",
                      e.what() );
        morula::app::MpiSession::abort( 1 );
        return 1;
    }
    return 0;
}
