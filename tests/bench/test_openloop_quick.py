"""Quick mode of the open-loop load generator (build/wasd-openloop, tools/bench/openloop.cc),
for CI: a short run at a low rate against a real `wasd webhook`. It asserts what the
generator reports about itself, never a latency: every percentile present and
ordered, no error, the number of requests it scheduled, sent and saw answered equal
to rate × duration, and the webhook's own request counter agreeing with it (warm-up
included). Then the error accounting: answers with another status or verdict than
the expected one are counted, reported and fail the run, and a usage mistake is
refused with exit 2. tools/bench/latency.sh is the measurement (tools/bench/RESULTS.md)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from lib.certs import generate_certs
from lib.paths import BUILD_DIR, SOURCE_DIR
from lib.webhook import Webhook

OPENLOOP = os.environ.get("WASD_OPENLOOP_BIN") or os.path.join(BUILD_DIR, "wasd-openloop")
FIXTURE = os.path.join(SOURCE_DIR, "tests", "testdata", "bench", "deploy-create-gang-valid.json")
PATH = "/validate-apps-v1-deployment"
RATE = 100           # requests per second
SECONDS = 2          # measured
WARMUP_SECONDS = 0.5
PERCENTILES = ["p50Ms", "p90Ms", "p99Ms", "p999Ms", "maxMs"]


def admission_requests(hook):
    """The webhook's wasd_admission_requests_total, summed over its labels."""
    return sum(v for k, v in hook.metrics().items()
               if k.startswith("wasd_admission_requests_total"))


class OpenLoopQuick(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(OPENLOOP, os.X_OK):
            raise unittest.SkipTest(f"no wasd-openloop at {OPENLOOP} (build target wasd-openloop)")
        cls.tmp = tempfile.mkdtemp(prefix="wasd-openloop-quick-")
        cls.certs = generate_certs(cls.tmp)
        try:
            cls.hook = Webhook(cls.certs, workdir=cls.tmp)  # stops itself if it fails to start
        except Exception:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.hook.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def openloop(self, *extra, path=PATH):
        cmd = [OPENLOOP, "--port", str(self.hook.port), "--path", path, "--body", FIXTURE,
               "--cacert", self.certs["ca.crt"], "--rate", str(RATE), "--duration", f"{SECONDS}s",
               "--warmup", f"{int(WARMUP_SECONDS * 1000)}ms", "--connections", "4", "--json",
               *extra]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)

    def test_reports_every_percentile_and_sends_rate_times_duration(self):
        before = admission_requests(self.hook)
        run = self.openloop("--expect-substring", '"allowed":true')
        self.assertEqual(run.returncode, 0, run.stderr)
        result = json.loads(run.stdout)
        expected = RATE * SECONDS
        self.assertEqual(result["scheduled"], expected, result)
        # The schedule is fixed, so what was sent and answered is the schedule;
        # allow a request or two for the edges of the window.
        self.assertLessEqual(abs(result["sent"] - expected), 2, result)
        self.assertLessEqual(abs(result["completed"] - expected), 2, result)
        self.assertEqual(result["errors"], 0, result)
        self.assertEqual(result["wrongAnswers"] + result["ioErrors"] + result["unanswered"], 0, result)
        values = [result[k] for k in PERCENTILES]
        for key, value in zip(PERCENTILES, values):
            self.assertIsInstance(value, float, key)
            self.assertGreater(value, 0.0, key)
        self.assertEqual(values, sorted(values), f"percentiles out of order: {result}")
        self.assertGreater(result["achievedRate"], 0.0, result)
        # The server saw the warm-up and the measured requests, nothing more or less.
        served = admission_requests(self.hook) - before
        self.assertEqual(served, RATE * (SECONDS + WARMUP_SECONDS), result)

    def test_wrong_verdict_is_counted_as_an_error(self):
        run = self.openloop("--expect-substring", '"allowed":false')  # the fixture is allowed
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        result = json.loads(run.stdout)
        self.assertEqual(result["wrongAnswers"], RATE * SECONDS, result)
        self.assertEqual(result["errors"], RATE * SECONDS, result)
        self.assertIn('first unexpected answer: 200 {"apiVersion"', run.stderr)

    def test_unexpected_status_is_counted_as_an_error(self):
        run = self.openloop(path="/no-such-path")  # answered 404, 200 expected
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        result = json.loads(run.stdout)
        self.assertEqual(result["wrongAnswers"], RATE * SECONDS, result)
        self.assertEqual(result["completed"], 0, result)
        self.assertIn("first unexpected answer: 404", run.stderr)
        # The same path with the status it really gets is the generator's floor run.
        floor = self.openloop("--expect-status", "404", path="/no-such-path")
        self.assertEqual(floor.returncode, 0, floor.stderr)
        self.assertEqual(json.loads(floor.stdout)["errors"], 0)

    def test_usage_errors(self):
        run = subprocess.run([OPENLOOP, "--port", str(self.hook.port), "--body", FIXTURE],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(run.returncode, 2)
        self.assertIn("--cacert FILE or --insecure", run.stderr)
        run = subprocess.run([OPENLOOP, "--help"], capture_output=True, text=True, timeout=30)
        self.assertEqual(run.returncode, 0)
        self.assertIn("--rate", run.stdout)


if __name__ == "__main__":
    unittest.main()
