// Test category for the Serial backend: every tst*.hpp is compiled once per enabled backend with
// TEST_EXECSPACE and TEST_MEMSPACE set here.
#ifndef MORULA_TEST_SERIAL_CATEGORY_HPP
#define MORULA_TEST_SERIAL_CATEGORY_HPP

#include <Kokkos_Core.hpp>

#define TEST_CATEGORY serial
#define TEST_EXECSPACE Kokkos::Serial
#define TEST_MEMSPACE Kokkos::HostSpace

#endif
