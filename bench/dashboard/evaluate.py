"""From a recording to the dashboard's panel data: load the JSON lines into a
promql.Store, resolve the dashboard's variables as Grafana would over it, and run
every panel's queries over the recorded time range.
"""
import json
import re
import time

from dashboard import promql, render


class Recording:
    """A loaded recording: the Store, the events [(t, text)], the scrape times' range
    [t0, t1] and the scrape interval (seconds)."""

    def __init__(self, lines):
        self.store = promql.Store()
        self.events = []
        times = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if "event" in rec:
                self.events.append((rec["t"], rec["event"]))
            elif "samples" in rec:
                self.store.add_scrape(rec["t"], rec["target"], rec["samples"])
                times.append(rec["t"])
            else:
                raise ValueError(f"recording line {n}: neither a scrape nor an event")
        if len(times) < 2:
            raise ValueError("a recording needs at least two scrapes")
        self.t0, self.t1 = min(times), max(times)
        targets = max(1, len(self.store.last_scrape))
        self.interval = (self.t1 - self.t0) / max(1, len(times) // targets - 1)


def variables(dashboard, store):
    """{name: value} of the dashboard's query variables, each the first value of a
    `label_values(metric, label)` over the store; raises promql.UnsupportedError for
    another kind of variable query."""
    out = {}
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else q
        m = re.fullmatch(r"\s*label_values\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*", q or "")
        if not m:
            raise promql.UnsupportedError(f"variable {v.get('name')}: unsupported query {q!r}")
        values = sorted({dict(labels).get(m.group(2)) for labels, _ in store.select(m.group(1), ())}
                        - {None})
        if not values:
            raise promql.UnsupportedError(f"variable {v.get('name')}: no value in the recording")
        out[v["name"]] = values[0]
    return out


def legend_text(fmt, labels):
    """Grafana's legendFormat: {{label}} replaced by the series' value ("" when absent);
    no format: the series as Prometheus prints it."""
    d = dict(labels)
    if not fmt:
        inner = ", ".join(f'{k}="{v}"' for k, v in labels if k != "__name__")
        return d.get("__name__", "") + "{" + inner + "}"
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: d.get(m.group(1), ""), fmt).strip()


def panel_queries(dashboard, values):
    """[(panel, [(query with variables substituted, legendFormat)])]."""
    return [(p, [(promql.substitute(t["expr"], values), t.get("legendFormat", ""))
                 for t in p.get("targets", []) if t.get("expr")])
            for p in dashboard["panels"]]


def panel_results(dashboard, rec):
    """{panel id: [(legend name, [(t, v)])]} over the recording, series in query order
    and by legend name within a query."""
    out = {}
    for p, queries in panel_queries(dashboard, variables(dashboard, rec.store)):
        series = []
        for q, fmt in queries:
            res = promql.query_range(rec.store, q, rec.t0, rec.t1, rec.interval)
            series += sorted((legend_text(fmt, labels), pts) for labels, pts in res.items())
        out[p["id"]] = series
    return out


def dashboard_png(dashboard, rec):
    """PNG bytes of `dashboard` drawn over the recording, its run described under the
    title. Deterministic: the same recording and dashboard give the same bytes."""
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(rec.t0))
    subtitle = (f"recorded run, {started}, {rec.t1 - rec.t0:.0f} s, scraped every "
                f"{rec.interval:.0f} s; test API server with gang scheduler")
    return render.render(dashboard, panel_results(dashboard, rec), rec.t0, rec.t1, subtitle,
                         rec.events)
