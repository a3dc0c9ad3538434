#!/usr/bin/env python3
"""The gang doctor in the reconciler (issue 17): the `GangScheduled` condition on the
Deployment, the Event on each reason change, the wasd_gang_* metrics, zero writes in a
steady state, and a condition that survives the Deployment controller's own status
writes during a rollout. The test API server runs its gang scheduler
(`--gang-scheduler`) over the Nodes of tests/e2e/test_explain.py (zone-a: a1 4 GPUs,
a2 2 GPUs; zone-b: b1 4 GPUs); each condition is checked against `wasd explain`'s
diagnosis of the same Deployment and against the literal text.

Scenarios, in order (they share the nodes):
  Unschedulable     8 members of 1 GPU in one zone: zone-a has room for 6 of 8
  Scheduled         2 members of 1 GPU; then zero writes across resyncs; then a rollout
  ScaleUpPending    the same scaled to 8 after its first placement
  GatedByOther      a Kueue-style gate on the members
  PodGroupTerminating  the placed gang's PodGroup deleted while its pods run (one Event:
                    the planner's, not a second one from the doctor)
  --gang-status=false  no condition, no Nodes watched
The other reasons: tests/e2e/test_gang_reasons.py.
"""
import json
import subprocess
import time
import unittest

from e2e.test_explain import GPU, PODGROUPS, ZONE, gang, node
from e2e.test_gang_reasons import DoctorChecks
# Runs the binary's default hold: every message it checks is worded from the pods'
# own state, so it reads the same under either hold.
from lib.cluster import RECONCILER_USER, Env
from lib.manifests import NS, pod_group_name
from lib.paths import WASD
from lib.wait import wait_for

RESYNC_SECONDS = 2
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"


class GangStatusTest(DoctorChecks, unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.env = Env(apiserver_args=("--bookmark-interval", "0.5", "--gang-scheduler"))
        cls.env.__enter__()
        try:
            for n in (node("a1", "zone-a", 4), node("a2", "zone-a", 2), node("b1", "zone-b", 4)):
                cls.env.apply(n)
            cls.rec = cls.env.start_reconciler("--leader-elect=false",
                                               "--resync-period", f"{RESYNC_SECONDS}s")
        except BaseException:
            cls.env.__exit__(None, None, None)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.env.__exit__(None, None, None)

    # ------------------------------------------------------------------ helpers

    def deployment(self, name):
        code, _, body = self.env.srv.Request("GET", f"{DEPLOYMENTS}/{name}")
        self.assertEqual(code, 200, body)
        return body

    def condition(self, name):
        for c in (self.deployment(name).get("status") or {}).get("conditions") or []:
            if c["type"] == "GangScheduled":
                return c
        return None

    def wait_condition(self, name, reason, message=None, timeout=30):
        def ok():
            c = self.condition(name)
            if c and c["reason"] == reason and (message is None or c["message"] == message):
                return c
            return None
        return wait_for(ok, timeout=timeout, what=f"{name}: GangScheduled {reason} {message or ''}")

    def explain(self, name):
        p = subprocess.run([WASD, "explain", f"deployment/{name}", "-o", "json",
                            "--kubeconfig", self.env.srv.kubeconfig],
                           capture_output=True, text=True, timeout=60)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        return json.loads(p.stdout)

    def gang_events(self, name):
        """The reconciler's Events on Deployment `name` with a gang doctor reason, oldest first."""
        reasons = {"Scheduled", "WaitingForQuorum", "GatedByOther", "Unschedulable", "ScaleUpPending",
                   "PodGroupTerminating", "PodGroupMissing", "QueueBlocked", "ForeignObject"}
        return [e for e in self.env.events()
                if e["involvedObject"]["kind"] == "Deployment" and e["involvedObject"]["name"] == name
                and e["source"].get("component") == "wasd-reconciler" and e["reason"] in reasons]

    def status_patches(self, name, since):
        return [e for e in self.env.srv.Audit(since=since, user=RECONCILER_USER, methods=("PATCH", "PUT"))
                if e["path"].startswith(f"{DEPLOYMENTS}/{name}/status")]

    def names(self, app):
        """The current ReplicaSet (highest revision) and its PodGroup."""
        rs = max(self.env.replica_sets(app),
                 key=lambda r: int(r["metadata"]["annotations"].get("deployment.kubernetes.io/revision", "0")))
        return rs["metadata"]["name"], pod_group_name(rs["metadata"]["name"], rs["metadata"]["uid"])

    def delete(self, app):
        self.env.srv.Kubectl("delete", "deployment", app, "-n", NS)
        wait_for(lambda: not self.env.pods(app), timeout=30, what=f"{app} pods gone")

    # ------------------------------------------------------------------ scenarios

    def test_1_unschedulable_with_fit_preview(self):
        self.env.apply(gang("big", 8, 8))
        _, pg = wait_for(lambda: self.env.replica_sets("big") and self.names("big"), what="big's ReplicaSet")
        sched = (f'0/4 nodes are available: gang "{pg}" needs 8 pods, room for 6; '
                 f"2 Insufficient {GPU}, 2 node(s) didn't match pod topology.")
        want = (f"8/8 created, 0 gated by wasd, 0 bound, minCount 8; scheduler: {sched}; "
                f"largest {ZONE} (zone-a) has room for 6 of 8 members; short 2 {GPU}")
        c = self.wait_condition("big", "Unschedulable", want)
        self.assertEqual((c["status"], c["reason"]), ("False", "Unschedulable"))
        self.assertEqual(c["lastTransitionTime"] <= c["lastUpdateTime"], True)
        # The same words as `wasd explain`.
        self.assertEqual(self.explain("big")["message"], want)
        # One Event: the condition as the doctor first wrote it for the reason (the scheduler's
        # words follow the members as they arrive), and the next step.
        step = ("free or add capacity where the fit preview says it is short, lower minCount, or relax "
                "the pod template's nodeSelector/tolerations")
        self.assert_doctor_event("big", "Warning", "Unschedulable", step)
        rs, _ = self.names("big")
        c = self.counts(8, 8, created=8)
        self.assert_explain("big", self.condition("big"), step, [
            "Backend:     native", f"ReplicaSet:  {rs}",
            f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: PodGroupInitiallyScheduled=False "
            f"(Unschedulable): {sched}", self.members(c),
            f"Fit:         largest {ZONE} (zone-a) has room for 6 of 8 members; short 2 {GPU}",
            f"             per member: cpu 100m, {GPU} 1, pods 1",
            "             zone-a: room for 6 on 2 nodes",
            "             zone-b: room for 4 on 1 node"], c)
        # The metrics: one series per state for this Deployment, the gang counted by reason.
        text = self.rec.metrics_text()
        self.assertIn(f'wasd_gang_members{{namespace="{NS}",deployment="big",state="created"}} 8', text)
        self.assertIn(f'wasd_gang_members{{namespace="{NS}",deployment="big",state="bound"}} 0', text)
        self.assertIn('wasd_gangs{reason="Unschedulable"} 1', text)
        self.delete("big")
        wait_for(lambda: 'deployment="big"' not in self.rec.metrics_text(), what="big's series gone")

    def test_2_scheduled_steady_rollout_then_scale_up_pending(self):
        self.env.apply(gang("small", 2, 2))
        c = self.wait_condition("small", "Scheduled")
        self.assertEqual((c["status"], c["message"]),
                         ("True", "2/2 created, 0 gated by wasd, 2 bound, minCount 2"))
        self.assertEqual(self.explain("small")["message"], c["message"])
        wait_for(lambda: [e for e in self.gang_events("small") if e["reason"] == "Scheduled"],
                 what="Scheduled Event")
        scheduled_events = len([e for e in self.gang_events("small") if e["reason"] == "Scheduled"])
        self.assert_doctor_event("small", "Normal", "Scheduled", None)
        rs, pg = self.names("small")
        counts = self.counts(2, 2, created=2, bound=2, running=2)
        self.assert_explain("small", c, "none", [
            "Backend:     native", f"ReplicaSet:  {rs}",
            f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: PodGroupInitiallyScheduled=True (Scheduled)",
            self.members(counts)], counts)
        # Every status write of the reconciler was a JSON patch of its own entry only (or, on a
        # Deployment with no status yet, a status of that one entry, guarded by the
        # resourceVersion the reconciler read).
        for e in self.status_patches("small", 0):
            self.assertEqual(e["method"], "PATCH")
            ops = e["body"]
            if any(op["path"] == "/status" for op in ops):
                self.assertEqual([(op["op"], op["path"]) for op in ops],
                                 [("test", "/metadata/resourceVersion"), ("add", "/status")])
                self.assertEqual([c["type"] for c in ops[1]["value"]["conditions"]], ["GangScheduled"])
                self.assertEqual(list(ops[1]["value"]), ["conditions"])
                continue
            self.assertTrue(all(op["path"].startswith("/status/conditions") or
                                op["path"] == "/metadata/resourceVersion" for op in ops), ops)

        # Steady state: nothing written across two resyncs (the condition compared, not rewritten).
        time.sleep(1.0)
        seq = self.env.srv.LastSeq()
        reconciles = self.rec.metric("wasd_reconciler_reconciles_total")
        time.sleep(2 * RESYNC_SECONDS + 1)
        self.assertGreater(self.rec.metric("wasd_reconciler_reconciles_total"), reconciles)
        self.assertEqual(self.env.all_reconciler_writes(seq), [])
        self.assertEqual(len([e for e in self.gang_events("small") if e["reason"] == "Scheduled"]),
                         scheduled_events, "no Event in a steady state")

        # A rollout: the Deployment controller rewrites the status many times; each of its
        # writes keeps GangScheduled (it only sets Available/Progressing/ReplicaFailure).
        seq = self.env.srv.LastSeq()
        self.env.patch(f"{DEPLOYMENTS}/small",
                       {"spec": {"template": {"metadata": {"annotations": {"rollout": "1"}}}}})
        def rolled_out():
            d = self.deployment("small")
            st = d.get("status") or {}
            return (d["metadata"]["annotations"].get("deployment.kubernetes.io/revision") == "2"
                    and st.get("updatedReplicas") == 2 and st.get("replicas") == 2
                    and st.get("availableReplicas") == 2)
        wait_for(rolled_out, timeout=60, what="rolled out")
        self.wait_condition("small", "Scheduled")
        controller_writes = [e for e in self.env.srv.Audit(since=seq, methods=("PUT",))
                             if e["path"] == f"{DEPLOYMENTS}/small/status" and e.get("user") != RECONCILER_USER]
        self.assertGreater(len(controller_writes), 0)
        with_gang = [e for e in controller_writes
                     if any(c["type"] == "GangScheduled" for c in e["body"]["status"].get("conditions", []))]
        self.assertEqual(len(with_gang), len(controller_writes))
        types = sorted(c["type"] for c in self.deployment("small")["status"]["conditions"])
        self.assertEqual(types, ["Available", "GangScheduled", "Progressing"])

        # Scale to 8 after the first placement: 4 more fit in zone-a, 2 do not.
        self.env.scale("small", 8)
        _, pg = self.names("small")
        want = ("8/8 created, 0 gated by wasd, 6 bound, minCount 2; the gang was placed, 2 newer "
                f'members are not; scheduler: 0/4 nodes are available: gang "{pg}" needs 2 pods, '
                f"room for 0; 2 Insufficient {GPU}, 2 node(s) didn't match pod topology.; "
                f"{ZONE} zone-a (where the gang runs) has room for 0 of 2 members; short 2 {GPU}")
        c = self.wait_condition("small", "ScaleUpPending", want)
        self.assertEqual(c["status"], "False")
        self.assertEqual(self.explain("small")["message"], want)
        step = "free or add capacity for the new members, or scale back to the placed size"
        self.assert_doctor_event("small", "Warning", "ScaleUpPending", step)
        rs, _ = self.names("small")
        counts = self.counts(8, 2, created=8, bound=6, running=6)
        self.assert_explain("small", c, step, [
            "Backend:     native", f"ReplicaSet:  {rs}",
            f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: PodGroupInitiallyScheduled=True (Scheduled)",
            self.members(counts),
            f"Fit:         {ZONE} zone-a (where the gang runs) has room for 0 of 2 members; short 2 {GPU}",
            f"             per member: cpu 100m, {GPU} 1, pods 1",
            "             zone-a: room for 0 on 2 nodes"], counts)
        self.delete("small")

    def test_3_gated_by_other_then_pod_group_terminating(self):
        self.env.apply(gang("kueued", 2, 2, gpus=0, gates=["kueue.x-k8s.io/admission"]))
        want = "2/2 created, 0 gated by wasd, 2 gated by others, 0 bound, minCount 2"
        c = self.wait_condition("kueued", "GatedByOther", want)
        self.assertEqual(c["status"], "False")
        def kueue_step(first):
            n = first.split(" gated by others")[0].rsplit(" ", 1)[1]
            return (f"another controller holds its scheduling gate on {n} members (Kueue's "
                    "kueue.x-k8s.io/admission: the workload waits for quota in its queue; kubectl get "
                    "workloads.kueue.x-k8s.io)")
        self.assert_doctor_event("kueued", "Warning", "GatedByOther", kueue_step)
        rs, pg = self.names("kueued")
        counts = self.counts(2, 2, created=2, others=2)
        self.assert_explain("kueued", c, kueue_step(want), [
            "Backend:     native", f"ReplicaSet:  {rs}",
            f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: no status yet", self.members(counts),
            f"Fit:         largest {ZONE} (zone-a) has room for 2 of 2 members",
            "             per member: cpu 100m, pods 1",
            "             zone-a: room for 220 on 2 nodes",
            "             zone-b: room for 110 on 1 node"], counts)
        for p in self.env.pods("kueued"):
            self.env.patch(f"/api/v1/namespaces/{NS}/pods/{p['metadata']['name']}",
                           {"spec": {"schedulingGates": []}})
        c = self.wait_condition("kueued", "Scheduled")
        self.assertEqual(c["status"], "True")
        # The transition time moved with the status (False -> True).
        rs, pg = self.names("kueued")
        self.assertEqual(self.env.delete(f"{PODGROUPS}/{pg}"), 200)
        c = self.wait_condition("kueued", "PodGroupTerminating")
        self.assertEqual(c["message"], f"PodGroup {pg} is being deleted; 2/2 created, 0 gated by wasd, "
                                       "2 bound, minCount 2")
        wait_for(lambda: [e for e in self.gang_events("kueued") if e["reason"] == "PodGroupTerminating"],
                 what="PodGroupTerminating Event")
        # One Event for the fact, the planner's (it says what wasd does about it); the doctor
        # posts none for a reason the reconciler already announces.
        events = [(e["type"], e["message"]) for e in self.gang_events("kueued") if e["reason"] == "PodGroupTerminating"]
        self.assertEqual(events, [("Warning", f"PodGroup {pg} is Terminating while pods that ran or are bound still "
                                              "name it (its podgroup-protection finalizer waits for them); it is "
                                              f"re-created for ReplicaSet {rs} as soon as it is gone. Meanwhile: "
                                              "no pod waits")])
        counts = self.counts(2, 2, created=2, bound=2, running=2)
        self.assert_explain("kueued", c, "wait for its old pods to finish (the deletion waits for them); the "
                            "reconciler then creates it again", [
                                "Backend:     native", f"ReplicaSet:  {rs}",
                                f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: "
                                "PodGroupInitiallyScheduled=True (Scheduled)", self.members(counts)], counts)
        self.delete("kueued")

    def test_4_gang_status_off(self):
        self.rec.stop()
        try:
            rec = self.env.start_reconciler("--leader-elect=false", "--gang-status=false", name="off")
            self.env.apply(gang("quiet", 2, 2, gpus=0))
            wait_for(lambda: len([p for p in self.env.pods("quiet") if p["spec"].get("nodeName")]) == 2,
                     what="quiet placed")
            time.sleep(1.0)
            self.assertIsNone(self.condition("quiet"))
            self.assertNotIn("wasd_gang_members", rec.metrics_text())
            self.assertEqual(self.gang_events("quiet"), [])
            rec.stop()
        finally:
            type(self).rec = self.env.start_reconciler("--leader-elect=false")
        self.wait_condition("quiet", "Scheduled")
        self.delete("quiet")


if __name__ == "__main__":
    unittest.main(verbosity=2)
