#!/usr/bin/env python3
"""REAL CONTROL PLANE (GenericWorkload on, 3 Nodes in 3 zones with 8
nvidia.com/gpu each): every file in examples/ applied with the real kubectl
v1.37.2 against the chart's webhook and reconciler. What the real components
did is asserted, also where it differs from the test API server's model:

- every examples/bad-*.yaml but h5 is denied by wasd: kubectl exits nonzero and
  prints `The Deployment "NAME" is invalid:` with the field path wasd reports
  (the chart's default --denial-causes: the real kubectl renders the causes,
  not the "admission webhook ... denied the request" text, which only the API
  server's log shows), and no Deployment is stored;
- kep-1-gang-zone-atomic and kep-2-user-mincount are accepted, the reconciler
  creates one Workload and one PodGroup each (so the real API server's
  scheduling.k8s.io/v1beta1 validation accepted wasd's objects), every pod is
  linked to the PodGroup and bound;
- v1.37.2's Deployment type has no spec.scheduling: bad-h5-both-controllers and
  kep-1-field-carrier are refused by the API server's strict decoding
  ("unknown field "spec.scheduling""), before any webhook; the test API server
  instead accepts and drops the field (tests/e2e/test_kubectl_e2e.py);
- kep-3-resource-claims (the KEP's example 3 with the pod-template claim the
  KEP leaves out: without it the real API server refuses the template, its
  container naming a claim the pod does not have) is admitted with wasd's
  DRAWorkloadResourceClaims warning; v1.37.2 has that gate off (Beta, default
  off), so the API server strips the claims from the PodGroup, and wasd says
  so with a ClaimsStripped Warning Event on the Deployment.

Each accepted Deployment is deleted (foreground, its pods gone) after its check.
"""
import os
import unittest

from cluster.realcluster import APP_NS, RealCluster, wait_until
from lib.paths import SOURCE_DIR

EXAMPLES = os.path.join(SOURCE_DIR, "examples")
ANN = "metadata.annotations[wasd.io/scheduling]"

# What the real kubectl prints for each denied example: the field path and the
# start of wasd's message (the same text `wasd check` predicts).
DENIED = {
    "bad-b1-all-with-basic.yaml": ("all-with-basic",
                                   [f'{ANN}.disruptionMode: Invalid value: "all": '
                                    "the disruptionMode `all` is not supported with the Basic"]),
    "bad-h1-mincount-over-replicas.yaml": ("mincount-too-high",
                                           [f"{ANN}.schedulingPolicy.gang.minCount: Invalid value: 5: "
                                            "must be less than or equal to spec.replicas (3)"]),
    "bad-h2-gang-rollingupdate.yaml": ("gang-rolling",
                                       ['spec.strategy.type: Invalid value: "RollingUpdate": '
                                        "gang scheduling requires Recreate"]),
    "bad-h3-preset-scheduling-group.yaml": ("preset-group",
                                            [f"spec.template.spec.schedulingGroup: Forbidden: may not be set when {ANN}"]),
    "bad-s-structure.yaml": ("bad-structure",
                             [f"{ANN}.schedulingPolicy: Invalid value:",
                              f"{ANN}.schedulingConstraints.topology: Too many: 2",
                              f'{ANN}.resourceClaims[0].name: Invalid value: "GPU_Pool"',
                              f"{ANN}.resourceClaims[0]: Invalid value:"]),
    "bad-s17-unknown-field.yaml": ("typo-field",
                                   [f'{ANN}.schedulingPolicy.gang: Invalid value: "mincount": unknown field']),
}

# Accepted examples: namespace, Deployment, replicas (the Nodes have room for all).
ACCEPTED = {
    "kep-1-gang-zone-atomic.yaml": ("ml-serving", "inference-server", 3),
    "kep-2-user-mincount.yaml": (APP_NS, "prefill-workers", 4),
}


class ExamplesOnRealControlPlane(RealCluster):
    def apply(self, name, ns=APP_NS):
        return self.kubectl("apply", "-n", ns, "-f", os.path.join(EXAMPLES, name), check=False)

    def members(self, ns, app):
        return [p for p in self.get("pods", "-n", ns, "-l", f"app={app}")["items"]
                if not p["metadata"].get("deletionTimestamp")]

    def owned_by(self, kind, ns, owner):
        items = self.get(kind, "-n", ns)["items"]
        return [o for o in items if any(r.get("name", "").startswith(owner)
                                        for r in o["metadata"].get("ownerReferences", []))]

    def delete(self, ns, name):
        self.kubectl("delete", "-n", ns, "deployment", name, "--cascade=foreground", "--timeout=120s")
        wait_until(f"{name}'s pods gone", lambda: (not self.members(ns, name), None), timeout=120)

    def test_every_example_on_the_real_control_plane(self):
        self.install_chart()
        self.kubectl("create", "namespace", "ml-serving")
        # Where the examples are judged, the examples are all listed here.
        names = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".yaml"))
        self.assertEqual(sorted(f for f in names if f.startswith("bad-")),
                         sorted([*DENIED, "bad-h5-both-controllers.yaml"]))
        self.assertEqual(sorted(f for f in names if f.startswith("kep-")),
                         sorted([*ACCEPTED, "kep-1-field-carrier.yaml", "kep-3-resource-claims.yaml"]))  # both below

        for name, (deployment, texts) in DENIED.items():
            with self.subTest(example=name):
                p = self.apply(name)
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn(f'The Deployment "{deployment}" is invalid:', p.stderr)
                for text in texts:
                    self.assertIn(text, p.stderr)
                got = self.kubectl("get", "-n", APP_NS, "deployment", deployment, check=False)
                self.assertNotEqual(got.returncode, 0, f"{deployment} stored: {got.stdout}")
                self.assertIn("NotFound", got.stderr)

        for name, ns, deployment, text in (
                ("bad-h5-both-controllers.yaml", APP_NS, "two-controllers",
                 'strict decoding error: unknown field "spec.scheduling"'),
                ("kep-1-field-carrier.yaml", "ml-serving", "inference-server",
                 'strict decoding error: unknown field "spec.scheduling"')):
            with self.subTest(example=name):
                p = self.apply(name, ns)
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn(text, p.stderr)
                got = self.kubectl("get", "-n", ns, "deployment", deployment, check=False)
                self.assertNotEqual(got.returncode, 0, f"{deployment} stored: {got.stdout}")

        for name, (ns, deployment, replicas) in ACCEPTED.items():
            with self.subTest(example=name):
                p = self.apply(name, ns)
                self.assertEqual(p.returncode, 0, p.stderr)
                workloads = wait_until(f"{deployment}'s Workload", lambda: (
                    (w := self.owned_by("workloads.scheduling.k8s.io", ns, deployment)) != [], w), timeout=90)
                self.assertEqual(len(workloads), 1, workloads)
                groups = wait_until(f"{deployment}'s PodGroup", lambda: (
                    (g := self.owned_by("podgroups.scheduling.k8s.io", ns, deployment)) != [], g), timeout=90)
                self.assertEqual(len(groups), 1, groups)
                group = groups[0]["metadata"]["name"]
                pods = wait_until(f"{replicas} pods", lambda: (
                    len(m := self.members(ns, deployment)) == replicas, m), timeout=90)
                for pod in pods:
                    self.assertEqual(pod["spec"].get("schedulingGroup", {}).get("podGroupName"), group)
                def bound():
                    pods = self.members(ns, deployment)
                    return len(pods) == replicas and all(p["spec"].get("nodeName") for p in pods), pods
                wait_until(f"every {deployment} pod bound", bound, timeout=180)
                self.delete(ns, deployment)

        with self.subTest(example="kep-3-resource-claims.yaml"):
            p = self.apply("kep-3-resource-claims.yaml")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("resourceClaims are dropped from PodGroups unless the DRAWorkloadResourceClaims "
                          "gate is on", p.stderr)
            self.assertNotIn("no pod uses it", p.stderr)  # the template has the equal claim
            groups = wait_until("model-server's PodGroup", lambda: (
                (g := self.owned_by("podgroups.scheduling.k8s.io", APP_NS, "model-server")) != [], g), timeout=90)
            self.assertNotIn("resourceClaims", groups[0]["spec"], "the gate is off: the API server strips them")

            def stripped():
                events = [e for e in self.get("events", "-n", APP_NS)["items"]
                          if e["involvedObject"].get("name") == "model-server" and e.get("reason") == "ClaimsStripped"]
                return events != [], events
            event = wait_until("a ClaimsStripped Event on model-server", stripped, timeout=90)[0]
            self.assertEqual(event["type"], "Warning")
            self.assertIn("DRAWorkloadResourceClaims", event["message"])
            # Its pods wait for a ResourceClaimTemplate no one created (and there
            # is no DRA driver here): not bound, not waited for.
            self.kubectl("delete", "-n", APP_NS, "deployment", "model-server", "--wait=false")


if __name__ == "__main__":
    unittest.main()
