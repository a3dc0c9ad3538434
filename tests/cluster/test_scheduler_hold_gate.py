#!/usr/bin/env python3
"""REAL CONTROL PLANE (GenericWorkload on): the gate hold of native pods
(docs/design.md Q23, chart value webhook.podHold.native=gate) on the real
kube-scheduler v1.37.2. With that value the webhook adds wasd's scheduling
gate wasd.io/pod-group to every member and the reconciler lifts it once the
gang's PodGroup exists. This test proves, on the real API server and
scheduler:

- with the reconciler scaled to zero every member is stored with the gate,
  no PodGroup exists, and no member is bound while we watch;
- the reconciler scaled back to one creates the PodGroup and lifts the gate
  of every member, and the real kube-scheduler then binds all of them.

One cluster and one chart install for the class (setUpClass of RealCluster
starts the cluster; the single test installs the chart).
"""
import os
import time
import unittest

from cluster.realcluster import APP_NS, NS, RealCluster, wait_until
from lib.paths import SOURCE_DIR

GATE = "wasd.io/pod-group"
WATCH_SECONDS = 10  # how long no gated member may be bound


def gates(pod):
    return [g["name"] for g in pod["spec"].get("schedulingGates") or []]


class SchedulerGateHoldOnRealControlPlane(RealCluster):
    def members(self):
        return self.live_pods(APP_NS, "app=prefill-workers")

    def test_gated_pods_are_bound_after_the_reconciler_lifts_the_gate(self):
        self.install_chart("webhook.podHold.native=gate")
        self.stop_reconciler()

        self.kubectl("apply", "-n", APP_NS, "-f", os.path.join(SOURCE_DIR, "examples", "kep-2-user-mincount.yaml"))
        pods = wait_until("4 members", lambda: (len(self.members()) == 4, self.members()), timeout=60)
        for p in pods:
            self.assertIn(GATE, gates(p), f"{p['metadata']['name']}: no gate with webhook.podHold.native=gate")
        self.assertEqual(self.get("podgroups.scheduling.k8s.io", "-n", APP_NS)["items"], [])
        deadline = time.monotonic() + WATCH_SECONDS
        while time.monotonic() < deadline:  # bounded: WATCH_SECONDS
            bound = [p["metadata"]["name"] for p in self.members() if p["spec"].get("nodeName")]
            self.assertEqual(bound, [], "bound while gated")
            time.sleep(1)

        self.kubectl("scale", "-n", NS, "deployment/wasd-reconciler", "--replicas=1")

        def placed():
            pods = self.members()
            return len(pods) == 4 and all(p["spec"].get("nodeName") for p in pods), pods
        pods = wait_until("every member bound once the gate is lifted", placed, timeout=180)
        self.assertEqual(len(self.get("podgroups.scheduling.k8s.io", "-n", APP_NS)["items"]), 1)
        for p in pods:
            self.assertNotIn(GATE, gates(p), p["metadata"]["name"])
        self.kubectl("delete", "-n", APP_NS, "deployment", "prefill-workers", "--wait=false")


if __name__ == "__main__":
    unittest.main()
