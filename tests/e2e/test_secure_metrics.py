"""End-to-end: the HTTPS /metrics of `wasd reconciler` and `wasd webhook` as
the binaries default to it (--metrics-secure), where no real API server is
needed to tell. The reviews themselves (TokenReview, SubjectAccessReview,
RBAC) are proven on kube-apiserver v1.37.2 in
tests/cluster/test_secure_metrics_real.py; the test API server serves neither.

  * reconciler without --metrics-cert-file: TLS with a self-signed pair for
    127.0.0.1 (verified with the chain it sends); no token -> 401 with
    WWW-Authenticate: Bearer, and no call to the API server; a token -> the
    TokenReview goes to the API server (the test API server's audit shows the
    POST), which does not serve it -> 503 saying so; plain HTTP on the port
    gets no HTTP answer.
  * reconciler with --metrics-cert-file/--metrics-key-file: serves that pair
    (verified with its CA for the Service name); a replaced pair is served
    to new connections within the 10 s poll.
  * webhook with no Kubernetes configuration at all: starts (admission does
    not need one), warns, and answers a scrape 503 naming the reason.
  * usage errors, exit 2: a cert without a key; HTTPS /metrics on the probe
    port.
"""
import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import unittest

from apiserver.harness import ApiServer
from lib.certs import generate_certs
from lib.paths import WASD
from lib.reconciler import Reconciler
from lib.scrape import https_get
from lib.wait import wait_for
from lib.webhook import Webhook

WAIT = 20.0  # upper bound, in seconds, of any single wait in these tests


def peer_pem(port, server_name="127.0.0.1"):
    """The leaf certificate the server at 127.0.0.1:port sends, PEM."""
    return ssl.get_server_certificate(("127.0.0.1", port), timeout=5)


class SecureMetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-secure-metrics-e2e-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.api = ApiServer(args=["--controllers", ""]).Start()
        cls.addClassCleanup(cls.api.Stop)

    def reconciler(self, name, args=()):
        r = Reconciler(self.api.kubeconfig, self.tmp, name=name,
                       args=["--metrics-secure=true", *args])
        self.addCleanup(r.stop)
        return r.start().wait_ready(WAIT)

    def log_lines(self, path):
        out = []
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def test_reconciler_self_signed_401_and_503(self):
        rec = self.reconciler("self-signed")
        port = rec.metrics_port
        # The chain it sends verifies for 127.0.0.1 against its own CA (the
        # second certificate of the chain is not offered by the ssl module,
        # so the leaf is checked for the name and the issuer).
        leaf = peer_pem(port)
        self.assertIn("BEGIN CERTIFICATE", leaf)
        p = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName", "-issuer"],
                           input=leaf, capture_output=True, text=True, timeout=10)
        self.assertIn("IP Address:127.0.0.1", p.stdout)
        self.assertIn("wasd-metrics-self-signed-ca", p.stdout)

        before = len(self.api.Audit(methods=("POST",)))
        status, headers, body = https_get("127.0.0.1", port, "/metrics")
        self.assertEqual(status, 401, body)
        self.assertTrue(headers.get("www-authenticate", "").startswith("Bearer"), headers)
        self.assertNotIn("wasd_build_info", body)
        self.assertEqual(len(self.api.Audit(methods=("POST",))), before)  # nothing asked

        status, _, body = https_get("127.0.0.1", port, "/metrics", token="some-token")
        self.assertEqual(status, 503, body)
        self.assertIn("TokenReview failed", body)
        self.assertNotIn("wasd_build_info", body)
        wait_for(lambda: self.api.Audit(methods=("POST",), path="/tokenreviews"), WAIT, 0.05,
                 what="the TokenReview POST at the API server")
        logged = [e for e in self.log_lines(rec.log_path)
                  if e.get("msg", "").startswith("cannot authenticate a /metrics request")]
        self.assertTrue(logged, "a warning names the failed TokenReview")

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        with self.assertRaises((http.client.HTTPException, ConnectionError, OSError)):
            conn.request("GET", "/metrics")
            conn.getresponse().read()
        conn.close()

    def test_reconciler_serves_the_given_pair_and_reloads_it(self):
        pair = generate_certs(os.path.join(self.tmp, "first"))
        live = os.path.join(self.tmp, "live")
        os.makedirs(live, exist_ok=True)
        for k in ("tls.crt", "tls.key"):
            shutil.copy(pair[k], os.path.join(live, k))
        rec = self.reconciler("given-pair", ["--metrics-cert-file", os.path.join(live, "tls.crt"),
                                             "--metrics-key-file", os.path.join(live, "tls.key")])
        with open(pair["ca.crt"]) as f:
            ca = f.read()
        status, _, body = https_get("127.0.0.1", rec.metrics_port, "/metrics", ca_pem=ca,
                                    server_name="wasd-webhook.wasd-system.svc")
        self.assertEqual(status, 401, body)  # verified TLS; the gate answered
        first = peer_pem(rec.metrics_port)

        # A new pair from another CA, swapped in as a Secret volume would be.
        other = generate_certs(os.path.join(self.tmp, "other"))
        for k in ("tls.crt", "tls.key"):
            shutil.copy(other[k], os.path.join(live, k + ".new"))
            os.replace(os.path.join(live, k + ".new"), os.path.join(live, k))
        wait_for(lambda: peer_pem(rec.metrics_port) != first, 15.0, 0.5, what="the new pair served")
        with open(other["ca.crt"]) as f:
            status, _, _ = https_get("127.0.0.1", rec.metrics_port, "/metrics", ca_pem=f.read(),
                                     server_name="wasd-webhook.wasd-system.svc")
        self.assertEqual(status, 401)

    def test_webhook_without_api_access_answers_503_with_the_reason(self):
        certs = generate_certs(os.path.join(self.tmp, "wh"))
        with Webhook(certs, workdir=self.tmp, args=["--metrics-secure=true"]) as hook:
            with open(certs["ca.crt"]) as f:
                ca = f.read()
            # Its serving pair by default: verified for the Service name.
            status, _, body = https_get("127.0.0.1", hook.metrics_port, "/metrics", token="t",
                                        ca_pem=ca, server_name="wasd-webhook.wasd-system.svc")
            self.assertEqual(status, 503, body)
            self.assertIn("no Kubernetes API access", body)
            self.assertTrue([e for e in hook.log_entries()
                             if "every scrape is answered 503" in e.get("msg", "")])

    def test_usage_errors(self):
        for args, want in (
                (["--metrics-cert-file", "/x.crt"], "--metrics-cert-file and --metrics-key-file go together"),
                (["--health-probe-bind-address", "127.0.0.1:18555", "--metrics-bind-address", "127.0.0.1:18555"],
                 "cannot share the plain-HTTP probe port")):
            with self.subTest(args=args):
                p = subprocess.run([WASD, "reconciler", "--kubeconfig", self.api.kubeconfig, *args],
                                   capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(want, p.stderr)
        # Plain HTTP may share the probe port, as before.
        r = Reconciler(self.api.kubeconfig, self.tmp, name="shared",
                       args=["--metrics-secure=false"])
        r.metrics_port = r.probe_port
        self.addCleanup(r.stop)
        r.start().wait_ready(WAIT)
        self.assertIn("wasd_build_info", r.metrics_text())


if __name__ == "__main__":
    unittest.main()
