#!/usr/bin/env bash
# The long runs of the fault suite (tests/faults; ctest runs the short versions):
# 1,000,000 requests for the webhook memory test, 50 SIGKILLs of the reconciler,
# 10 API server restarts, 8 rounds under watch faults, 20 SIGTERM-under-load runs,
# larger floods. Prints the
# FAULT-FIGURE lines (faults injected per kind and the result) at the end; full
# logs go to $FAULT_LOG_DIR (default: a temp dir).
#
# Usage: scripts/faults.sh [BUILD_DIR] [TEST_FILE...]
#   BUILD_DIR   a build with the wasd binary (default build/; built if missing)
#   TEST_FILE   e.g. test_webhook_memory.py (default: every tests/faults/test_*.py)
# Every knob can be overridden from the environment, e.g.
#   FAULT_MEMORY_REQUESTS=200000 FAULT_KILLS=20 scripts/faults.sh
# Needs wrk, openssl, kubectl, python3 (as the ctest suite does).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
if [ ! -x "$build/wasd" ]; then
  "$root/scripts/build.sh" "$build" || exit 1
fi

export WASD_BIN="$build/wasd" WASD_SOURCE_DIR="$root" WASD_BUILD_DIR="$build" PYTHONDONTWRITEBYTECODE=1
# As ctest: the test kit (tests/lib) and the test API server (tests/apiserver) import from tests/.
export PYTHONPATH="$root/tests${PYTHONPATH:+:$PYTHONPATH}"
export FAULT_MEMORY_REQUESTS=${FAULT_MEMORY_REQUESTS:-1000000}
export FAULT_KILLS=${FAULT_KILLS:-50}
export FAULT_RESTARTS=${FAULT_RESTARTS:-10}
export FAULT_WATCH_ROUNDS=${FAULT_WATCH_ROUNDS:-8}
export FAULT_SIGTERM_RUNS=${FAULT_SIGTERM_RUNS:-20}
export FAULT_CONNECTIONS=${FAULT_CONNECTIONS:-1000}
export FAULT_HALF_OPEN=${FAULT_HALF_OPEN:-1000}
export FAULT_SLOW_CLIENTS=${FAULT_SLOW_CLIENTS:-100}
export FAULT_GARBAGE=${FAULT_GARBAGE:-500}
export FAULT_RATE=${FAULT_RATE:-0.2}

logs=${FAULT_LOG_DIR:-$(mktemp -d /tmp/wasd-faults-XXXXXX)}
mkdir -p "$logs"
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  for f in "$root"/tests/faults/test_*.py; do tests+=("$(basename "$f")"); done
fi

status=0
for t in "${tests[@]}"; do
  name=${t%.py}
  echo "=== $name"
  start=$(date +%s)
  if python3 "$root/tests/faults/$t" >"$logs/$name.log" 2>&1; then
    echo "=== $name: passed ($(( $(date +%s) - start )) s)"
  else
    echo "=== $name: FAILED ($(( $(date +%s) - start )) s), log: $logs/$name.log"
    tail -30 "$logs/$name.log"
    status=1
  fi
done
echo "=== figures"
grep -h '^FAULT-FIGURE\|FAULT-FIGURE' "$logs"/*.log | sed 's/.*FAULT-FIGURE /  /'
echo "logs: $logs"
exit $status
