"""The argument checker: nested paths, unknown keys when a schema forbids them, type edge cases."""

from __future__ import annotations

import pytest

from agent_core.tools import check_arguments

SCHEMA: dict[str, object] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["items"],
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"type": "string", "enum": ["a", "b"]}, "size": {"type": "number"}},
            },
        },
        "note": {"type": ["string", "null"]},
    },
}


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"items": []}, None),
        ({"items": [{"kind": "a", "size": 1.5}, {"kind": "b", "size": 2}], "note": None}, None),
        ({"items": [{"kind": "a"}, {"size": 1}]}, "Missing required argument 'items[1].kind'."),
        ({"items": [{"kind": "c"}]}, "Invalid items[0].kind 'c'. Use 'a' or 'b'."),
        (
            {"items": [{"kind": "a", "size": "big"}]},
            "Argument 'items[0].size' must be a number (got string).",
        ),
        (
            {"items": [{"kind": "a", "size": False}]},
            "Argument 'items[0].size' must be a number (got boolean).",
        ),
        ({"items": [], "note": 3}, "Argument 'note' must be a string or null (got integer)."),
        ({"items": [], "extra": 1}, "Unknown argument 'extra'. Known arguments: items, note."),
        ({"items": {"kind": "a"}}, "Argument 'items' must be a list (got object)."),
    ],
)
def test_check_arguments(args: dict[str, object], problem: str | None) -> None:
    assert check_arguments(SCHEMA, args) == problem
