#!/usr/bin/env python3
"""REAL CONTROL PLANE: `helm install` of charts/wasd on etcd, kube-apiserver,
kube-controller-manager and kube-scheduler v1.37.2 built from their Go modules
(scripts/components.sh, scripts/cluster.sh), with the node agent running
wasd's pods as processes (tests/cluster/nodeagent).

- `helm install` (helm v4.3.2) with the chart's default values and only
  image.repository (the node agent's test image) and image.tag set: the selfManaged certificate hook Jobs run for real (helm
  waits for them), then every webhook and reconciler replica turns Ready
  through its own readiness probe;
- `kubectl apply` of a bad Deployment is denied with wasd's message, through
  the API server's call to the chart's webhook Service;
- a valid gang Deployment gets a Workload and a PodGroup from the reconciler,
  which the real API server's scheduling.k8s.io/v1beta1 validation accepts,
  and its pods are bound by the real kube-scheduler, each naming the PodGroup
  in spec.schedulingGroup;
- `helm test` passes; `helm uninstall` leaves no webhook configuration.

A control plane that does not build or start fails this test: it never skips.
"""
import json
import os
import unittest

from cluster.realcluster import APP_NS, NS, RealCluster, run, wait_until
from lib.paths import SOURCE_DIR


class HelmInstallOnRealControlPlane(RealCluster):
    def test_chart_on_the_real_control_plane(self):
        self.install_chart()
        for cfg in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            obj = self.get(cfg, "wasd")
            for wh in obj["webhooks"]:
                self.assertTrue(wh["clientConfig"].get("caBundle"), f"{cfg} {wh['name']}: no caBundle injected")
                self.assertEqual(wh["clientConfig"]["service"]["name"], "wasd-webhook")

        # A bad Deployment: denied at kubectl apply, with wasd's field path.
        bad = run(os.path.join(self.bin, "kubectl"), "apply", "-n", APP_NS, "-f",
                  os.path.join(SOURCE_DIR, "examples", "bad-h1-mincount-over-replicas.yaml"),
                  check=False, env=self.env)
        self.assertNotEqual(bad.returncode, 0, bad.stdout)
        self.assertIn("metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount", bad.stderr)
        self.assertIn("must be less than or equal to spec.replicas (3)", bad.stderr)
        self.assertEqual(self.kubectl("get", "deployment", "mincount-too-high", "-n", APP_NS,
                                      check=False).returncode, 1)

        # A gang: Workload and PodGroup from the reconciler, pods bound by the
        # real kube-scheduler, each pod naming its PodGroup.
        self.kubectl("apply", "-n", APP_NS, "-f", os.path.join(SOURCE_DIR, "examples", "kep-2-user-mincount.yaml"))

        def gang():
            wl = self.get("workloads.scheduling.k8s.io", "-n", APP_NS)["items"]
            pg = self.get("podgroups.scheduling.k8s.io", "-n", APP_NS)["items"]
            pods = self.get("pods", "-n", APP_NS, "-l", "app=prefill-workers")["items"]
            bound = [p for p in pods if p["spec"].get("nodeName")]
            return len(wl) == 1 and len(pg) == 1 and len(pods) == 4 and len(bound) == 4, (wl, pg, pods)
        wl, pg, pods = wait_until("a Workload, a PodGroup and 4 bound pods", gang, timeout=120)
        self.assertIn(wl[0]["metadata"]["name"], json.dumps(pg[0]["spec"]), "the PodGroup names its Workload")
        for p in pods:
            self.assertEqual(p["spec"].get("schedulingGroup", {}).get("podGroupName"), pg[0]["metadata"]["name"],
                             f"pod {p['metadata']['name']}: spec {json.dumps(p['spec'].get('schedulingGroup'))}")
        events = self.get("events", "-n", APP_NS, "--field-selector", "reason=Scheduled")["items"]
        by = {e.get("reportingComponent") or e.get("source", {}).get("component") for e in events
              if e["involvedObject"]["name"].startswith("prefill-workers-")}
        self.assertEqual(by, {"default-scheduler"})

        # helm test: wasd selftest in a pod, through the Service.
        out = self.helm("test", "wasd", "-n", NS, "--logs", timeout=300).stdout
        self.assertIn("Phase:          Succeeded", out)
        self.assertIn("selftest passed", out)

        # helm uninstall: no webhook configuration left behind.
        self.kubectl("delete", "-n", APP_NS, "deployment", "prefill-workers", "--wait=false")
        self.helm("uninstall", "wasd", "-n", NS, "--timeout", "3m")
        for cfg in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
            names = [o["metadata"]["name"] for o in self.get(cfg)["items"]]
            self.assertNotIn("wasd", names, f"{cfg} left: {names}")


if __name__ == "__main__":
    unittest.main()
