#include <morula/Config.hpp>
#include <morula/core/BuildInfo.hpp>
#include <morula/core/KokkosCompat.hpp>

#include <Kokkos_Core.hpp>

namespace morula::core
{

std::string version() { return MORULA_VERSION_STRING; }

std::string kokkos_version() { return compat::kokkos_version_string(); }

std::vector<std::string> kokkos_backends()
{
    std::vector<std::string> b;
#ifdef KOKKOS_ENABLE_SERIAL
    b.emplace_back( "Serial" );
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    b.emplace_back( "OpenMP" );
#endif
#ifdef KOKKOS_ENABLE_THREADS
    b.emplace_back( "Threads" );
#endif
#ifdef KOKKOS_ENABLE_CUDA
    b.emplace_back( "Cuda" );
#endif
#ifdef KOKKOS_ENABLE_HIP
    b.emplace_back( "HIP" );
#endif
#ifdef KOKKOS_ENABLE_SYCL
    b.emplace_back( "SYCL" );
#endif
    return b;
}

std::string build_summary()
{
    std::string s = "Morula " + version() + ", Kokkos " + kokkos_version() + " [";
    const auto backends = kokkos_backends();
    for ( std::size_t i = 0; i < backends.size(); ++i )
        s += ( i ? ", " : "" ) + backends[i];
    s += "], default execution space ";
    s += Kokkos::DefaultExecutionSpace::name();
    s += MORULA_HAVE_KOKKOSKERNELS ? ", Kokkos Kernels on" : ", Kokkos Kernels off";
    s += MORULA_HAVE_HDF5 ? ", HDF5 on" : ", HDF5 off";
    s += MORULA_HAVE_SBML ? ", libsbml on" : ", libsbml off";
    s += MORULA_HAVE_MPI ? ", MPI on" : ", MPI off";
    s += MORULA_HAVE_NCCL ? ", NCCL on" : ", NCCL off";
    return s;
}

} // namespace morula::core
