#!/usr/bin/env python3
"""`wasd explain` (issue 17) end to end: the test API server with its gang scheduler
(`--gang-scheduler`, tests/apiserver/scheduler.py) and three Nodes, the real webhook and
reconciler, and a scenario per reason of the gang doctor — with the exact diagnosis,
the exit codes (0 scheduled, 3 pending, 1 error) and the same answer through
`kubectl wasd explain` with the plugin link that `cmake --install` puts on PATH.

Nodes: zone-a holds a1 (4 GPUs) and a2 (2 GPUs), zone-b holds b1 (4 GPUs); the server's own
apiserver-test-node has no zone (and no allocatable). Scenarios,
in this order because they share the nodes:
  Unschedulable    8 members of 1 GPU in one zone: zone-a has room for 6 of 8
  Scheduled        2 members of 1 GPU, placed in zone-a
  ScaleUpPending   the same scaled to 8: 4 more fit in zone-a, 2 do not
  GatedByOther     a Kueue-style gate kueue.x-k8s.io/admission on the members, then lifted
  WaitingForQuorum a quota-like admission refuses the 3rd of 3 members (minCount 3)
  PodGroupTerminating  the Scheduled gang's PodGroup deleted while its pods run
  PodGroupMissing  the reconciler stopped: no Workload, members gated by wasd
  ForeignObject    then a PodGroup of the expected name made by someone else
  InvalidSchedulingConfiguration  a bad annotation stored with wasd's validating webhook gone
And kubectl's connection flags: a kubeconfig with two contexts, the current one on a closed
port, where --context picks the live one and --cluster/--user override the context's.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest

import yaml

from apiserver.harness import KUBECTL
# Runs the binary's default hold; ctest runs it again as .gate. Where the two differ
# (a native gang waiting for its PodGroup) the expected text follows GATED.
from lib.cluster import GATE_EVERYWHERE, DefaultPodHold, Env
from lib.manifests import NS, deployment, pod_group_name, workload_name
from lib.paths import BUILD_DIR, WASD
from lib.scripted_webhook import ScriptedWebhook
from lib.wait import wait_for

GATED = DefaultPodHold() == GATE_EVERYWHERE

ZONE = "topology.kubernetes.io/zone"
PODGROUPS = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups"
GPU = "nvidia.com/gpu"


def node(name, zone, gpus):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", GPU: str(gpus), "pods": "110"}}}


def gang(name, replicas, min_count, gpus=1, gates=None):
    d = deployment(name, replicas=replicas, min_count=min_count,
                   extra_config={"schedulingConstraints": {"topology": [{"key": ZONE}]}})
    spec = d["spec"]["template"]["spec"]
    req = {"cpu": "100m"}
    if gpus:
        req[GPU] = str(gpus)
    spec["containers"][0]["resources"] = {"requests": req, "limits": {GPU: str(gpus)} if gpus else {}}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return d


class Quota:
    """A validating webhook standing in for a ResourceQuota: at most `limit` pods of
    app=quota (counted by the creations it allowed)."""

    def __init__(self, limit):
        self.limit = limit
        self.allowed = 0
        self.lock = threading.Lock()

    def __call__(self, path, request):
        with self.lock:
            if self.allowed < self.limit:
                self.allowed += 1
                return {"allowed": True}
        return {"allowed": False, "status": {
            "code": 403, "reason": "Forbidden",
            "message": f'exceeded quota: team-quota, requested: pods=1, used: pods={self.limit}, '
                       f'limited: pods={self.limit}'}}


class ExplainTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-explain-")
        cls.env = Env(apiserver_args=("--bookmark-interval", "0.5", "--gang-scheduler"))
        cls.env.__enter__()
        cls.hook = None
        try:
            for n in (node("a1", "zone-a", 4), node("a2", "zone-a", 2), node("b1", "zone-b", 4)):
                cls.env.apply(n)
            cls.reconciler = cls.env.start_reconciler()
            # The plugin: kubectl runs `kubectl-wasd` from PATH. The build's install rule puts
            # wasd and the link kubectl-wasd -> wasd in PREFIX/bin.
            prefix = os.path.join(cls.tmp, "prefix")
            subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", prefix], check=True,
                           capture_output=True, timeout=120)
            cls.plugin_dir = os.path.join(prefix, "bin")
            assert os.readlink(os.path.join(cls.plugin_dir, "kubectl-wasd")) == "wasd"
        except BaseException:
            cls.env.__exit__(None, None, None)
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.hook is not None:
            cls.hook.stop()
        cls.env.__exit__(None, None, None)
        shutil.rmtree(os.path.join(cls.tmp, "prefix"), ignore_errors=True)  # a copy of wasd

    # ------------------------------------------------------------------ helpers

    def explain(self, *args):
        p = subprocess.run([WASD, "explain", *args, "--kubeconfig", self.env.srv.kubeconfig],
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def plugin(self, *args):
        env = dict(os.environ, PATH=self.plugin_dir + os.pathsep + os.environ.get("PATH", ""),
                   KUBECONFIG=self.env.srv.kubeconfig, HOME=self.tmp)
        p = subprocess.run([KUBECTL, "wasd", "explain", *args], capture_output=True, text=True,
                           timeout=60, env=env)
        return p.returncode, p.stdout, p.stderr

    def diagnosis(self, name):
        code, out, err = self.explain(f"deployment/{name}", "-o", "json")
        self.assertIn(code, (0, 3), err)
        return code, json.loads(out)

    def wait_reason(self, name, reason, timeout=30, group_status=False):
        """The diagnosis once its reason is `reason` (and, with `group_status`, once the group object
        has a status: the scheduler writes the pods first and the group's condition after them, as
        kube-scheduler does, so the reason can be read before the group says anything)."""
        def ready(d):
            if d[1]["reason"] != reason:
                return None
            if group_status and d[1]["group"]["summary"] == "no status yet":
                return None
            return d
        return wait_for(lambda: ready(self.diagnosis(name)), timeout=timeout,
                        what=f"{name}: {reason}{' with a group status' if group_status else ''}")[1]

    def names(self, app):
        rs = self.env.replica_sets(app)
        self.assertEqual(len(rs), 1)
        rs = rs[0]
        return rs["metadata"]["name"], pod_group_name(rs["metadata"]["name"], rs["metadata"]["uid"])

    def head(self, out):
        """The text output without the timeline (its timestamps are the pods')."""
        return out.split("Timeline:\n")[0]

    def delete(self, app):
        self.env.srv.Kubectl("delete", "deployment", app, "-n", NS)
        wait_for(lambda: not self.env.pods(app), timeout=30, what=f"{app} pods gone")

    # ------------------------------------------------------------------ scenarios

    def test_1_unschedulable_with_fit_preview(self):
        self.env.apply(gang("big", 8, 8))
        d = self.wait_reason("big", "Unschedulable", group_status=True)
        rs, pg = self.names("big")
        # 4 nodes: ours and the server's own apiserver-test-node, which has no zone.
        sched = (f'0/4 nodes are available: gang "{pg}" needs 8 pods, room for 6; '
                 f"2 Insufficient {GPU}, 2 node(s) didn't match pod topology.")
        self.assertEqual(d["message"],
                         f"8/8 created, 0 gated by wasd, 0 bound, minCount 8; scheduler: {sched}; "
                         f"largest {ZONE} (zone-a) has room for 6 of 8 members; short 2 {GPU}")
        self.assertEqual(d["fit"]["domains"], [{"domain": "zone-a", "nodes": 2, "room": 6},
                                               {"domain": "zone-b", "nodes": 1, "room": 4}])
        self.assertEqual(d["fit"]["short"], {GPU: "2"})
        self.assertEqual(d["group"]["summary"], f"PodGroupInitiallyScheduled=False (Unschedulable): {sched}")
        # FailedScheduling: one Event per pod, not one per scheduler pass.
        def failed_scheduling():
            return [e for e in self.env.events("FailedScheduling") if e["involvedObject"]["name"].startswith("big-")]
        wait_for(lambda: len(failed_scheduling()) >= 8, what="8 FailedScheduling Events")
        events = failed_scheduling()
        self.assertEqual(len(events), 8)
        self.assertTrue(all(e["message"] == sched and e["source"]["component"] == "default-scheduler"
                            for e in events))

        code, out, err = self.explain("deployment/big", "-n", NS)
        self.assertEqual(code, 3, err)
        self.assertEqual(self.head(out), (
            f"Deployment:  {NS}/big\n"
            "Status:      GangScheduled=False\n"
            "Reason:      Unschedulable\n"
            f"Message:     {d['message']}\n"
            "Next step:   free or add capacity where the fit preview says it is short, lower "
            "minCount, or relax the pod template's nodeSelector/tolerations\n"
            "Backend:     native\n"
            f"ReplicaSet:  {rs}\n"
            f"Group:       PodGroup (scheduling.k8s.io/v1beta1) {pg}: {d['group']['summary']}\n"
            "Members:     replicas 8, minCount 8, created 8, gated by wasd 0, gated by others 0, "
            "bound 0, running 0, failed 0, bound before their group 0\n"
            f"Fit:         largest {ZONE} (zone-a) has room for 6 of 8 members; short 2 {GPU}\n"
            f"             per member: cpu 100m, {GPU} 1, pods 1\n"
            "             zone-a: room for 6 on 2 nodes\n"
            "             zone-b: room for 4 on 1 node\n"))
        timeline = out.split("Timeline:\n")[1].splitlines()
        # Each of the 8 pods: created, then found unschedulable (wasd's gate is gone by then).
        self.assertEqual(len(timeline), 16, out)
        self.assertEqual(sum(1 for l in timeline if l.endswith("  created")), 8)
        self.assertEqual(sum(1 for l in timeline if l.endswith("  unschedulable")), 8)
        # yaml says the same as json.
        code, out, _ = self.explain("deployment/big", "-o", "yaml")
        self.assertEqual(code, 3)
        self.assertEqual(yaml.safe_load(out)["message"], d["message"])
        self.delete("big")

    def test_2_scheduled_then_scale_up_pending(self):
        self.env.apply(gang("small", 2, 2))
        d = self.wait_reason("small", "Scheduled", group_status=True)
        self.assertEqual(d["status"], "True")
        self.assertEqual(d["message"], "2/2 created, 0 gated by wasd, 2 bound, minCount 2")
        self.assertEqual(d["group"]["summary"], "PodGroupInitiallyScheduled=True (Scheduled)")
        code, out, err = self.explain("deployment/small")
        self.assertEqual(code, 0, err)
        self.assertIn("Reason:      Scheduled\n", out)
        self.assertEqual(sum(1 for l in out.splitlines() if re.search(r"  bound to a[12]$", l)), 2, out)
        # The same through kubectl's plugin mechanism.
        self.assertEqual(self.plugin("deployment/small"), (0, out, ""))

        # Scale to 8: zone-a (where the gang runs) has room for 4 more; zone-b is not an option.
        self.env.scale("small", 8)
        d = self.wait_reason("small", "ScaleUpPending")
        _, pg = self.names("small")
        # Members arrive one by one; the scheduler's word settles once the last two are
        # pending together.
        want = ("8/8 created, 0 gated by wasd, 6 bound, minCount 2; the gang was placed, 2 newer "
                f'members are not; scheduler: 0/4 nodes are available: gang "{pg}" needs 2 pods, '
                f"room for 0; 2 Insufficient {GPU}, 2 node(s) didn't match pod topology.; "
                f"{ZONE} zone-a (where the gang runs) has room for 0 of 2 members; short 2 {GPU}")
        d = wait_for(lambda: (lambda d: d if d["message"] == want else None)(self.diagnosis("small")[1]),
                     what=want)
        self.assertEqual(d["reason"], "ScaleUpPending")
        code, out, err = self.plugin("deployment/small", "-n", NS)
        self.assertEqual(code, 3, err)
        self.assertIn("Reason:      ScaleUpPending\n", out)
        self.delete("small")

    def test_3_gated_by_other(self):
        self.env.apply(gang("kueued", 2, 2, gpus=0, gates=["kueue.x-k8s.io/admission"]))
        d = self.wait_reason("kueued", "GatedByOther")
        self.assertEqual(d["message"], "2/2 created, 0 gated by wasd, 2 gated by others, 0 bound, minCount 2")
        self.assertEqual(d["counts"]["gatedByOthers"], 2)
        code, out, _ = self.explain("deployment/kueued")
        self.assertEqual(code, 3)
        self.assertIn("gated (kueue.x-k8s.io/admission)", out)
        # Kueue admits: the gate goes, the gang is placed.
        for p in self.env.pods("kueued"):
            self.env.patch(f"/api/v1/namespaces/{NS}/pods/{p['metadata']['name']}",
                           {"spec": {"schedulingGates": []}})
        self.wait_reason("kueued", "Scheduled")
        # Someone deletes the PodGroup: podgroup-protection holds it while its pods run.
        rs, pg = self.names("kueued")
        self.assertEqual(self.env.delete(f"{PODGROUPS}/{pg}"), 200)
        d = self.wait_reason("kueued", "PodGroupTerminating")
        self.assertEqual(d["message"], f"PodGroup {pg} is being deleted; 2/2 created, 0 gated by wasd, "
                                       "2 bound, minCount 2")
        self.assertEqual(self.explain("deployment/kueued")[0], 3)
        self.delete("kueued")

    def test_4_waiting_for_quorum(self):
        quota = Quota(2)
        type(self).hook = ScriptedWebhook(self.tmp, quota)
        self.env.apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                        "metadata": {"name": "quota"},
                        "webhooks": [{"name": "quota.example.com", "admissionReviewVersions": ["v1"],
                                      "sideEffects": "None", "failurePolicy": "Fail",
                                      "clientConfig": {"url": f"https://localhost:{self.hook.port}/quota",
                                                       "caBundle": self.hook.ca_bundle},
                                      "rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                 "operations": ["CREATE"], "resources": ["pods"]}],
                                      "objectSelector": {"matchLabels": {"app": "quota"}}}]})
        self.env.apply(gang("quota", 3, 3, gpus=0))
        d = wait_for(lambda: (lambda d: d if d["message"].startswith("2/3 created, 0 gated") else None)(
                         self.diagnosis("quota")[1]),
                     what="2 of 3 pods created and their gates lifted")
        rs, _ = self.names("quota")
        self.assertEqual(d["reason"], "WaitingForQuorum")
        self.assertEqual(d["message"], "2/3 created, 0 gated by wasd, 0 bound, minCount 3")
        self.assertEqual(d["nextStep"], "the ReplicaSet has created fewer pods than minCount: kubectl "
                                        f"describe replicaset {rs} shows why (quota, admission, pod "
                                        "creation errors)")
        self.assertEqual(self.explain("deployment/quota")[0], 3)
        self.env.srv.Kubectl("delete", "validatingwebhookconfiguration", "quota")
        self.delete("quota")

    def test_5_pod_group_missing_without_reconciler(self):
        self.reconciler.stop()
        self.env.apply(gang("orphan", 2, 2, gpus=0))
        d = self.wait_reason("orphan", "PodGroupMissing")
        g = 2 if GATED else 0
        wait_for(lambda: self.diagnosis("orphan")[1]["counts"]["created"] == 2, what="2 waiting pods")
        d = self.diagnosis("orphan")[1]
        uid = json.loads(self.env.srv.Kubectl("get", "deployment", "orphan", "-o", "json").stdout)["metadata"]["uid"]
        rs, pg = self.names("orphan")
        # Under the scheduler hold the members carry the link, no gate: who holds them is said.
        held = "" if GATED else f"; 2 pod(s) are held by default-scheduler until PodGroup {pg} exists"
        self.assertEqual(d["message"], f"Workload {workload_name('orphan', uid)} does not exist; "
                                       f"2/2 created, {g} gated by wasd, 0 bound, minCount 2" + held)
        self.assertEqual(self.explain("deployment/orphan")[0], 3)
        # A PodGroup of that name made by someone else, then the reconciler back: it makes
        # the Workload and leaves the foreign PodGroup alone. Under the gate the gang stays
        # gated; under the scheduler hold its scheduler places it with the foreign group.
        self.env.create(PODGROUPS, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                    "metadata": {"name": pg, "namespace": NS},
                                    "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
        self.env.start_reconciler()
        d = self.wait_reason("orphan", "ForeignObject")
        self.assertEqual(d["message"], f"PodGroup {pg} is not controlled by ReplicaSet {rs} (controller: "
                                       "none); wasd leaves it alone")
        self.assertEqual(d["counts"]["gatedByWasd"], g)
        if not GATED:
            wait_for(lambda: self.diagnosis("orphan")[1]["counts"]["bound"] == 2, what="placed by the foreign group")

    def test_connection_flags(self):
        """--context, --cluster, --user and --request-timeout as kubectl reads them: the
        current-context "dead" points at a closed loopback port, "live" at the test API server
        with namespace NS, and the user "stranger" has a token the server does not know."""
        with open(self.env.srv.kubeconfig) as f:
            cfg = json.load(f)
        live_cluster, admin = cfg["clusters"][0], cfg["users"][0]
        with socket.socket() as s:  # a port nobody listens on (bound, then closed)
            s.bind(("127.0.0.1", 0))
            closed = s.getsockname()[1]
        cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "dead",
               "clusters": [{"name": "live", "cluster": live_cluster["cluster"]},
                            {"name": "dead", "cluster": dict(live_cluster["cluster"],
                                                             server=f"https://127.0.0.1:{closed}")}],
               "users": [{"name": "admin", "user": admin["user"]},
                         {"name": "stranger", "user": {"token": "not-a-known-token"}}],
               "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": "admin"}},
                            {"name": "live", "context": {"cluster": "live", "user": "admin",
                                                         "namespace": NS}}]}
        path = os.path.join(self.tmp, "two-contexts.kubeconfig")
        with open(path, "w") as f:
            json.dump(cfg, f)

        def run(*flags):
            p = subprocess.run([WASD, "explain", "deployment/nope", "--kubeconfig", path,
                                "--request-timeout", "3s", *flags],
                               capture_output=True, text=True, timeout=60)
            return p.returncode, p.stdout, p.stderr

        reached = (1, "", f'error: deployment "nope" not found in namespace "{NS}"\n')
        # The current context: nothing listens there.
        code, out, err = run()
        self.assertEqual((code, out), (1, ""), err)
        self.assertIn(f"127.0.0.1:{closed}", err)
        # --context picks the live one (and its namespace).
        self.assertEqual(run("--context", "live"), reached)
        # --cluster overrides the context's cluster; the dead context has no namespace.
        self.assertEqual(run("--context=dead", "--cluster=live", "-n", NS), reached)
        # --user overrides the context's user: the server refuses the unknown token.
        code, out, err = run("--context", "live", "--user", "stranger")
        self.assertEqual((code, out), (1, ""), err)
        self.assertIn("Unauthorized", err)
        # Unknown names: kubectl's words and the file, exit 2 (no client configuration).
        for flag, kind in (("--context", "context"), ("--cluster", "cluster"), ("--user", "user")):
            code, out, err = run(flag, "staging")
            self.assertEqual((code, out), (2, ""), err)
            self.assertIn(f'{kind} "staging" does not exist', err)
            self.assertIn(path, err)
        # --timeout still works for a release, with a warning naming the replacement.
        code, out, err = run("--context", "live", "--timeout", "3s")
        self.assertEqual((code, out), reached[:2])
        self.assertIn("warning: --timeout is deprecated, use --request-timeout", err)
        self.assertIn(reached[2], err)

    def test_errors(self):
        code, out, err = self.explain("deployment/nope")
        self.assertEqual((code, out, err), (1, "", f'error: deployment "nope" not found in namespace "{NS}"\n'))
        self.env.apply(deployment("plain", scheduling=False))
        code, out, err = self.explain("deployment/plain")
        self.assertEqual((code, out, err), (1, "", f"error: deployment {NS}/plain is not opted in to gang "
                                                   "scheduling (no annotation wasd.io/scheduling, no "
                                                   "spec.scheduling)\n"))
        code, _, err = self.explain()
        self.assertEqual(code, 2)
        self.assertIn("no Deployment given (wasd explain deployment/NAME, or deployment NAME)", err)
        # kubectl's TYPE NAME form and the other spellings of the type name the same object.
        for target in (["deployment", "plain"], ["deploy/plain"], ["deployments.apps", "plain"]):
            self.assertIn("is not opted in", self.explain(*target)[2])
        code, out, _ = self.explain("--help")
        self.assertEqual(code, 0)
        self.assertIn("Exit status: 0 the gang is scheduled, 3 it is pending", out)
        self.env.srv.Kubectl("delete", "deployment", "plain")
        code, _, err = self.explain("deployment/a/b")
        self.assertEqual((code, err.splitlines()[0]), (2, "wasd explain: want deployment/NAME, got deployment/a/b"))

    def test_invalid_configuration(self):
        """A configuration the webhook would deny, stored while it was not asked (its
        validating configuration removed): the diagnosis names the field error."""
        self.env.apply(gang("broken", 2, 2, gpus=0))
        self.wait_reason("broken", "Scheduled")
        self.env.srv.Kubectl("delete", "validatingwebhookconfiguration", "wasd")
        self.env.patch(f"/apis/apps/v1/namespaces/{NS}/deployments/broken",
                       {"metadata": {"annotations": {"wasd.io/scheduling": '{"schedulingPolicy": 3}'}}})
        d = self.wait_reason("broken", "InvalidSchedulingConfiguration")
        self.assertIn("schedulingPolicy", d["message"])
        self.assertEqual(d["nextStep"], "fix the scheduling configuration (`wasd check -f FILE` shows every error)")
        self.assertEqual(self.explain("deployment/broken")[0], 3)


if __name__ == "__main__":
    unittest.main(verbosity=2)
