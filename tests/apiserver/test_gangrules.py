#!/usr/bin/env python3
"""The backends' own rules played by `--gang-scheduler=rules|<backends>` (gangrules.py):
coscheduling's "PodGroup not found", sibling count, silent Permit wait and whole-group
rejection after scheduleTimeoutSeconds; KAI's stale-gang eviction (grace from the group or
the flag, negative = never, minMember 0 = no gang) and its podgrouper with
skip-podgrouper by version; Volcano's PodGroup webhook (default queue, queue must exist and
be Open), its enqueue overcommit check and a deleted queue; native keeps PreEnqueue's
silence; the flags' parsing."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from apiserver import gangrules  # noqa: E402
from apiserver.harness import ApiServer, TESTS_DIR  # noqa: E402
from lib.wait import wait_for  # noqa: E402

NS = "default"
PODS = "/api/v1/namespaces/default/pods"
NATIVE_PG = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"
COS_PG = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups"
KAI_PG = "/apis/scheduling.run.ai/v2alpha2/namespaces/default/podgroups"
VOLCANO_PG = "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups"
QUEUES = "/apis/scheduling.volcano.sh/v1beta1/queues"


def node(name, cpu):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "spec": {}, "status": {"allocatable": {"cpu": cpu, "pods": "10"}}}


def pod(name, cpu="1", labels=None, annotations=None, scheduler=None, group=None):
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    meta = {"name": name, "namespace": NS}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def cos_pod(name, group, cpu="1"):
    return pod(name, cpu, labels={"scheduling.x-k8s.io/pod-group": group},
               scheduler="scheduler-plugins-scheduler")


def volcano_pod(name, group, cpu="1"):
    return pod(name, cpu, annotations={"scheduling.k8s.io/group-name": group}, scheduler="volcano")


def gated(p):
    p["spec"]["schedulingGates"] = [{"name": "test/hold"}]
    return p


def kai_pod(name, group, skip=True, cpu="1"):
    ann = {"pod-group-name": group}
    if skip:
        ann["kai.scheduler/skip-podgrouper"] = "true"
    return pod(name, cpu, annotations=ann, scheduler="kai-scheduler")


class Base(unittest.TestCase):
    ARGS = []

    def setUp(self):
        self.srv = ApiServer(args=self.ARGS + ["--controllers", "scheduler,podgroup,gc"]).Start()
        self.addCleanup(self.srv.Stop)
        self.sentinels = 0

    def create(self, path, obj, code=201):
        status, _, body = self.srv.Request("POST", path, obj)
        self.assertEqual(status, code, body)
        return body

    def get_pod(self, name):
        return self.srv.Get(f"{PODS}/{name}")

    def bound(self, name):
        p = self.get_pod(name)
        return bool(p and p["spec"].get("nodeName"))

    def scheduled(self, name):
        """The pod's PodScheduled condition (or None)."""
        p = self.get_pod(name)
        return next((c for c in (p.get("status") or {}).get("conditions") or []
                     if c["type"] == "PodScheduled"), None)

    def events(self, name, reason="FailedScheduling"):
        _, _, body = self.srv.Request("GET", f"/api/v1/namespaces/{NS}/events")
        return [e for e in body["items"] if e["involvedObject"]["name"] == name and e["reason"] == reason]

    def passes(self):
        """Returns once the scheduler has made a whole pass that started after the call (as
        test_scheduler.py: two sentinel pods of 1m CPU, one after the other, with no group)."""
        for _ in range(2):
            self.sentinels += 1
            name = f"sentinel-{self.sentinels}"
            self.create(PODS, pod(name, cpu="1m"))
            wait_for(lambda: self.bound(name), what=f"{name} bound")


class FlagsTest(unittest.TestCase):
    def test_parsers(self):
        self.assertEqual(gangrules.ParseBackends(None), (False, set()))
        self.assertEqual(gangrules.ParseBackends(""), (True, set()))
        self.assertEqual(gangrules.ParseBackends("rules"), (True, set(gangrules.BACKENDS)))
        self.assertEqual(gangrules.ParseBackends("kai,volcano"), (True, {"kai", "volcano"}))
        with self.assertRaises(ValueError):
            gangrules.ParseBackends("kai,slurm")
        self.assertEqual(gangrules.ParseVersion("v0.14.2"), (0, 14, 2))
        with self.assertRaises(ValueError):
            gangrules.ParseVersion("0.15")
        for text, secs in (("60s", 60), ("1m30s", 90), ("-1s", -1), ("500ms", 0.5), ("0", 0), ("1h", 3600)):
            self.assertAlmostEqual(gangrules.ParseDuration(text), secs)
        for bad in ("", "60", "1x", "s"):
            self.assertIsNone(gangrules.ParseDuration(bad))
        self.assertEqual(gangrules.StaleGrace({"stalenessGracePeriod": "30s"}, 60), 30)
        self.assertEqual(gangrules.StaleGrace({}, 60), 60)
        self.assertEqual(gangrules.StaleGrace({"stalenessGracePeriod": "junk"}, 60), 60)
        self.assertTrue(gangrules.IsStale(3, 2))
        self.assertFalse(gangrules.IsStale(3, 0))   # nothing active: not stale, just pending
        self.assertFalse(gangrules.IsStale(3, 3))
        self.assertFalse(gangrules.IsStale(gangrules.MinMember({"minMember": 0}), 1))
        self.assertFalse(gangrules.IsStale(gangrules.MinMember({"minMember": None}), 1))

    def test_bad_flags_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, PYTHONPATH=TESTS_DIR)
            for flags, text in ((["--gang-scheduler=slurm"], 'unknown backend "slurm"'),
                                (["--gang-scheduler=kai", "--kai-version", "new"], '"new" is not a version')):
                p = subprocess.run([sys.executable, "-m", "apiserver", "--dir", d, "--max-seconds", "5"] + flags,
                                   cwd=TESTS_DIR, env=env, capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(text, p.stderr)


class CoschedulingTest(Base):
    ARGS = ["--gang-scheduler=coscheduling"]

    def make_then_ungate(self, group):
        """Three members, made gated (they count as siblings, as the pod lister sees them)
        and then released one by one, as wasd does."""
        for i in (1, 2, 3):
            self.create(PODS, gated(cos_pod(f"{group}-{i}", group)))
        for i in (1, 2, 3):
            status, _, body = self.srv.Request("PATCH", f"{PODS}/{group}-{i}", [
                {"op": "remove", "path": "/spec/schedulingGates"}], content_type="application/json-patch+json")
            self.assertEqual(status, 200, body)

    def test_podgroup_not_found_is_rejected(self):
        self.create("/api/v1/nodes", node("n1", "4"))
        self.create(PODS, cos_pod("lost-1", "lost"))
        cond = wait_for(lambda: self.scheduled("lost-1"), what="lost-1 rejected")
        self.assertEqual((cond["status"], cond["reason"], cond["message"]),
                         ("False", "Unschedulable", "PodGroup not found"))
        self.assertEqual(len(self.events("lost-1")), 1)
        self.assertFalse(self.bound("lost-1"))
        # Retried once the group exists.
        self.create(COS_PG, {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                             "metadata": {"name": "lost"}, "spec": {"minMember": 1}})
        wait_for(lambda: self.bound("lost-1"), what="lost-1 bound")

    def test_too_few_siblings(self):
        self.create("/api/v1/nodes", node("n1", "4"))
        self.create(COS_PG, {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                             "metadata": {"name": "few"}, "spec": {"minMember": 3}})
        self.create(PODS, cos_pod("few-1", "few"))
        self.create(PODS, cos_pod("few-2", "few"))
        cond = wait_for(lambda: self.scheduled("few-1"), what="few-1 refused")
        self.assertEqual(cond["message"], "pre-filter pod few-1 cannot find enough sibling pods, "
                                          "current pods number: 2, minMember of group: 3")
        self.create(PODS, cos_pod("few-3", "few"))
        wait_for(lambda: all(self.bound(f"few-{i}") for i in (1, 2, 3)), what="few bound")

    def test_permit_waits_silently_then_binds(self):
        self.create("/api/v1/nodes", node("n1", "2"))
        self.create(COS_PG, {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                             "metadata": {"name": "w"}, "spec": {"minMember": 3, "scheduleTimeoutSeconds": 600}})
        self.make_then_ungate("w")
        # Two fit and wait at Permit for the third: nothing is said (the fit-only model
        # would mark all three Unschedulable at once).
        self.passes()
        self.passes()
        for i in (1, 2, 3):
            self.assertFalse(self.bound(f"w-{i}"))
            # (the SchedulingGated condition stays until the scheduler says something else)
            self.assertEqual(self.scheduled(f"w-{i}")["reason"], "SchedulingGated")
            self.assertEqual(self.events(f"w-{i}"), [])
        self.create("/api/v1/nodes", node("n2", "2"))
        wait_for(lambda: all(self.bound(f"w-{i}") for i in (1, 2, 3)), what="w bound")

    def test_permit_timeout_rejects_the_whole_group(self):
        self.create("/api/v1/nodes", node("n1", "2"))
        self.create(COS_PG, {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                             "metadata": {"name": "t"}, "spec": {"minMember": 3, "scheduleTimeoutSeconds": 1}})
        self.make_then_ungate("t")
        for i in (1, 2, 3):
            cond = wait_for(lambda: (lambda c: c if c and c["reason"] == "Unschedulable" else None)(
                self.scheduled(f"t-{i}")), what=f"t-{i} rejected")
            self.assertEqual((cond["reason"], cond["message"]),
                             ("Unschedulable", "rejected due to timeout after waiting 1s at plugin Coscheduling"))
            self.assertFalse(self.bound(f"t-{i}"))
        # Retried later: with room, the group binds whole.
        self.create("/api/v1/nodes", node("n2", "2"))
        wait_for(lambda: all(self.bound(f"t-{i}") for i in (1, 2, 3)), what="t bound")


class KaiTest(Base):
    ARGS = ["--gang-scheduler=kai", "--kai-staleness-grace", "1"]

    def kai_group(self, name, min_member, grace=None):
        spec = {"queue": "q"} if min_member is None else {"minMember": min_member, "queue": "q"}
        if grace is not None:
            spec["stalenessGracePeriod"] = grace
        self.create(KAI_PG, {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                             "metadata": {"name": name}, "spec": spec})

    def test_stale_gang_eviction(self):
        self.create("/api/v1/nodes", node("n1", "16"))
        self.kai_group("evict", 2)             # the flag's grace (1 s)
        self.kai_group("never", 2, "-1s")      # negative: never evicted
        # no minMember: no gang, never stale (0 is refused by KAI's CRD, minimum 1)
        self.kai_group("nogang", None)
        for g, n in (("evict", 2), ("never", 2), ("nogang", 2)):
            for i in range(1, n + 1):
                self.create(PODS, kai_pod(f"{g}-{i}", g))
        for g in ("evict", "never", "nogang"):
            wait_for(lambda: self.bound(f"{g}-1") and self.bound(f"{g}-2"), what=f"{g} bound")
        seq = self.srv.LastSeq()
        # One member of each gang goes away: two are stale, one is no gang.
        for g in ("nogang", "never", "evict"):
            status, _, body = self.srv.Request("DELETE", f"{PODS}/{g}-2")
            self.assertEqual(status, 200, body)
        wait_for(lambda: self.get_pod("evict-1") is None, what="evict-1 evicted")
        evictions = [e for e in self.srv.Audit(since=seq, methods=("DELETE",)) if e["user"] == "kai-scheduler"]
        self.assertEqual([e["path"] for e in evictions], [f"{PODS}/evict-1"])
        self.assertEqual(evictions[0]["status"], 200)
        # "never" was broken before "evict" and is still there, as is the non-gang.
        self.assertTrue(self.bound("never-1"))
        self.assertTrue(self.bound("nogang-1"))

    def test_group_grace_overrides_flag(self):
        self.create("/api/v1/nodes", node("n1", "16"))
        self.kai_group("slow", 2, "1h")
        self.kai_group("fast", 2, "0s")
        for g in ("slow", "fast"):
            for i in (1, 2):
                self.create(PODS, kai_pod(f"{g}-{i}", g))
        for g in ("slow", "fast"):
            wait_for(lambda: self.bound(f"{g}-1") and self.bound(f"{g}-2"), what=f"{g} bound")
        for g in ("slow", "fast"):
            self.srv.Request("DELETE", f"{PODS}/{g}-2")
        wait_for(lambda: self.get_pod("fast-1") is None, what="fast-1 evicted")
        self.passes()
        self.passes()  # more than the flag's 1 s is not promised; the group's 1 h holds anyway
        self.assertTrue(self.bound("slow-1"))

    def test_podgrouper_honours_skip(self):
        self.create("/api/v1/nodes", node("n1", "16"))
        self.kai_group("mine", 1)
        self.create(PODS, kai_pod("kept", "mine", skip=True))
        made = self.create(PODS, kai_pod("taken", "mine", skip=False))
        own = f"pg-taken-{made['metadata']['uid']}"
        wait_for(lambda: (self.get_pod("taken")["metadata"].get("annotations") or {}).get("pod-group-name") == own,
                 what="taken relinked")
        group = self.srv.Get(f"{KAI_PG}/{own}")
        self.assertEqual(group["spec"]["minMember"], 1)
        wait_for(lambda: self.bound("kept") and self.bound("taken"), what="bound")
        self.assertEqual(self.get_pod("kept")["metadata"]["annotations"]["pod-group-name"], "mine")
        writes = self.srv.Audit(methods=("PUT",), path="/pods/taken")
        self.assertTrue(writes and writes[0]["user"].endswith(":kai-podgrouper"), writes)


class OldKaiTest(Base):
    ARGS = ["--gang-scheduler=kai", "--kai-version", "0.14.1"]

    def test_podgrouper_ignores_skip_before_0_15(self):
        self.kai_group = KaiTest.kai_group.__get__(self)
        self.create("/api/v1/nodes", node("n1", "16"))
        self.kai_group("mine", 1)
        made = self.create(PODS, kai_pod("p", "mine", skip=True))
        own = f"pg-p-{made['metadata']['uid']}"
        wait_for(lambda: self.get_pod("p")["metadata"]["annotations"]["pod-group-name"] == own, what="relinked")
        # a pod not for kai-scheduler is left alone
        other = kai_pod("other", "mine", skip=False)
        other["spec"].pop("schedulerName")
        self.create(PODS, other)
        self.passes()
        self.assertEqual(self.get_pod("other")["metadata"]["annotations"]["pod-group-name"], "mine")


class VolcanoTest(Base):
    ARGS = ["--gang-scheduler=volcano"]

    def vgroup(self, name, spec, code=201):
        return self.create(VOLCANO_PG, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                                        "metadata": {"name": name}, "spec": spec}, code)

    def test_webhook_queue_rules(self):
        self.assertEqual(self.srv.Get(f"{QUEUES}/default")["status"]["state"], "Open")
        made = self.vgroup("plain", {"minMember": 1})
        self.assertEqual(made["spec"]["queue"], "default")
        out = self.vgroup("nowhere", {"minMember": 1, "queue": "ghost"}, 400)
        self.assertEqual(out["message"], 'admission webhook "validatepodgroup.volcano.sh" denied the request: '
                                         'unable to find queue: queues.scheduling.volcano.sh "ghost" not found')
        self.create(QUEUES, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                             "metadata": {"name": "shut"}, "spec": {"weight": 1}})
        q = wait_for(lambda: (lambda q: q if (q.get("status") or {}).get("state") == "Open" else None)(
            self.srv.Get(f"{QUEUES}/shut")), what="queue opened by the queue controller")
        q["status"]["state"] = "Closed"
        status, _, body = self.srv.Request("PUT", f"{QUEUES}/shut/status", q)
        self.assertEqual(status, 200, body)
        out = self.vgroup("closed", {"minMember": 1, "queue": "shut"}, 400)
        self.assertIn("can only submit workload to queue with state `Open`, queue `shut` status is `Closed`",
                      out["message"])

    def test_overcommit_and_deleted_queue(self):
        self.create("/api/v1/nodes", node("n1", "2"))
        self.vgroup("huge", {"minMember": 1, "minResources": {"cpu": "3"}})   # 2 x 1.2 < 3
        self.vgroup("fits", {"minMember": 1, "minResources": {"cpu": "2"}})
        self.create(PODS, volcano_pod("huge-1", "huge"))
        self.create(PODS, volcano_pod("fits-1", "fits"))
        wait_for(lambda: self.bound("fits-1"), what="fits-1 bound")
        st = wait_for(lambda: (lambda s: s if s.get("phase") == "Pending" else None)(
            self.srv.Get(f"{VOLCANO_PG}/huge").get("status") or {}), what="huge Pending")
        self.assertEqual(st["conditions"][0]["reason"], "NotEnoughResources")
        ev = wait_for(lambda: self.events("huge", "Unschedulable"), what="overcommit Event")
        self.assertEqual((ev[0]["type"], ev[0]["message"], ev[0]["source"]["component"]),
                         ("Normal", "resource in cluster is overused", "volcano"))
        self.assertFalse(self.bound("huge-1"))
        # A queue deleted after its group was admitted: the group stays Pending.
        self.create(QUEUES, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                             "metadata": {"name": "brief"}, "spec": {"weight": 1}})
        self.vgroup("orphan", {"minMember": 1, "queue": "brief"})
        status, _, body = self.srv.Request("DELETE", f"{QUEUES}/brief")
        self.assertEqual(status, 200, body)
        self.create(PODS, volcano_pod("orphan-1", "orphan", cpu="1m"))
        wait_for(lambda: (self.srv.Get(f"{VOLCANO_PG}/orphan").get("status") or {}).get("phase") == "Pending",
                 what="orphan Pending")
        self.passes()
        self.assertFalse(self.bound("orphan-1"))


class NativeRulesTest(Base):
    ARGS = ["--gang-scheduler=rules"]

    def test_missing_podgroup_and_quorum_stay_silent(self):
        self.create("/api/v1/nodes", node("n1", "4"))
        self.create(PODS, pod("n-1", group="n"))
        self.create(PODS, pod("n-2", group="n"))
        self.passes()
        self.assertFalse(self.bound("n-1"))
        self.assertIsNone(self.scheduled("n-1"))  # PreEnqueue: no condition, no Event
        self.create(NATIVE_PG, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                "metadata": {"name": "n"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}})
        self.passes()
        self.assertFalse(self.bound("n-1"))
        self.assertIsNone(self.scheduled("n-1"))
        self.create(PODS, pod("n-3", group="n"))
        wait_for(lambda: all(self.bound(f"n-{i}") for i in (1, 2, 3)), what="n bound")


if __name__ == "__main__":
    unittest.main(verbosity=2)
