#!/usr/bin/env python3
"""The reconciler at scale (issue 18): `wasd reconciler` against the in-memory
bench API server (build/wasd-bench-apiserver, tools/bench/apiserver/main.cc), whose
ReplicaSet controller creates each pod as the pod webhook leaves it (gated,
naming its PodGroup) padded to a realistic 15 KB pod with managedFields
(tests/testdata/bench/pod-15k.json).

Phases, each until converged (every pod ungated, one Workload per Deployment,
one PodGroup per ReplicaSet with replicas > 0, no other PodGroup):

  create    N Deployments x R replicas created at once
  resync    nothing changes; one full --resync-period passes (goal: 0 writes)
  rollout   a new image on 10 % of the Deployments (new ReplicaSets)
  zero      10 % other Deployments scaled to 0

Per phase: seconds to converge, the reconciler's requests (User-Agent wasd,
counted by the server) and writes by kind, requests per second, reconciler CPU
seconds (utime+stime), its RSS. No assertion here: tests/bench/test_scale_quick.py
asserts the writes and the memory bound on a small run.

    python3 tools/bench/scale_bench.py [--n 10000] [--replicas 10] [--qps 200] [--burst 300]
                                 [--workers 4] [--json] [--server-cpu 1] [--reconciler-cpu 0]
                                 [--pod-hold gate|scheduler] [--normal-events false|true]
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the checkout (this file is tools/bench/)
NS = "bench"
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


def FreePort():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """/proc figures of one process."""

    def __init__(self, pid):
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def cpu(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick

    def mem(self, key):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        return 0


class Server:
    def __init__(self, url):
        self.url = url

    def call(self, method, path, body=None, timeout=600):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "User-Agent": "bench-driver"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())

    def stats(self):
        return self.call("GET", "/debug/stats")


def Deployment(i, replicas, image="registry.example.com/inference/vllm:v0.6.3"):
    name = f"d{i:05d}"
    labels = {"app": name, "wasd.io/managed": "true"}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS, "labels": {"wasd.io/managed": "true"},
                     "annotations": {"wasd.io/scheduling": json.dumps(
                         {"schedulingPolicy": {"gang": {}}})}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "strategy": {"type": "Recreate"},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "server", "image": image}]}}},
    }


def Converged(s):
    # replicasetsWithoutGroup: in scheduler hold no gated pod marks a ReplicaSet whose
    # PodGroup is still to come (a rollout keeps the count of PodGroups equal throughout).
    return (s["controllerQueue"] == 0 and s["pods"] == s["podsWanted"] and s["podsGated"] == 0
            and s["workloads"] == s["deployments"] and s["podgroups"] == s["replicasetsActive"]
            and s.get("replicasetsWithoutGroup", 0) == 0)


def Metric(port, name):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
    except OSError:
        return None
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name):
            total += float(line.rsplit(" ", 1)[1])
    return total


def Diff(after, before):
    out = {}
    for k, v in after["wasdByVerb"].items():
        d = v - before["wasdByVerb"].get(k, 0)
        if d:
            out[k] = d
    return out


def Writes(by_verb):
    return {k: v for k, v in by_verb.items() if k.split()[0] in WRITE_VERBS}


def Refused(by_verb):
    """The writes the server refused ("PATCH pods (failed 422)": count): a
    write the reconciler should not have sent (a plan from a stale cache)."""
    return {k: v for k, v in Writes(by_verb).items() if "(failed" in k}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000, help="Deployments (default 10000)")
    ap.add_argument("--replicas", type=int, default=10)
    ap.add_argument("--qps", type=float, default=200, help="--kube-api-qps (0: no client limit)")
    ap.add_argument("--burst", type=int, default=300, help="--kube-api-burst")
    ap.add_argument("--workers", type=int, default=4, help="reconciler --workers")
    ap.add_argument("--resync", type=int, default=60, help="--resync-period in seconds")
    ap.add_argument("--timeout", type=float, default=3600, help="give up a phase after this long")
    ap.add_argument("--phases", default="create,resync,rollout,zero")
    ap.add_argument("--server-cpu", default="", help="taskset CPU list for the bench API server")
    ap.add_argument("--reconciler-cpu", default="", help="taskset CPU list for the reconciler")
    ap.add_argument("--fixture", default=os.path.join(ROOT, "tests", "testdata", "bench", "pod-15k.json"))
    ap.add_argument("--json", action="store_true", help="print one JSON line of results at the end")
    ap.add_argument("--gang-status", choices=("true", "false"), default="true",
                    help="the reconciler's --gang-status (the gang doctor's condition, Events, metrics)")
    ap.add_argument("--pod-hold", choices=("gate", "scheduler"), default="gate",
                    help="pods created with the gate wasd.io/pod-group (gate) or without it "
                         "(scheduler: the webhook's scheduler hold, docs/design.md Q23)")
    ap.add_argument("--normal-events", choices=("true", "false"), default="false",
                    help="the reconciler's --normal-events (Normal Events posted too)")
    ap.add_argument("--nodes", type=int, default=0,
                    help="Nodes to create first (8 CPU, 8 GPUs, 10 zones), read by the gang doctor's "
                         "fit preview; without --bind-pods the bench server binds no pod, so every gang "
                         "stays pending")
    ap.add_argument("--bind-pods", action="store_true",
                    help="the bench server binds each pod, Running on one of the --nodes nodes, once "
                         "its PodGroup exists (a scheduler that holds; placed gangs whose doctor "
                         "condition is Scheduled; the doctor's bound-pod informer caches them all)")
    ap.add_argument("--unschedulable-every", type=int, default=0,
                    help="one ReplicaSet in K gets unbound pods with the scheduler's Unschedulable "
                         "verdict, which starts the doctor's fit preview (Node and bound-pod "
                         "informers); 0: none")
    args = ap.parse_args()
    if args.bind_pods and args.nodes <= 0:
        ap.error("--bind-pods needs --nodes N")

    wasd = os.environ.get("WASD_BIN", os.path.join(ROOT, "build", "wasd"))
    server_bin = os.environ.get("WASD_BENCH_APISERVER",
                                os.path.join(os.path.dirname(wasd), "wasd-bench-apiserver"))
    tmp = tempfile.mkdtemp(prefix="wasd-scale-")
    procs = []

    def Start(cmd, cpu, log):
        if cpu:
            cmd = ["taskset", "-c", cpu] + cmd
        p = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        procs.append(p)
        return p

    results = {"n": args.n, "replicas": args.replicas, "qps": args.qps, "burst": args.burst,
               "workers": args.workers, "gang_status": args.gang_status, "nodes": args.nodes,
               "pod_hold": args.pod_hold, "normal_events": args.normal_events,
               "bind_pods": args.bind_pods, "unschedulable_every": args.unschedulable_every,
               "phases": {}}
    try:
        ready = os.path.join(tmp, "ready")
        srv_proc = Start([server_bin, "--port", "0", "--ready-file", ready, "--pod-fixture",
                          args.fixture, "--pod-hold", args.pod_hold,
                          "--bind-pods", str(args.nodes if args.bind_pods else 0),
                          "--unschedulable-every", str(args.unschedulable_every)], args.server_cpu,
                         os.path.join(tmp, "apiserver.log"))
        for _ in range(200):
            if os.path.exists(ready) or srv_proc.poll() is not None:
                break
            time.sleep(0.05)
        port = json.load(open(ready))["port"]
        srv = Server(f"http://127.0.0.1:{port}")
        kubeconfig = os.path.join(tmp, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: bench, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: bench, user: {{token: bench}}}}]
contexts: [{{name: bench, context: {{cluster: bench, user: bench, namespace: {NS}}}}}]
current-context: bench
""")
        for i in range(args.nodes):
            srv.call("POST", "/api/v1/nodes", {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": f"node-{i}", "labels": {"topology.kubernetes.io/zone": f"z{i % 10}"}},
                "status": {"allocatable": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8",
                                           "pods": "110"}}})
        metrics_port = FreePort()
        rec = Start([wasd, "reconciler", "--kubeconfig", kubeconfig, "--leader-elect=false",
                     "--workers", str(args.workers), "--resync-period", f"{args.resync}s",
                     "--kube-api-qps", str(args.qps), "--kube-api-burst", str(args.burst),
                     "--health-probe-bind-address", "0", f"--gang-status={args.gang_status}",
                     f"--normal-events={args.normal_events}",
                     # plain: the test API server has no TokenReview
                     "--metrics-bind-address", f"127.0.0.1:{metrics_port}", "--metrics-secure=false"],
                    args.reconciler_cpu, os.path.join(tmp, "reconciler.log"))
        rp = Proc(rec.pid)
        # Idle baseline: caches synced on an empty server.
        for _ in range(600):
            if Metric(metrics_port, "wasd_reconciler_scheduling_api_served") == 1:
                break
            time.sleep(0.1)
        time.sleep(1)
        results["idle_rss_bytes"] = rp.mem("VmRSS")
        # The whole run, phases and the time between them (the gang doctor's writes after its
        # settle time can fall between two phases' windows).
        start_stats, start_cpu = srv.stats(), rp.cpu()

        def Phase(name, action, wait=None):
            before = srv.stats()
            cpu0 = rp.cpu()
            rec0 = Metric(metrics_port, "wasd_reconciler_reconciles_total") or 0
            t0 = time.monotonic()
            if action:
                action()
            if wait:
                time.sleep(wait)
            deadline = t0 + args.timeout
            last = None
            while True:
                s = srv.stats()
                if Converged(s):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"{name}: not converged after {args.timeout} s: {s}")
                if s != last:
                    last = s
                time.sleep(0.2)
            seconds = time.monotonic() - t0
            after = srv.stats()
            by_verb = Diff(after, before)
            total = sum(by_verb.values())
            r = {
                "seconds": round(seconds, 2),
                "requests": total,
                "requests_per_second": round(total / seconds, 1) if seconds else 0,
                "writes": Writes(by_verb),
                "refused_writes": Refused(by_verb),
                "by_verb": by_verb,
                "reconciler_cpu_seconds": round(rp.cpu() - cpu0, 2),
                "reconciles": (Metric(metrics_port, "wasd_reconciler_reconciles_total") or 0) - rec0,
                "rss_bytes": rp.mem("VmRSS"),
                "peak_rss_bytes": rp.mem("VmHWM"),
                "pods": after["pods"],
                "deployments": after["deployments"],
                "replicasets": after["replicasets"],
            }
            results["phases"][name] = r
            print(f"{name}: {json.dumps(r)}", file=sys.stderr, flush=True)
            return r

        phases = args.phases.split(",")
        n, R = args.n, args.replicas
        tenth = max(1, n // 10)
        if "create" in phases:
            Phase("create", lambda: srv.call("POST", "/debug/apply",
                                             [Deployment(i, R) for i in range(n)]))
            # Per cached pod: everything the process holds beyond the idle
            # baseline, divided by the pods — an upper bound (it includes
            # the other caches, the queues and the allocator's slack).
            results["bytes_per_pod_upper_bound"] = round(
                (results["phases"]["create"]["rss_bytes"] - results["idle_rss_bytes"]) / (n * R))
        if "resync" in phases:
            # The gang doctor writes a condition that is not Scheduled only
            # after its settle time (--gang-status-delay, 5 s): that tail of
            # the create phase is not the resync's. The window starts once
            # the reconciler has sent nothing for 7 s (at most 120 s).
            quiet_since, last = time.monotonic(), srv.stats()["wasdRequests"]
            for _ in range(240):
                time.sleep(0.5)
                now = srv.stats()["wasdRequests"]
                if now != last:
                    quiet_since, last = time.monotonic(), now
                elif time.monotonic() - quiet_since >= 7:
                    break
            Phase("resync", None, wait=args.resync * 1.5 + 5)
        if "rollout" in phases:
            Phase("rollout", lambda: srv.call(
                "POST", "/debug/apply",
                [Deployment(i, R, image="registry.example.com/inference/vllm:v0.6.4")
                 for i in range(tenth)]))
        if "zero" in phases:
            Phase("zero", lambda: srv.call("POST", "/debug/apply",
                                           [Deployment(i, 0) for i in range(tenth, 2 * tenth)]))
        results["peak_rss_bytes"] = rp.mem("VmHWM")
        end_stats = srv.stats()
        whole = Diff(end_stats, start_stats)
        results["whole_run"] = {"reconciler_cpu_seconds": round(rp.cpu() - start_cpu, 2),
                                "requests": sum(whole.values()), "writes": Writes(whole),
                                "watch_events": end_stats["watchEventsSent"] -
                                start_stats["watchEventsSent"]}
        results["server_cpu_seconds"] = round(Proc(srv_proc.pid).cpu(), 2)
        results["server_peak_rss_bytes"] = Proc(srv_proc.pid).mem("VmHWM")
        results["reconciler_log_errors"] = sum(
            1 for line in open(os.path.join(tmp, "reconciler.log")) if '"level":"error"' in line)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    if args.json:
        print(json.dumps(results))
    else:
        print(json.dumps(results, indent=1))
    if not os.environ.get("WASD_KEEP_TEST_DIRS"):
        subprocess.run(["rm", "-rf", tmp])
    else:
        print(f"kept {tmp}", file=sys.stderr)


if __name__ == "__main__":
    main()
