"""KEP-6276 played by the test API server (intree.py): without --in-tree-deployment the
Deployment strategy drops spec.scheduling after the mutating webhooks and before
validation and the validating webhooks; with it the field is kept and immutable, the
KEP's rules apply, and the controllers make one Workload per Deployment, one PodGroup per
ReplicaSet and link each pod at creation."""
import base64
import copy
import json
import tempfile
import unittest

from apiserver import intree
from apiserver.harness import ApiServer
from lib.scripted_webhook import ScriptedWebhook
from lib.wait import wait_for

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
PODS = "/api/v1/namespaces/default/pods"
CONTROLLER = "system:serviceaccount:kube-system:deployment-controller"


def Deployment(name, replicas=3, scheduling=None, strategy="Recreate"):
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": strategy},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}
    if scheduling is not None:
        spec["scheduling"] = scheduling
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


GANG = {"schedulingPolicy": {"gang": {}}, "disruptionMode": {"all": {}}}


def AddScheduling(path, req):
    """The mutating webhook: adds spec.scheduling to Deployments named add-*."""
    if path == "/add" and req["object"]["metadata"]["name"].startswith("add-") and \
            "scheduling" not in req["object"]["spec"]:
        ops = [{"op": "add", "path": "/spec/scheduling", "value": GANG}]
        return {"allowed": True, "patchType": "JSONPatch",
                "patch": base64.b64encode(json.dumps(ops).encode()).decode()}
    return {"allowed": True}


class GateOffTest(unittest.TestCase):
    def test_dropped_after_mutating_before_validating(self):
        with tempfile.TemporaryDirectory() as tmp, ApiServer(args=["--controllers", ""]) as srv:
            hook = ScriptedWebhook(tmp, AddScheduling)
            try:
                rules = [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                          "resources": ["deployments"]}]
                for kind, res, path in (("MutatingWebhookConfiguration", "mutatingwebhookconfigurations", "/add"),
                                        ("ValidatingWebhookConfiguration", "validatingwebhookconfigurations", "/seen")):
                    status, _, out = srv.Request("POST", f"/apis/admissionregistration.k8s.io/v1/{res}", {
                        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": "h"},
                        "webhooks": [{"name": f"h{path.replace('/', '.')}.test", "admissionReviewVersions": ["v1"],
                                      "sideEffects": "None", "rules": rules,
                                      "clientConfig": {"url": f"https://localhost:{hook.port}{path}",
                                                       "caBundle": hook.ca_bundle}}]})
                    self.assertEqual(status, 201, out)
                # Sent by the client: v1.37.2's Deployment type has no such field, so
                # strict decoding refuses it; Ignore prunes it before any webhook.
                status, _, out = srv.Request("POST", DEPLOYS + "?fieldValidation=Strict",
                                             Deployment("sent", scheduling=GANG))
                self.assertEqual(status, 400, out)
                self.assertIn('strict decoding error: unknown field "spec.scheduling"', out["message"])
                status, _, out = srv.Request("POST", DEPLOYS + "?fieldValidation=Ignore",
                                             Deployment("sent", scheduling=GANG))
                self.assertEqual(status, 201, out)
                self.assertNotIn("scheduling", out["spec"])
                self.assertNotIn("scheduling", hook.calls("/add")[-1]["object"]["spec"])
                self.assertNotIn("scheduling", hook.calls("/seen")[-1]["object"]["spec"])
                # Added by a mutating webhook: dropped all the same.
                status, _, out = srv.Request("POST", DEPLOYS, Deployment("add-me"))
                self.assertEqual(status, 201, out)
                self.assertNotIn("scheduling", out["spec"])
                self.assertNotIn("scheduling", hook.calls("/seen")[-1]["object"]["spec"])
                # On update too (the stored object does not use the field).
                d = srv.Get(f"{DEPLOYS}/sent")
                d["spec"]["scheduling"] = GANG
                status, _, out = srv.Request("PUT", f"{DEPLOYS}/sent?fieldValidation=Ignore", d)
                self.assertEqual(status, 200, out)
                self.assertNotIn("scheduling", out["spec"])
                self.assertEqual(hook.calls("/seen")[-1]["operation"], "UPDATE")
                self.assertNotIn("scheduling", hook.calls("/seen")[-1]["object"]["spec"])
            finally:
                hook.stop()

    def test_drop_keeps_a_field_already_in_use(self):
        d = Deployment("x", scheduling=GANG)
        self.assertNotIn("scheduling", intree.DropDisabled(copy.deepcopy(d), None)["spec"])
        self.assertIn("scheduling", intree.DropDisabled(copy.deepcopy(d), d)["spec"])


class GateOnTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = ApiServer(args=["--in-tree-deployment", "--scheduling-versions", "v1beta1,v1"]).Start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.Stop()

    def Request(self, *args, **kw):
        return self.srv.Request(*args, **kw)

    def Patch(self, name, body):
        return self.Request("PATCH", f"{DEPLOYS}/{name}", body, content_type="application/merge-patch+json")

    def test_objects_links_and_scaling(self):
        status, _, d = self.Request("POST", DEPLOYS, Deployment("web", 3, GANG))
        self.assertEqual(status, 201, d)
        self.assertEqual(d["spec"]["scheduling"], GANG)
        wl_name = intree.WorkloadName(d)
        self.assertRegex(wl_name, r"^web-[a-z0-9]+$")
        wl = wait_for(lambda: self.srv.Get(f"/apis/scheduling.k8s.io/v1/namespaces/default/workloads/{wl_name}"),
                      what="Workload")
        self.assertEqual(wl["metadata"]["ownerReferences"],
                         [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": d["metadata"]["uid"],
                           "controller": True, "blockOwnerDeletion": True}])
        self.assertEqual(wl["spec"]["controllerRef"], {"apiGroup": "apps", "kind": "Deployment", "name": "web"})
        tmpl = wl["spec"]["podGroupTemplates"][0]
        self.assertEqual((tmpl["schedulingPolicy"], tmpl["disruptionMode"]), ({"gang": {"minCount": 3}}, {"all": {}}))
        rs = wait_for(lambda: self.srv.Get("/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dweb")["items"],
                      what="ReplicaSet")[0]
        h = rs["metadata"]["labels"]["pod-template-hash"]
        self.assertNotIn("schedulingGroup", rs["spec"]["template"]["spec"])  # the template is left alone
        pg_path = f"/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups/web-{h}"
        pg = wait_for(lambda: self.srv.Get(pg_path), what="PodGroup")
        self.assertEqual([(r["kind"], r["name"], r.get("controller", False)) for r in pg["metadata"]["ownerReferences"]],
                         [("ReplicaSet", rs["metadata"]["name"], True), ("Workload", wl_name, False)])
        self.assertEqual(pg["spec"]["workloadRef"], {"workloadName": wl_name, "templateName": tmpl["name"]})
        self.assertEqual(pg["spec"]["schedulingPolicy"], {"gang": {"minCount": 3}})
        pods = wait_for(lambda: (lambda items: items if len(items) == 3 and all(p["spec"].get("nodeName") for p in items)
                                 else None)(self.srv.Get(f"{PODS}?labelSelector=app%3Dweb")["items"]), what="3 pods running")
        for p in pods:
            self.assertEqual(p["spec"]["schedulingGroup"], {"podGroupName": f"web-{h}"})
            self.assertIn(("PodGroup", f"web-{h}", pg["metadata"]["uid"]),
                          [(r["kind"], r["name"], r["uid"]) for r in p["metadata"]["ownerReferences"]])
        # Written by the deployment controller, in the preferred served version.
        writes = [(e["path"], e["user"]) for e in self.srv.Audit(methods=("POST",))
                  if ("/workloads" in e["path"] or "/podgroups" in e["path"])
                  and e["body"]["metadata"]["name"].startswith("web-")]
        self.assertEqual(writes, [("/apis/scheduling.k8s.io/v1/namespaces/default/workloads", CONTROLLER),
                                  ("/apis/scheduling.k8s.io/v1/namespaces/default/podgroups", CONTROLLER)])
        # Scaling: the derived minCount follows the replicas (Workload, then PodGroup).
        status, _, out = self.Request("PATCH", f"{DEPLOYS}/web/scale", {"spec": {"replicas": 4}},
                                      content_type="application/merge-patch+json")
        self.assertEqual(status, 200, out)
        wait_for(lambda: self.srv.Get(pg_path)["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}},
                 what="PodGroup minCount 4")
        # Scale to zero: the PodGroup goes (once its pods are gone).
        status, _, out = self.Request("PATCH", f"{DEPLOYS}/web/scale", {"spec": {"replicas": 0}},
                                      content_type="application/merge-patch+json")
        self.assertEqual(status, 200, out)
        wait_for(lambda: self.srv.Get(pg_path) is None, what="PodGroup deleted")

    def test_immutability_and_rules(self):
        status, _, out = self.Request("POST", DEPLOYS, Deployment("plain", 2))
        self.assertEqual(status, 201, out)
        status, _, out = self.Patch("plain", {"spec": {"scheduling": GANG}})
        self.assertEqual(status, 422, out)
        self.assertEqual(out["message"], 'Deployment.apps "plain" is invalid: spec.scheduling: '
                                         "Forbidden: field cannot be set once created")
        status, _, out = self.Request("POST", DEPLOYS, Deployment("fixed", 2, GANG))
        self.assertEqual(status, 201, out)
        status, _, out = self.Patch("fixed", {"spec": {"scheduling": None}})
        self.assertEqual(status, 422, out)
        self.assertIn("spec.scheduling: Forbidden: field cannot be cleared once set", out["message"])
        status, _, out = self.Patch("fixed", {"spec": {"scheduling": {"disruptionMode": {"single": {}}}}})
        self.assertEqual(status, 422, out)
        self.assertIn("spec.scheduling.disruptionMode: Forbidden: field is immutable", out["message"])
        status, _, out = self.Patch("fixed", {"spec": {"scheduling": {"schedulingPolicy": {"gang": {"minCount": 2}}}}})
        self.assertEqual(status, 200, out)  # gang.minCount is the one mutable part
        status, _, out = self.Request("POST", DEPLOYS, Deployment("rolling", 2, GANG, strategy="RollingUpdate"))
        self.assertEqual(status, 422, out)
        self.assertIn("spec.strategy.type: Forbidden: gang scheduling", out["message"])
        status, _, out = self.Request("POST", DEPLOYS, Deployment(
            "over", 2, {"schedulingPolicy": {"gang": {"minCount": 3}}}))
        self.assertEqual(status, 422, out)
        self.assertIn("spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 3: must be less than "
                      "or equal to spec.replicas (2)", out["message"])
        byo = Deployment("byo", 2, GANG)
        byo["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "mine"}
        status, _, out = self.Request("POST", DEPLOYS, byo)
        self.assertEqual(status, 422, out)
        self.assertIn("may not be set when spec.template.spec.schedulingGroup is set", out["message"])


if __name__ == "__main__":
    unittest.main()
