"""End-to-end: `wasd certs generate` and the certs CLI surface, driving the built binary.

Checks the files with the `openssl` command (verify, x509 -text), uses them for a real TLS
handshake on loopback, and covers CA reuse, refusal to overwrite, --force, --help and bad flags.
Env: WASD_BIN (the binary).
"""
import datetime
import json
import os
import shutil
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import unittest

WASD = os.environ.get("WASD_BIN", "wasd")
SANS = ["wasd", "wasd.wasd-system", "wasd.wasd-system.svc", "wasd.wasd-system.svc.cluster.local"]


def Run(*args, timeout=60):
    return subprocess.run([WASD] + list(args), capture_output=True, text=True, timeout=timeout)


def Openssl(*args):
    p = subprocess.run(["openssl"] + list(args), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"openssl {' '.join(args)} failed: {p.stdout}{p.stderr}")
    return p.stdout


def LogLines(stderr):
    """Every stderr line must be one JSON object; returns them."""
    lines = [l for l in stderr.splitlines() if l.strip()]
    return [json.loads(l) for l in lines]


def NotAfter(path):
    text = Openssl("x509", "-in", path, "-noout", "-enddate").strip()  # notAfter=Jun  1 00:00:00 2026 GMT
    return datetime.datetime.strptime(text.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z").replace(
        tzinfo=datetime.timezone.utc)


class GenerateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wasd-certs-e2e-")
        self.out = os.path.join(self.tmp, "out")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def Generate(self, *extra):
        return Run("certs", "generate", "--service", "wasd", "--namespace", "wasd-system",
                   "--out-dir", self.out, *extra)

    def File(self, name):
        return os.path.join(self.out, name)

    def Read(self, name):
        with open(self.File(name), "rb") as f:
            return f.read()

    def test_files_verify_and_carry_the_right_extensions(self):
        p = self.Generate("--extra-san", "127.0.0.1", "--extra-san", "localhost")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "")
        logs = LogLines(p.stderr)
        self.assertEqual(logs[-1]["msg"], "certificates written")
        self.assertEqual(logs[-1]["level"], "info")
        self.assertTrue(logs[-1]["caCreated"])

        self.assertIn("tls.crt: OK", Openssl("verify", "-CAfile", self.File("ca.crt"),
                                             "-purpose", "sslserver", self.File("tls.crt")))
        leaf = Openssl("x509", "-in", self.File("tls.crt"), "-noout", "-text")
        for name in SANS + ["localhost"]:
            self.assertIn(f"DNS:{name},", leaf.replace("\n", ",") + ",")
        self.assertIn("IP Address:127.0.0.1", leaf)
        self.assertIn("TLS Web Server Authentication", leaf)
        self.assertNotIn("TLS Web Client Authentication", leaf)
        self.assertIn("CA:FALSE", leaf)
        self.assertIn("Digital Signature", leaf)
        self.assertNotIn("Key Encipherment", leaf)
        self.assertIn("id-ecPublicKey", leaf)
        self.assertIn("prime256v1", leaf)
        self.assertIn("X509v3 Subject Key Identifier", leaf)
        self.assertIn("X509v3 Authority Key Identifier", leaf)

        ca = Openssl("x509", "-in", self.File("ca.crt"), "-noout", "-text")
        self.assertRegex(ca, r"X509v3 Basic Constraints: critical\s+CA:TRUE")
        self.assertIn("Certificate Sign, CRL Sign", ca)

        # Keys 0600, certificates readable.
        for key in ("ca.key", "tls.key"):
            self.assertEqual(stat.S_IMODE(os.stat(self.File(key)).st_mode), 0o600, key)
        self.assertEqual(stat.S_IMODE(os.stat(self.File("tls.crt")).st_mode), 0o644)
        # Each key belongs to its certificate.
        for crt, key in (("tls.crt", "tls.key"), ("ca.crt", "ca.key")):
            self.assertEqual(Openssl("x509", "-in", self.File(crt), "-noout", "-pubkey"),
                             Openssl("pkey", "-in", self.File(key), "-pubout"))

    def test_default_lifetimes_and_days_flags(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        self.assertEqual(self.Generate().returncode, 0)
        leaf_days = (NotAfter(self.File("tls.crt")) - now).total_seconds() / 86400
        ca_days = (NotAfter(self.File("ca.crt")) - now).total_seconds() / 86400
        self.assertAlmostEqual(leaf_days, 365, delta=0.1)
        self.assertAlmostEqual(ca_days, 3650, delta=0.1)

        shutil.rmtree(self.out)
        p = self.Generate("--days", "7", "--ca-days", "30")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertAlmostEqual((NotAfter(self.File("tls.crt")) - now).total_seconds() / 86400, 7,
                               delta=0.1)
        self.assertAlmostEqual((NotAfter(self.File("ca.crt")) - now).total_seconds() / 86400, 30,
                               delta=0.1)

    def test_rsa_key_type(self):
        p = self.Generate("--key-type", "rsa")
        self.assertEqual(p.returncode, 0, p.stderr)
        leaf = Openssl("x509", "-in", self.File("tls.crt"), "-noout", "-text")
        self.assertIn("rsaEncryption", leaf)
        self.assertIn("Public-Key: (2048 bit)", leaf)
        self.assertIn("Digital Signature, Key Encipherment", leaf)
        self.assertIn("tls.crt: OK", Openssl("verify", "-CAfile", self.File("ca.crt"),
                                             self.File("tls.crt")))

    def test_second_run_reuses_the_ca(self):
        self.assertEqual(self.Generate().returncode, 0)
        ca1, leaf1 = self.Read("ca.crt"), self.Read("tls.crt")
        p = self.Generate()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(LogLines(p.stderr)[-1]["caCreated"])
        self.assertEqual(self.Read("ca.crt"), ca1)
        self.assertNotEqual(self.Read("tls.crt"), leaf1)
        # The old CA (already injected somewhere) still verifies the new leaf.
        ca_copy = os.path.join(self.tmp, "old-ca.crt")
        with open(ca_copy, "wb") as f:
            f.write(ca1)
        self.assertIn("OK", Openssl("verify", "-CAfile", ca_copy, self.File("tls.crt")))
        serial1 = Openssl("x509", "-noout", "-serial", "-in", self.File("tls.crt"))
        self.assertEqual(self.Generate().returncode, 0)
        self.assertNotEqual(Openssl("x509", "-noout", "-serial", "-in", self.File("tls.crt")), serial1)

    def test_user_files_are_not_overwritten_without_force(self):
        os.makedirs(self.out)
        with open(self.File("tls.crt"), "w") as f:
            f.write("supplied by the user\n")
        p = self.Generate()
        self.assertEqual(p.returncode, 1)
        err = LogLines(p.stderr)
        self.assertEqual(len(err), 1)
        self.assertEqual(err[0]["level"], "error")
        self.assertIn("tls.crt exists and was not written by wasd certs generate", err[0]["error"])
        self.assertEqual(self.Read("tls.crt"), b"supplied by the user\n")
        self.assertFalse(os.path.exists(self.File("ca.crt")))

        p = self.Generate("--force")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("OK", Openssl("verify", "-CAfile", self.File("ca.crt"), self.File("tls.crt")))

    def test_serving_pair_works_for_a_tls_handshake(self):
        self.assertEqual(self.Generate("--extra-san", "127.0.0.1").returncode, 0)
        server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_ctx.load_cert_chain(self.File("tls.crt"), self.File("tls.key"))
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(10)
        port = listener.getsockname()[1]
        errors = []

        def Serve():
            try:
                conn, _ = listener.accept()
                with server_ctx.wrap_socket(conn, server_side=True) as tls:
                    tls.sendall(b"ok")
            except Exception as e:  # reported by the main thread
                errors.append(e)

        t = threading.Thread(target=Serve, daemon=True)
        t.start()
        try:
            client_ctx = ssl.create_default_context(cafile=self.File("ca.crt"))
            with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
                with client_ctx.wrap_socket(raw, server_hostname="wasd.wasd-system.svc") as tls:
                    self.assertEqual(tls.recv(2), b"ok")
        finally:
            t.join(10)
            listener.close()
        self.assertEqual(errors, [])


class CliTest(unittest.TestCase):
    def test_help_exits_zero(self):
        for args in (["certs", "--help"], ["certs", "generate", "--help"],
                     ["certs", "inject-ca", "--help"], ["certs", "rotate", "--help"]):
            p = Run(*args)
            self.assertEqual(p.returncode, 0, args)
            self.assertIn("Usage: wasd certs", p.stdout)
        self.assertIn("--renew-before", Run("certs", "rotate", "--help").stdout)
        self.assertIn("--extra-san", Run("certs", "generate", "--help").stdout)

    def test_bad_flags_exit_two_in_the_one_error_style(self):
        # Every subcommand reports a mistake the same way (runtime/flags.h):
        # "wasd SUB: what is wrong" and "Run 'wasd SUB --help' for usage.".
        cases = [
            (["certs", "generate", "--service", "s", "--namespace", "n", "--out-dir", "d", "--bogus"],
             "wasd certs generate: unknown flag --bogus"),
            (["certs", "generate", "--namespace", "n", "--out-dir", "d"],
             "wasd certs generate: flag --service is required"),
            (["certs", "generate", "--service", "s", "--namespace", "n", "--out-dir", "d",
              "--key-type", "dsa"], 'wasd certs generate: invalid value "dsa" for --key-type: want ecdsa or rsa'),
            (["certs", "generate", "--service", "s", "--namespace", "n", "--out-dir", "d",
              "--days", "0"], 'wasd certs generate: invalid value "0" for --days: want an integer from 1 to 36500'),
            (["certs", "generate", "--service", "s", "--namespace", "n", "--out-dir"],
             "wasd certs generate: flag --out-dir needs a value"),
            (["certs", "inject-ca", "--webhook-config", "x"],
             "wasd certs inject-ca: flag --ca-file is required"),
            (["certs", "rotate", "--service", "s", "--secret", "x", "--renew-before", "90d"],
             'wasd certs rotate: invalid value "90d" for --renew-before: invalid duration "90d": unknown unit "d"'),
            (["certs", "rotate", "--service", "s", "--secret", "x", "--days", "30"],
             "wasd certs rotate: --renew-before (2160h0m0s) must be shorter than the certificate lifetime"),
            (["certs", "rotate", "--service", "s", "--secret", "x", "--check-interval", "0s"],
             'wasd certs rotate: invalid value "0s" for --check-interval: must be at least 1s'),
            (["certs", "frobnicate"], 'wasd certs: unknown subcommand "frobnicate"'),
        ]
        for args, message in cases:
            p = Run(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            lines = p.stderr.splitlines()
            self.assertEqual(len(lines), 2, (args, p.stderr))
            self.assertTrue(lines[0].startswith(message), (args, p.stderr))
            sub = " ".join(args[:2]) if args[1] != "frobnicate" else "certs"
            self.assertEqual(lines[1], f"Run 'wasd {sub} --help' for usage.", (args, p.stderr))

    def test_invalid_values_fail_before_writing(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = Run("certs", "generate", "--service", "Bad_Name", "--namespace", "n", "--out-dir", out)
            self.assertEqual(p.returncode, 1)
            self.assertIn('--service must be a DNS label', json.loads(p.stderr)["error"])
            p = Run("certs", "generate", "--service", "s", "--namespace", "n", "--out-dir", out,
                    "--extra-san", "not a name")
            self.assertEqual(p.returncode, 1)
            self.assertIn('not a DNS name or IP address: "not a name"', json.loads(p.stderr)["error"])
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main(verbosity=2)
