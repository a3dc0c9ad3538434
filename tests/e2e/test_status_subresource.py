"""End-to-end (review finding M1, docs/design.md "Admission webhook"): the validating webhook is
registered for deployments/status as well, as the chart does, so a write of the status
subresource meets the same UPDATE rules as one of the Deployment itself. Annotations are
persisted through /status (kube's deployment status strategy keeps only spec and labels), so
without the registration a PUT .../status could raise gang.minCount above replicas or remove
the scheduling annotation unseen. Runs the real `wasd webhook` against the test API server.
"""
import copy
import json
import unittest

from lib.cluster import Env
from lib.manifests import NS, deployment
from lib.wait import wait_for

ANNOTATION = "wasd.io/scheduling"
WEBHOOK = "deployments.validate.wasd.io"


class StatusSubresourceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = Env().__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.env.stop()

    def Path(self, name):
        return f"/apis/apps/v1/namespaces/{NS}/deployments/{name}"

    def Stored(self, name):
        return self.env.srv.Get(self.Path(name))

    def PutStatus(self, name, obj):
        body = copy.deepcopy(obj)
        body["metadata"].pop("resourceVersion", None)  # unconditional: the controller writes status too
        return self.env.srv.Request("PUT", self.Path(name) + "/status", body)

    def Causes(self, out):
        return [c.get("field") for c in (out.get("details") or {}).get("causes") or []]

    def test_status_writes_meet_the_update_rules(self):
        self.env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment("st", 2, min_count=2))
        before = self.Stored("st")
        config = before["metadata"]["annotations"][ANNOTATION]
        seq = self.env.srv.LastSeq()

        # gang.minCount above spec.replicas (H1), written through /status.
        raised = copy.deepcopy(before)
        raised["metadata"]["annotations"][ANNOTATION] = json.dumps(
            {"schedulingPolicy": {"gang": {"minCount": 5}}})
        code, _, out = self.PutStatus("st", raised)
        self.assertEqual(code, 422, out)
        self.assertIn(f'admission webhook "{WEBHOOK}" denied the request', out["message"])
        self.assertIn(f"metadata.annotations[{ANNOTATION}].schedulingPolicy.gang.minCount", self.Causes(out))

        # The scheduling annotation removed (U2), written through /status.
        removed = copy.deepcopy(before)
        del removed["metadata"]["annotations"][ANNOTATION]
        code, _, out = self.PutStatus("st", removed)
        self.assertEqual(code, 422, out)
        self.assertIn(f"metadata.annotations[{ANNOTATION}]", self.Causes(out))

        self.assertEqual(self.Stored("st")["metadata"]["annotations"][ANNOTATION], config)
        def puts():
            return [e for e in self.env.srv.Audit(since=seq, methods=("PUT",))
                    if e["path"] == self.Path("st") + "/status" and e.get("source") != "controller"]
        # The audit record of a request may follow its answer by a moment.
        wait_for(lambda: len(puts()) >= 2, 10, 0.05, "both status PUTs in the audit log")
        self.assertEqual([e["status"] for e in puts()], [422, 422])  # each denied by the message above

        # A status write that keeps the rules' inputs is allowed (ratcheting), and its
        # annotations are persisted, as kube's status strategy does.
        kept = copy.deepcopy(self.Stored("st"))
        kept["metadata"]["annotations"]["example.com/note"] = "through status"
        code, _, out = self.PutStatus("st", kept)
        self.assertEqual(code, 200, out)
        stored = self.Stored("st")
        self.assertEqual(stored["metadata"]["annotations"]["example.com/note"], "through status")
        self.assertEqual(stored["metadata"]["annotations"][ANNOTATION], config)


if __name__ == "__main__":
    unittest.main()
