#!/usr/bin/env bash
# The README's first command: wasd on the real control plane.
#   1. installs what is missing (scripts/setup.sh), builds build/wasd, builds
#      or reuses the Kubernetes v1.37.2 components (scripts/components.sh);
#   2. starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler
#      and the node agent on 127.0.0.1 (scripts/cluster.sh up) and installs
#      the chart package a release ships (scripts/package-chart.sh:
#      wasd-VERSION.tgz, whose default image tag is this binary's version)
#      with helm, as a user installs it (its hooks, certificates and webhook
#      for real);
#   3. applies a bad Deployment (kubectl prints the webhook's denial), then a
#      gang: the real kube-scheduler binds its pods (printed with their
#      nodes), and `kubectl wasd explain` (wasd as the kubectl plugin
#      kubectl-wasd, on PATH from a temporary directory) explains it;
#   4. stops every process (scripts/cluster.sh down) unless --keep.
#
# Usage: scripts/demo.sh [--keep]   --keep: the cluster stays up; the script
#                                   prints how to use it and stop it
#        scripts/demo.sh --local [--keep]   no cluster: `wasd webhook` on
#           127.0.0.1 and real AdmissionReview requests built from examples/,
#           allowed or DENIED per example (--keep: the webhook stays in the
#           foreground; Ctrl-C stops it)
# Environment: WASD_BIN (skip the build, use this binary), WASD_CLUSTER_DIR
# (default: a new temporary directory), WASD_DEMO_PORT (--local: 9443).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep=0
mode=cluster
for a in "$@"; do
  case $a in
    --keep) keep=1 ;;
    --local) mode=local ;;
    *) echo "usage: scripts/demo.sh [--local] [--keep]" >&2; exit 2 ;;
  esac
done

"$root/scripts/setup.sh"
if [ -n "${WASD_BIN:-}" ]; then
  wasd=$WASD_BIN
else
  # The binary only: the tests are the second command's job.
  WASD_BUILD_TARGET=wasd "$root/scripts/build.sh" "$root/build"
  wasd="$root/build/wasd"
fi

demo_cluster() {
  local bin version image
  echo "== the Kubernetes v1.37.2 components (scripts/components.sh; the first run builds them)"
  bin=$("$root/scripts/components.sh")
  given=${WASD_CLUSTER_DIR:-}
  dir=${WASD_CLUSTER_DIR:-$(mktemp -d /tmp/wasd-demo-XXXXXX)}
  export WASD_CLUSTER_DIR=$dir WASD_BIN=$wasd KUBECONFIG=$dir/admin.kubeconfig
  plugins=$(mktemp -d)
  ln -s "$wasd" "$plugins/kubectl-wasd"
  export PATH=$plugins:$bin:$PATH
  finish() {
    rm -rf "$plugins"
    if [ "$keep" = 1 ]; then
      echo
      echo "The cluster keeps running in $dir:"
      echo "  eval \"\$(WASD_CLUSTER_DIR=$dir scripts/cluster.sh env)\"; kubectl get pods -A -o wide"
      echo "  WASD_CLUSTER_DIR=$dir scripts/cluster.sh down   # stops every process"
    else
      echo "== scripts/cluster.sh down"
      "$root/scripts/cluster.sh" down
      [ -n "$given" ] || rm -rf "$dir"
    fi
  }
  trap finish EXIT
  trap 'exit 130' INT TERM
  echo "== scripts/cluster.sh up (state in $dir)"
  "$root/scripts/cluster.sh" up
  version=$("$wasd" version --short)
  pkg=$("$root/scripts/package-chart.sh" --version "$version" --out "$dir")
  echo "== helm install wasd $(basename "$pkg") (the release's chart package; image tag $version)"
  kubectl create namespace wasd-system >/dev/null
  # The image name the node agent runs the wasd binary for (cluster.env): on
  # a user's cluster, the registry the image was pushed to.
  image=$(sed -n 's/^WASD_IMAGE=//p' "$dir/cluster.env")
  helm install wasd "$pkg" -n wasd-system --set image.repository="$image" --timeout 5m
  kubectl rollout status deployment/wasd-webhook -n wasd-system --timeout=180s
  kubectl rollout status deployment/wasd-reconciler -n wasd-system --timeout=180s
  echo
  echo "== kubectl apply -f examples/bad-h2-gang-rollingupdate.yaml (a gang with RollingUpdate)"
  if kubectl apply -f "$root/examples/bad-h2-gang-rollingupdate.yaml" 2>&1; then
    echo "demo.sh: the bad Deployment was admitted" >&2
    exit 1
  fi
  echo
  echo "== kubectl apply -f examples/kep-2-user-mincount.yaml (a gang of 4, minCount 3)"
  kubectl apply -f "$root/examples/kep-2-user-mincount.yaml"
  local i n=0
  for i in $(seq 1 120); do
    n=$(kubectl get pods -l app=prefill-workers -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
      grep -c . || true)
    [ "$n" -ge 4 ] && break
    sleep 1
  done
  [ "$n" -ge 4 ] || { echo "demo.sh: only $n of 4 pods bound after 120 s" >&2; exit 1; }
  echo "== the gang's pods, bound by kube-scheduler"
  kubectl get pods -l app=prefill-workers \
    -o custom-columns=POD:.metadata.name,NODE:.spec.nodeName,PODGROUP:.spec.schedulingGroup.podGroupName,PHASE:.status.phase
  kubectl get workloads.scheduling.k8s.io,podgroups.scheduling.k8s.io
  echo
  echo "== kubectl wasd explain deployment/prefill-workers"
  kubectl wasd explain deployment/prefill-workers
}

demo_local() {
  work=$(mktemp -d)
  pid=""
  cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
  }
  trap cleanup EXIT INT TERM

  port=${WASD_DEMO_PORT:-9443}
  # Its log line goes to a file: the demo's output is the verdicts.
  "$wasd" certs generate --service wasd-webhook --namespace wasd-system --out-dir "$work/certs" \
    --extra-san 127.0.0.1 --extra-san localhost >/dev/null 2>"$work/certs.log" ||
    { cat "$work/certs.log"; exit 1; }
  "$wasd" webhook --tls-cert-file "$work/certs/tls.crt" --tls-key-file "$work/certs/tls.key" \
    --bind-address 127.0.0.1 --port "$port" \
    --health-probe-bind-address "127.0.0.1:$((port + 1))" \
    --metrics-bind-address "127.0.0.1:$((port + 2))" 2>"$work/webhook.log" &
  pid=$!
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$((port + 1))/readyz" >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/webhook.log"; exit 1; }
    sleep 0.1
  done
  echo "wasd webhook is listening on https://127.0.0.1:$port (pid $pid)"
  echo

  for f in "$root"/examples/*.yaml; do
    python3 "$root/scripts/make_review.py" "$f" >"$work/review.json"
    curl -s --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
      --data-binary @"$work/review.json" \
      "https://127.0.0.1:$port/validate-apps-v1-deployment?timeout=10s" >"$work/answer.json"
    python3 - "$f" "$work/answer.json" <<'PY'
import json, os, sys
name, answer = os.path.basename(sys.argv[1]), json.load(open(sys.argv[2]))
resp = answer["response"]
if resp["allowed"]:
    print(f"{name}: allowed")
    for w in resp.get("warnings", []):
        print(f"    Warning: {w}")
else:
    # What kubectl prints for this answer: with causes, "The <Kind> "<name>" is
    # invalid: " and the field errors (a "* " list when there are several).
    st = resp["status"]
    d = st.get("details") or {}
    causes = d.get("causes") or []
    if causes:
        errs = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
        text = f'The {d.get("kind", "Deployment")} "{d.get("name", "")}" is invalid: ' + (
            errs[0] if len(errs) == 1 else "\n" + "\n".join("* " + e for e in errs))
    else:
        text = st["message"]
    print(f"{name}: DENIED ({st['code']} {st['reason']})")
    for line in text.splitlines():
        print(f"    {line}")
PY
  done
  echo
  echo "metrics: $(curl -s "http://127.0.0.1:$((port + 2))/metrics" | grep -c '^wasd_') wasd_* series at http://127.0.0.1:$((port + 2))/metrics"
  if [ "$keep" = 1 ]; then
    echo "webhook keeps running; CA at $work/certs/ca.crt; Ctrl-C to stop"
    wait "$pid"
  fi
}

if [ "$mode" = local ]; then demo_local; else demo_cluster; fi
