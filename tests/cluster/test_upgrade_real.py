#!/usr/bin/env python3
"""REAL CONTROL PLANE: upgrade from the previous release (v0.1.0, the commit in
tests/testdata/previous-release) with its own chart and its own binary, built
by tests/cluster/previous_release.sh, to the current chart and binary; then
`helm rollback` and `helm uninstall` (issue 42). The node agent runs the
previous binary for the previous image tag (WASD_BIN_FOR_TAG). Proven:

- the previous chart installs and its pods run the previous binary (the
  process's /proc/PID/exe), and its webhook denies a bad Deployment;
- after `helm upgrade` every wasd pod runs the current binary, a valid
  Deployment is admitted and reconciled (Workload and PodGroup);
- the skew of an upgrade in progress, webhook at N and reconciler at N-1
  (the reconciler's rollout paused across `helm upgrade`, so its old
  ReplicaSet with the old pod template and binary runs), admits, denies and
  reconciles a new Deployment;
- the reverse skew, webhook at N-1 and reconciler at N (the reconciler's
  rollout paused across `helm rollback`), admits, denies and reconciles;
- `helm rollback` brings the previous binary back, still admitting and
  denying;
- the caBundle of every webhook (both configurations) stays byte for byte
  what the install injected, through the upgrade (whose chart adds the
  wasd.io/ignore namespaceSelector expression) and the rollback (which
  removes it again and runs no hook to re-inject): helm's patch of each
  webhook leaves the field it does not own alone;
- `helm uninstall` leaves no Mutating/ValidatingWebhookConfiguration, no
  Secret or ConfigMap holding a CA or certificate in the release namespace.
"""
import os
import subprocess
import sys
import unittest

from cluster.realcluster import APP_NS, NS, RealCluster, gang_manifest, run, wait_until
from lib.paths import SOURCE_DIR, WASD

BAD = os.path.join(SOURCE_DIR, "examples", "bad-h1-mincount-over-replicas.yaml")


class UpgradeOnRealControlPlane(RealCluster):
    @classmethod
    def setUpClass(cls):
        script = os.path.join(SOURCE_DIR, "tests", "cluster", "previous_release.sh")
        cls.prev = run(script, timeout=3600).stdout.strip().splitlines()[-1]
        cls.prev_bin = os.path.join(cls.prev, "wasd")
        cls.prev_tag = run(cls.prev_bin, "version").stdout.split()[1]
        cls.cur_tag = run(WASD, "version").stdout.split()[1]
        os.environ["WASD_BIN_FOR_TAG"] = f"{cls.prev_tag}={cls.prev_bin}"
        try:
            super().setUpClass()
        finally:
            del os.environ["WASD_BIN_FOR_TAG"]

    def wasd_pods(self):
        return [p for p in self.get("pods", "-n", NS)["items"]
                if not p["metadata"].get("deletionTimestamp")
                and p["metadata"].get("labels", {}).get("app.kubernetes.io/component") in ("webhook", "reconciler")]

    def binaries(self, component):
        out = set()
        for p in self.wasd_pods():
            if p["metadata"]["labels"]["app.kubernetes.io/component"] != component:
                continue
            # A container between a crash and its restart has no live process
            # (or no pid file yet): say so, so that a wait retries and a
            # failure names the pod.
            try:
                out.add(os.path.realpath(os.readlink(f"/proc/{self.pid_of(p)}/exe")))
            except (OSError, ValueError) as e:
                out.add(f"no process for {p['metadata']['name']}: {e.__class__.__name__}")
        return out

    def runs(self, component, binary):
        want = {os.path.realpath(binary)}
        wait_until(f"every {component} pod running {binary}",
                   lambda: (self.binaries(component) == want, self.binaries(component)), timeout=120)

    def rolled_out(self):
        for d in ("wasd-webhook", "wasd-reconciler"):
            self.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=180s")

    def admitted_and_reconciled(self, name):
        p = subprocess.run([os.path.join(self.bin, "kubectl"), "apply", "-n", APP_NS, "-f", "-"],
                           input=gang_manifest(name, 2, 2),
                           capture_output=True, text=True, env=self.env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)

        def workload():
            names = [w["metadata"]["name"] for w in self.get("workloads.scheduling.k8s.io", "-n", APP_NS)["items"]]
            return any(name in n for n in names), names
        wait_until(f"the Workload of {name}", workload, timeout=120)

    def webhooks(self):
        """{(kind, webhook name): (caBundle, namespaceSelector keys)} as stored."""
        out = {}
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            for w in self.get(kind, "wasd")["webhooks"]:
                keys = [e["key"] for e in (w.get("namespaceSelector") or {}).get("matchExpressions") or []]
                out[(kind, w["name"])] = (w["clientConfig"].get("caBundle", ""), keys)
        return out

    def denied(self):
        p = self.kubectl("apply", "-n", APP_NS, "-f", BAD, check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("gang.minCount", p.stderr)

    def test_upgrade_skew_rollback_uninstall(self):
        sys.stderr.write(f"previous {self.prev_tag} ({self.prev_bin}), current {self.cur_tag}\n")
        self.kubectl("create", "namespace", NS)
        self.helm("install", "wasd", os.path.join(self.prev, "chart"), "-n", NS,
                  "--set", f"image.repository={self.image}", "--set", f"image.tag={self.prev_tag}",
                  "--timeout", "5m")
        self.rolled_out()
        self.runs("webhook", self.prev_bin)
        self.runs("reconciler", self.prev_bin)
        self.denied()
        self.admitted_and_reconciled("before-upgrade")
        installed = self.webhooks()
        self.assertTrue(installed)
        self.assertEqual([k for k, (ca, _) in installed.items() if not ca], [], "no caBundle after install")

        # The skew of an upgrade in progress: the webhook rolled to N while the
        # reconciler's old ReplicaSet (N-1: its pod template, its binary) still
        # runs. The reconciler's rollout is paused across `helm upgrade` (helm's
        # default wait, hookOnly, does not wait for it), then resumed.
        self.kubectl("rollout", "pause", "-n", NS, "deployment/wasd-reconciler")
        self.helm("upgrade", "wasd", os.path.join(SOURCE_DIR, "charts", "wasd"), "-n", NS,
                  "--set", f"image.repository={self.image}", "--set", f"image.tag={self.cur_tag}",
                  "--timeout", "5m")
        self.kubectl("rollout", "status", "deployment/wasd-webhook", "-n", NS, "--timeout=180s")
        self.runs("webhook", WASD)
        self.runs("reconciler", self.prev_bin)  # N-1: the paused rollout kept its old ReplicaSet
        self.denied()
        self.admitted_and_reconciled("skew")

        self.kubectl("rollout", "resume", "-n", NS, "deployment/wasd-reconciler")
        self.rolled_out()
        wait_until("only current binaries",
                   lambda: (self.binaries("webhook") | self.binaries("reconciler") == {os.path.realpath(WASD)},
                            self.binaries("webhook") | self.binaries("reconciler")), timeout=120)
        self.denied()
        self.admitted_and_reconciled("after-upgrade")
        upgraded = self.webhooks()
        self.assertEqual({k: ca for k, (ca, _) in upgraded.items()},
                         {k: ca for k, (ca, _) in installed.items()}, "the upgrade changed a caBundle")
        self.assertEqual([k for k, (_, keys) in upgraded.items() if "wasd.io/ignore" not in keys], [],
                         "the current chart's namespace opt-out label is not in every selector")

        # The reverse skew, on the way back: the webhook rolled back to N-1
        # while the reconciler's rollout is paused at N.
        self.kubectl("rollout", "pause", "-n", NS, "deployment/wasd-reconciler")
        self.helm("rollback", "wasd", "1", "-n", NS, "--timeout", "5m")
        self.kubectl("rollout", "status", "deployment/wasd-webhook", "-n", NS, "--timeout=180s")
        self.runs("webhook", self.prev_bin)
        self.runs("reconciler", WASD)  # N: the paused rollout kept the current ReplicaSet
        self.denied()
        self.admitted_and_reconciled("reverse-skew")
        self.kubectl("rollout", "resume", "-n", NS, "deployment/wasd-reconciler")
        self.rolled_out()
        wait_until("previous binaries after rollback",
                   lambda: (self.binaries("webhook") | self.binaries("reconciler") == {os.path.realpath(self.prev_bin)},
                            self.binaries("webhook") | self.binaries("reconciler")), timeout=120)
        self.denied()
        self.admitted_and_reconciled("after-rollback")
        self.assertEqual(self.webhooks(), installed, "the rollback changed a caBundle or a selector")

        for n in ("before-upgrade", "after-upgrade", "skew", "reverse-skew", "after-rollback"):
            self.kubectl("delete", "-n", APP_NS, "deployment", n, "--wait=false")
        self.helm("uninstall", "wasd", "-n", NS, "--timeout", "5m")
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            left = [i["metadata"]["name"] for i in self.get(kind)["items"]]
            self.assertEqual(left, [], f"{kind} left after uninstall")

        def no_ca():
            left = []
            for kind in ("secrets", "configmaps"):
                for i in self.get(kind, "-n", NS)["items"]:
                    if i["metadata"]["name"] == "kube-root-ca.crt":
                        continue  # the namespace's own, published by kube-controller-manager
                    if any(k.endswith((".crt", ".key", "caBundle")) for k in (i.get("data") or {})):
                        left.append(f"{kind}/{i['metadata']['name']}")
            return left == [], left
        wait_until("no Secret or ConfigMap with a CA or certificate left", no_ca, timeout=60)


if __name__ == "__main__":
    unittest.main()
