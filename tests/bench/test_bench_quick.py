"""Quick mode of the webhook benchmark, for CI: starts the built `wasd
webhook` with a certificate from `wasd certs generate` (default key type),
sends it the benchmark's own AdmissionReview fixtures (tests/testdata/bench/) and
checks every answer: the envelope, the uid, allowed, for the invalid
Deployment a 422 naming the field paths, and for the pod the JSONPatch
applied to the pod (podGroupName set to the controlling ReplicaSet's PodGroup, the gate
once, nothing else changed). The same checks run again on one kept-alive
connection in mixed order (large body, then small ones) so that per-connection
buffer reuse cannot leak one request into the next, and a reconnect with the
TLS session of the first connection must resume it.

Then, when wrk is installed, a short load (about 2 s per fixture) runs and its
figures are printed. Nothing here asserts on timing: the full comparison is
tools/bench/run.sh compare (see tools/bench/RESULTS.md).

Standalone: needs only the built binary, openssl, and optionally wrk."""
import base64
import copy
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import unittest

from lib.certs import generate_certs
from lib.manifests import pod_group_name
from lib.paths import SOURCE_DIR
from lib.webhook import Webhook

FIXTURES = os.path.join(SOURCE_DIR, "tests", "testdata", "bench")
WRK_SCRIPT = os.path.join(SOURCE_DIR, "tools", "bench", "wrk_post.lua")
GATE = "wasd.io/pod-group"
# Seconds of wrk load per fixture: enough for a figure to print, short for CI.
WRK_SECONDS = 2


def load_expectations():
    rows = []
    with open(os.path.join(FIXTURES, "expect.tsv")) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, path, allowed, patch, must = line.split("\t")
            rows.append({"name": name, "path": path, "allowed": allowed == "true",
                         "patch": patch == "yes",
                         "must": [] if must == "-" else must.split(",")})
    return rows


def pointer_tokens(pointer):
    assert pointer.startswith("/"), pointer
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def apply_patch(doc, ops):
    """RFC 6902 subset the webhook may send (add, replace, remove)."""
    doc = copy.deepcopy(doc)
    for op in ops:
        tokens = pointer_tokens(op["path"])
        parent = doc
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last = tokens[-1]
        if op["op"] in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(op["value"])
                elif op["op"] == "add":
                    parent.insert(int(last), op["value"])
                else:
                    parent[int(last)] = op["value"]
            else:
                if op["op"] == "replace" and last not in parent:
                    raise AssertionError(f"replace of a missing member {op['path']}")
                parent[last] = op["value"]
        elif op["op"] == "remove":
            del parent[int(last) if isinstance(parent, list) else last]
        else:
            raise AssertionError(f"unexpected patch op {op}")
    return doc


def controlling_podgroup(pod):
    """docs/design.md Q12: the PodGroup of the controlling ReplicaSet's incarnation."""
    for ref in pod["metadata"].get("ownerReferences", []):
        if ref.get("controller"):
            return pod_group_name(ref["name"], ref["uid"])
    return None


class QuickBench(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-bench-quick-")
        cls.certs = generate_certs(cls.tmp)
        try:
            # The fixture's pod is native; native in gate mode (the larger patch, the one
            # expect.tsv and the Go peer comparison describe), not the default scheduler hold.
            cls.hook = Webhook(cls.certs, args=["--pod-hold", "native=gate"],
                               workdir=cls.tmp)  # stops itself if it fails to start
        except Exception:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise
        cls.ssl_ctx = ssl.create_default_context(cafile=cls.certs["ca.crt"])
        cls.expect = load_expectations()
        cls.bodies = {}
        for row in cls.expect:
            with open(os.path.join(FIXTURES, row["name"]), "rb") as f:
                cls.bodies[row["name"]] = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.hook.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def connect(self):
        return http.client.HTTPSConnection("localhost", self.hook.port, timeout=10,
                                           context=self.ssl_ctx)

    def post(self, conn, row):
        conn.request("POST", row["path"], body=self.bodies[row["name"]],
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()

    def check_answer(self, row, status, raw):
        name = row["name"]
        self.assertEqual(status, 200, f"{name}: {raw[:300]!r}")
        review = json.loads(raw)
        request = json.loads(self.bodies[name])["request"]
        self.assertEqual(review["apiVersion"], "admission.k8s.io/v1", name)
        self.assertEqual(review["kind"], "AdmissionReview", name)
        response = review["response"]
        self.assertEqual(response["uid"], request["uid"], name)
        self.assertIs(response["allowed"], row["allowed"], f"{name}: {response}")
        if not row["allowed"]:
            self.assertEqual(response["status"]["code"], 422, name)
            for needle in row["must"]:
                self.assertIn(needle, response["status"]["message"], name)
        if not row["patch"]:
            self.assertNotIn("patch", response, name)
            return
        self.assertEqual(response.get("patchType"), "JSONPatch", name)
        ops = json.loads(base64.b64decode(response["patch"]))
        pod = request["object"]
        patched = apply_patch(pod, ops)
        self.assertEqual(patched["spec"]["schedulingGroup"]["podGroupName"],
                         controlling_podgroup(pod), name)
        gates = [g["name"] for g in patched["spec"].get("schedulingGates", [])]
        self.assertEqual(gates.count(GATE), 1, f"{name}: gates {gates}")
        # Nothing else changed: undo exactly the two expected additions.
        del patched["spec"]["schedulingGroup"]
        rest = [g for g in patched["spec"]["schedulingGates"] if g["name"] != GATE]
        if rest or "schedulingGates" in pod["spec"]:
            patched["spec"]["schedulingGates"] = rest
        else:
            del patched["spec"]["schedulingGates"]
        self.assertEqual(patched, pod, f"{name}: the patch changed more than the group and gate")

    def test_default_serving_key_is_ecdsa_p256(self):
        out = subprocess.run(["openssl", "pkey", "-in", self.certs["tls.key"], "-noout", "-text"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
        self.assertIn("prime256v1", out)

    def test_each_fixture_on_a_new_connection(self):
        for row in self.expect:
            with self.subTest(fixture=row["name"]):
                conn = self.connect()
                try:
                    self.check_answer(row, *self.post(conn, row))
                finally:
                    conn.close()

    def test_mixed_requests_on_one_kept_alive_connection(self):
        order = sorted(self.expect, key=lambda r: -len(self.bodies[r["name"]]))
        order = order + list(reversed(order)) + order
        conn = self.connect()
        try:
            for row in order:
                self.check_answer(row, *self.post(conn, row))
        finally:
            conn.close()

    def test_reconnect_resumes_the_tls_session(self):
        row = next(r for r in self.expect if r["patch"])
        first = self.connect()
        try:
            self.check_answer(row, *self.post(first, row))
            session = first.sock.session  # TLS 1.3: the ticket came with the answer
            self.assertFalse(first.sock.session_reused)
        finally:
            first.close()
        self.assertIsNotNone(session)
        with socket.create_connection(("127.0.0.1", self.hook.port), timeout=10) as raw:
            with self.ssl_ctx.wrap_socket(raw, server_hostname="localhost",
                                          session=session) as tls:
                self.assertTrue(tls.session_reused, "the server did not resume the session")
                body = self.bodies[row["name"]]
                tls.sendall((f"POST {row['path']} HTTP/1.1\r\nHost: localhost\r\n"
                             f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                             "Connection: close\r\n\r\n").encode() + body)
                resp = http.client.HTTPResponse(tls)
                resp.begin()
                self.check_answer(row, resp.status, resp.read())

    def test_zz_wrk_figures(self):
        wrk = shutil.which("wrk")
        if wrk is None:
            self.skipTest("wrk not installed: no figures")
        print(f"\nwrk -t1 -c4 -d{WRK_SECONDS}s per fixture (figures only, not asserted):")
        for row in self.expect:
            url = f"https://127.0.0.1:{self.hook.port}{row['path']}"
            out = subprocess.run(
                [wrk, "-t1", "-c4", f"-d{WRK_SECONDS}s", "--timeout", "5s", "-s", WRK_SCRIPT, url,
                 "--", os.path.join(FIXTURES, row["name"])],
                capture_output=True, text=True, timeout=WRK_SECONDS + 60)
            result = re.search(r"^RESULT (.*)$", out.stdout, re.M)
            self.assertIsNotNone(result, f"{row['name']}: wrk printed no result:\n{out.stdout}"
                                 f"\n{out.stderr}")
            fields = dict(kv.split("=") for kv in result.group(1).split())
            self.assertEqual(fields["non200"], "0", f"{row['name']}: {result.group(0)}")
            print(f"  {row['name']:34} {result.group(1)}")
        # The server is still healthy and right after the load.
        conn = self.connect()
        try:
            for row in self.expect:
                self.check_answer(row, *self.post(conn, row))
        finally:
            conn.close()


if __name__ == "__main__":
    unittest.main()
