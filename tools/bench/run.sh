#!/usr/bin/env bash
# run.sh — the webhook benchmark of wasd.
#
#   tools/bench/run.sh quick                   # CI mode: correctness of every fixture over TLS
#                                        # plus ~2 s of wrk per fixture, figures printed,
#                                        # nothing timed is asserted (tests/bench/test_bench_quick.py)
#   tools/bench/run.sh compare [FIXTURE ...]   # side by side with the Go peer: runs compare.sh of
#                                        # the shared benchmark kit against the built binary
#   tools/bench/run.sh profile [FIXTURE ...]   # instructions per request by area (callgrind)
#   tools/bench/run.sh latency                 # open-loop latency table (tools/bench/latency.sh)
#
# Environment:
#   WASD_BIN     the binary (default: build/wasd under the repository root)
#   BENCH_KIT    the shared benchmark kit holding compare.sh, go-peer/ and the
#                fixtures it checks (default: ../shared/bench relative to the
#                repository root). Only `compare` uses it; the build and the
#                tests never do.
#   compare passes everything else through to compare.sh; its defaults here:
#   KEY_TYPE=ec (wasd's own certificates are ECDSA P-256), ROUNDS=5.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export WASD_BIN=${WASD_BIN:-$ROOT/build/wasd}
BENCH_KIT=${BENCH_KIT:-$ROOT/../shared/bench}

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }
(($#)) || usage
cmd=$1
shift

[[ -x $WASD_BIN ]] || { echo "run.sh: no wasd binary at $WASD_BIN (build it, or set WASD_BIN)" >&2; exit 2; }
WASD_BIN=$(cd "$(dirname "$WASD_BIN")" && pwd)/$(basename "$WASD_BIN")

case $cmd in
  quick)
    # PYTHONPATH as ctest sets it: the test kit is tests/lib.
    WASD_SOURCE_DIR=$ROOT PYTHONPATH="$ROOT/tests${PYTHONPATH:+:$PYTHONPATH}" \
      exec python3 "$ROOT/tests/bench/test_bench_quick.py" -v "$@"
    ;;
  compare)
    if [[ ! -x $BENCH_KIT/compare.sh ]]; then
      echo "run.sh: the shared benchmark kit is not at $BENCH_KIT (no compare.sh there)." >&2
      echo "        Set BENCH_KIT to the directory holding compare.sh and go-peer/;" >&2
      echo "        'tools/bench/run.sh quick' needs no kit." >&2
      exit 2
    fi
    export KEY_TYPE=${KEY_TYPE:-ec} ROUNDS=${ROUNDS:-5}
    exec "$BENCH_KIT/compare.sh" "$@"
    ;;
  profile)
    exec "$HERE/profile.sh" "$@"
    ;;
  latency)
    exec "$HERE/latency.sh" "$@"
    ;;
  *)
    usage
    ;;
esac
