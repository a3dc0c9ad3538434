"""Reconciler side of the fault suite: fault rules for the test API server at a
configurable rate, a Deployment life (create, scale, Recreate rollout) to run under
them, the convergence check, the ownership audit (every write by the reconciler's
user must target an object wasd owns), and a TCP proxy that stands in for an API
server restart.

Builds on lib.cluster (API server + real webhook + reconcilers, every process
stopped by PID).
"""
import json
import os
import re
import select
import socket
import threading

from lib.cluster import RECONCILER_USER, WRITES
from lib.manifests import GATE, NS, deployment, min_count_of, pod_gated, pod_group_of, workload_name
from lib.wait import wait_for

CONVERGE = 120.0  # bound, in seconds, of one convergence wait under faults


def FaultRate(default=0.2):
    raw = os.environ.get("FAULT_RATE")
    return float(raw) if raw else default


def ApiFaultRules(rate, user=RECONCILER_USER, watch_rate=None):
    """Rules for every fault kind, for `user` only (the test's own requests and the
    in-process controllers stay clean). Each rule fires with rate/4: a write meets a
    fault with probability about `rate` (four rules), a read about 3/4 of it, a watch
    about `watch_rate`."""
    watch_rate = rate if watch_rate is None else watch_rate
    rules = [
        # Writes: 409, 500, 429, dropped connection.
        {"code": 409, "user": user, "watch": False, "methods": ["POST", "PUT", "PATCH", "DELETE"],
         "rate": rate / 4},
        {"code": 500, "user": user, "watch": False, "rate": rate / 4},
        {"code": 429, "user": user, "watch": False, "retryAfter": 1, "rate": rate / 4},
        {"code": "drop", "user": user, "watch": False, "rate": rate / 4},
        # Watches: an ERROR 410 Expired event, or the stream cut, at once or after
        # a few events.
        {"code": 410, "user": user, "watch": True, "afterEvents": 0, "rate": watch_rate / 4},
        {"code": 410, "user": user, "watch": True, "afterEvents": 1, "rate": watch_rate / 4},
        {"code": "drop", "user": user, "watch": True, "afterEvents": 0, "rate": watch_rate / 4},
        {"code": "drop", "user": user, "watch": True, "afterEvents": 2, "rate": watch_rate / 4},
    ]
    return [r for r in rules if r["rate"] > 0]


def OneOfEachRules(user=RECONCILER_USER):
    """Rules that fire once each, on the first matching requests: put in front of
    ApiFaultRules they make every kind certain to appear at least once."""
    return [
        {"code": 409, "user": user, "watch": False, "methods": ["POST", "PUT", "PATCH", "DELETE"], "count": 1},
        {"code": 500, "user": user, "watch": False, "count": 1},
        {"code": 429, "user": user, "watch": False, "retryAfter": 1, "count": 1},
        {"code": "drop", "user": user, "watch": False, "count": 1},
        {"code": 410, "user": user, "watch": True, "afterEvents": 0, "count": 1},
        {"code": "drop", "user": user, "watch": True, "afterEvents": 1, "count": 1},
    ]


def FaultCounts(srv, since=0, user=RECONCILER_USER):
    """Injected faults per kind, from the audit log: {"500": n, "429": n, "409": n,
    "410 watch": n, "drop": n, "drop watch": n}."""
    counts = {}
    for e in srv.Audit(since=since, user=user):
        if e.get("fault") is None:
            continue
        key = str(e["fault"]) + (" watch" if e.get("watch") else "")
        counts[key] = counts.get(key, 0) + 1
    return counts


def FormatCounts(counts):
    order = ["500", "429", "409", "drop", "410 watch", "drop watch"]
    keys = [k for k in order if k in counts] + sorted(k for k in counts if k not in order)
    return ", ".join(f"{k}: {counts[k]}" for k in keys) or "none"


class World:
    """The Deployments a test made, what it wants of each, and decoys wasd must not touch."""

    def __init__(self, env, prefix):
        self.env = env
        self.prefix = prefix
        self.want = {}   # name -> replicas
        self.uids = {}   # name -> uid

    def Name(self, short):
        return f"{self.prefix}-{short}"

    def Create(self, short, replicas):
        name = self.Name(short)
        d = self.env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment(name, replicas))
        self.want[name] = replicas
        self.uids[name] = d["metadata"]["uid"]
        return name

    def Scale(self, name, replicas):
        self.env.scale(name, replicas)
        self.want[name] = replicas

    def Rollout(self, name, revision):
        """A new pod template (so a new ReplicaSet); the Deployments use Recreate."""
        self.env.patch(f"/apis/apps/v1/namespaces/{NS}/deployments/{name}",
                       {"spec": {"template": {"metadata": {"annotations": {"fault-suite/revision": str(revision)}}}}})

    def CreateDecoys(self):
        """Objects wasd does not own: a Workload and a PodGroup of nobody, and a
        Deployment without the opt-in annotation."""
        base = "/apis/scheduling.k8s.io/v1beta1/namespaces/" + NS
        self.env.create(base + "/workloads",
                        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                         "metadata": {"name": self.Name("decoy-workload"), "namespace": NS},
                         "spec": {"podGroupTemplates": [{"name": "pgt-0", "schedulingPolicy": {"basic": {}}}]}})
        self.env.create(base + "/podgroups",
                        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                         "metadata": {"name": self.Name("decoy-podgroup"), "namespace": NS},
                         "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
        plain = deployment(self.Name("plain"), 2)
        del plain["metadata"]["annotations"]
        self.env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", plain)

    def Converged(self, name):
        """One Workload (minCount = replicas), one PodGroup per ReplicaSet with
        replicas > 0 and no other, every pod Running with its gate lifted."""
        replicas = self.want[name]
        env = self.env
        ws = [w for w in env.workloads()
              if any(o.get("uid") == self.uids[name] for o in w["metadata"].get("ownerReferences", []))]
        if len(ws) != 1 or (replicas > 0 and min_count_of(ws[0]) != replicas):
            return False
        if ws[0]["metadata"]["name"] != workload_name(name, self.uids[name]):
            return False
        active = {pod_group_of(rs) for rs in env.replica_sets(name) if rs["spec"].get("replicas", 1) > 0}
        pgs = {p["metadata"]["name"]: p for p in env.pod_groups()
               if p["metadata"]["name"].startswith(name + "-") and "deletionTimestamp" not in p["metadata"]}
        if set(pgs) != active or any(min_count_of(p) != replicas for p in pgs.values()):
            return False
        pods = env.pods(name)
        return len(pods) == replicas and all(
            p["status"].get("phase") == "Running" and not pod_gated(p) for p in pods)

    def WaitConverged(self, timeout=CONVERGE):
        for name in sorted(self.want):
            wait_for(lambda: self.Converged(name), timeout, 0.3, f"{name} converged at {self.want[name]}")

    def Details(self, name):
        """What the API server holds for `name`, for failure messages."""
        env = self.env
        return json.dumps({
            "want": self.want.get(name),
            "workloads": [(w["metadata"]["name"], min_count_of(w)) for w in env.workloads()
                          if w["metadata"]["name"].startswith(name + "-")],
            "replicasets": [(r["metadata"]["name"], r["spec"].get("replicas")) for r in env.replica_sets(name)],
            "podgroups": [(p["metadata"]["name"], min_count_of(p), "deletionTimestamp" in p["metadata"])
                          for p in env.pod_groups() if p["metadata"]["name"].startswith(name + "-")],
            "pods": [(p["metadata"]["name"], p["status"].get("phase"), pod_gated(p)) for p in env.pods(name)],
        })


def _GateLiftOnly(body):
    """True when a pod write is the reconciler's JSON patch removing its own gate."""
    if not isinstance(body, list) or not body:
        return False
    removes = 0
    for op in body:
        path = op.get("path", "")
        if not re.fullmatch(r"/spec/schedulingGates/\d+(/name)?", path):
            return False
        if op.get("op") == "test":
            if path.endswith("/name") and op.get("value") != GATE:
                return False
        elif op.get("op") == "remove":
            removes += 1
        else:
            return False
    return removes == 1


def ForeignWrites(env, since=0, user=RECONCILER_USER):
    """Every write attempt by `user` (any status) that does not target something wasd
    owns. Owned: Workloads named for one of the opted-in Deployments (the name wasd
    derives from the Deployment's uid), PodGroups named for their ReplicaSets, gate-lift
    patches of their pods, Events, its Lease. Returns a list of (method, path, why)."""
    deployments = {}
    for d in env.list("deployments", "apps/v1"):
        if "wasd.io/scheduling" in (d["metadata"].get("annotations") or {}):
            deployments[d["metadata"]["name"]] = d["metadata"]["uid"]
    owned_workloads = {workload_name(n, u) for n, u in deployments.items()}
    # ReplicaSets ever created for those Deployments (old ones may be gone now).
    owned_rs = set()
    for e in env.srv.Audit(methods=("POST",), path="/replicasets"):
        body = e.get("body") or {}
        for ref in body.get("metadata", {}).get("ownerReferences", []):
            if ref.get("kind") == "Deployment" and ref.get("uid") in deployments.values():
                owned_rs.add(body["metadata"]["name"])
    bad = []
    for e in env.srv.Audit(since=since, user=user, methods=WRITES):
        parts = e["path"].strip("/").split("/")
        method = e["method"]
        if "namespaces" not in parts or len(parts) < parts.index("namespaces") + 3:
            bad.append((method, e["path"], "not a namespaced object"))
            continue
        rest = parts[parts.index("namespaces") + 2:]
        kind = rest[0]
        if kind in ("events", "leases"):
            continue
        if parts[parts.index("namespaces") + 1] != NS:
            bad.append((method, e["path"], "outside the test namespace"))
            continue
        name = rest[1] if len(rest) > 1 else (e.get("body") or {}).get("metadata", {}).get("name")
        if kind == "workloads":
            if name not in owned_workloads:
                bad.append((method, e["path"], f"Workload {name} is not one wasd owns"))
        elif kind == "podgroups":
            # Q12: `<replicaset>-<hash of its uid>`; the bare ReplicaSet name
            # of the earlier scheme counts too.
            if name not in owned_rs and (name or "").rsplit("-", 1)[0] not in owned_rs:
                bad.append((method, e["path"], f"PodGroup {name} is not named for a ReplicaSet wasd serves"))
        elif kind == "deployments":
            # The gang doctor's condition: a JSON patch of status.conditions only,
            # on an opted-in Deployment, whose entries are all GangScheduled.
            if method != "PATCH" or rest[2:] != ["status"] or name not in deployments:
                bad.append((method, e["path"], "a Deployment write other than its gang condition"))
            elif not _GangConditionOnly(e.get("body")):
                bad.append((method, e["path"], f"status patch beyond GangScheduled: {e.get('body')}"))
        elif kind == "pods":
            rs = name.rsplit("-", 1)[0] if name else None
            if method != "PATCH" or len(rest) != 2:
                bad.append((method, e["path"], "a pod write other than a patch"))
            elif rs not in owned_rs:
                bad.append((method, e["path"], f"pod {name} of no opted-in Deployment"))
            elif not _GateLiftOnly(e.get("body")):
                bad.append((method, e["path"], f"pod patch other than lifting the gate: {e.get('body')}"))
        else:
            bad.append((method, e["path"], f"write to {kind}"))
    return bad


def _GangConditionOnly(body):
    """True for a JSON patch that only tests the resourceVersion or a condition's type
    and adds or replaces GangScheduled entries of status.conditions (or a status
    holding nothing but them)."""
    if not isinstance(body, list) or not body:
        return False
    for op in body:
        if not isinstance(op, dict):
            return False
        path, value = str(op.get("path", "")), op.get("value")
        if op.get("op") == "test" and (path == "/metadata/resourceVersion" or
                                       path.startswith("/status/conditions/")):
            continue
        if path == "/status" and isinstance(value, dict) and set(value) == {"conditions"}:
            value = value["conditions"]
        elif not path.startswith("/status/conditions"):
            return False
        for v in value if isinstance(value, list) else [value]:
            if not isinstance(v, dict) or v.get("type") != "GangScheduled":
                return False
    return True


def Writes(env, since=0, user=RECONCILER_USER):
    return len(env.srv.Audit(since=since, user=user, methods=WRITES))


def WorkloadCreations(env, since=0, user=RECONCILER_USER):
    """Successful Workload creations by the reconciler, as a {deployment name: count}."""
    out = {}
    for e in env.srv.Audit(since=since, user=user, methods=("POST",), path="/workloads"):
        if e.get("status") in (200, 201):
            owner = [r["name"] for r in (e.get("body") or {}).get("metadata", {}).get("ownerReferences", [])
                     if r.get("kind") == "Deployment"]
            key = owner[0] if owner else "?"
            out[key] = out.get(key, 0) + 1
    return out


class TcpProxy:
    """A loopback TCP relay in front of the API server: the reconciler's kubeconfig
    points here. Restart() stands in for an API server restart that keeps its
    storage (as kube-apiserver does with etcd): every connection is cut, the port
    refuses connections for a while, then it listens again on the same port.
    Thread-safe."""

    def __init__(self, target_port):
        self.target = ("127.0.0.1", target_port)
        self.lock = threading.Lock()
        self.conns = set()
        self.listener = None
        self.port = 0
        self.accepted = 0
        self.cut = 0
        self.stopping = False
        self._Listen()

    def _Listen(self):
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self.port))
        ls.listen(128)
        self.port = ls.getsockname()[1]
        self.listener = ls
        threading.Thread(target=self._Accept, args=(ls,), daemon=True).start()

    def _Accept(self, ls):
        while True:
            try:
                client, _ = ls.accept()
            except OSError:
                return  # listener closed
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns.add((client, upstream))
                self.accepted += 1
            threading.Thread(target=self._Pump, args=(client, upstream), daemon=True).start()

    def _Pump(self, a, b):
        peers = {a: b, b: a}
        try:
            while True:
                readable, _, _ = select.select([a, b], [], [], 1.0)
                with self.lock:
                    if (a, b) not in self.conns:
                        return
                for s in readable:
                    data = s.recv(65536)
                    if not data:
                        return
                    peers[s].sendall(data)
        except OSError:
            return
        finally:
            self._Drop(a, b)

    def _Drop(self, a, b):
        with self.lock:
            self.conns.discard((a, b))
        for s in (a, b):
            try:
                s.close()
            except OSError:
                pass

    def CutAll(self):
        with self.lock:
            conns = list(self.conns)
            self.conns.clear()
        for a, b in conns:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass
        self.cut += len(conns)
        return len(conns)

    def Down(self):
        """The API server goes away: no listener, every connection cut."""
        self.listener.close()
        return self.CutAll()

    def Up(self):
        self._Listen()

    def Kubeconfig(self, kubeconfig, path):
        with open(kubeconfig) as f:
            cfg = json.load(f)
        for c in cfg["clusters"]:
            c["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    def Stop(self):
        self.listener.close()
        self.CutAll()

