"""What a tool hands back to the model, and the cap on how much of it the model sees.

Invariants: a ``ToolResult`` is immutable and its ``content`` is what enters the transcript verbatim;
JSON payloads keep the key order their producer chose (results are shaped for the model to read);
a capped result never exceeds the budget, marker included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_OUTPUT_BUDGET = 16_000


@dataclass(frozen=True)
class ToolResult:
    """The content sent to the model as the tool's result, and whether it reports a failure."""

    content: str
    is_error: bool = False

    @classmethod
    def from_json(cls, payload: Mapping[str, object], *, is_error: bool = False) -> ToolResult:
        """A JSON object result."""
        return cls(json.dumps(payload, ensure_ascii=False), is_error)

    @classmethod
    def error(cls, message: str, **details: object) -> ToolResult:
        """A failure the model can read: ``{"success": false, "error": message, ...details}``."""
        return cls.from_json({"success": False, "error": message, **details}, is_error=True)


def truncation_marker(shown: int, total: int) -> str:
    """The line that ends a capped result."""
    return f"[… truncated: {shown:,} of {total:,} characters shown …]"


def cap_output(result: ToolResult, budget: int) -> ToolResult:
    """``result`` unchanged when it fits ``budget`` chars; else its head plus a marker, within budget."""
    total = len(result.content)
    if total <= budget:
        return result
    # The marker for "total of total" is the longest this marker can get, so the sum stays in budget.
    shown = max(budget - len(truncation_marker(total, total)) - 1, 0)
    return ToolResult(f"{result.content[:shown]}\n{truncation_marker(shown, total)}", result.is_error)
