#!/usr/bin/env python3
"""REAL CONTROL PLANE, Kubernetes 1.37 as installed: the GenericWorkload feature
gate off on kube-apiserver, kube-controller-manager and kube-scheduler, so
scheduling.k8s.io serves no Workloads or PodGroups and kube-apiserver drops
spec.schedulingGroup from every pod after the mutating webhooks (its
disabled-field rule).

This is where the scheduler hold cannot hold anything (docs/design.md Q23,
issue 39 H2): a native pod with only the link would be stored with neither a
link nor a gate and placed alone by kube-scheduler. With the chart's default
values:

- the webhook's discovery finds no Workload API, so every new pod of an
  opted-in native Deployment carries wasd's gate wasd.io/pod-group, and the
  real kube-scheduler reports each one SchedulingGated (none is bound);
- the reconciler's APINotServed Warning on the Deployment counts those pods as
  gated by wasd, which they are, and says what to turn on;
- the webhook and reconciler are Ready: nothing of wasd blocks the cluster.
"""
import os
import unittest

from cluster.realcluster import APP_NS, RealCluster, wait_until
from lib.paths import SOURCE_DIR

GATE = "wasd.io/pod-group"


class GenericWorkloadOff(RealCluster):
    CLUSTER_ARGS = ("--generic-workload=off",)

    def test_native_pods_are_gated_when_the_api_server_drops_the_link(self):
        self.install_chart()
        # The cluster really is 1.37 as installed: no scheduling.k8s.io Workloads.
        served = self.kubectl("api-resources", "--api-group=scheduling.k8s.io", "-o", "name").stdout.split()
        self.assertNotIn("workloads.scheduling.k8s.io", served)
        self.assertNotIn("podgroups.scheduling.k8s.io", served)

        self.kubectl("apply", "-n", APP_NS, "-f", os.path.join(SOURCE_DIR, "examples", "kep-2-user-mincount.yaml"))

        def gated():
            pods = self.get("pods", "-n", APP_NS, "-l", "app=prefill-workers")["items"]
            ok = len(pods) == 4 and all(
                any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
                    for c in p.get("status", {}).get("conditions", [])) for p in pods)
            return ok, pods
        pods = wait_until("4 pods, each SchedulingGated by kube-scheduler", gated, timeout=120)
        for p in pods:
            name = p["metadata"]["name"]
            self.assertEqual([g["name"] for g in p["spec"].get("schedulingGates", [])], [GATE], name)
            self.assertFalse(p["spec"].get("nodeName"), f"{name} was bound outside any gang")
            # kube-apiserver dropped the link the webhook may not write: none is stored.
            self.assertNotIn("schedulingGroup", p["spec"], name)

        def not_served():
            events = [e for e in self.get("events", "-n", APP_NS, "--field-selector", "reason=APINotServed")["items"]
                      if e["involvedObject"]["name"] == "prefill-workers"]
            return any("pod(s) stay gated by wasd" in e["message"] for e in events), events
        events = wait_until("the reconciler's APINotServed Warning counting gated pods", not_served, timeout=120)
        self.assertEqual({e["type"] for e in events}, {"Warning"})
        for e in events:
            text = e["message"]
            self.assertIn("scheduling.k8s.io Workloads and PodGroups are not served by this cluster", text)
            self.assertIn("turn on the GenericWorkload feature gate", text)
            # Counted from the pods themselves: "gated" only because they carry the gate.
            self.assertRegex(text, r"\((no pod waits|[1-4] pod\(s\) stay gated by wasd \(scheduling gate "
                                   r"wasd\.io/pod-group\))\)")
            self.assertNotIn("held by", text)

        # Still gated a moment later: nothing lifts a gate for a group that cannot exist.
        pods = self.get("pods", "-n", APP_NS, "-l", "app=prefill-workers")["items"]
        self.assertTrue(all(not p["spec"].get("nodeName") for p in pods))
        self.kubectl("delete", "-n", APP_NS, "deployment", "prefill-workers", "--wait=false")


if __name__ == "__main__":
    unittest.main()
