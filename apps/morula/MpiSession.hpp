// MPI for the `morula` program: initialised only when the process was started by an MPI launcher
// (mpirun, mpiexec, srun with PMI/PMIx), so that a plain `morula ...` never touches MPI. Under a
// launcher every rank runs the same subcommand with the same config; ranks other than 0 write nothing
// to stdout, and the models that support it (lattice, proliferation) run distributed.
#ifndef MORULA_APP_MPISESSION_HPP
#define MORULA_APP_MPISESSION_HPP

#include <morula/Config.hpp>

#include <functional>

#if MORULA_HAVE_MPI
#include <mpi.h>
#endif

namespace morula::app
{

class MpiSession
{
  public:
    MpiSession( int& argc, char**& argv );
    ~MpiSession();
    MpiSession( const MpiSession& ) = delete;
    MpiSession& operator=( const MpiSession& ) = delete;

    //! Whether MPI was initialised (built with MPI and started by a launcher).
    static bool active();
    static int rank();
    static int size();
    //! Aborts every rank (after an error on one of them, so that the others do not wait forever).
    static void abort( int code );

    /*!
      Runs `check` on rank 0 only (a file that rank owns); a core::InputError it throws is thrown on every
      rank with the same message, so that all exit with status 2 together instead of the others waiting
      in MPI. Any other exception stays on rank 0 (main() aborts the others). Collective.
    */
    static void check_on_root( const std::function<void()>& check );
#if MORULA_HAVE_MPI
    static MPI_Comm comm() { return MPI_COMM_WORLD; }
#endif
};

} // namespace morula::app

#endif
