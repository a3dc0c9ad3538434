"""The gang schedulers' own rules, played by `--gang-scheduler=rules` (or a comma list of
backends): what Volcano, KAI-Scheduler and scheduler-plugins' coscheduling do around
placement, beyond the fit-and-quorum stand-in of scheduler.py. Each rule names the upstream
source it models; the code and words are ours.

* Volcano: the PodGroup webhook (default queue, queue must exist and be Open), the queue
  controller (a new queue is opened), and the enqueue step's cluster-capacity check (the
  `overcommit` plugin). Phases Pending -> Inqueue -> Running stay in scheduler.py.
* KAI: the podgrouper (pkg/podgrouper/pod_controller.go) with `kai.scheduler/skip-podgrouper`
  (honoured from KAI v0.15.0), and the stale-gang eviction action
  (pkg/scheduler/actions/stalegangeviction/stalegangeviction.go with
  pkg/scheduler/api/podgroup_info/job_info.go IsStale).
* Coscheduling (scheduler-plugins pkg/coscheduling/core/core.go PreFilter and Permit,
  pkg/coscheduling/coscheduling.go Permit/Unreserve): the sibling count, the Permit wait of
  `scheduleTimeoutSeconds` and the rejection of the whole group, "PodGroup not found".

Pure helpers at the top (no I/O); the classes write through the controllers' client
(audited, through admission) like the real components write through the API server.
"""
import copy
import re
import time

from .store import ApiError

BACKENDS = ("native", "volcano", "kai", "coscheduling")
VOLCANO_PODGROUPS = "scheduling.volcano.sh/podgroups"
VOLCANO_QUEUES = "scheduling.volcano.sh/queues"
KAI_PODGROUPS = "scheduling.run.ai/podgroups"
COSCHEDULING_PODGROUPS = "scheduling.x-k8s.io/podgroups"
KAI_LINK = "pod-group-name"
KAI_SKIP = "kai.scheduler/skip-podgrouper"
KAI_SCHEDULER = "kai-scheduler"
# The default Permit wait of coscheduling (its plugin argument permitWaitingTimeSeconds).
COSCHEDULING_TIMEOUT = 60
# Volcano's overcommit plugin: the cluster is taken as this many times its allocatable.
VOLCANO_OVERCOMMIT = 1.2
# Volcano's namespace annotation naming the default queue of its PodGroups.
VOLCANO_NS_QUEUE = "scheduling.volcano.sh/queue-name"


def ParseBackends(value):
    """The value of --gang-scheduler: None (off), "" (fit only), "rules" (all four) or a
    comma list -> (enabled, set of backends whose rules are played). ValueError if bad."""
    if value is None:
        return False, set()
    value = value.strip()
    if value == "":
        return True, set()
    if value == "rules":
        return True, set(BACKENDS)
    out = set()
    for b in (x.strip() for x in value.split(",")):
        if b not in BACKENDS:
            raise ValueError(f'unknown backend "{b}" (known: rules, {", ".join(BACKENDS)})')
        out.add(b)
    return True, out


def ParseVersion(text):
    """"0.15.0" or "v0.14.2" -> (0, 15, 0); ValueError when it is not X.Y.Z."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", str(text).strip())
    if not m:
        raise ValueError(f'"{text}" is not a version X.Y.Z')
    return tuple(int(x) for x in m.groups())


_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def ParseDuration(text):
    """A Go duration string ("60s", "1m30s", "-1s", "500ms", "0") in seconds, as KAI reads
    `spec.stalenessGracePeriod`; None when it is not one."""
    s = str(text).strip()
    if not s:
        return None
    sign = -1.0 if s.startswith("-") else 1.0
    s = s.lstrip("+-")
    if s == "0":
        return 0.0
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", s)
    if not parts or "".join(n + u for n, u in parts) != s:
        return None
    return sign * sum(float(n) * _UNITS[u] for n, u in parts)


def MinMember(spec):
    """KAI's spec.minMember: 0 or null mean no gang (a group of one)."""
    v = (spec or {}).get("minMember")
    return v if isinstance(v, int) and v > 0 else 0


def IsStale(min_member, active):
    """KAI's IsStale: some members are active but fewer than minMember (job_info.go)."""
    return min_member > 0 and 0 < active < min_member


def StaleGrace(spec, default_grace):
    """Seconds a stale group is given before its active pods are evicted; negative = never.
    The group's spec.stalenessGracePeriod wins over the scheduler's default."""
    own = (spec or {}).get("stalenessGracePeriod")
    if own not in (None, ""):
        parsed = ParseDuration(own)
        if parsed is not None:
            return parsed
    return default_grace


def KaiOwnGroupName(pod):
    """The group KAI's default podgrouper makes for a pod of a Deployment before KAI's
    per-Deployment grouping: one group per pod, `pg-<pod>-<uid>` (deployment_grouper.go)."""
    m = pod["metadata"]
    return f"pg-{m['name']}-{m['uid']}"


# ---------------------------------------------------------------------------- Volcano


class VolcanoRules:
    """Volcano's PodGroup admission, its queue controller and the overcommit check."""

    def __init__(self, sched):
        self.sched = sched
        self.ctl = sched.ctl
        self.api = sched.api

    def SeedDefaultQueue(self):
        """Volcano creates the `default` queue when it is installed (Open)."""
        from . import registry
        res = registry.BY_KEY.get(VOLCANO_QUEUES)
        if res is None or self.api.store.Get(VOLCANO_QUEUES, "", "default") is not None:
            return
        try:
            self.ctl._Create("volcano-controllers", res, None,
                             {"apiVersion": res.api_version, "kind": "Queue",
                              "metadata": {"name": "default"},
                              "spec": {"weight": 1, "reclaimable": True}})
        except ApiError:
            pass

    def OpenNewQueues(self):
        """Volcano's queue controller: a queue without a state is opened."""
        from . import registry
        res = registry.BY_KEY.get(VOLCANO_QUEUES)
        if res is None:
            return
        for q in self.api.store.List(VOLCANO_QUEUES)[0]:
            if not (q.get("status") or {}).get("state") and not q["metadata"].get("deletionTimestamp"):
                new = copy.deepcopy(q)
                new.setdefault("status", {})["state"] = "Open"
                self.ctl._Try(self.ctl._Update, "volcano-controllers", res, new, "status")

    def Admit(self, res, obj, operation):
        """mutatepodgroup.volcano.sh then validatepodgroup.volcano.sh on CREATE
        (pkg/webhooks/admission/podgroups/{mutate,validate}): an empty spec.queue becomes the
        namespace's queue annotation or `default`; the queue must exist and be Open."""
        if res.key != VOLCANO_PODGROUPS or operation != "CREATE":
            return obj
        spec = obj.setdefault("spec", {})
        if not spec.get("queue"):
            ns = self.api.store.Get("/namespaces", "", obj["metadata"].get("namespace", "")) or {}
            spec["queue"] = (ns.get("metadata", {}).get("annotations") or {}).get(VOLCANO_NS_QUEUE) or "default"
        queue = self.api.store.Get(VOLCANO_QUEUES, "", spec["queue"])
        if queue is None:
            msg = f'unable to find queue: queues.scheduling.volcano.sh "{spec["queue"]}" not found'
        else:
            # A queue not yet given a state is one the queue controller is about to open
            # (OpenNewQueues); here it counts as Open, so that a test need not wait for it.
            state = (queue.get("status") or {}).get("state") or "Open"
            msg = "" if state == "Open" else (
                f"can only submit workload to queue with state `Open`, queue `{spec['queue']}` "
                f"status is `{state}`")
        if msg:
            raise ApiError(400, "", f'admission webhook "validatepodgroup.volcano.sh" denied the request: {msg}')
        return obj

    def OvercommitShort(self, group, wants, nodes, pods, requests_of, resources_of):
        """Volcano's overcommit plugin at enqueue: the cluster's allocatable x 1.2, less what
        bound pods request and what other Inqueue groups reserved (their minResources), must
        hold this group's minResources. Returns the resources that do not fit."""
        total = {}
        for n in nodes:
            for k, v in resources_of((n.get("status") or {}).get("allocatable")).items():
                total[k] = total.get(k, 0) + v
        used = {}
        for p in pods:
            if p["spec"].get("nodeName") and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                for k, v in requests_of(p["spec"]).items():
                    used[k] = used.get(k, 0) + v
        for other in self.api.store.List(VOLCANO_PODGROUPS)[0]:
            if other["metadata"]["uid"] == group["metadata"]["uid"]:
                continue
            if (other.get("status") or {}).get("phase") == "Inqueue":
                for k, v in resources_of((other.get("spec") or {}).get("minResources")).items():
                    used[k] = used.get(k, 0) + v
        return sorted(k for k, v in wants.items() if k != "pods" and
                      total.get(k, 0) * VOLCANO_OVERCOMMIT - used.get(k, 0) < v)


# ---------------------------------------------------------------------------- KAI


class KaiRules:
    """KAI's podgrouper and its stale-gang eviction."""

    def __init__(self, sched, grace, version):
        self.sched = sched
        self.ctl = sched.ctl
        self.api = sched.api
        self.grace = grace
        self.version = version
        self.stale_since = {}  # PodGroup uid -> time.monotonic() when first seen stale

    def _Skipped(self, pod, by_uid):
        """`kai.scheduler/skip-podgrouper: "true"` on the pod or an owner up its chain,
        honoured from v0.15.0 (before, the podgrouper has no such check)."""
        if self.version < (0, 15, 0):
            return False
        obj, seen = pod, 0
        while obj is not None and seen < 8:  # bounded owner walk
            if (obj["metadata"].get("annotations") or {}).get(KAI_SKIP) == "true":
                return True
            ref = next((r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
            obj = by_uid.get(ref.get("uid")) if ref else None
            seen += 1
        return False

    def PodGrouper(self, pods):
        """pod_controller.go: every pod for kai-scheduler is assigned to the group the
        podgrouper computes (created if missing), its `pod-group-name` overwritten, unless
        the pod opts out."""
        from . import registry
        pg_res = registry.BY_KEY.get(KAI_PODGROUPS)
        if pg_res is None:
            return
        by_uid = {}
        for key in ("apps/replicasets", "apps/deployments"):
            for o in self.api.store.List(key)[0]:
                by_uid[o["metadata"]["uid"]] = o
        for p in pods:
            m = p["metadata"]
            if p["spec"].get("schedulerName") != KAI_SCHEDULER or m.get("deletionTimestamp"):
                continue
            if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed") or self._Skipped(p, by_uid):
                continue
            want = KaiOwnGroupName(p)
            if self.api.store.Get(KAI_PODGROUPS, m["namespace"], want) is None:
                group = {"apiVersion": pg_res.api_version, "kind": "PodGroup",
                         "metadata": {"name": want, "namespace": m["namespace"],
                                      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": m["name"],
                                                           "uid": m["uid"]}]},
                         "spec": {"minMember": 1, "queue": "default-queue"}}
                try:
                    self.ctl._Create("kai-podgrouper", pg_res, m["namespace"], group)
                except ApiError as e:
                    if e.code != 409:
                        self.api.Log(f"kai podgrouper: group {want}: {e.code} {e.message}")
                        continue
            if (m.get("annotations") or {}).get(KAI_LINK) != want:
                cur = self.api.store.Get("/pods", m["namespace"], m["name"])
                if cur is None:
                    continue
                new = copy.deepcopy(cur)
                new["metadata"].setdefault("annotations", {})[KAI_LINK] = want
                self.ctl._Try(self.ctl._Update, "kai-podgrouper", registry.BY_KEY["/pods"], new)

    def StaleEviction(self, pods):
        """stalegangeviction.go: a group whose active members are fewer than minMember (but
        not none) for longer than its grace period has ALL its active pods evicted."""
        from . import registry
        now = time.monotonic()
        seen = set()
        for g in self.api.store.List(KAI_PODGROUPS)[0]:
            gm = g["metadata"]
            seen.add(gm["uid"])
            active = [p for p in pods if p["metadata"]["namespace"] == gm["namespace"]
                      and (p["metadata"].get("annotations") or {}).get(KAI_LINK) == gm["name"]
                      and p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")
                      and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
            min_member = MinMember(g.get("spec"))
            if not IsStale(min_member, len(active)):
                self.stale_since.pop(gm["uid"], None)
                continue
            since = self.stale_since.setdefault(gm["uid"], now)
            grace = StaleGrace(g.get("spec"), self.grace)
            if grace < 0 or now - since < grace:
                continue
            self.api.Log(f"kai: stale gang {gm['namespace']}/{gm['name']}: {len(active)} active of "
                         f"minMember {min_member} for {now - since:.1f}s (grace {grace}s): evicting all")
            for p in active:
                self.ctl._Try(self.ctl._Delete, KAI_SCHEDULER, registry.BY_KEY["/pods"], p,
                              user=KAI_SCHEDULER)
            self.stale_since.pop(gm["uid"], None)
        for uid in list(self.stale_since):
            if uid not in seen:
                del self.stale_since[uid]


# ---------------------------------------------------------------------------- coscheduling


class CoschedulingRules:
    """scheduler-plugins' coscheduling: PreFilter's sibling count and Permit's wait."""

    def __init__(self, sched):
        self.sched = sched
        self.waiting = {}  # (namespace, group) -> time.monotonic() the current wait began

    @staticmethod
    def Timeout(group):
        """The group's spec.scheduleTimeoutSeconds, else the plugin default (60 s)."""
        v = (group.get("spec") or {}).get("scheduleTimeoutSeconds")
        return v if isinstance(v, int) and v > 0 else COSCHEDULING_TIMEOUT

    @staticmethod
    def NotFoundMessage():
        return "PodGroup not found"

    @staticmethod
    def SiblingsMessage(pod_name, count, min_member):
        return (f"pre-filter pod {pod_name} cannot find enough sibling pods, current pods number: "
                f"{count}, minMember of group: {min_member}")

    @staticmethod
    def TimeoutMessage(timeout):
        return f"rejected due to timeout after waiting {timeout}s at plugin Coscheduling"

    def Wait(self, ns, name, group):
        """Permit with fewer than minMember assumed: True while the wait lasts; False once
        scheduleTimeoutSeconds are over (the whole group is rejected, and the next attempt
        starts a new wait)."""
        now = time.monotonic()
        since = self.waiting.setdefault((ns, name), now)
        if now - since < self.Timeout(group):
            return True
        self.waiting[(ns, name)] = now
        return False

    def Done(self, ns, name):
        self.waiting.pop((ns, name), None)

    def Forget(self, live):
        """Drops the waits of groups without pending pods any more."""
        for k in [k for k in self.waiting if k not in live]:
            del self.waiting[k]
