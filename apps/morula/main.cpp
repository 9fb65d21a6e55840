// The `morula` command-line program. Each model is a subcommand (`morula <model> --help`); the
// library does the work, this file only parses arguments and reports errors.
#include "AngioCommand.hpp"
#include "EpidermisCommand.hpp"
#include "GridCommand.hpp"
#include "LatticeCommand.hpp"
#include "OdeCommand.hpp"
#include "ProliferationCommand.hpp"

#include <morula/core/BuildInfo.hpp>
#include <morula/core/Error.hpp>

#include <Kokkos_Core.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

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

    // Kokkos reads its own flags (--kokkos-num-threads, --kokkos-device-id, ...) and removes them.
    Kokkos::ScopeGuard guard( argc, argv );
    try
    {
        app.parse( argc, argv );
    }
    catch ( const CLI::ParseError& e )
    {
        // --help and --version exit 0; every malformed command line is bad input, like an InputError.
        return app.exit( e ) == 0 ? 0 : 2;
    }
    catch ( const morula::core::InputError& e )
    {
        std::fprintf( stderr, "morula: error: %s\n", e.what() );
        return 2;
    }
    catch ( const std::exception& e )
    {
        std::fprintf( stderr, "morula: error: %s\n", e.what() );
        return 1;
    }
    return 0;
}
