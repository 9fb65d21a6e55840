// Test category for the HIP backend: every tst*.hpp is compiled once per enabled backend with
// TEST_EXECSPACE and TEST_MEMSPACE set here.
#ifndef MORULA_TEST_HIP_CATEGORY_HPP
#define MORULA_TEST_HIP_CATEGORY_HPP

#include <Kokkos_Core.hpp>

#define TEST_CATEGORY hip
#define TEST_EXECSPACE Kokkos::HIP
#define TEST_MEMSPACE Kokkos::HIPSpace

#endif
