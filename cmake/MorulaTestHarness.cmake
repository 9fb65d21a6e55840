# MorulaTestHarness.cmake - every test file tst<Name>.hpp is written once and compiled into one
# executable per enabled Kokkos backend, with TEST_EXECSPACE / TEST_MEMSPACE set by
# tests/harness/Test<BACKEND>_Category.hpp (the pattern of Cabana's cmake/test_harness).
#
#   morula_add_unit_tests(PACKAGE core FILES tstBox.hpp tstSoA.hpp)
#
# creates morula_core_tests_serial, morula_core_tests_openmp, ... and one ctest test per executable
# (or SHARDS of them, below).

# Morula_TEST_BACKENDS (cache, optional) restricts the backends, e.g. "CUDA;OPENMP" to save compile
# time in a CUDA build; by default every backend Kokkos was built with is tested.
set(Morula_TEST_BACKENDS "" CACHE STRING "Kokkos backends to build unit tests for (default: all enabled)")
set(MORULA_TEST_BACKENDS)
foreach(_b IN ITEMS SERIAL OPENMP THREADS CUDA HIP)
  if(_b IN_LIST MORULA_KOKKOS_BACKENDS AND (NOT Morula_TEST_BACKENDS OR _b IN_LIST Morula_TEST_BACKENDS))
    list(APPEND MORULA_TEST_BACKENDS ${_b})
  endif()
endforeach()
if(NOT MORULA_TEST_BACKENDS)
  message(FATAL_ERROR "Morula: no unit-test backend left: Morula_TEST_BACKENDS='${Morula_TEST_BACKENDS}', "
                      "Kokkos backends '${MORULA_KOKKOS_BACKENDS}'")
endif()

# morula_backend_test_sources(<out> <BACKEND> tstA.hpp ...) - one generated source per test file that
# includes the backend's category header and the test file; rewritten only when its content changes.
# Morula_TEST_ONLY: a regular expression; only test files whose names match it are compiled (every test
# executable is still made, perhaps with no tests). For a device run of a few tests without compiling
# the whole suite for the GPU, e.g. -DMorula_TEST_ONLY=Checkpoint.
set(Morula_TEST_ONLY "" CACHE STRING "Compile only the test files whose names match this regular expression")

function(morula_backend_test_sources out backend)
  string(TOLOWER ${backend} _lc)
  set(_sources)
  foreach(_file IN LISTS ARGN)
    if(Morula_TEST_ONLY AND NOT _file MATCHES "${Morula_TEST_ONLY}")
      continue()
    endif()
    get_filename_component(_name ${_file} NAME_WE)
    set(_gen ${CMAKE_CURRENT_BINARY_DIR}/${_lc}/${_name}_${_lc}.cpp)
    set(_content "#include <Test${backend}_Category.hpp>\n#include <${_file}>\n")
    if(EXISTS ${_gen})
      file(READ ${_gen} _old)
    else()
      set(_old "")
    endif()
    if(NOT _old STREQUAL _content)
      file(WRITE ${_gen} "${_content}")
    endif()
    list(APPEND _sources ${_gen})
  endforeach()
  set(${out} ${_sources} PARENT_SCOPE)
endfunction()

# morula_mpiexec_preflags(<out>) - MPIEXEC_PREFLAGS plus --oversubscribe for Open MPI, which otherwise
# refuses to start more ranks than cores (CI has 2). MORULA_MPI_TEST_ENVIRONMENT is the environment of
# every test run under mpiexec: one OpenMP thread per rank, and Open MPI allowed to run as root
# (containers and CI run as root).
set(MORULA_MPI_TEST_ENVIRONMENT
    "OMP_PROC_BIND=false;OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1"
    CACHE INTERNAL "")
function(morula_mpiexec_preflags out)
  set(_preflags ${MPIEXEC_PREFLAGS})
  if(NOT DEFINED MORULA_MPIEXEC_IS_OPENMPI)
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _v ERROR_VARIABLE _v
                    RESULT_VARIABLE _rc TIMEOUT 30)
    if(_v MATCHES "Open MPI|OpenRTE")
      set(MORULA_MPIEXEC_IS_OPENMPI ON CACHE INTERNAL "")
    else()
      set(MORULA_MPIEXEC_IS_OPENMPI OFF CACHE INTERNAL "")
    endif()
  endif()
  if(MORULA_MPIEXEC_IS_OPENMPI AND NOT "--oversubscribe" IN_LIST _preflags)
    list(APPEND _preflags --oversubscribe)
  endif()
  set(${out} ${_preflags} PARENT_SCOPE)
endfunction()

# SHARDS N (optional): the executable runs as N ctest tests <package>_<backend>_shard<i>of<N>, each with
# GoogleTest's GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX, so that ctest -j spreads one long suite over the cores
# (under the sanitizers grid_serial alone took 9 of CI's 10 test minutes on one of its 2 cores).
function(morula_add_unit_tests)
  cmake_parse_arguments(ARG "" "PACKAGE;SHARDS" "FILES" ${ARGN})
  if(NOT ARG_SHARDS)
    set(ARG_SHARDS 1)
  endif()
  foreach(_backend IN LISTS MORULA_TEST_BACKENDS)
    string(TOLOWER ${_backend} _lc)
    set(_sources ${PROJECT_SOURCE_DIR}/tests/harness/UnitTestMain.cpp)
    morula_backend_test_sources(_generated ${_backend} ${ARG_FILES})
    list(APPEND _sources ${_generated})
    set(_exe morula_${ARG_PACKAGE}_tests_${_lc})
    add_executable(${_exe} ${_sources})
    target_include_directories(${_exe} PRIVATE
      ${PROJECT_SOURCE_DIR}/tests/harness ${PROJECT_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${_exe} PRIVATE Morula::morula GTest::gtest)
    if(ARG_SHARDS EQUAL 1)
      add_test(NAME ${ARG_PACKAGE}_${_lc} COMMAND ${_exe})
      set_tests_properties(${ARG_PACKAGE}_${_lc} PROPERTIES
        LABELS "${ARG_PACKAGE};${_lc}"
        ENVIRONMENT "OMP_PROC_BIND=false;OMP_NUM_THREADS=3")
    else()
      math(EXPR _last "${ARG_SHARDS} - 1")
      foreach(_i RANGE ${_last})
        set(_name ${ARG_PACKAGE}_${_lc}_shard${_i}of${ARG_SHARDS})
        add_test(NAME ${_name} COMMAND ${_exe})
        set_tests_properties(${_name} PROPERTIES
          LABELS "${ARG_PACKAGE};${_lc}"
          ENVIRONMENT "OMP_PROC_BIND=false;OMP_NUM_THREADS=3;GTEST_TOTAL_SHARDS=${ARG_SHARDS};GTEST_SHARD_INDEX=${_i}")
      endforeach()
    endif()
  endforeach()
endfunction()

# morula_add_mpi_tests(PACKAGE parallel FILES tstHalo.hpp ... NPROCS 2 4 [TRANSPORTS staged ...]) - like
# morula_add_unit_tests, with an MPI-aware main (tests/harness/MpiTestMain.cpp), each executable run
# under mpiexec once per entry of NPROCS: ctest tests <package>_<backend>_np<N>. Each entry of
# TRANSPORTS adds the same runs with MORULA_TRANSPORT=<entry>: <package>_<backend>_np<N>_<entry>, in which
# messages from a rank to itself take the transport too (MORULA_SELF_MESSAGES=transport; the runs
# without it cover the device copy that replaces them otherwise).
# OpenMPI needs --oversubscribe to start more ranks than cores, and refuses to run as root unless told
# (containers and CI run as root).
function(morula_add_mpi_tests)
  cmake_parse_arguments(ARG "" "PACKAGE" "FILES;NPROCS;TRANSPORTS" ${ARGN})
  morula_mpiexec_preflags(_preflags)
  foreach(_backend IN LISTS MORULA_TEST_BACKENDS)
    string(TOLOWER ${_backend} _lc)
    set(_sources ${PROJECT_SOURCE_DIR}/tests/harness/MpiTestMain.cpp)
    morula_backend_test_sources(_generated ${_backend} ${ARG_FILES})
    list(APPEND _sources ${_generated})
    set(_exe morula_${ARG_PACKAGE}_tests_${_lc})
    add_executable(${_exe} ${_sources})
    target_include_directories(${_exe} PRIVATE
      ${PROJECT_SOURCE_DIR}/tests/harness ${PROJECT_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${_exe} PRIVATE Morula::morula GTest::gtest MPI::MPI_CXX)
    foreach(_np IN LISTS ARG_NPROCS)
      set(_test ${ARG_PACKAGE}_${_lc}_np${_np})
      add_test(NAME ${_test}
        COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_np} ${_preflags}
                $<TARGET_FILE:${_exe}> ${MPIEXEC_POSTFLAGS})
      set_tests_properties(${_test} PROPERTIES
        LABELS "${ARG_PACKAGE};${_lc};mpi"
        PROCESSORS ${_np}
        TIMEOUT 300
        ENVIRONMENT "${MORULA_MPI_TEST_ENVIRONMENT}")
      foreach(_transport IN LISTS ARG_TRANSPORTS)
        add_test(NAME ${_test}_${_transport}
          COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_np} ${_preflags}
                  $<TARGET_FILE:${_exe}> ${MPIEXEC_POSTFLAGS})
        set_tests_properties(${_test}_${_transport} PROPERTIES
          LABELS "${ARG_PACKAGE};${_lc};mpi;transport"
          PROCESSORS ${_np}
          TIMEOUT 300
          ENVIRONMENT "${MORULA_MPI_TEST_ENVIRONMENT};MORULA_TRANSPORT=${_transport};MORULA_SELF_MESSAGES=transport")
      endforeach()
    endforeach()
  endforeach()
endfunction()
