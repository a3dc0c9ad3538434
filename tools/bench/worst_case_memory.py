#!/usr/bin/env python3
"""Peak memory of one worst-case request (docs/design.md Q16, review finding H3).

For each hostile `wasd.io/scheduling` annotation (flow and block nesting, long scalars,
many values, anchors and aliases; all at most 256 KiB, the API server's limit for all
annotations of an object, plus two larger ones that only a direct POST can send):

  webhook  a fresh `wasd webhook --io-threads 1` is warmed up with valid reviews of both
           Deployment paths (TLS, allocator arenas, metric series set up), its VmHWM read
           from /proc/PID/status, then sent the worst case as a Deployment CREATE to
           /validate-apps-v1-deployment, as an UPDATE whose object and oldObject both
           carry a (different) worst case, and as a CREATE to /mutate-apps-v1-deployment;
           the row shows VmHWM after minus VmHWM before, and the slowest answer;
  check    `wasd check -f` on a YAML manifest holding the Deployment: peak RSS of the
           process (ru_maxrss from wait4) minus that of the same manifest with a small
           valid annotation.

--concurrent N additionally posts N worst cases at once to one webhook started with
--io-threads 4 (the review's 8-request measurement).

Usage: tools/bench/worst_case_memory.py [--wasd build/wasd] [--cases a,b] [--concurrent 8]
       [--json out.json]
Every process started here is stopped by its PID; every wait is bounded. Loopback only.
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))  # the checkout (this file is tools/bench/)
sys.path.insert(0, os.path.join(SOURCE, "tests"))  # the test kit (lib) and the fault suite's faultlib
from faults import faultlib  # noqa: E402
from lib import paths  # noqa: E402

MAX = 256 * 1024  # bytes: kube-apiserver's total annotation limit
VALIDATE, MUTATE = "/validate-apps-v1-deployment", "/mutate-apps-v1-deployment"
ANNOTATION = "wasd.io/scheduling"


def Repeat(unit, size):
    return unit * (size // len(unit))


def Indented(size):
    s, i = [], 0
    while sum(map(len, s)) + 2 * i + 3 <= size:
        s.append(" " * (2 * i) + "a:\n")
        i += 1
    return "".join(s)


def Keys(size):
    s, i = [], 0
    while sum(map(len, s)) + 16 <= size:
        s.append(f"k{i}: 1\n")
        i += 1
    return "".join(s)


def BillionLaughs():
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for c in "bcdefghij":
        text += f"{c}: &{c} [" + ", ".join(f"*{prev}" for _ in range(60)) + "]\n"
        prev = c
    return text


CASES = {
    "flow-seq": lambda: "[" * MAX,
    "key-then-flow-seq": lambda: "x: " + "[" * (MAX - 3),
    "flow-map": lambda: Repeat("{a: ", MAX),
    "block-seq-one-line": lambda: Repeat("- ", MAX - 1) + "x",
    "indented-maps": lambda: Indented(MAX),
    "json-nesting": lambda: "[" * (MAX // 2) + "]" * (MAX // 2),
    "json-flat-array": lambda: "[" + Repeat("1,", MAX - 3) + "1]",
    "yaml-block-seq": lambda: Repeat("- 1\n", MAX),
    "yaml-keys": lambda: Keys(MAX),
    "long-plain-scalar": lambda: "a: " + "x" * (MAX - 3),
    "long-json-string": lambda: '{"a":"' + "x" * (MAX - 8) + '"}',
    "billion-laughs": BillionLaughs,
    "anchors": lambda: "[" + Repeat("&a 1, ", MAX - 2) + "1]",
    "aliases": lambda: "a: &a [1, 2, 3]\nb: [" + Repeat("*a, ", MAX - 40) + "*a]",
    # Larger than the API server forwards: only a direct POST can send these.
    "over-limit-1MiB": lambda: "a: " + "x" * (1 << 20),
    "flow-seq-2M": lambda: "[" * 2_000_000,
}


def HwmKiB(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def Deployment(text):
    d = json.loads(faultlib.Fixture("deployment-valid.json"))["request"]["object"]
    d = copy.deepcopy(d)
    d.setdefault("metadata", {}).setdefault("annotations", {})[ANNOTATION] = text
    return d


def ReviewBody(op, obj, old=None, uid="worst"):
    review = json.loads(faultlib.Fixture("deployment-valid.json"))
    req = review["request"]
    req.update({"uid": uid, "operation": op, "object": obj, "oldObject": old})
    return json.dumps(review, separators=(",", ":")).encode()


def Answer(status, body):
    if status != 200:
        return f"HTTP {status}"
    resp = json.loads(body)["response"]
    if resp.get("allowed"):
        return "allowed" + (" +patch" if resp.get("patch") else "")
    causes = (resp.get("status") or {}).get("details", {}).get("causes") or [{}]
    return f"denied: {causes[0].get('reason', '')} {causes[0].get('message', '')[:60]}"


def MeasureWebhook(tmp, text):
    hook = faultlib.StartWebhook(tmp, ("--io-threads", "1", "--log-level", "warn",
                                  "--max-request-bytes", str(8 << 20)))
    try:
        small = Deployment('{"schedulingPolicy":{"gang":{"minCount":3}}}')
        for i in range(10):  # warm-up: both paths, both operations
            for path in (VALIDATE, MUTATE):
                hook.post(path, ReviewBody("CREATE", small, uid=f"w{i}"))
                hook.post(path, ReviewBody("UPDATE", small, small, uid=f"u{i}"))
        idle = HwmKiB(hook.pid)
        obj = Deployment(text)
        old = Deployment(text[:-1] + ("]" if text[-1] != "]" else "["))  # differs: both parsed
        answers, slowest = [], 0.0
        for path, body in ((VALIDATE, ReviewBody("CREATE", obj)),
                           (VALIDATE, ReviewBody("UPDATE", obj, old)),
                           (MUTATE, ReviewBody("CREATE", obj))):
            start = time.monotonic()
            status, _, data = hook.post(path, body, timeout=120)
            slowest = max(slowest, time.monotonic() - start)
            answers.append(Answer(status, data))
        peak = HwmKiB(hook.pid)
        return {"idle_hwm_kib": idle, "peak_hwm_kib": peak, "delta_kib": peak - idle,
                "slowest_s": round(slowest, 3), "answers": answers}
    finally:
        hook.stop()


def MeasureConcurrent(tmp, text, n):
    hook = faultlib.StartWebhook(tmp, ("--io-threads", "4", "--log-level", "warn",
                                  "--max-request-bytes", str(8 << 20)))
    try:
        small = Deployment('{"schedulingPolicy":{"gang":{"minCount":3}}}')
        for i in range(20):
            hook.post(VALIDATE, ReviewBody("CREATE", small, uid=f"w{i}"))
        idle = HwmKiB(hook.pid)
        body = ReviewBody("CREATE", Deployment(text))
        threads = [threading.Thread(target=hook.post, args=(VALIDATE, body), kwargs={"timeout": 120}) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(180)
        peak = HwmKiB(hook.pid)
        return {"idle_hwm_kib": idle, "peak_hwm_kib": peak, "delta_kib": peak - idle}
    finally:
        hook.stop()


def CheckPeakKiB(tmp, text, name):
    path = os.path.join(tmp, f"{name}.yaml")
    with open(path, "w") as f:
        d = Deployment(text)
        # JSON is YAML: the manifest goes through the YAML path of `wasd check`'s reader.
        f.write("# worst case\n" + json.dumps(d, indent=1))
    proc = subprocess.Popen([paths.WASD, "check", "-f", path], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:  # bounded: killed by PID after 120 s
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_maxrss
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(10)
            return -1
        time.sleep(0.01)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wasd", default=paths.WASD)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--concurrent", type=int, default=0)
    ap.add_argument("--json")
    args = ap.parse_args()
    paths.WASD = os.path.abspath(args.wasd)
    tmp = tempfile.mkdtemp(prefix="wasd-worst-")
    rows = []
    try:
        base = CheckPeakKiB(tmp, '{"schedulingPolicy":{"gang":{"minCount":3}}}', "baseline")
        print(f"binary {paths.WASD}; wasd check baseline peak RSS {base / 1024:.1f} MiB")
        print(f"{'case':22} {'bytes':>9} {'webhook +MiB':>12} {'slowest s':>9} {'check +MiB':>10}  answers")
        for name in args.cases.split(","):
            text = CASES[name]()
            hook = MeasureWebhook(tmp, text)
            check = CheckPeakKiB(tmp, text, name)
            row = {"case": name, "bytes": len(text), "webhook": hook,
                   "check_delta_kib": check - base if check >= 0 else None}
            rows.append(row)
            check_txt = f"{(check - base) / 1024:10.1f}" if check >= 0 else "   timeout"
            print(f"{name:22} {len(text):9d} {hook['delta_kib'] / 1024:12.1f} {hook['slowest_s']:9.3f} "
                  f"{check_txt}  {' | '.join(hook['answers'])}", flush=True)
        if args.concurrent:
            c = MeasureConcurrent(tmp, CASES["flow-seq"](), args.concurrent)
            rows.append({"case": f"flow-seq x{args.concurrent} concurrent, --io-threads 4", "webhook": c})
            print(f"flow-seq x{args.concurrent} concurrent (--io-threads 4): +{c['delta_kib'] / 1024:.1f} MiB "
                  f"(VmHWM {c['peak_hwm_kib'] / 1024:.1f} MiB)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
