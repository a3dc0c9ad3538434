#!/usr/bin/env python3
"""REAL CONTROL PLANE: the README's first command, `scripts/demo.sh`, run whole
(with WASD_BIN: the build step is the binary under test). It proves what the
README says the demo does:

- the control plane comes up and `helm install` of the chart package
  (wasd-VERSION.tgz, as a release ships it) succeeds;
- the bad Deployment is denied at `kubectl apply`, and the demo prints kubectl's
  own message with the field path;
- the gang's 4 pods are printed bound to the node agent's Nodes, under one
  PodGroup, and `kubectl wasd explain` (the plugin on PATH) reports it scheduled;
- afterwards no process of the cluster is left and its directory is gone.

`scripts/demo.sh --local` (no cluster) still prints allowed or DENIED per
example, with the denials in kubectl's form.
"""
import os
import re
import subprocess
import tempfile
import unittest

from lib.paths import SOURCE_DIR, WASD

DEMO = os.path.join(SOURCE_DIR, "scripts", "demo.sh")


def free_port_base():
    import socket
    for _ in range(50):  # bounded: 50 tries for 3 free ports in a row
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        base = s.getsockname()[1]
        s.close()
        if base > 65000:
            continue
        ok = True
        for p in (base, base + 1, base + 2):
            t = socket.socket()
            try:
                t.bind(("127.0.0.1", p))
            except OSError:
                ok = False
            finally:
                t.close()
        if ok:
            return base
    raise AssertionError("no 3 free ports in a row")


class Demo(unittest.TestCase):
    def run_demo(self, *args, env=None):
        p = subprocess.run([DEMO, *args], capture_output=True, text=True, timeout=1500,
                           env=dict(os.environ, WASD_BIN=WASD, **(env or {})))
        self.assertEqual(p.returncode, 0, f"demo.sh {' '.join(args)}:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
        return p.stdout + p.stderr

    def test_demo_on_the_real_control_plane(self):
        parent = tempfile.mkdtemp(prefix="wasd-demo-test-")
        cluster_dir = os.path.join(parent, "cluster")
        try:
            out = self.run_demo(env={"WASD_CLUSTER_DIR": cluster_dir})
            self.assertIn("STATUS: deployed", out)
            self.assertRegex(out, r"== helm install wasd wasd-\d+\.\d+\.\d+\.tgz \(the release's chart package")
            self.assertIn('The Deployment "gang-rolling" is invalid: spec.strategy.type: Invalid value: '
                          '"RollingUpdate"', out)
            rows = re.findall(r"^(prefill-workers-\S+)\s+(node-\d+)\s+(prefill-workers-\S+)\s+\S+$", out, re.M)
            self.assertEqual(len(rows), 4, out)
            self.assertEqual(len({r[2] for r in rows}), 1, f"one PodGroup for the gang: {rows}")
            self.assertIn("Status:      GangScheduled=True", out)
            self.assertIn("4 bound, minCount 3", out)
            left = subprocess.run(["pgrep", "-f", cluster_dir], capture_output=True, text=True).stdout
            self.assertEqual(left.strip(), "", f"processes left after the demo: {left}")
        finally:
            subprocess.run([os.path.join(SOURCE_DIR, "scripts", "cluster.sh"), "down"],
                           env=dict(os.environ, WASD_CLUSTER_DIR=cluster_dir), timeout=120)
            subprocess.run(["rm", "-rf", parent])

    def test_local_demo(self):
        out = self.run_demo("--local", env={"WASD_DEMO_PORT": str(free_port_base())})
        examples = sorted(f for f in os.listdir(os.path.join(SOURCE_DIR, "examples")) if f.endswith(".yaml"))
        for name in examples:
            verdict = "DENIED (422 Invalid)" if name.startswith("bad-") else "allowed"
            self.assertIn(f"{name}: {verdict}", out)
        self.assertIn('    The Deployment "gang-rolling" is invalid: spec.strategy.type: Invalid '
                      'value: "RollingUpdate"', out)
        self.assertIn('    The Deployment "bad-structure" is invalid: \n    * ', out)
        self.assertNotIn('"level":', out)


if __name__ == "__main__":
    unittest.main()
