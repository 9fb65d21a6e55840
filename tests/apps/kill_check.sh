#!/usr/bin/env bash
# What a run killed with SIGKILL leaves is readable: starts COMMAND in WORKDIR, waits for the file WAIT
# to appear, kills it with SIGKILL after each delay in turn (a fresh run each time), then checks with
# morula_series_check SERIES (its arguments, run in WORKDIR: "--index run.xmf --min-frames 1" or
# "--frames run sites") that every frame left reads whole, and that the checkpoint (if one was written)
# loads.
#   kill_check.sh CHECKER WORKDIR WAIT "DELAYS" "SERIES" [CHECKPOINT MODEL] -- COMMAND...
# WAIT and CHECKPOINT are relative to WORKDIR; DELAYS in seconds, e.g. "0.5 1.2 2.5".
set -uo pipefail
checker=$1 workdir=$2 wait_for=$3 delays=$4 series=$5
shift 5
checkpoint="" model=""
if [ "$1" != "--" ]; then checkpoint=$1 model=$2; shift 2; fi
shift # --
mkdir -p "$workdir"
kills=0 frames_seen=0
for delay in $delays; do
  rm -rf "$workdir"/*
  ( cd "$workdir" && exec "$@" >/dev/null 2>&1 ) &
  pid=$!
  for _ in $(seq 600); do [ -f "$workdir/$wait_for" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.1; done
  sleep "$delay"
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    kills=$((kills + 1))
  fi
  wait "$pid" 2>/dev/null
  if [ -f "$workdir/$wait_for" ]; then
    # shellcheck disable=SC2086 # SERIES is a list of arguments
    ( cd "$workdir" && "$checker" $series ) || { echo "kill after ${delay}s: the series does not read"; exit 1; }
    frames_seen=$((frames_seen + 1))
  fi
  if [ -n "$checkpoint" ] && [ -f "$workdir/$checkpoint" ]; then
    "$checker" --checkpoint "$workdir/$checkpoint" "$model" || { echo "kill after ${delay}s: the checkpoint does not load"; exit 1; }
  fi
done
echo "killed $kills runs; $frames_seen left a series, every frame read"
if [ "$kills" -eq 0 ] || [ "$frames_seen" -eq 0 ]; then
  echo "no run was killed while writing (every run ended or none had a frame yet): adjust the delays"; exit 1
fi
