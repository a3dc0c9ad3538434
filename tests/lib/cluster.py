"""Env: a small cluster for the reconciler's tests and bench — the test API server
(tests/apiserver) with its Deployment/ReplicaSet/pod controllers, GC and PodGroup
protection, the real `wasd webhook` registered for Pods and Deployments as the chart
registers it, and `wasd reconciler` processes on demand.

Every process runs on 127.0.0.1 with free ports and is stopped by its PID
(SIGTERM, then SIGKILL after a bound), also when a test fails.
"""
import base64
import json
import os
import signal
import tempfile
import urllib.parse

from apiserver.harness import ApiServer
from lib.certs import generate_certs
from lib.manifests import NS
from lib.reconciler import Reconciler
from lib.webhook import Webhook

RECONCILER_USER = "system:serviceaccount:wasd-system:wasd-reconciler"
WEBHOOK_USER = "system:serviceaccount:wasd-system:wasd-webhook"
WRITES = ("POST", "PUT", "PATCH", "DELETE")


# --pod-hold with wasd's gate on every backend: the gate path (gates added,
# lifted once the group exists).
GATE_EVERYWHERE = "native=gate,volcano=gate,kai=gate,coscheduling=gate"


def DefaultPodHold():
    """The hold an Env runs when a test names none: the binary's own defaults (native,
    volcano and kai held by their scheduler, coscheduling by the gate; native falls back
    to the gate while the Workload API is not served; docs/design.md Q23), unless
    WASD_TEST_POD_HOLD=gate asks for GATE_EVERYWHERE (ctest runs the release, Q14,
    API-not-served, backend-lifecycle, migrate and rules tests both ways)."""
    mode = os.environ.get("WASD_TEST_POD_HOLD", "default")
    if mode == "gate":
        return GATE_EVERYWHERE
    if mode != "default":
        raise ValueError(f"WASD_TEST_POD_HOLD={mode!r}: want default or gate")
    return None


class Env:
    """API server + webhook; reconcilers on demand. Use as a context manager."""

    def __init__(self, apiserver_args=("--bookmark-interval", "0.5"), webhook=True, webhook_args=(),
                 pod_hold="env"):
        self.apiserver_args = list(apiserver_args)
        self.with_webhook = webhook
        self.webhook_args = list(webhook_args)  # e.g. the backend flags
        if pod_hold == "env":
            pod_hold = DefaultPodHold()
        if pod_hold is not None and not any(a.startswith("--pod-hold") for a in self.webhook_args):
            self.webhook_args += ["--pod-hold", pod_hold]
        self.srv = None
        self.webhook = None
        self.reconcilers = []
        self.dir = tempfile.mkdtemp(prefix="wasd-rec-e2e-")

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        self.srv = ApiServer(args=self.apiserver_args).Start()
        _, self.reconciler_kubeconfig = self.srv.AddUser(RECONCILER_USER, ["system:serviceaccounts"])
        _, self.webhook_kubeconfig = self.srv.AddUser(WEBHOOK_USER, ["system:serviceaccounts"])
        self.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "wasd-system"}})
        if self.with_webhook:
            self.start_webhook()

    def start_webhook(self):
        certs = generate_certs(os.path.join(self.dir, "certs"))
        self.webhook = Webhook(certs, args=["--io-threads", "2"] + self.webhook_args,
                               kubeconfig=self.webhook_kubeconfig,
                               workdir=self.dir, metrics=False, start_timeout=30)
        self.srv.SetServiceEndpoint("wasd-system", "wasd-webhook", "127.0.0.1", self.webhook.port)
        with open(certs["ca.crt"], "rb") as f:
            bundle = base64.b64encode(f.read()).decode()

        def hook(name, path, rules, selector=None):
            h = {"name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                 "failurePolicy": "Fail", "timeoutSeconds": 10, "rules": rules,
                 "clientConfig": {"caBundle": bundle,
                                  "service": {"namespace": "wasd-system", "name": "wasd-webhook", "path": path}},
                 "namespaceSelector": {"matchExpressions": [
                     {"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                      "values": ["kube-system", "wasd-system"]}]}}
            if selector:
                h["objectSelector"] = selector
            return h

        deploy_rules = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                         "resources": ["deployments"]}]
        self.apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                    "metadata": {"name": "wasd"},
                    "webhooks": [
                        hook("deployments.mutate.wasd.io", "/mutate-apps-v1-deployment", deploy_rules),
                        hook("pods.mutate.wasd.io", "/mutate-v1-pod",
                             [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                               "resources": ["pods"]}],
                             {"matchLabels": {"wasd.io/managed": "true"}})]})
        # As the chart: the validating webhook also judges writes of deployments/status (M1).
        validate_rules = [dict(deploy_rules[0], resources=["deployments", "deployments/status"])]
        self.apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                    "metadata": {"name": "wasd"},
                    "webhooks": [hook("deployments.validate.wasd.io", "/validate-apps-v1-deployment",
                                      validate_rules)]})

    def stop(self):
        for r in self.reconcilers:
            r.stop(signal.SIGKILL)
        if self.webhook is not None:
            self.webhook.stop(timeout=15)
        if self.srv is not None:
            self.srv.Stop()

    def start_reconciler(self, *args, name=None, wait=True, kubeconfig=None):
        r = Reconciler(kubeconfig or self.reconciler_kubeconfig, self.dir,
                       name or f"reconciler-{len(self.reconcilers)}", args).start()
        self.reconcilers.append(r)
        return r.wait_ready() if wait else r

    # ------------------------------------------------------------------ API

    def apply(self, obj):
        self.srv.Kubectl("apply", "-f", "-", input=json.dumps(obj))

    def create(self, path, obj):
        code, _, body = self.srv.Request("POST", path, obj)
        assert code in (200, 201), f"create {path}: {code} {body}"
        return body

    def patch(self, path, patch, content_type="application/merge-patch+json"):
        code, _, body = self.srv.Request("PATCH", path, patch, content_type=content_type)
        assert code == 200, f"patch {path}: {code} {body}"
        return body

    def delete(self, path):
        return self.srv.Request("DELETE", path)[0]

    def list(self, plural, group="", ns=NS, selector=None):
        base = f"/apis/{group}" if group else "/api/v1"
        path = f"{base}/namespaces/{ns}/{plural}"
        if selector:
            path += "?labelSelector=" + urllib.parse.quote(selector)
        code, _, body = self.srv.Request("GET", path)
        assert code == 200, f"list {path}: {code} {body}"
        return body["items"]

    def workloads(self):
        return self.list("workloads", "scheduling.k8s.io/v1beta1")

    def pod_groups(self, group_version="scheduling.k8s.io/v1beta1"):
        """The PodGroups of one API (native by default; a backend's group/version)."""
        return self.list("podgroups", group_version)

    def replica_sets(self, app):
        return self.list("replicasets", "apps/v1", selector=f"app={app}")

    def pods(self, app):
        return self.list("pods", selector=f"app={app}")

    def events(self, reason=None):
        return [e for e in self.list("events") if reason is None or e.get("reason") == reason]

    def scale(self, name, replicas):
        self.patch(f"/apis/apps/v1/namespaces/{NS}/deployments/{name}", {"spec": {"replicas": replicas}})

    def reconciler_writes(self, since=0, conditions=False):
        """The reconciler's writes (Events excluded), in order, as (method, kind, name, body).
        kind is the plural; a gang scheduler's group objects are `podgroups.<group>`
        (native PodGroups stay `podgroups`). The gang doctor's GangScheduled condition
        patches (deployments/NAME/status) are left out unless `conditions`: they follow
        the gang's state, not the scheduling objects (e2e.test_gang_status checks them)."""
        out = []
        for e in self.srv.Audit(since=since, user=RECONCILER_USER, methods=WRITES):
            parts = e["path"].strip("/").split("/")
            if "leases" in parts or "events" in parts or e.get("status", 0) >= 400 or e.get("status") == 0:
                continue
            if not conditions and "deployments" in parts and parts[-1] == "status":
                continue
            kind = parts[-2] if e["method"] != "POST" else parts[-1]
            if kind == "podgroups" and parts[1] != "scheduling.k8s.io":
                kind = "podgroups." + parts[1]
            name = parts[-1] if e["method"] != "POST" else (e.get("body") or {}).get("metadata", {}).get("name")
            out.append((e["method"], kind, name, e.get("body")))
        return out

    def all_reconciler_writes(self, since=0):
        return [e for e in self.srv.Audit(since=since, user=RECONCILER_USER, methods=WRITES)
                if "/leases/" not in e["path"] and not e["path"].endswith("/leases")]
