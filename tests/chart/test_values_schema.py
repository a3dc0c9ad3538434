"""values.schema.json as the real helm (v4.3.2) enforces it: `helm lint
--strict` accepts the defaults and the full override file, `helm template`
refuses each bad value with helm's own schema message and renders each good
variant; the schema covers every value in values.yaml and nothing else, and
the chart README documents every value with its default.

A bad value is given the way a user gives it: a values file over the chart's
defaults. A null in that file removes the default (helm's merge), so "the key
is missing" is written as null.
"""

import copy
import json
import os
import re
import unittest

import yaml


from lib import chart

# What helm prints when values.schema.json refuses the values.
SCHEMA_MESSAGE = "values don't meet the specifications of the schema"


def leaves(values, schema, root, prefix=""):
    """Dotted value paths, recursing while the schema spells out properties
    in place (a $ref'd definition such as resources is one value)."""
    if "$ref" in schema:
        return [prefix]
    props = schema.get("properties")
    if not props or not isinstance(values, dict):
        return [prefix]
    out = []
    for key, val in values.items():
        path = "%s.%s" % (prefix, key) if prefix else key
        if key not in props:
            out.append(path + " (not in schema)")
            continue
        out += leaves(val, props[key], root, path)
    for key in props:
        if key not in values:
            out.append(("%s.%s" % (prefix, key) if prefix else key) + " (not in values.yaml)")
    return out


def with_value(values, path, value):
    out = copy.deepcopy(values)
    node = out
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[k]
    node[keys[-1]] = None if value is DELETE else value
    return out


# The key removed: a null in the user's file drops the chart's default.
DELETE = object()

BAD = [
    ("certs.mode", "vault"),
    ("webhook.replicaCount", 0),
    ("webhook.replicaCount", "3"),
    ("webhook.replicas", 3),
    ("webhook.port", 70000),
    ("webhook.podSchedulingGate", "yes"),
    ("webhook.podHold.native", "never"),
    ("webhook.podHold.slurm", "gate"),
    ("reconciler.normalEvents", "yes"),
    ("webhook.maxRequestBytes", 10),
    ("webhook.antiAffinity", "maybe"),
    ("webhook.podDisruptionBudget.minAvailable", "half"),
    ("webhook.service.type", "ExternalName"),
    ("webhook.serviceAccount.create", DELETE),
    ("webhook.extraArgs", "--x"),
    ("webhook.extraEnv", [{"value": "no name"}]),
    ("webhook.nodeSelector", {"a": 1}),
    ("webhook.tolerations", [{"operator": "Sometimes"}]),
    ("reconciler.workers", 0),
    ("reconciler.kubeApiQps", -1),
    ("reconciler.kubeApiQps", "20"),
    ("reconciler.kubeApiBurst", 0),
    ("reconciler.kubeApiBurst", 2.5),
    ("reconciler.leaderElect", "true"),
    ("admission.failurePolicy", "Maybe"),
    ("admission.scaleFailurePolicy", "fail"),
    ("admission.validatingTimeoutSeconds", 31),
    ("admission.mutatingTimeoutSeconds", 0),
    ("admission.excludedNamespaces", ["Bad_NS"]),
    ("logLevel", "trace"),
    ("image.digest", "sha256:short"),
    ("image.pullPolicy", "Sometimes"),
    ("image.repository", ""),
    ("podSecurityContext.runAsUser", 0),
    ("podSecurityContext.runAsUser", "65532"),
    ("containerSecurityContext.privileged", "no"),
    ("podSecurityContext.seccompProfile", {"type": "Off"}),
    ("resourceQuota.pods", 0),
    ("resourceQuota.enabled", DELETE),
    ("webhook.ioThreads", 0),
    ("webhook.ioThreads", None),
    ("webhook.shutdownDelay", "5"),
    ("webhook.shutdownDelay", "5 s"),
    ("webhook.shutdownGracePeriod", "30us"),
    # One unit only: the webhook's duration flags do not take compound forms yet.
    ("webhook.shutdownGracePeriod", "1m30s"),
    ("webhook.podDisruptionBudget.maxUnavailable", "one"),
    ("webhook.podDisruptionBudget.unhealthyPodEvictionPolicy", "Never"),
    ("webhook.topologySpreadConstraints", [{"maxSkew": 1, "topologyKey": "zone"}]),
    ("webhook.topologySpreadConstraints", [{"maxSkew": 1, "topologyKey": "zone",
                                            "whenUnsatisfiable": "Maybe"}]),
    ("webhook.hostNetwork", "true"),
    ("webhook.dnsPolicy", "ClusterFirstWithHostNetwork"),
    ("webhook.probes", {"startup": {"periodSeconds": 0}, "liveness": {}, "readiness": {}}),
    # Maps merge over the defaults: only a null drops the startup probe.
    ("webhook.probes", {"startup": None, "liveness": {}, "readiness": {}}),
    ("reconciler.probes", {"startup": {}, "liveness": {"path": "/x"}, "readiness": {}}),
    ("admission.webhookLabels", {"a": "has spaces"}),
    ("admission.objectSelector", {"matchLabels": {"a": "b"}, "matchFields": {}}),
    ("admission.objectSelector", {"matchExpressions": [{"key": "a", "operator": "Like"}]}),
    ("admission.matchConditions", [{"name": "x"}]),
    ("admission.matchConditions", [{"name": "has space", "expression": "true"}]),
    ("test.namespace", "Not_A_Namespace"),
    ("test.enabled", DELETE),
    ("networkPolicy.webhookFrom", {"ipBlock": {}}),
    ("prometheusRule.gatedPodsFor", "15 minutes"),
    ("global", "not-a-map"),
    ("global.imageRegistry", "https://mirror/"),
    ("certs.selfManaged.days", 0),
    ("certs.selfManaged.renewBefore", "90d"),
    ("certs.selfManaged.rotation.checkInterval", "hourly"),
    ("certs.selfManaged.rotation.enabled", DELETE),
    ("certs.certManager.issuerRef.kind", "Vault"),
    ("certs.certManager.duration", "1 year"),
    ("certs.secretName", "Not_A_Name"),
    ("hooks.backoffLimit", -1),
    ("serviceMonitor.interval", "soon"),
    ("commonLabels", {"team": "has spaces"}),
    ("nameOverride", "UPPER"),
    ("unknownTopLevel", True),
    ("backend", "yunikorn"),
    ("allowedBackends", ["native", "kueue"]),
    ("allowedBackends", "native,volcano"),
    ("clusterFacts.volcanoTopologyTiers", {"topology.kubernetes.io/zone": 0}),
    ("clusterFacts.kaiTopologyLevels", "zone"),
    ("clusterFacts.coschedulingSchedulerName", ""),
    ("clusterFacts.unknownFact", "x"),
]


class ValuesSchema(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.schema = chart.load_schema()
        cls.values = chart.load_values()

    def helm_errors(self, values):
        """helm's message when `helm template` refuses these values, else None.
        The default image repository is the chart's placeholder, which the chart
        refuses by design (not by the schema): the test image stands in for it."""
        image = values.get("image")
        if isinstance(image, dict) and image.get("repository") == self.values["image"]["repository"]:
            values = dict(values, image=dict(image, repository=chart.TEST_IMAGE_REPOSITORY))
        try:
            chart.render(values_files=[chart.write_values(values)])
        except chart.RenderError as e:
            return str(e)
        return None

    def test_defaults_and_full_file_are_valid(self):
        full_path = os.path.join(chart.TESTDATA, "values-full.yaml")
        for args in ((), (full_path,)):
            out = chart.lint(values_files=args)
            self.assertIn("0 chart(s) failed", out)
        with open(full_path) as f:
            full = yaml.safe_load(f)
        # The override file sets every value the schema knows.
        self.assertEqual(sorted(leaves(full, self.schema, self.schema)),
                         sorted(leaves(self.values, self.schema, self.schema)))

    def test_bad_values_are_rejected_by_helm(self):
        for path, value in BAD:
            with self.subTest(value="%s=%r" % (path, value)):
                err = self.helm_errors(with_value(self.values, path, value))
                self.assertIsNotNone(err, "helm accepted %s=%r" % (path, value))
                self.assertIn(SCHEMA_MESSAGE, err)

    def test_good_variants_are_accepted_by_helm(self):
        for path, value in [("webhook.maxRequestBytes", 1048576), ("reconciler.workers", 4),
                            ("reconciler.kubeApiQps", 0), ("reconciler.kubeApiQps", 200),
                            ("reconciler.kubeApiQps", 2.5), ("reconciler.kubeApiBurst", 300),
                            ("webhook.podDisruptionBudget.minAvailable", "50%"),
                            ("image.digest", "sha256:" + "0" * 64), ("certs.mode", "certManager"),
                            ("webhook.priorityClassName", ""), ("webhook.antiAffinity", "none"),
                            # OpenShift: the platform picks the ids.
                            ("podSecurityContext.runAsUser", None), ("podSecurityContext.fsGroup", None),
                            ("webhook.shutdownDelay", "2.5s"), ("webhook.shutdownDelay", "500ms"),
                            ("webhook.podDisruptionBudget.maxUnavailable", "25%"),
                            # Subchart: Helm copies the parent's globals in.
                            ("global", {"imageRegistry": "mirror:5000", "storageClass": "x", "any": {}}),
                            ("podSecurityContext", {"runAsNonRoot": True, "supplementalGroups": [5]}),
                            ("backend", "kai"), ("allowedBackends", ["native", "coscheduling"]),
                            ("clusterFacts.volcanoTopologyTiers", {"a.io/rack": 2, "b.io/zone": "z"})]:
            with self.subTest(value="%s=%r" % (path, value)):
                self.assertIsNone(self.helm_errors(with_value(self.values, path, value)))

    def test_the_schema_message_is_helms(self):
        # Control for the two tests above: the message they look for is the
        # one helm prints, and a value the schema allows is not refused.
        err = self.helm_errors(with_value(self.values, "webhook.port", 70000))
        self.assertIn(SCHEMA_MESSAGE, err)
        self.assertIn("/webhook/port", err)
        self.assertIsNone(self.helm_errors(with_value(self.values, "webhook.port", 9443)))

    def test_schema_and_values_cover_each_other(self):
        paths = leaves(self.values, self.schema, self.schema)
        self.assertEqual([p for p in paths if "(" in p], [])

    def test_readme_documents_every_value_with_its_default(self):
        with open(os.path.join(chart.CHART_DIR, "README.md")) as f:
            readme = f.read()
        section = readme.split("\n## Values\n", 1)[1].split("\n## ", 1)[0]
        rows = {}
        for line in section.splitlines():
            m = re.match(r"^\| `([A-Za-z0-9_.]+)` \| (.*?) \| (.+) \|$", line)
            if m:
                rows[m.group(1)] = m.group(2)
        paths = leaves(self.values, self.schema, self.schema)
        self.assertEqual(sorted(p for p in paths if p not in rows), [], "values missing in README")
        self.assertEqual(sorted(p for p in rows if p not in paths), [], "README rows for unknown values")
        for path in paths:
            node = self.values
            for k in path.split("."):
                node = node[k]
            if isinstance(node, dict) and node and path.endswith(("resources", "probes")):
                continue  # described in words
            if isinstance(node, bool):
                want = "`%s`" % ("true" if node else "false")
            elif node is None:
                want = "`null`"
            elif isinstance(node, str):
                want = "`%s`" % node if node else '`""`'
            else:
                want = "`%s`" % json.dumps(node)
            self.assertEqual(rows[path], want, path)

    def test_renderer_merges_values_like_helm(self):
        # -f over defaults: maps merge, lists replace, null removes.
        path = chart.write_values({"webhook": {"nodeSelector": {"zone": "a"},
                                                  "tolerations": [{"key": "k", "operator": "Exists"}],
                                                  "priorityClassName": None}})
        objs = chart.render(values_files=[path], sets=["webhook.nodeSelector.disk=ssd"])
        spec = chart.one(objs, "Deployment", "wasd-webhook")["spec"]["template"]["spec"]
        self.assertEqual(spec["nodeSelector"], {"zone": "a", "disk": "ssd"})
        self.assertEqual(spec["tolerations"], [{"key": "k", "operator": "Exists"}])
        self.assertNotIn("priorityClassName", spec)
        self.assertEqual(spec["securityContext"]["runAsUser"], 65532)  # untouched default kept


if __name__ == "__main__":
    unittest.main(verbosity=2)
