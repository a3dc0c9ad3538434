#!/usr/bin/env python3
"""Certificate rotation under load: clients send reviews without pause (fresh
TLS connections and kept-alive ones) while `wasd certs generate` replaces the
serving pair several times (same CA). Every request must succeed; new
connections must see each new serial; established connections keep going.
Prints the figures (requests sent, failed, rotations, serials seen)."""
import http.client
import json
import os
import ssl
import subprocess
import tempfile
import threading
import time
import unittest

from lib.certs import generate_certs
from lib.paths import testdata
from lib.webhook import Webhook

ROTATIONS = int(os.environ.get("WASD_ROTATIONS", "5"))
FIXTURE = testdata("e2e", "pod-managed.json")


class RotationUnderLoad(unittest.TestCase):
    def test_rotation_under_load(self):
        tmp = tempfile.mkdtemp(prefix="wasd-rotation-")
        certs = generate_certs(os.path.join(tmp, "certs"))
        with open(FIXTURE, "rb") as f:
            body = f.read()
        uid = json.loads(body)["request"]["uid"]
        ctx = ssl.create_default_context(cafile=certs["ca.crt"])
        stop = threading.Event()
        stats = {"sent": 0, "failed": 0, "errors": []}
        serials = []
        lock = threading.Lock()

        with Webhook(certs, args=["--cert-reload-interval", "200ms"], workdir=tmp) as hook:
            def one(conn):
                conn.request("POST", "/mutate-v1-pod?timeout=10s", body,
                             {"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
                ok = resp.status == 200 and json.loads(data)["response"]["uid"] == uid
                return ok, resp.status

            def fresh_client():
                while not stop.is_set():
                    conn = http.client.HTTPSConnection("127.0.0.1", hook.port, context=ctx, timeout=10)
                    try:
                        ok, status = one(conn)
                        der = conn.sock.getpeercert(binary_form=True)
                        serial = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"],
                                                input=der, capture_output=True, timeout=10).stdout.decode().strip()
                        with lock:
                            stats["sent"] += 1
                            if not ok:
                                stats["failed"] += 1
                                stats["errors"].append(status)
                            # Two clients race: a handshake begun just before a swap
                            # still gets the previous pair, so keep first sightings.
                            if serial not in serials:
                                serials.append(serial)
                    except Exception as e:  # noqa: BLE001 - every failure is counted
                        with lock:
                            stats["sent"] += 1
                            stats["failed"] += 1
                            stats["errors"].append(repr(e))
                    finally:
                        conn.close()

            def keepalive_client():
                conn = http.client.HTTPSConnection("127.0.0.1", hook.port, context=ctx, timeout=10)
                try:
                    while not stop.is_set():
                        try:
                            ok, status = one(conn)
                        except Exception as e:  # noqa: BLE001
                            ok, status = False, repr(e)
                        with lock:
                            stats["sent"] += 1
                            if not ok:
                                stats["failed"] += 1
                                stats["errors"].append(status)
                finally:
                    conn.close()

            threads = [threading.Thread(target=fresh_client), threading.Thread(target=fresh_client),
                       threading.Thread(target=keepalive_client)]
            for t in threads:
                t.start()
            try:
                time.sleep(1.0)
                for _ in range(ROTATIONS):
                    generate_certs(os.path.join(tmp, "certs"))
                    time.sleep(1.2)
            finally:
                stop.set()
                for t in threads:
                    t.join(30)
            final = subprocess.run(
                ["openssl", "x509", "-in", certs["tls.crt"], "-noout", "-serial"],
                capture_output=True, text=True, timeout=10).stdout.strip()
            print(f"ROTATION-FIGURES requests={stats['sent']} failed={stats['failed']} "
                  f"rotations={ROTATIONS} serials_seen_by_new_connections={len(serials)}", flush=True)
            self.assertEqual(stats["failed"], 0, stats["errors"][:5])
            self.assertGreater(stats["sent"], 50)
            self.assertEqual(len(serials), ROTATIONS + 1, serials)
            self.assertEqual(serials[-1], final)
            self.assertTrue(hook.ready())


if __name__ == "__main__":
    unittest.main()
