// Test category for the Threads backend: every tst*.hpp is compiled once per enabled backend with
// TEST_EXECSPACE and TEST_MEMSPACE set here.
#ifndef MORULA_TEST_THREADS_CATEGORY_HPP
#define MORULA_TEST_THREADS_CATEGORY_HPP

#include <Kokkos_Core.hpp>

#define TEST_CATEGORY threads
#define TEST_EXECSPACE Kokkos::Threads
#define TEST_MEMSPACE Kokkos::HostSpace

#endif
