#!/usr/bin/env python3
"""Render the chart's Grafana dashboard (charts/wasd/dashboards/wasd.json) as a PNG from
a recorded run of wasd — no Prometheus, no Grafana, standard library only.

    bench/dashboard_png.py record RECORDING.jsonl[.gz] [--duration 80] [--interval 1]
        starts the test API server (gang scheduler, three GPU Nodes), the real webhook and
        reconciler (build/wasd, or $WASD_BIN), runs a gang scenario and scrapes both
        /metrics every interval into RECORDING.jsonl (bench/dashboard/record.py)
    bench/dashboard_png.py render RECORDING.jsonl[.gz] OUT.png [--dashboard FILE]
        evaluates every panel's PromQL over the recording (bench/dashboard/promql_parse.py:
        the subset the dashboard uses, an error naming anything else; promql.py evaluates
        it as Prometheus does) and draws the panels in their grid layout

docs/dashboard.png is `record docs/dashboard-run.jsonl.gz` then
`render docs/dashboard-run.jsonl.gz docs/dashboard.png`.
"""
import argparse
import gzip
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the test kit (lib.*) and apiserver

from dashboard import evaluate  # noqa: E402


def open_text(path, mode):
    """A text file, gzip-compressed when its name ends in .gz."""
    return gzip.open(path, mode + "t") if path.endswith(".gz") else open(path, mode)


def cmd_record(args):
    from dashboard import record
    with open_text(args.recording, "w") as out:

        def log(event_time, text):
            print(f"{time.strftime('%H:%M:%S', time.gmtime(event_time))}  {text}", flush=True)

        n = record.record(out, duration=args.duration, interval=args.interval, log=log)
    print(f"{args.recording}: {n} scrapes")


def cmd_render(args):
    with open(args.dashboard) as f:
        dashboard = json.load(f)
    with open_text(args.recording, "r") as f:
        rec = evaluate.Recording(f)
    png = evaluate.dashboard_png(dashboard, rec)
    with open(args.out, "wb") as f:
        f.write(png)
    print(f"{args.out}: {len(png)} bytes, {len(dashboard['panels'])} panels")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="record a run")
    r.add_argument("recording")
    r.add_argument("--duration", type=float, default=80.0, help="seconds (default 80)")
    r.add_argument("--interval", type=float, default=1.0, help="scrape interval (default 1)")
    r.set_defaults(fn=cmd_record)
    p = sub.add_parser("render", help="render a recording")
    p.add_argument("recording")
    p.add_argument("out")
    p.add_argument("--dashboard", default=os.path.join(ROOT, "charts", "wasd", "dashboards", "wasd.json"))
    p.set_defaults(fn=cmd_render)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
