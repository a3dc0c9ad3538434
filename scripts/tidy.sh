#!/usr/bin/env bash
# Runs clang-tidy (config: .clang-tidy) on the C++ sources changed between BASE
# and HEAD, with every finding an error. Needs a configured build directory for
# compile_commands.json.
#
# Usage: scripts/tidy.sh [BASE] [BUILD_DIR]
#   BASE defaults to $WASD_TIDY_BASE, else HEAD~1 (the last commit's changes);
#   use the first commit (git rev-list --max-parents=0 HEAD) for the whole tree.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-${WASD_TIDY_BASE:-HEAD~1}}
build=${2:-$root/build}
cd "$root"
if ! git rev-parse --verify -q "$base" >/dev/null; then
  base=$(git rev-list --max-parents=0 HEAD | tail -n 1)
fi
[ -f "$build/compile_commands.json" ] || { echo "tidy: no $build/compile_commands.json (build first)"; exit 1; }
# The product folders, from the one layering table (layers.txt).
mapfile -t folders < <(python3 "$root/scripts/layers.py" folders)
patterns=()
for d in "${folders[@]}"; do patterns+=("$d/*.cc"); done
mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$base" HEAD -- "${patterns[@]}")
if [ ${#files[@]} -eq 0 ]; then
  echo "tidy: no C++ sources changed since $base"
  exit 0
fi
echo "tidy: ${#files[@]} file(s) changed since $base"
# The build's precompiled headers are GCC's, which clang cannot read: tidy
# works from a copy of the compile commands without them (the headers are
# still included, only not precompiled).
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    e["command"] = re.sub(r" -Winvalid-pch| -include \S*cmake_pch\.hxx", "", e["command"])
json.dump(entries, open(sys.argv[2], "w"))
PY
status=0
for f in "${files[@]}"; do
  if ! timeout 300 clang-tidy -p "$db" --quiet --warnings-as-errors='*' "$f" 2>/dev/null; then
    echo "tidy: findings in $f"
    status=1
  fi
done
[ $status -eq 0 ] && echo "tidy: clean"
exit $status
