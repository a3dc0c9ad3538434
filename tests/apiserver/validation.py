"""A few of kube-apiserver's own validation rules (the ones wasd's flows can hit).

Each function returns a list of causes (field, reason, message-without-path) in the
order kube reports them; values print as JSON where Go would print %#v (see README).
Pure; thread-safe.
"""
import json
import re

from . import crds
from . import labelsel as selectors

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_RE = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_LABEL_RE = re.compile(rf"^{_LABEL}$")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                 "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                 "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
             "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
             "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def _Q(v):
    return json.dumps(v, separators=(",", ":"))


def Subdomain(path, value):
    if not isinstance(value, str):
        return [(path, "FieldValueInvalid", f"Invalid value: {_Q(value)}: must be a string")]
    out = []
    if len(value) > 253:
        out.append((path, "FieldValueInvalid", f"Invalid value: {_Q(value)}: must be no more than 253 characters"))
    if not _SUBDOMAIN_RE.match(value):
        out.append((path, "FieldValueInvalid", f"Invalid value: {_Q(value)}: {SUBDOMAIN_MSG}"))
    return out


def DnsLabel(path, value):
    out = []
    if len(value) > 63:
        out.append((path, "FieldValueInvalid", f"Invalid value: {_Q(value)}: must be no more than 63 characters"))
    if not _LABEL_RE.match(value):
        out.append((path, "FieldValueInvalid", f"Invalid value: {_Q(value)}: {LABEL_MSG}"))
    return out


# apimachinery's TotalAnnotationSizeLimitB: all annotations of an object together.
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def AnnotationsSize(annotations):
    """ValidateAnnotationsSize: the bytes of every key and value (Go's len of a string)."""
    return sum(len(str(k).encode()) + len(str(v).encode()) for k, v in (annotations or {}).items())


def Meta(res, obj):
    """ObjectMeta rules, in kube's order: name, then annotations (their total size)."""
    name = obj["metadata"].get("name", "")
    if res.key == "/namespaces":
        out = DnsLabel("metadata.name", name)
    elif res.key in ("/events", "events.k8s.io/events"):
        out = []
    else:
        out = Subdomain("metadata.name", name)
    if AnnotationsSize(obj["metadata"].get("annotations")) > TOTAL_ANNOTATION_SIZE_LIMIT:
        # field.TooLong(fldPath, "", TotalAnnotationSizeLimitB): the value is not printed.
        out.append(("metadata.annotations", "FieldValueTooLong",
                    f"Too long: must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))
    return out


def _Required(path):
    return [(path, "FieldValueRequired", "Required value")]


def PodSpec(spec, path, template):
    out = []
    if not spec.get("containers"):
        out += _Required(f"{path}.containers")
    for i, c in enumerate(spec.get("containers") or []):
        if not c.get("name"):
            out += _Required(f"{path}.containers[{i}].name")
        if not c.get("image"):
            out += _Required(f"{path}.containers[{i}].image")
    if template and spec.get("restartPolicy") not in (None, "Always"):
        out.append((f"{path}.restartPolicy", "FieldValueNotSupported",
                    f'Unsupported value: {_Q(spec["restartPolicy"])}: supported values: "Always"'))
    group = spec.get("schedulingGroup")
    if group is not None:
        pg = group.get("podGroupName") if isinstance(group, dict) else None
        if pg is not None:
            out += Subdomain(f"{path}.schedulingGroup.podGroupName", pg)
    names = set()
    for i, g in enumerate(spec.get("schedulingGates") or []):
        if g.get("name") in names:
            out.append((f"{path}.schedulingGates[{i}].name", "FieldValueDuplicate",
                        f"Duplicate value: {_Q(g.get('name'))}"))
        names.add(g.get("name"))
    return out


def Workload(spec, kind):
    """Deployment / ReplicaSet spec rules."""
    out = []
    if spec.get("replicas", 0) < 0:
        out.append(("spec.replicas", "FieldValueInvalid",
                    f"Invalid value: {spec['replicas']}: must be greater than or equal to 0"))
    sel = spec.get("selector")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not sel or (not sel.get("matchLabels") and not sel.get("matchExpressions")):
        out += [("spec.selector", "FieldValueRequired", "Required value")] if not sel else \
            [("spec.selector", "FieldValueInvalid", "Invalid value: {}: empty selector is invalid for deployment")]
    else:
        try:
            if not selectors.MatchLabelSelector(sel, labels):
                out.append(("spec.template.metadata.labels", "FieldValueInvalid",
                            f"Invalid value: {_Q(labels)}: `selector` does not match template `labels`"))
        except selectors.SelectorError as e:
            out.append(("spec.selector", "FieldValueInvalid", f"Invalid value: {_Q(sel)}: {e}"))
    strategy = spec.get("strategy") or {}
    if kind == "Deployment":
        if strategy.get("type") == "Recreate" and strategy.get("rollingUpdate") is not None:
            out.append(("spec.strategy.rollingUpdate", "FieldValueForbidden",
                        "Forbidden: may not be specified when strategy `type` is 'Recreate'"))
        if strategy.get("type") not in ("Recreate", "RollingUpdate"):
            out.append(("spec.strategy.type", "FieldValueNotSupported",
                        f'Unsupported value: {_Q(strategy.get("type"))}: supported values: "Recreate", "RollingUpdate"'))
    out += PodSpec((spec.get("template") or {}).get("spec") or {}, "spec.template.spec", True)
    return out


def WorkloadUpdate(old, new):
    if old["spec"].get("selector") != new["spec"].get("selector"):
        return [("spec.selector", "FieldValueInvalid",
                 f"Invalid value: {_Q(new['spec'].get('selector'))}: field is immutable")]
    return []


# Pod fields kube lets an update change (pkg/apis/core/validation ValidatePodSpecUpdate).
_MUTABLE_POD_SPEC = ("activeDeadlineSeconds", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")


def PodUpdate(old, new):
    out = []
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    old_gates = [g.get("name") for g in os_.get("schedulingGates") or []]
    for g in ns_.get("schedulingGates") or []:
        if g.get("name") not in old_gates:
            out.append(("spec.schedulingGates", "FieldValueForbidden",
                        f"Forbidden: only deletion is allowed, but found new scheduling gate '{g.get('name')}'"))
    def Strip(spec):
        s = {k: v for k, v in spec.items() if k not in _MUTABLE_POD_SPEC}
        s["containers"] = [{k: v for k, v in c.items() if k != "image"} for c in s.get("containers") or []]
        s["initContainers"] = [{k: v for k, v in c.items() if k != "image"} for c in s.get("initContainers") or []]
        if not os_.get("nodeName"):
            s.pop("nodeName", None)
        return s
    if Strip(os_) != Strip(ns_):
        out.append(("spec", "FieldValueForbidden",
                    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                    "(allow it to be set to 1 if it was previously negative)"))
    return out


def PodGroup(obj):
    out = []
    spec = obj.get("spec") or {}
    policy = spec.get("schedulingPolicy")
    if not isinstance(policy, dict):
        return [("spec.schedulingPolicy", "FieldValueRequired", "Required value")]
    members = [k for k in ("basic", "gang") if k in policy]
    if not members:
        out.append(("spec.schedulingPolicy", "FieldValueInvalid", 'Invalid value: "": must specify one of: `basic`, `gang`'))
    elif len(members) > 1:
        out.append(("spec.schedulingPolicy", "FieldValueInvalid",
                    'Invalid value: "{basic, gang}": must specify exactly one of: `basic`, `gang`'))
    gang = policy.get("gang")
    if isinstance(gang, dict) and (not isinstance(gang.get("minCount"), int) or gang["minCount"] < 1):
        out.append(("spec.schedulingPolicy.gang.minCount", "FieldValueInvalid",
                    f"Invalid value: {_Q(gang.get('minCount'))}: must be greater than or equal to 1"))
    return out


def WorkloadObject(obj):
    out = []
    tmpls = (obj.get("spec") or {}).get("podGroupTemplates")
    if not isinstance(tmpls, list) or not tmpls:
        return [("spec.podGroupTemplates", "FieldValueRequired", "Required value")]
    if len(tmpls) > 8:
        out.append(("spec.podGroupTemplates", "FieldValueTooMany", f"Too many: {len(tmpls)}: must have at most 8 items"))
    for i, t in enumerate(tmpls):
        out += DnsLabel(f"spec.podGroupTemplates[{i}].name", t.get("name") or "")
    return out


def Validate(res, obj, old):
    """All rules for a create (old is None) or an update."""
    out = Meta(res, obj)
    key = res.key
    if key in ("apps/deployments", "apps/replicasets"):
        out += Workload(obj.get("spec") or {}, res.kind)
        if old is not None:
            out += WorkloadUpdate(old, obj)
    elif key == "/pods":
        if old is None:
            out += PodSpec(obj.get("spec") or {}, "spec", False)
        else:
            out += PodUpdate(old, obj)
    elif key == "scheduling.k8s.io/podgroups":
        out += PodGroup(obj)
    elif key == "scheduling.k8s.io/workloads":
        out += WorkloadObject(obj)
    elif key in crds.SCHEMAS:
        out += crds.Validate(key, obj)
    return out
