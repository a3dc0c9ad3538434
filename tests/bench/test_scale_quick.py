"""Quick mode of the scale bench, for CI: tools/bench/scale_bench.py with 100
Deployments x 10 replicas (1,000 pods padded to the 15 KB fixture) against the
bench API server (build/wasd-bench-apiserver). It checks behaviour and memory,
never time:

  * create: exactly 1 Workload per Deployment, 1 PodGroup per ReplicaSet and
    1 gate lift per pod, no other successful write but Events;
  * the same in scheduler hold (--pod-hold scheduler: pods without the gate,
    --normal-events=false): 1 Workload per Deployment, 1 PodGroup per
    ReplicaSet, no write per pod and no Event, at creation and at a rollout;
  * resync: a full --resync-period after convergence writes nothing;
  * rollout of 10 %: 1 new PodGroup and 1 gate lift per new pod, the old
    PodGroups deleted once their pods are gone;
  * scale to zero of 10 % others: their PodGroups deleted, nothing else;
  * no write refused by the server in any phase (a refused write is one
    planned from a stale cache: a second create, a second gate lift, a
    delete of a PodGroup already deleted);
  * memory: the reconciler's RSS above its idle baseline, per cached pod, is
    at most 2 KiB on top of a fixed 8 MiB allowance for what a small run
    cannot amortise (the list pages and watch buffers in flight, the
    allocator's arenas) — the cache itself keeps ~1 KB of each 15 KB pod.
The full run is tools/bench/scale.sh (tools/bench/RESULTS.md "The reconciler at scale")."""
import json
import os
import subprocess
import sys
import unittest

SOURCE_DIR = os.environ.get("WASD_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(SOURCE_DIR, "tools", "bench", "scale_bench.py")
N, REPLICAS = 100, 10
KIB, MIB = 1024, 1024 * 1024


def Run(*extra):
    p = subprocess.run([sys.executable, SCRIPT, "--n", str(N), "--replicas", str(REPLICAS),
                        "--qps", "0", "--workers", "2", "--resync", "5", "--timeout", "240",
                        "--json", *extra],
                       capture_output=True, text=True, timeout=400)
    sys.stdout.write(p.stderr[-4000:])
    return p


class ScaleQuick(unittest.TestCase):
    def test_scheduler_hold_writes_only_the_group_objects(self):
        """--pod-hold scheduler (docs/design.md Q23): the pods carry no gate, so a gang's
        writes are its Workload and PodGroup, none per pod; with --normal-events=false no
        Normal Event either (the bench server binds no pod, so the gang doctor's Warnings
        and conditions are left out, as below)."""
        p = Run("--phases", "create,rollout", "--pod-hold", "scheduler", "--normal-events", "false",
                "--gang-status", "false")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        r = json.loads([line for line in p.stdout.splitlines() if line.startswith("{")][-1])
        create, rollout = r["phases"]["create"], r["phases"]["rollout"]
        self.assertEqual(create["writes"], {"POST workloads": N, "POST podgroups": N}, create)
        self.assertEqual(rollout["writes"], {"POST podgroups": N // 10, "DELETE podgroups": N // 10},
                         rollout)

    def test_minimum_writes_and_bounded_memory(self):
        p = Run("--phases", "create,resync,rollout,zero")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        r = json.loads([line for line in p.stdout.splitlines() if line.startswith("{")][-1])
        print(json.dumps(r, indent=1))
        # No write is refused: a refused one ("(failed CODE)") is a write
        # planned from a stale view (a second create, a lift of a lifted gate,
        # a delete of a deleted PodGroup), which RecentWrites exists to stop.
        for name, phase in r["phases"].items():
            self.assertEqual(phase["refused_writes"], {}, f"{name}: {phase['by_verb']}")

        def Succeeded(writes):
            # PATCH deployments/status: the gang doctor's condition, one per
            # reason a gang passes through (e2e.test_gang_status checks it).
            return {k: v for k, v in writes.items()
                    if k not in ("POST events", "PATCH deployments/status")}

        create = r["phases"]["create"]
        writes = Succeeded(create["writes"])
        self.assertEqual(writes, {"POST workloads": N, "POST podgroups": N,
                                  "PATCH pods": N * REPLICAS}, create)
        self.assertEqual(create["pods"], N * REPLICAS)
        self.assertEqual(r["phases"]["resync"]["writes"], {}, r["phases"]["resync"])
        self.assertGreaterEqual(r["phases"]["resync"]["reconciles"], N, "a resync reconciled all")
        rollout = r["phases"]["rollout"]
        writes = Succeeded(rollout["writes"])
        self.assertEqual(writes, {"POST podgroups": N // 10, "DELETE podgroups": N // 10,
                                  "PATCH pods": N // 10 * REPLICAS}, rollout)
        zero = r["phases"]["zero"]
        self.assertEqual(Succeeded(zero["writes"]), {"DELETE podgroups": N // 10}, zero)
        self.assertEqual(r["reconciler_log_errors"], 0)
        grown = create["rss_bytes"] - r["idle_rss_bytes"]
        self.assertLessEqual(grown, 8 * MIB + N * REPLICAS * 2 * KIB,
                             f"reconciler grew {grown / MIB:.1f} MiB for {N * REPLICAS} pods")


if __name__ == "__main__":
    unittest.main(verbosity=2)
