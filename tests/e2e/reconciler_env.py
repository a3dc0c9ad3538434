"""Shared setup for the reconciler's end-to-end tests and bench: the test API server
(tests/apiserver) with its Deployment/ReplicaSet/pod controllers, GC and PodGroup
protection, the real `wasd webhook` registered for Pods and Deployments, and
`wasd reconciler` processes started and stopped by PID.

Every process is started on 127.0.0.1 with free ports and stopped by its PID
(SIGTERM, then SIGKILL after a bound), also when a test fails.
"""
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests"))

from apiserver.harness import ApiServer, WaitFor  # noqa: E402

WASD = os.environ.get("WASD_BIN") or os.path.join(os.environ.get("WASD_BUILD_DIR", ""), "wasd")
RECONCILER_USER = "system:serviceaccount:wasd-system:wasd-reconciler"
WEBHOOK_USER = "system:serviceaccount:wasd-system:wasd-webhook"
WRITES = ("POST", "PUT", "PATCH", "DELETE")
NS = "default"
GATE = "wasd.io/pod-group"


def FreePort():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def StopProcess(proc, timeout=15.0, sig=signal.SIGTERM):
    """Stops one process we started, by PID: `sig`, then SIGKILL after `timeout`."""
    if proc is None or proc.poll() is not None:
        return proc.returncode if proc is not None else None
    os.kill(proc.pid, sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        return proc.wait(10)


def HttpGet(url, timeout=2.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


def Deployment(name, replicas, min_count=None, gang=True, extra_config=None, strategy="Recreate"):
    policy = {"gang": {}} if gang else {"basic": {}}
    if gang and min_count is not None:
        policy["gang"]["minCount"] = min_count
    config = {"schedulingPolicy": policy}
    config.update(extra_config or {})
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS,
                     "annotations": {"wasd.io/scheduling": json.dumps(config)}},
        "spec": {"replicas": replicas, "strategy": {"type": strategy},
                 "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "registry.example/app:1"}]}}},
    }


class Reconciler:
    """One `wasd reconciler` process."""

    def __init__(self, env, name, args, kubeconfig=None):
        self.env = env
        self.name = name
        self.probe_port = FreePort()
        self.metrics_port = FreePort()
        self.log_path = os.path.join(env.dir, f"{name}.log")
        self.log = open(self.log_path, "ab")
        cmd = [WASD, "reconciler", "--kubeconfig", kubeconfig or env.reconciler_kubeconfig,
               "--health-probe-bind-address", f"127.0.0.1:{self.probe_port}",
               "--metrics-bind-address", f"127.0.0.1:{self.metrics_port}"] + list(args)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)

    def Ready(self):
        return HttpGet(f"http://127.0.0.1:{self.probe_port}/readyz")[0] == 200

    def WaitReady(self, timeout=30):
        WaitFor(lambda: self.Ready() or self.proc.poll() is not None, timeout, 0.1, f"{self.name} ready")
        if self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited {self.proc.returncode}:\n{self.Logs()[-3000:]}")
        return self

    def Metrics(self):
        return HttpGet(f"http://127.0.0.1:{self.metrics_port}/metrics")[1]

    def Metric(self, name):
        total = 0.0
        for line in self.Metrics().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def Logs(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def Stop(self, sig=signal.SIGTERM):
        rc = StopProcess(self.proc, sig=sig)
        self.log.close()
        return rc

    def Kill(self):
        return self.Stop(signal.SIGKILL)


class Env:
    """API server + webhook; reconcilers on demand. Use as a context manager."""

    def __init__(self, apiserver_args=("--bookmark-interval", "0.5"), webhook=True):
        self.apiserver_args = list(apiserver_args)
        self.with_webhook = webhook
        self.srv = None
        self.webhook = None
        self.reconcilers = []
        self.dir = tempfile.mkdtemp(prefix="wasd-rec-e2e-")

    def __enter__(self):
        try:
            self.Start()
        except BaseException:
            self.Stop()
            raise
        return self

    def __exit__(self, *exc):
        self.Stop()

    def Start(self):
        self.srv = ApiServer(args=self.apiserver_args).Start()
        _, self.reconciler_kubeconfig = self.srv.AddUser(RECONCILER_USER, ["system:serviceaccounts"])
        _, self.webhook_kubeconfig = self.srv.AddUser(WEBHOOK_USER, ["system:serviceaccounts"])
        self.Apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "wasd-system"}})
        if self.with_webhook:
            self.StartWebhook()

    def StartWebhook(self):
        certs = os.path.join(self.dir, "certs")
        subprocess.run([WASD, "certs", "generate", "--service", "wasd-webhook", "--namespace", "wasd-system",
                        "--out-dir", certs], check=True, capture_output=True, timeout=60)
        port, probe = FreePort(), FreePort()
        self.webhook_log = open(os.path.join(self.dir, "webhook.log"), "ab")
        self.webhook = subprocess.Popen(
            [WASD, "webhook", "--tls-cert-file", os.path.join(certs, "tls.crt"),
             "--tls-key-file", os.path.join(certs, "tls.key"), "--bind-address", "127.0.0.1",
             "--port", str(port), "--health-probe-bind-address", f"127.0.0.1:{probe}",
             "--metrics-bind-address", "0", "--kubeconfig", self.webhook_kubeconfig, "--io-threads", "2",
             "--shutdown-delay", "0s"],
            stdout=self.webhook_log, stderr=self.webhook_log)
        WaitFor(lambda: HttpGet(f"http://127.0.0.1:{probe}/readyz")[0] == 200 or self.webhook.poll() is not None,
                30, 0.1, "webhook ready")
        assert self.webhook.poll() is None, "wasd webhook exited"
        self.srv.SetServiceEndpoint("wasd-system", "wasd-webhook", "127.0.0.1", port)
        with open(os.path.join(certs, "ca.crt"), "rb") as f:
            bundle = base64.b64encode(f.read()).decode()

        def Hook(name, path, rules, selector=None):
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
        self.Apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                    "metadata": {"name": "wasd"},
                    "webhooks": [
                        Hook("deployments.mutate.wasd.io", "/mutate-apps-v1-deployment", deploy_rules),
                        Hook("pods.mutate.wasd.io", "/mutate-v1-pod",
                             [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                               "resources": ["pods"]}],
                             {"matchLabels": {"wasd.io/managed": "true"}})]})
        # As the chart: the validating webhook also judges writes of deployments/status (M1).
        validate_rules = [dict(deploy_rules[0], resources=["deployments", "deployments/status"])]
        self.Apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                    "metadata": {"name": "wasd"},
                    "webhooks": [Hook("deployments.validate.wasd.io", "/validate-apps-v1-deployment",
                                      validate_rules)]})

    def Stop(self):
        for r in self.reconcilers:
            r.Stop(signal.SIGKILL)
        if self.webhook is not None:
            StopProcess(self.webhook)
            self.webhook_log.close()
        if self.srv is not None:
            self.srv.Stop()

    def StartReconciler(self, *args, name=None, wait=True, kubeconfig=None):
        r = Reconciler(self, name or f"reconciler-{len(self.reconcilers)}", args, kubeconfig)
        self.reconcilers.append(r)
        return r.WaitReady() if wait else r

    # ------------------------------------------------------------------ API

    def Apply(self, obj):
        self.srv.Kubectl("apply", "-f", "-", input=json.dumps(obj))

    def Create(self, path, obj):
        code, _, body = self.srv.Request("POST", path, obj)
        assert code in (200, 201), f"create {path}: {code} {body}"
        return body

    def Patch(self, path, patch, content_type="application/merge-patch+json"):
        code, _, body = self.srv.Request("PATCH", path, patch, content_type=content_type)
        assert code == 200, f"patch {path}: {code} {body}"
        return body

    def Delete(self, path):
        return self.srv.Request("DELETE", path)[0]

    def List(self, plural, group="", ns=NS, selector=None):
        base = f"/apis/{group}" if group else "/api/v1"
        path = f"{base}/namespaces/{ns}/{plural}"
        if selector:
            path += "?labelSelector=" + urllib.request.quote(selector)
        code, _, body = self.srv.Request("GET", path)
        assert code == 200, f"list {path}: {code} {body}"
        return body["items"]

    def Workloads(self):
        return self.List("workloads", "scheduling.k8s.io/v1beta1")

    def PodGroups(self):
        return self.List("podgroups", "scheduling.k8s.io/v1beta1")

    def ReplicaSets(self, app):
        return self.List("replicasets", "apps/v1", selector=f"app={app}")

    def Pods(self, app):
        return self.List("pods", selector=f"app={app}")

    def Events(self, reason=None):
        return [e for e in self.List("events") if reason is None or e.get("reason") == reason]

    def Scale(self, name, replicas):
        self.Patch(f"/apis/apps/v1/namespaces/{NS}/deployments/{name}", {"spec": {"replicas": replicas}})

    def ReconcilerWrites(self, since=0):
        """The reconciler's writes (Events excluded), in order, as (method, kind, name, body)."""
        out = []
        for e in self.srv.Audit(since=since, user=RECONCILER_USER, methods=WRITES):
            parts = e["path"].strip("/").split("/")
            if "leases" in parts or "events" in parts or e.get("status", 0) >= 400 or e.get("status") == 0:
                continue
            kind = parts[-2] if e["method"] != "POST" else parts[-1]
            name = parts[-1] if e["method"] != "POST" else (e.get("body") or {}).get("metadata", {}).get("name")
            out.append((e["method"], kind, name, e.get("body")))
        return out

    def AllReconcilerWrites(self, since=0):
        return [e for e in self.srv.Audit(since=since, user=RECONCILER_USER, methods=WRITES)
                if "/leases/" not in e["path"] and not e["path"].endswith("/leases")]


def WorkloadName(deployment, uid):
    """GenerateWorkloadName: <deployment>-<safe-encoded FNV-1a of "(types.UID)<uid>">."""
    h = 2166136261
    for b in ("(types.UID)" + uid).encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    enc = "".join(alphabet[ord(c) % 27] for c in str(h))
    return deployment[:253 - len(enc) - 1] + "-" + enc


def PodGroupName(rs_name, rs_uid):
    """DESIGN.md Q12: a ReplicaSet incarnation's PodGroup, the Workload-name
    encoding applied to the ReplicaSet's name and UID."""
    return WorkloadName(rs_name, rs_uid)


def PodGroupOf(rs):
    return PodGroupName(rs["metadata"]["name"], rs["metadata"]["uid"])


def PodGated(pod):
    return any(g.get("name") == GATE for g in pod["spec"].get("schedulingGates") or [])


def MinCount(obj):
    spec = obj["spec"]
    if "podGroupTemplates" in spec:
        spec = spec["podGroupTemplates"][0]
    return ((spec.get("schedulingPolicy") or {}).get("gang") or {}).get("minCount")
