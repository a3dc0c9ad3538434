#!/usr/bin/env bash
# Builds the real control plane's components from their Go modules
# (tests/cluster/go.mod: k8s.io/kubernetes v1.37.2 with every staging module
# at v0.37.2, etcd v3.7.0, helm v4.3.2) plus the node agent
# (tests/cluster/nodeagent), in one `go build`, into a cache outside the
# clone keyed by tests/cluster/go.sum, the agent's sources and the Go
# version. A second run, or CI in a fresh clone on the same machine, finds
# the binaries and returns at once. Prints the bin directory on stdout.
#
#   WASD_CACHE   cache root (default /var/cache/wasd): components/<key>/bin,
#                and GOCACHE, GOMODCACHE under it
# Binaries: etcd kube-apiserver kube-controller-manager kube-scheduler
#           kubectl helm nodeagent
#
#   scripts/components.sh TOOL   builds one tool module instead, into
#                                components/TOOL-<key>/bin (key: its go.mod,
#                                go.sum and the Go version), same cache:
#     krew   tests/tools/krew (sigs.k8s.io/krew v0.4.3): kubectl-krew and
#            validate-krew-manifest. A module of its own: krew's
#            k8s.io/apimachinery v0.21 cannot live beside tests/cluster's
#            replace block pinning every k8s.io module at v0.37.2.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mod=$root/tests/cluster
cache=${WASD_CACHE:-/var/cache/wasd}
tool_module=${1:-}
command -v go >/dev/null || PATH=/usr/local/go/bin:$PATH
command -v go >/dev/null || { echo "components.sh: go is not on PATH" >&2; exit 1; }
# k8s.io/kubernetes v1.37.2 and etcd v3.7 need Go 1.26 (GOTOOLCHAIN=local:
# no toolchain download).
case $(go env GOVERSION) in
  go1.2[6-9]*|go1.[3-9][0-9]*) ;;
  *) echo "components.sh: $(go env GOVERSION) on PATH; Go 1.26 or newer is needed" >&2; exit 1 ;;
esac
export GOCACHE=$cache/gocache GOMODCACHE=$cache/gomod GOFLAGS=-mod=readonly GOTOOLCHAIN=local

# One tool module: its `tool` directives are the packages; each binary is
# named after its package, except where a plugin needs kubectl's name.
# Prints the bin directory.
build_tool_module() {
  local name=$1 tmod=$root/tests/tools/$1 ldflags=$2
  shift 2
  local -a want=("$@")
  [ -f "$tmod/go.mod" ] || { echo "components.sh: no module tests/tools/$name" >&2; exit 2; }
  local key tdir tbin t ok
  key=$( { cat "$tmod/go.mod" "$tmod/go.sum"; go version; echo "$ldflags"; } | sha256sum | cut -c1-16)
  tdir=$cache/components/$name-$key
  tbin=$tdir/bin
  ok=1
  for t in "${want[@]}"; do [ -x "$tbin/$t" ] || ok=0; done
  if [ "$ok" = 0 ]; then
    mkdir -p "$tdir"
    exec 9>"$tdir/.lock"
    flock 9
    ok=1
    for t in "${want[@]}"; do [ -x "$tbin/$t" ] || ok=0; done
  fi
  if [ "$ok" = 0 ]; then
    local t0=$SECONDS tmp
    tmp=$(mktemp -d "$tdir/build.XXXXXX")
    echo "components.sh: building $name into $tbin" >&2
    # the pattern `tool`: every tool directive of the module
    (cd "$tmod" && nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$tmp/" tool) >&2
    case $name in
      krew) mv "$tmp/krew" "$tmp/kubectl-krew" ;;  # krew runs as a kubectl plugin
    esac
    rm -rf "$tbin"
    mv "$tmp" "$tbin"
    # keep the two newest builds of this tool
    ls -1dt "$cache/components/$name"-*/ 2>/dev/null | tail -n +3 | xargs -r rm -rf
    echo "components.sh: $name built in $((SECONDS - t0)) s ($(du -sh "$tbin" | cut -f1) of binaries)" >&2
  fi
  echo "$tbin"
}

case $tool_module in
  "") ;;
  # krew's version stays unstamped on purpose: a build without a semver tag
  # is a development build to krew, which then never makes its random
  # "newer krew released?" call to GitHub (cmd/krew/cmd/root.go).
  krew) build_tool_module krew "-s -w" kubectl-krew validate-krew-manifest; exit 0 ;;
  *) echo "components.sh: unknown tool module $tool_module (known: krew)" >&2; exit 2 ;;
esac
# Versions the binaries report (a module build stamps none): the API
# server's /version is what `helm install` checks kubeVersion against.
kv=v1.37.2
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$kv -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean"
done
ldflags+=" -X helm.sh/helm/v4/internal/version.version=v4.3.2"
key=$( { cat "$mod/go.mod" "$mod/go.sum"; go version; echo "$ldflags"; cat "$mod"/nodeagent/*.go; } |
  sha256sum | cut -c1-16)
dir=$cache/components/$key
bin=$dir/bin
tools=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl helm nodeagent)
complete=1
for t in "${tools[@]}"; do [ -x "$bin/$t" ] || complete=0; done
if [ "$complete" = 1 ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9  # one build at a time per key (ctest -j, two clones)
complete=1
for t in "${tools[@]}"; do [ -x "$bin/$t" ] || complete=0; done
if [ "$complete" = 0 ]; then
  t0=$SECONDS
  tmp=$(mktemp -d "$dir/build.XXXXXX")
  echo "components.sh: building the control plane into $bin (cold: ~20 min on 2 cores)" >&2
  (cd "$mod" && nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
    go.etcd.io/etcd/server/v3 helm.sh/helm/v4/cmd/helm ./nodeagent) >&2
  # The etcd server module's root package is main; go names it after the
  # module's last element before /v3.
  mv "$tmp/server" "$tmp/etcd"
  rm -rf "$bin"
  mv "$tmp" "$bin"
  # keep the three newest keys (each ~0.5 GB); the tool modules'
  # directories (NAME-<key>) are pruned by their own builds
  ls -1dt "$cache"/components/*/ 2>/dev/null | grep -E '/[0-9a-f]{16}/$' | tail -n +4 |
    xargs -r rm -rf
  echo "components.sh: built in $((SECONDS - t0)) s ($(du -sh "$bin" | cut -f1) of binaries)" >&2
fi
echo "$bin"
