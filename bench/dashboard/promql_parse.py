"""The parser of the PromQL subset that charts/wasd/dashboards/wasd.json uses (see
promql.py for its evaluation), and Grafana's variable substitution. No more than
the subset: an error naming anything else.

Supported:
  * instant selectors `name{label="v", label!="v"}` and range selectors
    `name{...}[5m]` as the argument of rate() or irate();
  * functions rate, irate, histogram_quantile, time();
  * aggregations sum, min, max, avg, count, optionally with `by (labels)` before
    or after the parenthesised argument;
  * number literals, parentheses, and + - * / between scalars and vectors.
Refused with UnsupportedError (its message names the construct and the column):
offset, @, subqueries, regex matchers, `without`, on/ignoring/group_left/right,
bool, comparisons, and/or/unless, ^, %, unary minus, any other function or
aggregation, a string outside a matcher.

The AST is tuples: ("num", v) ("sel", name, matchers, range_seconds|None)
("call", fn, [args]) ("agg", op, by_labels|None, expr) ("bin", op, lhs, rhs).
Pure; no state shared between calls.
"""
import re

FUNCTIONS = ("rate", "irate", "histogram_quantile", "time")
AGGREGATIONS = ("sum", "min", "max", "avg", "count")
_REFUSED_KEYWORDS = ("offset", "without", "on", "ignoring", "group_left", "group_right", "bool",
                     "and", "or", "unless", "atan2")


class UnsupportedError(ValueError):
    """A query uses PromQL this evaluator does not implement (or is not PromQL)."""


# ----------------------------------------------------------------------------- lexer

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<duration>(?:\d+(?:ms|s|m|h|d|w|y))+(?![\w.]))
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[Ii]nf(?!\w)|NaN(?!\w))
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^(){}\[\],=<>@])
""", re.VERBOSE)

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def _duration_seconds(text):
    return sum(float(n) * _UNITS[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text))


def _tokens(query):
    out, pos = [], 0
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        if not m:
            raise UnsupportedError(f"cannot read {query[pos:pos + 10]!r} at column {pos + 1} of: {query}")
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group(), pos))
        pos = m.end()
    out.append(("end", "", pos))
    return out


# ----------------------------------------------------------------------------- parser
class _Parser:
    def __init__(self, query):
        self.query = query
        self.toks = _tokens(query)
        self.i = 0

    def peek(self):
        return self.toks[self.i]

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def refuse(self, what, tok=None):
        tok = tok or self.peek()
        raise UnsupportedError(f"unsupported PromQL: {what} at column {tok[2] + 1} of: {self.query}")

    def expect(self, text):
        t = self.take()
        if t[1] != text:
            self.refuse(f"expected {text!r}, found {t[1] or 'end of query'!r}", t)
        return t

    def parse(self):
        e = self.additive()
        if self.peek()[0] != "end":
            self.refuse(f"{self.peek()[1]!r} (comparison, set or other operator)")
        return e

    def additive(self):
        lhs = self.multiplicative()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            lhs = ("bin", op, lhs, self.multiplicative())
        return lhs

    def multiplicative(self):
        lhs = self.atom()
        while self.peek()[1] in ("*", "/", "%", "^"):
            t = self.take()
            if t[1] in ("%", "^"):
                self.refuse(f"operator {t[1]!r}", t)
            lhs = ("bin", t[1], lhs, self.atom())
        return lhs

    def atom(self):
        kind, text, _ = tok = self.peek()
        if kind == "number":
            self.take()
            return ("num", float(text))
        if text == "(":
            self.take()
            e = self.additive()
            self.expect(")")
            return self.suffix(e)
        if text == "{":
            self.refuse("a selector without a metric name")
        if kind == "ident":
            if text in _REFUSED_KEYWORDS:
                self.refuse(f"keyword {text!r}")
            if self.toks[self.i + 1][1] == "(" or text in AGGREGATIONS:
                return self.suffix(self.call())
            self.take()
            return self.suffix(self.selector(text))
        if kind == "string":
            self.refuse("a string literal outside a label matcher")
        if text == "-":
            self.refuse("unary minus")
        self.refuse(f"{text or 'end of query'!r}")
        return tok  # not reached

    def suffix(self, e):
        t = self.peek()
        if t[1] == "[":
            if e[0] != "sel" or e[3] is not None:
                self.refuse("a subquery", t)
            self.take()
            d = self.take()
            if d[0] != "duration":
                self.refuse(f"range {d[1]!r}", d)
            if self.peek()[1].startswith(":"):
                self.refuse("a subquery")
            self.expect("]")
            e = ("sel", e[1], e[2], _duration_seconds(d[1]))
            t = self.peek()
        if t[1] == "offset" or t[1] == "@":
            self.refuse(f"modifier {t[1]!r}", t)
        return e

    def selector(self, name):
        matchers = []
        if self.peek()[1] == "{":
            self.take()
            while self.peek()[1] != "}":
                label = self.take()
                if label[0] != "ident":
                    self.refuse(f"label name {label[1]!r}", label)
                op = self.take()
                if op[1] not in ("=", "!="):
                    self.refuse(f"label matcher {op[1]!r}", op)
                value = self.take()
                if value[0] != "string":
                    self.refuse(f"label value {value[1]!r}", value)
                matchers.append((label[1], op[1], _unquote(value[1])))
                if self.peek()[1] == ",":
                    self.take()
            self.expect("}")
        return ("sel", name, tuple(matchers), None)

    def call(self):
        name_tok = self.take()
        name = name_tok[1]
        if name in AGGREGATIONS:
            by = None
            if self.peek()[1] == "by":
                self.take()
                by = self.labels()
            elif self.peek()[1] == "without":
                self.refuse("aggregation modifier 'without'")
            self.expect("(")
            arg = self.additive()
            if self.peek()[1] == ",":
                self.refuse(f"a parameter of {name}()")
            self.expect(")")
            if self.peek()[1] == "by":
                if by is not None:
                    self.refuse("a second 'by'")
                self.take()
                by = self.labels()
            elif self.peek()[1] == "without":
                self.refuse("aggregation modifier 'without'")
            return ("agg", name, by, arg)
        if name not in FUNCTIONS:
            self.refuse(f"function {name}()", name_tok)
        self.expect("(")
        args = []
        while self.peek()[1] != ")":
            args.append(self.additive())
            if self.peek()[1] == ",":
                self.take()
            elif self.peek()[1] != ")":
                self.refuse(f"{self.peek()[1]!r} in the arguments of {name}()")
        self.expect(")")
        want = {"rate": 1, "irate": 1, "histogram_quantile": 2, "time": 0}[name]
        if len(args) != want:
            self.refuse(f"{name}() with {len(args)} arguments (it takes {want})", name_tok)
        if name in ("rate", "irate") and (args[0][0] != "sel" or args[0][3] is None):
            self.refuse(f"{name}() of something other than a range selector", name_tok)
        return ("call", name, args)

    def labels(self):
        self.expect("(")
        out = []
        while self.peek()[1] != ")":
            t = self.take()
            if t[0] != "ident":
                self.refuse(f"label {t[1]!r}", t)
            out.append(t[1])
            if self.peek()[1] == ",":
                self.take()
        self.expect(")")
        return tuple(out)


def _unquote(text):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text[1:-1])


def parse(query):
    """The AST of `query`; raises UnsupportedError naming what it does not support."""
    return _Parser(query).parse()


def substitute(query, variables):
    """`query` with Grafana's $name, ${name} and [[name]] replaced from `variables`;
    raises UnsupportedError for a variable it has no value for."""
    def one(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in variables:
            raise UnsupportedError(f"no value for dashboard variable ${name} in: {query}")
        return variables[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)|\[\[(\w+)\]\]", one, query)
