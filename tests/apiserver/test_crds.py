"""The gang schedulers' PodGroup CRDs in the test API server (issue 16): discovery, CRUD,
watch, JSON/merge patch, the status subresource, structural-schema validation and pruning,
ownerReference garbage collection, and switching a group off."""
import json
import unittest

from apiserver.harness import ApiServer
from lib.wait import wait_for

GROUPS = {
    "volcano": ("scheduling.volcano.sh", "v1beta1"),
    "kai": ("scheduling.run.ai", "v2alpha2"),
    "coscheduling": ("scheduling.x-k8s.io", "v1alpha1"),
}


def PodGroup(gv, name, spec):
    return {"apiVersion": gv, "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


class CrdTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = ApiServer(args=["--bookmark-interval", "0.3", "--controllers", "gc"]).Start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.Stop()

    def Path(self, backend, name=""):
        group, version = GROUPS[backend]
        p = f"/apis/{group}/{version}/namespaces/default/podgroups"
        return p + (f"/{name}" if name else "")

    def test_discovery_lists_each_group(self):
        _, _, groups = self.srv.Request("GET", "/apis")
        names = [g["name"] for g in groups["groups"]]
        for backend, (group, version) in GROUPS.items():
            with self.subTest(backend=backend):
                self.assertIn(group, names)
                status, _, g = self.srv.Request("GET", f"/apis/{group}")
                self.assertEqual(status, 200)
                self.assertEqual(g["preferredVersion"]["groupVersion"], f"{group}/{version}")
                status, _, rl = self.srv.Request("GET", f"/apis/{group}/{version}")
                self.assertEqual(status, 200)
                by_name = {r["name"]: r for r in rl["resources"]}
                self.assertEqual(by_name["podgroups"]["kind"], "PodGroup")
                self.assertTrue(by_name["podgroups"]["namespaced"])
                self.assertIn("podgroups/status", by_name)

    def test_crud_patch_status_and_watch(self):
        for backend, (group, version) in GROUPS.items():
            with self.subTest(backend=backend):
                gv = f"{group}/{version}"
                name = f"crud-{backend}"
                watch = self.srv.Watch(self.Path(backend) + "?watch=1&allowWatchBookmarks=false")
                status, _, pg = self.srv.Request("POST", self.Path(backend),
                                                 PodGroup(gv, name, {"minMember": 3}))
                self.assertEqual(status, 201, pg)
                self.assertEqual(pg["apiVersion"], gv)
                self.assertEqual(json.loads(watch.readline())["type"], "ADDED")
                # JSON patch with a uid test, as the reconciler sends it
                patch = [{"op": "test", "path": "/metadata/uid", "value": pg["metadata"]["uid"]},
                         {"op": "replace", "path": "/spec/minMember", "value": 5}]
                status, _, out = self.srv.Request("PATCH", self.Path(backend, name), patch,
                                                  content_type="application/json-patch+json")
                self.assertEqual(status, 200, out)
                self.assertEqual(out["spec"]["minMember"], 5)
                ev = json.loads(watch.readline())
                self.assertEqual((ev["type"], ev["object"]["spec"]["minMember"]), ("MODIFIED", 5))
                watch.close()
                # a failed test is refused
                patch[0]["value"] = "not-the-uid"
                status, _, _ = self.srv.Request("PATCH", self.Path(backend, name), patch,
                                                content_type="application/json-patch+json")
                self.assertEqual(status, 422)
                # status through the main resource is ignored, through /status kept
                status, _, out = self.srv.Request("PATCH", self.Path(backend, name),
                                                  {"status": {"running": 2}},
                                                  content_type="application/merge-patch+json")
                self.assertEqual(status, 200, out)
                self.assertNotIn("status", out)
                status, _, out = self.srv.Request("PATCH", self.Path(backend, name) + "/status",
                                                  {"status": {"running": 2}, "spec": {"minMember": 9}},
                                                  content_type="application/merge-patch+json")
                self.assertEqual(status, 200, out)
                self.assertEqual((out["status"]["running"], out["spec"]["minMember"]), (2, 5))
                _, _, listed = self.srv.Request("GET", self.Path(backend))
                self.assertIn(name, [o["metadata"]["name"] for o in listed["items"]])
                status, _, _ = self.srv.Request("DELETE", self.Path(backend, name))
                self.assertEqual(status, 200)
                self.assertIsNone(self.srv.Get(self.Path(backend, name)))

    def test_schema_rejects_wrong_types_and_prunes_unknown_fields(self):
        cases = [
            ("volcano", {"minMember": "3"},
             'spec.minMember: Invalid value: "string": spec.minMember in body must be of type '
             'integer: "string"'),
            ("volcano", {"minMember": 1, "networkTopology": {"mode": "strict"}},
             'spec.networkTopology.mode: Unsupported value: "strict": supported values: '
             '"hard", "soft"'),
            # KAI's published CRD: minimum 1 on the group (0 on a subGroup).
            ("kai", {"minMember": 0},
             "spec.minMember: Invalid value: 0: spec.minMember in body should be greater than "
             "or equal to 1"),
            ("kai", {"minMember": 2, "subGroups": [{"name": "a", "minMember": -1}]},
             "spec.subGroups[0].minMember: Invalid value: -1: spec.subGroups[0].minMember in body "
             "should be greater than or equal to 0"),
            ("kai", {"minMember": 1, "markUnschedulable": "yes"},
             'spec.markUnschedulable: Invalid value: "string": spec.markUnschedulable in body '
             'must be of type boolean: "string"'),
            ("coscheduling", {"minMember": 0},
             "spec.minMember: Invalid value: 0: spec.minMember in body should be greater than or "
             "equal to 1"),
            ("coscheduling", {"minMember": 2, "minResources": {"cpu": [1]}},
             'spec.minResources.cpu: Invalid value: "array": spec.minResources.cpu in body must '
             'be of type integer,string: "array"'),
        ]
        for backend, spec, message in cases:
            with self.subTest(backend=backend, spec=spec):
                gv = "/".join(GROUPS[backend])
                status, _, out = self.srv.Request("POST", self.Path(backend),
                                                  PodGroup(gv, "bad", spec))
                self.assertEqual(status, 422, out)
                self.assertEqual(out["reason"], "Invalid")
                self.assertIn(message, out["message"])
        # unknown fields: pruned with a warning (Warn), refused (Strict)
        gv = "/".join(GROUPS["coscheduling"])
        status, headers, out = self.srv.Request(
            "POST", self.Path("coscheduling"),
            PodGroup(gv, "pruned", {"minMember": 2, "queue": "q", "minResources": {"cpu": "2"}}))
        self.assertEqual(status, 201, out)
        self.assertEqual(out["spec"], {"minMember": 2, "minResources": {"cpu": "2"}})
        self.assertIn(r'unknown field \"spec.queue\"', headers.get("Warning", ""))
        status, _, out = self.srv.Request(
            "POST", self.Path("coscheduling") + "?fieldValidation=Strict",
            PodGroup(gv, "strict", {"minMember": 2, "queue": "q"}))
        self.assertEqual(status, 400, out)
        self.assertIn('unknown field "spec.queue"', out["message"])

    def test_garbage_collection_follows_the_owner(self):
        status, _, cm = self.srv.Request("POST", "/api/v1/namespaces/default/configmaps",
                                         {"metadata": {"name": "owner"}, "data": {}})
        self.assertEqual(status, 201)
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
               "uid": cm["metadata"]["uid"], "controller": True}
        for backend in GROUPS:
            pg = PodGroup("/".join(GROUPS[backend]), f"owned-{backend}", {"minMember": 1})
            pg["metadata"]["ownerReferences"] = [ref]
            status, _, out = self.srv.Request("POST", self.Path(backend), pg)
            self.assertEqual(status, 201, out)
        self.srv.Request("DELETE", "/api/v1/namespaces/default/configmaps/owner")
        for backend in GROUPS:
            wait_for(lambda b=backend: self.srv.Get(self.Path(b, f"owned-{b}")) is None, 15,
                     what=f"{backend} PodGroup collected")

    def test_a_group_switched_off_is_not_served(self):
        group, version = GROUPS["kai"]
        try:
            self.srv.SetDisabledGroups([group])
            _, _, groups = self.srv.Request("GET", "/apis")
            self.assertNotIn(group, [g["name"] for g in groups["groups"]])
            for path in (f"/apis/{group}", f"/apis/{group}/{version}", self.Path("kai")):
                status, _, _ = self.srv.Request("GET", path)
                self.assertEqual(status, 404, path)
            # the others are still served
            status, _, _ = self.srv.Request("GET", self.Path("volcano"))
            self.assertEqual(status, 200)
            out = self.srv.Kubectl("api-resources", "--api-group", group, check=False)
            self.assertNotIn("podgroups", out.stdout)
        finally:
            self.srv.SetDisabledGroups([])
        status, _, _ = self.srv.Request("GET", self.Path("kai"))
        self.assertEqual(status, 200)

    def test_kubectl_reads_each_group(self):
        for backend, (group, version) in GROUPS.items():
            with self.subTest(backend=backend):
                manifest = json.dumps(PodGroup(f"{group}/{version}", f"kc-{backend}", {"minMember": 2}))
                out = self.srv.Kubectl("apply", "-f", "-", input=manifest)
                self.assertIn(f"kc-{backend}", out.stdout)
                out = self.srv.Kubectl("get", f"podgroups.{group}", f"kc-{backend}", "-o",
                                       "jsonpath={.spec.minMember}")
                self.assertEqual(out.stdout, "2")


if __name__ == "__main__":
    unittest.main()
