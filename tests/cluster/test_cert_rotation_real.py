#!/usr/bin/env python3
"""REAL CONTROL PLANE: the self-managed serving certificate rotated while the
real kube-apiserver keeps calling the webhook (issue 40).

How the product rotates (charts/wasd, certs/rotation.cc): `wasd certs rotate`
renews the leaf when it expires within renewBefore and the CA when the CA
does; the pre-upgrade Job runs it once, the post-upgrade Job injects the CA,
the cert-rotator Deployment runs it every checkInterval (1 h). A renewal is
forced with the chart's own values: a `helm upgrade` whose renewBefore is
longer than what is left of the current certificate. So that both the leaf
and the CA can come due in one test, the TLS Secret is made before the
install by `wasd certs rotate --once` itself with a 1-day leaf and a 3-day CA
(a wasd-managed Secret the chart adopts as it is), and the install keeps it
(renewBefore=12h). Then
- phase 1, renewBefore=36h (days=730): the leaf is due, the CA is not: the
  pre-upgrade Job renews the leaf with the same CA;
- phase 2, renewBefore=96h: the CA is due: a new CA and a leaf signed by it,
  the previous CA kept under ca-previous.crt. The pre-upgrade Job injects
  both CAs before any replica serves the new leaf, and the post-upgrade Job
  keeps both (it once injected ca.crt alone, and the API server refused
  every call to a replica still serving the old leaf).

Meanwhile a background loop submits `kubectl apply --dry-run=server` of a
valid gang Deployment and of examples/bad-h1-mincount-over-replicas.yaml
(failurePolicy Fail). Proven:
- phase 1: the Secret's leaf serial and notAfter change, its CA stays, and
  the caBundle of every webhook of both configurations still holds that CA;
- phase 2: the Secret's CA changes, ca-previous.crt is the old CA, and every
  caBundle holds exactly the new and the old CA;
- every webhook replica serves the new leaf (read over TLS from its pod IP)
  with the same pod UID and restartCount: a reload from the Secret volume,
  not a restart (the node agent rewrites a Secret volume whose object changed,
  every 10 s, as the kubelet does; the webhook polls its files every 2 s);
- every call is admitted (valid) or denied by wasd (bad), none refused by
  the API server (TLS, x509, "failed calling webhook"). Counts printed.
"""
import base64
import os
import socket
import ssl
import subprocess
import threading
import time
import unittest

from cluster.realcluster import APP_NS, NS, RealCluster, gang_manifest, run, wait_until
from lib.paths import SOURCE_DIR, WASD

SECRET = "wasd-webhook-tls"
CONFIG = "wasd"
BAD = os.path.join(SOURCE_DIR, "examples", "bad-h1-mincount-over-replicas.yaml")
BAD_MESSAGE = "schedulingPolicy.gang.minCount: Invalid value: 5"
MAX_CALLS = 4000  # bound of the background loop


def cert_facts(pem):
    """(serial hex, notAfter text) of a PEM certificate, by openssl."""
    out = run("openssl", "x509", "-noout", "-serial", "-enddate", input=pem).stdout
    f = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return f["serial"].upper(), f["notAfter"]


def pem_blocks(text):
    marker = "-----END CERTIFICATE-----"
    return [b.strip() + "\n" + marker + "\n" for b in text.split(marker) if "BEGIN CERTIFICATE" in b]


class Traffic(threading.Thread):
    """Alternating dry-run applies of a valid and a bad Deployment until stopped."""

    def __init__(self, test):
        super().__init__(daemon=True)
        self.test = test
        self.stop = threading.Event()
        self.counts = {"valid admitted": 0, "bad denied by wasd": 0, "refused by the API server": 0,
                       "valid denied": 0, "bad admitted": 0, "other": 0}
        self.refusals = []
        self.lock = threading.Lock()
        with open(BAD) as f:
            self.bad = f.read()
        self.valid = gang_manifest("rot-valid", 2, 2)

    def apply(self, text):
        return subprocess.run([os.path.join(self.test.bin, "kubectl"), "apply", "--dry-run=server",
                               "-n", APP_NS, "-f", "-"], input=text, capture_output=True, text=True,
                              env=self.test.env, timeout=60)

    def run(self):
        for i in range(MAX_CALLS):  # bounded
            if self.stop.is_set():
                return
            valid = i % 2 == 0
            p = self.apply(self.valid if valid else self.bad)
            err = p.stderr
            with self.lock:
                if any(s in err for s in ("failed calling webhook", "x509", "tls:", "TLS handshake")):
                    key = "refused by the API server"
                    self.refusals.append(err.strip()[:400])
                elif valid:
                    key = "valid admitted" if p.returncode == 0 else "valid denied"
                elif p.returncode == 0:
                    key = "bad admitted"
                else:
                    key = "bad denied by wasd" if BAD_MESSAGE in err else "other"
                if key in ("other", "valid denied"):
                    self.refusals.append(err.strip()[:400])
                self.counts[key] += 1

    def snapshot(self):
        with self.lock:
            return dict(self.counts)


class CertRotationOnRealControlPlane(RealCluster):
    def secret_pems(self):
        s = self.get("secret", "-n", NS, SECRET)
        d = {k: base64.b64decode(v).decode() for k, v in s["data"].items()}
        return d, s["metadata"].get("annotations", {})

    def bundles(self):
        out = {}
        for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
            for w in self.get(kind, CONFIG)["webhooks"]:
                out[f"{kind}/{w['name']}"] = base64.b64decode(w["clientConfig"]["caBundle"]).decode()
        return out

    def webhook_pods(self):
        return self.live_pods(NS, "app.kubernetes.io/component=webhook")

    def served_serial(self, pod):
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        with socket.create_connection((pod["status"]["podIP"], 9443), timeout=5) as sock:
            with ctx.wrap_socket(sock) as tls:
                der = tls.getpeercert(binary_form=True)
        return cert_facts(ssl.DER_cert_to_PEM_cert(der))[0]

    def upgrade(self, days, renew_before):
        t0 = time.monotonic()
        self.helm("upgrade", "wasd", os.path.join(SOURCE_DIR, "charts", "wasd"), "-n", NS, "--reuse-values",
                  "--set", f"certs.selfManaged.days={days}",
                  "--set", f"certs.selfManaged.renewBefore={renew_before}", "--timeout", "5m")
        print(f"helm upgrade days={days} renewBefore={renew_before}: {time.monotonic() - t0:.1f} s")

    def check_served_by_all(self, serial, pods_before):
        def all_serve():
            pods = self.webhook_pods()
            got = {p["metadata"]["name"]: self.served_serial(p) for p in pods}
            return all(v == serial for v in got.values()) and len(got) == len(pods_before), got
        got = wait_until(f"every webhook replica serving leaf {serial}", all_serve, timeout=120)
        print(f"served leaf serials: {got}")
        after = {p["metadata"]["name"]: (p["metadata"]["uid"], p["status"]["containerStatuses"][0].get("restartCount", 0))
                 for p in self.webhook_pods()}
        self.assertEqual(after, pods_before, "webhook pods replaced or restarted by the rotation")

    def test_rotation_under_traffic(self):
        self.kubectl("create", "namespace", NS)
        run(WASD, "certs", "rotate", "--once", "--service", "wasd-webhook", "--namespace", NS,
            "--secret", SECRET, "--days", "1", "--ca-days", "3", "--renew-before", "1h", env=self.env)
        self.install_chart("certs.selfManaged.renewBefore=12h")
        d0, _ = self.secret_pems()
        leaf0, ca0 = cert_facts(d0["tls.crt"]), d0["ca.crt"]
        pods0 = {p["metadata"]["name"]: (p["metadata"]["uid"], p["status"]["containerStatuses"][0].get("restartCount", 0))
                 for p in self.webhook_pods()}
        self.check_served_by_all(leaf0[0], pods0)
        for name, b in self.bundles().items():
            self.assertEqual(pem_blocks(b), pem_blocks(ca0), name)

        traffic = Traffic(self)
        traffic.start()
        try:
            wait_until("traffic under way", lambda: (sum(traffic.snapshot().values()) >= 10, traffic.snapshot()))
            before = traffic.snapshot()
            print(f"before any rotation: {before}")

            # Phase 1: leaf renewal, same CA.
            self.upgrade(730, "36h")
            d1, _ = self.secret_pems()
            leaf1 = cert_facts(d1["tls.crt"])
            self.assertNotEqual(leaf1[0], leaf0[0], "leaf serial unchanged")
            self.assertNotEqual(leaf1[1], leaf0[1], "leaf notAfter unchanged")
            self.assertEqual(d1["ca.crt"], ca0, "a leaf renewal must keep the CA")
            self.check_served_by_all(leaf1[0], pods0)
            for name, b in self.bundles().items():
                self.assertIn(pem_blocks(ca0)[0], pem_blocks(b), name)
            c1 = traffic.snapshot()
            wait_until("calls after the leaf renewal",
                       lambda: (traffic.snapshot()["valid admitted"] >= c1["valid admitted"] + 5, None))
            print(f"after the leaf renewal {leaf0} -> {leaf1}: {traffic.snapshot()}")

            # Phase 2: the CA is due (3 days left < 96h): new CA, previous kept.
            self.upgrade(730, "96h")
            d2, ann2 = self.secret_pems()
            leaf2 = cert_facts(d2["tls.crt"])
            self.assertNotEqual(d2["ca.crt"], ca0, "the CA was not renewed")
            self.assertEqual(d2.get("ca-previous.crt"), ca0, "the previous CA is not kept")
            self.assertIn("wasd.io/previous-ca-until", ann2)
            self.assertNotEqual(leaf2[0], leaf1[0])
            self.check_served_by_all(leaf2[0], pods0)
            want = sorted(pem_blocks(d2["ca.crt"]) + pem_blocks(ca0))
            for name, b in self.bundles().items():
                self.assertEqual(sorted(pem_blocks(b)), want, f"{name}: not the new and the previous CA")
            c2 = traffic.snapshot()
            wait_until("calls after the CA renewal",
                       lambda: (traffic.snapshot()["valid admitted"] >= c2["valid admitted"] + 5, None))
            print(f"after the CA renewal {leaf1} -> {leaf2}: {traffic.snapshot()}")

        finally:
            traffic.stop.set()
            traffic.join(timeout=90)
        counts = traffic.snapshot()
        print(f"outcomes of {sum(counts.values())} dry-run applies over the rotation: {counts}")
        self.assertFalse(traffic.is_alive())
        self.assertEqual(traffic.refusals, [], "calls refused or answered otherwise")
        self.assertEqual(counts["refused by the API server"], 0)
        self.assertEqual(counts["bad admitted"], 0)
        self.assertEqual(counts["valid denied"] + counts["other"], 0)
        self.assertGreater(counts["valid admitted"], 20)
        self.assertGreater(counts["bad denied by wasd"], 20)


if __name__ == "__main__":
    unittest.main()
