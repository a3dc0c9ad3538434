#!/usr/bin/env python3
"""Chart options a platform team needs on its first day (issue 42), rendered
by the real helm (tests/lib/chart.py). Proven:

- without image.repository (the placeholder default REGISTRY/wasd, or the
  ghcr.io/wasd-io/wasd of earlier releases) `helm template` and `helm
  install --dry-run` fail at once with one message naming the value and how
  to set it; an empty name is refused by the schema; a real name renders.
- global.imagePullSecrets and imagePullSecrets reach every pod (webhook,
  reconciler, cert rotator, hook Jobs, helm test pod), global first, each
  name once; none when both are empty.
- webhook/reconciler extraVolumes and extraVolumeMounts land in the pod and
  its container next to the chart's own; revisionHistoryLimit on every
  Deployment.
- every ServiceAccount the chart creates has automountServiceAccountToken
  false and every pod, each of which calls the API server, asks for its
  token explicitly (so the pods keep working and nothing else using those
  accounts gets a token).
- Service annotations reach the webhook and the metrics Service only;
  commonLabels and commonAnnotations reach every object in both certificate
  modes, an object's own annotation winning and hook annotations kept.
- the namespace opt-out by label: every webhook's namespaceSelector refuses
  namespaces labelled <admission.ignoreNamespaceLabel>=true (wasd.io/ignore
  by default, a configured key, none when empty) next to the name list, and
  the selector does what it says on namespaces (evaluated here); NOTES
  says how to label a namespace.
- Chart.yaml: kubeVersion admits 1.37 and refuses 1.36 (helm install
  --kube-version, as helm install checks the cluster's), home/sources/maintainers/icon and the artifacthub
  annotations are set, the icon file exists.
"""
import os
import unittest

import yaml

from lib import chart
from lib.chart import find, one, pod_specs

POD_KINDS = ("Deployment", "Job", "Pod")


def webhooks(objs):
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for o in find(objs, kind):
            yield from o["webhooks"]


def selects(selector, labels):
    """A LabelSelector's matchExpressions on a namespace's labels (In, NotIn,
    Exists, DoesNotExist as Kubernetes defines them)."""
    for e in selector.get("matchExpressions", []):
        has, val = e["key"] in labels, labels.get(e["key"])
        op = e["operator"]
        if op == "In" and not (has and val in e["values"]):
            return False
        if op == "NotIn" and has and val in e["values"]:
            return False
        if op == "Exists" and not has:
            return False
        if op == "DoesNotExist" and has:
            return False
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())

MESSAGE = "image.repository is not set"
HOW = "--set image.repository=REGISTRY/wasd"


class ImageMustBeNamed(unittest.TestCase):
    def test_placeholder_fails_template_and_install(self):
        for repo in ("REGISTRY/wasd", "ghcr.io/wasd-io/wasd", "ghcr.io/wasd-io/wasd/"):
            for notes in (False, True):  # helm template; helm install --dry-run
                with self.subTest(repo=repo, install=notes):
                    with self.assertRaises(chart.RenderError) as cm:
                        chart.render_text(sets=["image.repository=" + repo], notes=notes)
                    err = str(cm.exception)
                    self.assertIn(MESSAGE, err)
                    self.assertIn(HOW, err)
                    # One message: helm stops at the first failing template.
                    self.assertEqual(err.count(MESSAGE), 1, err)

    def test_chart_default_is_the_placeholder(self):
        # The control for the test above: what a user who sets nothing gets.
        self.assertEqual(chart.load_values()["image"]["repository"], "REGISTRY/wasd")

    def test_empty_name_is_refused_by_the_schema(self):
        with self.assertRaises(chart.RenderError) as cm:
            chart.render_text(sets=["image.repository="])
        self.assertIn("/image/repository", str(cm.exception))

    def test_a_named_image_renders_everywhere(self):
        objs = chart.render(sets=["image.repository=registry.example.com/team/wasd"])
        images = set()
        for o in objs:
            spec = o.get("spec", {})
            pod = spec.get("template", {}).get("spec") if o["kind"] in ("Deployment", "Job") else \
                spec if o["kind"] == "Pod" else None
            if pod:
                images |= {c["image"] for c in pod["containers"]}
        self.assertEqual(images, {"registry.example.com/team/wasd:0.1.0"})


class PullSecrets(unittest.TestCase):
    def test_every_pod_global_first_each_once(self):
        objs = chart.render(sets=["global.imagePullSecrets[0].name=parent", "global.imagePullSecrets[1].name=both",
                                  "imagePullSecrets[0].name=both", "imagePullSecrets[1].name=own"])
        seen = set()
        for o, spec in pod_specs(objs):
            self.assertEqual(spec.get("imagePullSecrets"), [{"name": "parent"}, {"name": "both"}, {"name": "own"}],
                             o["metadata"]["name"])
            seen.add(o["metadata"].get("labels", {}).get("app.kubernetes.io/component"))
        self.assertTrue({"webhook", "reconciler", "cert-rotator", "certs", "cleanup", "test"} <= seen, seen)

    def test_global_alone_is_honoured(self):
        for o, spec in pod_specs(chart.render(sets=["global.imagePullSecrets[0].name=parent"])):
            self.assertEqual(spec.get("imagePullSecrets"), [{"name": "parent"}], o["metadata"]["name"])

    def test_none_by_default(self):
        for o, spec in pod_specs(chart.render()):
            self.assertNotIn("imagePullSecrets", spec, o["metadata"]["name"])


class VolumesAndHistory(unittest.TestCase):
    def test_extra_volumes_and_mounts(self):
        objs = chart.render(values_files=[chart.write_values({
            "webhook": {"extraVolumes": [{"name": "client-ca", "configMap": {"name": "ca"}}],
                        "extraVolumeMounts": [{"name": "client-ca", "mountPath": "/etc/ca", "readOnly": True}],
                        "extraArgs": ["--client-ca-file=/etc/ca/ca.crt"]},
            "reconciler": {"extraVolumes": [{"name": "scratch", "emptyDir": {}}],
                           "extraVolumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]}})])
        w = one(objs, "Deployment", "wasd-webhook")["spec"]["template"]["spec"]
        self.assertEqual([v["name"] for v in w["volumes"]], ["tls", "client-ca"])
        self.assertEqual(w["volumes"][1]["configMap"], {"name": "ca"})
        self.assertEqual([(m["name"], m["mountPath"]) for m in w["containers"][0]["volumeMounts"]],
                         [("tls", "/etc/wasd/tls"), ("client-ca", "/etc/ca")])
        self.assertIn("--client-ca-file=/etc/ca/ca.crt", w["containers"][0]["args"])
        r = one(objs, "Deployment", "wasd-reconciler")["spec"]["template"]["spec"]
        # After the webhook's pair, which the HTTPS /metrics serves (metrics.secure).
        self.assertEqual([v["name"] for v in r["volumes"]], ["tls", "scratch"])
        self.assertEqual(r["volumes"][1], {"name": "scratch", "emptyDir": {}})
        self.assertEqual(r["containers"][0]["volumeMounts"][1:], [{"name": "scratch", "mountPath": "/scratch"}])
        plain = one(chart.render(values_files=[chart.write_values({
            "metrics": {"secure": False},
            "reconciler": {"extraVolumes": [{"name": "scratch", "emptyDir": {}}],
                           "extraVolumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]}})]),
            "Deployment", "wasd-reconciler")["spec"]["template"]["spec"]
        self.assertEqual(plain["volumes"], [{"name": "scratch", "emptyDir": {}}])
        self.assertEqual(plain["containers"][0]["volumeMounts"], [{"name": "scratch", "mountPath": "/scratch"}])

    def test_no_extra_volumes_by_default(self):
        objs = chart.render()
        w = one(objs, "Deployment", "wasd-webhook")["spec"]["template"]["spec"]
        self.assertEqual([v["name"] for v in w["volumes"]], ["tls"])
        r = one(objs, "Deployment", "wasd-reconciler")["spec"]["template"]["spec"]
        self.assertEqual([v["name"] for v in r["volumes"]], ["tls"])  # metrics.secure's pair
        self.assertEqual([m["name"] for m in r["containers"][0]["volumeMounts"]], ["tls"])
        r = one(chart.render(sets=["metrics.secure=false"]), "Deployment", "wasd-reconciler")["spec"]["template"]["spec"]
        self.assertNotIn("volumes", r)
        self.assertNotIn("volumeMounts", r["containers"][0])

    def test_revision_history_limit_on_every_deployment(self):
        for sets, want in (([], 10), (["revisionHistoryLimit=2"], 2)):
            deps = find(chart.render(sets=sets), "Deployment")
            self.assertEqual(len(deps), 3)  # webhook, reconciler, cert rotator
            for d in deps:
                self.assertEqual(d["spec"]["revisionHistoryLimit"], want, d["metadata"]["name"])


class Tokens(unittest.TestCase):
    def test_accounts_do_not_automount_pods_ask(self):
        for mode in ("selfManaged", "certManager"):
            objs = chart.render(sets=["certs.mode=" + mode])
            sas = find(objs, "ServiceAccount")
            self.assertTrue(sas)
            for sa in sas:
                self.assertIs(sa.get("automountServiceAccountToken"), False, sa["metadata"]["name"])
            names = {sa["metadata"]["name"] for sa in sas}
            for o, spec in pod_specs(objs):
                # Every wasd pod talks to the API server: webhook (scale
                # lookups), reconciler, rotator, hooks, selftest.
                self.assertIs(spec.get("automountServiceAccountToken"), True, o["metadata"]["name"])
                self.assertIn(spec["serviceAccountName"], names)


class Metadata(unittest.TestCase):
    def test_service_annotations(self):
        objs = chart.render(sets=["webhook.service.annotations.a=webhook",
                                  "reconciler.service.annotations.b=metrics"])
        self.assertEqual(one(objs, "Service", "wasd-webhook")["metadata"]["annotations"], {"a": "webhook"})
        self.assertEqual(one(objs, "Service", "wasd-reconciler-metrics")["metadata"]["annotations"], {"b": "metrics"})
        for o in chart.render():
            if o["kind"] == "Service":
                self.assertNotIn("annotations", o["metadata"])

    def test_common_labels_and_annotations_on_every_object(self):
        for mode in ("selfManaged", "certManager"):
            objs = chart.render(values_files=[chart.write_values({
                "certs": {"mode": mode},
                "commonLabels": {"team": "ml"}, "commonAnnotations": {"example.com/owner": "ml",
                                                                       "shared": "common"},
                "webhook": {"service": {"annotations": {"shared": "own"}}},
                "admission": {"webhookAnnotations": {"shared": "own"}},
                "serviceMonitor": {"enabled": True}, "prometheusRule": {"enabled": True},
                "grafanaDashboard": {"enabled": True}, "networkPolicy": {"enabled": True}})])
            kinds = set()
            for o in objs:
                where = "%s %s (%s)" % (o["kind"], o["metadata"]["name"], mode)
                kinds.add(o["kind"])
                self.assertEqual(o["metadata"]["labels"].get("team"), "ml", where)
                ann = o["metadata"].get("annotations") or {}
                self.assertEqual(ann.get("example.com/owner"), "ml", where)
            self.assertTrue({"Deployment", "Job", "Pod", "Service", "ServiceAccount", "ClusterRole",
                             "MutatingWebhookConfiguration", "ServiceMonitor", "PrometheusRule",
                             "ConfigMap", "NetworkPolicy"} <= kinds, kinds)
            self.assertEqual(one(objs, "Service", "wasd-webhook")["metadata"]["annotations"]["shared"], "own")
            self.assertEqual(one(objs, "MutatingWebhookConfiguration")["metadata"]["annotations"]["shared"], "own")
            for o in objs:
                ann = o["metadata"].get("annotations") or {}
                if o["kind"] == "Job":
                    self.assertIn("helm.sh/hook", ann)  # the hook's own kept
        # Pods of the Deployments are not objects the chart renders: untouched.
        d = one(objs, "Deployment", "wasd-reconciler")
        self.assertNotIn("example.com/owner", d["spec"]["template"]["metadata"].get("annotations") or {})

    def test_no_annotations_by_default_where_none_are_own(self):
        for o in chart.render():
            if o["kind"] in ("Deployment", "ClusterRole", "Service") and \
                    "helm.sh/hook" not in (o["metadata"].get("annotations") or {}):
                self.assertNotIn("annotations", o["metadata"], o["metadata"]["name"])


class NamespaceOptOut(unittest.TestCase):
    def check(self, objs, key, excluded=()):
        hooks = list(webhooks(objs))
        self.assertEqual(len(hooks), 4)
        for wh in hooks:
            sel = wh["namespaceSelector"]
            where = wh["name"]
            self.assertTrue(selects(sel, {"kubernetes.io/metadata.name": "team-a"}), where)
            self.assertFalse(selects(sel, {"kubernetes.io/metadata.name": "kube-system"}), where)
            for name in excluded:
                self.assertFalse(selects(sel, {"kubernetes.io/metadata.name": name}), where)
            if key:
                self.assertFalse(selects(sel, {"kubernetes.io/metadata.name": "team-b", key: "true"}), where)
                # Only "true" opts out; another value is a typo, not an opt-out.
                self.assertTrue(selects(sel, {"kubernetes.io/metadata.name": "team-b", key: "false"}), where)
            for other in ("wasd.io/ignore", "example.com/no-wasd"):
                if other != key:
                    self.assertTrue(selects(sel, {"kubernetes.io/metadata.name": "team-c", other: "true"}), where)

    def test_default_label(self):
        self.check(chart.render(), "wasd.io/ignore")

    def test_configured_label_with_names(self):
        self.check(chart.render(sets=["admission.ignoreNamespaceLabel=example.com/no-wasd",
                                      "admission.excludedNamespaces[0]=monitoring"]),
                   "example.com/no-wasd", excluded=("monitoring", "wasd-system"))

    def test_label_opt_out_off(self):
        objs = chart.render(sets=["admission.ignoreNamespaceLabel="])
        for wh in webhooks(objs):
            self.assertEqual(len(wh["namespaceSelector"]["matchExpressions"]), 1)
        self.check(objs, "")

    def test_notes_say_how_to_opt_out(self):
        self.assertIn("kubectl label namespace NAME wasd.io/ignore=true", chart.render_text(notes=True))
        self.assertNotIn("kubectl label namespace",
                         chart.render_text(notes=True, sets=["admission.ignoreNamespaceLabel="]))

    def test_bad_label_key_is_refused(self):
        with self.assertRaises(chart.RenderError):
            chart.render_text(sets=["admission.ignoreNamespaceLabel=has space"])


class ChartYaml(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(chart.CHART_DIR, "Chart.yaml")) as f:
            cls.meta = yaml.safe_load(f)

    def test_kube_version_is_what_the_product_needs(self):
        self.assertEqual(chart.min_kube_version(), "1.37")
        chart.helm("template", "wasd", chart.CHART_DIR, "-n", "wasd-system", "--kube-version", "1.37.2",
                   "--set", "image.repository=" + chart.TEST_IMAGE_REPOSITORY)
        with self.assertRaises(chart.RenderError) as cm:
            chart.helm("template", "wasd", chart.CHART_DIR, "-n", "wasd-system", "--kube-version", "1.36.0",
                       "--set", "image.repository=" + chart.TEST_IMAGE_REPOSITORY)
        self.assertIn("kubeVersion", str(cm.exception))

    def test_metadata_for_artifact_hub(self):
        m = self.meta
        self.assertTrue(m["home"].startswith("https://"))
        self.assertTrue(m["sources"] and all(s.startswith("https://") for s in m["sources"]))
        self.assertTrue(m["maintainers"] and all(x.get("name") for x in m["maintainers"]))
        self.assertTrue(m["icon"].endswith("/charts/wasd/icon.svg"))
        self.assertTrue(os.path.isfile(os.path.join(chart.CHART_DIR, "icon.svg")))
        ann = m["annotations"]
        self.assertEqual(ann["artifacthub.io/license"], "Apache-2.0")
        links = yaml.safe_load(ann["artifacthub.io/links"])
        self.assertTrue(all(set(x) == {"name", "url"} for x in links), links)
        self.assertIn("source", [x["name"] for x in links])


if __name__ == "__main__":
    unittest.main()
