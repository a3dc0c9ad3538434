#!/usr/bin/env python3
"""REAL TOOLS on the alerts (issue 41): the PrometheusRule as the real helm
v4.3.2 renders it (scripts/components.sh) is judged by Prometheus' own
promtool (Debian bookworm's package `prometheus`, 2.42.0, installed by
scripts/setup.sh), not by string comparison:

- `promtool check rules` accepts the rendered groups (PromQL parses, every
  template of every annotation parses), with and without the gang alert;
- `promtool test rules` with input series for every alert: each fires when it
  should, with the labels and the annotation text a receiver gets, and all of
  them stay quiet on a healthy set of series. The gang alert fires under both
  pod holds (a scheduler-held gang has no gated pod, so WasdPodsGatedTooLong
  stays quiet then) and whether the scrape kept the gang's `namespace` label
  or renamed it `exported_namespace`. The webhook-down alert fires from the
  scrape's `up` and from kube-apiserver's own webhook-call series, since
  wasd's metrics vanish with its last replica;
- every rule has a summary, a description and a runbook_url whose page
  exists under docs/runbooks/.

Each expected annotation is written out below as text; a change of an alert's
wording shows here as a failure, on purpose.
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

from lib import chart
from lib.components import tool
from lib.paths import SOURCE_DIR

CHART = os.path.join(SOURCE_DIR, "charts", "wasd")
NS = "wasd-system"
RUNBOOKS = "https://github.com/wasd-io/wasd/blob/main/docs/runbooks"
WEBHOOK_JOB = "wasd-webhook"
RECONCILER_JOB = "wasd-reconciler-metrics"

def promtool():
    path = shutil.which("promtool")
    if not path:
        raise AssertionError("promtool not found: scripts/setup.sh installs Debian's package prometheus")
    return path


def render_rules(*sets):
    """The PrometheusRule's spec (a Prometheus rule file) as helm renders it."""
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HELM_CACHE_HOME=f"{home}/cache", HELM_CONFIG_HOME=f"{home}/config",
                   HELM_DATA_HOME=f"{home}/data")
        args = [tool("helm"), "template", "wasd", CHART, "-n", NS,
                "--set", "image.repository=" + chart.TEST_IMAGE_REPOSITORY, "--set", "image.tag=0.0.0-test",
                "--set", "prometheusRule.enabled=true",
                "--show-only", "templates/prometheusrule.yaml"]
        for s in sets:
            args += ["--set", s]
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"helm template failed:\n{p.stderr}")
    return yaml.safe_load(p.stdout)["spec"]


def ann(alert, summary, description):
    return {"summary": summary, "description": description, "runbook_url": f"{RUNBOOKS}/{alert}.md"}


WEBHOOK_DOWN = ann("WasdWebhookDown",
                   "the wasd webhook cannot be reached: no replica is scraped, or kube-apiserver's calls to it fail",
                   "With failurePolicy Fail the API server refuses Deployment writes that match wasd's webhooks; "
                   "with Ignore new pods are admitted without their group link. Check the webhook pods, their "
                   "readiness and the Service's endpoints.")


def gang_pending(ns, value):
    return ann("WasdGangPending",
               f"gang {ns}/llm has had members not bound to a node for more than 15m: kubectl wasd explain "
               f"deployment/llm -n {ns} (or its GangScheduled condition) says why",
               f"{value} members of the current ReplicaSet are not bound. This holds under either pod hold "
               "(scheduler or gate).")


def gated(value):
    return ann("WasdPodsGatedTooLong",
               "a pod has been held by the wasd.io/pod-group scheduling gate for more than 15m",
               f"The oldest pod at wasd's gate has waited {value}. Only the gate hold shows here; a "
               "scheduler-held gang has no gated pod (WasdGangPending covers both).")


def series(name, labels, values):
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


def gang(state, values, **labels):
    return series("wasd_gang_members", {"job": RECONCILER_JOB, "deployment": "llm", "state": state, **labels},
                  values)


HEALTHY = [
    series("up", {"namespace": NS, "job": WEBHOOK_JOB, "pod": "w-1"}, "1x60"),
    series("up", {"namespace": NS, "job": WEBHOOK_JOB, "pod": "w-2"}, "1x60"),
    series("apiserver_admission_webhook_rejection_count",
           {"name": "deployments.validate.wasd.io", "error_type": "no_error", "rejection_code": "403"}, "0+5x60"),
    series("wasd_admission_request_duration_seconds_bucket",
           {"namespace": NS, "webhook": "validate-deployment", "le": "0.001"}, "0+100x60"),
    series("wasd_admission_request_duration_seconds_bucket",
           {"namespace": NS, "webhook": "validate-deployment", "le": "1"}, "0+100x60"),
    series("wasd_admission_request_duration_seconds_bucket",
           {"namespace": NS, "webhook": "validate-deployment", "le": "+Inf"}, "0+100x60"),
    series("wasd_admission_requests_total", {"namespace": NS, "webhook": "validate-deployment", "code": "200"},
           "0+100x60"),
    series("wasd_tls_certificate_expiry_timestamp_seconds", {"namespace": NS, "pod": "w-1"}, f"{90 * 86400}x60"),
    series("wasd_reconciler_leader", {"namespace": NS, "pod": "r-1"}, "1x60"),
    series("wasd_reconciler_leader", {"namespace": NS, "pod": "r-2"}, "0x60"),
    series("wasd_reconciler_scheduling_api_served", {"namespace": NS, "pod": "r-1"}, "1x60"),
    series("wasd_reconciler_errors_total", {"namespace": NS, "pod": "r-1"}, "3x60"),
    series("wasd_reconciler_oldest_gated_pod_age_seconds", {"namespace": NS, "pod": "r-1"}, "0x60"),
    gang("created", "4x60", namespace=NS, exported_namespace="team-a"),
    gang("bound", "4x60", namespace=NS, exported_namespace="team-a"),
]
ALERTS = ["WasdWebhookDown", "WasdWebhookSlow", "WasdWebhookErrors", "WasdCertificateExpiresSoon",
          "WasdReconcilerNoLeader", "WasdSchedulingApiNotServed", "WasdReconcileErrors",
          "WasdPodsGatedTooLong", "WasdGangPending"]


def quiet(at, *names):
    return [{"eval_time": at, "alertname": n, "exp_alerts": []} for n in names]


def fires(at, name, annotations, **labels):
    return {"eval_time": at, "alertname": name, "exp_alerts": [{"exp_labels": labels,
                                                                "exp_annotations": annotations}]}


# (what, input series, alert checks). promtool's clock starts at 0; one sample
# a minute.
CASES = [
    ("healthy: every alert quiet", HEALTHY, quiet("60m", *ALERTS)),
    ("every webhook replica down, seen by the scrape",
     [series("up", {"namespace": NS, "job": WEBHOOK_JOB, "pod": "w-1"}, "1x5 0x30"),
      series("up", {"namespace": NS, "job": WEBHOOK_JOB, "pod": "w-2"}, "1x5 0x30")],
     quiet("8m", "WasdWebhookDown") + [fires("12m", "WasdWebhookDown", WEBHOOK_DOWN, severity="critical")]),
    ("one replica of two down: not an outage",
     [series("up", {"namespace": NS, "job": WEBHOOK_JOB, "pod": "w-1"}, "1x30"),
      series("up", {"namespace": NS, "job": WEBHOOK_JOB, "pod": "w-2"}, "0x30")],
     quiet("20m", "WasdWebhookDown")),
    ("no scrape target left at all",
     [series("wasd_reconciler_leader", {"namespace": NS, "pod": "r-1"}, "1x30")],
     [fires("10m", "WasdWebhookDown", WEBHOOK_DOWN, severity="critical", namespace=NS, job=WEBHOOK_JOB)]),
    ("kube-apiserver cannot call the webhook (its own series; wasd's are gone)",
     [series("up", {"namespace": NS, "job": WEBHOOK_JOB, "pod": "w-1"}, "1x30"),
      series("apiserver_admission_webhook_rejection_count",
             {"name": "deployments.validate.wasd.io", "error_type": "calling_webhook_error",
              "rejection_code": "0"}, "0+3x30")],
     [fires("12m", "WasdWebhookDown", WEBHOOK_DOWN, severity="critical")]),
    ("a failurePolicy Ignore webhook failing open",
     [series("up", {"namespace": NS, "job": WEBHOOK_JOB, "pod": "w-1"}, "1x30"),
      series("apiserver_admission_webhook_fail_open_count",
             {"name": "pods.mutate.wasd.io", "operation": "CREATE", "type": "admit"}, "0+2x30")],
     [fires("12m", "WasdWebhookDown", WEBHOOK_DOWN, severity="critical")]),
    ("p99 over 1 s",
     [series("wasd_admission_request_duration_seconds_bucket",
             {"namespace": NS, "webhook": "validate-deployment", "le": le}, v)
      for le, v in (("0.5", "0x40"), ("1", "0x40"), ("2", "0+60x40"), ("+Inf", "0+60x40"))],
     [fires("15m", "WasdWebhookSlow", ann(
         "WasdWebhookSlow",
         "wasd validate-deployment answers in more than 1 s at p99 (webhook timeouts: 1 s mutating, 3 s validating)",
         "p99 of wasd_admission_request_duration_seconds is 1.99s; reviews normally take microseconds: the "
         "webhook is starved of CPU or its deployments/scale lookups wait on the API server."),
         severity="warning", webhook="validate-deployment")]),
    ("5xx answers",
     [series("wasd_admission_requests_total", {"namespace": NS, "webhook": "validate-scale", "code": "503"},
             "0+60x40")],
     [fires("15m", "WasdWebhookErrors", ann(
         "WasdWebhookErrors", "wasd validate-scale answers with 5xx (scale lookups failing?)",
         "1 answers per second are 5xx; 503 means a scale review could not read the Deployment from the API "
         "server."), severity="warning", webhook="validate-scale")]),
    ("certificate 7 days from expiry",
     [series("wasd_tls_certificate_expiry_timestamp_seconds", {"namespace": NS, "pod": "w-1"},
             f"{7 * 86400}x200")],
     [fires("2h", "WasdCertificateExpiresSoon", ann(
         "WasdCertificateExpiresSoon", "the wasd webhook's serving certificate expires within 14 days",
         "The certificate in use expires in 6d 22h 0m 0s; once it has, the API server cannot call the webhook."),
         severity="warning")]),
    ("no replica holds the Lease",
     [series("wasd_reconciler_leader", {"namespace": NS, "pod": "r-1"}, "1x3 0x30"),
      series("wasd_reconciler_leader", {"namespace": NS, "pod": "r-2"}, "0x33")],
     [fires("12m", "WasdReconcilerNoLeader", ann(
         "WasdReconcilerNoLeader", "no wasd reconciler holds the Lease: no Workloads, PodGroups or gate lifting",
         "No reconciler replica reports wasd_reconciler_leader 1: new Deployments get no Workload or PodGroup "
         "and their pods wait."), severity="critical")]),
    ("scheduling API not served",
     [series("wasd_reconciler_scheduling_api_served", {"namespace": NS, "pod": "r-1"}, "0x30")],
     [fires("15m", "WasdSchedulingApiNotServed", ann(
         "WasdSchedulingApiNotServed",
         "scheduling.k8s.io Workloads/PodGroups are not served (neither v1 nor v1beta1): no native gang is "
         "created; new native pods get wasd's gate and wait (APINotServed says how each Deployment's pods wait)",
         "wasd_reconciler_scheduling_api_served is 0: discovery of scheduling.k8s.io v1 and v1beta1 lists no "
         "workloads and podgroups. Turn the API on (Kubernetes 1.37: GenericWorkload and runtime-config "
         "scheduling.k8s.io/v1beta1=true)."), severity="critical")]),
    ("reconciles keep failing",
     [series("wasd_reconciler_errors_total", {"namespace": NS, "pod": "r-1"}, "0+6x60")],
     quiet("10m", "WasdReconcileErrors") + [fires("30m", "WasdReconcileErrors", ann(
         "WasdReconcileErrors", "wasd reconciles keep failing (see the reconciler's log)",
         "100m failed reconciles per second for 15 minutes; the reconciler's log names each Deployment and the "
         "error, and Warning Events on the Deployment say why."), severity="warning")]),
    ("gate hold: a gang held at the gate for 25 minutes (both alerts)",
     [series("wasd_reconciler_oldest_gated_pod_age_seconds", {"namespace": NS, "pod": "r-1"}, "0+60x40"),
      gang("created", "4x40", namespace=NS, exported_namespace="team-a"),
      gang("gated", "4x40", namespace=NS, exported_namespace="team-a"),
      gang("bound", "0x40", namespace=NS, exported_namespace="team-a")],
     [fires("25m", "WasdPodsGatedTooLong", gated("25m 0s"), severity="warning"),
      fires("25m", "WasdGangPending", gang_pending("team-a", "4"), severity="warning",
            gang_namespace="team-a", deployment="llm")]),
    ("scheduler hold: the gang waits in kube-scheduler, no pod gated (only the gang alert sees it)",
     [series("wasd_reconciler_oldest_gated_pod_age_seconds", {"namespace": NS, "pod": "r-1"}, "0x40"),
      gang("created", "4x40", namespace=NS, exported_namespace="team-a"),
      gang("gated", "0x40", namespace=NS, exported_namespace="team-a"),
      gang("bound", "1x40", namespace=NS, exported_namespace="team-a")],
     quiet("10m", "WasdGangPending") + quiet("25m", "WasdPodsGatedTooLong")
     + [fires("25m", "WasdGangPending", gang_pending("team-a", "3"), severity="warning",
              gang_namespace="team-a", deployment="llm")]),
    ("a scrape that honours the gang's own namespace label",
     [gang("created", "8x40", namespace="team-b"), gang("bound", "0x40", namespace="team-b")],
     [fires("20m", "WasdGangPending", gang_pending("team-b", "8"), severity="warning",
            gang_namespace="team-b", deployment="llm")]),
    ("a gang bound within the threshold",
     [gang("created", "4x40", namespace=NS, exported_namespace="team-a"),
      gang("bound", "0x10 4x30", namespace=NS, exported_namespace="team-a")],
     quiet("30m", "WasdGangPending")),
]


class AlertsOnPromtool(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-promtool-")
        cls.rules = os.path.join(cls.tmp, "rules.yaml")
        cls.spec = render_rules()
        with open(cls.rules, "w") as f:
            yaml.safe_dump(cls.spec, f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def promtool(self, *args):
        return subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=120)

    def test_check_rules_accepts_the_rendered_rules(self):
        p = self.promtool("check", "rules", self.rules)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"SUCCESS: {len(ALERTS)} rules found", p.stdout)
        without = os.path.join(self.tmp, "no-gang.yaml")
        with open(without, "w") as f:
            yaml.safe_dump(render_rules("reconciler.gangStatus=false"), f)
        p = self.promtool("check", "rules", without)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"SUCCESS: {len(ALERTS) - 1} rules found", p.stdout)
        # Control: promtool does refuse a broken expression.
        broken = os.path.join(self.tmp, "broken.yaml")
        with open(broken, "w") as f:
            yaml.safe_dump({"groups": [{"name": "x", "rules": [{"alert": "X", "expr": "sum(up"}]}]}, f)
        self.assertNotEqual(self.promtool("check", "rules", broken).returncode, 0)

    def test_every_alert_is_tested_here(self):
        names = [r["alert"] for g in self.spec["groups"] for r in g["rules"]]
        self.assertEqual(sorted(names), sorted(ALERTS))
        fired = {c["alertname"] for _, _, checks in CASES for c in checks if c["exp_alerts"]}
        self.assertEqual(sorted(fired), sorted(ALERTS))

    def test_each_alert_fires_when_it_should_and_stays_quiet_when_healthy(self):
        for what, inputs, checks in CASES:
            with self.subTest(what):
                test = os.path.join(self.tmp, "test.yaml")
                with open(test, "w") as f:
                    yaml.safe_dump({"rule_files": [self.rules], "evaluation_interval": "1m",
                                    "tests": [{"interval": "1m", "input_series": inputs,
                                               "alert_rule_test": checks}]}, f, sort_keys=False)
                p = self.promtool("test", "rules", test)
                self.assertEqual(p.returncode, 0, f"{what}:\n{p.stdout}{p.stderr}")
                self.assertIn("SUCCESS", p.stdout)

    def test_a_wrong_expectation_fails(self):
        """Control: promtool compares labels and annotations exactly."""
        inputs = [series("wasd_reconciler_scheduling_api_served", {"namespace": NS, "pod": "r-1"}, "0x30")]
        test = os.path.join(self.tmp, "wrong.yaml")
        with open(test, "w") as f:
            yaml.safe_dump({"rule_files": [self.rules], "evaluation_interval": "1m", "tests": [{
                "interval": "1m", "input_series": inputs, "alert_rule_test": [
                    fires("15m", "WasdSchedulingApiNotServed", {"summary": "other"}, severity="critical")]}]}, f)
        self.assertNotEqual(self.promtool("test", "rules", test).returncode, 0)

    def test_every_rule_has_a_description_and_a_runbook_page(self):
        for r in (r for g in self.spec["groups"] for r in g["rules"]):
            a = r["annotations"]
            self.assertTrue(a.get("summary") and a.get("description"), r["alert"])
            self.assertEqual(a["runbook_url"], f"{RUNBOOKS}/{r['alert']}.md")
            page = os.path.join(SOURCE_DIR, "docs", "runbooks", f"{r['alert']}.md")
            self.assertTrue(os.path.isfile(page), f"{r['alert']}: no {page}")
            with open(page) as f:
                text = f.read()
            self.assertTrue(re.match(rf"# {r['alert']}\b", text), f"{page} does not start with '# {r['alert']}'")
            for heading in ("## Meaning", "## Impact", "## Diagnosis", "## Mitigation"):
                self.assertIn(heading, text, page)


if __name__ == "__main__":
    unittest.main()
