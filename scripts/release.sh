#!/usr/bin/env bash
# Every release artifact from one command, all named by the version the
# binary reports (`wasd version --short`: the VERSION file; see CHANGELOG.md
# "Releasing"):
#   wasd-VERSION-linux-ARCH.tar.gz   the fully static wasd, kubectl_complete-wasd
#                                    (completion of `kubectl wasd`), LICENSE,
#                                    licenses/, README, SECURITY, CHANGELOG
#   wasd-VERSION.oci.tar             the container image (OCI archive, ref name VERSION)
#   wasd-VERSION.tgz                 the Helm chart (appVersion VERSION: its default
#                                    image is exactly this image)
#   wasd-VERSION.spdx.json           SBOM: every component linked into wasd, by
#                                    Debian package and version (scripts/sbom.py)
#   licenses/                        LICENSE (wasd, Apache-2.0) and the Debian
#                                    copyright file of each linked package
#                                    (OpenSSL, Boost, nlohmann/json, yaml-cpp,
#                                    glibc, libstdc++, libgcc), copied from
#                                    /usr/share/doc, never downloaded
#   wasd.yaml                        krew plugin manifest of `kubectl wasd` for
#                                    the tarball (scripts/krew_manifest.py)
#   SHA256SUMS                       of every file above
#
# Usage: scripts/release.sh --project-url URL [--build-dir DIR] [--out DIR]
#                           [--repository REPO] [--krew-uri-template T] [--no-image]
#   --project-url where this release is published (https://HOST/OWNER/wasd,
#                 or $WASD_PROJECT_URL): the one setting every URL in the
#                 artifacts comes from — the plugin's download
#                 (URL/releases/download/vVERSION/TARBALL) and homepage in the
#                 krew manifest, the SBOM's downloadLocation, the packaged
#                 chart's home, sources, icon, artifacthub links and runbook
#                 base (scripts/package-chart.sh). Required: there is no
#                 public default.
#   --build-dir   CMake tree for the binary (default build-image/cmake; see image.sh)
#   --out         default build-image/release (emptied first)
#   --repository  image name without tag (default: localhost/wasd, scripts/image.sh)
#   --krew-uri-template  where the tarball will be downloaded from, if not
#                 from the project's releases; {project}, {version} and
#                 {tarball} are replaced
#   --no-image    build everything but the OCI image archive (for a machine
#                 without buildah; the release is then incomplete and says so).
#                 Without it, a missing buildah stops the release before the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$root/build-image/cmake
out=$root/build-image/release
image_args=()
krew_args=()
with_image=1
project_url=${WASD_PROJECT_URL:-}
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --repository) image_args+=(--repository "$2"); shift 2 ;;
    --krew-uri-template) krew_args+=(--uri-template "$2"); shift 2 ;;
    --no-image) with_image=0; shift ;;
    --project-url) project_url=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "release.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
project_url=${project_url%/}
if ! [[ $project_url =~ ^https://[^[:space:]\|]+$ ]]; then
  echo "release.sh: set --project-url https://HOST/OWNER/wasd (or WASD_PROJECT_URL): where this" >&2
  echo "  release is published; every URL in the artifacts is made from it (got '$project_url')" >&2
  exit 2
fi
t0=$(date +%s)
# Timestamps inside the artifacts (image config, tar entries, SBOM, the
# compiler's __DATE__) come from the commit, not from the clock.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH

# Versions must agree before anything is built: the VERSION file (what the
# binary reports), the chart's version and appVersion
# (tests/image/test_versions.py checks the same on every test run).
project_version=$(head -n 1 "$root/VERSION")
chart_version=$(sed -n 's/^version:[[:space:]]*//p' "$root/charts/wasd/Chart.yaml")
chart_app_version=$(sed -n 's/^appVersion:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/charts/wasd/Chart.yaml")
if [ "$project_version" != "$chart_version" ] || [ "$project_version" != "$chart_app_version" ]; then
  echo "release.sh: VERSION says $project_version, Chart.yaml version $chart_version," \
    "appVersion $chart_app_version: make them equal" >&2
  exit 1
fi

if [ "$with_image" = 1 ] && ! command -v buildah >/dev/null; then
  echo "release.sh: buildah is not installed, so the OCI image archive cannot be built." >&2
  echo "  Install it (scripts/setup.sh), or run with --no-image for every other artifact" >&2
  echo "  (the release then has no wasd-VERSION.oci.tar)." >&2
  exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
find "$out" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
work=$out/.work
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

if [ "$with_image" = 1 ]; then
  "$root/scripts/image.sh" --build-dir "$build_dir" --out "$work/image" "${image_args[@]}"
  # shellcheck disable=SC1091
  . "$work/image/image.env"
else
  "$root/scripts/image.sh" --build-dir "$build_dir" --out "$work/image" "${image_args[@]}" \
    --context-only >/dev/null
  VERSION=$("$work/image/context/wasd" version --short)
  REVISION=$("$work/image/context/wasd" version -o json |
    python3 -c 'import json, sys; print(json.load(sys.stdin).get("revision", "unknown"))')
  IMAGE="(not built: --no-image)"
  ROOTFS_BYTES=0
  ARCHIVE_BYTES=0
  echo "release.sh: note: --no-image: no OCI image archive in this release"
fi
if [ "$VERSION" != "$project_version" ]; then
  echo "release.sh: the binary says $VERSION but VERSION says $project_version (a stale build?)" >&2
  exit 1
fi
if git -C "$root" rev-parse -q --verify HEAD >/dev/null 2>&1; then
  if ! git -C "$root" diff-index --quiet HEAD --; then
    echo "release.sh: note: the tree has uncommitted changes (revision $REVISION)"
  fi
  if [ "$(git -C "$root" rev-parse -q --verify "refs/tags/v$VERSION^{commit}" 2>/dev/null)" != "$REVISION" ]; then
    echo "release.sh: note: $REVISION is not the commit tagged v$VERSION"
  fi
fi

arch=$(dpkg --print-architecture)
name=wasd-$VERSION-linux-$arch
mkdir -p "$work/$name"
# The SBOM first: it finds the linked Debian packages, whose copyright files
# are the third-party licences.
"$root/scripts/sbom.py" --binary "$work/image/context/wasd" --version "$VERSION" \
  --revision "$REVISION" --out "$out/wasd-$VERSION.spdx.json" --licenses-dir "$out/licenses" \
  --project-url "$project_url"
cp "$work/image/context/wasd" "$work/$name/wasd"
# kubectl 1.26+ completes `kubectl wasd ...` through kubectl_complete-wasd.
install -m 0755 "$root/scripts/kubectl_complete-wasd" "$work/$name/kubectl_complete-wasd"
cp "$root/LICENSE" "$root/README.md" "$root/SECURITY.md" "$root/CHANGELOG.md" "$work/$name/"
cp -r "$out/licenses" "$work/$name/licenses"
tar -C "$work" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
  -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
artifacts=("$name.tar.gz")
if [ "$with_image" = 1 ]; then
  mv "$ARCHIVE" "$out/wasd-$VERSION.oci.tar"
  artifacts+=("wasd-$VERSION.oci.tar")
fi
"$root/scripts/package-chart.sh" --version "$VERSION" --out "$out" --project-url "$project_url" >/dev/null
krew_arch=$arch
[ "$arch" = amd64 ] || echo "release.sh: note: the krew manifest names linux/$arch"
"$root/scripts/krew_manifest.py" --tarball "$out/$name.tar.gz" --version "$VERSION" \
  --os linux --arch "$krew_arch" --out "$out/wasd.yaml" --project-url "$project_url" "${krew_args[@]}"
artifacts+=("wasd-$VERSION.tgz" "wasd-$VERSION.spdx.json" wasd.yaml)
(cd "$out" && sha256sum "${artifacts[@]}" licenses/* >SHA256SUMS)
cat >"$out/release.env" <<EOF
VERSION=$VERSION
PROJECT_URL=$project_url
REVISION=$REVISION
IMAGE=$IMAGE
ROOTFS_BYTES=$ROOTFS_BYTES
ARCHIVE_BYTES=$ARCHIVE_BYTES
EOF

echo "release.sh: $VERSION in $out ($(($(date +%s) - t0)) s):"
(cd "$out" && ls -l --time-style=+ "${artifacts[@]}" SHA256SUMS |
  awk '{ printf "  %10d  %s\n", $5, $NF }')
echo "  licenses/: $(cd "$out/licenses" && printf '%s ' *)"
if [ "$with_image" = 1 ]; then
  echo "release.sh: image $IMAGE; push it with e.g."
  echo "  skopeo copy oci-archive:$out/wasd-$VERSION.oci.tar docker://$IMAGE"
else
  echo "release.sh: INCOMPLETE release: no OCI image archive (--no-image)"
fi
