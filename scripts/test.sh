#!/usr/bin/env bash
# The README's second command: installs what is missing, then builds and runs
# the whole test suite twice — a normal build, and a build with
# AddressSanitizer + UndefinedBehaviorSanitizer — and prints one closing line
# "total: N passed, N failed, N skipped".
#
# Usage: scripts/test.sh [--no-sanitize]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=1
[ "${1:-}" = "--no-sanitize" ] && sanitize=0

"$root/scripts/setup.sh" || exit 1

passed=0
failed=0
skipped=0
status=0
run_suite() {  # NAME BUILD_DIR CTEST_LABEL_REGEX [cmake args...]
  local name=$1 dir=$2 labels=$3
  shift 3
  echo "=== $name: build ($dir) [at ${SECONDS} s]"
  if ! "$root/scripts/build.sh" "$dir" "$@"; then
    echo "=== $name: BUILD FAILED [at ${SECONDS} s]"
    failed=$((failed + 1))
    status=1
    return
  fi
  echo "=== $name: ctest [at ${SECONDS} s]"
  local log="$dir/ctest.log"
  (cd "$dir" && ctest --output-on-failure -j2 --timeout 900 ${labels:+-L "$labels"}) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local line total nfail
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  nfail=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  if [ -z "$line" ]; then
    failed=$((failed + 1))
    status=1
  else
    # ctest counts a skipped test (SKIP_RETURN_CODE, e.g. tests/image without
    # buildah) among the passed ones; count it as skipped.
    local nskip
    nskip=$(grep -cE '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$log")
    passed=$((passed + total - nfail - nskip))
    failed=$((failed + nfail))
    skipped=$((skipped + nskip))
  fi
  [ "$rc" -eq 0 ] || status=1
}

# The real control plane's components (scripts/components.sh: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, helm and
# the node agent, from Go modules), for the tests labelled "cluster" of the
# normal build; cached outside the clone, so with the cache warm this takes
# seconds. A failed build fails the run (and those tests).
echo "=== real control plane components: scripts/components.sh [at ${SECONDS} s]"
if "$root/scripts/components.sh"; then
  passed=$((passed + 1))
else
  echo "=== real control plane components: BUILD FAILED [at ${SECONDS} s]"
  failed=$((failed + 1))
  status=1
fi
# krew v0.4.3 (tests/tools/krew, its own module) for image.test_krew_real.
echo "=== krew: scripts/components.sh krew [at ${SECONDS} s]"
if "$root/scripts/components.sh" krew; then
  passed=$((passed + 1))
else
  echo "=== krew: BUILD FAILED [at ${SECONDS} s]"
  failed=$((failed + 1))
  status=1
fi
# The normal build also builds the lab (tools/bench, off by default) so that
# its quick runs in tests/bench are part of CI.
run_suite "normal build" "$root/build" "" -DWASD_BUILD_BENCH=ON
# The Release build a user makes from source (`cmake -B build
# -DCMAKE_BUILD_TYPE=Release && cmake --build build`: warnings are not errors
# there, g++ 12's -Wrestrict false positives in Release must not stop it),
# the binary only, then one check with it.
echo "=== Release build as a user builds it [at ${SECONDS} s]"
if WASD_BUILD_TARGET=wasd "$root/scripts/build.sh" "$root/build-release" -DCMAKE_BUILD_TYPE=Release \
     -DWASD_WERROR=OFF -DBUILD_TESTING=OFF &&
   "$root/build-release/wasd" check -f "$root/examples/kep-2-user-mincount.yaml" >/dev/null; then
  passed=$((passed + 1))
else
  echo "=== Release build: FAILED [at ${SECONDS} s]"
  failed=$((failed + 1))
  status=1
fi
echo "=== clang-tidy on the sources changed by the last commit [at ${SECONDS} s]"
if "$root/scripts/tidy.sh" "${WASD_TIDY_BASE:-HEAD~1}" "$root/build"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  status=1
fi
echo "=== clang-format on every C++ file [at ${SECONDS} s]"
if "$root/scripts/format.sh" --check; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  status=1
fi
if [ "$sanitize" = 1 ]; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # Under the sanitizers: the unit tests and the end-to-end tests labelled
  # "asan" (tests/CMakeLists.txt: one or two per product path; the chart
  # tests, the test API server's own tests, the fault suite and the other
  # e2e scenarios repeat those paths and would only triple the run time).
  run_suite "ASan+UBSan build" "$root/build-asan" "^(unit|asan)$" -DWASD_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug
fi
if [ "$sanitize" = 1 ]; then
  # libFuzzer, briefly: the corpora already replay in every unit run above;
  # this proves the fuzz build and catches a quick regression. Long runs:
  # scripts/fuzz.sh (600 s per target).
  echo "=== fuzz: ${WASD_CI_FUZZ_SECONDS:-10} s per target [at ${SECONDS} s]"
  if env -u ASAN_OPTIONS -u UBSAN_OPTIONS "$root/scripts/fuzz.sh" "${WASD_CI_FUZZ_SECONDS:-10}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    status=1
  fi
fi
echo "total: $passed passed, $failed failed, $skipped skipped"
exit $status
