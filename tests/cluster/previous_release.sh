#!/usr/bin/env bash
# Builds the previous release's wasd binary and extracts its chart, for the
# upgrade tests of tests/cluster (issue 42). The commit is the non-comment line
# of tests/testdata/previous-release. Usage: tests/cluster/previous_release.sh
# Prints the cache directory, which then holds:
#   wasd    that commit's binary (scripts/build.sh, WASD_BUILD_TARGET=wasd)
#   chart/  that commit's charts/wasd (git archive)
# The cache is outside the clone (WASD_PREVIOUS_CACHE, default
# /var/cache/wasd/previous/<sha>) and reused when the binary is present; the
# source is a detached worktree there, removed again after the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sha=$(grep -v '^#' "$root/tests/testdata/previous-release" | head -1 | tr -d '[:space:]')
[ -n "$sha" ] || { echo "no commit in tests/testdata/previous-release" >&2; exit 1; }
cache=${WASD_PREVIOUS_CACHE:-/var/cache/wasd/previous/$sha}
mkdir -p "$cache"
if [ ! -d "$cache/chart" ]; then
  rm -rf "$cache/chart.tmp" && mkdir -p "$cache/chart.tmp"
  git -C "$root" archive "$sha" charts/wasd | tar -x -C "$cache/chart.tmp" --strip-components=2
  mv "$cache/chart.tmp" "$cache/chart"
fi
if [ ! -x "$cache/wasd" ]; then
  src=$cache/src
  git -C "$root" worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
  git -C "$root" worktree add --detach "$src" "$sha" >&2
  WASD_BUILD_TARGET=wasd "$src/scripts/build.sh" "$cache/build" >&2
  cp "$cache/build/wasd" "$cache/wasd.tmp" && mv "$cache/wasd.tmp" "$cache/wasd"
  git -C "$root" worktree remove --force "$src"
fi
echo "$cache"
