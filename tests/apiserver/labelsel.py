"""Label and field selectors: parsing the query-string forms and the LabelSelector object.

Pure functions; thread-safe.
"""
import re


class SelectorError(ValueError):
    pass


_SET_RE = re.compile(r"^\s*(!?)\s*([A-Za-z0-9./_-]+)\s*(?:(notin|in)\s*\(([^)]*)\))?\s*$")


def _SplitTerms(text):
    """Split on commas that are not inside parentheses."""
    terms, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        terms.append(cur)
    return [t.strip() for t in terms if t.strip()]


def ParseLabelSelector(text):
    """Parse `a=b,c!=d,e in (x,y),!f,g` into a list of (key, op, values)."""
    reqs = []
    for term in _SplitTerms(text or ""):
        m = re.match(r"^([^!=<>\s]+)\s*(==|=|!=)\s*([^\s]*)$", term)
        if m:
            op = "!=" if m.group(2) == "!=" else "="
            reqs.append((m.group(1), op, [m.group(3)]))
            continue
        m = _SET_RE.match(term)
        if not m:
            raise SelectorError(f"unable to parse requirement: {term}")
        neg, key, setop, vals = m.groups()
        if setop:
            if neg:
                raise SelectorError(f"unable to parse requirement: {term}")
            values = [v.strip() for v in vals.split(",") if v.strip()]
            reqs.append((key, setop, values))
        else:
            reqs.append((key, "!exists" if neg else "exists", []))
    return reqs


def MatchLabelRequirements(reqs, labels):
    labels = labels or {}
    for key, op, values in reqs:
        present = key in labels
        val = labels.get(key)
        if op == "=" and not (present and val == values[0]):
            return False
        if op == "!=" and present and val == values[0]:
            return False
        if op == "in" and not (present and val in values):
            return False
        if op == "notin" and present and val in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!exists" and present:
            return False
    return True


def LabelSelectorToRequirements(sel):
    """metav1.LabelSelector → requirements. None selects nothing; {} selects everything."""
    if sel is None:
        return None
    reqs = []
    for k, v in sorted((sel.get("matchLabels") or {}).items()):
        reqs.append((k, "=", [v]))
    for e in sel.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}.get(e.get("operator"))
        if op is None:
            raise SelectorError(f"{e.get('operator')!r} is not a valid label selector operator")
        reqs.append((e.get("key"), op, list(e.get("values") or [])))
    return reqs


def MatchLabelSelector(sel, labels):
    reqs = LabelSelectorToRequirements(sel)
    if reqs is None:
        return False
    return MatchLabelRequirements(reqs, labels)


def LabelSelectorString(sel):
    """The string form kube puts in Scale.status.selector."""
    parts = []
    for key, op, values in LabelSelectorToRequirements(sel or {}) or []:
        if op in ("=", "!="):
            parts.append(f"{key}{op}{values[0]}")
        elif op in ("in", "notin"):
            parts.append(f"{key} {op} ({','.join(values)})")
        elif op == "exists":
            parts.append(key)
        else:
            parts.append("!" + key)
    return ",".join(parts)


def ParseFieldSelector(text):
    """`a.b=c,d!=e` → list of (path, op, value)."""
    reqs = []
    for term in _SplitTerms(text or ""):
        m = re.match(r"^([A-Za-z0-9._-]+)\s*(==|=|!=)\s*(.*)$", term)
        if not m:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        reqs.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
    return reqs


def _FieldValue(obj, path):
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def MatchFields(reqs, obj):
    """Field selectors on any dotted path (kube allows only a per-kind set; see README)."""
    for path, op, value in reqs:
        got = _FieldValue(obj, path)
        if (op == "=") != (got == value):
            return False
    return True
