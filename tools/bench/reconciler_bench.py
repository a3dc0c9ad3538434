#!/usr/bin/env python3
"""Bench scenario for `wasd reconciler`: N opted-in Deployments x 4 replicas created at
once on the test API server (tests/apiserver) with the real `wasd webhook`. Reports:

  * time to converge (every pod Running and ungated, one Workload per Deployment,
    one PodGroup per ReplicaSet);
  * the reconciler's API writes per Deployment, by kind (goal: exactly 1 Workload
    create + 1 PodGroup create; with --backend volcano|kai|coscheduling no Workload:
    1 create of the backend's PodGroup; plus 1 gate lift per pod where the pods carry
    wasd's gate: always for coscheduling, for the others with --pod-hold gate; under
    the default hold their scheduler holds them and wasd patches no pod), and failed
    writes;
  * writes during a full resync after convergence (goal: 0);
  * the reconciler's peak RSS (VmHWM from /proc/<pid>/status).

No timing assertions: it prints figures (and a JSON line with --json).

    WASD_BIN=build/wasd python3 tools/bench/reconciler_bench.py [--n 1000] [--quick] [--workers 2]
                                                          [--backend native|volcano|kai|coscheduling]
                                                          [--pod-hold default|gate]
"""
import argparse
import concurrent.futures
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the checkout (this file is tools/bench/)
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the test kit (lib)
os.environ.setdefault("WASD_SOURCE_DIR", ROOT)

from lib import paths  # noqa: E402
from lib.cluster import GATE_EVERYWHERE, RECONCILER_USER, WRITES, Env  # noqa: E402
from lib.manifests import BACKENDS, NS, deployment, pod_gated  # noqa: E402

REPLICAS = 4


def VmHWM(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])  # kB
    except OSError:
        pass
    return None


def Converged(env, n, backend="native"):
    if backend == "native":
        deployments = {f"bench-{i}" for i in range(n)}
        workloads = env.workloads()
        owners = [o["name"] for w in workloads for o in w["metadata"].get("ownerReferences", [])]
        if len(workloads) != n or set(owners) != deployments:
            return False, f"{len(workloads)}/{n} Workloads"
    pgs = env.pod_groups(BACKENDS[backend]["gv"])
    if len(pgs) != n:
        return False, f"{len(pgs)}/{n} PodGroups"
    pods = env.list("pods", selector="wasd.io/managed=true")
    ready = [p for p in pods if p["status"].get("phase") == "Running" and not pod_gated(p)]
    if len(ready) != n * REPLICAS:
        return False, f"{len(ready)}/{n * REPLICAS} pods running"
    return True, "converged"


def Classify(entries):
    counts = {}
    for e in entries:
        parts = e["path"].strip("/").split("/")
        if "leases" in parts:
            continue
        if e["method"] != "POST" and parts[-1] == "status":
            resource = parts[-3] + "/status"  # the gang doctor's GangScheduled condition
        else:
            resource = parts[-1] if e["method"] == "POST" else parts[-2]
        if resource == "podgroups" and parts[1] != "scheduling.k8s.io":
            resource += "." + parts[1]  # a gang scheduler's PodGroup
        ok = 200 <= e.get("status", 0) < 300
        key = f"{e['method']} {resource}" + ("" if ok else f" (failed {e.get('status')})")
        counts[key] = counts.get(key, 0) + 1
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="Deployments (default 1000)")
    ap.add_argument("--quick", action="store_true", help="N=50, for CI")
    ap.add_argument("--workers", type=int, default=2, help="reconciler --workers")
    ap.add_argument("--resync", type=int, default=20, help="reconciler --resync-period in seconds")
    ap.add_argument("--timeout", type=float, default=1800, help="give up converging after this many seconds")
    ap.add_argument("--backend", choices=sorted(BACKENDS), default="native",
                    help="gang-scheduling backend of every Deployment (--backend of both components)")
    ap.add_argument("--pod-hold", choices=("default", "gate"), default="default",
                    help="default: the binary's own hold (docs/design.md Q23); gate: every backend "
                         "held by wasd's gate")
    ap.add_argument("--json", action="store_true", help="also print one JSON line of results")
    args = ap.parse_args()
    n = 50 if args.quick else args.n
    if not os.path.exists(paths.WASD):
        sys.exit(f"wasd binary not found: set WASD_BIN (tried {paths.WASD!r})")

    backend_flags = [] if args.backend == "native" else ["--backend", args.backend]
    hold = GATE_EVERYWHERE if args.pod_hold == "gate" else None  # None: no --pod-hold flag
    gated = args.pod_hold == "gate" or args.backend == "coscheduling"
    lifts = REPLICAS if gated else 0
    with Env(apiserver_args=("--bookmark-interval", "1.0", "--history", "200000"),
             webhook_args=backend_flags, pod_hold=hold) as env:
        rec = env.start_reconciler("--leader-elect=false", "--workers", str(args.workers),
                                  "--resync-period", f"{args.resync}s", "--log-level", "warn",
                                  *backend_flags)
        seq0 = env.srv.LastSeq()
        start = time.time()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: env.create(f"/apis/apps/v1/namespaces/{NS}/deployments",
                                               deployment(f"bench-{i}", REPLICAS)), range(n)))
        created = time.time() - start
        status = ""
        peak = 0
        while time.time() - start < args.timeout:
            peak = max(peak, VmHWM(rec.proc.pid) or 0)
            done, status = Converged(env, n, args.backend)
            if done:
                break
            time.sleep(1.0)
        else:
            sys.exit(f"not converged after {args.timeout}s: {status}\n{rec.logs()[-2000:]}")
        converge = time.time() - start
        seq_conv = env.srv.LastSeq()
        writes = env.srv.Audit(since=seq0, user=RECONCILER_USER, methods=WRITES)
        by_kind = Classify(writes)

        # Pods run before the reconciler has said so: the gang doctor's
        # GangScheduled condition and its Event follow (at the client's QPS).
        # The resync window starts once every Deployment's condition says
        # Scheduled (at most 120 s: on a loaded machine the doctor's last
        # patches can come seconds after the pods run) and the reconciler has
        # then been quiet for 2 s (at most 120 s more).
        def all_scheduled():
            items = env.list("deployments", group="apps/v1")
            conds = [c for d in items if d["metadata"]["name"].startswith("bench-")
                     for c in (d.get("status") or {}).get("conditions") or [] if c.get("type") == "GangScheduled"]
            return len(conds) == n and all(c.get("status") == "True" for c in conds)
        for _ in range(240):
            if all_scheduled():
                break
            time.sleep(0.5)
        quiet_since, last = time.time(), len(env.srv.Audit(since=seq_conv, user=RECONCILER_USER, methods=WRITES))
        for _ in range(240):
            time.sleep(0.5)
            now = len(env.srv.Audit(since=seq_conv, user=RECONCILER_USER, methods=WRITES))
            if now != last:
                quiet_since, last = time.time(), now
            elif time.time() - quiet_since >= 2.0:
                break
        seq_idle = env.srv.LastSeq()
        reconciles_before = rec.metric("wasd_reconciler_reconciles_total")
        time.sleep(args.resync + 5)
        resync_writes = [e for e in env.srv.Audit(since=seq_idle, user=RECONCILER_USER, methods=WRITES)
                         if "/leases/" not in e["path"]]
        reconciles_resync = rec.metric("wasd_reconciler_reconciles_total") - reconciles_before
        peak = max(peak, VmHWM(rec.proc.pid) or 0)
        late = env.srv.Audit(since=seq_conv, user=RECONCILER_USER, methods=WRITES)
        # Every write the server refused, from the start to the end of the
        # resync window: a write planned from a stale view.
        refused = [f"{e['method']} {e['path']} -> {e.get('status')}"
                   for e in env.srv.Audit(since=seq0, user=RECONCILER_USER, methods=WRITES)
                   if not 200 <= e.get("status", 0) < 300 and "/leases/" not in e["path"]]

    per = {k: v / n for k, v in sorted(by_kind.items())}
    print(f"deployments: {n} x {REPLICAS} replicas; backend {args.backend}; "
          f"reconciler --workers {args.workers}")
    print(f"create requests sent in: {created:.1f} s")
    print(f"time to converge: {converge:.1f} s")
    print("reconciler writes per Deployment (until converged):")
    for k, v in per.items():
        print(f"  {k:40s} {v:.3f}")
    if args.backend == "native":
        print(f"  goal: POST workloads 1, POST podgroups 1, PATCH pods {lifts}, POST events 2")
    else:
        group = BACKENDS[args.backend]["gv"].split("/")[0]
        print(f"  goal: POST podgroups.{group} 1, PATCH pods {lifts}, POST events 1")
    print(f"writes after convergence (before the resync window): {len(late) - len(resync_writes)}")
    print(f"writes during a full resync ({args.resync} s period, {int(reconciles_resync)} reconciles): "
          f"{len(resync_writes)}")
    print(f"writes refused by the server: {len(refused)}")
    for line in refused[:20]:
        print(f"  {line}")
    print(f"reconciler peak RSS (VmHWM): {peak / 1024:.1f} MiB")
    if args.json:
        print(json.dumps({"n": n, "replicas": REPLICAS, "backend": args.backend,
                          "pod_hold": args.pod_hold, "gate_lifts_per_deployment": lifts,
                          "converge_seconds": round(converge, 2),
                          "writes_per_deployment": per, "resync_writes": len(resync_writes),
                          "resync_reconciles": reconciles_resync, "peak_rss_kib": peak,
                          "refused_writes": refused}))


if __name__ == "__main__":
    main()
