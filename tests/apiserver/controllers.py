"""In-process controllers: Deployment, ReplicaSet, a trivial scheduler+kubelet, garbage
collector, PodGroup protection, namespace deletion.

They run in one background thread, one pass over all objects after every change (and
at least every `resync` seconds), and write through Api like a real controller writes
through the API server (so webhooks see their pods). Every write is audited with the
controller's user. A pass never blocks on I/O except webhook calls for pod creation.
"""
import copy
import datetime
import json
import math
import threading
import time
import uuid

from . import intree
from . import registry
from .api import Context, Now
from .store import ApiError

DEPLOY = registry.BY_KEY["apps/deployments"]
RS = registry.BY_KEY["apps/replicasets"]
POD = registry.BY_KEY["/pods"]
EVENT = registry.BY_KEY["/events"]
PODGROUP = registry.BY_KEY["scheduling.k8s.io/podgroups"]
NAMESPACE = registry.BY_KEY["/namespaces"]
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
PG_FINALIZER = "scheduling.k8s.io/podgroup-protection"

# How the gang schedulers' pods name their PodGroup (storage key, where).
_LINKS = [("scheduling.volcano.sh/podgroups", "annotations", "scheduling.k8s.io/group-name"),
          ("scheduling.run.ai/podgroups", "annotations", "pod-group-name"),
          ("scheduling.x-k8s.io/podgroups", "labels", "scheduling.x-k8s.io/pod-group")]


# The schedulers this server plays, by the schedulerName a pod addresses
# (kube-scheduler's default profile; Volcano's, KAI's and scheduler-plugins'
# default names). Each reads only its own backend's link: kube-scheduler
# ignores Volcano's annotation, Volcano ignores spec.schedulingGroup, and so
# on. A pod addressed to a name not listed here is scheduled by nobody, as on
# a cluster without that scheduler: it stays Pending.
SCHEDULER_BACKENDS = {"default-scheduler": "native", "volcano": "volcano",
                      "kai-scheduler": "kai", "scheduler-plugins-scheduler": "coscheduling"}
_BACKEND_LINK = {"volcano": _LINKS[0], "kai": _LINKS[1], "coscheduling": _LINKS[2]}


def SchedulerLink(pod, extra_schedulers=None):
    """(backend, storage key, group name) as the pod's own scheduler reads it.

    backend is None when no scheduler of this server is addressed; key and name are None
    when the pod names no group its scheduler reads (it is then a pod on its own)."""
    names = dict(SCHEDULER_BACKENDS, **(extra_schedulers or {}))
    backend = names.get(pod["spec"].get("schedulerName") or "default-scheduler")
    if backend is None:
        return None, None, None
    if backend == "native":
        name = (pod["spec"].get("schedulingGroup") or {}).get("podGroupName")
        return ("native", PODGROUP.key, name) if name else ("native", None, None)
    key, where, link = _BACKEND_LINK[backend]
    name = (pod["metadata"].get(where) or {}).get(link)
    return (backend, key, name) if name else (backend, None, None)


def _GroupLink(pod):
    """(storage key, PodGroup name) the pod names, or (None, None)."""
    name = (pod["spec"].get("schedulingGroup") or {}).get("podGroupName")
    if name:
        return PODGROUP.key, name
    meta = pod["metadata"]
    for key, where, link in _LINKS:
        name = (meta.get(where) or {}).get(link)
        if name:
            return key, name
    return None, None
NODE = "apiserver-test-node"
ALL = ("deployment", "replicaset", "scheduler", "gc", "podgroup", "namespace", "kubelet")
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def TemplateHash(template, collision_count=0):
    """FNV-1a (32 bit) over canonical JSON of the template, encoded like kube's
    SafeEncodeString of the decimal value. Stable, but not kube's exact value."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in str(h))


def _ControllerUid(obj):
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("uid")
    return None


def _Active(pod):
    return not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _Ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


# The condition types kube's deployment controller sets (calculateStatus and
# syncRolloutStatus): any other type, e.g. wasd's GangScheduled, is someone else's.
DEPLOYMENT_CONDITIONS = ("Available", "Progressing", "ReplicaFailure")


def _MergeConditions(current, owned):
    """The controller's `owned` conditions over `current`, as calculateStatus does: it starts
    from the Deployment's conditions and sets its own types, so every other type is kept, in
    place (a stable order, so an unchanged status is not written again)."""
    by_type = {c["type"]: c for c in owned}
    out = []
    for c in current:
        if c.get("type") in by_type:
            out.append(by_type.pop(c["type"]))
        elif c.get("type") not in DEPLOYMENT_CONDITIONS:
            out.append(c)
    return out + [c for c in owned if c["type"] in by_type]


def _Resolve(value, total, round_up):
    if isinstance(value, str) and value.endswith("%"):
        v = int(value[:-1]) * total / 100.0
        return int(math.ceil(v) if round_up else math.floor(v))
    return int(value or 0)


class Controllers:
    def __init__(self, api, audit, enabled=ALL, resync=0.5, gang_scheduler=False, gang_rules=(),
                 kai_staleness_grace=60.0, kai_version=(0, 15, 0), ignores_groups=False):
        self.api = api
        # --scheduler-ignores-groups: a scheduler that does not hold a pod whose group is
        # missing (a kube-scheduler profile without the gang plugin, a Volcano agent
        # scheduler): such native, volcano and kai pods are bound anyway.
        self.ignores_groups = ignores_groups
        # More schedulerName -> backend pairs (--scheduler-name NAME=BACKEND), e.g. a
        # coscheduling scheduler under another name.
        self.extra_schedulers = {}
        # --gang-scheduler: scheduler.py places pods on the Node objects, gangs by quorum;
        # with rules (gangrules.py) for the backends in gang_rules.
        self.gang = None
        if gang_scheduler:
            from .scheduler import GangScheduler
            self.gang = GangScheduler(self, gang_rules, kai_staleness_grace, kai_version)
        self.audit = audit
        self.enabled = set(enabled)
        self.resync = resync
        self.wake = threading.Event()
        self.stop = threading.Event()
        self.failures = {}  # rs uid -> time of last failed pod create (backoff)
        self.thread = threading.Thread(target=self._Run, name="controllers", daemon=True)
        api.on_change.append(lambda key: self.wake.set())

    def Start(self):
        if self.gang is not None:
            self.gang.Start()
        self.thread.start()

    def Stop(self):
        self.stop.set()
        self.wake.set()
        self.thread.join(timeout=5)

    def _Run(self):
        while not self.stop.is_set():
            self.wake.wait(self.resync)
            self.wake.clear()
            try:
                self.Pass()
            except Exception as e:  # a controller bug must not kill the server
                import traceback
                self.api.Log("controller pass failed: " + traceback.format_exc())

    def Pass(self):
        for name, fn in (("namespace", self._Namespaces), ("gc", self._Gc),
                         ("deployment", self._Deployments), ("replicaset", self._ReplicaSets),
                         ("scheduler", self.gang.Pass if self.gang else self._Scheduler),
                         ("podgroup", self._PodGroups),
                         ("kubelet", self._Kubelet)):
            if name in self.enabled:
                fn()

    # ------------------------------------------------------------ client helpers

    def _Ctx(self, who, user=None):
        if user:  # a component that is not a kube-system service account (e.g. kai-scheduler)
            return Context({"username": user, "groups": ["system:authenticated"]},
                           field_validation="Ignore", internal=True)
        return Context({"username": f"system:serviceaccount:kube-system:{who}",
                        "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system",
                                   "system:authenticated"]},
                       field_validation="Ignore", internal=True)

    def _Do(self, who, method, res, ns, name, fn, body=None, sub="", user=None):
        ctx = self._Ctx(who, user)
        path = res.prefix(ns) + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")
        code = 500
        try:
            out = fn(ctx)
            code = 201 if method == "POST" else 200
            return out
        except ApiError as e:
            code = e.code
            raise
        finally:
            self.audit({"method": method, "path": path, "query": {}, "user": ctx.user["username"],
                        "status": code, "source": "controller", "body": body,
                        "webhooks": ctx.webhooks_called})

    @staticmethod
    def _Served(res):
        """The view a controller writes a multi-version resource through: the preferred
        served version (scheduling.k8s.io v1, else v1beta1), as a client that discovered it."""
        if res.group == registry.SCHEDULING_GROUP and res.plural in registry.SCHEDULING_VERSIONED:
            for v in ("v1", "v1beta1"):
                r = registry.Find(res.group, v, res.plural)
                if r is not None:
                    return r
        return res

    def _Update(self, who, res, obj, sub=""):
        # An object read from the store carries the version it was last written through;
        # this write goes through res (one storage, several served versions).
        res = self._Served(res)
        obj = dict(obj, apiVersion=res.api_version)
        m = obj["metadata"]
        return self._Do(who, "PUT", res, m.get("namespace"), m["name"],
                        lambda ctx: self.api.Update(res, m.get("namespace"), m["name"], obj, ctx, sub),
                        body=obj, sub=sub)

    def _Delete(self, who, res, obj, policy="Background", user=None):
        res = self._Served(res)
        m = obj["metadata"]
        opts = {"propagationPolicy": policy, "preconditions": {"uid": m["uid"]}}
        try:
            return self._Do(who, "DELETE", res, m.get("namespace"), m["name"],
                            lambda ctx: self.api.Delete(res, m.get("namespace"), m["name"], opts, ctx),
                            body=opts, user=user)
        except ApiError as e:
            if e.code not in (404, 409):
                raise

    def _Create(self, who, res, ns, obj):
        return self._Do(who, "POST", res, ns, "", lambda ctx: self.api.Create(res, ns, obj, ctx), body=obj)

    def _Event(self, obj, res, etype, reason, message, component):
        m = obj["metadata"]
        ev = {"metadata": {"name": f"{m['name']}.{uuid.uuid4().hex[:16]}", "namespace": m.get("namespace")},
              "involvedObject": {"kind": res.kind, "namespace": m.get("namespace"), "name": m["name"],
                                 "uid": m["uid"], "apiVersion": res.api_version,
                                 "resourceVersion": m.get("resourceVersion")},
              "reason": reason, "message": message, "type": etype, "count": 1,
              "source": {"component": component}, "firstTimestamp": Now(), "lastTimestamp": Now(),
              "reportingComponent": component, "reportingInstance": ""}
        try:
            self._Create(component, EVENT, m.get("namespace"), ev)
        except ApiError:
            pass

    def _Try(self, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except ApiError as e:
            if e.code in (404, 409):  # raced with another writer: the next pass retries
                return None
            raise

    # ------------------------------------------------------------ namespaces

    def _Namespaces(self):
        for ns in self.api.store.List(NAMESPACE.key)[0]:
            if not ns["metadata"].get("deletionTimestamp"):
                continue
            name = ns["metadata"]["name"]
            left = False
            for key, obj in self.api.store.AllObjects():
                res = registry.BY_KEY[key]
                if res.namespaced and obj["metadata"].get("namespace") == name:
                    left = True
                    if not obj["metadata"].get("deletionTimestamp"):
                        self._Try(self._Delete, "namespace-controller", res, obj)
            if not left:
                self.api.RemoveNamespace(name)

    # ------------------------------------------------------------ garbage collector

    def _Gc(self):
        objs = self.api.store.AllObjects()
        by_uid = {o["metadata"]["uid"]: (k, o) for k, o in objs}
        dependents = {}
        for key, o in objs:
            for ref in o["metadata"].get("ownerReferences") or []:
                dependents.setdefault(ref.get("uid"), []).append((key, o, ref))
        who = "generic-garbage-collector"
        for key, o in objs:
            refs = o["metadata"].get("ownerReferences") or []
            if not refs or o["metadata"].get("deletionTimestamp"):
                continue
            solid, waiting, dangling = [], [], []
            for ref in refs:
                owner = by_uid.get(ref.get("uid"))
                if owner is None or owner[1]["metadata"]["name"] != ref.get("name"):
                    dangling.append(ref)
                elif owner[1]["metadata"].get("deletionTimestamp") and \
                        "foregroundDeletion" in (owner[1]["metadata"].get("finalizers") or []):
                    waiting.append(ref)
                else:
                    solid.append(ref)
            res = registry.BY_KEY[key]
            if solid and (dangling or waiting):
                new = copy.deepcopy(o)
                new["metadata"]["ownerReferences"] = solid
                self._Try(self._Update, who, res, new)
            elif not solid and waiting:
                self._Try(self._Delete, who, res, o, "Foreground")
            elif not solid:
                self._Try(self._Delete, who, res, o, "Background")
        for key, o in objs:
            meta = o["metadata"]
            fins = meta.get("finalizers") or []
            if not meta.get("deletionTimestamp"):
                continue
            res = registry.BY_KEY[key]
            deps = dependents.get(meta["uid"], [])
            if "orphan" in fins:
                for dkey, d, _ in deps:
                    nd = copy.deepcopy(d)
                    nd["metadata"]["ownerReferences"] = [r for r in d["metadata"]["ownerReferences"]
                                                         if r.get("uid") != meta["uid"]]
                    if not nd["metadata"]["ownerReferences"]:
                        nd["metadata"].pop("ownerReferences")
                    self._Try(self._Update, who, registry.BY_KEY[dkey], nd)
                if not deps:
                    new = copy.deepcopy(o)
                    new["metadata"]["finalizers"] = [f for f in fins if f != "orphan"]
                    self._Try(self._Update, who, res, new)
            elif "foregroundDeletion" in fins:
                blocking = [d for _, d, ref in deps if ref.get("blockOwnerDeletion")]
                if not blocking:
                    new = copy.deepcopy(o)
                    new["metadata"]["finalizers"] = [f for f in fins if f != "foregroundDeletion"]
                    self._Try(self._Update, who, res, new)

    # ------------------------------------------------------------ deployments

    def _Deployments(self):
        all_rs = self.api.store.List(RS.key)[0]
        pods = self.api.store.List(POD.key)[0]
        for d in self.api.store.List(DEPLOY.key)[0]:
            if d["metadata"].get("deletionTimestamp"):
                continue
            owned = [rs for rs in all_rs if _ControllerUid(rs) == d["metadata"]["uid"]]
            try:
                self._Try(self._SyncDeployment, d, owned, pods)
            except ApiError as e:
                # As kube's controller: log, retry on a later pass, and go on with the other
                # Deployments (e.g. a ReplicaSet refused because the annotations it copies
                # from its Deployment are over the size limit).
                self.api.Log(f"deployment {d['metadata']['namespace']}/{d['metadata']['name']}: "
                             f"sync failed: {e.code} {e.message[:300]}")

    def _SyncDeployment(self, d, owned, pods):
        who = "deployment-controller"
        spec = d["spec"]
        ns = d["metadata"]["namespace"]
        template = copy.deepcopy(spec["template"])
        h = TemplateHash(template, (d.get("status") or {}).get("collisionCount", 0))
        new_rs = next((rs for rs in owned if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == h), None)
        old = [rs for rs in owned if rs is not new_rs]
        revs = [int((rs["metadata"].get("annotations") or {}).get(REVISION, "0")) for rs in old]
        max_old = max(revs, default=0)
        replicas = spec.get("replicas", 1)
        strategy = spec.get("strategy") or {}
        surge = unavailable = 0
        if strategy.get("type") != "Recreate":
            ru = strategy.get("rollingUpdate") or {}
            surge = _Resolve(ru.get("maxSurge", "25%"), replicas, True)
            unavailable = _Resolve(ru.get("maxUnavailable", "25%"), replicas, False)
            if surge == 0 and unavailable == 0:
                unavailable = 1
        if spec.get("paused"):
            return self._DeploymentStatus(d, new_rs, owned, unavailable)
        active_old = [rs for rs in old if rs["spec"].get("replicas", 0) > 0]
        if strategy.get("type") == "Recreate":
            for rs in active_old:
                self._ScaleRs(d, rs, 0)
            old_pods = [p for p in pods if _ControllerUid(p) in {rs["metadata"]["uid"] for rs in old}
                        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
            if active_old or old_pods:
                return self._DeploymentStatus(d, new_rs, owned, unavailable)
            target = replicas
        else:
            old_total = sum(rs["spec"].get("replicas", 0) for rs in old)
            cur_new = new_rs["spec"].get("replicas", 0) if new_rs else 0
            if not active_old:
                target = replicas
            else:
                allowed = replicas + surge - old_total - cur_new
                target = min(replicas, cur_new + max(allowed, 0))
        if self.api.in_tree_deployment and intree.Scheduling(d) is not None:
            # KEP-6276: the Deployment's Workload before its ReplicaSets (get-or-create,
            # the template's derived minCount kept in step with the replicas).
            if self._EnsureWorkload(d) is None:
                return self._DeploymentStatus(d, new_rs, owned, unavailable)
        if new_rs is None:
            new_rs = self._CreateRs(d, template, h, max_old + 1, target, surge)
            if new_rs is None:
                return None
        else:
            ann = new_rs["metadata"].get("annotations") or {}
            if int(ann.get(REVISION, "0")) <= max_old:
                nr = copy.deepcopy(new_rs)
                nr["metadata"].setdefault("annotations", {})[REVISION] = str(max_old + 1)
                new_rs = self._Update(who, RS, nr)
            if new_rs["spec"].get("replicas", 0) != target:
                new_rs = self._ScaleRs(d, new_rs, target)
        if strategy.get("type") != "Recreate" and active_old:
            self._ScaleDownOld(d, new_rs, active_old, pods, replicas, unavailable)
        self._Cleanup(d, [rs for rs in old if rs["spec"].get("replicas", 0) == 0])
        return self._DeploymentStatus(d, new_rs, owned + ([new_rs] if new_rs not in owned else []), unavailable)

    def _ScaleDownOld(self, d, new_rs, active_old, pods, replicas, unavailable):
        all_uids = {rs["metadata"]["uid"] for rs in active_old + [new_rs]}
        ready = sum(1 for p in pods if _ControllerUid(p) in all_uids and _Active(p) and _Ready(p))
        can_remove = ready - (replicas - unavailable)
        for rs in sorted(active_old, key=lambda r: r["metadata"]["creationTimestamp"]):
            if can_remove <= 0:
                break
            cur = rs["spec"].get("replicas", 0)
            down = min(cur, can_remove)
            self._ScaleRs(d, rs, cur - down)
            can_remove -= down

    def _CreateRs(self, d, template, h, revision, replicas, surge):
        meta = d["metadata"]
        tmpl = copy.deepcopy(template)
        tmpl.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = h
        sel = copy.deepcopy(d["spec"]["selector"])
        sel.setdefault("matchLabels", {})[HASH_LABEL] = h
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                       if k != "kubectl.kubernetes.io/last-applied-configuration" and k != REVISION}
        annotations.update({REVISION: str(revision),
                            "deployment.kubernetes.io/desired-replicas": str(d["spec"].get("replicas", 1)),
                            "deployment.kubernetes.io/max-replicas": str(d["spec"].get("replicas", 1) + surge)})
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": f"{meta['name']}-{h}", "namespace": meta["namespace"],
                           "labels": dict(tmpl["metadata"]["labels"]), "annotations": annotations,
                           "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                "name": meta["name"], "uid": meta["uid"],
                                                "controller": True, "blockOwnerDeletion": True}]},
              "spec": {"replicas": replicas, "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                       "selector": sel, "template": tmpl}}
        out = self._Create("deployment-controller", RS, meta["namespace"], rs)
        if replicas > 0:
            self._Event(d, DEPLOY, "Normal", "ScalingReplicaSet",
                        f"Scaled up replica set {rs['metadata']['name']} from 0 to {replicas}",
                        "deployment-controller")
        return out

    def _ScaleRs(self, d, rs, n):
        cur = rs["spec"].get("replicas", 0)
        if cur == n:
            return rs
        new = copy.deepcopy(rs)
        new["spec"]["replicas"] = n
        new["metadata"].setdefault("annotations", {})["deployment.kubernetes.io/desired-replicas"] = \
            str(d["spec"].get("replicas", 1))
        out = self._Update("deployment-controller", RS, new)
        word = "up" if n > cur else "down"
        self._Event(d, DEPLOY, "Normal", "ScalingReplicaSet",
                    f"Scaled {word} replica set {rs['metadata']['name']} from {cur} to {n}",
                    "deployment-controller")
        return out

    def _Cleanup(self, d, idle_old):
        limit = d["spec"].get("revisionHistoryLimit", 10)
        idle = [rs for rs in idle_old if (rs.get("status") or {}).get("replicas", 0) == 0]
        idle.sort(key=lambda r: int((r["metadata"].get("annotations") or {}).get(REVISION, "0")))
        for rs in idle[:max(len(idle) - limit, 0)]:
            self._Try(self._Delete, "deployment-controller", RS, rs)

    def _DeploymentStatus(self, d, new_rs, owned, unavailable):
        cur = self.api.store.Get(DEPLOY.key, d["metadata"]["namespace"], d["metadata"]["name"])
        if cur is None or cur["metadata"]["uid"] != d["metadata"]["uid"]:
            return None
        rss = [self.api.store.Get(RS.key, r["metadata"]["namespace"], r["metadata"]["name"]) for r in owned]
        rss = [r for r in rss if r is not None]
        st = lambda r, k: (r.get("status") or {}).get(k, 0)
        replicas = cur["spec"].get("replicas", 1)
        new_name = new_rs["metadata"]["name"] if new_rs else None
        upd = next((st(r, "replicas") for r in rss if r["metadata"]["name"] == new_name), 0)
        total = sum(st(r, "replicas") for r in rss)
        ready = sum(st(r, "readyReplicas") for r in rss)
        avail = sum(st(r, "availableReplicas") for r in rss)
        old_status = cur.get("status") or {}
        conds = {c["type"]: c for c in old_status.get("conditions") or []}
        now = Now()

        def Cond(ctype, status, reason, message):
            prev = conds.get(ctype)
            c = {"type": ctype, "status": status, "lastUpdateTime": now, "lastTransitionTime": now,
                 "reason": reason, "message": message}
            if prev and prev.get("status") == status:
                c["lastTransitionTime"] = prev.get("lastTransitionTime", now)
                if prev.get("reason") == reason and prev.get("message") == message:
                    c["lastUpdateTime"] = prev.get("lastUpdateTime", now)
            return c
        available = avail >= replicas - unavailable
        complete = upd == replicas and total == replicas and avail >= replicas
        owned_conds = [
            Cond("Available", "True" if available else "False",
                 "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                 "Deployment has minimum availability." if available else
                 "Deployment does not have minimum availability."),
            Cond("Progressing", "True",
                 "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
                 f'ReplicaSet "{new_name}" has successfully progressed.' if complete else
                 f'ReplicaSet "{new_name}" is progressing.')]
        status = {"observedGeneration": cur["metadata"].get("generation", 1), "replicas": total,
                  "updatedReplicas": upd, "readyReplicas": ready, "availableReplicas": avail,
                  "unavailableReplicas": max(replicas - avail, 0) if total or replicas else 0,
                  "conditions": _MergeConditions(old_status.get("conditions") or [], owned_conds)}
        for k in ("readyReplicas", "availableReplicas", "unavailableReplicas", "updatedReplicas", "replicas"):
            if status[k] == 0:
                status.pop(k)
        if "collisionCount" in old_status:
            status["collisionCount"] = old_status["collisionCount"]
        new = copy.deepcopy(cur)
        new["status"] = status
        if new_rs is not None:
            rev = (new_rs["metadata"].get("annotations") or {}).get(REVISION)
            if rev:
                new["metadata"].setdefault("annotations", {})[REVISION] = rev
        if new != cur:
            return self._Update("deployment-controller", DEPLOY, new, "status")
        return cur

    # ------------------------------------------------------------ replicasets

    def _ReplicaSets(self):
        pods = self.api.store.List(POD.key)[0]
        for rs in self.api.store.List(RS.key)[0]:
            if rs["metadata"].get("deletionTimestamp"):
                continue
            mine = [p for p in pods if _ControllerUid(p) == rs["metadata"]["uid"] and _Active(p)]
            self._Try(self._SyncRs, rs, mine)

    def _SyncRs(self, rs, mine):
        who = "replicaset-controller"
        meta = rs["metadata"]
        want = rs["spec"].get("replicas", 1)
        diff = want - len(mine)
        podgroup, in_tree = None, False
        if self.api.in_tree_deployment:
            dep = self._DeploymentOf(rs)
            if dep is not None and intree.Scheduling(dep) is not None:
                in_tree = True
                podgroup = self._EnsureRsPodGroup(dep, rs, want)
        if diff > 0 and in_tree and podgroup is None:
            diff = 0  # no PodGroup (yet): no pods; the next pass retries
        if diff > 0 and time.time() - self.failures.get(meta["uid"], 0) > 1.0:
            tmpl = rs["spec"]["template"]
            for _ in range(diff):
                pod = {"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"generateName": f"{meta['name']}-", "namespace": meta["namespace"],
                                    "labels": dict((tmpl.get("metadata") or {}).get("labels") or {}),
                                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                         "name": meta["name"], "uid": meta["uid"],
                                                         "controller": True, "blockOwnerDeletion": True}]},
                       "spec": copy.deepcopy(tmpl.get("spec") or {})}
                if (tmpl.get("metadata") or {}).get("annotations"):
                    pod["metadata"]["annotations"] = dict(tmpl["metadata"]["annotations"])
                if podgroup is not None:
                    intree.LinkPod(pod, podgroup)  # at creation, not on the template
                try:
                    mine.append(self._Create(who, POD, meta["namespace"], pod))
                except ApiError as e:
                    self.failures[meta["uid"]] = time.time()
                    self._Event(rs, RS, "Warning", "FailedCreate", f"Error creating: {e.message}", who)
                    break
        elif diff < 0:
            def Rank(p):
                st = p.get("status") or {}
                return (bool(p["spec"].get("nodeName")), _Ready(p), p["metadata"]["creationTimestamp"])
            for p in sorted(mine, key=Rank)[:-diff]:
                self._Try(self._Delete, who, POD, p)
                mine.remove(p)
        ready = sum(1 for p in mine if _Ready(p))
        labels = (rs["spec"]["template"].get("metadata") or {}).get("labels") or {}
        status = {"replicas": len(mine),
                  "fullyLabeledReplicas": sum(1 for p in mine if all(
                      (p["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())),
                  "readyReplicas": ready, "availableReplicas": ready,
                  "observedGeneration": meta.get("generation", 1)}
        for k in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
            if status[k] == 0:
                status.pop(k)
        cur = self.api.store.Get(RS.key, meta["namespace"], meta["name"])
        if cur is not None and (cur.get("status") or {}) != status:
            new = copy.deepcopy(cur)
            new["status"] = status
            self._Update(who, RS, new, "status")

    # ------------------------------------------------------------ KEP-6276 (--in-tree-deployment)

    def _SchedulingRes(self, plural):
        """The served version the controllers write Workloads/PodGroups in (v1 preferred)."""
        for v in ("v1", "v1beta1"):
            r = registry.Find("scheduling.k8s.io", v, plural)
            if r is not None:
                return r
        return None

    def _DeploymentOf(self, rs):
        uid = _ControllerUid(rs)
        if not uid:
            return None
        for d in self.api.store.List(DEPLOY.key, rs["metadata"]["namespace"])[0]:
            if d["metadata"]["uid"] == uid:
                return d
        return None

    def _EnsureWorkload(self, d):
        """Get-or-create the Deployment's Workload; keeps its template's policy current.
        Returns it, or None when it cannot be written (e.g. not served: retried later)."""
        who = "deployment-controller"
        res = self._SchedulingRes("workloads")
        if res is None:
            self.api.Log(f"deployment {d['metadata']['namespace']}/{d['metadata']['name']}: "
                         "scheduling.k8s.io workloads are not served; no Workload, no pods")
            return None
        want = intree.BuildWorkload(d, res.api_version)
        cur = self.api.store.Get(res.key, d["metadata"]["namespace"], want["metadata"]["name"])
        try:
            if cur is None:
                return self._Create(who, res, d["metadata"]["namespace"], want)
            tmpls = (cur.get("spec") or {}).get("podGroupTemplates") or []
            if tmpls and tmpls[0].get("schedulingPolicy") != want["spec"]["podGroupTemplates"][0]["schedulingPolicy"]:
                new = copy.deepcopy(cur)
                new["spec"]["podGroupTemplates"][0]["schedulingPolicy"] = \
                    want["spec"]["podGroupTemplates"][0]["schedulingPolicy"]
                return self._Update(who, res, new)
            return cur
        except ApiError as e:
            self.api.Log(f"deployment {d['metadata']['namespace']}/{d['metadata']['name']}: "
                         f"Workload {want['metadata']['name']}: {e.code} {e.message[:300]}")
            return None

    def _EnsureRsPodGroup(self, d, rs, replicas):
        """The ReplicaSet's PodGroup before its pods (minCount from the Workload's
        template); deleted at zero replicas. Returns it, or None."""
        who = "deployment-controller"
        res = self._SchedulingRes("podgroups")
        wres = self._SchedulingRes("workloads")
        ns = rs["metadata"]["namespace"]
        h = (rs["metadata"].get("labels") or {}).get(HASH_LABEL, "")
        name = intree.PodGroupName(d, h)
        if res is None or wres is None or not h:
            return None
        cur = self.api.store.Get(res.key, ns, name)
        if replicas <= 0:
            if cur is not None and not cur["metadata"].get("deletionTimestamp"):
                self._Try(self._Delete, who, res, cur)
            return None
        workload = self.api.store.Get(wres.key, ns, intree.WorkloadName(d))
        if workload is None:
            return None
        workload["apiVersion"] = wres.api_version
        want = intree.BuildPodGroup(d, rs, workload, h, res.api_version)
        try:
            if cur is None:
                return self._Create(who, res, ns, want)
            if cur["metadata"].get("deletionTimestamp"):
                return None  # going away (scaled to zero just now): made again once gone
            if cur["spec"].get("schedulingPolicy") != want["spec"]["schedulingPolicy"]:
                new = copy.deepcopy(cur)
                new["spec"]["schedulingPolicy"] = want["spec"]["schedulingPolicy"]
                cur = self._Update(who, res, new)
            cur["apiVersion"] = res.api_version
            return cur
        except ApiError as e:
            self.api.Log(f"replicaset {ns}/{rs['metadata']['name']}: PodGroup {name}: {e.code} {e.message[:300]}")
            return None

    # ------------------------------------------------------------ scheduler + kubelet

    def _Scheduler(self):
        pods = self.api.store.List(POD.key)[0]
        for p in pods:
            st = p.get("status") or {}
            if p["metadata"].get("deletionTimestamp") or st.get("phase") not in (None, "Pending"):
                continue
            if p["spec"].get("schedulingGates"):
                continue
            backend, key, pg_name = SchedulerLink(p, self.extra_schedulers)
            if backend is None:
                continue  # addressed to a scheduler this cluster does not run
            why = self._GangBlocked(p, pods, key, pg_name)
            if why:
                self._Try(self._MarkUnschedulable, p, why)
                continue
            self._Try(self._BindAndRun, p)

    def _GangBlocked(self, pod, pods, key, pg_name):
        """A pod naming a group its own scheduler reads waits for it, and for minCount
        ungated pods of a gang.

        Only the link the pod's scheduler reads counts (SchedulerLink): native pods name
        their group in spec.schedulingGroup, read by default-scheduler; the gang
        schedulers' pods by their link (Volcano and KAI annotations, the coscheduling
        label), with spec.minMember as the gang minimum. A pod addressed to
        default-scheduler that carries only a Volcano annotation is a pod on its own."""
        if not pg_name:
            return None
        ns = pod["metadata"]["namespace"]
        pg = self.api.store.Get(key, ns, pg_name) if key in registry.BY_KEY else None
        if pg is None:
            # Every real scheduler holds such a pod (docs/design.md Q23): kube-scheduler's
            # gang plugin at PreEnqueue (pkg/scheduler/framework/plugins/gangscheduling/
            # gangscheduling.go), Volcano's snapshot skips a job without a PodGroup
            # (pkg/scheduler/cache/cache.go Snapshot), KAI builds its jobs from existing
            # PodGroups only (pkg/scheduler/cache/cluster_info/cluster_info.go
            # snapshotPodGroups), coscheduling rejects it at Permit (pkg/coscheduling/core/
            # core.go). --scheduler-ignores-groups plays one that does not (coscheduling
            # still rejects: it never binds without its group).
            if self.ignores_groups and key != "scheduling.x-k8s.io/podgroups":
                return None
            return f'waiting for PodGroup "{pg_name}" to exist'
        spec = pg.get("spec") or {}
        if key == PODGROUP.key:
            gang = (spec.get("schedulingPolicy") or {}).get("gang")
            need = gang.get("minCount", 1) if isinstance(gang, dict) else 0
        else:
            need = spec.get("minMember", 0) if isinstance(spec.get("minMember"), int) else 0
        if need > 0:
            n = sum(1 for q in pods if q["metadata"].get("namespace") == ns and _Active(q)
                    and not q["spec"].get("schedulingGates") and _GroupLink(q) == (key, pg_name))
            if n < need:
                return f"waiting for {need} pods of gang PodGroup \"{pg_name}\", have {n}"
        return None

    def _MarkUnschedulable(self, p, why):
        st = copy.deepcopy(p.get("status") or {})
        cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": why,
                "lastProbeTime": None, "lastTransitionTime": Now()}
        old = [c for c in st.get("conditions") or [] if c.get("type") == "PodScheduled"]
        if old and old[0].get("reason") == "Unschedulable" and old[0].get("message") == why:
            return
        st["conditions"] = [c for c in st.get("conditions") or [] if c.get("type") != "PodScheduled"] + [cond]
        new = copy.deepcopy(p)
        new["status"] = st
        self._Update("default-scheduler", POD, new, "status")

    def _BindAndRun(self, p, node=NODE):
        """Bind to `node` (the one fake node by default) and report the pod Running and Ready."""
        now = Now()
        new = copy.deepcopy(p)
        new["spec"]["nodeName"] = node
        m = new["metadata"]
        # Whether the group the pod names existed when it was bound (None: it names
        # none), so that a test can check no pod is ever bound before its group.
        key, pg_name = _GroupLink(p)
        group_existed = None
        if pg_name:
            group_existed = key in registry.BY_KEY and \
                self.api.store.Get(key, m["namespace"], pg_name) is not None
        self.audit({"method": "POST", "path": POD.prefix(m["namespace"]) + f"/{m['name']}/binding",
                    "query": {}, "user": "system:serviceaccount:kube-system:default-scheduler",
                    "status": 201, "source": "controller",
                    "body": {"target": {"kind": "Node", "name": node}, "groupExisted": group_existed}})
        new["status"] = {
            "phase": "Running", "qosClass": (p.get("status") or {}).get("qosClass", "BestEffort"),
            "hostIP": "127.0.0.1", "podIP": "10.0.0.1", "startTime": now,
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready",
                                     "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"name": c["name"], "image": c.get("image"), "imageID": "",
                                   "ready": True, "started": True, "restartCount": 0,
                                   "state": {"running": {"startedAt": now}}}
                                  for c in p["spec"].get("containers") or []]}
        with self.api.write_lock:
            cur = self.api.store.Get(POD.key, m["namespace"], m["name"])
            if cur is None or cur["metadata"]["resourceVersion"] != p["metadata"]["resourceVersion"]:
                return
            self.api.store.Put(POD.key, new, "MODIFIED")
        self.api._Changed(POD.key)

    def _Kubelet(self):
        """Removes pods whose termination grace period is over (Api.pod_grace_max > 0)."""
        now = datetime.datetime.now(datetime.timezone.utc)
        for p in self.api.store.List(POD.key)[0]:
            m = p["metadata"]
            ts = m.get("deletionTimestamp")
            if not ts or m.get("finalizers") or not m.get("deletionGracePeriodSeconds"):
                continue
            try:
                at = datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
            except ValueError:
                continue
            if at > now:
                continue  # the next pass (every `resync` seconds) looks again
            self._Try(self._Delete, "kubelet", POD,
                      dict(p, metadata=dict(m, deletionGracePeriodSeconds=0)), "Background")

    # ------------------------------------------------------------ podgroup protection

    def _PodGroups(self):
        pods = self.api.store.List(POD.key)[0]
        used = {(p["metadata"]["namespace"], (p["spec"].get("schedulingGroup") or {}).get("podGroupName"))
                for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")}
        for pg in self.api.store.List(PODGROUP.key)[0]:
            m = pg["metadata"]
            fins = m.get("finalizers") or []
            in_use = (m["namespace"], m["name"]) in used
            new = copy.deepcopy(pg)
            # Stamped at creation (api.py, as kube's PodGroupProtection admission
            # plugin); only removed here, and only from a PodGroup being deleted.
            if not (m.get("deletionTimestamp") and PG_FINALIZER in fins and not in_use):
                continue
            new["metadata"]["finalizers"] = [f for f in fins if f != PG_FINALIZER]
            self._Try(self._Update, "podgroup-protection-controller", PODGROUP, new)
