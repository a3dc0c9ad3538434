#!/usr/bin/env python3
"""`wasd migrate` (issue 29) end to end, through `kubectl wasd migrate` (the plugin link
`cmake --install` puts on PATH): Deployments that wasd runs (annotation wasd.io/scheduling,
the real webhook and reconciler) handed over to the in-tree Deployment controller that the
test API server plays with `--in-tree-deployment` (spec.scheduling kept, one Workload per
Deployment and one PodGroup per ReplicaSet made by the deployment-controller user).

  dry run      prints the plan and the manifest; the audit shows no write but dry runs
  in place     delete + re-create under the same name: the in-tree Workload and PodGroup
               exist, wasd's Workload and PodGroups of the old Deployment are gone
  side by side a new Deployment NAME-intree with the same pod labels, the old one deleted
               once the new one is Available; the same end state
  failure      a step fails (an injected 500): the command stops and says what runs now
  refused      not managed by wasd; already carrying spec.scheduling; a cluster whose API
               server drops spec.scheduling (a second server without the mode); a
               non-native backend
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import unittest

import yaml

from apiserver.harness import KUBECTL, ApiServer
from lib.cluster import Env
from lib.manifests import NS, SCHEDULING, deployment, pod_group_of, workload_name
from lib.paths import BUILD_DIR
from lib.wait import wait_for

ADMIN = "admin"
DEPLOYMENT_CONTROLLER = "system:serviceaccount:kube-system:deployment-controller"
WRITES = ("POST", "PUT", "PATCH", "DELETE")
CONFIG = {"schedulingPolicy": {"gang": {"minCount": 2}},
          "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
          "disruptionMode": {"all": {}}}
WORKLOADS = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/workloads"
PODGROUPS = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"


def controlled_by(obj, uid):
    return any(r.get("uid") == uid and r.get("controller") for r in obj["metadata"].get("ownerReferences") or [])


def gang(name, replicas=2):
    d = deployment(name, replicas=replicas)
    d["metadata"]["annotations"][SCHEDULING] = json.dumps(CONFIG)
    return d


class MigrateTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wasd-migrate-")
        cls.env = Env(apiserver_args=("--bookmark-interval", "0.5", "--in-tree-deployment"))
        cls.env.__enter__()
        try:
            cls.env.start_reconciler()
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
        cls.env.__exit__(None, None, None)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # ------------------------------------------------------------------ helpers

    def plugin_env(self, srv=None):
        srv = srv or self.env.srv
        return dict(os.environ, PATH=self.plugin_dir + os.pathsep + os.environ.get("PATH", ""),
                    KUBECONFIG=srv.kubeconfig, HOME=self.tmp)

    def migrate(self, *args, srv=None):
        """`kubectl wasd migrate ARGS` against `srv` (the in-tree server by default), in the
        test's directory (where --apply saves its manifests), stdin not a terminal."""
        p = subprocess.run([KUBECTL, "wasd", "migrate", *args], capture_output=True, text=True,
                           timeout=60, env=self.plugin_env(srv), cwd=self.tmp,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr

    def get(self, path):
        return self.env.srv.Get(path)

    def run_by_wasd(self, name):
        """Creates a wasd-managed gang and waits for wasd's Workload and PodGroup and the
        Deployment Available; returns (deployment, wasd's Workload, wasd's PodGroups)."""
        self.env.create(DEPLOYMENTS, gang(name))

        def ready():
            d = self.get(f"{DEPLOYMENTS}/{name}")
            if not d or (d.get("status") or {}).get("availableReplicas") != 2:
                return None
            uid = d["metadata"]["uid"]
            w = self.get(f"{WORKLOADS}/{workload_name(name, uid)}")
            rss = [rs for rs in self.env.replica_sets(name) if controlled_by(rs, uid)]
            pgs = [self.get(f"{PODGROUPS}/{pod_group_of(rs)}") for rs in rss]
            return (d, w, pgs) if w and rss and all(pgs) else None

        d, w, pgs = wait_for(ready, timeout=30, what=f"wasd running {name}")
        self.assertTrue(controlled_by(w, d["metadata"]["uid"]))
        return d, w, pgs

    def assert_in_tree(self, name, old_uid, old_workload, old_podgroups, since):
        """The end state: deployment NAME with spec.scheduling and without wasd's marks, its
        Workload and PodGroup made by the in-tree controller, wasd's old objects gone."""
        d = self.get(f"{DEPLOYMENTS}/{name}")
        self.assertIsNotNone(d)
        uid = d["metadata"]["uid"]
        self.assertNotEqual(uid, old_uid)
        self.assertEqual(d["spec"]["scheduling"], CONFIG)
        self.assertNotIn(SCHEDULING, d["metadata"].get("annotations") or {})
        self.assertEqual((d.get("status") or {}).get("availableReplicas"), 2)
        # What wasd migrate created: spec.scheduling, no annotation, none of wasd's labels.
        # (Whether wasd's webhook leaves such a Deployment alone is the stand-down's
        # concern, tested with it.)
        sent = [e["body"] for e in self.env.srv.Audit(since=since, user=ADMIN, methods=("POST",), path=DEPLOYMENTS)
                if not (e.get("query") or {}).get("dryRun") and e.get("status") == 201
                and e["body"]["metadata"].get("name") == name]
        self.assertEqual(len(sent), 1, sent)
        self.assertEqual(sent[0]["spec"]["scheduling"], CONFIG)
        self.assertEqual(sent[0]["spec"]["template"]["metadata"]["labels"], {"app": name.split("-")[0]})
        self.assertNotIn("annotations", sent[0]["metadata"])
        self.assertNotIn("labels", sent[0]["metadata"])
        # Its Workload and PodGroup, made by the in-tree controller (the audit names its user).
        creators = {(e["path"].rsplit("/", 1)[-1], (e.get("body") or {}).get("metadata", {}).get("name"))
                    for e in self.env.srv.Audit(user=DEPLOYMENT_CONTROLLER, methods=("POST",))}
        workloads = [w["metadata"]["name"] for w in self.env.workloads() if controlled_by(w, uid)
                     and ("workloads", w["metadata"]["name"]) in creators]
        self.assertEqual(len(workloads), 1, workloads)
        rss = [rs for rs in self.env.list("replicasets", "apps/v1") if controlled_by(rs, uid)]
        self.assertEqual(len(rss), 1, rss)
        in_tree_pg = f"{name}-{rss[0]['metadata']['labels']['pod-template-hash']}"
        pg = self.get(f"{PODGROUPS}/{in_tree_pg}")
        self.assertIsNotNone(pg)
        self.assertTrue(controlled_by(pg, rss[0]["metadata"]["uid"]))
        self.assertIn(("podgroups", in_tree_pg), creators)
        # wasd's objects of the old Deployment are gone.
        self.assertIsNone(self.get(f"{WORKLOADS}/{old_workload['metadata']['name']}"))
        for pg in old_podgroups:
            self.assertIsNone(self.get(f"{PODGROUPS}/{pg['metadata']['name']}"))
        self.assertEqual([w for w in self.env.workloads() if controlled_by(w, old_uid)], [])
        return d

    def admin_writes(self, since):
        return [e for e in self.env.srv.Audit(since=since, user=ADMIN, methods=WRITES)]

    # ------------------------------------------------------------------ tests

    def test_dry_run_prints_plan_and_writes_nothing(self):
        d, w, pgs = self.run_by_wasd("dry")
        since = self.env.srv.LastSeq()
        code, out, err = self.migrate("deployment/dry")
        self.assertEqual(code, 0, err)
        self.assertIn("Dry run: nothing was changed", err)
        self.assertIn("# Plan: in-place\n", out)
        self.assertIn("# Downtime: yes: from the delete until the new pods are Available", out)
        manifest = yaml.safe_load(out)
        self.assertEqual(manifest["metadata"]["name"], "dry")
        self.assertEqual(manifest["spec"]["scheduling"], CONFIG)
        self.assertNotIn("annotations", manifest["metadata"])
        self.assertNotIn("wasd.io/managed", manifest["metadata"].get("labels") or {})
        self.assertEqual(manifest["spec"]["template"]["metadata"]["labels"], {"app": "dry"})
        for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
            self.assertNotIn(key, manifest["metadata"])
        self.assertNotIn("status", manifest)

        code, out, err = self.migrate("deployment", "dry", "--plan", "side-by-side", "-o", "json")
        self.assertEqual(code, 0, err)
        item = json.loads(out)["items"][0]
        self.assertEqual((item["plan"], item["name"], item["newName"]), ("side-by-side", "dry", "dry-intree"))
        self.assertEqual(item["manifest"]["metadata"]["name"], "dry-intree")
        self.assertEqual(item["manifest"]["spec"]["selector"], {"matchLabels": {"app": "dry"}})
        self.assertTrue(item["downtime"].startswith("none expected"))

        # The only writes are the server-side dry runs that ask whether spec.scheduling is kept.
        writes = self.admin_writes(since)
        self.assertEqual(len(writes), 2, writes)
        for e in writes:
            self.assertEqual(e["method"], "POST")
            self.assertEqual((e.get("query") or {}).get("dryRun"), "All", e)
        self.assertEqual(self.get(f"{DEPLOYMENTS}/dry")["metadata"]["uid"], d["metadata"]["uid"])
        self.assertIsNotNone(self.get(f"{WORKLOADS}/{w['metadata']['name']}"))
        self.assertIsNone(self.get(f"{DEPLOYMENTS}/dry-intree"))

    def test_in_place(self):
        d, w, pgs = self.run_by_wasd("inplace")
        since = self.env.srv.LastSeq()
        code, out, err = self.migrate("deployment/inplace", "--apply", "--plan", "in-place", "--yes",
                                      "--timeout", "30s")
        self.assertEqual(code, 0, out + err)
        # M4: saved before any write, and the path said first.
        saved = os.path.join(self.tmp, "wasd-migrate-default-inplace.yaml")
        self.assertTrue(err.startswith("deployment default/inplace: the new manifest is saved in "
                                       "wasd-migrate-default-inplace.yaml"), err)
        with open(saved) as f:
            kept = yaml.safe_load(f)
        self.assertEqual(kept["spec"]["scheduling"], CONFIG)
        self.assertIn("step 2/5: deleted deployment default/inplace (propagationPolicy Foreground); "
                      "downtime starts", err)
        self.assertIn("step 5/5: deployment default/inplace is Available, run by the in-tree controller", err)
        new = self.assert_in_tree("inplace", d["metadata"]["uid"], w, pgs, since)
        # Refused now: it carries spec.scheduling.
        code, _, err = self.migrate("deployment/inplace")
        self.assertEqual(code, 1)
        self.assertIn("error: cannot migrate deployment default/inplace: already carries spec.scheduling: "
                      "the in-tree Deployment controller runs it", err)
        self.assertEqual(self.get(f"{DEPLOYMENTS}/inplace")["metadata"]["uid"], new["metadata"]["uid"])

    def test_side_by_side(self):
        d, w, pgs = self.run_by_wasd("sbs")
        since = self.env.srv.LastSeq()
        code, out, err = self.migrate("deployment/sbs", "--plan", "side-by-side", "--apply", "--timeout", "30s")
        self.assertEqual(code, 0, out + err)
        # The old Deployment was deleted only after the new one was Available.
        lines = err.splitlines()
        available = next(i for i, l in enumerate(lines) if "sbs-intree is Available" in l)
        deleted = next(i for i, l in enumerate(lines) if "deleted deployment default/sbs " in l)
        self.assertLess(available, deleted, err)
        self.assertIsNone(self.get(f"{DEPLOYMENTS}/sbs"))
        self.assert_in_tree("sbs-intree", d["metadata"]["uid"], w, pgs, since)
        # The same pod labels: the Service selecting app=sbs selects the new pods.
        self.assertEqual(len([p for p in self.env.pods("sbs") if not p["metadata"].get("deletionTimestamp")]), 2)

    def test_failure_midway_says_the_state_left(self):
        """Side by side, the delete of the old Deployment fails (an injected 500): the command
        stops there and says that both Deployments run and what to do."""
        d, _, _ = self.run_by_wasd("half")
        self.env.srv.SetFaults([{"code": 500, "methods": ["DELETE"], "path": "/deployments/half$",
                                 "user": ADMIN, "count": 1}])
        try:
            code, out, err = self.migrate("deployment/half", "--plan", "side-by-side", "--apply",
                                          "--timeout", "30s")
        finally:
            self.env.srv.ClearFaults()
        self.assertEqual(code, 1, err)
        self.assertIn("error: deployment default/half: step 4/5 failed: deleting deployment default/half: ", err)
        self.assertIn("\nState: deployment default/half-intree runs under the in-tree controller and deployment "
                      "default/half still runs under wasd (both behind the Service)\nNext: ", err)
        self.assertNotIn("migrated", err)
        self.assertEqual(self.get(f"{DEPLOYMENTS}/half")["metadata"]["uid"], d["metadata"]["uid"])
        self.assertIn("scheduling", self.get(f"{DEPLOYMENTS}/half-intree")["spec"])
        # Run again: the new name is taken, nothing is written.
        code, _, err = self.migrate("deployment/half", "--plan", "side-by-side", "--apply")
        self.assertEqual(code, 1)
        self.assertIn("deployment default/half-intree already exists; choose another name with --new-name", err)

    def test_refusals(self):
        # Not managed by wasd.
        plain = deployment("plain", scheduling=False, strategy=None)
        self.env.create(DEPLOYMENTS, plain)
        since = self.env.srv.LastSeq()
        code, out, err = self.migrate("deployment/plain", "--apply", "--plan", "in-place", "--yes")
        self.assertEqual(code, 1)
        self.assertEqual(out, "")
        self.assertIn("error: cannot migrate deployment default/plain: is not managed by wasd (no annotation "
                      "wasd.io/scheduling)", err)
        self.assertIn("Nothing was changed", err)
        self.assertEqual(self.admin_writes(since), [])
        code, _, err = self.migrate("deployment/missing")
        self.assertEqual((code, err), (1, 'error: deployment "missing" not found in namespace "default"\n'))
        code, _, err = self.migrate()
        self.assertEqual(code, 2)
        self.assertIn("no Deployment given", err)

    def test_refused_where_the_gate_is_off(self):
        """A cluster whose API server drops spec.scheduling (no --in-tree-deployment), and a
        non-native backend: both refused, nothing written."""
        with ApiServer(args=["--bookmark-interval", "0.5"]) as srv:
            srv.Request("POST", DEPLOYMENTS, gang("off"))
            volcano = gang("vc")
            volcano["spec"]["template"]["metadata"]["labels"]["wasd.io/backend"] = "volcano"
            srv.Request("POST", DEPLOYMENTS, volcano)
            since = srv.LastSeq()
            code, out, err = self.migrate("--all", "--apply", "--plan", "in-place", "--yes", srv=srv)
            self.assertEqual(code, 1, out + err)
            self.assertIn("error: cannot migrate deployment default/off: the API server dropped spec.scheduling "
                          "from a dry-run create of the new Deployment: the in-tree Deployment integration is "
                          "off on this cluster (feature gate WorkloadWithDeployment", err)
            self.assertIn("error: cannot migrate deployment default/vc: runs on wasd's volcano backend; the "
                          "in-tree controller creates only native scheduling.k8s.io Workloads and PodGroups", err)
            self.assertIn("Nothing was changed: 2 Deployments cannot be migrated.", err)
            writes = [e for e in srv.Audit(since=since, user=ADMIN, methods=WRITES)]
            self.assertTrue(writes and all((e.get("query") or {}).get("dryRun") == "All" for e in writes), writes)
            self.assertEqual(srv.Get(f"{DEPLOYMENTS}/off")["metadata"]["annotations"][SCHEDULING], json.dumps(CONFIG))

    def test_apply_needs_a_plan_and_in_place_a_yes(self):
        """M4: no plan that deletes is a default, and in place is confirmed (a script says
        --yes): refused with exit 2 before any write."""
        d, _, _ = self.run_by_wasd("careful")
        since = self.env.srv.LastSeq()
        code, _, err = self.migrate("deployment/careful", "--apply")
        self.assertEqual(code, 2, err)
        self.assertIn("--apply needs --plan in-place", err)
        code, _, err = self.migrate("deployment/careful", "--apply", "--plan", "in-place")
        self.assertEqual(code, 2, err)
        self.assertIn("add --yes to go ahead", err)
        self.assertEqual([e for e in self.admin_writes(since)
                          if (e.get("query") or {}).get("dryRun") != "All"], [])
        self.assertEqual(self.get(f"{DEPLOYMENTS}/careful")["metadata"]["uid"], d["metadata"]["uid"])

    def test_killed_after_the_delete_is_resumed(self):
        """M4: `--apply --plan in-place` killed with SIGKILL right after its delete (the wait
        that follows is held up) leaves the Deployment gone; `--resume FILE` with the saved
        manifest brings it back under the in-tree controller. On 8a67bc2 the only copy was
        the manifest on stdout and a rerun said "not found"."""
        d, w, pgs = self.run_by_wasd("killed")
        since = self.env.srv.LastSeq()
        # Every read of the Deployment after the delete waits 20 s: the kill lands there.
        self.env.srv.SetFaults([{"code": "delay", "delay": 20, "methods": ["GET"],
                                 "path": "/deployments/killed$", "user": ADMIN}])
        proc = subprocess.Popen([KUBECTL, "wasd", "migrate", "deployment/killed", "--apply", "--plan",
                                 "in-place", "--yes", "--timeout", "60s"],
                                env=self.plugin_env(), cwd=self.tmp, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: [e for e in self.admin_writes(since) if e["method"] == "DELETE"
                              and e["path"].endswith("/deployments/killed") and e.get("status") == 200],
                     30, 0.1, "the migrate's DELETE")
            # The wait after the delete is held up by the fault: kill the migrate there.
            # (kubectl runs the plugin with exec, so the pid is wasd's own.)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            self.env.srv.ClearFaults()
        wait_for(lambda: self.get(f"{DEPLOYMENTS}/killed") is None, 30, 0.2, "the old Deployment gone")
        saved = os.path.join(self.tmp, "wasd-migrate-default-killed.yaml")
        self.assertTrue(os.path.exists(saved))
        code, out, err = self.migrate("--resume", saved, "--timeout", "30s")
        self.assertEqual(code, 0, out + err)
        self.assertIn("is gone: creating it from", err)
        self.assert_in_tree("killed", d["metadata"]["uid"], w, pgs, since)
        # A file that is not wasd's: refused, saying why.
        other = os.path.join(self.tmp, "plain.yaml")
        with open(other, "w") as f:
            f.write("apiVersion: apps/v1\nkind: Deployment\n")
        code, _, err = self.migrate("--resume", other)
        self.assertEqual(code, 1)
        self.assertIn("not saved by wasd migrate --apply", err)
        code, _, err = self.migrate("--resume", other, "deployment/x")
        self.assertEqual(code, 2)

    def test_help(self):
        code, out, _ = self.migrate("--help")
        self.assertEqual(code, 0)
        for flag in ("--plan", "--new-name", "--apply", "--all", "-A", "--timeout", "-o, --output",
                     "--yes", "--save-manifest", "--resume",
                     "in-place", "side-by-side", "WorkloadWithDeployment", "kubectl wasd migrate"):
            self.assertIn(flag, out)


if __name__ == "__main__":
    unittest.main()
