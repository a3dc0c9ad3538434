#!/usr/bin/env bash
# Configures and builds wasd. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Default BUILD_DIR is build/. Uses every core the machine has.
# WASD_BUILD_TARGET=wasd builds only the binary (scripts/demo.sh), not the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
shift || true
launcher=()
if command -v ccache >/dev/null 2>&1; then
  # Paths relative to the checkout, so a fresh clone elsewhere (CI) hits the
  # cache of an earlier build of the same sources.
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  # Precompiled headers (CMake WASD_PCH): ccache caches a compile that uses
  # one only with these relaxations (its manual, "Precompiled headers").
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# Warnings are errors in the project's own builds (CMake's default is off, for
# a user's build from source).
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON -DWASD_WERROR=ON "${launcher[@]}" "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)" ${WASD_BUILD_TARGET:+--target "$WASD_BUILD_TARGET"}
