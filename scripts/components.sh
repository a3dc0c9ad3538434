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
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mod=$root/tests/cluster
cache=${WASD_CACHE:-/var/cache/wasd}
command -v go >/dev/null || PATH=/usr/local/go/bin:$PATH
command -v go >/dev/null || { echo "components.sh: go is not on PATH" >&2; exit 1; }
# k8s.io/kubernetes v1.37.2 and etcd v3.7 need Go 1.26 (GOTOOLCHAIN=local:
# no toolchain download).
case $(go env GOVERSION) in
  go1.2[6-9]*|go1.[3-9][0-9]*) ;;
  *) echo "components.sh: $(go env GOVERSION) on PATH; Go 1.26 or newer is needed" >&2; exit 1 ;;
esac
export GOCACHE=$cache/gocache GOMODCACHE=$cache/gomod GOFLAGS=-mod=readonly GOTOOLCHAIN=local
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
  # keep the three newest keys (each ~0.5 GB)
  ls -1dt "$cache"/components/*/ 2>/dev/null | tail -n +4 | xargs -r rm -rf
  echo "components.sh: built in $((SECONDS - t0)) s ($(du -sh "$bin" | cut -f1) of binaries)" >&2
fi
echo "$bin"
