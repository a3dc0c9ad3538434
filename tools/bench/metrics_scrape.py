#!/usr/bin/env python3
"""What the secure /metrics costs a scrape (issue 42), on the REAL control plane
of scripts/cluster.sh (kube-apiserver v1.37.2 answers the TokenReviews and
SubjectAccessReviews), wasd installed by `helm install` of charts/wasd:

  https_uncached  a scrape whose token the component has not seen: TLS
                  handshake + TokenReview + SubjectAccessReview + the text
  https_cached    the same token again within the cache's minute: TLS
                  handshake + the text
  http            `helm upgrade --set metrics.secure=false`: the text only

Each scrape is one GET on a new connection (the worst case: Prometheus keeps
its connection open, so it pays the handshake once), of the reconciler's and
the webhook's /metrics from their pod IPs, timed on this side
(time.perf_counter, connect to last byte). Median and p90 of N scrapes each;
the ratios in one run.

    WASD_BIN=build/wasd PYTHONPATH=tests python3 tools/bench/metrics_scrape.py [-n 100] [--json]
"""
import argparse
import json
import os
import statistics
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))

from cluster.realcluster import (METRICS_PORT, METRICS_SERVER_NAME, NS, RealCluster,  # noqa: E402
                                 wait_until)
from lib.paths import SOURCE_DIR  # noqa: E402
from lib.scrape import https_get  # noqa: E402


class Bench(RealCluster):
    def runTest(self):  # unittest wants one; the bench calls its own methods
        pass


def timed(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def summary(ms):
    ms = sorted(ms)
    return {"n": len(ms), "median_ms": round(statistics.median(ms), 2),
            "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100, help="scrapes per kind and component (default 100)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    if not 2 <= args.n <= 2000:
        ap.error("-n: from 2 to 2000")

    Bench.setUpClass()
    b = Bench()
    results = {}
    try:
        b.install_chart()
        ca = b.chart_ca()
        ips = {c: b.live_pods(NS, f"app.kubernetes.io/component={c}")[0]["status"]["podIP"]
               for c in ("reconciler", "webhook")}
        # Distinct tokens for the uncached scrapes: one ServiceAccount, n
        # TokenRequests (each a different JWT, so a different cache key).
        b.metrics_token()
        tokens = [b.kubectl("create", "token", "-n", NS, "metrics-scraper", "--duration=1h").stdout.strip()
                  for _ in range(args.n)]
        for c, ip in ips.items():
            def scrape(token):
                status, _, body = https_get(ip, METRICS_PORT, "/metrics", token=token, ca_pem=ca,
                                            server_name=METRICS_SERVER_NAME)
                assert status == 200, (status, body[:200])
            it = iter(tokens)
            results[(c, "https_uncached")] = summary(timed(lambda: scrape(next(it)), args.n))
            cached = tokens[0]
            results[(c, "https_cached")] = summary(timed(lambda: scrape(cached), args.n))

        b.helm("upgrade", "wasd", os.path.join(SOURCE_DIR, "charts", "wasd"), "-n", NS, "--reuse-values",
               "--set", "metrics.secure=false", "--timeout", "5m")
        for d in ("wasd-webhook", "wasd-reconciler"):
            b.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=180s")
        for c in ("reconciler", "webhook"):
            def ip_now():
                pods = b.live_pods(NS, f"app.kubernetes.io/component={c}")
                ok = all("--metrics-secure=false" in p["spec"]["containers"][0]["args"] for p in pods)
                return ok and all(p["status"].get("podIP") for p in pods), pods
            ip = wait_until(f"the {c}'s plain pods", ip_now, timeout=120)[0]["status"]["podIP"]

            def plain():
                with urllib.request.urlopen(f"http://{ip}:{METRICS_PORT}/metrics", timeout=10) as r:
                    r.read()
            wait_until(f"plain /metrics of the {c}", lambda: (plain() is None, None), timeout=60)
            results[(c, "http")] = summary(timed(plain, args.n))
    finally:
        Bench.failed = False
        Bench.tearDownClass()

    if args.json:
        print(json.dumps({f"{c}/{k}": v for (c, k), v in results.items()}, indent=2))
        return
    print(f"{'component':<11} {'kind':<15} {'median ms':>10} {'p90 ms':>8} {'median / http':>14}")
    for c in ("reconciler", "webhook"):
        base = results[(c, "http")]["median_ms"]
        for k in ("https_uncached", "https_cached", "http"):
            r = results[(c, k)]
            print(f"{c:<11} {k:<15} {r['median_ms']:>10.2f} {r['p90_ms']:>8.2f} {r['median_ms'] / base:>13.1f}x")


if __name__ == "__main__":
    main()
