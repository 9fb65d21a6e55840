#!/usr/bin/env bash
# Runs NVIDIA compute-sanitizer over Morula's CUDA test binaries, one process per test so that the
# GPU and the host's cores are shared by many at once, and summarises what each tool found.
#   scripts/compute-sanitizer.sh [-t "memcheck racecheck initcheck synccheck"] [-j 16] [-l 330] [-o logs]
#                                TEST_BINARY...
# e.g. scripts/compute-sanitizer.sh -j 20 build-cuda/tests/*/morula_*_tests_cuda
# -l: seconds per test (a test still running then is cut off and reported as rc=124; what ran of it
# was checked). Exit status 1 if any tool reported an error or a test failed, 0 otherwise.
set -uo pipefail
tools="memcheck racecheck initcheck synccheck" jobs=16 limit=330 logs=sanitizer-logs
while getopts "t:j:l:o:" opt; do
  case $opt in
    t) tools=$OPTARG;; j) jobs=$OPTARG;; l) limit=$OPTARG;; o) logs=$OPTARG;;
    *) sed -n '2,9p' "$0"; exit 2;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n '2,9p' "$0"; exit 2; }
sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
: > "$logs/summary.txt"
export sanitizer limit logs OMP_PROC_BIND=false OMP_NUM_THREADS=1
run_one() {
  local tool=$1 binary=$2 test=$3 extra=""
  [ "$tool" = memcheck ] && extra="--leak-check full"
  local name="${tool}_$(basename "$binary")_${test//[^a-zA-Z0-9_]/_}" start=$SECONDS
  local log="$logs/$name.log"
  # Each run in its own folder: the same test under several tools at once writes the same file names.
  local folder="$logs/work/$name"
  mkdir -p "$folder"
  ( cd "$folder" && timeout "$limit" "$sanitizer" --tool "$tool" $extra --error-exitcode 99 --print-limit 40 \
      "$binary" "--gtest_filter=$test" ) > "$log" 2>&1
  local rc=$?
  rm -rf "$folder"
  echo "$tool $(basename "$binary") $test rc=$rc secs=$((SECONDS - start))" \
       "$(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/=* *//')" \
       "$(grep -c '^\[       OK' "$log") passed $(grep -c '^\[  FAILED' "$log") failed" >> "$logs/summary.txt"
}
export -f run_one
binaries=()
for binary in "$@"; do binaries+=("$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"); done
for binary in "${binaries[@]}"; do
  suite=""
  "$binary" --gtest_list_tests | while IFS= read -r line; do
    case "$line" in
      [a-zA-Z]*.) suite=${line%.};;
      "  "*) t=${line#  }; for tool in $tools; do echo "$tool $binary $suite.${t%% *}"; done;;
    esac
  done
done > "$logs/jobs.txt"
xargs -P "$jobs" -L1 bash -c 'run_one "$0" "$1" "$2"' < "$logs/jobs.txt"
sort -o "$logs/summary.txt" "$logs/summary.txt"
echo "$(wc -l < "$logs/jobs.txt") runs; $(grep -c 'rc=0 ' "$logs/summary.txt") clean and passed;" \
     "$(grep -c 'rc=124 ' "$logs/summary.txt") cut off at ${limit} s;" \
     "$(grep -c 'rc=99 ' "$logs/summary.txt") with sanitizer errors"
! grep -q 'rc=99 \| [1-9][0-9]* failed' "$logs/summary.txt"
