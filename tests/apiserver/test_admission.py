"""Admission through the test API server: a tiny TLS webhook written here is called
the way kube-apiserver calls webhooks, and kubectl shows the outcome."""
import base64
import json
import tempfile
import unittest

from apiserver.harness import ApiServer
from lib.certs import make_serving
from lib.manifests import deployment
from lib.net import free_port
from lib.scripted_webhook import ScriptedWebhook
from lib.wait import wait_for

GATE = "wasd.io/pod-group"


def Decide(path, req):
    """What the scripted webhook answers on each path."""
    if path == "/deny":
        return {"allowed": False, "warnings": ["be careful"],
                "status": {"code": 422, "reason": "Invalid",
                           "message": "spec.replicas: Invalid value: 7: too many"}}
    if path == "/deny-plain":
        return {"allowed": False, "status": {"code": 200, "message": "no"}}
    if path == "/mutate-pod":
        ops = [{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"},
               {"op": "add", "path": "/spec/schedulingGroup", "value": {"podGroupName": "grp-1"}},
               {"op": "add", "path": "/spec/schedulingGates", "value": [{"name": GATE}]}]
        return {"allowed": True, "patchType": "JSONPatch",
                "patch": base64.b64encode(json.dumps(ops).encode()).decode()}
    if path == "/deny-status":
        if ((req["object"].get("metadata") or {}).get("annotations") or {}).get("deny") == "yes":
            return {"allowed": False, "status": {"code": 422, "reason": "Invalid",
                                                 "message": "metadata.annotations[deny]: Forbidden"}}
    if path == "/deny-scale":
        n = req["object"]["spec"]["replicas"]
        if n > 5:
            return {"allowed": False, "status": {"code": 422, "reason": "Invalid",
                                                 "message": f"spec.replicas: Invalid value: {n}: above 5"}}
    return {"allowed": True}


# The Deployments of these tests: not opted in to wasd, the server's default strategy.
PLAIN = {"scheduling": False, "strategy": None, "image": "busybox:1"}


class AdmissionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-admission-test-")
        cls.srv = ApiServer(args=["--webhook-client-cert"]).Start()
        try:
            cls.hook = ScriptedWebhook(cls.tmp, Decide)
        except BaseException:
            cls.srv.Stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.hook.stop()
        cls.srv.Stop()

    def Register(self, kind, name, path, rules, **extra):
        wh = {"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
              "clientConfig": {"url": f"https://localhost:{self.hook.port}{path}",
                               "caBundle": self.hook.ca_bundle},
              "rules": rules}
        wh.update(extra)
        cfg = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
               "metadata": {"name": name}, "webhooks": [wh]}
        res = "mutatingwebhookconfigurations" if kind.startswith("Mutating") else "validatingwebhookconfigurations"
        status, _, out = self.srv.Request("POST", f"/apis/admissionregistration.k8s.io/v1/{res}", cfg)
        self.assertEqual(status, 201, out)
        self.addCleanup(self.srv.Request, "DELETE", f"/apis/admissionregistration.k8s.io/v1/{res}/{name}")

    def Apply(self, obj, check=True):
        return self.srv.Kubectl("apply", "-f", "-", input=json.dumps(obj), check=check)

    def test_denial_and_warning_reach_kubectl(self):
        rule = [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                 "resources": ["deployments"]}]
        self.Register("ValidatingWebhookConfiguration", "deny.test.io", "/deny", rule,
                      objectSelector={"matchLabels": {"deny": "true"}})
        p = self.Apply(deployment("denied", labels={"deny": "true"}, **PLAIN), check=False)
        self.assertNotEqual(p.returncode, 0)
        # kubectl prints a 422 without details as "The request is invalid" (as with a real cluster)
        self.assertIn('The request is invalid: error when creating "STDIN": admission webhook '
                      '"deny.test.io" denied the request: spec.replicas: Invalid value: 7: too many', p.stderr)
        self.assertIn("Warning: be careful", p.stderr)
        self.assertIsNone(self.srv.Get("/apis/apps/v1/namespaces/default/deployments/denied"))
        req = self.hook.calls("/deny")[-1]
        self.assertEqual(req["operation"], "CREATE")
        self.assertEqual(req["kind"], {"group": "apps", "version": "v1", "kind": "Deployment"})
        self.assertEqual(req["resource"], {"group": "apps", "version": "v1", "resource": "deployments"})
        self.assertEqual(req["requestResource"], req["resource"])
        self.assertEqual(req["subResource"], "")
        self.assertEqual((req["name"], req["namespace"]), ("denied", "default"))
        self.assertEqual(req["userInfo"]["username"], "admin")
        self.assertIn("system:masters", req["userInfo"]["groups"])
        self.assertIs(req["dryRun"], False)
        self.assertEqual(req["options"]["kind"], "CreateOptions")
        self.assertIsNone(req["oldObject"])
        # defaults are applied before admission, as kube-apiserver decodes with defaulting
        self.assertEqual(req["object"]["spec"]["strategy"]["rollingUpdate"], {"maxUnavailable": "25%", "maxSurge": "25%"})
        # the objectSelector scopes the webhook: an unlabelled Deployment is not sent
        before = len(self.hook.calls("/deny"))
        self.Apply(deployment("allowed", **PLAIN))
        self.assertEqual(len(self.hook.calls("/deny")), before)
        # a low status code becomes 400 and the message keeps kube's wording
        self.Register("ValidatingWebhookConfiguration", "plain.test.io", "/deny-plain", rule,
                      objectSelector={"matchLabels": {"plain": "true"}})
        status, _, out = self.srv.Request("POST", "/apis/apps/v1/namespaces/default/deployments",
                                          deployment("plain", labels={"plain": "true"}, **PLAIN))
        self.assertEqual(status, 400)
        self.assertEqual(out["message"], 'admission webhook "plain.test.io" denied the request: no')

    def test_pod_patch_and_scheduling_gate_lifecycle(self):
        self.Register("MutatingWebhookConfiguration", "pods.test.io", "/mutate-pod",
                      [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
                      objectSelector={"matchLabels": {"gated": "true"}}, reinvocationPolicy="Never")
        self.Apply(deployment("gated", labels={"gated": "true"}, replicas=2, **PLAIN))
        pods_path = "/api/v1/namespaces/default/pods?labelSelector=app%3Dgated"
        pods = wait_for(lambda: [p for p in self.srv.Get(pods_path)["items"]] if
                       len(self.srv.Get(pods_path)["items"]) == 2 else None, 20, what="2 gated pods")
        for p in pods:
            self.assertEqual(p["metadata"]["labels"]["mutated"], "yes")
            self.assertEqual(p["spec"]["schedulingGates"], [{"name": GATE}])
            self.assertEqual(p["spec"]["schedulingGroup"], {"podGroupName": "grp-1"})
            self.assertEqual(p["status"]["phase"], "Pending")
            cond = [c for c in p["status"]["conditions"] if c["type"] == "PodScheduled"][0]
            self.assertEqual((cond["status"], cond["reason"]), ("False", "SchedulingGated"))
        req = [r for r in self.hook.calls("/mutate-pod") if r["object"]["metadata"]["labels"]["app"] == "gated"][0]
        # as kube: the name is generated after mutating admission
        self.assertEqual(req["name"], "")
        self.assertTrue(req["object"]["metadata"]["generateName"].startswith("gated-"))
        owner = req["object"]["metadata"]["ownerReferences"][0]
        self.assertEqual((owner["kind"], owner["controller"]), ("ReplicaSet", True))
        self.assertIn("pod-template-hash", req["object"]["metadata"]["labels"])
        self.assertEqual(req["userInfo"]["username"], "system:serviceaccount:kube-system:replicaset-controller")
        self.assertEqual(req["object"]["spec"]["restartPolicy"], "Always")
        # the gate may be removed but not added; the PodGroup does not exist so it waits
        name = pods[0]["metadata"]["name"]
        path = f"/api/v1/namespaces/default/pods/{name}"
        status, _, out = self.srv.Request("PATCH", path, [{"op": "add", "path": "/spec/schedulingGates/-",
                                                           "value": {"name": "other"}}],
                                          content_type="application/json-patch+json")
        self.assertEqual(status, 422, out)
        self.assertIn("spec.schedulingGates: Forbidden: only deletion is allowed, but found new scheduling gate 'other'",
                      out["message"])
        status, _, out = self.srv.Request("PATCH", path, [{"op": "remove", "path": "/spec/schedulingGates"}],
                                          content_type="application/json-patch+json")
        self.assertEqual(status, 200, out)
        wait_for(lambda: "waiting for PodGroup" in json.dumps(self.srv.Get(path)["status"]), 10,
                what="pod waiting for its PodGroup")
        pg = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "grp-1"},
              "spec": {"schedulingPolicy": {"basic": {}}}}
        status, _, out = self.srv.Request("POST", "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups", pg)
        self.assertEqual(status, 201, out)
        wait_for(lambda: self.srv.Get(path)["status"]["phase"] == "Running", 10, what="ungated pod running")
        # the PodGroup protection finalizer is stamped at creation and holds a deleted
        # PodGroup while pods name it
        self.assertEqual(out["metadata"]["finalizers"], ["scheduling.k8s.io/podgroup-protection"])
        pg_path = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups/grp-1"
        self.srv.Request("DELETE", pg_path)
        self.assertTrue(self.srv.Get(pg_path)["metadata"].get("deletionTimestamp"))
        self.srv.Kubectl("delete", "deployment", "gated", "--cascade=foreground", "--timeout=30s")
        wait_for(lambda: self.srv.Get(pg_path) is None, 20, what="podgroup gone after its pods")

    def test_podgroup_protection_stamped_at_creation(self):
        """As kube's PodGroupProtection admission plugin and controller: the finalizer comes
        with the create, and goes only when the PodGroup is deleted and no pod names it."""
        base = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"
        pg = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "lonely"},
              "spec": {"schedulingPolicy": {"basic": {}}}}
        status, _, out = self.srv.Request("POST", base, pg)
        self.assertEqual(status, 201, out)
        self.assertEqual(out["metadata"]["finalizers"], ["scheduling.k8s.io/podgroup-protection"])
        status, _, out = self.srv.Request("DELETE", f"{base}/lonely")
        self.assertEqual(status, 200, out)
        self.assertTrue(out["metadata"].get("deletionTimestamp"))  # held until the controller looks
        wait_for(lambda: self.srv.Get(f"{base}/lonely") is None, 10, what="unused podgroup gone")
        # Without the podgroup controller, no finalizer is stamped (nothing would remove it).
        self.srv.SetControllers(["deployment", "replicaset", "scheduler", "gc", "namespace", "kubelet"])
        self.addCleanup(self.srv.SetControllers, ["deployment", "replicaset", "scheduler", "gc", "podgroup",
                                                  "namespace", "kubelet"])
        status, _, out = self.srv.Request("POST", base, dict(pg, metadata={"name": "bare"}))
        self.assertEqual(status, 201, out)
        self.assertNotIn("finalizers", out["metadata"])
        self.assertEqual(self.srv.Request("DELETE", f"{base}/bare")[0], 200)
        self.assertIsNone(self.srv.Get(f"{base}/bare"))

    def test_failure_policy_when_webhook_is_down(self):
        dead = free_port()  # nothing listens there
        for policy, name in (("Fail", "fail.test.io"), ("Ignore", "ignore.test.io")):
            cfg = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                   "metadata": {"name": name},
                   "webhooks": [{"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                                 "failurePolicy": policy, "timeoutSeconds": 2,
                                 "clientConfig": {"url": f"https://127.0.0.1:{dead}/x", "caBundle": self.hook.ca_bundle},
                                 "objectSelector": {"matchLabels": {"policy": policy}},
                                 "rules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                                            "resources": ["deployments"]}]}]}
            self.srv.Kubectl("apply", "-f", "-", input=json.dumps(cfg))
            self.addCleanup(self.srv.Kubectl, "delete", "validatingwebhookconfiguration", name, check=False)
        p = self.Apply(deployment("down-fail", labels={"policy": "Fail"}, **PLAIN), check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('Error from server (InternalError): error when creating "STDIN": Internal error occurred: '
                      'failed calling webhook "fail.test.io": failed to call webhook: Post '
                      f'"https://127.0.0.1:{dead}/x?timeout=2s"', p.stderr)
        self.Apply(deployment("down-ignore", labels={"policy": "Ignore"}, **PLAIN))
        self.assertIsNotNone(self.srv.Get("/apis/apps/v1/namespaces/default/deployments/down-ignore"))

    def test_wrong_ca_bundle_fails_tls(self):
        other_ca, _, _ = make_serving(self.tmp, "other", ["other"])
        self.Register("ValidatingWebhookConfiguration", "badca.test.io", "/allow",
                      [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}],
                      objectSelector={"matchLabels": {"badca": "true"}},
                      clientConfig={"url": f"https://localhost:{self.hook.port}/allow",
                                    "caBundle": base64.b64encode(open(other_ca, "rb").read()).decode()})
        status, _, out = self.srv.Request("POST", "/apis/apps/v1/namespaces/default/deployments",
                                          deployment("badca", labels={"badca": "true"}, **PLAIN))
        self.assertEqual(status, 500)
        self.assertIn('failed calling webhook "badca.test.io"', out["message"])
        self.assertIn("CERTIFICATE_VERIFY_FAILED", out["message"])

    def test_service_reference_and_namespace_selector(self):
        self.srv.SetServiceEndpoint("hooks", "hook", "127.0.0.1", self.hook.port)
        self.Register("ValidatingWebhookConfiguration", "ns.test.io", "/allow",
                      [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}],
                      clientConfig={"service": {"namespace": "hooks", "name": "hook", "path": "/ns-scoped"},
                                    "caBundle": self.hook.ca_bundle},
                      namespaceSelector={"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                                                               "operator": "NotIn", "values": ["skipped"]}]})
        for ns in ("skipped", "watched"):
            self.srv.Kubectl("create", "namespace", ns)
            self.Apply(deployment("d", namespace=ns, **PLAIN))
        called = [r["namespace"] for r in self.hook.calls("/ns-scoped")]
        self.assertEqual(called, ["watched"])
        # a delete of the namespace removes its content, then the namespace
        self.srv.Kubectl("delete", "namespace", "skipped", "--timeout=30s")
        self.assertIsNone(self.srv.Get("/api/v1/namespaces/skipped"))

    def test_match_conditions_see_old_object(self):
        has = lambda o: (f"({o} != null && has({o}.metadata.annotations) && "
                         f"'wasd.io/scheduling' in {o}.metadata.annotations)")
        self.Register("ValidatingWebhookConfiguration", "cond.test.io", "/cond",
                      [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                        "resources": ["deployments"]}],
                      matchConditions=[{"name": "opted-in", "expression": has("object") + " || " + has("oldObject")}])
        self.Apply(deployment("plain-cond", **PLAIN))
        self.assertEqual(self.hook.calls("/cond"), [])
        self.Apply(deployment("cond", annotations={"wasd.io/scheduling": "{}"}, **PLAIN))
        self.assertEqual([r["operation"] for r in self.hook.calls("/cond")], ["CREATE"])
        path = "/apis/apps/v1/namespaces/default/deployments/cond"
        status, _, _ = self.srv.Request("PATCH", path, {"metadata": {"annotations": {"wasd.io/scheduling": None}}},
                                        content_type="application/merge-patch+json")
        self.assertEqual(status, 200)
        upd = self.hook.calls("/cond")[-1]
        self.assertEqual(upd["operation"], "UPDATE")
        self.assertIn("wasd.io/scheduling", upd["oldObject"]["metadata"]["annotations"])
        self.assertNotIn("wasd.io/scheduling", upd["object"]["metadata"].get("annotations") or {})
        self.assertEqual(upd["options"]["kind"], "UpdateOptions")

    def test_scale_subresource_review(self):
        self.Register("ValidatingWebhookConfiguration", "scale.test.io", "/deny-scale",
                      [{"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                        "resources": ["deployments/scale"]}])
        self.Apply(deployment("scaled", replicas=2, **PLAIN))
        self.srv.Kubectl("scale", "deployment", "scaled", "--replicas=4")
        req = self.hook.calls("/deny-scale")[-1]
        self.assertEqual(req["kind"], {"group": "autoscaling", "version": "v1", "kind": "Scale"})
        self.assertEqual(req["resource"]["resource"], "deployments")
        self.assertEqual((req["subResource"], req["requestSubResource"]), ("scale", "scale"))
        self.assertEqual((req["oldObject"]["spec"]["replicas"], req["object"]["spec"]["replicas"]), (2, 4))
        self.assertEqual(req["object"]["status"]["selector"], "app=scaled")
        p = self.srv.Kubectl("scale", "deployment", "scaled", "--replicas=9", check=False)
        self.assertIn('admission webhook "scale.test.io" denied the request: spec.replicas: Invalid value: 9: above 5',
                      p.stderr)
        self.assertEqual(self.srv.Get("/apis/apps/v1/namespaces/default/deployments/scaled")["spec"]["replicas"], 4)
        # dry run is refused for a webhook that may have side effects
        self.Register("ValidatingWebhookConfiguration", "effects.test.io", "/allow",
                      [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}],
                      sideEffects="Some")
        p = self.srv.Kubectl("create", "deployment", "dry", "--image=x", "--dry-run=server", check=False)
        self.assertIn('admission webhook "effects.test.io" does not support dry run', p.stderr)

    def test_status_subresource_review(self):
        # kube calls webhooks registered for deployments/status on a write of the status
        # subresource: subResource "status", resource deployments, the whole object and oldObject.
        rules = lambda res: [{"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                              "resources": [res]}]
        sel = {"matchLabels": {"status-test": "yes"}}
        self.Register("ValidatingWebhookConfiguration", "status.test.io", "/deny-status",
                      rules("deployments/status"), objectSelector=sel)
        self.Register("ValidatingWebhookConfiguration", "main.test.io", "/main-only",
                      rules("deployments"), objectSelector=sel)
        self.Apply(deployment("st", labels={"status-test": "yes"}, annotations={"a": "1"}, **PLAIN))
        path = "/apis/apps/v1/namespaces/default/deployments/st"
        self.addCleanup(self.srv.Request, "DELETE", path)
        d = self.srv.Get(path)
        before = json.loads(json.dumps(d))
        d["metadata"].pop("resourceVersion")  # unconditional: the controller writes status too
        d["metadata"]["annotations"]["note"] = "written through /status"
        d["metadata"]["labels"]["other"] = "ignored"
        d["spec"]["replicas"] = 7
        d.setdefault("status", {})["observedGeneration"] = 1
        seq = self.srv.LastSeq()
        status, _, out = self.srv.Request("PUT", path + "/status", d)
        self.assertEqual(status, 200, out)
        # Ours, not one of the deployment controller's own status writes.
        req = [r for r in self.hook.calls("/deny-status")
               if not r["userInfo"]["username"].startswith("system:serviceaccount:kube-system:")][-1]
        self.assertEqual((req["operation"], req["subResource"], req["requestSubResource"]),
                         ("UPDATE", "status", "status"))
        self.assertEqual(req["resource"], {"group": "apps", "version": "v1", "resource": "deployments"})
        self.assertEqual(req["kind"], {"group": "apps", "version": "v1", "kind": "Deployment"})
        self.assertEqual(req["object"]["metadata"]["annotations"]["note"], "written through /status")
        self.assertEqual(req["object"]["spec"]["replicas"], 1)  # spec comes from the stored object
        self.assertEqual(req["oldObject"]["metadata"]["annotations"]["a"], "1")
        self.assertNotIn("note", req["oldObject"]["metadata"]["annotations"])
        self.assertEqual(req["oldObject"]["spec"], before["spec"])
        put = wait_for(lambda: [e for e in self.srv.Audit(since=seq, methods=("PUT",))
                               if e["path"] == path + "/status" and e.get("source") != "controller"],
                      10, what="the audit record")
        # Not the main resource's (a retry after a concurrent write calls it again, as kube does).
        self.assertEqual(set(put[-1]["webhooks"]), {"status.test.io"})
        self.assertTrue(all(r["subResource"] == "" for r in self.hook.calls("/main-only")))
        # As kube's deployment status strategy: the annotation is persisted, spec and labels are not.
        stored = self.srv.Get(path)
        self.assertEqual(stored["metadata"]["annotations"]["note"], "written through /status")
        self.assertEqual(stored["spec"]["replicas"], 1)
        self.assertNotIn("other", stored["metadata"]["labels"])
        # A denial on /status is kube's webhook error, and nothing is written.
        stored["metadata"]["annotations"]["deny"] = "yes"
        stored["metadata"].pop("resourceVersion")
        status, _, out = self.srv.Request("PUT", path + "/status", stored)
        self.assertEqual(status, 422, out)
        self.assertIn('admission webhook "status.test.io" denied the request', out["message"])
        self.assertNotIn("deny", self.srv.Get(path)["metadata"]["annotations"])

    def test_annotations_over_256KiB_are_refused_before_validating_webhooks(self):
        # kube's ValidateAnnotationsSize (len(key) + len(value), all annotations) runs in the
        # registry's validation: after mutating admission, before validating admission.
        rule = [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                 "resources": ["deployments", "deployments/status"]}]
        sel = {"matchLabels": {"size-test": "yes"}}
        self.Register("MutatingWebhookConfiguration", "size-mutate.test.io", "/allow", rule, objectSelector=sel)
        self.Register("ValidatingWebhookConfiguration", "size-validate.test.io", "/allow", rule,
                      objectSelector=sel)
        limit = 262144
        base = "/apis/apps/v1/namespaces/default/deployments"
        # Two annotations, 262,145 bytes together (keys count too).
        over = deployment("big", labels={"size-test": "yes"},
                          annotations={"a": "x" * 1000, "wasd.io/scheduling": "y" * (limit - 1000 - 1 - 18 + 1)}, **PLAIN)
        seq = self.srv.LastSeq()
        status, _, out = self.srv.Request("POST", base, over)
        self.assertEqual(status, 422, str(out)[:300])
        self.assertEqual(out["reason"], "Invalid")
        self.assertEqual(out["message"], 'Deployment.apps "big" is invalid: metadata.annotations: '
                                         'Too long: must have at most 262144 bytes')
        self.assertEqual(out["details"]["causes"], [{"reason": "FieldValueTooLong", "field": "metadata.annotations",
                                                     "message": "Too long: must have at most 262144 bytes"}])
        post = wait_for(lambda: [e for e in self.srv.Audit(since=seq, methods=("POST",)) if e["path"] == base],
                       10, what="the audit record")  # written once the answer is sent
        self.assertEqual(post[-1]["webhooks"], ["size-mutate.test.io"])  # never the validating one
        # Exactly at the limit: created.
        ok = deployment("big", labels={"size-test": "yes"},
                        annotations={"a": "x" * 1000, "wasd.io/scheduling": "y" * (limit - 1000 - 1 - 18)}, **PLAIN)
        status, _, out = self.srv.Request("POST", base, ok)
        self.assertEqual(status, 201, str(out)[:300])
        self.addCleanup(self.srv.Request, "DELETE", f"{base}/big")
        # Updates (main resource and status) are held to the same limit.
        grow = {"metadata": {"annotations": {"b": "z"}}}
        status, _, out = self.srv.Request("PATCH", f"{base}/big", grow, content_type="application/merge-patch+json")
        self.assertEqual((status, out["details"]["causes"][0]["field"]), (422, "metadata.annotations"),
                         str(out)[:300])
        d = self.srv.Get(f"{base}/big")
        d["metadata"].pop("resourceVersion")
        d["metadata"]["annotations"]["b"] = "z"
        status, _, out = self.srv.Request("PUT", f"{base}/big/status", d)
        self.assertEqual((status, out["details"]["causes"][0]["field"]), (422, "metadata.annotations"),
                         str(out)[:300])


if __name__ == "__main__":
    unittest.main()
