#!/usr/bin/env bash
# The reconciler at scale (issue 18): prints the tables of tools/bench/RESULTS.md
# "The reconciler at scale" — the bench API server's own rate on one core
# (wrk), then tools/bench/scale_bench.py at the client-side rates below.
#
#   tools/bench/scale.sh                      # 10,000 Deployments x 10 pods, QPS 200 and unlimited
#   N=1000 QPS_LIST="200 0" tools/bench/scale.sh
#
# Knobs: BUILD_DIR (default build), N (10000), REPLICAS (10), QPS_LIST
# ("200 0"; 0 = no client-side limit), BURST (300), WORKERS (4), RESYNC (60),
# SERVER_CPU (1) and RECONCILER_CPU (0): the cores each process is pinned to.
# Needs wrk. Nothing is asserted; figures only.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
N=${N:-10000}
REPLICAS=${REPLICAS:-10}
QPS_LIST=${QPS_LIST:-"200 0"}
BURST=${BURST:-300}
WORKERS=${WORKERS:-4}
RESYNC=${RESYNC:-60}
SERVER_CPU=${SERVER_CPU:-1}
RECONCILER_CPU=${RECONCILER_CPU:-0}
server_bin=$build/wasd-bench-apiserver
for b in "$server_bin" "$build/wasd"; do
  [[ -x $b ]] || { echo "scale.sh: $b not built (cmake --build $build --target wasd wasd-bench-apiserver)" >&2; exit 2; }
done
work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

echo "## The bench API server on one core (taskset -c $SERVER_CPU; wrk -t1 -c16 -d5s on the other core)"
taskset -c "$SERVER_CPU" "$server_bin" --port 0 --ready-file "$work/ready" \
  --pod-fixture "$root/tests/testdata/bench/pod-15k.json" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do [[ -s $work/ready ]] && break; sleep 0.05; done
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$work/ready")
url=http://127.0.0.1:$port
python3 - "$url" <<'PY'
import json, sys, urllib.request
deps = [{"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": f"w{i}", "namespace": "bench", "labels": {"wasd.io/managed": "true"}},
         "spec": {"replicas": 10, "selector": {"matchLabels": {"app": f"w{i}"}},
                  "template": {"metadata": {"labels": {"app": f"w{i}", "wasd.io/managed": "true"}},
                               "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
        for i in range(100)]
req = urllib.request.Request(sys.argv[1] + "/debug/apply", data=json.dumps(deps).encode(),
                             method="POST", headers={"Content-Type": "application/json"})
urllib.request.urlopen(req).read()
PY
sleep 1
pod=$(curl -s "$url/api/v1/namespaces/bench/pods?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["metadata"]["name"])')
cat >"$work/patch.lua" <<'LUA'
wrk.method = "PATCH"
wrk.headers["Content-Type"] = "application/merge-patch+json"
wrk.body = '{"metadata":{"annotations":{"bench":"1"}}}'
LUA
printf '| request | req/s | p50 | p99 |\n|---|---:|---:|---:|\n'
run_wrk() {  # label, path, [lua]
  local out
  out=$(taskset -c "$RECONCILER_CPU" wrk -t1 -c16 -d5s --latency ${3:+-s "$3"} "$url$2" 2>&1)
  printf '| %s | %s | %s | %s |\n' "$1" \
    "$(awk '/Requests\/sec/ {printf "%d", $2}' <<<"$out")" \
    "$(awk '$1 == "50%" {print $2}' <<<"$out")" "$(awk '$1 == "99%" {print $2}' <<<"$out")"
}
run_wrk "GET a Deployment (0.5 KB)" /apis/apps/v1/namespaces/bench/deployments/w1
run_wrk "GET a pod (15 KB)" "/api/v1/namespaces/bench/pods/$pod"
run_wrk "merge PATCH a Deployment (stored, watched)" /apis/apps/v1/namespaces/bench/deployments/w2 "$work/patch.lua"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=

echo
echo "## $N Deployments x $REPLICAS replicas (reconciler on CPU $RECONCILER_CPU, server on CPU $SERVER_CPU, --workers $WORKERS, --resync-period ${RESYNC}s)"
for qps in $QPS_LIST; do
  WASD_BIN=$build/wasd python3 "$root/bench/scale_bench.py" --n "$N" --replicas "$REPLICAS" \
    --qps "$qps" --burst "$BURST" --workers "$WORKERS" --resync "$RESYNC" \
    --server-cpu "$SERVER_CPU" --reconciler-cpu "$RECONCILER_CPU" --json >"$work/qps-$qps.json"
done
python3 - "$work" $QPS_LIST <<'PY'
import json, os, sys
work, runs = sys.argv[1], sys.argv[2:]
MiB = 1024 * 1024
print("| --kube-api-qps | phase | seconds | reconciler requests | req/s | writes | reconciler CPU s | RSS MiB |")
print("|---|---|---:|---:|---:|---|---:|---:|")
for qps in runs:
    r = json.load(open(os.path.join(work, f"qps-{qps}.json")))
    for name, p in r["phases"].items():
        writes = ", ".join(f"{k} {v}" for k, v in sorted(p["writes"].items())) or "none"
        print(f"| {qps if qps != '0' else 'no limit'} | {name} | {p['seconds']} | {p['requests']} | "
              f"{p['requests_per_second']} | {writes} | {p['reconciler_cpu_seconds']} | "
              f"{p['rss_bytes'] / MiB:.1f} |")
    print(f"| | peak RSS {r['peak_rss_bytes'] / MiB:.1f} MiB; idle {r['idle_rss_bytes'] / MiB:.1f} MiB; "
          f"(RSS after create - idle) / pods = {r.get('bytes_per_pod_upper_bound', 0)} bytes; "
          f"bench server CPU {r['server_cpu_seconds']} s, peak RSS {r['server_peak_rss_bytes'] / MiB:.0f} MiB | | | | | | |")
PY
