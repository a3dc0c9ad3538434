"""End-to-end: `wasd certs inject-ca` and `wasd certs rotate` against the test API server
(tests/apiserver, loopback HTTPS, stopped by PID).

Env: WASD_BIN (the binary), WASD_SOURCE_DIR (to import the API server harness).
"""
import base64
import datetime
import json
import os
import signal
import subprocess
import tempfile
import unittest

from apiserver.harness import ApiServer
from lib.paths import WASD
from lib.wait import wait_for

NS = "wasd-system"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
SECRET_PATH = f"/api/v1/namespaces/{NS}/secrets/wasd-tls"
MANAGED = "wasd.io/managed-certificate"


def Webhook(name):
    return {"name": name,
            "clientConfig": {"service": {"namespace": NS, "name": "wasd", "path": "/x"}},
            # Rules on a resource these tests never write, so the API server never calls it.
            "rules": [{"apiGroups": ["example.com"], "apiVersions": ["v1"],
                       "operations": ["CREATE"], "resources": ["widgets"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Ignore"}


def B64(data):
    return base64.b64encode(data).decode()


def Openssl(*args, input=None):
    p = subprocess.run(["openssl"] + list(args), capture_output=True, input=input, timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"openssl {' '.join(args)} failed: {p.stderr!r}")
    return p.stdout.decode()


def NotAfter(pem):
    text = Openssl("x509", "-noout", "-enddate", input=pem).strip()
    return datetime.datetime.strptime(text.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z").replace(
        tzinfo=datetime.timezone.utc)


class CertsKubeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = ApiServer(args=["--controllers", "namespace"]).Start()
        try:
            status, _, obj = cls.srv.Request("POST", "/api/v1/namespaces", {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            assert status == 201, obj
        except BaseException:
            cls.srv.Stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.srv.Stop()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="wasd-certs-kube-")
        self.created = []
        self.srv.ClearFaults()

    def tearDown(self):
        for path in self.created:
            self.srv.Request("DELETE", path)
        self.srv.Request("DELETE", SECRET_PATH)
        self.tmp.cleanup()

    # -------------------------------------------------------------- helpers

    def Wasd(self, *args, timeout=60):
        return subprocess.run([WASD, "certs"] + list(args) + ["--kubeconfig", self.srv.kubeconfig],
                              capture_output=True, text=True, timeout=timeout)

    def Logs(self, stderr):
        return [json.loads(line) for line in stderr.splitlines() if line.strip()]

    def MakeConfig(self, plural, name, webhooks):
        kind = "MutatingWebhookConfiguration" if plural.startswith("m") else "ValidatingWebhookConfiguration"
        status, _, obj = self.srv.Request("POST", f"{ADMISSION}/{plural}", {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name}, "webhooks": webhooks})
        self.assertEqual(status, 201, obj)
        self.created.append(f"{ADMISSION}/{plural}/{name}")

    def Bundles(self, plural, name):
        obj = self.srv.Get(f"{ADMISSION}/{plural}/{name}")
        return [w["clientConfig"].get("caBundle", "") for w in obj["webhooks"]]

    def Generate(self, *extra):
        out = os.path.join(self.tmp.name, "gen")
        p = subprocess.run([WASD, "certs", "generate", "--service", "wasd", "--namespace", NS,
                            "--out-dir", out] + list(extra), capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        files = {}
        for name in ("ca.crt", "ca.key", "tls.crt", "tls.key"):
            with open(os.path.join(out, name), "rb") as f:
                files[name] = f.read()
        return out, files

    def Rotate(self, *extra):
        return self.Wasd("rotate", "--service", "wasd", "--namespace", NS, "--secret", "wasd-tls",
                         *extra)

    def SecretPems(self):
        obj = self.srv.Get(SECRET_PATH)
        return obj, {k: base64.b64decode(v) for k, v in obj.get("data", {}).items()}

    def Writes(self, since):
        return [a for a in self.srv.Audit(since=since, methods=("POST", "PUT", "PATCH", "DELETE"))
                if a.get("source") != "controller"]

    def VerifyPair(self, pems):
        with tempfile.NamedTemporaryFile(suffix=".crt") as ca:
            ca.write(pems["ca.crt"])
            ca.flush()
            self.assertIn("OK", Openssl("verify", "-CAfile", ca.name, input=pems["tls.crt"]))
        self.assertEqual(Openssl("x509", "-noout", "-pubkey", input=pems["tls.crt"]),
                         Openssl("pkey", "-pubout", input=pems["tls.key"]))

    # ---------------------------------------------------------------- exec plugins

    def ExecKubeconfig(self, script_body):
        """A kubeconfig like the admin's whose user is an exec credential plugin (how
        EKS, GKE and AKS kubeconfigs authenticate)."""
        plugin = os.path.join(self.tmp.name, "plugin.sh")
        with open(plugin, "w") as f:
            f.write("#!/bin/sh\n" + script_body)
        os.chmod(plugin, 0o755)
        with open(self.srv.kubeconfig) as f:
            cfg = json.load(f)
        cfg["users"][0]["user"] = {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1", "command": plugin, "args": ["get-token"],
            "interactiveMode": "Never", "installHint": "see the cloud's docs"}}
        path = os.path.join(self.tmp.name, "exec-kubeconfig")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path

    def test_inject_ca_through_an_exec_credential_plugin(self):
        self.MakeConfig("validatingwebhookconfigurations", "wasd-exec", [Webhook("x.wasd.io")])
        out, files = self.Generate()
        token, _ = self.srv.AddUser("exec-user", ["system:masters"])
        kubeconfig = self.ExecKubeconfig(
            'test "$1" = get-token || exit 9\n'
            'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
            f'"status":{{"token":"{token}"}}}}\'\n')
        seq = self.srv.LastSeq()
        p = subprocess.run([WASD, "certs", "inject-ca", "--ca-file", os.path.join(out, "ca.crt"),
                            "--webhook-config", "wasd-exec", "--kubeconfig", kubeconfig],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.Bundles("validatingwebhookconfigurations", "wasd-exec"), [B64(files["ca.crt"])])
        self.assertTrue(all(a["user"] == "exec-user" for a in self.Writes(seq)), self.Writes(seq))

        # A plugin that fails: one clear error, exit 1 or 2, no request sent.
        bad = self.ExecKubeconfig("echo 'token expired, run: cloud login' >&2\nexit 1\n")
        seq = self.srv.LastSeq()
        p = subprocess.run([WASD, "certs", "inject-ca", "--ca-file", os.path.join(out, "ca.crt"),
                            "--webhook-config", "wasd-exec", "--kubeconfig", bad],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertLess(p.returncode, 128)
        self.assertIn("run: cloud login", p.stderr)  # the plugin's own stderr reaches the user
        self.assertIn("exited with status 1", p.stderr)
        self.assertEqual([a for a in self.srv.Audit(since=seq) if a.get("source") != "controller"], [])

    # ---------------------------------------------------------------- inject-ca

    def test_inject_ca_patches_every_webhook_of_every_named_config(self):
        self.MakeConfig("mutatingwebhookconfigurations", "wasd", [Webhook("a.wasd.io"), Webhook("b.wasd.io")])
        self.MakeConfig("validatingwebhookconfigurations", "wasd", [Webhook("c.wasd.io")])
        self.MakeConfig("validatingwebhookconfigurations", "wasd-only-validating",
                        [Webhook("d.wasd.io"), Webhook("e.wasd.io"), Webhook("f.wasd.io")])
        out, files = self.Generate()
        want = B64(files["ca.crt"])
        seq = self.srv.LastSeq()

        p = self.Wasd("inject-ca", "--ca-file", os.path.join(out, "ca.crt"),
                      "--webhook-config", "wasd", "--webhook-config", "wasd-only-validating")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.Bundles("mutatingwebhookconfigurations", "wasd"), [want, want])
        self.assertEqual(self.Bundles("validatingwebhookconfigurations", "wasd"), [want])
        self.assertEqual(self.Bundles("validatingwebhookconfigurations", "wasd-only-validating"),
                         [want, want, want])
        logs = self.Logs(p.stderr)
        self.assertEqual([(l["resource"], l["name"], l["patched"]) for l in logs],
                         [("mutatingwebhookconfigurations", "wasd", 2),
                          ("validatingwebhookconfigurations", "wasd", 1),
                          ("validatingwebhookconfigurations", "wasd-only-validating", 3)])
        # Nothing else in the configuration moved.
        obj = self.srv.Get(f"{ADMISSION}/mutatingwebhookconfigurations/wasd")
        self.assertEqual(obj["webhooks"][1]["clientConfig"]["service"]["name"], "wasd")
        self.assertEqual(obj["webhooks"][1]["failurePolicy"], "Ignore")
        # JSON patches guarded by a resourceVersion test.
        patches = [a for a in self.Writes(seq) if a["method"] == "PATCH"]
        self.assertEqual(len(patches), 3)
        for a in patches:
            self.assertEqual(a["contentType"], "application/json-patch+json")
            self.assertEqual(a["body"][0]["op"], "test")
            self.assertEqual(a["body"][0]["path"], "/metadata/resourceVersion")

        # Already current: no write at all.
        seq = self.srv.LastSeq()
        p = self.Wasd("inject-ca", "--webhook-config", "wasd", "wasd-only-validating",
                      "--ca-file", os.path.join(out, "ca.crt"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.Writes(seq), [])
        self.assertTrue(all(l["msg"] == "caBundle already current" for l in self.Logs(p.stderr)))

    def test_inject_ca_replaces_a_stale_bundle(self):
        stale = Webhook("a.wasd.io")
        stale["clientConfig"]["caBundle"] = B64(b"old CA")
        self.MakeConfig("mutatingwebhookconfigurations", "wasd-stale", [stale])
        out, files = self.Generate()
        # The first PATCH loses a race (409): the command re-reads and patches again.
        self.srv.SetFaults([{"code": 409, "methods": ["PATCH"], "path": "wasd-stale", "count": 1}])
        seq = self.srv.LastSeq()
        p = self.Wasd("inject-ca", "--ca-file", os.path.join(out, "ca.crt"), "--webhook-config", "wasd-stale")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.Bundles("mutatingwebhookconfigurations", "wasd-stale"), [B64(files["ca.crt"])])
        self.assertEqual([a["status"] for a in self.Writes(seq)], [409, 200])

    def test_inject_ca_errors(self):
        out, _ = self.Generate()
        self.MakeConfig("mutatingwebhookconfigurations", "wasd-present", [Webhook("a.wasd.io")])
        p = self.Wasd("inject-ca", "--ca-file", os.path.join(out, "ca.crt"),
                      "--webhook-config", "wasd-present,nope")
        self.assertEqual(p.returncode, 1)
        logs = self.Logs(p.stderr)
        self.assertEqual(logs[-1]["level"], "error")
        self.assertEqual(logs[-1]["error"],
                         'webhook configuration "nope" not found (neither mutating nor validating)')
        self.assertEqual(logs[0]["name"], "wasd-present")  # handled before the missing one
        self.assertEqual(logs[0]["patched"], 1)

        p = self.Wasd("inject-ca", "--ca-file", os.path.join(out, "tls.key"), "--webhook-config", "x")
        self.assertEqual(p.returncode, 1)
        self.assertIn("not a PEM certificate", self.Logs(p.stderr)[-1]["error"])

        self.MakeConfig("mutatingwebhookconfigurations", "wasd-forbidden", [Webhook("a.wasd.io")])
        self.srv.SetFaults([{"code": 403, "methods": ["PATCH"], "path": "wasd-forbidden"}])
        p = self.Wasd("inject-ca", "--ca-file", os.path.join(out, "ca.crt"), "--webhook-config", "wasd-forbidden")
        self.assertEqual(p.returncode, 1)
        self.assertIn("patching mutatingwebhookconfigurations/wasd-forbidden: 403",
                      self.Logs(p.stderr)[-1]["error"])

    # ------------------------------------------------------------------ rotate

    def test_rotate_creates_the_secret_then_leaves_it(self):
        self.MakeConfig("mutatingwebhookconfigurations", "wasd-rot", [Webhook("a.wasd.io")])
        self.MakeConfig("validatingwebhookconfigurations", "wasd-rot", [Webhook("b.wasd.io")])
        p = self.Rotate("--once", "--webhook-config", "wasd-rot", "--extra-san", "127.0.0.1")
        self.assertEqual(p.returncode, 0, p.stderr)
        obj, pems = self.SecretPems()
        self.assertEqual(obj["type"], "kubernetes.io/tls")
        self.assertEqual(obj["metadata"]["annotations"][MANAGED], "true")
        self.VerifyPair(pems)
        text = Openssl("x509", "-noout", "-text", input=pems["tls.crt"])
        self.assertIn("DNS:wasd.wasd-system.svc,", text)
        self.assertIn("IP Address:127.0.0.1", text)
        for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            self.assertEqual(self.Bundles(plural, "wasd-rot"), [B64(pems["ca.crt"])])
        rotated = [l for l in self.Logs(p.stderr) if l["msg"] == "certificate rotated"]
        self.assertEqual(rotated[0]["action"], "create")

        seq = self.srv.LastSeq()
        p = self.Rotate("--once", "--webhook-config", "wasd-rot", "--extra-san", "127.0.0.1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.Writes(seq), [])
        self.assertIn("certificate current", [l["msg"] for l in self.Logs(p.stderr)])
        self.assertEqual(self.SecretPems()[1], pems)

    def test_rotate_renews_an_expiring_leaf_with_the_same_ca(self):
        _, files = self.Generate("--days", "30")
        status, _, obj = self.srv.Request("POST", f"/api/v1/namespaces/{NS}/secrets", {
            "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": "wasd-tls", "annotations": {MANAGED: "true"}, "labels": {"keep": "me"}},
            "data": {k: B64(v) for k, v in files.items()}})
        self.assertEqual(status, 201, obj)
        rv = obj["metadata"]["resourceVersion"]
        seq = self.srv.LastSeq()

        p = self.Rotate("--once")  # 30 days left < default renew-before of 90 days
        self.assertEqual(p.returncode, 0, p.stderr)
        obj, pems = self.SecretPems()
        self.assertEqual(pems["ca.crt"], files["ca.crt"])
        self.assertEqual(pems["ca.key"], files["ca.key"])
        self.assertNotEqual(pems["tls.crt"], files["tls.crt"])
        self.assertEqual(obj["metadata"]["labels"], {"keep": "me"})
        self.VerifyPair(pems)
        days = (NotAfter(pems["tls.crt"]) - datetime.datetime.now(datetime.timezone.utc)).days
        self.assertIn(days, (364, 365))
        puts = [a for a in self.Writes(seq) if a["method"] == "PUT"]
        self.assertEqual(len(puts), 1)
        self.assertEqual(puts[0]["body"]["metadata"]["resourceVersion"], rv)  # optimistic concurrency
        log = [l for l in self.Logs(p.stderr) if l["msg"] == "certificate rotated"][0]
        self.assertEqual(log["action"], "renew-leaf")
        self.assertEqual(log["reason"], "tls.crt expires within renew-before")

        # With a shorter renew-before the fresh leaf is left alone.
        seq = self.srv.LastSeq()
        self.assertEqual(self.Rotate("--once", "--renew-before", "720h").returncode, 0)
        self.assertEqual(self.Writes(seq), [])

    def test_rotate_never_writes_a_foreign_secret(self):
        self.MakeConfig("mutatingwebhookconfigurations", "wasd-foreign", [Webhook("a.wasd.io")])
        _, files = self.Generate("--days", "1")  # expiring: would be renewed if it were ours
        status, _, obj = self.srv.Request("POST", f"/api/v1/namespaces/{NS}/secrets", {
            "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": "wasd-tls", "annotations": {"cert-manager.io/certificate-name": "wasd"}},
            "data": {k: B64(v) for k, v in files.items()}})
        self.assertEqual(status, 201, obj)
        seq = self.srv.LastSeq()
        p = self.Rotate("--once", "--webhook-config", "wasd-foreign")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.Writes(seq), [])
        warn = [l for l in self.Logs(p.stderr) if l["level"] == "warn"]
        self.assertEqual(len(warn), 1)
        self.assertIn("not managed by wasd", warn[0]["msg"])
        self.assertEqual(self.SecretPems()[1]["tls.crt"], files["tls.crt"])
        self.assertEqual(self.Bundles("mutatingwebhookconfigurations", "wasd-foreign"), [""])

    def test_rotate_reports_api_errors(self):
        self.srv.SetFaults([{"code": 403, "methods": ["GET"], "path": "/secrets/wasd-tls"}])
        p = self.Rotate("--once")
        self.assertEqual(p.returncode, 1)
        err = self.Logs(p.stderr)[-1]
        self.assertEqual(err["level"], "error")
        self.assertIn("reading secret wasd-system/wasd-tls: 403", err["error"])

    def test_rotate_loop_rechecks_and_stops_on_sigterm(self):
        proc = subprocess.Popen([WASD, "certs", "rotate", "--service", "wasd", "--namespace", NS,
                                 "--secret", "wasd-tls", "--check-interval", "1s",
                                 "--kubeconfig", self.srv.kubeconfig],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: self.srv.Get(SECRET_PATH), 20, 0.1, "secret created by the loop")
            first = self.SecretPems()[1]
            status, _, _ = self.srv.Request("DELETE", SECRET_PATH)
            self.assertEqual(status, 200)
            # The next pass (within ~1 s) makes a new Secret.
            wait_for(lambda: (self.srv.Get(SECRET_PATH) or {}).get("data"), 20, 0.1, "secret re-created")
            self.assertNotEqual(self.SecretPems()[1]["ca.crt"], first["ca.crt"])
            self.assertIsNone(proc.poll())
            os.kill(proc.pid, signal.SIGTERM)
            _, stderr = proc.communicate(timeout=20)
            self.assertEqual(proc.returncode, 0, stderr)
            msgs = [l["msg"] for l in self.Logs(stderr)]
            self.assertEqual(msgs[0], "certificate rotation starting")
            self.assertEqual(msgs[-1], "certificate rotation stopped")
            self.assertGreaterEqual(msgs.count("certificate rotated"), 2)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


if __name__ == "__main__":
    unittest.main(verbosity=2)
