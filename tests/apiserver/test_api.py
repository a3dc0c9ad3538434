"""REST semantics of the test API server: watch (bookmarks, 410), optimistic
concurrency, generateName, selectors and paging, patches, server-side apply,
finalizers, authentication, audit and fault injection."""
import json
import os
import subprocess
import threading
import time
import unittest
import urllib.error

from apiserver.harness import ApiServer
from lib.wait import wait_for

CM = "/api/v1/namespaces/default/configmaps"


def ConfigMap(name, labels=None, data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels or {}}, "data": data or {"k": "v"}}


class ApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = ApiServer(args=["--bookmark-interval", "0.3", "--history", "500"]).Start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.Stop()

    def Create(self, path, obj, code=201):
        status, _, out = self.srv.Request("POST", path, obj)
        self.assertEqual(status, code, out)
        return out

    def ReadEvents(self, resp, n, deadline=10):
        events = []
        end = time.time() + deadline
        while len(events) < n and time.time() < end:
            line = resp.readline()
            if not line:
                break
            events.append(json.loads(line))
        return events

    def test_watch_events_bookmarks_and_410(self):
        first = self.Create(CM, ConfigMap("w1", {"w": "yes"}))
        rv = first["metadata"]["resourceVersion"]
        resp = self.srv.Watch(f"{CM}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&labelSelector=w%3Dyes")
        try:
            self.Create(CM, ConfigMap("w2", {"w": "yes"}))
            self.Create(CM, ConfigMap("other", {"w": "no"}))
            status, _, _ = self.srv.Request("DELETE", f"{CM}/w1")
            self.assertEqual(status, 200)
            events = self.ReadEvents(resp, 2)
            self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in events],
                             [("ADDED", "w2"), ("DELETED", "w1")])
            bookmark = self.ReadEvents(resp, 1)[0]
            self.assertEqual(bookmark["type"], "BOOKMARK")
            self.assertGreaterEqual(int(bookmark["object"]["metadata"]["resourceVersion"]),
                                    int(events[-1]["object"]["metadata"]["resourceVersion"]))
            # relabelling out of the selector looks like a delete to this watcher
            self.srv.Request("PATCH", f"{CM}/w2", {"metadata": {"labels": {"w": "no"}}},
                             content_type="application/merge-patch+json")
            ev = [e for e in self.ReadEvents(resp, 2) if e["type"] != "BOOKMARK"][0]
            self.assertEqual((ev["type"], ev["object"]["metadata"]["name"]), ("DELETED", "w2"))
        finally:
            resp.close()
        # initial events without a resourceVersion
        resp = self.srv.Watch(f"{CM}?watch=1&fieldSelector=metadata.name%3Dother&timeoutSeconds=2")
        try:
            events = self.ReadEvents(resp, 5, deadline=5)
            self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in events], [("ADDED", "other")])
        finally:
            resp.close()
        # after compaction the old resourceVersion is gone: an ERROR event with 410 Expired
        self.srv.Compact()
        resp = self.srv.Watch(f"{CM}?watch=1&resourceVersion={rv}")
        try:
            ev = self.ReadEvents(resp, 1)[0]
            self.assertEqual(ev["type"], "ERROR")
            self.assertEqual((ev["object"]["code"], ev["object"]["reason"]), (410, "Expired"))
            self.assertIn(f"too old resource version: {rv}", ev["object"]["message"])
        finally:
            resp.close()
        # kubectl get --watch uses the same machinery
        p = subprocess.Popen(["kubectl", "get", "configmaps", "--watch", "-o", "name", "--request-timeout=5s"],
                             env=dict(os.environ, KUBECONFIG=self.srv.kubeconfig), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: [e for e in self.srv.Audit(path=CM) if e.get("watch")], 10, what="kubectl watch")
            self.Create(CM, ConfigMap("late"))
            line = wait_for(lambda: "late" in (p.stdout.readline() or "late-eof"), 10, what="watch line")
            self.assertTrue(line)
        finally:
            p.kill()
            p.wait(timeout=10)

    def test_optimistic_concurrency_and_generation(self):
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "occ"},
               "spec": {"selector": {"matchLabels": {"a": "b"}}, "replicas": 0,
                        "template": {"metadata": {"labels": {"a": "b"}},
                                     "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}}
        path = "/apis/apps/v1/namespaces/default/deployments"
        self.srv.SetControllers([])  # no status writes racing with this test's writes
        self.addCleanup(self.srv.SetControllers, ["deployment", "replicaset", "scheduler", "gc", "podgroup",
                                                  "namespace"])
        d = self.Create(path, dep)
        stale = json.loads(json.dumps(d))
        d["spec"]["replicas"] = 1
        status, _, d2 = self.srv.Request("PUT", f"{path}/occ", d)
        self.assertEqual(status, 200)
        self.assertEqual(d2["metadata"]["generation"], 2)
        self.assertGreater(int(d2["metadata"]["resourceVersion"]), int(d["metadata"]["resourceVersion"]))
        stale["spec"]["replicas"] = 5
        status, _, out = self.srv.Request("PUT", f"{path}/occ", stale)
        self.assertEqual(status, 409)
        self.assertEqual(out["reason"], "Conflict")
        self.assertEqual(out["message"], 'Operation cannot be fulfilled on deployments.apps "occ": the object has '
                                         'been modified; please apply your changes to the latest version and try again')
        # a patch carrying a stale resourceVersion is refused the same way
        status, _, out = self.srv.Request("PATCH", f"{path}/occ",
                                          {"metadata": {"resourceVersion": stale["metadata"]["resourceVersion"]},
                                           "spec": {"replicas": 3}}, content_type="application/merge-patch+json")
        self.assertEqual(status, 409)
        # a status write does not bump generation; a no-op update does not bump resourceVersion
        cur = self.srv.Get(f"{path}/occ")
        status, _, same = self.srv.Request("PUT", f"{path}/occ", cur)
        self.assertEqual(same["metadata"]["resourceVersion"], cur["metadata"]["resourceVersion"])
        status, _, out = self.srv.Request("POST", path, dep)
        self.assertEqual((status, out["reason"]), (409, "AlreadyExists"))
        # selector is immutable; kube's validation message
        cur["spec"]["selector"] = {"matchLabels": {"a": "c"}}
        cur["spec"]["template"]["metadata"]["labels"] = {"a": "c"}
        status, _, out = self.srv.Request("PUT", f"{path}/occ", cur)
        self.assertEqual(status, 422)
        self.assertIn('Deployment.apps "occ" is invalid: spec.selector: Invalid value', out["message"])
        self.assertIn("field is immutable", out["message"])

    def test_generate_name_selectors_and_paging(self):
        names = [self.Create(CM, dict(ConfigMap(""), metadata={"generateName": "page-", "labels": {"page": str(i % 2)}}))
                 ["metadata"]["name"] for i in range(5)]
        for n in names:
            self.assertRegex(n, r"^page-[bcdfghjklmnpqrstvwxz2456789]{5}$")
        seen, cont, pages = [], "", 0
        while True:
            lst = self.srv.Get(f"{CM}?labelSelector=page&limit=2" + (f"&continue={cont}" if cont else ""))
            seen += [o["metadata"]["name"] for o in lst["items"]]
            pages += 1
            cont = lst["metadata"].get("continue")
            if not cont:
                break
            self.assertEqual(lst["metadata"]["remainingItemCount"], 5 - len(seen))
        self.assertEqual((sorted(seen), pages), (sorted(names), 3))
        odd = self.srv.Get(f"{CM}?labelSelector=page%20in%20(1)")["items"]
        self.assertEqual(len(odd), 2)
        one = self.srv.Get(f"{CM}?fieldSelector=metadata.name%3D{names[0]}")["items"]
        self.assertEqual([o["metadata"]["name"] for o in one], [names[0]])
        none = self.srv.Get(f"/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.namespace%3Ddefault")
        self.assertEqual(none["items"], [])
        status, _, out = self.srv.Request("GET", f"{CM}?labelSelector=a%20in%20(")
        self.assertEqual(status, 400)

    def test_patches_apply_and_finalizers(self):
        self.Create(CM, ConfigMap("p", data={"a": "1", "b": "2"}))
        st, _, out = self.srv.Request("PATCH", f"{CM}/p", [{"op": "replace", "path": "/data/a", "value": "9"},
                                                           {"op": "remove", "path": "/data/b"}],
                                      content_type="application/json-patch+json")
        self.assertEqual((st, out["data"]), (200, {"a": "9"}))
        st, _, out = self.srv.Request("PATCH", f"{CM}/p", [{"op": "test", "path": "/data/a", "value": "0"}],
                                      content_type="application/json-patch+json")
        self.assertEqual(st, 422)
        # server-side apply creates and then merges
        body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  x: '1'\n"
        st, _, out = self.srv.Request("PATCH", f"{CM}/ssa?fieldManager=test", body,
                                      content_type="application/apply-patch+yaml")
        self.assertEqual((st, out["data"]), (201, {"x": "1"}))
        p = self.srv.Kubectl("apply", "--server-side", "-f", "-",
                             input="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  z: '2'\n")
        self.assertIn("serverside-applied", p.stdout)
        self.assertEqual(self.srv.Get(f"{CM}/ssa")["data"], {"x": "1", "z": "2"})
        # finalizers hold a deleted object with a deletionTimestamp until removed
        self.Create(CM, dict(ConfigMap("fin"), metadata={"name": "fin", "finalizers": ["test/hold"]}))
        st, _, out = self.srv.Request("DELETE", f"{CM}/fin")
        self.assertEqual(st, 200)
        held = self.srv.Get(f"{CM}/fin")
        self.assertTrue(held["metadata"]["deletionTimestamp"])
        st, _, _ = self.srv.Request("PATCH", f"{CM}/fin", {"metadata": {"finalizers": None}},
                                    content_type="application/merge-patch+json")
        self.assertEqual(st, 200)
        self.assertIsNone(self.srv.Get(f"{CM}/fin"))
        # delete preconditions
        self.Create(CM, ConfigMap("pre"))
        st, _, out = self.srv.Request("DELETE", f"{CM}/pre", {"preconditions": {"uid": "nope"}})
        self.assertEqual(st, 409)
        self.assertIn("Precondition failed: UID in precondition: nope", out["message"])

    def test_apply_merges_webhooks_by_name(self):
        """kubectl apply of a webhook configuration whose namespaceSelector
        changed (the chart's upgrade and rollback) patches each webhook by
        name, as kube's patchMergeKey says: the caBundle another writer put
        there, and every field the patch does not name, stay."""
        def cfg(extra):
            exprs = [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}]
            return json.dumps({
                "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": "merge-by-name"},
                "webhooks": [{"name": n, "admissionReviewVersions": ["v1"], "sideEffects": "None",
                              "clientConfig": {"service": {"name": "s", "namespace": "default", "path": "/v"}},
                              "rules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"],
                                         "operations": ["CREATE"]}],
                              "namespaceSelector": {"matchExpressions": exprs + extra}}
                             for n in ("a.wasd.io", "b.wasd.io")]})
        path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/merge-by-name"
        self.srv.Kubectl("apply", "-f", "-", input=cfg([]))
        # The server is shared by this class: no other test may meet this webhook.
        self.addCleanup(self.srv.Request, "DELETE", path)
        live = self.srv.Get(path)
        for w in live["webhooks"]:
            w["clientConfig"]["caBundle"] = "Q0E="
        self.assertEqual(self.srv.Request("PUT", path, live)[0], 200)
        ignore = [{"key": "wasd.io/ignore", "operator": "NotIn", "values": ["true"]}]
        for step, extra in (("upgrade", ignore), ("rollback", [])):
            self.srv.Kubectl("apply", "-f", "-", input=cfg(extra))
            got = self.srv.Get(path)["webhooks"]
            self.assertEqual([w["name"] for w in got], ["a.wasd.io", "b.wasd.io"], step)
            for w in got:
                self.assertEqual(w["clientConfig"].get("caBundle"), "Q0E=", f"{step} {w['name']}")
                self.assertEqual(w["clientConfig"]["service"]["path"], "/v", step)
                self.assertEqual(w["rules"][0]["resources"], ["deployments"], step)
                self.assertEqual(len(w["namespaceSelector"]["matchExpressions"]), 1 + len(extra), step)

    def test_authentication(self):
        st, _, out = self.srv.Request("GET", CM, token="wrong")
        self.assertEqual((st, out["reason"]), (401, "Unauthorized"))
        p = self.srv.Kubectl("get", "configmaps", kubeconfig=self.srv.kubeconfig_cert)
        self.assertEqual(p.returncode, 0)
        self.assertEqual(self.srv.Audit(path=CM)[-1]["user"], "admin")
        _, cfg = self.srv.AddUser("system:serviceaccount:wasd-system:wasd", ["system:serviceaccounts"])
        self.srv.Kubectl("create", "configmap", "by-sa", "--from-literal=a=b", kubeconfig=cfg)
        writes = self.srv.Audit(user="system:serviceaccount:wasd-system:wasd", methods=("POST",))
        self.assertEqual([(e["path"], e["status"], e["body"]["metadata"]["name"]) for e in writes],
                         [(CM, 201, "by-sa")])
        debug = self.srv.Get(f"/debug/requests?since={writes[0]['seq'] - 1}")["items"]
        self.assertEqual(debug[0]["seq"], writes[0]["seq"])

    def test_fault_injection(self):
        self.srv.SetFaults([{"code": 500, "methods": ["GET"], "path": "/configmaps/fault", "count": 1}])
        self.Create(CM, ConfigMap("fault"))
        st, _, out = self.srv.Request("GET", f"{CM}/fault")
        self.assertEqual((st, out["reason"]), (500, "InternalError"))
        st, _, _ = self.srv.Request("GET", f"{CM}/fault")
        self.assertEqual(st, 200)
        self.srv.SetFaults([{"code": 429, "retryAfter": 2, "path": "/configmaps/fault", "count": 1}])
        st, hdrs, out = self.srv.Request("GET", f"{CM}/fault")
        self.assertEqual((st, hdrs["Retry-After"], out["details"]["retryAfterSeconds"]), (429, "2", 2))
        self.srv.SetFaults([{"code": 409, "methods": ["PUT"], "count": 1}])
        cur = self.srv.Get(f"{CM}/fault")
        st, _, _ = self.srv.Request("PUT", f"{CM}/fault", cur)
        self.assertEqual(st, 409)
        self.srv.SetFaults([{"code": "drop", "path": "/configmaps/fault", "watch": False, "count": 1}])
        with self.assertRaises((urllib.error.URLError, ConnectionError, OSError)):
            self.srv.Request("GET", f"{CM}/fault")
        self.srv.SetFaults([{"code": 410, "watch": True, "afterEvents": 1, "count": 1}])
        resp = self.srv.Watch(f"{CM}?watch=1&fieldSelector=metadata.name%3Dfault")
        try:
            events = self.ReadEvents(resp, 3)
            self.assertEqual([e["type"] for e in events], ["ADDED", "ERROR"])
            self.assertEqual(events[1]["object"]["code"], 410)
        finally:
            resp.close()
        self.srv.SetFaults([{"code": "drop", "watch": True, "afterEvents": 1, "count": 1}])
        resp = self.srv.Watch(f"{CM}?watch=1&fieldSelector=metadata.name%3Dfault")
        try:
            self.assertEqual(json.loads(resp.readline())["type"], "ADDED")
            with self.assertRaises(Exception):
                rest = resp.read()
                if not rest:
                    raise ConnectionError("closed")
        finally:
            resp.close()
        self.assertEqual(self.srv.ClearFaults(), {"rules": []})
        faulted = [e for e in self.srv.Audit() if e.get("fault") is not None]
        self.assertGreaterEqual(len(faulted), 6)

    def test_rolling_update_converges(self):
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "roll"},
               "spec": {"replicas": 4, "selector": {"matchLabels": {"r": "1"}},
                        "template": {"metadata": {"labels": {"r": "1"}},
                                     "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}}
        path = "/apis/apps/v1/namespaces/default/deployments"
        self.Create(path, dep)

        def Done(image):
            d = self.srv.Get(f"{path}/roll")
            st = d.get("status") or {}
            pods = self.srv.Get("/api/v1/namespaces/default/pods?labelSelector=r%3D1")["items"]
            return st.get("updatedReplicas") == 4 and st.get("availableReplicas") == 4 and len(pods) == 4 and \
                all(p["spec"]["containers"][0]["image"] == image for p in pods) and \
                st.get("observedGeneration") == d["metadata"]["generation"]
        wait_for(lambda: Done("x:1"), 20, what="first revision")
        self.srv.Request("PATCH", f"{path}/roll", {"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "x:2"}]}}}}, content_type="application/strategic-merge-patch+json")
        wait_for(lambda: Done("x:2"), 30, what="rolled to x:2")
        rs = self.srv.Get("/apis/apps/v1/namespaces/default/replicasets?labelSelector=r%3D1")["items"]
        revs = sorted(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for r in rs)
        self.assertEqual(revs, ["1", "2"])
        # with 25%/25% the total never went above replicas + maxSurge (5)
        scale_ups = [e["body"]["spec"]["replicas"] for e in self.srv.Audit(source="controller", methods=("PUT", "POST"))
                     if "/replicasets" in e["path"] and isinstance(e.get("body"), dict)
                     and e["body"].get("spec", {}).get("selector", {}).get("matchLabels", {}).get("r") == "1"]
        self.assertTrue(scale_ups)

    def test_deployment_controller_keeps_foreign_conditions(self):
        # kube's calculateStatus starts from the Deployment's conditions and sets only its own
        # types (Available, Progressing, ReplicaFailure): wasd's GangScheduled must survive.
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "conds"},
               "spec": {"replicas": 1, "selector": {"matchLabels": {"c": "1"}},
                        "template": {"metadata": {"labels": {"c": "1"}},
                                     "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}}
        path = "/apis/apps/v1/namespaces/default/deployments"
        self.Create(path, dep)
        Types = lambda d: [c["type"] for c in (d.get("status") or {}).get("conditions") or []]
        wait_for(lambda: (self.srv.Get(f"{path}/conds").get("status") or {}).get("availableReplicas") == 1,
                20, what="available")
        d = self.srv.Get(f"{path}/conds")
        gang = {"type": "GangScheduled", "status": "False", "reason": "WaitingForPods",
                "message": "1 of 2 pods", "lastTransitionTime": "2026-12-01T00:00:00Z"}
        d["status"]["conditions"].append(gang)
        status, _, out = self.srv.Request("PUT", f"{path}/conds/status", d)
        self.assertEqual(status, 200, out)
        self.assertEqual(Types(out), ["Available", "Progressing", "GangScheduled"])
        # The controller rewrites its own conditions when the rollout moves (a new ReplicaSet).
        self.srv.Request("PATCH", f"{path}/conds", {"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "x:2"}]}}}}, content_type="application/strategic-merge-patch+json")
        def Rolled():
            st = self.srv.Get(f"{path}/conds").get("status") or {}
            return st.get("observedGeneration") == 2 and st.get("updatedReplicas") == 1 and \
                "has successfully progressed" in json.dumps(st.get("conditions"))
        wait_for(Rolled, 20, what="the second revision rolled out")
        after = self.srv.Get(f"{path}/conds")
        self.assertIn("GangScheduled", Types(after))
        self.assertEqual([c for c in after["status"]["conditions"] if c["type"] == "GangScheduled"], [gang])
        self.assertEqual(sorted(Types(after)), ["Available", "GangScheduled", "Progressing"])


class WatchKnobsTest(unittest.TestCase):
    """The knobs the C++ loopback tests drive (tests/kube/fake_apiserver.h): watches
    cut, bookmarked and held on demand, a fault that ends watches at once, Retry-After
    on any fault, requests in flight, audit fields, namespaces made on demand, and
    plain HTTP."""

    @classmethod
    def setUpClass(cls):
        cls.srv = ApiServer(args=["--bookmark-interval", "0", "--controllers", "",
                                  "--namespace-auto-provision"]).Start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.Stop()

    def setUp(self):
        self.srv.ClearFaults()
        self.srv.HoldWatches(False)

    def OpenWatch(self, ns, rv):
        resp = self.srv.Watch(f"/api/v1/namespaces/{ns}/configmaps?watch=1&allowWatchBookmarks=true"
                              f"&resourceVersion={rv}")
        self.addCleanup(resp.close)
        # The audit records a watch once its response starts.
        wait_for(lambda: [e for e in self.srv.Audit(path=f"/namespaces/{ns}/configmaps") if e.get("watch")],
                 10, what="the watch in the audit")
        return resp

    def test_namespace_auto_provision_and_audit_fields(self):
        status, _, out = self.srv.Request("POST", "/api/v1/namespaces/made-on-demand/configmaps",
                                          ConfigMap("a"))
        self.assertEqual(status, 201, out)
        ns = self.srv.Get("/api/v1/namespaces/made-on-demand")
        self.assertEqual(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "made-on-demand")
        # Not on reads: a missing namespace is still not found there.
        self.assertEqual(self.srv.Request("GET", "/api/v1/namespaces/absent/configmaps/x")[0], 404)
        self.assertIsNone(self.srv.Get("/api/v1/namespaces/absent"))
        post = self.srv.Audit(path="/namespaces/made-on-demand/configmaps", methods=("POST",))[-1]
        self.assertEqual(post["authorization"], f"Bearer {self.srv.token}")
        self.assertEqual(post["clientCert"], "")
        self.assertIsInstance(post["peerPort"], int)

    def test_drop_bookmark_and_hold(self):
        first = self.Create("knobs", "a")
        resp = self.OpenWatch("knobs", first["metadata"]["resourceVersion"])
        self.srv.Bookmark()
        ev = json.loads(resp.readline())
        self.assertEqual(ev["type"], "BOOKMARK")  # on demand only: --bookmark-interval 0
        self.Create("knobs", "b")
        self.assertEqual(json.loads(resp.readline())["object"]["metadata"]["name"], "b")
        self.srv.DropWatches()
        with self.assertRaises(Exception):  # cut without the final chunk
            if not resp.read():
                raise ConnectionError("closed")
        # A held watch has its 200 but nothing comes until it is released.
        self.srv.HoldWatches(True)
        seq = self.srv.LastSeq()
        resp = self.srv.Watch("/api/v1/namespaces/knobs/configmaps?watch=1&resourceVersion="
                              + first["metadata"]["resourceVersion"], timeout=10)
        self.addCleanup(resp.close)
        self.assertEqual(resp.status, 200)
        self.assertEqual(len([e for e in self.srv.Audit(since=seq) if e.get("watch")]), 1)
        self.assertEqual(len(self.srv.InFlight(path="/namespaces/knobs/configmaps")), 1)
        self.srv.HoldWatches(False)
        self.assertEqual(json.loads(resp.readline())["object"]["metadata"]["name"], "b")

    def test_end_fault_and_retry_after(self):
        self.Create("ends", "a")
        self.srv.SetFaults([{"code": "end", "watch": True}])
        resp = self.srv.Watch("/api/v1/namespaces/ends/configmaps?watch=1&resourceVersion=1")
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.read(), b"")  # ended cleanly, nothing in it
        # "end" leaves other requests alone.
        self.assertEqual(self.srv.Request("GET", "/api/v1/namespaces/ends/configmaps/a")[0], 200)
        self.srv.SetFaults([{"code": 503, "reason": "ServiceUnavailable", "retryAfter": 0, "count": 1,
                             "path": "^/api/v1/namespaces/ends/configmaps/a$"}])
        status, headers, out = self.srv.Request("GET", "/api/v1/namespaces/ends/configmaps/a")
        self.assertEqual((status, headers["Retry-After"], out["reason"]), (503, "0", "ServiceUnavailable"))
        self.assertEqual(self.srv.Request("GET", "/api/v1/namespaces/ends/configmaps/a")[0], 200)

    def test_in_flight_requests(self):
        self.Create("slow", "a")
        self.srv.SetFaults([{"code": "delay", "delay": 2, "path": "/configmaps/a$", "count": 1}])
        done = []
        t = threading.Thread(target=lambda: done.append(
            self.srv.Request("GET", "/api/v1/namespaces/slow/configmaps/a")[0]))
        t.start()
        self.addCleanup(t.join, 10)
        flight = wait_for(lambda: self.srv.InFlight(path="/namespaces/slow/configmaps/a"), 5,
                          what="the delayed request in flight")
        self.assertEqual((flight[0]["method"], flight[0]["user"]), ("GET", "admin"))
        t.join(10)
        self.assertEqual(done, [200])
        self.assertEqual(self.srv.InFlight(path="/namespaces/slow/"), [])

    def Create(self, ns, name):
        status, _, out = self.srv.Request("POST", f"/api/v1/namespaces/{ns}/configmaps", ConfigMap(name))
        self.assertEqual(status, 201, out)
        return out


class PlainHttpTest(unittest.TestCase):
    def test_plain_http_and_max_seconds(self):
        with ApiServer(args=["--plain", "--controllers", "", "--max-seconds", "3"]) as srv:
            self.assertTrue(srv.url.startswith("http://127.0.0.1:"))
            self.assertEqual(srv.Request("GET", "/api/v1/namespaces/default/configmaps")[0], 200)
            self.assertEqual(srv.Request("GET", "/api/v1/namespaces", token="wrong")[0], 401)
            # --max-seconds: it stops by itself.
            wait_for(lambda: srv.proc.poll() is not None, 15, 0.1, "the server to stop by itself")
            self.assertEqual(srv.proc.returncode, 0)


if __name__ == "__main__":
    unittest.main()
