// Test category for the OpenMP backend: every tst*.hpp is compiled once per enabled backend with
// TEST_EXECSPACE and TEST_MEMSPACE set here.
#ifndef MORULA_TEST_OPENMP_CATEGORY_HPP
#define MORULA_TEST_OPENMP_CATEGORY_HPP

#include <Kokkos_Core.hpp>

#define TEST_CATEGORY openmp
#define TEST_EXECSPACE Kokkos::OpenMP
#define TEST_MEMSPACE Kokkos::HostSpace

#endif
