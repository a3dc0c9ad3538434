"""ScriptedWebhook: an admission webhook inside the test process, on 127.0.0.1
over TLS, whose answer to each review is what the test's `decide(path, request)`
returns. The test API server calls it as kube-apiserver calls webhooks."""
import base64
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lib.certs import make_serving


class ScriptedWebhook:
    """decide(path, request) -> the AdmissionReview response (uid is filled in).
    The serving certificate is for hook.hooks.svc, localhost and 127.0.0.1; register
    it with `ca_bundle`. Thread-safe; stop() ends it."""

    def __init__(self, directory, decide):
        self.ca, crt, key = make_serving(directory, "hook", ["hook.hooks.svc", "localhost"])
        self.decide = decide
        self.reviews = []  # (path, request, raw path with query)
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                path = self.path.split("?")[0]
                req = body["request"]
                with outer.lock:
                    outer.reviews.append((path, req, self.path))
                resp = outer.decide(path, req)
                resp["uid"] = req["uid"]
                data = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                   "response": resp}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)

    @property
    def ca_bundle(self):
        with open(self.ca, "rb") as f:
            return base64.b64encode(f.read()).decode()

    def calls(self, path):
        """The review requests received on `path`, in order."""
        with self.lock:
            return [r for p, r, _ in self.reviews if p == path]
