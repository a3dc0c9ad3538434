#!/usr/bin/env bash
# clang-format over every C++ file of the project (.clang-format: Google
# style, 100 columns). Usage:
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  change nothing; list the files that differ and
#                              exit 1 if any does (scripts/test.sh runs this)
# Hand-laid tables keep their layout between "// clang-format off" and
# "// clang-format on".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (scripts/setup.sh)"; exit 1; }
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
      echo "format: $f differs from clang-format (run scripts/format.sh)"
      bad=1
    fi
  done
  [ $bad -eq 0 ] && echo "format: ${#files[@]} files clean"
  exit $bad
fi
clang-format -i "${files[@]}"
echo "format: ${#files[@]} files formatted"
