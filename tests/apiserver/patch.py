"""JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and a strategic merge patch.

The strategic merge patch knows the merge keys of the built-in lists that kubectl
patches (containers by name, ports by containerPort, ...) and the directives
kubectl sends ($patch, $retainKeys, $setElementOrder, $deleteFromPrimitiveList).
Pure functions over JSON values; thread-safe.
"""
import copy


class PatchError(ValueError):
    pass


def _Unescape(token):
    return token.replace("~1", "/").replace("~0", "~")


def _Tokens(pointer):
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"invalid JSON pointer {pointer!r}")
    return [_Unescape(t) for t in pointer[1:].split("/")]


def _Parent(doc, tokens):
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, list):
            try:
                cur = cur[int(t)]
            except (ValueError, IndexError):
                raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")
        elif isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")
            cur = cur[t]
        else:
            raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")
    return cur


def _Get(doc, pointer):
    tokens = _Tokens(pointer)
    if not tokens:
        return doc
    parent = _Parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, list):
        try:
            return parent[int(last)]
        except (ValueError, IndexError):
            raise PatchError(f"doc is missing path: {pointer}")
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    raise PatchError(f"doc is missing path: {pointer}")


def _Remove(doc, pointer):
    tokens = _Tokens(pointer)
    parent = _Parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, list):
        try:
            return parent.pop(int(last))
        except (ValueError, IndexError):
            raise PatchError(f"doc is missing path: {pointer}")
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    raise PatchError(f"doc is missing path: {pointer}")


def _Add(doc, pointer, value, replace=False):
    tokens = _Tokens(pointer)
    if not tokens:
        return value
    parent = _Parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
            return doc
        try:
            idx = int(last)
        except ValueError:
            raise PatchError(f"invalid array index {last!r}")
        if replace:
            if not 0 <= idx < len(parent):
                raise PatchError(f"doc is missing path: {pointer}")
            parent[idx] = value
        else:
            if not 0 <= idx <= len(parent):
                raise PatchError(f"add operation does not apply: doc is missing path: {pointer}")
            parent.insert(idx, value)
    elif isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f"replace operation does not apply: doc is missing key: {pointer}")
        parent[last] = value
    else:
        raise PatchError(f"doc is missing path: {pointer}")
    return doc


def ApplyJsonPatch(doc, ops):
    """Apply RFC 6902 operations to a copy of doc and return it."""
    if not isinstance(ops, list):
        raise PatchError("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    doc = copy.deepcopy(doc)
    for op in ops:
        kind = op.get("op")
        path = op.get("path", "")
        if kind == "add":
            doc = _Add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _Remove(doc, path)
        elif kind == "replace":
            doc = _Add(doc, path, copy.deepcopy(op.get("value")), replace=True)
        elif kind == "move":
            val = _Remove(doc, op.get("from", ""))
            doc = _Add(doc, path, val)
        elif kind == "copy":
            doc = _Add(doc, path, copy.deepcopy(_Get(doc, op.get("from", ""))))
        elif kind == "test":
            if _Get(doc, path) != op.get("value"):
                raise PatchError(f"testing value {path} failed: test failed")
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return doc


def ApplyMergePatch(doc, patch):
    """RFC 7386: objects merge, null deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            out[k] = ApplyMergePatch(out.get(k), v)
        else:
            out[k] = copy.deepcopy(v)
    return out


# Lists merged by key in strategic merge patches (field name → merge key).
# Lists not named here are replaced as a whole (atomic), as kube's types say.
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "env": "name", "ports": "containerPort", "volumes": "name", "volumeMounts": "mountPath",
    "volumeDevices": "devicePath", "imagePullSecrets": "name", "ownerReferences": "uid",
    "conditions": "type", "schedulingGates": "name", "resourceClaims": "name",
    "hostAliases": "ip", "topologySpreadConstraints": "topologyKey", "readinessGates": "conditionType",
    "containerStatuses": "name", "initContainerStatuses": "name",
    # Mutating/ValidatingWebhookConfiguration.webhooks (patchMergeKey name in
    # k8s.io/api/admissionregistration/v1): kubectl apply sends only the
    # changed fields of each webhook, so a whole-list replace would drop the
    # rest (the injected caBundle, rules, clientConfig).
    "webhooks": "name",
}
# Primitive lists merged as sets.
SET_LISTS = {"finalizers"}


def _KeyOf(item, key):
    return item.get(key) if isinstance(item, dict) else item


def _MergeList(field, orig, patch, set_order):
    key = MERGE_KEYS.get(field)
    if key is None and field not in SET_LISTS:
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and "$patch" in x)]
    out = [copy.deepcopy(x) for x in (orig or [])]
    if field in SET_LISTS:
        for x in patch:
            if x not in out:
                out.append(x)
        return out
    for item in patch:
        if isinstance(item, dict) and item.get("$patch") == "replace":
            return [copy.deepcopy(x) for x in patch if x is not item]
    for item in patch:
        if not isinstance(item, dict):
            continue
        k = item.get(key)
        idx = next((i for i, x in enumerate(out) if _KeyOf(x, key) == k), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(ApplyStrategicMergePatch({}, item))
        else:
            out[idx] = ApplyStrategicMergePatch(out[idx], item)
    if set_order:
        order = [_KeyOf(x, key) for x in set_order]
        out.sort(key=lambda x: order.index(_KeyOf(x, key)) if _KeyOf(x, key) in order else len(order))
    return out


def ApplyStrategicMergePatch(doc, patch):
    """Apply a strategic merge patch (the subset kubectl produces) to a copy of doc."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$retainKeys", "$patch"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            out[field] = [x for x in out.get(field, []) if x not in (v or [])]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            merged = ApplyStrategicMergePatch(out.get(k), v)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        elif isinstance(v, list):
            out[k] = _MergeList(k, out.get(k) if isinstance(out.get(k), list) else [], v,
                                patch.get(f"$setElementOrder/{k}"))
        else:
            out[k] = copy.deepcopy(v)
    if retain is not None:
        for k in list(out):
            if k not in retain:
                out.pop(k)
    return out


def StripDirectives(value):
    """Remove $-directives from a value (server-side apply bodies may carry none)."""
    if isinstance(value, dict):
        return {k: StripDirectives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [StripDirectives(v) for v in value]
    return value
