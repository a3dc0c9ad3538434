"""End-to-end: `wasd reconciler` with the real `wasd webhook` against the test API server
(Deployment/ReplicaSet/pod controllers, GC, PodGroup protection, a gang stand-in
scheduler). Checks the KEP-6276 lifecycle through the audit log of the reconciler's
own writes: creation ordering, scaling, scale to zero and back, Recreate rollout,
single-pod replacement, garbage collection, and no writes in a steady state across
a resync.
"""
import time
import unittest

# Runs the binary's default hold (native pods held by the stand-in kube-scheduler,
# --gang-scheduler, until their PodGroup exists: no gate to lift); ctest runs it
# again with the gate everywhere (e2e.test_reconciler_lifecycle.gate), where every
# new pod costs the reconciler one gate-lift PATCH after its PodGroup exists.
from lib.cluster import GATE_EVERYWHERE, RECONCILER_USER, DefaultPodHold, Env
from lib.manifests import NS, deployment, min_count_of, pod_gated, pod_group_of
from lib.wait import wait_for

RESYNC_SECONDS = 3
GATED = DefaultPodHold() == GATE_EVERYWHERE


def pod_lifts(n):
    """The reconciler's writes to `n` new pods: one gate lift each under the gate, none
    under the scheduler hold."""
    return [("PATCH", "pods")] * n if GATED else []


class ReconcilerLifecycleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = Env(apiserver_args=("--bookmark-interval", "0.5", "--gang-scheduler")).__enter__()
        try:
            cls.rec = cls.env.start_reconciler("--leader-elect=false", "--workers", "2",
                                              "--resync-period", f"{RESYNC_SECONDS}s")
        except BaseException:
            cls.env.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.env.stop()

    # ----------------------------------------------------------- helpers

    def Deploy(self, name, replicas, **kw):
        return self.env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment(name, replicas, **kw))

    def Workload(self, name):
        ws = [w for w in self.env.workloads()
              if any(r["name"] == name for r in w["metadata"].get("ownerReferences", []))]
        self.assertLessEqual(len(ws), 1, f"more than one Workload for {name}")
        return ws[0] if ws else None

    def PodGroupsOf(self, name):
        return {p["metadata"]["name"]: p for p in self.env.pod_groups()
                if p["metadata"]["name"].startswith(name + "-")}

    def Running(self, name, n):
        pods = [p for p in self.env.pods(name) if "deletionTimestamp" not in p["metadata"]]
        running = [p for p in pods if p["status"].get("phase") == "Running" and not pod_gated(p)]
        return len(pods) == n and len(running) == n

    def WaitConverged(self, name, replicas, min_count, timeout=40):
        wait_for(lambda: self.Running(name, replicas), timeout, 0.2, f"{name}: {replicas} running pods")
        wait_for(lambda: (self.Workload(name) or {}).get("spec") and
                min_count_of(self.Workload(name)) == min_count, timeout, 0.2, f"{name}: Workload minCount {min_count}")
        active = [rs for rs in self.env.replica_sets(name) if rs["spec"].get("replicas", 1) > 0]
        if replicas > 0:
            self.assertEqual(len(active), 1)
            rs = active[0]
            wait_for(lambda: min_count_of(self.PodGroupsOf(name).get(pod_group_of(rs), {"spec": {}})) == min_count,
                    timeout, 0.2, f"{name}: PodGroup minCount {min_count}")
            return rs
        return None

    def Writes(self, name, since):
        return [(m, k, n) for m, k, n, _ in self.env.reconciler_writes(since) if n and n.startswith(name + "-")]

    # ------------------------------------------------------------- tests

    def test_creation_ordering_and_objects(self):
        seq = self.env.srv.LastSeq()
        d = self.Deploy("order", 3)
        rs = self.WaitConverged("order", 3, 3)
        rs_name = rs["metadata"]["name"]
        pg_name = pod_group_of(rs)
        self.assertNotEqual(pg_name, rs_name)
        w = self.Workload("order")
        pg = self.PodGroupsOf("order")[pg_name]

        writes = self.Writes("order", seq)
        self.assertEqual(writes[0], ("POST", "workloads", w["metadata"]["name"]))
        self.assertEqual(writes[1], ("POST", "podgroups", pg_name))
        self.assertEqual([(m, k) for m, k, _ in writes[2:]], pod_lifts(3), writes)

        # Ownership and links (docs/api.md §c.3).
        self.assertEqual(w["metadata"]["ownerReferences"],
                         [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "order",
                           "uid": d["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}])
        self.assertEqual(w["spec"]["controllerRef"], {"apiGroup": "apps", "kind": "Deployment", "name": "order"})
        self.assertEqual(w["spec"]["podGroupTemplates"][0]["name"], "pgt-0")
        owners = pg["metadata"]["ownerReferences"]
        self.assertEqual(owners[0]["uid"], rs["metadata"]["uid"])
        self.assertTrue(owners[0]["controller"])
        self.assertEqual(owners[1]["kind"], "Workload")
        self.assertEqual(owners[1]["uid"], w["metadata"]["uid"])
        self.assertNotIn("controller", owners[1])
        self.assertEqual(pg["spec"]["workloadRef"], {"workloadName": w["metadata"]["name"], "templateName": "pgt-0"})

        # Pods: named PodGroup, gate gone, ReplicaSet the only owner (DESIGN Q7).
        for p in self.env.pods("order"):
            self.assertEqual(p["spec"]["schedulingGroup"]["podGroupName"], pg_name)
            self.assertFalse(pod_gated(p))
            self.assertEqual([o["kind"] for o in p["metadata"]["ownerReferences"]], ["ReplicaSet"])

        # The PodGroup existed before any gate was lifted, the Workload before the PodGroup,
        # and each gate lift is one JSON patch touching only the gate (none without it).
        audit = self.env.srv.Audit(since=seq, user=RECONCILER_USER, methods=("POST", "PATCH"))
        seqs = {}
        for e in audit:
            seqs.setdefault((e["method"], e["path"].split("/")[-2 if e["method"] == "PATCH" else -1]), e["seq"])
        lifts = [e for e in audit if e["method"] == "PATCH" and "/pods/" in e["path"]]
        pg_post = [e for e in audit if e["method"] == "POST" and e["path"].endswith("/podgroups")][0]
        wl_post = [e for e in audit if e["method"] == "POST" and e["path"].endswith("/workloads")][0]
        self.assertLess(wl_post["seq"], pg_post["seq"])
        self.assertTrue(all(pg_post["seq"] < e["seq"] for e in lifts))
        for e in lifts:
            self.assertEqual(e["contentType"], "application/json-patch+json")
            self.assertEqual(e["body"], [{"op": "test", "path": "/spec/schedulingGates/0/name",
                                          "value": "wasd.io/pod-group"},
                                         {"op": "remove", "path": "/spec/schedulingGates/0"}])
        reasons = {e["reason"] for e in self.env.events() if e["involvedObject"]["name"] == "order"}
        self.assertTrue({"WorkloadCreated", "PodGroupCreated"} <= reasons, reasons)
        ev = [e for e in self.env.events("WorkloadCreated") if e["involvedObject"]["name"] == "order"][0]
        self.assertEqual(ev["source"]["component"], "wasd-reconciler")
        self.assertEqual(ev["reportingComponent"], "wasd-reconciler")
        self.assertEqual(ev["involvedObject"]["uid"], d["metadata"]["uid"])

    def test_scale_up_then_down(self):
        self.Deploy("scale", 2)
        rs = self.WaitConverged("scale", 2, 2)
        pg_uid = self.PodGroupsOf("scale")[pod_group_of(rs)]["metadata"]["uid"]
        seq = self.env.srv.LastSeq()
        self.env.scale("scale", 4)
        self.WaitConverged("scale", 4, 4)
        writes = self.Writes("scale", seq)
        # Workload minCount first, then the PodGroup's, then the two new pods' gates.
        self.assertEqual([(m, k) for m, k, _ in writes],
                         [("PATCH", "workloads"), ("PATCH", "podgroups")] + pod_lifts(2), writes)
        self.assertEqual(self.PodGroupsOf("scale")[pod_group_of(rs)]["metadata"]["uid"], pg_uid)

        seq = self.env.srv.LastSeq()
        self.env.scale("scale", 1)
        self.WaitConverged("scale", 1, 1)
        self.assertEqual([(m, k) for m, k, _ in self.Writes("scale", seq)],
                         [("PATCH", "workloads"), ("PATCH", "podgroups")])

    def test_scale_to_zero_and_back(self):
        self.Deploy("zero", 3)
        rs = self.WaitConverged("zero", 3, 3)
        pg_name = pod_group_of(rs)
        seq = self.env.srv.LastSeq()
        self.env.scale("zero", 0)
        wait_for(lambda: pg_name not in self.PodGroupsOf("zero"), 40, 0.2, "PodGroup gone at zero")
        self.assertEqual(min_count_of(self.Workload("zero")), 3, "the Workload keeps its minCount at zero")
        self.assertEqual([(m, k, n) for m, k, n in self.Writes("zero", seq)], [("DELETE", "podgroups", pg_name)])

        seq = self.env.srv.LastSeq()
        self.env.scale("zero", 2)
        self.WaitConverged("zero", 2, 2)
        writes = self.Writes("zero", seq)
        self.assertEqual([(m, k) for m, k, _ in writes],
                         [("PATCH", "workloads"), ("POST", "podgroups")] + pod_lifts(2))

    def test_explicit_min_count_kept_at_zero(self):
        self.Deploy("explicit", 3, min_count=2)
        self.WaitConverged("explicit", 3, 2)
        seq = self.env.srv.LastSeq()
        self.env.scale("explicit", 0)
        wait_for(lambda: not self.PodGroupsOf("explicit"), 40, 0.2, "PodGroup gone")
        self.env.scale("explicit", 4)
        self.WaitConverged("explicit", 4, 2)
        self.assertNotIn("workloads", [k for _, k, _ in self.Writes("explicit", seq)])

    def test_recreate_rollout_releases_the_old_podgroup(self):
        self.Deploy("roll", 2)
        old_rs = self.WaitConverged("roll", 2, 2)
        old, old_pg = old_rs["metadata"]["name"], pod_group_of(old_rs)
        seq = self.env.srv.LastSeq()
        self.env.patch(f"/apis/apps/v1/namespaces/{NS}/deployments/roll",
                       {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "registry.example/app:2"}]}}}},
                       content_type="application/strategic-merge-patch+json")
        wait_for(lambda: any(rs["metadata"]["name"] != old and rs["spec"].get("replicas", 0) > 0
                            for rs in self.env.replica_sets("roll")), 40, 0.2, "new ReplicaSet")
        new_rs = self.WaitConverged("roll", 2, 2)
        new, new_pg = new_rs["metadata"]["name"], pod_group_of(new_rs)
        self.assertNotEqual(new, old)
        wait_for(lambda: old_pg not in self.PodGroupsOf("roll"), 40, 0.2, "old PodGroup released")
        writes = self.Writes("roll", seq)
        # Exactly one DELETE of the old PodGroup and one POST of the new one.
        # Their relative order is not fixed: the old PodGroup goes only once
        # the reconciler's pod cache has seen the old pods go, and that watch
        # stream is not ordered against the ReplicaSet stream that announces
        # the new revision.
        self.assertEqual(sorted(w for w in writes if w[1] == "podgroups"),
                         [("DELETE", "podgroups", old_pg), ("POST", "podgroups", new_pg)], writes)
        # The new pods are released only after their PodGroup exists.
        new_pod_lifts = [i for i, w in enumerate(writes) if w[1] == "pods" and w[2].startswith(new + "-")]
        self.assertEqual(len(new_pod_lifts), len(pod_lifts(2)), writes)
        if new_pod_lifts:
            self.assertLess(writes.index(("POST", "podgroups", new_pg)), min(new_pod_lifts), writes)

    def test_single_pod_replacement_keeps_the_podgroup(self):
        self.Deploy("single", 3)
        rs = self.WaitConverged("single", 3, 3)
        pg = self.PodGroupsOf("single")[pod_group_of(rs)]
        victim = self.env.pods("single")[0]["metadata"]["name"]
        seq = self.env.srv.LastSeq()
        self.assertEqual(self.env.delete(f"/api/v1/namespaces/{NS}/pods/{victim}"), 200)
        wait_for(lambda: victim not in [p["metadata"]["name"] for p in self.env.pods("single")] and
                self.Running("single", 3), 40, 0.2, "replacement running")
        self.assertEqual(self.PodGroupsOf("single")[pod_group_of(rs)]["metadata"]["uid"], pg["metadata"]["uid"])
        self.assertEqual([(m, k) for m, k, _ in self.Writes("single", seq)], pod_lifts(1))

    def test_deployment_deletion_garbage_collects_everything(self):
        self.Deploy("gone", 2)
        self.WaitConverged("gone", 2, 2)
        seq = self.env.srv.LastSeq()
        self.assertEqual(self.env.delete(f"/apis/apps/v1/namespaces/{NS}/deployments/gone"), 200)
        wait_for(lambda: self.Workload("gone") is None and not self.PodGroupsOf("gone") and
                not self.env.pods("gone"), 60, 0.3, "Workload, PodGroups and pods collected")
        self.assertEqual(self.Writes("gone", seq), [], "the garbage collector cleans up, not wasd")

    def test_steady_state_makes_no_writes_across_a_resync(self):
        self.Deploy("steady", 2)
        self.WaitConverged("steady", 2, 2)
        time.sleep(1.0)  # let trailing watch events settle
        seq = self.env.srv.LastSeq()
        reconciles = self.rec.metric("wasd_reconciler_reconciles_total")
        time.sleep(2 * RESYNC_SECONDS + 1)
        self.assertGreater(self.rec.metric("wasd_reconciler_reconciles_total"), reconciles,
                           "resync reconciled again")
        self.assertEqual(self.env.all_reconciler_writes(seq), [])

    def test_probes_and_metrics(self):
        self.assertTrue(self.rec.ready())
        text = self.rec.metrics_text()
        for name in ("wasd_reconciler_reconciles_total", "wasd_reconciler_errors_total",
                     "wasd_reconciler_queue_depth", "wasd_reconciler_queue_latency_seconds_bucket",
                     "wasd_reconciler_api_requests_total", "wasd_reconciler_leader 1"):
            self.assertIn(name, text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
