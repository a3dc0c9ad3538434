"""Decoding of the Kubernetes protobuf envelope for the bodies kubectl's generator
commands send (`kubectl create namespace`, `kubectl create deployment`).

Only the kinds listed in KINDS are decoded, with the common fields of their messages
(field numbers from k8s.io/api generated.proto); unknown field numbers are skipped.
Everything else answers 415. Pure; thread-safe.
"""

MAGIC = b"k8s\x00"


class ProtoError(ValueError):
    pass


# message name -> {field number: (json name, type, repeated)}; type is "str", "int",
# "bool", "time", "intstr", "map:<value type>" or another message name.
S, I, B = "str", "int", "bool"
MESSAGES = {
    "TypeMeta": {1: ("apiVersion", S, False), 2: ("kind", S, False)},
    "Unknown": {1: ("typeMeta", "TypeMeta", False), 2: ("raw", "bytes", False),
                3: ("contentEncoding", S, False), 4: ("contentType", S, False)},
    "ObjectMeta": {1: ("name", S, False), 2: ("generateName", S, False), 3: ("namespace", S, False),
                   5: ("uid", S, False), 6: ("resourceVersion", S, False), 7: ("generation", I, False),
                   8: ("creationTimestamp", "time", False), 11: ("labels", "map:str", False),
                   12: ("annotations", "map:str", False), 13: ("ownerReferences", "OwnerReference", True),
                   14: ("finalizers", S, True)},
    "OwnerReference": {1: ("kind", S, False), 3: ("name", S, False), 4: ("uid", S, False),
                       5: ("apiVersion", S, False), 6: ("controller", B, False),
                       7: ("blockOwnerDeletion", B, False)},
    "Namespace": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "NamespaceSpec", False)},
    "ConfigMap": {1: ("metadata", "ObjectMeta", False), 2: ("data", "map:str", False),
                  4: ("immutable", B, False)},
    "Secret": {1: ("metadata", "ObjectMeta", False), 2: ("data", "map:b64", False), 3: ("type", S, False),
               4: ("stringData", "map:str", False)},
    "NamespaceSpec": {1: ("finalizers", S, True)},
    "Deployment": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "DeploymentSpec", False)},
    "DeploymentSpec": {1: ("replicas", I, False), 2: ("selector", "LabelSelector", False),
                       3: ("template", "PodTemplateSpec", False), 4: ("strategy", "DeploymentStrategy", False),
                       5: ("minReadySeconds", I, False), 6: ("revisionHistoryLimit", I, False),
                       7: ("paused", B, False), 9: ("progressDeadlineSeconds", I, False)},
    "DeploymentStrategy": {1: ("type", S, False), 2: ("rollingUpdate", "RollingUpdateDeployment", False)},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "intstr", False), 2: ("maxSurge", "intstr", False)},
    "LabelSelector": {1: ("matchLabels", "map:str", False),
                      2: ("matchExpressions", "LabelSelectorRequirement", True)},
    "LabelSelectorRequirement": {1: ("key", S, False), 2: ("operator", S, False), 3: ("values", S, True)},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta", False), 2: ("spec", "PodSpec", False)},
    "PodSpec": {2: ("containers", "Container", True), 3: ("restartPolicy", S, False),
                4: ("terminationGracePeriodSeconds", I, False), 6: ("dnsPolicy", S, False),
                7: ("nodeSelector", "map:str", False), 8: ("serviceAccountName", S, False),
                19: ("schedulerName", S, False), 20: ("initContainers", "Container", True),
                24: ("priorityClassName", S, False)},
    "Container": {1: ("name", S, False), 2: ("image", S, False), 3: ("command", S, True),
                  4: ("args", S, True), 6: ("ports", "ContainerPort", True), 7: ("env", "EnvVar", True),
                  8: ("resources", "ResourceRequirements", False), 14: ("imagePullPolicy", S, False)},
    "ContainerPort": {1: ("name", S, False), 3: ("containerPort", I, False), 4: ("protocol", S, False)},
    "EnvVar": {1: ("name", S, False), 2: ("value", S, False)},
    "ResourceRequirements": {1: ("limits", "map:Quantity", False), 2: ("requests", "map:Quantity", False)},
    "Quantity": {1: ("string", S, False)},
    "Time": {1: ("seconds", I, False), 2: ("nanos", I, False)},
    "IntOrString": {1: ("type", I, False), 2: ("intVal", I, False), 3: ("strVal", S, False)},
    "MapEntry": {1: ("key", S, False), 2: ("value", "bytes", False)},
}
KINDS = {("v1", "Namespace"): "Namespace", ("apps/v1", "Deployment"): "Deployment",
         ("v1", "ConfigMap"): "ConfigMap", ("v1", "Secret"): "Secret"}


def _Varint(data, i):
    shift = result = 0
    while True:
        if i >= len(data):
            raise ProtoError("truncated varint")
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _Fields(data):
    i = 0
    while i < len(data):
        key, i = _Varint(data, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            val, i = _Varint(data, i)
        elif wire == 2:
            n, i = _Varint(data, i)
            val, i = data[i:i + n], i + n
        elif wire == 1:
            val, i = data[i:i + 8], i + 8
        elif wire == 5:
            val, i = data[i:i + 4], i + 4
        else:
            raise ProtoError(f"unsupported wire type {wire}")
        yield num, wire, val


def _Value(typ, val):
    if typ == S:
        return val.decode()
    if typ == "bytes":
        return val
    if typ == I:
        return val - (1 << 64) if val >= 1 << 63 else val
    if typ == B:
        return bool(val)
    if typ == "time":
        t = Decode("Time", val)
        if not t.get("seconds"):
            return None
        import datetime
        return datetime.datetime.fromtimestamp(t["seconds"], datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if typ == "intstr":
        v = Decode("IntOrString", val)
        return v.get("strVal", "") if v.get("type") == 1 else v.get("intVal", 0)
    return Decode(typ, val)


def Decode(message, data):
    """Decode one message into a JSON-like dict."""
    fields = MESSAGES[message]
    out = {}
    for num, _, val in _Fields(data):
        if num not in fields:
            continue
        name, typ, repeated = fields[num]
        if typ.startswith("map:"):
            entry = Decode("MapEntry", val)
            vt = typ[4:]
            v = entry.get("value", b"")
            if vt == S:
                v = v.decode()
            elif vt == "b64":
                import base64
                v = base64.b64encode(v).decode()
            else:
                v = Decode(vt, v).get("string", "")
            out.setdefault(name, {})[entry.get("key", "")] = v
            continue
        value = _Value(typ, val)
        if repeated:
            out.setdefault(name, []).append(value)
        elif value is not None and value != "":  # Go's zero string means "unset"
            out[name] = value
    return out


def DecodeObject(body):
    """Envelope bytes → JSON object with apiVersion and kind; raises ProtoError."""
    if not body.startswith(MAGIC):
        raise ProtoError("missing protobuf magic")
    unknown = Decode("Unknown", body[len(MAGIC):])
    tm = unknown.get("typeMeta") or {}
    key = (tm.get("apiVersion", ""), tm.get("kind", ""))
    if key not in KINDS:
        raise ProtoError(f"protobuf bodies of {key[0]}, Kind={key[1]} are not supported")
    obj = Decode(KINDS[key], unknown.get("raw", b""))
    return dict({"apiVersion": key[0], "kind": key[1]}, **obj)
