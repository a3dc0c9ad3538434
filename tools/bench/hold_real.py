#!/usr/bin/env python3
"""The pod hold on the REAL kube-scheduler (issue 40; hold_bench.py measures the same
on the bench API server): both holds side by side on the loopback control plane of
scripts/cluster.sh (etcd, kube-apiserver, kube-controller-manager, kube-scheduler
v1.37.2 and the node agent), wasd installed by `helm install` of charts/wasd.

Per hold, a fresh control plane (`WASD_CLUSTER_AUDIT=1 scripts/cluster.sh up --nodes
4`: 4 Nodes of 110 pods and 16 CPU, room for the 256-pod gang beside wasd's own
pods), the chart with its default values (`scheduler`: the webhook links each pod
to its PodGroup, no gate; kube-scheduler's gang plugin holds it) or with
`--set webhook.podHold.native=gate` (`gate`: wasd.io/pod-group on every pod, the
reconciler lifts it). Then one gang at a time (default 8, 64, 256 pods: a Deployment
opted in with `wasd.io/scheduling: {"schedulingPolicy": {"gang": {}}}`, minCount =
replicas, Recreate, no resource requests, an image the agent does not run), deleted
and gone before the next.

Both figures come from the API server's audit log (every create, update, patch and
delete at level Metadata; server-side clocks, microseconds), in the window from the
Deployment's create to 3 s after the last member was bound:

  bound_seconds   last `create pods/binding` minus last `create pods` (the last
                  member created -> every member bound)
  writes          every write in the window, by every client (controllers,
                  scheduler, node agent, wasd), Events and failed writes (409)
                  included, Lease renewals (heartbeats) left out; and wasd's
                  share (its service accounts); the breakdown by client, verb,
                  resource and code in --json

    WASD_BIN=build/wasd python3 tools/bench/hold_real.py [--sizes 8,64,256]
                                                         [--holds scheduler,gate] [--json]
"""
import argparse
import collections
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "scripts", "cluster.sh")
NS = "wasd-system"
APP_NS = "default"
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection"}


def run(*args, env, timeout=300, check=True):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    if check and p.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def wait_until(what, fn, timeout, interval=0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:  # bounded by timeout
        ok, last = fn()
        if ok:
            return last
        time.sleep(interval)
    raise SystemExit(f"timed out after {timeout} s waiting for {what}; last: {last}")


def stamp(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def deployment(name, size):
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": APP_NS,
                     "annotations": {"wasd.io/scheduling": '{"schedulingPolicy": {"gang": {}}}'}},
        "spec": {"replicas": size, "strategy": {"type": "Recreate"},
                 "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"terminationGracePeriodSeconds": 0,
                                       "containers": [{"name": "w", "image": "bench:v1"}]}}},
    }


def client(ev):
    user = ev.get("user", {}).get("username", "")
    if user.startswith(f"system:serviceaccount:{NS}:"):
        return "wasd"
    if user.startswith("system:serviceaccount:kube-system:") or user == "system:kube-controller-manager":
        return "controller-manager"
    if user == "system:kube-scheduler":
        return "scheduler"
    if "nodeagent" in user:
        return "nodeagent"
    return user or "?"


def Run(hold, sizes, nodes, timeout):
    tmp = tempfile.mkdtemp(prefix="wasd-hold-real-")
    env = dict(os.environ, WASD_CLUSTER_DIR=tmp, WASD_CLUSTER_AUDIT="1")
    out = []
    try:
        t0 = time.monotonic()
        up = subprocess.run([CLUSTER, "up", "--nodes", str(nodes)], env=env, capture_output=True,
                            text=True, timeout=3600)
        if up.returncode != 0:
            raise SystemExit(f"cluster.sh up failed:\n{up.stderr}")
        conf = dict(line.split("=", 1) for line in open(os.path.join(tmp, "cluster.env")).read().split())
        env["KUBECONFIG"] = os.path.join(tmp, "admin.kubeconfig")
        kubectl = os.path.join(conf["BIN"], "kubectl")
        helm = os.path.join(conf["BIN"], "helm")
        version = run(conf["WASD_BIN"], "version", env=env).stdout.split()[1]
        run(kubectl, "create", "namespace", NS, env=env)
        values = ["--set", f"image.repository={conf['WASD_IMAGE']}", "--set", f"image.tag={version}"]
        if hold == "gate":
            values += ["--set", "webhook.podHold.native=gate"]
        run(helm, "install", "wasd", os.path.join(ROOT, "charts", "wasd"), "-n", NS, *values,
            "--timeout", "5m", env=env, timeout=600)
        for d in ("wasd-webhook", "wasd-reconciler"):
            run(kubectl, "rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=180s", env=env)
        print(f"{hold}: control plane and chart up in {time.monotonic() - t0:.0f} s", file=sys.stderr,
              flush=True)
        audit = os.path.join(tmp, "logs", "audit.log")

        def pods(name):
            items = json.loads(run(kubectl, "get", "pods", "-n", APP_NS, "-l", f"app={name}", "-o", "json",
                                   env=env, timeout=120).stdout)["items"]
            return [p for p in items if not p["metadata"].get("deletionTimestamp")]

        for size in sizes:
            name = f"gang-{size}"
            time.sleep(3)  # the tail of the install and of the previous gang's delete
            offset = os.path.getsize(audit)
            p = subprocess.run([kubectl, "apply", "-f", "-"], input=json.dumps(deployment(name, size)),
                               capture_output=True, text=True, env=env, timeout=120)
            if p.returncode != 0:
                raise SystemExit(f"apply {name}: {p.stderr}")

            def all_bound():
                ps = pods(name)
                n = sum(1 for x in ps if x["spec"].get("nodeName"))
                return len(ps) == size and n == size, f"{n}/{len(ps)} bound"
            wait_until(f"{name}: every member bound", all_bound, timeout)
            time.sleep(3)  # what the clients still write for this gang
            with open(audit) as f:
                f.seek(offset)
                events = [json.loads(line) for line in f if line.strip()]
            creates, binds = [], []
            by_client = collections.Counter()
            by_resource = collections.Counter()
            for ev in events:
                if ev.get("verb") not in WRITE_VERBS or ev.get("stage") != "ResponseComplete":
                    continue
                ref = ev.get("objectRef", {})
                res = ref.get("resource", "") + ("/" + ref["subresource"] if ref.get("subresource") else "")
                if res == "leases":
                    continue  # heartbeats (node agent, leader election), not the gang's
                code = ev.get("responseStatus", {}).get("code", 0)
                who = client(ev)
                by_client[who] += 1
                by_resource[f"{who} {ev['verb']} {res} {code}"] += 1
                if ref.get("namespace") == APP_NS and 200 <= code < 300:
                    if res == "pods" and ev["verb"] == "create":
                        creates.append(stamp(ev["stageTimestamp"]))
                    elif res == "pods/binding":
                        binds.append(stamp(ev["stageTimestamp"]))
            if len(creates) != size or len(binds) != size:
                raise SystemExit(f"{name}: {len(creates)} pod creates, {len(binds)} bindings in the audit log")
            r = {"hold": hold, "pods": size,
                 "bound_seconds": round(max(binds) - max(creates), 3),
                 "first_to_last_bound_seconds": round(max(binds) - min(creates), 3),
                 "writes": sum(by_client.values()), "wasd_writes": by_client.get("wasd", 0),
                 "writes_by_client": dict(by_client), "writes_by_resource": dict(sorted(by_resource.items()))}
            print(json.dumps(r), file=sys.stderr, flush=True)
            out.append(r)
            run(kubectl, "delete", "deployment", name, "-n", APP_NS, "--wait=false", env=env)
            wait_until(f"{name}: pods gone",
                       lambda: (not json.loads(run(kubectl, "get", "pods", "-n", APP_NS, "-l", f"app={name}",
                                                   "-o", "json", env=env).stdout)["items"], None),
                       timeout)
    finally:
        subprocess.run([CLUSTER, "down"], env=env, timeout=180)
        if not os.environ.get("WASD_KEEP_TEST_DIRS"):
            subprocess.run(["rm", "-rf", tmp])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="8,64,256", help="gang sizes, one Deployment each")
    ap.add_argument("--holds", default="scheduler,gate", help="scheduler (the chart's default) and/or gate")
    ap.add_argument("--nodes", type=int, default=4, help="Nodes of the agent (110 pods each)")
    ap.add_argument("--timeout", type=float, default=600, help="give up a gang after this long")
    ap.add_argument("--json", action="store_true", help="one JSON line of results at the end")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    results = []
    for hold in args.holds.split(","):
        results += Run(hold, sizes, args.nodes, args.timeout)
    if args.json:
        print(json.dumps(results))
    else:
        print(f"{'hold':<10} {'pods':>5} {'bound s':>8} {'writes':>7} {'wasd':>5}  by client")
        for r in results:
            others = ", ".join(f"{k} {v}" for k, v in sorted(r["writes_by_client"].items()))
            print(f"{r['hold']:<10} {r['pods']:>5} {r['bound_seconds']:>8} {r['writes']:>7} "
                  f"{r['wasd_writes']:>5}  {others}")


if __name__ == "__main__":
    main()
