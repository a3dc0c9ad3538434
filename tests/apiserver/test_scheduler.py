#!/usr/bin/env python3
"""The test API server's gang scheduler (`--gang-scheduler`, scheduler.py), driven with
plain pods and PodGroups (no wasd): quorum waits silently, a gang binds only whole, node
filters (nodeSelector, taints and tolerations, unschedulable), requests against
allocatable minus bound pods, the topology key, FailedScheduling once per change, the
PodGroup condition (terminal once True), and the quantity parser."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from apiserver import registry  # noqa: E402
from apiserver.harness import ApiServer  # noqa: E402
from apiserver.scheduler import Quantity  # noqa: E402
from lib.wait import wait_for  # noqa: E402

NS = "default"
PG = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"
PODS = "/api/v1/namespaces/default/pods"
ZONE = "topology.kubernetes.io/zone"


def node(name, zone, cpu, extra_spec=None, labels=None):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict({ZONE: zone}, **(labels or {}))},
            "spec": extra_spec or {}, "status": {"allocatable": {"cpu": cpu, "pods": "10"}}}


def pod(name, group=None, cpu="1", spec=None):
    s = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if group:
        s["schedulingGroup"] = {"podGroupName": group}
    s.update(spec or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": s}


class GenericWorkloadOffTest(unittest.TestCase):
    """--generic-workload off plays kube-apiserver 1.37 as installed: no Workload API, and
    spec.schedulingGroup dropped from a new pod after admission, so nothing holds it."""

    def test_link_dropped_and_api_not_served(self):
        with ApiServer(args=["--generic-workload", "off", "--controllers", "scheduler"]) as srv:
            code, _, _ = srv.Request("GET", "/apis/scheduling.k8s.io/v1beta1")
            self.assertEqual(code, 404)
            code, _, body = srv.Request("POST", PODS, pod("p", "g"))
            self.assertEqual(code, 201, body)
            self.assertNotIn("schedulingGroup", body["spec"])
            wait_for(lambda: srv.Get(f"{PODS}/p")["spec"].get("nodeName"), what="bound on its own")
            srv.SetGenericWorkload(True)
            srv.SetSchedulingVersions(["v1beta1"])
            code, _, body = srv.Request("POST", PODS, pod("q", "g"))
            self.assertEqual(body["spec"]["schedulingGroup"], {"podGroupName": "g"})


def podgroup(name, min_count, topology_key=""):
    spec = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if topology_key:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


class GangSchedulerTest(unittest.TestCase):
    def setUp(self):
        self.srv = ApiServer(args=["--gang-scheduler", "--controllers", "scheduler,podgroup"]).Start()
        self.addCleanup(self.srv.Stop)

    def passes(self):
        """Returns once the scheduler has made a whole pass that started after the call.
        A pass lists the pods when it starts and binds a one-pod gang (1m CPU) it finds, so
        the pass P1 that binds sentinel A started after A was made; a sentinel B made once
        A is bound can only be bound by a later pass, which starts after P1 has ended."""
        for _ in range(2):
            self.sentinels = getattr(self, "sentinels", 0) + 1
            name = f"sentinel-{self.sentinels}"
            self.create(PODS, pod(name, cpu="1m"))
            wait_for(lambda: self.get_pod(name)["spec"].get("nodeName"), what=f"{name} bound")

    def create(self, path, obj):
        code, _, body = self.srv.Request("POST", path, obj)
        self.assertEqual(code, 201, body)

    def get_pod(self, name):
        return self.srv.Get(f"{PODS}/{name}")

    def events(self, name):
        code, _, body = self.srv.Request("GET", f"/api/v1/namespaces/{NS}/events")
        return [e for e in body["items"] if e["involvedObject"]["name"] == name and e["reason"] == "FailedScheduling"]

    def condition(self, pg):
        conds = (self.srv.Get(f"{PG}/{pg}").get("status") or {}).get("conditions") or []
        return next((c for c in conds if c["type"] == "PodGroupInitiallyScheduled"), None)

    def test_gang_binds_whole_or_not_at_all(self):
        for n in (node("a1", "a", "2"), node("a2", "a", "1"), node("b1", "b", "4")):
            self.create("/api/v1/nodes", n)
        self.create(PG, podgroup("g", 3, ZONE))
        self.create(PODS, pod("g-1", "g"))
        self.create(PODS, pod("g-2", "g"))
        # Below quorum: nothing happens, no condition, no Event (kube's PreEnqueue).
        self.passes()
        self.assertIsNone(self.get_pod("g-1")["spec"].get("nodeName"))
        self.assertEqual(self.events("g-1"), [])
        self.assertIsNone(self.condition("g"))
        # Quorum of 3 × 1 CPU: zone a (3 CPU) is the first that fits; all bound there.
        self.create(PODS, pod("g-3", "g"))
        wait_for(lambda: all(self.get_pod(f"g-{i}")["spec"].get("nodeName") for i in (1, 2, 3)), what="bound")
        self.assertEqual(sorted(self.get_pod(f"g-{i}")["spec"]["nodeName"] for i in (1, 2, 3)), ["a1", "a1", "a2"])
        self.assertEqual(self.get_pod("g-1")["status"]["phase"], "Running")
        self.assertEqual(self.condition("g")["status"], "True")
        # A fourth member: zone a is full and the gang runs there, so it waits, with one Event.
        self.create(PODS, pod("g-4", "g"))
        ev = wait_for(lambda: self.events("g-4"), what="FailedScheduling")
        self.assertEqual(ev[0]["message"], '0/4 nodes are available: gang "g" needs 1 pods, room for 0; '
                                           "2 Insufficient cpu, 2 node(s) didn't match pod topology.")
        self.passes()  # more scheduler passes: still one Event, and the condition stays True
        self.passes()
        self.assertEqual(len(self.events("g-4")), 1)
        self.assertEqual(self.condition("g")["status"], "True")

    def test_unschedulable_gang_gets_events_and_condition(self):
        self.create("/api/v1/nodes", node("n1", "a", "8", labels={"pool": "small"}, extra_spec={
            "taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}))
        self.create("/api/v1/nodes", node("n2", "a", "8", extra_spec={"unschedulable": True}))
        self.create("/api/v1/nodes", node("n3", "a", "1", labels={"pool": "small"}))
        self.create(PG, podgroup("h", 2))
        for i in (1, 2):
            self.create(PODS, pod(f"h-{i}", "h", spec={"nodeSelector": {"pool": "small"}}))
        ev = wait_for(lambda: self.events("h-2"), what="FailedScheduling")
        msg = ('0/4 nodes are available: gang "h" needs 2 pods, room for 1; 1 Insufficient cpu, '
               "1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint "
               "{gpu: yes}, 1 node(s) were unschedulable.")
        self.assertEqual(ev[0]["message"], msg)
        self.assertEqual(ev[0]["source"]["component"], "default-scheduler")
        cond = wait_for(lambda: self.condition("h"), what="condition")
        self.assertEqual((cond["status"], cond["reason"], cond["message"]), ("False", "Unschedulable", msg))
        p = self.get_pod("h-1")
        self.assertIsNone(p["spec"].get("nodeName"))
        sched = [c for c in p["status"]["conditions"] if c["type"] == "PodScheduled"][0]
        self.assertEqual((sched["status"], sched["reason"]), ("False", "Unschedulable"))

    def test_gated_pods_and_missing_group_wait(self):
        self.create("/api/v1/nodes", node("n1", "a", "8"))
        self.create(PODS, pod("solo"))  # no group: a gang of one
        self.create(PODS, pod("lost", "missing"))
        self.create(PODS, pod("gated", spec={"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]}))
        wait_for(lambda: self.get_pod("solo")["spec"].get("nodeName") == "n1", what="solo bound")
        self.passes()
        self.assertIsNone(self.get_pod("lost")["spec"].get("nodeName"))
        self.assertEqual(self.events("lost"), [])
        self.assertIsNone(self.get_pod("gated")["spec"].get("nodeName"))

    def test_each_scheduler_reads_only_its_own_link(self):
        """A pod is held only by the scheduler it is addressed to, for the link that
        scheduler reads: default-scheduler ignores a Volcano annotation (the pod is placed
        on its own), Volcano holds it while its group is missing, and a pod addressed to a
        scheduler this cluster does not run is placed by nobody."""
        self.create("/api/v1/nodes", node("n1", "a", "8"))
        stray = pod("stray")
        stray["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "missing"}
        self.create(PODS, stray)
        held = pod("held", spec={"schedulerName": "volcano"})
        held["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "missing"}
        self.create(PODS, held)
        self.create(PODS, pod("nobody", spec={"schedulerName": "not-installed"}))
        wait_for(lambda: self.get_pod("stray")["spec"].get("nodeName") == "n1", what="stray bound alone")
        self.passes()
        self.assertIsNone(self.get_pod("held")["spec"].get("nodeName"))
        self.assertIsNone(self.get_pod("nobody")["spec"].get("nodeName"))

    @unittest.skipUnless("scheduling.volcano.sh/podgroups" in registry.BY_KEY,
                         "this server does not store Volcano PodGroups (tests/apiserver/crds.py)")
    def test_volcano_gang_by_annotation_and_min_member(self):
        self.create("/api/v1/nodes", node("n1", "a", "2"))
        self.create("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
                    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                     "metadata": {"name": "v", "namespace": NS}, "spec": {"minMember": 3}})
        for i in (1, 2, 3):
            p = pod(f"v-{i}")
            p["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": "v"}
            p["spec"]["schedulerName"] = "volcano"  # Volcano reads the annotation, not default-scheduler
            self.create(PODS, p)
        # 3 members of 1 CPU, 2 CPUs: the whole gang waits, each member told why.
        ev = wait_for(lambda: self.events("v-3"), what="FailedScheduling")
        self.assertEqual(ev[0]["message"], '0/2 nodes are available: gang "v" needs 3 pods, room for 2; '
                                           "2 Insufficient cpu.")
        self.assertIsNone(self.get_pod("v-1")["spec"].get("nodeName"))

    @unittest.skipUnless("scheduling.volcano.sh/queues" in registry.BY_KEY,
                         "this server does not store Volcano Queues (tests/apiserver/crds.py)")
    def test_volcano_enqueue_by_queue_state_and_capability(self):
        vpg = "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups"
        queues = "/apis/scheduling.volcano.sh/v1beta1/queues"
        self.create("/api/v1/nodes", node("n1", "a", "8"))
        self.create(queues, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                             "metadata": {"name": "small"}, "spec": {"weight": 1, "capability": {"cpu": "1"}}})
        self.create(queues, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                             "metadata": {"name": "shut"}, "spec": {"weight": 1}})
        q = self.srv.Get(f"{queues}/shut")
        q["status"] = {"state": "Closed"}  # what Volcano's queue controller writes on a close command
        code, _, body = self.srv.Request("PUT", f"{queues}/shut/status", q)
        self.assertEqual(code, 200, body)

        def group(name, queue, min_resources=None):
            spec = {"minMember": 2, "queue": queue}
            if min_resources:
                spec["minResources"] = min_resources
            self.create(vpg, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                              "metadata": {"name": name, "namespace": NS}, "spec": spec})
            for i in (1, 2):
                p = pod(f"{name}-{i}")
                p["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": name}
                p["spec"]["schedulerName"] = "volcano"
                self.create(PODS, p)

        group("big", "small", {"cpu": "2"})      # more than the queue's capability
        group("closed", "shut", {"cpu": "1"})    # a queue that is not Open
        group("plain", "shut")                   # no minResources: enqueued, but not allocated
        why = "pod group is not ready, 2 Pending, 2 minAvailable"
        for name, phase in (("big", "Pending"), ("closed", "Pending"), ("plain", "Inqueue")):
            st = wait_for(lambda: (lambda st: st if st.get("phase") == phase and "2/2" in str(st) else None)(
                self.srv.Get(f"{vpg}/{name}").get("status") or {}), what=f"{name} {phase}")
            self.assertEqual([(c["type"], c["status"], c["reason"], c["message"]) for c in st["conditions"]],
                             [("Unschedulable", "True", "NotEnoughResources", f"2/2 tasks in gang unschedulable: {why}")])
            p = wait_for(lambda: (lambda p: p if (p.get("status") or {}).get("conditions") else None)(
                self.get_pod(f"{name}-1")), what=f"{name}-1 PodScheduled")
            self.assertIsNone(p["spec"].get("nodeName"))
            self.assertEqual([(c["reason"], c["message"]) for c in p["status"]["conditions"]], [("Unschedulable", why)])
        _, _, evs = self.srv.Request("GET", f"/api/v1/namespaces/{NS}/events")
        quota = [(e["type"], e["reason"], e["message"], e["source"]["component"]) for e in evs["items"]
                 if e["involvedObject"]["kind"] == "PodGroup"]
        self.assertEqual(quota, [("Normal", "Unschedulable", "queue resource quota insufficient: insufficient cpu",
                                  "volcano")])
        # Room in the queue: enqueued, then placed.
        code, _, body = self.srv.Request("PATCH", f"{queues}/small", {"spec": {"capability": {"cpu": "4"}}},
                                         content_type="application/merge-patch+json")
        self.assertEqual(code, 200, body)
        wait_for(lambda: self.srv.Get(f"{vpg}/big").get("status", {}).get("phase") == "Running", what="big Running")
        self.assertTrue(self.get_pod("big-2")["spec"].get("nodeName"))
        self.assertEqual(self.srv.Get(f"{vpg}/big")["status"]["running"], 2)
        # The queue opened: the enqueued group is placed, the held one enqueued and placed.
        q = self.srv.Get(f"{queues}/shut")
        q["status"] = {"state": "Open"}
        code, _, body = self.srv.Request("PUT", f"{queues}/shut/status", q)
        self.assertEqual(code, 200, body)
        for name in ("plain", "closed"):
            wait_for(lambda: self.srv.Get(f"{vpg}/{name}").get("status", {}).get("phase") == "Running",
                     what=f"{name} Running")

    def test_quantity(self):
        self.assertEqual(Quantity("500m") * 2, 1)
        self.assertEqual(Quantity("2Gi"), 2 * 1024 ** 3)
        self.assertEqual(Quantity("1k"), 1000)
        self.assertEqual(Quantity("1e3"), 1000)
        self.assertIsNone(Quantity("1x"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
