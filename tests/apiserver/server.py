"""HTTPS front end of the test API server: authentication, routing, discovery, watch,
tables, audit, fault injection and the /debug endpoints; plus the command line.

One thread per connection (ThreadingHTTPServer); all shared state lives in Api (its
own locking), Audit and Faults (each with a lock). Loopback only.
"""
import argparse
import base64
import json
import os
import random
import re
import signal
import socket
import ssl
import sys
import threading
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import certs
from . import controllers
from . import registry
from . import tables
from .api import Api, Context
from .store import ApiError, Expired

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-wasd-test", "gitCommit": "0" * 40,
           "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.23",
           "compiler": "gc", "platform": "linux/amd64"}
# Audit records kept in memory for /debug/requests (the file keeps everything).
MAX_AUDIT_IN_MEMORY = 200000
# Bodies recorded in the audit are cut here (a Deployment is ~2 KiB).
MAX_AUDIT_BODY = 64 * 1024


class Audit:
    """JSON-lines audit file plus an in-memory copy. Thread-safe."""

    def __init__(self, path):
        self.lock = threading.Lock()
        self.items = []
        self.seq = 0
        self.file = open(path, "a", buffering=1)

    def Record(self, entry):
        with self.lock:
            self.seq += 1
            entry = dict(entry, seq=self.seq, time=time.time())
            line = json.dumps(entry, default=str)
            if len(line) > MAX_AUDIT_BODY * 2:
                entry["body"] = "<truncated>"
                line = json.dumps(entry, default=str)
            self.file.write(line + "\n")
            self.items.append(entry)
            if len(self.items) > MAX_AUDIT_IN_MEMORY:
                del self.items[: len(self.items) // 2]

    def Since(self, seq):
        with self.lock:
            return [e for e in self.items if e["seq"] > seq]

    def Clear(self):
        with self.lock:
            self.items = []


class Faults:
    """Fault rules; each matching request consumes one count. Thread-safe.

    A rule: {"code": 500|429|409|410|"drop"|"end"|"delay"|any HTTP code, "methods": [...],
    "path": regex, "user": name, "watch": true|false, "count": n (-1 = forever), "rate": 0..1,
    "retryAfter": s (a Retry-After header; 429 has 1 by default), "afterEvents": n (drop/410/end
    on a watch after n events), "delay": s (wait this long before answering; with "code": "delay"
    the request is then served normally), "reason" and "message" (of any other code's Status,
    e.g. 403 Forbidden or 503 ServiceUnavailable)}.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []

    def Set(self, rules, append=False):
        with self.lock:
            rules = [dict({"count": -1, "rate": 1.0, "hits": 0}, **r) for r in rules]
            self.rules = (self.rules + rules) if append else rules

    def List(self):
        with self.lock:
            return [dict(r) for r in self.rules]

    def Match(self, method, path, user, watch):
        with self.lock:
            for r in self.rules:
                if r["count"] == 0:
                    continue
                if r.get("methods") and method not in r["methods"]:
                    continue
                if r.get("path") and not re.search(r["path"], path):
                    continue
                if r.get("user") and r["user"] != user:
                    continue
                if r.get("watch") is not None and bool(r["watch"]) != watch:
                    continue
                if random.random() >= r["rate"]:
                    continue
                if r["count"] > 0:
                    r["count"] -= 1
                r["hits"] += 1
                return dict(r)
        return None


class WatchControl:
    """Knobs over the watches being served: cut them all, send each one BOOKMARK now,
    hold new ones. Uses the store's condition, so a watch waiting for events wakes at
    once. Thread-safe."""

    HOLD_LIMIT = 30.0  # seconds a held watch waits at most

    def __init__(self, cond):
        self.cond = cond
        self.drops = 0      # bumped by Drop(): watches started before end abruptly
        self.bookmarks = 0  # bumped by Bookmark(): every open watch sends one BOOKMARK
        self.hold = False

    def Drop(self):
        with self.cond:
            self.drops += 1
            self.cond.notify_all()

    def Bookmark(self):
        with self.cond:
            self.bookmarks += 1
            self.cond.notify_all()

    def Hold(self, on):
        with self.cond:
            self.hold = bool(on)
            self.cond.notify_all()

    def WaitWhileHeld(self, stopping):
        with self.cond:
            self.cond.wait_for(lambda: not self.hold or stopping.is_set(), self.HOLD_LIMIT)
            return self.drops, self.bookmarks


class InFlight:
    """The requests being served right now (GET /debug/inflight). Thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = {}

    def Add(self, key, entry):
        with self.lock:
            self.items[key] = entry

    def Remove(self, key):
        with self.lock:
            self.items.pop(key, None)

    def List(self):
        with self.lock:
            return sorted((dict(e) for e in self.items.values()), key=lambda e: e["since"])


class DropConnection(Exception):
    pass


def _Status(code, reason, message):
    return ApiError(code, reason, message).Status()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # idle keep-alive, longer than client-go's 90 s idle timeout
    server_version = "wasd-test-apiserver"

    def setup(self):
        try:
            self.request.settimeout(10)
            if isinstance(self.request, ssl.SSLSocket):
                self.request.do_handshake()
        except (OSError, ssl.SSLError):
            self.request = None
            raise DropConnection()
        super().setup()

    def _ClientCert(self):
        """The verified client certificate (a dict), or None."""
        if not isinstance(self.request, ssl.SSLSocket):
            return None
        return self.request.getpeercert() or None

    def log_message(self, fmt, *args):
        self.server.app.Log("http: " + (fmt % args))

    # ----------------------------------------------------------------- plumbing

    def _Body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            return data
        return self.rfile.read(n) if n else b""

    def _Send(self, code, obj, warnings=(), headers=None, ctype="application/json"):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        # The audit's status is the answer the server gave, as kube-apiserver's audit records
        # it, even when the client is gone before it reads it (a SIGKILLed reconciler whose
        # create was committed: the object exists, and the audit must say it was created).
        self.status_sent = code
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        for w in warnings:
            self.send_header("Warning", '299 - "' + w.replace('"', '\\"') + '"')
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _User(self):
        cert = self._ClientCert()
        if cert:
            subject = dict(x[0] for x in cert.get("subject", ()))
            groups = [v for rdn in cert.get("subject", ()) for k, v in rdn if k == "organizationName"]
            return {"username": subject.get("commonName", ""), "groups": groups + ["system:authenticated"]}
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            return self.server.app.TokenUser(auth[7:].strip())
        return None

    # ----------------------------------------------------------------- entry points

    def do_GET(self):
        self._Handle()

    def do_POST(self):
        self._Handle()

    def do_PUT(self):
        self._Handle()

    def do_PATCH(self):
        self._Handle()

    def do_DELETE(self):
        self._Handle()

    def _Handle(self):
        app = self.server.app
        url = urllib.parse.urlsplit(self.path)
        self.q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        self.url_path = url.path.rstrip("/") or "/"
        self.status_sent = None
        self.ctx = None
        self.audit_extra = {}
        self.decoded_body = None
        body = b""
        if self.command in ("POST", "PUT", "PATCH", "DELETE"):
            body = self._Body()
        user = self._User()
        public = self.url_path in ("/healthz", "/readyz", "/livez", "/version")
        is_debug = self.url_path.startswith("/debug/")
        watch = self.q.get("watch") in ("1", "true")
        cert = self._ClientCert()
        self.client_cn = dict(x[0] for x in cert.get("subject", ())).get("commonName", "") if cert else ""
        self.audit_args = None if is_debug else (user, watch, body)
        flight_key = object()
        if not is_debug:
            app.inflight.Add(flight_key, {"method": self.command, "path": self.url_path, "query": self.q,
                                          "user": (user or {}).get("username", "system:anonymous"),
                                          "watch": watch, "since": time.time()})
        try:
            if user is None and not public:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            if not is_debug and not public:
                fault = app.faults.Match(self.command, self.url_path, (user or {}).get("username"), watch)
                if fault:
                    self.audit_extra["fault"] = fault.get("code")
                    self._Fault(fault, watch)
            self.user = user or {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
            self._Route(body)
        except ApiError as e:
            self._Send(e.code, e.Status(), warnings=self.ctx.warnings if self.ctx else (), headers=e.headers)
        except DropConnection:
            self.close_connection = True
            self.status_sent = 0
            try:
                self.request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
            self.audit_extra["answerLost"] = True  # the client went away before the answer
        except Exception:
            app.Log("handler error: " + traceback.format_exc())
            try:
                self._Send(500, _Status(500, "InternalError", "Internal error occurred: test server bug"))
            except OSError:
                pass
        finally:
            # Audited before it leaves the in-flight list, so a client that
            # waits for the list (harness LastSeq) finds its record.
            self._RecordAudit()
            if not is_debug:
                app.inflight.Remove(flight_key)

    def _RecordAudit(self):
        """Writes this request's audit record, once: when the answer is sent, or for a
        watch when its response starts (so an open watch is in the audit)."""
        if self.audit_args is None:
            return
        user, watch, body = self.audit_args
        self.audit_args = None
        entry = {"method": self.command, "path": self.url_path, "query": self.q,
                 "user": (user or {}).get("username", "system:anonymous"),
                 "userAgent": self.headers.get("User-Agent", ""), "status": self.status_sent,
                 "source": "http", "watch": watch,
                 "contentType": self.headers.get("Content-Type", ""),
                 "authorization": self.headers.get("Authorization", ""),
                 "clientCert": self.client_cn,
                 "peerPort": self.client_address[1]}
        if getattr(self, "decoded_body", None) is not None:
            entry["body"] = self.decoded_body
        elif body:
            try:
                entry["body"] = json.loads(body)
            except ValueError:
                entry["body"] = body[:MAX_AUDIT_BODY].decode(errors="replace")
        if self.ctx is not None:
            entry["warnings"] = self.ctx.warnings
            entry["webhooks"] = self.ctx.webhooks_called
            if self.ctx.audit_annotations:
                entry["annotations"] = self.ctx.audit_annotations
        entry.update(self.audit_extra)
        self.server.app.audit.Record(entry)

    def _Fault(self, fault, watch):
        code = fault.get("code")
        if fault.get("delay"):
            time.sleep(min(float(fault["delay"]), 30.0))  # bounded: a test knob, not a hang
        if code == "delay":
            return
        if code == "drop" and not watch:
            raise DropConnection()
        if watch and code in ("drop", 410, "end"):
            self.watch_fault = fault
            return
        if code == "end":
            return  # ends watches only; anything else is served normally
        if code == 429:
            raise ApiError(429, "TooManyRequests", "Too many requests, please try again later.",
                           {"retryAfterSeconds": int(fault.get("retryAfter", 1))},
                           headers={"Retry-After": int(fault.get("retryAfter", 1))})
        if code == 409:
            raise ApiError(409, "Conflict", "Operation cannot be fulfilled: the object has been modified; "
                           "please apply your changes to the latest version and try again (injected)")
        if code == 410:
            raise Expired("too old resource version (injected)")
        headers = {"Retry-After": int(fault["retryAfter"])} if fault.get("retryAfter") is not None else None
        raise ApiError(int(code or 500), fault.get("reason", "InternalError"),
                       fault.get("message", "Internal error occurred: injected fault"), headers=headers)

    # ----------------------------------------------------------------- routing

    def _Route(self, body):
        p = self.url_path
        app = self.server.app
        if p in ("/healthz", "/readyz", "/livez"):
            return self._Send(200, b"ok", ctype="text/plain")
        if p == "/version":
            return self._Send(200, VERSION)
        if p.startswith("/debug/"):
            return self._Debug(p, body)
        if p == "/api":
            return self._Send(200, registry.ApiVersions())
        if p == "/apis":
            return self._Send(200, registry.ApiGroupList())
        if p == "/openapi/v3":
            return self._Send(200, registry.OpenApiV3Root())
        if p.startswith("/openapi/v3/"):
            parts = p[len("/openapi/v3/"):].split("/")
            doc = None
            if parts[0] == "api" and len(parts) == 2:
                doc = registry.OpenApiV3Doc("", parts[1])
            elif parts[0] == "apis" and len(parts) == 3:
                doc = registry.OpenApiV3Doc(parts[1], parts[2])
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return self._Send(200, doc)
        parts = p.strip("/").split("/")
        if parts[0] == "api" and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 2:
            if len(parts) == 2:
                g = registry.ApiGroup(parts[1])
                if g is None:
                    raise ApiError(404, "NotFound", "the server could not find the requested resource")
                return self._Send(200, g)
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            doc = registry.ApiResourceList(group, version)
            if doc is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return self._Send(200, doc)
        ns = None
        if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
            ns, rest = rest[1], rest[2:]
        res = registry.Find(group, version, rest[0])
        if res is None or len(rest) > 3:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else ""
        if sub and not ((sub == "status" and res.status) or (sub == "scale" and res.scale)
                        or (sub == "finalize" and res.key == "/namespaces")):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if res.namespaced and ns is None and name is not None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        self._Resource(res, ns, name, sub, body)

    def _Ctx(self):
        fv = self.q.get("fieldValidation") or "Warn"
        if fv not in ("Strict", "Warn", "Ignore"):
            raise ApiError(400, "BadRequest", f"fieldValidation parameter unsupported: {fv}")
        self.ctx = Context(self.user, dry_run=self.q.get("dryRun") == "All", field_validation=fv)
        return self.ctx

    def _Json(self, body):
        ctype = (self.headers.get("Content-Type") or "application/json").split(";")[0]
        if ctype == "application/vnd.kubernetes.protobuf":
            from . import protobuf
            try:
                self.decoded_body = protobuf.DecodeObject(body)
                return self.decoded_body
            except (protobuf.ProtoError, ValueError, KeyError, IndexError) as e:
                raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown "
                               f"format - accepted media types include: application/json, "
                               f"application/yaml ({e})")
        if ctype not in ("application/json", "application/yaml", "application/apply-patch+yaml", "*/*"):
            # kube serves protobuf and CBOR too; this server answers 415 like a server
            # without them, and client-go retries the request in JSON.
            raise ApiError(415, "UnsupportedMediaType",
                           f'the body of the request was in an unknown format - accepted media types '
                           f'include: application/json, application/yaml')
        try:
            if ctype in ("application/yaml", "application/apply-patch+yaml"):
                from . import yamlutil
                return yamlutil.Load(body.decode())
            return json.loads(body or b"null")
        except Exception as e:
            raise ApiError(400, "BadRequest", f"couldn't get version/kind; json parse error: {e}")

    def _Resource(self, res, ns, name, sub, body):
        app = self.server.app
        api = app.api
        m = self.command
        if m == "GET":
            if name is None:
                if self.q.get("watch") in ("1", "true"):
                    return self._Watch(res, ns)
                lst = api.List(res, ns, self.q.get("labelSelector", ""), self.q.get("fieldSelector", ""),
                               int(self.q.get("limit") or 0), self.q.get("continue", ""))
                if "as=Table" in self.headers.get("Accept", ""):
                    return self._Send(200, tables.ToTable(res, lst["items"], lst["metadata"],
                                                          self.q.get("includeObject", "Metadata")))
                return self._Send(200, lst)
            if sub == "scale":
                return self._Send(200, api.GetScale(res, ns, name))
            obj = api.Get(res, ns, name)
            if "as=Table" in self.headers.get("Accept", ""):
                return self._Send(200, tables.ToTable(res, [obj], {"resourceVersion": obj["metadata"]["resourceVersion"]},
                                                      self.q.get("includeObject", "Metadata")))
            return self._Send(200, obj)
        ctx = self._Ctx()
        if m == "POST" and name is None:
            out = api.Create(res, ns, self._Json(body), ctx)
            return self._Send(201, out, ctx.warnings)
        if m == "PUT" and name is not None:
            if sub == "scale":
                return self._Send(200, api.UpdateScale(res, ns, name, self._Json(body), ctx), ctx.warnings)
            out = api.Update(res, ns, name, self._Json(body), ctx, "status" if sub == "status" else "")
            return self._Send(200, out, ctx.warnings)
        if m == "PATCH" and name is not None:
            out, created = api.Patch(res, ns, name, self.headers.get("Content-Type"), body, ctx,
                                     sub if sub in ("status", "scale") else "",
                                     force=self.q.get("force") == "true")
            return self._Send(201 if created else 200, out, ctx.warnings)
        if m == "DELETE" and name is not None:
            opts = self._Json(body) if body else {}
            if self.q.get("propagationPolicy"):
                opts["propagationPolicy"] = self.q["propagationPolicy"]
            out, deleted = api.Delete(res, ns, name, opts, ctx)
            if deleted and res.key != "/pods":
                out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                       "details": {"name": name, "group": res.group, "kind": res.plural,
                                   "uid": out["metadata"]["uid"]}}
            return self._Send(200, out, ctx.warnings)
        if m == "DELETE" and name is None:
            opts = self._Json(body) if body else {}
            lst = api.List(res, ns, self.q.get("labelSelector", ""), self.q.get("fieldSelector", ""))
            for o in lst["items"]:
                try:
                    api.Delete(res, ns, o["metadata"]["name"], opts, ctx)
                except ApiError as e:
                    if e.code != 404:
                        raise
            return self._Send(200, {"kind": res.kind + "List", "apiVersion": res.api_version,
                                    "metadata": lst["metadata"], "items": lst["items"]})
        raise ApiError(405, "MethodNotAllowed", f"the server does not allow this method on the requested resource")

    # ----------------------------------------------------------------- watch

    def _Watch(self, res, ns):
        app = self.server.app
        store = app.api.store
        from . import labelsel as selectors
        try:
            lreq = selectors.ParseLabelSelector(self.q.get("labelSelector", ""))
            freq = selectors.ParseFieldSelector(self.q.get("fieldSelector", ""))
        except selectors.SelectorError as e:
            raise ApiError(400, "BadRequest", str(e))
        rv = self.q.get("resourceVersion", "")
        if rv and not rv.isdigit():
            raise ApiError(400, "BadRequest", f"invalid resource version: {rv}")
        bookmarks = self.q.get("allowWatchBookmarks") in ("1", "true")
        initial = self.q.get("sendInitialEvents") in ("1", "true")
        timeout = float(self.q.get("timeoutSeconds") or 1800)
        deadline = time.time() + timeout
        fault = getattr(self, "watch_fault", None)
        sent = 0

        def Matches(obj):
            if obj is None:
                return False
            if res.namespaced and ns and obj["metadata"].get("namespace") != ns:
                return False
            return selectors.MatchLabelRequirements(lreq, obj["metadata"].get("labels")) and \
                selectors.MatchFields(freq, obj)

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self.status_sent = 200
        self.close_connection = True
        self._RecordAudit()  # the watch is open: visible in the audit from now on
        # /debug/hold-watches: the response has started, its events wait.
        drops, bookmark_requests = app.watches.WaitWhileHeld(app.stopping)
        periodic = bookmarks and app.bookmark_interval > 0
        # A change of the served scheduling.k8s.io versions cuts this watch (as the restart
        # of kube-apiserver in an upgrade would) when it is on that group.
        epoch = registry.SchedulingEpoch()
        on_scheduling = res.group == registry.SCHEDULING_GROUP

        def Recut():
            return on_scheduling and registry.SchedulingEpoch() != epoch

        def Emit(etype, obj):
            if etype not in ("BOOKMARK", "ERROR"):
                obj["apiVersion"] = res.api_version  # one storage, served in several versions
            data = (json.dumps({"type": etype, "object": obj}) + "\n").encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def Gone(from_rv):
            Emit("ERROR", _Status(410, "Expired", f"too old resource version: {from_rv} ({store.compacted})"))

        with store.cond:
            if rv in ("", "0") or initial:
                items, last = store.List(res.key, ns if res.namespaced else None)
                pending = [("ADDED", o) for o in items if Matches(o)]
            else:
                last = int(rv)
                evs = store.EventsSince(last)
                if evs is None:
                    pending = None
                else:
                    pending = []
        try:
            if pending is None:
                Gone(rv)
                return self._EndChunks()
            for etype, obj in pending:
                Emit(etype, obj)
                sent += 1
            if initial and bookmarks:
                Emit("BOOKMARK", {"kind": res.kind, "apiVersion": res.api_version, "metadata": {
                    "resourceVersion": str(last), "annotations": {"k8s.io/initial-events-end": "true"}}})
            last_bookmark = time.time()
            while time.time() < deadline and not app.stopping.is_set():
                if fault and sent >= int(fault.get("afterEvents", 0)):
                    if fault.get("code") == 410:
                        Gone(last)
                        return self._EndChunks()
                    if fault.get("code") == "end":
                        return self._EndChunks()
                    raise DropConnection()
                with store.cond:
                    evs = store.EventsSince(last)
                    if evs is not None and not evs and app.watches.drops == drops and \
                            app.watches.bookmarks == bookmark_requests and not Recut():
                        wait = min(app.bookmark_interval, deadline - time.time()) if periodic else deadline - time.time()
                        store.cond.wait(max(min(wait, 1.0), 0.01))
                        evs = store.EventsSince(last)
                    now_rv = store.rv
                    dropped = app.watches.drops != drops or Recut()
                    bookmark_now = app.watches.bookmarks != bookmark_requests
                    bookmark_requests = app.watches.bookmarks
                if dropped:
                    raise DropConnection()  # /debug/drop-watches: cut, no final chunk
                if evs is None:
                    Gone(last)
                    return self._EndChunks()
                for ev_rv, key, etype, obj, old in evs:
                    last = ev_rv
                    if key != res.key:
                        continue
                    new_m, old_m = Matches(obj) if etype != "DELETED" else False, Matches(old)
                    if etype == "DELETED":
                        if old_m:
                            Emit("DELETED", obj)
                            sent += 1
                    elif new_m and (etype == "ADDED" or old_m):
                        Emit(etype, obj)
                        sent += 1
                    elif new_m:
                        Emit("ADDED", obj)
                        sent += 1
                    elif old_m:
                        Emit("DELETED", obj)
                        sent += 1
                if not evs:
                    last = max(last, now_rv)
                if bookmarks and (bookmark_now or (periodic and time.time() - last_bookmark >= app.bookmark_interval)):
                    Emit("BOOKMARK", {"kind": res.kind, "apiVersion": res.api_version,
                                      "metadata": {"resourceVersion": str(last)}})
                    last_bookmark = time.time()
            self._EndChunks()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError) as e:
            if isinstance(e, DropConnection):
                raise
            self.close_connection = True

    def _EndChunks(self):
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            pass

    # ----------------------------------------------------------------- debug

    def _Debug(self, p, body):
        app = self.server.app
        m = self.command
        data = json.loads(body) if body else None
        if p == "/debug/requests":
            if m == "DELETE":
                app.audit.Clear()
                return self._Send(200, {"cleared": True})
            return self._Send(200, {"items": app.audit.Since(int(self.q.get("since") or 0))})
        if p == "/debug/faults":
            if m in ("PUT", "POST"):
                rules = data if isinstance(data, list) else (data or {}).get("rules", [data])
                app.faults.Set(rules, append=(m == "POST"))
            elif m == "DELETE":
                app.faults.Set([])
            return self._Send(200, {"rules": app.faults.List()})
        if p == "/debug/inflight":
            return self._Send(200, {"items": app.inflight.List()})
        if p == "/debug/drop-watches" and m == "POST":
            app.watches.Drop()
            return self._Send(200, {"dropped": True})
        if p == "/debug/bookmark" and m == "POST":
            app.watches.Bookmark()
            return self._Send(200, {"bookmark": True})
        if p == "/debug/hold-watches":
            if m in ("PUT", "POST"):
                app.watches.Hold((data or {}).get("on"))
            return self._Send(200, {"on": app.watches.hold})
        if p == "/debug/compact" and m == "POST":
            app.api.store.Compact()
            return self._Send(200, {"compactedResourceVersion": str(app.api.store.compacted)})
        if p == "/debug/service-endpoints":
            if m in ("PUT", "POST"):
                for k, v in (data or {}).items():
                    host, port = v.rsplit(":", 1)
                    app.api.service_endpoints[k] = (host, int(port))
            return self._Send(200, {k: f"{h}:{p_}" for k, (h, p_) in app.api.service_endpoints.items()})
        if p == "/debug/groups":
            if m in ("PUT", "POST"):
                registry.SetDisabledGroups((data or {}).get("disabled", []))
            return self._Send(200, {"disabled": registry.DisabledGroups()})
        if p == "/debug/scheduling-versions":
            if m in ("PUT", "POST"):
                try:
                    versions = registry.ParseSchedulingVersions((data or {}).get("versions", []))
                except ValueError as e:
                    raise ApiError(400, "BadRequest", str(e))
                with app.api.store.cond:  # wakes the watches, which then see the new epoch
                    registry.SetSchedulingVersions(versions)
                    app.api.store.cond.notify_all()
                app.Log(f"scheduling.k8s.io Workloads/PodGroups served in: {','.join(versions) or '(none)'}")
            return self._Send(200, {"versions": registry.SchedulingVersions()})
        if p == "/debug/generic-workload":
            if m in ("PUT", "POST"):
                on = bool((data or {}).get("enabled"))
                app.api.generic_workload = on
                if not on:
                    with app.api.store.cond:
                        registry.SetSchedulingVersions([])
                        app.api.store.cond.notify_all()
                app.Log(f"GenericWorkload {'on' if on else 'off'}")
            return self._Send(200, {"enabled": app.api.generic_workload,
                                    "versions": registry.SchedulingVersions()})
        if p == "/debug/controllers":
            if m in ("PUT", "POST"):
                app.controllers.enabled = set((data or {}).get("enabled", []))
                app.controllers.wake.set()
            return self._Send(200, {"enabled": sorted(app.controllers.enabled)})
        raise ApiError(404, "NotFound", "unknown debug endpoint")


class TlsServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def get_request(self):
        sock, addr = self.socket.accept()
        if self.ssl_context is None:  # --plain
            return sock, addr
        return self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if not isinstance(exc, (DropConnection, ConnectionError, ssl.SSLError, socket.timeout, TimeoutError)):
            self.app.Log("connection error: " + traceback.format_exc())

    def shutdown_request(self, request):
        if request is None:
            return
        super().shutdown_request(request)


class App:
    """Everything one server process holds."""

    def __init__(self, args):
        self.dir = os.path.abspath(args.dir)
        os.makedirs(self.dir, exist_ok=True)
        self.log_file = open(os.path.join(self.dir, "apiserver.log"), "a", buffering=1)
        self.log_lock = threading.Lock()
        self.stopping = threading.Event()
        self.bookmark_interval = args.bookmark_interval
        self.audit = Audit(os.path.join(self.dir, "audit.jsonl"))
        self.faults = Faults()
        for f in args.fault or []:
            self.faults.Set([json.loads(f)], append=True)
        self.api = Api(log=self.Log, history=args.history)
        self.api.pod_grace_max = args.pod_grace_period
        self.api.namespace_auto_provision = args.namespace_auto_provision
        self.api.in_tree_deployment = args.in_tree_deployment
        self.watches = WatchControl(self.api.store.cond)
        self.inflight = InFlight()
        for ep in args.service_endpoint or []:
            key, addr = ep.split("=", 1)
            host, port = addr.rsplit(":", 1)
            self.api.service_endpoints[key] = (host, int(port))
        self.pki = certs.MakePki(self.dir)
        if args.webhook_client_cert:
            self.api.webhook_client_cert = (self.pki["webhook_client"][0], self.pki["webhook_client"][1])
        self.tokens_path = os.path.join(self.dir, "tokens.csv")
        self.token = args.token or base64.b32encode(os.urandom(20)).decode().lower()
        if not os.path.exists(self.tokens_path):
            with open(self.tokens_path, "w") as f:
                f.write(f"{self.token},admin,admin-uid,system:masters\n")
        self.controllers = controllers.Controllers(
            self.api, self.audit.Record,
            enabled=[c for c in args.controllers.split(",") if c] if args.controllers is not None else controllers.ALL,
            gang_scheduler=args.gang_enabled, gang_rules=args.gang_rules,
            kai_staleness_grace=args.kai_staleness_grace, kai_version=args.kai_version_tuple,
            ignores_groups=args.scheduler_ignores_groups)
        for pair in args.scheduler_name:
            name, _, backend = pair.partition("=")
            self.controllers.extra_schedulers[name] = backend
        self.api.generic_workload = args.generic_workload == "on"
        # The PodGroupProtection admission plugin goes with its controller.
        self.api.podgroup_protection = lambda: "podgroup" in self.controllers.enabled

    def Log(self, msg):
        with self.log_lock:
            self.log_file.write(time.strftime("%H:%M:%S ") + msg + "\n")

    def TokenUser(self, token):
        try:
            with open(self.tokens_path) as f:
                for line in f:
                    parts = line.strip().split(",", 3)
                    if len(parts) >= 2 and parts[0] == token:
                        groups = [g for g in (parts[3].strip('"').split(",") if len(parts) > 3 else []) if g]
                        return {"username": parts[1], "uid": parts[2] if len(parts) > 2 else "",
                                "groups": groups + ["system:authenticated"]}
        except OSError:
            pass
        return None


def WriteKubeconfigs(app, url):
    ca = base64.b64encode(open(app.pki["ca"], "rb").read()).decode()
    def Doc(user):
        return {"apiVersion": "v1", "kind": "Config", "current-context": "wasd-test",
                "clusters": [{"name": "wasd-test", "cluster": {"server": url, "certificate-authority-data": ca}}],
                "contexts": [{"name": "wasd-test", "context": {"cluster": "wasd-test", "user": "admin",
                                                               "namespace": "default"}}],
                "users": [{"name": "admin", "user": user}]}
    token_cfg = os.path.join(app.dir, "kubeconfig")
    cert_cfg = os.path.join(app.dir, "kubeconfig-cert")
    with open(token_cfg, "w") as f:
        json.dump(Doc({"token": app.token}), f, indent=1)
    crt, key = app.pki["admin"]
    with open(cert_cfg, "w") as f:
        json.dump(Doc({"client-certificate-data": base64.b64encode(open(crt, "rb").read()).decode(),
                       "client-key-data": base64.b64encode(open(key, "rb").read()).decode()}), f, indent=1)
    return token_cfg, cert_cfg


def ParseArgs(argv):
    ap = argparse.ArgumentParser(prog="python3 -m apiserver", description=__doc__)
    ap.add_argument("--dir", required=True, help="state dir: certs, kubeconfig, ready, logs, audit")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: pick a free one)")
    ap.add_argument("--token", default="", help="bearer token of user admin (default: random)")
    ap.add_argument("--bookmark-interval", type=float, default=1.0, help="seconds between BOOKMARKs")
    ap.add_argument("--history", type=int, default=2000, help="watch events kept (older rv → 410)")
    ap.add_argument("--controllers", default=None,
                    help="comma list of " + ",".join(controllers.ALL) + " (default all; '' none)")
    ap.add_argument("--gang-scheduler", nargs="?", const="", default=None, metavar="rules|BACKENDS",
                    help="the scheduler controller places pods on the Node objects, gangs only when "
                         "their quorum fits (scheduler.py); =rules, or a comma list of native,volcano,"
                         "kai,coscheduling, also plays those backends' own rules (gangrules.py)")
    ap.add_argument("--kai-staleness-grace", type=float, default=60.0, metavar="SECONDS",
                    help="KAI's default staleness grace period: a gang below minMember for longer "
                         "has its active pods evicted (negative: never; default 60)")
    ap.add_argument("--kai-version", default="0.15.0", metavar="X.Y.Z",
                    help="KAI version played: below 0.15.0 the podgrouper ignores "
                         "kai.scheduler/skip-podgrouper (default 0.15.0)")
    ap.add_argument("--scheduler-ignores-groups", action="store_true",
                    help="play a scheduler that does not hold: a native, volcano or kai pod whose "
                         "group object does not exist is bound anyway (coscheduling still rejects "
                         "it); default: held until the group exists, as the real schedulers do")
    ap.add_argument("--fault", action="append", help="a fault rule as JSON (repeatable)")
    ap.add_argument("--pod-grace-period", type=float, default=0.0,
                    help="longest termination grace of a bound pod, seconds (0: pods go at once)")
    ap.add_argument("--service-endpoint", action="append",
                    help="NS/NAME=HOST:PORT where webhook Service NS/NAME is reached")
    ap.add_argument("--webhook-client-cert", action="store_true",
                    help="present a client certificate (signed by the server CA) to webhooks")
    ap.add_argument("--plain", action="store_true",
                    help="serve plain HTTP instead of HTTPS (as behind `kubectl proxy`); tokens still count")
    ap.add_argument("--namespace-auto-provision", action="store_true",
                    help="create a missing namespace on the first create in it (kube's NamespaceAutoProvision)")
    ap.add_argument("--disable-group", action="append", default=[],
                    help="an API group not to serve, as a CRD that is not installed (repeatable)")
    ap.add_argument("--scheduling-versions", default="v1beta1",
                    help="comma list of the versions (v1, v1beta1) in which scheduling.k8s.io "
                         "Workloads and PodGroups are served; one storage, v1 preferred "
                         "(default v1beta1, a 1.37 cluster; '' serves neither)")
    ap.add_argument("--generic-workload", choices=("on", "off"), default="on",
                    help="kube-apiserver's feature gate GenericWorkload: off drops "
                         "spec.schedulingGroup from pods after mutating admission and serves no "
                         "scheduling.k8s.io Workloads or PodGroups (Kubernetes 1.37 as installed); "
                         "default on")
    ap.add_argument("--scheduler-name", action="append", default=[], metavar="NAME=BACKEND",
                    help="a further schedulerName the stand-in schedulers answer to, and the "
                         "backend whose rules it plays (repeatable); built in: default-scheduler="
                         "native, volcano=volcano, kai-scheduler=kai, scheduler-plugins-scheduler="
                         "coscheduling. A pod addressed to any other name stays Pending")
    ap.add_argument("--in-tree-deployment", action="store_true",
                    help="play KEP-6276 with the WorkloadWithDeployment gate on: Deployment "
                         "spec.scheduling kept (immutable), a Workload per Deployment, a PodGroup "
                         "per ReplicaSet, pods linked at creation (intree.py); without it the "
                         "field is dropped by the Deployment strategy after mutating admission")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="stop by itself after this many seconds (0: never)")
    ap.add_argument("--exit-with-parent", action="store_true",
                    help="stop by itself when the process that started it is gone")
    args = ap.parse_args(argv)
    from . import gangrules
    try:
        args.gang_enabled, args.gang_rules = gangrules.ParseBackends(args.gang_scheduler)
    except ValueError as e:
        ap.error(f"--gang-scheduler: {e}")
    try:
        args.kai_version_tuple = gangrules.ParseVersion(args.kai_version)
    except ValueError as e:
        ap.error(f"--kai-version: {e}")
    return args


def Main(argv):
    args = ParseArgs(argv)
    app = App(args)
    registry.SetDisabledGroups(args.disable_group)
    try:
        registry.SetSchedulingVersions(args.scheduling_versions if args.generic_workload == "on" else "")
    except ValueError as e:
        print(f"--scheduling-versions: {e}", file=sys.stderr)
        return 2
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*app.pki["server"])
    ctx.load_verify_locations(app.pki["ca"])
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    httpd = TlsServer(("127.0.0.1", args.port), Handler)
    httpd.ssl_context = None if args.plain else ctx
    httpd.app = app
    port = httpd.server_address[1]
    url = f"{'http' if args.plain else 'https'}://127.0.0.1:{port}"
    token_cfg, cert_cfg = WriteKubeconfigs(app, url)
    app.controllers.Start()

    def Stop(signum, frame):
        app.stopping.set()
        threading.Thread(target=httpd.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, Stop)
    signal.signal(signal.SIGINT, Stop)

    def Watchdog():
        """--max-seconds / --exit-with-parent: a test server never outlives its test."""
        parent, started = os.getppid(), time.monotonic()
        while not app.stopping.is_set():
            if args.exit_with_parent and os.getppid() != parent:
                break
            if args.max_seconds and time.monotonic() - started > args.max_seconds:
                break
            time.sleep(0.5)
        if app.stopping.is_set():
            return  # stopped by a signal meanwhile
        app.Log("watchdog: stopping")
        Stop(None, None)
        time.sleep(10)
        os._exit(1)  # still here after the bound: stuck

    if args.max_seconds or args.exit_with_parent:
        threading.Thread(target=Watchdog, name="watchdog", daemon=True).start()
    ready = {"pid": os.getpid(), "port": port, "url": url, "kubeconfig": token_cfg,
             "kubeconfig_cert": cert_cfg, "ca": app.pki["ca"], "token": app.token,
             "audit": os.path.join(app.dir, "audit.jsonl"), "log": os.path.join(app.dir, "apiserver.log"),
             "webhook_client_cert": list(app.pki["webhook_client"])}
    tmp = os.path.join(app.dir, "ready.tmp")
    with open(tmp, "w") as f:
        json.dump(ready, f)
    os.replace(tmp, os.path.join(app.dir, "ready"))
    print(f"READY {url} {token_cfg}", flush=True)
    app.Log(f"serving on {url}; scheduling.k8s.io Workloads/PodGroups in "
            f"{','.join(registry.SchedulingVersions()) or '(none)'}; gang scheduler "
            f"{'off' if not args.gang_enabled else 'rules of ' + (','.join(sorted(args.gang_rules)) or 'none (fit only)')}"
            f"{'; kai ' + args.kai_version + ', staleness grace ' + str(args.kai_staleness_grace) + 's' if 'kai' in args.gang_rules else ''}")
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        app.stopping.set()
        app.controllers.Stop()
        app.api.store.Close()
        try:
            os.unlink(os.path.join(app.dir, "ready"))
        except OSError:
            pass
        app.Log("stopped")
    return 0
