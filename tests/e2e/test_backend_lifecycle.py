"""End-to-end, issues 16 and 30: the same Deployment lifecycle on each gang-scheduling
backend (native, volcano, kai, coscheduling) through kubectl, with the real `wasd webhook`
and `wasd reconciler` against the test API server (which serves the three PodGroup CRDs)
and its scheduler playing each backend's own rules (`--gang-scheduler=rules`: a pod
naming a missing group is held, quorum before binding, Volcano's queue and phases, KAI's
stale-gang eviction with a short grace period, coscheduling's Permit) on one Node with
room for 4 pods: create (gated pods, the group object with its spec and owner, the pods'
links, gates lifted after the group exists), scale up where it does not fit (no running
member evicted; KAI raises minMember only as members become active), scale down (the
pending member goes, nothing left Pending), no writes across a resync, Recreate rollout
(a new group per ReplicaSet, the old one deleted), scale to zero (group deleted) and
delete (garbage collection). Then a backend whose API is not served: its pods stay gated
with one Warning Event until the API appears, then it converges. The reconciler's writes
are read from the API server's audit log and counted.
"""
import json
import time
import unittest

from lib.cluster import DefaultPodHold, Env
from lib.manifests import (BACKEND_LABEL, BACKENDS, NS, deployment, group_min_count, linked_group,
                           pod_gated, pod_group_of)
from lib.wait import wait_for

ALL_BACKENDS = "native,volcano,kai,coscheduling"
RESYNC_SECONDS = 3
TIMEOUT = 40
KAI_GRACE = "2"  # seconds before KAI evicts a gang below minMember
ROOM = 4  # pods of 1 CPU the one Node holds


def gated(backend):
    """Whether this run's pods of `backend` carry wasd's gate (and so get one lift each):
    coscheduling by default, every backend with WASD_TEST_POD_HOLD=gate; native, volcano
    and kai are held by their scheduler otherwise (the API is served here)."""
    return DefaultPodHold() is not None or backend == "coscheduling"


def lifts(backend, n):
    """The reconciler's gate-lift writes for n new pods under this run's hold."""
    return [("PATCH", "pods")] * n if gated(backend) else []


def backend_flags(allowed):
    return ["--backend", "native", "--allowed-backends", allowed]


def node(name, cpu):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}}}


def one_cpu(d):
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    return d


class BackendEnv:
    """Helpers over one Env for Deployments of any backend."""

    def __init__(self, test, env):
        self.t, self.env = test, env

    def kubectl(self, *args, **kw):
        return self.env.srv.Kubectl(*args, **kw)

    def apply(self, obj):
        self.kubectl("apply", "-f", "-", input=json.dumps(obj))

    def get_json(self, *args):
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def groups(self, backend, name):
        gv = BACKENDS[backend]["gv"]
        return {p["metadata"]["name"]: p for p in self.env.pod_groups(gv)
                if p["metadata"]["name"].startswith(name + "-")}

    def live(self, name):
        return [p for p in self.env.pods(name) if "deletionTimestamp" not in p["metadata"]]

    def running(self, name, n):
        pods = self.live(name)
        return len(pods) == n and all(p["status"].get("phase") == "Running" and not pod_gated(p)
                                      for p in pods)

    def running_uids(self, name):
        return {p["metadata"]["uid"] for p in self.live(name)
                if p["status"].get("phase") == "Running" and p["spec"].get("nodeName")}

    def converge(self, backend, name, replicas, min_count):
        """Waits for `replicas` running pods and the active ReplicaSet's group object with
        `min_count`; returns (ReplicaSet, group object)."""
        wait_for(lambda: self.running(name, replicas), TIMEOUT, 0.2, f"{name}: {replicas} running pods")
        active = [rs for rs in self.env.replica_sets(name) if rs["spec"].get("replicas", 1) > 0]
        self.t.assertEqual(len(active), 1)
        rs = active[0]
        pg_name = pod_group_of(rs)
        wait_for(lambda: group_min_count(self.groups(backend, name).get(pg_name, {"spec": {}}), backend)
                 == min_count, TIMEOUT, 0.2, f"{name}: group {pg_name} with minimum {min_count}")
        return rs, self.groups(backend, name)[pg_name]

    def writes(self, name, since):
        """The reconciler's writes about `name`'s objects: (method, resource, name, body)."""
        return [w for w in self.env.reconciler_writes(since) if (w[2] or "").startswith(name + "-")]


class BackendLifecycleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = Env(apiserver_args=("--bookmark-interval", "0.5", "--gang-scheduler=rules",
                                      "--kai-staleness-grace", KAI_GRACE),
                      webhook_args=backend_flags(ALL_BACKENDS)).__enter__()
        try:
            cls.env.apply(node("n1", ROOM))
            cls.rec = cls.env.start_reconciler("--leader-elect=false", "--workers", "2",
                                              "--resync-period", f"{RESYNC_SECONDS}s",
                                              *backend_flags(ALL_BACKENDS))
        except BaseException:
            cls.env.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.env.stop()

    def setUp(self):
        self.b = BackendEnv(self, self.env)

    def Lifecycle(self, backend):
        b, native = self.b, backend == "native"
        name = f"lc-{backend}"
        groups = "podgroups" if native else "podgroups." + BACKENDS[backend]["gv"].split("/")[0]
        # native is the cluster's --backend: no annotation needed.
        annotations = {} if native else {"wasd.io/backend": backend}

        # The one Node is shared by the four tests: a failed one leaves no pods behind.
        self.addCleanup(lambda: (b.kubectl("delete", "deployment", name, "--ignore-not-found",
                                           "--wait=false"),
                                 wait_for(lambda: not self.env.pods(name), 60, 0.3, "pods gone")))

        # ---- create: group object first, then one gate lift per pod
        seq = self.env.srv.LastSeq()
        # A KAI gang says disruptionMode all (an omitted mode means single, denied on KAI).
        extra = {"disruptionMode": {"all": {}}} if backend == "kai" else None
        b.apply(one_cpu(deployment(name, 3, annotations=annotations, extra_config=extra)))
        rs, pg = b.converge(backend, name, 3, 3)
        pg_name = pod_group_of(rs)
        d = b.get_json("deployment", name)
        # The webhook stamps the backend into the template (native: left out, absent
        # means native, so the pod-template hash of native Deployments is unchanged).
        self.assertEqual(d["spec"]["template"]["metadata"]["labels"].get(BACKEND_LABEL),
                         None if native else backend)
        self.assertEqual(pg["apiVersion"], BACKENDS[backend]["gv"])
        owners = pg["metadata"]["ownerReferences"]
        self.assertEqual(owners[0], {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                     "name": rs["metadata"]["name"], "uid": rs["metadata"]["uid"],
                                     "controller": True, "blockOwnerDeletion": True})
        if not native:
            self.assertEqual(len(owners), 1, "no Workload for a non-native backend")
            self.assertEqual(pg["spec"]["minMember"], 3)
        for p in self.env.pods(name):
            self.assertEqual(linked_group(p, backend), pg_name)
            self.assertFalse(pod_gated(p))
            self.assertEqual(p["spec"]["schedulerName"], BACKENDS[backend]["scheduler"] or "default-scheduler")
            if backend == "kai":
                self.assertEqual(p["metadata"]["annotations"]["kai.scheduler/skip-podgrouper"], "true")
        writes = b.writes(name, seq)
        head = [(m, k, n) for m, k, n, _ in writes if k != "workloads"]
        self.assertEqual(head[0], ("POST", groups, pg_name), writes)
        self.assertEqual(sorted((m, k) for m, k, _ in head[1:]), lifts(backend, 3), writes)
        self.assertEqual([(m, k) for m, k, _, _ in writes if k == "workloads"],
                         [("POST", "workloads")] if native else [])

        # ---- scale up with kubectl to 5 where only 4 fit: the new pods' gates are lifted
        # (after the minimum, on every backend but KAI); no running member is evicted.
        ran = b.running_uids(name)
        self.assertEqual(len(ran), 3)
        seq = self.env.srv.LastSeq()
        b.kubectl("scale", f"deployment/{name}", "--replicas=5")
        wait_for(lambda: len(b.live(name)) == 5 and not any(pod_gated(p) for p in b.live(name)),
                 TIMEOUT, 0.2, f"{name}: 5 pods, none gated")
        pointer = "/spec/schedulingPolicy/gang/minCount" if native else "/spec/minMember"
        if backend == "kai":
            # KAI evicts a gang below minMember after its grace period: minMember follows
            # the members that became active (the 4th fits), never the 5th that does not.
            wait_for(lambda: len(b.running_uids(name)) == ROOM, TIMEOUT, 0.2, f"{name}: 4 running")
            wait_for(lambda: group_min_count(b.groups(backend, name)[pg_name], backend) == ROOM,
                     TIMEOUT, 0.2, f"{name}: minMember 4")
            expected = lifts(backend, 2) + [("PATCH", groups)]
            minimum = ROOM
        else:
            wait_for(lambda: group_min_count(b.groups(backend, name)[pg_name], backend) == 5,
                     TIMEOUT, 0.2, f"{name}: minimum 5")
            expected = [("PATCH", groups)] + lifts(backend, 2)
            minimum = 5
        writes = b.writes(name, seq)
        if backend == "kai":  # each gate lifted when its pod comes; the minimum after a bind
            self.assertEqual(sorted((m, k) for m, k, _, _ in writes), sorted(expected), writes)
            self.assertEqual(writes[0][1], "pods" if gated(backend) else groups, writes)
        else:
            self.assertEqual([(m, k) for m, k, _, _ in writes if k != "workloads"], expected, writes)
        patch = [body for _, k, _, body in writes if k == groups][0]
        self.assertEqual(patch, [{"op": "test", "path": "/metadata/uid", "value": pg["metadata"]["uid"]},
                                 {"op": "replace", "path": pointer, "value": minimum}])
        self.assertTrue(ran <= b.running_uids(name), "the members that ran are still running")
        self.assertLessEqual(len(b.running_uids(name)), ROOM)
        self.assertEqual([e["path"] for e in self.env.srv.Audit(since=seq, methods=("DELETE",))
                          if "/pods/" in e["path"]], [], "no pod deleted or evicted by a scale-up")

        # ---- scale down: the pending members go first; only the minimum is written, and
        # nothing is left Pending
        seq = self.env.srv.LastSeq()
        b.kubectl("scale", f"deployment/{name}", "--replicas=2")
        b.converge(backend, name, 2, 2)
        self.assertEqual([(m, k) for m, k, _, _ in b.writes(name, seq) if k != "workloads"],
                         [("PATCH", groups)])

        # ---- steady state: no writes across a resync
        time.sleep(1.0)  # trailing watch events
        seq = self.env.srv.LastSeq()
        reconciles = self.rec.metric("wasd_reconciler_reconciles_total")
        time.sleep(2 * RESYNC_SECONDS + 1)
        self.assertGreater(self.rec.metric("wasd_reconciler_reconciles_total"), reconciles)
        self.assertEqual(b.writes(name, seq), [])

        # ---- Recreate rollout: a new group for the new ReplicaSet, the old one deleted
        old, old_pg = rs["metadata"]["name"], pg_name
        seq = self.env.srv.LastSeq()
        b.kubectl("set", "image", f"deployment/{name}", "c=registry.example/app:2")
        wait_for(lambda: any(r["metadata"]["name"] != old and r["spec"].get("replicas", 0) > 0
                             for r in self.env.replica_sets(name)), TIMEOUT, 0.2, "new ReplicaSet")
        rs, pg = b.converge(backend, name, 2, 2)
        new, pg_name = rs["metadata"]["name"], pod_group_of(rs)
        self.assertNotEqual(new, old)
        wait_for(lambda: old_pg not in b.groups(backend, name), TIMEOUT, 0.2, "old group deleted")
        writes = [(m, k, n) for m, k, n, _ in b.writes(name, seq)]
        self.assertEqual(sorted(w for w in writes if w[1] == groups),
                         [("DELETE", groups, old_pg), ("POST", groups, pg_name)], writes)
        lifted = [i for i, w in enumerate(writes) if w[1] == "pods" and w[2].startswith(new + "-")]
        self.assertEqual(len(lifted), len(lifts(backend, 2)), writes)
        if lifted:
            self.assertLess(writes.index(("POST", groups, pg_name)), min(lifted), writes)

        # ---- scale to zero: the group is deleted
        seq = self.env.srv.LastSeq()
        b.kubectl("scale", f"deployment/{name}", "--replicas=0")
        wait_for(lambda: not b.groups(backend, name), TIMEOUT, 0.2, "group deleted at zero")
        self.assertEqual([(m, k, n) for m, k, n, _ in b.writes(name, seq)], [("DELETE", groups, pg_name)])

        # ---- back to two, then delete: the garbage collector removes everything
        b.kubectl("scale", f"deployment/{name}", "--replicas=2")
        b.converge(backend, name, 2, 2)
        seq = self.env.srv.LastSeq()
        b.kubectl("delete", "deployment", name, "--wait=false")
        wait_for(lambda: not b.groups(backend, name) and not self.env.pods(name)
                 and not self.env.replica_sets(name), 60, 0.3, "group, ReplicaSets and pods collected")
        self.assertEqual(b.writes(name, seq), [], "the garbage collector cleans up, not wasd")

    def test_native(self):
        self.Lifecycle("native")

    def test_volcano(self):
        self.Lifecycle("volcano")

    def test_kai(self):
        self.Lifecycle("kai")

    def test_coscheduling(self):
        self.Lifecycle("coscheduling")


class BackendNotServedTest(unittest.TestCase):
    """KAI allowed but its CRD not installed: the kai Deployment's pods stay gated with one
    Warning Event naming the backend and what to install; native Deployments are not held
    up; once the API is served the kai Deployment converges (never a fall back to
    pod-by-pod scheduling)."""

    def test_pods_stay_gated_until_the_api_is_served(self):
        allowed = "native,kai"
        with Env(webhook_args=backend_flags(allowed)) as env:
            b = BackendEnv(self, env)
            env.srv.SetDisabledGroups(["scheduling.run.ai"])
            env.start_reconciler("--leader-elect=false", "--api-check-interval", "1s",
                                 *backend_flags(allowed))
            seq = env.srv.LastSeq()
            b.apply(deployment("held", 2, annotations={"wasd.io/backend": "kai"},
                               extra_config={"disruptionMode": {"all": {}}}))
            b.apply(deployment("free", 2))
            b.converge("native", "free", 2, 2)

            def not_served_events():
                return [e for e in env.events("APINotServed") if e["involvedObject"]["name"] == "held"]
            wait_for(lambda: not_served_events(), TIMEOUT, 0.2, "APINotServed Event")
            wait_for(lambda: len(env.pods("held")) == 2, TIMEOUT, 0.2, "held pods created")
            # The Warning says how the pods wait, from their own state: gated, or held by
            # kai-scheduler (the scheduler hold); posted again only when that changes, not
            # per pod (the repeat filter reads counts as one).
            word = "stay gated by wasd" if gated("kai") else "are held by kai-scheduler"
            wait_for(lambda: any(word in e["message"] for e in not_served_events()), TIMEOUT, 0.2,
                     "APINotServed saying how the pods wait")
            ev = not_served_events()
            self.assertLessEqual(len(ev), 2, ev)  # before its pods existed, and after
            self.assertEqual({e["type"] for e in ev}, {"Warning"})
            self.assertIn("scheduling.run.ai/v2alpha2 podgroups (backend kai) is not served", ev[-1]["message"])
            self.assertIn("install NVIDIA KAI-Scheduler", ev[-1]["message"])
            self.assertNotIn("gated", "" if gated("kai") else " ".join(e["message"] for e in ev))
            for p in env.pods("held"):
                self.assertEqual(pod_gated(p), gated("kai"))
                self.assertFalse(p["spec"].get("nodeName"), "no kai pod placed without its group")
            self.assertEqual(b.writes("held", seq), [], "nothing written for the held Deployment")

            env.srv.SetDisabledGroups([])
            b.converge("kai", "held", 2, 2)
            self.assertEqual(len(not_served_events()), len(ev), "no Warning Event per check")


if __name__ == "__main__":
    unittest.main(verbosity=2)
