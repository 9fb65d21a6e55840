#!/usr/bin/env bash
# A run stopped by SIGTERM: starts COMMAND, waits until FILE (written once the run has installed its
# signal handlers, e.g. its CSV) is not empty, sends SIGTERM after DELAY seconds and exits with the
# command's status (3: it wrote its checkpoint and stopped; 0: it finished before the signal).
#   stop_check.sh FILE DELAY -- COMMAND...
set -uo pipefail
file=$1 delay=$2
shift 3
"$@" &
pid=$!
for _ in $(seq 600); do [ -s "$file" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.05; done
sleep "$delay"
kill -TERM "$pid" 2>/dev/null
wait "$pid"
