#!/usr/bin/env python3
"""Peak memory and time of `wasd check` on a long YAML stream (issue 42).

Writes N opted-in gang Deployments (each with a GPU request, so the Workload
and PodGroup previews are built) as one multi-document YAML file, then runs
`wasd check -f FILE -o FORMAT` for each format with its output sent to
/dev/null, and prints per format: the process's peak RSS (ru_maxrss from
wait4), the wall time, the exit code and the size of the input. `wasd check`
reads a file's text whole (at most 64 MiB) and judges one document at a
time, in two passes (all input judged before any report is written), so its
peak memory is the file's text plus one document, whatever N is.

Usage: tools/bench/check_stream.py [--wasd build/wasd] [--count 20000]
       [--formats yaml,json,junit,text] [--json out.json]
Every process started here is waited for; nothing listens.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))

DOC = """---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gang-{i}
  annotations:
    wasd.io/scheduling: '{{"schedulingPolicy": {{"gang": {{"minCount": 2}}}}}}'
spec:
  replicas: 4
  strategy: {{type: Recreate}}
  selector: {{matchLabels: {{app: gang-{i}}}}}
  template:
    metadata: {{labels: {{app: gang-{i}}}}}
    spec:
      containers:
      - name: server
        image: registry.example/model-server:1
        resources: {{requests: {{cpu: "4", nvidia.com/gpu: "1"}}, limits: {{nvidia.com/gpu: "1"}}}}
"""


def measure(argv):
    """(peak RSS in KiB, seconds, exit code) of one run of argv."""
    t0 = time.monotonic()
    with open(os.devnull, "w") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=null)
        _, status, usage = os.wait4(p.pid, 0)
    seconds = time.monotonic() - t0
    return usage.ru_maxrss, seconds, os.waitstatus_to_exitcode(status)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wasd", default=os.path.join(SOURCE, "build", "wasd"))
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--formats", default="yaml,json,junit,text")
    ap.add_argument("--json", help="also write the rows as JSON here")
    a = ap.parse_args()
    if a.count < 1:
        raise SystemExit("--count must be at least 1")
    with tempfile.TemporaryDirectory(prefix="wasd-check-stream-") as tmp:
        path = os.path.join(tmp, "deployments.yaml")
        with open(path, "w") as f:
            for i in range(a.count):
                f.write(DOC.format(i=i))
        size = os.path.getsize(path)
        rows = []
        print(f"wasd check on {a.count} Deployments, one YAML stream of {size / 2**20:.1f} MiB "
              f"({a.wasd})")
        print(f"{'format':<8} {'peak RSS MiB':>13} {'seconds':>8} {'exit':>5}")
        for fmt in a.formats.split(","):
            rss_kib, seconds, code = measure([a.wasd, "check", "-f", path, "-o", fmt])
            if code not in (0, 1):
                raise SystemExit(f"wasd check -o {fmt} exited {code}")
            rows.append({"format": fmt, "deployments": a.count, "input_mib": round(size / 2**20, 1),
                         "peak_rss_mib": round(rss_kib / 1024, 1), "seconds": round(seconds, 2),
                         "exit": code})
            print(f"{fmt:<8} {rss_kib / 1024:>13.1f} {seconds:>8.2f} {code:>5}")
            sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
