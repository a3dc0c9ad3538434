#!/usr/bin/env python3
"""REAL TOOLS on the chart (issue 41, first step): helm v4.3.2 and kube-apiserver
v1.37.2 from scripts/components.sh judge charts/wasd, not a stand-in of ours.

- `helm lint --strict` passes for the default values and for every platform
  values file under charts/wasd/ci/ (helm enforces values.schema.json itself);
- a values file the schema forbids is refused by helm with the schema's words;
- `helm template` of each renders, and every object whose kind this API server
  serves is accepted by `kubectl apply --dry-run=server` (the API server's own
  schema, defaulting and validation, with kubectl's strict field validation:
  an unknown or misplaced field is an error; the namespace exists, nothing is
  stored);
- the same for every render tests/chart/test_chart.py checks (lib.chart.SCENARIOS:
  each certificate mode, the override-everything file, external
  ServiceAccounts, another namespace, the longest release name);
- a manifest with a mistake of the kind the chart could make (a bad enum, an
  unknown field, a missing selector) is refused by the same dry run (kubectl
  validates against the OpenAPI schema the server publishes) and, with
  kubectl's validation off, the bad enum and the missing selector by the API
  server itself, so the check above can fail;
- the kube-apiserver series the PrometheusRule's WasdWebhookDown reads
  (apiserver_admission_webhook_rejection_count with
  error_type="calling_webhook_error", apiserver_admission_webhook_fail_open_count)
  exist in this kube-apiserver's /metrics under those names and labels once
  it has called a `*.wasd.io` webhook nobody answers (one with failurePolicy
  Fail, one with Ignore), and the rule's selectors match them.
  Kinds of CRDs this cluster does not have (Prometheus Operator, cert-manager)
  are listed, not applied.
"""
import copy
import glob
import json
import os
import re
import tempfile
import unittest

import yaml

from cluster.realcluster import NS, RealCluster, run, wait_until
from lib import chart, promtext
from lib.net import free_port
from lib.paths import SOURCE_DIR

CHART = os.path.join(SOURCE_DIR, "charts", "wasd")
VALUES = sorted(glob.glob(os.path.join(CHART, "ci", "*-values.yaml")))
# Kinds of the optional integrations whose CRDs this cluster does not have.
OPTIONAL_KINDS = {"monitoring.coreos.com/v1 ServiceMonitor", "monitoring.coreos.com/v1 PrometheusRule",
                  "cert-manager.io/v1 Certificate", "cert-manager.io/v1 Issuer"}


class ChartOnRealTools(RealCluster):
    def served_kinds(self):
        out = self.kubectl("api-resources", "-o", "wide", "--no-headers").stdout
        kinds = set()
        for line in out.splitlines():
            cols = line.split()
            # NAME [SHORTNAMES] APIVERSION NAMESPACED KIND VERBS...: KIND follows true/false.
            for i, c in enumerate(cols):
                if c in ("true", "false") and i + 1 < len(cols):
                    kinds.add((cols[i - 1], cols[i + 1]))
                    break
        return kinds

    def apply_list(self, items, *verb):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
        try:
            # No -n: each object keeps the namespace the chart gives it (the helm test
            # Role lives in test.namespace).
            return run(os.path.join(self.bin, "kubectl"), *verb, "-f", f.name, check=False, env=self.env)
        finally:
            os.unlink(f.name)

    def test_lint_template_and_server_dry_run(self):
        self.assertTrue(VALUES, "no values files under charts/wasd/ci")
        self.kubectl("create", "namespace", NS, check=False)
        served = self.served_kinds()
        unchecked = set()
        for values in [None] + VALUES:
            label = os.path.basename(values) if values else "default values"
            with self.subTest(values=label):
                args = ["--set", "image.repository=" + self.image] + (["-f", values] if values else [])
                lint = self.helm("lint", "--strict", CHART, *args, check=False)
                self.assertEqual(lint.returncode, 0, f"{label}: helm lint --strict\n{lint.stdout}{lint.stderr}")
                self.assertIn("0 chart(s) failed", lint.stdout)
                rendered = self.helm("template", "wasd", CHART, "-n", NS, "--set", "image.tag=0.0.0-test",
                                     *args).stdout
                docs = [d for d in yaml.safe_load_all(rendered) if d]
                self.assertTrue(docs, label)
                # A bare Pod (the helm test hook) is admitted only if its ServiceAccount
                # exists, and a dry run stores none: dry_run applies the chart's
                # ServiceAccounts for real.
                unchecked |= self.dry_run(docs, label, served)
        # Only the optional integrations' kinds go unchecked here.
        self.assertLessEqual(unchecked, OPTIONAL_KINDS, sorted(unchecked))

    def dry_run(self, docs, label, served):
        """Applies the served objects of `docs` with --dry-run=server (their
        ServiceAccounts for real first) and asserts each was accepted."""
        applicable = [d for d in docs if (d["apiVersion"], d["kind"]) in served]
        self.apply_list([d for d in applicable if d["kind"] == "ServiceAccount"], "apply")
        p = self.apply_list(applicable, "apply", "--dry-run=server")
        self.assertEqual(p.returncode, 0, f"{label}: kubectl apply --dry-run=server\n{p.stdout}{p.stderr}")
        self.assertEqual(len([ln for ln in p.stdout.splitlines() if ln.endswith("(server dry run)")]),
                         len(applicable), p.stdout)
        return {f"{d['apiVersion']} {d['kind']}" for d in docs if (d["apiVersion"], d["kind"]) not in served}

    def test_every_render_of_the_chart_tests_is_accepted(self):
        served = self.served_kinds()
        unchecked = set()
        for key, kw in chart.SCENARIOS.items():
            with self.subTest(scenario=key):
                kw = dict(kw)
                kw["sets"] = list(kw.get("sets", [])) + ["image.tag=0.0.0-test"]
                docs = chart.render(**kw)
                # The namespaces the release and its helm test use, and the
                # ServiceAccounts a values file names instead of creating them.
                namespaces = {d["metadata"]["namespace"] for d in docs if d["metadata"].get("namespace")}
                for ns in sorted(namespaces):
                    self.kubectl("create", "namespace", ns, check=False)
                for d in docs:
                    spec = d.get("spec", {}).get("template", {}).get("spec") or d.get("spec", {})
                    sa = spec.get("serviceAccountName") if isinstance(spec, dict) else None
                    if sa:
                        self.kubectl("create", "serviceaccount", sa, "-n", d["metadata"]["namespace"],
                                     check=False)
                unchecked |= self.dry_run(docs, key, served)
        self.assertLessEqual(unchecked, OPTIONAL_KINDS, sorted(unchecked))

    def test_kube_apiserver_serves_the_series_webhook_down_reads(self):
        # Two webhooks on a loopback port nothing listens on, scoped by an
        # objectSelector to the one ConfigMap created below, so no other
        # write of this class meets them.
        port = free_port()
        def config(kind, policy):
            return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                    "metadata": {"name": f"down-{policy.lower()}"},
                    "webhooks": [{"name": f"down-{policy.lower()}.wasd.io", "failurePolicy": policy,
                                  "sideEffects": "None", "admissionReviewVersions": ["v1"],
                                  "timeoutSeconds": 2,
                                  "clientConfig": {"url": f"https://127.0.0.1:{port}/validate"},
                                  "objectSelector": {"matchLabels": {"wasd-test": "webhook-down"}},
                                  "rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                             "operations": ["CREATE"], "resources": ["configmaps"]}]}]}
        configs = [config("ValidatingWebhookConfiguration", "Ignore"),
                   config("ValidatingWebhookConfiguration", "Fail")]
        try:
            for c in configs:
                p = self.apply_list([c], "apply")
                self.assertEqual(p.returncode, 0, p.stderr)
            cm = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "down", "namespace": "default", "labels": {"wasd-test": "webhook-down"}}}
            # The API server takes a moment to see a new configuration: retry
            # until the Fail webhook refuses the create.
            refused = wait_until("the Fail webhook's call to refuse the create",
                                 lambda: (lambda p: (p.returncode != 0 and "failed calling webhook" in p.stderr,
                                                     p.stderr))(self.apply_list([cm], "create")), timeout=60)
            self.assertIn("down-fail.wasd.io", refused)
        finally:
            for c in configs:
                self.kubectl("delete", "validatingwebhookconfiguration", c["metadata"]["name"],
                             "--ignore-not-found", check=False)
        metrics = self.kubectl("get", "--raw", "/metrics").stdout
        families = promtext.parse(metrics)
        rejected = families["apiserver_admission_webhook_rejection_count"]
        self.assertEqual(rejected.type, "counter")
        self.assertGreaterEqual(rejected.value(name="down-fail.wasd.io", type="validating", operation="CREATE",
                                               error_type="calling_webhook_error", rejection_code="503"), 1)
        fail_open = families["apiserver_admission_webhook_fail_open_count"]
        self.assertEqual(fail_open.type, "counter")
        self.assertGreaterEqual(fail_open.value(name="down-ignore.wasd.io", type="validating"), 1)
        # The rule's own selectors (name=~".*[.]wasd[.]io") match these series.
        rule = chart.one(chart.render(sets=["prometheusRule.enabled=true"]), "PrometheusRule")
        expr = [r for r in rule["spec"]["groups"][0]["rules"] if r["alert"] == "WasdWebhookDown"][0]["expr"]
        for series in ("apiserver_admission_webhook_rejection_count", "apiserver_admission_webhook_fail_open_count"):
            selector = re.search(series + r"\{([^}]*)\}", expr).group(1)
            for key, op, want in re.findall(r'(\w+)(=~|=)"([^"]*)"', selector):
                have = {"name": "down-fail.wasd.io" if "rejection" in series else "down-ignore.wasd.io",
                        "error_type": "calling_webhook_error"}[key]
                self.assertTrue(re.fullmatch(want, have) if op == "=~" else want == have, (series, key, want))

    def test_the_dry_run_refuses_a_broken_object(self):
        self.kubectl("create", "namespace", NS, check=False)
        docs = chart.render(sets=["image.tag=0.0.0-test"])
        dep = copy.deepcopy(chart.one(docs, "Deployment", "wasd-webhook"))
        # (kubectl's validation against the OpenAPI schema the server
        # publishes, the API server's own validation with kubectl's off, or
        # None where the server only drops the field, how to break the object)
        mistakes = {
            "imagePullPolicy": ('Unsupported value: "Sometimes"', 'Unsupported value: "Sometimes"',
                                lambda c, s: c.__setitem__("imagePullPolicy", "Sometimes")),
            "unknown field": ('unknown field "port" in io.k8s.api.core.v1.Container', None,
                              lambda c, s: c.__setitem__("port", 1)),
            "selector": ('missing required field "selector"', "spec.selector: Required value",
                         lambda c, s: s.pop("selector")),
        }
        for what, (kubectl_says, server_says, breaks) in mistakes.items():
            with self.subTest(mistake=what):
                bad = copy.deepcopy(dep)
                breaks(bad["spec"]["template"]["spec"]["containers"][0], bad["spec"])
                p = self.apply_list([bad], "apply", "--dry-run=server")
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn(kubectl_says, p.stderr)
                if server_says:
                    p = self.apply_list([bad], "apply", "--dry-run=server", "--validate=false")
                    self.assertNotEqual(p.returncode, 0, p.stdout)
                    self.assertIn(server_says, p.stderr)

    def test_a_value_the_schema_forbids_is_refused_by_helm(self):
        p = self.helm("template", "wasd", CHART, "--set", "webhook.replicas=many", check=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("values don't meet the specifications of the schema", p.stderr)
        self.assertIn("replicas", p.stderr)


if __name__ == "__main__":
    unittest.main()
