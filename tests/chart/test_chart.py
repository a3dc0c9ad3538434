"""Renders charts/wasd with the real helm (`helm template`, tests/lib/chart.py)
for the default values, each certificate mode and a values file that
overrides everything, and checks the objects: cross-object wiring (selectors,
ports, Service <-> webhook clientConfig, ServiceAccounts <-> bindings),
registration scope, hardening, exact RBAC, hooks, and that every value
reaches the objects.

Whether each object is valid Kubernetes is not judged here: the real
kube-apiserver does that for every one of these renders
(tests/cluster/test_chart_real_tools.py, `kubectl apply --dry-run=server`).
What stays here is what no API server can tell: how the objects fit each
other and what the values put in them.
"""

import json
import os
import tempfile
import unittest


from lib import chart
from lib.chart import find, one

NS = "wasd-system"
# What each component needs for metrics.secure (the default): metricsauth/.
METRICS_AUTH_RULES = {("authentication.k8s.io", "tokenreviews", None): {"create"},
                      ("authorization.k8s.io", "subjectaccessreviews", None): {"create"}}
FULL = chart.FULL_VALUES
# The kinds the chart renders without a namespace (cluster-scoped); every
# other object names its namespace, so a `helm template | kubectl apply` puts
# it where the release is and not in the kubeconfig's default namespace (the
# API server cannot tell: kubectl fills the namespace in).
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration",
                  "ValidatingWebhookConfiguration"}

_cache = {}

# The backend flags values-full.yaml gives both components.
FULL_BACKEND_ARGS = {
    "backend": "volcano", "allowed-backends": "volcano,kai,coscheduling",
    "volcano-topology-tiers": "example.com/rack=2,topology.kubernetes.io/zone=zone-tier",
    "volcano-queue": "research", "kai-queue": "team-a", "kai-topology": "cluster-topology",
    "kai-topology-levels": "topology.kubernetes.io/zone,kubernetes.io/hostname",
    "coscheduling-scheduler-name": "coscheduler"}
# The reconciler's rules for one backend's group objects (issue 16).
BACKEND_GROUPS = {"volcano": "scheduling.volcano.sh", "kai": "scheduling.run.ai",
                  "coscheduling": "scheduling.x-k8s.io"}


def backend_rules(group):
    return {(group, "podgroups", None): {"get", "list", "watch", "create", "patch", "delete"},
            (group, "podgroups/status", None): {"get"}}


def rendered(key):
    if key not in _cache:
        kw = dict(chart.SCENARIOS[key])
        ns = kw.pop("namespace", NS)
        _cache[key] = chart.render(namespace=ns, **kw)
    return _cache[key]


ALL = ["default", "certmanager", "full", "full-selfmanaged", "no-cleanup", "external-sa"]


def pod_specs(objs):
    """(owner, pod spec, pod labels) of every Deployment, Job and Pod."""
    out = []
    for o in objs:
        if o["kind"] in ("Deployment", "Job"):
            tpl = o["spec"]["template"]
            out.append((o, tpl["spec"], (tpl.get("metadata") or {}).get("labels") or {}))
        elif o["kind"] == "Pod":
            out.append((o, o["spec"], o["metadata"].get("labels") or {}))
    return out


def args_map(args):
    """Flag -> value for a wasd argument list (`--f v`, `--f=v` and bare `--f`)."""
    out, i = {}, 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            if "=" in a:
                k, v = a[2:].split("=", 1)
                out[k] = v
            elif i + 1 < len(args) and not args[i + 1].startswith("--"):
                out[a[2:]] = args[i + 1]
                i += 1
            else:
                out[a[2:]] = None
        i += 1
    return out


def container(obj, name):
    spec = obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        if c["name"] == name:
            return c
    raise AssertionError("no container %s in %s" % (name, obj["metadata"]["name"]))


def rules_of(role):
    """{(apiGroup, resource, resourceName or None): set(verbs)} of a Role/ClusterRole."""
    out = {}
    for r in role["rules"]:
        for g in r.get("apiGroups", [""]):
            for res in r["resources"]:
                for rn in r.get("resourceNames") or [None]:
                    out.setdefault((g, res, rn), set()).update(r["verbs"])
    return out


class SchemaAndWiring(unittest.TestCase):
    def test_names_unique_and_namespaced_correctly(self):
        for key in ALL:
            seen = set()
            for o in rendered(key):
                ident = (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
                self.assertNotIn(ident, seen, key)
                seen.add(ident)
                self.assertEqual("namespace" in o["metadata"], o["kind"] not in CLUSTER_SCOPED, ident)
                if "namespace" in o["metadata"]:
                    # Only the helm test's Role and RoleBinding live in the
                    # namespace it submits to.
                    test_ns = "wasd-selftest" if key.startswith("full") else "default"
                    want = test_ns if "test" in chart.hook_phases(o) and o["kind"] in (
                        "Role", "RoleBinding") else NS
                    self.assertEqual(o["metadata"]["namespace"], want, ident)

    def test_selectors_ports_mounts_and_service_accounts_are_wired(self):
        for key in ALL:
            objs = rendered(key)
            sa_names = {o["metadata"]["name"] for o in find(objs, "ServiceAccount")}
            external = {"ext-wh", "ext-rc"}
            for owner, spec, labels in pod_specs(objs):
                where = "%s %s" % (key, owner["metadata"]["name"])
                if owner["kind"] == "Deployment":
                    sel = owner["spec"]["selector"]["matchLabels"]
                    self.assertTrue(sel and all(labels.get(k) == v for k, v in sel.items()), where)
                self.assertIn(spec["serviceAccountName"], sa_names | external, where)
                vols = {v["name"] for v in spec.get("volumes", [])}
                for c in spec["containers"] + spec.get("initContainers", []):
                    ports = [p["name"] for p in c.get("ports", [])]
                    self.assertEqual(len(ports), len(set(ports)), where)
                    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                        if probe in c:
                            self.assertIn(c[probe]["httpGet"]["port"], ports, where)
                    for m in c.get("volumeMounts", []):
                        self.assertIn(m["name"], vols, where)

    def test_services_select_their_pods_and_target_named_ports(self):
        for key in ALL:
            objs = rendered(key)
            for svc in find(objs, "Service"):
                pods = [(o, s, l) for o, s, l in pod_specs(objs)
                        if o["kind"] == "Deployment"
                        and all(l.get(k) == v for k, v in svc["spec"]["selector"].items())]
                self.assertEqual(len(pods), 1, "%s: %s selects %d Deployments" % (
                    key, svc["metadata"]["name"], len(pods)))
                names = {p["name"] for c in pods[0][1]["containers"] for p in c.get("ports", [])}
                for p in svc["spec"]["ports"]:
                    self.assertIn(p["targetPort"], names)

    def test_bindings_point_at_rendered_roles_and_accounts(self):
        for key in ALL:
            objs = rendered(key)
            sas = {o["metadata"]["name"] for o in find(objs, "ServiceAccount")} | {"ext-wh", "ext-rc"}
            for b in find(objs, "RoleBinding") + find(objs, "ClusterRoleBinding"):
                ref = b["roleRef"]
                self.assertEqual(ref["apiGroup"], "rbac.authorization.k8s.io")
                self.assertTrue(find(objs, ref["kind"], ref["name"]), "%s: %s" % (key, ref))
                if ref["name"].endswith("-metrics-reader"):
                    # metrics.readers: the user's own subjects, as given
                    # (tests/chart/testdata/values-full.yaml).
                    self.assertEqual([(x["kind"], x["name"]) for x in b["subjects"]],
                                     [("ServiceAccount", "prometheus-k8s"), ("Group", "platform:monitoring")])
                    continue
                for s in b["subjects"]:
                    self.assertEqual(s["kind"], "ServiceAccount")
                    self.assertIn(s["name"], sas)
                    self.assertEqual(s["namespace"], NS)
                # Hook bindings live exactly as long as their role and account.
                self.assertEqual(chart.hook_phases(b), chart.hook_phases(one(objs, ref["kind"], ref["name"])))

    def test_external_service_accounts_are_used_and_not_created(self):
        objs = rendered("external-sa")
        self.assertEqual(find(objs, "ServiceAccount", "ext-wh"), [])
        self.assertEqual(one(objs, "Deployment", "wasd-webhook")["spec"]["template"]["spec"]["serviceAccountName"], "ext-wh")
        self.assertEqual(one(objs, "Deployment", "wasd-reconciler")["spec"]["template"]["spec"]["serviceAccountName"], "ext-rc")
        with self.assertRaises(chart.RenderError) as cm:
            chart.render(sets=["webhook.serviceAccount.create=false"])
        self.assertIn("webhook.serviceAccount.name is required", str(cm.exception))

    def test_long_release_names_still_give_valid_names(self):
        # 53 characters, the longest release name helm admits (it refuses a
        # longer one itself, checked below).
        # longer one itself, checked below). The real API server accepts its
        # objects (test_chart_real_tools, scenario long-name).
        longest = chart.SCENARIOS["long-name"]["name"]
        self.assertEqual(len(longest), 53)
        with self.assertRaises(chart.RenderError) as cm:
            chart.render(name=longest + "i")
        self.assertIn("invalid release name", str(cm.exception))
        for o in rendered("long-name"):
            self.assertLessEqual(len(o["metadata"]["name"]), 63)
            if o["kind"] == "Service":  # a Service's name is a DNS label
                self.assertRegex(o["metadata"]["name"], r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


class Hardening(unittest.TestCase):
    def test_every_pod_and_container_is_hardened(self):
        for key in ALL:
            for owner, spec, _ in pod_specs(rendered(key)):
                where = "%s %s" % (key, owner["metadata"]["name"])
                psc = spec["securityContext"]
                self.assertIs(psc["runAsNonRoot"], True, where)
                self.assertNotEqual(psc.get("runAsUser"), 0, where)
                # Confined: the runtime's profile or one of the node's.
                self.assertIn(psc["seccompProfile"]["type"], ("RuntimeDefault", "Localhost"), where)
                for c in spec["containers"] + spec.get("initContainers", []):
                    sc = c["securityContext"]
                    self.assertIs(sc["runAsNonRoot"], True, where)
                    self.assertIs(sc["allowPrivilegeEscalation"], False, where)
                    self.assertIs(sc["readOnlyRootFilesystem"], True, where)
                    self.assertIs(sc.get("privileged", False), False, where)
                    self.assertIn("ALL", sc["capabilities"]["drop"], where)
                    self.assertNotIn("add", sc["capabilities"], where)
                    self.assertIn(sc["seccompProfile"]["type"], ("RuntimeDefault", "Localhost"), where)
                    self.assertIn("resources", c, where)


class Components(unittest.TestCase):
    def test_webhook_deployment(self):
        objs = rendered("default")
        dep = one(objs, "Deployment", "wasd-webhook")
        spec = dep["spec"]["template"]["spec"]
        self.assertEqual(dep["spec"]["replicas"], 3)
        self.assertEqual(spec["priorityClassName"], "system-cluster-critical")
        term = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
        self.assertEqual(term["podAffinityTerm"]["topologyKey"], "kubernetes.io/hostname")
        self.assertEqual(term["podAffinityTerm"]["labelSelector"]["matchLabels"], dep["spec"]["selector"]["matchLabels"])
        c = container(dep, "webhook")
        self.assertEqual(c["args"][0], "webhook")
        self.assertEqual(args_map(c["args"][1:]), {
            "tls-cert-file": "/etc/wasd/tls/tls.crt", "tls-key-file": "/etc/wasd/tls/tls.key",
            "port": "9443", "health-probe-bind-address": ":8081", "metrics-bind-address": ":8443",
            "metrics-secure": "true", "pod-scheduling-gate": "true",
            "pod-hold": "coscheduling=gate,kai=scheduler,native=scheduler,volcano=scheduler",
            "in-tree-deployment-integration": "false",
            "max-pending-scale-lookups": "64", "io-threads": "2", "shutdown-delay": "5s",
            "shutdown-grace-period": "30s", "log-level": "info", "backend": "native"})
        # SIGTERM: 5 s still serving + 30 s grace + 5 s to exit.
        self.assertEqual(spec["terminationGracePeriodSeconds"], 40)
        self.assertEqual(c["startupProbe"]["httpGet"], {"path": "/healthz", "port": "health"})
        self.assertEqual((c["startupProbe"]["periodSeconds"], c["startupProbe"]["failureThreshold"]), (1, 60))
        self.assertNotIn("hostNetwork", spec)
        self.assertNotIn("dnsPolicy", spec)
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        self.assertEqual(ports, {"webhook": 9443, "metrics": 8443, "health": 8081})
        self.assertEqual(c["livenessProbe"]["httpGet"]["path"], "/healthz")
        self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz")
        mount = c["volumeMounts"][0]
        self.assertEqual((mount["mountPath"], mount["readOnly"]), ("/etc/wasd/tls", True))
        self.assertEqual(spec["volumes"][0]["secret"]["secretName"], "wasd-webhook-tls")
        pdb = one(objs, "PodDisruptionBudget")
        self.assertEqual(pdb["spec"]["minAvailable"], 1)
        self.assertEqual(pdb["spec"]["unhealthyPodEvictionPolicy"], "AlwaysAllow")
        self.assertEqual(pdb["spec"]["selector"]["matchLabels"], dep["spec"]["selector"]["matchLabels"])

    def test_reconciler_deployment(self):
        dep = one(rendered("default"), "Deployment", "wasd-reconciler")
        self.assertEqual(dep["spec"]["replicas"], 2)
        c = container(dep, "reconciler")
        self.assertEqual(c["args"][0], "reconciler")
        self.assertEqual(args_map(c["args"][1:]), {
            "leader-elect": "true", "lease-namespace": NS, "health-probe-bind-address": ":8081",
            "metrics-bind-address": ":8443", "log-level": "info", "backend": "native",
            "gang-status": "true", "gang-status-delay": "5s", "normal-events": "false",
            "controller-runtime-metrics": "true", "gang-member-metrics": "not-scheduled",
            "gang-member-metrics-max-gangs": "1000",
            # metrics.secure: HTTPS with the webhook's pair, mounted read-only.
            "metrics-secure": "true", "metrics-cert-file": "/etc/wasd/tls/tls.crt",
            "metrics-key-file": "/etc/wasd/tls/tls.key"})
        mount = c["volumeMounts"][0]
        self.assertEqual((mount["name"], mount["mountPath"], mount["readOnly"]), ("tls", "/etc/wasd/tls", True))
        volume = dep["spec"]["template"]["spec"]["volumes"][0]
        self.assertEqual(volume["secret"]["secretName"], "wasd-webhook-tls")
        self.assertEqual([i["key"] for i in volume["secret"]["items"]], ["tls.crt", "tls.key"])  # never ca.key

    def test_plain_metrics_opt_in(self):
        notes = chart.render_text(notes=True)
        self.assertIn("/metrics (port 8443) is HTTPS and needs a bearer token", notes)
        self.assertIn("ClusterRole wasd-metrics-reader", notes)
        self.assertIn("is plain HTTP, readable by anyone",
                      chart.render_text(notes=True, sets=["metrics.secure=false"]))
        objs = chart.render(sets=["metrics.secure=false"])
        for dep, name in (("wasd-webhook", "webhook"), ("wasd-reconciler", "reconciler")):
            args = args_map(container(one(objs, "Deployment", dep), name)["args"][1:])
            self.assertEqual(args["metrics-secure"], "false")
            self.assertNotIn("metrics-cert-file", args)
            self.assertNotIn(("authentication.k8s.io", "tokenreviews", None), rules_of(one(objs, "ClusterRole", dep)))
        self.assertNotIn("volumes", one(objs, "Deployment", "wasd-reconciler")["spec"]["template"]["spec"])
        self.assertEqual([o for o in find(objs, "ClusterRole") if o["metadata"]["name"] == "wasd-metrics-reader"], [])

    def test_metrics_readers_are_bound_to_the_reader_role(self):
        default = rendered("default")
        role = one(default, "ClusterRole", "wasd-metrics-reader")
        self.assertEqual(role["rules"], [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])
        self.assertEqual([o for o in find(default, "ClusterRoleBinding")
                          if o["metadata"]["name"] == "wasd-metrics-reader"], [])
        objs = chart.render(sets=["metrics.readers[0].kind=ServiceAccount",
                                   "metrics.readers[0].name=prometheus-k8s",
                                   "metrics.readers[0].namespace=monitoring"])
        binding = one(objs, "ClusterRoleBinding", "wasd-metrics-reader")
        self.assertEqual(binding["roleRef"]["name"], "wasd-metrics-reader")
        self.assertEqual(binding["subjects"],
                         [{"kind": "ServiceAccount", "name": "prometheus-k8s", "namespace": "monitoring"}])

    def test_optional_objects_follow_their_switches(self):
        default = rendered("default")
        self.assertEqual(find(default, "ServiceMonitor"), [])
        off = rendered("no-cleanup")
        self.assertEqual(find(off, "PodDisruptionBudget"), [])
        self.assertEqual([o for o in off if "pre-delete" in chart.hook_phases(o)], [])
        self.assertNotIn("affinity", one(off, "Deployment", "wasd-webhook")["spec"]["template"]["spec"])

    def test_service_monitor_scrapes_both_components(self):
        objs = rendered("full")
        sm = one(objs, "ServiceMonitor")
        self.assertEqual(sm["metadata"]["labels"]["release"], "prometheus")
        sel = sm["spec"]["selector"]
        picked = []
        for svc in find(objs, "Service"):
            labels = svc["metadata"]["labels"]
            ok = all(labels.get(k) == v for k, v in sel["matchLabels"].items())
            for e in sel.get("matchExpressions", []):
                ok = ok and labels.get(e["key"]) in e["values"]
            if ok:
                picked.append(svc)
                self.assertIn("metrics", [p["name"] for p in svc["spec"]["ports"]])
        self.assertEqual(len(picked), 2)
        self.assertEqual(sm["spec"]["endpoints"][0]["port"], "metrics")
        self.assertEqual(sm["spec"]["endpoints"][0]["interval"], "15s")
        # metrics.secure: HTTPS verified with the chart's CA for the webhook
        # Service's name (both components serve its pair), Prometheus's token.
        e = sm["spec"]["endpoints"][0]
        self.assertEqual(e["scheme"], "https")
        self.assertEqual(e["bearerTokenFile"], "/var/run/secrets/kubernetes.io/serviceaccount/token")
        webhook = [d for d in find(objs, "Deployment") if d["metadata"]["labels"].get(
            "app.kubernetes.io/component") == "webhook"][0]
        secret = webhook["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"]
        svc = [s for s in find(objs, "Service") if s["metadata"]["labels"].get(
            "app.kubernetes.io/component") == "webhook"][0]["metadata"]
        self.assertEqual(e["tlsConfig"], {"ca": {"secret": {"name": secret, "key": "ca.crt"}},
                                          "serverName": f"{svc['name']}.{svc['namespace']}.svc"})


class Registration(unittest.TestCase):
    EXPECTED = {
        ("MutatingWebhookConfiguration", "deployments.mutate.wasd.io"):
            ("/mutate-apps-v1-deployment", "apps", "deployments", ["CREATE", "UPDATE"]),
        ("MutatingWebhookConfiguration", "pods.mutate.wasd.io"):
            ("/mutate-v1-pod", "", "pods", ["CREATE"]),
        ("ValidatingWebhookConfiguration", "deployments.validate.wasd.io"):
            ("/validate-apps-v1-deployment", "apps", "deployments", ["CREATE", "UPDATE"]),
        # M1: a status write keeps annotations, so it is judged too.
        ("ValidatingWebhookConfiguration", "deployments.validate.wasd.io", "status"):
            ("/validate-apps-v1-deployment", "apps", "deployments/status", ["UPDATE"]),
        ("ValidatingWebhookConfiguration", "deployments-scale.validate.wasd.io"):
            ("/validate-apps-v1-deployment", "apps", "deployments/scale", ["UPDATE"]),
    }

    def check_scope(self, objs, ns, failure, scale_failure, vtimeout, mtimeout, extra_excluded,
                    object_selector=None, extra_conditions=()):
        extra_conditions = list(extra_conditions)
        svc = one(objs, "Service", [s["metadata"]["name"] for s in find(objs, "Service")
                                    if s["metadata"]["labels"]["app.kubernetes.io/component"] == "webhook"][0])
        webhook_port = [p for p in svc["spec"]["ports"] if p["targetPort"] == "webhook"][0]["port"]
        seen = set()
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            cfg = one(objs, kind)
            for wh in cfg["webhooks"]:
                key = (kind, wh["name"])
                seen.add(key)
                path, group, resource, ops = self.EXPECTED[key]
                self.assertEqual(wh["clientConfig"]["service"], {
                    "name": svc["metadata"]["name"], "namespace": ns, "path": path, "port": webhook_port})
                want_rules = [{"apiGroups": [group], "apiVersions": ["v1"], "resources": [resource],
                               "operations": ops, "scope": "Namespaced"}]
                status = self.EXPECTED.get(key + ("status",))
                if status:
                    want_rules.append({"apiGroups": [status[1]], "apiVersions": ["v1"],
                                       "resources": [status[2]], "operations": status[3],
                                       "scope": "Namespaced"})
                self.assertEqual(wh["rules"], want_rules)
                self.assertEqual(wh["sideEffects"], "None")
                self.assertEqual(wh["admissionReviewVersions"], ["v1"])
                want_failure = scale_failure if resource == "deployments/scale" else failure
                self.assertEqual(wh["failurePolicy"], want_failure)
                want_timeout = mtimeout if kind.startswith("Mutating") else vtimeout
                self.assertEqual(wh["timeoutSeconds"], want_timeout)
                exprs = wh["namespaceSelector"]["matchExpressions"]
                # By name, then by label (its key: tests/chart/test_chart_options.py).
                self.assertEqual(len(exprs), 2)
                self.assertEqual((exprs[1]["operator"], exprs[1]["values"]), ("NotIn", ["true"]))
                self.assertEqual((exprs[0]["key"], exprs[0]["operator"]), ("kubernetes.io/metadata.name", "NotIn"))
                self.assertEqual(set(exprs[0]["values"]), {"kube-system", ns} | set(extra_excluded))
                if resource == "pods":
                    self.assertEqual(wh["objectSelector"], {"matchLabels": {"wasd.io/managed": "true"}})
                    self.assertNotIn("matchConditions", wh)
                elif resource == "deployments":
                    self.assertEqual(wh.get("objectSelector"), object_selector)
                    self.assertEqual([m["name"] for m in wh["matchConditions"]],
                                     ["wasd-opted-in"] + [m["name"] for m in extra_conditions])
                    self.assertEqual(wh["matchConditions"][1:], extra_conditions)
                    self.assertIn("oldObject", wh["matchConditions"][0]["expression"])
                else:
                    # The Scale object carries neither annotations nor labels:
                    # no object-based scoping is possible for this entry.
                    self.assertNotIn("matchConditions", wh)
                    self.assertNotIn("objectSelector", wh)
        self.assertEqual(seen, {k for k in self.EXPECTED if len(k) == 2})

    def test_default_scope(self):
        self.check_scope(rendered("default"), NS, "Fail", "Ignore", 3, 1, [])

    def test_scope_follows_values(self):
        self.check_scope(rendered("full"), NS, "Ignore", "Fail", 7, 4, ["monitoring", "istio-system"],
                         {"matchExpressions": [{"key": "wasd.io/skip", "operator": "DoesNotExist"}]},
                         [{"name": "not-dry-run-tooling",
                           "expression": "!('ci.example.com/ephemeral' in object.metadata.labels)"}])
        self.check_scope(rendered("other-ns"), "platform", "Fail", "Ignore", 3, 1, [])

    def test_ca_bundle_source_per_cert_mode(self):
        for key, mode in (("default", "selfManaged"), ("certmanager", "certManager")):
            objs = rendered(key)
            for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
                cfg = one(objs, kind)
                ann = cfg["metadata"].get("annotations") or {}
                for wh in cfg["webhooks"]:
                    self.assertNotIn("caBundle", wh["clientConfig"])
                if mode == "certManager":
                    cert = one(objs, "Certificate")
                    self.assertEqual(ann, {"cert-manager.io/inject-ca-from": "%s/%s" % (NS, cert["metadata"]["name"])})
                else:
                    self.assertEqual(ann, {})


class Rbac(unittest.TestCase):
    def test_reconciler_cluster_role_is_exactly_the_listed_verbs(self):
        role = one(rendered("default"), "ClusterRole", "wasd-reconciler")
        self.assertEqual(rules_of(role), {
            # L7: no `update` (the reconciler JSON-patches), no `patch` on
            # events; `patch` on podgroups also removes the protection finalizer.
            ("scheduling.k8s.io", "workloads", None): {"get", "list", "watch", "create", "patch"},
            ("scheduling.k8s.io", "podgroups", None): {"get", "list", "watch", "create", "patch", "delete"},
            ("scheduling.k8s.io", "priorityclasses", None): {"get"},
            ("apps", "deployments", None): {"get", "list", "watch"},
            ("apps", "replicasets", None): {"get", "list", "watch"},
            ("apps", "deployments/finalizers", None): {"update"},
            ("apps", "replicasets/finalizers", None): {"update"},
            ("", "pods", None): {"get", "list", "watch", "patch"},
            ("", "events", None): {"create"},
            # Gang status (on by default): its own condition, and Nodes for the fit preview.
            ("apps", "deployments/status", None): {"patch"},
            ("", "nodes", None): {"get", "list", "watch"},
            # metrics.secure (on by default): the scrapers' tokens checked.
            **METRICS_AUTH_RULES,
        })
        off = one(chart.render(sets=["reconciler.gangStatus=false"]), "ClusterRole", "wasd-reconciler")
        self.assertEqual(set(rules_of(role)) - set(rules_of(off)),
                         {("apps", "deployments/status", None), ("", "nodes", None)})

    def test_reconciler_rules_cover_the_enabled_backends_only(self):
        default = rules_of(one(rendered("default"), "ClusterRole", "wasd-reconciler"))
        native = {k: v for k, v in default.items()
                  if k[0] == "scheduling.k8s.io" and k[1] in ("workloads", "podgroups")}
        common = {k: v for k, v in default.items() if k not in native}
        for values, enabled in [
                ({"backend": "volcano"}, ["volcano"]),
                ({"backend": "kai"}, ["kai"]),
                ({"backend": "coscheduling"}, ["coscheduling"]),
                ({"backend": "kai", "allowedBackends": ["native", "kai", "coscheduling"]},
                 ["native", "kai", "coscheduling"]),
                ({"allowedBackends": ["native", "volcano"]}, ["native", "volcano"])]:
            with self.subTest(values=values), tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "values.yaml")
                with open(path, "w") as f:
                    json.dump(values, f)  # JSON is YAML
                objs = chart.render(namespace=NS, values_files=[path])
                want = dict(common)
                if "native" in enabled:
                    want.update(native)
                for b in enabled:
                    if b != "native":
                        want.update(backend_rules(BACKEND_GROUPS[b]))
                self.assertEqual(rules_of(one(objs, "ClusterRole", "wasd-reconciler")), want)
                # Both components get the same backend flags; a backend's facts
                # only when it is enabled.
                for dep, name in (("wasd-webhook", "webhook"), ("wasd-reconciler", "reconciler")):
                    args = args_map(container(one(objs, "Deployment", dep), name)["args"][1:])
                    self.assertEqual(args["backend"], values.get("backend", "native"))
                    allowed = values.get("allowedBackends")
                    self.assertEqual(args.get("allowed-backends"), ",".join(allowed) if allowed else None)
                    self.assertEqual("kai-queue" in args, "kai" in enabled)
                    self.assertEqual("coscheduling-scheduler-name" in args, "coscheduling" in enabled)
                    self.assertNotIn("volcano-queue", args)  # empty by default

    def test_leader_election_and_webhook_roles(self):
        objs = rendered("default")
        lease = one(objs, "Role", "wasd-leader-election")
        self.assertEqual(rules_of(lease), {
            ("coordination.k8s.io", "leases", None): {"create"},
            ("coordination.k8s.io", "leases", "wasd-reconciler"): {"get", "update"},
        })
        self.assertEqual(rules_of(one(objs, "ClusterRole", "wasd-webhook")),
                         {("apps", "deployments", None): {"get"}, **METRICS_AUTH_RULES})

    def test_certificate_roles_are_limited_by_name(self):
        objs = rendered("default")
        secret_rules = {
            ("", "secrets", None): {"create"},
            ("", "secrets", "wasd-webhook-tls"): {"get", "update"},
        }
        inject_rules = {
            ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "wasd"): {"get", "patch"},
            ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "wasd"): {"get", "patch"},
        }
        for name in ("wasd-certs", "wasd-cert-rotator"):
            self.assertEqual(rules_of(one(objs, "Role", name)), secret_rules)
            self.assertEqual(rules_of(one(objs, "ClusterRole", name)), inject_rules)
        self.assertEqual(rules_of(one(objs, "ClusterRole", "wasd-cleanup")), {
            ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "wasd"): {"delete"},
            ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "wasd"): {"delete"},
        })
        self.assertEqual(rules_of(one(objs, "Role", "wasd-cleanup")), {
            ("", "secrets", "wasd-webhook-tls"): {"get", "delete"},
        })
        # The names in the rules are the names of the rendered configurations.
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            self.assertEqual(one(objs, kind)["metadata"]["name"], "wasd")


class Hooks(unittest.TestCase):
    def test_hook_jobs_have_their_rbac_in_every_phase_they_run(self):
        for key in ALL:
            objs = rendered(key)
            for job in find(objs, "Job") + find(objs, "Pod"):
                phases = chart.hook_phases(job)
                self.assertTrue(phases, "%s: Job %s is not a hook" % (key, job["metadata"]["name"]))
                pod = job["spec"] if job["kind"] == "Pod" else job["spec"]["template"]["spec"]
                sa = pod["serviceAccountName"]
                sa_obj = one(objs, "ServiceAccount", sa)
                self.assertTrue(phases <= chart.hook_phases(sa_obj), key)
                weight = int(job["metadata"]["annotations"]["helm.sh/hook-weight"])
                self.assertLess(int(sa_obj["metadata"]["annotations"]["helm.sh/hook-weight"]), weight)
                bound = [b for b in find(objs, "RoleBinding") + find(objs, "ClusterRoleBinding")
                         if any(s["name"] == sa for s in b["subjects"])]
                self.assertTrue(bound)
                for b in bound:
                    self.assertTrue(phases <= chart.hook_phases(b))
                self.assertEqual(pod["restartPolicy"], "Never")
                self.assertIn("before-hook-creation", job["metadata"]["annotations"]["helm.sh/hook-delete-policy"])

    def test_self_managed_jobs_and_rotator(self):
        objs = rendered("default")
        rotate_args = {"service": "wasd-webhook", "namespace": NS, "secret": "wasd-webhook-tls",
                       "days": "365", "renew-before": "2160h"}
        gen = one(objs, "Job", "wasd-certs-generate")
        self.assertEqual(chart.hook_phases(gen), {"pre-install", "pre-upgrade"})
        g = container(gen, "generate")
        self.assertEqual(g["args"][:2], ["certs", "rotate"])
        # It injects too (skipping configurations helm has not created yet), so
        # a CA renewed on upgrade is trusted before any replica serves it.
        self.assertEqual(args_map(g["args"][2:]), dict(rotate_args, once=None, **{
            "webhook-config": "wasd", "skip-missing-webhook-config": None}))
        self.assertEqual(g["image"], chart.TEST_IMAGE_REPOSITORY + ":0.1.0")
        inject = one(objs, "Job", "wasd-certs-inject")
        self.assertEqual(chart.hook_phases(inject), {"post-install", "post-upgrade"})
        i = container(inject, "inject-ca")
        # The same pass, not `inject-ca --ca-file ca.crt`: the bundle keeps the
        # previous CA during the overlap after a CA renewal.
        self.assertEqual(i["args"][:2], ["certs", "rotate"])
        self.assertEqual(args_map(i["args"][2:]), dict(rotate_args, once=None, **{"webhook-config": "wasd"}))
        self.assertNotIn("volumes", inject["spec"]["template"]["spec"])
        rot = one(objs, "Deployment", "wasd-cert-rotator")
        self.assertEqual(chart.hook_phases(rot), set())
        self.assertEqual((rot["spec"]["replicas"], rot["spec"]["strategy"]["type"]), (1, "Recreate"))
        r = container(rot, "rotate")
        self.assertEqual(r["args"][:2], ["certs", "rotate"])
        self.assertEqual(args_map(r["args"][2:]), dict(rotate_args, **{"webhook-config": "wasd",
                                                                       "check-interval": "1h"}))
        self.assertEqual(find(objs, "Certificate"), [])
        # The webhook never gets the CA key of the selfManaged Secret.
        wh = one(objs, "Deployment", "wasd-webhook")["spec"]["template"]["spec"]["volumes"][0]["secret"]
        self.assertEqual(sorted(i["key"] for i in wh["items"]), ["tls.crt", "tls.key"])

    def test_renew_before_must_be_shorter_than_the_lifetime(self):
        with self.assertRaises(chart.RenderError) as cm:
            chart.render(sets=["certs.selfManaged.days=90"])
        self.assertIn("renewBefore (2160h) must be shorter", str(cm.exception))
        objs = chart.render(sets=["certs.selfManaged.days=91"])
        self.assertTrue(find(objs, "Job", "wasd-certs-generate"))
        # Nor as long as the CA's 3650 days: the CA would be renewed on every
        # pass (found on the real control plane, test_cert_rotation_real).
        with self.assertRaises(chart.RenderError) as cm:
            chart.render(sets=["certs.selfManaged.days=3651", "certs.selfManaged.renewBefore=87600h"])
        self.assertIn("renewBefore (87600h) must be shorter than the CA's lifetime", str(cm.exception))
        objs = chart.render(sets=["certs.selfManaged.days=3651", "certs.selfManaged.renewBefore=87599h"])
        self.assertTrue(find(objs, "Job", "wasd-certs-generate"))

    def test_cleanup_job_runs_wasd_certs_uninstall(self):
        for key, secret in (("default", "wasd-system/wasd-webhook-tls"), ("certmanager", None)):
            job = one(rendered(key), "Job", "wasd-cleanup")
            self.assertEqual(chart.hook_phases(job), {"pre-delete"})
            c = container(job, "uninstall")
            # The wasd image itself: no second (kubectl) image to mirror.
            self.assertEqual(c["image"], chart.TEST_IMAGE_REPOSITORY + ":0.1.0")
            self.assertNotIn("command", c)
            self.assertEqual(c["args"][:2], ["certs", "uninstall"])
            want = {"webhook-config": "wasd"}
            if secret:
                want["secret"] = secret
            self.assertEqual(args_map(c["args"][2:]), want)

    def test_helm_test_pod_runs_selftest_with_create_rights_only(self):
        objs = rendered("default")
        pod = one(objs, "Pod", "wasd-test")
        self.assertEqual(chart.hook_phases(pod), {"test"})
        c = container(pod, "selftest")
        self.assertEqual(c["args"][0], "selftest")
        self.assertEqual(args_map(c["args"][1:]), {"namespace": "default", "request-timeout": "30s"})
        self.assertEqual(c["image"], chart.TEST_IMAGE_REPOSITORY + ":0.1.0")
        # Logs kept for `helm test --logs`: no hook-succeeded deletion.
        self.assertEqual(pod["metadata"]["annotations"]["helm.sh/hook-delete-policy"], "before-hook-creation")
        role = one(objs, "Role", "wasd-test")
        self.assertEqual(role["metadata"]["namespace"], "default")
        self.assertEqual(rules_of(role), {("apps", "deployments", None): {"create"}})
        off = chart.render(sets=["test.enabled=false"])
        self.assertEqual([o for o in off if "test" in chart.hook_phases(o)], [])
        for bad in ("kube-system", NS):
            with self.assertRaises(chart.RenderError) as cm:
                chart.render(sets=["test.namespace=" + bad])
            self.assertIn("is not served by wasd", str(cm.exception))

    def test_cert_manager_mode(self):
        objs = rendered("certmanager")
        self.assertEqual([j["metadata"]["name"] for j in find(objs, "Job")], ["wasd-cleanup"])
        self.assertEqual(find(objs, "Deployment", "wasd-cert-rotator"), [])
        cert = one(objs, "Certificate")
        self.assertEqual(set(cert["spec"]["dnsNames"]), {
            "wasd-webhook", "wasd-webhook.wasd-system", "wasd-webhook.wasd-system.svc",
            "wasd-webhook.wasd-system.svc.cluster.local"})
        self.assertEqual(cert["spec"]["secretName"], "wasd-webhook-tls")
        issuer = one(objs, "Issuer")
        self.assertEqual(cert["spec"]["issuerRef"], {"name": issuer["metadata"]["name"], "kind": "Issuer",
                                                     "group": "cert-manager.io"})
        self.assertEqual(issuer["spec"], {"selfSigned": {}})


class ValuesReachObjects(unittest.TestCase):
    def test_full_values(self):
        objs = rendered("full")
        ns_objs = [o for o in objs if o["kind"] not in CLUSTER_SCOPED]
        for o in objs:
            self.assertEqual(o["metadata"]["labels"]["team"], "platform")
            if o["metadata"]["name"] not in ("custom-webhook-sa", "custom-reconciler-sa"):
                self.assertTrue(o["metadata"]["name"].startswith("platform-wasd"), o["metadata"]["name"])
            self.assertEqual(o["metadata"]["labels"]["app.kubernetes.io/name"], "was")
        self.assertTrue(ns_objs)
        wh = one(objs, "Deployment", "platform-wasd-webhook")
        spec = wh["spec"]["template"]["spec"]
        c = container(wh, "webhook")
        self.assertEqual(wh["spec"]["replicas"], 5)
        # global.imageRegistry replaces the registry host of image.repository.
        self.assertEqual(c["image"], "mirror.example.com/platform/wasd:9.9.9-test")
        self.assertEqual(c["imagePullPolicy"], "Always")
        # global.imagePullSecrets first; regcred, in both lists, once.
        self.assertEqual(spec["imagePullSecrets"], [{"name": "parent-regcred"}, {"name": "regcred"}])
        self.assertEqual(spec["priorityClassName"], "wasd-critical")
        self.assertEqual(spec["securityContext"]["runAsUser"], 10001)
        self.assertEqual(spec["securityContext"]["runAsGroup"], 10002)
        self.assertIn("requiredDuringSchedulingIgnoredDuringExecution", spec["affinity"]["podAntiAffinity"])
        self.assertEqual(spec["nodeSelector"], {"node-role.kubernetes.io/control-plane": ""})
        self.assertEqual(spec["tolerations"][0]["key"], "node-role.kubernetes.io/control-plane")
        self.assertEqual(spec["serviceAccountName"], "custom-webhook-sa")
        self.assertEqual(wh["spec"]["template"]["metadata"]["annotations"], {"example.com/scrape": "true"})
        self.assertEqual(wh["spec"]["template"]["metadata"]["labels"]["tier"], "admission")
        self.assertEqual(c["resources"]["limits"], {"cpu": "1", "memory": "512Mi"})
        self.assertEqual(args_map(c["args"][1:]), {
            "tls-cert-file": "/etc/wasd/tls/tls.crt", "tls-key-file": "/etc/wasd/tls/tls.key",
            "port": "10443", "health-probe-bind-address": ":18081", "metrics-bind-address": ":18080",
            "metrics-secure": "true", "pod-scheduling-gate": "false", "pod-hold": "coscheduling=scheduler,kai=gate,native=gate,volcano=scheduler",
            "in-tree-deployment-integration": "true",
            "max-pending-scale-lookups": "16", "max-request-bytes": "1048576", "log-level": "debug",
            "lookup-timeout": "5s", "io-threads": "3", "shutdown-delay": "7s",
            "shutdown-grace-period": "90s", **FULL_BACKEND_ARGS})
        # ceil(7 + 90 + 5)
        self.assertEqual(spec["terminationGracePeriodSeconds"], 102)
        self.assertEqual(spec["securityContext"], {
            "runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10002, "fsGroup": 10003,
            "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/wasd.json"}})
        self.assertEqual(c["securityContext"]["capabilities"], {"drop": ["ALL", "NET_RAW"]})
        self.assertEqual((spec["hostNetwork"], spec["dnsPolicy"]), (True, "Default"))
        sel = wh["spec"]["selector"]["matchLabels"]
        self.assertEqual(spec["topologySpreadConstraints"], [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
             "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": sel}},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"custom": "selector"}}}])
        for probe, want in (("startupProbe", {"periodSeconds": 3, "failureThreshold": 20}),
                            ("livenessProbe", {"periodSeconds": 11, "timeoutSeconds": 2, "failureThreshold": 4}),
                            ("readinessProbe", {"periodSeconds": 6, "timeoutSeconds": 2, "failureThreshold": 3})):
            got = dict(c[probe])
            got.pop("httpGet")
            self.assertEqual(got, want, probe)
        self.assertIn({"name": "GODEBUG", "value": "x509sha1=0"}, c["env"])
        self.assertEqual(spec["volumes"][0]["secret"]["secretName"], "custom-tls")
        pdb = one(objs, "PodDisruptionBudget")["spec"]
        self.assertEqual((pdb["minAvailable"], pdb["unhealthyPodEvictionPolicy"]), (2, "IfHealthyBudget"))
        # A priority class outside system-*: no quota needed, none rendered.
        self.assertEqual(find(objs, "ResourceQuota"), [])
        svc = one(objs, "Service", "platform-wasd-webhook")
        self.assertEqual({p["name"]: (p["port"], p["targetPort"]) for p in svc["spec"]["ports"]},
                         {"webhook": (8443, "webhook"), "metrics": (18080, "metrics")})
        sa = one(objs, "ServiceAccount", "custom-webhook-sa")
        self.assertEqual(sa["metadata"]["annotations"], {"example.com/role": "webhook", "example.com/owner": "platform-team"})  # + commonAnnotations

        rc = one(objs, "Deployment", "platform-wasd-reconciler")
        rspec = rc["spec"]["template"]["spec"]
        r = container(rc, "reconciler")
        self.assertEqual(rc["spec"]["replicas"], 3)
        self.assertEqual(args_map(r["args"][1:]), {
            "leader-elect": "false", "lease-namespace": NS, "health-probe-bind-address": ":28081",
            "metrics-bind-address": ":28080", "workers": "8", "kube-api-qps": "50",
            "kube-api-burst": "100", "log-level": "debug",
            "kubeconfig": "/dev/null", "gang-status": "false", "gang-status-delay": "2s",
            "normal-events": "true", "controller-runtime-metrics": "false",
            "gang-member-metrics": "all", "gang-member-metrics-max-gangs": "50",
            "metrics-secure": "true", "metrics-cert-file": "/etc/wasd/tls/tls.crt",
            "metrics-key-file": "/etc/wasd/tls/tls.key", **FULL_BACKEND_ARGS})
        # No gang status: no gang alert, no deployments/status or nodes rules.
        self.assertNotIn("WasdGangPending", [x["alert"] for x in one(objs, "PrometheusRule")["spec"]["groups"][0]["rules"]])
        self.assertIn("nodeAffinity", rspec["affinity"])
        self.assertNotIn("podAntiAffinity", rspec["affinity"])
        self.assertEqual(rspec["priorityClassName"], "wasd-high")
        self.assertEqual(rspec["tolerations"][0]["tolerationSeconds"], 60)
        self.assertEqual(rspec["serviceAccountName"], "custom-reconciler-sa")
        self.assertIn({"name": "TZ", "value": "UTC"}, r["env"])
        self.assertEqual(rspec["topologySpreadConstraints"][0]["labelSelector"],
                         {"matchLabels": rc["spec"]["selector"]["matchLabels"]})
        self.assertEqual(r["startupProbe"]["periodSeconds"], 4)
        self.assertEqual(r["readinessProbe"]["failureThreshold"], 4)

        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            meta = one(objs, kind)["metadata"]
            self.assertEqual(meta["annotations"]["admissions.enforcer/disabled"], "true")
            self.assertEqual(meta["labels"]["argocd.argoproj.io/instance"], "platform")
        test_pod = one(objs, "Pod", "platform-wasd-test")
        self.assertEqual(args_map(container(test_pod, "selftest")["args"][1:])["namespace"], "wasd-selftest")
        self.assertEqual(one(objs, "Role", "platform-wasd-test")["metadata"]["namespace"], "wasd-selftest")
        nps = {o["metadata"]["name"]: o["spec"] for o in find(objs, "NetworkPolicy")}
        self.assertEqual(sorted(nps), ["platform-wasd-reconciler", "platform-wasd-webhook"])
        ingress = {r["ports"][0]["port"]: r.get("from") for r in nps["platform-wasd-webhook"]["ingress"]}
        self.assertEqual(ingress, {10443: [{"ipBlock": {"cidr": "10.0.0.0/8"}}],
                                   18080: [{"namespaceSelector": {"matchLabels": {
                                       "kubernetes.io/metadata.name": "monitoring"}}}],
                                   18081: None})
        self.assertEqual(nps["platform-wasd-webhook"]["policyTypes"], ["Ingress", "Egress"])
        self.assertEqual(nps["platform-wasd-webhook"]["podSelector"]["matchLabels"], sel)
        rule = one(objs, "PrometheusRule")
        self.assertEqual(rule["metadata"]["labels"]["release"], "prometheus")
        gated = [r for r in rule["spec"]["groups"][0]["rules"] if r["alert"] == "WasdPodsGatedTooLong"][0]
        self.assertTrue(gated["expr"].endswith("> 1800"), gated["expr"])

        cert = one(objs, "Certificate")
        self.assertEqual(cert["spec"]["issuerRef"], {"name": "corp-ca", "kind": "ClusterIssuer",
                                                     "group": "cert-manager.io"})
        self.assertEqual((cert["spec"]["duration"], cert["spec"]["renewBefore"]), ("2160h", "360h"))
        self.assertIn("platform-wasd-webhook.wasd-system.svc.corp.internal", cert["spec"]["dnsNames"])
        self.assertEqual(find(objs, "Issuer"), [])

        cleanup = one(objs, "Job", "platform-wasd-cleanup")
        self.assertEqual(cleanup["spec"]["backoffLimit"], 1)
        self.assertEqual(cleanup["spec"]["activeDeadlineSeconds"], 120)
        cspec = cleanup["spec"]["template"]["spec"]
        self.assertEqual(cspec["nodeSelector"], {"kubernetes.io/os": "linux"})
        self.assertEqual(cspec["tolerations"], [{"key": "dedicated", "operator": "Exists"}])
        k = cspec["containers"][0]
        self.assertEqual((k["image"], k["imagePullPolicy"]), ("mirror.example.com/platform/wasd:9.9.9-test", "Always"))
        self.assertEqual(k["resources"]["limits"], {"memory": "64Mi"})

    def test_full_values_self_managed(self):
        objs = rendered("full-selfmanaged")
        gen = one(objs, "Job", "platform-wasd-certs-generate")
        args = args_map(container(gen, "generate")["args"][2:])
        self.assertEqual((args["days"], args["renew-before"]), ("90", "720h"))
        self.assertEqual((args["service"], args["secret"]), ("platform-wasd-webhook", "custom-tls"))
        self.assertEqual(find(objs, "Deployment", "platform-wasd-cert-rotator"), [])  # rotation.enabled false
        objs = chart.render(values_files=[FULL], sets=["certs.mode=selfManaged",
                                                          "certs.selfManaged.rotation.enabled=true"])
        rot = one(objs, "Deployment", "platform-wasd-cert-rotator")
        r = container(rot, "rotate")
        self.assertEqual(args_map(r["args"][2:])["check-interval"], "30m")
        self.assertEqual(r["resources"]["limits"], {"memory": "32Mi"})
        self.assertEqual(rot["spec"]["template"]["spec"]["nodeSelector"], {"kubernetes.io/os": "linux"})

    def test_image_digest_wins_over_tag(self):
        digest = "sha256:" + "ab" * 32
        objs = chart.render(sets=["image.digest=" + digest, "image.tag=1.2.3"])
        c = container(one(objs, "Deployment", "wasd-webhook"), "webhook")
        self.assertEqual(c["image"], chart.TEST_IMAGE_REPOSITORY + "@" + digest)

    def test_notes_tell_how_to_opt_in(self):
        notes = chart.render_text(notes=True)
        self.assertIn("wasd.io/scheduling", notes)
        self.assertIn("Recreate", notes)
        self.assertIn("kube-system, wasd-system", notes)


if __name__ == "__main__":
    unittest.main(verbosity=2)
