"""Quick mode of tools/bench/check_stream.py, for CI: 300 Deployments in one
YAML stream through `wasd check` in every output format. It proves the
benchmark runs and reports a row per format with the exit code wasd check
gives an all-allowed stream (0). No figure is asserted: the 20,000-Deployment
figures are in tools/bench/RESULTS.md ("wasd check on a long stream")."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from lib.paths import SOURCE_DIR, WASD


class CheckStreamQuick(unittest.TestCase):
    def test_every_format_reports_a_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "rows.json")
            p = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "tools", "bench", "check_stream.py"),
                                "--wasd", WASD, "--count", "300", "--json", out],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                rows = json.load(f)
        self.assertEqual([r["format"] for r in rows], ["yaml", "json", "junit", "text"])
        for r in rows:
            self.assertEqual((r["deployments"], r["exit"]), (300, 0), r)
            self.assertGreater(r["peak_rss_mib"], 0)
        print(p.stdout)


if __name__ == "__main__":
    unittest.main()
