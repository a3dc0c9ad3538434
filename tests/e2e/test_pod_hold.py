"""End-to-end, issue 32 (docs/design.md Q23): who holds a pod until its group exists.

With the real `wasd webhook` (its default --pod-hold: native, volcano and kai held by
their scheduler; coscheduling by wasd's gate) and `wasd reconciler` against the test API
server, whose scheduler holds a pod naming a missing group as the real schedulers do:

* scheduler hold (native, volcano, kai): create, scale up, Recreate rollout, scale to zero
  and back, delete and re-create. No pod is ever bound before its group exists (each
  binding audit record says whether the group existed then), the pods never carry the
  gate, and the reconciler makes no gate-lift PATCH: its only writes are the group
  objects (and their minCount).
* gate hold (coscheduling): the pods are gated and lifted once the group exists.
* a scheduler that does not hold (the test server's --scheduler-ignores-groups): the
  gang doctor counts the members bound while their group did not exist, posts a Warning
  BoundBeforeGroup naming --pod-hold=<backend>=gate, exports
  wasd_gang_members{state="bound_before_group"} and `wasd explain` shows the count.
"""
import json
import subprocess
import time
import unittest

from lib.cluster import Env
from lib.manifests import deployment, linked_group, pod_gated
from lib.paths import WASD
from lib.wait import wait_for

ALL_BACKENDS = "native,volcano,kai,coscheduling"
TIMEOUT = 40


def backend_flags():
    return ["--backend", "native", "--allowed-backends", ALL_BACKENDS]


class Helpers:
    env = None

    def kubectl(self, *args, **kw):
        return self.env.srv.Kubectl(*args, **kw)

    def apply(self, obj):
        self.kubectl("apply", "-f", "-", input=json.dumps(obj))

    def live(self, name):
        return [p for p in self.env.pods(name) if "deletionTimestamp" not in p["metadata"]]

    def running(self, name, n):
        pods = self.live(name)
        return len(pods) == n and all(p["status"].get("phase") == "Running" for p in pods)

    def wait_running(self, name, n, what):
        wait_for(lambda: self.running(name, n), TIMEOUT, 0.2, f"{name}: {what}")

    def assert_ungated(self, name, backend):
        for p in self.live(name):
            self.assertFalse(pod_gated(p), p["metadata"]["name"])
            self.assertTrue(linked_group(p, backend), p["metadata"]["name"])

    def manifest(self, backend, name, replicas, image="registry.example/app:1"):
        annotations = {} if backend == "native" else {"wasd.io/backend": backend}
        # KAI evicts a gang below its minimum: it takes disruptionMode all (minCount unset).
        extra = {"disruptionMode": {"all": {}}} if backend == "kai" else None
        return deployment(name, replicas=replicas, annotations=annotations, image=image,
                          extra_config=extra)

    def bindings(self, name, since=0):
        """The test scheduler's binding records of `name`'s pods: [(pod, groupExisted)]."""
        out = []
        for e in self.env.srv.Audit(since=since, methods=("POST",)):
            parts = e["path"].strip("/").split("/")
            if parts[-1] != "binding" or not parts[-2].startswith(name + "-"):
                continue
            out.append((parts[-2], (e.get("body") or {}).get("groupExisted")))
        return out


class SchedulerHoldTest(Helpers, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # pod_hold=None: the binary's own defaults.
        cls.env = Env(webhook_args=backend_flags(), pod_hold=None).__enter__()
        try:
            cls.rec = cls.env.start_reconciler("--leader-elect=false", "--workers", "2",
                                              "--resync-period", "3s", *backend_flags())
        except BaseException:
            cls.env.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.env.stop()

    def lifecycle(self, backend):
        name = f"hold-{backend}"
        since = self.env.srv.LastSeq()
        self.addCleanup(lambda: self.kubectl("delete", "deployment", name, "--ignore-not-found",
                                             "--wait=false"))
        # create
        self.apply(self.manifest(backend, name, 3))
        self.wait_running(name, 3, "created")
        self.assert_ungated(name, backend)
        # scale up
        self.kubectl("scale", "deployment", name, "--replicas=5")
        self.wait_running(name, 5, "scaled up")
        self.assert_ungated(name, backend)
        # Recreate rollout: a new ReplicaSet, a new group
        old_groups = {linked_group(p, backend) for p in self.live(name)}
        self.apply(self.manifest(backend, name, 5, image="registry.example/app:2"))
        wait_for(lambda: self.running(name, 5) and
                 not {linked_group(p, backend) for p in self.live(name)} & old_groups,
                 TIMEOUT, 0.2, f"{name}: rolled out")
        self.assert_ungated(name, backend)
        # scale to zero and back
        self.kubectl("scale", "deployment", name, "--replicas=0")
        wait_for(lambda: not self.env.pods(name), TIMEOUT, 0.2, f"{name}: scaled to zero")
        self.kubectl("scale", "deployment", name, "--replicas=3")
        self.wait_running(name, 3, "scaled back")
        # delete and re-create
        self.kubectl("delete", "deployment", name, "--wait=false")
        wait_for(lambda: not self.env.pods(name), TIMEOUT, 0.2, f"{name}: deleted")
        self.apply(self.manifest(backend, name, 3))
        self.wait_running(name, 3, "re-created")

        binds = self.bindings(name, since)
        # 3 + 2 + 5 + 3 + 3 members were bound, each only once its group existed.
        self.assertEqual(len(binds), 16, binds)
        self.assertEqual([b for b in binds if b[1] is not True], [])
        # No gate lifts: the reconciler never wrote a pod.
        writes = self.env.reconciler_writes(since)
        self.assertEqual([w[:3] for w in writes if w[1] == "pods"], [])
        self.assertTrue([w for w in writes if w[0] == "POST" and w[1].startswith("podgroups")])

    def test_native(self):
        self.lifecycle("native")

    def test_volcano(self):
        self.lifecycle("volcano")

    def test_kai(self):
        self.lifecycle("kai")

    def test_coscheduling_keeps_the_gate(self):
        name = "hold-coscheduling"
        since = self.env.srv.LastSeq()
        self.addCleanup(lambda: self.kubectl("delete", "deployment", name, "--ignore-not-found",
                                             "--wait=false"))
        self.apply(self.manifest("coscheduling", name, 3))
        self.wait_running(name, 3, "created")
        binds = self.bindings(name, since)
        self.assertEqual([b for b in binds if b[1] is not True], [])
        lifts = [w for w in self.env.reconciler_writes(since) if w[1] == "pods"]
        self.assertEqual(len(lifts), 3, lifts)  # one gate lift per pod
        self.assertTrue(all(w[0] == "PATCH" for w in lifts), lifts)

    def test_no_bound_before_group_reported(self):
        text = self.rec.metrics_text()
        for line in text.splitlines():
            if line.startswith("wasd_gang_members{") and 'state="bound_before_group"' in line:
                self.assertEqual(float(line.rsplit(" ", 1)[1]), 0.0, line)
        self.assertEqual(self.env.events("BoundBeforeGroup"), [])


class SchedulerIgnoresGroupsTest(Helpers, unittest.TestCase):
    """A scheduler that does not hold: the doctor reports it."""

    def test_bound_before_group(self):
        with Env(apiserver_args=("--bookmark-interval", "0.5", "--scheduler-ignores-groups"),
                 webhook_args=backend_flags(), pod_hold=None) as env:
            self.env = env
            name = "nohold"
            self.apply(self.manifest("native", name, 2))
            # No reconciler yet: no group, and the scheduler binds the pods anyway.
            self.wait_running(name, 2, "bound without their group")
            self.assertEqual([b[1] for b in self.bindings(name)], [False, False])
            # The group must come in a later second than the binds (times are whole
            # seconds): wait for the clock to pass it, then start the reconciler.
            bound = max(p["status"]["startTime"] for p in self.live(name))
            wait_for(lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) > bound,
                     5, 0.05, "the next second")
            rec = env.start_reconciler("--leader-elect=false", "--gang-status-delay=0s",
                                       "--normal-events=false", *backend_flags())
            wait_for(lambda: env.events("BoundBeforeGroup"), TIMEOUT, 0.2, "BoundBeforeGroup")
            ev = env.events("BoundBeforeGroup")[0]
            self.assertEqual(ev["type"], "Warning")
            self.assertIn("2 member(s)", ev["message"])
            self.assertIn("--pod-hold=native=gate", ev["message"])
            wait_for(lambda: 'state="bound_before_group"} 2' in rec.metrics_text(), TIMEOUT, 0.2,
                     "the metric")
            p = subprocess.run([WASD, "explain", f"deployment/{name}", "-o", "json",
                                "--kubeconfig", env.srv.kubeconfig],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(json.loads(p.stdout)["counts"]["boundBeforeGroup"], 2, p.stderr)
            # Normal Events are off: none posted, the Warning was.
            self.assertEqual([e for e in env.events() if e.get("type") == "Normal"
                              and e["source"].get("component") == "wasd-reconciler"], [])


if __name__ == "__main__":
    unittest.main()
