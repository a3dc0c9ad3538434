"""KEP-6276 (Workload-aware scheduling for Deployments) as kube-apiserver and
kube-controller-manager would play it with the `WorkloadWithDeployment` gate
(`--in-tree-deployment`), and the gate-off behaviour of the field otherwise.

API side (the Deployment strategy and validation, pkg/registry/apps/deployment/strategy.go):
* gate off: `spec.scheduling` is dropped by PrepareForCreate / PrepareForUpdate (kube's
  dropDisabledFields: kept on update only when the stored object already uses it) — after
  the mutating webhooks, before validation and the validating webhooks;
* gate on: the field is kept; it cannot be added to or removed from an existing Deployment
  (the `+k8s:update=NoSet`/`NoUnset` markers: `field cannot be set once created`,
  `field cannot be cleared once set`), its parts are immutable except
  `schedulingPolicy.gang.minCount`, and the KEP's hand-written rules apply: gang needs the
  Recreate strategy, an explicit minCount may not exceed replicas, and a template that
  already sets `spec.schedulingGroup` may not be combined with it (messages are ours: the
  upstream code does not exist yet).

Controller side (pkg/controller/deployment and pkg/controller/replicaset per the KEP):
* one Workload per Deployment, `<deployment>-<hash of its UID>`, controller-owned by the
  Deployment, `spec.controllerRef` naming it, one PodGroupTemplate (named like the
  Workload) whose gang minCount is the user's or the replica count (1 at zero replicas);
* one PodGroup per ReplicaSet with replicas > 0, `<deployment>-<pod-template-hash>`,
  controller-owned by the ReplicaSet with a second (non-controller) owner reference to the
  Workload and `spec.workloadRef` to it, minCount inherited from the template, deleted when
  the ReplicaSet goes to zero;
* each pod gets `spec.schedulingGroup.podGroupName` and a non-controller owner reference
  to its PodGroup when it is created (the ReplicaSet's template is left alone).
Pure functions here; controllers.py calls them and writes through the API.
"""
import copy
import json

SCHEDULING_KEY = "scheduling"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def _Q(v):
    return json.dumps(v, separators=(",", ":"))


def DropDisabled(obj, old):
    """The gate-off strategy: drop spec.scheduling unless the stored object uses it."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or SCHEDULING_KEY not in spec:
        return obj
    if old is not None and SCHEDULING_KEY in ((old.get("spec") or {})):
        return obj
    spec.pop(SCHEDULING_KEY)
    return obj


def _Gang(scheduling):
    policy = (scheduling or {}).get("schedulingPolicy") or {}
    gang = policy.get("gang")
    return gang if isinstance(gang, dict) else None


def Validate(obj, old):
    """Causes (field, type, message) for a Deployment with the gate on."""
    out = []
    spec = obj.get("spec") or {}
    new_s = spec.get(SCHEDULING_KEY)
    path = "spec.scheduling"
    if old is not None:
        old_s = (old.get("spec") or {}).get(SCHEDULING_KEY)
        if old_s is None and new_s is not None:
            out.append((path, "FieldValueForbidden", "Forbidden: field cannot be set once created"))
        elif old_s is not None and new_s is None:
            out.append((path, "FieldValueForbidden", "Forbidden: field cannot be cleared once set"))
        elif old_s is not None and new_s is not None:
            def Frozen(s):
                s = copy.deepcopy(s)
                gang = _Gang(s)
                if gang is not None:
                    gang.pop("minCount", None)
                return s
            for part in sorted(set(old_s) | set(new_s)):
                if Frozen(old_s).get(part) != Frozen(new_s).get(part):
                    out.append((f"{path}.{part}", "FieldValueForbidden", "Forbidden: field is immutable"))
    if new_s is None:
        return out
    if not isinstance(new_s, dict):
        return out + [(path, "FieldValueTypeInvalid", f"Invalid value: {_Q(new_s)}: must be an object")]
    gang = _Gang(new_s)
    if gang is not None:
        if (spec.get("strategy") or {}).get("type") != "Recreate":
            out.append(("spec.strategy.type", "FieldValueForbidden",
                        "Forbidden: gang scheduling (spec.scheduling.schedulingPolicy.gang) requires "
                        "strategy type Recreate"))
        mc = gang.get("minCount")
        if mc is not None and (not isinstance(mc, int) or mc < 1):
            out.append((f"{path}.schedulingPolicy.gang.minCount", "FieldValueInvalid",
                        f"Invalid value: {_Q(mc)}: must be greater than or equal to 1"))
        elif isinstance(mc, int) and mc > spec.get("replicas", 1):
            out.append((f"{path}.schedulingPolicy.gang.minCount", "FieldValueInvalid",
                        f"Invalid value: {mc}: must be less than or equal to spec.replicas "
                        f"({spec.get('replicas', 1)})"))
    tmpl_spec = ((spec.get("template") or {}).get("spec") or {})
    if tmpl_spec.get("schedulingGroup"):
        out.append((path, "FieldValueForbidden",
                    "Forbidden: may not be set when spec.template.spec.schedulingGroup is set"))
    return out


def _Hash(text):
    h = 0x811C9DC5
    for b in text.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in str(h))


def WorkloadName(dep):
    """`<deployment>-<hash of its UID>` (the KEP's deterministic name; our hash)."""
    return f"{dep['metadata']['name'][:52]}-{_Hash(dep['metadata']['uid'])}"


def PodGroupName(dep, template_hash):
    return f"{dep['metadata']['name']}-{template_hash}"


def Scheduling(dep):
    s = (dep.get("spec") or {}).get(SCHEDULING_KEY)
    return s if isinstance(s, dict) else None


def Policy(scheduling, replicas):
    """The compiled scheduling policy: the user's minCount, else the replicas (>= 1)."""
    gang = _Gang(scheduling)
    if gang is None:
        return {"basic": {}}
    mc = gang.get("minCount")
    return {"gang": {"minCount": mc if isinstance(mc, int) and mc > 0 else max(int(replicas or 0), 1)}}


def BuildWorkload(dep, api_version):
    s = Scheduling(dep)
    name = WorkloadName(dep)
    tmpl = {"name": name[:63], "schedulingPolicy": Policy(s, dep["spec"].get("replicas", 1))}
    for k in ("schedulingConstraints", "disruptionMode", "resourceClaims"):
        if s.get(k) is not None:
            tmpl[k] = copy.deepcopy(s[k])
    m = dep["metadata"]
    return {"apiVersion": api_version, "kind": "Workload",
            "metadata": {"name": name, "namespace": m["namespace"],
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": m["name"],
                                              "uid": m["uid"], "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"controllerRef": {"apiGroup": "apps", "kind": "Deployment", "name": m["name"]},
                     "podGroupTemplates": [tmpl]}}


def BuildPodGroup(dep, rs, workload, template_hash, api_version):
    tmpl = workload["spec"]["podGroupTemplates"][0]
    spec = {"workloadRef": {"workloadName": workload["metadata"]["name"], "templateName": tmpl["name"]},
            "schedulingPolicy": copy.deepcopy(tmpl["schedulingPolicy"])}
    for k in ("schedulingConstraints", "disruptionMode", "resourceClaims"):
        if tmpl.get(k) is not None:
            spec[k] = copy.deepcopy(tmpl[k])
    rm, wm = rs["metadata"], workload["metadata"]
    return {"apiVersion": api_version, "kind": "PodGroup",
            "metadata": {"name": PodGroupName(dep, template_hash), "namespace": rm["namespace"],
                         "ownerReferences": [
                             {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rm["name"], "uid": rm["uid"],
                              "controller": True, "blockOwnerDeletion": True},
                             {"apiVersion": api_version, "kind": "Workload", "name": wm["name"],
                              "uid": wm["uid"]}]},
            "spec": spec}


def LinkPod(pod, podgroup):
    """Set at pod creation: the PodGroup link and a non-controller owner reference."""
    pm = podgroup["metadata"]
    pod["spec"]["schedulingGroup"] = {"podGroupName": pm["name"]}
    pod["metadata"].setdefault("ownerReferences", []).append(
        {"apiVersion": podgroup["apiVersion"], "kind": "PodGroup", "name": pm["name"], "uid": pm["uid"]})
    return pod
