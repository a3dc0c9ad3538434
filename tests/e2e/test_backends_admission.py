#!/usr/bin/env python3
"""End-to-end tests of the gang-scheduling backends at admission (docs/design.md
Q19, issue 16): the real `wasd webhook` over TLS on loopback, started with
--backend volcano and three allowed backends.

  - one denial per capability-table row a backend cannot express, round trip
    through the webhook, for each non-native backend;
  - wasd.io/backend: an unknown name, a backend not allowed, a change on UPDATE;
  - a template naming a third scheduler;
  - the Deployment path stamps the backend label into the template;
  - the pod path: the JSON patch applied to a pod of each backend gives the
    expected pod (link, gate, scheduler).

Needs WASD_BIN and the openssl-free `wasd certs generate`. Standard library only;
the process is stopped by its PID.
"""
import base64
import json
import tempfile
import unittest

from lib.certs import generate_certs
from lib.webhook import Webhook

FLAGS = ["--io-threads", "1", "--backend", "volcano",
         "--allowed-backends", "volcano,kai,coscheduling",
         "--volcano-topology-tiers", "topology.kubernetes.io/zone=2",
         "--kai-topology", "cluster-topology", "--kai-topology-levels", "kubernetes.io/hostname",
         "--coscheduling-scheduler-name", "gang-scheduler"]
ANNOTATION = "metadata.annotations[wasd.io/scheduling]"
GANG = {"schedulingPolicy": {"gang": {}}}
# On KAI a gang says `all` (an omitted disruptionMode means single, which KAI cannot keep).
ALL = {"disruptionMode": {"all": {}}}


def review(kind, op, obj, old=None):
    group, resource = ("apps", "deployments") if kind == "Deployment" else ("", "pods")
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "0b1c7e3e-0000-4000-8000-000000000016",
                        "kind": {"group": group, "version": "v1", "kind": kind},
                        "resource": {"group": group, "version": "v1", "resource": resource},
                        "name": "" if kind == "Pod" else "web", "namespace": "ml",
                        "operation": op, "object": obj, "oldObject": old}}


def deployment(config=None, backend=None, scheduler=None):
    d = {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "web", "namespace": "ml", "uid": "d-uid",
                      "annotations": {"wasd.io/scheduling": json.dumps(config or GANG)}},
         "spec": {"replicas": 3, "strategy": {"type": "Recreate"},
                  "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "c", "image": "img:v1"}]}}}}
    if backend:
        d["metadata"]["annotations"]["wasd.io/backend"] = backend
    if scheduler is not None:
        d["spec"]["template"]["spec"]["schedulerName"] = scheduler
    return d


def pod(backend):
    labels = {"app": "web", "pod-template-hash": "5d8f7c9b6", "wasd.io/managed": "true"}
    if backend:
        labels["wasd.io/backend"] = backend
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": "web-5d8f7c9b6-", "namespace": "ml", "labels": labels,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": "web-5d8f7c9b6", "uid": "rs-uid",
                                              "controller": True}]},
            "spec": {"containers": [{"name": "c", "image": "img:v1"}],
                     "schedulerName": "default-scheduler"}}


def apply_patch(doc, patch):
    """RFC 6902 "add" ops (all the webhook sends) applied to a copy of doc."""
    doc = json.loads(json.dumps(doc))
    for op in patch:
        assert op["op"] == "add", op
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        target = doc
        for t in tokens[:-1]:
            target = target[int(t)] if isinstance(target, list) else target[t]
        last = tokens[-1]
        if isinstance(target, list):
            target.append(op["value"]) if last == "-" else target.insert(int(last), op["value"])
        else:
            target[last] = op["value"]
    return doc


class BackendsAdmission(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="wasd-backends-")
        cls.webhook = Webhook(generate_certs(cls.dir), args=FLAGS, workdir=cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.webhook.stop()

    def answer(self, path, body):
        status, _, raw = self.webhook.post(path, json.dumps(body))
        self.assertEqual(status, 200, raw)
        return json.loads(raw)["response"]

    def validate(self, obj, old=None):
        return self.answer("/validate-apps-v1-deployment",
                           review("Deployment", "UPDATE" if old else "CREATE", obj, old))

    def assert_denied(self, resp, field, *parts):
        self.assertFalse(resp["allowed"], resp)
        causes = resp["status"]["details"]["causes"]
        self.assertEqual([c["field"] for c in causes], [field], causes)
        for part in parts:
            self.assertIn(part, causes[0]["message"])

    def test_one_denial_per_capability_row(self):
        zone = {"schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}}
        host = {"schedulingConstraints": {"topology": [{"key": "kubernetes.io/hostname"}]}}
        claims = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}
        rows = [
            # (backend, extra config, field below the annotation, words in the message)
            ("volcano", host, ".schedulingConstraints.topology",
             ['not supported by backend "volcano"', "--volcano-topology-tiers"]),
            ("kai", {**zone, **ALL}, ".schedulingConstraints.topology",
             ['not supported by backend "kai"', '"cluster-topology" has no level']),
            ("coscheduling", zone, ".schedulingConstraints.topology",
             ['not supported by backend "coscheduling"']),
            ("volcano", {"disruptionMode": {"all": {}}}, ".disruptionMode",
             ['not supported by backend "volcano"', 'use backend "native" or "kai"']),
            ("coscheduling", {"disruptionMode": {"single": {}}}, ".disruptionMode",
             ['not supported by backend "coscheduling"']),
            ("kai", {"disruptionMode": {"single": {}}}, ".disruptionMode",
             ['not supported by backend "kai"', "`single` with a gang"]),
            # Issue 30 M4: omitted is single, judged the same.
            ("kai", {}, ".disruptionMode",
             ['Required value', 'not supported by backend "kai"',
              "an omitted disruptionMode means `single`"]),
            ("volcano", claims, ".resourceClaims", ['not supported by backend "volcano"']),
            ("kai", {**claims, **ALL}, ".resourceClaims", ['not supported by backend "kai"']),
            ("coscheduling", claims, ".resourceClaims",
             ['not supported by backend "coscheduling"', 'use backend "native"']),
            ("kai", {"backends": {"kai": {"minResources": {"cpu": "1"}}}, **ALL},
             ".backends.kai.minResources", ['not supported by backend "kai"']),
            ("coscheduling", {"backends": {"volcano": {"queue": "q"}}}, ".backends.volcano",
             ['settings for backend "volcano"']),
        ]
        for backend, extra, field, parts in rows:
            with self.subTest(backend=backend, field=field):
                self.assert_denied(self.validate(deployment({**GANG, **extra}, backend)),
                                   ANNOTATION + field, *parts)
        # What the backends can express is allowed.
        for backend, extra in [("volcano", zone), ("kai", {**host, **ALL}),
                               ("kai", {"disruptionMode": {"all": {}}}),
                               ("coscheduling", {"backends": {"coscheduling": {
                                   "scheduleTimeoutSeconds": 30, "minResources": {"cpu": "4"}}}})]:
            with self.subTest(backend=backend, allowed=extra):
                self.assertTrue(self.validate(deployment({**GANG, **extra}, backend))["allowed"])

    def test_the_annotation_wasd_io_backend(self):
        self.assert_denied(self.validate(deployment(backend="slurm")),
                           "metadata.annotations[wasd.io/backend]",
                           'Unsupported value: "slurm": supported values: "volcano", "kai", '
                           '"coscheduling"')
        self.assert_denied(self.validate(deployment(backend="native")),
                           "metadata.annotations[wasd.io/backend]",
                           "--allowed-backends: volcano, kai, coscheduling")
        basic = {"schedulingPolicy": {"basic": {}}}
        resp = self.validate(deployment(basic, backend="kai"), deployment(basic, backend="volcano"))
        self.assertFalse(resp["allowed"], resp)
        causes = resp["status"]["details"]["causes"]
        self.assertEqual([c["field"] for c in causes],
                         ["metadata.annotations[wasd.io/backend]",
                          "spec.template.metadata.labels[wasd.io/backend]"], causes)
        for c in causes:
            self.assertIn("field is immutable", c["message"])
        # Without the annotation the Deployment gets --backend volcano: its limits apply.
        self.assert_denied(self.validate(deployment({**GANG, "disruptionMode": {"all": {}}})),
                           ANNOTATION + ".disruptionMode", 'backend "volcano"')

    def test_a_third_scheduler_is_denied(self):
        self.assertTrue(self.validate(deployment({**GANG, **ALL}, backend="kai",
                                                 scheduler="kai-scheduler"))["allowed"])
        self.assertTrue(self.validate(deployment(scheduler="default-scheduler"))["allowed"])
        self.assert_denied(self.validate(deployment(backend="coscheduling", scheduler="volcano")),
                           "spec.template.spec.schedulerName",
                           'supported values: "default-scheduler", "gang-scheduler"')

    def test_the_deployment_path_stamps_the_backend(self):
        for backend, want in [(None, "volcano"), ("kai", "kai"), ("coscheduling", "coscheduling")]:
            with self.subTest(backend=backend):
                d = deployment(backend=backend)
                resp = self.answer("/mutate-apps-v1-deployment", review("Deployment", "CREATE", d))
                out = apply_patch(d, json.loads(base64.b64decode(resp["patch"])))
                self.assertEqual(out["spec"]["template"]["metadata"]["labels"],
                                 {"app": "web", "wasd.io/managed": "true", "wasd.io/backend": want})

    def mutate(self, obj, old=None):
        resp = self.answer("/mutate-apps-v1-deployment",
                           review("Deployment", "UPDATE" if old else "CREATE", obj, old))
        self.assertTrue(resp["allowed"], resp)
        return apply_patch(obj, json.loads(base64.b64decode(resp["patch"]))) if "patch" in resp \
            else obj

    def test_the_backend_scheduler_is_stamped_on_the_template(self):
        """Issue 30 M2: a backend's own pod webhook keyed on schedulerName (KAI's
        mutating-kai-admission) sees the pods only if they arrive naming its scheduler."""
        for backend, scheduler, want in [
                (None, None, "volcano"), ("kai", None, "kai-scheduler"),
                ("kai", "default-scheduler", "kai-scheduler"),
                ("coscheduling", "", "gang-scheduler"),
                ("kai", "kai-scheduler", "kai-scheduler"),
                ("kai", "my-scheduler", "my-scheduler")]:  # the validating webhook's to deny
            with self.subTest(backend=backend, scheduler=scheduler):
                out = self.mutate(deployment(backend=backend, scheduler=scheduler))
                self.assertEqual(out["spec"]["template"]["spec"]["schedulerName"], want)
        # An UPDATE that leaves the template alone does not start a rollout for it.
        stored = self.mutate(deployment(backend="kai"))
        old = json.loads(json.dumps(stored))
        old["spec"]["template"]["spec"].pop("schedulerName")
        resp = self.answer("/mutate-apps-v1-deployment", review("Deployment", "UPDATE", old, old))
        self.assertNotIn("patch", resp)
        new = json.loads(json.dumps(old))
        new["spec"]["template"]["spec"]["containers"][0]["image"] = "img:v2"
        self.assertEqual(self.mutate(new, old)["spec"]["template"]["spec"]["schedulerName"],
                         "kai-scheduler")

    def test_the_template_label_cannot_change_the_backend(self):
        """Issue 30 M5: an exported manifest re-applied with another wasd.io/backend
        label in its template moves nothing."""
        stored = self.mutate(deployment(backend="kai"))  # label kai stamped
        for value in ["coscheduling", "native", "bogus"]:
            with self.subTest(value=value):
                moved = json.loads(json.dumps(stored))
                moved["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = value
                out = self.mutate(moved, stored)
                self.assertEqual(out["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"],
                                 "kai")
                resp = self.validate(moved, stored)
                self.assertFalse(resp["allowed"])
                fields = [c["field"] for c in resp["status"]["details"]["causes"]]
                self.assertIn("spec.template.metadata.labels[wasd.io/backend]", fields)
        # A backend --allowed-backends leaves out is refused at CREATE like the annotation.
        d = deployment()
        d["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "native"
        self.assert_denied(self.validate(d), "spec.template.metadata.labels[wasd.io/backend]",
                           'backend "native" is not enabled in this cluster')

    def test_the_pod_path_per_backend(self):
        mutated = {}
        for backend in ["volcano", "kai", "coscheduling", None]:
            p = pod(backend)
            resp = self.answer("/mutate-v1-pod", review("Pod", "CREATE", p))
            self.assertTrue(resp["allowed"])
            mutated[backend] = apply_patch(p, json.loads(base64.b64decode(resp["patch"])))
        gate = [{"name": "wasd.io/pod-group"}]
        group = mutated[None]["spec"]["schedulingGroup"]["podGroupName"]  # native: unchanged
        self.assertTrue(group.startswith("web-5d8f7c9b6-"))
        self.assertEqual(mutated[None]["spec"]["schedulerName"], "default-scheduler")
        # The default --pod-hold (docs/design.md Q23): volcano and kai are held by their
        # scheduler (no gate); coscheduling by wasd's gate; native by kube-scheduler only
        # once the webhook has seen the Workload API served — this webhook has no
        # cluster to ask, so a native pod gets the gate.
        self.assertEqual(mutated[None]["spec"]["schedulingGates"], gate)

        want = pod("volcano")
        want["metadata"]["annotations"] = {"scheduling.k8s.io/group-name": group}
        want["spec"].update(schedulerName="volcano")
        self.assertEqual(mutated["volcano"], want)

        want = pod("kai")
        want["metadata"]["annotations"] = {"pod-group-name": group,
                                           "kai.scheduler/skip-podgrouper": "true"}
        want["spec"].update(schedulerName="kai-scheduler")
        self.assertEqual(mutated["kai"], want)

        want = pod("coscheduling")
        want["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = group
        want["spec"].update(schedulingGates=gate, schedulerName="gang-scheduler")
        self.assertEqual(mutated["coscheduling"], want)

        resp = self.answer("/mutate-v1-pod", review("Pod", "CREATE", pod("yunikorn")))
        self.assertFalse(resp["allowed"])
        self.assertIn('metadata.labels[wasd.io/backend]: Unsupported value: "yunikorn"',
                      resp["status"]["message"])

    def test_the_start_line_names_the_backends(self):
        started = [e for e in self.webhook.log_entries() if e.get("msg") == "webhook started"]
        self.assertEqual(len(started), 1, self.webhook.log_text()[-2000:])
        self.assertEqual(started[0]["backend"], "volcano")
        self.assertEqual(started[0]["allowedBackends"], "volcano,kai,coscheduling")


class BackendFlags(unittest.TestCase):
    def test_backend_must_be_allowed(self):
        import subprocess
        from lib.paths import WASD
        p = subprocess.run([WASD, "webhook", "--tls-cert-file", "c", "--tls-key-file", "k",
                            "--backend", "kai", "--allowed-backends", "volcano"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, "wasd webhook: --backend kai is not among --allowed-backends\n"
                                   "Run 'wasd webhook --help' for usage.\n")


if __name__ == "__main__":
    unittest.main()
