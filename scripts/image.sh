#!/usr/bin/env bash
# Builds the fully static wasd and the container image, and writes the image
# as an OCI archive. No daemon and no network: Debian's buildah builds the
# FROM-scratch Dockerfile with the vfs storage driver and chroot isolation,
# in a private store that is removed afterwards.
#
# Usage: scripts/image.sh [--build-dir DIR] [--out DIR] [--repository REPO]
#                         [--context-only]
#   --build-dir DIR   CMake build tree to build the target wasd-fully-static
#                     in (configured here when it is not one yet). Default
#                     build-image/cmake. An existing build/ works too: the
#                     binary is then only a link of the objects it has.
#   --out DIR         where the context, the archive and image.env go.
#                     Default build-image/.
#   --repository R    image name without tag. Default: localhost/wasd (a
#                     local name, as podman gives one; the chart has no
#                     default image: install it with
#                     --set image.repository=<where you push it>).
#   --context-only    stage DIR/context and stop (for `docker build -f
#                     Dockerfile DIR/context` on a machine with docker).
#
# Writes DIR/wasd-VERSION.oci.tar (reference name VERSION) and DIR/image.env
# (VERSION, REVISION, IMAGE, ARCHIVE, sizes) for scripts/release.sh and
# tests/image. VERSION is what the binary's `wasd version --short` says (the
# VERSION file of the source tree) and is the image tag.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$root/build-image/cmake
out=$root/build-image
repository=""
context_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --repository) repository=$2; shift 2 ;;
    --context-only) context_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# 1. The binary: the same objects as a normal build, linked static-pie.
t0=$(now)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
fi
# The linker's notes about getaddrinfo/dlopen in static programs are
# expected (SECURITY.md "The container image and static glibc"); everything
# else is shown.
cmake --build "$build_dir" --target wasd-fully-static -j"$(nproc)" 2>&1 |
  grep -v -e "in statically linked applications requires at runtime" \
    -e "): in function \`" || true
bin=$build_dir/wasd-fully-static
[ -x "$bin" ] || { echo "image.sh: $bin was not built" >&2; exit 1; }
if readelf -lW "$bin" | grep -q INTERP || readelf -dW "$bin" | grep -q NEEDED; then
  echo "image.sh: $bin is not fully static (it has a loader or shared libraries)" >&2
  exit 1
fi
version=$("$bin" version --short)
revision=$("$bin" version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin).get("revision", "unknown"))')
echo "image.sh: wasd $version (revision $revision) built in $(elapsed "$t0")"

# 2. The context: the stripped binary and the /etc files of image/etc.
ctx=$out/context
rm -rf "$ctx"
mkdir -p "$ctx/etc"
cp "$root"/image/etc/passwd "$root"/image/etc/group "$root"/image/etc/nsswitch.conf "$ctx/etc/"
strip --strip-all -o "$ctx/wasd" "$bin"
chmod 0755 "$ctx/wasd"
chmod 0644 "$ctx"/etc/*
if [ "$context_only" = 1 ]; then
  echo "image.sh: context in $ctx; build it with:"
  echo "  docker build -f $root/Dockerfile --build-arg VERSION=$version --build-arg REVISION=$revision $ctx"
  exit 0
fi

# 3. The image, then the OCI archive.
if [ -z "$repository" ]; then
  repository=localhost/wasd
fi
command -v buildah >/dev/null || { echo "image.sh: buildah is not installed (scripts/setup.sh)" >&2; exit 1; }
# Layer and config timestamps from the commit, so a rebuild of the same
# commit gives the same image (SOURCE_DATE_EPOCH wins when set).
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
store=$(mktemp -d "$out/buildah.XXXXXX")
trap 'rm -rf "$store"' EXIT
bah=(buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs)
image=$repository:$version
archive=$out/wasd-$version.oci.tar
t0=$(now)
"${bah[@]}" bud --quiet --isolation chroot --pull=never --format oci --timestamp "$epoch" \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" \
  -f "$root/Dockerfile" -t "$image" "$ctx" >/dev/null
# Through an OCI layout directory, tarred here: buildah's own oci-archive
# stamps the tar entries with the clock, so the same image would give a
# different archive (and SHA256SUMS) each time.
"${bah[@]}" push --quiet "$image" "oci:$store/layout:$version"
rm -f "$archive"
tar -C "$store/layout" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
  -cf "$archive" oci-layout index.json blobs
echo "image.sh: $image built in $(elapsed "$t0")"

# 4. Sizes: what a node stores unpacked, and what it downloads.
rootfs_bytes=$(du -sb --apparent-size "$ctx" | awk '{ print $1 }')
archive_bytes=$(stat -c %s "$archive")
cat >"$out/image.env" <<EOF
VERSION=$version
REVISION=$revision
IMAGE=$image
ARCHIVE=$archive
ROOTFS_BYTES=$rootfs_bytes
ARCHIVE_BYTES=$archive_bytes
EOF
awk -v r="$rootfs_bytes" -v a="$archive_bytes" -v f="$archive" 'BEGIN {
  printf "image.sh: %s: %.1f MB uncompressed, %.1f MB compressed\n", f, r / 1e6, a / 1e6 }'
