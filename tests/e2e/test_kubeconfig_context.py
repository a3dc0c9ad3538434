"""End-to-end: `wasd reconciler` and `wasd webhook` choose their cluster inside a
kubeconfig the way kubectl does (kube/config.h, issue 42).

Every kubeconfig here has two clusters: the test API server ("live") and a loopback
port nothing listens on ("dead"), and its current-context points at the dead one. So
a daemon that comes up ready, or whose lookups reach the test API server's audit, has
honoured --context; a daemon that ignored it would be talking to the dead port. The
control (no --context) shows the dead current-context really is the default.

  * reconciler --kubeconfig FILE --context live: ready, logs the live server;
    without --context it logs the dead one and never becomes ready.
  * reconciler with $KUBECONFIG = missing::first:second (no --kubeconfig) and
    --context live, a context defined only in the second file, whose user is
    defined only in the first: ready (the files are merged, a missing file and an
    empty entry are skipped).
  * webhook --kubeconfig FILE --context live: a deployments/scale review is decided
    by a lookup that the test API server answers.
"""
import json
import os
import shutil
import tempfile
import unittest

from apiserver.harness import ApiServer
from lib.certs import Pki
from lib.net import free_port
from lib.paths import read_testdata
from lib.reconciler import Reconciler
from lib.wait import wait_for
from lib.webhook import Webhook

WAIT = 20.0  # upper bound, in seconds, of any single wait in these tests


class KubeconfigContextTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-kubeconfig-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.api = ApiServer(args=["--controllers", ""]).Start()
        cls.addClassCleanup(cls.api.Stop)
        with open(cls.api.kubeconfig) as f:
            base = json.load(f)
        live_cluster = base["clusters"][0]["cluster"]
        cls.dead_url = f"https://127.0.0.1:{free_port()}"  # nothing listens there
        dead_cluster = dict(live_cluster, server=cls.dead_url)
        user = base["users"][0]
        # One file, both contexts; current-context is the dead one.
        cls.both = cls.write("both.json", {
            "apiVersion": "v1", "kind": "Config", "current-context": "dead",
            "clusters": [{"name": "dead", "cluster": dead_cluster},
                         {"name": "live", "cluster": live_cluster}],
            "users": [user],
            "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": user["name"]}},
                         {"name": "live", "context": {"cluster": "live", "user": user["name"]}}]})
        # The same split in two: the first file sets current-context (dead) and holds
        # the user; the second holds the live cluster and context only.
        cls.first = cls.write("first.json", {
            "apiVersion": "v1", "kind": "Config", "current-context": "dead",
            "clusters": [{"name": "dead", "cluster": dead_cluster}],
            "users": [user],
            "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": user["name"]}}]})
        cls.second = cls.write("second.json", {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "live", "cluster": live_cluster}],
            "contexts": [{"name": "live", "context": {"cluster": "live", "user": user["name"]}}]})

    @classmethod
    def write(cls, name, doc):
        path = os.path.join(cls.tmp, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def reconciler(self, name, kubeconfig, args=(), env=None):
        r = Reconciler(kubeconfig, self.tmp, name=name, env=env,
                       args=["--leader-elect=false", *args]).start()
        self.addCleanup(r.stop)
        return r

    def configuration_line(self, rec):
        """The reconciler's "configuration" log line, parsed."""
        def line():
            for text in rec.logs().splitlines():
                if '"configuration"' in text:
                    return json.loads(text)
            return None
        return wait_for(line, WAIT, 0.05, f"{rec.name}'s configuration log line")

    def test_reconciler_context_flag_picks_the_cluster(self):
        rec = self.reconciler("with-context", self.both, ("--context", "live")).wait_ready(WAIT)
        line = self.configuration_line(rec)
        self.assertEqual(line["server"], self.api.url)
        self.assertIn("context live", line["source"])

        control = self.reconciler("current-context", self.both)
        line = self.configuration_line(control)
        self.assertEqual(line["server"], self.dead_url)
        self.assertIn("context dead", line["source"])
        # Still running, never ready: its API server does not answer.
        self.assertIsNone(control.proc.poll())
        self.assertFalse(control.ready())

    def test_reconciler_merges_a_kubeconfig_list(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
        env["HOME"] = self.tmp
        env["KUBECONFIG"] = ":".join([os.path.join(self.tmp, "missing.json"), "",
                                      self.first, self.second])
        rec = self.reconciler("from-list", None, ("--context", "live"), env=env).wait_ready(WAIT)
        line = self.configuration_line(rec)
        self.assertEqual(line["server"], self.api.url)
        self.assertIn("cluster from " + self.second, line["source"])

    def test_webhook_context_flag_picks_the_cluster(self):
        pki = Pki(self.tmp)
        with Webhook(pki.serving_certs(), kubeconfig=self.both, workdir=self.tmp,
                     args=["--context", "live", "--lookup-timeout", "5s"],
                     start_timeout=WAIT) as hook:
            review = json.loads(read_testdata("e2e", "deployment-scale.json"))
            req = review["request"]
            req["uid"] = "scale-ctx"
            req["name"] = req["object"]["metadata"]["name"] = "not-stored"
            req["object"]["spec"]["replicas"] = req["oldObject"]["spec"]["replicas"] + 1
            status, _, body = hook.post("/validate-apps-v1-deployment", json.dumps(review).encode())
            self.assertEqual(status, 200, body)
            # Not found in the live cluster: allowed (the dead one would give 503).
            self.assertTrue(json.loads(body)["response"]["allowed"], body)
            wait_for(lambda: self.api.Audit(methods=("GET",), path="/deployments/not-stored"),
                     WAIT, 0.05, "the lookup in the test API server's audit")


if __name__ == "__main__":
    unittest.main()
