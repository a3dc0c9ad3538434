#!/usr/bin/env python3
"""/metrics of the real binaries against the table in docs/metrics.md.

The webhook runs with certificates from `wasd certs generate` and answers a
few reviews (one allowed, one denied by rule H1, one pod, one malformed);
two reconcilers run against the test API server (tests/apiserver), one kept
a follower by a Lease another holder owns, so pods stay at the gate and the
gated-pods gauge has something to show, one without leader election that
lifts the gates. Each scrape is read by a strict text-format parser
(promtext.py) and compared with the table both ways: every family served is
listed with the same type, label names and histogram bounds, and every
listed family is served. Then the values that must follow the traffic.

Every series the Grafana dashboard (charts/wasd/dashboards/wasd.json) and the
PrometheusRule (as helm renders it) read from wasd is in these scrapes with
at least one sample, under its exact name (`_bucket` included): a renamed or
misspelt metric shows here, not as an empty panel or an alert that can never
fire. The rule's kube-apiserver series (apiserver_admission_webhook_*) are
checked on the real kube-apiserver (tests/cluster/test_chart_real_tools.py);
`up` is Prometheus' own.
"""
import datetime
import http.client
import json
import os
import re
import ssl
import subprocess
import tempfile
import unittest

from lib import chart, promtext
from lib.certs import generate_certs
# The reconciler's gauges under test count the pods that carry wasd's gate
# (wasd_reconciler_gated_pods), which under the default hold a native pod does not:
# this class runs the gate on every backend for that reason.
from lib.cluster import GATE_EVERYWHERE, Env
from lib.manifests import NS, deployment, pod_gated
from lib.net import http_get
from lib.paths import SOURCE_DIR, WASD, testdata
from lib.wait import wait_for
from lib.webhook import Webhook

DOC = os.path.join(SOURCE_DIR, "docs", "metrics.md")
TESTDATA = testdata("e2e")
WEBHOOK_SECTION = "Webhook (`wasd webhook`)"
RECONCILER_SECTION = "Reconciler (`wasd reconciler`)"


def binary_version():
    """The version `wasd version` prints (first line: "wasd VERSION (...")."""
    out = subprocess.run([WASD, "version"], capture_output=True, text=True, timeout=30).stdout
    return out.split()[1]


def scrape(port):
    status, text = http_get(f"http://127.0.0.1:{port}/metrics", timeout=5)
    assert status == 200, status
    return promtext.parse(text)


def used_series():
    """{series name: where} of every series the dashboard and the rendered
    PrometheusRule select: a name followed by `{` or `[` in an expression, and
    the dashboard variables' label_values() metrics."""
    found = {}

    def add(expr, where):
        expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # label values are not names
        for name in re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{\[]", expr):
            found.setdefault(name, where)
    with open(os.path.join(SOURCE_DIR, "charts", "wasd", "dashboards", "wasd.json")) as f:
        dash = json.load(f)
    for p in dash["panels"]:
        for t in p["targets"]:
            add(t["expr"], "dashboard: " + p["title"])
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            for name in re.findall(r"label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)", v["definition"]):
                found.setdefault(name, "dashboard variable " + v["name"])
    rule = chart.one(chart.render(sets=["prometheusRule.enabled=true"]), "PrometheusRule")
    for group in rule["spec"]["groups"]:
        for r in group["rules"]:
            add(r["expr"], "alert " + r["alert"])
    return found


def wasd_series_of(section):
    """The used series whose family docs/metrics.md lists under `section`."""
    table = promtext.read_table(DOC, section)
    return {name: where for name, where in used_series().items()
            if re.sub(r"_(bucket|sum|count)$", "", name) in table or name in table}


def served_series(families):
    """{sample name} of the families that have at least one sample."""
    return {name for fam in families.values() for name, _, _ in fam.samples}


class TableCheck:
    def assertMatchesTable(self, families, section):
        table = promtext.read_table(DOC, section)
        self.assertGreater(len(table), 5, section)
        self.assertEqual(sorted(set(families) - set(table)), [], "served but not in docs/metrics.md")
        self.assertEqual(sorted(set(table) - set(families)), [], "in docs/metrics.md but not served")
        for name, (kind, labels, bounds) in table.items():
            fam = families[name]
            with self.subTest(family=name):
                self.assertEqual(fam.type, kind)
                self.assertTrue(fam.help, "no HELP text")
                if fam.samples:
                    self.assertEqual(fam.label_names(), set(labels))
                if kind == "histogram":
                    self.assertEqual(fam.bucket_bounds(), bounds + ["+Inf"])
                else:
                    self.assertEqual(bounds, [])


class WebhookMetrics(unittest.TestCase, TableCheck):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-metrics-")
        certs = generate_certs(cls.tmp)
        cls.ctx = ssl.create_default_context(cafile=certs["ca.crt"])
        cls.webhook = Webhook(certs, args=["--io-threads", "2"], workdir=cls.tmp)
        try:
            cls.codes = [cls.post("/validate-apps-v1-deployment", "deployment-valid.json"),
                         cls.post("/validate-apps-v1-deployment", "deployment-mincount-over-replicas.json"),
                         cls.post("/mutate-v1-pod", "pod-managed.json"),
                         cls.post("/mutate-v1-pod", None)]
            cls.families = scrape(cls.webhook.metrics_port)
        except BaseException:
            cls.webhook.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.webhook.stop()

    @classmethod
    def post(cls, path, fixture):
        body = b"not json"
        if fixture:
            with open(os.path.join(TESTDATA, fixture), "rb") as f:
                body = f.read()
        conn = http.client.HTTPSConnection("127.0.0.1", cls.webhook.port, timeout=10, context=cls.ctx)
        try:
            conn.request("POST", path, body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            if resp.status == 200:
                return json.loads(data)["response"].get("status", {}).get("code", 200)
            return resp.status
        finally:
            conn.close()

    def test_families_match_the_documented_table(self):
        self.assertEqual(self.codes, [200, 422, 200, 400])
        self.assertMatchesTable(self.families, WEBHOOK_SECTION)

    def test_series_the_dashboard_and_alerts_read_are_served(self):
        used = wasd_series_of(WEBHOOK_SECTION)
        self.assertIn("wasd_admission_request_duration_seconds_bucket", used)
        served = served_series(self.families)
        self.assertEqual({n: w for n, w in used.items() if n not in served}, {})

    def test_values_follow_the_traffic(self):
        f = self.families
        denials = f["wasd_admission_denials_total"]
        self.assertEqual(denials.value(rule="H1"), 1)
        self.assertEqual(sum(v for _, _, v in denials.samples), 1)
        self.assertEqual(len(denials.samples), 40)  # every rule id (K1–K5 the backends), from 0
        latency = f["wasd_admission_request_duration_seconds"]
        self.assertEqual(latency.value("_count", webhook="validate-deployment"), 2)
        self.assertEqual(latency.value("_bucket", webhook="validate-deployment", le="10"), 2)
        self.assertEqual(f["wasd_admission_requests_total"].value(
            webhook="mutate-pod", operation="unknown", allowed="false", code="400"), 1)
        info = f["wasd_build_info"].samples
        self.assertEqual(len(info), 1)
        self.assertEqual(info[0][1]["version"], binary_version())
        self.assertRegex(info[0][1]["revision"], r"^([0-9a-f]{7,40}|unknown)$")
        self.assertGreater(f["process_resident_memory_bytes"].value(), 1 << 20)
        self.assertGreater(f["process_open_fds"].value(), 3)
        start = f["process_start_time_seconds"].value()
        now = datetime.datetime.now(datetime.timezone.utc).timestamp()
        self.assertLess(now - start, 600)
        self.assertGreaterEqual(now - start, 0)

    def test_parser_catches_broken_text(self):
        # Controls: the strict reader refuses what Prometheus would mangle.
        for text in ("x 1\n",  # no TYPE
                     "# TYPE x counter\nx -1\n",
                     "# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\nx{a=\"b\"} 2\n",  # split family
                     "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
                     "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",
                     "# TYPE x gauge\nx{a=\"b} 1\n",
                     "# TYPE x gauge\nx 1"):
            with self.assertRaises(promtext.FormatError, msg=text):
                promtext.parse(text)


class ReconcilerMetrics(unittest.TestCase, TableCheck):
    @classmethod
    def setUpClass(cls):
        cls.env = Env(pod_hold=GATE_EVERYWHERE).__enter__()
        try:
            cls._run()
        except BaseException:
            cls.env.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.env.stop()

    @classmethod
    def _run(cls):
        env = cls.env
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        env.create("/apis/coordination.k8s.io/v1/namespaces/wasd-system/leases", {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "wasd-reconciler", "namespace": "wasd-system"},
            "spec": {"holderIdentity": "another-replica", "leaseDurationSeconds": 3600,
                     "acquireTime": now, "renewTime": now}})
        cls.follower = env.start_reconciler("--leader-elect=true", "--lease-namespace", "wasd-system",
                                           name="follower")
        env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment("metrics-gang", 2, min_count=2))

        def gated():
            pods = env.pods("metrics-gang")
            return len(pods) == 2 and all(pod_gated(p) for p in pods)
        wait_for(gated, 30, 0.2, "2 gated pods")

        def follower_counts(n):
            fam = scrape(cls.follower.metrics_port)["wasd_reconciler_gated_pods"]
            return fam.value() == n
        wait_for(lambda: follower_counts(2), 15, 0.2, "follower sees 2 gated pods")
        cls.follower_gated = scrape(cls.follower.metrics_port)
        # --gang-member-metrics=all: by default a Scheduled gang has no
        # wasd_gang_members series, and this gang may be Scheduled or not yet
        # when it is scraped; the dashboard's series must be served either way.
        cls.leader = env.start_reconciler("--leader-elect=false", "--workers", "3",
                                          "--gang-member-metrics=all", name="leader")
        wait_for(lambda: not any(pod_gated(p) for p in env.pods("metrics-gang")), 30, 0.2, "gates lifted")
        wait_for(lambda: follower_counts(0), 15, 0.2, "follower sees the gates lifted")
        cls.follower_after = scrape(cls.follower.metrics_port)
        # The reconcile that lifted the gates ends after them (the gang status is
        # published last): counted once it returns.
        wait_for(lambda: scrape(cls.leader.metrics_port)["wasd_reconciler_reconciles_total"].value(
            result="success") > 0, 15, 0.2, "the leader's first reconcile counted")
        cls.leader_families = scrape(cls.leader.metrics_port)

    def test_families_match_the_documented_table(self):
        self.assertMatchesTable(self.leader_families, RECONCILER_SECTION)
        self.assertMatchesTable(self.follower_after, RECONCILER_SECTION)

    def test_series_the_dashboard_and_alerts_read_are_served(self):
        used = wasd_series_of(RECONCILER_SECTION)
        self.assertIn("wasd_reconciler_leader", used)
        served = served_series(self.leader_families)
        self.assertEqual({n: w for n, w in used.items() if n not in served}, {})

    def test_every_series_read_is_wasds_or_named_here(self):
        # Every used series is one of the two binaries' (checked against their
        # scrapes above) or one of the others named in the module docstring;
        # a misspelt name is in neither and fails here.
        used = used_series()
        ours = set(wasd_series_of(WEBHOOK_SECTION)) | set(wasd_series_of(RECONCILER_SECTION))
        others = {n for n in used if n == "up" or n.startswith("apiserver_admission_webhook_")}
        self.assertEqual({n: w for n, w in used.items() if n not in ours | others}, {})
        self.assertEqual(others, {"up", "apiserver_admission_webhook_rejection_count",
                                  "apiserver_admission_webhook_fail_open_count"})
        # Control: the section filter drops a name wasd does not export.
        self.assertNotIn("wasd_gang_pendin_seconds_bucket", ours)

    def test_gated_pods_gauge_follows_the_gate(self):
        before = self.follower_gated
        self.assertEqual(before["wasd_reconciler_gated_pods"].value(), 2)
        age = before["wasd_reconciler_oldest_gated_pod_age_seconds"].value()
        self.assertGreaterEqual(age, 0)
        self.assertLess(age, 60)
        self.assertEqual(before["wasd_reconciler_leader"].value(), 0)
        self.assertEqual(before["leader_election_master_status"].value(name="wasd-reconciler"), 0)
        after = self.follower_after
        self.assertEqual(after["wasd_reconciler_gated_pods"].value(), 0)
        self.assertEqual(after["wasd_reconciler_oldest_gated_pod_age_seconds"].value(), 0)

    def test_controller_runtime_names_count_the_same_work(self):
        f = self.leader_families
        own_ok = f["wasd_reconciler_reconciles_total"].value(result="success")
        cr = f["controller_runtime_reconcile_total"]
        self.assertGreater(own_ok, 0)
        self.assertEqual(cr.value(controller="wasd", result="success") +
                         cr.value(controller="wasd", result="requeue_after"), own_ok)
        self.assertEqual(cr.value(controller="wasd", result="error"),
                         f["wasd_reconciler_reconciles_total"].value(result="error"))
        self.assertEqual(f["controller_runtime_reconcile_time_seconds"].value("_count", controller="wasd"),
                         f["wasd_reconciler_reconcile_duration_seconds"].value("_count"))
        self.assertEqual(f["controller_runtime_max_concurrent_reconciles"].value(controller="wasd"), 3)
        self.assertGreater(f["workqueue_adds_total"].value(controller="wasd", name="wasd"), 0)
        self.assertEqual(f["workqueue_depth"].value(controller="wasd", name="wasd"),
                         f["wasd_reconciler_queue_depth"].value())
        self.assertEqual(f["leader_election_master_status"].value(name="wasd-reconciler"), 1)
        self.assertGreaterEqual(f["wasd_reconciler_writes_total"].value(action="LiftGate"), 1)
        self.assertEqual(f["wasd_build_info"].samples[0][1]["version"], binary_version())


if __name__ == "__main__":
    unittest.main(verbosity=2)
