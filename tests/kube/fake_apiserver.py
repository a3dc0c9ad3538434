#!/usr/bin/env python3
"""A small fake Kubernetes API server for wasd's kube client tests.

Loopback only (127.0.0.1, ephemeral port), HTTPS with a throw-away CA made by
the openssl CLI in --dir (or plain HTTP with --plain, like `kubectl proxy`). Started by tests/kube/client_loopback_test.cc, which
stops it by PID; it also exits by itself when its parent goes away or after
--max-seconds, so it can never linger.

Files written to --dir: ca.crt/ca.key (the CA), server.crt/key (SAN
IP:127.0.0.1, DNS:localhost), client.crt/key (signed by the CA), other-ca.crt
(an unrelated CA), and last `port` (the listening port: its presence means
ready).

Serves one resource, core/v1 configmaps (GET, LIST with limit/continue,
WATCH with bookmarks and 410 after compaction, POST, PUT with resourceVersion
check, PATCH merge/JSON, DELETE with preconditions), authenticating each
request by a bearer token from the accepted set or a client certificate.

Control and inspection (no auth, never failed or logged), via the same
client: POST /apis/debug/v1/commands with {"op": ...}:
  tokens {"tokens": [...]}        set the accepted bearer tokens
  fail {"path", "code", "times", "retry_after"}  fail the next N requests
                                   whose path starts with `path`
  drop-watches                     close open watch connections abruptly
  compact                          forget history: watches from a resourceVersion
                                   older than the current one get 410
  bookmark                         send a BOOKMARK on open watches
  hold-watches {"on": bool}        new watch requests wait (up to 30 s)
                                   until released
GET /apis/debug/v1/requests -> {"items": [request log entries]}.
"""
import argparse
import json
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1 << 20        # request bodies in these tests are tiny
MAX_LOG = 1000            # request log entries kept


def run(*cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_certs(d):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for ca in ("ca", "other-ca"):
        run("openssl", "req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.crt", "-days", "2",
            "-subj", f"/CN=wasd-test-{ca}", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    leaves = {
        "server": "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
        "client": "extendedKeyUsage=clientAuth\n",
    }
    for name, ext in leaves.items():
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write("basicConstraints=CA:FALSE\n" + ext)
        run("openssl", "req", "-new", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr",
            "-subj", f"/CN=wasd-test-{name}", cwd=d)
        run("openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=d)


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def json_patch(doc, ops):
    doc = json.loads(json.dumps(doc))
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent.setdefault(p, {})
        last = parts[-1]
        if op["op"] in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(op["value"])
                else:
                    parent[int(last)] = op["value"]
            else:
                parent[last] = op["value"]
        elif op["op"] == "remove":
            del parent[int(last) if isinstance(parent, list) else last]
        elif op["op"] == "test":
            if (parent[int(last)] if isinstance(parent, list) else parent.get(last)) != op["value"]:
                raise ValueError("test failed")
    return doc


class State:
    def __init__(self):
        self.cond = threading.Condition()
        self.rv = 100
        self.objects = {}          # "ns/name" -> object
        self.events = []           # (rv, type, object)
        self.compacted_rv = 0      # watches from an rv below this get 410
        self.tokens = {"token-a"}
        self.failures = []         # [{"path", "code", "times", "retry_after"}]
        self.log = []
        self.drop_gen = 0
        self.bookmark_gen = 0
        self.hold_watches = False
        self.empty_watches = False  # end every watch at once, with no event (a bad proxy)

    def record(self, typ, obj):
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.events.append((self.rv, typ, json.loads(json.dumps(obj))))
        self.cond.notify_all()


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        self.request.settimeout(30)
        try:
            if isinstance(self.request, ssl.SSLSocket):
                self.request.do_handshake()
        except (ssl.SSLError, OSError):
            self.handshake_failed = True
        else:
            self.handshake_failed = False
        super().setup()

    def handle(self):
        if not self.handshake_failed:
            try:
                super().handle()
            except (ssl.SSLError, OSError):
                pass

    # ---- plumbing

    def send_json(self, code, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise ValueError("body too large")
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def dispatch(self, method):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        body = self.read_body()
        if url.path.startswith("/apis/debug/v1/"):
            return self.debug(method, url.path, body)
        auth = self.headers.get("Authorization", "")
        cert = self.request.getpeercert() if isinstance(self.request, ssl.SSLSocket) else None
        with STATE.cond:
            STATE.log.append({"method": method, "path": url.path, "query": query,
                              "time": time.time(), "authorization": auth,
                              "content_type": self.headers.get("Content-Type", ""),
                              "client_cert": bool(cert), "peer_port": self.client_address[1],
                              "body": body.decode(errors="replace")})
            del STATE.log[:-MAX_LOG]
            token_ok = auth.startswith("Bearer ") and auth[7:] in STATE.tokens
            fail = next((f for f in STATE.failures if url.path.startswith(f["path"]) and f["times"] > 0), None)
            if fail:
                fail["times"] -= 1
        if not token_ok and not cert:
            return self.send_json(401, status(401, "Unauthorized", "Unauthorized"))
        if fail:
            headers = {"Retry-After": str(fail["retry_after"])} if fail.get("retry_after") is not None else {}
            reason = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}.get(fail["code"], "")
            return self.send_json(fail["code"], status(fail["code"], reason, "injected failure"), headers)
        parts = url.path.strip("/").split("/")
        # /api/v1/namespaces/{ns}/configmaps[/{name}]
        if len(parts) < 5 or parts[:3] != ["api", "v1", "namespaces"] or parts[4] != "configmaps":
            return self.send_json(404, status(404, "NotFound", "the server could not find the requested resource"))
        ns = parts[3]
        name = parts[5] if len(parts) > 5 else ""
        try:
            doc = json.loads(body) if body else None
        except ValueError:
            return self.send_json(400, status(400, "BadRequest", "body is not JSON"))
        if method == "GET" and not name:
            if query.get("watch") in ("true", "1"):
                return self.watch(ns, query)
            return self.list(ns, query)
        return self.mutate(method, ns, name, doc)

    # ---- resource handlers

    def list(self, ns, query):
        limit = int(query.get("limit") or 0)
        start = int(query.get("continue") or 0)
        with STATE.cond:
            keys = sorted(k for k in STATE.objects if k.startswith(ns + "/"))
            page = keys[start:start + limit] if limit else keys[start:]
            items = [STATE.objects[k] for k in page]
            meta = {"resourceVersion": str(STATE.rv)}
            if limit and start + limit < len(keys):
                meta["continue"] = str(start + limit)
        self.send_json(200, {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta, "items": items})

    def mutate(self, method, ns, name, doc):
        key = f"{ns}/{name}"
        with STATE.cond:
            cur = STATE.objects.get(key)
            if method == "GET":
                if cur is None:
                    return self.send_json(404, status(404, "NotFound", f'configmaps "{name}" not found'))
                return self.send_json(200, cur)
            if method == "POST":
                name = (doc.get("metadata") or {}).get("name", "")
                key = f"{ns}/{name}"
                if key in STATE.objects:
                    return self.send_json(409, status(409, "AlreadyExists", f'configmaps "{name}" already exists'))
                obj = json.loads(json.dumps(doc))
                obj["metadata"]["namespace"] = ns
                STATE.objects[key] = obj
                STATE.record("ADDED", obj)
                return self.send_json(201, obj)
            if cur is None:
                return self.send_json(404, status(404, "NotFound", f'configmaps "{name}" not found'))
            conflict = status(409, "Conflict", f'Operation cannot be fulfilled on configmaps "{name}": '
                              "the object has been modified; please apply your changes to the latest "
                              "version and try again")
            if method == "PUT":
                if (doc.get("metadata") or {}).get("resourceVersion") != cur["metadata"]["resourceVersion"]:
                    return self.send_json(409, conflict)
                obj = json.loads(json.dumps(doc))
            elif method == "PATCH":
                ctype = self.headers.get("Content-Type", "")
                if ctype == "application/json-patch+json":
                    try:
                        obj = json_patch(cur, doc)
                    except (ValueError, KeyError, IndexError):
                        return self.send_json(422, status(422, "Invalid", "json patch failed"))
                elif ctype in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
                    obj = merge_patch(cur, doc)
                else:
                    return self.send_json(415, status(415, "UnsupportedMediaType", ctype))
            else:  # DELETE
                pre = (doc or {}).get("preconditions") or {}
                if "resourceVersion" in pre and pre["resourceVersion"] != cur["metadata"]["resourceVersion"]:
                    return self.send_json(409, conflict)
                if "uid" in pre and pre["uid"] != cur["metadata"].get("uid"):
                    return self.send_json(409, conflict)
                del STATE.objects[key]
                STATE.record("DELETED", cur)
                return self.send_json(200, cur)
            STATE.objects[key] = obj
            STATE.record("MODIFIED", obj)
            return self.send_json(200, obj)

    def watch(self, ns, query):
        since = int(query.get("resourceVersion") or 0)
        deadline = time.time() + min(int(query.get("timeoutSeconds") or 60), 60)
        bookmarks = query.get("allowWatchBookmarks") == "true"
        with STATE.cond:
            STATE.cond.wait_for(lambda: not STATE.hold_watches, timeout=30)
            empty = STATE.empty_watches
        if empty:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(obj):
            data = (json.dumps(obj) + "\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        with STATE.cond:
            drop_gen, bookmark_gen = STATE.drop_gen, STATE.bookmark_gen
            if since and since < STATE.compacted_rv:
                chunk({"type": "ERROR", "object": status(410, "Expired",
                                                         f"too old resource version: {since} ({STATE.compacted_rv})")})
                self.wfile.write(b"0\r\n\r\n")
                return
        sent = since
        while time.time() < deadline:
            with STATE.cond:
                STATE.cond.wait(0.05)
                if STATE.drop_gen != drop_gen:
                    self.close_connection = True
                    self.request.close()   # abrupt: no terminating chunk
                    return
                pending = [(rv, t, o) for rv, t, o in STATE.events
                           if rv > sent and o["metadata"].get("namespace") == ns]
                send_bookmark = bookmarks and STATE.bookmark_gen != bookmark_gen
                bookmark_gen = STATE.bookmark_gen
                current = STATE.rv
            for rv, typ, obj in pending:
                chunk({"type": typ, "object": obj})
                sent = rv
            if send_bookmark:
                chunk({"type": "BOOKMARK", "object": {"kind": "ConfigMap", "apiVersion": "v1",
                                                      "metadata": {"resourceVersion": str(current)}}})
        self.wfile.write(b"0\r\n\r\n")

    # ---- control

    def debug(self, method, path, body):
        if method == "GET" and path == "/apis/debug/v1/requests":
            with STATE.cond:
                return self.send_json(200, {"items": list(STATE.log)})
        if method != "POST" or path != "/apis/debug/v1/commands":
            return self.send_json(404, status(404, "NotFound", path))
        cmd = json.loads(body)
        with STATE.cond:
            op = cmd.get("op")
            if op == "tokens":
                STATE.tokens = set(cmd["tokens"])
            elif op == "fail":
                STATE.failures.append({"path": cmd["path"], "code": cmd["code"],
                                       "times": cmd.get("times", 1), "retry_after": cmd.get("retry_after")})
            elif op == "drop-watches":
                STATE.drop_gen += 1
            elif op == "compact":
                STATE.compacted_rv = STATE.rv
            elif op == "hold-watches":
                STATE.hold_watches = bool(cmd["on"])
            elif op == "empty-watches":
                STATE.empty_watches = bool(cmd["on"])
            elif op == "bookmark":
                STATE.bookmark_gen += 1
            else:
                return self.send_json(400, status(400, "BadRequest", f"unknown op {op}"))
            STATE.cond.notify_all()
        self.send_json(201, cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--max-seconds", type=float, default=300)
    ap.add_argument("--plain", action="store_true", help="serve plain HTTP (like kubectl proxy)")
    args = ap.parse_args()
    make_certs(args.dir)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(args.dir, "server.crt"), os.path.join(args.dir, "server.key"))
    ctx.load_verify_locations(os.path.join(args.dir, "ca.crt"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if not args.plain:
        server.socket = ctx.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    tmp = os.path.join(args.dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, os.path.join(args.dir, "port"))

    parent = os.getppid()
    started = time.time()

    def watchdog():
        while os.getppid() == parent and time.time() - started < args.max_seconds:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever(poll_interval=0.1)


if __name__ == "__main__":
    sys.exit(main())
