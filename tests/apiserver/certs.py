"""Certificates for the test API server, made with the openssl command line tool.

One CA signs: the serving certificate (127.0.0.1 / localhost), an admin client
certificate (CN=admin, O=system:masters) and a client certificate the server may
present to webhooks (CN=kube-apiserver-webhook-client). Also exposes MakeServing()
so tests can mint certificates for their own webhook servers. Not thread-safe per dir.
"""
import os
import subprocess
import tempfile


def _Run(args):
    subprocess.run(["openssl"] + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def MakeCa(dir_, name="ca", cn="wasd-test-apiserver-ca"):
    crt, key = os.path.join(dir_, f"{name}.crt"), os.path.join(dir_, f"{name}.key")
    _Run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
          "-keyout", key, "-out", crt, "-days", "2", "-subj", f"/CN={cn}",
          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    return crt, key


def MakeCert(dir_, name, ca_crt, ca_key, cn, orgs=(), sans=(), client=False):
    """Issue a leaf certificate; sans like ["IP:127.0.0.1", "DNS:localhost"]."""
    crt, key, csr = (os.path.join(dir_, f"{name}.{ext}") for ext in ("crt", "key", "csr"))
    subj = "".join(f"/O={o}" for o in orgs) + f"/CN={cn}"
    _Run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
          "-keyout", key, "-out", csr, "-subj", subj])
    with tempfile.NamedTemporaryFile("w", suffix=".ext", delete=False) as ext:
        ext.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n")
        ext.write(f"extendedKeyUsage={'clientAuth' if client else 'serverAuth'}\n")
        if sans:
            ext.write("subjectAltName=" + ",".join(sans) + "\n")
    try:
        _Run(["x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
              "-out", crt, "-days", "2", "-extfile", ext.name])
    finally:
        os.unlink(ext.name)
        os.unlink(csr)
    return crt, key


def MakePki(dir_):
    """Create dir_/pki with ca, server, admin and webhook-client pairs; returns paths."""
    pki = os.path.join(dir_, "pki")
    os.makedirs(pki, exist_ok=True)
    ca_crt, ca_key = MakeCa(pki)
    out = {"ca": ca_crt, "ca_key": ca_key}
    out["server"] = MakeCert(pki, "server", ca_crt, ca_key, "wasd-test-apiserver",
                             sans=["IP:127.0.0.1", "DNS:localhost"])
    out["admin"] = MakeCert(pki, "admin", ca_crt, ca_key, "admin", orgs=["system:masters"], client=True)
    out["webhook_client"] = MakeCert(pki, "webhook-client", ca_crt, ca_key,
                                     "kube-apiserver-webhook-client", client=True)
    return out


def MakeServing(dir_, name, dns_names, ips=("127.0.0.1",)):
    """A fresh CA plus a serving certificate for a webhook; returns (ca_crt, crt, key)."""
    ca_crt, ca_key = MakeCa(dir_, f"{name}-ca", cn=f"{name}-ca")
    sans = [f"DNS:{d}" for d in dns_names] + [f"IP:{i}" for i in ips]
    crt, key = MakeCert(dir_, name, ca_crt, ca_key, dns_names[0] if dns_names else name, sans=sans)
    return ca_crt, crt, key
