"""A JSON Schema (draft-07) validator for the subset of keywords that the
chart's values.schema.json uses. Stdlib only.

validate(instance, schema) returns a list of "path: message" strings (empty
when valid). A keyword outside SUPPORTED raises UnsupportedKeyword, so the
schema cannot silently rely on something this validator ignores.
"""

import re

SUPPORTED = {
    "$schema", "$ref", "definitions", "title", "description", "default",
    "type", "properties", "additionalProperties", "required", "enum", "items",
    "minimum", "maximum", "minLength", "maxLength", "pattern",
}

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}

# Bound on $ref chains: the chart schema nests a few levels; a cycle fails.
_MAX_REF_DEPTH = 64


class UnsupportedKeyword(Exception):
    pass


def check_keywords(schema, path="#"):
    """Raises UnsupportedKeyword for any keyword this validator ignores."""
    if not isinstance(schema, dict):
        return
    for key, sub in schema.items():
        if key not in SUPPORTED:
            raise UnsupportedKeyword("%s: %s" % (path, key))
        if key in ("properties", "definitions"):
            for name, s in sub.items():
                check_keywords(s, "%s/%s/%s" % (path, key, name))
        elif key in ("items", "additionalProperties") and isinstance(sub, dict):
            check_keywords(sub, "%s/%s" % (path, key))


def _resolve(root, ref):
    if not ref.startswith("#/"):
        raise UnsupportedKeyword("$ref " + ref)
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def validate(instance, schema, root=None, path="", depth=0):
    root = schema if root is None else root
    errors = []
    if depth > _MAX_REF_DEPTH:
        return [path + ": $ref nesting too deep"]
    if "$ref" in schema:
        return validate(instance, _resolve(root, schema["$ref"]), root, path, depth + 1)
    where = path or "."

    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](instance) for t in types):
            return ["%s: want %s, got %s" % (where, " or ".join(types), _type_name(instance))]
    if "enum" in schema and instance not in schema["enum"]:
        errors.append("%s: %r is not one of %r" % (where, instance, schema["enum"]))
    if isinstance(instance, str):
        if "minLength" in schema and len(instance) < schema["minLength"]:
            errors.append("%s: shorter than %d" % (where, schema["minLength"]))
        if "maxLength" in schema and len(instance) > schema["maxLength"]:
            errors.append("%s: longer than %d" % (where, schema["maxLength"]))
        if "pattern" in schema and not re.search(schema["pattern"], instance):
            errors.append("%s: %r does not match %s" % (where, instance, schema["pattern"]))
    if _TYPES["number"](instance):
        if "minimum" in schema and instance < schema["minimum"]:
            errors.append("%s: %r is below %r" % (where, instance, schema["minimum"]))
        if "maximum" in schema and instance > schema["maximum"]:
            errors.append("%s: %r is above %r" % (where, instance, schema["maximum"]))
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for req in schema.get("required", []):
            if req not in instance:
                errors.append("%s: missing required %s" % (where, req))
        extra = schema.get("additionalProperties", True)
        for key, val in instance.items():
            sub = "%s.%s" % (path, key)
            if key in props:
                errors += validate(val, props[key], root, sub, depth)
            elif extra is False:
                errors.append("%s: unknown key %s" % (where, key))
            elif isinstance(extra, dict):
                errors += validate(val, extra, root, sub, depth)
    if isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for i, val in enumerate(instance):
            errors += validate(val, schema["items"], root, "%s[%d]" % (path, i), depth)
    return errors


def _type_name(v):
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](v):
            return name
    return type(v).__name__
