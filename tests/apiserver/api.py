"""The request logic of the test API server, independent of HTTP.

Create / Update / Patch / Delete / Get / List and the scale and status subresources,
with strict decoding, defaulting, built-in pod admission, webhook admission, kube's
own validation, optimistic concurrency, finalizers and deletionTimestamp. The HTTP
layer (server.py) and the in-process controllers (controllers.py) both call it.
Thread-safe: every write re-reads and writes under the store lock.
"""
import base64
import copy
import datetime
import json
import random
import threading
import uuid

from . import admission
from . import crds
from . import defaults
from . import intree
from . import patch as patchlib
from . import registry
from . import schema
from . import labelsel as selectors
from . import validation
from .store import AlreadyExists, ApiError, Conflict, Expired, Invalid, NotFound, Store

crds.Register(schema)

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # kube's utilrand alphabet (no vowels)
SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
PODGROUPS_KEY = "scheduling.k8s.io/podgroups"
DEPLOYMENTS_KEY = "apps/deployments"
PODGROUP_PROTECTION = "scheduling.k8s.io/podgroup-protection"


def Now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def Later(seconds):
    """RFC 3339 time `seconds` from now; sub-second precision, so that a short grace
    period in tests ends when it should (kube's metav1.Time has whole seconds)."""
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def BadRequest(msg):
    return ApiError(400, "BadRequest", msg)


class Context:
    """Who is asking and how: user info, dryRun, fieldValidation, fieldManager."""

    def __init__(self, user, dry_run=False, field_validation="Warn", internal=False):
        self.user = user
        self.dry_run = dry_run
        self.field_validation = field_validation
        self.internal = internal
        self.warnings = []
        self.webhooks_called = []
        self.audit_annotations = {}


class Api:
    def __init__(self, log=None, history=2000):
        self.store = Store(history=history)
        self.dispatcher = admission.Dispatcher(self)
        self.service_endpoints = {}  # "ns/name" -> (host, port)
        self.webhook_client_cert = None  # (cert file, key file) presented to webhooks
        self.log = log or (lambda msg: None)
        # Whether PodGroups get the podgroup-protection finalizer when created
        # (kube: the PodGroupProtection admission plugin, on with the
        # GenericWorkload feature gate, as the controller that removes it); the
        # server ties it to the `podgroup` controller being enabled.
        self.podgroup_protection = lambda: False
        # Longest pod termination grace honoured (seconds; 0 = pods are deleted at
        # once). With it, a bound pod being deleted keeps running with
        # deletionTimestamp = now + grace until the "kubelet" removes it, as kube
        # does; an unbound pod (never scheduled) still goes at once, as in kube.
        self.pod_grace_max = 0.0
        # kube's NamespaceAutoProvision admission plugin: a create in a missing
        # namespace creates the namespace first.
        self.namespace_auto_provision = False
        # --in-tree-deployment: a release with KEP-6276's Deployment.spec.scheduling
        # (intree.py). Off, as v1.37.2: the type has no such field, so strict decoding
        # refuses it, Warn/Ignore prune it, and one added by a mutating webhook is
        # dropped when the patched object is decoded (intree.DropDisabled).
        self.in_tree_deployment = False
        # --generic-workload (kube-apiserver's feature gate GenericWorkload). Off: the pod
        # strategy drops spec.schedulingGroup after mutating admission (the disabled-field
        # rule, as pkg/api/pod/util.go does for the gate's fields), so a link written by a
        # webhook never reaches storage; the server then serves no Workload API either
        # (server.py sets the scheduling versions to none).
        self.generic_workload = True
        # Admission of components played by this server (e.g. Volcano's PodGroup webhooks
        # under --gang-scheduler=volcano): callables (res, obj, operation) -> obj, run on
        # CREATE after the registered mutating webhooks; they raise ApiError to deny.
        self.builtin_admission = []
        self.write_lock = threading.RLock()  # serialises read-modify-write cycles
        self.on_change = []  # callbacks(key) after each committed write
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self._Seed(registry.BY_KEY["/namespaces"], {"metadata": {"name": ns}})
        self._Seed(registry.BY_KEY["/nodes"], {"metadata": {"name": "apiserver-test-node", "labels": {
            "kubernetes.io/hostname": "apiserver-test-node"}}, "status": {"conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady"}]}})

    def Log(self, msg):
        self.log(msg)

    def ServiceEndpoint(self, ns, name, port):
        return self.service_endpoints.get(f"{ns}/{name}", (f"{name}.{ns}.svc", port))

    def _Seed(self, res, obj):
        defaults.ApplyDefaults(res.key, obj)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        obj["metadata"].update(uid=str(uuid.uuid4()), creationTimestamp=Now())
        self.store.Put(res.key, obj, "ADDED")

    # ------------------------------------------------------------------ reads

    def _Read(self, res, ns, name):
        """The stored object seen through res (its version's apiVersion), or None."""
        return View(res, self.store.Get(res.key, ns if res.namespaced else "", name))

    def Get(self, res, ns, name):
        obj = self._Read(res, ns, name)
        if obj is None:
            raise NotFound(res, name)
        return obj

    def List(self, res, ns, label_selector="", field_selector="", limit=0, cont=""):
        try:
            lreq = selectors.ParseLabelSelector(label_selector)
            freq = selectors.ParseFieldSelector(field_selector)
        except selectors.SelectorError as e:
            raise BadRequest(str(e))
        items, rv = self.store.List(res.key, ns if res.namespaced else None)
        items = [View(res, o) for o in items]
        items = [o for o in items if selectors.MatchLabelRequirements(lreq, o["metadata"].get("labels"))
                 and selectors.MatchFields(freq, o)]
        meta = {"resourceVersion": str(rv)}
        if cont:
            try:
                token = json.loads(base64.urlsafe_b64decode(cont.encode()))
                start, token_rv = token["start"], int(token["rv"])
            except (ValueError, KeyError, TypeError):
                raise BadRequest("continue key is not valid: incorrect encoded start resourceVersion")
            if token_rv < self.store.compacted:
                raise Expired("The provided continue parameter is too old to display a consistent list "
                              "result. You can start a new list without the continue parameter.")
            items = [o for o in items if _SortKey(o) > tuple(start)]
        if limit and len(items) > limit:
            rest = len(items) - limit
            items = items[:limit]
            last = _SortKey(items[-1])
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps({"rv": rv, "start": list(last)}).encode()).decode()
            meta["remainingItemCount"] = rest
        return {"kind": res.kind + "List", "apiVersion": res.api_version, "metadata": meta,
                "items": items}

    # ------------------------------------------------------------------ decode

    def _Decode(self, res, body, ctx, patched=None):
        """Type checks and strict decoding of a request body; returns the pruned object."""
        if not isinstance(body, dict):
            raise BadRequest(f"{res.kind} in version \"{res.version}\" cannot be handled as a "
                             f"{res.kind}: body must be a JSON object")
        av, kind = body.get("apiVersion"), body.get("kind")
        if av and av != res.api_version and not (kind == "Scale" and av == "autoscaling/v1"):
            raise BadRequest(f"the API version in the data ({av}) does not match the expected "
                             f"API version ({res.api_version})")
        sch = schema.SCHEMAS.get("scale" if kind == "Scale" else res.key)
        if res.key == DEPLOYMENTS_KEY and not self.in_tree_deployment:
            sch = schema.DEPLOYMENT_1_37  # no spec.scheduling in the type (v1.37.2)
        unknown = schema.UnknownFields(sch, body) if sch else []
        if unknown:
            if ctx.field_validation == "Strict":
                msg = schema.StrictMessage(unknown)
                if patched is not None:
                    raise ApiError(422, "Invalid", f' "" is invalid: patch: Invalid value: '
                                   f'"{json.dumps(patched)[:200]}": {msg}',
                                   {"causes": [{"reason": "FieldValueInvalid", "field": "patch",
                                                "message": msg}]})
                k = "Scale" if kind == "Scale" else res.kind
                raise BadRequest(f'{k} in version "{res.version if k != "Scale" else "v1"}" cannot be '
                                 f'handled as a {k}: {msg}')
            if ctx.field_validation == "Warn":
                for p in unknown:
                    ctx.warnings.append(f'unknown field "{p}"')
            body = schema.Prune(sch, body)
        body = copy.deepcopy(body)
        body.setdefault("metadata", {})
        if not isinstance(body["metadata"], dict):
            raise BadRequest("metadata must be an object")
        return body

    def _CheckNamespace(self, res, ns, obj, creating):
        if not res.namespaced:
            obj["metadata"].pop("namespace", None)
            return
        meta_ns = obj["metadata"].get("namespace")
        if meta_ns and meta_ns != ns:
            raise BadRequest("the namespace of the provided object does not match the namespace "
                             "sent on the request")
        obj["metadata"]["namespace"] = ns
        nso = self.store.Get("/namespaces", "", ns)
        if nso is None and creating and self.namespace_auto_provision:
            with self.write_lock:
                if self.store.Get("/namespaces", "", ns) is None:
                    namespace = {"metadata": {"name": ns}}
                    defaults.DefaultNamespace(namespace)
                    self._Seed(registry.BY_KEY["/namespaces"], namespace)
            self._Changed("/namespaces")
            nso = self.store.Get("/namespaces", "", ns)
        if nso is None:
            raise NotFound(registry.BY_KEY["/namespaces"], ns)
        if creating and nso["metadata"].get("deletionTimestamp"):
            raise ApiError(403, "Forbidden", f'{res.plural} "{obj["metadata"].get("name") or obj["metadata"].get("generateName", "")}" '
                           f"is forbidden: unable to create new content in namespace {ns} because "
                           "it is being terminated")

    # ------------------------------------------------------------------ create

    def _PrepareCreate(self, res, obj):
        """What kube's registry strategies do in PrepareForCreate (status reset etc.)."""
        meta = obj["metadata"]
        for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                  "generation", "selfLink", "managedFields"):
            meta.pop(k, None)
        if res.status and res.key not in ("/namespaces", "/nodes"):
            obj.pop("status", None)
        if res.key == DEPLOYMENTS_KEY and not self.in_tree_deployment:
            intree.DropDisabled(obj, None)
        if res.key == "/pods":
            spec = obj["spec"]
            if not self.generic_workload:
                spec.pop("schedulingGroup", None)
            status = {"phase": "Pending", "qosClass": "BestEffort"}
            if spec.get("schedulingGates"):
                status["conditions"] = [{
                    "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates",
                    "lastProbeTime": None, "lastTransitionTime": Now()}]
            obj["status"] = status

    @staticmethod
    def _BuiltinPodGroupAdmission(obj):
        """The PodGroupProtection admission plugin: every new PodGroup gets the
        podgroup-protection finalizer (the podgroup controller removes it once the
        PodGroup is being deleted and no non-terminal pod names it)."""
        fins = obj["metadata"].setdefault("finalizers", [])
        if PODGROUP_PROTECTION not in fins:
            fins.append(PODGROUP_PROTECTION)

    def _BuiltinPodAdmission(self, obj):
        """ServiceAccount, DefaultTolerationSeconds and Priority admission plugins (pods)."""
        spec = obj["spec"]
        spec.setdefault("serviceAccountName", "default")
        spec["serviceAccount"] = spec["serviceAccountName"]
        tols = spec.setdefault("tolerations", [])
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if not any(t.get("key") == key for t in tols):
                tols.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300})
        prio = 0
        pc_name = spec.get("priorityClassName")
        if pc_name:
            pc = self.store.Get("scheduling.k8s.io/priorityclasses", "", pc_name)
            if pc is None:
                raise ApiError(403, "Forbidden", f'pods "{obj["metadata"].get("name", "")}" is forbidden: '
                               f"no PriorityClass with name {pc_name} was found")
            prio = pc.get("value", 0)
            spec.setdefault("preemptionPolicy", pc.get("preemptionPolicy", "PreemptLowerPriority"))
        spec.setdefault("priority", prio)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")

    def _GenerateName(self, res, obj):
        meta = obj["metadata"]
        if meta.get("name"):
            return
        base = meta.get("generateName")
        if not base:
            raise Invalid(res, "", [("metadata.name", "FieldValueRequired",
                                     "Required value: name or generateName is required")])
        for _ in range(8):  # kube retries generated-name collisions a few times too
            name = base[:58] + "".join(random.choice(_NAME_CHARS) for _ in range(5))
            if self.store.Get(res.key, meta.get("namespace", ""), name) is None:
                meta["name"] = name
                return
        raise AlreadyExists(res, name)

    def Create(self, res, ns, body, ctx):
        obj = self._Decode(res, body, ctx)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        self._CheckNamespace(res, ns, obj, True)
        if obj["metadata"].get("resourceVersion"):
            raise BadRequest("resourceVersion should not be set on objects to be created")
        defaults.ApplyDefaults(res.key, obj)
        if res.key == "/pods":
            self._BuiltinPodAdmission(obj)
        if res.key == PODGROUPS_KEY and self.podgroup_protection():
            self._BuiltinPodGroupAdmission(obj)
        name = obj["metadata"].get("name", "")
        attrs = admission.Attributes(res, "CREATE", obj["metadata"].get("namespace"), name, obj, None,
                                     ctx.user, ctx.dry_run)
        obj = self._Admit(attrs, ctx, mutate=True)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        for hook in self.builtin_admission:
            obj = hook(res, obj, "CREATE")
        # as kube's BeforeCreate: strategy PrepareForCreate runs after mutating admission
        self._PrepareCreate(res, obj)
        with self.write_lock:
            self._GenerateName(res, obj)
            meta = obj["metadata"]
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = Now()
            if res.generation:
                meta["generation"] = 1
            if res.key == "/namespaces":
                defaults.DefaultNamespace(obj)
            causes = self._Validate(res, obj, None)
            if causes:
                raise Invalid(res, meta["name"], causes)
            if self.store.Get(res.key, meta.get("namespace", ""), meta["name"]) is not None:
                raise AlreadyExists(res, meta["name"])
        attrs = admission.Attributes(res, "CREATE", obj["metadata"].get("namespace"),
                                     obj["metadata"]["name"], obj, None, ctx.user, ctx.dry_run)
        obj = self._Admit(attrs, ctx, validate=True)
        if ctx.dry_run:
            return obj
        with self.write_lock:
            meta = obj["metadata"]
            if self.store.Get(res.key, meta.get("namespace", ""), meta["name"]) is not None:
                raise AlreadyExists(res, meta["name"])
            out = self.store.Put(res.key, obj, "ADDED")
        self._Changed(res.key)
        return out

    def _Validate(self, res, obj, old):
        causes = validation.Validate(res, obj, old)
        if res.key == DEPLOYMENTS_KEY and self.in_tree_deployment:
            causes += intree.Validate(obj, old)
        return causes

    def _Admit(self, attrs, ctx, mutate=False, validate=False):
        obj, _, called, ann = self.dispatcher.Admit(attrs, mutate=mutate, validate=validate,
                                                    warnings=ctx.warnings)
        ctx.webhooks_called.extend(called)
        ctx.audit_annotations.update(ann)
        return obj if obj is not None else attrs.obj

    def _Changed(self, key):
        for cb in self.on_change:
            cb(key)

    # ------------------------------------------------------------------ update

    def Update(self, res, ns, name, body, ctx, subresource="", patched=None):
        # As kube's GuaranteedUpdate: an update that names no resourceVersion (unconditional) is
        # tried again, admission included, when another write lands during its admission; one
        # that names a resourceVersion conflicts. Bounded: a hot object still ends in 409.
        meta = body.get("metadata") if isinstance(body, dict) else None
        attempts = 1 if not isinstance(meta, dict) or meta.get("resourceVersion") else 10
        for attempt in range(attempts):
            try:
                return self._UpdateOnce(res, ns, name, body, ctx, subresource, patched)
            except ApiError as e:
                if e.code != 409 or e.reason != "Conflict" or attempt == attempts - 1:
                    raise

    def _UpdateOnce(self, res, ns, name, body, ctx, subresource="", patched=None):
        obj = self._Decode(res, body, ctx, patched=patched)
        ns = ns if res.namespaced else ""
        if obj["metadata"].get("name") and obj["metadata"]["name"] != name:
            raise BadRequest(f"the name of the object ({obj['metadata']['name']}) does not match "
                             f"the name on the URL ({name})")
        obj["metadata"]["name"] = name
        cur = self._Read(res, ns, name)
        if cur is None:
            raise NotFound(res, name)
        self._CheckNamespace(res, ns, obj, False)
        rv = obj["metadata"].get("resourceVersion")
        if rv and rv != cur["metadata"]["resourceVersion"]:
            raise Conflict(res, name)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        defaults.ApplyDefaults(res.key, obj)
        meta, cmeta = obj["metadata"], cur["metadata"]
        for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                  "generation", "managedFields"):
            if k in cmeta:
                meta[k] = cmeta[k]
            else:
                meta.pop(k, None)
        if subresource == "status":
            # Status strategies keep everything but status (and, as kube's do, new annotations).
            new = copy.deepcopy(cur)
            new["status"] = obj.get("status")
            if new["status"] is None:
                new.pop("status")
            if "annotations" in meta:
                new["metadata"]["annotations"] = meta["annotations"]
            else:
                new["metadata"].pop("annotations", None)
            obj = new
        elif res.status and res.key not in ("/namespaces",):
            if "status" in cur:
                obj["status"] = cur["status"]
            else:
                obj.pop("status", None)
        if res.key == "/namespaces":
            obj["spec"] = cur.get("spec", {})
            obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
        if subresource != "status":
            self._BumpGeneration(res, cur, obj)
        attrs = admission.Attributes(res, "UPDATE", ns, name, obj, cur, ctx.user, ctx.dry_run,
                                     subresource=subresource)
        obj = self._Admit(attrs, ctx, mutate=True)
        if res.key == DEPLOYMENTS_KEY and not self.in_tree_deployment:
            intree.DropDisabled(obj, cur)  # the strategy's PrepareForUpdate
        if subresource != "status":
            self._BumpGeneration(res, cur, obj)
        causes = self._Validate(res, obj, cur)
        if causes:
            raise Invalid(res, name, causes)
        attrs.obj = obj
        obj = self._Admit(attrs, ctx, validate=True)
        return self._Commit(res, cur, obj, ctx)

    def _BumpGeneration(self, res, cur, obj):
        if not res.generation:
            return
        gen = cur["metadata"].get("generation", 1)
        changed = {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")} != \
            {k: v for k, v in cur.items() if k not in ("metadata", "status", "apiVersion", "kind")}
        if res.key == "apps/deployments" and (obj["metadata"].get("annotations") or {}) != \
                (cur["metadata"].get("annotations") or {}):
            changed = True
        obj["metadata"]["generation"] = gen + 1 if changed else gen

    def _Commit(self, res, cur, obj, ctx):
        """Write obj over cur (checking it was not changed meanwhile) or delete it when the
        last finalizer of a deleting object went away."""
        if ctx.dry_run:
            return obj
        with self.write_lock:
            now = self.store.Get(res.key, cur["metadata"].get("namespace", ""), cur["metadata"]["name"])
            if now is None:
                raise NotFound(res, cur["metadata"]["name"])
            if now["metadata"]["resourceVersion"] != cur["metadata"]["resourceVersion"]:
                raise Conflict(res, cur["metadata"]["name"])
            obj["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
            if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers") \
                    and not (res.key == "/namespaces"):
                self.store.Remove(res.key, obj)
                out = obj
            elif obj == cur:
                return cur
            else:
                out = self.store.Put(res.key, obj, "MODIFIED")
        self._Changed(res.key)
        return out

    # ------------------------------------------------------------------ patch

    def Patch(self, res, ns, name, content_type, raw, ctx, subresource="", force=False):
        ns = ns if res.namespaced else ""
        ctype = (content_type or "").split(";")[0].strip()
        apply = ctype == "application/apply-patch+yaml"
        try:
            if apply:
                from . import yamlutil
                patch_body = yamlutil.Load(raw.decode() or "{}")
            else:
                patch_body = json.loads(raw or b"null")
        except (ValueError, Exception) as e:  # yaml errors are not ValueErrors
            raise BadRequest(f"error decoding patch: {e}")
        # As kube's GuaranteedUpdate: a patch that names no resourceVersion is re-applied
        # to the fresh object when another write lands during its admission; only a
        # patch that names one conflicts. Bounded: a hot object still ends in 409.
        attempts = 1 if _NamesResourceVersion(patch_body) else 10
        for attempt in range(attempts):
            try:
                return self._PatchOnce(res, ns, name, ctype, apply, patch_body, ctx, subresource)
            except ApiError as e:
                if e.code != 409 or e.reason != "Conflict" or attempt == attempts - 1:
                    raise

    def _PatchOnce(self, res, ns, name, ctype, apply, patch_body, ctx, subresource):
        if subresource == "scale":
            return self.PatchScale(res, ns, name, ctype, patch_body, ctx)
        cur = self._Read(res, ns, name)
        if cur is None:
            if apply:
                body = patchlib.StripDirectives(patch_body)
                if ctx.field_validation == "Strict":
                    self._StrictApply(res, body)
                body.setdefault("metadata", {})["name"] = name
                return self.Create(res, ns, body, ctx), True
            raise NotFound(res, name)
        patched = self._ApplyPatch(cur, ctype, patch_body, res)
        if apply and ctx.field_validation == "Strict":
            self._StrictApply(res, patched)
        return self.Update(res, ns, name, patched, ctx, subresource,
                           patched=None if apply else patch_body), False

    def _StrictApply(self, res, body):
        sch = schema.SCHEMAS.get(res.key)
        unknown = schema.UnknownFields(sch, body) if sch else []
        if unknown:
            raise BadRequest(f"error strict decoding YAML: error converting YAML to JSON: "
                             f"{schema.StrictMessage(unknown)}")

    def _ApplyPatch(self, cur, ctype, patch_body, res):
        try:
            if ctype == "application/json-patch+json":
                return patchlib.ApplyJsonPatch(cur, patch_body)
            if ctype == "application/merge-patch+json":
                return patchlib.ApplyMergePatch(cur, patch_body)
            if ctype == "application/strategic-merge-patch+json":
                if res.key.startswith("scheduling.k8s.io/") or res.key.startswith("admissionregistration"):
                    return patchlib.ApplyStrategicMergePatch(cur, patch_body)
                return patchlib.ApplyStrategicMergePatch(cur, patch_body)
            if ctype == "application/apply-patch+yaml":
                return patchlib.ApplyStrategicMergePatch(cur, patchlib.StripDirectives(patch_body))
        except patchlib.PatchError as e:
            raise ApiError(422, "Invalid", str(e))
        raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - "
                       f"accepted media types include: application/json-patch+json, "
                       f"application/merge-patch+json, application/apply-patch+yaml, "
                       f"application/strategic-merge-patch+json")

    # ------------------------------------------------------------------ scale

    def GetScale(self, res, ns, name):
        dep = self.Get(res, ns, name)
        return _ScaleOf(dep)

    def UpdateScale(self, res, ns, name, body, ctx):
        body = self._Decode(res, body, ctx)
        return self._WriteScale(res, ns, name, body, ctx)

    def PatchScale(self, res, ns, name, ctype, patch_body, ctx):
        dep = self.Get(res, ns, name)
        scale = self._ApplyPatch(_ScaleOf(dep), ctype, patch_body, res)
        return self._WriteScale(res, ns, name, scale, ctx), False

    def _WriteScale(self, res, ns, name, scale, ctx):
        dep = self.Get(res, ns, name)
        old_scale = _ScaleOf(dep)
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        if rv and rv != dep["metadata"]["resourceVersion"]:
            raise Conflict(res, name)
        scale = copy.deepcopy(scale)
        scale["apiVersion"], scale["kind"] = "autoscaling/v1", "Scale"
        scale["metadata"] = dict(old_scale["metadata"])
        scale["status"] = old_scale["status"]
        attrs = admission.Attributes(res, "UPDATE", ns, name, scale, old_scale, ctx.user, ctx.dry_run,
                                     subresource="scale", kind=SCALE_KIND)
        scale = self._Admit(attrs, ctx, mutate=True)
        replicas = (scale.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or replicas < 0:
            raise ApiError(422, "Invalid", f'Scale.autoscaling "{name}" is invalid: spec.replicas: '
                           f"Invalid value: {replicas}: must be greater than or equal to 0",
                           {"name": name, "group": "autoscaling", "kind": "Scale", "causes": [
                               {"reason": "FieldValueInvalid", "field": "spec.replicas",
                                "message": f"Invalid value: {replicas}: must be greater than or equal to 0"}]})
        attrs.obj = scale
        self._Admit(attrs, ctx, validate=True)
        new = copy.deepcopy(dep)
        new["spec"]["replicas"] = replicas
        self._BumpGeneration(res, dep, new)
        out = self._Commit(res, dep, new, ctx)
        return _ScaleOf(out)

    # ------------------------------------------------------------------ delete

    def Delete(self, res, ns, name, options, ctx):
        ns = ns if res.namespaced else ""
        options = options or {}
        cur = self._Read(res, ns, name)
        if cur is None:
            raise NotFound(res, name)
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != cur["metadata"]["uid"]:
            raise ApiError(409, "Conflict", f"Operation cannot be fulfilled on {res.group_resource} "
                           f"\"{name}\": Precondition failed: UID in precondition: {pre['uid']}, "
                           f"UID in object meta: {cur['metadata']['uid']}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != cur["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", f"Operation cannot be fulfilled on {res.group_resource} "
                           f"\"{name}\": Precondition failed: ResourceVersion in precondition: "
                           f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                           f"{cur['metadata']['resourceVersion']}")
        opts = {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"}
        opts.update({k: v for k, v in options.items() if k not in ("apiVersion", "kind")})
        attrs = admission.Attributes(res, "DELETE", ns, name, None, cur, ctx.user, ctx.dry_run,
                                     options=opts)
        self._Admit(attrs, ctx, mutate=True)
        self._Admit(attrs, ctx, validate=True)
        policy = options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        policy = policy or "Background"
        if policy not in ("Background", "Foreground", "Orphan"):
            raise Invalid(res, name, [("propagationPolicy", "FieldValueNotSupported",
                                       f'Unsupported value: "{policy}": supported values: '
                                       '"Foreground", "Background", "Orphan"')])
        if ctx.dry_run:
            return cur, True
        with self.write_lock:
            cur = self._Read(res, ns, name)
            if cur is None:
                raise NotFound(res, name)
            meta = cur["metadata"]
            fins = list(meta.get("finalizers") or [])
            extra = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}.get(policy)
            if extra and extra not in fins and (not meta.get("deletionTimestamp") or policy == "Foreground"):
                fins.append(extra)
            namespace_pending = res.key == "/namespaces"
            grace = self._PodGrace(res, cur, options)
            if grace > 0 and not meta.get("deletionTimestamp"):
                new = copy.deepcopy(cur)
                new["metadata"]["deletionTimestamp"] = Later(grace)
                new["metadata"]["deletionGracePeriodSeconds"] = int(grace + 0.999)
                if fins:
                    new["metadata"]["finalizers"] = fins
                cur = self.store.Put(res.key, new, "MODIFIED")
                out, deleted = cur, False
            elif fins or namespace_pending:
                new = copy.deepcopy(cur)
                new["metadata"]["finalizers"] = fins
                if not fins:
                    new["metadata"].pop("finalizers")
                if not new["metadata"].get("deletionTimestamp"):
                    new["metadata"]["deletionTimestamp"] = Now()
                    new["metadata"]["deletionGracePeriodSeconds"] = 0
                if namespace_pending:
                    new["status"] = {"phase": "Terminating"}
                if new != cur:
                    cur = self.store.Put(res.key, new, "MODIFIED")
                out, deleted = cur, False
            else:
                out, deleted = View(res, self.store.Remove(res.key, cur)), True
        self._Changed(res.key)
        return out, deleted

    def _PodGrace(self, res, pod, options):
        """Seconds a deleted pod keeps running (0: removed at once)."""
        if res.key != "/pods" or self.pod_grace_max <= 0 or not (pod.get("spec") or {}).get("nodeName"):
            return 0
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return 0
        grace = options.get("gracePeriodSeconds")
        if grace is None:
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        return max(0.0, min(float(grace), self.pod_grace_max))

    def RemoveNamespace(self, name):
        """Final step of namespace deletion (the namespace controller calls it when empty)."""
        cur = self.store.Get("/namespaces", "", name)
        if cur is not None:
            self.store.Remove("/namespaces", cur)
            self._Changed("/namespaces")


def View(res, obj):
    """obj as served by res: a resource served in several versions (scheduling.k8s.io
    Workloads, PodGroups) keeps one storage; only apiVersion tells the views apart, as
    kube-apiserver converts between versions of one stored object."""
    if obj is not None:
        obj["apiVersion"] = res.api_version
    return obj


def _SortKey(o):
    return (o["metadata"].get("namespace", ""), o["metadata"]["name"])


def _ScaleOf(dep):
    meta = dep["metadata"]
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": meta["name"], "namespace": meta.get("namespace"), "uid": meta["uid"],
                     "resourceVersion": meta["resourceVersion"],
                     "creationTimestamp": meta["creationTimestamp"]},
        "spec": {"replicas": dep["spec"].get("replicas", 0)},
        "status": {"replicas": (dep.get("status") or {}).get("replicas", 0),
                   "selector": selectors.LabelSelectorString(dep["spec"].get("selector"))},
    }


def _NamesResourceVersion(patch_body):
    """True when a patch (merge, strategic, apply or JSON patch) sets or tests
    metadata.resourceVersion."""
    if isinstance(patch_body, dict):
        return bool((patch_body.get("metadata") or {}).get("resourceVersion"))
    if isinstance(patch_body, list):
        return any(isinstance(op, dict) and op.get("path") == "/metadata/resourceVersion"
                   for op in patch_body)
    return False
