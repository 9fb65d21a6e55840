# MorulaDependencies.cmake - finds Kokkos (required), Kokkos Kernels, HDF5, libsbml, MPI and NCCL (optional) and
# hides every packaging difference between them behind six names:
#
#   Kokkos::kokkos           Kokkos core, with usable include directories
#   Morula::KokkosKernels    Kokkos Kernels (batched dense, BLAS, ODE headers), when MORULA_HAVE_KOKKOSKERNELS
#   Morula::HDF5             the HDF5 C library, when MORULA_HAVE_HDF5
#   Morula::SBML             libsbml (C++ API), when MORULA_HAVE_SBML
#   MPI::MPI_CXX             MPI's C API for a C++ program (CMake's FindMPI), when MORULA_HAVE_MPI
#   Morula::NCCL             NCCL (CUDA) or RCCL (HIP), when MORULA_HAVE_NCCL
#
# It is used both by Morula's own build and by the installed MorulaConfig.cmake, so that a downstream
# project sees exactly what Morula was built with.
#
# Known packaging quirks handled here (and nowhere else):
#  * Debian 12's libtrilinos-kokkos-dev (Kokkos 3.4.01 inside Trilinos 13.2): the imported target
#    Kokkos::kokkos carries the non-existent include directory /usr/lib/include, which makes CMake's
#    generate step fail; the headers live in ${Kokkos_INCLUDE_DIRS} (/usr/include/trilinos).
#  * The same package calls the Kokkos Kernels library trilinos_kokkoskernels and gives it no include
#    directories; a Kokkos 4.x install exports Kokkos::kokkoskernels instead.
#  * Kokkos' config files accept only the same major version, so `find_package(Kokkos 3.4)` would refuse
#    Kokkos 4.x; the minimum version is checked here by hand instead.

set(MORULA_KOKKOS_MIN_VERSION 3.4)

macro(_morula_fix_imported_includes target fallback_dirs)
  get_target_property(_morula_incs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set(_morula_good_incs)
  set(_morula_dropped)
  if(_morula_incs)
    foreach(_d IN LISTS _morula_incs)
      # Generator expressions cannot be checked here; keep them.
      if(_d MATCHES "^\\$<" OR EXISTS "${_d}")
        list(APPEND _morula_good_incs "${_d}")
      else()
        list(APPEND _morula_dropped "${_d}")
      endif()
    endforeach()
  endif()
  if(_morula_dropped OR NOT _morula_incs)
    foreach(_d IN ITEMS ${fallback_dirs})
      if(EXISTS "${_d}")
        get_filename_component(_d "${_d}" REALPATH)
        list(APPEND _morula_good_incs "${_d}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _morula_good_incs)
    set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_morula_good_incs}")
    if(_morula_dropped)
      message(STATUS "Morula: ${target}: replaced missing include directories (${_morula_dropped}) by ${_morula_good_incs}")
    endif()
  endif()
endmacro()

macro(morula_find_dependencies)
  # --- Kokkos ---------------------------------------------------------------------------------------
  if(NOT TARGET Kokkos::kokkos)
    find_package(Kokkos REQUIRED)
  endif()
  if(Kokkos_VERSION VERSION_LESS MORULA_KOKKOS_MIN_VERSION)
    message(FATAL_ERROR "Morula needs Kokkos >= ${MORULA_KOKKOS_MIN_VERSION}; found ${Kokkos_VERSION} in ${Kokkos_DIR}")
  endif()
  _morula_fix_imported_includes(Kokkos::kokkos "${Kokkos_INCLUDE_DIRS}")

  set(MORULA_KOKKOS_BACKENDS)
  foreach(_dev IN ITEMS SERIAL OPENMP THREADS CUDA HIP SYCL)
    if(Kokkos_ENABLE_${_dev})
      list(APPEND MORULA_KOKKOS_BACKENDS ${_dev})
    endif()
  endforeach()
  if(NOT MORULA_KOKKOS_BACKENDS)
    message(FATAL_ERROR "Morula: the Kokkos in ${Kokkos_DIR} reports no execution space it knows (Kokkos_DEVICES='${Kokkos_DEVICES}')")
  endif()

  # --- Kokkos Kernels -------------------------------------------------------------------------------
  set(MORULA_HAVE_KOKKOSKERNELS OFF)
  if(NOT DEFINED Morula_ENABLE_KOKKOSKERNELS)
    set(Morula_ENABLE_KOKKOSKERNELS AUTO)
  endif()
  if(NOT Morula_ENABLE_KOKKOSKERNELS STREQUAL "OFF")
    if(NOT TARGET Morula::KokkosKernels)
      if(Morula_ENABLE_KOKKOSKERNELS STREQUAL "ON")
        find_package(KokkosKernels REQUIRED)
      else()
        find_package(KokkosKernels QUIET)
      endif()
      if(KokkosKernels_FOUND)
        add_library(Morula::KokkosKernels INTERFACE IMPORTED)
        if(TARGET Kokkos::kokkoskernels)
          target_link_libraries(Morula::KokkosKernels INTERFACE Kokkos::kokkoskernels)
        elseif(TARGET trilinos_kokkoskernels)
          # Trilinos packaging: headers sit beside Kokkos' own.
          target_link_libraries(Morula::KokkosKernels INTERFACE trilinos_kokkoskernels Kokkos::kokkos)
          target_include_directories(Morula::KokkosKernels INTERFACE ${KokkosKernels_INCLUDE_DIRS})
        else()
          message(FATAL_ERROR "Morula: found Kokkos Kernels in ${KokkosKernels_DIR} but neither the target "
                              "Kokkos::kokkoskernels nor trilinos_kokkoskernels")
        endif()
      endif()
    endif()
    if(TARGET Morula::KokkosKernels)
      set(MORULA_HAVE_KOKKOSKERNELS ON)
    endif()
  endif()

  # --- HDF5 -----------------------------------------------------------------------------------------
  set(MORULA_HAVE_HDF5 OFF)
  if(NOT DEFINED Morula_ENABLE_HDF5)
    set(Morula_ENABLE_HDF5 AUTO)
  endif()
  if(NOT Morula_ENABLE_HDF5 STREQUAL "OFF")
    if(NOT TARGET Morula::HDF5)
      # Only the C library is needed. CMake's FindHDF5 insists on an enabled C language, which neither
      # Morula nor a downstream C++ project has, so the header and library are located directly
      # (HDF5_ROOT or CMAKE_PREFIX_PATH for Spack installs; Debian keeps them under hdf5/serial).
      find_path(MORULA_HDF5_INCLUDE_DIR hdf5.h
        HINTS ${HDF5_ROOT} ENV HDF5_ROOT PATH_SUFFIXES include hdf5/serial include/hdf5/serial)
      find_library(MORULA_HDF5_LIBRARY NAMES hdf5 hdf5_serial
        HINTS ${HDF5_ROOT} ENV HDF5_ROOT PATH_SUFFIXES lib lib64 hdf5/serial)
      if(MORULA_HDF5_INCLUDE_DIR AND MORULA_HDF5_LIBRARY)
        add_library(Morula::HDF5 INTERFACE IMPORTED)
        target_include_directories(Morula::HDF5 INTERFACE ${MORULA_HDF5_INCLUDE_DIR})
        target_link_libraries(Morula::HDF5 INTERFACE ${MORULA_HDF5_LIBRARY})
        set(MORULA_HDF5_VERSION "unknown version")
        if(EXISTS ${MORULA_HDF5_INCLUDE_DIR}/H5pubconf.h)
          file(STRINGS ${MORULA_HDF5_INCLUDE_DIR}/H5pubconf.h _h5v REGEX "define H5_VERSION ")
          string(REGEX REPLACE ".*\"(.*)\".*" "\\1" MORULA_HDF5_VERSION "${_h5v}")
        endif()
      elseif(Morula_ENABLE_HDF5 STREQUAL "ON")
        message(FATAL_ERROR "Morula: Morula_ENABLE_HDF5=ON but hdf5.h or the hdf5 library was not found "
                            "(set HDF5_ROOT); header: ${MORULA_HDF5_INCLUDE_DIR}, library: ${MORULA_HDF5_LIBRARY}")
      endif()
    endif()
    if(TARGET Morula::HDF5)
      set(MORULA_HAVE_HDF5 ON)
    endif()
  endif()

  # --- libsbml ---------------------------------------------------------------------------------------
  set(MORULA_HAVE_SBML OFF)
  if(NOT DEFINED Morula_ENABLE_SBML)
    set(Morula_ENABLE_SBML AUTO)
  endif()
  if(NOT Morula_ENABLE_SBML STREQUAL "OFF")
    if(NOT TARGET Morula::SBML)
      # libsbml's own CMake config is missing from Debian's libsbml5-dev and differs between its releases
      # (sbml vs sbml-static targets), so the header and library are located directly (SBML_ROOT or
      # CMAKE_PREFIX_PATH for Spack installs).
      find_path(MORULA_SBML_INCLUDE_DIR sbml/SBMLTypes.h HINTS ${SBML_ROOT} ENV SBML_ROOT PATH_SUFFIXES include)
      find_library(MORULA_SBML_LIBRARY NAMES sbml libsbml HINTS ${SBML_ROOT} ENV SBML_ROOT PATH_SUFFIXES lib lib64)
      if(MORULA_SBML_INCLUDE_DIR AND MORULA_SBML_LIBRARY)
        add_library(Morula::SBML INTERFACE IMPORTED)
        target_include_directories(Morula::SBML INTERFACE ${MORULA_SBML_INCLUDE_DIR})
        target_link_libraries(Morula::SBML INTERFACE ${MORULA_SBML_LIBRARY})
        set(MORULA_SBML_VERSION "unknown version")
        if(EXISTS ${MORULA_SBML_INCLUDE_DIR}/sbml/common/libsbml-version.h)
          file(STRINGS ${MORULA_SBML_INCLUDE_DIR}/sbml/common/libsbml-version.h _sbmlv
            REGEX "define LIBSBML_DOTTED_VERSION")
          string(REGEX REPLACE ".*\"(.*)\".*" "\\1" MORULA_SBML_VERSION "${_sbmlv}")
        endif()
      elseif(Morula_ENABLE_SBML STREQUAL "ON")
        message(FATAL_ERROR "Morula: Morula_ENABLE_SBML=ON but sbml/SBMLTypes.h or the sbml library was not found "
                            "(install libsbml5-dev or set SBML_ROOT); header: ${MORULA_SBML_INCLUDE_DIR}, "
                            "library: ${MORULA_SBML_LIBRARY}")
      endif()
    endif()
    if(TARGET Morula::SBML)
      set(MORULA_HAVE_SBML ON)
    endif()
  endif()

  # --- MPI ------------------------------------------------------------------------------------------
  # Only lib/morula/parallel uses it (header-only); its headers include mpi.h, so the link is public.
  set(MORULA_HAVE_MPI OFF)
  if(NOT DEFINED Morula_ENABLE_MPI)
    set(Morula_ENABLE_MPI AUTO)
  endif()
  if(NOT Morula_ENABLE_MPI STREQUAL "OFF")
    if(NOT TARGET MPI::MPI_CXX)
      if(Morula_ENABLE_MPI STREQUAL "ON")
        find_package(MPI REQUIRED COMPONENTS CXX)
      else()
        find_package(MPI QUIET COMPONENTS CXX)
      endif()
    endif()
    if(TARGET MPI::MPI_CXX)
      set(MORULA_HAVE_MPI ON)
    endif()
  endif()

  # --- NCCL / RCCL (optional) ------------------------------------------------------------------------
  # The device-to-device transport of lib/morula/parallel (Transport::nccl): only with MPI (the launcher
  # and control plane) and a CUDA or HIP backend. RCCL has NCCL's API under rccl/rccl.h. Found by header
  # and library (NCCL_ROOT, CUDA_HOME or the CUDA toolkit's folders; no CMake config ships with NCCL).
  set(MORULA_HAVE_NCCL OFF)
  if(NOT DEFINED Morula_ENABLE_NCCL)
    set(Morula_ENABLE_NCCL AUTO)
  endif()
  if(NOT Morula_ENABLE_NCCL STREQUAL "OFF" AND MORULA_HAVE_MPI
     AND ("CUDA" IN_LIST MORULA_KOKKOS_BACKENDS OR "HIP" IN_LIST MORULA_KOKKOS_BACKENDS))
    if(NOT TARGET Morula::NCCL)
      if("HIP" IN_LIST MORULA_KOKKOS_BACKENDS)
        set(_morula_nccl_header rccl/rccl.h)
        set(_morula_nccl_names rccl)
      else()
        set(_morula_nccl_header nccl.h)
        set(_morula_nccl_names nccl)
      endif()
      set(_morula_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} ${RCCL_ROOT} $ENV{RCCL_ROOT} $ENV{CUDA_HOME}
          ${CUDAToolkit_ROOT} /usr/local/cuda /opt/rocm)
      find_path(MORULA_NCCL_INCLUDE_DIR ${_morula_nccl_header} HINTS ${_morula_nccl_hints} PATH_SUFFIXES include)
      find_library(MORULA_NCCL_LIBRARY NAMES ${_morula_nccl_names} HINTS ${_morula_nccl_hints}
                   PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
      if(MORULA_NCCL_INCLUDE_DIR AND MORULA_NCCL_LIBRARY)
        add_library(Morula::NCCL INTERFACE IMPORTED)
        target_include_directories(Morula::NCCL INTERFACE ${MORULA_NCCL_INCLUDE_DIR})
        target_link_libraries(Morula::NCCL INTERFACE ${MORULA_NCCL_LIBRARY})
      elseif(Morula_ENABLE_NCCL STREQUAL "ON")
        message(FATAL_ERROR "Morula: Morula_ENABLE_NCCL=ON but ${_morula_nccl_header} or the library was not "
                            "found (set NCCL_ROOT); header: ${MORULA_NCCL_INCLUDE_DIR}, library: ${MORULA_NCCL_LIBRARY}")
      endif()
    endif()
    if(TARGET Morula::NCCL)
      set(MORULA_HAVE_NCCL ON)
    endif()
  elseif(Morula_ENABLE_NCCL STREQUAL "ON")
    message(FATAL_ERROR "Morula: Morula_ENABLE_NCCL=ON needs MPI and a CUDA or HIP build of Kokkos "
                        "(MPI: ${MORULA_HAVE_MPI}; backends: ${MORULA_KOKKOS_BACKENDS})")
  endif()

  if(NOT Morula_FIND_QUIETLY)
    message(STATUS "Morula: Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}); backends: ${MORULA_KOKKOS_BACKENDS}")
    _morula_report_optional(KOKKOSKERNELS "Kokkos Kernels" "${KokkosKernels_DIR}"
      "KokkosBatched LU for BDF (Morula's own dense LU is used instead)"
      "libtrilinos-kokkos-kernels-dev (Debian) or set KokkosKernels_ROOT")
    _morula_report_optional(HDF5 "HDF5" "${MORULA_HDF5_VERSION}, ${MORULA_HDF5_LIBRARY}"
      "snapshots, checkpoints or restarts"
      "libhdf5-dev (Debian) or set HDF5_ROOT")
    _morula_report_optional(SBML "libsbml" "${MORULA_SBML_VERSION}, ${MORULA_SBML_LIBRARY}"
      "SBML models (morula ode run model.xml)"
      "libsbml5-dev (Debian) or set SBML_ROOT")
    _morula_report_optional(MPI "MPI" "${MPI_CXX_LIBRARY_VERSION_STRING}${MPI_CXX_VERSION}, mpiexec: ${MPIEXEC_EXECUTABLE}"
      "distributed runs (lib/morula/parallel, mpirun -n N morula ...)"
      "libopenmpi-dev and openmpi-bin (Debian) or point MPI_HOME at an MPI")
    if(MORULA_HAVE_NCCL)
      message(STATUS "Morula: NCCL ON (${MORULA_NCCL_LIBRARY})")
    else()
      message(STATUS "Morula: NCCL OFF (Morula_ENABLE_NCCL=${Morula_ENABLE_NCCL}; needs MPI and a CUDA/HIP backend)")
    endif()
  endif()
endmacro()

# Reports one optional dependency at configure time: ON with where it was found; OFF with why (disabled,
# or AUTO and not found), what is missing without it, and how to get it.
function(_morula_report_optional key name where lost how)
  if(MORULA_HAVE_${key})
    message(STATUS "Morula: ${name} ON (${where})")
  elseif(Morula_ENABLE_${key} STREQUAL "OFF")
    message(STATUS "Morula: ${name} OFF (Morula_ENABLE_${key}=OFF): no ${lost}")
  else()
    message(STATUS "Morula: ${name} OFF: not found (Morula_ENABLE_${key}=${Morula_ENABLE_${key}}), so no ${lost}; "
                   "install ${how}")
  endif()
endfunction()
