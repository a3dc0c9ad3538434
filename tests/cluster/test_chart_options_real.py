#!/usr/bin/env python3
"""REAL CONTROL PLANE: chart options of issue 42 on kube-apiserver v1.37.2
(scripts/cluster.sh), where the API server's own admission decides what the
rendered YAML only claims. Proven:

- a namespace labelled wasd.io/ignore=true is never sent to wasd: a bad
  Deployment there is admitted untouched (no wasd.io/managed marker), while
  the same manifest in an unlabelled namespace is denied (the control);
- the chart's ServiceAccounts do not automount a token, yet every webhook
  and reconciler pod gets its service-account token volume (the pod asks
  for it) and works; a pod of ours on the webhook's account without asking
  gets none;
- global.imagePullSecrets reaches the stored pods, and commonAnnotations
  the stored objects;
- webhook.extraVolumes/extraVolumeMounts: a ConfigMap mounted into the
  running webhook process (read through /proc/PID/root, the process's own
  mount namespace).
"""
import os
import unittest

from cluster.realcluster import NS, RealCluster, run, wait_until
from lib.paths import SOURCE_DIR

BAD = os.path.join(SOURCE_DIR, "examples", "bad-h1-mincount-over-replicas.yaml")


class ChartOptionsOnRealControlPlane(RealCluster):
    def kubectl_apply(self, ns, path):
        return run(os.path.join(self.bin, "kubectl"), "apply", "-n", ns, "-f", path, check=False, env=self.env)

    def test_options(self):
        self.kubectl("create", "namespace", NS)
        self.kubectl("create", "configmap", "wasd-extra", "-n", NS, "--from-literal=ca.crt=extra-ca-bundle")
        self.install_chart("global.imagePullSecrets[0].name=parent-regcred",
                           "commonAnnotations.example\\.com/owner=platform",
                           "webhook.extraVolumes[0].name=extra",
                           "webhook.extraVolumes[0].configMap.name=wasd-extra",
                           "webhook.extraVolumeMounts[0].name=extra",
                           "webhook.extraVolumeMounts[0].mountPath=/etc/wasd/extra",
                           "webhook.extraVolumeMounts[0].readOnly=true")

        # Namespace opt-out by label, and its control.
        for ns, label in (("opted-out", True), ("not-opted-out", False)):
            self.kubectl("create", "namespace", ns)
            if label:
                self.kubectl("label", "namespace", ns, "wasd.io/ignore=true")
        denied = self.kubectl_apply("not-opted-out", BAD)
        self.assertNotEqual(denied.returncode, 0, denied.stdout)
        self.assertIn("gang.minCount", denied.stderr)
        admitted = self.kubectl_apply("opted-out", BAD)
        self.assertEqual(admitted.returncode, 0, admitted.stderr)
        dep = self.get("deployment", "mincount-too-high", "-n", "opted-out")
        self.assertNotIn("wasd.io/managed", dep["metadata"].get("labels") or {})

        # Tokens: not by account, by pod.
        for sa in self.get("serviceaccounts", "-n", NS)["items"]:
            if sa["metadata"]["name"].startswith("wasd-"):
                self.assertIs(sa.get("automountServiceAccountToken"), False, sa["metadata"]["name"])
        pods = [p for p in self.get("pods", "-n", NS)["items"]
                if p["metadata"].get("labels", {}).get("app.kubernetes.io/component") in ("webhook", "reconciler")]
        self.assertEqual(len(pods), 5)  # 3 webhook, 2 reconciler replicas
        for p in pods:
            vols = p["spec"].get("volumes") or []
            self.assertTrue(any(v["name"].startswith("kube-api-access-") for v in vols), p["metadata"]["name"])
            self.assertEqual(p["spec"]["imagePullSecrets"], [{"name": "parent-regcred"}])
        self.kubectl("run", "sa-probe", "-n", NS, "--image=worker:v1", "--restart=Never",
                     "--overrides", '{"apiVersion": "v1", "spec": {"serviceAccountName": "wasd-webhook"}}')
        probe = self.get("pod", "sa-probe", "-n", NS)
        self.assertFalse([v for v in probe["spec"].get("volumes") or [] if v["name"].startswith("kube-api-access-")])

        # commonAnnotations on the stored objects.
        for kind, name in (("deployment", "wasd-webhook"), ("deployment", "wasd-reconciler"),
                           ("service", "wasd-webhook"), ("serviceaccount", "wasd-webhook")):
            obj = self.get(kind, name, "-n", NS)
            self.assertEqual(obj["metadata"]["annotations"].get("example.com/owner"), "platform", (kind, name))
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            self.assertEqual(self.get(kind, "wasd")["metadata"]["annotations"].get("example.com/owner"), "platform")

        # The extra ConfigMap volume inside the running webhook process.
        webhook = [p for p in pods if p["metadata"]["labels"]["app.kubernetes.io/component"] == "webhook"][0]

        def mounted():
            try:
                with open(f"/proc/{self.pid_of(webhook)}/root/etc/wasd/extra/ca.crt") as f:
                    return f.read() == "extra-ca-bundle", "read"
            except OSError as e:
                return False, repr(e)
        wait_until("the extra volume in the webhook's mount namespace", mounted, timeout=60)


if __name__ == "__main__":
    unittest.main()
