#!/usr/bin/env bash
# Builds wasd's libFuzzer targets with clang (ASan + UBSan + libFuzzer) and
# runs each for a bounded time on a COPY of its seed corpus; prints
# executions, speed, coverage and findings per target.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 600 (CI uses a short time such as 20)
#   TARGET              admission_review config_text watch_decoder kubeconfig (default: all)
# Environment:
#   WASD_FUZZ_BUILD_DIR  build directory (default build-fuzz)
#   WASD_FUZZ_OUT        where corpora copies, logs and crash files go
#                        (default $WASD_FUZZ_BUILD_DIR/fuzz-runs/<time>)
#   WASD_FUZZ_JOBS       parallel compile jobs (default 2)
#
# The repository's corpus is never written to: new inputs libFuzzer finds stay
# in the copy. A finding leaves a crash-/leak-/timeout-/oom- file under
# $WASD_FUZZ_OUT/<target>/artifacts/; minimise it (fuzz_<target>
# -minimize_crash=1 FILE), fix the bug and add the file to
# tests/fuzz/corpus/<target>/ so the normal test run replays it.
# Exits 1 when any target had a finding, 2 on a build or usage error.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
if [ $# -gt 0 ]; then shift; fi
all_targets=(admission_review config_text watch_decoder kubeconfig)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
case $seconds in '' | *[!0-9]*) echo "fuzz.sh: SECONDS_PER_TARGET must be a number" >&2; exit 2 ;; esac
for t in "${targets[@]}"; do
  [ -d "$root/tests/fuzz/corpus/$t" ] || { echo "fuzz.sh: unknown target $t" >&2; exit 2; }
done

build=${WASD_FUZZ_BUILD_DIR:-$root/build-fuzz}
out=${WASD_FUZZ_OUT:-$build/fuzz-runs/$(date +%Y%m%d-%H%M%S)}
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (scripts/setup.sh installs it)" >&2; exit 2; }

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DWASD_FUZZ=ON -DWASD_SANITIZE=ON \
  -DBUILD_TESTING=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 2
cmake --build "$build" -j"${WASD_FUZZ_JOBS:-2}" \
  --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null || exit 2

# Leaks are findings; UBSan stops at the first report (also compiled in with
# -fno-sanitize-recover) and prints where.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

mkdir -p "$out"
printf '%-18s %8s %12s %8s %8s %8s %9s  %s\n' target seconds executions exec/s cov features peak_rss findings
any=0
for t in "${targets[@]}"; do
  dir="$out/$t"
  mkdir -p "$dir/artifacts"
  rm -rf "$dir/corpus"
  cp -r "$root/tests/fuzz/corpus/$t" "$dir/corpus"
  dict=()
  [ -f "$root/tests/fuzz/dict/$t.dict" ] && dict=(-dict="$root/tests/fuzz/dict/$t.dict")
  set +e
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=5 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "${dict[@]}" "$dir/corpus" \
    >"$dir/log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$dir/log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  findings=$(find "$dir/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  if [ "$rc" -ne 0 ] && [ "$findings" -eq 0 ]; then findings=1; fi  # died without an artifact
  [ "$findings" -eq 0 ] || any=1
  printf '%-18s %8s %12s %8s %8s %8s %7sMB  %s\n' "$t" "$seconds" "${execs:-?}" "${speed:-?}" \
    "${cov:-?}" "${ft:-?}" "${rss:-?}" "$findings"
  if [ "$findings" -ne 0 ]; then
    echo "  exit $rc; see $dir/log and $dir/artifacts/" >&2
    grep -m3 -E 'ERROR: |runtime error|invariant broken|SUMMARY' "$dir/log" | sed 's/^/  /' >&2 || true
  fi
done
echo "logs and corpus copies: $out"
exit "$any"
