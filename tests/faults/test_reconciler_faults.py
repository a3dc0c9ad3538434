"""Fault suite, reconciler part: `wasd reconciler` with the real webhook against
the test API server while that server misbehaves.

* API errors at FAULT_RATE (default 0.2) on the reconciler's own requests — 500,
  429 with Retry-After, 409 on writes, connections dropped without an answer, 410
  and cut streams on watches (each kind also once for certain, on the first
  matching request) — through a Deployment life: create, scale up and down and to
  zero, Recreate rollout.
* Watches only, at a high rate, through FAULT_WATCH_ROUNDS (2) rounds of scaling
  and rollouts, plus the watch history compacted every 2 s (every
  resume from an older resourceVersion is then 410).
* The API server "restarted" FAULT_RESTARTS times (3): a relay in front of it cuts
  every connection and refuses new ones for 3 s while the world changes, half the
  time with the watch history compacted as well. (The test API server keeps its
  objects in memory and makes a new CA when its process starts, so restarting the
  process itself would be a different, empty cluster: see README.md.)
* SIGKILL of the reconciler at random points FAULT_KILLS times (10; 50 in
  scripts/faults.sh) with the API faults on and the world changing between kills.

After each: every Deployment converges (one Workload, one PodGroup per ReplicaSet
with replicas > 0 and no other, all pods running with the gate lifted), each
Workload was created once, and every write the reconciler attempted targets an
object wasd owns (decoys — a Workload and a PodGroup of nobody, a Deployment that
did not opt in — are never touched).
"""
import os
import threading
import time
import unittest

from faultlib import Knob, Report, Rng
from lib.cluster import RECONCILER_USER, Env
from lib.manifests import NS
from lib.wait import wait_for
from reconlib import (CONVERGE, ApiFaultRules, FaultCounts, FaultRate, ForeignWrites, FormatCounts,
                      OneOfEachRules, TcpProxy, World, WorkloadCreations, Writes)


class ReconcilerFaultsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = Env().__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.env.stop()

    def setUp(self):
        self.seq = self.env.srv.LastSeq()
        self.rate = FaultRate()

    def tearDown(self):
        self.env.srv.ClearFaults()

    def start_reconciler(self, name, kubeconfig=None):
        r = self.env.start_reconciler("--leader-elect=false", "--resync-period", "30s", name=name,
                                     wait=False, kubeconfig=kubeconfig)
        self.addCleanup(r.kill)
        return r

    def wait_ready(self, r):
        wait_for(lambda: r.ready() or r.proc.poll() is not None, CONVERGE, 0.2, f"{r.name} ready")
        self.assertIsNone(r.proc.poll(), f"{r.name} exited:\n{r.logs()[-3000:]}")

    def Converge(self, world):
        try:
            world.WaitConverged()
        except AssertionError as e:
            details = "\n".join(world.Details(n) for n in sorted(world.want))
            raise AssertionError(f"{e}\n{details}") from None

    def AssertClean(self, world, decoys=False):
        """No write outside what wasd owns; one Workload creation per Deployment."""
        self.assertEqual(ForeignWrites(self.env, self.seq), [])
        created = WorkloadCreations(self.env, self.seq)
        self.assertEqual({n: created.get(n, 0) for n in world.want}, {n: 1 for n in world.want},
                         "each Workload created exactly once")
        if decoys:
            plain = world.Name("plain")
            self.assertEqual([w for w in self.env.workloads() if w["metadata"]["name"].startswith(plain + "-")], [])
            self.assertTrue(all(not p["spec"].get("schedulingGates") for p in self.env.pods(plain)))

    # ---------------------------------------------------------------- tests

    def test_api_errors_through_a_deployment_life(self):
        world = World(self.env, "life")
        world.CreateDecoys()
        decoy_rvs = {path: self.env.srv.Get(path)["metadata"]["resourceVersion"] for path in (
            f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/workloads/{world.Name('decoy-workload')}",
            f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups/{world.Name('decoy-podgroup')}")}
        self.env.srv.SetFaults(OneOfEachRules() + ApiFaultRules(self.rate))
        r = self.start_reconciler("life")
        self.wait_ready(r)
        a, b, c = world.Create("a", 3), world.Create("b", 2), world.Create("c", 4)
        self.Converge(world)
        world.Scale(a, 5)
        world.Scale(b, 1)
        world.Scale(c, 0)
        self.Converge(world)
        world.Rollout(a, 1)
        world.Rollout(b, 1)
        world.Scale(c, 2)
        self.Converge(world)
        counts = FaultCounts(self.env.srv, self.seq)
        self.env.srv.ClearFaults()
        for kind in ("500", "429", "409", "drop", "410 watch", "drop watch"):
            self.assertGreater(counts.get(kind, 0), 0, f"no {kind} injected: {counts}")
        self.AssertClean(world, decoys=True)
        for path, rv in decoy_rvs.items():
            self.assertEqual(self.env.srv.Get(path)["metadata"]["resourceVersion"], rv, f"{path} untouched")
        self.assertIsNone(r.proc.poll(), "the reconciler survived")
        Report(f"reconciler api-errors (FAULT_RATE {self.rate}): faults injected {FormatCounts(counts)} "
               f"(total {sum(counts.values())}, over {Writes(self.env, self.seq)} write attempts); 3 Deployments "
               f"created, scaled 3->5 / 2->1 / 4->0, rolled out (Recreate) / scaled 0->2: converged, each "
               f"Workload created once, 0 writes outside wasd's objects, decoys untouched")

    def test_watch_faults_and_compaction(self):
        world = World(self.env, "watch")
        rate = max(self.rate, 0.5)
        rounds = Knob("FAULT_WATCH_ROUNDS", 2)
        # One watch fault of each kind first, so the assertion below never
        # rests on chance; then faults at `rate` per watch.
        self.env.srv.SetFaults([r for r in OneOfEachRules() if r["watch"]] +
                               ApiFaultRules(0, watch_rate=rate))
        stop = threading.Event()
        compactions = [0]

        def Compact():
            while not stop.wait(2.0):
                self.env.srv.Compact()
                compactions[0] += 1

        compactor = threading.Thread(target=Compact, daemon=True)
        compactor.start()
        try:
            r = self.start_reconciler("watch")
            self.wait_ready(r)
            a, b = world.Create("a", 2), world.Create("b", 3)
            self.Converge(world)
            for i in range(rounds):
                world.Scale(a, 4)
                world.Rollout(b, i + 1)
                self.Converge(world)
                world.Scale(a, 0)
                world.Scale(b, 1 + i % 3)
                self.Converge(world)
        finally:
            stop.set()
            compactor.join(10)
        counts = FaultCounts(self.env.srv, self.seq)
        self.env.srv.ClearFaults()
        watches = [e for e in self.env.srv.Audit(since=self.seq, user=RECONCILER_USER) if e.get("watch")]
        lists = [e for e in self.env.srv.Audit(since=self.seq, user=RECONCILER_USER, methods=("GET",))
                 if not e.get("watch") and e["path"].endswith(("s", "workloads", "podgroups"))]
        self.assertGreater(counts.get("410 watch", 0) + counts.get("drop watch", 0), 0, counts)
        self.AssertClean(world)
        Report(f"reconciler watch-faults (rate {rate} per watch, history compacted every 2 s, "
               f"{compactions[0]} times): faults injected {FormatCounts(counts)}; {len(watches)} watches "
               f"opened, {len(lists)} lists; 2 Deployments through create and {rounds} rounds of scale/rollout/zero, "
               f"converged after each, "
               f"0 writes outside wasd's objects")

    def test_api_server_restarts(self):
        restarts = Knob("FAULT_RESTARTS", 3)
        rng = Rng("restart")
        world = World(self.env, "restart")
        proxy = TcpProxy(self.env.srv.port)
        self.addCleanup(proxy.Stop)
        kubeconfig = proxy.Kubeconfig(self.env.reconciler_kubeconfig,
                                      os.path.join(self.env.dir, "kubeconfig-via-relay"))
        r = self.start_reconciler("restart", kubeconfig=kubeconfig)
        self.wait_ready(r)
        a, b = world.Create("a", 2), world.Create("b", 3)
        self.Converge(world)
        cut, compacted = 0, 0
        for i in range(restarts):
            cut += proxy.Down()
            # While the API server is away the world moves on.
            if i == 0:
                world.Create("c", 2)
            world.Scale(a, rng.choice([0, 1, 3, 4]))
            world.Rollout(b, i + 1)
            if i % 2 == 1:
                self.env.srv.Compact()  # a fresh watch cache: old resourceVersions are gone
                compacted += 1
            time.sleep(3.0)
            self.assertIsNone(r.proc.poll(), "the reconciler outlived the outage")
            proxy.Up()
            self.Converge(world)
        self.AssertClean(world)
        Report(f"reconciler api-server-restart: {restarts} restarts (3 s down, {cut} connections cut, "
               f"{compacted} with the watch history compacted), world changed during each outage "
               f"(new Deployment, scale, rollout): converged after each, the same process throughout, "
               f"0 writes outside wasd's objects")

    def test_sigkill_at_random_points_under_faults(self):
        kills = Knob("FAULT_KILLS", 10)
        rng = Rng("sigkill")
        world = World(self.env, "kill")
        self.env.srv.SetFaults(ApiFaultRules(self.rate))
        names = [world.Create("a", 3), world.Create("b", 2), world.Create("c", 4)]
        changes = 0
        for i in range(kills):
            r = self.start_reconciler(f"kill-{i}")
            time.sleep(rng.uniform(0.05, 1.5))
            r.kill()
            if i % 3 == 1:  # the world changes between crashes
                name = rng.choice(names)
                if rng.random() < 0.3:
                    world.Rollout(name, i)
                else:
                    world.Scale(name, rng.choice([0, 1, 2, 5]))
                changes += 1
        final = self.start_reconciler("kill-final")
        self.wait_ready(final)
        self.Converge(world)
        counts = FaultCounts(self.env.srv, self.seq)
        self.env.srv.ClearFaults()
        self.AssertClean(world)
        Report(f"reconciler sigkill: {kills} SIGKILLs at random points (0.05-1.5 s after start) with "
               f"API faults at {self.rate} ({FormatCounts(counts)}), {changes} world changes between "
               f"kills; after the restart: converged, each Workload created once, no duplicate or "
               f"missing PodGroup, 0 writes outside wasd's objects")


if __name__ == "__main__":
    unittest.main(verbosity=2)
