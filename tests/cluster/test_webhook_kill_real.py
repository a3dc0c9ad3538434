#!/usr/bin/env python3
"""REAL CONTROL PLANE: one of two webhook replicas killed (SIGKILL, by the PID
the node agent records) while `kubectl apply` traffic goes on (issue 40).

What the chart promises: `admission.failurePolicy: Fail` (values.yaml), so a
call of the API server's that does not reach a webhook is a refusal
("failed calling webhook"), never an admission without review. With two
replicas the Service keeps one Ready endpoint, so such refusals may only come
from calls in flight to, or routed to, the killed replica before its
readiness probe fails. Proven over APPLIES applies (valid creates and
updates, bad creates, alternating), the kill after a third of them:

- no bad Deployment is ever stored: each bad apply is refused, by wasd's
  denial or by the Fail policy;
- no valid apply is denied by wasd; a valid apply that fails does so only
  with the Fail policy's "failed calling webhook", and the same apply
  repeated once succeeds (the survivor serves);
- no such failure before the kill;
- the killed container is restarted by the agent and Ready again.
The counts of each outcome are printed.
"""
import os
import signal
import subprocess
import sys
import unittest

from cluster.realcluster import APP_NS, NS, RealCluster, gang_manifest as deployment

APPLIES = 60
KILL_AT = APPLIES // 3


class WebhookKillOnRealControlPlane(RealCluster):
    def apply(self, text):
        return subprocess.run([os.path.join(self.bin, "kubectl"), "apply", "-n", APP_NS, "-f", "-"],
                              input=text, capture_output=True, text=True, env=self.env, timeout=60)

    def webhook_pods(self):
        return self.live_pods(NS, "app.kubernetes.io/component=webhook")

    def test_applies_during_a_webhook_replica_kill(self):
        self.install_chart("webhook.replicaCount=2")
        pods = self.webhook_pods()
        self.assertEqual(len(pods), 2)
        victim = pods[0]
        name = victim["metadata"]["name"]
        pid = self.pid_of(victim)

        counts = {"valid admitted": 0, "valid refused by Fail policy": 0, "valid denied by wasd": 0,
                  "bad denied by wasd": 0, "bad refused by Fail policy": 0, "bad admitted": 0}
        other = []
        for i in range(APPLIES):  # bounded: APPLIES
            if i == KILL_AT:
                os.kill(pid, signal.SIGKILL)
                sys.stderr.write(f"killed {name} (pid {pid}) before apply {i}\n")
            if i % 3 == 2:
                text, valid = deployment(f"bad-{i}", 2, 5), False
            else:
                # creates of v-0..v-3, then updates of them (replicas 2 <-> 3)
                text, valid = deployment(f"v-{(i // 3) % 4}", 2 + (i // 12) % 2, 2), True
            p = self.apply(text)
            err = p.stderr
            if valid:
                if p.returncode == 0:
                    counts["valid admitted"] += 1
                elif "failed calling webhook" in err:
                    counts["valid refused by Fail policy"] += 1
                    self.assertGreaterEqual(i, KILL_AT, f"apply {i} failed before the kill: {err}")
                    again = self.apply(text)
                    self.assertEqual(again.returncode, 0, f"apply {i} repeated: {again.stderr}")
                elif "denied the request" in err or "is invalid" in err:
                    counts["valid denied by wasd"] += 1
                else:
                    other.append((i, err))
            else:
                if p.returncode == 0:
                    counts["bad admitted"] += 1
                elif "failed calling webhook" in err:
                    counts["bad refused by Fail policy"] += 1
                    self.assertGreaterEqual(i, KILL_AT, f"apply {i} failed before the kill: {err}")
                elif "is invalid" in err and "gang.minCount: Invalid value: 5" in err:
                    counts["bad denied by wasd"] += 1  # kubectl prints the 422's message
                else:
                    other.append((i, err))
        print(f"outcomes of {APPLIES} applies, kill before apply {KILL_AT}: {counts}")
        self.assertEqual(other, [], "applies that failed for another reason")
        self.assertEqual(counts["bad admitted"], 0)
        self.assertEqual(counts["valid denied by wasd"], 0)
        self.assertEqual(counts["valid admitted"] + counts["valid refused by Fail policy"], APPLIES - APPLIES // 3)
        self.assertGreater(counts["bad denied by wasd"], 0)
        stored = [d["metadata"]["name"] for d in self.get("deployments", "-n", APP_NS)["items"]]
        self.assertEqual(sorted(stored), [f"v-{k}" for k in range(4)])

        self.wait_restarted(victim, "the killed webhook restarted by the agent and Ready")
        for k in range(4):
            self.kubectl("delete", "-n", APP_NS, "deployment", f"v-{k}", "--wait=false")


if __name__ == "__main__":
    unittest.main()
