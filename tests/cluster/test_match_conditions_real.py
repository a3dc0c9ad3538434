#!/usr/bin/env python3
"""REAL CONTROL PLANE (issue 41): the chart's webhook registration scope —
rules, namespaceSelector, the pods' objectSelector and the Deployment
webhooks' matchConditions (CEL) — evaluated by kube-apiserver v1.37.2 itself,
not by a CEL model of ours. Objects are sent through the real admission chain
one at a time with `kubectl ... --dry-run=server` (nothing is stored), and
what reached each webhook is counted from the webhook replicas' own
`wasd_admission_requests_total` (summed over every replica, by `webhook`).

- Every CREATE case of tests/lib/match_cases.py (made valid for the API
  server; those with spec.scheduling are left out: 1.37 does not serve the
  field, kubectl refuses it as unknown before admission) reaches `mutate-deployment` and
  `validate-deployment` exactly as that table says: opted-in by annotation,
  by spec.scheduling, by the marker or by another wasd.io/ key reaches them; an
  unrelated, bare or look-alike Deployment does not; a stray pod-template
  marker reaches the mutating one only.
- UPDATEs: removing the annotation (and the marker) still reaches both;
  an unrelated Deployment's update reaches neither.
- kube-system and the release namespace are never sent anything; a pod
  without the wasd.io/managed label never reaches `mutate-pod`, one with it
  does; a ConfigMap and a Deployment DELETE reach nothing.
- kube-apiserver's own `apiserver_admission_match_condition_exclusions_total`
  grows for the Deployments the conditions leave out.

The reconciler is scaled to zero first, so no status write of its own adds
to the counts while an object is measured.
"""
import copy
import json
import os
import re
import subprocess
import time
import unittest

from lib.match_cases import (ANNOTATION, BARE, CASES, GANG, MARKER, MUTATE, OPTED, PLAIN, VALIDATE,
                                         deployment, without_annotation, without_marker)
from cluster.realcluster import APP_NS, NS, RealCluster, run, wait_until

WEBHOOKS = ("mutate-deployment", "validate-deployment", "mutate-pod")
ENTRY = {MUTATE: "mutate-deployment", VALIDATE: "validate-deployment"}
# The validating webhooks see the object as the mutating ones left it (the
# real chain; the table gives each condition the request as sent): the marker
# alone is removed by deployments.mutate.wasd.io (with a warning), so the
# validating condition no longer matches.
AFTER_MUTATION = {"CREATE carrying only the marker label": {MUTATE: True, VALIDATE: False}}


def valid(obj, name):
    """The test table's object, made one the API server accepts: a name, a
    container, Recreate (wasd's rule for a gang), no replicas."""
    o = copy.deepcopy(obj)
    o["metadata"]["name"] = name
    o["metadata"]["namespace"] = APP_NS
    o["metadata"].pop("uid", None)
    spec = o.setdefault("spec", {})
    spec["replicas"] = 0
    spec["strategy"] = {"type": "Recreate"}
    spec.setdefault("selector", {"matchLabels": {"app": "web"}})
    tpl = spec.setdefault("template", {"metadata": {"labels": {"app": "web"}}, "spec": {}})
    tpl.setdefault("spec", {})["containers"] = [{"name": "c", "image": "registry.wasd.test/app:1"}]
    return o


class MatchConditionsOnRealApiServer(RealCluster):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        try:
            cls.install_chart_once()
        except BaseException:
            cls.failed = True
            cls.tearDownClass()
            raise

    @classmethod
    def install_chart_once(cls):
        self = cls("run")
        self.install_chart()
        self.stop_reconciler()

    def webhook_ips(self):
        pods = self.get("pods", "-n", NS, "-l", "app.kubernetes.io/component=webhook")["items"]
        ips = [p["status"].get("podIP") for p in pods if not p["metadata"].get("deletionTimestamp")]
        self.assertTrue(ips and all(ips), pods)
        return ips

    def counts(self):
        total = dict.fromkeys(WEBHOOKS, 0.0)
        for ip in self.webhook_ips():
            text = self.scrape(ip)
            for m in re.finditer(r'^wasd_admission_requests_total\{([^}]*)\} ([0-9.e+]+)$', text, re.M):
                hook = re.search(r'webhook="([^"]+)"', m.group(1)).group(1)
                if hook in total:
                    total[hook] += float(m.group(2))
        return total

    def exclusions(self):
        text = self.kubectl("get", "--raw", "/metrics").stdout
        return sum(float(m.group(1)) for m in re.finditer(
            r'^apiserver_admission_match_condition_exclusions_total\{[^}]*name="[^"]*wasd\.io"[^}]*\} ([0-9.e+]+)$',
            text, re.M))

    def kubectl_stdin(self, obj, *args, check=True):
        return run(os.path.join(self.bin, "kubectl"), *args, "-f", "-", input=json.dumps(obj), check=check,
                   env=self.env)

    def reached(self, send):
        """What reached each webhook while `send()` ran (dry-run requests are
        answered before kubectl returns, and the counters are bumped before the
        answer is written)."""
        before = self.counts()
        p = send()
        after = self.counts()
        return {h: int(after[h] - before[h]) for h in WEBHOOKS}, p

    def test_1_create_cases(self):
        x0 = self.exclusions()
        n = 0
        for desc, obj, old, want in CASES:
            if old is not None or obj is None or "template" not in obj.get("spec", {}) \
                    or "scheduling" in obj["spec"]:
                continue  # UPDATE and DELETE-shaped cases are below; the rest cannot be sent
            n += 1
            body = valid(obj, f"create-{n}")
            with self.subTest(desc):
                got, p = self.reached(lambda: self.kubectl_stdin(body, "create", "--dry-run=server", check=False))
                for entry, hook in ENTRY.items():
                    expect = want[entry] if isinstance(want, dict) else want
                    if desc in AFTER_MUTATION:
                        expect = AFTER_MUTATION[desc][entry]
                    self.assertEqual(got[hook], int(expect), f"{desc}: {hook} reached {got[hook]} times "
                                     f"(kubectl: {p.returncode} {p.stderr.strip()})")
                self.assertEqual(got["mutate-pod"], 0, desc)
        self.assertGreaterEqual(n, 10)
        # kube-apiserver counted the Deployments its conditions left out.
        self.assertGreater(self.exclusions(), x0)

    def test_2_update_cases(self):
        cases = [
            ("removing the annotation", without_annotation(OPTED), OPTED, True),
            ("removing the annotation and the marker", without_marker(without_annotation(OPTED)), OPTED, True),
            ("adding the annotation", OPTED, PLAIN, True),
            ("of an unrelated Deployment", PLAIN, PLAIN, False),
            ("of a bare Deployment", BARE, BARE, False),
        ]
        for i, (desc, new, old, want) in enumerate(cases):
            name = f"update-{i}"
            with self.subTest(desc):
                self.kubectl_stdin(valid(old, name), "create")
                # Quiet: the Deployment controller's first status write of a
                # zero-replica Deployment, then nothing more.
                wait_until(f"{name} observed", lambda: (
                    self.get("deployment", name, "-n", APP_NS).get("status", {}).get("observedGeneration") == 1,
                    None), timeout=60)
                wait_until("counts stable", self._stable, timeout=60)
                stored = self.get("deployment", name, "-n", APP_NS)
                body = valid(new, name)
                body["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
                # The mutating webhook's marker is on the stored object; the
                # request carries exactly what `new` says.
                got, p = self.reached(lambda: self.kubectl_stdin(body, "replace", "--dry-run=server", check=False))
                # Opting out or in by an update is wasd's own denial (the
                # webhook was reached); an unrelated update passes.
                if want:
                    self.assertIn("wasd.io/scheduling]: Forbidden", p.stderr)
                else:
                    self.assertEqual(p.returncode, 0, p.stderr)
                for hook in ("mutate-deployment", "validate-deployment"):
                    self.assertEqual(got[hook], int(want), f"UPDATE {desc}: {hook} reached {got[hook]} times")
                self.kubectl("delete", "deployment", name, "-n", APP_NS, "--wait=false")

    def _stable(self):
        a = self.counts()
        time.sleep(2)
        b = self.counts()
        return a == b, b

    def test_3_scope_outside_deployments(self):
        opted = valid(OPTED, "excluded")
        for ns in ("kube-system", NS):
            body = dict(opted, metadata=dict(opted["metadata"], namespace=ns))
            with self.subTest(f"opted-in Deployment in {ns}"):
                got, p = self.reached(lambda: self.kubectl_stdin(body, "create", "--dry-run=server"))
                self.assertEqual(got, dict.fromkeys(WEBHOOKS, 0), f"{ns} is excluded by the namespaceSelector")
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "namespace": APP_NS, "labels": {"app": "x"}},
               "spec": {"containers": [{"name": "c", "image": "registry.wasd.test/app:1"}]}}
        got, _ = self.reached(lambda: self.kubectl_stdin(pod, "create", "--dry-run=server"))
        self.assertEqual(got, dict.fromkeys(WEBHOOKS, 0), "a pod without wasd.io/managed")
        marked = copy.deepcopy(pod)
        marked["metadata"]["labels"][MARKER] = "true"
        got, _ = self.reached(lambda: self.kubectl_stdin(marked, "create", "--dry-run=server", check=False))
        self.assertEqual(got, {"mutate-deployment": 0, "validate-deployment": 0, "mutate-pod": 1},
                         "a pod with wasd.io/managed reaches the pod webhook (its objectSelector)")
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "c", "namespace": APP_NS, "annotations": {ANNOTATION: GANG}}}
        got, _ = self.reached(lambda: self.kubectl_stdin(cm, "create", "--dry-run=server"))
        self.assertEqual(got, dict.fromkeys(WEBHOOKS, 0), "a ConfigMap")
        plain = valid(deployment(annotations={ANNOTATION: GANG}, labels={MARKER: "true"}), "to-delete")
        plain["metadata"]["annotations"] = {"example.com/other": "1"}
        plain["metadata"]["labels"] = {"app": "web"}
        self.kubectl_stdin(plain, "create")
        wait_until("counts stable", self._stable, timeout=60)
        got, _ = self.reached(lambda: self.kubectl("delete", "deployment", "to-delete", "-n", APP_NS,
                                                   "--dry-run=server"))
        self.assertEqual(got, dict.fromkeys(WEBHOOKS, 0), "a DELETE")


if __name__ == "__main__":
    unittest.main()
