"""End-to-end (review finding L2, docs/design.md Q18): a running `wasd webhook` answers an
AdmissionReview for a resource its path does not serve (a StatefulSet sent to the Deployment
paths, as a misregistered webhook would) with `allowed` and no patch, and logs it once per
path and resource, not once per request."""
import copy
import http.client
import json
import shutil
import ssl
import tempfile
import unittest

from lib.certs import generate_certs
from lib.paths import testdata
from lib.webhook import Webhook


def Review(uid, kind, resource, obj):
    with open(testdata("e2e", "deployment-valid.json")) as f:
        review = json.load(f)
    req = review["request"]
    req.update({"uid": uid, "kind": kind, "resource": resource, "requestKind": kind,
                "requestResource": resource, "object": obj})
    return json.dumps(review).encode()


class OutOfScopeTest(unittest.TestCase):
    def test_other_kinds_allowed_untouched_and_logged_once(self):
        tmp = tempfile.mkdtemp(prefix="wasd-scope-")
        self.addCleanup(shutil.rmtree, tmp, True)
        certs = generate_certs(tmp)
        with Webhook(certs, workdir=tmp) as hook:
            ctx = ssl.create_default_context(cafile=certs["ca.crt"])

            def Post(path, body):
                conn = http.client.HTTPSConnection("127.0.0.1", hook.port, timeout=20, context=ctx)
                try:
                    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    return resp.status, json.loads(resp.read())
                finally:
                    conn.close()

            with open(testdata("e2e", "deployment-valid.json")) as f:
                sts = copy.deepcopy(json.load(f)["request"]["object"])
            sts["kind"] = "StatefulSet"
            sts["spec"]["strategy"] = {"type": "RollingUpdate"}  # a Deployment like this is denied
            kind = {"group": "apps", "version": "v1", "kind": "StatefulSet"}
            resource = {"group": "apps", "version": "v1", "resource": "statefulsets"}
            for i in range(3):
                for path in ("/validate-apps-v1-deployment", "/mutate-apps-v1-deployment"):
                    status, review = Post(path, Review(f"sts-{i}", kind, resource, sts))
                    self.assertEqual(status, 200)
                    self.assertEqual(review["response"]["uid"], f"sts-{i}")
                    self.assertTrue(review["response"]["allowed"])
                    self.assertNotIn("patch", review["response"])
            lines = hook.log_entries()
            scope = [l for l in lines if l.get("level") == "warn" and "does not answer" in l.get("msg", "")]
            self.assertEqual(sorted((l["webhook"], l["resource"]) for l in scope),
                             [("mutate-deployment", "apps/v1 statefulsets (kind apps/v1 StatefulSet)"),
                              ("validate-deployment", "apps/v1 statefulsets (kind apps/v1 StatefulSet)")])


if __name__ == "__main__":
    unittest.main()
