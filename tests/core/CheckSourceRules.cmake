# Source rules every library file keeps (run as `cmake -DSOURCE_DIR=<lib/morula> -P CheckSourceRules.cmake`):
# - kernels launch through core::LaunchRange / LaunchTeam / LaunchMDRange (core/LaunchPolicy.hpp), whose
#   light-weight hint keeps CUDA from serialising launches through constant memory and lets a step be
#   captured into a graph (core/StepGraph.hpp), or, for one long kernel per call with run-time indexed
#   tables, core::LaunchConstantRange; a plain Kokkos policy is named only for its member_type;
# - only core/KokkosCompat.hpp tests KOKKOS_VERSION.
file(GLOB_RECURSE _sources "${SOURCE_DIR}/*.hpp" "${SOURCE_DIR}/*.cpp")
set(_violations "")
foreach(_file IN LISTS _sources)
  file(RELATIVE_PATH _rel "${SOURCE_DIR}" "${_file}")
  # One list entry per line: semicolons and square brackets would split or merge CMake list entries.
  file(READ "${_file}" _content)
  string(REPLACE ";" "<semicolon>" _content "${_content}")
  string(REPLACE "[" "<lbracket>" _content "${_content}")
  string(REPLACE "]" "<rbracket>" _content "${_content}")
  string(REPLACE "\\" "<backslash>" _content "${_content}")
  string(REPLACE "\n" ";" _lines "${_content}")
  set(_number 0)
  foreach(_line IN LISTS _lines)
    math(EXPR _number "${_number} + 1")
    if(NOT _rel STREQUAL "core/LaunchPolicy.hpp"
       AND _line MATCHES "Kokkos::(Range|Team|MDRange)Policy<"
       AND NOT _line MATCHES "::member_type")
      string(APPEND _violations "\n  ${_rel}:${_number}: plain Kokkos policy (use core::LaunchRange/LaunchTeam/LaunchMDRange): ${_line}")
    endif()
    if(NOT _rel STREQUAL "core/KokkosCompat.hpp" AND _line MATCHES "KOKKOS_VERSION")
      string(APPEND _violations "\n  ${_rel}:${_number}: KOKKOS_VERSION outside core/KokkosCompat.hpp: ${_line}")
    endif()
  endforeach()
endforeach()
list(LENGTH _sources _count)
if(_count EQUAL 0)
  message(FATAL_ERROR "no sources found under ${SOURCE_DIR}")
endif()
if(_violations)
  message(FATAL_ERROR "source rules broken:${_violations}")
endif()
message(STATUS "source rules hold in ${_count} files")
