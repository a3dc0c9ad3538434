#!/usr/bin/env python3
"""Upgrading wasd, and rolling it back, without a lost request.

On the test API server (tests/apiserver, with its Deployment, ReplicaSet,
garbage-collector and PodGroup-protection controllers) the chart is
installed, upgraded and rolled back the way helm does it, with the chart's
own hooks and container arguments:

  install   pre-install hook (certs rotate --once: makes the TLS Secret),
            every object that is not a hook (kubectl apply), the webhook and
            reconciler Deployments' containers (run here as processes, with
            the chart's args), post-install hook (certs inject-ca);
  upgrade   pre-upgrade hook, kubectl apply of the new objects (and delete of
            the objects the new release no longer has), a rolling update of
            each Deployment (the new process ready, the Service moved to it,
            then the old one SIGTERMed, as an endpoint controller and the
            kubelet would do it), post-upgrade hook;
  rollback  the same to the previous release, without hooks (the chart has
            no pre/post-rollback hooks, so nothing re-injects the CA: it must
            survive).

All along, a client creates opted-in Deployments (gang, 2 replicas) one
after another, and every few an invalid one. The test asserts:
- 0 failed admissions: every valid create is stored (201), every invalid
  one is denied by wasd's rule (422 naming it), and no request in the
  API server's audit log (pods created by the ReplicaSet controller
  included) failed with a 5xx or "failed calling webhook";
- 0 pods gated forever: once the stream stops, every pod loses wasd's gate;
- the certificates and the CA are kept: the TLS Secret and the caBundle of
  both webhook configurations are byte for byte what the install made;
- no duplicate objects: one Workload per Deployment, one PodGroup per
  ReplicaSet, each controlled by its owner;
- each old webhook and reconciler exits 0 on SIGTERM.

What "previous" is: the chart at the newest release tag vX.Y.Z that is not
HEAD, extracted with `git archive`; before the first release (no such tag)
it is the chart at commit 071fba6, the last commit before the 0.1.0 release
work. WASD_UPGRADE_FROM=<git ref> picks another. The previous *image* is the
binary of WASD_PREVIOUS_BIN when set (e.g. wasd built from that ref in a
worktree); otherwise it is the binary under test (a build of the previous
commit would cost a full compile in CI). Without git history (a tarball or
a shallow clone that lacks the ref), the previous chart is the current one;
the test says so on stderr. The upgrade's `current` is always this tree's
chart and $WASD_BIN.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tarfile
import io
import tempfile
import threading
import time
import unittest

import yaml

from apiserver.harness import ApiServer
from lib import chart
from lib.manifests import GATE, deployment, pod_group_of
from lib.net import free_port, http_get
from lib.paths import SOURCE_DIR, WASD
from lib.process import stop_process
from lib.wait import wait_for

RELEASE_NS = "wasd-system"
APP_NS = "upgrade-apps"
BEFORE_071 = "071fba6"  # the last commit before the 0.1.0 release work
HOOK_TIMEOUT_S = 60
# Each phase lets this many Deployments through before the next step, so
# every transition happens while requests flow.
PER_PHASE = 4


def log(msg):
    print(f"[upgrade] {msg}", file=sys.stderr, flush=True)


def git(*args):
    return subprocess.run(["git", "-C", SOURCE_DIR] + list(args), capture_output=True, text=True,
                          timeout=60)


def previous_ref():
    """The git ref of the previous release, and why it was chosen."""
    if os.environ.get("WASD_UPGRADE_FROM"):
        return os.environ["WASD_UPGRADE_FROM"], "WASD_UPGRADE_FROM"
    at_head = set(git("tag", "--points-at", "HEAD", "--list", "v[0-9]*").stdout.split())
    tags = git("tag", "--merged", "HEAD", "--sort=-v:refname", "--list", "v[0-9]*").stdout.split()
    for t in tags:
        if t not in at_head:
            return t, "the newest release tag before HEAD"
    return BEFORE_071, "no release tag before HEAD: the commit before the 0.1.0 release work"


def extract_chart(ref, dest):
    """charts/wasd at `ref` into dest/wasd; None when git cannot give it."""
    p = subprocess.run(["git", "-C", SOURCE_DIR, "archive", "--format=tar", ref, "charts/wasd"],
                       capture_output=True, timeout=60)
    if p.returncode != 0:
        return None
    with tarfile.open(fileobj=io.BytesIO(p.stdout)) as tar:
        tar.extractall(dest)
    return os.path.join(dest, "charts", "wasd")


def is_hook(o):
    return "helm.sh/hook" in (o["metadata"].get("annotations") or {})


def hook_phases(o):
    return (o["metadata"].get("annotations") or {}).get("helm.sh/hook", "").split(",")


def container(o):
    (c,) = o["spec"]["template"]["spec"]["containers"]
    return c


def set_flag(args, flag, value):
    """args with --flag set to value (replacing `--flag v` or `--flag=v`, else appended)."""
    out, i, done = [], 0, False
    while i < len(args):
        a = args[i]
        if a == flag:
            out += [flag, value]
            i += 2
            done = True
            continue
        if a.startswith(flag + "="):
            out.append(f"{flag}={value}")
            done = True
        else:
            out.append(a)
        i += 1
    return out if done else out + [flag, value]


class Release:
    """One rendered chart (a revision of the release) and its running processes."""

    def __init__(self, name, chart_dir, binary, workdir):
        self.name, self.chart_dir, self.binary = name, chart_dir, binary
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.objs = chart.render(namespace=RELEASE_NS) if chart_dir is None else [
            o for o in yaml.safe_load_all(chart.render_text(namespace=RELEASE_NS, chart_dir=chart_dir))
            if o]
        self.plain = [o for o in self.objs if not is_hook(o)]
        self.manifest = os.path.join(self.dir, "manifest.yaml")
        with open(self.manifest, "w") as f:
            yaml.safe_dump_all(self.plain, f)

    def keys(self):
        return {(o["kind"], o["metadata"]["name"]) for o in self.plain}

    def hook_job(self, phase):
        jobs = [o for o in self.objs if o["kind"] == "Job" and phase in hook_phases(o)]
        assert len(jobs) == 1, (self.name, phase, [j["metadata"]["name"] for j in jobs])
        return container(jobs[0])["args"]

    def deployment_args(self, suffix):
        (d,) = [o for o in self.plain if o["kind"] == "Deployment"
                and o["metadata"]["name"].endswith(suffix)]
        return container(d)["args"]


class Proc:
    """One container of a Deployment, run here as a process."""

    def __init__(self, args, log_path, probe_port):
        self.log_path, self.probe_port = log_path, probe_port
        self._log = open(log_path, "ab")
        env = {k: v for k, v in os.environ.items()
               if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
        env["POD_NAMESPACE"] = RELEASE_NS
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=self._log, env=env)

    def ready(self):
        return http_get(f"http://127.0.0.1:{self.probe_port}/readyz")[0] == 200

    def wait_ready(self, what):
        wait_for(lambda: self.proc.poll() is not None or self.ready(), 30, 0.05, what)
        assert self.proc.poll() is None, f"{what}: exited {self.proc.returncode}:\n{self.text()[-3000:]}"

    def text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        rc = stop_process(self.proc, timeout=40)
        self._log.close()
        return rc


class Upgrade(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-upgrade-")
        cls.srv = None
        cls.webhook = cls.reconciler = None
        cls.stream = None
        try:
            cls._prepare()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.stream is not None:
            cls.stream.stop()
        for p in (cls.webhook, cls.reconciler):
            if p is not None:
                p.stop()
        if cls.srv is not None:
            cls.srv.Stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def _prepare(cls):
        ref, why = previous_ref()
        prev_dir = extract_chart(ref, os.path.join(cls.tmp, "previous-src"))
        if prev_dir is None:
            log(f"git cannot give charts/wasd at {ref}: the previous chart is the current one")
            why += " (not available here: the current chart instead)"
        prev_bin = os.environ.get("WASD_PREVIOUS_BIN") or WASD
        cls.previous_is = (f"chart of {ref} ({why}), binary "
                           f"{'WASD_PREVIOUS_BIN=' + prev_bin if prev_bin != WASD else 'under test'}")
        log("previous = " + cls.previous_is)
        cls.previous = Release("previous", prev_dir, prev_bin, cls.tmp)
        cls.current = Release("current", None, WASD, cls.tmp)
        cls.srv = ApiServer(args=["--bookmark-interval", "0.5"]).Start()
        for ns in (RELEASE_NS, APP_NS):
            cls.srv.Kubectl("create", "namespace", ns)

    # ------------------------------------------------------------ helm's steps

    def run_hook(self, release, phase):
        args = [a.replace("/etc/wasd/tls/", self.tls_dir(release) + "/")
                for a in release.hook_job(phase)]
        p = subprocess.run([release.binary] + args + ["--kubeconfig", self.srv.kubeconfig],
                           capture_output=True, text=True, timeout=HOOK_TIMEOUT_S)
        self.assertEqual(p.returncode, 0, f"{release.name} {phase} hook {args}:\n{p.stderr}")

    def tls_dir(self, release):
        """The Secret's files as the pods of `release` mount them (read now)."""
        d = os.path.join(release.dir, "tls")
        os.makedirs(d, exist_ok=True)
        secret = self.srv.Get(f"/api/v1/namespaces/{RELEASE_NS}/secrets/wasd-webhook-tls")
        if secret:
            for key in ("ca.crt", "tls.crt", "tls.key"):
                with open(os.path.join(d, key), "wb") as f:
                    f.write(base64.b64decode(secret["data"][key]))
        return d

    def start_webhook(self, release):
        port, probe, metrics = free_port(), free_port(), free_port()
        args = [a.replace("/etc/wasd/tls/", self.tls_dir(release) + "/")
                for a in release.deployment_args("-webhook")]
        args = set_flag(args, "--port", str(port))
        args = set_flag(args, "--bind-address", "127.0.0.1")
        args = set_flag(args, "--health-probe-bind-address", f"127.0.0.1:{probe}")
        args = set_flag(args, "--metrics-bind-address", f"127.0.0.1:{metrics}")
        args = set_flag(args, "--kubeconfig", self.srv.kubeconfig)
        p = Proc([release.binary] + args, os.path.join(release.dir, f"webhook-{port}.log"), probe)
        p.port = port
        p.wait_ready(f"{release.name} webhook ready")
        return p

    def start_reconciler(self, release):
        probe, metrics = free_port(), free_port()
        args = [a.replace("/etc/wasd/tls/", self.tls_dir(release) + "/")
                for a in release.deployment_args("-reconciler")]
        args = set_flag(args, "--health-probe-bind-address", f"127.0.0.1:{probe}")
        args = set_flag(args, "--metrics-bind-address", f"127.0.0.1:{metrics}")
        args = set_flag(args, "--kubeconfig", self.srv.kubeconfig)
        # A standby is ready too (it waits for the Lease); readiness is all
        # a rolling update waits for.
        p = Proc([release.binary] + args, os.path.join(release.dir, f"reconciler-{probe}.log"),
                 probe)
        p.wait_ready(f"{release.name} reconciler ready")
        return p

    def apply(self, release, previous=None):
        self.srv.Kubectl("apply", "-f", release.manifest)
        # helm deletes what the new revision no longer renders.
        for kind, name in sorted((previous.keys() - release.keys()) if previous else ()):
            log(f"{release.name}: deleting {kind}/{name} (not in this revision)")
            self.srv.Kubectl("delete", kind, name, "-n", RELEASE_NS, "--ignore-not-found",
                             check=False)

    def roll(self, release):
        """The rolling update of both Deployments: new ready, traffic moved, old stopped."""
        old_webhook, old_reconciler = type(self).webhook, type(self).reconciler
        new_webhook = self.start_webhook(release)
        self.srv.SetServiceEndpoint(RELEASE_NS, "wasd-webhook", "127.0.0.1", new_webhook.port)
        type(self).webhook = new_webhook
        new_reconciler = self.start_reconciler(release)
        type(self).reconciler = new_reconciler
        codes = {}
        if old_webhook is not None:
            codes["webhook"] = old_webhook.stop()
        if old_reconciler is not None:
            codes["reconciler"] = old_reconciler.stop()
        return codes

    def install(self, release):
        self.run_hook(release, "pre-install")
        self.apply(release)
        self.roll(release)
        self.run_hook(release, "post-install")

    def upgrade(self, release, previous):
        self.run_hook(release, "pre-upgrade")
        self.apply(release, previous)
        codes = self.roll(release)
        self.run_hook(release, "post-upgrade")
        return codes

    def rollback(self, release, previous):
        self.apply(release, previous)
        return self.roll(release)

    # ------------------------------------------------------------ what is kept

    def trust_state(self):
        secret = self.srv.Get(f"/api/v1/namespaces/{RELEASE_NS}/secrets/wasd-webhook-tls")
        bundles = {}
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            cfg = self.srv.Get(f"/apis/admissionregistration.k8s.io/v1/{kind}/wasd")
            bundles[kind] = sorted({w["clientConfig"].get("caBundle", "") for w in cfg["webhooks"]})
        return {"secret": secret["data"], "bundles": bundles}

    # ------------------------------------------------------------ the test

    def test_upgrade_and_rollback_lose_no_request(self):
        t0 = time.monotonic()
        self.install(self.previous)
        installed = self.trust_state()
        ca = installed["secret"]["ca.crt"]
        for kind, bundles in installed["bundles"].items():
            self.assertEqual(bundles, [ca], f"{kind}: the CA was not injected at install")
        seq0 = self.srv.LastSeq()
        log(f"installed {self.previous_is} in {time.monotonic() - t0:.1f} s")

        stream = Stream(self.srv)
        type(self).stream = stream
        stream.start()
        stream.wait_for_more(PER_PHASE)
        t = time.monotonic()
        codes_up = self.upgrade(self.current, self.previous)
        log(f"upgraded in {time.monotonic() - t:.1f} s with {stream.count()} creates so far")
        self.assertEqual(self.trust_state(), installed, "the upgrade changed the certificates or CA")
        stream.wait_for_more(PER_PHASE)
        t = time.monotonic()
        codes_back = self.rollback(self.previous, self.current)
        log(f"rolled back in {time.monotonic() - t:.1f} s with {stream.count()} creates so far")
        self.assertEqual(self.trust_state(), installed, "the rollback changed the certificates or CA")
        stream.wait_for_more(PER_PHASE)
        stream.stop()
        type(self).stream = None

        # Each old process drained and exited 0 on SIGTERM.
        self.assertEqual(codes_up, {"webhook": 0, "reconciler": 0}, "upgrade: old processes")
        self.assertEqual(codes_back, {"webhook": 0, "reconciler": 0}, "rollback: old processes")

        # 0 failed admissions, as the client saw them ...
        self.assertEqual(stream.failures, [], "admission requests that failed")
        self.assertGreaterEqual(stream.created, 3 * PER_PHASE)
        self.assertGreater(stream.denied, 0)
        # ... and as the API server saw every request, its controllers' included.
        failed = [e for e in self.srv.Audit(since=seq0)
                  if e.get("status", 0) >= 500 or "failed calling webhook" in json.dumps(e)]
        self.assertEqual(failed, [], "requests the API server failed during the upgrade")

        # 0 pods gated forever: every Deployment gets its 2 pods, and the
        # reconciler lifts every gate.
        t = time.monotonic()
        state = {}

        def converged():
            pods = self.srv.Get(f"/api/v1/namespaces/{APP_NS}/pods")["items"]
            state["pods"] = len(pods)
            state["gated"] = sorted(p["metadata"]["name"] for p in pods if any(
                g.get("name") == GATE for g in p["spec"].get("schedulingGates") or []))
            return len(pods) >= 2 * stream.created and not state["gated"]
        wait_for(converged, 90, 0.5, "every Deployment's pods created and ungated")
        log(f"converged {time.monotonic() - t:.1f} s after the stream stopped: {state['pods']} pods")
        pods = self.srv.Get(f"/api/v1/namespaces/{APP_NS}/pods")["items"]
        self.assertEqual(len(pods), 2 * stream.created)

        # No duplicate objects.
        deps = {d["metadata"]["uid"]: d["metadata"]["name"] for d in self.srv.Get(
            f"/apis/apps/v1/namespaces/{APP_NS}/deployments")["items"]}
        rss = self.srv.Get(f"/apis/apps/v1/namespaces/{APP_NS}/replicasets")["items"]
        workloads = self.srv.Get(
            f"/apis/scheduling.k8s.io/v1beta1/namespaces/{APP_NS}/workloads")["items"]
        groups = self.srv.Get(
            f"/apis/scheduling.k8s.io/v1beta1/namespaces/{APP_NS}/podgroups")["items"]

        def controller_uid(o):
            refs = [r for r in o["metadata"].get("ownerReferences") or [] if r.get("controller")]
            return refs[0]["uid"] if refs else None
        per_deployment = {}
        for w in workloads:
            per_deployment.setdefault(controller_uid(w), []).append(w["metadata"]["name"])
        self.assertEqual(sorted(per_deployment), sorted(deps), "a Deployment without its Workload")
        self.assertEqual([v for v in per_deployment.values() if len(v) != 1], [],
                         "Deployments with more than one Workload")
        per_rs = {}
        for g in groups:
            per_rs.setdefault(controller_uid(g), []).append(g["metadata"]["name"])
        for rs in rss:
            with self.subTest(replicaset=rs["metadata"]["name"]):
                self.assertEqual(per_rs.get(rs["metadata"]["uid"]), [pod_group_of(rs)])
        log(f"{stream.created} Deployments stored, {stream.denied} denied by wasd, "
            f"{len(pods)} pods ungated, {len(workloads)} Workloads, {len(groups)} PodGroups; "
            f"whole test {time.monotonic() - t0:.1f} s")


class Stream:
    """Creates Deployments one after another until stopped: valid gang ones,
    and every fourth an invalid one (a gang with RollingUpdate). Records every
    answer that is not the expected one."""

    def __init__(self, srv):
        self.srv = srv
        self.created = self.denied = 0
        self.failures = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()

    def count(self):
        with self._lock:
            return self.created + self.denied

    def wait_for_more(self, n):
        target = self.count() + n
        wait_for(lambda: self.count() >= target or not self._thread.is_alive(), 60, 0.05,
                 f"{n} more admission requests")

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=60)

    def _run(self):
        i = 0
        path = f"/apis/apps/v1/namespaces/{APP_NS}/deployments"
        while not self._stop.is_set() and i < 1000:
            i += 1
            bad = i % 4 == 0
            d = deployment(f"app-{i}", replicas=2, namespace=APP_NS,
                           strategy="RollingUpdate" if bad else "Recreate")
            try:
                code, _, body = self.srv.Request("POST", path, d)
            except Exception as e:  # a connection error is a failed request too
                code, body = 0, {"error": repr(e)}
            with self._lock:
                if not bad and code == 201:
                    self.created += 1
                elif bad and code == 422 and "gang scheduling requires Recreate" in json.dumps(body):
                    self.denied += 1
                else:
                    self.failures.append((d["metadata"]["name"], code, body))
            # A steady, modest rate: the test API server is one Python
            # process, and every create brings a ReplicaSet and two pods.
            time.sleep(0.25)


if __name__ == "__main__":
    unittest.main(verbosity=2)
