"""A tiny evaluator for the subset of CEL that the chart's matchConditions
use, with CEL's error semantics, so the tests can evaluate the real
expression against admission requests.

Subset: identifiers (the admission variables), string literals, null, true,
false, field selection a.b, has(a.b), `in` (map keys, list items), ==, !=,
!, &&, ||, parentheses, the method s.startsWith(t) and the macro
m.exists(x, predicate) over map keys or list items. Anything else is a
syntax error (the test then fails, rather than guessing).

Semantics followed from the CEL spec: selecting a missing map key or a field
of null is an error; has(a.b) tests key presence on a map (error when `a` is
not a map); && and || are commutative over errors (false && error == false,
true || error == true; otherwise an error propagates); kube-apiserver treats
an evaluation error as the webhook's failurePolicy, so the tests require a
plain boolean result.
"""

import re

ADMISSION_VARIABLES = ("object", "oldObject", "request", "authorizer", "params", "namespaceObject")

_TOKEN = re.compile(r"""\s*(?:
    (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<op>&&|\|\||==|!=|!|\(|\)|\.|,)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
)""", re.VERBOSE)

# Bound on nesting so a malformed expression cannot recurse without limit;
# kube-apiserver has its own (much larger) limits.
_MAX_DEPTH = 100


class CelSyntaxError(Exception):
    pass


class CelError:
    """An evaluation error value (CEL errors are values until the end)."""

    def __init__(self, why):
        self.why = why

    def __repr__(self):
        return "CelError(%s)" % self.why


def tokenize(text):
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CelSyntaxError("unexpected text at %d: %r" % (pos, text[pos:pos + 20]))
        pos = m.end()
        if m.group("str") is not None:
            raw = m.group("str")[1:-1]
            out.append(("str", re.sub(r"\\(.)", r"\1", raw)))
        elif m.group("op") is not None:
            out.append(("op", m.group("op")))
        else:
            out.append(("ident", m.group("ident")))
    return out


class _Parser:
    def __init__(self, tokens):
        self.toks, self.i, self.depth = tokens, 0, 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if tok[0] is None or (kind and tok[0] != kind) or (value and tok[1] != value):
            raise CelSyntaxError("expected %s, got %r" % (value or kind, tok[1]))
        self.i += 1
        return tok

    def parse(self):
        node = self.expr()
        if self.i != len(self.toks):
            raise CelSyntaxError("trailing tokens from %r" % (self.peek()[1],))
        return node

    def expr(self):
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise CelSyntaxError("nested too deeply")
        node = self.binary_or()
        self.depth -= 1
        return node

    def binary_or(self):
        node = self.binary_and()
        while self.peek() == ("op", "||"):
            self.take()
            node = ("or", node, self.binary_and())
        return node

    def binary_and(self):
        node = self.unary()
        while self.peek() == ("op", "&&"):
            self.take()
            node = ("and", node, self.unary())
        return node

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.unary())
        return self.relation()

    def relation(self):
        left = self.member()
        tok = self.peek()
        if tok in (("op", "=="), ("op", "!=")) or tok == ("ident", "in"):
            self.take()
            return (tok[1], left, self.member())
        return left

    def member(self):
        node = self.primary()
        while self.peek() == ("op", "."):
            self.take()
            name = self.take("ident")[1]
            if self.peek() != ("op", "("):
                node = ("select", node, name)
                continue
            self.take()
            if name == "startsWith":
                node = ("startsWith", node, self.expr())
            elif name == "exists":
                var = self.take("ident")[1]
                if var in ADMISSION_VARIABLES:
                    raise CelSyntaxError("exists() variable %r shadows a declared one" % var)
                self.take("op", ",")
                self.locals = getattr(self, "locals", ()) + (var,)
                body = self.expr()
                self.locals = self.locals[:-1]
                node = ("exists", node, var, body)
            else:
                raise CelSyntaxError("unsupported method %r" % name)
            self.take("op", ")")
        return node

    def primary(self):
        kind, value = self.peek()
        if kind == "str":
            self.take()
            return ("lit", value)
        if kind == "op" and value == "(":
            self.take()
            node = self.expr()
            self.take("op", ")")
            return node
        if kind == "ident":
            self.take()
            if value in ("null", "true", "false"):
                return ("lit", {"null": None, "true": True, "false": False}[value])
            if value == "has":
                self.take("op", "(")
                arg = self.member()
                self.take("op", ")")
                if arg[0] != "select":
                    raise CelSyntaxError("has() needs a field selection")
                return ("has", arg)
            if value not in ADMISSION_VARIABLES and value not in getattr(self, "locals", ()):
                raise CelSyntaxError("undeclared reference %r" % value)
            return ("var", value)
        raise CelSyntaxError("unexpected %r" % (value,))


def compile_expression(text):
    return _Parser(tokenize(text)).parse()


def evaluate(node, env):
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "var":
        return env.get(node[1])
    if op == "select":
        base = evaluate(node[1], env)
        if isinstance(base, CelError):
            return base
        if not isinstance(base, dict):
            return CelError("select %s on %r" % (node[2], type(base).__name__))
        if node[2] not in base:
            return CelError("no such key: " + node[2])
        return base[node[2]]
    if op == "has":
        base = evaluate(node[1][1], env)
        if isinstance(base, CelError):
            return base
        if not isinstance(base, dict):
            return CelError("has() on %r" % type(base).__name__)
        return node[1][2] in base
    if op == "startsWith":
        s, prefix = evaluate(node[1], env), evaluate(node[2], env)
        for v in (s, prefix):
            if isinstance(v, CelError):
                return v
        if not (isinstance(s, str) and isinstance(prefix, str)):
            return CelError("startsWith on non-string")
        return s.startswith(prefix)
    if op == "exists":
        # True if the predicate is true for any element; else an error if it
        # errored for any; else false (CEL's macro expansion over ||).
        rng = evaluate(node[1], env)
        if isinstance(rng, CelError):
            return rng
        if not isinstance(rng, (dict, list)):
            return CelError("exists() on %r" % type(rng).__name__)
        err = None
        for item in rng:
            v = evaluate(node[3], dict(env, **{node[2]: item}))
            if v is True:
                return True
            if isinstance(v, CelError):
                err = err or v
            elif not isinstance(v, bool):
                err = err or CelError("exists() predicate is not a bool")
        return err if err is not None else False
    if op == "not":
        v = evaluate(node[1], env)
        if isinstance(v, CelError):
            return v
        return (not v) if isinstance(v, bool) else CelError("! on non-bool")
    if op in ("and", "or"):
        short = op == "or"  # value that decides the result on its own
        vals = [evaluate(node[1], env), evaluate(node[2], env)]
        if any(v is short for v in vals):
            return short
        errs = [v for v in vals if isinstance(v, CelError)]
        if errs:
            return errs[0]
        if not all(isinstance(v, bool) for v in vals):
            return CelError("%s on non-bool" % op)
        return not short
    if op in ("==", "!="):
        a, b = evaluate(node[1], env), evaluate(node[2], env)
        for v in (a, b):
            if isinstance(v, CelError):
                return v
        return (a == b) if op == "==" else (a != b)
    if op == "in":
        a, b = evaluate(node[1], env), evaluate(node[2], env)
        for v in (a, b):
            if isinstance(v, CelError):
                return v
        if isinstance(b, (dict, list)):
            return a in b
        return CelError("in on %r" % type(b).__name__)
    raise ValueError(op)
