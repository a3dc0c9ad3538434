#!/usr/bin/env python3
"""REAL TOOLS on the chart (issue 41, first step): helm v4.3.2 and kube-apiserver
v1.37.2 from scripts/components.sh judge charts/wasd, not a stand-in of ours.

- `helm lint --strict` passes for the default values and for every platform
  values file under charts/wasd/ci/ (helm enforces values.schema.json itself);
- a values file the schema forbids is refused by helm with the schema's words;
- `helm template` of each renders, and every object whose kind this API server
  serves is accepted by `kubectl apply --dry-run=server` (the API server's own
  schema, defaulting and validation; the namespace exists, nothing is stored).
  Kinds of CRDs this cluster does not have (Prometheus Operator, cert-manager)
  are listed, not applied.
"""
import glob
import json
import os
import tempfile
import unittest

import yaml

from cluster.realcluster import NS, RealCluster, run
from lib.paths import SOURCE_DIR

CHART = os.path.join(SOURCE_DIR, "charts", "wasd")
VALUES = sorted(glob.glob(os.path.join(CHART, "ci", "*-values.yaml")))


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
        self.kubectl("create", "namespace", NS)
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
                applicable = [d for d in docs if (d["apiVersion"], d["kind"]) in served]
                # A bare Pod (the helm test hook) is admitted only if its ServiceAccount
                # exists, and a dry run stores none: the chart's ServiceAccounts for real.
                accounts = [d for d in applicable if d["kind"] == "ServiceAccount"]
                self.apply_list(accounts, "apply")
                unchecked |= {f"{d['apiVersion']} {d['kind']}" for d in docs
                              if (d["apiVersion"], d["kind"]) not in served}
                p = self.apply_list(applicable, "apply", "--dry-run=server")
                self.assertEqual(p.returncode, 0, f"{label}: kubectl apply --dry-run=server\n{p.stdout}{p.stderr}")
                self.assertEqual(len([ln for ln in p.stdout.splitlines() if ln.endswith("(server dry run)")]),
                                 len(applicable), p.stdout)
        # Only the optional integrations' kinds go unchecked here.
        self.assertLessEqual(unchecked, {"monitoring.coreos.com/v1 ServiceMonitor",
                                         "monitoring.coreos.com/v1 PrometheusRule",
                                         "cert-manager.io/v1 Certificate", "cert-manager.io/v1 Issuer"},
                             sorted(unchecked))

    def test_a_value_the_schema_forbids_is_refused_by_helm(self):
        p = self.helm("template", "wasd", CHART, "--set", "webhook.replicas=many", check=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("values don't meet the specifications of the schema", p.stderr)
        self.assertIn("replicas", p.stderr)


if __name__ == "__main__":
    unittest.main()
