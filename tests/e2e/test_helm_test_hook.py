#!/usr/bin/env python3
"""The chart's `helm test` hook and pre-delete hook, run as Helm would run
them, against the test API server (tests/apiserver) with the chart installed
from its rendered objects and the real `wasd webhook` behind the chart's
Service (the same install as test_kubectl_e2e.py).

- The test Pod's command (`wasd selftest`) passes through the chart's own
  registration, and fails, naming the cause, when the webhook is unreachable
  or when the validating configuration is missing. Nothing is stored.
- The cleanup Job's command (`wasd certs uninstall`) removes both webhook
  configurations and the Secret, is idempotent, and leaves a Secret that
  wasd did not make alone.

The pods cannot run here, so each hook's container command runs as a
process with a kubeconfig in place of the in-cluster configuration.
"""
import base64
import json
import os
import subprocess
import tempfile
import unittest

import yaml


from apiserver.harness import ApiServer
from lib import chart
from lib.net import free_port
from lib.paths import WASD
from lib.wait import wait_for
from lib.webhook import Webhook

RELEASE_NS = "wasd-system"
TEST_NS = "default"
# Each command returns within seconds; the bound only stops a hang.
TIMEOUT_S = 90


def hook_objects(objs, phase, kind):
    return [o for o in objs if o["kind"] == kind and
            phase in (o["metadata"].get("annotations") or {}).get("helm.sh/hook", "").split(",")]


def container_args(obj):
    spec = obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]
    (c,) = spec["containers"]
    assert "command" not in c, "hooks run the wasd image's entrypoint"
    return c["args"]


class HelmHooks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-helm-test-")
        cls.srv = ApiServer().Start()
        cls.webhook = None
        try:
            cls._install()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.webhook is not None:
            cls.webhook.stop()
        cls.srv.Stop()

    @classmethod
    def wasd(cls, args, kubeconfig=None):
        return subprocess.run([WASD] + list(args) + ["--kubeconfig", kubeconfig or cls.srv.kubeconfig],
                              capture_output=True, text=True, timeout=TIMEOUT_S)

    @classmethod
    def _install(cls):
        srv = cls.srv
        srv.Kubectl("create", "namespace", RELEASE_NS)
        cls.objs = chart.render(namespace=RELEASE_NS)
        plain = [o for o in cls.objs if "helm.sh/hook" not in (o["metadata"].get("annotations") or {})]
        cls.configs = [o for o in plain if o["kind"].endswith("WebhookConfiguration")]
        (gen,) = hook_objects(cls.objs, "pre-install", "Job")
        p = cls.wasd(container_args(gen))
        assert p.returncode == 0, p.stderr
        cls.manifest = os.path.join(cls.tmp, "chart.yaml")
        with open(cls.manifest, "w") as f:
            yaml.safe_dump_all(plain, f)
        srv.Kubectl("apply", "-f", cls.manifest)
        secret = srv.Get(f"/api/v1/namespaces/{RELEASE_NS}/secrets/wasd-webhook-tls")
        certs = {}
        for key in ("ca.crt", "tls.crt", "tls.key"):
            certs[key] = os.path.join(cls.tmp, key)
            with open(certs[key], "wb") as f:
                f.write(base64.b64decode(secret["data"][key]))
        cls.webhook = Webhook(certs, args=["--io-threads", "2"], kubeconfig=srv.kubeconfig,
                              workdir=cls.tmp)
        cls.route_to_webhook()
        cls.inject()
        (cls.test_pod,) = hook_objects(cls.objs, "test", "Pod")
        (cls.cleanup,) = hook_objects(cls.objs, "pre-delete", "Job")

    @classmethod
    def route_to_webhook(cls):
        cls.srv.SetServiceEndpoint(RELEASE_NS, "wasd-webhook", "127.0.0.1", cls.webhook.port)

    @classmethod
    def inject(cls):
        (inject,) = hook_objects(cls.objs, "post-install", "Job")
        args = [a.replace("/etc/wasd/tls/", cls.tmp + "/") for a in container_args(inject)]
        p = cls.wasd(args)
        assert p.returncode == 0, p.stderr

    def selftest(self):
        return self.wasd(container_args(self.test_pod))

    def logs(self, p):
        return [json.loads(line) for line in p.stderr.splitlines() if line.startswith("{")]

    def test_a_selftest_passes_through_the_chart_registration(self):
        before = self.srv.LastSeq()
        p = self.selftest()
        self.assertEqual(p.returncode, 0, p.stderr)
        msgs = [e["msg"] for e in self.logs(p)]
        self.assertIn("denied by wasd as expected", msgs)
        self.assertIn("accepted and marked by wasd as expected", msgs)
        self.assertEqual(msgs[-1], "selftest passed")
        # Both creates were dry runs that reached both webhooks; nothing was stored.
        posts = [e for e in self.srv.Audit(since=before, methods=("POST",))
                 if e["path"].endswith(f"/namespaces/{TEST_NS}/deployments")]
        self.assertEqual(len(posts), 2)
        for e in posts:
            self.assertEqual(e["query"].get("dryRun"), "All")
            self.assertIn("deployments.mutate.wasd.io", e.get("webhooks", []))
        self.assertEqual([e["status"] for e in posts], [422, 201])
        # (the audit lists a validating webhook only when it allowed)
        self.assertIn("deployments.validate.wasd.io", posts[1].get("webhooks", []))
        stored = self.srv.Get(f"/apis/apps/v1/namespaces/{TEST_NS}/deployments")["items"]
        self.assertEqual([d for d in stored if d["metadata"]["name"].startswith("wasd-selftest")], [])

    def test_b_selftest_fails_when_the_webhook_is_unreachable(self):
        # A closed port behind the Service: the API server's call fails.
        self.srv.SetServiceEndpoint(RELEASE_NS, "wasd-webhook", "127.0.0.1", free_port())
        try:
            p = self.selftest()
        finally:
            self.route_to_webhook()
        self.assertEqual(p.returncode, 1, p.stderr)
        errors = [e for e in self.logs(p) if e["level"] == "error"]
        self.assertTrue(errors)
        self.assertIn("not by wasd's rule", errors[0]["msg"])
        self.assertIn("failed calling webhook", errors[0]["error"])

    def test_c_selftest_fails_without_the_validating_configuration(self):
        self.srv.Kubectl("delete", "validatingwebhookconfiguration", "wasd")
        try:
            p = self.selftest()
        finally:
            self.srv.Kubectl("apply", "-f", self.manifest)
            self.inject()
        self.assertEqual(p.returncode, 1, p.stderr)
        errors = [e for e in self.logs(p) if e["level"] == "error"]
        self.assertEqual(errors[0]["check"], "denial")
        self.assertIn("accepted a Deployment that wasd must deny", errors[0]["msg"])
        # Restored: passes again.
        self.assertEqual(self.selftest().returncode, 0)

    def deployment(self, name, annotations=None, template_labels=None):
        labels = {"app": name}
        return {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": TEST_NS, "annotations": annotations or {}},
                "spec": {"replicas": 2, "strategy": {"type": "Recreate"},
                         "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": dict(labels, **(template_labels or {}))},
                                      "spec": {"containers": [{"name": "c", "image": "app:1"}]}}}}

    def test_d_status_writes_are_judged_by_the_chart_registration(self):
        # M1: a status write keeps annotations, so removing the configuration
        # through /status must meet the same rule (U2) as through the object.
        gang = json.dumps({"schedulingPolicy": {"gang": {"minCount": 2}}})
        code, _, body = self.srv.Request("POST", f"/apis/apps/v1/namespaces/{TEST_NS}/deployments",
                                         self.deployment("status-gang", {"wasd.io/scheduling": gang}))
        self.assertEqual(code, 201, body)
        path = f"/apis/apps/v1/namespaces/{TEST_NS}/deployments/status-gang"

        def put_status(edit):
            # The Deployment controller writes status too: retry on conflict.
            for _ in range(20):
                obj = self.srv.Get(path)
                edit(obj)
                code, _, body = self.srv.Request("PUT", path + "/status", obj)
                if code != 409:
                    return code, body
            self.fail("status write kept conflicting")

        code, body = put_status(lambda o: o["metadata"]["annotations"].pop("wasd.io/scheduling"))
        self.assertEqual(code, 422, body)
        self.assertIn("deployments.validate.wasd.io", body["message"])
        self.assertIn("wasd.io/scheduling", self.srv.Get(path)["metadata"]["annotations"])
        # A status write that leaves the configuration alone passes.
        code, body = put_status(lambda o: o.setdefault("status", {}).update(observedGeneration=1))
        self.assertEqual(code, 200, body)

    def test_e_stray_marker_and_wasd_keys_reach_the_mutating_webhook(self):
        # M2: a Deployment copied without its annotation but with the pod
        # template marker is sent to the mutating webhook (which removes the
        # marker), not to the validating one; issue 14: any wasd.io/ key is
        # sent to both (a misspelt key is warned about); an unrelated one to none.
        cases = [("stray-marker", None, {"wasd.io/managed": "true"},
                  {"deployments.mutate.wasd.io"}),
                 ("misspelt", {"wasd.io/schedulng": "{}"}, None,
                  {"deployments.mutate.wasd.io", "deployments.validate.wasd.io"}),
                 ("unrelated", {"example.com/wasd.io": "x"}, None, set())]
        for name, annotations, template_labels, want in cases:
            with self.subTest(case=name):
                code, _, body = self.srv.Request(
                    "POST", f"/apis/apps/v1/namespaces/{TEST_NS}/deployments",
                    self.deployment(name, annotations, template_labels))
                self.assertEqual(code, 201, body)

                def record():
                    hits = [e for e in self.srv.Audit(methods=("POST",))
                            if e["path"].endswith(f"/namespaces/{TEST_NS}/deployments")
                            and ((e.get("body") or {}).get("metadata") or {}).get("name") == name]
                    return hits[0] if hits else None
                post = wait_for(record, 10, 0.05, f"audit record of {name}")
                self.assertEqual(set(post.get("webhooks", [])), want)

    def test_z_cleanup_hook_removes_what_the_chart_made_and_is_idempotent(self):
        args = container_args(self.cleanup)
        self.assertEqual(args[:2], ["certs", "uninstall"])
        foreign = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                   "metadata": {"name": "someone-elses", "namespace": RELEASE_NS},
                   "data": {"x": base64.b64encode(b"keep me").decode()}}
        self.srv.Kubectl("apply", "-f", "-", input=json.dumps(foreign))

        p = self.wasd(args)
        self.assertEqual(p.returncode, 0, p.stderr)
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            self.assertIsNone(self.srv.Get(f"/apis/admissionregistration.k8s.io/v1/{kind}/wasd"), kind)
        self.assertIsNone(self.srv.Get(f"/api/v1/namespaces/{RELEASE_NS}/secrets/wasd-webhook-tls"))
        self.assertEqual(sorted(e["msg"] for e in self.logs(p)), ["deleted"] * 3)

        again = self.wasd(args)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(sorted(e["msg"] for e in self.logs(again)), ["already gone"] * 3)

        p = self.wasd(["certs", "uninstall", "--webhook-config", "wasd",
                       "--secret", f"{RELEASE_NS}/someone-elses"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIsNotNone(self.srv.Get(f"/api/v1/namespaces/{RELEASE_NS}/secrets/someone-elses"))
        self.assertTrue(any("left alone" in e["msg"] for e in self.logs(p)))

    def test_y_bad_flags_are_usage_errors(self):
        p = subprocess.run([WASD, "certs", "uninstall", "--secret", "no-namespace"],
                           capture_output=True, text=True, timeout=TIMEOUT_S)
        self.assertEqual(p.returncode, 2)
        p = subprocess.run([WASD, "selftest", "--timeout", "soon"],
                           capture_output=True, text=True, timeout=TIMEOUT_S)
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
