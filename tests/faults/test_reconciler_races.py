"""Fault suite, the races of issue 11: ways a real cluster ends with pods gated
forever, each run many times on the test API server (pods keep running through a
termination grace period, the podgroup-protection controller holds PodGroups that
pods still name).

* Restarts before sync (H1, Q13): the reconciler is SIGKILLed and restarted
  FAULT_SYNC_RESTARTS times (6; 20 in scripts/faults.sh) while the API server
  delays or answers 429 to its ReplicaSet and Pod LISTs. No PodGroup of a
  ReplicaSet with replicas may be deleted, no create may meet 409 AlreadyExists
  (a plan from a half-filled cache), and every gang converges.
* Delete and re-create (H2, Q12): a gang Deployment is deleted while its pods are
  in their grace period and re-created at once with the same name and template;
  its new ReplicaSet has the old one's name. FAULT_RACE_ROUNDS rounds (5; 50).
* Scale to zero and straight back up (M6, Q14): the scale-up lands at a random
  moment around the PodGroup's deletion. FAULT_RACE_ROUNDS rounds.

In both races no pod may stay gated longer than RACE_BOUND seconds.
"""
import time
import unittest

from faultlib import Knob, Report, Rng
from lib.cluster import RECONCILER_USER, Env
from lib.manifests import NS, deployment, pod_gated, pod_group_of
from lib.wait import wait_for
from reconlib import World

GRACE = 2.0         # pod termination grace honoured by the test API server, seconds
RACE_BOUND = 30.0   # longest a pod may stay gated in a race round, seconds
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"


def PodGroupWrites(env, since, method):
    return [e for e in env.srv.Audit(since=since, user=RECONCILER_USER, methods=(method,))
            if "/podgroups" in e["path"]]


class SyncRestartsTest(unittest.TestCase):
    """H1/Q13: nothing is planned from caches that have not synced."""

    def setUp(self):
        self.env = Env(apiserver_args=("--bookmark-interval", "0.5")).__enter__()
        self.addCleanup(self.env.stop)

    def test_restarts_while_lists_are_slow_or_refused(self):
        restarts = Knob("FAULT_SYNC_RESTARTS", 6)
        rng = Rng("sync-restarts")
        env = self.env
        world = World(env, "sync")
        names = [world.Create("a", 3), world.Create("b", 2), world.Create("c", 4)]
        first = env.start_reconciler("--leader-elect=false", name="sync-first")
        world.WaitConverged()
        first.kill()
        seq = env.srv.LastSeq()
        slow_lists = {"delayed": 0, "refused": 0}
        for i in range(restarts):
            # LISTs (not watches) of ReplicaSets and Pods: slow, or shed by priority
            # and fairness, for a while after the start.
            rules = []
            if rng.random() < 0.5:
                rules.append({"code": "delay", "delay": rng.uniform(0.5, 2.5), "user": RECONCILER_USER,
                              "watch": False, "methods": ["GET"], "path": r"/(replicasets|pods)$",
                              "count": 2})
                slow_lists["delayed"] += 1
            else:
                rules.append({"code": 429, "retryAfter": 1, "user": RECONCILER_USER, "watch": False,
                              "methods": ["GET"], "path": r"/(replicasets|pods)$", "count": rng.randint(1, 4)})
                slow_lists["refused"] += 1
            env.srv.SetFaults(rules)
            if i % 3 == 1:  # the world moves between restarts; replicas stay above zero
                name = rng.choice(names)
                world.Scale(name, rng.choice([1, 2, 3, 5]))
            r = env.start_reconciler("--leader-elect=false", name=f"sync-{i}", wait=False)
            time.sleep(rng.uniform(0.3, 3.0))
            r.kill()
        env.srv.ClearFaults()
        env.start_reconciler("--leader-elect=false", name="sync-final")
        world.WaitConverged()

        deletes = PodGroupWrites(env, seq, "DELETE")
        self.assertEqual([(e["path"], e.get("status")) for e in deletes], [],
                         "no PodGroup deleted: every ReplicaSet kept replicas > 0")
        conflicts = [(e["path"], (e.get("body") or {}).get("metadata", {}).get("name"))
                     for e in env.srv.Audit(since=seq, user=RECONCILER_USER, methods=("POST",))
                     if e.get("status") == 409 and ("/workloads" in e["path"] or "/podgroups" in e["path"])]
        self.assertEqual(conflicts, [], "no create of an object that exists")
        api_not_served = [e for e in env.events("APINotServed")]
        self.assertEqual(api_not_served, [], "no APINotServed Event while the API is served")
        Report(f"reconciler restarts before sync: {restarts} SIGKILL+restart cycles with the ReplicaSet/Pod "
               f"LISTs delayed ({slow_lists['delayed']}) or refused with 429 ({slow_lists['refused']}): "
               f"0 PodGroup DELETEs, 0 creates answered 409, 0 APINotServed Events, 3 gangs converged")


class RacesTest(unittest.TestCase):
    """H2/M6: the delete-and-recreate and scale-to-zero/scale-up races."""

    def setUp(self):
        self.env = Env(apiserver_args=("--bookmark-interval", "0.5",
                                       "--pod-grace-period", str(GRACE))).__enter__()
        self.addCleanup(self.env.stop)
        self.env.start_reconciler("--leader-elect=false", name="races")

    def Running(self, name, n):
        """n live pods, all Running with the gate lifted; their PodGroup exists and is
        not Terminating."""
        pods = [p for p in self.env.pods(name) if "deletionTimestamp" not in p["metadata"]]
        if len(pods) != n or not all(p["status"].get("phase") == "Running" and not pod_gated(p) for p in pods):
            return False
        active = [rs for rs in self.env.replica_sets(name) if rs["spec"].get("replicas", 0) > 0]
        if len(active) != 1:
            return False
        pg = self.env.srv.Get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups/{pod_group_of(active[0])}")
        return pg is not None and "deletionTimestamp" not in pg["metadata"]

    def WaitRunning(self, name, n, started):
        """Waits (bounded) until Running(); returns the seconds since `started`."""
        wait_for(lambda: self.Running(name, n), RACE_BOUND + 10, 0.1, f"{name}: {n} pods running")
        return time.monotonic() - started

    def test_delete_and_recreate_with_the_same_name(self):
        rounds = Knob("FAULT_RACE_ROUNDS", 5)
        env = self.env
        name = "recreate"
        env.create(DEPLOYMENTS, deployment(name, 2))
        self.WaitRunning(name, 2, time.monotonic())
        waits, same_rs_name = [], 0
        for i in range(rounds):
            old_rs = [rs for rs in env.replica_sets(name) if rs["spec"].get("replicas", 0) > 0][0]
            self.assertEqual(env.delete(f"{DEPLOYMENTS}/{name}"), 200)
            # The garbage collector removes the ReplicaSet at once; its pods run on
            # through their grace period, so the old PodGroup stays Terminating.
            wait_for(lambda: not env.replica_sets(name), 20, 0.05, "old ReplicaSet gone")
            started = time.monotonic()
            env.create(DEPLOYMENTS, deployment(name, 2))
            waited = self.WaitRunning(name, 2, started)
            new_rs = [rs for rs in env.replica_sets(name) if rs["spec"].get("replicas", 0) > 0][0]
            same_rs_name += new_rs["metadata"]["name"] == old_rs["metadata"]["name"]
            self.assertNotEqual(pod_group_of(new_rs), pod_group_of(old_rs))
            waits.append(waited)
            self.assertLess(waited, RACE_BOUND, f"round {i}: pods gated for {waited:.1f} s")
        self.assertEqual(same_rs_name, rounds, "each new ReplicaSet had the old one's name")
        self.assertEqual([e for e in env.events("ForeignObject")], [])
        Report(f"delete and re-create with the same name ({rounds} rounds, pod grace {GRACE:.0f} s): the new "
               f"ReplicaSet had the old name every time; new pods running {min(waits):.1f}-{max(waits):.1f} s "
               f"after the re-create (bound {RACE_BOUND:.0f} s), 0 ForeignObject Events")

    def test_replicaset_deleted_and_recreated_with_the_same_name(self):
        """`kubectl delete rs` of a gang's ReplicaSet: the Deployment controller makes a
        new one with the same name while the old pods are in their grace period."""
        rounds = max(1, Knob("FAULT_RACE_ROUNDS", 5) // 5)
        env = self.env
        name = "delrs"
        env.create(DEPLOYMENTS, deployment(name, 2))
        self.WaitRunning(name, 2, time.monotonic())
        waits = []
        for i in range(rounds):
            old_rs = [rs for rs in env.replica_sets(name) if rs["spec"].get("replicas", 0) > 0][0]
            started = time.monotonic()
            self.assertEqual(env.delete(f"/apis/apps/v1/namespaces/{NS}/replicasets/{old_rs['metadata']['name']}"),
                             200)
            wait_for(lambda: any(rs["metadata"]["uid"] != old_rs["metadata"]["uid"] for rs in env.replica_sets(name)),
                    20, 0.05, "a new ReplicaSet")
            waited = self.WaitRunning(name, 2, started)
            new_rs = [rs for rs in env.replica_sets(name) if rs["spec"].get("replicas", 0) > 0][0]
            self.assertEqual(new_rs["metadata"]["name"], old_rs["metadata"]["name"])
            self.assertNotEqual(pod_group_of(new_rs), pod_group_of(old_rs))
            waits.append(waited)
            self.assertLess(waited, RACE_BOUND, f"round {i}: pods gated for {waited:.1f} s")
        Report(f"ReplicaSet deleted and re-created with the same name ({rounds} rounds, pod grace {GRACE:.0f} s): "
               f"new pods running {min(waits):.1f}-{max(waits):.1f} s after the delete (bound {RACE_BOUND:.0f} s)")

    def test_scale_to_zero_and_straight_back_up(self):
        rounds = Knob("FAULT_RACE_ROUNDS", 5)
        rng = Rng("zero-up")
        env = self.env
        name = "zeroup"
        env.create(DEPLOYMENTS, deployment(name, 2))
        self.WaitRunning(name, 2, time.monotonic())
        seq = env.srv.LastSeq()
        waits = []
        for i in range(rounds):
            env.scale(name, 0)
            # Back up at a random moment: before the old pods are gone, around the
            # PodGroup's deletion, or after it.
            time.sleep(rng.uniform(0.0, GRACE + 1.5))
            started = time.monotonic()
            env.scale(name, 2)
            waited = self.WaitRunning(name, 2, started)
            waits.append(waited)
            self.assertLess(waited, RACE_BOUND, f"round {i}: pods gated for {waited:.1f} s")
        released = len([e for e in env.events("PodGroupReleased") if e["involvedObject"]["name"] == name])
        deletes = len(PodGroupWrites(env, seq, "DELETE"))
        Report(f"scale to zero and back up ({rounds} rounds, up after 0-{GRACE + 1.5:.1f} s, pod grace "
               f"{GRACE:.0f} s): pods running {min(waits):.1f}-{max(waits):.1f} s after the scale-up (bound "
               f"{RACE_BOUND:.0f} s); {deletes} PodGroup DELETEs, {released} Terminating PodGroups released")


if __name__ == "__main__":
    unittest.main(verbosity=2)
