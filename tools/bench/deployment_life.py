#!/usr/bin/env python3
"""Prints the API traffic of one opted-in Deployment's life, as recorded by the
test API server: create (3 replicas, gang), scale 3→5→0→2, a Recreate
rollout (new image), delete. For each step: the admission webhooks called and
every write the reconciler made, in order.

Usage: WASD_BIN=build/wasd python3 tools/bench/deployment_life.py
Loopback only; every process is stopped by PID on exit.
"""
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
os.environ.setdefault("WASD_SOURCE_DIR", ROOT)
os.environ.setdefault("WASD_BIN", os.path.join(ROOT, "build", "wasd"))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the test kit (lib)
from lib.cluster import RECONCILER_USER, WRITES, Env  # noqa: E402
from lib.manifests import NS, deployment, pod_gated  # noqa: E402
from lib.wait import wait_for  # noqa: E402

NAME = "life"


def settle(env, check, what, timeout=60):
    wait_for(check, timeout, 0.2, what)
    time.sleep(1.0)  # let trailing writes (gate lifts, events) land


def describe(entry):
    parts = entry["path"].strip("/").split("/")
    method = entry["method"]
    body = entry.get("body") or {}
    if method == "POST":
        target = f'{parts[-1]}/{body.get("metadata", {}).get("name") or body.get("metadata", {}).get("generateName", "")}'
    else:
        target = f"{parts[-2]}/{parts[-1]}"
    detail = ""
    if method == "PATCH" and isinstance(body, list):
        detail = " " + ", ".join(f'{op["op"]} {op["path"]}' + (f'={op["value"]}' if op["op"] != "remove" and "value" in op and not isinstance(op["value"], (dict, list)) else "")
                                 for op in body)
    if "events" in parts:
        detail = f' reason={body.get("reason")}'
    return f"{method:6} {target}{detail}  -> {entry.get('status')}"


def step(env, title, since):
    print(f"\n## {title}")
    hooks = {}
    for e in env.srv.Audit(since=since):
        for w in e.get("webhooks") or []:
            hooks[w] = hooks.get(w, 0) + 1
    if hooks:
        print("webhooks called: " + ", ".join(f"{k} x{v}" for k, v in sorted(hooks.items())))
    for e in env.srv.Audit(since=since, user=RECONCILER_USER, methods=WRITES):
        if "/leases" in e["path"]:
            continue
        print("  reconciler: " + describe(e))
    return env.srv.LastSeq()


def main():
    with Env() as env:
        env.start_reconciler("--leader-elect=false")
        seq = env.srv.LastSeq()
        env.apply(deployment(NAME, 3))
        settle(env, lambda: len(env.pods(NAME)) == 3 and not any(pod_gated(p) for p in env.pods(NAME)),
               "3 ungated pods")
        seq = step(env, "create (replicas 3, gang, minCount derived)", seq)
        for n in (5, 0, 2):
            env.scale(NAME, n)
            settle(env, lambda: len([p for p in env.pods(NAME) if not p["metadata"].get("deletionTimestamp")]) == n
                   and not any(pod_gated(p) for p in env.pods(NAME)), f"{n} ungated pods")
            seq = step(env, f"scale to {n}", seq)
        env.patch(f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}",
                  {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "registry.example/app:2"}]}}}})
        settle(env, lambda: len(env.replica_sets(NAME)) == 2 and len(env.pods(NAME)) == 2 and
               all(p["spec"]["containers"][0]["image"].endswith(":2") for p in env.pods(NAME)) and
               not any(pod_gated(p) for p in env.pods(NAME)), "Recreate rollout")
        seq = step(env, "Recreate rollout (image :1 -> :2)", seq)
        env.delete(f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}")
        settle(env, lambda: not env.workloads() and not env.pod_groups() and not env.pods(NAME), "garbage collection")
        step(env, "delete (garbage collection by ownerReferences; the reconciler writes nothing)", seq)


if __name__ == "__main__":
    main()
