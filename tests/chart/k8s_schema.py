"""Structural Kubernetes schema checks for the kinds the chart renders.

No API server and no OpenAPI document are available offline, so the shapes
below are written out by hand from the Kubernetes API reference, for the
kinds and fields the chart can produce (plus common siblings). Checking is
strict, like `kubectl apply --validate=strict`: an unknown field, a wrong
type, a missing required field, a bad enum value, a malformed name, label or
quantity is an error. check_object(obj) returns a list of "path: message".
"""

import re

# ---- a tiny shape language -------------------------------------------------


class Struct:
    def __init__(self, fields, required=(), preserve_unknown=False):
        self.fields = fields
        self.required = tuple(required)
        self.preserve_unknown = preserve_unknown


class MapOf:
    def __init__(self, item):
        self.item = item


class ListOf:
    def __init__(self, item, max_items=None):
        self.item = item
        self.max_items = max_items


class Enum:
    def __init__(self, *values):
        self.values = values


class Pattern:
    def __init__(self, regex, what, max_len=None):
        self.regex = re.compile(regex)
        self.what = what
        self.max_len = max_len


class Range:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


S, I, B, ANY = "string", "integer", "boolean", "any"
INT_OR_STRING = "int-or-string"
OBJ = "object"  # any JSON object (free-form)

DNS_LABEL = Pattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "a DNS label", 63)
DNS_SUBDOMAIN = Pattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                        "a DNS subdomain", 253)
PORT_NAME = Pattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "an IANA service name", 15)
QUANTITY = Pattern(r"^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?\d+))?$",
                   "a quantity")
PORT = Range(1, 65535)
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

# ---- shared shapes -----------------------------------------------------------

LABELS = "labels"  # checked as label keys/values
META = Struct({
    "name": DNS_SUBDOMAIN, "generateName": S, "namespace": DNS_LABEL,
    "labels": LABELS, "annotations": MapOf(S), "finalizers": ListOf(S),
    "ownerReferences": ListOf(OBJ),
}, required=("name",))
LABEL_SELECTOR = Struct({
    "matchLabels": LABELS,
    "matchExpressions": ListOf(Struct({
        "key": S, "operator": Enum("In", "NotIn", "Exists", "DoesNotExist"), "values": ListOf(S),
    }, required=("key", "operator"))),
})
SECCOMP = Struct({"type": Enum("RuntimeDefault", "Localhost", "Unconfined"), "localhostProfile": S},
                 required=("type",))
POD_SECURITY_CONTEXT = Struct({
    "runAsNonRoot": B, "runAsUser": Range(0, 2**31 - 1), "runAsGroup": Range(0, 2**31 - 1),
    "fsGroup": Range(0, 2**31 - 1),
    "fsGroupChangePolicy": Enum("OnRootMismatch", "Always"), "supplementalGroups": ListOf(I),
    "seccompProfile": SECCOMP, "sysctls": ListOf(OBJ),
})
SECURITY_CONTEXT = Struct({
    "runAsNonRoot": B, "runAsUser": I, "runAsGroup": I, "allowPrivilegeEscalation": B,
    "readOnlyRootFilesystem": B, "privileged": B, "procMount": S,
    "capabilities": Struct({"add": ListOf(S), "drop": ListOf(S)}),
    "seccompProfile": SECCOMP,
})
PROBE = Struct({
    "httpGet": Struct({"path": S, "port": INT_OR_STRING, "host": S, "scheme": Enum("HTTP", "HTTPS"),
                       "httpHeaders": ListOf(OBJ)}, required=("port",)),
    "tcpSocket": Struct({"port": INT_OR_STRING, "host": S}, required=("port",)),
    "exec": Struct({"command": ListOf(S)}),
    "grpc": Struct({"port": I, "service": S}, required=("port",)),
    "initialDelaySeconds": I, "periodSeconds": I, "timeoutSeconds": I,
    "failureThreshold": I, "successThreshold": I, "terminationGracePeriodSeconds": I,
})
KEY_SELECTOR = Struct({"name": S, "key": S, "optional": B}, required=("key",))
ENV_VAR = Struct({
    "name": S, "value": S,
    "valueFrom": Struct({
        "fieldRef": Struct({"fieldPath": S, "apiVersion": S}, required=("fieldPath",)),
        "resourceFieldRef": Struct({"resource": S, "containerName": S, "divisor": QUANTITY},
                                   required=("resource",)),
        "secretKeyRef": KEY_SELECTOR, "configMapKeyRef": KEY_SELECTOR,
    }),
}, required=("name",))
RESOURCES = Struct({"requests": MapOf(QUANTITY), "limits": MapOf(QUANTITY), "claims": ListOf(OBJ)})
CONTAINER = Struct({
    "name": DNS_LABEL, "image": S,
    "imagePullPolicy": Enum("Always", "IfNotPresent", "Never"),
    "command": ListOf(S), "args": ListOf(S), "workingDir": S,
    "env": ListOf(ENV_VAR), "envFrom": ListOf(OBJ),
    "ports": ListOf(Struct({"name": PORT_NAME, "containerPort": PORT, "hostPort": PORT,
                            "hostIP": S, "protocol": Enum("TCP", "UDP", "SCTP")},
                           required=("containerPort",))),
    "livenessProbe": PROBE, "readinessProbe": PROBE, "startupProbe": PROBE,
    "securityContext": SECURITY_CONTEXT, "resources": RESOURCES,
    "volumeMounts": ListOf(Struct({"name": S, "mountPath": S, "readOnly": B, "subPath": S,
                                   "mountPropagation": S}, required=("name", "mountPath"))),
    "restartPolicy": Enum("Always"), "terminationMessagePolicy": S, "terminationMessagePath": S,
}, required=("name",))
TOLERATION = Struct({
    "key": S, "operator": Enum("Exists", "Equal"), "value": S,
    "effect": Enum("NoSchedule", "PreferNoSchedule", "NoExecute", ""), "tolerationSeconds": I,
})
AFFINITY_TERM = Struct({"labelSelector": LABEL_SELECTOR, "namespaceSelector": LABEL_SELECTOR,
                        "namespaces": ListOf(S), "topologyKey": S,
                        "matchLabelKeys": ListOf(S), "mismatchLabelKeys": ListOf(S)},
                       required=("topologyKey",))
POD_AFFINITY = Struct({
    "requiredDuringSchedulingIgnoredDuringExecution": ListOf(AFFINITY_TERM),
    "preferredDuringSchedulingIgnoredDuringExecution": ListOf(Struct(
        {"weight": Range(1, 100), "podAffinityTerm": AFFINITY_TERM},
        required=("weight", "podAffinityTerm"))),
})
VOLUME = Struct({
    "name": DNS_LABEL,
    "secret": Struct({"secretName": DNS_SUBDOMAIN, "defaultMode": Range(0, 0o777),
                      "items": ListOf(OBJ), "optional": B}),
    "configMap": Struct({"name": S, "defaultMode": Range(0, 0o777), "items": ListOf(OBJ),
                         "optional": B}),
    "emptyDir": Struct({"medium": Enum("", "Memory"), "sizeLimit": QUANTITY}),
    "projected": OBJ,
}, required=("name",))
POD_SPEC = Struct({
    "containers": ListOf(CONTAINER), "initContainers": ListOf(CONTAINER),
    "serviceAccountName": DNS_SUBDOMAIN, "automountServiceAccountToken": B,
    "priorityClassName": S, "securityContext": POD_SECURITY_CONTEXT,
    "imagePullSecrets": ListOf(Struct({"name": S}, required=("name",))),
    "affinity": Struct({"nodeAffinity": OBJ, "podAffinity": POD_AFFINITY,
                        "podAntiAffinity": POD_AFFINITY}),
    "nodeSelector": MapOf(S), "tolerations": ListOf(TOLERATION),
    "topologySpreadConstraints": ListOf(Struct({
        "maxSkew": Range(1, 2**31 - 1), "topologyKey": S,
        "whenUnsatisfiable": Enum("DoNotSchedule", "ScheduleAnyway"),
        "labelSelector": LABEL_SELECTOR, "minDomains": Range(1, 2**31 - 1),
        "matchLabelKeys": ListOf(S), "nodeAffinityPolicy": Enum("Honor", "Ignore"),
        "nodeTaintsPolicy": Enum("Honor", "Ignore"),
    }, required=("maxSkew", "topologyKey", "whenUnsatisfiable"))),
    "terminationGracePeriodSeconds": I, "restartPolicy": Enum("Always", "OnFailure", "Never"),
    "volumes": ListOf(VOLUME), "hostNetwork": B,
    "dnsPolicy": Enum("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"),
    "enableServiceLinks": B,
}, required=("containers",))
POD_TEMPLATE = Struct({
    "metadata": Struct({"labels": LABELS, "annotations": MapOf(S), "name": S}),
    "spec": POD_SPEC,
}, required=("spec",))
POLICY_RULE = Struct({"apiGroups": ListOf(S), "resources": ListOf(S), "verbs": ListOf(S),
                      "resourceNames": ListOf(S), "nonResourceURLs": ListOf(S)},
                     required=("verbs",))
ROLE_REF = Struct({"apiGroup": S, "kind": Enum("Role", "ClusterRole"), "name": S},
                  required=("apiGroup", "kind", "name"))
SUBJECT = Struct({"kind": Enum("ServiceAccount", "User", "Group"), "name": S,
                  "namespace": S, "apiGroup": S}, required=("kind", "name"))
WEBHOOK_RULE = Struct({
    "apiGroups": ListOf(S), "apiVersions": ListOf(S), "resources": ListOf(S),
    "operations": ListOf(Enum("CREATE", "UPDATE", "DELETE", "CONNECT", "*")),
    "scope": Enum("Cluster", "Namespaced", "*"),
})


def _webhook(mutating):
    fields = {
        "name": DNS_SUBDOMAIN,
        "clientConfig": Struct({
            "url": S, "caBundle": S,
            "service": Struct({"namespace": S, "name": S, "path": S, "port": PORT},
                              required=("namespace", "name")),
        }),
        "rules": ListOf(WEBHOOK_RULE),
        "failurePolicy": Enum("Fail", "Ignore"),
        "matchPolicy": Enum("Exact", "Equivalent"),
        "namespaceSelector": LABEL_SELECTOR, "objectSelector": LABEL_SELECTOR,
        "sideEffects": Enum("None", "NoneOnDryRun"),
        "timeoutSeconds": Range(1, 30),
        "admissionReviewVersions": ListOf(S),
        "matchConditions": ListOf(Struct({"name": S, "expression": S},
                                         required=("name", "expression")), max_items=64),
    }
    if mutating:
        fields["reinvocationPolicy"] = Enum("Never", "IfNeeded")
    return Struct(fields, required=("name", "clientConfig", "sideEffects", "admissionReviewVersions"))


NETWORK_POLICY_PEER = Struct({
    "podSelector": LABEL_SELECTOR, "namespaceSelector": LABEL_SELECTOR,
    "ipBlock": Struct({"cidr": S, "except": ListOf(S)}, required=("cidr",)),
})
NETWORK_POLICY_PORT = Struct({"port": INT_OR_STRING, "endPort": PORT,
                              "protocol": Enum("TCP", "UDP", "SCTP")})
POD = Struct({"spec": POD_SPEC}, required=("spec",))

DURATION = Pattern(r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$", "a Go duration")

SPECS = {
    ("apps/v1", "Deployment"): Struct({"spec": Struct({
        "replicas": I, "selector": LABEL_SELECTOR, "template": POD_TEMPLATE,
        "strategy": Struct({"type": Enum("Recreate", "RollingUpdate"), "rollingUpdate": Struct(
            {"maxSurge": INT_OR_STRING, "maxUnavailable": INT_OR_STRING})}),
        "minReadySeconds": I, "revisionHistoryLimit": I, "progressDeadlineSeconds": I, "paused": B,
    }, required=("selector", "template"))}, required=("spec",)),
    ("batch/v1", "Job"): Struct({"spec": Struct({
        "template": POD_TEMPLATE, "backoffLimit": I, "activeDeadlineSeconds": I,
        "ttlSecondsAfterFinished": I, "completions": I, "parallelism": I, "podFailurePolicy": OBJ,
    }, required=("template",))}, required=("spec",)),
    # The Grafana dashboard (grafanaDashboard.enabled): text data only.
    ("v1", "ConfigMap"): Struct({"data": MapOf(S), "immutable": B}),
    ("v1", "Service"): Struct({"spec": Struct({
        "type": Enum("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"),
        "selector": MapOf(S), "clusterIP": S, "sessionAffinity": S, "internalTrafficPolicy": S,
        "ports": ListOf(Struct({"name": PORT_NAME, "port": PORT, "targetPort": INT_OR_STRING,
                                "protocol": Enum("TCP", "UDP", "SCTP"), "nodePort": PORT,
                                "appProtocol": S}, required=("port",))),
    })}, required=("spec",)),
    ("v1", "Pod"): POD,
    ("v1", "ResourceQuota"): Struct({"spec": Struct({
        "hard": MapOf(QUANTITY), "scopes": ListOf(S),
        "scopeSelector": Struct({"matchExpressions": ListOf(Struct({
            "scopeName": Enum("Terminating", "NotTerminating", "BestEffort", "NotBestEffort",
                              "PriorityClass", "CrossNamespacePodAffinity",
                              "VolumeAttributesClass"),
            "operator": Enum("In", "NotIn", "Exists", "DoesNotExist"), "values": ListOf(S),
        }, required=("scopeName", "operator")))}),
    })}, required=("spec",)),
    ("networking.k8s.io/v1", "NetworkPolicy"): Struct({"spec": Struct({
        "podSelector": LABEL_SELECTOR, "policyTypes": ListOf(Enum("Ingress", "Egress")),
        "ingress": ListOf(Struct({"from": ListOf(NETWORK_POLICY_PEER), "ports": ListOf(NETWORK_POLICY_PORT)})),
        "egress": ListOf(Struct({"to": ListOf(NETWORK_POLICY_PEER), "ports": ListOf(NETWORK_POLICY_PORT)})),
    }, required=("podSelector",))}, required=("spec",)),
    ("monitoring.coreos.com/v1", "PrometheusRule"): Struct({"spec": Struct({
        "groups": ListOf(Struct({
            "name": S, "interval": DURATION, "limit": I,
            "rules": ListOf(Struct({"alert": S, "record": S, "expr": INT_OR_STRING, "for": DURATION,
                                    "keep_firing_for": DURATION, "labels": MapOf(S),
                                    "annotations": MapOf(S)}, required=("expr",))),
        }, required=("name", "rules"))),
    })}, required=("spec",)),
    ("v1", "ServiceAccount"): Struct({"automountServiceAccountToken": B,
                                      "imagePullSecrets": ListOf(OBJ), "secrets": ListOf(OBJ)}),
    ("policy/v1", "PodDisruptionBudget"): Struct({"spec": Struct({
        "minAvailable": INT_OR_STRING, "maxUnavailable": INT_OR_STRING, "selector": LABEL_SELECTOR,
        "unhealthyPodEvictionPolicy": Enum("IfHealthyBudget", "AlwaysAllow"),
    })}, required=("spec",)),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): Struct({"rules": ListOf(POLICY_RULE),
                                                            "aggregationRule": OBJ}),
    ("rbac.authorization.k8s.io/v1", "Role"): Struct({"rules": ListOf(POLICY_RULE)}),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): Struct(
        {"roleRef": ROLE_REF, "subjects": ListOf(SUBJECT)}, required=("roleRef",)),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): Struct(
        {"roleRef": ROLE_REF, "subjects": ListOf(SUBJECT)}, required=("roleRef",)),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"): Struct(
        {"webhooks": ListOf(_webhook(True))}),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"): Struct(
        {"webhooks": ListOf(_webhook(False))}),
    ("cert-manager.io/v1", "Certificate"): Struct({"spec": Struct({
        "secretName": DNS_SUBDOMAIN, "commonName": S, "dnsNames": ListOf(S),
        "ipAddresses": ListOf(S), "uris": ListOf(S), "duration": DURATION, "renewBefore": DURATION,
        "isCA": B, "secretTemplate": OBJ,
        "privateKey": Struct({"algorithm": Enum("RSA", "ECDSA", "Ed25519"), "size": I,
                              "encoding": Enum("PKCS1", "PKCS8"),
                              "rotationPolicy": Enum("Never", "Always")}),
        "usages": ListOf(Enum("signing", "digital signature", "content commitment",
                              "key encipherment", "key agreement", "data encipherment",
                              "cert sign", "crl sign", "encipher only", "decipher only", "any",
                              "server auth", "client auth", "code signing", "email protection",
                              "s/mime", "ipsec end system", "ipsec tunnel", "ipsec user",
                              "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc")),
        "issuerRef": Struct({"name": S, "kind": S, "group": S}, required=("name",)),
    }, required=("secretName", "issuerRef"))}, required=("spec",)),
    ("cert-manager.io/v1", "Issuer"): Struct({"spec": Struct({
        "selfSigned": Struct({"crlDistributionPoints": ListOf(S)}),
        "ca": Struct({"secretName": S}, required=("secretName",)),
        "acme": OBJ, "vault": OBJ, "venafi": OBJ,
    })}, required=("spec",)),
    ("monitoring.coreos.com/v1", "ServiceMonitor"): Struct({"spec": Struct({
        "selector": LABEL_SELECTOR, "jobLabel": S, "targetLabels": ListOf(S),
        "podTargetLabels": ListOf(S),
        "namespaceSelector": Struct({"any": B, "matchNames": ListOf(S)}),
        "endpoints": ListOf(Struct({
            "port": S, "targetPort": INT_OR_STRING, "path": S, "scheme": Enum("http", "https"),
            "interval": DURATION, "scrapeTimeout": DURATION, "honorLabels": B,
            "tlsConfig": OBJ, "relabelings": ListOf(OBJ), "metricRelabelings": ListOf(OBJ),
        })),
    }, required=("selector",))}, required=("spec",)),
}

# Fields newer than the oldest release a chart may target: (kind, dotted path
# with [] for list items) -> (major, minor) of the first release that serves
# the field by default (beta on by default or GA). check_object(obj,
# kube_version) reports a field the given release does not serve.
FIELD_SINCE = {
    ("PodDisruptionBudget", "spec.unhealthyPodEvictionPolicy"): (1, 27),
    ("ValidatingWebhookConfiguration", "webhooks[].matchConditions"): (1, 28),
    ("MutatingWebhookConfiguration", "webhooks[].matchConditions"): (1, 28),
    ("Deployment", "spec.template.spec.topologySpreadConstraints[].matchLabelKeys"): (1, 27),
    ("Deployment", "spec.template.spec.topologySpreadConstraints[].minDomains"): (1, 27),
    ("Deployment", "spec.template.spec.topologySpreadConstraints[].nodeAffinityPolicy"): (1, 26),
    ("Deployment", "spec.template.spec.topologySpreadConstraints[].nodeTaintsPolicy"): (1, 26),
    ("Deployment", "spec.template.spec.containers[].restartPolicy"): (1, 29),
    ("ResourceQuota", "spec.scopeSelector.matchExpressions[].scopeName=VolumeAttributesClass"): (1, 31),
}

CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration",
                  "ValidatingWebhookConfiguration"}
DNS_LABEL_NAMED = {"Service"}  # kinds whose names must be DNS labels


def _paths(value, prefix=""):
    """Every dotted path in `value` (list items as []), with scalar leaves
    also as path=value."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            p = "%s.%s" % (prefix, k) if prefix else k
            out.add(p)
            out |= _paths(v, p)
    elif isinstance(value, list):
        for v in value:
            out |= _paths(v, prefix + "[]")
    elif isinstance(value, (str, int, bool)):
        out.add("%s=%s" % (prefix, value))
    return out


def parse_version(text):
    """'1.30', 'v1.30.2', '>=1.30.0-0' -> (1, 30)."""
    m = re.search(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2)))


def check_object(obj, kube_version=None):
    errors = []
    if kube_version is not None and isinstance(obj, dict):
        have = _paths(obj)
        for (kind, path), since in FIELD_SINCE.items():
            if obj.get("kind") == kind and path in have and parse_version(kube_version) < since:
                errors.append("%s: %s needs Kubernetes %d.%d" % (kind, path, since[0], since[1]))
    if not isinstance(obj, dict):
        return ["document is not an object"]
    key = (obj.get("apiVersion"), obj.get("kind"))
    spec = SPECS.get(key)
    if spec is None:
        return ["unknown apiVersion/kind %s/%s" % key]
    top = Struct(dict(spec.fields, apiVersion=S, kind=S, metadata=META),
                 required=("apiVersion", "kind", "metadata") + spec.required)
    errors += _check(obj, top, key[1])
    meta = obj.get("metadata", {})
    name = meta.get("name", "")
    if key[1] in DNS_LABEL_NAMED and not _matches(DNS_LABEL, name):
        errors.append("%s: metadata.name %r must be a DNS label" % (key[1], name))
    if key[1] in CLUSTER_SCOPED and "namespace" in meta:
        errors.append("%s: cluster-scoped object has a namespace" % key[1])
    if key[1] not in CLUSTER_SCOPED and not meta.get("namespace"):
        errors.append("%s %s: namespaced object without metadata.namespace" % (key[1], name))
    return errors


def _matches(pattern, value):
    if not isinstance(value, str):
        return False
    if pattern.max_len is not None and len(value) > pattern.max_len:
        return False
    return bool(pattern.regex.match(value))


def _check_labels(value, path):
    if not isinstance(value, dict):
        return ["%s: want a map of labels" % path]
    errors = []
    for k, v in value.items():
        prefix, _, name = k.rpartition("/")
        if prefix and not _matches(DNS_SUBDOMAIN, prefix):
            errors.append("%s: label key prefix %r" % (path, k))
        if not (len(name) <= 63 and _QUALIFIED_NAME.match(name)):
            errors.append("%s: label key %r" % (path, k))
        if not (isinstance(v, str) and len(v) <= 63 and _LABEL_VALUE.match(v)):
            errors.append("%s: label value %r of %r" % (path, v, k))
    return errors


def _check(value, shape, path):
    if shape is ANY:
        return []
    if shape is LABELS:
        return _check_labels(value, path)
    if shape is OBJ:
        return [] if isinstance(value, dict) else ["%s: want an object" % path]
    if shape is S:
        return [] if isinstance(value, str) else ["%s: want a string, got %r" % (path, value)]
    if shape is I:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else ["%s: want an integer, got %r" % (path, value)]
    if shape is B:
        return [] if isinstance(value, bool) else ["%s: want a boolean, got %r" % (path, value)]
    if shape is INT_OR_STRING:
        ok = isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
        return [] if ok else ["%s: want an integer or a string, got %r" % (path, value)]
    if isinstance(shape, Range):
        ok = isinstance(value, int) and not isinstance(value, bool) and shape.lo <= value <= shape.hi
        return [] if ok else ["%s: want an integer in [%d, %d], got %r" % (path, shape.lo, shape.hi, value)]
    if isinstance(shape, Enum):
        return [] if value in shape.values else ["%s: %r not in %r" % (path, value, shape.values)]
    if isinstance(shape, Pattern):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and shape is QUANTITY:
            return []
        return [] if _matches(shape, value) else ["%s: %r is not %s" % (path, value, shape.what)]
    if isinstance(shape, MapOf):
        if not isinstance(value, dict):
            return ["%s: want a map" % path]
        errors = []
        for k, v in value.items():
            errors += _check(v, shape.item, "%s[%s]" % (path, k))
        return errors
    if isinstance(shape, ListOf):
        if not isinstance(value, list):
            return ["%s: want a list, got %r" % (path, value)]
        errors = []
        if shape.max_items is not None and len(value) > shape.max_items:
            errors.append("%s: more than %d items" % (path, shape.max_items))
        for i, v in enumerate(value):
            errors += _check(v, shape.item, "%s[%d]" % (path, i))
        return errors
    if isinstance(shape, Struct):
        if not isinstance(value, dict):
            return ["%s: want an object, got %r" % (path, value)]
        errors = []
        for req in shape.required:
            if req not in value or value[req] is None:
                errors.append("%s: missing required field %s" % (path, req))
        for k, v in value.items():
            if k in shape.fields:
                if v is not None:
                    errors += _check(v, shape.fields[k], "%s.%s" % (path, k))
            elif not shape.preserve_unknown:
                errors.append("%s: unknown field %s" % (path, k))
        return errors
    raise TypeError("bad shape at %s: %r" % (path, shape))
