"""End-to-end: the real `wasd reconciler` (with `wasd webhook`) on clusters that serve
scheduling.k8s.io Workloads and PodGroups in different versions (the test API server's
--scheduling-versions: v1 and v1beta1 are two views of one storage, v1 preferred).

- v1 and v1beta1 served: wasd discovers both, uses v1 (log line, gauge, the audit log
  shows every write of a Workload or PodGroup on a v1 path), and the objects it writes
  say scheduling.k8s.io/v1, their Workload ownerReference too.
- v1beta1 only, then v1 only under the running reconciler (the upgrade cuts every
  watch on scheduling.k8s.io): wasd notices on its API check, moves its watches to v1
  and converges without a restart. The objects are the same objects: nothing is
  created or deleted again, and the next scale-up is patched through v1.
- v1 only from the start, with the in-tree Deployment integration on
  (--in-tree-deployment): a Deployment carrying spec.scheduling is the in-tree
  controller's; wasd writes nothing for it (even when it carries wasd's marker label),
  while an annotation-carrier Deployment next to it is managed through v1 as before.
"""
import re
import time
import unittest

from lib.cluster import RECONCILER_USER, Env
from lib.manifests import NS, deployment, min_count_of, pod_gated, pod_group_of
from lib.wait import wait_for

SCHED = "/apis/scheduling.k8s.io/"


def scheduling_writes(env, since=0):
    """The reconciler's successful writes of Workloads and PodGroups: (method, version, path)."""
    out = []
    for e in env.srv.Audit(since=since, user=RECONCILER_USER, methods=("POST", "PUT", "PATCH", "DELETE")):
        path = e["path"]
        if not path.startswith(SCHED) or e.get("status", 0) >= 400 or e.get("status") == 0:
            continue
        if "/workloads" not in path and "/podgroups" not in path:
            continue
        out.append((e["method"], path[len(SCHED):].split("/")[0], path))
    return out


class Cluster:
    """An Env whose API server serves the given scheduling.k8s.io versions."""

    def __init__(self, versions, extra=()):
        self.env = Env(apiserver_args=["--bookmark-interval", "0.5",
                                       "--scheduling-versions", ",".join(versions)] + list(extra))

    def __enter__(self):
        self.env.__enter__()
        return self.env

    def __exit__(self, *exc):
        self.env.stop()


def list_v(env, plural, version):
    return env.list(plural, f"scheduling.k8s.io/{version}")


def owned_by(objs, name):
    return [o for o in objs if any(r["name"] == name for r in o["metadata"].get("ownerReferences", []))]


def converged(env, name, replicas, version):
    pods = [p for p in env.pods(name) if "deletionTimestamp" not in p["metadata"]]
    if len(pods) != replicas or any(pod_gated(p) or p["status"].get("phase") != "Running" for p in pods):
        return False
    ws = owned_by(list_v(env, "workloads", version), name)
    if len(ws) != 1 or min_count_of(ws[0]) != replicas:
        return False
    active = [rs for rs in env.replica_sets(name) if rs["spec"].get("replicas", 1) > 0]
    pgs = {p["metadata"]["name"]: p for p in list_v(env, "podgroups", version)}
    return len(active) == 1 and min_count_of(pgs.get(pod_group_of(active[0]), {"spec": {}})) == replicas


def gauge(rec, version):
    for line in rec.metrics_text().splitlines():
        if line.startswith(f'wasd_reconciler_scheduling_api_version{{version="{version}"}} '):
            return float(line.rsplit(" ", 1)[1])
    return None


class SchedulingApiVersionsTest(unittest.TestCase):

    def test_both_versions_served_writes_go_through_v1(self):
        with Cluster(["v1", "v1beta1"]) as env:
            rec = env.start_reconciler("--leader-elect=false", "--workers", "2")
            env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment("both", 2))
            wait_for(lambda: converged(env, "both", 2, "v1"), 40, 0.2, "both: converged through v1")
            self.assertEqual(gauge(rec, "v1"), 1)
            self.assertEqual(gauge(rec, "v1beta1"), 0)
            self.assertIn("using scheduling.k8s.io/v1 for Workloads and PodGroups", rec.logs())
            self.assertIn("v1 (also served: v1beta1)", rec.logs())
            writes = scheduling_writes(env)
            self.assertEqual(sorted(m for m, _, _ in writes), ["POST", "POST"], writes)
            self.assertEqual({v for _, v, _ in writes}, {"v1"}, writes)
            # The reconciler read nothing through v1beta1 either (discovery aside).
            beta = [e["path"] for e in env.srv.Audit(user=RECONCILER_USER)
                    if e["path"].startswith(SCHED + "v1beta1/")]
            self.assertEqual(beta, [])
            # The objects it wrote say v1, and so does the PodGroup's Workload reference;
            # through v1beta1 they are the same objects.
            w = owned_by(list_v(env, "workloads", "v1"), "both")[0]
            self.assertEqual(w["apiVersion"], "scheduling.k8s.io/v1")
            rs = [r for r in env.replica_sets("both") if r["spec"]["replicas"] > 0][0]
            pg = {p["metadata"]["name"]: p for p in list_v(env, "podgroups", "v1")}[pod_group_of(rs)]
            self.assertEqual(pg["metadata"]["ownerReferences"][1],
                             {"apiVersion": "scheduling.k8s.io/v1", "kind": "Workload",
                              "name": w["metadata"]["name"], "uid": w["metadata"]["uid"]})
            beta_pg = {p["metadata"]["name"]: p for p in list_v(env, "podgroups", "v1beta1")}[pod_group_of(rs)]
            self.assertEqual(beta_pg["metadata"]["uid"], pg["metadata"]["uid"])

    def test_upgrade_v1beta1_to_v1_only_under_a_running_reconciler(self):
        with Cluster(["v1beta1"]) as env:
            rec = env.start_reconciler("--leader-elect=false", "--workers", "2",
                                       "--api-check-interval", "1s")
            env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment("up", 2))
            wait_for(lambda: converged(env, "up", 2, "v1beta1"), 40, 0.2, "up: converged through v1beta1")
            self.assertEqual(gauge(rec, "v1beta1"), 1)
            before = {(m, v) for m, v, _ in scheduling_writes(env)}
            self.assertEqual(before, {("POST", "v1beta1")})
            uids = {o["metadata"]["uid"] for o in owned_by(list_v(env, "workloads", "v1beta1"), "up")}
            uids |= {p["metadata"]["uid"] for p in list_v(env, "podgroups", "v1beta1")}
            pid = rec.pid
            seq = env.srv.LastSeq()

            # The upgrade: v1 only; every watch on scheduling.k8s.io is cut.
            env.srv.SetSchedulingVersions(["v1"])
            wait_for(lambda: gauge(rec, "v1") == 1, 20, 0.2, "the reconciler uses v1")
            self.assertEqual(gauge(rec, "v1beta1"), 0)
            self.assertIn("Workload and PodGroup watches moved to scheduling.k8s.io/v1", rec.logs())
            # Its watches run on v1 again (a list and a watch of each kind).
            wait_for(lambda: {p for p in ("workloads", "podgroups")
                              if any(e["path"] == SCHED + "v1/" + p and e.get("status") == 200
                                     for e in env.srv.Audit(since=seq, user=RECONCILER_USER))}
                     == {"workloads", "podgroups"}, 20, 0.2, "lists of v1 workloads and podgroups")

            # Nothing was created again: the objects are the same ones. The one write is the
            # PodGroup's Workload ownerReference moving to v1 (L5: it follows the version in
            # use, so the garbage collector can resolve it once v1beta1 is removed).
            wait_for(lambda: scheduling_writes(env, seq), 20, 0.2, "the ownerReference moved to v1")
            time.sleep(1.0)
            moved = scheduling_writes(env, seq)
            self.assertEqual([(m, v) for m, v, path in moved if "/podgroups/" in path], [("PATCH", "v1")], moved)
            self.assertEqual(len(moved), 1, moved)
            for pg in list_v(env, "podgroups", "v1"):
                refs = [o for o in pg["metadata"]["ownerReferences"] if o["kind"] == "Workload"]
                self.assertEqual([o["apiVersion"] for o in refs], ["scheduling.k8s.io/v1"])
            after = {o["metadata"]["uid"] for o in owned_by(list_v(env, "workloads", "v1"), "up")}
            after |= {p["metadata"]["uid"] for p in list_v(env, "podgroups", "v1")}
            self.assertEqual(after, uids)

            # It keeps reconciling, through v1, without a restart.
            seq = env.srv.LastSeq()
            env.scale("up", 3)
            wait_for(lambda: converged(env, "up", 3, "v1"), 40, 0.2, "up: scaled to 3 through v1")
            writes = scheduling_writes(env, seq)
            self.assertEqual(sorted(m for m, _, _ in writes), ["PATCH", "PATCH"], writes)
            self.assertEqual({v for _, v, _ in writes}, {"v1"}, writes)
            self.assertEqual(rec.pid, pid)
            self.assertIsNone(rec.proc.poll())
            # A new Deployment after the upgrade is managed through v1 from the start.
            env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment("fresh", 2))
            wait_for(lambda: converged(env, "fresh", 2, "v1"), 40, 0.2, "fresh: converged through v1")
            self.assertNotIn("APINotServed", {e.get("reason") for e in env.events()})

            # The API taken away after start (L2): noticed on the next check, the
            # served gauge back to 0, one APINotServed Event per Deployment; back again,
            # back to 1 with nothing re-created.
            seq = env.srv.LastSeq()
            env.srv.SetSchedulingVersions([])
            wait_for(lambda: rec.metric("wasd_reconciler_scheduling_api_served") == 0, 20, 0.2,
                     "scheduling_api_served 0")
            wait_for(lambda: {e["involvedObject"]["name"] for e in env.events("APINotServed")}
                     >= {"up", "fresh"}, 20, 0.2, "APINotServed Events")
            self.assertIn("is no longer served", rec.logs())
            env.srv.SetSchedulingVersions(["v1"])
            wait_for(lambda: rec.metric("wasd_reconciler_scheduling_api_served") == 1, 20, 0.2,
                     "scheduling_api_served 1")
            self.assertEqual([m for m, _, _ in scheduling_writes(env, seq) if m != "PATCH"], [])

    def test_v1_only_with_the_in_tree_deployment_integration(self):
        with Cluster(["v1"], extra=["--in-tree-deployment"]) as env:
            rec = env.start_reconciler("--leader-elect=false", "--workers", "2")
            self.assertEqual(gauge(rec, "v1"), 1)
            # An annotation carrier: wasd's, through v1.
            env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment("ann", 2))
            # A field carrier: the in-tree controller's. It even carries wasd's marker
            # label (as an older wasd webhook would have set): the reconciler sees it and
            # must still stand down.
            intree = deployment("intree", 2, scheduling=False, labels={"wasd.io/managed": "true"})
            intree["spec"]["scheduling"] = {"schedulingPolicy": {"gang": {"minCount": 2}}}
            stored = env.create(f"/apis/apps/v1/namespaces/{NS}/deployments", intree)
            self.assertIn("scheduling", stored["spec"], "the API server kept spec.scheduling")

            wait_for(lambda: converged(env, "ann", 2, "v1"), 40, 0.2, "ann: converged through v1")
            # The in-tree controller made its Workload and PodGroup for "intree".
            wait_for(lambda: len(owned_by(list_v(env, "workloads", "v1"), "intree")) == 1, 20, 0.2,
                     "the in-tree Workload")
            wait_for(lambda: any(p["metadata"]["name"].startswith("intree-")
                                 for p in list_v(env, "podgroups", "v1")), 20, 0.2, "the in-tree PodGroup")
            # Where wasd's mutating webhook runs it takes the stray marker off (the field is
            # not wasd's carrier), so the reconciler never caches the Deployment; where the
            # marker stays, the reconciler stands down and says so.
            def stood_down():
                d = env.srv.Get(f"/apis/apps/v1/namespaces/{NS}/deployments/intree") or stored
                labels = d.get("metadata", {}).get("labels") or {}
                marked = labels.get("wasd.io/managed") == "true"
                return (not marked) or "in-tree Deployment controller manages its" in rec.logs()
            wait_for(stood_down, 20, 0.2, "the reconciler's stand-down (or no marker to act on)")
            # Let a resync-free reconcile of every pod event pass: a fresh change to the
            # in-tree Deployment (scale) is again left alone.
            env.scale("intree", 3)
            wait_for(lambda: len([p for p in env.pods("intree")
                                  if "deletionTimestamp" not in p["metadata"]]) == 3, 20, 0.2, "3 intree pods")
            env.scale("ann", 3)
            wait_for(lambda: converged(env, "ann", 3, "v1"), 40, 0.2, "ann: scaled through v1")

            # wasd wrote nothing for "intree": no Workload, PodGroup, pod or status write.
            def names_intree(e):
                body = e.get("body")
                meta = body.get("metadata") if isinstance(body, dict) else None
                name = meta.get("name", "") if isinstance(meta, dict) else ""
                return re.search(r"/intree(-|/|$)", e["path"]) or str(name).startswith("intree")
            intree_writes = [e for e in env.all_reconciler_writes() if names_intree(e)]
            self.assertEqual(intree_writes, [])
            self.assertEqual(len(owned_by(list_v(env, "workloads", "v1"), "intree")), 1)
            events = [e for e in env.events() if e["involvedObject"]["name"] == "intree"
                      and e.get("source", {}).get("component") == "wasd-reconciler"]
            self.assertEqual(events, [])
            # Said at most once (or never, where the webhook took the stray marker off).
            self.assertLessEqual(rec.logs().count("in-tree Deployment controller manages its"), 1)
            # "ann" went through v1 only.
            self.assertEqual({v for _, v, _ in scheduling_writes(env)}, {"v1"})


if __name__ == "__main__":
    unittest.main()
