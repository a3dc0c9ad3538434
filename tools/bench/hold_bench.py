#!/usr/bin/env python3
"""Who holds a pod, measured (issue 32, docs/design.md Q23): the gate hold and the
scheduler hold side by side, one gang at a time, `wasd reconciler` against the in-memory
bench API server (build/wasd-bench-apiserver; `--pod-hold gate` creates each pod with the
gate wasd.io/pod-group, `--pod-hold scheduler` without it, as the webhook leaves them).

Per mode and gang size (default 8, 64, 256 pods, one Deployment each, native backend):

  schedulable_seconds   from the gang's last pod created to every member schedulable:
                        gate: its last gate lifted; scheduler: its group objects exist
                        (0 when they existed before the last pod), server-side clocks
  writes                the reconciler's writes for the gang, Events included
                        (User-Agent wasd, counted by the server), by verb and resource
  requests              every request of the reconciler in that window

The reconciler runs with its defaults (--kube-api-qps 20, --kube-api-burst 30) and
--gang-status=false (the doctor's condition waits --gang-status-delay and would fall in
or out of the window by chance), once with --normal-events=false (the default) and
once with --normal-events=true.

    python3 tools/bench/hold_bench.py [--sizes 8,64,256] [--modes gate,scheduler]
                                      [--normal-events false,true] [--json]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_bench as sb  # noqa: E402  (the sibling driver: server, /proc and metric helpers)


def Run(server_bin, wasd, mode, normal_events, sizes, qps, timeout, fixture):
    tmp = tempfile.mkdtemp(prefix="wasd-hold-")
    procs = []
    out = []
    try:
        ready = os.path.join(tmp, "ready")
        srv_proc = subprocess.Popen([server_bin, "--port", "0", "--ready-file", ready,
                                     "--pod-fixture", fixture, "--pod-hold", mode],
                                    stdout=open(os.path.join(tmp, "apiserver.log"), "w"),
                                    stderr=subprocess.STDOUT)
        procs.append(srv_proc)
        for _ in range(200):  # 10 s at most
            if os.path.exists(ready) or srv_proc.poll() is not None:
                break
            time.sleep(0.05)
        port = json.load(open(ready))["port"]
        srv = sb.Server(f"http://127.0.0.1:{port}")
        kubeconfig = os.path.join(tmp, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: bench, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: bench, user: {{token: bench}}}}]
contexts: [{{name: bench, context: {{cluster: bench, user: bench, namespace: {sb.NS}}}}}]
current-context: bench
""")
        metrics_port = sb.FreePort()
        cmd = [wasd, "reconciler", "--kubeconfig", kubeconfig, "--leader-elect=false",
               "--health-probe-bind-address", "0", "--gang-status=false",
               f"--normal-events={normal_events}",
               # plain: the test API server has no TokenReview
               "--metrics-bind-address", f"127.0.0.1:{metrics_port}", "--metrics-secure=false"]
        if qps is not None:
            cmd += ["--kube-api-qps", str(qps)]
        rec = subprocess.Popen(cmd, stdout=open(os.path.join(tmp, "reconciler.log"), "w"),
                               stderr=subprocess.STDOUT)
        procs.append(rec)
        for _ in range(600):  # 60 s at most
            if sb.Metric(metrics_port, "wasd_reconciler_scheduling_api_served") == 1:
                break
            time.sleep(0.1)
        time.sleep(1)
        for i, size in enumerate(sizes):
            # Let the client-side token bucket refill between gangs (30 at 20/s).
            time.sleep(2)
            before = srv.stats()
            srv.call("POST", "/debug/apply", [sb.Deployment(i, size)])
            deadline = time.monotonic() + timeout
            while True:
                s = srv.stats()
                if sb.Converged(s) and s["pods"] == before["pods"] + size:
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"{mode} {size}: not converged after {timeout} s: {s}")
                time.sleep(0.01)
            time.sleep(1)  # anything the reconciler still sends for this gang
            after = srv.stats()
            if mode == "gate":
                ready_at = after["lastGateLifted"]
            else:
                ready_at = max(after["lastPodGroupWrite"], after["lastWorkloadWrite"])
            by_verb = sb.Diff(after, before)
            writes = sb.Writes(by_verb)
            r = {"mode": mode, "normal_events": normal_events, "pods": size,
                 "schedulable_seconds": round(max(0.0, ready_at - after["lastPodCreated"]), 3),
                 "writes": sum(writes.values()), "writes_by_verb": writes,
                 "requests": sum(by_verb.values())}
            print(json.dumps(r), file=sys.stderr, flush=True)
            out.append(r)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if not os.environ.get("WASD_KEEP_TEST_DIRS"):
            subprocess.run(["rm", "-rf", tmp])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="8,64,256", help="gang sizes, one Deployment each")
    ap.add_argument("--modes", default="gate,scheduler")
    ap.add_argument("--normal-events", default="false,true", help="the reconciler's --normal-events")
    ap.add_argument("--qps", type=float, default=None, help="--kube-api-qps (default: the binary's, 20)")
    ap.add_argument("--timeout", type=float, default=300, help="give up a gang after this long")
    ap.add_argument("--fixture", default=os.path.join(sb.ROOT, "tests", "testdata", "bench",
                                                      "pod-15k.json"))
    ap.add_argument("--json", action="store_true", help="one JSON line of results at the end")
    args = ap.parse_args()
    wasd = os.environ.get("WASD_BIN", os.path.join(sb.ROOT, "build", "wasd"))
    server_bin = os.environ.get("WASD_BENCH_APISERVER",
                                os.path.join(os.path.dirname(wasd), "wasd-bench-apiserver"))
    sizes = [int(x) for x in args.sizes.split(",")]
    results = []
    for normal_events in args.normal_events.split(","):
        for mode in args.modes.split(","):
            results += Run(server_bin, wasd, mode, normal_events, sizes, args.qps, args.timeout,
                           args.fixture)
    if args.json:
        print(json.dumps(results))
    else:
        print(f"{'mode':<10} {'normal events':<14} {'pods':>5} {'schedulable s':>14} "
              f"{'writes':>7} {'requests':>9}")
        for r in results:
            print(f"{r['mode']:<10} {r['normal_events']:<14} {r['pods']:>5} "
                  f"{r['schedulable_seconds']:>14} {r['writes']:>7} {r['requests']:>9}")


if __name__ == "__main__":
    main()
