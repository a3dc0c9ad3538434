"""Server-side defaulting, as kube-apiserver applies it while decoding (before admission).

Covers apps/v1 Deployment and ReplicaSet, core/v1 Pod and pod templates, Namespace,
and the PodGroup disruptionMode. Values follow k8s.io/kubernetes pkg/apis/*/v1/defaults.go.
Pure functions that mutate the dict passed in; thread-safe for distinct objects.
"""


def _ImagePullPolicy(image):
    image = image or ""
    last = image.rsplit("/", 1)[-1]
    if "@" in last:
        return "IfNotPresent"
    if ":" not in last or last.endswith(":latest"):
        return "Always"
    return "IfNotPresent"


def DefaultContainer(c):
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("imagePullPolicy", _ImagePullPolicy(c.get("image")))
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        p.setdefault("protocol", "TCP")
    for e in c.get("env") or []:
        vf = e.get("valueFrom") or {}
        if "fieldRef" in vf:
            vf["fieldRef"].setdefault("apiVersion", "v1")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        p = c.get(probe)
        if isinstance(p, dict):
            p.setdefault("timeoutSeconds", 1)
            p.setdefault("periodSeconds", 10)
            p.setdefault("successThreshold", 1)
            p.setdefault("failureThreshold", 3)
            if isinstance(p.get("httpGet"), dict):
                p["httpGet"].setdefault("path", "/")
                p["httpGet"].setdefault("scheme", "HTTP")


def DefaultPodSpec(spec):
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if isinstance(c, dict):
            DefaultContainer(c)
    for v in spec.get("volumes") or []:
        for kind in ("configMap", "secret"):
            if isinstance(v.get(kind), dict):
                v[kind].setdefault("defaultMode", 420)
        if isinstance(v, dict) and len([k for k in v if k != "name"]) == 0:
            v["emptyDir"] = {}


def DefaultPodTemplate(tmpl):
    tmpl.setdefault("metadata", {})
    tmpl["metadata"].setdefault("creationTimestamp", None)
    DefaultPodSpec(tmpl.setdefault("spec", {}))


def DefaultDeployment(obj):
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", "25%")
        ru.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    DefaultPodTemplate(spec.setdefault("template", {}))


def DefaultReplicaSet(obj):
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    DefaultPodTemplate(spec.setdefault("template", {}))


def DefaultPod(obj):
    spec = obj.setdefault("spec", {})
    DefaultPodSpec(spec)
    spec.setdefault("enableServiceLinks", True)


def DefaultNamespace(obj):
    labels = obj.setdefault("metadata", {}).setdefault("labels", {})
    if obj["metadata"].get("name"):
        labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")


def DefaultPodGroup(obj):
    spec = obj.setdefault("spec", {})
    spec.setdefault("disruptionMode", {"single": {}})


def DefaultWebhookConfiguration(obj, mutating):
    for wh in obj.get("webhooks") or []:
        wh.setdefault("failurePolicy", "Fail")
        wh.setdefault("matchPolicy", "Equivalent")
        wh.setdefault("namespaceSelector", {})
        wh.setdefault("objectSelector", {})
        wh.setdefault("timeoutSeconds", 10)
        if mutating:
            wh.setdefault("reinvocationPolicy", "Never")
        for rule in wh.get("rules") or []:
            rule.setdefault("scope", "*")
        svc = (wh.get("clientConfig") or {}).get("service")
        if isinstance(svc, dict):
            svc.setdefault("port", 443)


DEFAULTERS = {
    "apps/deployments": DefaultDeployment,
    "apps/replicasets": DefaultReplicaSet,
    "/pods": DefaultPod,
    "/namespaces": DefaultNamespace,
    "scheduling.k8s.io/podgroups": DefaultPodGroup,
    "admissionregistration.k8s.io/mutatingwebhookconfigurations":
        lambda o: DefaultWebhookConfiguration(o, True),
    "admissionregistration.k8s.io/validatingwebhookconfigurations":
        lambda o: DefaultWebhookConfiguration(o, False),
}


def ApplyDefaults(resource_key, obj):
    fn = DEFAULTERS.get(resource_key)
    if fn and isinstance(obj, dict):
        fn(obj)
    return obj
