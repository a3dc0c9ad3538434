#!/usr/bin/env bash
# Packages charts/wasd as wasd-VERSION.tgz, the layout `helm package` writes
# (a gzipped tar of the directory wasd/), without needing helm. The packaged
# Chart.yaml carries `version: VERSION` and `appVersion: "VERSION"`, so the
# chart's default image tag (image.tag empty = appVersion) is the image that
# scripts/image.sh built from the same tree.
#
# Usage: scripts/package-chart.sh [--version VERSION] [--out DIR] [--project-url URL]
#   --version   default: the version in charts/wasd/Chart.yaml
#   --project-url  where the project is published (https://HOST/OWNER/wasd):
#               the packaged Chart.yaml's home, sources, icon and artifacthub
#               links and values.yaml's prometheusRule.runbookBaseURL are
#               written from it (the source tree names
#               https://github.com/wasd-io/wasd; default: left as written)
#   --out       default: build-image/
# Prints the path of the package. The tar is reproducible: sorted names,
# numeric owner 0, modification times from SOURCE_DATE_EPOCH (default: the
# last commit's time).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
chart=$root/charts/wasd
version=""
project_url=""
out=$root/build-image
while [ $# -gt 0 ]; do
  case $1 in
    --version) version=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --project-url) project_url=${2%/}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-chart.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$version" ]; then
  version=$(sed -n 's/^version:[[:space:]]*//p' "$chart/Chart.yaml")
fi
# Chart versions are SemVer 2 (helm refuses others); image tags allow no "+".
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "package-chart.sh: '$version' is not a SemVer version without build metadata" >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d "$out/chart.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cp -r "$chart" "$stage/wasd"
# .helmignore, as helm package reads it: one glob per line (only the simple
# forms are supported; a negation would need helm's own matcher).
excludes=()
while IFS= read -r pattern; do
  pattern=${pattern%%#*}
  pattern=$(echo "$pattern" | sed 's/[[:space:]]*$//')
  [ -n "$pattern" ] || continue
  if [[ $pattern == !* ]]; then
    echo "package-chart.sh: .helmignore negation '$pattern' is not supported" >&2
    exit 2
  fi
  excludes+=("--exclude=${pattern%/}")
done < <(cat "$chart/.helmignore" 2>/dev/null || true)
# Only the two fields change; comments and order stay as written.
sed -i -e "s/^version:.*/version: $version/" -e "s/^appVersion:.*/appVersion: \"$version\"/" \
  "$stage/wasd/Chart.yaml"
grep -qx "version: $version" "$stage/wasd/Chart.yaml"
grep -qx "appVersion: \"$version\"" "$stage/wasd/Chart.yaml"
if [ -n "$project_url" ]; then
  if ! [[ $project_url =~ ^https://[^[:space:]\|]+$ ]]; then
    echo "package-chart.sh: --project-url must be an https:// URL (got '$project_url')" >&2
    exit 2
  fi
  for f in Chart.yaml values.yaml; do
    sed -i -e "s|https://raw.githubusercontent.com/wasd-io/wasd/main|$project_url/raw/main|g" \
      -e "s|https://github.com/wasd-io/wasd|$project_url|g" "$stage/wasd/$f"
    if grep -q "wasd-io/wasd" "$stage/wasd/$f" && [[ $project_url != *wasd-io/wasd* ]]; then
      echo "package-chart.sh: $f still names wasd-io/wasd after --project-url" >&2
      exit 1
    fi
  done
fi
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
pkg=$out/wasd-$version.tgz
tar -C "$stage" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
  --mode='u+rw,go+r,go-w' "${excludes[@]}" -cf - wasd | gzip -n -9 >"$pkg"
echo "$pkg"
