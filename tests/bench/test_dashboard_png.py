#!/usr/bin/env python3
"""bench/dashboard_png.py, the renderer of docs/dashboard.png, cannot rot silently: every
query and variable of charts/wasd/dashboards/wasd.json is read by its PromQL subset
(bench/dashboard/promql_parse.py, promql.py), which gives Prometheus' exact values on a
synthetic recording (rate's extrapolation and reset handling, irate, sum by, min, time(),
histogram_quantile, staleness, the ServiceMonitor's exported_ labels) and refuses by
name what it does not implement; the whole dashboard renders from a recording; the
committed PNG is under 300 KB and is exactly what the renderer draws from the committed
recording (docs/dashboard-run.jsonl.gz) and the current dashboard. No server is started.
"""
import gzip
import json
import os
import struct
import sys
import unittest
import zlib

from lib.paths import SOURCE_DIR

sys.path.insert(0, os.path.join(SOURCE_DIR, "bench"))
from dashboard import evaluate, promql, render  # noqa: E402

DASHBOARD = os.path.join(SOURCE_DIR, "charts", "wasd", "dashboards", "wasd.json")
PNG = os.path.join(SOURCE_DIR, "docs", "dashboard.png")
RECORDING = os.path.join(SOURCE_DIR, "docs", "dashboard-run.jsonl.gz")
TARGET = {"job": "wasd-reconciler", "namespace": "wasd-system", "instance": "127.0.0.1:1"}


def load_dashboard():
    with open(DASHBOARD) as f:
        return json.load(f)


def scrapes(series_by_time, target=TARGET):
    """JSON lines: one scrape at each t of {t: [(name, labels, value)]}."""
    return [json.dumps({"t": t, "target": target, "samples": [list(s) for s in samples]})
            for t, samples in sorted(series_by_time.items())]


def store_of(lines):
    return evaluate.Recording(lines).store


def at(store, query, t):
    return promql.evaluate(store, promql.parse(query), t)


def one(store, query, t):
    """The value of a query whose result is one series."""
    v = at(store, query, t)
    assert len(v) == 1, v
    return next(iter(v.values()))


class DashboardQueries(unittest.TestCase):
    def test_every_query_and_variable_is_in_the_subset(self):
        dashboard = load_dashboard()
        store = store_of(scrapes({0: [("wasd_build_info", {"version": "v"}, 1)],
                                  1: [("wasd_build_info", {"version": "v"}, 1)]}))
        values = evaluate.variables(dashboard, store)
        self.assertEqual(values, {"namespace": "wasd-system"})
        queries = evaluate.panel_queries(dashboard, values)
        self.assertEqual(sum(len(q) for _, q in queries), 10)
        for panel, targets in queries:
            self.assertIn(panel["type"], ("timeseries", "stat"), panel["title"])
            render.unit_scale(panel["fieldConfig"]["defaults"]["unit"], 1.0)
            for q, _ in targets:
                with self.subTest(panel=panel["title"], query=q):
                    promql.parse(q)

    def test_unsupported_constructs_are_named(self):
        cases = {
            'rate(x[5m] offset 1m)': "modifier 'offset'",
            'x{a=~"b"}': "label matcher '=~'",
            'sum without (a) (x)': "'without'",
            'x > 1': "'>'",
            'x % 2': "operator '%'",
            '-x': "unary minus",
            'increase(x[5m])': "function increase()",
            'rate(x[5m:1m])': "subquery",
            'x and y': "'and'",
            'x @ 100': "modifier '@'",
            'x + on(a) y': "keyword 'on'",
            'topk(3, x)': "function topk()",
            'rate(x)': "rate() of something other than a range selector",
        }
        for query, construct in cases.items():
            with self.subTest(query=query):
                with self.assertRaises(promql.UnsupportedError) as cm:
                    promql.parse(query)
                self.assertIn(construct, str(cm.exception))
                self.assertIn(query, str(cm.exception))
        with self.assertRaisesRegex(promql.UnsupportedError, r"\$other"):
            promql.substitute('x{namespace="$other"}', {"namespace": "n"})


class Evaluator(unittest.TestCase):
    def test_rate_extrapolates_as_prometheus(self):
        # A counter from 100 to 160 over 60 s, sampled every 10 s, under a 5 m window: the
        # start is extrapolated by half an interval (5 s), the end by its 0 s gap: 60 x 65/60 / 300.
        store = store_of(scrapes({t: [("c_total", {}, 100 + t)] for t in range(0, 61, 10)}))
        self.assertAlmostEqual(one(store, "rate(c_total[5m])", 60), 65 / 300, places=12)
        # Inside a full window: the rate is exact (first sample 10 s in, within 1.1 intervals,
        # and extrapolated no further than where the counter would have been 0).
        self.assertAlmostEqual(one(store, "rate(c_total[60s])", 60), 1.0, places=12)
        self.assertAlmostEqual(one(store, "irate(c_total[1m])", 60), 1.0, places=12)

    def test_rate_and_irate_correct_counter_resets(self):
        values = [10, 20, 30, 5, 15, 25, 35]
        store = store_of(scrapes({10 * i: [("c_total", {}, v)] for i, v in enumerate(values)}))
        # increase 35 - 10 + 30 (the reset) = 55 over samples 0..60 in a window (-10, 60].
        got = one(store, "rate(c_total[70s])", 60)
        to_start = min(10.0, 60 * 10 / 55)  # first sample 10 s after the window's start, or counter 0
        self.assertAlmostEqual(got, 55 * (60 + to_start) / 60 / 70, places=12)
        store = store_of(scrapes({0: [("c_total", {}, 30)], 10: [("c_total", {}, 5)]}))
        self.assertAlmostEqual(one(store, "irate(c_total[1m])", 10), 0.5, places=12)

    def test_sum_by_min_and_time(self):
        samples = [("req_total", {"webhook": "a", "code": "200"}, 1),
                   ("req_total", {"webhook": "a", "code": "422"}, 2),
                   ("req_total", {"webhook": "b", "code": "200"}, 4)]
        store = store_of(scrapes({0: samples, 15: samples}))
        self.assertEqual(at(store, "sum by (webhook) (req_total)", 15),
                         {(("webhook", "a"),): 3.0, (("webhook", "b"),): 4.0})
        self.assertEqual(at(store, "sum(req_total) by (code)", 15),
                         {(("code", "200"),): 5.0, (("code", "422"),): 2.0})
        self.assertEqual(at(store, 'sum(req_total{namespace="wasd-system", code!="200"})', 15),
                         {(): 2.0})
        self.assertEqual(at(store, 'sum(req_total{namespace="elsewhere"})', 15), {})
        self.assertEqual(at(store, "min(req_total) - time()", 15), {(): 1.0 - 15})
        self.assertEqual(at(store, "(min(req_total) + 1) * 2 / 4", 15), {(): 1.0})

    def test_histogram_quantile_interpolates_in_its_bucket(self):
        def buckets(counts):
            return [("d_bucket", {"le": le}, c) for le, c in zip(("0.1", "0.5", "1", "+Inf"), counts)]
        store = store_of(scrapes({0: buckets((0, 0, 0, 0)), 10: buckets((2, 6, 8, 10))}))
        q = "histogram_quantile({}, sum by (le) (d_bucket))"
        self.assertAlmostEqual(one(store, q.format(0.5), 10), 0.1 + 0.4 * 3 / 4, places=12)
        self.assertAlmostEqual(one(store, q.format(0.1), 10), 0.05, places=12)
        self.assertEqual(one(store, q.format(0.99), 10), 1.0)  # in +Inf: the highest bound
        # Over rates, as the dashboard asks: the same counts over the window, the same quantile.
        rq = "histogram_quantile(0.5, sum by (le) (rate(d_bucket[1m])))"
        self.assertAlmostEqual(one(store, rq, 10), 0.4, places=12)
        # No observations: no value (NaN), which query_range leaves out.
        self.assertEqual(promql.query_range(store, q.format(0.5), 0, 0, 1), {})

    def test_servicemonitor_labels_and_staleness(self):
        member = ("wasd_gang_members", {"namespace": "default", "deployment": "web", "state": "bound"}, 3)
        store = store_of(scrapes({0: [member], 1: [member], 2: []}))
        self.assertEqual(at(store, 'sum by (exported_namespace) (wasd_gang_members{namespace="wasd-system"})', 1),
                         {(("exported_namespace", "default"),): 3.0})
        self.assertEqual(at(store, "wasd_gang_members", 2), {}, "gone from the scrape: stale at once")
        series = promql.query_range(store, "sum(wasd_gang_members)", 0, 2, 1)
        self.assertEqual(series, {(): [(0, 3.0), (1, 3.0)]})


class Rendering(unittest.TestCase):
    def png_size(self, data):
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        width, height = struct.unpack(">II", data[16:24])
        return width, height

    @staticmethod
    def chunks(data):
        """{chunk type: data} of a PNG (one chunk of each type, as the canvas writes)."""
        out, pos = {}, 8
        while pos < len(data):
            length = struct.unpack(">I", data[pos:pos + 4])[0]
            out[data[pos + 4:pos + 8]] = data[pos + 8:pos + 8 + length]
            pos += 12 + length
        return out

    def pixels(self, data):
        """(palette, filtered rows) of a PNG: compared rather than its bytes, which another
        zlib may compress differently."""
        c = self.chunks(data)
        return c[b"PLTE"], zlib.decompress(c[b"IDAT"])

    def test_the_dashboard_renders_from_a_recording(self):
        dashboard = load_dashboard()
        lines = []
        for t in range(0, 31):
            lines += scrapes({t: [("wasd_build_info", {"version": "v"}, 1),
                                  ("wasd_admission_requests_total",
                                   {"webhook": "mutate-pod", "code": "200"}, 3 * t),
                                  ("wasd_gangs", {"reason": "Scheduled"}, t // 10)]})
        lines.append(json.dumps({"t": 12, "event": "something happened"}))
        rec = evaluate.Recording(lines)
        results = evaluate.panel_results(dashboard, rec)
        self.assertEqual([name for name, _ in results[2]], ["mutate-pod 200"])
        self.assertEqual(results[4][0][1][-1], (30, 3.0))
        data = render.render(dashboard, results, rec.t0, rec.t1, "test", rec.events)
        width, height = self.png_size(data)
        self.assertEqual(width, render.WIDTH)
        # A filter byte and `width` palette indices per row.
        self.assertEqual(len(self.pixels(data)[1]), (width + 1) * height)

    def test_a_stat_panel_is_one_number(self):
        dashboard = {"title": "t", "panels": [
            {"id": 1, "type": "stat", "title": "gangs", "gridPos": {"x": 0, "y": 0, "w": 6, "h": 4},
             "fieldConfig": {"defaults": {"unit": "short"}}}]}
        data = render.render(dashboard, {1: [("gangs", [(0, 2.0), (1, 3.0)])]}, 0, 1)
        self.assertEqual(self.png_size(data), (render.WIDTH, render.HEADER + 4 * render.ROW_HEIGHT
                                               + render.MARGIN))
        with self.assertRaisesRegex(ValueError, "unsupported panel type 'table'"):
            render.render({"panels": [dict(dashboard["panels"][0], type="table")]}, {}, 0, 1)

    def test_the_committed_png_is_the_committed_recording_drawn(self):
        with open(PNG, "rb") as f:
            committed = f.read()
        self.assertLess(len(committed), 300 * 1024)
        with gzip.open(RECORDING, "rt") as f:
            rec = evaluate.Recording(f)
        drawn = evaluate.dashboard_png(load_dashboard(), rec)
        self.assertEqual(self.png_size(committed), self.png_size(drawn))
        self.assertTrue(self.pixels(committed) == self.pixels(drawn),
                        "docs/dashboard.png is not what the renderer draws from the committed "
                        "recording and dashboard: run bench/dashboard_png.py render "
                        "docs/dashboard-run.jsonl.gz docs/dashboard.png")


if __name__ == "__main__":
    unittest.main()
