#!/usr/bin/env python3
"""REAL CONTROL PLANE (issue 41): the PodGroups wasd writes for Volcano, KAI and
coscheduling against the CRDs those projects publish (tests/testdata/crds, one
named release each, see its README), installed into the real kube-apiserver
v1.37.2. Until now these objects met only the schema subsets of the test API
server. For each backend, wasd is installed (helm) with that backend selected
and gang Deployments are applied. Proven, per backend:

- the real API server stores the group wasd creates (a create with
  fieldValidation=Strict: an unknown field would be refused, and a field the
  structural schema prunes would be missing): every spec field is stored as
  sent, equal both to what docs/backends.md and the backend's compiler promise
  for that Deployment (written out here) and to what `wasd check` prints for
  it; its label, Deployment-UID annotation and ReplicaSet owner are kept;
- every pod names the group with the backend's link and the backend's
  scheduler;
- a scale-up's JSON patch of minMember is accepted (Volcano and coscheduling:
  the new replica count; KAI: unchanged while no member is active,
  docs/backends.md "KAI: what a scale-up means");
- the reconciler converges: the Deployment's GangScheduled condition says
  WaitingForQuorum (no backend scheduler runs here, so no pod is bound), its
  metrics count no failed reconcile and report the API served, and its log
  has no error line.
"""
import copy
import json
import os
import re
import subprocess
import sys
import time
import unittest

from cluster.realcluster import NS, RealCluster, run, wait_until
from lib.paths import SOURCE_DIR, WASD

CRDS = os.path.join(SOURCE_DIR, "tests", "testdata", "crds")
PRIORITY = "wasd-test-high"

# backend -> (group resource, pod link: metadata member and key, schedulerName of its pods)
GROUPS = {
    "volcano": ("podgroups.scheduling.volcano.sh", "annotations", "scheduling.k8s.io/group-name", "volcano"),
    "kai": ("podgroups.scheduling.run.ai", "annotations", "pod-group-name", "kai-scheduler"),
    "coscheduling": ("podgroups.scheduling.x-k8s.io", "labels", "scheduling.x-k8s.io/pod-group",
                     "scheduler-plugins-scheduler"),
}

# The chart values of each backend's install (clusterFacts the compilers need).
VALUES = {
    "volcano": ["clusterFacts.volcanoTopologyTiers.topology\\.kubernetes\\.io/zone=2",
                "clusterFacts.volcanoTopologyTiers.kubernetes\\.io/hostname=leaf"],
    "kai": ["clusterFacts.kaiTopology=cluster-topology",
            "clusterFacts.kaiTopologyLevels={topology.kubernetes.io/zone}"],
    "coscheduling": [],
}
# The same facts as `wasd check` flags.
CHECK_FLAGS = {
    "volcano": ["--volcano-topology-tiers", "kubernetes.io/hostname=leaf,topology.kubernetes.io/zone=2"],
    "kai": ["--kai-topology", "cluster-topology", "--kai-topology-levels", "topology.kubernetes.io/zone"],
    "coscheduling": [],
}

# backend -> [(Deployment, replicas, scheduling intent, priority class, the group spec expected)].
# A gang without minCount has minMember = replicas; a topology key becomes Volcano's
# networkTopology (tier number: highestTierAllowed, name: highestTierName) or KAI's
# topologyConstraint; queue, minResources and scheduleTimeoutSeconds come from the
# backend's block; the pod template's priorityClassName is copied (Volcano, KAI).
CASES = {
    "volcano": [
        ("vc-zone", 3,
         {"schedulingPolicy": {"gang": {}},
          "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
          "backends": {"volcano": {"queue": "inference", "minResources": {"cpu": "3", "memory": "3Gi"}}}},
         PRIORITY,
         {"minMember": 3, "queue": "inference", "priorityClassName": PRIORITY,
          "minResources": {"cpu": "3", "memory": "3Gi"},
          "networkTopology": {"mode": "hard", "highestTierAllowed": 2}}),
        ("vc-host", 2,
         {"schedulingPolicy": {"gang": {"minCount": 2}},
          "schedulingConstraints": {"topology": [{"key": "kubernetes.io/hostname"}]}},
         None,
         {"minMember": 2, "networkTopology": {"mode": "hard", "highestTierName": "leaf"}}),
    ],
    "kai": [
        ("kai-zone", 3,
         {"schedulingPolicy": {"gang": {}}, "disruptionMode": {"all": {}},  # a KAI gang must say all
          "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
          "backends": {"kai": {"queue": "team-a"}}},
         PRIORITY,
         {"minMember": 3, "queue": "team-a", "priorityClassName": PRIORITY,
          "topologyConstraint": {"topology": "cluster-topology",
                                 "requiredTopologyLevel": "topology.kubernetes.io/zone"}}),
        ("kai-basic", 1, {"schedulingPolicy": {"basic": {}}}, None,
         {"minMember": 1, "queue": "default-queue"}),
    ],
    "coscheduling": [
        ("cs-gang", 3,
         {"schedulingPolicy": {"gang": {}},
          "backends": {"coscheduling": {"minResources": {"cpu": "3"}, "scheduleTimeoutSeconds": 120}}},
         None,
         {"minMember": 3, "minResources": {"cpu": "3"}, "scheduleTimeoutSeconds": 120}),
    ],
}
# What the published CRD's structural schema defaults on top of what wasd sends (the
# Volcano CRD's `default: default` of spec.queue: wasd names no queue when neither the
# Deployment nor --volcano-queue does). Anything else stored differently is a bug.
CRD_DEFAULTS = {"volcano": {"queue": "default"}, "kai": {}, "coscheduling": {}}
# The Deployment each backend scales 3 -> 4, and minMember after it.
SCALE = {"volcano": ("vc-zone", 4), "kai": ("kai-zone", 3), "coscheduling": ("cs-gang", 4)}


def deployment(backend, name, replicas, intent, priority):
    spec = {"containers": [{"name": "worker", "image": "worker:v1"}]}
    if priority:
        spec["priorityClassName"] = priority
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": backend,
                     "annotations": {"wasd.io/backend": backend, "wasd.io/scheduling": json.dumps(intent)}},
        "spec": {"replicas": replicas, "strategy": {"type": "Recreate"},
                 "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


class BackendsOnRealApiServer(RealCluster):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        self = cls("run")
        t0 = time.monotonic()
        self.kubectl("apply", "--server-side", "-R", "-f", CRDS)
        self.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                     "crd/podgroups.scheduling.volcano.sh", "crd/queues.scheduling.volcano.sh",
                     "crd/podgroups.scheduling.run.ai", "crd/queues.scheduling.run.ai",
                     "crd/podgroups.scheduling.x-k8s.io")
        self.kubectl("create", "priorityclass", PRIORITY, "--value=1000")
        # The queues the Deployments name, as each project's Queue CRD takes them.
        self.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                    "metadata": {"name": "inference"}, "spec": {"weight": 1}})
        for q in ("team-a", "default-queue"):
            self.apply({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": q},
                        "spec": {"resources": {"cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}})
        self.install_chart("webhook.replicaCount=1", "reconciler.replicaCount=1", "backend=volcano",
                           *VALUES["volcano"])
        sys.stderr.write(f"CRDs, queues and wasd: {time.monotonic() - t0:.1f} s\n")

    def apply(self, obj):
        return run(os.path.join(self.bin, "kubectl"), "apply", "-f", "-", input=json.dumps(obj), env=self.env)

    def select_backend(self, backend):
        """wasd with `backend` selected (helm upgrade; the first backend is installed so)
        and every pod of the new revision ready."""
        if backend != "volcano":
            version = run(WASD, "version").stdout.split()[1]
            args = [a for v in ["webhook.replicaCount=1", "reconciler.replicaCount=1", f"backend={backend}",
                                *VALUES[backend]] for a in ("--set", v)]
            self.helm("upgrade", "wasd", os.path.join(SOURCE_DIR, "charts", "wasd"), "-n", NS,
                      "--set", f"image.repository={self.image}", "--set", f"image.tag={version}", *args,
                      "--timeout", "5m")
            for d in ("wasd-webhook", "wasd-reconciler"):
                self.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=120s")
            # A terminating pod of the previous revision may still answer (the old
            # webhook would deny the new backend): wait until it is gone.
            wait_until("only the new revision's pods", lambda: (
                len(self.get("pods", "-n", NS, "-l", "app.kubernetes.io/component in (webhook,reconciler)")["items"]) == 2,
                None), timeout=120)
        for d in ("wasd-webhook", "wasd-reconciler"):
            args = self.get("deployment", "-n", NS, d)["spec"]["template"]["spec"]["containers"][0]["args"]
            self.assertIn(backend, args[args.index("--backend") + 1], f"{d}: {args}")
        self.kubectl("create", "namespace", backend)

    def reconciler_pod(self):
        pods = [p for p in self.get("pods", "-n", NS, "-l", "app.kubernetes.io/component=reconciler")["items"]
                if not p["metadata"].get("deletionTimestamp")]
        self.assertEqual(len(pods), 1, [p["metadata"]["name"] for p in pods])
        return pods[0]

    def metrics(self):
        ip = self.reconciler_pod()["status"]["podIP"]
        text = self.scrape(ip)
        out = {}
        for m in re.finditer(r'^([a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$', text, re.M):
            out[m.group(1)] = float(m.group(2))
        return out

    def expected_by_check(self, backend, manifest):
        """The group `wasd check` compiles for `manifest` under the install's facts."""
        p = run(WASD, "check", "--backend", backend, *CHECK_FLAGS[backend], "-f", "-", "-o", "json",
                input=json.dumps(manifest))
        item = json.loads(p.stdout)["items"][0]
        self.assertTrue(item["allowed"], item)
        groups = [o for o in item["objects"] if o["kind"] == "PodGroup"]
        self.assertEqual(len(groups), 1, item["objects"])
        return groups[0]

    def current_rs(self, ns, name):
        d = self.get("deployment", "-n", ns, name)
        rss = [rs for rs in self.get("replicasets", "-n", ns, "-l", f"app={name}")["items"]
               if any(o.get("uid") == d["metadata"]["uid"] for o in rs["metadata"].get("ownerReferences", []))
               and rs["spec"].get("replicas", 0) > 0]
        self.assertEqual(len(rss), 1, [rs["metadata"]["name"] for rs in rss])
        return d, rss[0]

    def group_of(self, backend, ns, rs):
        resource = GROUPS[backend][0]

        def one():
            items = [g for g in self.get(resource, "-n", ns)["items"]
                     if any(o.get("uid") == rs["metadata"]["uid"] for o in g["metadata"].get("ownerReferences", []))]
            return len(items) == 1, items
        return wait_until(f"the {backend} group of {rs['metadata']['name']}", one, timeout=90)[0]

    def check_backend(self, backend):
        resource, where, link, scheduler = GROUPS[backend]
        self.select_backend(backend)
        t0 = time.monotonic()
        manifests = {}
        for name, replicas, intent, priority, want_spec in CASES[backend]:
            manifests[name] = deployment(backend, name, replicas, intent, priority)
            self.apply(manifests[name])

        for name, replicas, intent, priority, want_spec in CASES[backend]:
            d, rs = self.current_rs(backend, name)
            group = self.group_of(backend, backend, rs)
            gname = group["metadata"]["name"]
            # Stored as sent (plus the CRD's defaults): the spec the docs promise is the
            # spec wasd check compiles, and every field of it is stored unchanged.
            compiled = self.expected_by_check(backend, manifests[name])
            self.assertEqual(compiled["apiVersion"], group["apiVersion"])
            self.assertEqual(compiled["spec"], want_spec, f"{name}: wasd check")
            stored = {**CRD_DEFAULTS[backend], **want_spec}
            self.assertEqual(group["spec"], stored, f"{gname}: stored spec")
            meta = group["metadata"]
            self.assertEqual(meta.get("labels"), compiled["metadata"]["labels"], gname)
            self.assertEqual(meta.get("annotations", {}).get("wasd.io/deployment-uid"), d["metadata"]["uid"], gname)
            self.assertEqual(meta["ownerReferences"],
                             [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"],
                               "uid": rs["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}], gname)
            self.assertTrue(gname.startswith(rs["metadata"]["name"] + "-"), gname)

            def linked():
                pods = self.live_pods(backend, f"app={name}")
                return len(pods) == replicas and all(
                    p["metadata"].get(where, {}).get(link) == gname and not p["spec"].get("schedulingGates")
                    for p in pods), pods
            for p in wait_until(f"{name}: {replicas} pods linked to {gname}, no gate", linked, timeout=90):
                self.assertEqual(p["spec"]["schedulerName"], scheduler, p["metadata"]["name"])
                self.assertFalse(p["spec"].get("nodeName"), "no backend scheduler runs: nothing binds")

        # A scale-up: the reconciler's JSON patch of minMember (or none on KAI).
        name, want_min = SCALE[backend]
        self.kubectl("scale", "-n", backend, f"deployment/{name}", "--replicas=4")
        _, rs = self.current_rs(backend, name)
        wait_until(f"{name}: 4 linked pods", lambda: (
            len([p for p in self.live_pods(backend, f"app={name}") if p["metadata"].get(where, {}).get(link)]) == 4,
            None), timeout=90)
        wait_until(f"{name}: minMember {want_min}", lambda: (
            self.group_of(backend, backend, rs)["spec"]["minMember"] == want_min,
            self.group_of(backend, backend, rs)["spec"]), timeout=60)

        # Converged: the gang doctor's condition, the metrics, the log.
        for name, *_ in CASES[backend]:
            def condition():
                conds = self.get("deployment", "-n", backend, name)["status"].get("conditions", [])
                c = [c for c in conds if c["type"] == "GangScheduled"]
                return bool(c) and c[0]["status"] == "False" and c[0]["reason"] == "WaitingForQuorum", conds
            wait_until(f"{name}: GangScheduled False WaitingForQuorum", condition, timeout=90)
        m = self.metrics()
        self.assertEqual(m.get("wasd_reconciler_scheduling_api_served"), 1.0)
        self.assertEqual(m.get("wasd_reconciler_errors_total"), 0.0)
        self.assertEqual(m.get('wasd_reconciler_reconciles_total{result="error"}', 0.0), 0.0)
        self.assertGreater(m.get('wasd_reconciler_writes_total{action="CreatePodGroup"}', 0.0), 0.0)
        log = self.kubectl("logs", "-n", NS, self.reconciler_pod()["metadata"]["name"]).stdout
        bad = [line for line in log.splitlines() if re.search(r'"level":"(error|warn)"|\blevel=(error|warn)', line)]
        self.assertEqual(bad, [], "reconciler log")
        sys.stderr.write(f"{backend}: {time.monotonic() - t0:.1f} s\n")
        # Gone before the next backend is selected: its reconciler would find these
        # Deployments of a backend it does not allow.
        self.kubectl("delete", "namespace", backend, "--timeout=120s")

    def test_1_volcano(self):
        self.check_backend("volcano")

    def test_2_kai(self):
        self.check_backend("kai")

    def test_3_coscheduling(self):
        self.check_backend("coscheduling")


if __name__ == "__main__":
    unittest.main()
