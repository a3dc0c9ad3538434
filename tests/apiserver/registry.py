"""The served resources: discovery documents, OpenAPI v3 stubs and per-resource facts.

Immutable after import; safe to read from any thread.
"""
import hashlib
import json

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
CLUSTER_VERBS = ALL_VERBS


class Resource:
    """One served resource (plural name) of one group/version."""

    def __init__(self, group, version, plural, kind, namespaced=True, short=(),
                 singular=None, status=False, scale=False, generation=True,
                 categories=(), verbs=None):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced
        self.short = list(short)
        self.singular = singular or kind.lower()
        self.status = status
        self.scale = scale
        self.generation = generation  # whether metadata.generation is tracked
        self.categories = list(categories)
        self.verbs = list(verbs or ALL_VERBS)

    @property
    def api_version(self):
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self):
        """Storage key: group/plural (one version served per resource)."""
        return f"{self.group}/{self.plural}"

    @property
    def group_resource(self):
        """The `deployments.apps` form used in error messages (core: plain plural)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def prefix(self, namespace=None):
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


RESOURCES = [
    Resource("", "v1", "namespaces", "Namespace", namespaced=False, short=["ns"], status=True,
             generation=False, verbs=["create", "delete", "get", "list", "patch", "update", "watch"]),
    Resource("", "v1", "pods", "Pod", short=["po"], status=True, generation=False, categories=["all"]),
    Resource("", "v1", "events", "Event", short=["ev"], generation=False),
    Resource("", "v1", "configmaps", "ConfigMap", short=["cm"], generation=False),
    Resource("", "v1", "secrets", "Secret", generation=False),
    Resource("", "v1", "serviceaccounts", "ServiceAccount", short=["sa"], generation=False),
    Resource("", "v1", "services", "Service", short=["svc"], status=True, generation=False,
             categories=["all"]),
    Resource("", "v1", "nodes", "Node", namespaced=False, short=["no"], status=True, generation=False),
    Resource("apps", "v1", "deployments", "Deployment", short=["deploy"], status=True, scale=True,
             categories=["all"]),
    Resource("apps", "v1", "replicasets", "ReplicaSet", short=["rs"], status=True, scale=True,
             categories=["all"]),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", generation=False),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False,
             short=["pc"], generation=False),
    # Workloads and PodGroups: two served versions, two views of ONE storage (the storage
    # key is group/plural). v1beta1 first, so that BY_KEY / BY_KIND (the first entry wins)
    # name it for the controllers' own writes; which versions answer is
    # SetSchedulingVersions' business (--scheduling-versions).
    Resource("scheduling.k8s.io", "v1beta1", "workloads", "Workload", short=["wl"]),
    Resource("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup", short=["pg"], status=True),
    Resource("scheduling.k8s.io", "v1", "workloads", "Workload", short=["wl"]),
    Resource("scheduling.k8s.io", "v1", "podgroups", "PodGroup", short=["pg"], status=True),
    Resource("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
             "MutatingWebhookConfiguration", namespaced=False, categories=["api-extensions"]),
    Resource("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
             "ValidatingWebhookConfiguration", namespaced=False, categories=["api-extensions"]),
    Resource("events.k8s.io", "v1", "events", "Event", short=["ev"], generation=False),
    # Stored only (no controllers, no authorization): enough to install the
    # Helm chart's objects and read them back.
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", generation=False),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", generation=False),
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False,
             generation=False),
    Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding",
             namespaced=False, generation=False),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short=["pdb"],
             status=True),
    Resource("batch", "v1", "jobs", "Job", status=True, categories=["all"]),
    # Stored only: the chart's quota for system-* priority classes (GKE).
    Resource("", "v1", "resourcequotas", "ResourceQuota", short=["quota"], status=True,
             generation=False),
]

# Groups that are listed in discovery but whose resources live elsewhere (the Scale kind).
EXTRA_GROUPS = {}

BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_KEY = {}
BY_KIND = {}
for _r in RESOURCES:  # the first entry of a key wins (the storage version's view)
    BY_KEY.setdefault(_r.key, _r)
    BY_KIND.setdefault((_r.group, _r.kind), _r)

# API groups switched off (--disable-group, PUT /debug/groups): as a CRD that is not
# installed, absent from discovery and 404 on every path. Replaced whole (a frozenset), so
# readers on other threads see one set or the other.
_disabled = frozenset()


# Served versions of scheduling.k8s.io Workloads and PodGroups (--scheduling-versions,
# PUT /debug/scheduling-versions). kube-apiserver 1.37 serves v1beta1 only (the default);
# a later release serves v1 too, and one after that v1 only. Same replace-whole rule as
# _disabled. PriorityClasses (scheduling.k8s.io/v1) are served whatever this says.
SCHEDULING_GROUP = "scheduling.k8s.io"
SCHEDULING_VERSIONED = ("workloads", "podgroups")
SCHEDULING_VERSIONS = ("v1", "v1beta1")
_scheduling_versions = frozenset({"v1beta1"})
# Bumped on every change of the served set: a watch on a scheduling.k8s.io resource that
# started under another value is cut, as an upgrade of kube-apiserver cuts every watch.
_scheduling_epoch = 0


def ParseSchedulingVersions(text_or_list):
    """"v1,v1beta1" or a list -> ordered list; ValueError on an unknown version."""
    items = text_or_list.split(",") if isinstance(text_or_list, str) else list(text_or_list)
    out = []
    for v in (str(i).strip() for i in items):
        if not v:
            continue
        if v not in SCHEDULING_VERSIONS:
            raise ValueError(f'unknown scheduling.k8s.io version "{v}" (known: '
                             f'{", ".join(SCHEDULING_VERSIONS)})')
        if v not in out:
            out.append(v)
    return out


def SetSchedulingVersions(versions):
    global _scheduling_versions, _scheduling_epoch
    _scheduling_versions = frozenset(ParseSchedulingVersions(versions))
    _scheduling_epoch += 1


def SchedulingVersions():
    return [v for v in SCHEDULING_VERSIONS if v in _scheduling_versions]


def SchedulingEpoch():
    return _scheduling_epoch


def _VersionServed(r):
    if r.group == SCHEDULING_GROUP and r.plural in SCHEDULING_VERSIONED:
        return r.version in _scheduling_versions
    return True


def _IsServed(r):
    return r.group not in _disabled and _VersionServed(r)


def SetDisabledGroups(groups):
    global _disabled
    _disabled = frozenset(groups)


def DisabledGroups():
    return sorted(_disabled)


def Served(group):
    return group not in _disabled


def Find(group, version, plural):
    if group in _disabled:
        return None
    r = BY_PATH.get((group, version, plural))
    return r if r is not None and _VersionServed(r) else None


def ByApiVersionKind(api_version, kind):
    group = api_version.split("/")[0] if "/" in api_version else ""
    return BY_KIND.get((group, kind))


def GroupVersions():
    """Ordered {group: [versions]} of everything served (core excluded). The first version
    of a group is its preferred one: scheduling.k8s.io lists v1 (PriorityClasses, always
    served) before v1beta1, as kube-apiserver prefers the GA version."""
    out = {}
    for r in RESOURCES:
        if r.group and _IsServed(r):
            out.setdefault(r.group, [])
            if r.version not in out[r.group]:
                out[r.group].append(r.version)
    for g, vs in EXTRA_GROUPS.items():
        out.setdefault(g, list(vs))
    return out


def ApiVersions():
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}


def ApiGroupList():
    groups = []
    for g, vs in GroupVersions().items():
        gvs = [{"groupVersion": f"{g}/{v}", "version": v} for v in vs]
        groups.append({"name": g, "versions": gvs, "preferredVersion": gvs[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def ApiGroup(group):
    vs = GroupVersions().get(group)
    if not vs:
        return None
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in vs]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": gvs,
            "preferredVersion": gvs[0]}


def _ResourceEntries(r):
    entry = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
             "kind": r.kind, "verbs": r.verbs,
             "storageVersionHash": hashlib.sha256(r.key.encode()).hexdigest()[:12]}
    if r.short:
        entry["shortNames"] = r.short
    if r.categories:
        entry["categories"] = r.categories
    out = [entry]
    if r.status:
        out.append({"name": f"{r.plural}/status", "singularName": "", "namespaced": r.namespaced,
                    "kind": r.kind, "verbs": ["get", "patch", "update"]})
    if r.scale:
        out.append({"name": f"{r.plural}/scale", "singularName": "", "namespaced": r.namespaced,
                    "group": "autoscaling", "version": "v1", "kind": "Scale",
                    "verbs": ["get", "patch", "update"]})
    return out


def ApiResourceList(group, version):
    rs = [r for r in RESOURCES if r.group == group and r.version == version and _IsServed(r)]
    if not rs and not (group in EXTRA_GROUPS and version in EXTRA_GROUPS[group]):
        return None
    gv = f"{group}/{version}" if group else version
    resources = []
    for r in rs:
        resources.extend(_ResourceEntries(r))
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def _GvPath(group, version):
    return f"apis/{group}/{version}" if group else f"api/{version}"


def OpenApiV3Root():
    """/openapi/v3: one entry per group/version, as kube-apiserver lists them."""
    paths = {}
    for g, vs in [("", ["v1"])] + list(GroupVersions().items()):
        for v in vs:
            p = _GvPath(g, v)
            paths[p] = {"serverRelativeURL": f"/openapi/v3/{p}?hash={_Hash(p)}"}
    return {"paths": paths}


def _Hash(text):
    return hashlib.sha512(text.encode()).hexdigest()[:64].upper()


def OpenApiV3Doc(group, version):
    """A minimal OpenAPI v3 document for one group/version.

    It holds only what kubectl reads from it: the PATCH operation of each kind with
    its x-kubernetes-group-version-kind and the fieldValidation query parameter, so
    kubectl's query-parameter verifier concludes that server-side field validation is
    supported. No schemas (kubectl falls back to its built-in types for patches).
    """
    rs = [r for r in RESOURCES if r.group == group and r.version == version and _IsServed(r)]
    if not rs and not (group in EXTRA_GROUPS and version in EXTRA_GROUPS.get(group, [])):
        return None
    params = [{"name": n, "in": "query", "schema": {"type": "string"}}
              for n in ("dryRun", "fieldManager", "fieldValidation", "force")]
    paths = {}
    for r in rs:
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        path = r.prefix("{namespace}") + "/{name}"
        paths[path] = {
            "get": {"x-kubernetes-action": "get", "x-kubernetes-group-version-kind": gvk},
            "patch": {"x-kubernetes-action": "patch", "x-kubernetes-group-version-kind": gvk,
                      "parameters": params},
        }
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
            "paths": paths, "components": {"schemas": {}}}


def Dumps(obj):
    return json.dumps(obj, separators=(",", ":"))
