#!/usr/bin/env python3
"""REAL CONTROL PLANE (GenericWorkload on): the default hold of native pods
(docs/design.md Q23) on the real kube-scheduler v1.37.2. With the chart's
default values the webhook links each pod to its PodGroup
(spec.schedulingGroup) and adds no gate; only kube-scheduler's gang plugin
keeps the pod out of scheduling until the PodGroup exists. This test is the
proof that it does:

- with the reconciler scaled to zero nobody creates the PodGroup: every pod is
  stored with its link and no gate, and none is bound while we watch;
- the reconciler scaled back to one creates the Workload and the PodGroup, and
  every member is bound, with no write of wasd's to any pod.
"""
import os
import time
import unittest

from cluster.realcluster import APP_NS, NS, RealCluster, wait_until
from lib.paths import SOURCE_DIR

WATCH_SECONDS = 10  # how long no member may be bound while its PodGroup is missing


class SchedulerHoldOnRealControlPlane(RealCluster):
    def members(self):
        return self.live_pods(APP_NS, "app=prefill-workers")

    def test_linked_pods_wait_for_their_podgroup_on_the_real_scheduler(self):
        self.install_chart()
        self.stop_reconciler()

        self.kubectl("apply", "-n", APP_NS, "-f", os.path.join(SOURCE_DIR, "examples", "kep-2-user-mincount.yaml"))
        pods = wait_until("4 members", lambda: (len(self.members()) == 4, self.members()), timeout=60)
        for p in pods:
            name = p["metadata"]["name"]
            self.assertTrue(p["spec"].get("schedulingGroup", {}).get("podGroupName"), f"{name}: no link")
            self.assertFalse(p["spec"].get("schedulingGates"), f"{name}: the default hold adds no gate")
        group = pods[0]["spec"]["schedulingGroup"]["podGroupName"]
        self.assertEqual(self.get("podgroups.scheduling.k8s.io", "-n", APP_NS)["items"], [])
        deadline = time.monotonic() + WATCH_SECONDS
        while time.monotonic() < deadline:  # bounded: WATCH_SECONDS
            bound = [p["metadata"]["name"] for p in self.members() if p["spec"].get("nodeName")]
            self.assertEqual(bound, [], f"bound while PodGroup {group} does not exist")
            time.sleep(1)

        self.kubectl("scale", "-n", NS, "deployment/wasd-reconciler", "--replicas=1")

        def placed():
            pods = self.members()
            return len(pods) == 4 and all(p["spec"].get("nodeName") for p in pods), pods
        pods = wait_until("every member bound once its PodGroup exists", placed, timeout=180)
        groups = [g["metadata"]["name"] for g in self.get("podgroups.scheduling.k8s.io", "-n", APP_NS)["items"]]
        self.assertEqual(groups, [group])
        for p in pods:
            self.assertFalse(p["spec"].get("schedulingGates"), p["metadata"]["name"])
            self.assertEqual(p["metadata"].get("generation", 1), 1,
                             f"{p['metadata']['name']}: written after creation (no pod write is needed)")
        self.kubectl("delete", "-n", APP_NS, "deployment", "prefill-workers", "--wait=false")


if __name__ == "__main__":
    unittest.main()
