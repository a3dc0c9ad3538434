"""A strict reader of the Prometheus text exposition format (0.0.4), for the
tests that scrape wasd's /metrics, and a reader of the metrics table in
docs/metrics.md.

parse(text) returns {family name: Family} and raises FormatError on anything
a Prometheus server would refuse or silently mangle: a malformed line, bad
names or escapes, a sample before its family's TYPE, a family split in two,
a repeated series, a histogram whose buckets are not cumulative, do not end
at +Inf or disagree with _count. Stdlib only.
"""

import math
import re

_METRIC = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
_TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
_SAMPLE = re.compile(r"^(%s)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$" % _METRIC)
_LABEL_PAIR = re.compile(r'(%s)="((?:[^"\\]|\\[\\"n])*)"' % _LABEL)


class FormatError(Exception):
    pass


class Family:
    def __init__(self, name, kind):
        self.name, self.type, self.help = name, kind, None
        self.samples = []  # (sample name, {label: value}, float value)

    def label_names(self):
        """Label names of the samples, `le` excluded."""
        out = set()
        for _, labels, _ in self.samples:
            out |= set(labels) - {"le"}
        return out

    def value(self, suffix="", **labels):
        for name, have, v in self.samples:
            if name == self.name + suffix and have == labels:
                return v
        raise KeyError("%s%s%r" % (self.name, suffix, labels))

    def bucket_bounds(self):
        """The le values of the first bucket series, as written (+Inf included)."""
        first = None
        out = []
        for name, labels, _ in self.samples:
            if name != self.name + "_bucket":
                continue
            key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
            if first is None:
                first = key
            if key == first:
                out.append(labels["le"])
        return out


def _value(text, where):
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    if text == "NaN":
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise FormatError("%s: value %r is not a number" % (where, text))


def _labels(text, where):
    labels = {}
    pos = 0
    while pos < len(text):
        m = _LABEL_PAIR.match(text, pos)
        if not m:
            raise FormatError("%s: bad label list at %r" % (where, text[pos:]))
        name = m.group(1)
        if name in labels:
            raise FormatError("%s: label %s repeated" % (where, name))
        value = m.group(2).replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        labels[name] = value
        pos = m.end()
        if pos < len(text):
            if text[pos] != ",":
                raise FormatError("%s: expected ',' at %r" % (where, text[pos:]))
            pos += 1
    return labels


def _family_of(sample_name, families):
    """The family a sample belongs to (histogram/summary suffixes)."""
    if sample_name in families:
        return families[sample_name]
    for suffix in ("_bucket", "_sum", "_count"):
        base = sample_name[:-len(suffix)] if sample_name.endswith(suffix) else None
        if base and base in families and families[base].type in ("histogram", "summary"):
            return families[base]
    return None


def parse(text):
    if text and not text.endswith("\n"):
        raise FormatError("the exposition must end with a newline")
    families = {}
    order = []
    seen_series = set()
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d" % n
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                if not re.fullmatch(_METRIC, parts[2]):
                    raise FormatError("%s: bad metric name %r" % (where, parts[2]))
                name = parts[2]
                if parts[1] == "TYPE":
                    kind = parts[3] if len(parts) > 3 else ""
                    if kind not in _TYPES:
                        raise FormatError("%s: unknown type %r" % (where, kind))
                    if name in families and families[name].type is not None:
                        raise FormatError("%s: second TYPE for %s" % (where, name))
                    if name in families and families[name].samples:
                        raise FormatError("%s: TYPE of %s after its samples" % (where, name))
                    fam = families.setdefault(name, Family(name, kind))
                    fam.type = kind
                else:
                    fam = families.setdefault(name, Family(name, None))
                    if fam.help is not None:
                        raise FormatError("%s: second HELP for %s" % (where, name))
                    fam.help = parts[3] if len(parts) > 3 else ""
                if name not in order:
                    order.append(name)
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise FormatError("%s: not a sample line: %r" % (where, line))
        name, label_text, value_text = m.group(1), m.group(2) or "", m.group(3)
        labels = _labels(label_text, where)
        fam = _family_of(name, families)
        if fam is None or fam.type is None:
            raise FormatError("%s: sample %s before its TYPE line" % (where, name))
        if order[-1] != fam.name:
            raise FormatError("%s: family %s is split (samples after %s)" % (where, fam.name, order[-1]))
        series = (name, tuple(sorted(labels.items())))
        if series in seen_series:
            raise FormatError("%s: series %s%r repeated" % (where, name, labels))
        seen_series.add(series)
        value = _value(value_text, where)
        if fam.type == "counter" and (value < 0 or math.isnan(value)):
            raise FormatError("%s: counter %s is %r" % (where, name, value))
        if fam.type == "histogram" and name == fam.name:
            raise FormatError("%s: histogram sample without suffix" % where)
        fam.samples.append((name, labels, value))
    for fam in families.values():
        if fam.type is None:
            raise FormatError("family %s has HELP but no TYPE" % fam.name)
        if fam.type == "histogram":
            _check_histogram(fam)
    return families


def _check_histogram(fam):
    groups = {}
    for name, labels, value in fam.samples:
        key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
        g = groups.setdefault(key, {"buckets": [], "sum": None, "count": None})
        if name == fam.name + "_bucket":
            if "le" not in labels:
                raise FormatError("%s: bucket without le" % fam.name)
            g["buckets"].append((_value(labels["le"], fam.name), value))
        elif name == fam.name + "_sum":
            g["sum"] = value
        elif name == fam.name + "_count":
            g["count"] = value
    for key, g in groups.items():
        where = "%s%r" % (fam.name, dict(key))
        bounds = [b for b, _ in g["buckets"]]
        if not bounds or bounds[-1] != math.inf:
            raise FormatError("%s: buckets do not end at +Inf" % where)
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise FormatError("%s: bucket bounds not strictly ascending" % where)
        counts = [c for _, c in g["buckets"]]
        if counts != sorted(counts):
            raise FormatError("%s: buckets not cumulative" % where)
        if g["count"] is None or g["sum"] is None:
            raise FormatError("%s: _sum or _count missing" % where)
        if counts[-1] != g["count"]:
            raise FormatError("%s: +Inf bucket %r != _count %r" % (where, counts[-1], g["count"]))


def read_table(markdown_path, section):
    """The metrics table under '## <section>' of docs/metrics.md:
    {name: (type, frozenset of label names, [bucket bounds as written])}."""
    with open(markdown_path) as f:
        text = f.read()
    start = text.index("\n## " + section)
    end = text.find("\n## ", start + 1)
    body = text[start:end if end != -1 else len(text)]
    rows = {}
    for line in body.splitlines():
        m = re.match(r"^\|\s*`(%s)`\s*\|\s*(\w+)\s*\|([^|]*)\|([^|]*)\|" % _METRIC, line)
        if not m:
            continue
        labels = frozenset(re.findall(r"`(%s)`" % _LABEL, m.group(3)))
        bounds = m.group(4).split()
        if m.group(1) in rows:
            raise FormatError("docs table lists %s twice" % m.group(1))
        rows[m.group(1)] = (m.group(2), labels, bounds)
    return rows
