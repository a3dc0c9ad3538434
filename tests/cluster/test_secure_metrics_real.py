#!/usr/bin/env python3
"""REAL CONTROL PLANE (issue 42): /metrics of both components as the chart
serves it by default (metrics.secure: true) — HTTPS, with every scrape's
bearer token checked by kube-apiserver v1.37.2 itself: TokenReview for who
holds it, SubjectAccessReview (RBAC, nonResourceURLs) for whether that user
may get /metrics. Nothing here is our model of those APIs.

- HTTPS only: the webhook's and the reconciler's metrics ports complete a TLS
  handshake verified with the chart's CA for wasd-webhook.wasd-system.svc (both
  serve the webhook's pair); a plain-HTTP request to them gets no HTTP answer.
- 200 for a ServiceAccount bound to the chart's wasd-metrics-reader ClusterRole
  (by the test, and by the chart's own metrics.readers binding); 401 with
  WWW-Authenticate for no token and for a forged one; 403 naming the user for
  an authenticated account without the role.
- The reviews really go to the API server: its audit log shows the
  TokenReview and SubjectAccessReview creates of each component's
  ServiceAccount, and none for a repeated scrape within the cache's minute.
- The RBAC the chart renders is what the code needs: both components may
  create tokenreviews and subjectaccessreviews (kubectl auth can-i as them).
- Plain HTTP is an opt-in: `helm upgrade --set metrics.secure=false` serves
  /metrics without TLS or token, drops the review rules and the reader
  ClusterRole.
"""
import json
import os
import unittest
import urllib.error
import urllib.request
import http.client

from lib.paths import SOURCE_DIR
from cluster.realcluster import (METRICS_PORT, METRICS_SERVER_NAME, NS, RealCluster,
                                 https_get, wait_until)

READERS = ["metrics.readers[0].kind=ServiceAccount", "metrics.readers[0].name=chart-reader",
           f"metrics.readers[0].namespace={NS}"]


class SecureMetricsReal(RealCluster):
    CLUSTER_ENV = {"WASD_CLUSTER_AUDIT": "1"}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls("run").install_chart(*READERS)

    def pod_ip(self, component):
        pods = self.live_pods(NS, f"app.kubernetes.io/component={component}")
        self.assertTrue(pods and all(p["status"].get("podIP") for p in pods), pods)
        return pods[0]["status"]["podIP"]

    def reviews(self, component, offset):
        """The reviews created by `component`'s ServiceAccount since `offset`."""
        user = f"system:serviceaccount:{NS}:wasd-{component}"
        return [(verb, res, code) for verb, res, _, code in self.audit_writes(user, offset)
                if res in ("tokenreviews", "subjectaccessreviews")]

    def test_1_https_and_delegated_auth_on_both_components(self):
        ca = self.chart_ca()
        reader = self.metrics_token()
        chart_reader = self.metrics_token("chart-reader", reader=False)  # bound by the chart
        nobody = self.metrics_token("metrics-nobody", reader=False)
        for component, family in (("webhook", "wasd_admission_requests_total"),
                                  ("reconciler", "wasd_reconciler_")):
            with self.subTest(component=component):
                ip = self.pod_ip(component)
                offset = self.audit_offset()

                def get(token):
                    return https_get(ip, METRICS_PORT, "/metrics", token=token, ca_pem=ca,
                                     server_name=METRICS_SERVER_NAME)

                status, _, body = get(reader)
                self.assertEqual(status, 200, body)
                self.assertIn(family, body)
                self.assertIn("wasd_build_info", body)
                status, _, body = get(chart_reader)
                self.assertEqual(status, 200, body)

                status, headers, body = get(None)
                self.assertEqual(status, 401, body)
                self.assertTrue(headers.get("www-authenticate", "").startswith("Bearer"), headers)
                self.assertIn("bearer token", body)
                status, _, body = get("forged." + reader[::-1])
                self.assertEqual(status, 401, body)
                self.assertNotIn("wasd_build_info", body)

                status, _, body = get(nobody)
                self.assertEqual(status, 403, body)
                self.assertIn(f'user "system:serviceaccount:{NS}:metrics-nobody" may not get /metrics', body)
                self.assertNotIn("wasd_build_info", body)

                # Each distinct token cost one TokenReview (all four were
                # sent), each authenticated one a SubjectAccessReview; all
                # created by the component's own account, all answered 201.
                got = wait_until(f"the {component}'s reviews in the audit log",
                                 lambda: (len(self.reviews(component, offset)) >= 7,
                                          self.reviews(component, offset)), timeout=30)
                self.assertEqual(sorted(got), sorted([("create", "tokenreviews", 201)] * 4 +
                                                     [("create", "subjectaccessreviews", 201)] * 3), got)

                # The same tokens again within the cache's minute: answered
                # alike, and not one review more.
                offset = self.audit_offset()
                self.assertEqual(get(reader)[0], 200)
                self.assertEqual(get(nobody)[0], 403)
                self.assertEqual(get(None)[0], 401)
                self.assertEqual(self.reviews(component, offset), [])

                # Plain HTTP on the HTTPS port: no HTTP answer at all.
                with self.assertRaises((urllib.error.URLError, http.client.HTTPException, ConnectionError,
                                        OSError)):
                    with urllib.request.urlopen(f"http://{ip}:{METRICS_PORT}/metrics", timeout=10) as r:
                        r.read()

    def test_2_rbac_the_chart_renders(self):
        for component in ("webhook", "reconciler"):
            sa = f"system:serviceaccount:{NS}:wasd-{component}"
            for resource in ("tokenreviews.authentication.k8s.io", "subjectaccessreviews.authorization.k8s.io"):
                p = self.kubectl("auth", "can-i", "create", resource, "--as", sa, check=False)
                self.assertEqual(p.stdout.strip(), "yes", (component, resource, p.stderr))
        role = self.get("clusterrole", "wasd-metrics-reader")
        self.assertEqual(role["rules"], [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])
        binding = self.get("clusterrolebinding", "wasd-metrics-reader")
        self.assertEqual(binding["subjects"], [{"kind": "ServiceAccount", "name": "chart-reader", "namespace": NS}])
        p = self.kubectl("auth", "can-i", "get", "/metrics", "--as", f"system:serviceaccount:{NS}:metrics-nobody",
                         check=False)
        self.assertEqual(p.stdout.strip(), "no")

    def test_3_plain_http_is_an_opt_in(self):
        self.helm("upgrade", "wasd", os.path.join(SOURCE_DIR, "charts", "wasd"),
                  "-n", NS, "--reuse-values", "--set", "metrics.secure=false", "--timeout", "5m")
        for d in ("wasd-webhook", "wasd-reconciler"):
            self.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=180s")
        for component in ("webhook", "reconciler"):
            def plain():
                with urllib.request.urlopen(f"http://{self.pod_ip(component)}:{METRICS_PORT}/metrics",
                                            timeout=10) as r:
                    return r.status == 200, r.read().decode()
            body = wait_until(f"plain-HTTP /metrics of the {component}", plain, timeout=120)
            self.assertIn("wasd_build_info", body)
            sa = f"system:serviceaccount:{NS}:wasd-{component}"
            p = self.kubectl("auth", "can-i", "create", "tokenreviews.authentication.k8s.io", "--as", sa,
                             check=False)
            self.assertEqual(p.stdout.strip(), "no", p.stderr)
        self.assertNotEqual(self.kubectl("get", "clusterrole", "wasd-metrics-reader", check=False).returncode, 0)
        args = json.dumps(self.get("deployment", "-n", NS, "wasd-reconciler")["spec"]["template"])
        self.assertIn("--metrics-secure=false", args)
        self.assertNotIn("--metrics-cert-file", args)


if __name__ == "__main__":
    unittest.main()
