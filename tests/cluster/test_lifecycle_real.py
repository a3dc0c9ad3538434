#!/usr/bin/env python3
"""REAL CONTROL PLANE: the gang lifecycle of one opted-in Deployment with the
real Deployment and ReplicaSet controllers, the real kube-scheduler (gang
plugin), garbage collector and podgroup-protection controller of v1.37.2, and
wasd installed by helm with the chart's defaults (the scheduler hold). What
the test API server's e2e.test_reconciler_lifecycle shows on its model, shown
here on the real components, with the reconciler's writes read from the real
API server's audit log:

- create: one Workload owned by the Deployment and one PodGroup for the
  ReplicaSet (owned by it, referencing the Workload), every pod linked to it
  and bound, and no write of wasd's to any pod;
- scale up and down with a derived minCount: Workload and PodGroup follow the
  replicas, the PodGroup keeps its UID;
- the scale floor: `kubectl scale` below an explicit gang.minCount is denied
  with kubectl's message naming the field; zero is allowed, the PodGroup is
  released at zero, the Workload keeps its minCount, and scaling back creates
  the group again and binds the gang;
- a Recreate rollout (`kubectl set image`) gives the new ReplicaSet its own
  PodGroup and releases the old one; `kubectl rollout undo` brings the first
  revision back under a PodGroup of its own again;
- `kubectl delete deployment`: the real garbage collector and
  podgroup-protection remove the Workload and the PodGroups, and wasd writes
  nothing for it;
- `wasd explain` on a gang that fits (Scheduled) and on one that cannot fit
  (Unschedulable, with the fit preview's numbers);
- a Deployment with the annotation that the webhook never saw (kube-system is
  excluded from wasd's webhooks): `wasd explain` says NotAdmitted, not
  "PodGroupMissing, check the reconciler", and the reconciler's wasd_gangs
  counts it under NotAdmitted.
"""
import json
import os
import subprocess
import unittest

from cluster.realcluster import APP_NS, NS, RealCluster, run, wait_until
from lib.manifests import deployment, min_count_of, pod_group_of
from lib.paths import WASD

RECONCILER = f"system:serviceaccount:{NS}:wasd-reconciler"


class LifecycleOnRealControlPlane(RealCluster):
    CLUSTER_ENV = {"WASD_CLUSTER_AUDIT": "1"}

    installed = False

    def setUp(self):
        if not type(self).installed:  # one helm install for the whole class
            type(self).installed = True
            self.install_chart()

    # ----------------------------------------------------------- helpers

    def apply(self, obj):
        p = subprocess.run([os.path.join(self.bin, "kubectl"), "apply", "-f", "-"], input=json.dumps(obj),
                           capture_output=True, text=True, env=self.env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)

    def workloads(self, name):
        return [w for w in self.get("workloads.scheduling.k8s.io", "-n", APP_NS)["items"]
                if any(r["name"] == name and r["kind"] == "Deployment"
                       for r in w["metadata"].get("ownerReferences", []))]

    def groups(self, name):
        return {g["metadata"]["name"]: g for g in self.get("podgroups.scheduling.k8s.io", "-n", APP_NS)["items"]
                if g["metadata"]["name"].startswith(name + "-")}

    def active_rs(self, name):
        rss = [rs for rs in self.get("replicasets", "-n", APP_NS, "-l", f"app={name}")["items"]
               if rs["spec"].get("replicas", 0) > 0]
        return rss[0] if len(rss) == 1 else None

    def converged(self, name, replicas, min_count, timeout=180):
        """Waits until `replicas` live pods are bound, the Workload has
        `min_count` and the active ReplicaSet's PodGroup exists with it (and is
        the only PodGroup of the Deployment); returns (rs, podgroup, pods)."""
        def ok():
            pods = self.live_pods(APP_NS, f"app={name}")
            bound = [p for p in pods if p["spec"].get("nodeName")]
            ws = self.workloads(name)
            rs = self.active_rs(name)
            groups = self.groups(name)
            want = pod_group_of(rs) if rs else None
            good = (len(pods) == replicas and len(bound) == replicas and len(ws) == 1
                    and min_count_of(ws[0]) == min_count and list(groups) == [want]
                    and min_count_of(groups[want]) == min_count)
            return good, (rs, groups.get(want), pods) if good else (
                f"{len(bound)}/{len(pods)} bound, workloads {[min_count_of(w) for w in ws]}, "
                f"groups {[(g, min_count_of(v)) for g, v in groups.items()]}, want {want}")
        return wait_until(f"{name}: {replicas} bound, minCount {min_count}", ok, timeout=timeout)

    def pod_writes(self, offset):
        return [w for w in self.audit_writes(RECONCILER, offset) if w[1].startswith("pods")]

    def group_writes(self, offset):
        return sorted((v, n) for v, r, n, _ in self.audit_writes(RECONCILER, offset) if r == "podgroups")

    def explain(self, name):
        """`wasd explain -o json`: the diagnosis, after checking the exit code
        (0 scheduled, 3 pending; docs/reference/cli.md)."""
        p = run(WASD, "explain", f"deployment/{name}", "-n", APP_NS, "-o", "json", env=self.env, check=False)
        d = json.loads(p.stdout)
        self.assertEqual(p.returncode, 0 if d["status"] == "True" else 3, p.stderr)
        return d

    # ------------------------------------------------------------- tests

    def test_create_scale_up_and_down_with_a_derived_min_count(self):
        offset = self.audit_offset()
        self.apply(deployment("life", 3, image="worker:v1"))
        rs, group, pods = self.converged("life", 3, 3)
        w = self.workloads("life")[0]
        d = self.get("deployment", "-n", APP_NS, "life")
        self.assertEqual([(o["kind"], o["uid"], o.get("controller")) for o in w["metadata"]["ownerReferences"]],
                         [("Deployment", d["metadata"]["uid"], True)])
        owners = group["metadata"]["ownerReferences"]
        self.assertEqual((owners[0]["kind"], owners[0]["uid"]), ("ReplicaSet", rs["metadata"]["uid"]))
        self.assertIn(("Workload", w["metadata"]["uid"]), [(o["kind"], o["uid"]) for o in owners])
        for p in pods:
            self.assertEqual(p["spec"]["schedulingGroup"]["podGroupName"], group["metadata"]["name"])
            self.assertFalse(p["spec"].get("schedulingGates"), p["metadata"]["name"])
        uid = group["metadata"]["uid"]

        self.kubectl("scale", "-n", APP_NS, "deployment/life", "--replicas=5")
        _, group, _ = self.converged("life", 5, 5)
        self.assertEqual(group["metadata"]["uid"], uid, "scaling keeps the PodGroup")
        self.kubectl("scale", "-n", APP_NS, "deployment/life", "--replicas=2")
        _, group, _ = self.converged("life", 2, 2)
        self.assertEqual(group["metadata"]["uid"], uid, "scaling keeps the PodGroup")
        self.assertEqual(self.pod_writes(offset), [], "the scheduler hold writes no pod")
        self.assertEqual(self.group_writes(offset), [("create", group["metadata"]["name"])]
                         + [("patch", group["metadata"]["name"])] * 2)

        offset = self.audit_offset()
        self.kubectl("delete", "-n", APP_NS, "deployment", "life", "--wait=false")
        wait_until("Workload, PodGroups and pods of life collected",
                   lambda: (not self.workloads("life") and not self.groups("life")
                            and not self.get("pods", "-n", APP_NS, "-l", "app=life")["items"], None), timeout=180)
        ours = [w for w in self.audit_writes(RECONCILER, offset)
                if w[1] in ("workloads", "podgroups", "pods")]
        self.assertEqual(ours, [], "the garbage collector removes them, not wasd")

    def test_scale_floor_and_scale_to_zero_and_back(self):
        self.apply(deployment("floor", 4, min_count=3, image="worker:v1"))
        rs, group, _ = self.converged("floor", 4, 3)
        p = self.kubectl("scale", "-n", APP_NS, "deployment/floor", "--replicas=2", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('spec.replicas: Invalid value: 2: must be greater than or equal to '
                      'metadata.annotations[wasd.io/scheduling].schedulingPolicy.gang.minCount (3)', p.stderr)
        self.assertEqual(self.get("deployment", "-n", APP_NS, "floor")["spec"]["replicas"], 4)

        offset = self.audit_offset()
        self.kubectl("scale", "-n", APP_NS, "deployment/floor", "--replicas=0")
        wait_until("floor: PodGroup released at zero, pods gone",
                   lambda: (not self.groups("floor") and not self.get("pods", "-n", APP_NS, "-l", "app=floor")["items"],
                            None), timeout=180)
        self.assertEqual(min_count_of(self.workloads("floor")[0]), 3, "the Workload keeps its minCount at zero")
        self.assertEqual(self.group_writes(offset), [("delete", group["metadata"]["name"])])

        self.kubectl("scale", "-n", APP_NS, "deployment/floor", "--replicas=3")
        rs2, group2, _ = self.converged("floor", 3, 3)
        self.assertEqual(rs2["metadata"]["uid"], rs["metadata"]["uid"], "same revision")
        self.assertNotEqual(group2["metadata"]["uid"], group["metadata"]["uid"], "a new PodGroup object")
        self.assertEqual(self.pod_writes(offset), [])
        self.kubectl("delete", "-n", APP_NS, "deployment", "floor", "--wait=false")

    def test_recreate_rollout_and_rollout_undo(self):
        self.apply(deployment("roll", 3, image="worker:v1"))
        rs1, group1, _ = self.converged("roll", 3, 3)
        offset = self.audit_offset()
        self.kubectl("set", "image", "-n", APP_NS, "deployment/roll", "c=worker:v2")
        rs2, group2, pods = self.converged("roll", 3, 3)
        self.assertNotEqual(rs2["metadata"]["uid"], rs1["metadata"]["uid"])
        self.assertEqual({p["spec"]["containers"][0]["image"] for p in pods}, {"worker:v2"})
        self.assertEqual(self.group_writes(offset),
                         sorted([("create", group2["metadata"]["name"]), ("delete", group1["metadata"]["name"])]))

        offset = self.audit_offset()
        self.kubectl("rollout", "undo", "-n", APP_NS, "deployment/roll")
        rs3, group3, pods = self.converged("roll", 3, 3)
        self.assertEqual(rs3["metadata"]["uid"], rs1["metadata"]["uid"], "undo brings the first ReplicaSet back")
        self.assertEqual(group3["metadata"]["name"], group1["metadata"]["name"], "its PodGroup name again")
        self.assertEqual({p["spec"]["containers"][0]["image"] for p in pods}, {"worker:v1"})
        self.assertEqual(self.group_writes(offset),
                         sorted([("create", group3["metadata"]["name"]), ("delete", group2["metadata"]["name"])]))
        self.assertEqual(self.pod_writes(offset), [])
        self.kubectl("delete", "-n", APP_NS, "deployment", "roll", "--wait=false")

    def test_explain_a_gang_that_fits_and_one_that_cannot(self):
        self.apply(deployment("fits", 2, image="worker:v1"))
        self.converged("fits", 2, 2)
        d = self.explain("fits")
        self.assertEqual((d["status"], d["reason"]), ("True", "Scheduled"), d)
        self.assertEqual(d["counts"]["bound"], 2, d)

        # 3 Nodes of 8 nvidia.com/gpu each (the node agent's default): 4
        # members asking for 8 each cannot all be placed.
        big = deployment("toobig", 4, image="worker:v1")
        big["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "requests": {"nvidia.com/gpu": "8"}, "limits": {"nvidia.com/gpu": "8"}}
        self.apply(big)

        def diagnosed():
            d = self.explain("toobig")
            return d["reason"] == "Unschedulable", d
        d = wait_until("toobig: Unschedulable", diagnosed, timeout=120)
        self.assertEqual(d["status"], "False", d)
        self.assertIn("room for 3 of 4 members", json.dumps(d), d)
        pods = self.live_pods(APP_NS, "app=toobig")
        self.assertEqual([p["metadata"]["name"] for p in pods if p["spec"].get("nodeName")], [],
                         "no member of a gang that cannot fit is bound alone")
        for n in ("fits", "toobig"):
            self.kubectl("delete", "-n", APP_NS, "deployment", n, "--wait=false")

    def test_a_deployment_the_webhook_never_saw_is_not_admitted(self):
        self.apply(dict(deployment("unseen", 2, image="worker:v1", namespace="kube-system")))
        d = self.get("deployment", "-n", "kube-system", "unseen")
        self.assertNotIn("wasd.io/managed", d["metadata"].get("labels", {}), "kube-system reached the webhook")
        p = run(WASD, "explain", "deployment/unseen", "-n", "kube-system", "-o", "json", env=self.env, check=False)
        diag = json.loads(p.stdout)
        self.assertEqual((p.returncode, diag["status"], diag["reason"]), (3, "False", "NotAdmitted"), diag)
        self.assertIn("the webhook never admitted it", diag["message"])
        self.assertIn("kubectl rollout restart deployment/unseen", diag["nextStep"])

        def counted():
            leader = [q for q in self.live_pods(NS, "app.kubernetes.io/component=reconciler")
                      if q["status"].get("podIP")]
            texts = []
            for q in leader:
                texts.append(self.scrape(q["status"]["podIP"]))
            return any('wasd_gangs{reason="NotAdmitted"} 1\n' in t for t in texts), [
                line for t in texts for line in t.splitlines() if line.startswith("wasd_gangs{")]
        wait_until("wasd_gangs counts the Deployment under NotAdmitted", counted, timeout=60)
        self.kubectl("delete", "-n", "kube-system", "deployment", "unseen", "--wait=false")


if __name__ == "__main__":
    unittest.main(verbosity=2)
