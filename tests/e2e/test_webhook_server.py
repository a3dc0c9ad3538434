"""End-to-end tests of `wasd webhook`: the real binary on loopback ports.

Each test class starts its own server (TLS port, probe port and metrics port
all ephemeral: the ports are read from the "webhook started" log line) with a
throwaway PKI made by the openssl CLI. Every wait is bounded; every process
is stopped by its PID, also when a test fails.

Needs: WASD_BIN (the built binary), WASD_SOURCE_DIR (for tests/testdata/e2e),
the openssl CLI. Standard library only.
"""

import base64
import http.client
import http.server
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

BIN = os.environ.get("WASD_BIN", "wasd")
SOURCE_DIR = os.environ.get(
    "WASD_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TESTDATA = os.path.join(SOURCE_DIR, "tests", "testdata", "e2e")

WAIT = 10.0  # upper bound, in seconds, of any single wait in these tests
DEFAULT_LIMIT = 7 * 1024 * 1024


def fixture(name):
    with open(os.path.join(TESTDATA, name), "rb") as f:
        return f.read()


class Pki:
    """A throwaway PKI in a temp dir: a serving CA and leaves, a client CA."""

    def __init__(self, directory):
        self.dir = directory
        self.make_ca("ca")
        self.make_leaf("serving", "ca", serial=1001, usage="serverAuth")
        self.make_ca("client-ca")
        self.make_leaf("client", "client-ca", serial=2001, usage="clientAuth")
        self.make_ca("other-ca")
        self.make_leaf("rogue", "other-ca", serial=3001, usage="clientAuth")

    def path(self, name):
        return os.path.join(self.dir, name)

    def openssl(self, *args):
        subprocess.run(["openssl", *args], cwd=self.dir, check=True, capture_output=True,
                       timeout=30)

    def make_ca(self, name):
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                     "-nodes", "-keyout", name + ".key", "-out", name + ".crt", "-days", "2",
                     "-subj", "/CN=" + name, "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def make_leaf(self, name, ca, serial, usage, days=1):
        ext = self.path(name + ".ext")
        with open(ext, "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
            f.write("extendedKeyUsage=%s\n" % usage)
        self.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                     "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=localhost")
        self.openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey",
                     ca + ".key", "-set_serial", str(serial), "-days", str(days), "-extfile",
                     ext, "-out", name + ".crt")

    def not_after(self, name):
        out = subprocess.run(["openssl", "x509", "-noout", "-enddate", "-in", self.path(name)],
                             check=True, capture_output=True, text=True, timeout=30).stdout
        return int(ssl.cert_time_to_seconds(out.strip().split("=", 1)[1]))

    def client_context(self, client=None):
        ctx = ssl.create_default_context(cafile=self.path("ca.crt"))
        if client:
            ctx.load_cert_chain(self.path(client + ".crt"), self.path(client + ".key"))
        return ctx


class Webhook:
    """The wasd webhook process, its ports and its parsed stderr lines."""

    def __init__(self, pki, extra=(), cert="serving.crt", key="serving.key"):
        self.pki = pki
        args = [BIN, "webhook", "--tls-cert-file", pki.path(cert), "--tls-key-file",
                pki.path(key), "--bind-address", "127.0.0.1", "--port", "0",
                "--health-probe-bind-address", "127.0.0.1:0",
                "--metrics-bind-address", "127.0.0.1:0", "--io-threads", "2",
                "--shutdown-delay", "0s", *extra]
        # No ambient Kubernetes config: only an explicit --kubeconfig counts.
        env = {k: v for k, v in os.environ.items()
               if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
        env["HOME"] = pki.dir
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)
        self.lines = []   # raw stderr lines
        self.entries = []  # the lines parsed as JSON (None when a line is not JSON)
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        try:
            started = self.wait_log(lambda e: e.get("msg") == "webhook started")
            self.port = int(started["address"].rsplit(":", 1)[1])
            self.probe_port = int(started["probes"].rsplit(":", 1)[1])
            self.metrics_port = int(started["metrics"].rsplit(":", 1)[1])
            self.wait_until(lambda: plain_get(self.probe_port, "/healthz")[0] == 200)
        except BaseException:
            self.kill()
            raise

    def _read(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            try:
                entry = json.loads(line)
            except ValueError:
                entry = None
            with self.cond:
                self.lines.append(line)
                self.entries.append(entry)
                self.cond.notify_all()

    def logs(self):
        with self.cond:
            return [e for e in self.entries if e is not None]

    def wait_log(self, predicate, timeout=WAIT):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for e in self.entries:
                    if e is not None and predicate(e):
                        return e
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    raise AssertionError("log line not seen; stderr so far:\n" +
                                         "\n".join(self.lines[-30:]))
                self.cond.wait(min(left, 0.2))

    @staticmethod
    def wait_until(condition, timeout=WAIT, what="condition"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError("timed out waiting for " + what)

    def connect(self, client=None):
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=WAIT,
                                           context=self.pki.client_context(client))

    def post(self, path, body, conn=None, client=None, headers=None):
        own = conn is None
        conn = conn or self.connect(client)
        try:
            conn.request("POST", path, body=body,
                         headers=headers or {"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, resp, resp.read()
        finally:
            if own:
                conn.close()

    def tls_socket(self):
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=WAIT)
        return self.pki.client_context().wrap_socket(raw, server_hostname="127.0.0.1")

    def serial_of_new_connection(self):
        with self.tls_socket() as s:
            return s.getpeercert()["serialNumber"]

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_exit(self, timeout=WAIT):
        code = self.proc.wait(timeout=timeout)
        self.reader.join(timeout=WAIT)
        return code

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=WAIT)
        self.reader.join(timeout=WAIT)
        self.proc.stderr.close()


def plain_get(port, path, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode(), resp
    finally:
        conn.close()


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


def metric_samples(text):
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


class ServerCase(unittest.TestCase):
    extra_flags = ()

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-webhook-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.pki = Pki(cls.tmp)
        cls.server = Webhook(cls.pki, cls.extra_flags)
        cls.addClassCleanup(cls.server.kill)

    def assert_healthy(self):
        self.assertEqual(plain_get(self.server.probe_port, "/healthz")[0], 200)
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
        self.assertIn({"name": "wasd.io/pod-group"}, by_path["/spec/schedulingGates"]["value"])

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

        status, body, _ = plain_get(self.server.probe_port, "/readyz")
        self.assertEqual((status, body), (200, "ok\n"))
        self.assertEqual(plain_get(self.server.probe_port, "/metrics")[0], 404)
        self.assertEqual(plain_get(self.server.metrics_port, "/readyz")[0], 404)

        status, text, resp = plain_get(self.server.metrics_port, "/metrics")
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
        with self.server.cond:
            not_json = [l for l, e in zip(self.server.lines, self.server.entries) if e is None]
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
        self.server = Webhook(self.pki, ("--shutdown-grace-period", "20s", "--shutdown-delay", "4s"))
        self.addCleanup(self.server.kill)

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
        status, text, _ = plain_get(self.server.probe_port, "/readyz")
        self.assertEqual(status, 503)
        self.assertIn("shutting down", text)
        self.assertEqual(plain_get(self.server.probe_port, "/healthz")[0], 200)

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
        Webhook.wait_until(refused, what="the admission port to refuse connections")
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
        logs = self.server.logs()
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
        return len([e for e in self.server.logs() if "rejected" in e.get("msg", "")])

    def test_hot_reload(self):
        self.assertEqual(self.server.serial_of_new_connection(), "03E9")  # 1001
        established = self.server.connect()
        self.addCleanup(established.close)
        self.server.post("/mutate-v1-pod", fixture("pod-managed.json"), conn=established)

        self.pki.make_leaf("next", "ca", serial=1002, usage="serverAuth", days=3)
        self.replace_serving_pair("next.crt", "next.key")
        Webhook.wait_until(lambda: self.server.serial_of_new_connection() == "03EA",
                           what="the new certificate on new connections")
        self.server.wait_log(lambda e: e.get("msg") == "serving certificate reloaded")
        # The connection made before the reload goes on working.
        status, _, _ = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"),
                                        conn=established)
        self.assertEqual(status, 200)
        m = metric_samples(plain_get(self.server.metrics_port, "/metrics")[1])
        self.assertEqual(m["wasd_tls_certificate_expiry_timestamp_seconds"],
                         self.pki.not_after("next.crt"))

        # A corrupt certificate file is refused; the loaded pair stays.
        before = self.rejections()
        with open(self.pki.path("serving.crt.new"), "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
        os.replace(self.pki.path("serving.crt.new"), self.pki.path("serving.crt"))
        Webhook.wait_until(lambda: self.rejections() > before, what="a rejection log line")
        self.assertEqual(self.server.serial_of_new_connection(), "03EA")

        # A certificate whose key does not match is refused too.
        self.pki.make_leaf("third", "ca", serial=1003, usage="serverAuth")
        before = self.rejections()
        self.replace_serving_pair("third.crt", "next.key")
        Webhook.wait_until(lambda: self.rejections() > before, what="a key-mismatch rejection")
        self.assertTrue(any("does not match" in e.get("error", "") for e in self.server.logs()))
        self.assertEqual(self.server.serial_of_new_connection(), "03EA")

        self.assertEqual(plain_get(self.server.probe_port, "/readyz")[0], 200)
        self.assert_healthy()


class MutualTlsTest(ServerCase):
    """--client-ca-file: only clients with a certificate from that CA get in.
    (This server also runs with --pod-scheduling-gate=false.)"""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-webhook-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.pki = Pki(cls.tmp)
        cls.server = Webhook(cls.pki, ("--client-ca-file", cls.pki.path("client-ca.crt"),
                                       "--pod-scheduling-gate=false"))
        cls.addClassCleanup(cls.server.kill)

    def test_client_with_certificate_is_served(self):
        status, _, body = self.server.post("/validate-apps-v1-deployment",
                                           fixture("deployment-valid.json"), client="client")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["response"]["uid"], "e2e-valid-0001")

    def test_pod_scheduling_gate_flag_reaches_the_review(self):
        status, _, body = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"),
                                           client="client")
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
                             client="rogue")
        status, _, _ = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"),
                                        client="client")
        self.assertEqual(status, 200)


class FakeApiServer:
    """A plain-HTTP stand-in for the API server: GET of apps/v1 Deployments."""

    PREFIX = "/apis/apps/v1/namespaces/"

    def __init__(self, deployments):
        outer = self
        self.deployments = deployments  # (namespace, name) -> object
        self.paths = []
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with outer.lock:
                    outer.paths.append(self.path)
                path = self.path.split("?", 1)[0]
                ns, _, name = path[len(FakeApiServer.PREFIX):].partition("/deployments/")
                if name == "slow":
                    time.sleep(3)
                obj = outer.deployments.get((ns, name))
                if obj is None:
                    code, obj = 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                      "reason": "NotFound", "code": 404,
                                      "message": 'deployments.apps "%s" not found' % name}
                else:
                    code = 200
                data = json.dumps(obj).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the webhook gave up waiting

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def kubeconfig(self, directory):
        path = os.path.join(directory, "kubeconfig")
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: Config\n"
                    "clusters:\n- name: fake\n  cluster:\n"
                    "    server: http://127.0.0.1:%d\n"
                    "users:\n- name: e2e\n  user:\n    token: e2e-token\n"
                    "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: e2e\n"
                    "current-context: fake\n" % self.port)
        return path

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=WAIT)


class ScaleLookupTest(unittest.TestCase):
    """deployments/scale: the Deployment is read from the API server off the
    I/O threads; not found allows, no answer is 503."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-webhook-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.pki = Pki(cls.tmp)
        stored = json.loads(fixture("deployment-valid.json"))["request"]["object"]  # minCount 3
        cls.api = FakeApiServer({("ml", "prefill-workers"): stored})
        cls.addClassCleanup(cls.api.stop)
        # One I/O thread: a lookup blocking it would stall every other request.
        cls.server = Webhook(cls.pki, ("--kubeconfig", cls.api.kubeconfig(cls.tmp),
                                       "--lookup-timeout", "1s", "--io-threads", "1"))
        cls.addClassCleanup(cls.server.kill)

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
        with self.api.lock:
            self.assertIn("/apis/apps/v1/namespaces/ml/deployments/prefill-workers",
                          [p.split("?")[0] for p in self.api.paths])

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
        with self.api.lock:
            self.assertEqual([p for p in self.api.paths if "/deployments/unchanged" in p], [])

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
            with self.api.lock:
                return sum(1 for p in self.api.paths if "/deployments/slow" in p) >= 3
        Webhook.wait_until(lookups_waiting, what="three lookups at the API server")
        # While three lookups wait on the API server (each up to the 1 s
        # lookup deadline), the single I/O thread still answers other reviews:
        # the pod review is logged before any of the scale answers.
        status, _, _ = self.server.post("/mutate-v1-pod", fixture("pod-managed.json"))
        self.assertEqual(status, 200)
        self.assertEqual([e for e in self.server.logs() if e.get("uid") == "scale-slow"], [])
        for t in threads:
            t.join(WAIT)
        self.assertEqual(len(results), 3)
        for status, _, body in results:
            self.assertEqual(status, 503, body)
            self.assertIn("ml/slow", body.decode())
        entry = self.server.wait_log(lambda e: e.get("uid") == "scale-slow")
        self.assertEqual(entry["level"], "warn")
        self.assertEqual(entry["code"], 503)


class CommandLineTest(unittest.TestCase):
    def run_wasd(self, *args):
        return subprocess.run([BIN, "webhook", *args], capture_output=True, text=True,
                              timeout=WAIT)

    def test_help(self):
        r = self.run_wasd("--help")
        self.assertEqual(r.returncode, 0)
        for flag in ("--tls-cert-file", "--client-ca-file", "--max-request-bytes",
                     "--pod-scheduling-gate", "--read-timeout", "--shutdown-grace-period"):
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
        self.assertIn("cannot use --kubeconfig", r.stderr)

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
