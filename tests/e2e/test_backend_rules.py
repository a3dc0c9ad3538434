"""End-to-end, issue 30: the backends against a scheduler that plays their real rules
(the test API server's `--gang-scheduler=rules`, tests/apiserver/gangrules.py), with the
real `wasd webhook` and `wasd reconciler`.

* KAI scale-up (H1): a gang without minCount, 4 running on a node with room for 5, scaled
  to 6. KAI evicts a gang whose active members stay below minMember for its staleness
  grace period (here 2 s); wasd raises minMember only as members become active, so the 4
  (and the 5th that fits) are still Running after twice the grace period.
* Release (M1): a stored configuration that is invalid (written while the validating
  webhook was away) releases the gated pods of a new ReplicaSet; they name a PodGroup that
  wasd would not create, and kube-scheduler holds a pod whose PodGroup is missing. wasd
  creates a basic one first: the pods run.
* KAI before v0.15.0 (M3): its podgrouper rewrites each pod's `pod-group-name`; the
  members are still found by their ReplicaSet (gates lifted, nothing Pending forever) and
  a Warning MemberRelinked names the change.
* Orphaned ReplicaSet (L8): the group object of a ReplicaSet deleted with
  propagationPolicy Orphan is deleted by wasd once its pods are gone; the backend informers
  list and watch only group objects labelled wasd.io/managed=true.
"""
import json
import time
import unittest
import urllib.parse

from lib.cluster import RECONCILER_USER, Env
from lib.manifests import NS, deployment, linked_group, pod_gated, pod_group_of
from lib.wait import wait_for

ALLOWED = "native,volcano,kai,coscheduling"
GRACE = 2  # seconds: KAI's staleness grace period played by the server
TIMEOUT = 40
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
KAI_GROUPS = f"/apis/scheduling.run.ai/v2alpha2/namespaces/{NS}/podgroups"


def backend_flags():
    return ["--backend", "native", "--allowed-backends", ALLOWED]


def node(name, cpu):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}}}


def sized(d, cpu="1"):
    """`d` with each pod requesting `cpu`."""
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    return d


def live(pods):
    return [p for p in pods if "deletionTimestamp" not in p["metadata"]]


def running(pods):
    return [p for p in live(pods) if p["status"].get("phase") == "Running" and p["spec"].get("nodeName")]


class RulesEnv:
    """One API server playing every backend's rules, the webhook and one reconciler."""

    def __init__(self, *server_args, nodes=(), resync="30s"):
        self.env = Env(apiserver_args=("--bookmark-interval", "0.5", "--gang-scheduler=rules",
                                        *server_args),
                       webhook_args=backend_flags()).__enter__()
        try:
            for n in nodes:
                self.env.apply(n)
            self.rec = self.env.start_reconciler("--leader-elect=false", "--resync-period", resync,
                                                 *backend_flags())
        except BaseException:
            self.env.stop()
            raise

    def stop(self):
        self.env.stop()


class KaiScaleUpTest(unittest.TestCase):
    """H1: room for 5 pods of 1 CPU; a KAI gang of 4 scaled to 6."""

    def test_running_members_survive_a_scale_up_that_does_not_fit(self):
        r = RulesEnv("--kai-staleness-grace", str(GRACE), nodes=[node("n1", 5)])
        try:
            env = r.env
            env.apply(sized(deployment("grow", 4, annotations={"wasd.io/backend": "kai"},
                                        extra_config={"disruptionMode": {"all": {}}})))
            wait_for(lambda: len(running(env.pods("grow"))) == 4, TIMEOUT, 0.2, "4 running")
            first = {p["metadata"]["uid"] for p in running(env.pods("grow"))}
            seq = env.srv.LastSeq()
            env.scale("grow", 6)
            # The 5th fits and runs; the 6th stays Pending (no room), ungated.
            wait_for(lambda: len(running(env.pods("grow"))) == 5 and len(live(env.pods("grow"))) == 6,
                     TIMEOUT, 0.2, "5 of 6 running")
            rs = [x for x in env.replica_sets("grow") if x["spec"].get("replicas", 0) > 0][0]
            pg = pod_group_of(rs)
            wait_for(lambda: env.srv.Get(f"{KAI_GROUPS}/{pg}")["spec"]["minMember"] == 5, TIMEOUT, 0.2,
                     "minMember follows the active members to 5")
            # Twice KAI's grace period: a group below minMember would have been evicted by now.
            time.sleep(2 * GRACE + 1)
            pods = live(env.pods("grow"))
            now_running = {p["metadata"]["uid"] for p in running(pods)}
            self.assertTrue(first <= now_running, "the 4 members that ran are still Running")
            self.assertEqual(len(now_running), 5)
            pending = [p for p in pods if p["metadata"]["uid"] not in now_running]
            self.assertEqual(len(pending), 1)
            self.assertFalse(pod_gated(pending[0]), "the member that does not fit is not held by wasd")
            evictions = [e for e in env.srv.Audit(since=seq, user="kai-scheduler", methods=("DELETE",))
                         if "/pods/" in e["path"]]
            self.assertEqual(evictions, [], "no stale-gang eviction")
            self.assertEqual(env.srv.Get(f"{KAI_GROUPS}/{pg}")["spec"]["minMember"], 5)
            # The minimum followed in one write per member that became active, nothing else
            # was written to the group.
            writes = [w for w in env.reconciler_writes(seq) if w[1] == "podgroups.scheduling.run.ai"]
            self.assertEqual([(m, body[-1]["value"]) for m, _, _, body in writes], [("PATCH", 5)], writes)
        finally:
            r.stop()


class ReleaseTest(unittest.TestCase):
    """M1: an invalid configuration stored past the validating webhook, with a rollout."""

    def test_released_pods_get_the_group_they_name(self):
        r = RulesEnv(nodes=[node("n1", 16)])
        try:
            env = r.env
            env.apply(sized(deployment("rel", 2, min_count=2), cpu="100m"))
            wait_for(lambda: len(running(env.pods("rel"))) == 2, TIMEOUT, 0.2, "2 running")
            old_rs = {x["metadata"]["name"] for x in env.replica_sets("rel")}
            saved = json.loads(env.srv.Kubectl("get", "validatingwebhookconfiguration", "wasd",
                                               "-o", "json").stdout)
            env.srv.Kubectl("delete", "validatingwebhookconfiguration", "wasd")
            try:
                # An invalid annotation and a new image in one write: a new ReplicaSet whose
                # pods the pod webhook links to that ReplicaSet's PodGroup (and gates, in
                # gate hold; under the scheduler hold nothing but that group releases them).
                env.patch(f"{DEPLOYMENTS}/rel", {
                    "metadata": {"annotations": {"wasd.io/scheduling": '{"schedulingPolicy": 3}'}},
                    "spec": {"template": {"spec": {"containers": [
                        {"name": "c", "image": "registry.example/app:2"}]}}}})
            finally:
                for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
                    saved["metadata"].pop(k, None)
                env.apply(saved)
            wait_for(lambda: any(x["metadata"]["name"] not in old_rs and x["spec"].get("replicas", 0) > 0
                                 for x in env.replica_sets("rel")), TIMEOUT, 0.2, "new ReplicaSet")
            new_rs = [x for x in env.replica_sets("rel") if x["metadata"]["name"] not in old_rs][0]
            pg = pod_group_of(new_rs)
            # Every new pod runs: none is left Pending for a PodGroup that never comes.
            wait_for(lambda: len(running(env.pods("rel"))) == 2 and all(
                p["metadata"]["ownerReferences"][0]["name"] == new_rs["metadata"]["name"]
                for p in live(env.pods("rel"))), TIMEOUT, 0.2, "the new pods running")
            for p in live(env.pods("rel")):
                self.assertEqual(linked_group(p, "native"), pg)
                self.assertFalse(pod_gated(p))
            group = env.srv.Get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups/{pg}")
            self.assertEqual(group["spec"]["schedulingPolicy"], {"basic": {}})
            self.assertEqual([(o["kind"], o["name"]) for o in group["metadata"]["ownerReferences"]],
                             [("ReplicaSet", new_rs["metadata"]["name"])])
            events = [e for e in env.events("InvalidSchedulingConfiguration")
                      if e["involvedObject"]["name"] == "rel" and "pod(s)" in e["message"]]
            self.assertTrue(events)
            # The release that found the group missing created it and said so (pods that
            # arrive later are released into the group that exists by then).
            self.assertTrue(any(f"created PodGroup {pg} without a gang" in e["message"] for e in events),
                            [e["message"] for e in events])
            for e in events:
                self.assertNotIn("scheduled without a PodGroup", e["message"])
        finally:
            r.stop()


class KaiOldPodgrouperTest(unittest.TestCase):
    """M3: KAI 0.14.0 rewrites `pod-group-name` (no kai.scheduler/skip-podgrouper)."""

    def test_relinked_members_are_still_the_replicasets(self):
        r = RulesEnv("--kai-version", "0.14.0", nodes=[node("n1", 16)], resync="2s")
        try:
            env = r.env
            env.apply(sized(deployment("old", 2, annotations={"wasd.io/backend": "kai"},
                                        extra_config={"disruptionMode": {"all": {}}}), cpu="100m"))
            wait_for(lambda: len(live(env.pods("old"))) == 2 and all(
                linked_group(p, "kai").startswith("pg-") for p in live(env.pods("old"))),
                TIMEOUT, 0.2, "both pods re-linked by KAI's podgrouper")
            # Not gated forever: found by their ReplicaSet, gates lifted, scheduled.
            wait_for(lambda: len(running(env.pods("old"))) == 2, TIMEOUT, 0.2, "2 running")

            def relinked():
                return [e for e in env.events("MemberRelinked") if e["involvedObject"]["name"] == "old"]
            wait_for(lambda: len(relinked()) == 2, TIMEOUT, 0.2, "one Warning per re-linked pod")
            rs = [x for x in env.replica_sets("old") if x["spec"].get("replicas", 0) > 0][0]
            for e in relinked():
                self.assertEqual(e["type"], "Warning")
                self.assertIn(f"instead of {pod_group_of(rs)}", e["message"])
                self.assertIn("another actor changed its annotation pod-group-name", e["message"])
                self.assertIn("v0.15.0", e["message"])
        finally:
            r.stop()


class OrphanedReplicaSetTest(unittest.TestCase):
    """L8: a Volcano Deployment whose ReplicaSet is deleted with propagationPolicy Orphan."""

    def test_the_orphaned_group_is_cleaned_up_and_informers_are_scoped(self):
        r = RulesEnv(nodes=[node("n1", 16)])
        try:
            env = r.env
            gv = "scheduling.volcano.sh/v1beta1"
            groups = f"/apis/{gv}/namespaces/{NS}/podgroups"
            # Someone else's Volcano group: never listed to wasd.
            env.create(groups, {"apiVersion": gv, "kind": "PodGroup",
                                "metadata": {"name": "batch-job"}, "spec": {"minMember": 1}})
            env.apply(sized(deployment("orph", 2, annotations={"wasd.io/backend": "volcano"}), cpu="100m"))
            wait_for(lambda: len(running(env.pods("orph"))) == 2, TIMEOUT, 0.2, "2 running")
            rs = env.replica_sets("orph")[0]
            pg = pod_group_of(rs)
            group = env.srv.Get(f"{groups}/{pg}")
            self.assertEqual(group["metadata"]["labels"], {"wasd.io/managed": "true"})
            self.assertTrue(group["metadata"]["annotations"]["wasd.io/deployment-uid"])
            env.srv.Kubectl("delete", "replicaset", rs["metadata"]["name"], "--cascade=orphan",
                            "--wait=false")
            wait_for(lambda: not env.srv.Get(f"{groups}/{pg}")["metadata"].get("ownerReferences"),
                     TIMEOUT, 0.2, "the group lost its owner")
            # Its pods (orphaned too: this server's ReplicaSet controller does not adopt them)
            # still name it, so it is kept; once they are gone, nothing needs it.
            orphans = [p for p in live(env.pods("orph")) if linked_group(p, "volcano") == pg]
            self.assertEqual(len(orphans), 2)
            self.assertEqual(env.srv.Request("GET", f"{groups}/{pg}")[0], 200)
            for p in orphans:
                env.delete(f"/api/v1/namespaces/{NS}/pods/{p['metadata']['name']}")
            wait_for(lambda: env.srv.Request("GET", f"{groups}/{pg}")[0] == 404, TIMEOUT, 0.2,
                     "the orphaned group deleted")
            wait_for(lambda: len(running(env.pods("orph"))) == 2, TIMEOUT, 0.2, "2 running")
            deletes = [(m, n) for m, k, n, _ in env.reconciler_writes(0)
                       if k == "podgroups.scheduling.volcano.sh" and m == "DELETE"]
            self.assertEqual(deletes, [("DELETE", pg)])
            self.assertEqual(env.srv.Request("GET", f"{groups}/batch-job")[0], 200)
            reads = env.srv.Audit(methods=("GET",), path="podgroups", user=RECONCILER_USER)
            # The informer's lists and watches (the API check's one-item probe aside).
            lists = [e for e in reads if "scheduling.volcano.sh" in e["path"] and
                     not e["path"].rstrip("/").endswith(tuple([pg, "batch-job"])) and
                     e.get("query") != {"limit": "1"}]
            self.assertTrue(lists, "the reconciler lists Volcano groups")
            for e in lists:
                query = e.get("query")
                query = query if isinstance(query, str) else urllib.parse.urlencode(query or {}, doseq=True)
                self.assertIn("labelSelector=wasd.io%2Fmanaged%3Dtrue",
                              urllib.parse.urlencode(urllib.parse.parse_qs(query), doseq=True), e)
        finally:
            r.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
