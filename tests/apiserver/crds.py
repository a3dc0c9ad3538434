"""The gang schedulers' PodGroup CRDs, served as kube-apiserver serves a CRD.

Three custom resources (issue 16): Volcano `scheduling.volcano.sh/v1beta1`, KAI-Scheduler
`scheduling.run.ai/v2alpha2` and scheduler-plugins coscheduling `scheduling.x-k8s.io/v1alpha1`
PodGroups (and Volcano's cluster-scoped Queue, which the gang scheduler's enqueue step reads), each with a structural schema holding the real field names and types (from the
projects' Go types; see the research notes, §A.2–A.4). Like the API server with a CRD:

* unknown fields are pruned (fieldValidation Warn: a warning each; Strict: refused);
* a value of the wrong type, below a minimum or outside an enum is refused with 422 Invalid,
  in kube's words (`spec.minMember: Invalid value: "string": spec.minMember in body must be
  of type integer: "string"`);
* `status` is a subresource: the main resource ignores status changes, /status ignores the
  rest (done by the generic code for every resource with status=True).

A group can be switched off (not served: absent from discovery, 404 on every path) with
`--disable-group` or `PUT /debug/groups`; see registry.SetDisabledGroups.

Pure data and functions; thread-safe.
"""
import json

from . import registry

# Schema nodes: {"type": ..., "properties": {...}, "items": node, "additionalProperties": node,
# "minimum": n, "enum": [...], "int-or-string": True, "preserve": True (x-kubernetes-preserve-
# unknown-fields: nothing below is checked or pruned)}.


def Obj(props=None, **kw):
    out = {"type": "object", "properties": props or {}}
    out.update(kw)
    return out


def Int(minimum=None):
    out = {"type": "integer"}
    if minimum is not None:
        out["minimum"] = minimum
    return out


STR = {"type": "string"}
BOOL = {"type": "boolean"}
QUANTITY = {"int-or-string": True}
RESOURCE_LIST = {"type": "object", "additionalProperties": QUANTITY}
PRESERVE = {"type": "object", "preserve": True}
CONDITIONS = {"type": "array", "items": Obj({
    "type": STR, "status": STR, "transitionID": STR, "lastTransitionTime": STR, "reason": STR,
    "message": STR})}

VOLCANO_NETWORK_TOPOLOGY = Obj({"mode": {"type": "string", "enum": ["hard", "soft"]},
                                "highestTierAllowed": Int(), "highestTierName": STR})
VOLCANO = Obj({
    "spec": Obj({
        "minMember": Int(0),
        "minTaskMember": {"type": "object", "additionalProperties": Int()},
        "queue": STR,
        "priorityClassName": STR,
        "minResources": RESOURCE_LIST,
        "networkTopology": VOLCANO_NETWORK_TOPOLOGY,
        "subGroupPolicy": {"type": "array", "items": Obj({
            "name": STR, "subGroupSize": Int(), "minSubGroups": Int(),
            "networkTopology": VOLCANO_NETWORK_TOPOLOGY, "labelSelector": PRESERVE,
            "matchLabelKeys": {"type": "array", "items": STR}})},
    }),
    "status": Obj({
        "phase": STR, "conditions": CONDITIONS, "running": Int(), "succeeded": Int(),
        "failed": Int()}),
})

# Volcano's Queue (cluster-scoped): a PodGroup's spec.queue. Volcano's queue controller sets
# status.state (Open unless closed with `vcctl queue operate --action close`); here a test
# writes it on /status, standing in for that controller. The gang scheduler
# (scheduler.py) reads state and spec.capability for its enqueue step.
VOLCANO_QUEUE = Obj({
    "spec": Obj({
        "weight": Int(1),
        "capability": RESOURCE_LIST,
        "deserved": RESOURCE_LIST,
        "guarantee": Obj({"resource": RESOURCE_LIST}),
        "reclaimable": BOOL,
        "parent": STR,
        "priority": Int(),
        "type": STR,
        "affinity": PRESERVE,
        "extendClusters": {"type": "array", "items": PRESERVE},
    }),
    "status": Obj({
        "state": {"type": "string", "enum": ["Open", "Closed", "Closing", "Unknown"]},
        "pending": Int(), "running": Int(), "inqueue": Int(), "completed": Int(), "unknown": Int(),
        "allocated": RESOURCE_LIST, "reservation": PRESERVE,
    }),
})

KAI_TOPOLOGY = Obj({"topology": STR, "requiredTopologyLevel": STR, "preferredTopologyLevel": STR})
KAI = Obj({
    "spec": Obj({
        # minimum 1 on the group, 0 on a subGroup: as the published CRD
        # (tests/testdata/crds/kai) says
        "minMember": Int(1),
        "minSubGroup": Int(1),
        "queue": STR,
        "priorityClassName": STR,
        "preemptibility": {"type": "string", "enum": ["preemptible", "non-preemptible"]},
        "topologyConstraint": KAI_TOPOLOGY,
        "subGroups": {"type": "array", "items": Obj({
            "name": STR, "minMember": Int(0), "minSubGroup": Int(0), "parent": STR,
            "topologyConstraint": KAI_TOPOLOGY})},
        "markUnschedulable": BOOL,
        "schedulingBackoff": Int(),
        "preemptionDelay": STR,
        # a Go duration ("60s"; negative: never evict), read by --gang-scheduler=kai
        "stalenessGracePeriod": STR,
    }),
    "status": Obj({
        "schedulingConditions": {"type": "array", "items": PRESERVE},
        "pending": Int(), "running": Int(), "succeeded": Int(), "failed": Int(),
        "resourcesStatus": PRESERVE,
    }),
})

COSCHEDULING = Obj({
    "spec": Obj({
        "minMember": Int(1),
        "minResources": RESOURCE_LIST,
        "scheduleTimeoutSeconds": Int(),
    }),
    "status": Obj({
        "phase": {"type": "string", "enum": ["Pending", "PreScheduling", "Scheduling",
                                              "Scheduled", "Running", "Unknown", "Finished",
                                              "Failed"]},
        "occupiedBy": STR, "scheduled": Int(), "running": Int(), "succeeded": Int(),
        "failed": Int(), "scheduleStartTime": STR,
    }),
})

# Storage key → schema of everything but apiVersion/kind/metadata.
SCHEMAS = {
    "scheduling.volcano.sh/podgroups": VOLCANO,
    "scheduling.volcano.sh/queues": VOLCANO_QUEUE,
    "scheduling.run.ai/podgroups": KAI,
    "scheduling.x-k8s.io/podgroups": COSCHEDULING,
}

RESOURCES = [
    registry.Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup",
                      short=["pg", "podgroup-v1beta1"], status=True),
    registry.Resource("scheduling.volcano.sh", "v1beta1", "queues", "Queue", namespaced=False,
                      short=["q", "queue-v1beta1"], status=True),
    registry.Resource("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", status=True),
    registry.Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", status=True),
]


def KnownFields(node):
    """The schema module's known-field form of a structural schema (for pruning)."""
    if node is None or node.get("preserve") or node.get("int-or-string"):
        return None  # schema.ANY
    if node.get("type") == "array":
        return [KnownFields(node.get("items"))]
    if node.get("type") == "object":
        if "additionalProperties" in node:
            return None
        return {k: KnownFields(v) for k, v in node.get("properties", {}).items()}
    return None


def _TypeName(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _Quote(value):
    return json.dumps(value) if isinstance(value, str) else json.dumps(value)


def Check(node, value, path):
    """Causes (field, reason, message) for `value` against schema `node`, as kube words them."""
    if node is None or node.get("preserve"):
        return []
    got = _TypeName(value)
    if node.get("int-or-string"):
        if got in ("integer", "string"):
            return []
        return [(path, "FieldValueInvalid",
                 f'Invalid value: "{got}": {path} in body must be of type integer,string: "{got}"')]
    want = node.get("type")
    if value is None:
        return []  # null is dropped like an absent field (nullable is off; kube prunes it)
    if want and got != want and not (want == "number" and got == "integer"):
        return [(path, "FieldValueTypeInvalid",
                 f'Invalid value: "{got}": {path} in body must be of type {want}: "{got}"')]
    out = []
    if "enum" in node and value not in node["enum"]:
        supported = ", ".join(_Quote(v) for v in node["enum"])
        out.append((path, "FieldValueNotSupported",
                    f"Unsupported value: {_Quote(value)}: supported values: {supported}"))
    if "minimum" in node and value < node["minimum"]:
        out.append((path, "FieldValueInvalid",
                    f"Invalid value: {value}: {path} in body should be greater than or equal to "
                    f"{node['minimum']}"))
    if want == "object":
        props = node.get("properties", {})
        extra = node.get("additionalProperties")
        for k, v in value.items():
            sub = f"{path}.{k}" if path else k
            if k in props:
                out += Check(props[k], v, sub)
            elif extra is not None:
                out += Check(extra, v, sub)
    elif want == "array":
        for i, item in enumerate(value):
            out += Check(node.get("items"), item, f"{path}[{i}]")
    return out


def Validate(key, obj):
    """Schema validation of a custom resource (everything but metadata)."""
    node = SCHEMAS.get(key)
    if node is None:
        return []
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    return Check(node, body, "")


def Register(schema_module):
    """Adds the CRDs to the registry and their known fields to the pruning schemas."""
    for r in RESOURCES:
        if r.key in registry.BY_KEY:
            continue
        registry.RESOURCES.append(r)
        registry.BY_PATH[(r.group, r.version, r.plural)] = r
        registry.BY_KEY[r.key] = r
        registry.BY_KIND[(r.group, r.kind)] = r
        known = KnownFields(SCHEMAS[r.key])
        known.update({"apiVersion": None, "kind": None, "metadata": schema_module.META})
        schema_module.SCHEMAS[r.key] = known


GROUPS = [r.group for r in RESOURCES]
