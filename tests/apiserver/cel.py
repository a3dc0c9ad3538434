"""A small CEL subset for admission matchConditions, used only by the test API
server (tests/apiserver/admission.py) for the e2e tests that still run on it.
The chart's matchConditions themselves are judged by the real kube-apiserver
(tests/cluster/test_match_conditions_real.py); this model stays because the
test API server must evaluate them to call the webhook the way it does.

Supported: literals (int, double, string, bool, null, lists), identifiers, field
selection (a.b), indexing (a['k'], l[0]), has(a.b), `in` (map keys / list items),
== != < <= > >=, && || ! (with CEL's error absorption: `false && error` is false,
`true || error` is true), ?:, + on numbers/strings/lists, size(), and the methods
startsWith, endsWith, contains, matches, exists, all, size. Anything else raises
CelError at compile time. Selecting a missing map key is an evaluation error, as
in CEL. Pure; thread-safe.
"""
import re


class CelError(Exception):
    pass


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>\d+\.\d+|\d+)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<op>&&|\|\||==|!=|<=|>=|[<>!?:.,()\[\]+\-])
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
""", re.VERBOSE)


def _Tokenize(text):
    pos, out = 0, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise CelError(f"Syntax error: unexpected character {text[pos]!r} at {pos}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        val = m.group(kind)
        if kind == "str":
            val = bytes(val[1:-1], "utf-8").decode("unicode_escape")
        elif kind == "num":
            val = float(val) if "." in val else int(val)
        out.append((kind, val))
    out.append(("eof", None))
    return out


class _Parser:
    def __init__(self, text):
        self.toks = _Tokenize(text)
        self.i = 0

    def peek(self):
        return self.toks[self.i]

    def take(self, val=None):
        tok = self.toks[self.i]
        if val is not None and tok[1] != val:
            raise CelError(f"Syntax error: expected {val!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def Parse(self):
        node = self.ternary()
        if self.peek()[0] != "eof":
            raise CelError(f"Syntax error: unexpected {self.peek()[1]!r}")
        return node

    def ternary(self):
        cond = self.or_()
        if self.peek()[1] == "?":
            self.take("?")
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            return ("?:", cond, a, b)
        return cond

    def or_(self):
        node = self.and_()
        while self.peek()[1] == "||":
            self.take()
            node = ("||", node, self.and_())
        return node

    def and_(self):
        node = self.rel()
        while self.peek()[1] == "&&":
            self.take()
            node = ("&&", node, self.rel())
        return node

    def rel(self):
        node = self.add()
        while self.peek()[1] in ("==", "!=", "<", "<=", ">", ">=", "in"):
            op = self.take()[1]
            node = (op, node, self.add())
        return node

    def add(self):
        node = self.unary()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            node = (op, node, self.unary())
        return node

    def unary(self):
        if self.peek()[1] == "!":
            self.take()
            return ("!", self.unary())
        if self.peek()[1] == "-":
            self.take()
            return ("neg", self.unary())
        return self.postfix()

    def postfix(self):
        node = self.primary()
        while True:
            tok = self.peek()[1]
            if tok == ".":
                self.take()
                name = self.take()
                if name[0] != "id":
                    raise CelError("Syntax error: expected field name")
                if self.peek()[1] == "(":
                    node = ("method", node, name[1], self.args())
                else:
                    node = ("sel", node, name[1])
            elif tok == "[":
                self.take()
                idx = self.ternary()
                self.take("]")
                node = ("index", node, idx)
            else:
                return node

    def args(self):
        self.take("(")
        out = []
        while self.peek()[1] != ")":
            out.append(self.ternary())
            if self.peek()[1] == ",":
                self.take()
        self.take(")")
        return out

    def primary(self):
        kind, val = self.take()
        if kind in ("num", "str"):
            return ("lit", val)
        if kind == "id":
            if val in ("true", "false"):
                return ("lit", val == "true")
            if val == "null":
                return ("lit", None)
            if self.peek()[1] == "(":
                return ("call", val, self.args())
            return ("id", val)
        if val == "(":
            node = self.ternary()
            self.take(")")
            return node
        if val == "[":
            items = []
            while self.peek()[1] != "]":
                items.append(self.ternary())
                if self.peek()[1] == ",":
                    self.take()
            self.take("]")
            return ("list", items)
        raise CelError(f"Syntax error: unexpected {val!r}")


_MACROS = {"exists", "all"}
_METHODS = {"startsWith", "endsWith", "contains", "matches", "size"} | _MACROS
_FUNCS = {"has", "size"}


def _Check(node):
    kind = node[0]
    if kind == "call" and node[1] not in _FUNCS:
        raise CelError(f"undeclared reference to '{node[1]}'")
    if kind == "method" and node[2] not in _METHODS:
        raise CelError(f"undeclared reference to '{node[2]}'")
    for child in node[1:]:
        if isinstance(child, tuple):
            _Check(child)
        elif isinstance(child, list):
            for c in child:
                if isinstance(c, tuple):
                    _Check(c)


def Compile(text):
    """Parse and check an expression; raise CelError if outside the subset."""
    node = _Parser(text).Parse()
    _Check(node)
    return node


class _Err:
    def __init__(self, msg):
        self.msg = msg


def _Eval(node, env):
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "id":
        if node[1] not in env:
            raise CelError(f"undeclared reference to '{node[1]}'")
        return env[node[1]]
    if kind == "list":
        return [_Eval(n, env) for n in node[1]]
    if kind == "sel":
        base = _Eval(node[1], env)
        if not isinstance(base, dict):
            raise CelError(f"no such key: {node[2]}" if base is not None else "no such key: null")
        if node[2] not in base:
            raise CelError(f"no such key: {node[2]}")
        return base[node[2]]
    if kind == "index":
        base, idx = _Eval(node[1], env), _Eval(node[2], env)
        try:
            return base[idx]
        except (KeyError, IndexError, TypeError):
            raise CelError(f"no such key: {idx}")
    if kind == "call":
        name, args = node[1], node[2]
        if name == "has":
            arg = args[0]
            if arg[0] != "sel":
                raise CelError("invalid argument to has() macro")
            base = _Eval(arg[1], env)
            if not isinstance(base, dict):
                raise CelError("invalid type for field selection")
            return arg[2] in base and base[arg[2]] is not None
        return len(_Eval(args[0], env))
    if kind == "method":
        return _Method(node, env)
    if kind in ("&&", "||"):
        want = kind == "||"
        results = []
        for sub in node[1:]:
            try:
                results.append(_Truth(_Eval(sub, env)))
            except CelError as e:
                results.append(_Err(str(e)))
        if any(r is want for r in results):
            return want
        for r in results:
            if isinstance(r, _Err):
                raise CelError(r.msg)
        return not want
    if kind == "!":
        return not _Truth(_Eval(node[1], env))
    if kind == "neg":
        return -_Eval(node[1], env)
    if kind == "?:":
        return _Eval(node[2], env) if _Truth(_Eval(node[1], env)) else _Eval(node[3], env)
    a, b = _Eval(node[1], env), _Eval(node[2], env)
    if kind == "==":
        return a == b
    if kind == "!=":
        return a != b
    if kind == "in":
        if isinstance(b, (dict, list)):
            return a in b
        raise CelError("no matching overload for 'in'")
    try:
        if kind == "+":
            return a + b
        if kind == "-":
            return a - b
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[kind]
    except TypeError:
        raise CelError(f"no matching overload for '{kind}'")


def _Truth(v):
    if not isinstance(v, bool):
        raise CelError("no matching overload: expected bool")
    return v


def _Method(node, env):
    _, target, name, args = node
    if name in _MACROS:
        var = args[0]
        if var[0] != "id":
            raise CelError(f"{name}: first argument must be a variable")
        coll = _Eval(target, env)
        items = list(coll.keys()) if isinstance(coll, dict) else list(coll)
        results = [_Truth(_Eval(args[1], dict(env, **{var[1]: it}))) for it in items]
        return any(results) if name == "exists" else all(results)
    base = _Eval(target, env)
    vals = [_Eval(a, env) for a in args]
    if name == "size":
        return len(base)
    if not isinstance(base, str):
        raise CelError(f"no matching overload for '{name}'")
    if name == "startsWith":
        return base.startswith(vals[0])
    if name == "endsWith":
        return base.endswith(vals[0])
    if name == "contains":
        return vals[0] in base
    return re.search(vals[0], base) is not None


def Evaluate(compiled, env):
    """Evaluate a compiled expression; the result must be a bool (else CelError)."""
    return _Truth(_Eval(compiled, env))
