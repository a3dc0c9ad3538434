"""Dynamic admission: calls the registered mutating then validating webhooks.

Follows k8s.io/apiserver pkg/admission/plugin/webhook: rules (operations, groups,
versions, resources with subresources, scope), namespaceSelector, objectSelector
(matches when either the old or the new object matches), matchConditions (CEL
subset, see cel.py), failurePolicy, timeoutSeconds, sideEffects with dryRun,
reinvocationPolicy (IfNeeded: called once more when a later webhook changed the object).
Mutating webhooks run one after the other in configuration-name order; then validating
ones, also sequentially.
Thread-safe: each call builds its own TLS context and connection.
"""
import base64
import copy
import http.client
import json
import socket
import ssl
import urllib.parse
import uuid

from . import cel
from . import defaults
from . import patch as patchlib
from .store import ApiError

MUTATING = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING = "admissionregistration.k8s.io/validatingwebhookconfigurations"
# Bodies above this are refused by kube's webhook client as well (3 MiB request limit).
MAX_RESPONSE_BYTES = 3 * 1024 * 1024


class Attributes:
    """What admission sees of one request (kube's admission.Attributes)."""

    def __init__(self, res, operation, namespace, name, obj, old, user, dry_run=False,
                 subresource="", kind=None, options=None):
        self.res = res
        self.operation = operation
        self.namespace = namespace or ""
        self.name = name or ""
        self.obj = obj
        self.old = old
        self.user = user
        self.dry_run = dry_run
        self.subresource = subresource
        self.kind = kind or {"group": res.group, "version": res.version, "kind": res.kind}
        self.options = options


def InternalError(message):
    return ApiError(500, "InternalError", f"Internal error occurred: {message}",
                    {"causes": [{"message": message}]})


def _RuleMatches(rule, a):
    ops = rule.get("operations") or []
    if "*" not in ops and a.operation not in ops:
        return False
    if not any(g in ("*", a.res.group) for g in rule.get("apiGroups") or []):
        return False
    if not any(v in ("*", a.res.version) for v in rule.get("apiVersions") or []):
        return False
    scope = rule.get("scope", "*")
    if scope == "Cluster" and a.res.namespaced:
        return False
    if scope == "Namespaced" and not a.res.namespaced:
        return False
    for r in rule.get("resources") or []:
        main, _, sub = r.partition("/")
        if main not in ("*", a.res.plural):
            continue
        if (sub == "" and not a.subresource) or sub == "*" or (sub and sub == a.subresource):
            return True
    return False


def _Labels(obj):
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


class Dispatcher:
    """Runs admission webhooks for the server `api` (its store, namespaces, endpoints)."""

    def __init__(self, api):
        self.api = api

    def _Configs(self, key):
        items, _ = self.api.store.List(key)
        return sorted(items, key=lambda o: o["metadata"]["name"])

    def _NamespaceMatches(self, wh, a):
        sel = wh.get("namespaceSelector") or {}
        if not sel.get("matchLabels") and not sel.get("matchExpressions"):
            return True
        from . import labelsel as selectors
        if a.res.key == "/namespaces":
            return selectors.MatchLabelSelector(sel, _Labels(a.obj or a.old))
        if not a.res.namespaced:
            return True
        ns = self.api.store.Get("/namespaces", "", a.namespace)
        return selectors.MatchLabelSelector(sel, _Labels(ns))

    def _ObjectMatches(self, wh, a):
        from . import labelsel as selectors
        sel = wh.get("objectSelector") or {}
        if not sel.get("matchLabels") and not sel.get("matchExpressions"):
            return True
        return any(o is not None and selectors.MatchLabelSelector(sel, _Labels(o))
                   for o in (a.obj, a.old))

    def _Request(self, a, obj):
        u = a.user
        user_info = {"username": u["username"], "groups": list(u.get("groups") or [])}
        if u.get("uid"):
            user_info["uid"] = u["uid"]
        if u.get("extra"):
            user_info["extra"] = u["extra"]
        resource = {"group": a.res.group, "version": a.res.version, "resource": a.res.plural}
        opt_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions",
                    "DELETE": "DeleteOptions"}.get(a.operation)
        options = a.options if a.options is not None else (
            {"apiVersion": "meta.k8s.io/v1", "kind": opt_kind} if opt_kind else None)
        return {
            "uid": str(uuid.uuid4()),
            "kind": dict(a.kind), "resource": resource, "subResource": a.subresource,
            "requestKind": dict(a.kind), "requestResource": dict(resource),
            "requestSubResource": a.subresource,
            "name": a.name, "namespace": a.namespace, "operation": a.operation,
            "userInfo": user_info, "object": obj, "oldObject": a.old,
            "dryRun": bool(a.dry_run), "options": options,
        }

    def _ConditionsMatch(self, wh, a, obj, request):
        """True/False, or raises ApiError when an expression fails to evaluate."""
        conds = wh.get("matchConditions") or []
        if not conds:
            return True
        ns = None
        if a.res.namespaced and a.namespace:
            ns = self.api.store.Get("/namespaces", "", a.namespace)
        req = {k: v for k, v in request.items() if k not in ("object", "oldObject")}
        env = {"object": obj, "oldObject": a.old, "request": req, "namespaceObject": ns}
        errors = []
        for c in conds:
            try:
                if not cel.Evaluate(cel.Compile(c.get("expression", "")), env):
                    return False
            except cel.CelError as e:
                errors.append(f"expression '{c.get('name')}' resulted in error: {e}")
        if errors:
            raise InternalError(f'failed calling webhook "{wh.get("name")}": '
                                f'{"; ".join(errors)}')
        return True

    def _Url(self, wh):
        cc = wh.get("clientConfig") or {}
        if cc.get("url"):
            u = urllib.parse.urlsplit(cc["url"])
            host, port = u.hostname, u.port or 443
            return cc["url"], host, port, host, u.path or "/"
        svc = cc.get("service") or {}
        name, ns, port = svc.get("name"), svc.get("namespace"), int(svc.get("port", 443))
        path = svc.get("path") or "/"
        sni = f"{name}.{ns}.svc"
        host, port2 = self.api.ServiceEndpoint(ns, name, port)
        return f"https://{sni}:{port}{path}", host, port2, sni, path

    def _Call(self, wh, review_request):
        """POST the review; returns the decoded response or raises (str) on failure."""
        url, host, port, sni, path = self._Url(wh)
        timeout = int(wh.get("timeoutSeconds") or 10)
        full = f"{url}?timeout={timeout}s"
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        bundle = (wh.get("clientConfig") or {}).get("caBundle")
        try:
            if bundle:
                ctx.load_verify_locations(cadata=base64.b64decode(bundle).decode())
            if self.api.webhook_client_cert:
                ctx.load_cert_chain(*self.api.webhook_client_cert)
        except (ssl.SSLError, ValueError) as e:
            raise RuntimeError(f'failed to call webhook: Post "{full}": bad caBundle: {e}')
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "request": review_request}).encode()
        try:
            raw = socket.create_connection((host, port), timeout=timeout)
            sock = ctx.wrap_socket(raw, server_hostname=sni)
            try:
                sock.sendall((f"POST {path}?timeout={timeout}s HTTP/1.1\r\nHost: {sni}:{port}\r\n"
                              f"Content-Type: application/json\r\nAccept: application/json\r\n"
                              f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body)
                resp = http.client.HTTPResponse(sock)
                resp.begin()
                data = resp.read(MAX_RESPONSE_BYTES + 1)
                status = resp.status
            finally:
                sock.close()
        except (OSError, ssl.SSLError, http.client.HTTPException) as e:
            if isinstance(e, socket.timeout):
                e = "context deadline exceeded"
            raise RuntimeError(f'failed to call webhook: Post "{full}": {e}')
        if status != 200:
            raise RuntimeError(f"received invalid webhook response: the server responded with "
                               f"HTTP {status}: {data[:200].decode(errors='replace')}")
        try:
            review = json.loads(data)
        except ValueError as e:
            raise RuntimeError(f"received invalid webhook response: {e}")
        if review.get("apiVersion") != "admission.k8s.io/v1" or review.get("kind") != "AdmissionReview":
            raise RuntimeError("received invalid webhook response: expected webhook response of "
                               f"admission.k8s.io/v1, Kind=AdmissionReview, got "
                               f"{review.get('apiVersion')}, Kind={review.get('kind')}")
        resp = review.get("response")
        if not isinstance(resp, dict):
            raise RuntimeError("received invalid webhook response: webhook response was absent")
        if resp.get("uid") != review_request["uid"]:
            raise RuntimeError(f'received invalid webhook response: expected response.uid='
                               f'"{review_request["uid"]}", got "{resp.get("uid")}"')
        return resp

    def _Denied(self, name, status):
        st = dict(status or {})
        code = st.get("code") or 0
        if code < 400:
            code = 400
        denied = f'admission webhook "{name}" denied the request'
        if st.get("message"):
            msg = f"{denied}: {st['message']}"
        elif st.get("reason"):
            msg = f"{denied}: {st['reason']}"
        else:
            msg = f"{denied} without explanation"
        return ApiError(code, st.get("reason") or "", msg, st.get("details"))

    def _RunOne(self, wh, a, obj, mutating, warnings, audit_annotations):
        """Call one webhook if it matches; returns the (possibly patched) object."""
        if not any(_RuleMatches(r, a) for r in wh.get("rules") or []):
            return obj, False
        if not self._NamespaceMatches(wh, a) or not self._ObjectMatches(wh, a):
            return obj, False
        name = wh.get("name", "")
        ignore = wh.get("failurePolicy", "Fail") == "Ignore"
        probe = Attributes(a.res, a.operation, a.namespace, a.name, obj, a.old, a.user,
                           a.dry_run, a.subresource, a.kind, a.options)
        req = self._Request(probe, obj)
        try:
            if not self._ConditionsMatch(wh, probe, obj, req):
                return obj, False
        except ApiError:
            if ignore:
                return obj, False
            raise
        if a.dry_run and wh.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise ApiError(400, "BadRequest", f'admission webhook "{name}" does not support dry run')
        try:
            resp = self._Call(wh, req)
        except RuntimeError as e:
            self.api.Log(f"webhook {name} failed: {e}")
            if ignore:
                return obj, True
            raise InternalError(f'failed calling webhook "{name}": {e}')
        for w in resp.get("warnings") or []:
            if w not in warnings:
                warnings.append(w)
        for k, v in (resp.get("auditAnnotations") or {}).items():
            audit_annotations[f"{name}/{k}"] = v
        if not resp.get("allowed"):
            raise self._Denied(name, resp.get("status"))
        has_patch, has_type = bool(resp.get("patch")), bool(resp.get("patchType"))
        if not mutating and (has_patch or has_type):
            msg = "validating webhook may not return response.patch" if has_patch else \
                "validating webhook may not return response.patchType"
            if ignore:
                return obj, True
            raise InternalError(f'failed calling webhook "{name}": {msg}')
        if has_patch != has_type:
            msg = ("webhook returned response.patch but not response.patchType" if has_patch
                   else "webhook returned response.patchType but not response.patch")
            if ignore:
                return obj, True
            raise InternalError(f'failed calling webhook "{name}": {msg}')
        if has_patch:
            if resp["patchType"] != "JSONPatch":
                raise InternalError(f'failed calling webhook "{name}": unsupported patch type '
                                    f'"{resp["patchType"]}"')
            try:
                ops = json.loads(base64.b64decode(resp["patch"]))
                obj = patchlib.ApplyJsonPatch(obj, ops)
            except (ValueError, patchlib.PatchError) as e:
                raise InternalError(f"JSON Patch: {e}")
            if a.subresource == "":
                defaults.ApplyDefaults(a.res.key, obj)
        return obj, True

    def Admit(self, a, mutate=True, validate=True, warnings=None):
        """Run webhooks; returns (object, warnings, called names, audit annotations).
        Warnings are appended to `warnings` as they arrive (kept even on denial)."""
        warnings = [] if warnings is None else warnings
        if a.res.key in (MUTATING, VALIDATING):
            return a.obj, warnings, [], {}
        obj = copy.deepcopy(a.obj)
        called, annotations = [], {}
        if mutate:
            obj = self._Mutate(a, obj, warnings, called, annotations)
        if validate:
            for cfg in self._Configs(VALIDATING):
                for wh in cfg.get("webhooks") or []:
                    obj, did = self._RunOne(wh, a, obj, False, warnings, annotations)
                    if did:
                        called.append(wh.get("name", ""))
        return obj, warnings, called, annotations

    def _Mutate(self, a, obj, warnings, called, annotations):
        """Mutating webhooks in configuration-name order (then each configuration's list
        order), with kube's reinvocation rule (mutating/dispatcher.go and
        admission/reinvocation.go): each time a webhook changes the object, every webhook
        with reinvocationPolicy IfNeeded called before it becomes due for reinvocation;
        when something changed, the webhooks due are called once more, in the same order,
        and only those — a webhook not called in the first round (rules, selectors or
        matchConditions did not match) is never called for the first time on
        reinvocation. There is one reinvocation round at most."""
        hooks = [((cfg["metadata"]["name"], i), wh) for cfg in self._Configs(MUTATING)
                 for i, wh in enumerate(cfg.get("webhooks") or [])]
        previously_invoked, due = set(), set()
        for ident, wh in hooks:
            before = obj
            obj, did = self._RunOne(wh, a, obj, True, warnings, annotations)
            if not did:
                continue
            called.append(wh.get("name", ""))
            if obj != before:
                due |= previously_invoked
                previously_invoked = set()
            if wh.get("reinvocationPolicy") == "IfNeeded":
                previously_invoked.add(ident)
        if due:
            for ident, wh in hooks:
                if ident not in due:
                    continue
                obj, did = self._RunOne(wh, a, obj, True, warnings, annotations)
                if did:
                    called.append(wh.get("name", ""))
        return obj
