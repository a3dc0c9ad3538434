"""The bench API server (build/wasd-bench-apiserver) honours field selectors
as kube-apiserver does, for the fields wasd selects on: the gang doctor's
bound-pod informer lists and watches `spec.nodeName!=,status.phase!=Succeeded,
status.phase!=Failed`. A server that ignored the selector would hand the
reconciler every pod twice and make the doctor look far dearer in
tools/bench/scale_bench.py than it is against a real cluster.

  * LIST filters on metadata.name, metadata.namespace, spec.nodeName and
    status.phase with =, == and !=; an unsupported field is a 400 worded as
    kube-apiserver words it;
  * WATCH sends an object that moves into the selection as ADDED and one that
    moves out of it as DELETED (at the new resourceVersion), and nothing for
    changes outside it — live and when replayed from a resourceVersion."""
import http.client
import json
import os
import shutil
import subprocess
import threading
import tempfile
import time
import unittest
import urllib.parse

BIN_DIR = os.path.dirname(os.environ.get("WASD_BIN", ""))
SERVER = os.environ.get("WASD_BENCH_APISERVER", os.path.join(BIN_DIR, "wasd-bench-apiserver"))
PODS = "/api/v1/namespaces/bench/pods"
BOUND = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"


class BenchApiserverSelectors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(SERVER):
            raise unittest.SkipTest(f"{SERVER} not built")
        cls.tmp = tempfile.mkdtemp(prefix="wasd-bench-sel-")
        ready = os.path.join(cls.tmp, "ready")
        cls.proc = subprocess.Popen([SERVER, "--port", "0", "--ready-file", ready],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(ready) or cls.proc.poll() is not None:
                break
            time.sleep(0.05)
        with open(ready) as f:
            cls.port = json.load(f)["port"]

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        try:
            cls.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            cls.proc.kill()
            cls.proc.wait(timeout=10)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def call(self, method, path, body=None, content_type="application/json"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            c.request(method, path, None if body is None else json.dumps(body),
                      {"Content-Type": content_type})
            r = c.getresponse()
            return r.status, json.loads(r.read() or b"null")
        finally:
            c.close()

    def merge(self, name, patch):
        """A merge patch of pod `name`; the pod as the server answers."""
        status, obj = self.call("PATCH", PODS + "/" + name, patch, "application/merge-patch+json")
        self.assertEqual(status, 200, obj)
        return obj

    def pod(self, name, node="", phase="Pending"):
        spec = {"containers": [{"name": "c", "image": "i"}]}
        if node:
            spec["nodeName"] = node
        status, obj = self.call("POST", PODS, {"apiVersion": "v1", "kind": "Pod",
                                               "metadata": {"name": name}, "spec": spec,
                                               "status": {"phase": phase}})
        self.assertEqual(status, 201, obj)
        return obj

    def names(self, selector):
        status, lst = self.call("GET", PODS + "?fieldSelector=" + urllib.parse.quote(selector))
        self.assertEqual(status, 200, lst)
        return sorted(i["metadata"]["name"] for i in lst["items"])

    def watch(self, selector, rv):
        """The events of a watch from `rv` that ends after 1 s: [(type, name, rv)]."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            c.request("GET", PODS + "?watch=1&timeoutSeconds=1&resourceVersion=" + rv +
                      "&fieldSelector=" + urllib.parse.quote(selector))
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            out = []
            for line in r.read().decode().splitlines():
                if line.strip():
                    e = json.loads(line)
                    md = e["object"]["metadata"]
                    out.append((e["type"], md["name"], md["resourceVersion"]))
            return out
        finally:
            c.close()

    def test_list_filters_on_fields(self):
        self.pod("l-pending")
        self.pod("l-bound", node="node-1", phase="Running")
        self.pod("l-done", node="node-1", phase="Succeeded")
        self.assertEqual([n for n in self.names(BOUND) if n.startswith("l-")], ["l-bound"])
        self.assertEqual(self.names("metadata.name=l-done"), ["l-done"])
        self.assertEqual(self.names("metadata.name==l-done"), ["l-done"])
        self.assertIn("l-pending", self.names("spec.nodeName="))
        self.assertNotIn("l-bound", self.names("spec.nodeName="))
        self.assertEqual(self.names("metadata.namespace=elsewhere"), [])

    def test_unsupported_field_is_a_bad_request(self):
        status, body = self.call("GET", PODS + "?fieldSelector=spec.foo%3Dbar")
        self.assertEqual(status, 400, body)
        self.assertEqual(body["reason"], "BadRequest")
        self.assertEqual(body["message"], "field label not supported: spec.foo")
        status, body = self.call("GET", "/apis/apps/v1/namespaces/bench/deployments"
                                        "?fieldSelector=spec.nodeName%3Dx")
        self.assertEqual(status, 400, body)
        status, body = self.call("GET", PODS + "?watch=1&fieldSelector=status.podIP%3Dx")
        self.assertEqual(status, 400, body)

    def test_watch_sends_moves_into_and_out_of_the_selection(self):
        start = self.pod("w-a")["metadata"]["resourceVersion"]
        # Outside the selection: no event.
        self.merge("w-a", {"metadata": {"labels": {"x": "1"}}})
        # Bound: moves in (ADDED); a label while bound: MODIFIED; done: moves
        # out (DELETED, at the resourceVersion of the change).
        bound = self.merge("w-a", {"spec": {"nodeName": "node-2"}})
        relabelled = self.merge("w-a", {"metadata": {"labels": {"x": "2"}}})
        done = self.merge("w-a", {"status": {"phase": "Succeeded"}})
        want = [("ADDED", "w-a", bound["metadata"]["resourceVersion"]),
                ("MODIFIED", "w-a", relabelled["metadata"]["resourceVersion"]),
                ("DELETED", "w-a", done["metadata"]["resourceVersion"])]
        # Replayed from history ...
        self.assertEqual([e for e in self.watch(BOUND, start) if e[1] == "w-a"], want)
        # ... and live.
        live = {}

        def Watch():
            live["events"] = self.watch(BOUND, done["metadata"]["resourceVersion"])

        t = threading.Thread(target=Watch)
        t.start()
        time.sleep(0.3)
        self.pod("w-b")  # never selected
        b_bound = self.merge("w-b", {"spec": {"nodeName": "node-3"}})
        b_failed = self.merge("w-b", {"status": {"phase": "Failed"}})
        t.join(timeout=10)
        self.assertEqual(live.get("events"),
                         [("ADDED", "w-b", b_bound["metadata"]["resourceVersion"]),
                          ("DELETED", "w-b", b_failed["metadata"]["resourceVersion"])])


if __name__ == "__main__":
    unittest.main(verbosity=2)
