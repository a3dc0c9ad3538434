"""Certificates for tests.

generate_certs() makes a CA and a serving pair with the product's own
`wasd certs generate`. The openssl helpers (make_ca, make_cert, make_serving,
Pki) make throwaway EC P-256 PKIs for what that command does not cover:
client certificates, chosen serial numbers, foreign CAs, test doubles.
"""
import os
import ssl
import subprocess
import tempfile
import threading

from lib import paths

_GENERATE_LOCK = threading.Lock()


def generate_certs(out_dir, service="wasd-webhook", namespace="wasd-system",
                   extra_sans=("127.0.0.1", "localhost")):
    """CA + serving certificate via `wasd certs generate`; returns
    {"ca.crt": path, "tls.crt": path, "tls.key": path}."""
    cmd = [paths.WASD, "certs", "generate", "--service", service, "--namespace", namespace,
           "--out-dir", out_dir]
    for san in extra_sans:
        cmd += ["--extra-san", san]
    with _GENERATE_LOCK:
        subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    return {k: os.path.join(out_dir, k) for k in ("ca.crt", "tls.crt", "tls.key")}


def _openssl(*args):
    subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=60)


_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def make_ca(directory, name="ca", cn=None, days=2):
    """A self-signed CA in directory/name.crt, .key; returns (crt, key)."""
    crt, key = os.path.join(directory, f"{name}.crt"), os.path.join(directory, f"{name}.key")
    _openssl("req", "-x509", *_EC, "-keyout", key, "-out", crt, "-days", str(days),
             "-subj", f"/CN={cn or name}", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return crt, key


def make_cert(directory, name, ca, cn, orgs=(), sans=(), usage="serverAuth", serial=None, days=2):
    """A leaf signed by ca = (crt, key): directory/name.crt, .key; returns (crt, key).
    sans like ["IP:127.0.0.1", "DNS:localhost"]; usage serverAuth or clientAuth."""
    crt, key, csr = (os.path.join(directory, f"{name}.{ext}") for ext in ("crt", "key", "csr"))
    subj = "".join(f"/O={o}" for o in orgs) + f"/CN={cn}"
    _openssl("req", "-new", *_EC, "-keyout", key, "-out", csr, "-subj", subj)
    with tempfile.NamedTemporaryFile("w", suffix=".ext", delete=False) as ext:
        ext.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n")
        ext.write(f"extendedKeyUsage={usage}\n")
        if sans:
            ext.write("subjectAltName=" + ",".join(sans) + "\n")
    serial_args = ["-set_serial", str(serial)] if serial is not None else ["-CAcreateserial"]
    try:
        _openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], *serial_args,
                 "-out", crt, "-days", str(days), "-extfile", ext.name)
    finally:
        os.unlink(ext.name)
        os.unlink(csr)
    return crt, key


def make_serving(directory, name, dns_names, ips=("127.0.0.1",)):
    """A fresh CA plus a serving certificate for it; returns (ca_crt, crt, key)."""
    ca = make_ca(directory, f"{name}-ca")
    sans = [f"DNS:{d}" for d in dns_names] + [f"IP:{i}" for i in ips]
    crt, key = make_cert(directory, name, ca, dns_names[0] if dns_names else name, sans=sans)
    return ca[0], crt, key


def not_after(cert_path):
    """The certificate's notAfter as seconds since the epoch."""
    out = subprocess.run(["openssl", "x509", "-noout", "-enddate", "-in", cert_path], check=True,
                         capture_output=True, text=True, timeout=30).stdout
    return int(ssl.cert_time_to_seconds(out.strip().split("=", 1)[1]))


class Pki:
    """A throwaway PKI in `directory`: CA "ca" with the serving leaf "serving"
    (serial 1001), CA "client-ca" with the client leaf "client" (2001), and an
    unrelated CA "other-ca" with the client leaf "rogue" (3001). Leaves are for
    127.0.0.1 and localhost."""

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

    def make_ca(self, name):
        return make_ca(self.dir, name)

    def make_leaf(self, name, ca, serial, usage, days=1):
        return make_cert(self.dir, name, (self.path(ca + ".crt"), self.path(ca + ".key")), "localhost",
                         sans=["IP:127.0.0.1", "DNS:localhost"], usage=usage, serial=serial, days=days)

    def not_after(self, name):
        return not_after(self.path(name))

    def serving_certs(self, cert="serving.crt", key="serving.key"):
        """The files a Webhook is started with."""
        return {"ca.crt": self.path("ca.crt"), "tls.crt": self.path(cert), "tls.key": self.path(key)}

    def client_context(self, client=None):
        """A TLS client context trusting "ca", presenting leaf `client` if given."""
        ctx = ssl.create_default_context(cafile=self.path("ca.crt"))
        if client:
            ctx.load_cert_chain(self.path(client + ".crt"), self.path(client + ".key"))
        return ctx
