/*!
  \file BuildInfo.hpp
  \brief What this Morula was built with: version, Kokkos version and backends, optional packages.
*/
#ifndef MORULA_CORE_BUILDINFO_HPP
#define MORULA_CORE_BUILDINFO_HPP

#include <string>
#include <vector>

namespace morula::core
{

//! Morula's version, e.g. "0.9.0".
std::string version();

//! Version of the Kokkos the library was compiled against, e.g. "4.6.99".
std::string kokkos_version();

//! Kokkos execution spaces compiled in, e.g. {"Serial", "OpenMP", "Cuda"}.
std::vector<std::string> kokkos_backends();

//! One line for logs and result files: version, Kokkos, backends, optional packages.
std::string build_summary();

} // namespace morula::core

#endif
