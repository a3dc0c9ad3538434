"""Summary of tools/bench/profile.sh's callgrind dumps: instructions per request
for each fixture, split into areas by the inclusive cost of the functions
that enter them.

    python3 tools/bench/profile_summary.py OUT_DIR

Areas are matched on demangled function names; an area's cost is the
largest inclusive cost among its matching entries (callgrind lists a function
once per source file its inlined code came from). The areas do not add up to
the total: the rest is Asio's reactor, the syscalls' user side, Beast's
buffers and the session's own code. malloc/free is self cost, wherever
called from."""
import glob
import os
import re
import subprocess
import sys

# (area, regex on the function name).
AREAS = [
    ("TLS read (decrypt)", r"^SSL_read$|^SSL_read_ex$"),
    ("TLS write (encrypt)", r"^SSL_write$|^SSL_write_ex$"),
    ("HTTP parse (Beast)", r"boost::beast::http::basic_parser<true>::put\("),
    ("nesting pre-check", r"wasd::admission::NestingDepth\("),
    ("JSON parse", r"::parser<.*>::parse\(bool|wasd::base::JsonProjection::Parse\("),
    ("rules / handlers", r"wasd::admission::(ValidateDeployment|MutatePod|MutateDeployment)\("),
    ("response encode", r"wasd::admission::\(anonymous namespace\)::Encode\("),
    ("JSON DOM free", r"basic_json<.*>::~basic_json\(\)$|json_value::destroy\("),
    ("request log line", r"wasd::(server|base)::Logger::Log\("),
    ("metrics", r"wasd::server::AdmissionMetrics::RecordRequest\("),
]
ALLOC = r"^(malloc|free|realloc|operator new\(unsigned long\)|operator delete\(void\*.*\)|_int_malloc|_int_free|cfree)$"


# "  1,234 (12.3%)  file:function [object]" (the percentage only with --inclusive=yes).
LINE = re.compile(r"^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?[^:\s]*:(.*?)(?: \[[^\]]*\])?$")


def annotate(path):
    """{function name: inclusive Ir} and the total Ir of one dump."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                          "--auto=no", path], capture_output=True, text=True, check=True).stdout
    total = 0
    funcs = {}
    for line in out.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = LINE.match(line)
        if m:
            # The same function shows once per source file its code came
            # from (inlining); the largest inclusive figure is the whole.
            name = m.group(2).strip()
            funcs[name] = max(funcs.get(name, 0), int(m.group(1).replace(",", "")))
    return total, funcs


def self_cost(path, pattern):
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no",
                          path], capture_output=True, text=True, check=True).stdout
    cost = 0
    for line in out.splitlines():
        m = LINE.match(line)
        if m and re.search(pattern, m.group(2).strip()):
            cost += int(m.group(1).replace(",", ""))
    return cost


def main():
    out_dir = sys.argv[1]
    counts = {}
    with open(os.path.join(out_dir, "counts.txt")) as f:
        for line in f:
            name, n = line.split()
            counts[name] = int(n)
    rows = []
    for name, n in counts.items():
        dumps = glob.glob(os.path.join(out_dir, f"callgrind.*.out.*"))
        dump = None
        for d in dumps:
            with open(d, errors="replace") as f:
                head = f.read(4096)
            if re.search(r"^desc: Trigger: (?:Client Request: )?dump " + re.escape(name) + r"$", head, re.M):
                dump = d
        if dump is None:
            print(f"{name}: no dump found")
            continue
        total, funcs = annotate(dump)
        parts = []
        for area, pattern in AREAS:
            # Inclusive figures of nested or repeated entries overlap: the
            # largest one is the area's cost.
            cost = max((v for k, v in funcs.items() if re.search(pattern, k)), default=0)
            parts.append((area, cost))
        alloc = self_cost(dump, ALLOC)
        rows.append((name, n, total, parts, alloc))

    print("instructions per request (callgrind, inclusive; one kept-alive TLS connection)\n")
    header = ["fixture", "total"] + [a for a, _ in AREAS] + ["malloc/free (self)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, n, total, parts, alloc in rows:
        cells = [name, f"{total / n:,.0f}"] + [f"{c / n:,.0f}" for _, c in parts] + [f"{alloc / n:,.0f}"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
