#!/usr/bin/env python3
"""REAL CONTROL PLANE: chart options of issue 42 on kube-apiserver v1.37.2
(scripts/cluster.sh, with its audit log), where the API server's own
admission decides what the rendered YAML only claims. Proven:

- a namespace labelled wasd.io/ignore=true is never sent to wasd: the API
  server's audit event of a bad Deployment's create there names no wasd
  mutating webhook call, and the Deployment is stored untouched (no
  wasd.io/managed marker, not denied); the same manifest in an unlabelled
  namespace (the control) is called out to wasd (audit) and denied;
- the chart's ServiceAccounts do not automount a token, yet every webhook
  and reconciler pod gets its service-account token volume (the pod asks
  for it) and runs; a pod of ours on the webhook's account without asking
  gets none (the API server's ServiceAccount admission reads the account);
- global.imagePullSecrets reaches every stored wasd pod;
- commonLabels and commonAnnotations reach the stored Deployments, the
  Service, the ServiceAccount and both webhook configurations (the labels
  the pods too), and webhook.service.annotations the Service;
- webhook.extraVolumes/extraVolumeMounts: a ConfigMap mounted into the
  running webhook process (read through /proc/PID/root, the process's own
  mount namespace).
"""
import json
import os
import unittest

from cluster.realcluster import NS, RealCluster, run, wait_until
from lib.paths import SOURCE_DIR

BAD = os.path.join(SOURCE_DIR, "examples", "bad-h1-mincount-over-replicas.yaml")
BAD_NAME = "mincount-too-high"
MUTATION = "mutation.webhook.admission.k8s.io/"


class ChartOptionsOnRealControlPlane(RealCluster):
    @classmethod
    def setUpClass(cls):
        # The audit log (level Metadata, writes) records every mutating
        # webhook the API server called for a request.
        os.environ["WASD_CLUSTER_AUDIT"] = "1"
        try:
            super().setUpClass()
        finally:
            del os.environ["WASD_CLUSTER_AUDIT"]

    def kubectl_apply(self, ns, path):
        return run(os.path.join(self.bin, "kubectl"), "apply", "-n", ns, "-f", path, check=False, env=self.env)

    def create_audits(self, ns):
        """The audit events (ResponseComplete) of creates of BAD_NAME in `ns`."""
        out = []
        with open(os.path.join(self.dir, "logs", "audit.log")) as f:
            for line in f:
                e = json.loads(line)
                ref = e.get("objectRef") or {}
                if (e.get("verb") == "create" and e.get("stage") == "ResponseComplete"
                        and ref.get("resource") == "deployments" and ref.get("namespace") == ns
                        and ref.get("name", BAD_NAME) == BAD_NAME):
                    out.append(e)
        return out

    def wasd_calls(self, event):
        return [v for k, v in (event.get("annotations") or {}).items()
                if k.startswith(MUTATION) and json.loads(v).get("configuration") == "wasd"]

    def test_options(self):
        # The release namespace first: the extra volume's ConfigMap must be
        # there when the webhook pods start.
        self.kubectl("create", "namespace", NS)
        self.kubectl("create", "configmap", "wasd-extra", "-n", NS, "--from-literal=ca.crt=extra-ca-bundle")
        self.install_chart("global.imagePullSecrets[0].name=parent-regcred",
                           "commonAnnotations.example\\.com/owner=platform",
                           "commonLabels.example\\.com/team=gangs",
                           "webhook.service.annotations.example\\.com/scrape=admission",
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
        dep = self.get("deployment", BAD_NAME, "-n", "opted-out")
        self.assertNotIn("wasd.io/managed", dep["metadata"].get("labels") or {})
        self.assertNotEqual(self.kubectl("get", "deployment", BAD_NAME, "-n", "not-opted-out",
                                         check=False).returncode, 0, "the denied Deployment is stored")
        # The API server's own record of whom it called.
        control = wait_until("the control's create in the audit log",
                             lambda: (bool(a := self.create_audits("not-opted-out")), a), timeout=30)
        self.assertEqual([e["responseStatus"]["code"] for e in control], [422])
        self.assertTrue(self.wasd_calls(control[0]), control[0].get("annotations"))
        opted = wait_until("the opted-out create in the audit log",
                           lambda: (bool(a := self.create_audits("opted-out")), a), timeout=30)
        self.assertEqual([e["responseStatus"]["code"] for e in opted], [201])
        self.assertEqual(self.wasd_calls(opted[0]), [], opted[0].get("annotations"))

        # Tokens: not by account, by pod.
        accounts = [sa for sa in self.get("serviceaccounts", "-n", NS)["items"]
                    if sa["metadata"]["name"].startswith("wasd-")]
        self.assertTrue(accounts)
        for sa in accounts:
            self.assertIs(sa.get("automountServiceAccountToken"), False, sa["metadata"]["name"])
        pods = [p for p in self.get("pods", "-n", NS)["items"]
                if not p["metadata"].get("deletionTimestamp")
                and p["metadata"].get("labels", {}).get("app.kubernetes.io/component") in ("webhook", "reconciler")]
        self.assertEqual(len(pods), 5)  # 3 webhook, 2 reconciler replicas (the defaults)
        for p in pods:
            name = p["metadata"]["name"]
            vols = p["spec"].get("volumes") or []
            self.assertTrue(any(v["name"].startswith("kube-api-access-") for v in vols), name)
            self.assertIs(p["spec"].get("automountServiceAccountToken"), True, name)
            self.assertEqual(p["spec"]["imagePullSecrets"], [{"name": "parent-regcred"}], name)
            self.assertEqual(p["metadata"]["labels"].get("example.com/team"), "gangs", name)
        self.kubectl("run", "sa-probe", "-n", NS, "--image=worker:v1", "--restart=Never",
                     "--overrides", '{"apiVersion": "v1", "spec": {"serviceAccountName": "wasd-webhook"}}')
        probe = self.get("pod", "sa-probe", "-n", NS)
        self.assertEqual([v for v in probe["spec"].get("volumes") or [] if v["name"].startswith("kube-api-access-")],
                         [])

        # commonAnnotations and commonLabels on the stored objects.
        for kind, name in (("deployment", "wasd-webhook"), ("deployment", "wasd-reconciler"),
                           ("service", "wasd-webhook"), ("serviceaccount", "wasd-webhook")):
            meta = self.get(kind, name, "-n", NS)["metadata"]
            self.assertEqual((meta.get("annotations") or {}).get("example.com/owner"), "platform", (kind, name))
            self.assertEqual((meta.get("labels") or {}).get("example.com/team"), "gangs", (kind, name))
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            meta = self.get(kind, "wasd")["metadata"]
            self.assertEqual((meta.get("annotations") or {}).get("example.com/owner"), "platform", kind)
            self.assertEqual((meta.get("labels") or {}).get("example.com/team"), "gangs", kind)
        svc = self.get("service", "wasd-webhook", "-n", NS)
        self.assertEqual(svc["metadata"]["annotations"].get("example.com/scrape"), "admission")

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
