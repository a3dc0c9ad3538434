"""The real control plane for the tests of tests/cluster: a unittest base class that
brings up etcd, kube-apiserver, kube-controller-manager, kube-scheduler and the
node agent with scripts/cluster.sh (components from scripts/components.sh) and
stops them, and the helpers those tests share (kubectl, helm, bounded waits).
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from lib.paths import SOURCE_DIR, WASD
from lib.scrape import https_get

CLUSTER = os.path.join(SOURCE_DIR, "scripts", "cluster.sh")
NS = "wasd-system"
APP_NS = "default"
# charts/wasd/values.yaml webhook.metricsPort and reconciler.metricsPort: HTTPS
# (metrics.secure) with the webhook's certificate, checked for this name.
METRICS_PORT = 8443
METRICS_SERVER_NAME = f"wasd-webhook.{NS}.svc"
METRICS_SCRAPER = "metrics-scraper"  # the ServiceAccount the tests scrape as


def run(*args, check=True, timeout=300, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def gang_manifest(name, replicas, min_count):
    """A gang Deployment (Recreate, no resources) as YAML, for kubectl apply -f -."""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  annotations:
    wasd.io/scheduling: '{{"schedulingPolicy": {{"gang": {{"minCount": {min_count}}}}}}}'
spec:
  replicas: {replicas}
  strategy:
    type: Recreate
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
      - name: worker
        image: worker:v1
"""


def wait_until(what, fn, timeout=120, interval=1.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            ok, last = fn()
            if ok:
                return last
        except (AssertionError, subprocess.SubprocessError, ValueError, KeyError) as e:
            last = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last}")


class RealCluster(unittest.TestCase):
    """One control plane per test class: `scripts/cluster.sh up CLUSTER_ARGS` in
    setUpClass, `down` (every process by its PID) in tearDownClass, the component
    logs printed when a test failed."""
    CLUSTER_ARGS = ()
    CLUSTER_ENV = {}  # e.g. {"WASD_CLUSTER_AUDIT": "1"}: scripts/cluster.sh's settings

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="wasd-cluster-")
        cls.env = dict(os.environ, WASD_CLUSTER_DIR=cls.dir, WASD_BIN=WASD, **cls.CLUSTER_ENV)
        up = subprocess.run([CLUSTER, "up", *cls.CLUSTER_ARGS], env=cls.env, capture_output=True, text=True, timeout=3600)
        sys.stderr.write(up.stderr)
        if up.returncode != 0:
            cls.tearDownClass()
            raise AssertionError(f"cluster.sh up failed ({up.returncode}):\n{up.stdout}\n{up.stderr}")
        with open(os.path.join(cls.dir, "cluster.env")) as f:
            conf = dict(line.split("=", 1) for line in f.read().split())
        cls.bin = conf["BIN"]
        # The image name the node agent runs the wasd binary for (cluster.sh's
        # WASD_IMAGE): every chart install passes it as image.repository.
        cls.image = conf["WASD_IMAGE"]
        cls.env["KUBECONFIG"] = os.path.join(cls.dir, "admin.kubeconfig")
        cls.env["PATH"] = cls.bin + os.pathsep + cls.env.get("PATH", "")
        cls.failed = False

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "failed", True):
            cls.dump_logs()
        subprocess.run([CLUSTER, "down"], env=cls.env, timeout=120)
        left = subprocess.run(["pgrep", "-f", cls.dir], capture_output=True, text=True)
        shutil.rmtree(cls.dir, ignore_errors=True)
        if left.stdout.strip():
            raise AssertionError(f"processes left after cluster.sh down: {left.stdout}")

    @classmethod
    def dump_logs(cls):
        for sub in ("logs", os.path.join("agent", "logs")):
            d = os.path.join(cls.dir, sub)
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                with open(os.path.join(d, name), errors="replace") as f:
                    lines = f.readlines()[-40:]
                sys.stderr.write(f"----- {sub}/{name} (last {len(lines)} lines)\n{''.join(lines)}")

    def run(self, result=None):
        res = super().run(result)
        if result is not None and (result.failures or result.errors):
            type(self).failed = True
        return res

    def kubectl(self, *args, check=True):
        return run(os.path.join(self.bin, "kubectl"), *args, check=check, env=self.env)

    def helm(self, *args, check=True, timeout=600):
        return run(os.path.join(self.bin, "helm"), *args, check=check, env=self.env, timeout=timeout)

    def get(self, *args):
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def install_chart(self, *values):
        """`helm install` of charts/wasd with its default values (image.repository
        and image.tag set, plus
        `values`), then both Deployments rolled out. The release namespace is
        created unless the test made it first (to put objects the values name,
        such as a ConfigMap for an extra volume, there before the install)."""
        version = run(WASD, "version").stdout.split()[1]
        self.__class__._metrics_tokens = {}  # the namespace (and its accounts) may be new
        if self.kubectl("get", "namespace", NS, check=False).returncode != 0:
            self.kubectl("create", "namespace", NS)
        t0 = time.monotonic()
        # helm v4 waits for the hook Jobs (certs-generate, certs-inject): they
        # must run and succeed on the node agent.
        args = [a for v in values for a in ("--set", v)]
        self.helm("install", "wasd", os.path.join(SOURCE_DIR, "charts", "wasd"), "-n", NS,
                  "--set", f"image.repository={self.image}", "--set", f"image.tag={version}", *args,
                  "--timeout", "5m")
        sys.stderr.write(f"helm install: {time.monotonic() - t0:.1f} s\n")
        for d in ("wasd-webhook", "wasd-reconciler"):
            self.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=120s")

    def chart_ca(self):
        """The chart's CA (ca.crt of the webhook's Secret), PEM."""
        secret = self.get("secret", "-n", NS, "wasd-webhook-tls")
        return base64.b64decode(secret["data"]["ca.crt"]).decode()

    def metrics_token(self, name=METRICS_SCRAPER, reader=True):
        """A token of ServiceAccount `name` in the release namespace, made with
        the TokenRequest API; `reader`: bound to the chart's
        wasd-metrics-reader ClusterRole first (what a Prometheus needs). Kept
        per class: one token per account, as a scraper keeps its own."""
        tokens = self.__class__.__dict__.get("_metrics_tokens")
        if tokens is None:
            tokens = {}
            setattr(self.__class__, "_metrics_tokens", tokens)
        if (name, reader) in tokens:
            return tokens[(name, reader)]
        if self.kubectl("get", "serviceaccount", "-n", NS, name, check=False).returncode != 0:
            self.kubectl("create", "serviceaccount", "-n", NS, name)
        if reader and self.kubectl("get", "clusterrolebinding", f"test-{name}", check=False).returncode != 0:
            self.kubectl("create", "clusterrolebinding", f"test-{name}", "--clusterrole=wasd-metrics-reader",
                         f"--serviceaccount={NS}:{name}")
        tokens[(name, reader)] = self.kubectl("create", "token", "-n", NS, name,
                                              "--duration=1h").stdout.strip()
        return tokens[(name, reader)]

    def scrape(self, ip, path="/metrics", token=None):
        """/metrics of a wasd pod as the chart serves it by default: HTTPS,
        verified with the chart's CA, as the reader ServiceAccount; the text
        (asserts 200)."""
        status, _, body = https_get(ip, METRICS_PORT, path,
                                    token=token if token is not None else self.metrics_token(),
                                    ca_pem=self.chart_ca(), server_name=METRICS_SERVER_NAME)
        self.assertEqual(status, 200, body)
        return body

    def audit_writes(self, user, offset=0):
        """The completed writes (create, update, patch, delete) of `user` in the
        API server's audit log from byte `offset` (needs CLUSTER_ENV
        WASD_CLUSTER_AUDIT=1), as (verb, resource[/subresource], name, code)."""
        out = []
        with open(os.path.join(self.dir, "logs", "audit.log")) as f:
            f.seek(offset)
            for line in f:
                ev = json.loads(line) if line.strip() else {}
                if ev.get("stage") != "ResponseComplete" or ev.get("user", {}).get("username") != user:
                    continue
                ref = ev.get("objectRef", {})
                res = ref.get("resource", "") + ("/" + ref["subresource"] if ref.get("subresource") else "")
                out.append((ev["verb"], res, ref.get("name", ""), ev.get("responseStatus", {}).get("code", 0)))
        return out

    def audit_offset(self):
        return os.path.getsize(os.path.join(self.dir, "logs", "audit.log"))

    def pid_of(self, pod):
        """The PID of the pod's first container, as the node agent records it in
        <state>/agent/pids/<pod uid>_<container>."""
        container = pod["spec"]["containers"][0]["name"]
        with open(os.path.join(self.dir, "agent", "pids", f"{pod['metadata']['uid']}_{container}")) as f:
            return int(f.read().strip())

    def wait_restarted(self, pod, what):
        """Waits until the agent has restarted `pod`'s first container in place
        (same pod UID, a higher restartCount than `pod` shows) and it is Ready."""
        uid = pod["metadata"]["uid"]
        before = pod["status"]["containerStatuses"][0].get("restartCount", 0)

        def restarted():
            p = self.get("pod", "-n", pod["metadata"]["namespace"], pod["metadata"]["name"])
            st = p["status"].get("containerStatuses", [{}])[0]
            return (p["metadata"]["uid"] == uid and st.get("restartCount", 0) > before
                    and st.get("ready") is True), st
        return wait_until(what, restarted, timeout=120)

    def live_pods(self, namespace, selector):
        """The pods of `selector` that are not being deleted."""
        return [p for p in self.get("pods", "-n", namespace, "-l", selector)["items"]
                if not p["metadata"].get("deletionTimestamp")]

    def stop_reconciler(self):
        """Scales wasd's reconciler to zero and waits until its pods are gone, so
        nobody creates groups or lifts gates (or writes a status) meanwhile."""
        self.kubectl("scale", "-n", NS, "deployment/wasd-reconciler", "--replicas=0")
        wait_until("the reconciler's pods gone",
                   lambda: (not self.get("pods", "-n", NS, "-l", "app.kubernetes.io/component=reconciler")["items"],
                            None), timeout=120)
