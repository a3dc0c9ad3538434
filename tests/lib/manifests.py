"""The objects the tests send, and the names wasd derives from them."""
import json

NS = "default"
GATE = "wasd.io/pod-group"
SCHEDULING = "wasd.io/scheduling"


def scheduling_annotation(gang=True, min_count=None, extra_config=None):
    """The wasd.io/scheduling value: a gang (with minCount if given) or basic policy,
    plus any other keys of the configuration."""
    policy = {"gang": {}} if gang else {"basic": {}}
    if gang and min_count is not None:
        policy["gang"]["minCount"] = min_count
    config = {"schedulingPolicy": policy}
    config.update(extra_config or {})
    return json.dumps(config)


def deployment(name, replicas=1, min_count=None, gang=True, extra_config=None, strategy="Recreate",
               namespace=NS, labels=None, annotations=None, scheduling=True,
               image="registry.example/app:1"):
    """An apps/v1 Deployment of one container whose pods carry app=<name>.

    scheduling: True opts it in to wasd (the wasd.io/scheduling annotation from
    gang/min_count/extra_config); False leaves the annotation out. labels go on the
    Deployment and its pod template; annotations on the Deployment. strategy None
    leaves the API server's default (RollingUpdate)."""
    meta = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = dict(labels)
    ann = dict(annotations or {})
    if scheduling:
        ann.setdefault(SCHEDULING, scheduling_annotation(gang, min_count, extra_config))
    if ann:
        meta["annotations"] = ann
    spec = {"replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": dict({"app": name}, **(labels or {}))},
                         "spec": {"containers": [{"name": "c", "image": image}]}}}
    if strategy:
        spec["strategy"] = {"type": strategy}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


def workload_name(deployment_name, uid):
    """GenerateWorkloadName: <deployment>-<safe-encoded FNV-1a of "(types.UID)<uid>">."""
    h = 2166136261
    for b in ("(types.UID)" + uid).encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    enc = "".join(alphabet[ord(c) % 27] for c in str(h))
    return deployment_name[:253 - len(enc) - 1] + "-" + enc


def pod_group_name(rs_name, rs_uid):
    """docs/design.md Q12: a ReplicaSet incarnation's PodGroup, the Workload-name
    encoding applied to the ReplicaSet's name and UID."""
    return workload_name(rs_name, rs_uid)


def pod_group_of(rs):
    return pod_group_name(rs["metadata"]["name"], rs["metadata"]["uid"])


def pod_gated(pod):
    return any(g.get("name") == GATE for g in pod["spec"].get("schedulingGates") or [])


def min_count_of(obj):
    """gang.minCount of a PodGroup, or of a Workload's first podGroupTemplate."""
    spec = obj["spec"]
    if "podGroupTemplates" in spec:
        spec = spec["podGroupTemplates"][0]
    return ((spec.get("schedulingPolicy") or {}).get("gang") or {}).get("minCount")


# The gang-scheduling backends (issue 16): API group/version of the group object,
# where a pod names its group, and the schedulerName pods get (None: kept).
BACKEND_LABEL = "wasd.io/backend"
BACKENDS = {
    "native": {"gv": "scheduling.k8s.io/v1beta1", "link": ("spec", "podGroupName"),
               "scheduler": None},
    "volcano": {"gv": "scheduling.volcano.sh/v1beta1",
                "link": ("annotations", "scheduling.k8s.io/group-name"), "scheduler": "volcano"},
    "kai": {"gv": "scheduling.run.ai/v2alpha2", "link": ("annotations", "pod-group-name"),
            "scheduler": "kai-scheduler"},
    "coscheduling": {"gv": "scheduling.x-k8s.io/v1alpha1",
                     "link": ("labels", "scheduling.x-k8s.io/pod-group"),
                     "scheduler": "scheduler-plugins-scheduler"},
}


def linked_group(pod, backend):
    """The group a pod names the way `backend` links pods ("" when none)."""
    where, key = BACKENDS[backend]["link"]
    if where == "spec":
        return (pod["spec"].get("schedulingGroup") or {}).get("podGroupName", "")
    return (pod["metadata"].get(where) or {}).get(key, "")


def group_min_count(obj, backend):
    """The gang minimum of a backend's group object (native: gang.minCount)."""
    if backend == "native":
        return min_count_of(obj)
    return (obj.get("spec") or {}).get("minMember")


def pod_waits(pod, backend="native"):
    """The pod waits for its group under either hold (docs/design.md Q23): it is not
    placed, and it carries wasd's gate or names a group the way `backend` links pods."""
    if pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
        return False
    return pod_gated(pod) or bool(linked_group(pod, backend))
