"""Checking model-supplied tool arguments against the tool's JSON schema (the subset our tools use).

Supported keywords: ``type`` (one name or a list), ``enum``, ``required``, ``properties``, ``items``
and ``additionalProperties: false``; anything else in a schema is documentation for the model and is
not enforced. Invariants: checking never raises; it returns the first problem as a sentence the model
can act on, naming the argument by its path (``operations[0].action``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def check_arguments(schema: Mapping[str, object], arguments: Mapping[str, object]) -> str | None:
    """The first way ``arguments`` break ``schema``, or None when they fit."""
    return _check(schema, arguments, "")


def _check(schema: Mapping[str, object], value: object, path: str) -> str | None:
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(_strings(expected))
        if not any(_is_type(value, name) for name in names):
            wanted = " or ".join(_TYPE_NAMES.get(n, n) for n in names)
            return f"Argument '{path or 'arguments'}' must be {wanted} (got {_json_type(value)})."
    enum = schema.get("enum")
    if isinstance(enum, Sequence) and not isinstance(enum, str) and value not in enum:
        options = [f"'{option}'" for option in enum]
        listed = options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
        return f"Invalid {path or 'value'} {value!r}. Use {listed}."
    if isinstance(value, Mapping):
        return _check_object(schema, value, path)
    items = schema.get("items")
    if isinstance(value, list | tuple) and isinstance(items, Mapping):
        for index, item in enumerate(value):
            problem = _check(items, item, f"{path}[{index}]")
            if problem is not None:
                return problem
    return None


def _check_object(schema: Mapping[str, object], value: Mapping[object, object], path: str) -> str | None:
    prefix = f"{path}." if path else ""
    for key in _strings(schema.get("required", ())):
        if value.get(key) is None:
            return f"Missing required argument '{prefix}{key}'."
    properties = schema.get("properties")
    known = properties if isinstance(properties, Mapping) else {}
    if schema.get("additionalProperties") is False:
        unknown = sorted(str(k) for k in value if k not in known)
        if unknown:
            return f"Unknown argument '{prefix}{unknown[0]}'. Known arguments: {', '.join(sorted(known))}."
    for key, sub_schema in known.items():
        # null for an optional argument means "not given" (several models send explicit nulls).
        if value.get(key) is not None and isinstance(sub_schema, Mapping):
            problem = _check(sub_schema, value[key], f"{prefix}{key}")
            if problem is not None:
                return problem
    return None


def _strings(raw: object) -> tuple[str, ...]:
    if isinstance(raw, Sequence) and not isinstance(raw, str):
        return tuple(item for item in raw if isinstance(item, str))
    return ()


def _is_type(value: object, name: str) -> bool:
    match name:
        case "string":
            return isinstance(value, str)
        case "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        case "number":
            return isinstance(value, int | float) and not isinstance(value, bool)
        case "boolean":
            return isinstance(value, bool)
        case "array":
            return isinstance(value, list | tuple)
        case "object":
            return isinstance(value, Mapping)
        case "null":
            return value is None
    return True


def _json_type(value: object) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _is_type(value, name):
            return name
    return type(value).__name__
