#!/usr/bin/env bash
# Builds Morula in each configuration the build offers and runs its whole test suite: every optional
# dependency (HDF5, libsbml, MPI, Kokkos Kernels) on, then every one off, so that each part's code and
# each part's fallback are compiled and tested (docs/building.md, "Configurations").
#
#   scripts/check-configurations.sh [-k KOKKOS_ROOT] [-c CXX] [-b BUILD_ROOT] [-j JOBS] [-t TIMEOUT]
#                                   [--build-only] [CONFIG...]
#
#   CONFIG: full (every optional part ON: configure fails if one is missing), lean (every one OFF),
#           or no-hdf5, no-sbml, no-mpi, no-kernels (all ON but that one). Default: full lean.
#   -k: Kokkos (and Kokkos Kernels) install prefix; default: the one CMake finds (Debian's Kokkos 3.4).
#   -c: C++ compiler (nvcc_wrapper for a CUDA Kokkos, hipcc for HIP); default: CMake's choice.
#   -b: where the build folders go (one per configuration); default build/configurations.
#   --build-only: build, do not run the tests (a machine without the Kokkos backend's device).
#   Extra CMake arguments: MORULA_CMAKE_ARGS (e.g. -DMorula_TEST_BACKENDS=CUDA).
# Prints one line per configuration (configure, build and test status, test counts, minutes) and exits
# non-zero if any configuration failed.
set -uo pipefail
kokkos="" cxx="" root=build/configurations jobs=$(nproc) timeout=1500 build_only=0
configs=()
while [ $# -gt 0 ]; do
  case $1 in
    -k) kokkos=$2; shift 2;;
    -c) cxx=$2; shift 2;;
    -b) root=$2; shift 2;;
    -j) jobs=$2; shift 2;;
    -t) timeout=$2; shift 2;;
    --build-only) build_only=1; shift;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
    -*) echo "check-configurations: unknown option $1" >&2; exit 2;;
    *) configs+=("$1"); shift;;
  esac
done
[ ${#configs[@]} -gt 0 ] || configs=(full lean)
cd "$(dirname "$0")/.."
source_dir=$PWD
mkdir -p "$root"
root=$(cd "$root" && pwd)

options_of() {
  local parts=(HDF5 SBML MPI KOKKOSKERNELS) off=""
  case $1 in
    full) off="";;
    lean) off="HDF5 SBML MPI KOKKOSKERNELS";;
    no-hdf5) off=HDF5;; no-sbml) off=SBML;; no-mpi) off=MPI;; no-kernels) off=KOKKOSKERNELS;;
    *) echo "check-configurations: unknown configuration '$1' (expected full, lean, no-hdf5, no-sbml, no-mpi or no-kernels)" >&2
       return 1;;
  esac
  for p in "${parts[@]}"; do
    if [[ " $off " == *" $p "* ]]; then echo "-DMorula_ENABLE_$p=OFF"; else echo "-DMorula_ENABLE_$p=ON"; fi
  done
}

failed=0 summary=()
for config in "${configs[@]}"; do
  options=$(options_of "$config") || exit 2
  build=$root/$config
  log=$root/$config.log
  start=$SECONDS
  args=(-S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release $options)
  command -v ninja >/dev/null && args+=(-G Ninja)
  [ -n "$kokkos" ] && args+=(-DKokkos_ROOT="$kokkos" -DKokkosKernels_ROOT="$kokkos")
  [ -n "$cxx" ] && args+=(-DCMAKE_CXX_COMPILER="$cxx")
  # shellcheck disable=SC2206
  extra=(${MORULA_CMAKE_ARGS:-})
  status="configure failed"
  if cmake "${args[@]}" "${extra[@]}" > "$log" 2>&1; then
    status="build failed"
    if cmake --build "$build" -j "$jobs" >> "$log" 2>&1; then
      if [ "$build_only" = 1 ]; then
        status="built"
      else
        status="tests failed"
        ctest --test-dir "$build" --output-on-failure --timeout "$timeout" -j "$jobs" >> "$log" 2>&1 && status="passed"
      fi
    fi
  fi
  counts=$(grep -E '^[0-9]+% tests passed' "$log" | tail -1)
  line=$(printf '%-11s %-16s %s (%d min) %s' "$config" "$status" "${counts:-}" $(( (SECONDS - start) / 60 )) "$log")
  summary+=("$line")
  echo "check-configurations: $line"
  case $status in passed|built) ;; *) failed=1; grep -E 'Error|error:|\*\*\*Failed|Timeout' "$log" | head -20;; esac
done
echo "check-configurations: summary"
printf '  %s\n' "${summary[@]}"
exit $failed
