#!/usr/bin/env python3
"""The gang doctor's reasons that tests/e2e/test_gang_status.py does not stage (issue 17),
each produced the way it happens in a cluster, on the test API server with its gang
scheduler (`--gang-scheduler`), the real webhook and one reconciler, and each checked
three ways: the exact `GangScheduled` condition (status, reason, message), the exact
Event on the Deployment (type, reason, message; one per change), and the exact
`wasd explain` output (text, and -o json reason/message/counts).

Who speaks: the doctor posts an Event on each reason change — except for the facts the
reconciler already announces with a Warning of its own (ForeignObject,
PodGroupTerminating, InvalidSchedulingConfiguration: the planner's; APINotAvailable: the
controller's APINotServed). For those the test asserts exactly one Event, the
reconciler's, and none from the doctor.

The doctor's Event carries the condition's message as the doctor wrote it when the reason
changed (the counts may still move afterwards, e.g. 1/3 then 2/3 created, without another
Event), and its next step; the test reads those messages from the API server's audit log
of the reconciler's status patches: one Event per change to the reason, no more.

Scenarios, in order (they share the reconciler; the last one restarts it):
  WaitingForQuorum   a quota-like admission refuses the 3rd of 3 members (minCount 3)
  PodGroupMissing    a policy refuses the reconciler's PodGroup create (count quota)
  ForeignObject      then a PodGroup of that name made by someone else, the policy gone;
                     deleting it is enough: wasd releases it (PodGroupReleased) and places
                     the gang
  InvalidSchedulingConfiguration  a bad annotation stored with wasd's validating webhook gone
  APINotAvailable    a coscheduling Deployment while scheduling.x-k8s.io is not served
  QueueBlocked       a Volcano gang whose minResources its queue's capability cannot hold
  UnsupportedProviderCapability  a Volcano gang with a zone topology, admitted while
                     --volcano-topology-tiers maps the zone, after the tier is removed
"""
import json
import re
import subprocess
import tempfile
import unittest

from e2e.test_explain import GPU, PODGROUPS, ZONE, Quota, gang, node
# Runs the binary's default hold; ctest runs it again as .gate. Where the two differ
# (a native gang waiting for its PodGroup: gated by wasd, or held by the stand-in
# kube-scheduler through its link) the expected text follows GATED.
from lib.cluster import GATE_EVERYWHERE, RECONCILER_USER, DefaultPodHold, Env
from lib.manifests import NS, deployment, pod_group_name

GATED = DefaultPodHold() == GATE_EVERYWHERE


def held(n, group):
    """What the doctor and the Events add for `n` native members that wait for `group`:
    nothing under the gate (the counts say "gated by wasd"), who holds them otherwise."""
    return "" if GATED else f"; {n} pod(s) are held by default-scheduler until {group} exists"
from lib.paths import WASD
from lib.scripted_webhook import ScriptedWebhook
from lib.wait import wait_for

DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
VOLCANO_PODGROUPS = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{NS}/podgroups"
QUEUES = "/apis/scheduling.volcano.sh/v1beta1/queues"
COSCHEDULING = "scheduling.x-k8s.io"
TIERS = ("--volcano-topology-tiers", f"{ZONE}=1")
BACKEND_FLAGS = ("--backend", "native", "--allowed-backends", "native,volcano,coscheduling")
CARRIER = "metadata.annotations[wasd.io/scheduling]"
# The doctor's reasons and the reconciler's own Warning reasons for the same facts.
GANG_REASONS = {"InvalidSchedulingConfiguration", "APINotAvailable", "UnsupportedProviderCapability",
                "PodGroupMissing", "ForeignObject", "PodGroupTerminating", "WaitingForQuorum",
                "GatedByOther", "Unschedulable", "QueueBlocked", "ScaleUpPending", "Scheduled",
                "APINotServed"}


def webhook_config(name, hook, path, rules, selector=None):
    w = {"name": f"{name}.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
         "failurePolicy": "Fail", "rules": rules,
         "clientConfig": {"url": f"https://localhost:{hook.port}/{path}", "caBundle": hook.ca_bundle}}
    if selector:
        w["objectSelector"] = selector
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name}, "webhooks": [w]}


class PodGroupQuota:
    """A ResourceQuota of count/podgroups.scheduling.k8s.io=0 for the reconciler, as a
    webhook: its PodGroup creates are refused in kube's words; others' are not."""

    MESSAGE = ("exceeded quota: pg-quota, requested: count/podgroups.scheduling.k8s.io=1, "
               "used: count/podgroups.scheduling.k8s.io=0, limited: count/podgroups.scheduling.k8s.io=0")

    def __call__(self, path, request):
        if path != "/pg-quota" or (request.get("userInfo") or {}).get("username") != RECONCILER_USER:
            return {"allowed": True}
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": self.MESSAGE}}


class Hooks:
    """One scripted webhook process for every policy of the class, by path."""

    def __init__(self):
        self.quota = Quota(2)
        self.pg_quota = PodGroupQuota()

    def __call__(self, path, request):
        if path == "/quota":
            return self.quota(path, request)
        return self.pg_quota(path, request)


class DoctorChecks:
    """Assertions on the gang doctor's three outputs for a Deployment, for a TestCase with
    `self.env` (lib.cluster.Env); also used by tests/e2e/test_gang_status.py."""

    def gang_condition(self, name):
        code, _, body = self.env.srv.Request("GET", f"{DEPLOYMENTS}/{name}")
        self.assertEqual(code, 200, body)
        for c in (body.get("status") or {}).get("conditions") or []:
            if c["type"] == "GangScheduled":
                return c
        return None

    def wait_gang_condition(self, name, status, reason, message, timeout=30):
        """Waits for the exact condition; returns it."""
        def ok():
            c = self.gang_condition(name)
            return c if c and (c["status"], c["reason"], c["message"]) == (status, reason, message) else None
        last = []
        try:
            return wait_for(ok, timeout=timeout, what=f"{name}: GangScheduled {reason} {message}")
        except AssertionError:
            last.append(self.gang_condition(name))
            raise AssertionError(f"{name}: want {status} {reason} {message!r}, have {last[0]}")

    def written(self, name, reason=None):
        """The GangScheduled entries the reconciler wrote for `name` (with `reason`, when
        given), oldest first, as (reason, message), from the audit log of its status patches."""
        out = []
        for e in self.env.srv.Audit(since=0, user=RECONCILER_USER, methods=("PATCH",)):
            if e["path"] != f"{DEPLOYMENTS}/{name}/status" or e.get("status", 0) >= 400:
                continue
            for op in e.get("body") or []:
                v = op.get("value")
                entries = v if isinstance(v, list) else (v.get("conditions") if isinstance(v, dict) and "conditions" in v else [v])
                for c in entries or []:
                    if isinstance(c, dict) and c.get("type") == "GangScheduled" and reason in (None, c.get("reason")):
                        out.append((c["reason"], c["message"]))
        return out

    def changes_to(self, name, reason):
        """The messages the reconciler wrote each time the reason became `reason`."""
        out, before = [], None
        for r, message in self.written(name):
            if r == reason and before != reason:
                out.append(message)
            before = r
        return out

    def reconciler_events(self, name, reason=None):
        return [e for e in self.env.events()
                if e["involvedObject"]["kind"] == "Deployment" and e["involvedObject"]["name"] == name
                and e["source"].get("component") == "wasd-reconciler"
                and e["reason"] in GANG_REASONS and (reason is None or e["reason"] == reason)]

    def assert_doctor_event(self, name, etype, reason, next_step):
        """One Event of `reason` per change to it, the doctor's: the message it wrote when the
        reason became `reason` (the counts may move later without another Event) and
        `next_step` (a function of that message, or a string; None for Scheduled)."""
        def want():
            out = []
            for message in self.changes_to(name, reason):
                step = next_step(message) if callable(next_step) else next_step
                out.append((etype, message if step is None else f"{message}. {step}"))
            return sorted(out)
        wait_for(lambda: want() and len(self.reconciler_events(name, reason)) >= len(want()),
                 what=f"{name}: a {reason} Event per change")
        self.assertEqual(sorted((e["type"], e["message"]) for e in self.reconciler_events(name, reason)), want())

    def assert_reconciler_event(self, name, etype, reason, message, doctor_reason=None, then=None):
        """Exactly one Event of `reason`, the reconciler's own, and none from the doctor
        (its reason `doctor_reason` when it differs). `then`: the message is `message`
        followed by one of these endings (how the pods wait, counted when it was posted)."""
        wait_for(lambda: self.reconciler_events(name, reason), what=f"{name}: {reason} Event")
        got = [(e["type"], e["message"]) for e in self.reconciler_events(name, reason)]
        if then is None:
            self.assertEqual(got, [(etype, message)])
        else:
            # Posted again only when how the pods wait changes in kind (none
            # waited yet, then some are gated): counts alone never repost.
            allowed = [(etype, message + t) for t in then]
            self.assertTrue(got and all(g in allowed for g in got), got)
            kinds = [re.sub(r"\d+ pod\(s\)", "# pod(s)", m) for _, m in got]
            self.assertEqual(len(kinds), len(set(kinds)), got)
        if doctor_reason:
            self.assertEqual(self.reconciler_events(name, doctor_reason), [])

    def run_explain(self, name, *flags):
        p = subprocess.run([WASD, "explain", f"deployment/{name}", *flags,
                            "--kubeconfig", self.env.srv.kubeconfig],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.stderr, "")
        return p.returncode, p.stdout

    def assert_explain(self, name, cond, next_step, lines, counts, flags=()):
        """`wasd explain` says what the condition says: the text head (up to the timeline)
        exactly, -o json's reason, message, next step and counts."""
        code, out = self.run_explain(name, *flags)
        self.assertEqual(code, 0 if cond["status"] == "True" else 3, out)
        head = out.split("Timeline:\n")[0]
        want = (f"Deployment:  {NS}/{name}\n"
                f"Status:      GangScheduled={cond['status']}\n"
                f"Reason:      {cond['reason']}\n"
                f"Message:     {cond['message']}\n"
                f"Next step:   {next_step}\n") + "".join(l + "\n" for l in lines)
        self.assertEqual(head, want)
        code, out = self.run_explain(name, "-o", "json", *flags)
        d = json.loads(out)
        self.assertEqual((d["status"], d["reason"], d["message"], d["nextStep"]),
                         (cond["status"], cond["reason"], cond["message"], next_step))
        self.assertEqual(d["counts"], counts)
        return d

    @staticmethod
    def counts(replicas, min_count, created=0, gated=0, others=0, bound=0, running=0, failed=0,
               before=0):
        return {"replicas": replicas, "minCount": min_count, "created": created, "gatedByWasd": gated,
                "gatedByOthers": others, "bound": bound, "running": running, "failed": failed,
                "boundBeforeGroup": before}

    @staticmethod
    def members(c):
        return (f"Members:     replicas {c['replicas']}, minCount {c['minCount']}, created {c['created']}, "
                f"gated by wasd {c['gatedByWasd']}, gated by others {c['gatedByOthers']}, bound {c['bound']}, "
                f"running {c['running']}, failed {c['failed']}, "
                f"bound before their group {c['boundBeforeGroup']}")


class GangReasonsTest(DoctorChecks, unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-reasons-")
        cls.env = Env(apiserver_args=("--bookmark-interval", "0.5", "--gang-scheduler",
                                      "--disable-group", COSCHEDULING),
                      webhook_args=BACKEND_FLAGS + TIERS)
        cls.env.__enter__()
        cls.hook = None
        try:
            for n in (node("a1", "zone-a", 4), node("a2", "zone-a", 2), node("b1", "zone-b", 4)):
                cls.env.apply(n)
            cls.hook = ScriptedWebhook(cls.tmp, Hooks())
            cls.rec = cls.env.start_reconciler("--leader-elect=false", "--api-check-interval", "1s",
                                               *BACKEND_FLAGS, *TIERS)
        except BaseException:
            cls.env.__exit__(None, None, None)
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.hook is not None:
            cls.hook.stop()
        cls.env.__exit__(None, None, None)

    def names(self, app):
        rs = [r for r in self.env.replica_sets(app)]
        self.assertEqual(len(rs), 1)
        return rs[0]["metadata"]["name"], pod_group_name(rs[0]["metadata"]["name"], rs[0]["metadata"]["uid"])

    def delete(self, app):
        self.env.srv.Kubectl("delete", "deployment", app, "-n", NS)
        wait_for(lambda: not self.env.pods(app), timeout=30, what=f"{app} pods gone")

    # ------------------------------------------------------------------ scenarios

    def test_1_waiting_for_quorum(self):
        self.env.apply(webhook_config("quota", self.hook, "quota",
                                      [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                        "resources": ["pods"]}], {"matchLabels": {"app": "quota"}}))
        try:
            self.env.apply(gang("quota", 3, 3, gpus=0))
            cond = self.wait_gang_condition("quota", "False", "WaitingForQuorum",
                                       "2/3 created, 0 gated by wasd, 0 bound, minCount 3")
            rs, pg = self.names("quota")
            step = (f"the ReplicaSet has created fewer pods than minCount: kubectl describe replicaset {rs} "
                    "shows why (quota, admission, pod creation errors)")
            # The first WaitingForQuorum may predate the ReplicaSet (0/3, no ReplicaSet yet) or
            # count fewer members: the Event says what the condition said then.
            self.assert_doctor_event("quota", "Warning", "WaitingForQuorum", lambda first: (
                "check the Deployment's conditions and events (kubectl describe deployment)"
                if "no ReplicaSet yet" in first else step))
            c = self.counts(3, 3, created=2)
            self.assert_explain("quota", cond, step, [
                "Backend:     native", f"ReplicaSet:  {rs}",
                f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: no status yet", self.members(c),
                # The 3 members (the quorum) against the nodes: each node's pod limit bounds them.
                f"Fit:         largest {ZONE} (zone-a) has room for 3 of 3 members",
                "             per member: cpu 100m, pods 1",
                "             zone-a: room for 220 on 2 nodes",
                "             zone-b: room for 110 on 1 node"], c)
        finally:  # the quota goes only now: the ReplicaSet would create the 3rd member at once
            self.env.srv.Kubectl("delete", "validatingwebhookconfiguration", "quota")
        self.delete("quota")

    def test_2_pod_group_missing_then_foreign_object(self):
        self.env.apply(webhook_config("pg-quota", self.hook, "pg-quota",
                                      [{"apiGroups": ["scheduling.k8s.io"], "apiVersions": ["v1beta1"],
                                        "operations": ["CREATE"], "resources": ["podgroups"]}]))
        try:
            self.env.apply(gang("orphan", 2, 2, gpus=0))
            wait_for(lambda: self.env.replica_sets("orphan"), what="orphan's ReplicaSet")
            rs, pg = self.names("orphan")
            g = 2 if GATED else 0
            cond = self.wait_gang_condition("orphan", "False", "PodGroupMissing",
                                       f"PodGroup {pg} of ReplicaSet {rs} does not exist; "
                                       f"2/2 created, {g} gated by wasd, 0 bound, minCount 2" + held(2, f"PodGroup {pg}"))
            step = ("check that the wasd reconciler is running and leading (its log says why it did "
                    "not create the PodGroup)")
            self.assert_doctor_event("orphan", "Warning", "PodGroupMissing", lambda first: (
                step.replace("PodGroup)", "Workload)") if first.startswith("Workload ") else step))
            # The refusal itself is the executor's Event.
            failed = [e for e in self.env.events("FailedPodGroupCreate") if e["involvedObject"]["name"] == "orphan"]
            self.assertEqual([e["message"] for e in failed],
                             [f'Error creating PodGroup {pg}: admission webhook "pg-quota.example.com" denied the '
                              f"request: {PodGroupQuota.MESSAGE} (retrying with backoff)"])
            c = self.counts(2, 2, created=2, gated=g)
            self.assert_explain("orphan", cond, step, [
                "Backend:     native", f"ReplicaSet:  {rs}",
                f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: not found", self.members(c)], c)

            # Someone else makes a PodGroup of that name; the policy goes. wasd leaves the
            # foreign object alone and the members stay gated.
            self.env.create(PODGROUPS, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                        "metadata": {"name": pg, "namespace": NS},
                                        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
        finally:
            self.env.srv.Kubectl("delete", "validatingwebhookconfiguration", "pg-quota")
        cond = self.wait_gang_condition("orphan", "False", "ForeignObject",
                                   f"PodGroup {pg} is not controlled by ReplicaSet {rs} (controller: none); "
                                   "wasd leaves it alone")
        self.assert_reconciler_event(
            "orphan", "Warning", "ForeignObject",
            f"PodGroup {pg} exists but does not belong to this Deployment (it has no controller); wasd "
            "leaves it alone, creates no PodGroups and lifts no scheduling gates for this Deployment until "
            "it is removed (delete it, or rename the Deployment). Meanwhile: ",
            then=["no pod waits"] + [f"{n} pod(s) stay gated by wasd (scheduling gate wasd.io/pod-group)" if GATED
                                     else f"{n} pod(s) are held by default-scheduler until PodGroup {pg} exists"
                                     for n in (1, 2)])
        self.assertEqual(self.written("orphan", "ForeignObject"), [("ForeignObject", cond["message"])])
        if not GATED:
            # Under the scheduler hold the members are linked by name only: kube-scheduler
            # places them with whatever PodGroup bears that name, the foreign one too
            # (docs/operations.md, "A foreign object with wasd's name"). wasd still writes
            # nothing to it, and the doctor says whose group placed them.
            wait_for(lambda: all(p["spec"].get("nodeName") for p in self.env.pods("orphan")), what="2 bound")
            c = self.counts(2, 2, created=2, bound=2, running=2)
            wait_for(lambda: json.loads(self.run_explain("orphan", "-o", "json")[1])["counts"] == c,
                     what="the doctor counts 2 running")
            self.assert_explain("orphan", cond, "delete the foreign PodGroup so that wasd can create its own, "
                                "or move the Deployment off wasd", [
                                    "Backend:     native", f"ReplicaSet:  {rs}",
                                    f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: "
                                    "PodGroupInitiallyScheduled=True (Scheduled)", self.members(c)], c)
            self.assertEqual([e for e in self.env.srv.Audit(since=0, user=RECONCILER_USER,
                                                             methods=("PATCH", "PUT", "DELETE"))
                              if e["path"] == f"{PODGROUPS}/{pg}"], [], "no write to the foreign PodGroup")
            self.delete("orphan")
            return
        c = self.counts(2, 2, created=2, gated=g)
        self.assert_explain("orphan", cond, "delete the foreign PodGroup so that wasd can create its own, "
                            "or move the Deployment off wasd", [
                                "Backend:     native", f"ReplicaSet:  {rs}",
                                f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: no status yet",
                                self.members(c)], c)
        # The next step taken: the foreign PodGroup deleted — and that alone is enough.
        # podgroup-protection (stamped when it was created) holds it while pods name it, and
        # the only pods that do are wasd's gated members, which never ran: wasd removes that
        # finalizer itself (Q14 for a foreign PodGroup), the object goes, wasd creates its own
        # PodGroup and lifts the gates, and the gang is placed.
        foreign = self.env.srv.Get(f"{PODGROUPS}/{pg}")
        self.assertEqual(foreign["metadata"].get("finalizers"), ["scheduling.k8s.io/podgroup-protection"])
        self.assertEqual(self.env.delete(f"{PODGROUPS}/{pg}"), 200)
        done = self.wait_gang_condition("orphan", "True", "Scheduled",
                                        "2/2 created, 0 gated by wasd, 2 bound, minCount 2")
        self.assertGreater(done["lastTransitionTime"], cond["lastTransitionTime"])
        released = [e for e in self.env.events("PodGroupReleased") if e["involvedObject"]["name"] == "orphan"]
        self.assertEqual([(e["type"], e["message"]) for e in released], [(
            "Warning",  # wasd wrote to an object that is not its own
            f"PodGroup {pg} is someone else's (it has no controller) and is being deleted, and only pods of "
            "this Deployment that never ran (never scheduled) name it: removed its "
            "scheduling.k8s.io/podgroup-protection finalizer so that it can go; wasd then creates its own "
            f"PodGroup for ReplicaSet {rs}")])
        # Its own PodGroup in its place; wasd's one write to the foreign object was the
        # finalizer's removal (the release made it go: any later write is to its own).
        ours = self.env.srv.Get(f"{PODGROUPS}/{pg}")
        self.assertNotEqual(ours["metadata"]["uid"], foreign["metadata"]["uid"])
        touched = [e for e in self.env.srv.Audit(since=0, user=RECONCILER_USER, methods=("PATCH", "PUT", "DELETE"))
                   if e["path"] == f"{PODGROUPS}/{pg}" and e.get("status", 0) < 400]
        self.assertEqual((touched[0]["method"], touched[0]["body"]), ("PATCH", [
            {"op": "test", "path": "/metadata/uid", "value": foreign["metadata"]["uid"]},
            {"op": "test", "path": "/metadata/finalizers/0", "value": "scheduling.k8s.io/podgroup-protection"},
            {"op": "remove", "path": "/metadata/finalizers/0"}]))
        for e in touched[1:]:
            self.assertEqual((e["method"], e["body"][0]),
                             ("PATCH", {"op": "test", "path": "/metadata/uid", "value": ours["metadata"]["uid"]}))
        self.assertEqual([(r["kind"], r["name"]) for r in ours["metadata"]["ownerReferences"] if r.get("controller")],
                         [("ReplicaSet", rs)])
        pods = self.env.pods("orphan")
        self.assertEqual(len(pods), 2)
        for p in pods:
            self.assertTrue(p["spec"].get("nodeName"), p["metadata"]["name"])
            self.assertFalse(p["spec"].get("schedulingGates"), p["metadata"]["name"])
        self.assertEqual(len(self.reconciler_events("orphan", "ForeignObject")), 1)
        self.delete("orphan")

    def test_3_invalid_configuration(self):
        self.env.apply(gang("broken", 2, 2, gpus=0))
        self.wait_gang_condition("broken", "True", "Scheduled", "2/2 created, 0 gated by wasd, 2 bound, minCount 2")
        saved = json.loads(self.env.srv.Kubectl("get", "validatingwebhookconfiguration", "wasd", "-o", "json").stdout)
        self.env.srv.Kubectl("delete", "validatingwebhookconfiguration", "wasd")
        try:
            self.env.patch(f"{DEPLOYMENTS}/broken",
                           {"metadata": {"annotations": {"wasd.io/scheduling": '{"schedulingPolicy": 3}'}}})
            error = f"{CARRIER}.schedulingPolicy: Invalid value: 3: must be an object"
            cond = self.wait_gang_condition("broken", "False", "InvalidSchedulingConfiguration", error)
        finally:
            for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
                saved["metadata"].pop(k, None)
            self.env.apply(saved)
        self.assert_reconciler_event(
            "broken", "Warning", "InvalidSchedulingConfiguration",
            "The stored scheduling configuration is invalid, so wasd manages no Workload or PodGroups for "
            f"this Deployment and its pods get no gang: {error}. Fix the wasd.io/scheduling annotation")
        self.assertEqual(self.changes_to("broken", "InvalidSchedulingConfiguration"), [error])
        # The early reasons count the members that exist too (minCount is not known: 0).
        placed = self.counts(2, 0, created=2, bound=2, running=2)
        self.assert_explain("broken", cond, "fix the scheduling configuration (`wasd check -f FILE` shows "
                            "every error)", [self.members(placed)], placed)
        self.delete("broken")

    def test_4_api_not_available(self):
        self.env.apply(deployment("cosched", 2, min_count=2, annotations={"wasd.io/backend": "coscheduling"}))
        message = ("the API scheduling.x-k8s.io/v1alpha1 podgroups of backend coscheduling is not served: "
                   "2 pod(s) stay gated by wasd (scheduling gate wasd.io/pod-group)")
        cond = self.wait_gang_condition("cosched", "False", "APINotAvailable", message)
        wait_for(lambda: len(self.env.pods("cosched")) == 2, what="2 gated pods")
        self.assert_reconciler_event(
            "cosched", "Warning", "APINotServed",
            "scheduling.x-k8s.io/v1alpha1 podgroups (backend coscheduling) is not served by this cluster; "
            "wasd creates no PodGroup for this Deployment (",
            doctor_reason="APINotAvailable",
            then=[t + ") until it is: install scheduler-plugins with the coscheduling plugin "
                  "(CRD podgroups.scheduling.x-k8s.io, v1alpha1)"
                  for t in ("no pod waits", "1 pod(s) stay gated by wasd (scheduling gate wasd.io/pod-group)",
                            "2 pod(s) stay gated by wasd (scheduling gate wasd.io/pod-group)")])
        self.assertEqual(self.changes_to("cosched", "APINotAvailable"), [message])
        gated = self.counts(2, 0, created=2, gated=2)
        self.assert_explain("cosched", cond, "install coscheduling or choose another backend with the "
                            "annotation wasd.io/backend", ["Backend:     coscheduling",
                                                          self.members(gated)], gated)
        # The API appears: the reconciler notices within --api-check-interval and places the gang.
        self.env.srv.SetDisabledGroups([])
        self.wait_gang_condition("cosched", "True", "Scheduled", "2/2 created, 0 gated by wasd, 2 bound, minCount 2")
        self.assert_doctor_event("cosched", "Normal", "Scheduled", None)
        self.delete("cosched")

    def test_5_queue_blocked(self):
        self.env.create(QUEUES, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                                 "metadata": {"name": "research"},
                                 "spec": {"weight": 1, "capability": {"cpu": "1"}}})
        config = {"backends": {"volcano": {"queue": "research", "minResources": {"cpu": "2"}}}}
        d = deployment("queued", 2, min_count=2, extra_config=config, annotations={"wasd.io/backend": "volcano"})
        # A GPU each: the only pods on GPUs in this class, so the fit preview is exact.
        d["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {GPU: "1"}, "limits": {GPU: "1"}}
        self.env.apply(d)
        cond = self.wait_gang_condition("queued", "False", "QueueBlocked",
                                   "2/2 created, 0 gated by wasd, 0 bound, minCount 2; the PodGroup is still "
                                   "Pending (not Inqueue) in Volcano queue research")
        rs, pg = self.names("queued")
        step = "the backend's queue holds the gang: check the queue exists and has quota"
        self.assert_doctor_event("queued", "Warning", "QueueBlocked", step)
        # What Volcano says: the PodGroup's Event and condition, the members' PodScheduled
        # (the scheduler's words follow the members it has seen: wait for both).
        why = "pod group is not ready, 2 Pending, 2 minAvailable"
        unsched = f"2/2 tasks in gang unschedulable: {why}"

        def volcano_said():
            _, _, g = self.env.srv.Request("GET", f"{VOLCANO_PODGROUPS}/{pg}")
            conds = (g.get("status") or {}).get("conditions") or []
            pods = [c for p in self.env.pods("queued") for c in (p.get("status") or {}).get("conditions") or []
                    if c["type"] == "PodScheduled"]
            return (g if [c["message"] for c in conds] == [unsched] and [c["message"] for c in pods] == [why, why]
                    else None)
        group = wait_for(volcano_said, what="Volcano's words on the PodGroup and its members")
        self.assertEqual([(e["type"], e["message"]) for e in self.env.events("Unschedulable")
                          if e["involvedObject"]["name"] == pg],
                         [("Normal", "queue resource quota insufficient: insufficient cpu")])
        summary = f"phase Pending; Unschedulable=True (NotEnoughResources): {unsched}"
        c = self.counts(2, 2, created=2)
        d = self.assert_explain("queued", cond, step, [
            "Backend:     volcano", f"ReplicaSet:  {rs}",
            f"Group:       PodGroup (scheduling.volcano.sh/v1beta1) {pg}: {summary}", self.members(c),
            # Room on the nodes: the queue, not the capacity, holds the gang.
            "Fit:         the cluster has room for 2 of 2 members",
            f"             per member: {GPU} 1, pods 1",
            "             cluster: room for 10 on 4 nodes"], c)
        self.assertEqual(group["status"]["phase"], "Pending")
        self.assertEqual(d["schedulerMessage"], why)
        # Room in the queue: Volcano enqueues the group and the gang is placed.
        self.env.patch(f"{QUEUES}/research", {"spec": {"capability": {"cpu": "4"}}})
        self.wait_gang_condition("queued", "True", "Scheduled", "2/2 created, 0 gated by wasd, 2 bound, minCount 2")
        self.delete("queued")

    def test_6_unsupported_provider_capability(self):
        d = deployment("topo", 2, min_count=2, annotations={"wasd.io/backend": "volcano"},
                       extra_config={"schedulingConstraints": {"topology": [{"key": ZONE}]}})
        self.env.apply(d)
        # Admitted, compiled and placed while the zone maps to HyperNode tier 1.
        self.wait_gang_condition("topo", "True", "Scheduled", "2/2 created, 0 gated by wasd, 2 bound, minCount 2")
        _, _, pgs = self.env.srv.Request("GET", VOLCANO_PODGROUPS)
        self.assertEqual([p["spec"].get("networkTopology") for p in pgs["items"]
                          if p["metadata"]["name"].startswith("topo-")], [{"mode": "hard", "highestTierAllowed": 1}])
        self.assertEqual(self.run_explain("topo", *TIERS)[0], 0)
        message = (f"backend volcano cannot express the scheduling configuration: {CARRIER}."
                   'schedulingConstraints.topology: Forbidden: not supported by backend "volcano": no '
                   f'HyperNode tier is configured for the node label "{ZONE}" (--volcano-topology-tiers); '
                   'remove it or use backend "native" or "kai"')
        step = ("change the scheduling configuration as the error says, or configure the cluster facts it "
                "names (`wasd check --capabilities` shows what each backend expresses)")
        # Without the flag, `wasd explain` judges as a reconciler without the tier would.
        code, out = self.run_explain("topo")
        self.assertEqual(code, 3)
        self.assertIn(f"Reason:      UnsupportedProviderCapability\nMessage:     {message}\n", out)
        # The operator removes the tier: the reconciler restarts without it.
        self.rec.stop()
        type(self).rec = self.env.start_reconciler("--leader-elect=false", *BACKEND_FLAGS)
        cond = self.wait_gang_condition("topo", "False", "UnsupportedProviderCapability", message)
        self.assert_doctor_event("topo", "Warning", "UnsupportedProviderCapability", step)
        self.assertEqual(self.changes_to("topo", "UnsupportedProviderCapability"), [message])
        placed = self.counts(2, 0, created=2, bound=2, running=2)
        self.assert_explain("topo", cond, step, ["Backend:     volcano", self.members(placed)], placed)
        self.delete("topo")


if __name__ == "__main__":
    unittest.main(verbosity=2)
