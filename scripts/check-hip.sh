#!/usr/bin/env bash
# Compiles every Morula target for HIP from a fresh clone: the library, the `morula` app, the unit tests
# (one executable per Kokkos backend), the fuzz replays and the benchmarks, with hipcc and every optional
# part on (HDF5, libsbml, MPI, Kokkos Kernels; NCCL/RCCL off). Nothing is run: it checks that the code
# compiles, which is all a machine without an AMD GPU can check (docs/building.md, "HIP").
#
#   scripts/check-hip.sh [KOKKOS_HIP_PREFIX] [COMMIT]
#
#   KOKKOS_HIP_PREFIX  a Kokkos 4.x install built by hipcc with Kokkos_ENABLE_HIP (default: $KOKKOS_HIP);
#                      Kokkos Kernels is looked for there too (or under $KOKKOSKERNELS_HIP). This script
#                      never builds Kokkos: docs/building.md gives the configure lines.
#   COMMIT             what to check out in the clone (default: HEAD of the repository this script is in;
#                      uncommitted changes are not in the clone).
#
# Environment (optional): HIPCC (default hipcc), JOBS (default nproc), CMAKE_CXX_COMPILER_LAUNCHER (e.g.
# ccache; CCACHE_BASEDIR defaults to the temporary folder, so that a second run's fresh clone hits the
# cache), MORULA_HIP_CMAKE_ARGS (extra configure arguments, last: they override the defaults, e.g.
# "-DMorula_ENABLE_SBML=OFF"), KEEP=1 (keep the temporary clone, build and log).
# Prints a summary (hipcc version, commit, targets built, warnings from Morula's own sources versus
# Kokkos' and the system's headers) and exits non-zero when anything fails to configure or compile.
set -euo pipefail

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
case ${1:-} in -h|--help) usage ;; esac
prefix=${1:-${KOKKOS_HIP:-}}
[ -n "$prefix" ] || usage
[ -d "$prefix" ] || { echo "check-hip: no such Kokkos prefix: $prefix" >&2; exit 2; }
prefix=$(cd "$prefix" && pwd)
kernels=${KOKKOSKERNELS_HIP:-$prefix}
hipcc=${HIPCC:-hipcc}
command -v "$hipcc" >/dev/null || { echo "check-hip: $hipcc not found" >&2; exit 2; }
ls "$prefix"/lib*/cmake/Kokkos/KokkosConfig.cmake >/dev/null 2>&1 ||
  { echo "check-hip: no KokkosConfig.cmake under $prefix/lib*/cmake/Kokkos" >&2; exit 2; }
grep -qsE 'set\(Kokkos_DEVICES .*HIP' "$prefix"/lib*/cmake/Kokkos/KokkosConfigCommon.cmake ||
  { echo "check-hip: the Kokkos under $prefix was not built with HIP" >&2; exit 2; }

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse --verify "${2:-HEAD}^{commit}")
if [ -z "${2:-}" ] && [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  echo "check-hip: note: $repo has uncommitted changes; the clone checks $commit without them" >&2
fi
jobs=${JOBS:-$(nproc)}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)

work=$(mktemp -d "${TMPDIR:-/tmp}/morula-check-hip.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "check-hip: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
src=$work/src build=$work/build log=$work/build.log
launcher=()
if [ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$CMAKE_CXX_COMPILER_LAUNCHER")
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$work}
fi

t0=$(date +%s)
git clone -q --no-checkout "$repo" "$src"
git -C "$src" checkout -q --detach "$commit"

status=0
# shellcheck disable=SC2086 # MORULA_HIP_CMAKE_ARGS is a list of words
cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_COLOR_DIAGNOSTICS=OFF \
  -DCMAKE_CXX_COMPILER="$hipcc" "${launcher[@]}" \
  -DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="$kernels" \
  -DMorula_ENABLE_KOKKOSKERNELS=ON -DMorula_ENABLE_HDF5=ON -DMorula_ENABLE_SBML=ON \
  -DMorula_ENABLE_MPI=ON -DMorula_ENABLE_NCCL=OFF \
  -DMorula_ENABLE_TESTS=ON -DMorula_ENABLE_BENCHMARKS=ON -DMorula_ENABLE_APPS=ON \
  ${MORULA_HIP_CMAKE_ARGS:-} >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  cat "$log" >&2; echo "check-hip: configure failed" >&2; exit 1
fi
grep -qs 'backends:.*HIP' "$log" || { cat "$log" >&2; echo "check-hip: Kokkos has no HIP backend" >&2; exit 1; }
cmake --build "$build" -j "$jobs" -- -k 0 >>"$log" 2>&1 || status=$?
t1=$(date +%s)

# Diagnostics: file:line:col: warning|error: text. A header's warning repeats in every translation unit
# that includes it: count distinct ones. Morula's own: under the clone or the build (generated test
# sources), absolute or, through ccache's base_dir, relative; the others come from Kokkos' headers, the
# system's or the compiler driver.
sed -i 's/\x1b\[[0-9;]*[mK]//g' "$log"   # in case a compiler colours its diagnostics anyway
diags() { grep -E "^[^ :]+:[0-9]+:[0-9]+: $1: " "$log" | sed "s|^$src/||; s|^$build/|build/|; s|^\.\./src/||" | sort -u || true; }
warn_all=$(diags warning) err_all=$(diags error)
warn_own=$(grep -E '^[^/]' <<<"$warn_all" || true)
warn_kokkos=$(grep -E "^($prefix|$kernels)/" <<<"$warn_all" || true)
count() { if [ -z "$1" ]; then echo 0; else wc -l <<<"$1"; fi; }
n_own=$(count "$warn_own") n_all=$(count "$warn_all") n_kokkos=$(count "$warn_kokkos")
n_err=$(count "$err_all")
n_driver=$(grep -cE '^(clang|hipcc)[^:]*: warning: ' "$log" || true)

# What was built: the executables and libraries in the build tree (ELF files outside CMakeFiles).
built=$(find "$build" -path '*/CMakeFiles' -prune -o -type f \( -perm -u+x -o -name '*.a' -o -name '*.so' \) -print |
        while read -r f; do [ "$(head -c 4 "$f" | tr -d '\0')" = $'\x7fELF' ] || [[ $f == *.a ]] && basename "$f"; done |
        sort -u)
n_built=$(count "$built")
options=$(grep -E '^-- Morula' "$log" | sed 's/^-- //')

echo "== check-hip summary =="
echo "hipcc:    $("$hipcc" --version 2>/dev/null | head -1) ($("$hipcc" --version 2>/dev/null | grep -m1 'clang version' || true))"
echo "Kokkos:   $prefix ($(sed -n 's/.*PACKAGE_VERSION "\([0-9.]*\)".*/\1/p' "$prefix"/lib*/cmake/Kokkos/KokkosConfigVersion.cmake | head -1))"
echo "commit:   $commit ($(git -C "$src" log -1 --format=%cs))"
echo "time:     $((t1 - t0)) s (clone, configure, build; -j $jobs${launcher:+, ${CMAKE_CXX_COMPILER_LAUNCHER}})"
echo "configure:"; echo "  ${options//$'\n'/$'\n'  }"
echo "built ($n_built):"; tr '\n' ' ' <<<"$built" | fold -s -w 110 | sed 's/^/  /'; echo
echo "warnings: $n_own from Morula's sources, $n_kokkos from Kokkos' headers, $((n_all - n_own - n_kokkos)) from other headers, $n_driver from the compiler driver (distinct locations)"
[ "$n_own" -eq 0 ] || echo "  ${warn_own//$'\n'/$'\n'  }"
if [ "$status" -ne 0 ] || [ "$n_err" -gt 0 ]; then
  echo "errors:   $n_err (build status $status)"
  head -50 <<<"$err_all" | sed 's/^/  /'
  tail -n 30 "$log" | grep -E 'FAILED|ninja: build stopped|Error' | sed 's/^/  /' || true
  [ "${KEEP:-0}" = 1 ] && echo "log: $log"
  echo "check-hip: FAILED (compiled, never run)"
  exit 1
fi
[ "${KEEP:-0}" = 1 ] && echo "log: $log"
echo "check-hip: every target compiled for HIP (compiled, never run: no AMD GPU is needed or used)"
