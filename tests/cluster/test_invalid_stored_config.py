#!/usr/bin/env python3
"""REAL CONTROL PLANE (GenericWorkload on): issue 39 H1 with the chart's
default values. A Deployment whose wasd.io/scheduling annotation the reconciler
cannot use was stored before wasd was installed (the same as one written past
the webhook or accepted by an older release). Under the default scheduler hold
a rollout's pods name a PodGroup that no gang will fill; before the fix nobody
created it and kube-scheduler kept them Pending for ever (with Recreate the
service was down).

- the image change is admitted (the ratchet: the annotation did not change),
  and kubectl prints wasd's warning that the new pods get no gang;
- the reconciler creates the one-member release PodGroup for the new
  ReplicaSet, the real kube-scheduler binds its pods, and they run;
- the InvalidSchedulingConfiguration Warning names the release and the error.
"""
import json
import os
import tempfile
import unittest

from cluster.realcluster import APP_NS, RealCluster, run, wait_until

NAME = "broken"
INVALID = '{"schedulingPolicy": 3}'


def manifest(image):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": NAME, "annotations": {"wasd.io/scheduling": INVALID}},
            "spec": {"replicas": 2, "strategy": {"type": "Recreate"},
                     "selector": {"matchLabels": {"app": NAME}},
                     "template": {"metadata": {"labels": {"app": NAME}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}}}


class InvalidStoredConfigOnRealControlPlane(RealCluster):
    def apply(self, obj):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(obj, f)
        try:
            return run(os.path.join(self.bin, "kubectl"), "apply", "-n", APP_NS, "-f", f.name, env=self.env)
        finally:
            os.unlink(f.name)

    def pods(self):
        return [p for p in self.get("pods", "-n", APP_NS, "-l", f"app={NAME}")["items"]
                if not p["metadata"].get("deletionTimestamp")]

    def test_a_rollout_of_an_unusable_configuration_runs_its_pods_alone(self):
        # Stored while no webhook of wasd's was there.
        self.apply(manifest("app:1"))
        wait_until("2 pods before wasd", lambda: (len(self.pods()) == 2, self.pods()), timeout=60)
        self.install_chart()

        # The image change: admitted, with the warning.
        out = self.apply(manifest("app:2"))
        self.assertIn("new pods of this rollout get no gang: fix the annotation", out.stderr)
        self.assertIn("schedulingPolicy: Invalid value: 3: must be an object", out.stderr)

        def new_pods_running():
            rs = [r for r in self.get("replicasets", "-n", APP_NS, "-l", f"app={NAME}")["items"]
                  if r["spec"]["template"]["spec"]["containers"][0]["image"] == "app:2"]
            pods = [p for p in self.pods() if p["spec"]["containers"][0]["image"] == "app:2"]
            running = [p for p in pods if p["spec"].get("nodeName") and p["status"].get("phase") == "Running"]
            return len(rs) == 1 and len(pods) == 2 and len(running) == 2, (rs, pods)
        (rs,), pods = wait_until("the new ReplicaSet's 2 pods bound and Running", new_pods_running, timeout=180)

        groups = {g["metadata"]["name"]: g for g in self.get("podgroups.scheduling.k8s.io", "-n", APP_NS)["items"]}
        links = {p["spec"].get("schedulingGroup", {}).get("podGroupName") for p in pods}
        self.assertEqual(len(links), 1, links)
        (link,) = links
        self.assertIn(link, groups, f"the pods name {link}; PodGroups: {sorted(groups)}")
        release = groups[link]
        self.assertEqual([o["uid"] for o in release["metadata"]["ownerReferences"] if o.get("controller")],
                         [rs["metadata"]["uid"]], "the release group belongs to the new ReplicaSet")
        self.assertNotIn("gang", release["spec"].get("schedulingPolicy", {}), "one-member group: no gang")
        self.assertEqual(self.get("workloads.scheduling.k8s.io", "-n", APP_NS)["items"], [],
                         "no Workload for a configuration wasd cannot use")

        events = [e for e in self.get("events", "-n", APP_NS, "--field-selector",
                                      "reason=InvalidSchedulingConfiguration")["items"]
                  if e["involvedObject"]["name"] == NAME]
        self.assertTrue(events)
        self.assertEqual({e["type"] for e in events}, {"Warning"})
        text = " ".join(e["message"] for e in events)
        self.assertIn(f"wasd created PodGroup {link} without a gang (each pod is placed on its own)", text)
        # Said from the pods themselves: linked, no gate (the default hold on this cluster).
        self.assertIn("2 pod(s) carry no gate and are held by their scheduler until their group exists", text)
        self.assertIn("Fix the wasd.io/scheduling annotation", text)
        self.kubectl("delete", "-n", APP_NS, "deployment", NAME, "--wait=false")


if __name__ == "__main__":
    unittest.main()
