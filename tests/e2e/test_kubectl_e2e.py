#!/usr/bin/env python3
"""kubectl end to end: the real kubectl, the test API server under tests/apiserver,
the chart's own webhook configurations (rendered offline), and the real
`wasd webhook` over TLS, with the CA bundle injected by `wasd certs inject-ca`.

Covers: bad examples denied at apply with the field errors; a gang Deployment
created and its pods tied to their PodGroup and gated; `kubectl scale` below an
explicit minCount denied, to 0 allowed; spec.scheduling dropped while the
WorkloadWithDeployment gate is off; removing the annotation denied through the chart's matchConditions;
the webhook down with failurePolicy Fail vs Ignore, affecting only opted-in
objects."""
import json
import os
import subprocess
import tempfile
import unittest

import yaml


from apiserver.harness import ApiServer
from lib import chart
from lib.certs import generate_certs
from lib.manifests import pod_group_name
from lib.net import free_port
from lib.paths import SOURCE_DIR, WASD
from lib.wait import wait_for
from lib.webhook import Webhook

EXAMPLES = os.path.join(SOURCE_DIR, "examples")
NS = "ml-serving"
RELEASE_NS = "wasd-system"


def example(name):
    return os.path.join(EXAMPLES, name)


class KubectlEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-e2e-")
        cls.srv = ApiServer().Start()
        try:
            cls._install()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _install(cls):
        """Installs the rendered chart the way `helm install` would: the
        pre-install hook's command (it creates the TLS Secret), every object
        that is not a hook, then the post-install hook's command (it injects the
        CA bundle). The webhook Deployment's pods cannot run here, so the real
        binary runs on loopback with the Secret's files, and the test API server
        routes the chart's Service to it."""
        srv = cls.srv
        for ns in (NS, RELEASE_NS):
            srv.Kubectl("create", "namespace", ns)
        objs = chart.render(namespace=RELEASE_NS)
        hooks = {o["metadata"]["name"]: o for o in objs
                 if "helm.sh/hook" in (o["metadata"].get("annotations") or {})}
        plain = [o for o in objs if o["metadata"]["name"] not in hooks or
                 "helm.sh/hook" not in (o["metadata"].get("annotations") or {})]
        env = dict(os.environ, KUBECONFIG=srv.kubeconfig)

        def run_hook_job(phase):
            jobs = [o for o in objs if o["kind"] == "Job" and phase in
                    o["metadata"]["annotations"].get("helm.sh/hook", "")]
            assert len(jobs) == 1, (phase, [j["metadata"]["name"] for j in jobs])
            args = jobs[0]["spec"]["template"]["spec"]["containers"][0]["args"]
            args = [a.replace("/etc/wasd/tls/", cls.tls_dir + "/") for a in args]
            p = subprocess.run([WASD] + args, env=env, capture_output=True, text=True,
                               timeout=60)
            assert p.returncode == 0, (args, p.stderr)

        cls.tls_dir = os.path.join(cls.tmp, "tls")
        os.makedirs(cls.tls_dir)
        run_hook_job("pre-install")
        path = os.path.join(cls.tmp, "chart.yaml")
        with open(path, "w") as f:
            yaml.safe_dump_all([o for o in objs if "helm.sh/hook" not in
                                (o["metadata"].get("annotations") or {})], f)
        srv.Kubectl("apply", "-f", path)

        svc = [o for o in plain if o["kind"] == "Service" and o["metadata"]["name"].endswith("-webhook")][0]
        cls.service = svc["metadata"]["name"]
        secret_name = [v for v in objs if v["kind"] == "Deployment" and
                       v["metadata"]["name"].endswith("-webhook")][0]["spec"]["template"]["spec"]["volumes"]
        secret_name = [v["secret"]["secretName"] for v in secret_name if "secret" in v][0]
        secret = srv.Get(f"/api/v1/namespaces/{RELEASE_NS}/secrets/{secret_name}")
        assert secret, "the pre-install hook did not create the TLS Secret"
        import base64
        cls.certs = {}
        for key in ("ca.crt", "tls.crt", "tls.key"):
            cls.certs[key] = os.path.join(cls.tls_dir, key)
            with open(cls.certs[key], "wb") as f:
                f.write(base64.b64decode(secret["data"][key]))
        cls.webhook = Webhook(cls.certs, kubeconfig=srv.kubeconfig, workdir=cls.tls_dir)
        srv.SetServiceEndpoint(RELEASE_NS, cls.service, "127.0.0.1", cls.webhook.port)
        run_hook_job("post-install")
        cls.config_names = sorted(o["metadata"]["name"] for o in plain if o["kind"] in (
            "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"))
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            cfg = srv.Get(f"/apis/admissionregistration.k8s.io/v1/{kind}/{cls.config_names[0]}")
            assert all(w["clientConfig"].get("caBundle") for w in cfg["webhooks"]), kind

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "webhook", None):
            cls.webhook.stop()
        cls.srv.Stop()

    def apply(self, path, check=False, kubeconfig=None):
        return self.srv.Kubectl("apply", "-n", NS, "-f", path, check=check, kubeconfig=kubeconfig)

    def test_bad_examples_denied_with_field_errors(self):
        expected = {
            "bad-h1-mincount-over-replicas.yaml":
                "gang.minCount: Invalid value: 5: must be less than or equal to spec.replicas (3)",
            "bad-h2-gang-rollingupdate.yaml":
                'spec.strategy.type: Invalid value: "RollingUpdate": gang scheduling requires Recreate',
            "bad-s-structure.yaml": "must specify exactly one of: `basic`, `gang`",
            "bad-b1-all-with-basic.yaml": "the disruptionMode `all` is not supported with the Basic",
            "bad-s17-unknown-field.yaml": "unknown field",
        }
        for name, text in expected.items():
            with self.subTest(name=name):
                p = self.apply(example(name))
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn(text, p.stderr)
                # The API server reports wasd's denial as an invalid object.
                self.assertIn("is invalid", p.stderr)
                # `wasd check` predicts exactly what kubectl prints.
                check = subprocess.run([WASD, "check", "-f", example(name)],
                                       capture_output=True, text=True, timeout=60)
                self.assertEqual(check.returncode, 1)
                predicted = check.stdout.split("): denied\n", 1)[1].rsplit("\n", 2)[0]
                self.assertEqual(p.stderr.strip(), predicted.strip())

    def test_denial_message_form_names_the_webhook(self):
        """--denial-causes=false: kubectl prints the API server's wrapped message,
        naming the webhook, instead of the causes."""
        other = Webhook(self.certs, args=["--denial-causes=false"], kubeconfig=self.srv.kubeconfig,
                        workdir=self.tls_dir)
        try:
            self.srv.SetServiceEndpoint(RELEASE_NS, self.service, "127.0.0.1", other.port)
            p = self.apply(example("bad-h2-gang-rollingupdate.yaml"))
            self.assertNotEqual(p.returncode, 0)
            self.assertIn('admission webhook "deployments.validate.wasd.io" denied the request: '
                          'spec.strategy.type: Invalid value: "RollingUpdate": gang scheduling '
                          'requires Recreate', p.stderr)
        finally:
            self.srv.SetServiceEndpoint(RELEASE_NS, self.service, "127.0.0.1", self.webhook.port)
            other.stop()

    def test_good_gang_deployment_pods_tied_to_podgroup(self):
        p = self.apply(example("kep-1-gang-zone-atomic.yaml"))
        self.assertEqual(p.returncode, 0, p.stderr)
        dep = self.srv.Get(f"/apis/apps/v1/namespaces/{NS}/deployments/inference-server")
        self.assertEqual(dep["metadata"]["labels"]["wasd.io/managed"], "true")
        self.assertEqual(dep["spec"]["template"]["metadata"]["labels"]["wasd.io/managed"], "true")

        def pods():
            lst = self.srv.Get(f"/api/v1/namespaces/{NS}/pods?labelSelector=app%3Dinference-server")
            return lst["items"] if lst and len(lst["items"]) == 3 else None
        items = wait_for(pods, 30, what="3 pods")
        for pod in items:
            rs = [o for o in pod["metadata"]["ownerReferences"] if o.get("controller")][0]
            self.assertEqual(pod["spec"]["schedulingGroup"], {"podGroupName": pod_group_name(rs["name"], rs["uid"])})
            # Native is held by the scheduler (the default --pod-hold, docs/design.md Q23):
            # no gate, and Pending while its PodGroup does not exist (no reconciler here).
            self.assertNotIn("schedulingGates", pod["spec"])
            self.assertEqual(pod["status"]["phase"], "Pending")
        # Warnings reach kubectl as Warning headers.
        self.assertIn("minCount", p.stderr)

    def test_scale_below_explicit_mincount_denied_zero_allowed(self):
        p = self.apply(example("kep-2-user-mincount.yaml"))
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.srv.Kubectl("scale", "-n", NS, "deployment/prefill-workers", "--replicas=2", check=False)
        self.assertNotEqual(p.returncode, 0)
        # The annotation user is told about the annotation, not spec.scheduling.
        self.assertIn('The Scale "prefill-workers" is invalid: spec.replicas: Invalid value: 2: '
                      "must be greater than or equal to "
                      "metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount (3)",
                      p.stderr)
        p = self.srv.Kubectl("scale", "-n", NS, "deployment/prefill-workers", "--replicas=0", check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.srv.Kubectl("scale", "-n", NS, "deployment/prefill-workers", "--replicas=5", check=False)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_spec_scheduling_is_an_unknown_field_on_1_37(self):
        # Kubernetes 1.37's Deployment type has no spec.scheduling: kubectl's strict
        # field validation makes the API server refuse the example before any webhook
        # (the real v1.37.2 does so in tests/cluster/test_examples_real.py); with
        # --validate=false the field is pruned and the Deployment is stored without it.
        with open(example("kep-1-field-carrier.yaml")) as f:
            doc = yaml.safe_load(f)
        doc["metadata"]["name"] = "field-carrier"  # inference-server is another test's
        path = os.path.join(self.tmp, "field-carrier.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(doc, f)
        p = self.apply(path)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn('strict decoding error: unknown field "spec.scheduling"', p.stderr)
        p = self.srv.Kubectl("apply", "--validate=false", "-n", NS, "-f", path, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        stored = self.srv.Get(f"/apis/apps/v1/namespaces/{NS}/deployments/field-carrier")
        self.assertNotIn("scheduling", stored["spec"])

    def test_removing_the_annotation_is_denied(self):
        p = self.apply(example("kep-3-resource-claims.yaml"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(example("kep-3-resource-claims.yaml")) as f:
            text = f.read()
        start = text.index("  annotations:")
        end = text.index("spec:")
        stripped = os.path.join(self.tmp, "no-annotation.yaml")
        with open(stripped, "w") as f:
            f.write(text[:start] + text[end:])
        p = self.apply(stripped)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn('The Deployment "model-server" is invalid: '
                      "metadata.annotations[wasd.io/scheduling]: Forbidden: field cannot be "
                      "cleared once set; to opt a Deployment out, delete it and create it again "
                      "without the wasd.io/scheduling annotation", p.stderr)
        self.assertNotIn('"null"', p.stderr)

    def test_opting_in_an_existing_deployment_says_how(self):
        manifest = os.path.join(self.tmp, "late.yaml")
        with open(manifest, "w") as f:
            f.write("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: late}\n"
                    "spec: {selector: {matchLabels: {app: late}}, template: {metadata: {labels: {app: late}},"
                    " spec: {containers: [{name: c, image: nginx:1}]}}}\n")
        self.assertEqual(self.apply(manifest).returncode, 0)
        p = self.srv.Kubectl("annotate", "-n", NS, "deployment/late",
                             'wasd.io/scheduling={"schedulingPolicy":{"basic":{}}}', check=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn('The Deployment "late" is invalid: '
                      "metadata.annotations[wasd.io/scheduling]: Forbidden: field cannot be set "
                      "once created; to opt an existing Deployment in, delete it and create it "
                      "again with the wasd.io/scheduling annotation", p.stderr)
        self.assertNotIn('"null"', p.stderr)

    def test_unopted_objects_never_reach_wasd(self):
        manifest = os.path.join(self.tmp, "plain.yaml")
        with open(manifest, "w") as f:
            f.write("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: plain}\n"
                    "spec: {selector: {matchLabels: {app: plain}}, template: {metadata: {labels: {app: plain}},"
                    " spec: {containers: [{name: c, image: nginx:1}]}}}\n")
        since = self.srv.LastSeq()
        self.assertEqual(self.apply(manifest).returncode, 0)
        wait_for(lambda: self.srv.Get(f"/api/v1/namespaces/{NS}/pods?labelSelector=app%3Dplain")["items"],
                20, what="the plain Deployment's pod")

        def ours(e):
            meta = (e.get("body") or {}).get("metadata") or {}
            return (meta.get("name") or meta.get("generateName") or "").startswith("plain") or \
                e.get("path", "").endswith("/plain")
        entries = [e for e in self.srv.Audit(since=since) if ours(e)]
        self.assertTrue(any(e["method"] == "POST" and "/pods" in e["path"] for e in entries))
        calls = [e for e in entries if e.get("webhooks")]
        self.assertEqual(calls, [], "a Deployment or pod without the opt-in was sent to wasd")


class WebhookDown(unittest.TestCase):
    """failurePolicy Fail vs Ignore with wasd unreachable: only opted-in objects are affected."""

    def test_fail_and_ignore(self):
        tmp = tempfile.mkdtemp(prefix="wasd-e2e-down-")
        with ApiServer() as srv:
            srv.Kubectl("create", "namespace", NS)
            objs = chart.render(namespace=RELEASE_NS)
            configs = [o for o in objs if o["kind"] in ("MutatingWebhookConfiguration",
                                                        "ValidatingWebhookConfiguration")]
            svc = [o for o in objs if o["kind"] == "Service" and o["metadata"]["name"].endswith("-webhook")][0]
            certs = generate_certs(os.path.join(tmp, "certs"), svc["metadata"]["name"], RELEASE_NS)
            with open(certs["ca.crt"], "rb") as f:
                import base64
                bundle = base64.b64encode(f.read()).decode()
            for c in configs:
                for w in c["webhooks"]:
                    w["clientConfig"]["caBundle"] = bundle
            # Nothing listens on this port: wasd is down.
            srv.SetServiceEndpoint(RELEASE_NS, svc["metadata"]["name"], "127.0.0.1", free_port())
            path = os.path.join(tmp, "webhooks.yaml")
            with open(path, "w") as f:
                yaml.safe_dump_all(configs, f)
            srv.Kubectl("apply", "-f", path)

            p = srv.Kubectl("apply", "-n", NS, "-f", example("kep-2-user-mincount.yaml"), check=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("failed calling webhook", p.stderr)
            plain = os.path.join(tmp, "plain.yaml")
            with open(plain, "w") as f:
                f.write("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: plain}\n"
                        "spec: {selector: {matchLabels: {app: plain}}, template: {metadata: {labels: {app: plain}},"
                        " spec: {containers: [{name: c, image: nginx:1}]}}}\n")
            p = srv.Kubectl("apply", "-n", NS, "-f", plain, check=False)
            self.assertEqual(p.returncode, 0, p.stderr)

            for c in configs:
                for w in c["webhooks"]:
                    w["failurePolicy"] = "Ignore"
            with open(path, "w") as f:
                yaml.safe_dump_all(configs, f)
            srv.Kubectl("apply", "-f", path)
            p = srv.Kubectl("apply", "-n", NS, "-f", example("kep-2-user-mincount.yaml"), check=False)
            self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main()
