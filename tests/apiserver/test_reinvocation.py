"""Mutating webhooks in configuration-name order with kube's reinvocation rule and
matchConditions: a backend's own webhook next to wasd's (the KAI case: KAI's
`mutating-kai-admission`, IfNeeded, matching only `kai-scheduler` pods, sorts before
`wasd`, which sets the scheduler name)."""
import base64
import json
import tempfile
import unittest

from apiserver.harness import ApiServer
from lib.scripted_webhook import ScriptedWebhook
from lib.wait import wait_for

PODS = "/api/v1/namespaces/default/pods"


def Patch(ops):
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(ops).encode()).decode()}


def Annotate(req, key):
    """A JSON patch adding annotation key=yes when it is absent (else no change)."""
    ann = (req["object"]["metadata"].get("annotations"))
    if ann is None:
        return Patch([{"op": "add", "path": "/metadata/annotations", "value": {key: "yes"}}])
    if key in ann:
        return {"allowed": True}
    return Patch([{"op": "add", "path": "/metadata/annotations/" + key.replace("/", "~1"), "value": "yes"}])


def Decide(path, req):
    if path == "/kai":
        return Annotate(req, "kai")
    if path == "/wasd":
        out = Annotate(req, "wasd")
        if req["object"]["spec"].get("schedulerName") != "kai-scheduler":
            ops = json.loads(base64.b64decode(out["patch"])) if "patch" in out else []
            ops.append({"op": "replace", "path": "/spec/schedulerName", "value": "kai-scheduler"})
            out = Patch(ops)
        return out
    return {"allowed": True}  # /observe: no change


class ReinvocationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-reinvocation-test-")
        cls.srv = ApiServer(args=["--controllers", ""]).Start()
        try:
            cls.hook = ScriptedWebhook(cls.tmp, Decide)
        except BaseException:
            cls.srv.Stop()
            raise
        pods = [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]
        kai_only = [{"name": "kai-pods", "expression": "object.spec.schedulerName == 'kai-scheduler'"}]
        # Registered out of order on purpose: the server sorts by configuration name.
        for name, path, policy, extra in (
                ("z-after", "/observe", "IfNeeded", {}),
                ("wasd", "/wasd", "Never", {}),
                ("mutating-kai-admission", "/kai", "IfNeeded", {"matchConditions": kai_only}),
                ("a-reinvocable", "/observe", "IfNeeded", {})):
            wh = dict({"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                       "reinvocationPolicy": policy, "rules": pods,
                       "clientConfig": {"url": f"https://localhost:{cls.hook.port}{path}",
                                        "caBundle": cls.hook.ca_bundle}}, **extra)
            status, _, out = cls.srv.Request(
                "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                 "metadata": {"name": name}, "webhooks": [wh]})
            assert status == 201, out

    @classmethod
    def tearDownClass(cls):
        cls.hook.stop()
        cls.srv.Stop()

    def Create(self, name, scheduler=None):
        spec = {"containers": [{"name": "c", "image": "x"}]}
        if scheduler:
            spec["schedulerName"] = scheduler
        seq = self.srv.LastSeq()
        status, _, out = self.srv.Request("POST", PODS, {"apiVersion": "v1", "kind": "Pod",
                                                         "metadata": {"name": name}, "spec": spec})
        self.assertEqual(status, 201, out)
        # the audit record is written just after the answer: wait for it (bounded)
        rec = wait_for(lambda: self.srv.Audit(since=seq, methods=("POST",), path="/pods"), what="audit record")
        called = rec[0]["webhooks"]
        return out, called

    def test_backend_webhook_never_called_first_on_reinvocation(self):
        # No schedulerName: KAI's webhook does not match in the first round; wasd then sets
        # kai-scheduler (a change), so a-reinvocable (IfNeeded, called before) is called
        # again; KAI's now matches but was never called, so it is not; z-after came after
        # the change; wasd is Never.
        pod, called = self.Create("plain")
        self.assertEqual(called, ["a-reinvocable", "wasd", "z-after", "a-reinvocable"])
        self.assertEqual(pod["spec"]["schedulerName"], "kai-scheduler")
        self.assertEqual(pod["metadata"]["annotations"], {"wasd": "yes"})  # KAI's mutation never ran

    def test_reinvocation_of_every_earlier_ifneeded_webhook(self):
        # kai-scheduler from the start: KAI's webhook matches and changes the object (a is
        # due), then wasd changes it again (a and KAI are due); the changer itself and
        # z-after (after the last change) are not reinvoked; one reinvocation round only.
        pod, called = self.Create("kai", scheduler="kai-scheduler")
        self.assertEqual(called, ["a-reinvocable", "mutating-kai-admission", "wasd", "z-after",
                                  "a-reinvocable", "mutating-kai-admission"])
        self.assertEqual(pod["metadata"]["annotations"], {"kai": "yes", "wasd": "yes"})


if __name__ == "__main__":
    unittest.main()
