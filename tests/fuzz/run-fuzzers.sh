#!/usr/bin/env bash
# Runs every libFuzzer target of a Morula_ENABLE_FUZZ build for SECONDS each, on a copy of its seed corpus
# (tests/fuzz/corpus/<target>) and its regressions (tests/fuzz/regressions/<target>), one process at a time.
#
#   tests/fuzz/run-fuzzers.sh BUILD_DIR SECONDS [TARGET...]     e.g. tests/fuzz/run-fuzzers.sh build/fuzz 60
#
# TARGET: config_grid, reactions_text, ... (default: every morula_fuzz_* in BUILD_DIR/tests/fuzz). A finding
# is a crash, an uncaught exception, a sanitizer report, an input slower than 10 s (-timeout) or one that
# needs more than 2 GB (-rss_limit_mb / -malloc_limit_mb); the script then prints the reproducer's path and
# exits non-zero. Reproduce with: BUILD_DIR/tests/fuzz/morula_fuzz_<target> <reproducer>.
# Work files (corpora grown by the run, logs, reproducers) go to $MORULA_FUZZ_WORK (default
# BUILD_DIR/fuzz-work); docs/robustness.md says what to do with a finding.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
work=${MORULA_FUZZ_WORK:-$build/fuzz-work}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for exe in "$build"/tests/fuzz/morula_fuzz_*; do
    [ -x "$exe" ] && [[ "$exe" != *morula_fuzz_replay_* ]] && targets+=("${exe##*/morula_fuzz_}")
  done
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "run-fuzzers: no fuzz targets in $build/tests/fuzz (configure with -DMorula_ENABLE_FUZZ=ON and build them)" >&2
  exit 2
fi

# halt_on_error: the first report is the finding; detect_leaks: a leak per input is one too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:print_stacktrace=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

failed=()
for t in "${targets[@]}"; do
  exe=$build/tests/fuzz/morula_fuzz_$t
  if [ ! -x "$exe" ]; then
    echo "run-fuzzers: $exe is missing" >&2
    failed+=("$t (no binary)")
    continue
  fi
  dir=$work/$t
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  # the seeds and the regressions, copied: libFuzzer adds what it finds to its first corpus folder
  for seeds in "$here/corpus/$t" "$here/regressions/$t"; do
    [ -d "$seeds" ] && find "$seeds" -type f ! -name 'README*' -exec cp {} "$dir/corpus/" \;
  done
  dict=()
  case $t in
    config_*) dict=(-dict="$here/dict/config.dict") ;;
    reactions_text) dict=(-dict="$here/dict/reactions_text.dict") ;;
    lassie_folder) dict=(-dict="$here/dict/lassie_folder.dict") ;;
  esac
  echo "run-fuzzers: $t for ${seconds} s ($(find "$dir/corpus" -type f | wc -l) seeds), log $dir/fuzz.log"
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "${dict[@]}" "$dir/corpus" >"$dir/fuzz.log" 2>&1
  rc=$?
  grep -E "^stat::number_of_executed_units|^Done [0-9]+ runs" "$dir/fuzz.log" | sed "s/^/  $t: /"
  reproducers=$(find "$dir/artifacts" -type f | sort)
  if [ $rc -ne 0 ] || [ -n "$reproducers" ]; then
    echo "run-fuzzers: FINDING in $t (exit $rc); the log ends:" >&2
    tail -n 40 "$dir/fuzz.log" >&2
    for r in $reproducers; do
      echo "run-fuzzers: reproducer: $r (run: $exe $r)" >&2
    done
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "run-fuzzers: findings in ${failed[*]}" >&2
  exit 1
fi
echo "run-fuzzers: ${#targets[@]} targets, ${seconds} s each, no finding"
