"""End-to-end: `wasd reconciler` under failure — SIGKILL at random points (20 times)
then a restart converges with no duplicates and nothing missing; two replicas with
leader election (only the leader writes; the other takes over after the leader is
killed, at once after a SIGTERM release); a foreign Workload with our name; a
PodGroup still Terminating when its ReplicaSet scales up again.
"""
import random
import signal
import time
import unittest

# Runs the binary's default hold; ctest runs it again with the gate everywhere
# (e2e.test_reconciler_resilience.gate): a waiting pod is gated or held by its link.
from lib.cluster import RECONCILER_USER, WRITES, Env
from lib.manifests import NS, deployment, min_count_of, pod_gated, pod_group_of, pod_waits, workload_name
from lib.wait import wait_for

OTHER_USER = "system:serviceaccount:wasd-system:wasd-reconciler-2"
THIRD_USER = "system:serviceaccount:wasd-system:wasd-reconciler-3"


class ReconcilerResilienceTest(unittest.TestCase):
    def setUp(self):
        # --gang-scheduler: the stand-in kube-scheduler holds a pod whose PodGroup is
        # missing or Terminating (the scheduler hold of the default --pod-hold).
        self.env = Env(apiserver_args=("--bookmark-interval", "0.5", "--gang-scheduler")).__enter__()

    def tearDown(self):
        self.env.stop()

    def Deploy(self, name, replicas, **kw):
        return self.env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment(name, replicas, **kw))

    def Converged(self, name, replicas):
        """True when `name` has one Workload with minCount = replicas, exactly one PodGroup per
        active ReplicaSet (and no other), and `replicas` running, ungated pods."""
        ws = [w for w in self.env.workloads()
              if any(o["name"] == name for o in w["metadata"].get("ownerReferences", []))]
        if len(ws) != 1 or min_count_of(ws[0]) != replicas:
            return False
        active = {pod_group_of(rs) for rs in self.env.replica_sets(name) if rs["spec"].get("replicas", 1) > 0}
        pgs = {p["metadata"]["name"]: p for p in self.env.pod_groups() if p["metadata"]["name"].startswith(name + "-")}
        if set(pgs) != active or any(min_count_of(p) != replicas for p in pgs.values()):
            return False
        pods = self.env.pods(name)
        return len(pods) == replicas and all(p["status"].get("phase") == "Running" and not pod_gated(p) for p in pods)

    def test_sigkill_at_random_points_then_restart_converges(self):
        rng = random.Random(6276)
        want = {"crash-a": 3, "crash-b": 2, "crash-c": 4}
        for name, n in want.items():
            self.Deploy(name, n)
        for i in range(20):
            r = self.env.start_reconciler("--leader-elect=false", name=f"kill-{i}", wait=False)
            time.sleep(rng.uniform(0.05, 0.9))
            r.kill()
            if i % 5 == 2:  # change the world between crashes
                name = rng.choice(sorted(want))
                want[name] = rng.choice([0, 1, 2, 5])
                self.env.scale(name, want[name])
        self.env.start_reconciler("--leader-elect=false", name="final")
        for name, n in want.items():
            if n == 0:
                wait_for(lambda: not [p for p in self.env.pod_groups() if p["metadata"]["name"].startswith(name + "-")]
                        and not self.env.pods(name), 60, 0.3, f"{name} at zero")
            else:
                wait_for(lambda: self.Converged(name, n), 60, 0.3, f"{name} converged at {n}")
        # No duplicates: one Workload created per Deployment over all 21 runs.
        posts = [e for e in self.env.srv.Audit(user=RECONCILER_USER, methods=("POST",))
                 if e["path"].endswith("/workloads") and e["status"] in (200, 201)]
        self.assertEqual(sorted(e["body"]["metadata"]["name"].rsplit("-", 1)[0] for e in posts), sorted(want))
        self.assertEqual(len(self.env.workloads()), 3)

    def test_leader_election_one_writer_and_takeover(self):
        _, kc2 = self.env.srv.AddUser(OTHER_USER, ["system:serviceaccounts"])
        _, kc3 = self.env.srv.AddUser(THIRD_USER, ["system:serviceaccounts"])
        a = self.env.start_reconciler("--lease-namespace", "wasd-system", name="a")
        b = self.env.start_reconciler("--lease-namespace", "wasd-system", name="b", kubeconfig=kc2)
        wait_for(lambda: a.metric("wasd_reconciler_leader") + b.metric("wasd_reconciler_leader") == 1,
                30, 0.2, "exactly one leader")
        leader, follower = (a, b) if a.metric("wasd_reconciler_leader") == 1 else (b, a)
        follower_user = OTHER_USER if follower is b else RECONCILER_USER
        self.assertTrue(follower.ready(), "a non-leader is ready")
        lease = self.env.srv.Get("/apis/coordination.k8s.io/v1/namespaces/wasd-system/leases/wasd-reconciler")
        self.assertEqual(lease["spec"]["leaseDurationSeconds"], 15)

        self.Deploy("le-one", 2)
        wait_for(lambda: self.Converged("le-one", 2), 40, 0.2, "le-one converged")
        follower_writes = [e for e in self.env.srv.Audit(user=follower_user, methods=WRITES)
                           if "/leases/" not in e["path"]]
        self.assertEqual(follower_writes, [], "the non-leader writes nothing")

        # The leader dies without releasing: the follower takes over after the lease expires.
        leader.kill()
        killed_at = time.time()
        self.Deploy("le-two", 2)
        wait_for(lambda: follower.metric("wasd_reconciler_leader") == 1, 30, 0.25, "takeover")
        self.assertGreater(time.time() - killed_at, 5, "no takeover before the lease could expire")
        wait_for(lambda: self.Converged("le-two", 2), 40, 0.2, "le-two converged by the new leader")
        self.assertTrue(any("/workloads" in e["path"] for e in
                            self.env.srv.Audit(user=follower_user, methods=("POST",))))

        # SIGTERM releases the Lease: a new replica takes over without waiting 15 s.
        c = self.env.start_reconciler("--lease-namespace", "wasd-system", name="c", kubeconfig=kc3)
        time.sleep(2.5)
        self.assertEqual(c.metric("wasd_reconciler_leader"), 0)
        released_at = time.time()
        self.assertEqual(follower.stop(signal.SIGTERM), 0)
        wait_for(lambda: c.metric("wasd_reconciler_leader") == 1, 20, 0.2, "takeover after release")
        self.assertLess(time.time() - released_at, 8, "a released Lease is taken without waiting for expiry")

    def test_foreign_workload_is_left_alone(self):
        d = self.Deploy("foreign", 2)
        name = workload_name("foreign", d["metadata"]["uid"])
        self.env.create(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/workloads",
                        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                         "metadata": {"name": name, "namespace": NS},
                         "spec": {"podGroupTemplates": [{"name": "pgt-0", "schedulingPolicy": {"basic": {}}}]}})
        wait_for(lambda: len(self.env.pods("foreign")) == 2, 30, 0.2, "waiting pods")
        seq = self.env.srv.LastSeq()
        self.env.start_reconciler("--leader-elect=false")
        wait_for(lambda: [e for e in self.env.events("ForeignObject") if e["involvedObject"]["name"] == "foreign"],
                30, 0.2, "ForeignObject event")
        time.sleep(1.5)
        self.assertEqual(self.env.reconciler_writes(seq), [], "no writes for a Deployment with a foreign Workload")
        self.assertTrue(all(pod_waits(p) for p in self.env.pods("foreign")), "pods keep waiting")
        ev = self.env.events("ForeignObject")[0]
        self.assertEqual(ev["type"], "Warning")
        self.assertIn(name, ev["message"])
        # Once the foreign object is gone, wasd creates its own.
        self.assertEqual(self.env.delete(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/workloads/{name}"), 200)
        wait_for(lambda: self.Converged("foreign", 2), 40, 0.2, "converged after the foreign Workload left")

    def test_podgroup_kept_while_named_and_terminating_one_waited_for(self):
        self.env.start_reconciler("--leader-elect=false")
        self.Deploy("term", 2)
        wait_for(lambda: self.Converged("term", 2), 40, 0.2, "converged")
        rs_name = pod_group_of(self.env.replica_sets("term")[0])  # the PodGroup's name
        pg_path = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups/{rs_name}"
        # A pod outside the Deployment that names the PodGroup (labelled, so wasd's pod
        # cache sees it): at zero replicas the PodGroup is kept until no unfinished pod
        # names it.
        self.env.create(f"/api/v1/namespaces/{NS}/pods",
                        {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": "holder", "namespace": NS, "labels": {"wasd.io/managed": "true"}},
                         "spec": {"schedulingGroup": {"podGroupName": rs_name},
                                  "containers": [{"name": "c", "image": "registry.example/app:1"}]}})
        seq = self.env.srv.LastSeq()
        self.env.scale("term", 0)
        wait_for(lambda: not self.env.pods("term"), 30, 0.2, "pods gone")
        time.sleep(1.5)
        self.assertNotIn("deletionTimestamp", self.env.srv.Get(pg_path)["metadata"])
        self.assertEqual(self.env.reconciler_writes(seq), [])
        self.assertEqual(self.env.delete(f"/api/v1/namespaces/{NS}/pods/holder"), 200)
        wait_for(lambda: self.env.srv.Get(pg_path) is None, 30, 0.2, "PodGroup deleted once unused")
        self.assertEqual([(m, k) for m, k, _, _ in self.env.reconciler_writes(seq)], [("DELETE", "podgroups")])

        # Someone deletes the PodGroup while pods name it: it stays Terminating; wasd waits
        # (Warning Event, no second object, new pods stay gated) and re-creates it once gone.
        self.env.scale("term", 2)
        wait_for(lambda: self.Converged("term", 2), 40, 0.2, "converged again")
        old_uid = self.env.srv.Get(pg_path)["metadata"]["uid"]
        self.assertEqual(self.env.delete(pg_path), 200)
        wait_for(lambda: [e for e in self.env.events("PodGroupTerminating") if e["involvedObject"]["name"] == "term"],
                30, 0.2, "PodGroupTerminating event")
        victim = self.env.pods("term")[0]["metadata"]["name"]
        seq = self.env.srv.LastSeq()
        self.env.delete(f"/api/v1/namespaces/{NS}/pods/{victim}")
        wait_for(lambda: len(self.env.pods("term")) == 2 and any(pod_waits(p) for p in self.env.pods("term")),
                30, 0.2, "a replacement pod, waiting")
        time.sleep(1.0)
        self.assertTrue(any(pod_waits(p) for p in self.env.pods("term")), "the new pod waits for a new PodGroup")
        self.assertNotIn("POST", [m for m, _, _, _ in self.env.reconciler_writes(seq)])
        # The way out the Event names: scale to zero, then back.
        self.env.scale("term", 0)
        wait_for(lambda: self.env.srv.Get(pg_path) is None, 30, 0.2, "Terminating PodGroup gone")
        self.env.scale("term", 2)
        wait_for(lambda: self.Converged("term", 2), 40, 0.2, "re-created and converged")
        self.assertNotEqual(self.env.srv.Get(pg_path)["metadata"]["uid"], old_uid)
    def test_terminating_podgroup_named_only_by_gated_pods_is_released(self):
        """Q14 on the test API server with its podgroup-protection controller: a PodGroup
        deleted while its gang runs stays Terminating; once every pod that names it is a
        gated replacement that never ran, nothing is protected, so wasd removes the
        finalizer itself, re-creates the PodGroup and the gang runs again."""
        self.env.start_reconciler("--leader-elect=false")
        self.Deploy("release", 2)
        wait_for(lambda: self.Converged("release", 2), 40, 0.2, "converged")
        pg_name = pod_group_of(self.env.replica_sets("release")[0])
        pg_path = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups/{pg_name}"
        old_uid = self.env.srv.Get(pg_path)["metadata"]["uid"]
        self.assertEqual(self.env.delete(pg_path), 200)
        self.assertIn("deletionTimestamp", self.env.srv.Get(pg_path)["metadata"])
        seq = self.env.srv.LastSeq()
        # Every running member goes (node loss, eviction): the replacements are gated and
        # name the Terminating PodGroup, which the protection controller keeps for them.
        for p in self.env.pods("release"):
            self.env.delete(f"/api/v1/namespaces/{NS}/pods/{p['metadata']['name']}")
        wait_for(lambda: self.Converged("release", 2) and
                self.env.srv.Get(pg_path)["metadata"]["uid"] != old_uid, 40, 0.2,
                "re-created and converged")
        released = [e for e in self.env.events("PodGroupReleased") if e["involvedObject"]["name"] == "release"]
        self.assertEqual(len(released), 1, released)
        self.assertIn("never ran", released[0]["message"])
        patches = [e for e in self.env.srv.Audit(since=seq, user=RECONCILER_USER, methods=("PATCH",))
                   if e["path"].endswith(f"/podgroups/{pg_name}")]
        self.assertEqual([op["op"] for op in patches[0]["body"]], ["test", "test", "remove"])
        self.assertEqual(patches[0]["body"][1]["value"], "scheduling.k8s.io/podgroup-protection")

    def test_priority_class_read_error_is_retried_not_dropped(self):
        """M3: a failed read of the PriorityClass (here one 500) must not leave the
        immutable Workload template without priorityClassName."""
        self.env.create("/apis/scheduling.k8s.io/v1/priorityclasses",
                        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                         "metadata": {"name": "gang-high"}, "value": 1000})
        self.env.srv.SetFaults([{"code": 500, "user": RECONCILER_USER, "methods": ["GET"], "watch": False,
                                 "path": r"/priorityclasses/gang-high$", "count": 1}])
        self.env.start_reconciler("--leader-elect=false")
        d = deployment("prio", 2)
        d["spec"]["template"]["spec"]["priorityClassName"] = "gang-high"
        self.env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", d)
        wait_for(lambda: self.Converged("prio", 2), 40, 0.2, "converged")
        faults = [e for e in self.env.srv.Audit(user=RECONCILER_USER) if e.get("fault") == 500]
        self.assertEqual(len(faults), 1, "the injected error was met")
        w = [w for w in self.env.workloads() if w["metadata"]["name"].startswith("prio-")][0]
        self.assertEqual(w["spec"]["podGroupTemplates"][0].get("priorityClassName"), "gang-high")
        pg = [p for p in self.env.pod_groups() if p["metadata"]["name"].startswith("prio-")][0]
        self.assertEqual(pg["spec"].get("priorityClassName"), "gang-high")
        self.assertEqual([e for e in self.env.events("PriorityClassSkipped")], [])

    def test_create_refused_for_good_is_an_event_on_the_deployment(self):
        """L4: a Workload create the API server keeps refusing (a feature gate off, a
        policy) is a Warning Event on the Deployment, not only a log line."""
        self.env.srv.SetFaults([{"code": 403, "reason": "Forbidden", "user": RECONCILER_USER,
                                 "methods": ["POST"], "watch": False, "path": r"/workloads$",
                                 "message": 'workloads.scheduling.k8s.io "x" is forbidden: injected policy'}])
        self.env.start_reconciler("--leader-elect=false")
        self.Deploy("refused", 2)
        wait_for(lambda: [e for e in self.env.events("FailedWorkloadCreate")
                         if e["involvedObject"]["name"] == "refused"], 30, 0.2, "FailedWorkloadCreate Event")
        ev = [e for e in self.env.events("FailedWorkloadCreate") if e["involvedObject"]["name"] == "refused"][0]
        self.assertEqual(ev["type"], "Warning")
        self.assertIn("injected policy", ev["message"])
        self.env.srv.ClearFaults()
        wait_for(lambda: self.Converged("refused", 2), 60, 0.2, "converged once allowed")


if __name__ == "__main__":
    unittest.main(verbosity=2)
