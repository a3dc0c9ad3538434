"""Served versions of scheduling.k8s.io Workloads and PodGroups (--scheduling-versions,
ApiServer.SetSchedulingVersions): two views of one storage, v1 preferred in discovery, an
unserved version 404 and absent from discovery, watches on the group cut on a change."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from apiserver.harness import ApiServer, TESTS_DIR
from lib.wait import wait_for

PG_V1 = "/apis/scheduling.k8s.io/v1/namespaces/default/podgroups"
PG_B1 = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"
WL_V1 = "/apis/scheduling.k8s.io/v1/namespaces/default/workloads"
WL_B1 = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/workloads"
CM = "/api/v1/namespaces/default/configmaps"


def PodGroup(name, version):
    return {"apiVersion": f"scheduling.k8s.io/{version}", "kind": "PodGroup",
            "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}


def Workload(name, version):
    return {"apiVersion": f"scheduling.k8s.io/{version}", "kind": "Workload",
            "metadata": {"name": name},
            "spec": {"podGroupTemplates": [{"name": "workers",
                                            "schedulingPolicy": {"gang": {"minCount": 2}}}]}}


def Names(resource_list):
    return sorted(r["name"] for r in resource_list["resources"])


def SchedulingGroup(group_list):
    return [g for g in group_list["groups"] if g["name"] == "scheduling.k8s.io"][0]


def ReadLines(resp, n, deadline=10):
    """Up to n watch events; stops early when the connection ends (returns what came)."""
    events = []
    end = time.time() + deadline
    while len(events) < n and time.time() < end:
        try:
            line = resp.readline()
        except OSError:
            break
        if not line:
            break
        events.append(json.loads(line))
    return events


class DefaultVersionTest(unittest.TestCase):
    """Without the flag: a 1.37 cluster, v1beta1 only."""

    @classmethod
    def setUpClass(cls):
        cls.srv = ApiServer(args=["--controllers", ""]).Start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.Stop()

    def test_v1beta1_only(self):
        group = self.srv.Get("/apis/scheduling.k8s.io")
        self.assertEqual([v["version"] for v in group["versions"]], ["v1", "v1beta1"])
        self.assertEqual(group["preferredVersion"]["version"], "v1")  # PriorityClasses
        self.assertEqual(Names(self.srv.Get("/apis/scheduling.k8s.io/v1")), ["priorityclasses"])
        self.assertEqual(Names(self.srv.Get("/apis/scheduling.k8s.io/v1beta1")),
                         ["podgroups", "podgroups/status", "workloads"])
        status, _, out = self.srv.Request("POST", PG_V1, PodGroup("pg-a", "v1"))
        self.assertEqual(status, 404, out)
        status, _, out = self.srv.Request("POST", PG_B1, PodGroup("pg-a", "v1beta1"))
        self.assertEqual(status, 201, out)
        self.assertEqual(self.srv.Request("GET", f"{PG_V1}/pg-a")[0], 404)
        self.assertEqual(self.srv.Request("GET", f"{PG_B1}/pg-a")[0], 200)
        self.assertEqual(self.srv.Get("/apis/scheduling.k8s.io/v1/priorityclasses")["kind"],
                         "PriorityClassList")


class BothVersionsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = ApiServer(args=["--controllers", "", "--scheduling-versions", "v1beta1,v1"]).Start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.Stop()

    def test_two_views_of_one_storage(self):
        self.assertEqual(Names(self.srv.Get("/apis/scheduling.k8s.io/v1")),
                         ["podgroups", "podgroups/status", "priorityclasses", "workloads"])
        self.assertEqual(Names(self.srv.Get("/apis/scheduling.k8s.io/v1beta1")),
                         ["podgroups", "podgroups/status", "workloads"])
        group = SchedulingGroup(self.srv.Get("/apis"))
        self.assertEqual(group["preferredVersion"]["groupVersion"], "scheduling.k8s.io/v1")
        resp = self.srv.Watch(f"{PG_V1}?watch=1&resourceVersion="
                              f"{self.srv.Get(PG_V1)['metadata']['resourceVersion']}")
        try:
            status, _, made = self.srv.Request("POST", PG_B1, PodGroup("shared", "v1beta1"))
            self.assertEqual(status, 201, made)
            self.assertEqual(made["apiVersion"], "scheduling.k8s.io/v1beta1")
            seen = self.srv.Get(f"{PG_V1}/shared")
            self.assertEqual(seen["apiVersion"], "scheduling.k8s.io/v1")
            for k in ("name", "uid", "resourceVersion"):
                self.assertEqual(seen["metadata"][k], made["metadata"][k])
            self.assertEqual(seen["spec"], made["spec"])
            ev = ReadLines(resp, 1)
            self.assertEqual([(e["type"], e["object"]["apiVersion"]) for e in ev],
                             [("ADDED", "scheduling.k8s.io/v1")])
        finally:
            resp.close()
        listed = self.srv.Get(PG_V1)
        self.assertEqual(listed["apiVersion"], "scheduling.k8s.io/v1")
        self.assertEqual([o["apiVersion"] for o in listed["items"]], ["scheduling.k8s.io/v1"])
        # A write through v1 of the object made through v1beta1 (same storage, same rv check).
        seen["metadata"].setdefault("labels", {})["via"] = "v1"
        status, _, out = self.srv.Request("PUT", f"{PG_V1}/shared", seen)
        self.assertEqual(status, 200, out)
        back = self.srv.Get(f"{PG_B1}/shared")
        self.assertEqual(back["apiVersion"], "scheduling.k8s.io/v1beta1")
        self.assertEqual(back["metadata"]["labels"], {"via": "v1"})
        # The body must name the version of the path it is sent to.
        status, _, out = self.srv.Request("POST", WL_V1, Workload("w", "v1beta1"))
        self.assertEqual(status, 400, out)
        status, _, out = self.srv.Request("POST", WL_V1, Workload("w", "v1"))
        self.assertEqual(status, 201, out)
        self.assertEqual(self.srv.Get(f"{WL_B1}/w")["metadata"]["uid"], out["metadata"]["uid"])
        status, _, out = self.srv.Request(
            "PATCH", f"{WL_B1}/w", {"metadata": {"labels": {"p": "1"}}},
            content_type="application/merge-patch+json")
        self.assertEqual((status, out["apiVersion"]), (200, "scheduling.k8s.io/v1beta1"), out)
        status, _, out = self.srv.Request("DELETE", f"{WL_V1}/w")
        self.assertEqual(status, 200, out)
        self.assertEqual(self.srv.Request("GET", f"{WL_B1}/w")[0], 404)


class UpgradeTest(unittest.TestCase):
    def test_set_scheduling_versions_cuts_watches_keeps_storage(self):
        with ApiServer(args=["--controllers", ""]) as srv:
            status, _, made = srv.Request("POST", PG_B1, PodGroup("kept", "v1beta1"))
            self.assertEqual(status, 201, made)
            rv = made["metadata"]["resourceVersion"]
            pg_watch = srv.Watch(f"{PG_B1}?watch=1&resourceVersion={rv}")
            pc_watch = srv.Watch(f"/apis/scheduling.k8s.io/v1/priorityclasses?watch=1&resourceVersion={rv}")
            cm_watch = srv.Watch(f"{CM}?watch=1&resourceVersion={rv}")
            try:
                wait_for(lambda: len([e for e in srv.InFlight() if e["watch"]]) >= 3,
                         10, 0.05, "three open watches")
                self.assertEqual(srv.SetSchedulingVersions(["v1"]), ["v1"])
                # Both scheduling.k8s.io watches end (no more events, the connection closes)...
                self.assertEqual(ReadLines(pg_watch, 1), [])
                self.assertEqual(ReadLines(pc_watch, 1), [])
                # ...the ConfigMap watch is not on that group and goes on.
                status, _, _ = srv.Request("POST", CM, {"metadata": {"name": "after"}})
                self.assertEqual(status, 201)
                ev = ReadLines(cm_watch, 1)
                self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in ev],
                                 [("ADDED", "after")])
            finally:
                for r in (pg_watch, pc_watch, cm_watch):
                    r.close()
            # Discovery changed at once, the storage is kept and seen through v1.
            self.assertIsNone(srv.Get("/apis/scheduling.k8s.io/v1beta1"))
            self.assertEqual([v["version"] for v in SchedulingGroup(srv.Get("/apis"))["versions"]], ["v1"])
            self.assertEqual(srv.Request("GET", f"{PG_B1}/kept")[0], 404)
            seen = srv.Get(f"{PG_V1}/kept")
            self.assertEqual((seen["metadata"]["uid"], seen["apiVersion"]),
                             (made["metadata"]["uid"], "scheduling.k8s.io/v1"))
            # A watch opened now on v1 works; back to both versions for a downgrade check.
            self.assertEqual(srv.SetSchedulingVersions(["v1", "v1beta1"]), ["v1", "v1beta1"])
            self.assertEqual(srv.Get(f"{PG_B1}/kept")["metadata"]["uid"], made["metadata"]["uid"])
            with self.assertRaises(AssertionError) as cm:
                srv.SetSchedulingVersions(["v2"])
            self.assertIn('unknown scheduling.k8s.io version "v2"', str(cm.exception))
            self.assertEqual(srv.SetSchedulingVersions([]), [])
            self.assertIsNone(srv.Get("/apis/scheduling.k8s.io/v1beta1"))
            self.assertEqual(Names(srv.Get("/apis/scheduling.k8s.io/v1")), ["priorityclasses"])

    def test_controllers_write_through_the_served_version(self):
        # The PodGroup protection controller removes its finalizer from a PodGroup made
        # through v1 on a v1-only server: it writes through v1, as a client that discovered it.
        with ApiServer(args=["--controllers", "podgroup", "--scheduling-versions", "v1"]) as srv:
            status, _, made = srv.Request("POST", PG_V1, PodGroup("gone", "v1"))
            self.assertEqual(status, 201, made)
            self.assertEqual(made["metadata"]["finalizers"], ["scheduling.k8s.io/podgroup-protection"])
            status, _, out = srv.Request("DELETE", f"{PG_V1}/gone")
            self.assertEqual(status, 200, out)
            wait_for(lambda: srv.Request("GET", f"{PG_V1}/gone")[0] == 404, 10, 0.05, "PodGroup gone")
            puts = [e["path"] for e in srv.Audit(methods=("PUT",), source="controller")]
            self.assertEqual(puts, [f"{PG_V1}/gone"])

    def test_bad_flag_value_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, PYTHONPATH=TESTS_DIR)
            p = subprocess.run([sys.executable, "-m", "apiserver", "--dir", d, "--max-seconds", "5",
                                "--scheduling-versions", "v1,v1alpha1"],
                               cwd=TESTS_DIR, env=env, capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn('unknown scheduling.k8s.io version "v1alpha1"', p.stderr)


if __name__ == "__main__":
    unittest.main()
