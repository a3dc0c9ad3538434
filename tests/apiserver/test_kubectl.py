"""kubectl end to end against the test API server: apply, get, describe, scale,
delete; strict decoding; defaulting; the Deployment controller; garbage collection."""
import json
import unittest

from apiserver.harness import ApiServer
from lib.wait import wait_for

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels: {{app: {name}}}
spec:
  replicas: {replicas}
{extra}  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: web
        image: {image}
        ports:
        - containerPort: 80
"""


def Manifest(name, replicas=2, image="nginx:1.27", extra=""):
    return DEPLOY.format(name=name, replicas=replicas, image=image, extra=extra)


class KubectlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = ApiServer().Start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.Stop()

    def Deployment(self, name):
        return self.srv.Get(f"/apis/apps/v1/namespaces/default/deployments/{name}")

    def Owned(self, plural, owner_uid, group="apps/v1"):
        base = "/apis/apps/v1" if group == "apps/v1" else "/api/v1"
        items = self.srv.Get(f"{base}/namespaces/default/{plural}")["items"]
        return [o for o in items if any(r["uid"] == owner_uid for r in o["metadata"].get("ownerReferences") or [])]

    def Ready(self, name, replicas):
        d = self.Deployment(name)
        st = d.get("status") or {}
        return st.get("readyReplicas") == replicas and st.get("updatedReplicas") == replicas and \
            st.get("replicas") == replicas and st.get("observedGeneration") == d["metadata"]["generation"]

    def test_apply_get_describe_scale_delete(self):
        out = self.srv.Kubectl("apply", "-f", "-", input=Manifest("shop")).stdout
        self.assertEqual(out.strip(), "deployment.apps/shop created")
        wait_for(lambda: self.Ready("shop", 2), 20, what="shop ready")
        get = self.srv.Kubectl("get", "deploy", "shop").stdout.split("\n")
        self.assertEqual(get[0].split(), ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"])
        self.assertEqual(get[1].split()[:4], ["shop", "2/2", "2", "2"])
        pods = self.srv.Kubectl("get", "pods", "-l", "app=shop", "-o", "name").stdout.split()
        self.assertEqual(len(pods), 2)
        desc = self.srv.Kubectl("describe", "deployment", "shop").stdout
        self.assertIn("RollingUpdateStrategy:  25% max unavailable, 25% max surge", desc)
        self.assertRegex(desc, r"NewReplicaSet:\s+shop-[a-z0-9]+ \(2/2 replicas created\)")
        self.assertRegex(desc, r"ScalingReplicaSet\s+.*Scaled up replica set shop-[a-z0-9]+ from 0 to 2")
        # re-apply unchanged: no write of the object
        out = self.srv.Kubectl("apply", "-f", "-", input=Manifest("shop")).stdout
        self.assertEqual(out.strip(), "deployment.apps/shop unchanged")
        self.srv.Kubectl("scale", "deployment", "shop", "--replicas=4")
        wait_for(lambda: self.Ready("shop", 4), 20, what="shop scaled to 4")
        scale_writes = self.srv.Audit(user="admin", methods=("PATCH", "PUT"), path="/deployments/shop/scale")
        self.assertEqual(len(scale_writes), 1)
        self.assertEqual(scale_writes[0]["body"], {"spec": {"replicas": 4}})
        rs = self.srv.Kubectl("get", "rs", "-l", "app=shop", "-o", "json").stdout
        rs = json.loads(rs)["items"]
        self.assertEqual(len(rs), 1)
        self.assertEqual(rs[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1")
        out = self.srv.Kubectl("delete", "deployment", "shop", "--timeout=30s").stdout
        self.assertEqual(out.strip(), 'deployment.apps "shop" deleted')
        wait_for(lambda: not self.srv.Get("/api/v1/namespaces/default/pods?labelSelector=app%3Dshop")["items"],
                20, what="pods collected")
        self.assertEqual(self.srv.Get("/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dshop")["items"], [])

    def test_spec_scheduling_unknown_as_on_1_37(self):
        # Without --in-tree-deployment the server plays v1.37.2, whose Deployment type has
        # no spec.scheduling: kubectl's strict field validation gets the real server's
        # refusal (tests/cluster/test_examples_real.py); --validate=false prunes it.
        extra = "  scheduling:\n    schedulingPolicy: {gang: {minCount: 2}}\n"
        p = self.srv.Kubectl("apply", "-f", "-", input=Manifest("gang", extra=extra), check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('cannot be handled as a Deployment: strict decoding error: unknown field '
                      '"spec.scheduling"', p.stderr)
        post = self.srv.Audit(methods=("POST",), path="/deployments")[-1]
        self.assertEqual(post["query"]["fieldValidation"], "Strict")
        self.assertEqual(post["status"], 400)
        self.srv.Kubectl("apply", "--validate=false", "-f", "-", input=Manifest("gang", extra=extra))
        self.assertNotIn("scheduling", self.Deployment("gang")["spec"])
        # patches too: a strict one is refused as for any unknown field
        for field in ("scheduling", "gangScheduling"):
            status, _, out = self.srv.Request(
                "PATCH", "/apis/apps/v1/namespaces/default/deployments/gang?fieldValidation=Strict",
                {"spec": {field: {}}}, content_type="application/strategic-merge-patch+json")
            self.assertEqual(status, 422)
            self.assertIn(f'strict decoding error: unknown field "spec.{field}"', out["message"])

    def test_defaulting_of_deployment_and_pods(self):
        self.srv.Kubectl("apply", "-f", "-", input=Manifest("defaults", replicas=1).replace("  replicas: 1\n", ""))
        d = self.Deployment("defaults")
        spec = d["spec"]
        self.assertEqual(spec["replicas"], 1)
        self.assertEqual(spec["strategy"], {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        self.assertEqual((spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]), (10, 600))
        ps = spec["template"]["spec"]
        self.assertEqual((ps["restartPolicy"], ps["dnsPolicy"], ps["schedulerName"],
                          ps["terminationGracePeriodSeconds"], ps["securityContext"]),
                         ("Always", "ClusterFirst", "default-scheduler", 30, {}))
        c = ps["containers"][0]
        self.assertEqual((c["terminationMessagePath"], c["terminationMessagePolicy"], c["imagePullPolicy"]),
                         ("/dev/termination-log", "File", "IfNotPresent"))
        self.assertEqual(c["ports"][0]["protocol"], "TCP")
        self.assertEqual(d["metadata"]["generation"], 1)
        self.assertTrue(d["metadata"]["uid"] and d["metadata"]["creationTimestamp"])
        pod = wait_for(lambda: (self.Owned("pods", self.Owned("replicasets", d["metadata"]["uid"])[0]["metadata"]["uid"],
                                          "v1") or [None])[0], 20, what="pod of defaults")
        self.assertEqual((pod["spec"]["serviceAccountName"], pod["spec"]["enableServiceLinks"],
                          pod["spec"]["priority"]), ("default", True, 0))
        self.assertIn("node.kubernetes.io/not-ready", [t["key"] for t in pod["spec"]["tolerations"]])
        self.assertTrue(pod["metadata"]["name"].startswith(pod["metadata"]["ownerReferences"][0]["name"] + "-"))
        # latest / untagged images default to Always
        p = self.srv.Kubectl("create", "deployment", "untagged", "--image=busybox")
        self.assertIn("created", p.stdout)
        self.assertEqual(self.Deployment("untagged")["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
                         "Always")

    def test_recreate_rollout_and_revisions(self):
        extra = "  strategy: {type: Recreate}\n"
        self.srv.Kubectl("apply", "-f", "-", input=Manifest("rec", replicas=3, extra=extra))
        wait_for(lambda: self.Ready("rec", 3), 20, what="rec ready")
        uid = self.Deployment("rec")["metadata"]["uid"]
        first = self.Owned("replicasets", uid)[0]["metadata"]["name"]
        since = self.srv.LastSeq()
        self.srv.Kubectl("apply", "-f", "-", input=Manifest("rec", replicas=3, image="nginx:1.28", extra=extra))
        wait_for(lambda: self.Ready("rec", 3) and len(self.Owned("replicasets", uid)) == 2, 20, what="rollout")
        rss = {r["metadata"]["name"]: r for r in self.Owned("replicasets", uid)}
        second = [n for n in rss if n != first][0]
        self.assertEqual(rss[first]["spec"]["replicas"], 0)
        self.assertEqual(rss[second]["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2")
        self.assertEqual(self.Deployment("rec")["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2")
        h = rss[second]["metadata"]["labels"]["pod-template-hash"]
        self.assertEqual(second, f"rec-{h}")
        self.assertEqual(rss[second]["spec"]["selector"]["matchLabels"]["pod-template-hash"], h)
        # Recreate: the old ReplicaSet reached 0 and its pods were gone before the new one was created
        writes = self.srv.Audit(since=since, source="controller", methods=("POST", "PUT", "DELETE"))
        scale_down = next(i for i, e in enumerate(writes) if e["method"] == "PUT" and
                          e["path"].endswith(f"/replicasets/{first}") and e["body"]["spec"]["replicas"] == 0)
        last_old_pod_delete = max(i for i, e in enumerate(writes) if e["method"] == "DELETE" and
                                  f"/pods/{first}-" in e["path"])
        new_rs_create = next(i for i, e in enumerate(writes) if e["method"] == "POST" and
                             e["path"].endswith("/replicasets") and e["body"]["metadata"]["name"] == second)
        self.assertLess(scale_down, last_old_pod_delete)
        self.assertLess(last_old_pod_delete, new_rs_create)
        pods = self.srv.Get("/api/v1/namespaces/default/pods?labelSelector=app%3Drec")["items"]
        self.assertEqual({p["metadata"]["labels"]["pod-template-hash"] for p in pods}, {h})

    def test_garbage_collection_background_and_foreground(self):
        for name, policy in (("gc-bg", "background"), ("gc-fg", "foreground")):
            self.srv.Kubectl("apply", "-f", "-", input=Manifest(name, replicas=2))
            wait_for(lambda: self.Ready(name, 2), 20, what=f"{name} ready")
            uid = self.Deployment(name)["metadata"]["uid"]
            rs_uid = self.Owned("replicasets", uid)[0]["metadata"]["uid"]
            since = self.srv.LastSeq()
            self.srv.Kubectl("delete", "deployment", name, f"--cascade={policy}", "--timeout=30s")
            wait_for(lambda: not self.Owned("replicasets", uid) and not self.Owned("pods", rs_uid, "v1"), 20,
                    what=f"{name} dependents collected")
            self.assertIsNone(self.Deployment(name))
            gc = self.srv.Audit(since=since, user="system:serviceaccount:kube-system:generic-garbage-collector")
            deleted = [e["path"].rsplit("/", 2)[-2] for e in gc if e["method"] == "DELETE"]
            self.assertIn("replicasets", deleted)
            if policy == "foreground":
                # the owner waited (foregroundDeletion finalizer) until its dependents were gone
                d_del = [e for e in self.srv.Audit(since=since, user="admin", methods=("DELETE",))][0]
                self.assertEqual(d_del["body"]["propagationPolicy"], "Foreground")
                fin = [e for e in gc if e["method"] == "PUT" and e["path"].endswith(f"/deployments/{name}")]
                self.assertEqual(len(fin), 1)
                self.assertNotIn("foregroundDeletion", fin[0]["body"]["metadata"].get("finalizers") or [])
                self.assertTrue(all(e["seq"] < fin[0]["seq"] for e in gc if e["method"] == "DELETE"
                                    and "/replicasets/" in e["path"]))
        # orphan: the ReplicaSet survives without its owner reference
        self.srv.Kubectl("apply", "-f", "-", input=Manifest("gc-or", replicas=1))
        wait_for(lambda: self.Ready("gc-or", 1), 20, what="gc-or ready")
        uid = self.Deployment("gc-or")["metadata"]["uid"]
        rs_name = self.Owned("replicasets", uid)[0]["metadata"]["name"]
        self.srv.Kubectl("delete", "deployment", "gc-or", "--cascade=orphan", "--timeout=30s")
        rs = wait_for(lambda: (lambda r: r if r and not r["metadata"].get("ownerReferences") else None)(
            self.srv.Get(f"/apis/apps/v1/namespaces/default/replicasets/{rs_name}")), 20, what="orphaned rs")
        self.assertEqual(rs["spec"]["replicas"], 1)


if __name__ == "__main__":
    unittest.main()
