"""An opt-in gang scheduler for the test API server (`--gang-scheduler`).

It replaces the trivial scheduler (every ungated pod bound to one fake node) with one that
places pods on the Node objects the test created, honouring what `wasd explain`'s fit
preview models, so that a test can produce each reason of the gang doctor:

* A pod is a candidate when it is Pending, not being deleted, not bound and has no
  scheduling gate. Its gang is the group object it names, per backend: native
  `spec.schedulingGroup.podGroupName`; volcano annotation `scheduling.k8s.io/group-name`;
  kai annotation `pod-group-name`; coscheduling label `scheduling.x-k8s.io/pod-group`.
  A pod naming no group is a gang of one.
* The gang minimum is the group object's (native `spec.schedulingPolicy.gang.minCount`,
  basic → 1; the others `spec.minMember`); the topology key is native
  `spec.schedulingConstraints.topology[0].key`. A group object this server does not
  store, or that does not exist (yet), holds its pods without a word — like
  kube-scheduler's PreEnqueue, which neither conditions nor events a waiting gang.
* Fewer than minCount members bound or ungated: the gang waits, silently (the same
  PreEnqueue gap, k/k#141900).
* Otherwise the pending members are placed greedily (in name order, each on the node with
  the most free room for it) on the nodes that fit: not `spec.unschedulable`, every
  nodeSelector label, every NoSchedule/NoExecute taint tolerated, and free capacity
  (allocatable − requests of bound non-terminal pods; a node without `pods` in allocatable
  is not limited by it) covering the pod's requests (containers summed, init containers
  at least, overhead added). With a topology key all members go to one domain: the one
  of members already bound, else the first (by name) where the quorum fits.
* Volcano groups first go through Volcano's enqueue step (its `enqueue` action with the
  `proportion` plugin's check): a group in phase "" or Pending moves to Inqueue unless it
  sets `spec.minResources` and its queue (`spec.queue`, else
  `default`; a Queue object, see crds.py) is not Open (`status.state`; unset = Open, as
  Volcano's queue controller sets it) or its `spec.capability` cannot hold the group's
  minResources on top of those of the queue's Inqueue/Running groups. A group without
  minResources is enqueued whatever its queue, as Volcano does, but nothing of a group in a
  queue that is not Open is placed (the `proportion` plugin's allocate check): it gets the
  condition below and stays Inqueue. A group left Pending gets
  phase Pending and Volcano's condition `Unschedulable` True (reason `NotEnoughResources`,
  `N/N tasks in gang unschedulable: pod group is not ready, N Pending, M minAvailable`), its
  pending members PodScheduled False/Unschedulable with the part after the colon, and, for
  capacity, a Normal Event `Unschedulable` on the PodGroup from `volcano` (`queue resource
  quota insufficient: insufficient cpu`, once when the group is first held); nothing binds. A queue that is not stored is an
  open one (this server has no Volcano webhook refusing a PodGroup for a missing queue).
  A Volcano group whose quorum is placed gets phase Running and `status.running`.
* If bound + placed reaches minCount, every placement is committed: `spec.nodeName`,
  phase Running, Ready (audited as a `binding` POST), and for native the PodGroup's
  `PodGroupInitiallyScheduled` condition True (reason `Scheduled`). After that, new
  members of a placed gang are placed one by one when they fit.
* Otherwise nothing binds: every pending member gets PodScheduled False/Unschedulable with
  the message below and a `FailedScheduling` Warning Event from `default-scheduler`
  (one per change of the message, never one per pass), and a native PodGroup not placed
  yet gets `PodGroupInitiallyScheduled` False/Unschedulable with the same message:
  `0/N nodes are available: gang "<group>" needs M pods, room for K; 2 Insufficient
  nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector.` (the counts
  phrase kube's; the sentence is ours).
"""
import copy
import fractions
import re

from . import gangrules
from . import registry
from .api import Now

NODE = registry.BY_KEY["/nodes"]
VOLCANO_PODGROUPS = "scheduling.volcano.sh/podgroups"
VOLCANO_QUEUES = "scheduling.volcano.sh/queues"
POD = registry.BY_KEY["/pods"]

# backend name → (group object store key, how a pod names its group)
_LINKS = (
    ("native", "scheduling.k8s.io/podgroups", lambda p: (p["spec"].get("schedulingGroup") or {}).get("podGroupName")),
    ("volcano", "scheduling.volcano.sh/podgroups",
     lambda p: (p["metadata"].get("annotations") or {}).get("scheduling.k8s.io/group-name")),
    ("kai", "scheduling.run.ai/podgroups", lambda p: (p["metadata"].get("annotations") or {}).get("pod-group-name")),
    ("coscheduling", "scheduling.x-k8s.io/podgroups",
     lambda p: (p["metadata"].get("labels") or {}).get("scheduling.x-k8s.io/pod-group")),
)
_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": fractions.Fraction(1, 10**9), "u": fractions.Fraction(1, 10**6), "m": fractions.Fraction(1, 1000),
           "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_NO_POD_LIMIT = 10**9


def Quantity(text):
    """A Kubernetes quantity as a Fraction ("500m" → 1/2); None when unparsable."""
    m = re.fullmatch(r"([+-]?(?:\d+\.?\d*|\.\d+))([eE][+-]?\d+|[KMGTPE]i|[numkMGTPE]?)", str(text).strip())
    if not m:
        return None
    value = fractions.Fraction(m.group(1))
    suffix = m.group(2)
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        return value * fractions.Fraction(10) ** int(suffix[1:])
    return value * _SUFFIX[suffix]


def _Resources(rl):
    out = {}
    for k, v in (rl or {}).items():
        q = Quantity(v)
        if q is not None and q > 0:
            out[k] = q
    return out


def Requests(spec):
    total = {}
    for c in spec.get("containers") or []:
        for k, v in _Resources((c.get("resources") or {}).get("requests")).items():
            total[k] = total.get(k, 0) + v
    for c in spec.get("initContainers") or []:
        for k, v in _Resources((c.get("resources") or {}).get("requests")).items():
            total[k] = max(total.get(k, 0), v)
    for k, v in _Resources(spec.get("overhead")).items():
        total[k] = total.get(k, 0) + v
    total["pods"] = 1
    return total


def _Tolerates(tol, taint):
    if tol.get("effect") and tol.get("effect") != taint.get("effect"):
        return False
    if not tol.get("key"):
        return tol.get("operator") == "Exists"
    if tol.get("key") != taint.get("key"):
        return False
    return tol.get("operator") == "Exists" or tol.get("value", "") == taint.get("value", "")


def _Filter(node, spec):
    """Why `spec` may not use `node` (kube's phrases), or None."""
    if (node.get("spec") or {}).get("unschedulable"):
        return "node(s) were unschedulable"
    labels = node["metadata"].get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return "node(s) didn't match Pod's node affinity/selector"
    for t in (node.get("spec") or {}).get("taints") or []:
        if t.get("effect") in ("NoSchedule", "NoExecute") and not any(
                _Tolerates(tol, t) for tol in spec.get("tolerations") or []):
            return "node(s) had untolerated taint {%s: %s}" % (t.get("key"), t.get("value", ""))
    return None


def _Terminal(p):
    return (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class GangScheduler:
    def __init__(self, ctl, rules=(), kai_grace=60.0, kai_version=(0, 15, 0)):
        self.ctl = ctl
        self.api = ctl.api
        # Backends whose own rules are played (gangrules.py); the others get only the
        # fit-and-quorum model below.
        self.rules = set(rules)
        self.volcano = gangrules.VolcanoRules(self) if "volcano" in self.rules else None
        self.kai = gangrules.KaiRules(self, kai_grace, kai_version) if "kai" in self.rules else None
        self.cos = gangrules.CoschedulingRules(self) if "coscheduling" in self.rules else None

    def Start(self):
        if self.volcano is not None:
            self.api.builtin_admission.append(self.volcano.Admit)
            self.volcano.SeedDefaultQueue()

    def _GroupOf(self, pod):
        """The group the pod's own scheduler reads (controllers.SchedulerLink); backend
        None: no scheduler here is addressed."""
        from . import controllers  # controllers imports this module
        return controllers.SchedulerLink(pod, self.ctl.extra_schedulers)

    def _Group(self, key, ns, name):
        if key not in registry.BY_KEY:
            return None
        return self.api.store.Get(key, ns, name)

    @staticmethod
    def _MinAndKey(backend, group):
        spec = group.get("spec") or {}
        if backend == "native":
            gang = (spec.get("schedulingPolicy") or {}).get("gang")
            topo = (spec.get("schedulingConstraints") or {}).get("topology") or []
            key = topo[0].get("key", "") if topo and isinstance(topo[0], dict) else ""
            return (gang.get("minCount", 1) if isinstance(gang, dict) else 1), key
        return spec.get("minMember", 1) or 1, ""

    def Pass(self):
        if self.volcano is not None:
            self.volcano.OpenNewQueues()
        if self.kai is not None:
            self.kai.PodGrouper(self.api.store.List(POD.key)[0])
            self.kai.StaleEviction(self.api.store.List(POD.key)[0])
        pods = self.api.store.List(POD.key)[0]
        self.all_pods = pods
        nodes = self.api.store.List(NODE.key)[0]
        free = {n["metadata"]["name"]: _Resources((n.get("status") or {}).get("allocatable")) for n in nodes}
        for f in free.values():
            f.setdefault("pods", _NO_POD_LIMIT)
        for p in pods:
            node = p["spec"].get("nodeName")
            if node in free and not _Terminal(p):
                for k, v in Requests(p["spec"]).items():
                    free[node][k] = free[node].get(k, 0) - v
        gangs = {}
        for p in pods:
            m = p["metadata"]
            if m.get("deletionTimestamp") or _Terminal(p):
                continue
            backend, key, name = self._GroupOf(p)
            if backend is None:
                continue  # addressed to a scheduler this cluster does not run
            gid = (m["namespace"], key, name) if name else (m["namespace"], None, m["uid"])
            g = gangs.setdefault(gid, {"backend": backend, "bound": [], "pending": [], "gated": 0, "nodes": nodes})
            if p["spec"].get("nodeName"):
                g["bound"].append(p)
            elif p["spec"].get("schedulingGates"):
                g["gated"] += 1
            elif (p.get("status") or {}).get("phase") in (None, "Pending"):
                g["pending"].append(p)
        if self.cos is not None:  # a wait ends with its gang (all its pods gone)
            self.cos.Forget({(ns, name) for (ns, key, name), g in gangs.items() if g["pending"]})
        for (ns, key, name), g in sorted(gangs.items(), key=lambda kv: (kv[0][0], kv[0][2] or "")):
            if g["pending"]:
                self._Schedule(ns, key, name, g, nodes, free)

    def _Schedule(self, ns, key, name, g, nodes, free):
        group = None
        min_count, topo_key = 1, ""
        cos = self.cos if g["backend"] == "coscheduling" else None
        if key is not None:
            group = self._Group(key, ns, name)
            if cos is not None and group is None:
                # coscheduling's Permit: a pod naming a PodGroup that is not found is rejected.
                for p in g["pending"]:
                    self._Unschedulable(p, gangrules.CoschedulingRules.NotFoundMessage())
                return
            if group is None and self.ctl.ignores_groups:
                pass  # --scheduler-ignores-groups: a scheduler that does not hold; a gang of one
            elif group is None or group["metadata"].get("deletionTimestamp"):
                # The real schedulers hold it (docs/design.md Q23): kube-scheduler's
                # gangscheduling PreEnqueue ("waiting for pod's pod group ... to appear"),
                # Volcano's Snapshot skipping a job without a PodGroup
                # (pkg/scheduler/cache/cache.go), KAI's snapshotPodGroups
                # (pkg/scheduler/cache/cluster_info/cluster_info.go).
                return  # PreEnqueue: waits without a word
            if group is not None:
                min_count, topo_key = self._MinAndKey(g["backend"], group)
            if g["backend"] == "volcano" and group is not None and not self._VolcanoEnqueue(ns, group, g, min_count):
                return
            if cos is not None:
                # coscheduling's PreFilter: every pod carrying the group's label counts
                # (gated and bound ones too); fewer than minMember -> each pod is refused.
                siblings = len(g["bound"]) + len(g["pending"]) + g["gated"]
                if siblings < min_count:
                    for p in g["pending"]:
                        self._Unschedulable(p, gangrules.CoschedulingRules.SiblingsMessage(
                            p["metadata"]["name"], siblings, min_count))
                    return
        bound, pending = g["bound"], sorted(g["pending"], key=lambda p: p["metadata"]["name"])
        placed_before = len(bound) >= min_count
        if len(bound) + len(pending) < min_count:
            return  # quorum not reached: PreEnqueue, silently
        domains = [None]
        if topo_key:
            bound_domains = {(self._NodeLabels(nodes, p["spec"]["nodeName"]).get(topo_key)) for p in bound}
            bound_domains.discard(None)
            if bound_domains:
                domains = sorted(bound_domains)[:1]
            else:
                domains = sorted({(n["metadata"].get("labels") or {}).get(topo_key) for n in nodes} - {None})
        best_plan, best_why = None, {}
        for dom in domains:
            plan, why = self._Place(pending, nodes, free, topo_key, dom)
            if placed_before or len(bound) + len(plan) >= min_count:
                if plan:
                    self._Commit(plan, free, g["backend"], group)
                if cos is not None:
                    cos.Done(ns, name)
                placed = {q["metadata"]["uid"] for q, _ in plan}
                pending = [p for p in pending if p["metadata"]["uid"] not in placed]
                if not pending:
                    return
                placed_before, best_plan, best_why = True, [], why
                break
            if best_plan is None or len(plan) > len(best_plan):
                best_plan, best_why = plan, why
        why, room = best_why, len(best_plan or [])
        if cos is not None and room > 0 and not placed_before:
            # coscheduling's Permit: the members that fit wait (assumed) for the others up
            # to scheduleTimeoutSeconds, silently; then the whole group is rejected.
            if cos.Wait(ns, name, group):
                return
            msg = gangrules.CoschedulingRules.TimeoutMessage(cos.Timeout(group))
            for p in pending:
                self._Unschedulable(p, msg)
            return
        msg = (f"0/{len(nodes)} nodes are available: gang \"{name or pending[0]['metadata']['name']}\" needs "
               f"{min_count if not placed_before else len(pending)} pods, room for {room}")
        if why:
            msg += "; " + ", ".join(f"{n} {r}" for r, n in sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))) + "."
        for p in pending:
            self._Unschedulable(p, msg)
        if g["backend"] == "native" and group is not None and not placed_before:
            self._GroupCondition(group, "False", "Unschedulable", msg)

    def _VolcanoEnqueue(self, ns, group, g, min_count):
        """Volcano's enqueue step, then its allocate step's queue check, for `group`: True
        when its pending members may be placed now."""
        st = group.get("status") or {}
        spec = group.get("spec") or {}
        queue_name = spec.get("queue") or "default"
        queue = self._Group(VOLCANO_QUEUES, None, queue_name) if VOLCANO_QUEUES in registry.BY_KEY else None
        state = ((queue or {}).get("status") or {}).get("state") or "Open"
        if self.volcano is not None and queue is None:
            # Volcano's enqueue action skips a job whose queue is not found (deleted after
            # its PodGroup was admitted): it stays Pending and nothing of it is placed.
            self._VolcanoHold(group, g, min_count, "Pending", None)
            return False
        if st.get("phase") in (None, "", "Pending"):
            wants = _Resources(spec.get("minResources"))
            short = []
            if wants and self.volcano is not None and self.volcano.OvercommitShort(
                    group, wants, g["nodes"], self.all_pods, Requests, _Resources):
                # the overcommit plugin: cluster allocatable x 1.2, less what bound pods use
                # and Inqueue groups reserved, must hold minResources (Normal Event once)
                self._VolcanoHold(group, g, min_count, "Pending",
                                  "resource in cluster is overused" if st.get("phase") != "Pending" else None)
                return False
            if wants and queue is not None:
                if state != "Open":
                    short = None  # a queue that is not open admits nothing with minResources
                else:
                    short = self._VolcanoShort(queue_name, wants, _Resources((queue.get("spec") or {}).get("capability")))
            if short != []:
                self._VolcanoHold(group, g, min_count, "Pending",
                                  "queue resource quota insufficient: insufficient " + ", ".join(short)
                                  if short and st.get("phase") != "Pending" else None)
                return False
            self._VolcanoStatus(group, {"phase": "Inqueue"})
            group = self._Group(VOLCANO_PODGROUPS, ns, group["metadata"]["name"]) or group
        if state != "Open":  # the proportion plugin's queueAllocatable: nothing is allocated
            self._VolcanoHold(group, g, min_count, None, None)
            return False
        return True

    def _VolcanoShort(self, queue_name, wants, capability):
        """The resources of `capability` that the queue's Inqueue/Running groups plus `wants` exceed."""
        used = {}
        for other in self.api.store.List(VOLCANO_PODGROUPS)[0]:
            ospec, ost = other.get("spec") or {}, other.get("status") or {}
            if (ospec.get("queue") or "default") != queue_name or ost.get("phase") not in ("Inqueue", "Running"):
                continue
            for k, v in _Resources(ospec.get("minResources")).items():
                used[k] = used.get(k, 0) + v
        return sorted(k for k, v in wants.items() if k in capability and used.get(k, 0) + v > capability[k])

    def _VolcanoHold(self, group, g, min_count, phase, quota_event):
        """What Volcano writes for a gang it does not place: the PodGroup's Unschedulable
        condition (and `phase`), its pending members' PodScheduled, the quota Event."""
        st = group.get("status") or {}
        n = len(g["pending"]) + len(g["bound"])
        why = f"pod group is not ready, {n} Pending, {min_count} minAvailable"
        cond = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                "message": f"{n}/{n} tasks in gang unschedulable: {why}", "transitionID": "",
                "lastTransitionTime": Now()}
        old = [c for c in st.get("conditions") or [] if c.get("type") == "Unschedulable"]
        if (phase and st.get("phase") != phase) or not old or old[0].get("message") != cond["message"]:
            fields = {"conditions": [c for c in st.get("conditions") or [] if c.get("type") != "Unschedulable"] + [cond]}
            if phase:
                fields["phase"] = phase
            self._VolcanoStatus(group, fields)
            if quota_event:  # once, when the group is first held
                self.ctl._Event(group, registry.BY_KEY[VOLCANO_PODGROUPS], "Normal", "Unschedulable",
                                quota_event, "volcano")
        for p in g["pending"]:
            old = [c for c in (p.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
            if not (old and old[0].get("reason") == "Unschedulable" and old[0].get("message") == why):
                self.ctl._Try(self.ctl._MarkUnschedulable, p, why)

    def _VolcanoStatus(self, group, fields):
        new = copy.deepcopy(group)
        new.setdefault("status", {}).update(fields)
        self.ctl._Try(self.ctl._Update, "volcano", registry.BY_KEY[VOLCANO_PODGROUPS], new, "status")

    @staticmethod
    def _NodeLabels(nodes, name):
        for n in nodes:
            if n["metadata"]["name"] == name:
                return n["metadata"].get("labels") or {}
        return {}

    def _Place(self, pending, nodes, free, topo_key, domain):
        """Greedy placement on a copy of `free`: ([(pod, node)], {reason: count of nodes})."""
        room = {k: dict(v) for k, v in free.items()}
        plan, why = [], {}
        for p in pending:
            req = Requests(p["spec"])
            best, best_score = None, None
            reasons = {}
            for n in nodes:
                nname = n["metadata"]["name"]
                if topo_key and (n["metadata"].get("labels") or {}).get(topo_key) != domain:
                    reasons["node(s) didn't match pod topology"] = reasons.get("node(s) didn't match pod topology", 0) + 1
                    continue
                bad = _Filter(n, p["spec"])
                if bad is None:
                    short = [k for k, v in req.items() if room[nname].get(k, 0) < v]
                    if short:
                        bad = "Insufficient " + short[0]
                if bad:
                    reasons[bad] = reasons.get(bad, 0) + 1
                    continue
                score = sum(room[nname].get(k, 0) / v for k, v in req.items() if k != "pods")
                if best is None or score > best_score:
                    best, best_score = nname, score
            if best is None:
                why = reasons
                continue
            for k, v in req.items():
                room[best][k] = room[best].get(k, 0) - v
            plan.append((p, best))
        return plan, why

    def _Commit(self, plan, free, backend, group):
        for p, node in plan:
            for k, v in Requests(p["spec"]).items():
                free[node][k] = free[node].get(k, 0) - v
            self.ctl._Try(self.ctl._BindAndRun, p, node)
        if backend == "native" and group is not None:
            self._GroupCondition(group, "True", "Scheduled", "")
        if backend == "volcano" and group is not None:
            running = sum(1 for p in self.api.store.List(POD.key)[0]
                          if (p["metadata"].get("annotations") or {}).get("scheduling.k8s.io/group-name")
                          == group["metadata"]["name"] and p["metadata"]["namespace"] == group["metadata"]["namespace"]
                          and p["spec"].get("nodeName") and not _Terminal(p))
            fresh = self._Group(VOLCANO_PODGROUPS, group["metadata"]["namespace"], group["metadata"]["name"])
            if fresh is not None:
                self._VolcanoStatus(fresh, {"phase": "Running", "running": running})

    def _Unschedulable(self, p, msg):
        old = [c for c in (p.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
        if old and old[0].get("reason") == "Unschedulable" and old[0].get("message") == msg:
            return  # said already: one Event per change, not per pass
        self.ctl._Try(self.ctl._MarkUnschedulable, p, msg)
        self.ctl._Event(p, POD, "Warning", "FailedScheduling", msg, "default-scheduler")

    def _GroupCondition(self, group, status, reason, message):
        conds = (group.get("status") or {}).get("conditions") or []
        old = [c for c in conds if c.get("type") == "PodGroupInitiallyScheduled"]
        if old and (old[0].get("status") == "True" or
                    (old[0].get("status") == status and old[0].get("message") == message)):
            return  # terminal once True, as kube's
        new = copy.deepcopy(group)
        cond = {"type": "PodGroupInitiallyScheduled", "status": status, "reason": reason, "message": message,
                "lastTransitionTime": Now()}
        new.setdefault("status", {})["conditions"] = [c for c in conds if c.get("type") != "PodGroupInitiallyScheduled"] + [cond]
        res = registry.BY_KEY["scheduling.k8s.io/podgroups"]
        self.ctl._Try(self.ctl._Update, "default-scheduler", res, new, "status")
