"""Known-field schemas for strict decoding (fieldValidation=Strict|Warn|Ignore).

Each schema is a dict of field name → sub-schema, where ANY means "not checked
below this point" and [schema] means "a list of items of that schema". Deployment,
ReplicaSet and Pod are checked down to containers; deeper structures (probes,
affinity, volumes sources, security contexts) are not. Other kinds are not checked.
Pure data and functions; thread-safe.
"""

ANY = None

META = {k: ANY for k in (
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "finalizers", "managedFields")}
META["ownerReferences"] = [{k: ANY for k in (
    "apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")}]

LABEL_SELECTOR = {"matchLabels": ANY,
                  "matchExpressions": [{"key": ANY, "operator": ANY, "values": ANY}]}

CONTAINER = {k: ANY for k in (
    "name", "image", "command", "args", "workingDir", "envFrom", "resizePolicy",
    "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe",
    "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce",
    "tty", "targetContainerName")}
CONTAINER["ports"] = [{k: ANY for k in ("name", "hostPort", "containerPort", "protocol", "hostIP")}]
CONTAINER["env"] = [{"name": ANY, "value": ANY, "valueFrom": ANY}]
CONTAINER["resources"] = {"limits": ANY, "requests": ANY, "claims": [{"name": ANY, "request": ANY}]}

POD_SPEC = {k: ANY for k in (
    "volumes", "restartPolicy", "terminationGracePeriodSeconds", "activeDeadlineSeconds",
    "dnsPolicy", "nodeSelector", "serviceAccountName", "serviceAccount",
    "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC",
    "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname", "subdomain",
    "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority",
    "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy",
    "overhead", "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers",
    "resourceClaims", "resources", "hostnameOverride")}
POD_SPEC["containers"] = [CONTAINER]
POD_SPEC["initContainers"] = [CONTAINER]
POD_SPEC["ephemeralContainers"] = [CONTAINER]
POD_SPEC["schedulingGates"] = [{"name": ANY}]
POD_SPEC["schedulingGroup"] = {"podGroupName": ANY}

POD_TEMPLATE = {"metadata": META, "spec": POD_SPEC}

DEPLOYMENT = {
    "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
    "spec": {
        "replicas": ANY, "selector": LABEL_SELECTOR, "template": POD_TEMPLATE,
        "strategy": {"type": ANY, "rollingUpdate": {"maxUnavailable": ANY, "maxSurge": ANY}},
        "minReadySeconds": ANY, "revisionHistoryLimit": ANY, "paused": ANY,
        "progressDeadlineSeconds": ANY,
        # KEP-6276: a field of the Deployment type only in a release with the in-tree
        # integration (--in-tree-deployment). v1.37.2, the release this server plays
        # otherwise, has no such field: DEPLOYMENT_1_37 below, where strict decoding
        # refuses it as an unknown field, as the real API server does
        # (tests/cluster/test_examples_real.py).
        "scheduling": ANY,
    },
}
DEPLOYMENT_1_37 = {**DEPLOYMENT, "spec": {k: v for k, v in DEPLOYMENT["spec"].items() if k != "scheduling"}}
REPLICASET = {
    "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
    "spec": {"replicas": ANY, "minReadySeconds": ANY, "selector": LABEL_SELECTOR,
             "template": POD_TEMPLATE},
}
POD = {"apiVersion": ANY, "kind": ANY, "metadata": META, "spec": POD_SPEC, "status": ANY}
SCALE = {"apiVersion": ANY, "kind": ANY, "metadata": META,
         "spec": {"replicas": ANY}, "status": ANY}

SCHEMAS = {
    "apps/deployments": DEPLOYMENT,
    "apps/replicasets": REPLICASET,
    "/pods": POD,
    "scale": SCALE,
}


def UnknownFields(schema, value, path=""):
    """Return the dotted paths of fields not in schema, in document order."""
    out = []
    if schema is ANY:
        return out
    if isinstance(schema, list):
        if isinstance(value, list):
            for i, item in enumerate(value):
                out.extend(UnknownFields(schema[0], item, f"{path}[{i}]"))
        return out
    if not isinstance(value, dict):
        return out
    for k, v in value.items():
        sub = f"{path}.{k}" if path else k
        if k not in schema:
            out.append(sub)
        else:
            out.extend(UnknownFields(schema[k], v, sub))
    return out


def Prune(schema, value):
    """Drop unknown fields (what lenient decoding does). Returns a new value."""
    if schema is ANY:
        return value
    if isinstance(schema, list):
        return [Prune(schema[0], v) for v in value] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    return {k: Prune(schema[k], v) for k, v in value.items() if k in schema}


def StrictMessage(paths):
    return "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in paths)
