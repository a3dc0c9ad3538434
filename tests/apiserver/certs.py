"""The test API server's PKI, made with the test kit's openssl helpers (lib.certs).

One CA signs: the serving certificate (127.0.0.1 / localhost), an admin client
certificate (CN=admin, O=system:masters) and a client certificate the server may
present to webhooks (CN=kube-apiserver-webhook-client). A second CA, other-ca,
signs nothing: clients' tests use it as a CA that does not verify this server.
Not thread-safe per dir.
"""
import os

from lib.certs import make_ca, make_cert


def MakePki(dir_):
    """Create dir_/pki with ca, server, admin and webhook-client pairs and other-ca;
    returns paths."""
    pki = os.path.join(dir_, "pki")
    os.makedirs(pki, exist_ok=True)
    ca = make_ca(pki, "ca", cn="wasd-test-apiserver-ca")
    out = {"ca": ca[0], "ca_key": ca[1]}
    out["server"] = make_cert(pki, "server", ca, "wasd-test-apiserver", sans=["IP:127.0.0.1", "DNS:localhost"])
    out["admin"] = make_cert(pki, "admin", ca, "admin", orgs=["system:masters"], usage="clientAuth")
    out["webhook_client"] = make_cert(pki, "webhook-client", ca, "kube-apiserver-webhook-client",
                                      usage="clientAuth")
    out["other_ca"] = make_ca(pki, "other-ca", cn="wasd-test-other-ca")[0]
    return out
