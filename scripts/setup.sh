#!/usr/bin/env bash
# Installs every Debian package that building, running and testing wasd needs.
# Idempotent and non-interactive; run as root (or with sudo available).
set -euo pipefail

packages=(
  # build
  cmake g++ make pkg-config ccache
  libboost-dev libboost-system-dev libssl-dev nlohmann-json3-dev libyaml-cpp-dev
  # tests
  catch2 openssl curl python3 python3-yaml kubectl procps
  # the shells whose completion scripts tests/e2e/test_completion_shells.py runs (bash is Essential)
  zsh fish
  # promtool for the alerts (tests/chart/test_alerts_promtool.py; the package ships the server too, never started)
  prometheus
  # sanitizers, fuzzing, static checks
  clang clang-tidy clang-format libfuzzer-14-dev libclang-rt-14-dev
  # the Go peer of the benchmark
  golang-1.19
  # benchmarks (tools/bench/run.sh: wrk for quick and compare, hey for compare, valgrind for profile)
  wrk hey valgrind
  # container image without a daemon (scripts/image.sh, tests/image), build cache
  buildah umoci util-linux iproute2 binutils ccache
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
