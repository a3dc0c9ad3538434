"""The test API server must not inject faults of its own: a PATCH without a
resourceVersion that races with another write is retried by kube-apiserver
(GuaranteedUpdate re-reads the object and re-applies the patch), so its client
never sees 409. Only a patch that names a resourceVersion may conflict.

Found by the fault suite: the test's own `kubectl scale`-like merge patch of a
Deployment got 409 while the Deployment controller wrote status during the
patch's admission. Here the race is made certain with a slow mutating webhook:
two patches of one Deployment both read it, both wait in admission, one commits
first.
"""
import json
import shutil
import tempfile
import threading
import time
import unittest

from apiserver.harness import ApiServer
from lib.manifests import deployment
from lib.scripted_webhook import ScriptedWebhook

PATH = "/apis/apps/v1/namespaces/default/deployments/racy"


def SlowlyAllow(path, req):
    """The webhook's answer: allow everything; Deployment updates wait 0.5 s first."""
    if req.get("operation") == "UPDATE":
        time.sleep(0.5)
    return {"allowed": True}


class PatchConflictTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-faults-conflict-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.srv = ApiServer(args=["--controllers", ""]).Start()
        cls.addClassCleanup(cls.srv.Stop)
        cls.hook = ScriptedWebhook(cls.tmp, SlowlyAllow)
        cls.addClassCleanup(cls.hook.stop)
        cfg = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
               "metadata": {"name": "slow"},
               "webhooks": [{"name": "slow.faults.wasd.io", "admissionReviewVersions": ["v1"],
                             "sideEffects": "None",
                             "clientConfig": {"url": f"https://localhost:{cls.hook.port}/slow",
                                              "caBundle": cls.hook.ca_bundle},
                             "rules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                        "operations": ["UPDATE"], "resources": ["deployments"]}]}]}
        status, _, out = cls.srv.Request(
            "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", cfg)
        assert status == 201, out
        status, _, out = cls.srv.Request("POST", "/apis/apps/v1/namespaces/default/deployments",
                                         deployment("racy", labels={}, scheduling=False, strategy=None,
                                                                    image="busybox:1"))
        assert status == 201, out

    def Concurrently(self, patches, content_type="application/merge-patch+json"):
        results = [None] * len(patches)

        def One(i):
            results[i] = self.srv.Request("PATCH", PATH, patches[i], content_type=content_type)

        threads = [threading.Thread(target=One, args=(i,)) for i in range(len(patches))]
        for t in threads:
            t.start()
            time.sleep(0.05)  # both reach admission before either commits
        for t in threads:
            t.join(30)
        return [(r[0], r[2]) for r in results]

    def test_patches_without_resource_version_do_not_conflict(self):
        results = self.Concurrently([{"metadata": {"labels": {"first": "1"}}},
                                     {"metadata": {"labels": {"second": "2"}}}])
        self.assertEqual([code for code, _ in results], [200, 200], results)
        labels = self.srv.Get(PATH)["metadata"]["labels"]
        self.assertEqual((labels.get("first"), labels.get("second")), ("1", "2"))
        results = self.Concurrently([[{"op": "add", "path": "/metadata/labels/third", "value": "3"}],
                                     [{"op": "add", "path": "/metadata/labels/fourth", "value": "4"}]],
                                    content_type="application/json-patch+json")
        self.assertEqual([code for code, _ in results], [200, 200], results)

    def test_patch_naming_a_resource_version_still_conflicts(self):
        rv = self.srv.Get(PATH)["metadata"]["resourceVersion"]
        results = self.Concurrently([{"metadata": {"labels": {"a": "1"}, "resourceVersion": rv}},
                                     {"metadata": {"labels": {"b": "2"}, "resourceVersion": rv}}])
        self.assertEqual(sorted(code for code, _ in results), [200, 409], json.dumps(results)[:500])


if __name__ == "__main__":
    unittest.main(verbosity=2)
