"""Quick mode of the reconciler benchmark, for CI: tools/bench/reconciler_bench.py
with 50 opted-in Deployments x 4 replicas created at once on the test API
server, the real `wasd webhook` and `wasd reconciler`. It checks behaviour,
never timing: everything converges; the reconciler's successful writes per
Deployment are exactly the minimum (1 Workload, 1 PodGroup, and under the
shipped default hold no pod patch: the scheduler holds the pods, docs/design.md
Q23); no write is refused by the server; a full resync after convergence
writes nothing. The same holds for one non-native backend under wasd's gate
(volcano with --pod-hold gate, 20 Deployments): 1 Volcano PodGroup, no
Workload, 1 gate lift per pod, nothing on resync. The figures it prints
(time to converge, peak RSS) are for reading only; the full run is
`python3 tools/bench/reconciler_bench.py` (1,000 Deployments, tools/bench/RESULTS.md)."""
import json
import os
import subprocess
import sys
import unittest

SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(SOURCE_DIR, "tools", "bench", "reconciler_bench.py")
REPLICAS = 4


class ReconcilerBenchQuick(unittest.TestCase):
    def Run(self, *args):
        """Runs the bench with `args`; returns its JSON result line, decoded."""
        p = subprocess.run([sys.executable, SCRIPT, "--json", "--resync", "5", "--timeout", "300", *args],
                           capture_output=True, text=True, timeout=480)
        sys.stdout.write(p.stdout)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return json.loads([line for line in p.stdout.splitlines() if line.startswith("{")][-1])

    def CheckMinimumWrites(self, result, n, want):
        self.assertEqual(result["n"], n)
        per = result["writes_per_deployment"]
        # The GangScheduled condition (PATCH deployments/status) is the gang
        # doctor's write, checked by e2e.test_gang_status; its count depends on
        # how many reasons a gang passes through on its way, so it is left out.
        # No write refused, until convergence or after (a refused write is
        # one planned from a stale view: a second create, a second gate lift).
        # The one exception is the doctor's status patch: it carries a JSON
        # patch `test` so that it is refused (409/422) when the cached
        # Deployment is behind, and the doctor then looks again
        # (GangStatus::Publish) — a race with the Deployment controller's own
        # status writes, not a plan from a stale view.
        def doctors(refused):
            return "/deployments/" in refused and refused.split(" -> ")[0].endswith("/status") \
                and refused.endswith(("-> 409", "-> 422"))
        self.assertEqual([r for r in result["refused_writes"] if not doctors(r)], [], per)
        ok = {k: v for k, v in per.items()
              if k not in ("POST events", "PATCH deployments/status")
              and not k.startswith("PATCH deployments/status (failed ")}
        self.assertEqual(ok, want, per)
        self.assertEqual(result["resync_writes"], 0, result)
        self.assertGreaterEqual(result["resync_reconciles"], n, "the resync did reconcile every Deployment")

    def test_quick_run_converges_with_the_minimum_writes(self):
        self.CheckMinimumWrites(self.Run("--quick"), 50, {"POST workloads": 1.0, "POST podgroups": 1.0})

    def test_volcano_converges_with_the_minimum_writes(self):
        result = self.Run("--n", "20", "--backend", "volcano", "--pod-hold", "gate")
        self.assertEqual((result["backend"], result["pod_hold"]), ("volcano", "gate"))
        self.CheckMinimumWrites(result, 20, {"POST podgroups.scheduling.volcano.sh": 1.0,
                                             "PATCH pods": float(REPLICAS)})


if __name__ == "__main__":
    unittest.main(verbosity=2)
