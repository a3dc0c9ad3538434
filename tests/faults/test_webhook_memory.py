"""Fault suite, webhook part: memory stays flat across many requests.

wrk posts valid reviews (review_post.lua checks every answer) in rounds that
alternate the validating Deployment review and the mutating Pod review, each
round on fresh connections. The webhook's RSS is read from /proc after a
warm-up round (allocator pools, TLS sessions, metric series, thread stacks all
set up) and again after FAULT_MEMORY_REQUESTS more requests; its peak RSS is
sampled during the run. The growth must stay under a generous bound: this is a
resource bound (a leak of even 100 bytes a request would show as ~5 MiB per
50,000 requests and ~100 MiB per million), not a timing assertion.

CI: 50,000 requests (20,000 under AddressSanitizer, whose quarantine holds freed
memory, so its bound is wider). scripts/faults.sh: 1,000,000.
"""
import shutil
import tempfile
import threading
import unittest

from faultlib import MUTATE_POD, VALIDATE, AssertHealthy, Knob, Report, Sanitized, StartWebhook, Wrk

MAX_ROUND = 100_000  # requests per wrk run at most (each run opens fresh connections)


class MemoryTest(unittest.TestCase):
    def test_rss_flat_across_many_requests(self):
        asan = Sanitized()
        total = Knob("FAULT_MEMORY_REQUESTS", 20_000 if asan else 50_000)
        warmup = Knob("FAULT_MEMORY_WARMUP", 5_000)
        bound_mib = Knob("FAULT_MEMORY_BOUND_MIB", 48 if asan else 8)
        tmp = tempfile.mkdtemp(prefix="wasd-faults-mem-")
        self.addCleanup(shutil.rmtree, tmp, True)
        # warn: one log line per request would be a million lines on disk.
        server = StartWebhook(tmp, ("--io-threads", "2", "--log-level", "warn"))
        self.addCleanup(server.stop)
        rss_start = server.rss_kib()

        def Run(requests, path, uid):
            fixture = "pod-managed.json" if path == MUTATE_POD else "deployment-valid.json"
            load = Wrk(server.port, connections=16, duration="3600s", requests=requests, uid=uid,
                       path=path, fixture=fixture)
            try:
                # Generous bound: ~10x the time a slow shared machine needs.
                result = load.Wait(max(120, requests / 100))
            finally:
                load.Kill()
            self.assertEqual(result.rc, 0, result.text)
            self.assertEqual((result.bad, result.non2xx), (0, 0), result.text)
            self.assertGreaterEqual(result.good, requests, result.text)
            return result.good

        Run(warmup, VALIDATE, "mem-warmup-v")
        Run(warmup, MUTATE_POD, "mem-warmup-p")
        rss_before = server.rss_kib()

        peak = [rss_before]
        stop = threading.Event()

        def Sample():
            while not stop.wait(0.5):
                try:
                    peak[0] = max(peak[0], server.rss_kib())
                except (OSError, AssertionError):
                    return

        sampler = threading.Thread(target=Sample, daemon=True)
        sampler.start()
        done, rounds = 0, 0
        per_round = min(MAX_ROUND, max(1, total // 4))  # at least four rounds
        try:
            while done < total:
                n = min(per_round, total - done)
                path = VALIDATE if rounds % 2 == 0 else MUTATE_POD
                done += Run(n, path, f"mem-{rounds}")
                rounds += 1
        finally:
            stop.set()
            sampler.join(5)
        rss_after = server.rss_kib()
        growth_kib = rss_after - rss_before
        AssertHealthy(server, "after-memory-run")
        Report(f"webhook memory{' (ASan build)' if asan else ''}: {done} requests in {rounds} wrk rounds "
               f"(16 connections each) after {2 * warmup} warm-up: RSS at start {rss_start} KiB, before "
               f"{rss_before} KiB, after {rss_after} KiB (growth {growth_kib:+d} KiB), peak {peak[0]} KiB; "
               f"bound +{bound_mib} MiB")
        self.assertLess(growth_kib, bound_mib * 1024, "RSS grew across the run")


if __name__ == "__main__":
    unittest.main(verbosity=2)
