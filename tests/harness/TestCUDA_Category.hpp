// Test category for the Cuda backend: every tst*.hpp is compiled once per enabled backend with
// TEST_EXECSPACE and TEST_MEMSPACE set here.
#ifndef MORULA_TEST_CUDA_CATEGORY_HPP
#define MORULA_TEST_CUDA_CATEGORY_HPP

#include <Kokkos_Core.hpp>

#define TEST_CATEGORY cuda
#define TEST_EXECSPACE Kokkos::Cuda
#define TEST_MEMSPACE Kokkos::CudaSpace

#endif
