"""The evaluation of the PromQL subset of promql_parse.py over a recording (Store),
the way Prometheus evaluates it: instant selectors look back 5 minutes and honour
staleness (a series that leaves its target's scrape ends there); rate() and irate()
correct counter resets and rate() extrapolates as Prometheus does; histogram_quantile
interpolates linearly in classic `le` buckets; vector-vector arithmetic matches one
to one on identical label sets, the metric name dropped.

Values: a scalar is a float; an instant vector a dict {labels: float}, labels a
sorted tuple of (name, value) pairs (`__name__` included for selected series).
Not thread-safe (a Store is built once and then only read).
"""
import math

# parse, substitute and UnsupportedError are part of this module's interface too.
from dashboard.promql_parse import UnsupportedError, parse, substitute  # noqa: F401

LOOKBACK_SECONDS = 300.0  # Prometheus' default --query.lookback-delta


# ----------------------------------------------------------------------------- store

class Store:
    """Series from a recording: {labels: [(t, value or None)]}, None a staleness
    marker (the series was missing from its target's next scrape)."""

    def __init__(self):
        self.series = {}
        self.last_scrape = {}  # target key -> set of label tuples in its last scrape

    def add_scrape(self, t, target, samples):
        """Adds one scrape at time t of a target ({label: value}, e.g. job, namespace,
        instance) whose samples are [name, {label: value}, value]. As Prometheus with
        honor_labels false: an exposed label the target also sets becomes exported_<name>."""
        key = tuple(sorted(target.items()))
        seen = set()
        for name, labels, value in samples:
            merged = dict(target)
            for k, v in labels.items():
                merged["exported_" + k if k in target else k] = v
            merged["__name__"] = name
            lt = tuple(sorted(merged.items()))
            seen.add(lt)
            self.series.setdefault(lt, []).append((t, float(value)))
        for gone in self.last_scrape.get(key, set()) - seen:
            self.series[gone].append((t, None))
        self.last_scrape[key] = seen

    def select(self, name, matchers):
        for labels, points in self.series.items():
            d = dict(labels)
            if d["__name__"] != name:
                continue
            if all((d.get(k, "") == v) == (op == "=") for k, op, v in matchers):
                yield labels, points


# ----------------------------------------------------------------------------- evaluation

def _drop_name(labels):
    return tuple(p for p in labels if p[0] != "__name__")


def _instant(store, node, t):
    out = {}
    for labels, points in store.select(node[1], node[2]):
        last = None
        for pt, v in points:
            if pt > t:
                break
            last = (pt, v)
        if last and last[1] is not None and last[0] > t - LOOKBACK_SECONDS:
            out[labels] = last[1]
    return out


def _range(store, node, t):
    lo = t - node[3]
    for labels, points in store.select(node[1], node[2]):
        pts = [(pt, v) for pt, v in points if lo < pt <= t and v is not None]
        if pts:
            yield labels, pts


def extrapolated_rate(points, range_start, range_end):
    """Per-second rate of a counter over [range_start, range_end] from its samples, as
    Prometheus' rate(): resets corrected, extrapolated to the window's edges unless
    the samples stop further than 1.1 average intervals short of them (then by half an
    interval), never below zero at the start. None with fewer than two samples."""
    if len(points) < 2:
        return None
    first_t, first_v = points[0]
    last_t, last_v = points[-1]
    increase = last_v - first_v
    for (_, a), (_, b) in zip(points, points[1:]):
        if b < a:
            increase += a
    sampled = last_t - first_t
    average = sampled / (len(points) - 1)
    to_start = first_t - range_start
    to_end = range_end - last_t
    if increase > 0 and first_v >= 0:
        to_zero = sampled * (first_v / increase)
        to_start = min(to_start, to_zero)
    threshold = average * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else average / 2
    interval += to_end if to_end < threshold else average / 2
    return increase * (interval / sampled) / (range_end - range_start)


def _irate(points):
    if len(points) < 2:
        return None
    (t0, a), (t1, b) = points[-2], points[-1]
    return (b if b < a else b - a) / (t1 - t0)


def bucket_quantile(q, buckets):
    """The q-quantile of classic histogram buckets [(upper bound, cumulative count)],
    as Prometheus' histogram_quantile(): NaN without a +Inf bucket or observations;
    the highest finite bound when the rank falls in +Inf; linear within a bucket."""
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    merged = {}
    for le, c in buckets:
        merged[le] = merged.get(le, 0.0) + c
    bs = sorted(merged.items())
    if len(bs) < 2 or bs[-1][0] != math.inf:
        return math.nan
    for i in range(1, len(bs)):  # counts must not fall (a scrape between bucket updates)
        if bs[i][1] < bs[i - 1][1]:
            bs[i] = (bs[i][0], bs[i - 1][1])
    total = bs[-1][1]
    if total == 0:
        return math.nan
    rank = q * total
    b = next(i for i, (_, c) in enumerate(bs) if c >= rank)
    if b == len(bs) - 1:
        return bs[-2][0]
    if b == 0 and bs[0][0] <= 0:
        return bs[0][0]
    start, end, count = 0.0, bs[b][0], bs[b][1]
    if b > 0:
        start = bs[b - 1][0]
        count -= bs[b - 1][1]
        rank -= bs[b - 1][1]
    return start + (end - start) * (rank / count)


def _histogram_quantile(q, vector):
    groups = {}
    for labels, v in vector.items():
        d = dict(_drop_name(labels))
        le = d.pop("le", None)
        if le is None:
            continue
        groups.setdefault(tuple(sorted(d.items())), []).append((float(le), v))
    return {k: bucket_quantile(q, b) for k, b in groups.items()}


def _aggregate(op, by, vector):
    groups = {}
    for labels, v in vector.items():
        d = dict(labels)
        key = tuple(sorted((k, d[k]) for k in (by or ()) if k in d))
        groups.setdefault(key, []).append(v)
    fn = {"sum": sum, "min": min, "max": max, "count": len,
          "avg": lambda vs: sum(vs) / len(vs)}[op]
    return {k: float(fn(vs)) for k, vs in groups.items()}


def _arith(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
    return a / b


def evaluate(store, ast, t):
    """The value of `ast` at time t: a float (scalar) or a dict (instant vector)."""
    kind = ast[0]
    if kind == "num":
        return ast[1]
    if kind == "sel":
        if ast[3] is not None:
            raise UnsupportedError("a range selector outside rate()/irate()")
        return _instant(store, ast, t)
    if kind == "call":
        fn, args = ast[1], ast[2]
        if fn == "time":
            return float(t)
        if fn in ("rate", "irate"):
            out = {}
            for labels, pts in _range(store, args[0], t):
                v = (extrapolated_rate(pts, t - args[0][3], t) if fn == "rate" else _irate(pts))
                if v is not None:
                    out[_drop_name(labels)] = v
            return out
        q = evaluate(store, args[0], t)
        if not isinstance(q, float):
            raise UnsupportedError("histogram_quantile() with a non-scalar quantile")
        return _histogram_quantile(q, evaluate(store, args[1], t))
    if kind == "agg":
        v = evaluate(store, ast[3], t)
        if isinstance(v, float):
            raise UnsupportedError(f"{ast[1]}() of a scalar")
        return _aggregate(ast[1], ast[2], v)
    op, lhs, rhs = ast[1], evaluate(store, ast[2], t), evaluate(store, ast[3], t)
    if isinstance(lhs, float) and isinstance(rhs, float):
        return _arith(op, lhs, rhs)
    if isinstance(rhs, float):
        return {_drop_name(k): _arith(op, v, rhs) for k, v in lhs.items()}
    if isinstance(lhs, float):
        return {_drop_name(k): _arith(op, lhs, v) for k, v in rhs.items()}
    right = {_drop_name(k): v for k, v in rhs.items()}
    return {_drop_name(k): _arith(op, v, right[_drop_name(k)])
            for k, v in lhs.items() if _drop_name(k) in right}


def query_range(store, query, start, end, step):
    """{labels: [(t, value)]} of `query` at start, start+step, ... <= end; NaN values
    left out (Grafana draws a gap). A scalar result has the empty label set."""
    ast = parse(query)
    out = {}
    steps = int(math.floor((end - start) / step + 1e-9)) + 1
    for i in range(max(steps, 0)):
        t = start + i * step
        v = evaluate(store, ast, t)
        items = {(): v}.items() if isinstance(v, float) else v.items()
        for labels, x in items:
            if not math.isnan(x):
                out.setdefault(labels, []).append((t, x))
    return out
