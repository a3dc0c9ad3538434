"""End-to-end tests of `wasd webhook`: the real binary on loopback ports.

Each test class starts its own server (lib.webhook: free loopback ports, logs
in a file) with a throwaway PKI made by the openssl CLI (lib.certs.Pki). The
scale lookups go to the test API server (tests/apiserver). Every wait is
bounded; every process is stopped by its PID, also when a test fails.

Needs: WASD_BIN (the built binary), WASD_SOURCE_DIR (for tests/testdata/e2e),
the openssl CLI. Standard library only.
"""

import base64
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import unittest

from apiserver.harness import ApiServer
from lib.certs import Pki
from lib.paths import WASD, read_testdata
from lib.wait import wait_for
from lib.webhook import Webhook, metric_samples

WAIT = 10.0  # upper bound, in seconds, of any single wait in these tests
DEFAULT_LIMIT = 7 * 1024 * 1024


def fixture(name):
    return read_testdata("e2e", name)


def start_webhook(pki, extra=()):
    """The webhook under test, serving pki's "serving" pair, two I/O threads."""
    return Webhook(pki.serving_certs(), args=["--io-threads", "2", *extra], workdir=pki.dir,
                   start_timeout=WAIT)


def eventually(condition, what):
    """wait_for with this file's bound; a refused or reset connection is "not yet"."""
    return wait_for(condition, WAIT, 0.05, what, ignore=(OSError,))


def serial_of_new_connection(server):
    with server.tls_socket() as s:
        return s.getpeercert()["serialNumber"]


def read_until_closed(sock, timeout=WAIT):
    """Reads until the peer closes; returns (bytes, seconds). Fails past `timeout`."""
    start = time.monotonic()
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ssl.SSLError, ConnectionError):
        pass  # a reset or a TLS alert is a close too
    except socket.timeout:
        raise AssertionError("connection still open after %.0f s" % timeout)
    return data, time.monotonic() - start


class ServerCase(unittest.TestCase):
    extra_flags = ()

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-webhook-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.pki = Pki(cls.tmp)
        cls.server = start_webhook(cls.pki, cls.extra_flags)
        cls.addClassCleanup(cls.server.stop)

    def assert_healthy(self):
        self.assertEqual(self.server.probe_get("/healthz")[0], 200)
        status, _, body = self.server.post("/validate-apps-v1-deployment",
                                           fixture("deployment-valid.json"))
        self.assertEqual(status, 200)
        self.assertTrue(json.loads(body)["response"]["allowed"])


class AdmissionTest(ServerCase):
    """Reviews over TLS, malformed input, limits, probes, metrics and logs."""

    def review(self, path, name):
        status, resp, body = self.server.post(path, fixture(name))
        self.assertEqual(status, 200, body)
        self.assertTrue(resp.getheader("Content-Type").startswith("application/json"))
        sent = json.loads(fixture(name))
        got = json.loads(body)
        self.assertEqual(got["apiVersion"], "admission.k8s.io/v1")
        self.assertEqual(got["kind"], "AdmissionReview")
        self.assertEqual(got["response"]["uid"], sent["request"]["uid"])
        return got["response"]

    def test_misspelt_wasd_key_is_warned_about_at_admission(self):
        review = json.loads(fixture("deployment-valid.json"))
        ann = review["request"]["object"]["metadata"]["annotations"]
        ann["wasd.io/schedulng"] = ann.pop("wasd.io/scheduling")
        status, _, body = self.server.post("/validate-apps-v1-deployment?timeout=10s",
                                           json.dumps(review).encode())
        self.assertEqual(status, 200, body)
        r = json.loads(body)["response"]
        self.assertTrue(r["allowed"])
        self.assertEqual(r["warnings"], ["annotation wasd.io/schedulng is not read by wasd: did you mean "
                                         "wasd.io/scheduling?"])

    def test_valid_deployment_is_allowed(self):
        r = self.review("/validate-apps-v1-deployment?timeout=10s", "deployment-valid.json")
        self.assertTrue(r["allowed"])
        self.assertNotIn("patch", r)

    def test_invalid_deployment_is_denied_with_422(self):
        r = self.review("/validate-apps-v1-deployment", "deployment-mincount-over-replicas.json")
        self.assertFalse(r["allowed"])
        self.assertEqual(r["status"]["code"], 422)
        self.assertEqual(r["status"]["reason"], "Invalid")
        self.assertIn("schedulingPolicy.gang.minCount", r["status"]["message"])

    def test_pod_mutation_returns_patch(self):
        r = self.review("/mutate-v1-pod?timeout=10s", "pod-managed.json")
        self.assertTrue(r["allowed"])
        self.assertEqual(r["patchType"], "JSONPatch")
        ops = json.loads(base64.b64decode(r["patch"]))
        by_path = {op["path"]: op for op in ops}
        # Q12: `<replicaset>-<hash of the ReplicaSet's uid>` (the fixture's
        # controller reference: prefill-workers-5d8f7c9b6, uid 0b7e1f6a-...-0002).
        self.assertEqual(by_path["/spec/schedulingGroup"]["value"],
                         {"podGroupName": "prefill-workers-5d8f7c9b6-557755958f"})
        # The default --pod-hold holds a native pod by kube-scheduler only once the
        # webhook has seen the cluster serve the Workload API (Q23); this webhook has no
        # cluster to ask, so it fails towards the gate.
        self.assertEqual(by_path["/spec/schedulingGates"]["value"], [{"name": "wasd.io/pod-group"}])

    def test_deployment_mutation_adds_marker(self):
        r = self.review("/mutate-apps-v1-deployment", "deployment-valid.json")
        ops = json.loads(base64.b64decode(r["patch"]))
        self.assertIn("/spec/template/metadata/labels/wasd.io~1managed", [o["path"] for o in ops])

    def test_scale_without_api_server_is_503(self):
        status, resp, body = self.server.post("/validate-apps-v1-deployment",
                                              fixture("deployment-scale.json"))
        self.assertEqual(status, 503)
        text = body.decode()
        self.assertEqual(text.count("\n"), 1, text)
        self.assertIn("ml/prefill-workers", text)
        self.assertIn("no Kubernetes API access", text)
        self.server.wait_log(lambda e: e.get("uid") == "e2e-scale-0004" and e.get("code") == 503
                             and e.get("level") == "warn")

    def test_malformed_bodies_are_400(self):
        deep = b"[" * 100000 + b"]" * 100000
        cases = {
            "empty": b"",
            "not json": b"this is not json",
            "truncated json": b'{"apiVersion": "admission.k8s.io/v1", ',
            "json, not a review": b'{"kind": "Pod", "apiVersion": "v1"}',
            "review without request": b'{"apiVersion":"admission.k8s.io/v1",'
                                      b'"kind":"AdmissionReview"}',
            "review without uid": b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",'
                                  b'"request":{"operation":"CREATE"}}',
            "nested 100000 deep": deep,
        }
        for what, body in cases.items():
            with self.subTest(what):
                status, resp, text = self.server.post("/validate-apps-v1-deployment", body)
                self.assertEqual(status, 400, text)
                self.assertTrue(resp.getheader("Content-Type").startswith("text/plain"))
                self.assertNotIn(b"allowed", text)  # never an allowing review
                self.assertEqual(text.strip().count(b"\n"), 0, text)
        self.assert_healthy()

    def test_wrong_method_is_405_and_unknown_path_404(self):
        conn = self.server.connect()
        try:
            conn.request("GET", "/mutate-v1-pod")
            resp = conn.getresponse()
            resp.read()
            self.assertEqual(resp.status, 405)
            self.assertEqual(resp.getheader("Allow"), "POST")
            conn.request("POST", "/mutate-v2-pod", body=b"{}")
            resp = conn.getresponse()
            resp.read()
            self.assertEqual(resp.status, 404)
            conn.request("GET", "/healthz")  # probes are not served on the TLS port
            resp = conn.getresponse()
            resp.read()
            self.assertEqual(resp.status, 404)
        finally:
            conn.close()

    def test_keep_alive_serves_several_requests_on_one_connection(self):
        conn = self.server.connect()
        try:
            self.server.post("/validate-apps-v1-deployment", fixture("deployment-valid.json"),
                             conn=conn)
            first = conn.sock
            self.assertIsNotNone(first)
            for _ in range(3):
                status, resp, _ = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"),
                                                   conn=conn)
                self.assertEqual(status, 200)
                self.assertNotEqual((resp.getheader("Connection") or "").lower(), "close")
                self.assertIs(conn.sock, first)
        finally:
            conn.close()

    def test_body_over_limit_is_413_then_closed(self):
        conn = self.server.connect()
        try:
            status, resp, body = self.server.post("/validate-apps-v1-deployment",
                                                  b" " * (DEFAULT_LIMIT + 1), conn=conn)
            self.assertEqual(status, 413)
            self.assertEqual(resp.getheader("Connection"), "close")
            self.assertIn(str(DEFAULT_LIMIT).encode(), body)
            self.assertIsNone(conn.sock)  # http.client closed it as told
        finally:
            conn.close()
        # Exactly at the limit is read in full (and then rejected as not JSON).
        status, _, _ = self.server.post("/validate-apps-v1-deployment", b" " * DEFAULT_LIMIT)
        self.assertEqual(status, 400)
        self.assert_healthy()

    def test_oversized_header_is_refused(self):
        status, _, _ = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"),
                                        headers={"X-Filler": "a" * 20000})
        self.assertEqual(status, 431)
        self.assert_healthy()

    def test_plain_http_on_tls_port_is_closed(self):
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=WAIT) as s:
            s.sendall(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            data, _ = read_until_closed(s)
            self.assertFalse(data.startswith(b"HTTP/"), data)
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=WAIT) as s:
            s.sendall(b"\x16\x03\x01\x00\x05hello")  # a broken TLS record
            read_until_closed(s)
        self.assert_healthy()

    def test_probes_metrics_and_logs_after_traffic(self):
        self.review("/validate-apps-v1-deployment", "deployment-mincount-over-replicas.json")
        self.review("/validate-apps-v1-deployment", "deployment-valid.json")
        self.server.post("/mutate-v1-pod", b"not json")

        status, body, _ = self.server.probe_get("/readyz")
        self.assertEqual((status, body), (200, "ok\n"))
        self.assertEqual(self.server.probe_get("/metrics")[0], 404)
        self.assertEqual(self.server.probe_get("/readyz", port=self.server.metrics_port)[0], 404)

        status, text, resp = self.server.probe_get("/metrics", port=self.server.metrics_port)
        self.assertEqual(status, 200)
        self.assertTrue(resp.getheader("Content-Type").startswith("text/plain; version=0.0.4"))
        m = metric_samples(text)
        base = 'wasd_admission_requests_total{webhook="validate-deployment",operation="CREATE",'
        self.assertGreaterEqual(m[base + 'allowed="false",code="422"}'], 1)
        self.assertGreaterEqual(m[base + 'allowed="true",code="200"}'], 1)
        self.assertGreaterEqual(m['wasd_admission_requests_total{webhook="mutate-pod",'
                                  'operation="unknown",allowed="false",code="400"}'], 1)
        count = m['wasd_admission_request_duration_seconds_count{webhook="validate-deployment"}']
        self.assertGreaterEqual(count, 2)
        self.assertEqual(
            m['wasd_admission_request_duration_seconds_bucket{webhook="validate-deployment",'
              'le="+Inf"}'], count)
        self.assertIn('wasd_admission_request_duration_seconds_bucket{webhook="mutate-pod",'
                      'le="0.0001"}', m)
        self.assertEqual(m["wasd_admission_in_flight_requests"], 0)
        self.assertEqual(m["wasd_tls_certificate_expiry_timestamp_seconds"],
                         self.pki.not_after("serving.crt"))

        denied = self.server.wait_log(lambda e: e.get("uid") == "e2e-denied-0002")
        self.assertEqual(denied["msg"], "admission")
        self.assertEqual(denied["level"], "info")
        for key, want in (("kind", "Deployment"), ("namespace", "ml"),
                          ("name", "mincount-too-high"), ("operation", "CREATE"),
                          ("allowed", False), ("code", 422)):
            self.assertEqual(denied[key], want, key)
        self.assertIsInstance(denied["latencyMs"], float)
        self.assertIn("time", denied)
        not_json = [line for line in self.server.log_lines() if not line.startswith("{")]
        self.assertEqual(not_json, [])


class TimeoutTest(ServerCase):
    """Short deadlines: idle and slow clients are dropped, the server stays up."""

    extra_flags = ("--read-timeout", "1s", "--idle-timeout", "1500ms",
                   "--tls-handshake-timeout", "1s")

    def test_silent_tls_client_dropped_after_read_timeout(self):
        with self.server.tls_socket() as s:
            _, elapsed = read_until_closed(s)
        self.assertGreaterEqual(elapsed, 0.7)

    def test_slow_headers_dropped_after_read_timeout(self):
        with self.server.tls_socket() as s:
            s.sendall(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: x\r\n")
            data, elapsed = read_until_closed(s)
        self.assertEqual(data, b"")
        self.assertGreaterEqual(elapsed, 0.7)

    def test_slow_body_dropped_after_read_timeout(self):
        body = fixture("pod-managed.json")
        with self.server.tls_socket() as s:
            s.sendall(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                      % len(body) + body[:10])
            data, _ = read_until_closed(s)
        self.assertEqual(data, b"")

    def test_keep_alive_connection_dropped_after_idle_timeout(self):
        with self.server.tls_socket() as s:
            body = fixture("pod-managed.json")
            s.sendall(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                      % len(body) + body)
            resp = http.client.HTTPResponse(s)
            resp.begin()
            resp.read()
            self.assertEqual(resp.status, 200)
            # Idle for longer than the read timeout but less than the idle
            # timeout: the connection must still be usable.
            time.sleep(1.1)
            s.sendall(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                      % len(body) + body)
            resp = http.client.HTTPResponse(s)
            resp.begin()
            resp.read()
            self.assertEqual(resp.status, 200)
            _, elapsed = read_until_closed(s)
        self.assertGreaterEqual(elapsed, 1.0)

    def test_tcp_without_handshake_dropped(self):
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=WAIT) as s:
            _, elapsed = read_until_closed(s)
        self.assertGreaterEqual(elapsed, 0.7)
        self.assert_healthy()


class ShutdownTest(unittest.TestCase):
    """SIGTERM with requests in flight: none is lost, exit status 0."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wasd-webhook-e2e-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.pki = Pki(self.tmp)
        # A delay long enough to open one fresh connection inside it on a busy
        # machine, short enough to keep the test quick.
        self.server = start_webhook(self.pki, ("--shutdown-grace-period", "20s", "--shutdown-delay", "4s"))
        self.addCleanup(self.server.stop)

    def test_sigterm_answers_requests_in_flight_then_exits_0(self):
        body = fixture("deployment-valid.json")
        half = len(body) // 2
        head = (b"POST /validate-apps-v1-deployment?timeout=10s HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
        slow = []
        for _ in range(4):
            s = self.server.tls_socket()
            self.addCleanup(s.close)
            s.sendall(head + body[:half])
            slow.append(s)
        idle = self.server.tls_socket()
        self.addCleanup(idle.close)
        idle.sendall(head + body)
        resp = http.client.HTTPResponse(idle)
        resp.begin()
        resp.read()
        self.assertEqual(resp.status, 200)
        # Let the server read the partial bodies before the signal.
        time.sleep(0.3)

        signalled_at = time.monotonic()
        self.server.signal(signal.SIGTERM)
        self.server.wait_log(lambda e: e.get("msg") == "shutting down")
        status, text, _ = self.server.probe_get("/readyz")
        self.assertEqual(status, 503)
        self.assertIn("shutting down", text)
        self.assertEqual(self.server.probe_get("/healthz")[0], 200)

        # Within --shutdown-delay the port still accepts: a connection routed
        # here before the endpoints dropped the pod is answered, and told to
        # close.
        late = self.server.tls_socket()
        self.addCleanup(late.close)
        late.sendall(head + body)
        resp = http.client.HTTPResponse(late)
        resp.begin()
        late_answer = json.loads(resp.read())
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.getheader("Connection"), "close")
        self.assertEqual(late_answer["response"]["uid"], "e2e-valid-0001")

        def refused():
            try:
                socket.create_connection(("127.0.0.1", self.server.port), timeout=1).close()
                return False
            except ConnectionRefusedError:
                return True
        eventually(refused, what="the admission port to refuse connections")
        # Not before the delay (a lower bound only: a slow machine is later).
        self.assertGreaterEqual(time.monotonic() - signalled_at, 3.9)
        self.server.wait_log(lambda e: e.get("msg") == "closing the admission port")

        # The idle keep-alive connection is closed at once.
        read_until_closed(idle)

        for s in slow:
            s.sendall(body[half:])
        for s in slow:
            resp = http.client.HTTPResponse(s)
            resp.begin()
            answer = json.loads(resp.read())
            self.assertEqual(resp.status, 200)
            self.assertEqual(resp.getheader("Connection"), "close")
            self.assertEqual(answer["response"]["uid"], "e2e-valid-0001")
            self.assertTrue(answer["response"]["allowed"])

        self.assertEqual(self.server.wait_exit(), 0)
        logs = self.server.log_entries()
        answered = [e for e in logs if e.get("msg") == "admission"]
        self.assertEqual(len(answered), 6)  # before the signal, the late one, the 4 in flight
        self.assertTrue(any(e.get("msg") == "all connections closed" for e in logs))
        self.assertEqual(logs[-1]["msg"], "webhook stopped")


class CertReloadTest(ServerCase):
    """Replaced files are served to new connections; bad replacements are refused."""

    extra_flags = ("--cert-reload-interval", "200ms")

    def replace_serving_pair(self, cert_src, key_src):
        for src, dst in ((cert_src, "serving.crt"), (key_src, "serving.key")):
            tmp = self.pki.path(dst + ".new")
            shutil.copyfile(self.pki.path(src), tmp)
            os.replace(tmp, self.pki.path(dst))

    def rejections(self):
        return len([e for e in self.server.log_entries() if "rejected" in e.get("msg", "")])

    def test_hot_reload(self):
        self.assertEqual(serial_of_new_connection(self.server), "03E9")  # 1001
        established = self.server.connect()
        self.addCleanup(established.close)
        self.server.post("/mutate-v1-pod", fixture("pod-managed.json"), conn=established)

        self.pki.make_leaf("next", "ca", serial=1002, usage="serverAuth", days=3)
        self.replace_serving_pair("next.crt", "next.key")
        eventually(lambda: serial_of_new_connection(self.server) == "03EA",
                           what="the new certificate on new connections")
        self.server.wait_log(lambda e: e.get("msg") == "serving certificate reloaded")
        # The connection made before the reload goes on working.
        status, _, _ = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"),
                                        conn=established)
        self.assertEqual(status, 200)
        m = metric_samples(self.server.probe_get("/metrics", port=self.server.metrics_port)[1])
        self.assertEqual(m["wasd_tls_certificate_expiry_timestamp_seconds"],
                         self.pki.not_after("next.crt"))

        # A corrupt certificate file is refused; the loaded pair stays.
        before = self.rejections()
        with open(self.pki.path("serving.crt.new"), "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
        os.replace(self.pki.path("serving.crt.new"), self.pki.path("serving.crt"))
        eventually(lambda: self.rejections() > before, what="a rejection log line")
        self.assertEqual(serial_of_new_connection(self.server), "03EA")

        # A certificate whose key does not match is refused too.
        self.pki.make_leaf("third", "ca", serial=1003, usage="serverAuth")
        before = self.rejections()
        self.replace_serving_pair("third.crt", "next.key")
        eventually(lambda: self.rejections() > before, what="a key-mismatch rejection")
        self.assertTrue(any("does not match" in e.get("error", "") for e in self.server.log_entries()))
        self.assertEqual(serial_of_new_connection(self.server), "03EA")

        self.assertEqual(self.server.probe_get("/readyz")[0], 200)
        self.assert_healthy()


class MutualTlsTest(ServerCase):
    """--client-ca-file: only clients with a certificate from that CA get in.
    (This server also runs with --pod-scheduling-gate=false, and --pod-hold native=gate so
    that it is that flag which leaves the gate out.)"""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-webhook-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.pki = Pki(cls.tmp)
        cls.server = start_webhook(cls.pki, ("--client-ca-file", cls.pki.path("client-ca.crt"),
                                             "--pod-scheduling-gate=false",
                                             "--pod-hold", "native=gate"))
        cls.addClassCleanup(cls.server.stop)

    def test_client_with_certificate_is_served(self):
        status, _, body = self.server.post("/validate-apps-v1-deployment",
                                           fixture("deployment-valid.json"), context=self.pki.client_context("client"))
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["response"]["uid"], "e2e-valid-0001")

    def test_pod_scheduling_gate_flag_reaches_the_review(self):
        status, _, body = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"),
                                           context=self.pki.client_context("client"))
        self.assertEqual(status, 200)
        ops = json.loads(base64.b64decode(json.loads(body)["response"]["patch"]))
        paths = [op["path"] for op in ops]
        self.assertIn("/spec/schedulingGroup", paths)
        self.assertNotIn("/spec/schedulingGates", paths)

    def test_client_without_certificate_is_refused(self):
        with self.assertRaises((ssl.SSLError, OSError, http.client.HTTPException)):
            self.server.post("/validate-apps-v1-deployment", fixture("deployment-valid.json"))

    def test_client_with_foreign_certificate_is_refused(self):
        with self.assertRaises((ssl.SSLError, OSError, http.client.HTTPException)):
            self.server.post("/validate-apps-v1-deployment", fixture("deployment-valid.json"),
                             context=self.pki.client_context("rogue"))
        status, _, _ = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"),
                                        context=self.pki.client_context("client"))
        self.assertEqual(status, 200)


class ScaleLookupTest(unittest.TestCase):
    """deployments/scale: the Deployment is read from the API server off the
    I/O threads; not found allows, no answer is 503."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-webhook-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.pki = Pki(cls.tmp)
        # The test API server without controllers: it only stores the Deployment.
        cls.api = ApiServer(args=["--controllers", ""]).Start()
        cls.addClassCleanup(cls.api.Stop)
        stored = json.loads(fixture("deployment-valid.json"))["request"]["object"]  # minCount 3
        stored["metadata"] = {k: v for k, v in stored["metadata"].items() if k in ("name", "annotations")}
        for path, obj in (("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "ml"}}),
                          ("/apis/apps/v1/namespaces/ml/deployments", stored)):
            status, _, out = cls.api.Request("POST", path, obj)
            assert status == 201, out
        # A lookup of Deployment "slow" is answered after 3 s (past the webhook's 1 s).
        cls.api.SetFaults([{"code": "delay", "delay": 3, "methods": ["GET"], "path": "/deployments/slow$"}])
        # One I/O thread: a lookup blocking it would stall every other request.
        cls.server = start_webhook(cls.pki, ("--kubeconfig", cls.api.kubeconfig,
                                             "--lookup-timeout", "1s", "--io-threads", "1"))
        cls.addClassCleanup(cls.server.stop)

    def scale(self, name, replicas, uid):
        review = json.loads(fixture("deployment-scale.json"))
        req = review["request"]
        req["uid"] = uid
        req["name"] = req["object"]["metadata"]["name"] = name
        req["object"]["spec"]["replicas"] = replicas
        return self.server.post("/validate-apps-v1-deployment", json.dumps(review).encode())

    def test_scale_below_min_count_is_denied(self):
        status, _, body = self.scale("prefill-workers", 2, "scale-deny")
        self.assertEqual(status, 200, body)
        r = json.loads(body)["response"]
        self.assertEqual(r["uid"], "scale-deny")
        self.assertFalse(r["allowed"])
        self.assertEqual(r["status"]["code"], 422)
        # The audit record is written once the API server's answer is sent.
        eventually(lambda: self.api.Audit(methods=("GET",),
                                          path="/apis/apps/v1/namespaces/ml/deployments/prefill-workers"),
                   what="the lookup in the API server's audit")

    def test_scale_at_or_above_min_count_is_allowed(self):
        status, _, body = self.scale("prefill-workers", 5, "scale-up")
        self.assertEqual(status, 200, body)
        self.assertTrue(json.loads(body)["response"]["allowed"])

    def test_unchanged_replica_count_is_allowed_without_a_lookup(self):
        # The scale ratchet needs only the request: no GET of the Deployment.
        review = json.loads(fixture("deployment-scale.json"))
        req = review["request"]
        req["uid"] = "scale-same"
        req["name"] = req["object"]["metadata"]["name"] = "unchanged"
        req["object"]["spec"]["replicas"] = req["oldObject"]["spec"]["replicas"]
        status, _, body = self.server.post("/validate-apps-v1-deployment",
                                           json.dumps(review).encode())
        self.assertEqual(status, 200, body)
        self.assertTrue(json.loads(body)["response"]["allowed"])
        # Nothing asked the API server for it: no request answered, none in flight.
        self.assertEqual(self.api.Audit(path="/deployments/unchanged"), [])
        self.assertEqual(self.api.InFlight(path="/deployments/unchanged"), [])

    def test_scale_of_missing_deployment_is_allowed(self):
        status, _, body = self.scale("gone", 1, "scale-gone")
        self.assertEqual(status, 200, body)
        r = json.loads(body)["response"]
        self.assertEqual(r["uid"], "scale-gone")
        self.assertTrue(r["allowed"])

    def test_slow_api_server_gives_503_without_stalling_others(self):
        results = []

        def slow_scale():
            results.append(self.scale("slow", 1, "scale-slow"))

        threads = [threading.Thread(target=slow_scale) for _ in range(3)]
        for t in threads:
            t.start()
        self.addCleanup(lambda: [t.join(WAIT) for t in threads])
        def lookups_waiting():
            return len(self.api.InFlight(path="/deployments/slow")) >= 3
        eventually(lookups_waiting, what="three lookups at the API server")
        # While three lookups wait on the API server (each up to the 1 s
        # lookup deadline), the single I/O thread still answers other reviews:
        # the pod review is logged before any of the scale answers.
        status, _, _ = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"))
        self.assertEqual(status, 200)
        self.assertEqual([e for e in self.server.log_entries() if e.get("uid") == "scale-slow"], [])
        for t in threads:
            t.join(WAIT)
        self.assertEqual(len(results), 3)
        for status, _, body in results:
            self.assertEqual(status, 503, body)
            self.assertIn("ml/slow", body.decode())
        entry = self.server.wait_log(lambda e: e.get("uid") == "scale-slow")
        self.assertEqual(entry["level"], "warn")
        self.assertEqual(entry["code"], 503)


class ScaleLookupBoundsTest(unittest.TestCase):
    """Issue 30 L4: scale reviews cannot queue Deployment lookups without bound. At most
    --max-pending-scale-lookups wait or run (beyond: 503 at once, a warn log line, a
    metric), and a lookup whose review deadline (?timeout=) passed while it waited for a
    worker is answered 503 without the GET."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-webhook-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.pki = Pki(cls.tmp)
        cls.api = ApiServer(args=["--controllers", ""]).Start()
        cls.addClassCleanup(cls.api.Stop)
        # Every lookup of "slow" or "queued" takes 2 s at the API server.
        cls.api.SetFaults([{"code": "delay", "delay": 2, "methods": ["GET"],
                            "path": "/deployments/(slow|queued)$"}])
        cls.server = start_webhook(cls.pki, ("--kubeconfig", cls.api.kubeconfig,
                                             "--lookup-timeout", "5s", "--lookup-workers", "1",
                                             "--max-pending-scale-lookups", "2"))
        cls.addClassCleanup(cls.server.stop)

    def scale(self, name, uid, query=""):
        review = json.loads(fixture("deployment-scale.json"))
        req = review["request"]
        req["uid"] = uid
        req["name"] = req["object"]["metadata"]["name"] = name
        req["object"]["spec"]["replicas"] = 1
        return self.server.post("/validate-apps-v1-deployment" + query, json.dumps(review).encode())

    def test_limit_and_deadline(self):
        results = {}

        def send(name, uid, query):
            results[uid] = self.scale(name, uid, query)

        # One lookup runs (its GET held 2 s by the API server)...
        first = threading.Thread(target=send, args=("slow", "scale-first", "?timeout=10s"))
        first.start()
        self.addCleanup(first.join, WAIT)
        eventually(lambda: len(self.api.InFlight(path="/deployments/slow")) == 1,
                   what="the first lookup at the API server")
        # ...one waits for the single worker; its review gives up after 1 s, so by the
        # time the worker is free (the first GET takes 2 s) its deadline has passed.
        second = threading.Thread(target=send, args=("queued", "scale-second", "?timeout=1s"))
        second.start()
        self.addCleanup(second.join, WAIT)
        eventually(lambda: self.server.metrics().get("wasd_admission_scale_lookups_pending") == 2,
                   what="two lookups pending")
        # The third finds the limit reached: 503 at once, no lookup queued.
        status, _, body = self.scale("third", "scale-third")
        self.assertEqual(status, 503, body)
        self.assertIn("too many scale reviews are waiting for a Deployment lookup (2, "
                      "--max-pending-scale-lookups)", body.decode())
        entry = self.server.wait_log(lambda e: e.get("uid") == "scale-third")
        self.assertEqual((entry["level"], entry["code"]), ("warn", 503))
        self.assertIn("too many scale reviews", entry["error"])
        first.join(WAIT)
        second.join(WAIT)
        # The first was looked up (not found: allowed); the second was dropped unasked.
        status, _, body = results["scale-first"]
        self.assertEqual(status, 200, body)
        self.assertTrue(json.loads(body)["response"]["allowed"])
        status, _, body = results["scale-second"]
        self.assertEqual(status, 503, body)
        self.assertIn("timeout passed while it waited for a lookup worker; not looked up",
                      body.decode())
        self.assertEqual(self.api.Audit(path="/deployments/queued"), [])
        self.assertEqual(self.api.Audit(path="/deployments/third"), [])
        m = self.server.metrics()
        self.assertEqual(m['wasd_admission_scale_lookups_refused_total{reason="busy"}'], 1)
        self.assertEqual(m['wasd_admission_scale_lookups_refused_total{reason="expired"}'], 1)
        self.assertEqual(m["wasd_admission_scale_lookups_pending"], 0)
        # With the queue empty again a lookup is made as before.
        status, _, body = self.scale("fast", "scale-fast", "?timeout=10s")
        self.assertEqual(status, 200, body)
        eventually(lambda: self.api.Audit(methods=("GET",), path="/deployments/fast"),
                   what="the lookup of fast in the API server's audit")


class CommandLineTest(unittest.TestCase):
    def run_wasd(self, *args):
        return subprocess.run([WASD, "webhook", *args], capture_output=True, text=True,
                              timeout=WAIT)

    def test_help(self):
        r = self.run_wasd("--help")
        self.assertEqual(r.returncode, 0)
        for flag in ("--tls-cert-file", "--client-ca-file", "--max-request-bytes",
                     "--pod-scheduling-gate", "--read-timeout", "--shutdown-grace-period",
                     "--max-pending-scale-lookups", "--in-tree-deployment-integration"):
            self.assertIn(flag, r.stdout)

    def test_bad_flags_exit_2(self):
        r = self.run_wasd("--tls-cert-file", "a", "--tls-key-file", "b", "--bogus")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown flag --bogus", r.stderr)
        r = self.run_wasd("--tls-cert-file", "a")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--tls-key-file", r.stderr)
        r = self.run_wasd("--tls-cert-file=a", "--tls-key-file=b", "--port=http")
        self.assertEqual(r.returncode, 2)

    def test_unusable_kubeconfig_exits_1(self):
        with tempfile.TemporaryDirectory() as d:
            r = self.run_wasd("--tls-cert-file", "a", "--tls-key-file", "b",
                              "--kubeconfig", os.path.join(d, "nope"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot use the Kubernetes configuration", r.stderr)
        self.assertIn("nope", r.stderr)

    def test_unusable_certificate_exits_1_with_a_log_line(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "missing.pem")
            r = self.run_wasd("--tls-cert-file", missing, "--tls-key-file", missing,
                              "--port", "0", "--health-probe-bind-address", "127.0.0.1:0",
                              "--metrics-bind-address", "127.0.0.1:0")
        self.assertEqual(r.returncode, 1)
        line = json.loads(r.stderr.strip().splitlines()[-1])
        self.assertEqual(line["level"], "error")
        self.assertIn("missing.pem", line["error"])


if __name__ == "__main__":
    unittest.main()
